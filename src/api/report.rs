//! `tracelens report`: load a trace, build its call tree, run the report
//! passes; and reading a written report back.

use std::path::Path;

use crate::analysis::{self, Report, ReportOptions, pytorch::run_report};
use crate::error::{Error, ReadError};
use crate::gpu_arch::{DetectedGpu, GpuArch};
use crate::load;
use crate::report::read;
use crate::table::Table;
use crate::trace::edit::strip_sglang_profiler_suffixes;
use crate::trace::tree::{Tree, TreeOptions, build};
use crate::trace::{Needs, Profiler, Trace};

/// A step of [`analyze`], told to the progress callback as it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Reading and decoding the trace.
    Loading,
    /// Linking events into the call tree.
    BuildingTree,
    /// Merging the capture traces (`--capture-dir`).
    MergingCaptures,
    /// Running the passes.
    ComputingSheets,
}

impl Step {
    /// What the step does, for people ("loading trace", …).
    pub fn describe(self) -> &'static str {
        match self {
            Step::Loading => "loading trace",
            Step::BuildingTree => "building call tree",
            Step::MergingCaptures => "merging capture traces",
            Step::ComputingSheets => "computing sheets",
        }
    }
}

/// Options of [`analyze`].
#[derive(Clone, Default)]
pub struct AnalyzeOptions<'a> {
    /// Options of the report passes.
    pub report: ReportOptions,
    /// Called as each [`Step`] starts (e.g. to show progress).
    pub progress: Option<&'a dyn Fn(Step)>,
    /// Folder of capture traces whose ops the kernels replayed under graph
    /// launches are attributed to (`--capture-dir`).
    pub capture_dir: Option<std::path::PathBuf>,
    /// The input format (`--format`); None detects it from the content.
    pub format: Option<load::Format>,
    /// The most rows a sheet may have (the output's limit, e.g. an xlsx
    /// workbook's); a sheet whose row count is known at load and exceeds
    /// it fails the call before the analysis runs. None: no limit.
    pub max_sheet_rows: Option<usize>,
}

impl AnalyzeOptions<'_> {
    /// Whether the call tree holds python frames: the capture merge and
    /// the module and call-stack columns read them.
    fn python_frames(&self) -> bool {
        self.capture_dir.is_some() || self.report.inference.needs_python_frames()
    }

    /// Whether the loaded trace keeps its python frames: the call tree's
    /// and the idle gap rows' (`--idle-details`), which read them without
    /// putting them in the tree.
    fn load_python_frames(&self) -> bool {
        self.python_frames() || self.report.idle_details
    }

    fn step(&self, step: Step) {
        if let Some(p) = self.progress {
            p(step);
        }
    }
}

/// What the loader must keep for [`analyze`]: what the report's passes
/// read.
pub fn report_needs() -> Needs {
    analysis::pytorch::REPORT_NEEDS
}

/// The report of the trace at `path` (`-` for stdin): every sheet of
/// `tracelens report`, the GPU timeline and trace-quality notes.
pub fn analyze(path: &Path, opts: &AnalyzeOptions) -> Result<Report, Error> {
    // The trace goes with this call: no event of a rocprofv3 trace's
    // dispatches is read (its report reads the dispatch records).
    analyze_loaded(path, opts, false).map(|(_, _, report)| report)
}

/// [`analyze`], also returning the loaded trace (for a further use of it,
/// such as compare's tree diff).
pub(crate) fn analyze_keeping_trace(
    path: &Path,
    opts: &AnalyzeOptions,
) -> Result<(Trace, Report), Error> {
    analyze_full(path, opts).map(|(trace, _, report)| (trace, report))
}

/// [`analyze`], also returning the loaded trace and its call tree (None
/// for the JAX and rocprof reports, which build none).
pub(crate) fn analyze_full(
    path: &Path,
    opts: &AnalyzeOptions,
) -> Result<(Trace, Option<Tree>, Report), Error> {
    analyze_loaded(path, opts, true)
}

/// [`analyze_full`]; `dispatch_events`: whether the trace keeps an event
/// per rocprofv3 dispatch ([`Needs::dispatch_events`]) for its caller.
fn analyze_loaded(
    path: &Path,
    opts: &AnalyzeOptions,
    dispatch_events: bool,
) -> Result<(Trace, Option<Tree>, Report), Error> {
    opts.step(Step::Loading);
    let needs = if opts.python_frames() {
        Needs::ALL
    } else if opts.load_python_frames() {
        Needs {
            python_frames: true,
            ..report_needs()
        }
    } else {
        report_needs()
    };
    let needs = Needs {
        dispatch_events,
        ..needs
    };
    let mut trace = load::load_as(path, &needs, opts.format).map_err(|error| Error::Load {
        path: path.to_path_buf(),
        error,
    })?;
    if let Some(limit) = opts.max_sheet_rows
        && let Some(&(sheet, rows)) = analysis::rows_known_at_load(&trace, limit).first()
    {
        return Err(Error::TooManyRows {
            path: path.to_path_buf(),
            sheet,
            rows,
            limit,
        });
    }
    let (mut report, tree) = analyze_trace_with_tree(&mut trace, opts)?;
    report.push_diagnosis_sheets();
    Ok((trace, tree, report))
}

