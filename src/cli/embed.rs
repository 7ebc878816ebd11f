//! The commands as calls, for programs that embed tracelens (the Python
//! package): the same arguments as on the command line, the results
//! returned instead of written, nothing printed, errors as the one line
//! the command would print after `tracelens: error:`.

use std::ffi::OsString;
use std::path::Path;

use super::report::{analyze_options, gpu_arch, report_inputs, report_title, stage_report_sheets};
use super::{Command, ParseFailure, SheetDirs, parse_args};
use crate::Report;
use crate::api::output_paths::Input;
use crate::gpu_arch::GpuArch;
use crate::report::Document;
use crate::report::markdown::Markdown;
use crate::report::staging::Staging;
use crate::report::view::collectives as collectives_view;
use crate::report::view::summary;
use crate::table::Table;

/// A report computed from `tracelens report` arguments, not yet written.
pub struct ReportRun {
    /// The report: its sheets, timeline and trace-quality notes.
    pub report: Report,
    /// The GPU spec of `--gpu-arch`, else the one picked from the trace.
    arch: Option<GpuArch>,
    /// The title of its Markdown page (the trace's file name).
    title: String,
    /// What the report read, which no write may overwrite or remove.
    inputs: Vec<Input>,
}

/// The error line of arguments that do not parse: clap's first line
/// without its `error: ` prefix, or the refusal of a reference flag.
fn parse_error(f: ParseFailure) -> String {
    match f {
        ParseFailure::Clap(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            first.trim_start_matches("error: ").to_string()
        }
        ParseFailure::Refused(msg) => msg,
    }
}

/// Computes the report that `tracelens report ARGS` would write (`args`:
/// what follows `report`, the trace first). Output flags are accepted and
/// ignored: nothing is written until [`ReportRun::write`].
pub fn report<I, T>(args: I) -> Result<ReportRun, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Report(a) = parse_command("report", args)? else {
        return Err("not a report command".to_string());
    };
    let run = || -> anyhow::Result<ReportRun> {
        let opts = analyze_options(&a, gpu_arch(&a)?, None, None)?;
        let report = crate::analyze(a.trace(), &opts)?;
        Ok(ReportRun {
            arch: super::report::used_arch(opts.report.arch, &report),
            report,
            title: report_title(a.trace()),
            inputs: report_inputs(&a),
        })
    };
    run().map_err(|e| super::error_text(&e))
}

impl ReportRun {
    /// The Markdown summary `--md` writes.
    pub fn markdown(&self) -> String {
        let page = summary::page(&self.report, &self.title);
        super::render_text(&Markdown { path: "-".into() }, &Document::of_page(page))
            .unwrap_or_default()
    }

    /// Writes the workbook (`-o FILE.xlsx`), the CSV sheets (`--csv DIR`)
    /// and the Parquet sheets (`--parquet DIR`) as the command does, all
    /// or nothing; returns what was written, one entry per output.
    pub fn write(
        &self,
        xlsx: Option<&Path>,
        csv: Option<&Path>,
        parquet: Option<&Path>,
    ) -> Result<Vec<String>, String> {
        let outputs = Outputs { xlsx, csv, parquet };
        write_all(&self.inputs, outputs, |staging| {
            let dirs = SheetDirs { csv, parquet };
            stage_report_sheets(staging, dirs, &self.report, self.arch.as_ref(), xlsx)
        })
    }
}

/// The sheets of a command other than `report`, computed, not yet
/// written.
pub struct SheetsRun {
    /// The sheets, in workbook order.
    pub sheets: Vec<Table>,
    /// The warnings the command would print.
    pub warnings: Vec<String>,
    /// Its Markdown summary (`compare`: the verdict).
    markdown: String,
    /// `compare`'s verdict as the JSON `--json` writes.
    verdict_json: Option<String>,
    /// What the command read, which no write may overwrite or remove.
    inputs: Vec<Input>,
}

/// Loads a trace with its call tree as `tracelens tree PATH` does.
pub fn tree(path: &Path) -> Result<crate::CallTree, String> {
    crate::load_tree(path).map_err(super::chain)
}

/// Answers `tracelens roofline ARGS` (`args`: what follows `roofline`,
/// the operation first).
pub fn roofline<I, T>(args: I) -> Result<crate::Roofline, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Roofline(a) = parse_command("roofline", args)? else {
        return Err("not a roofline command".to_string());
    };
    crate::roofline(&super::roofline::roofline_query(a)).map_err(super::chain)
}

/// The command line `tracelens SUBCOMMAND ARGS...`, parsed.
fn parse_command<I, T>(subcommand: &str, args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv = ["tracelens", subcommand]
        .into_iter()
        .map(OsString::from)
        .chain(args.into_iter().map(Into::into));
    Ok(parse_args(argv).map_err(parse_error)?.command)
}

