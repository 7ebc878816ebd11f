//! `tracelens compare`: reading the inputs of a comparison. Each input is a
//! written report (CSV folder, xlsx) or a trace, whose report is computed;
//! all are read in parallel.

use std::path::{Path, PathBuf};

use super::report::{analyze, read_report};
use crate::analysis::compare::{Input, comparable_sheets};
use crate::error::{CompareInputError, Error};
use crate::report::read;
use crate::table::Table;

/// How an input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A folder of per-sheet CSVs.
    CsvDir,
    /// An xlsx workbook.
    Xlsx,
    /// A trace (anything else, or `-` for stdin).
    Trace,
}

/// What kind of input `path` is.
pub fn input_kind(path: &Path) -> Result<InputKind, Error> {
    if path.as_os_str() == "-" {
        return Ok(InputKind::Trace);
    }
    let meta = std::fs::metadata(path).map_err(|error| CompareInputError::Stat {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(if meta.is_dir() {
        InputKind::CsvDir
    } else if read::is_xlsx(path) {
        InputKind::Xlsx
    } else {
        InputKind::Trace
    })
}

/// The reference's default tag, `splitext(basename(path))[0]`; for a trace,
/// everything from `.json` on is dropped (`a.json.gz` → `a`).
pub fn default_tag(path: &Path, kind: InputKind) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    if kind == InputKind::Trace {
        for ext in [".json", ".xplane.pb"] {
            if let Some(i) = name.find(ext)
                && i > 0
            {
                return name[..i].to_string();
            }
        }
    }
    match name.rfind('.') {
        Some(i) if i > 0 => name[..i].to_string(),
        _ => name,
    }
}

/// Checks that `names` is empty (default tags) or names every input.
pub fn check_tag_count(inputs: usize, names: &[String]) -> Result<(), Error> {
    if !names.is_empty() && names.len() != inputs {
        return Err(CompareInputError::TagCount {
            names: names.len(),
            inputs,
        }
        .into());
    }
    Ok(())
}

/// The inputs of a comparison, read.
pub struct CompareInputs {
    /// One per path, in order, tagged.
    pub inputs: Vec<Input>,
    /// Trace-quality notes of the traces analysed, naming the trace.
    pub warnings: Vec<String>,
}

/// Reads every input of a comparison (in parallel), tagged with `names` or,
/// when it is empty, with each path's default tag.
pub fn load_compare_inputs(paths: &[PathBuf], names: &[String]) -> Result<CompareInputs, Error> {
    check_tag_count(paths.len(), names)?;
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(CompareInputError::StdinTwice.into());
    }
    let kinds: Vec<InputKind> = paths
        .iter()
        .map(|p| input_kind(p))
        .collect::<Result<_, _>>()?;
    let tags = tags(paths, &kinds, names)?;
    let mut out = CompareInputs {
        inputs: Vec::with_capacity(paths.len()),
        warnings: Vec::new(),
    };
    for ((res, tag), path) in read_all(paths, &kinds).into_iter().zip(tags).zip(paths) {
        let (sheets, notes) = res?;
        out.warnings.extend(notes);
        out.inputs.push(Input {
            tag,
            source: path.display().to_string(),
            sheets: comparable_sheets(sheets),
        });
    }
    Ok(out)
}

/// `names`, or the default tags; they must be unique.
fn tags(paths: &[PathBuf], kinds: &[InputKind], names: &[String]) -> Result<Vec<String>, Error> {
    let tags: Vec<String> = if names.is_empty() {
        paths
            .iter()
            .zip(kinds)
            .map(|(p, &k)| default_tag(p, k))
            .collect()
    } else {
        names.to_vec()
    };
    for (n, t) in tags.iter().enumerate() {
        if tags[..n].contains(t) {
            return Err(CompareInputError::TagRepeats(t.clone()).into());
        }
    }
    Ok(tags)
}

/// The sheets of one input and notes about it.
type Loaded = Result<(Vec<Table>, Vec<String>), Error>;

/// Reads every input at once: traces are analysed in parallel.
fn read_all(paths: &[PathBuf], kinds: &[InputKind]) -> Vec<Loaded> {
    std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .zip(kinds)
            .map(|(p, &k)| s.spawn(move || read_input(p, k)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(CompareInputError::Internal.into()))
            })
            .collect()
    })
}

/// Reads or analyses one input.
fn read_input(path: &Path, kind: InputKind) -> Loaded {
    match kind {
        InputKind::CsvDir | InputKind::Xlsx => Ok((read_report(path)?, Vec::new())),
        InputKind::Trace => {
            let report = analyze(path, &Default::default())?;
            let notes = report
                .quality
                .notes()
                .into_iter()
                .map(|n| format!("{}: {n}", path.display()))
                .collect();
            Ok((report.sheets, notes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_tags() {
        let t = |p: &str, k| default_tag(Path::new(p), k);
        assert_eq!(t("a/h100.ref", InputKind::CsvDir), "h100");
        assert_eq!(
            t("a/h100_perf_report_csvs", InputKind::CsvDir),
            "h100_perf_report_csvs"
        );
        assert_eq!(t("a/r.xlsx", InputKind::Xlsx), "r");
        assert_eq!(t("a/x.json.gz", InputKind::Trace), "x");
        assert_eq!(t("a/x.zip", InputKind::Trace), "x");
        assert_eq!(t(".hidden", InputKind::CsvDir), ".hidden");
    }
}
