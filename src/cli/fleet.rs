//! `tracelens summarize` (the map: traces → per-trace Parquet summaries,
//! several traces at once with bounded memory) and `tracelens fleet` (the
//! reduce: summaries → the fleet report, its heatmaps and the CI gate).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, anyhow};
use clap::Args;
use rayon::prelude::*;

use super::outputs::{Kind, Output, PARQUET_DIR};
use tracelens::analysis::commands::fleet::CompareOptions;
use tracelens::api::default_paths::summary_name;
use tracelens::api::output_paths::{self, DirWrites, Input};
use tracelens::quote::quoted;
use tracelens::report::markdown::Markdown;
use tracelens::report::parquet::Parquet;
use tracelens::report::staging::Staging;
use tracelens::report::svg::Svg;
use tracelens::report::view::fleet as view;
use tracelens::report::{Document, Writer, csv::Csv};
use tracelens::{AnalyzeOptions, FleetOptions, FleetReport, ReportOptions};

/// Options of `tracelens summarize`.
#[derive(Args)]
pub struct SummarizeArgs {
    /// Traces, or folders of traces (every .json / .json.gz below them).
    #[arg(required = true, value_name = "TRACE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// Folder that gets one summary folder per trace (named after the
    /// trace file), each with trace_info, steps, collectives and the report
    /// sheets as Parquet.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Traces summarised at once [default: the number of cores]. Each holds
    /// one loaded trace in memory, so this bounds the memory.
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// GPU spec for the roofline columns of the report sheets: a bundled
    /// name (MI300X, H100, …) or a JSON file. Fleet picks no spec from the
    /// traces (every trace is summarised alike); `none` is the same as
    /// leaving it out.
    #[arg(long, value_name = "NAME|FILE")]
    pub gpu_arch: Option<String>,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Options of `tracelens fleet`.
#[derive(Args)]
pub struct FleetArgs {
    /// Folder of summaries (`tracelens summarize --out DIR`).
    #[arg(value_name = "SUMMARIES")]
    pub summaries: PathBuf,
    /// Folder to write the fleet report into: one <sheet>.csv per sheet,
    /// heatmap_busy/idle/exposed_comm.svg and fleet.md.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write every sheet as <sheet>.parquet into the report folder.
    #[arg(long)]
    pub parquet: bool,
    /// Compare with a baseline fleet's summaries (before/after a change):
    /// per metric the change of the mean step figures and its bootstrap
    /// interval over ranks and steps.
    #[arg(long, value_name = "SUMMARIES")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: changes within ±PCT percent are no change, and the
    /// command exits with code 1 when the step time is slower by more than
    /// PCT with 95% confidence, or likely so but not yet shown (the CI
    /// gate) [default threshold without the gate: 5].
    #[arg(long, value_name = "PCT", requires = "baseline")]
    pub fail_above: Option<f64>,
    /// Bootstrap replicates of the comparison.
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(100..))]
    pub bootstrap: u32,
    /// GPUs per node, for the collectives' node columns [default: the
    /// device count of rank 0's trace].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub gpus_per_node: Option<u32>,
    /// Also write the traces' health verdicts and the findings across
    /// them as one JSON document (docs/json.md) to FILE; - for stdout.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<PathBuf>,
    /// Print nothing but warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The traces named by the inputs (folders expanded), each with its
/// summary folder name ([`summary_name`], one plain name, so the folder
/// stays in `--out`); two traces with one name are an error.
fn traces_of(inputs: &[PathBuf]) -> Result<Vec<(PathBuf, OsString)>> {
    let mut traces = Vec::new();
    for i in inputs {
        if i.is_dir() {
            traces.extend(tracelens::trace_files(i, true)?);
        } else if i.is_file() {
            traces.push(i.clone());
        } else {
            return Err(anyhow!("{}: no such file or folder", quoted(i)));
        }
    }
    let mut seen: HashMap<OsString, &Path> = HashMap::new();
    let mut out = Vec::new();
    for t in &traces {
        let name = summary_name(t);
        if let Some(other) = seen.insert(name.clone(), t) {
            return Err(anyhow!(
                "{} and {} would both be summarised as {}: give traces with distinct file names",
                quoted(other),
                quoted(t),
                quoted(&name)
            ));
        }
        out.push((t.clone(), name));
    }
    Ok(out)
}

