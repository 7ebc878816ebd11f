//! `tracelens collectives`: the multi-rank collective report. The library
//! finds the rank traces in a directory and analyses them
//! ([`tracelens::collectives`]); this writes the reference's sheets (Excel,
//! CSV, Parquet) and a Markdown summary.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;

use super::output_flags::{self, SheetFlags};
use tracelens::analysis::commands::collectives::CollectiveReport;
use tracelens::analysis::diagnosis::{Status, sheets};
use tracelens::api::LoadProgress;
use tracelens::api::output_paths::{self, Input};
use tracelens::report::Document;
use tracelens::report::json::record_text;
use tracelens::report::staging::Staging;
use tracelens::report::view::collectives as view;
use tracelens::table::Table;
use tracelens::table::agg::Agg;
use tracelens::{CollectivesOptions, CollectivesRun};

/// Options of `tracelens collectives`.
#[derive(Args)]
pub struct CollectivesArgs {
    /// Directory holding one trace per rank (.json or .json.gz, any names).
    #[arg(long, value_name = "DIR")]
    pub trace_dir: PathBuf,
    /// Number of ranks of the job; every rank 0..N-1 needs a trace
    /// [default: the traces' distributedInfo.world_size, else the number of
    /// rank traces found].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub world_size: Option<u32>,
    /// Also look for traces in the subdirectories of DIR.
    #[arg(long)]
    pub recursive: bool,
    /// Take each file's rank from its name with this regular expression (the
    /// group named `rank`, else the first group), instead of the trace's
    /// distributedInfo.rank.
    #[arg(long, value_name = "RX")]
    pub rank_regex: Option<String>,
    /// GPUs per node, for the node_id / node_span columns [default: the
    /// number of deviceProperties entries in rank 0's trace].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus_per_node: Option<u32>,
    /// The aggregations of nccl_summary_implicit_sync and
    /// nccl_summary_all2allv.
    #[arg(long, num_args = 1.., value_name = "AGG", default_values = ["mean", "median", "min", "max"],
          value_parser = PossibleValuesParser::new(Agg::ALL.map(Agg::name)))]
    pub agg_metrics: Vec<String>,
    #[command(flatten)]
    pub outputs: SheetFlags,
    /// Write the job's health check and ranked findings as one JSON
    /// document (docs/json.md) to FILE; - for stdout.
    #[arg(long, value_name = "FILE", help_heading = "Diagnosis")]
    pub json: Option<PathBuf>,
    /// Exit with status 3 when the health check fails (the collectives
    /// cannot be matched across ranks); the outputs are written all the
    /// same.
    #[arg(long, help_heading = "Diagnosis")]
    pub strict: bool,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

fn warn(msg: &str) {
    super::print_warning(msg);
}

/// What `tracelens collectives` reads: the rank traces in `--trace-dir`.
pub(super) fn collectives_inputs(a: &CollectivesArgs) -> Vec<Input> {
    vec![Input::dir(&a.trace_dir, output_paths::TRACE_FILES)]
}

/// Finds, loads and analyses the rank traces, with a progress line on a
/// terminal.
pub(super) fn analyze(a: &CollectivesArgs) -> Result<CollectivesRun> {
    let opts = CollectivesOptions {
        trace_dir: a.trace_dir.clone(),
        world_size: a.world_size.map(|w| w as usize),
        recursive: a.recursive,
        rank_regex: a.rank_regex.clone(),
        gpus_per_node: a.gpus_per_node.map(|g| g as usize),
        agg_metrics: Some(a.agg_metrics.iter().filter_map(|m| Agg::parse(m)).collect()),
    };
    let bar = super::progress::counter(super::progress::display_wanted(a.quiet), "loading traces");
    let progress = |n: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(n as u64);
        }
    };
    let progress: LoadProgress = &progress;
    let run = tracelens::collectives(&opts, bar.is_some().then_some(progress));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(run?)
}

/// The sheets a run writes: the reference's, then the job's `health` and
/// `findings` (their commands name the rank traces by path; `title` names
/// the trace folder).
pub(super) fn all_sheets(report: &CollectiveReport, title: &str) -> Vec<Table> {
    let mut tables = report.sheets.clone();
    tables.push(sheets::health(&report.diagnosis));
    tables.push(sheets::findings(&report.diagnosis, title));
    tables
}

/// Runs the subcommand; returns the exit status (0, or 3 under
/// `--strict` when the health check fails).
pub fn run(a: CollectivesArgs) -> Result<i32> {
    let xlsx_path = a
        .outputs
        .workbook(a.json.is_some(), || {
            Ok(a.trace_dir.join("nccl_analysis_report.xlsx"))
        })
        .map_err(anyhow::Error::msg)?;
    let mut outs = a.outputs.outputs(xlsx_path.as_deref());
    outs.push(("json", super::outputs::Kind::Stream, a.json.as_deref()));
    super::outputs::check(&collectives_inputs(&a), &outs, Some("--json"))
        .map_err(anyhow::Error::msg)?;
    let CollectivesRun { report, warnings } = analyze(&a)?;
    for w in &warnings {
        warn(&w.text(&super::flag));
    }
    if report.kernels == 0 {
        warn(&format!(
            "no collective kernels (NCCL, RCCL, custom all-reduce) in any of the {} traces: the summaries are empty",
            report.ranks
        ));
    }
    let title = a.trace_dir.display().to_string();
    let md_to_stdout = a.outputs.md_to_stdout();
    // Every file of the run appears together, or none does.
    let mut staging = Staging::new();
    let tables = all_sheets(&report, &title);
    let sheets = Document::of_tables(&tables);
    let mut written = super::stage_sheets(
        &mut staging,
        a.outputs.dirs(),
        &sheets,
        xlsx_path.as_deref(),
        &sheets,
    )?;
    let md_text = super::stage_markdown(&mut staging, a.outputs.md(), &mut written, || {
        view::page(&report, &title)
    })?;
    let json_text = match &a.json {
        Some(path) => {
            let text = record_text(&view::collectives_record(&report, &title));
            if path.as_os_str() != "-" {
                staging.put(path, format!("{text}\n").as_bytes())?;
                written.push(path.display().to_string());
            }
            Some(text)
        }
        None => None,
    };
    super::outputs::commit(staging)?;
    let json_to_stdout = output_flags::is_stdout(a.json.as_deref());
    if let Some(text) = json_text.filter(|_| json_to_stdout) {
        super::stdout::write_line(&text)?;
    }
    super::print_results(
        a.quiet,
        md_to_stdout || json_to_stdout,
        md_text.as_deref(),
        &super::terminal_text(view::terminal(&report))?,
        &written,
    )?;
    let failed = report.diagnosis.verdict() == Status::Fail;
    if a.strict && failed {
        warn("--strict: a health check failed (exit 3)");
        return Ok(super::report::STRICT_FAIL_EXIT);
    }
    Ok(0)
}
