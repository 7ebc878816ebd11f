//! `tracelens diff`: the morphological tree diff of two traces.
//!
//! Wiring only: the library loads and merges ([`tracelens::diff_traces`]),
//! the files come from the [`TraceDiffFiles`] writer (and the Parquet writer
//! for `--parquet`), the Markdown from
//! `report::view::diff`; everything is written through one [`Staging`].

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::output_flags::{self, TableFlags};
use super::outputs::Kind;
use tracelens::analysis::commands::compare::{Side, SideHealth};
use tracelens::analysis::commands::diff::{DiffOptions, MergedKind, TraceDiff};
use tracelens::analysis::diagnosis::Status;
use tracelens::analysis::diagnosis::sheets::health_by_side;
use tracelens::api::output_paths::{DirWrites, Input};
use tracelens::report::csv::Csv;
use tracelens::report::json::record_text;
use tracelens::report::markdown::truncate_text;
use tracelens::report::parquet::Parquet;
use tracelens::report::staging::Staging;
use tracelens::report::tracediff::{self, TraceDiffFiles};
use tracelens::report::view::diff::{DEFAULT_TOP, diff_record, health_section, page};
use tracelens::report::view::findings::terminal_health;
use tracelens::report::{Document, Writer};

/// Options of `tracelens diff`.
#[derive(Args)]
pub struct DiffArgs {
    /// The baseline trace (`trace1` in the outputs).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The variant trace (`trace2` in the outputs).
    #[arg(value_name = "VARIANT")]
    pub variant: PathBuf,
    /// Write the reference's six files (merged_tree_output.txt, diff_stats.csv,
    /// diff_stats_unique_args_summary.csv, cpu_op_map*.json) into DIR
    /// and health.csv (both traces' health checks) [default:
    /// <base>_vs_<variant>_diff, unless --md, --parquet or --json is asked
    /// for].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub outputs: TableFlags,
    /// Divergence points listed in the Markdown and the terminal summary.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TOP)]
    pub top: usize,
    /// Leave top-level nodes with no GPU work out of merged_tree_output.txt.
    #[arg(long)]
    pub prune_non_gpu: bool,
    /// Write both traces' health checks and the diff's totals as one JSON
    /// document (docs/json.md) to FILE; - for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Exit with status 3 when a health check fails on either trace; the
    /// outputs are written all the same.
    #[arg(long)]
    pub strict: bool,
    /// Print nothing but errors (and the requested stdout output).
    #[arg(short, long)]
    pub quiet: bool,
}

/// The health sheet's file in the `--out` folder.
const HEALTH_CSV: &str = "health.csv";

/// `--out DIR`: the reference's six files and the health checks, under
/// fixed names.
const DIFF_DIR: Kind = Kind::Dir(DirWrites {
    replaces: &[],
    names: &[
        tracediff::FILES[0],
        tracediff::FILES[1],
        tracediff::FILES[2],
        tracediff::FILES[3],
        tracediff::FILES[4],
        tracediff::FILES[5],
        HEALTH_CSV,
    ],
});

