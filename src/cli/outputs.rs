//! Output safety around the staging: refuse output paths that would
//! overwrite an input or each other (before any work), clean up on
//! SIGINT/SIGTERM/SIGHUP, and the commit test hook.

use std::path::{Component, Path, PathBuf};

use tracelens::report::WriteError;
use tracelens::report::staging::{self, Staging};

/// What kind of path an output option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One file (`-o`).
    File,
    /// One file, or standard output for `-` (`--md`, `--json`).
    Stream,
    /// A folder of files (`--csv`, `--parquet`, `--plots`, `diff --out`).
    Dir,
}

/// One output of a run: the option naming it, its kind and its path.
pub(crate) type Output<'a> = (&'a str, Kind, Option<&'a Path>);

/// `p` made absolute and free of `.`/`..`, its folder resolved through
/// links where it exists: two spellings of one path give one key.
fn key(p: &Path) -> PathBuf {
    let abs = std::env::current_dir()
        .map(|cwd| cwd.join(p))
        .unwrap_or_else(|_| p.to_path_buf());
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            c => clean.push(c),
        }
    }
    match (clean.parent(), clean.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(clean.clone()),
        _ => clean,
    }
}

/// The one check of a command's outputs, before any work, as one line:
/// two outputs on standard output, an output that is an input or another
/// output ([`check_paths`]), and the name that `-o` gives the workbook
/// ([`check_workbook_name`]; `json_flag` is the command's JSON output
/// flag, if any).
pub(crate) fn check(
    inputs: &[&Path],
    outputs: &[Output],
    json_flag: Option<&str>,
) -> Result<(), String> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, kind, p)| *kind == Kind::Stream && p.is_some_and(|p| p.as_os_str() == "-"))
        .map(|(flag, ..)| *flag)
        .collect();
    if let [first, second, ..] = to_stdout[..] {
        return Err(format!("{first} - and {second} - cannot both go to stdout"));
    }
    check_paths(inputs, outputs)?;
    check_kinds(outputs)?;
    match outputs.iter().find(|(flag, ..)| *flag == "-o") {
        Some((_, _, Some(o))) => check_workbook_name(o, json_flag),
        _ => Ok(()),
    }
}

/// Refuses, with one line naming the path, an output that is one of
/// `inputs` (it would be overwritten) and two outputs on one path (one
/// would silently win). Two folders may coincide (`--csv D --plots D`:
/// their files differ by extension); `-` (stdout) is never a clash.
fn check_paths(inputs: &[&Path], outputs: &[Output]) -> Result<(), String> {
    let mut input_keys = Vec::new();
    for i in inputs.iter().filter(|i| i.as_os_str() != "-") {
        input_keys.push(key(i));
        // The input read through a link is overwritten through its target.
        if let Ok(real) = std::fs::canonicalize(i) {
            input_keys.push(real);
        }
    }
    let outs: Vec<(&str, Kind, &Path, PathBuf)> = outputs
        .iter()
        .filter_map(|&(flag, kind, p)| Some((flag, kind, p?)))
        .filter(|(_, _, p)| p.as_os_str() != "-")
        .map(|(flag, kind, p)| (flag, kind, p, key(p)))
        .collect();
    for (i, (flag, kind, path, k)) in outs.iter().enumerate() {
        if input_keys.contains(k) {
            return Err(format!(
                "{}: {flag} names an input; refusing to overwrite it",
                path.display()
            ));
        }
        let clash = outs[..i]
            .iter()
            .find(|(_, k2, _, key2)| key2 == k && !(*kind == Kind::Dir && *k2 == Kind::Dir));
        if let Some((other, ..)) = clash {
            return Err(format!(
                "{}: {other} and {flag} would both be written to this path",
                path.display()
            ));
        }
    }
    Ok(())
}

/// Refuses, with one line naming the path, an output that exists and is
/// not what a run may write: for a file, anything but a regular file, a
/// character device or a FIFO (a link to a file, a socket); for a folder,
/// anything but a folder (or a link to one). See
/// [`tracelens::report::staging::check_output`].
pub(crate) fn check_kinds(outputs: &[Output]) -> Result<(), String> {
    for &(_, kind, path) in outputs {
        let Some(p) = path.filter(|p| !(kind == Kind::Stream && p.as_os_str() == "-")) else {
            continue;
        };
        staging::check_output(p, kind == Kind::Dir)
            .map_err(|why| format!("{}: {why}", p.display()))?;
    }
    Ok(())
}