/// The report of a trace already loaded (with at least [`report_needs`],
/// and in full where the options read python frames). The capture merge
/// and `--pseudo-ops` renames change the trace: copied capture events are
/// appended after its loaded events.
pub fn analyze_trace(trace: &mut Trace, opts: &AnalyzeOptions) -> Result<Report, Error> {
    let (mut report, _) = analyze_trace_with_tree(trace, opts)?;
    report.push_diagnosis_sheets();
    Ok(report)
}

/// [`analyze_trace`], also returning the call tree the report read.
fn analyze_trace_with_tree(
    trace: &mut Trace,
    opts: &AnalyzeOptions,
) -> Result<(Report, Option<Tree>), Error> {
    let gpu = DetectedGpu::choose(
        &trace.info().devices,
        opts.report.arch.as_ref(),
        opts.report.detect_arch,
    );
    let detected = gpu.detected_arch().map(|arch| AnalyzeOptions {
        report: ReportOptions {
            arch: Some(arch),
            ..opts.report.clone()
        },
        ..opts.clone()
    });
    let (mut report, tree) = analyze_with_arch(trace, detected.as_ref().unwrap_or(opts))?;
    report.quality.gpu = Some(gpu);
    Ok((report, tree))
}

/// [`analyze_trace_with_tree`] once the GPU spec is chosen.
fn analyze_with_arch(
    trace: &mut Trace,
    opts: &AnalyzeOptions,
) -> Result<(Report, Option<Tree>), Error> {
    // These reports read no call tree of ours and no capture traces.
    let direct: Option<fn(&Trace, &analysis::ReportOptions) -> Report> = match trace.info().profiler
    {
        Profiler::PyTorch => None,
        Profiler::Jax => Some(analysis::jax::run_report),
        Profiler::Rocprof => Some(analysis::rocprof::run_report),
        Profiler::Perfetto => Some(analysis::perfetto::run_report),
    };
    if let Some(run) = direct {
        opts.step(Step::ComputingSheets);
        return Ok((run(trace, &opts.report), None));
    }
    opts.step(Step::BuildingTree);
    let tree_opts = TreeOptions {
        include_python: opts.python_frames(),
    };
    let mut tree = build(trace, tree_opts);
    let capture = match &opts.capture_dir {
        Some(dir) => {
            opts.step(Step::MergingCaptures);
            Some(super::capture::merge_dir(dir, trace, &mut tree)?)
        }
        None => None,
    };
    if opts.report.inference.pseudo_ops {
        strip_sglang_profiler_suffixes(trace, tree.python_included);
    }
    opts.step(Step::ComputingSheets);
    let mut report = run_report(trace, &tree, &opts.report);
    report.quality.capture = capture;
    Ok((report, Some(tree)))
}

/// How a report names the trace at `path`: its file name (`stdin` for
/// `-`).
pub fn trace_title(path: &Path) -> String {
    if path.as_os_str() == "-" {
        return "stdin".to_string();
    }
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Loads `path` keeping what `needs` asks for; the error names the path.
pub(crate) fn load_trace(path: &Path, needs: Needs) -> Result<Trace, Error> {
    load::load(path, &needs).map_err(|error| Error::Load {
        path: path.to_path_buf(),
        error,
    })
}

/// The GPU spec `name`: a bundled name (MI300X, H100, …) or a JSON file in
/// the reference's schema. (`none`, which turns detection off, is the
/// caller's to handle: it is no spec.)
pub fn resolve_gpu_arch(name: &str) -> Result<GpuArch, Error> {
    GpuArch::resolve(name).map_err(Error::GpuArch)
}

/// The sheets of a written report: a folder of per-sheet CSVs (in name
/// order) or an xlsx workbook (in workbook order).
pub fn read_report(path: &Path) -> Result<Vec<Table>, Error> {
    if !path.is_dir() {
        return Ok(read::read_xlsx(path)?);
    }
    let sheets = read::read_csv_dir(path)?;
    if sheets.is_empty() {
        return Err(ReadError::NotAReport(path.to_path_buf()).into());
    }
    Ok(sheets)
}