/// Runs `tracelens merge ARGS` (`args`: what follows `merge`): writes the
/// merged trace at `-o` as the command does, all or nothing, and returns
/// what the command's summary says, as a JSON object (output, bytes,
/// linking key, offsets, ranks with their counts, processes, clock,
/// warnings).
pub fn merge<I, T>(args: I) -> Result<String, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Merge(mut a) = parse_command("merge", args)? else {
        return Err("not a merge command".to_string());
    };
    a.quiet = true;
    let merged = super::merge::execute(&a).map_err(|e| super::error_text(&e))?;
    Ok(super::merge::summary_json(&merged))
}

/// Runs `tracelens split ARGS` (`args`: what follows `split`): writes the
/// traces and manifests into `-o` as the command does, all or nothing,
/// and returns what the command's summary says, as a JSON object (trace,
/// output folder, events, roots and where they came from, the working
/// range, the steady-state regions, notes, the files written, the
/// manifest).
pub fn split<I, T>(args: I) -> Result<String, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Split(mut a) = parse_command("split", args)? else {
        return Err("not a split command".to_string());
    };
    a.quiet = true;
    let run = super::split::execute(&a).map_err(|e| super::error_text(&e))?;
    Ok(super::split::summary_json(&a, &run))
}

/// Computes what `tracelens collectives ARGS` would write (`args`: what
/// follows `collectives`), without a progress display.
pub fn collectives<I, T>(args: I) -> Result<SheetsRun, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Collectives(mut a) = parse_command("collectives", args)? else {
        return Err("not a collectives command".to_string());
    };
    a.quiet = true;
    let run = super::collectives::analyze(&a).map_err(|e| super::error_text(&e))?;
    let title = a.trace_dir.display().to_string();
    let page = collectives_view::page(&run.report, &title);
    let markdown = super::render_text(&Markdown { path: "-".into() }, &Document::of_page(page))
        .map_err(|e| format!("{e:#}"))?;
    Ok(SheetsRun {
        sheets: super::collectives::all_sheets(&run.report, &title),
        warnings: run.warnings.iter().map(|w| w.text(&super::flag)).collect(),
        markdown,
        verdict_json: None,
        inputs: super::collectives::collectives_inputs(&a),
    })
}

/// Computes what `tracelens critical-path ARGS` would write (`args`: what
/// follows `critical-path`, the trace first): `critical_path_summary` and
/// `critical_path`, with the terminal summary as the Markdown text.
pub fn critical_path<I, T>(args: I) -> Result<SheetsRun, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::CriticalPath(a) = parse_command("critical-path", args)? else {
        return Err("not a critical-path command".to_string());
    };
    let span = super::critical_path::span(&a).map_err(|e| super::error_text(&e))?;
    let run = crate::critical_path(&a.trace, span).map_err(super::chain)?;
    Ok(SheetsRun {
        markdown: super::critical_path::summary_text(&run),
        sheets: run.sheets,
        warnings: Vec::new(),
        verdict_json: None,
        inputs: vec![Input::file(&a.trace)],
    })
}

/// Computes what `tracelens compare ARGS` would write (`args`: what
/// follows `compare`): the comparison sheets, and the verdict as Markdown
/// and JSON. Warnings and notes are returned, prefixed `note: ` for notes.
pub fn compare<I, T>(args: I) -> Result<SheetsRun, String>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let Command::Compare(a) = parse_command("compare", args)? else {
        return Err("not a compare command".to_string());
    };
    let c = super::compare::compute(&a, true)?;
    Ok(SheetsRun {
        inputs: super::compare::compare_inputs(&a),
        sheets: c.comparison.map(|c| c.sheets).unwrap_or_default(),
        warnings: c
            .messages
            .into_iter()
            .map(|(kind, m)| match kind {
                "note" => format!("note: {m}"),
                _ => m,
            })
            .collect(),
        markdown: c.texts.md,
        verdict_json: Some(c.texts.json),
    })
}

impl SheetsRun {
    /// The Markdown summary `--md` writes.
    pub fn markdown(&self) -> &str {
        &self.markdown
    }

    /// `compare`'s verdict as JSON (`--json`); None for other commands.
    pub fn verdict_json(&self) -> Option<&str> {
        self.verdict_json.as_deref()
    }

    /// Writes the sheets as a workbook, CSVs and Parquet files, as asked;
    /// all or nothing. Returns what was written, one entry per output.
    pub fn write(
        &self,
        xlsx: Option<&Path>,
        csv: Option<&Path>,
        parquet: Option<&Path>,
    ) -> Result<Vec<String>, String> {
        let outputs = Outputs { xlsx, csv, parquet };
        write_all(&self.inputs, outputs, |staging| {
            let sheets = Document::of_tables(&self.sheets);
            let dirs = SheetDirs { csv, parquet };
            super::stage_sheets(staging, dirs, &sheets, xlsx, &sheets)
        })
    }
}

/// The outputs a `write` call asks for.
struct Outputs<'a> {
    xlsx: Option<&'a Path>,
    csv: Option<&'a Path>,
    parquet: Option<&'a Path>,
}

