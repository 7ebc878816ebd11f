//! The one check of a run's output paths against its inputs and each
//! other, before any work: an output must not be an input, must not remove
//! or overwrite an input when its folder's files are replaced, and two
//! outputs must not share a path. The command line and the Python package
//! both call [`check_output_paths`]; its error names each output by its
//! setting ([`Output::setting`]), which the caller spells (the command line:
//! as its flag).

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

pub use crate::error::OutputPathError;

/// The extensions of trace files a command reads in a folder
/// (`collectives --trace-dir`, `summarize DIR`, `--capture-dir`):
/// `.json` and `.json.gz`.
pub const TRACE_FILES: &[&str] = &["json", "gz"];
/// The extension of a CSV report folder's sheets (`compare DIR`).
pub const CSV_FILES: &[&str] = &["csv"];
/// The extension of a summary folder's tables (`fleet SUMMARIES`).
pub const PARQUET_FILES: &[&str] = &["parquet"];

/// One input of a run: a file, or a folder whose files the run reads.
#[derive(Debug, Clone)]
pub struct Input {
    /// Its path (`-`, standard input, is never checked).
    pub path: PathBuf,
    /// When the path is a folder: the extensions of the files the run
    /// reads in it or below it (empty: it reads named files only).
    pub reads: &'static [&'static str],
}

impl Input {
    /// An input file (or a folder whose files are read by name).
    pub fn file(path: impl Into<PathBuf>) -> Input {
        Input {
            path: path.into(),
            reads: &[],
        }
    }

    /// An input folder whose `*.ext` files (for each of `reads`) are read.
    pub fn dir(path: impl Into<PathBuf>, reads: &'static [&'static str]) -> Input {
        Input {
            path: path.into(),
            reads,
        }
    }
}

/// What an output folder's writer does to the files directly in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirWrites {
    /// Extensions whose files the run replaces as a unit: every such file
    /// already there that the run does not write is removed.
    pub replaces: &'static [&'static str],
    /// Files written under fixed names.
    pub names: &'static [&'static str],
}

/// One output of a run.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    /// The setting naming it, as a library field (`output`, `csv`, `md`,
    /// `out`); the caller spells it in messages.
    pub setting: &'a str,
    /// Its path (`-`, standard output, is never checked).
    pub path: &'a Path,
    /// A folder's writes, or `None` for one file.
    pub dir: Option<DirWrites>,
}

/// `p` made absolute and resolved through every link on its way: the
/// longest part that exists is resolved by the system, the rest (not yet
/// created, so free of links) cleaned of `.` and `..`. Two spellings of one
/// file, or a link and its target, give one key.
pub fn resolved(p: &Path) -> PathBuf {
    let abs = std::env::current_dir()
        .map(|cwd| cwd.join(p))
        .unwrap_or_else(|_| p.to_path_buf());
    let parts: Vec<Component> = abs.components().collect();
    for n in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..n].iter().collect();
        if let Ok(mut real) = std::fs::canonicalize(&prefix) {
            for c in &parts[n..] {
                match c {
                    Component::CurDir => {}
                    Component::ParentDir => {
                        real.pop();
                    }
                    c => real.push(c),
                }
            }
            return real;
        }
    }
    abs
}