/// Refuses, before any work, a summary folder that would remove or
/// overwrite an input (a trace, a folder of traces, the GPU spec file).
fn check_summary_paths(a: &SummarizeArgs, traces: &[(PathBuf, OsString)]) -> Result<()> {
    let mut inputs: Vec<Input> = a
        .inputs
        .iter()
        .map(|i| Input::dir(i, output_paths::TRACE_FILES))
        .collect();
    inputs.extend(traces.iter().map(|(t, _)| Input::file(t)));
    inputs.extend(super::gpu_arch_input(a.gpu_arch.as_deref()));
    let dirs: Vec<PathBuf> = traces.iter().map(|(_, name)| a.out.join(name)).collect();
    let outputs: Vec<Output> = dirs
        .iter()
        .map(|d| ("out", PARQUET_DIR, Some(d.as_path())))
        .collect();
    super::outputs::check(&inputs, &outputs, None).map_err(anyhow::Error::msg)
}

/// Summarises one trace and writes its folder (all files or none).
fn summarize_one(trace: &Path, dir: &Path, opts: &AnalyzeOptions) -> Result<()> {
    let tables = tracelens::summarize(trace, opts)?;
    let files = Parquet { dir: dir.into() }.render(&Document::of_tables(&tables))?;
    let mut staging = Staging::new();
    staging
        .put_all(dir, &files)
        .with_context(|| format!("cannot write {}", quoted(dir)))?;
    staging.replace_all(dir, output_paths::PARQUET_FILES[0]);
    super::outputs::commit(staging)?;
    Ok(())
}

