//! Subcommands and their options: parse the arguments, call the library
//! ([`tracelens::api`]), choose the writers and print. No analysis logic
//! lives here. This file holds the top-level parser, the dispatch and the
//! helpers every command shares; each command lives in its own file.

pub(crate) mod collectives;
pub(crate) mod compare;
mod compat;
mod critical_path;
mod diff;
pub mod embed;
mod fleet;
mod genesis;
mod merge;
mod output_flags;
mod outputs;
mod progress;
mod replay;
mod report;
mod roofline;
mod split;
mod stage;
mod stdout;
mod tree;

use std::path::Path;

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use tracelens::report::text::Text;
use tracelens::report::{Document, Page, Writer};

pub(crate) use stage::{SheetDirs, stage_markdown, stage_sheet_dir, stage_sheets};

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
    ///
    /// Without an output flag (-o, --csv, --parquet, --md, --plots), the
    /// workbook goes to <trace stem>_perf_report.xlsx beside the trace.
    Report(report::ReportArgs),
    /// Print the call tree: Python frames and ops down to GPU kernels.
    Tree(tree::TreeArgs),
    /// The critical path of a profiler step: the longest chain of host
    /// work, launches and GPU events, and its time by what bounds it.
    ///
    /// Without an output flag (--csv, --json) the summary is printed.
    CriticalPath(critical_path::CriticalPathArgs),
    /// FLOPs, bytes and roofline of one GEMM, attention or convolution,
    /// without a trace.
    Roofline(roofline::RooflineArgs),
    /// Collective (NCCL/RCCL) analysis across the ranks of one job.
    ///
    /// Without an output flag (-o, --csv, --parquet, --md), the workbook
    /// goes to DIR/nccl_analysis_report.xlsx (DIR: --trace-dir).
    Collectives(collectives::CollectivesArgs),
    /// Compare two or more reports (or traces) and gate CI on regressions.
    ///
    /// The sheet outputs (-o, --csv, --parquet) hold the comparison sheets,
    /// --md the verdict (for a pull-request comment), which goes to stdout
    /// when no other output is asked for.
    Compare(compare::CompareArgs),
    /// Merge the call trees of two traces and show where they diverge and
    /// where the GPU time moved (TraceDiff).
    ///
    /// --parquet writes diff_stats.parquet and
    /// diff_stats_unique_args_summary.parquet (each when it has rows, as the
    /// CSVs); --md the view of where the GPU time moved, for a pull request.
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
    /// The Genesis/Taichi physics-simulation report of a capture folder:
    /// rocprof kernel sheets with physics categories, the steady-state GPU
    /// timeline, the Perfetto HIP-activity and memory-copy sheets.
    ///
    /// Writes genesis_perf_report.xlsx and genesis_summary.md into
    /// --output-dir (never into the capture folder).
    Genesis(genesis::GenesisArgs),
    /// Merge several ranks' PyTorch traces into one timeline (the
    /// reference's TraceFusion): each rank's pids, flow ids and
    /// correlations moved into a range of their own, every event tagged
    /// with args.rank, each process labelled RANK <r> - GPU|CPU.
    ///
    /// Writes exactly the -o path, gzip-packed when it ends in .gz.
    Merge(merge::MergeArgs),
    /// Cut an inference trace (vLLM, SGLang, ATOM, diffusion) into
    /// per-iteration or steady-state window traces, as the reference's
    /// TraceLens_split_inference_trace does.
    ///
    /// Writes gzip JSON traces and execution_details.json/.csv into
    /// --output-dir; with no step annotations the iterations are the call
    /// tree's repeating blocks.
    Split(split::SplitArgs),
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
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let matches = compat::with_reference_flags(Cli::command())
        .try_get_matches_from(&args)
        .map_err(
            |e| match compat::refusal_in(args.get(1..).unwrap_or_default()) {
                Some(line) if e.use_stderr() => ParseFailure::Refused(line),
                _ => ParseFailure::Clap(e),
            },
        )?;
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
            print_error(&msg);
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
        Command::Report(a) => match report::run(a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Tree(a) => tree::run(a),
        Command::CriticalPath(a) => critical_path::run(a),
        Command::Roofline(a) => roofline::run(a),
        Command::Collectives(a) => match collectives::run(a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Compare(a) => return compare::run(a),
        Command::Diff(a) => match diff::run(a) {
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Replay(a) => replay::run(a),
        Command::Genesis(a) => genesis::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Split(a) => split::run(a),
        Command::Summarize(a) => fleet::summarize(a),
        Command::Fleet(a) => return fleet::fleet(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            print_error(&error_text(&e));
            1
        }
    }
}

/// The message of `e` followed by its causes, as `tracelens: error:`
/// prints them ([`error_text`]).
pub(crate) fn chain(e: impl std::error::Error + Send + Sync + 'static) -> String {
    error_text(&anyhow::Error::new(e))
}

/// The line `tracelens: error:` prints for `e`: its message and its
/// causes, joined by `: `. A library error is worded by [`library_text`],
/// which adds what only the command line knows.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    let top = e.chain().next();
    let is_top = |lib: &dyn std::error::Error| top.is_some_and(|t| std::ptr::addr_eq(t, lib));
    if let Some(lib) = e.downcast_ref::<tracelens::Error>()
        && is_top(lib)
    {
        return library_text(lib);
    }
    if let Some(c) = e.downcast_ref::<tracelens::error::CompareInputError>()
        && is_top(c)
    {
        return c.text(&flag);
    }
    format!("{e:#}")
}

