//! `tracelens critical-path`: the critical path of a profiler step, as
//! sheets (CSV), JSON or a summary on the terminal.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;

use super::outputs::{CSV_DIR, Kind};
use tracelens::analysis::pytorch::critical_path::Span;
use tracelens::api::output_paths::Input;
use tracelens::report::Document;
use tracelens::report::staging::Staging;

use super::{SheetDirs, stage_sheets};

/// Options of `tracelens critical-path`.
#[derive(Args)]
pub(crate) struct CriticalPathArgs {
    /// Trace file: .json, .json.gz or .zip; - for stdin.
    pub(crate) trace: PathBuf,
    /// The ProfilerStep#N annotation to analyse [default: the longest
    /// step, or the whole trace when it has no step].
    #[arg(long, value_name = "N", conflicts_with = "window")]
    step: Option<u64>,
    /// The window to analyse, from A to B (µs, trace time as in the
    /// trace's `ts`).
    #[arg(long, value_name = "A:B")]
    window: Option<String>,
    /// Write critical_path_summary.csv and critical_path.csv into DIR.
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Write the summary and the path as JSON to FILE (- for stdout).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// `--window A:B` as two times (also `merge --window`).
pub(super) fn parse_window(w: &str) -> Result<(f64, f64)> {
    let bad = || anyhow!("--window: expected A:B (µs, A <= B), got {w:?}");
    let (a, b) = w.split_once(':').ok_or_else(bad)?;
    let (a, b): (f64, f64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a.is_finite() && b.is_finite() && a <= b {
        Ok((a, b))
    } else {
        Err(bad())
    }
}

/// The part of the trace the options ask for.
pub(crate) fn span(a: &CriticalPathArgs) -> Result<Span> {
    Ok(match (&a.window, a.step) {
        (Some(w), _) => {
            let (x, y) = parse_window(w)?;
            Span::Window(x, y)
        }
        (None, Some(n)) => Span::Step(n),
        (None, None) => Span::Auto,
    })
}

/// The summary as terminal text.
pub(crate) fn summary_text(run: &tracelens::CriticalPathRun) -> String {
    let cp = &run.path;
    let total: f64 = cp.edges.iter().map(|e| e.duration_us).sum();
    let mut text = format!(
        "critical path of {}: {} edges, {total} µs ({} graph nodes)\n",
        cp.label,
        cp.edges.len(),
        cp.graph_nodes
    );
    for (b, us, pct) in cp.summary() {
        let name = if b.as_str().is_empty() {
            "(dependency)"
        } else {
            b.as_str()
        };
        text.push_str(&format!("  {name:<28} {us:>12.0} µs {pct:>7.2} %\n"));
    }
    text
}

/// Runs the subcommand.
pub(crate) fn run(a: CriticalPathArgs) -> Result<()> {
    let span = span(&a)?;
    // Outputs are checked against the trace and each other before any work.
    let outputs = [
        ("csv", CSV_DIR, a.csv.as_deref()),
        ("json", Kind::Stream, a.json.as_deref()),
    ];
    super::outputs::check(&[Input::file(&a.trace)], &outputs, Some("--json"))
        .map_err(anyhow::Error::msg)?;
    let run = tracelens::critical_path(&a.trace, span)?;
    let mut staging = Staging::new();
    let doc = Document::of_tables(&run.sheets);
    let dirs = SheetDirs {
        csv: a.csv.as_deref(),
        parquet: None,
    };
    let mut written = stage_sheets(&mut staging, dirs, &doc, None, &doc)?;
    let json = match &a.json {
        Some(_) => tracelens::report::json::record_text(&run.record()) + "\n",
        None => String::new(),
    };
    let json_to_stdout = a.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if let Some(p) = a.json.as_ref().filter(|_| !json_to_stdout) {
        staging.put(p, json.as_bytes())?;
        written.push(p.display().to_string());
    }
    super::outputs::commit(staging)?;
    if json_to_stdout {
        return super::stdout::write(&json);
    }
    let mut text = summary_text(&run);
    for w in written {
        text.push_str(&format!("wrote {w}\n"));
    }
    super::stdout::write(&text)
}