/// Checks the outputs as the command does (none may overwrite or remove
/// one of `inputs` or another output; the workbook is a `.xlsx`), stages
/// what `stage` stages and commits it all or nothing; returns what was
/// written, or the error line.
fn write_all(
    inputs: &[Input],
    outputs: Outputs,
    stage: impl FnOnce(&mut Staging) -> anyhow::Result<Vec<String>>,
) -> Result<Vec<String>, String> {
    use super::outputs::{CSV_DIR, Kind, PARQUET_DIR};
    let paths = [
        ("output", Kind::File, outputs.xlsx),
        ("csv", CSV_DIR, outputs.csv),
        ("parquet", PARQUET_DIR, outputs.parquet),
    ];
    super::outputs::check(inputs, &paths, None)?;
    let run = || -> anyhow::Result<Vec<String>> {
        let mut staging = Staging::new();
        let written = stage(&mut staging)?;
        super::outputs::commit(staging)?;
        Ok(written)
    };
    run().map_err(|e| super::error_text(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> String {
        format!("{}/testdata/example.json", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn report_then_write_as_the_command_does() {
        let run = report([example().as_str(), "--gpu-arch", "H100"]).unwrap();
        assert!(run.report.sheets.iter().any(|s| s.name == "ops_summary"));
        assert!(
            run.markdown()
                .starts_with("## tracelens report: example.json\n")
        );
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("csv");
        let xlsx = dir.path().join("r.xlsx");
        let pq = dir.path().join("pq");
        let written = run.write(Some(&xlsx), Some(&csv), Some(&pq)).unwrap();
        assert_eq!(written.len(), 3);
        assert!(pq.join("ops_summary.parquet").is_file());
        assert!(xlsx.is_file());
        assert!(csv.join("ops_summary.csv").is_file());
        assert!(
            run.write(Some(&dir.path().join("r.csv")), None, None)
                .unwrap_err()
                .contains("--csv DIR")
        );
    }

    #[test]
    fn collectives_then_write() {
        // Two ranks: copies of the example trace (one all-reduce each).
        let job = tempfile::tempdir().unwrap();
        for rank in 0..2 {
            std::fs::copy(example(), job.path().join(format!("rank{rank}.json"))).unwrap();
        }
        let dir = job.path().to_str().unwrap();
        let run = collectives(["--trace-dir", dir, "--world-size", "2"]).unwrap();
        assert!(run.sheets.iter().any(|s| s.name == "nccl_summary_by_type"));
        assert!(run.markdown().starts_with("## tracelens collectives"));
        let out = tempfile::tempdir().unwrap();
        let written = run
            .write(None, Some(&out.path().join("csv")), None)
            .unwrap();
        assert_eq!(written.len(), 1);
        assert!(out.path().join("csv/nccl_summary_by_type.csv").is_file());
        let e = collectives(["--trace-dir", "/nonexistent/dir"])
            .err()
            .unwrap();
        assert!(e.contains("/nonexistent/dir") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn compare_gives_sheets_and_a_verdict() {
        let ex = example();
        let run = compare([ex.as_str(), ex.as_str()]).unwrap();
        assert!(!run.sheets.is_empty());
        assert!(
            run.markdown().contains("**Verdict: not_gated**"),
            "{}",
            run.markdown()
        );
        let json = run.verdict_json().unwrap();
        assert!(json.contains("\"verdict\""), "{json}");
        let e = compare([ex.as_str()]).err().unwrap();
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn the_commands_checks_of_settings_and_output_paths() {
        let ex = example();
        let e = compare([ex.as_str(), ex.as_str(), "--fail-above", "nan"])
            .err()
            .unwrap();
        assert_eq!(e, "--fail-above must be a percentage of 0 or more, got NaN");
        let e = compare([ex.as_str(), ex.as_str(), "--min-ms=-inf"])
            .err()
            .unwrap();
        assert_eq!(e, "--min-ms must be a duration of 0 or more, got -inf");
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("run.csv");
        std::fs::copy(&ex, &trace).unwrap();
        let run = report([trace.to_str().unwrap()]).unwrap();
        let e = run.write(None, Some(dir.path()), None).unwrap_err();
        assert!(e.contains("run.csv") && e.contains("--csv"), "{e}");
        let e = run.write(Some(&trace), None, None).unwrap_err();
        assert!(e.contains("-o names an input"), "{e}");
        let folder = dir.path().join("csv");
        run.write(None, Some(&folder), None).unwrap();
        let cmp = compare([folder.to_str().unwrap(), ex.as_str()]).unwrap();
        let e = cmp.write(None, Some(&folder), None).unwrap_err();
        assert!(e.contains("--csv names an input"), "{e}");
        assert!(trace.is_file() && folder.join("ops_summary.csv").is_file());
    }

    #[test]
    fn errors_are_the_commands_lines() {
        let e = report(["/nonexistent/t.json"]).err().unwrap();
        assert!(e.contains("/nonexistent/t.json"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = report([example().as_str(), "--no-such-flag"])
            .err()
            .unwrap();
        assert!(e.contains("--no-such-flag"), "{e}");
        assert!(!e.starts_with("error:"), "{e}");
    }
}
