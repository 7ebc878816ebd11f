//! `tracelens report`: the performance report of one trace. The library
//! loads and analyses it ([`tracelens::analyze`]); this chooses the
//! outputs, stages the sheets, plots and Markdown, and prints the summary.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use clap::Args;

use super::output_flags::{self, SheetFlags};
use super::progress::{self, Progress};
use super::{SheetDirs, outputs, print_results, stage_markdown, stage_sheets, terminal_text};
use tracelens::analysis::common::kernel_categories::KernelCategories;
use tracelens::api::output_paths::{self, Input};
use tracelens::gpu_arch::GpuArch;
use tracelens::quote::quoted;
use tracelens::report::Document;
use tracelens::report::staging::Staging;
use tracelens::report::svg::Svg;
use tracelens::report::view::{findings, roofline, summary};
use tracelens::{AnalyzeOptions, InferenceOptions, Report, ReportOptions, Step};

/// Options of `tracelens report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    /// Trace file: PyTorch/Kineto JSON, JAX .xplane.pb, rocprofv3 JSON, or
    /// rocprofv3 Perfetto .pftrace (or its traceconv JSON), plain, .gz or
    /// .zip (all detected by content); - for stdin.
    #[arg(required_unless_present = "profile_json_path")]
    trace: Option<PathBuf>,
    /// The reference's spelling of TRACE (`--trace_path` in its pftrace
    /// scripts, `--profile_path` in its JAX script).
    #[arg(
        long = "profile_json_path",
        aliases = ["trace_path", "profile_path"],
        hide = true,
        value_name = "FILE",
        conflicts_with = "trace"
    )]
    profile_json_path: Option<PathBuf>,
    /// The input format, instead of detecting it from the content.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<InputFormat>,
    #[command(flatten)]
    outputs: SheetFlags,
    #[command(flatten)]
    perfetto: PerfettoFlags,
    /// Kernels shorter than this are "short" (short_kernel sheets).
    #[arg(long, default_value_t = 10, value_name = "US")]
    short_kernel_threshold_us: u32,
    /// Bins of short_kernel_histogram.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    short_kernel_histogram_bins: u32,
    /// Keep only the top N rows of short_kernels_summary.
    #[arg(long, value_name = "N")]
    topk_short_kernels: Option<usize>,
    /// Split idle time into micro (< US) and macro idle.
    #[arg(long, value_name = "US")]
    micro_idle_thresh_us: Option<u32>,
    /// Count GPU events without a host launch in gpu_timeline too.
    #[arg(long)]
    include_unlinked_kernels: bool,
    /// Add the idle_gaps sheet: one row per gap between a stream's GPU
    /// events, with its category, cause and what the host was doing (the
    /// trace's Python frames are read for it).
    #[arg(long)]
    idle_details: bool,
    /// Add the critical_path_summary and critical_path sheets: the
    /// critical path of the longest profiler step (the whole trace when it
    /// has none), found as Holistic Trace Analysis finds it.
    #[arg(long)]
    critical_path: bool,
    /// GPU spec for roofline columns: a bundled name (MI300X, MI325X, H100, …)
    /// or a JSON file in the reference's schema. Without it the spec is
    /// picked from the trace's device name (Kineto's deviceProperties) when
    /// it names a bundled GPU exactly; `none` turns that off.
    #[arg(long, value_name = "NAME|FILE", aliases = ["gpu_arch_json_path", "gpu_arch_platform"])]
    gpu_arch: Option<String>,
    /// With --gpu-arch: write one roofline SVG per roofline category sheet into DIR.
    #[arg(long, value_name = "DIR", requires = "gpu_arch")]
    plots: Option<PathBuf>,
    /// Folder of CUDA/HIP graph capture traces (with execution_details.json):
    /// attribute kernels replayed under graph launches to the ops that
    /// captured them.
    #[arg(
        long,
        value_name = "DIR",
        help_heading = "Inference servers",
        alias = "capture_folder"
    )]
    capture_dir: Option<PathBuf>,
    /// Add a kernel_category column (one keyword table for every input
    /// format, see docs/kernel-categories.md) to the kernel summary, and
    /// the kernel_category_by_launcher sheet.
    #[arg(long, help_heading = "Kernel categories")]
    kernel_categories: bool,
    /// Extra keyword rules, tested before the built-in ones: lines of
    /// `category: keyword, keyword` (implies --kernel-categories).
    #[arg(long, value_name = "FILE", help_heading = "Kernel categories")]
    kernel_categories_file: Option<PathBuf>,
    /// The reference's inference report: its sheet layout plus --pseudo-ops,
    /// --group-by-parent-module, --group-by-num-kernels, --include-call-stack
    /// and --no-coll-analysis.
    #[arg(long, help_heading = "Inference servers")]
    inference: bool,
    /// Split ops whose kernels do distinct work (e.g. an unfused MoE's up and
    /// down GEMMs) into pseudo ops with their own roofline rows.
    #[arg(long, help_heading = "Inference servers", alias = "enable_pseudo_ops")]
    pseudo_ops: bool,
    /// Group ops_summary, ops_summary_by_category and ops_unique_args by the
    /// op's parent nn.Module.
    #[arg(long, help_heading = "Inference servers")]
    group_by_parent_module: bool,
    /// Group ops_unique_args and the perf sheets by the number of kernels an
    /// op launches.
    #[arg(long, help_heading = "Inference servers")]
    group_by_num_kernels: bool,
    /// Add entry_point and call_stack_full columns to unified_perf_summary.
    #[arg(long, help_heading = "Inference servers")]
    include_call_stack: bool,
    /// Leave out the coll_analysis sheet.
    #[arg(
        long,
        help_heading = "Inference servers",
        alias = "disable_coll_analysis"
    )]
    no_coll_analysis: bool,
    /// Write the report's health checks and ranked findings as one JSON
    /// document (docs/json.md) to FILE; - for stdout.
    #[arg(long, value_name = "FILE", help_heading = "Diagnosis")]
    json: Option<PathBuf>,
    /// Exit with status 3 when a health check fails (the trace cannot back
    /// some of its figures); the outputs are written all the same.
    #[arg(long, help_heading = "Diagnosis")]
    strict: bool,
    /// Print the start time, CPU time and memory of each phase on stderr
    /// (as TRACELENS_TIMINGS=1 does).
    #[arg(long)]
    timings: bool,
    /// Print nothing but errors (no summary, no progress display).
    #[arg(short, long)]
    quiet: bool,
}