/// The flag of the library setting `field`: `rank_regex` -> `--rank-regex`.
pub(crate) fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// The flag of an output setting: `output` -> `-o`, `default_workbook` ->
/// `the default workbook` (no flag named it), others as [`flag`].
pub(crate) fn output_flag(setting: &str) -> String {
    match setting {
        "output" => "-o".to_string(),
        "default_workbook" => "the default workbook".to_string(),
        s => flag(s),
    }
}

/// Prints `tracelens: error: MSG` as exactly one line: control, invisible
/// and bidirectional characters in `msg` are escaped
/// ([`tracelens::quote::one_line`]), so no name can start a line of its own.
pub(crate) fn print_error(msg: &str) {
    print_message("error", msg);
}

/// Prints `tracelens: warning: MSG` as one line, as [`print_error`] does.
pub(crate) fn print_warning(msg: &str) {
    print_message("warning", msg);
}

/// Prints `tracelens: KIND: MSG` as one line on stderr.
pub(crate) fn print_message(kind: &str, msg: &str) {
    eprintln!("tracelens: {kind}: {}", tracelens::quote::one_line(msg));
}

/// `e` with its causes, the flags of the settings its message names
/// (`--gpu-arch`, `--capture-dir`, `--rank-regex`, …) and the remedy in
/// the command line's terms (the flag to use, the command that writes
/// summaries).
fn library_text(e: &tracelens::Error) -> String {
    use tracelens::error::{Error, FleetError};
    let mut text = match e {
        Error::GpuArch(_) => format!("--gpu-arch: {e}"),
        Error::Capture { .. } => format!("--capture-dir {e}"),
        Error::OutputPath(p) => p.text(&output_flag),
        Error::Setting(s) => s.text(&flag),
        Error::Ranks(r) => r.text(&flag),
        Error::Compare(c) => c.text(&flag),
        Error::Roofline(r) => r.text(&flag),
        Error::TooManyRows { .. } => {
            format!("{e}; write the sheets as CSV (--csv DIR) instead of xlsx")
        }
        Error::Fleet(FleetError::NotAFolder(_)) => {
            format!("{e} (write one with tracelens summarize TRACE… --out DIR)")
        }
        Error::Fleet(FleetError::NoSummaries { dir, .. }) => format!(
            "{e}; write them with tracelens summarize TRACE… --out {}",
            tracelens::quote::quoted(dir)
        ),
        _ => e.to_string(),
    };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Whether `--gpu-arch` is `none` (no spec, no detection), in any case.
pub(crate) fn is_no_arch(arg: &str) -> bool {
    arg.eq_ignore_ascii_case(tracelens::gpu_arch::NO_ARCH)
}

/// The GPU spec file `--gpu-arch` reads, as an input; none for a bundled
/// name (which wins over a file of that name).
pub(crate) fn gpu_arch_input(arg: Option<&str>) -> Option<tracelens::Input> {
    let arg = arg.filter(|a| !is_no_arch(a))?;
    let is_file = tracelens::gpu_arch::GpuArch::builtin(arg).is_none() && Path::new(arg).is_file();
    is_file.then(|| tracelens::Input::file(arg))
}

/// The single file `writer` makes of `doc`, as text (empty when it makes
/// none).
pub(crate) fn render_text(writer: &dyn Writer, doc: &Document) -> Result<String> {
    let files = writer.render(doc)?;
    let bytes: Vec<u8> = files.into_iter().flat_map(|f| f.bytes).collect();
    Ok(String::from_utf8(bytes)?)
}

/// `page` as terminal text.
pub(crate) fn terminal_text(page: Page) -> Result<String> {
    render_text(&Text { path: "-".into() }, &Document::of_page(page))
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
) -> Result<()> {
    if md_to_stdout && let Some(text) = md {
        stdout::write(text)?;
    }
    if quiet {
        return Ok(());
    }
    let mut text = summary.to_string();
    for w in written {
        text.push_str(&format!("wrote {w}\n"));
    }
    if md_to_stdout {
        eprint!("{text}");
        Ok(())
    } else {
        stdout::write(&text)
    }
}
