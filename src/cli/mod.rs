//! Subcommands and their options: parse the arguments, call the library
//! ([`tracelens::api`]), choose the writers and print. No analysis logic
//! lives here.

pub(crate) mod collectives;
pub(crate) mod compare;
mod compat;
mod diff;
pub mod embed;
mod fleet;
mod outputs;
mod progress;
mod replay;

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use progress::Progress;
use tracelens::analysis::commands::tree_view::TreeViewOptions;
use tracelens::analysis::common::kernel_categories::KernelCategories;
use tracelens::gpu_arch::GpuArch;
use tracelens::report::csv::Csv;
use tracelens::report::markdown::Markdown;
use tracelens::report::parquet::Parquet;
use tracelens::report::staging::Staging;
use tracelens::report::svg::Svg;
use tracelens::report::text::Text;
use tracelens::report::view::{calculator, roofline, summary, tree as tree_view};
use tracelens::report::xlsx::Xlsx;
use tracelens::report::{Document, Page, Writer};
use tracelens::{
    AnalyzeOptions, CallTree, InferenceOptions, Report, ReportOptions, RooflineQuery, Step,
};

/// Performance reports from PyTorch profiler traces: where the GPU time went,
/// by op category, op, input shape and kernel.
#[derive(Parser)]
#[command(name = "tracelens", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the performance report (Excel, CSV, Parquet, Markdown) for one
    /// trace.
    Report(ReportArgs),
    /// Print the call tree: Python frames and ops down to GPU kernels.
    Tree(TreeArgs),
    /// FLOPs, bytes and roofline of one GEMM, attention or convolution,
    /// without a trace.
    Roofline(RooflineArgs),
    /// Collective (NCCL/RCCL) analysis across the ranks of one job.
    Collectives(collectives::CollectivesArgs),
    /// Compare two or more reports (or traces) and gate CI on regressions.
    Compare(compare::CompareArgs),
    /// Merge the call trees of two traces and show where they diverge and
    /// where the GPU time moved (TraceDiff).
    Diff(diff::DiffArgs),
    /// Write minimal reproducer scripts of a trace's slow ops: random
    /// tensors of the recorded shapes, dtypes and strides through the same
    /// ATen overload, timed beside the traced kernel time.
    Replay(replay::ReplayArgs),
    /// Summarise traces for fleet analysis: per trace, its report sheets,
    /// per-step figures and collective kernels as small Parquet tables (the
    /// map step; several traces at once, bounded memory).
    Summarize(fleet::SummarizeArgs),
    /// Merge trace summaries: percentiles across traces, a rank × step
    /// heatmap, outlier ranks and steps, collectives across all ranks, and
    /// a before/after comparison usable as a CI gate (the reduce step).
    Fleet(fleet::FleetArgs),
}

#[derive(Args)]
struct RooflineArgs {
    #[command(subcommand)]
    op: RooflineOp,
    /// GPU spec: a bundled name (MI300X, H100, …) or a JSON file.
    #[arg(long, global = true, value_name = "NAME|FILE", aliases = ["gpu_arch_json_path", "gpu_arch_platform"])]
    gpu_arch: Option<String>,
    /// Measured kernel time, for achieved TFLOP/s, TB/s and % of roofline.
    #[arg(long, global = true, value_name = "US")]
    time_us: Option<f64>,
    /// Data type: bf16, fp16, fp32, fp64, fp8.
    #[arg(long, global = true, default_value = "bf16")]
    dtype: String,
}