impl ReportArgs {
    /// The trace: TRACE or --profile_json_path (clap requires one).
    pub(crate) fn trace(&self) -> &Path {
        self.trace
            .as_deref()
            .or(self.profile_json_path.as_deref())
            .unwrap_or(Path::new("-"))
    }
}

/// `--format`: the input formats by their command-line names.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum InputFormat {
    /// PyTorch profiler (Kineto) JSON.
    Kineto,
    /// JAX / XLA XSpace protobuf (.xplane.pb).
    Xplane,
    /// rocprofv3 JSON (rocprofiler-sdk-tool).
    Rocprof,
    /// rocprofv3 Perfetto protobuf (.pftrace).
    Pftrace,
    /// Perfetto-style JSON (traceconv's export of a .pftrace).
    PerfettoJson,
}

impl From<InputFormat> for tracelens::load::Format {
    fn from(f: InputFormat) -> Self {
        use tracelens::load::Format;
        match f {
            InputFormat::Kineto => Format::KinetoJson,
            InputFormat::Xplane => Format::XPlane,
            InputFormat::Rocprof => Format::RocprofJson,
            InputFormat::Pftrace => Format::Pftrace,
            InputFormat::PerfettoJson => Format::PerfettoJson,
        }
    }
}

/// Where the workbook goes: `-o`; none when another output is asked for;
/// else beside the trace (which needs a trace file, not stdin).
fn report_xlsx_path(a: &ReportArgs) -> Result<Option<PathBuf>> {
    a.outputs.workbook(a.plots.is_some() || a.json.is_some(), || {
        if a.trace().as_os_str() == "-" {
            return Err(
                "reading the trace from stdin: name an output: -o FILE.xlsx, --csv DIR, --parquet DIR, --md FILE|- or --json FILE|-"
                    .into(),
            );
        }
        Ok(tracelens::api::default_paths::default_workbook(a.trace()))
    })
    .map_err(|e| anyhow!(e))
}