/// Runs `tracelens summarize`.
pub fn summarize(a: SummarizeArgs) -> Result<()> {
    // The summaries folder itself must be a folder (or absent); its
    // per-trace folders are checked against the inputs below.
    let out = [("out", PARQUET_DIR, Some(a.out.as_path()))];
    super::outputs::check_kinds(&out).map_err(anyhow::Error::msg)?;
    let traces = traces_of(&a.inputs)?;
    check_summary_paths(&a, &traces)?;
    let arch = a
        .gpu_arch
        .as_deref()
        .filter(|n| !super::is_no_arch(n))
        .map(tracelens::resolve_gpu_arch)
        .transpose()?;
    let report = ReportOptions {
        arch,
        ..ReportOptions::default()
    };
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", quoted(&a.out)))?;
    let jobs = a
        .jobs
        .map_or_else(rayon::current_num_threads, |j| j as usize);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start the worker threads")?;
    let bar = super::progress::counter(
        super::progress::display_wanted(a.quiet),
        "summarizing traces",
    );
    if let Some(b) = &bar {
        b.set_length(traces.len() as u64);
    }
    let done = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let start = std::time::Instant::now();
    pool.install(|| {
        traces.par_iter().for_each(|(trace, name)| {
            let opts = AnalyzeOptions {
                report: report.clone(),
                ..AnalyzeOptions::default()
            };
            if let Err(e) = summarize_one(trace, &a.out.join(name), &opts) {
                let say = || super::print_error(&super::error_text(&e));
                match &bar {
                    Some(b) => b.suspend(say),
                    None => say(),
                }
                failed.fetch_add(1, Ordering::Relaxed);
            }
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(b) = &bar {
                b.set_position(n as u64);
            }
        })
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let failed = failed.into_inner();
    if failed > 0 {
        return Err(anyhow!(
            "{failed} of {} traces could not be summarised (above); the others were written to {}",
            traces.len(),
            a.out.display()
        ));
    }
    if !a.quiet {
        eprintln!(
            "wrote {} summaries to {}/ in {:.1} s",
            traces.len(),
            a.out.display(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Runs `tracelens fleet`; returns the exit code (0 ok; 1 the gate failed;
/// 2 an error).
pub fn fleet(a: FleetArgs) -> i32 {
    match fleet_inner(&a) {
        Ok(code) => code,
        Err(e) => {
            super::print_error(&super::error_text(&e));
            2
        }
    }
}

fn fleet_inner(a: &FleetArgs) -> Result<i32> {
    if let Some(p) = a.fail_above {
        tracelens::check_percentage("fail_above", p).map_err(tracelens::Error::from)?;
    }
    check_fleet_paths(a)?;
    let opts = FleetOptions {
        summaries: a.summaries.clone(),
        baseline: a.baseline.clone(),
        compare: CompareOptions {
            threshold_pct: a
                .fail_above
                .unwrap_or(CompareOptions::default().threshold_pct),
            replicates: a.bootstrap as usize,
            ..CompareOptions::default()
        },
        gpus_per_node: a.gpus_per_node.map(|g| g as usize),
    };
    let report = tracelens::fleet(&opts)?;
    let json = a.json.as_ref().map(|_| {
        let title = a.summaries.display().to_string();
        tracelens::report::json::record_text(&view::record(&report, &title))
    });
    let written = write_report(a, &report, json.as_deref())?;
    if let Some(text) = json.filter(|_| super::output_flags::is_stdout(a.json.as_deref())) {
        super::stdout::write_line(&text)?;
    }
    if !a.quiet {
        eprint!("{}", super::terminal_text(view::terminal(&report))?);
        eprintln!("wrote {written}");
    }
    let failed = match (a.fail_above, &report.changes) {
        (Some(t), Some(c)) => tracelens::analysis::commands::fleet::gate_fails(c, t),
        _ => false,
    };
    if let (Some(_), Some(changes), false) = (a.fail_above, &report.changes, a.quiet) {
        let span = changes
            .iter()
            .find(|c| c.metric == tracelens::analysis::commands::fleet::StepMetric::GpuSpan);
        eprintln!(
            "tracelens: verdict: step time {} (exit {})",
            span.map_or("not compared", |c| c.verdict.name()),
            i32::from(failed)
        );
    }
    Ok(i32::from(failed))
}

/// What the report folder's writer does: its sheets (`*.csv`,
/// `*.parquet`; stale Parquet sheets go even without `--parquet`) and
/// heatmaps (`*.svg`) are replaced as a unit; the page is `fleet.md`.
const REPORT_WRITES: DirWrites = DirWrites {
    replaces: &["csv", "parquet", "svg"],
    names: &[FLEET_PAGE],
};

/// The report folder's Markdown page.
const FLEET_PAGE: &str = "fleet.md";

/// Refuses, before any work, a report folder that would remove or
/// overwrite the summaries read (`SUMMARIES`, `--baseline`, and the
/// `*.parquet` tables of each summary folder in them).
fn check_fleet_paths(a: &FleetArgs) -> Result<()> {
    let mut inputs = Vec::new();
    for d in std::iter::once(&a.summaries).chain(&a.baseline) {
        inputs.push(Input::file(d));
        // A folder without summaries fails when it is read, naming it.
        let found = tracelens::find_summaries(d).unwrap_or_default();
        inputs.extend(
            found
                .into_iter()
                .map(|s| Input::dir(s, output_paths::PARQUET_FILES)),
        );
    }
    let outputs = [
        ("out", Kind::Dir(REPORT_WRITES), Some(a.out.as_path())),
        ("json", Kind::Stream, a.json.as_deref()),
    ];
    super::outputs::check(&inputs, &outputs, Some("--json")).map_err(anyhow::Error::msg)
}

/// Writes the report folder: sheets (CSV, Parquet when asked), heatmaps
/// and the Markdown page, all or nothing.
fn write_report(a: &FleetArgs, report: &FleetReport, json: Option<&str>) -> Result<String> {
    let mut staging = Staging::new();
    let doc = Document {
        tables: report.tables(),
        ..Document::default()
    };
    let dir = &a.out;
    let mut files = Csv { dir: dir.clone() }.render(&doc)?;
    if a.parquet {
        files.extend(Parquet { dir: dir.clone() }.render(&doc)?);
    }
    let maps = Document {
        heatmaps: view::heatmaps(report),
        ..Document::default()
    };
    files.extend(Svg { dir: dir.clone() }.render(&maps)?);
    let title = a.summaries.display().to_string();
    let page = Markdown {
        path: dir.join(FLEET_PAGE),
    };
    files.extend(page.render(&Document::of_page(view::page(report, &title)))?);
    staging
        .put_all(dir, &files)
        .with_context(|| format!("cannot write {}", quoted(dir)))?;
    for ext in REPORT_WRITES.replaces {
        staging.replace_all(dir, ext);
    }
    let mut also = String::new();
    if let (Some(path), Some(text)) = (a.json.as_ref(), json)
        && path.as_os_str() != "-"
    {
        staging.put(path, format!("{text}\n").as_bytes())?;
        also = format!(", {}", path.display());
    }
    super::outputs::commit(staging)?;
    Ok(format!(
        "{}/ ({} sheets, {} heatmaps, fleet.md){also}",
        dir.display(),
        doc.tables.len(),
        maps.heatmaps.len()
    ))
}
