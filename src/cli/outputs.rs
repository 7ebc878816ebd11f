//! Output safety around the staging: refuse output paths that would
//! overwrite or remove an input or each other (before any work, through the
//! library's [`check_output_paths`]), clean up on SIGINT/SIGTERM/SIGHUP, and
//! the commit test hook.

use std::path::{Path, PathBuf};

use tracelens::api::output_paths::{self, DirWrites, Input, check_output_paths};
use tracelens::report::WriteError;
use tracelens::report::staging::{self, Staging};

/// What kind of path an output option names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One file (`-o`).
    File,
    /// One file, or standard output for `-` (`--md`, `--json`).
    Stream,
    /// A folder, and what its writer does to the files in it (`--csv`,
    /// `--parquet`, `--plots`, `diff --out`).
    Dir(DirWrites),
}

/// A folder whose `*.ext` files are replaced as a unit.
pub(crate) const fn replacing(ext: &'static [&'static str]) -> Kind {
    Kind::Dir(DirWrites {
        replaces: ext,
        names: &[],
    })
}

/// `--csv DIR`: its `*.csv` sheets are replaced.
pub(crate) const CSV_DIR: Kind = replacing(&["csv"]);
/// `--parquet DIR` (and a summary folder): its `*.parquet` files are
/// replaced.
pub(crate) const PARQUET_DIR: Kind = replacing(output_paths::PARQUET_FILES);

/// One output of a run: the library setting naming it (`output`, `csv`,
/// `md`; [`super::output_flag`] spells its flag), its kind and its path.
pub(crate) type Output<'a> = (&'a str, Kind, Option<&'a Path>);

/// The one check of a command's outputs, before any work, as one line:
/// two outputs on standard output, an output that would overwrite or
/// remove an input or another output ([`check_output_paths`]), and the
/// name that `-o` gives the workbook ([`check_workbook_name`];
/// `json_flag` is the command's JSON output flag, if any).
pub(crate) fn check(
    inputs: &[Input],
    outputs: &[Output],
    json_flag: Option<&str>,
) -> Result<(), String> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, kind, p)| *kind == Kind::Stream && p.is_some_and(|p| p.as_os_str() == "-"))
        .map(|(setting, ..)| *setting)
        .collect();
    if let [first, second, ..] = to_stdout[..] {
        return Err(format!(
            "{} - and {} - cannot both go to stdout",
            super::output_flag(first),
            super::output_flag(second)
        ));
    }
    let library: Vec<output_paths::Output> = outputs
        .iter()
        .filter_map(|&(setting, kind, path)| {
            Some(output_paths::Output {
                setting,
                path: path?,
                dir: match kind {
                    Kind::Dir(writes) => Some(writes),
                    Kind::File | Kind::Stream => None,
                },
            })
        })
        .collect();
    check_output_paths(inputs, &library).map_err(|e| e.text(&super::output_flag))?;
    check_kinds(outputs)?;
    match outputs.iter().find(|(setting, ..)| *setting == "output") {
        Some((_, _, Some(o))) => check_workbook_name(o, json_flag),
        _ => Ok(()),
    }
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
        staging::check_output(p, matches!(kind, Kind::Dir(_)))
            .map_err(|why| format!("{}: {why}", tracelens::quote::quoted(p)))?;
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
        tracelens::quote::quoted(path)
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
    fn one_check_for_stdout_paths_and_the_workbook_name() {
        let dash = Some(Path::new("-"));
        let (s, f) = (Kind::Stream, Kind::File);
        let both = check(&[], &[("md", s, dash), ("json", s, dash)], None).unwrap_err();
        assert_eq!(both, "--md - and --json - cannot both go to stdout");
        assert!(check(&[], &[("md", s, dash), ("json", s, None)], None).is_ok());
        let csv = Some(Path::new("r.csv"));
        let named = check(&[], &[("output", f, csv)], Some("--json")).unwrap_err();
        assert!(named.contains("--csv DIR"), "{named}");
        // The default workbook is named by the command, not checked.
        assert!(check(&[], &[("default_workbook", f, csv)], None).is_ok());
        let two = check(&[], &[("output", f, csv), ("md", s, csv)], None).unwrap_err();
        assert!(
            two.ends_with("-o and --md would both be written to this path"),
            "{two}"
        );
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