/// The report pass options from the command line.
fn report_options(a: &ReportArgs, arch: Option<GpuArch>) -> Result<ReportOptions> {
    Ok(ReportOptions {
        short_kernel_threshold_us: a.short_kernel_threshold_us as f64,
        histogram_bins: a.short_kernel_histogram_bins as usize,
        topk_short_kernels: a.topk_short_kernels,
        micro_idle_thresh_us: a.micro_idle_thresh_us.map(|v| v as f64),
        include_unlinked_kernels: a.include_unlinked_kernels,
        detect_arch: a.gpu_arch.is_none(),
        arch,
        inference: inference_options(a),
        kernel_categories: kernel_categories(a)?,
        deferred_sheets: false,
        idle_details: a.idle_details,
        critical_path: a.critical_path,
        perfetto: a.perfetto.options()?,
    })
}

/// The options of the Perfetto report (rocprofv3 `.pftrace` traces and
/// their traceconv JSON); other traces ignore them.
#[derive(Args)]
#[command(next_help_heading = "Perfetto traces (rocprofv3 .pftrace)")]
struct PerfettoFlags {
    /// api_kernel_summary leaves out kernels whose name this regex matches
    /// (anywhere in the name); "" keeps every kernel.
    #[arg(long, value_name = "REGEX", default_value = tracelens::analysis::perfetto::DEFAULT_EXCLUDE_KERNEL_REGEX)]
    exclude_kernel_regex: String,
    /// api_kernel_summary: every kernel of a launch, not only the first.
    #[arg(long)]
    allow_multi_kernel_per_api: bool,
    /// api_kernel_summary: HIP calls that launch nothing get rows too.
    #[arg(long)]
    include_nonlaunch_apis: bool,
    /// xla_top and kernel_summary: kernel names with their digits removed.
    #[arg(long)]
    merge_kernels: bool,
    /// Activity sheets: leave out events of threads below TID.
    #[arg(long, value_name = "TID", default_value_t = -1_000_000_000, allow_hyphen_values = true)]
    min_tid: i64,
    /// Activity sheets: leave out events of threads above TID.
    #[arg(
        long,
        value_name = "TID",
        default_value_t = 1_000_000_000,
        allow_hyphen_values = true
    )]
    max_tid: i64,
    /// Activity sheets: leave events shorter than NS nanoseconds out of the totals.
    #[arg(long, value_name = "NS", default_value_t = 5000)]
    min_event_ns: i64,
    /// Leave out kernel_summary.
    #[arg(long)]
    no_kernel_summary: bool,
    /// kernel_summary: communication kernels too.
    #[arg(long)]
    kernel_summary_include_rccl: bool,
    /// kernel_summary: Time % of all kernel time (total) or of compute only.
    #[arg(long, value_enum, default_value = "total", value_name = "BASE")]
    kernel_summary_baseline: Baseline,
    /// kernel_summary: group by name and launch configuration, or by name.
    #[arg(long, value_enum, default_value = "config", value_name = "BY")]
    kernel_summary_group: KernelGrouping,
    /// Leave out hip_summary.
    #[arg(long)]
    no_hip_summary: bool,
    /// hip_summary: group by name, and by stream and/or operation.
    #[arg(long, value_enum, default_value = "name", value_name = "BY")]
    hip_summary_group: HipGrouping,
    /// Rows of xla_top.
    #[arg(long, value_name = "N", default_value_t = 30)]
    top_xla: usize,
    /// Rows of the kernel summary on the Markdown page.
    #[arg(long, value_name = "N", default_value_t = 200)]
    kernel_summary_top: usize,
    /// Rows of the HIP summary on the Markdown page.
    #[arg(long, value_name = "N", default_value_t = 200)]
    hip_summary_top: usize,
}

/// `--kernel-summary-baseline`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Baseline {
    /// All kernel time, communication included.
    Total,
    /// Kernel time without communication.
    Compute,
}