/// The inputs as the check sees them, resolved: looked up by path, so a
/// run with thousands of traces and summary folders is checked in linear
/// time.
#[derive(Default)]
struct Seen<'a> {
    /// Every input's key.
    keys: HashSet<PathBuf>,
    /// The input files, by the key of their folder.
    files_by_dir: HashMap<PathBuf, Vec<(&'a Input, PathBuf)>>,
    /// The input folders whose files of some extension are read.
    dirs: Vec<(&'a Input, PathBuf)>,
}

impl<'a> Seen<'a> {
    fn new(inputs: &'a [Input]) -> Seen<'a> {
        let mut seen = Seen::default();
        for input in inputs.iter().filter(|i| i.path.as_os_str() != "-") {
            let key = resolved(&input.path);
            seen.keys.insert(key.clone());
            if input.path.is_dir() {
                if !input.reads.is_empty() {
                    seen.dirs.push((input, key));
                }
            } else if let Some(dir) = key.parent() {
                let files = seen.files_by_dir.entry(dir.to_path_buf()).or_default();
                files.push((input, key));
            }
        }
        seen
    }
}

/// Refuses, naming the path, an output that is an input, an output folder
/// whose writes would remove or overwrite an input file in it, an output
/// in an input folder whose files of an extension it writes or replaces
/// are read, and two outputs on one path (two folders may coincide: `--csv D
/// --plots D`, their files differ by extension). Paths are resolved
/// ([`resolved`]) first; `-` is never checked.
pub fn check_output_paths(inputs: &[Input], outputs: &[Output]) -> Result<(), OutputPathError> {
    let seen = Seen::new(inputs);
    let mut earlier: HashMap<PathBuf, Vec<&Output>> = HashMap::new();
    for out in outputs.iter().filter(|o| o.path.as_os_str() != "-") {
        let key = resolved(out.path);
        if seen.keys.contains(&key) {
            return Err(OutputPathError::IsInput {
                path: out.path.to_path_buf(),
                setting: out.setting.to_string(),
            });
        }
        match out.dir {
            Some(writes) => check_dir(out, &key, writes, &seen)?,
            None => check_file_in_input_dir(out, &key, &seen)?,
        }
        let same = earlier.entry(key).or_default();
        if let Some(first) = same
            .iter()
            .find(|o| !(out.dir.is_some() && o.dir.is_some()))
        {
            return Err(OutputPathError::Clash {
                path: out.path.to_path_buf(),
                first: first.setting.to_string(),
                second: out.setting.to_string(),
            });
        }
        same.push(out);
    }
    Ok(())
}

/// The checks of one output folder (`key`, resolved) against the inputs.
fn check_dir(
    out: &Output,
    key: &Path,
    writes: DirWrites,
    seen: &Seen,
) -> Result<(), OutputPathError> {
    for (input, dir) in &seen.dirs {
        let read = writes
            .replaces
            .iter()
            .find(|ext| input.reads.iter().any(|r| r.eq_ignore_ascii_case(ext)));
        if let Some(ext) = read
            && key.starts_with(dir)
        {
            return Err(OutputPathError::InInputDir {
                dir: out.path.to_path_buf(),
                setting: out.setting.to_string(),
                input: input.path.clone(),
                ext,
            });
        }
    }
    let files = seen.files_by_dir.get(key).map_or(&[][..], Vec::as_slice);
    match files.iter().find(|(_, file)| touches(writes, file)) {
        Some((input, _)) => Err(OutputPathError::InOutputDir {
            input: input.path.clone(),
            setting: out.setting.to_string(),
            dir: out.path.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// Refuses an output file (`key`, resolved) inside an input folder whose
/// files of its extension are read: it would overwrite one, or become one.
fn check_file_in_input_dir(out: &Output, key: &Path, seen: &Seen) -> Result<(), OutputPathError> {
    let ext = key.extension().unwrap_or(OsStr::new(""));
    let read = seen.dirs.iter().find_map(|(input, dir)| {
        let ext = input.reads.iter().find(|r| ext.eq_ignore_ascii_case(r))?;
        key.starts_with(dir).then_some((input, *ext))
    });
    match read {
        Some((input, ext)) => Err(OutputPathError::InInputDir {
            dir: out.path.to_path_buf(),
            setting: out.setting.to_string(),
            input: input.path.clone(),
            ext,
        }),
        None => Ok(()),
    }
}

/// Whether a folder's `writes` would remove or overwrite its file `file`.
fn touches(writes: DirWrites, file: &Path) -> bool {
    let ext = file.extension().unwrap_or(OsStr::new(""));
    let name = file.file_name().unwrap_or(OsStr::new(""));
    writes.replaces.iter().any(|e| ext.eq_ignore_ascii_case(e))
        || writes.names.iter().any(|n| name == *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: DirWrites = DirWrites {
        replaces: &["csv"],
        names: &[],
    };

    fn file<'a>(setting: &'a str, path: &'a Path) -> Output<'a> {
        Output {
            setting,
            path,
            dir: None,
        }
    }

    fn dir<'a>(setting: &'a str, path: &'a Path, writes: DirWrites) -> Output<'a> {
        Output {
            setting,
            path,
            dir: Some(writes),
        }
    }

    #[test]
    fn two_spellings_and_links_are_one_path() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let t = d.join("t.json");
        std::fs::write(&t, "{}").unwrap();
        let spelled = d.join("sub/../t.json");
        let e = check_output_paths(&[Input::file(&t)], &[file("md", &spelled)]).unwrap_err();
        assert!(matches!(e, OutputPathError::IsInput { .. }), "{e}");
        #[cfg(unix)]
        {
            let link = d.join("link");
            std::os::unix::fs::symlink(&t, &link).unwrap();
            assert!(check_output_paths(&[Input::file(&t)], &[file("output", &link)]).is_err());
            assert!(check_output_paths(&[Input::file(&link)], &[file("output", &t)]).is_err());
        }
        let (a, b) = (d.join("x.md"), d.join("y/../x.md"));
        let e = check_output_paths(&[], &[file("output", &a), file("md", &b)]).unwrap_err();
        assert_eq!(
            e.to_string().split(": ").nth(1).unwrap(),
            "output and md would both be written to this path"
        );
        let c = d.join("c");
        let svg = DirWrites {
            replaces: &["svg"],
            names: &[],
        };
        assert!(check_output_paths(&[], &[dir("csv", &c, CSV), dir("plots", &c, svg)]).is_ok());
        assert!(check_output_paths(&[], &[dir("csv", &c, CSV), file("md", &c)]).is_err());
        let dash = Path::new("-");
        assert!(check_output_paths(&[Input::file(dash)], &[file("md", dash)]).is_ok());
    }

    #[test]
    fn a_folder_may_not_remove_or_overwrite_an_input() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let run = d.join("run.csv");
        std::fs::write(&run, "x").unwrap();
        let e = check_output_paths(&[Input::file(&run)], &[dir("csv", d, CSV)]).unwrap_err();
        assert!(matches!(e, OutputPathError::InOutputDir { .. }), "{e}");
        // Another extension, or a file further down, is left alone.
        assert!(
            check_output_paths(
                &[Input::file(&run)],
                &[dir(
                    "plots",
                    d,
                    DirWrites {
                        replaces: &["svg"],
                        names: &[],
                    }
                )]
            )
            .is_ok()
        );
        assert!(
            check_output_paths(&[Input::file(&run)], &[dir("csv", &d.join("sub"), CSV)]).is_ok()
        );
        let named = DirWrites {
            replaces: &[],
            names: &["run.csv"],
        };
        assert!(check_output_paths(&[Input::file(&run)], &[dir("out", d, named)]).is_err());
    }

    #[test]
    fn a_folder_inside_an_input_folder_may_not_replace_what_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let inner = d.join("a/b");
        let input = [Input::dir(d, CSV_FILES)];
        let e = check_output_paths(&input, &[dir("csv", &inner, CSV)]).unwrap_err();
        assert!(
            matches!(e, OutputPathError::InInputDir { ext: "csv", .. }),
            "{e}"
        );
        let pq = DirWrites {
            replaces: &["parquet"],
            names: &[],
        };
        assert!(check_output_paths(&input, &[dir("parquet", &inner, pq)]).is_ok());
        // A workbook inside the folder replaces nothing; a CSV file would.
        assert!(check_output_paths(&input, &[file("output", &d.join("r.xlsx"))]).is_ok());
        assert!(check_output_paths(&input, &[file("md", &inner.join("x.CSV"))]).is_err());
    }
}
