//! `tracelens compare`: reading the inputs of a comparison. Each input is a
//! written report (CSV folder, xlsx) or a trace, whose report is computed;
//! all are read in parallel.

use std::path::{Path, PathBuf};

use super::report::{AnalyzeOptions, analyze_keeping_trace, read_report};
use crate::analysis::ReportOptions;
use crate::analysis::commands::compare::{
    Input, SideHealth, check_report_sheets, comparable_sheets, reads_sheet,
};
use crate::analysis::commands::diff::{DiffOptions, WhereMoved};
use crate::error::{CompareInputError, Error, error_chain};
use crate::report::read;
use crate::table::Table;
use crate::trace::{Profiler, Trace};

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
/// everything from `.json` on is dropped (`a.json.gz` → `a`)
/// ([`super::default_paths::tag_name`], as text).
pub fn default_tag(path: &Path, kind: InputKind) -> String {
    super::default_paths::tag_name(path, kind)
        .to_string_lossy()
        .into_owned()
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
    /// Per variant (input 1, 2, …): where the GPU time moved against the
    /// baseline, from the tree diff; `None` unless both are PyTorch traces
    /// and [`CompareLoadOptions::tree_diff`] asked for it, an error message
    /// when the diff failed.
    pub moved: Vec<Option<Result<WhereMoved, String>>>,
}

/// Options of [`load_compare_inputs_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareLoadOptions {
    /// Diff the call trees of the baseline and each variant when both are
    /// PyTorch traces ([`CompareInputs::moved`]).
    pub tree_diff: bool,
}

/// Reads every input of a comparison (in parallel), tagged with `names` or,
/// when it is empty, with each path's default tag.
pub fn load_compare_inputs(paths: &[PathBuf], names: &[String]) -> Result<CompareInputs, Error> {
    load_compare_inputs_with(paths, names, CompareLoadOptions::default())
}

/// [`load_compare_inputs`], and with `opts.tree_diff` the tree diffs of
/// trace inputs.
pub fn load_compare_inputs_with(
    paths: &[PathBuf],
    names: &[String],
    opts: CompareLoadOptions,
) -> Result<CompareInputs, Error> {
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
        moved: Vec::new(),
    };
    let mut traces = Vec::with_capacity(paths.len());
    let mut devices: Vec<(String, String)> = Vec::new();
    for (i, ((res, tag), path)) in read_all(paths, &kinds, opts.tree_diff)
        .into_iter()
        .zip(tags)
        .zip(paths)
        .enumerate()
    {
        let read = res.map_err(|e| CompareInputError::Unusable {
            role: role(i),
            msg: error_chain(&e),
        })?;
        out.warnings.extend(read.notes);
        devices.extend(read.device.map(|d| (tag.clone(), d)));
        out.inputs.push(Input {
            tag,
            source: path.display().to_string(),
            sheets: comparable_sheets(read.sheets),
            health: read.health,
        });
        traces.push(read.trace);
    }
    out.warnings.extend(different_gpus(&devices));
    out.moved = tree_diffs(paths, &traces);
    Ok(out)
}

/// A note when the trace inputs name different GPUs (`devices`: tag and
/// device name of each trace that names one).
fn different_gpus(devices: &[(String, String)]) -> Option<String> {
    let first = &devices.first()?.1;
    if devices.iter().all(|(_, d)| d == first) {
        return None;
    }
    let each: Vec<String> = devices
        .iter()
        .map(|(tag, d)| format!("{tag}: \"{d}\""))
        .collect();
    Some(format!(
        "the traces ran on different GPUs ({}); each side's roofline columns use its own spec",
        each.join(", ")
    ))
}

/// Where the time moved between the baseline trace and each variant
/// trace (none when the baseline is not a kept trace).
fn tree_diffs(
    paths: &[PathBuf],
    traces: &[Option<Trace>],
) -> Vec<Option<Result<WhereMoved, String>>> {
    let variants = traces.len().saturating_sub(1);
    let Some(Some(base)) = traces.first() else {
        return vec![None; variants];
    };
    let base_tree = super::diff::diff_tree(base);
    traces[1..]
        .iter()
        .zip(&paths[1..])
        .map(|(t, path)| {
            let t = t.as_ref()?;
            let tree = super::diff::diff_tree(t);
            let d = super::diff::diff_loaded(
                (base, &base_tree, &paths[0]),
                (t, &tree, path),
                DiffOptions::default(),
            );
            Some(d.map(WhereMoved::from).map_err(|e| e.to_string()))
        })
        .collect()
}