/// `--kernel-summary-group`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum KernelGrouping {
    /// Name and launch configuration.
    Config,
    /// Name only.
    Name,
}

/// `--hip-summary-group`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum HipGrouping {
    /// Name only.
    Name,
    /// Name and stream.
    #[value(name = "name+stream")]
    NameStream,
    /// Name and operation.
    #[value(name = "name+op")]
    NameOp,
    /// Name, stream and operation.
    #[value(name = "name+stream+op")]
    NameStreamOp,
}

impl PerfettoFlags {
    fn options(&self) -> Result<tracelens::analysis::perfetto::PerfettoOptions> {
        use tracelens::analysis::perfetto::{
            HipGroup, KernelBaseline, KernelGroup, PerfettoOptions,
        };
        let exclude_kernel = if self.exclude_kernel_regex.is_empty() {
            None
        } else {
            Some(regex::Regex::new(&self.exclude_kernel_regex).map_err(|e| {
                anyhow!("--exclude-kernel-regex: not a valid regular expression: {e}")
            })?)
        };
        Ok(PerfettoOptions {
            exclude_kernel,
            allow_multi_kernel_per_api: self.allow_multi_kernel_per_api,
            include_nonlaunch_apis: self.include_nonlaunch_apis,
            merge_kernels: self.merge_kernels,
            min_tid: self.min_tid,
            max_tid: self.max_tid,
            min_event_ns: self.min_event_ns,
            kernel_summary: !self.no_kernel_summary,
            kernel_summary_include_rccl: self.kernel_summary_include_rccl,
            kernel_summary_baseline: match self.kernel_summary_baseline {
                Baseline::Total => KernelBaseline::Total,
                Baseline::Compute => KernelBaseline::Compute,
            },
            kernel_summary_group: match self.kernel_summary_group {
                KernelGrouping::Config => KernelGroup::Config,
                KernelGrouping::Name => KernelGroup::Name,
            },
            hip_summary: !self.no_hip_summary,
            hip_summary_group: match self.hip_summary_group {
                HipGrouping::Name => HipGroup::Name,
                HipGrouping::NameStream => HipGroup::NameStream,
                HipGrouping::NameOp => HipGroup::NameOp,
                HipGrouping::NameStreamOp => HipGroup::NameStreamOp,
            },
            top_xla: self.top_xla,
            kernel_summary_top: self.kernel_summary_top,
            hip_summary_top: self.hip_summary_top,
        })
    }
}

/// The kernel-category table of `--kernel-categories[-file]`, if asked for.
fn kernel_categories(a: &ReportArgs) -> Result<Option<KernelCategories>> {
    match &a.kernel_categories_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", quoted(path)))?;
            KernelCategories::with_user_rules(&text)
                .map(Some)
                .map_err(|e| anyhow!("{}: invalid kernel-category rule: {e}", quoted(path)))
        }
        None => Ok(a.kernel_categories.then(KernelCategories::builtin)),
    }
}

/// The inference options: `--inference` turns them all on, each flag one.
fn inference_options(a: &ReportArgs) -> InferenceOptions {
    if a.inference {
        return InferenceOptions::ALL;
    }
    InferenceOptions {
        layout: false,
        pseudo_ops: a.pseudo_ops,
        group_by_parent_module: a.group_by_parent_module,
        group_by_num_kernels: a.group_by_num_kernels,
        include_call_stack: a.include_call_stack,
        no_coll_analysis: a.no_coll_analysis,
    }
}

/// Everything `tracelens report` reads: the trace, the rule file, the
/// capture folder and a GPU spec file.
pub(crate) fn report_inputs(a: &ReportArgs) -> Vec<Input> {
    let mut inputs = vec![Input::file(a.trace())];
    inputs.extend(a.kernel_categories_file.as_deref().map(Input::file));
    inputs.extend(
        a.capture_dir
            .as_deref()
            .map(|d| Input::dir(d, output_paths::TRACE_FILES)),
    );
    inputs.extend(super::gpu_arch_input(a.gpu_arch.as_deref()));
    inputs
}