/// Checks that `-o` names an Excel workbook (`FILE.xlsx`, any case): a
/// name with the extension of another output is refused naming the flag
/// that writes it; `json_flag` is the command's JSON output flag, if any.
/// A device or FIFO (`-o /dev/null`) takes the workbook whatever its name.
fn check_workbook_name(path: &Path, json_flag: Option<&str>) -> Result<(), String> {
    if staging::writes_through(path) {
        return Ok(());
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let instead = match ext.as_str() {
        "xlsx" => return Ok(()),
        "csv" => "for CSV sheets use --csv DIR".to_string(),
        "parquet" | "pq" => "for Parquet sheets use --parquet DIR".to_string(),
        "md" | "markdown" => "for Markdown use --md FILE".to_string(),
        "json" => match json_flag {
            Some(flag) => format!("for JSON use {flag} FILE"),
            None => "this command writes no JSON".to_string(),
        },
        _ => "name it FILE.xlsx (--csv DIR writes CSV sheets, --md FILE Markdown)".to_string(),
    };
    Err(format!(
        "{}: -o writes an Excel workbook (.xlsx): {instead}",
        path.display()
    ))
}

/// Where a command's main output goes: `output` when given; none when
/// another output was asked for (`others`), as only the outputs asked for
/// are written; else `default()` (the workbook beside the trace, the
/// diff folder).
pub(crate) fn or_default(
    output: Option<&Path>,
    others: bool,
    default: impl FnOnce() -> Result<PathBuf, String>,
) -> Result<Option<PathBuf>, String> {
    match output {
        Some(o) => Ok(Some(o.to_path_buf())),
        None if others => Ok(None),
        None => default().map(Some),
    }
}

/// The most data rows a sheet of an xlsx workbook may have: Excel's
/// limit. `TRACELENS_TEST_XLSX_ROW_LIMIT` is a test hook that lowers it, so
/// a test can reach the early check without a million-row trace.
pub(crate) fn xlsx_row_limit() -> usize {
    std::env::var("TRACELENS_TEST_XLSX_ROW_LIMIT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(tracelens::report::xlsx::MAX_DATA_ROWS)
}

/// Commits `staging`. `TRACELENS_TEST_PAUSE_BEFORE_COMMIT_MS` is a test
/// hook: it sleeps that long first, so a test can signal a run whose files
/// are all staged. `TRACELENS_TEST_PAUSE_IN_COMMIT_MS` is another: the
/// commit sleeps that long inside, between reading its folders and moving
/// files ([`Staging::pause_in_commit`]), so concurrent commits overlap.
pub(crate) fn commit(mut staging: Staging) -> Result<(), WriteError> {
    if let Some(ms) = test_pause_ms("TRACELENS_TEST_PAUSE_BEFORE_COMMIT_MS") {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    if let Some(ms) = test_pause_ms("TRACELENS_TEST_PAUSE_IN_COMMIT_MS") {
        staging.pause_in_commit(std::time::Duration::from_millis(ms));
    }
    staging.commit()
}

/// The milliseconds the test hook `var` asks for, if set.
fn test_pause_ms(var: &str) -> Option<u64> {
    std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok())
}

/// On SIGINT, SIGTERM or SIGHUP: remove every staged file and staging
/// folder, then exit with 128 + the signal (130, 143, 129). A commit in
/// progress finishes first, so the outputs are all old or all new.
#[cfg(unix)]
pub(crate) fn clean_up_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Without a handler the default action still ends the process; only
    // the cleanup is lost, so failing to install one is not an error.
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            tracelens::report::staging::discard_all_and_exit(128 + sig);
        }
    });
}

/// Signals are not handled here outside Unix.
#[cfg(not(unix))]
pub(crate) fn clean_up_on_signals() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_path_in_two_spellings_clashes() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("x.md");
        let b = dir.path().join("sub/../x.md");
        let f = Kind::File;
        let err = check_paths(&[], &[("-o", f, Some(&a)), ("--md", f, Some(&b))]).unwrap_err();
        assert!(err.contains("-o and --md"), "{err}");
        assert!(check_paths(&[&a], &[("-o", f, Some(&b))]).is_err());
        let d = Kind::Dir;
        let csv = dir.path().join("csv");
        let inside = csv.join("r.xlsx");
        assert!(check_paths(&[], &[("--csv", d, Some(&csv)), ("-o", f, Some(&inside))]).is_ok());
        assert!(check_paths(&[], &[("--csv", d, Some(&csv)), ("--plots", d, Some(&csv))]).is_ok());
        assert!(check_paths(&[], &[("--csv", d, Some(&csv)), ("--md", f, Some(&csv))]).is_err());
        let dash = Path::new("-");
        assert!(check_paths(&[dash], &[("--md", f, Some(dash)), ("--json", f, None)]).is_ok());
    }

    #[test]
    fn one_check_for_stdout_paths_and_the_workbook_name() {
        let dash = Some(Path::new("-"));
        let (s, f) = (Kind::Stream, Kind::File);
        let both = check(&[], &[("--md", s, dash), ("--json", s, dash)], None).unwrap_err();
        assert_eq!(both, "--md - and --json - cannot both go to stdout");
        assert!(check(&[], &[("--md", s, dash), ("--json", s, None)], None).is_ok());
        let csv = Some(Path::new("r.csv"));
        let named = check(&[], &[("-o", f, csv)], Some("--json")).unwrap_err();
        assert!(named.contains("--csv DIR"), "{named}");
        // The default workbook is named by the command, not checked.
        assert!(check(&[], &[("the default workbook", f, csv)], None).is_ok());
    }

    #[test]
    fn workbook_names() {
        let ok = |p: &str| check_workbook_name(Path::new(p), Some("--json"));
        assert!(ok("a/r.xlsx").is_ok());
        assert!(ok("R.XLSX").is_ok());
        assert!(ok("r.csv").unwrap_err().contains("--csv DIR"));
        assert!(ok("r.parquet").unwrap_err().contains("--parquet DIR"));
        assert!(ok("r.md").unwrap_err().contains("--md FILE"));
        assert!(ok("r.json").unwrap_err().contains("--json FILE"));
        let none = check_workbook_name(Path::new("r.json"), None).unwrap_err();
        assert!(none.contains("no JSON"), "{none}");
        assert!(ok("r").unwrap_err().contains("FILE.xlsx"));
        assert!(ok("-").is_err());
        let default = || Ok(PathBuf::from("d.xlsx"));
        assert_eq!(or_default(None, true, default), Ok(None));
        assert_eq!(or_default(None, false, default), Ok(Some("d.xlsx".into())));
        let o = Some(Path::new("o.xlsx"));
        assert_eq!(or_default(o, true, default), Ok(Some("o.xlsx".into())));
    }
}