#[derive(Subcommand)]
enum RooflineOp {
    /// [batch ×] (M×K)·(K×N) matrix multiply (aten::mm / addmm / bmm / baddbmm).
    Gemm {
        /// Rows of A and of the output.
        #[arg(long)]
        m: i64,
        /// Columns of B and of the output.
        #[arg(long)]
        n: i64,
        /// The reduction dimension.
        #[arg(long)]
        k: i64,
        /// Batch count (bmm).
        #[arg(long)]
        batch: Option<i64>,
        /// Add a bias (addmm / baddbmm).
        #[arg(long)]
        bias: bool,
    },
    /// Scaled dot-product attention (flash layout).
    Sdpa {
        /// Batch size.
        #[arg(long)]
        batch: i64,
        /// Query heads.
        #[arg(long)]
        heads: i64,
        /// Key/value heads (grouped-query attention) [default: heads].
        #[arg(long)]
        kv_heads: Option<i64>,
        /// Query sequence length.
        #[arg(long)]
        seq_q: i64,
        /// Key/value sequence length [default: seq-q].
        #[arg(long)]
        seq_kv: Option<i64>,
        /// Head dimension.
        #[arg(long)]
        head_dim: i64,
        /// Causal mask (halves the FLOPs; needs seq-q == seq-kv).
        #[arg(long)]
        causal: bool,
    },
    /// Forward convolution (aten::convolution).
    Conv {
        /// Input shape N,C,H,W (or N,C,L / N,C,D,H,W).
        #[arg(long, value_delimiter = ',', required = true)]
        input: Vec<i64>,
        /// Weight shape C_out,C_in/groups,R,S.
        #[arg(long, value_delimiter = ',', required = true)]
        weight: Vec<i64>,
        /// Stride per spatial dimension [default: 1].
        #[arg(long, value_delimiter = ',')]
        stride: Vec<i64>,
        /// Padding per spatial dimension [default: 0].
        #[arg(long, value_delimiter = ',')]
        padding: Vec<i64>,
        /// Dilation per spatial dimension [default: 1].
        #[arg(long, value_delimiter = ',')]
        dilation: Vec<i64>,
        /// Groups.
        #[arg(long, default_value_t = 1)]
        groups: i64,
    },
}

#[derive(Args)]
struct ReportArgs {
    /// Trace file: PyTorch/Kineto JSON, JAX .xplane.pb or rocprofv3 JSON,
    /// plain, .gz or .zip (all detected by content); - for stdin.
    #[arg(required_unless_present = "profile_json_path")]
    trace: Option<PathBuf>,
    /// The reference's spelling of TRACE.
    #[arg(
        long = "profile_json_path",
        hide = true,
        value_name = "FILE",
        conflicts_with = "trace"
    )]
    profile_json_path: Option<PathBuf>,
    /// The input format, instead of detecting it from the content.
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<InputFormat>,
    /// Excel workbook to write [default: <trace stem>_perf_report.xlsx beside
    /// the trace, when no other output (--csv, --parquet, --md, --plots) is
    /// asked for].
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.xlsx",
        alias = "output_xlsx_path"
    )]
    output: Option<PathBuf>,
    /// Write one <sheet>.csv per sheet into DIR.
    #[arg(long, value_name = "DIR", alias = "output_csvs_dir")]
    csv: Option<PathBuf>,
    /// Write one <sheet>.parquet per sheet (typed columns) into DIR.
    #[arg(long, value_name = "DIR")]
    parquet: Option<PathBuf>,
    /// Write a Markdown summary to FILE (- for stdout).
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
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
    /// GPU spec for roofline columns: a bundled name (MI300X, MI325X, H100, …)
    /// or a JSON file in the reference's schema.
    #[arg(long, value_name = "NAME|FILE", aliases = ["gpu_arch_json_path", "gpu_arch_platform"])]
    gpu_arch: Option<String>,
    /// With --gpu-arch: write one roofline SVG per roofline category sheet into DIR.
    #[arg(long, value_name = "DIR", requires = "gpu_arch")]
    plots: Option<PathBuf>,
    /// Folder of CUDA/HIP graph capture traces (with execution_details.json):
    /// attribute kernels replayed under graph launches to the ops that
    /// captured them.
    #[arg(long, value_name = "DIR", help_heading = "Inference servers")]
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
    fn trace(&self) -> &Path {
        self.trace
            .as_deref()
            .or(self.profile_json_path.as_deref())
            .unwrap_or(Path::new("-"))
    }
}