/// `names`, which must be unique, or the default tags, made unique by a
/// suffix (`run`, `run_2`: e.g. one file compared with itself).
fn tags(paths: &[PathBuf], kinds: &[InputKind], names: &[String]) -> Result<Vec<String>, Error> {
    if names.is_empty() {
        let defaults = paths.iter().zip(kinds).map(|(p, &k)| default_tag(p, k));
        return Ok(distinct(defaults));
    }
    let tags = names.to_vec();
    for (n, t) in tags.iter().enumerate() {
        if tags[..n].contains(t) {
            return Err(CompareInputError::TagRepeats(t.clone()).into());
        }
    }
    Ok(tags)
}

/// `tags` with each repeat suffixed `_2`, `_3`, … (the first suffix no
/// other tag has).
fn distinct(tags: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in tags {
        let mut tag = t.clone();
        let mut n = 1;
        while out.contains(&tag) {
            n += 1;
            tag = format!("{t}_{n}");
        }
        out.push(tag);
    }
    out
}

/// One input read: its sheets, notes about it and, when asked to keep
/// it, the PyTorch trace it was computed from.
struct Read {
    sheets: Vec<Table>,
    notes: Vec<String>,
    trace: Option<Trace>,
    /// The GPU a trace input names (see [`crate::gpu_arch::DetectedGpu`]).
    device: Option<String>,
    /// Its health checks.
    health: SideHealth,
}

type Loaded = Result<Read, Error>;

/// Reads every input at once: traces are analysed in parallel; with
/// `keep_traces`, PyTorch traces are kept for the tree diff.
fn read_all(paths: &[PathBuf], kinds: &[InputKind], keep_traces: bool) -> Vec<Loaded> {
    std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .zip(kinds)
            .map(|(p, &k)| s.spawn(move || read_input(p, k, keep_traces)))
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

/// How messages name input `i`: `baseline`, then `variant 1`, ….
fn role(i: usize) -> String {
    match i {
        0 => "baseline".into(),
        i => format!("variant {i}"),
    }
}

/// Reads or analyses one input. A report read from files is checked
/// ([`check_report_sheets`]); an error names the file at fault.
fn read_input(path: &Path, kind: InputKind, keep_trace: bool) -> Loaded {
    match kind {
        InputKind::CsvDir | InputKind::Xlsx => {
            let sheets = match kind {
                InputKind::Xlsx => read::read_xlsx_sheets(path, &|n: &str| {
                    reads_sheet(n) || n == crate::names::sheet::HEALTH
                })?,
                _ => read_report(path)?,
            };
            if let Err(p) = check_report_sheets(&sheets) {
                let file = match kind {
                    InputKind::CsvDir => {
                        crate::quote::quoted(&path.join(format!("{}.csv", p.sheet)))
                    }
                    _ => format!("{} (sheet {})", crate::quote::quoted(path), p.sheet),
                };
                let msg = format!("{file}: {}", p.problem);
                return Err(CompareInputError::BadSheet(msg).into());
            }
            let health = SideHealth::of_report(&sheets);
            Ok(Read {
                sheets,
                notes: Vec::new(),
                trace: None,
                device: None,
                health,
            })
        }
        InputKind::Trace => {
            // As `tracelens report` does: the spec the trace names.
            let opts = AnalyzeOptions {
                report: ReportOptions {
                    detect_arch: true,
                    ..Default::default()
                },
                ..Default::default()
            };
            let (trace, report) = analyze_keeping_trace(path, &opts)?;
            let device = report
                .quality
                .gpu
                .as_ref()
                .and_then(|g| g.device_name.clone());
            let notes = report
                .quality
                .notes()
                .into_iter()
                .map(|n| format!("{}: {n}", crate::quote::quoted(path)))
                .collect();
            let keep = keep_trace && trace.info().profiler == Profiler::PyTorch;
            let health = SideHealth::of_trace(report.diagnosis.checks);
            Ok(Read {
                sheets: report.sheets,
                notes,
                trace: keep.then_some(trace),
                device,
                health,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn different_gpus_are_noted() {
        let d = |v: &[(&str, &str)]| {
            let v: Vec<(String, String)> = v
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            different_gpus(&v)
        };
        assert_eq!(d(&[]), None);
        assert_eq!(d(&[("a", "X"), ("b", "X")]), None);
        let n = d(&[
            ("h100", "NVIDIA H100 80GB HBM3"),
            ("mi300", "AMD Instinct MI300X"),
        ])
        .unwrap();
        assert!(
            n.contains("h100: \"NVIDIA H100 80GB HBM3\", mi300: \"AMD Instinct MI300X\""),
            "{n}"
        );
    }

    #[test]
    fn repeated_default_tags_get_suffixes() {
        let tags = |v: &[&str]| distinct(v.iter().map(|s| s.to_string()));
        assert_eq!(tags(&["a", "a", "a_2", "b"]), ["a", "a_2", "a_2_2", "b"]);
        assert_eq!(tags(&["a", "a_2", "a"]), ["a", "a_2", "a_3"]);
    }

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