/// Refuses output paths that would overwrite or remove an input or each
/// other, and a workbook name that is not `.xlsx`.
fn check_report_paths(a: &ReportArgs, xlsx_path: Option<&Path>) -> Result<()> {
    let mut outs = a.outputs.outputs(xlsx_path);
    outs.push(("plots", outputs::replacing(SVG_FILES), a.plots.as_deref()));
    outs.push(("json", outputs::Kind::Stream, a.json.as_deref()));
    outputs::check(&report_inputs(a), &outs, Some("--json")).map_err(|e| anyhow!(e))
}

/// The extension of the plots `--plots` replaces.
const SVG_FILES: &[&str] = &["svg"];

/// The exit status of `--strict` when a health check fails.
pub(crate) const STRICT_FAIL_EXIT: i32 = 3;

/// Runs the subcommand; returns the exit status (0, or
/// [`STRICT_FAIL_EXIT`] under `--strict` when a health check fails).
pub(crate) fn run(a: ReportArgs) -> Result<i32> {
    let xlsx_path = report_xlsx_path(&a)?;
    check_report_paths(&a, xlsx_path.as_deref())?;
    let arch = gpu_arch(&a)?;
    let progress = RefCell::new(Progress::new(
        progress::display_wanted(a.quiet),
        progress::timings_wanted(a.timings),
        a.trace(),
    ));
    let step = |s: Step| progress.borrow_mut().step(s.describe(), s == Step::Loading);
    // A workbook refuses an oversized sheet at load, not after the work.
    let max_rows = xlsx_path.as_ref().map(|_| outputs::xlsx_row_limit());
    let mut opts = analyze_options(&a, arch, Some(&step), max_rows)?;
    // The report is only written, and its summaries read other sheets.
    opts.report.deferred_sheets = true;
    let report = tracelens::analyze(a.trace(), &opts)?;
    progress.borrow_mut().step("writing outputs", false);
    let md_to_stdout = a.outputs.md_to_stdout();
    // Every file of the run appears together, or none does.
    let mut staging = Staging::new();
    let arch = used_arch(opts.report.arch.clone(), &report);
    let arch = arch.as_ref();
    let mut written = stage_report_sheets(
        &mut staging,
        a.outputs.dirs(),
        &report,
        arch,
        xlsx_path.as_deref(),
    )?;
    let mut no_plots = false;
    if let (Some(dir), Some(arch)) = (&a.plots, arch) {
        match stage_plots(&mut staging, dir, &report, arch)? {
            Some(w) => written.push(w),
            None => no_plots = true,
        }
    }
    let title = report_title(a.trace());
    let md_text = stage_markdown(&mut staging, a.outputs.md(), &mut written, || {
        summary::page(&report, &title)
    })?;
    let json_text = stage_json(&mut staging, a.json.as_ref(), &mut written, &report, &title)?;
    outputs::commit(staging)?;
    let mut progress = progress.into_inner();
    progress.step("done", false);
    progress.done();
    // Trace-quality notes always go to stderr, even with --quiet.
    for n in report.quality.notes() {
        super::print_warning(&format!("{}: {n}", quoted(a.trace())));
    }
    if no_plots {
        super::print_warning(
            "--plots: no op of this trace has a roofline model (GEMM, attention, …): no plots written",
        );
    }
    let terminal = terminal_text(summary::terminal(&report))?;
    if let Some(text) = json_text.filter(|_| output_flags::is_stdout(a.json.as_deref())) {
        super::stdout::write_line(&text)?;
    }
    print_results(
        a.quiet,
        md_to_stdout || output_flags::is_stdout(a.json.as_deref()),
        md_text.as_deref(),
        &terminal,
        &written,
    )?;
    Ok(strict_exit(a.strict, &report))
}

/// The exit status: [`STRICT_FAIL_EXIT`] under `--strict` when a health
/// check fails, else 0.
fn strict_exit(strict: bool, report: &Report) -> i32 {
    let failed = report.diagnosis.verdict() == tracelens::analysis::diagnosis::Status::Fail;
    if strict && failed {
        super::print_warning("--strict: a health check failed (exit 3)");
        STRICT_FAIL_EXIT
    } else {
        0
    }
}