#[derive(Args)]
struct TreeArgs {
    /// Trace file: .json, .json.gz or .zip; - for stdin.
    trace: PathBuf,
    /// Show the nn.Module hierarchy with GPU time per module (µs).
    #[arg(long)]
    modules: bool,
    /// Print at most N levels below each root.
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// Print only subtrees whose root name matches this regular expression.
    #[arg(long, value_name = "PATTERN")]
    grep: Option<String>,
    /// Also show branches that launch no GPU work.
    #[arg(long)]
    all: bool,
}

/// Why arguments were not accepted.
enum ParseFailure {
    /// clap's answer: an error, or help / version text to print.
    Clap(clap::Error),
    /// A reference flag without an equivalent ([`compat::check`]).
    Refused(String),
}

/// Parses `args` (the program name first), the reference's flags included
/// ([`compat`]).
fn parse_args<I, T>(args: I) -> Result<Cli, ParseFailure>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = compat::with_reference_flags(Cli::command())
        .try_get_matches_from(args)
        .map_err(ParseFailure::Clap)?;
    compat::check(&matches).map_err(ParseFailure::Refused)?;
    Cli::from_arg_matches(&matches).map_err(ParseFailure::Clap)
}

/// Parses `args` as [`parse_args`]; `Err` is the exit code after the
/// message (or the help text) is printed.
fn parse<I, T>(args: I) -> Result<Cli, i32>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    parse_args(args).map_err(|f| match f {
        ParseFailure::Clap(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            code
        }
        ParseFailure::Refused(msg) => {
            eprintln!("tracelens: error: {msg}");
            2
        }
    })
}

/// Runs the command line of this process; returns its exit code.
pub fn run() -> i32 {
    run_from(std::env::args_os())
}

/// Runs the command line `args` (the program name first, as in
/// `std::env::args_os`); returns the exit code. Messages go to stderr and
/// results to stdout, as from the binary.
pub fn run_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    outputs::clean_up_on_signals();
    let result = match cli.command {
        Command::Report(a) => report(a),
        Command::Tree(a) => tree(a),
        Command::Roofline(a) => roofline(a),
        Command::Collectives(a) => collectives::run(a),
        Command::Compare(a) => return compare::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Summarize(a) => fleet::summarize(a),
        Command::Fleet(a) => return fleet::fleet(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tracelens: error: {e:#}");
            1
        }
    }
}

/// The message of `e` followed by its causes, as `tracelens: error:`
/// prints them.
pub(crate) fn chain(e: impl std::error::Error + Send + Sync + 'static) -> String {
    format!("{:#}", anyhow::Error::new(e))
}

/// The single file `writer` makes of `doc`, as text (empty when it makes
/// none).
pub(crate) fn render_text(writer: &dyn Writer, doc: &Document) -> Result<String> {
    let files = writer.render(doc)?;
    let bytes: Vec<u8> = files.into_iter().flat_map(|f| f.bytes).collect();
    Ok(String::from_utf8(bytes)?)
}

/// Renders the Markdown page `page()` when `--md` asks for one and stages it
/// unless it goes to stdout (`-`); returns its text for printing.
pub(crate) fn stage_markdown(
    staging: &mut Staging,
    md: Option<&PathBuf>,
    written: &mut Vec<String>,
    page: impl FnOnce() -> Page,
) -> Result<Option<String>> {
    let Some(md) = md else { return Ok(None) };
    let text = render_text(&Markdown { path: md.clone() }, &Document::of_page(page()))?;
    if md.as_os_str() != "-" {
        staging.put(md, text.as_bytes())?;
        written.push(md.display().to_string());
    }
    Ok(Some(text))
}

/// `page` as terminal text.
pub(crate) fn terminal_text(page: Page) -> Result<String> {
    render_text(&Text { path: "-".into() }, &Document::of_page(page))
}

/// Stages the files `writer` makes of `doc`, one by one (each creating its
/// directory).
pub(crate) fn stage_with(staging: &mut Staging, writer: &dyn Writer, doc: &Document) -> Result<()> {
    for f in writer.render(doc)? {
        staging.put(&f.name, &f.bytes)?;
    }
    Ok(())
}