/// Runs the subcommand; returns the exit status (3 under `--strict` when a
/// health check fails).
pub fn run(a: DiffArgs) -> Result<i32> {
    let opts = DiffOptions {
        prune_non_gpu: a.prune_non_gpu,
    };
    // Only the outputs asked for: the default folder only when none is.
    let asked = a.outputs.any() || a.json.is_some();
    let out_dir = super::outputs::or_default(a.out.as_deref(), asked, || {
        Ok(tracelens::default_out_dir(&a.base, &a.variant))
    })
    .map_err(anyhow::Error::msg)?;
    let mut outputs = vec![("out", DIFF_DIR, out_dir.as_deref())];
    outputs.extend(a.outputs.outputs());
    outputs.push(("json", Kind::Stream, a.json.as_deref()));
    let inputs = [Input::file(&a.base), Input::file(&a.variant)];
    super::outputs::check(&inputs, &outputs, Some("--json")).map_err(anyhow::Error::msg)?;
    let (d, checks) =
        tracelens::diff_traces_checked(&a.base, &a.variant, opts).map_err(anyhow::Error::new)?;
    let tag = |p: &PathBuf| tracelens::default_tag(p, tracelens::InputKind::Trace);
    let (base_tag, variant_tag) = (tag(&a.base), tag(&a.variant));
    let (base_path, variant_path) = (
        a.base.display().to_string(),
        a.variant.display().to_string(),
    );
    let health_sheet = health_by_side(&[
        ("baseline", &base_path, &checks[0]),
        ("variant", &variant_path, &checks[1]),
    ]);
    let sides = [
        (
            side(&base_tag, &base_path),
            SideHealth::of_trace(checks[0].clone()),
        ),
        (
            side(&variant_tag, &variant_path),
            SideHealth::of_trace(checks[1].clone()),
        ),
    ];
    let mut staging = Staging::new();
    let mut written = Vec::new();
    if let Some(dir) = &out_dir {
        staging
            .create_dir_all(dir)
            .with_context(|| format!("cannot create {}", tracelens::quote::quoted(dir)))?;
        let doc = Document {
            trace_diff: Some(&d),
            ..Document::default()
        };
        let n = TraceDiffFiles { dir: dir.clone() }.stage_files(&doc, dir, &mut staging)?;
        let health = Document::of_tables(std::slice::from_ref(&health_sheet));
        let m = Csv { dir: dir.clone() }.stage_files(&health, dir, &mut staging)?;
        written.push(format!("{}/ ({} files)", dir.display(), n + m));
    }
    if let Some(dir) = &a.outputs.parquet {
        // The two tables the CSVs hold, left out as they are when empty,
        // and the health checks.
        let tables = Document {
            tables: d
                .stats
                .iter()
                .chain(&d.summary)
                .chain(std::iter::once(&health_sheet))
                .collect(),
            ..Document::default()
        };
        let pq = Parquet { dir: dir.clone() };
        let line = super::stage_sheet_dir(&mut staging, &pq, dir, "parquet", "Parquet", &tables)?;
        written.push(line);
    }
    let md = super::stage_markdown(&mut staging, a.outputs.md.as_ref(), &mut written, || {
        let mut p = page(&d, &base_tag, &variant_tag, a.top);
        health_section(&mut p, &sides);
        p
    })?;
    let json = match &a.json {
        Some(path) => {
            let text = record_text(&diff_record(&d, &sides));
            if path.as_os_str() != "-" {
                staging.put(path, format!("{text}\n").as_bytes())?;
                written.push(path.display().to_string());
            }
            Some(text)
        }
        None => None,
    };
    super::outputs::commit(staging)?;
    if let Some(text) = json.filter(|_| output_flags::is_stdout(a.json.as_deref())) {
        super::stdout::write_line(&text)?;
    }
    let md_to_stdout = a.outputs.md_to_stdout();
    let mut text = summary(&d, a.top);
    for (s, h) in &sides {
        for l in terminal_health(&format!("Trace health of {}", s.name), &h.checks) {
            text.push_str(&l);
            text.push('\n');
        }
    }
    super::print_results(
        a.quiet,
        md_to_stdout || output_flags::is_stdout(a.json.as_deref()),
        md.as_deref().filter(|_| md_to_stdout),
        &text,
        &written,
    )?;
    let failed = sides.iter().any(|(_, h)| h.verdict() == Status::Fail);
    Ok(if a.strict && failed {
        super::print_warning(&format!(
            "--strict: a health check failed (exit {})",
            super::report::STRICT_FAIL_EXIT
        ));
        super::report::STRICT_FAIL_EXIT
    } else {
        0
    })
}

/// A side of the diff as the JSON names it.
fn side(tag: &str, path: &str) -> Side {
    Side {
        name: tag.to_string(),
        input: path.to_string(),
    }
}

/// A few lines for the terminal: the merge counts and the top points.
fn summary(d: &TraceDiff, top: usize) -> String {
    let count = |k: MergedKind| d.merged.nodes.iter().filter(|n| n.kind == k).count();
    let mut s = format!(
        "merged tree: {} nodes ({} matched, {} baseline only, {} variant only)\n",
        d.merged.nodes.len(),
        count(MergedKind::Combined),
        count(MergedKind::Base),
        count(MergedKind::Variant)
    );
    let t = &d.totals;
    s.push_str(&format!(
        "GPU time under {} divergence points: {:.3} ms -> {:.3} ms (delta {:+.3} ms)\n",
        t.points,
        t.base_us / 1e3,
        t.variant_us / 1e3,
        t.delta_us() / 1e3
    ));
    for (k, p) in d.points.iter().take(top.min(5)).enumerate() {
        let name = truncate_text(&p.name, 70);
        s.push_str(&format!(
            "  {:>2}. {:+10.3} ms  {} (x{})\n",
            k + 1,
            p.delta_us() / 1e3,
            name,
            p.occurrences
        ));
    }
    s
}