/// Stages the JSON document at `path` (unless it is `-`); returns its
/// text when asked for.
fn stage_json(
    staging: &mut Staging,
    path: Option<&PathBuf>,
    written: &mut Vec<String>,
    report: &Report,
    title: &str,
) -> Result<Option<String>> {
    let Some(path) = path else { return Ok(None) };
    let text = tracelens::report::json::record_text(&findings::report_record(report, title));
    if path.as_os_str() != "-" {
        staging.put(path, format!("{text}\n").as_bytes())?;
        written.push(path.display().to_string());
    }
    Ok(Some(text))
}

/// The GPU spec `--gpu-arch` names, if any (none for `none`).
pub(crate) fn gpu_arch(a: &ReportArgs) -> Result<Option<GpuArch>> {
    if a.plots.is_some() && a.gpu_arch.as_deref().is_some_and(super::is_no_arch) {
        return Err(anyhow!("--plots needs a GPU spec: not --gpu-arch none"));
    }
    Ok(a.gpu_arch
        .as_deref()
        .filter(|n| !super::is_no_arch(n))
        .map(tracelens::resolve_gpu_arch)
        .transpose()?)
}

/// The GPU spec the report used: `--gpu-arch`'s, else the one picked
/// from the trace.
pub(crate) fn used_arch(given: Option<GpuArch>, report: &Report) -> Option<GpuArch> {
    given.or_else(|| report.quality.gpu.as_ref()?.detected_arch())
}

/// The analysis options of `tracelens report` arguments, with the GPU
/// spec `arch`, the progress callback and the row limit of the outputs.
pub(crate) fn analyze_options<'a>(
    a: &ReportArgs,
    arch: Option<GpuArch>,
    progress: Option<&'a dyn Fn(Step)>,
    max_sheet_rows: Option<usize>,
) -> Result<AnalyzeOptions<'a>> {
    Ok(AnalyzeOptions {
        report: report_options(a, arch)?,
        progress,
        capture_dir: a.capture_dir.clone(),
        format: a.format.map(Into::into),
        max_sheet_rows,
    })
}

/// The title of a report's Markdown page: the trace's file name (`stdin`
/// for `-`).
pub(crate) fn report_title(trace: &Path) -> String {
    tracelens::api::trace_title(trace)
}

/// Stages the report's CSVs, Parquet files and workbook; with a GPU spec
/// the workbook gains the roofline chart and its data sheet (the per-sheet
/// folders do not).
pub(crate) fn stage_report_sheets(
    staging: &mut Staging,
    dirs: SheetDirs,
    report: &Report,
    arch: Option<&GpuArch>,
    xlsx_path: Option<&Path>,
) -> Result<Vec<String>> {
    let chart = arch.and(roofline::workbook_chart(&report.sheets, arch));
    let (points, charts) = match chart {
        Some((points, chart)) => (Some(points), vec![chart]),
        None => (None, Vec::new()),
    };
    let book = Document {
        tables: report.sheets.iter().chain(points.as_ref()).collect(),
        charts,
        ..Document::default()
    };
    let sheets = Document::of_tables(&report.sheets);
    stage_sheets(staging, dirs, &sheets, xlsx_path, &book)
}

/// Stages one roofline SVG per roofline sheet into `dir`; returns the
/// "wrote" line, or None (and leaves `dir` alone) when no sheet has a
/// roofline, as in a GPU-only trace.
fn stage_plots(
    staging: &mut Staging,
    dir: &Path,
    report: &Report,
    arch: &GpuArch,
) -> Result<Option<String>> {
    let plots = Document {
        charts: roofline::category_charts(&report.sheets, arch),
        ..Document::default()
    };
    if plots.charts.is_empty() {
        return Ok(None);
    }
    staging
        .create_dir_all(dir)
        .with_context(|| format!("cannot write plots to {}", quoted(dir)))?;
    // Like the CSV sheets, the folder's plots are replaced as a unit.
    staging.replace_all(dir, SVG_FILES[0]);
    super::stage::stage_with(staging, &Svg { dir: dir.into() }, &plots)?;
    Ok(Some(format!(
        "{}/ ({} roofline plots)",
        dir.display(),
        plots.charts.len()
    )))
}