/// The folders of per-sheet files a command was asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SheetDirs<'a> {
    /// `--csv DIR`.
    pub csv: Option<&'a Path>,
    /// `--parquet DIR`.
    pub parquet: Option<&'a Path>,
}

/// Stages `sheets`' tables as one file per table in each folder of `dirs`
/// (CSV, Parquet) and `book` as a workbook at `xlsx_path`, each when asked
/// for; returns the "wrote …" lines for the terminal.
pub(crate) fn stage_sheets(
    staging: &mut Staging,
    dirs: SheetDirs,
    sheets: &Document,
    xlsx_path: Option<&Path>,
    book: &Document,
) -> Result<Vec<String>> {
    let mut written = Vec::new();
    if let Some(dir) = dirs.csv {
        let csv = Csv { dir: dir.into() };
        written.push(stage_sheet_dir(staging, &csv, dir, "csv", "CSV", sheets)?);
    }
    if let Some(dir) = dirs.parquet {
        let pq = Parquet { dir: dir.into() };
        written.push(stage_sheet_dir(
            staging, &pq, dir, "parquet", "Parquet", sheets,
        )?);
    }
    if let Some(x) = xlsx_path {
        let dir = x.parent().unwrap_or(Path::new(""));
        Xlsx { path: x.into() }.stage_files(book, dir, staging)?;
        written.push(x.display().to_string());
    }
    Ok(written)
}

/// Stages the files `writer` makes of `doc`'s tables (one per table, all
/// in `dir`), making this run own the folder's `*.ext` files; returns the
/// "wrote …" line, naming the files `what` sheets.
pub(crate) fn stage_sheet_dir(
    staging: &mut Staging,
    writer: &dyn Writer,
    dir: &Path,
    ext: &str,
    what: &str,
    doc: &Document,
) -> Result<String> {
    let n = writer
        .stage_files(doc, dir, staging)
        .with_context(|| format!("cannot write {what} sheets to {}", dir.display()))?;
    // The folder's sheets are replaced as a unit: an earlier run's sheets
    // that this run does not write go too.
    staging.replace_all(dir, ext);
    Ok(format!("{}/ ({n} {what} sheets)", dir.display()))
}

/// Prints the Markdown (when it goes to stdout) and the terminal summary
/// with the files written; the summary moves to stderr when stdout carries
/// the Markdown, and is left out with --quiet.
pub(crate) fn print_results(
    quiet: bool,
    md_to_stdout: bool,
    md: Option<&str>,
    summary: &str,
    written: &[String],
) {
    if md_to_stdout && let Some(text) = md {
        print!("{text}");
    }
    if quiet {
        return;
    }
    let mut text = summary.to_string();
    for w in written {
        text.push_str(&format!("wrote {w}\n"));
    }
    if md_to_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
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
}

impl From<InputFormat> for tracelens::load::Format {
    fn from(f: InputFormat) -> Self {
        use tracelens::load::Format;
        match f {
            InputFormat::Kineto => Format::KinetoJson,
            InputFormat::Xplane => Format::XPlane,
            InputFormat::Rocprof => Format::RocprofJson,
        }
    }
}

/// The trace's path without its format suffix, for the default outputs
/// beside it: `a/trace.json.gz` -> `a/trace` (everything from the last
/// `.json` is dropped), `a/908_results.json` -> `a/908` (rocprofv3's
/// `_results.json`), `a/p.xplane.pb` -> `a/p`.
fn trace_stem(trace: &Path) -> String {
    let s = trace.to_string_lossy();
    let end = s
        .rfind(".xplane.pb")
        .or_else(|| s.rfind("_results.json"))
        .or_else(|| s.rfind(".json"))
        .unwrap_or(s.len());
    s[..end].to_string()
}

/// The reference's default workbook path: `<trace stem>_perf_report.xlsx`
/// ([`trace_stem`]).
fn default_xlsx_path(trace: &Path) -> PathBuf {
    PathBuf::from(format!("{}_perf_report.xlsx", trace_stem(trace)))
}

/// Where the workbook goes: `-o`; none when another output is asked for;
/// else beside the trace (which needs a trace file, not stdin).
fn report_xlsx_path(a: &ReportArgs) -> Result<Option<PathBuf>> {
    let others = a.csv.is_some() || a.parquet.is_some() || a.md.is_some() || a.plots.is_some();
    outputs::workbook_path(a.output.as_deref(), others, || {
        if a.trace().as_os_str() == "-" {
            return Err(
                "reading the trace from stdin: name an output: -o FILE.xlsx, --csv DIR, --parquet DIR or --md FILE|-"
                    .into(),
            );
        }
        Ok(default_xlsx_path(a.trace()))
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
        arch,
        inference: inference_options(a),
        kernel_categories: kernel_categories(a)?,
        deferred_sheets: false,
    })
}

/// The kernel-category table of `--kernel-categories[-file]`, if asked for.
fn kernel_categories(a: &ReportArgs) -> Result<Option<KernelCategories>> {
    match &a.kernel_categories_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            KernelCategories::with_user_rules(&text)
                .map(Some)
                .map_err(|e| anyhow!("{}: invalid kernel-category rule: {e}", path.display()))
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

/// Refuses output paths that would overwrite an input or each other.
fn check_report_paths(a: &ReportArgs, xlsx_path: Option<&Path>) -> Result<()> {
    use outputs::Kind::{Dir, File};
    let xlsx_flag = if a.output.is_some() {
        "-o"
    } else {
        "the default workbook"
    };
    let inputs: Vec<&Path> = [
        Some(a.trace()),
        a.kernel_categories_file.as_deref(),
        a.capture_dir.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    outputs::check_paths(
        &inputs,
        &[
            (xlsx_flag, File, xlsx_path),
            ("--csv", Dir, a.csv.as_deref()),
            ("--parquet", Dir, a.parquet.as_deref()),
            ("--md", File, a.md.as_deref()),
            ("--plots", Dir, a.plots.as_deref()),
        ],
    )
    .map_err(|e| anyhow!(e))
}

fn report(a: ReportArgs) -> Result<()> {
    let xlsx_path = report_xlsx_path(&a)?;
    check_report_paths(&a, xlsx_path.as_deref())?;
    if let Some(o) = &a.output {
        outputs::check_workbook_name(o, None).map_err(|e| anyhow!(e))?;
    }
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
    let md_to_stdout = a.md.as_ref().is_some_and(|m| m.as_os_str() == "-");
    // Every file of the run appears together, or none does.
    let mut staging = Staging::new();
    let arch = opts.report.arch.as_ref();
    let dirs = SheetDirs {
        csv: a.csv.as_deref(),
        parquet: a.parquet.as_deref(),
    };
    let mut written = stage_report_sheets(&mut staging, dirs, &report, arch, xlsx_path.as_deref())?;
    let mut no_plots = false;
    if let (Some(dir), Some(arch)) = (&a.plots, arch) {
        match stage_plots(&mut staging, dir, &report, arch)? {
            Some(w) => written.push(w),
            None => no_plots = true,
        }
    }
    let title = report_title(a.trace());
    let md_text = stage_markdown(&mut staging, a.md.as_ref(), &mut written, || {
        summary::page(&report, &title)
    })?;
    outputs::commit(staging)?;
    let mut progress = progress.into_inner();
    progress.step("done", false);
    progress.done();
    // Trace-quality notes always go to stderr, even with --quiet.
    for n in report.quality.notes() {
        eprintln!("tracelens: warning: {}: {n}", a.trace().display());
    }
    if no_plots {
        eprintln!(
            "tracelens: warning: --plots: no op of this trace has a roofline model (GEMM, attention, …): no plots written"
        );
    }
    let terminal = terminal_text(summary::terminal(&report))?;
    print_results(
        a.quiet,
        md_to_stdout,
        md_text.as_deref(),
        &terminal,
        &written,
    );
    Ok(())
}

/// The GPU spec `--gpu-arch` names, if any.
fn gpu_arch(a: &ReportArgs) -> Result<Option<GpuArch>> {
    Ok(a.gpu_arch
        .as_deref()
        .map(tracelens::resolve_gpu_arch)
        .transpose()?)
}

/// The analysis options of `tracelens report` arguments, with the GPU
/// spec `arch`, the progress callback and the row limit of the outputs.
fn analyze_options<'a>(
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
fn report_title(trace: &Path) -> String {
    if trace.as_os_str() == "-" {
        return "stdin".to_string();
    }
    trace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| trace.display().to_string())
}

/// Stages the report's CSVs, Parquet files and workbook; with a GPU spec
/// the workbook gains the roofline chart and its data sheet (the per-sheet
/// folders do not).
fn stage_report_sheets(
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
        .with_context(|| format!("cannot write plots to {}", dir.display()))?;
    // Like the CSV sheets, the folder's plots are replaced as a unit.
    staging.replace_all(dir, "svg");
    stage_with(staging, &Svg { dir: dir.into() }, &plots)?;
    Ok(Some(format!(
        "{}/ ({} roofline plots)",
        dir.display(),
        plots.charts.len()
    )))
}

/// Compiles `--grep`; regex errors span several lines, the last one says
/// what is wrong.
fn grep_pattern(p: &str) -> Result<regex::Regex> {
    regex::Regex::new(p).map_err(|e| {
        let msg = e.to_string();
        let why = msg
            .lines()
            .last()
            .unwrap_or("")
            .trim()
            .trim_start_matches("error: ")
            .to_string();
        anyhow!("--grep: invalid pattern {p:?}: {why}")
    })
}

fn tree(a: TreeArgs) -> Result<()> {
    // Check the pattern before the (possibly long) load.
    let grep = a.grep.as_deref().map(grep_pattern).transpose()?;
    let CallTree { trace, tree } = tracelens::load_tree(&a.trace)?;
    let opts = TreeViewOptions {
        depth: a.depth,
        grep,
        show_all: a.all,
    };
    let outline = if a.modules {
        tree_view::module_tree(&trace, &tree, &opts)
    } else {
        tree_view::call_tree(&trace, &tree, &opts)
    };
    let doc = Document {
        outline: Some(outline),
        ..Document::default()
    };
    let text = render_text(&Text { path: "-".into() }, &doc)?;
    if text.is_empty() && a.modules {
        return Err(anyhow!(
            "{}: no nn.Module frames with GPU work (profile with with_stack=True and with_modules=True)",
            a.trace.display()
        ));
    }
    if text.is_empty() {
        eprintln!(
            "tracelens: nothing to show: no frame launches GPU work{} (use --all to show every frame)",
            if opts.grep.is_some() {
                " under a matching root"
            } else {
                ""
            }
        );
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes());
    Ok(())
}

/// The library's operation for a `roofline` subcommand: the same variant
/// with the same fields.
macro_rules! library_op {
    ($op:expr; $($variant:ident { $($field:ident),* }),*) => {
        match $op {
            $(RooflineOp::$variant { $($field),* } => tracelens::RooflineOp::$variant { $($field),* },)*
        }
    };
}

/// The library's question for `roofline` arguments.
fn roofline_query(a: RooflineArgs) -> RooflineQuery {
    let op = library_op!(a.op;
        Gemm { m, n, k, batch, bias },
        Sdpa { batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal },
        Conv { input, weight, stride, padding, dilation, groups });
    RooflineQuery {
        op,
        dtype: a.dtype,
        gpu_arch: a.gpu_arch,
        time_us: a.time_us,
    }
}

fn roofline(a: RooflineArgs) -> Result<()> {
    let r = tracelens::roofline(&roofline_query(a))?;
    print!("{}", calculator::text(&r.eval, &r.figures()));
    Ok(())
}
