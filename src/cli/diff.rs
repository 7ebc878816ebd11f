//! `tracelens diff`: the morphological tree diff of two traces.
//!
//! Wiring only: the library loads and merges ([`tracelens::diff_traces`]),
//! the files come from the [`TraceDiffFiles`] writer (and the Parquet writer
//! for `--parquet`), the Markdown from
//! `report::view::diff`; everything is written through one [`Staging`].

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::output_flags::TableFlags;
use super::outputs::Kind;
use tracelens::analysis::commands::diff::{DiffOptions, MergedKind, TraceDiff};
use tracelens::api::output_paths::{DirWrites, Input};
use tracelens::report::markdown::truncate_text;
use tracelens::report::parquet::Parquet;
use tracelens::report::staging::Staging;
use tracelens::report::tracediff::{self, TraceDiffFiles};
use tracelens::report::view::diff::{DEFAULT_TOP, page};
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
    /// [default: <base>_vs_<variant>_diff, unless --md or --parquet is
    /// asked for].
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
    /// Print nothing but errors (and the requested stdout output).
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--out DIR`: the reference's six files, under fixed names.
const DIFF_DIR: Kind = Kind::Dir(DirWrites {
    replaces: &[],
    names: &tracediff::FILES,
});

/// Runs the subcommand.
pub fn run(a: DiffArgs) -> Result<()> {
    let opts = DiffOptions {
        prune_non_gpu: a.prune_non_gpu,
    };
    // Only the outputs asked for: the default folder only when none is.
    let out_dir = super::outputs::or_default(a.out.as_deref(), a.outputs.any(), || {
        Ok(tracelens::default_out_dir(&a.base, &a.variant))
    })
    .map_err(anyhow::Error::msg)?;
    let mut outputs = vec![("out", DIFF_DIR, out_dir.as_deref())];
    outputs.extend(a.outputs.outputs());
    let inputs = [Input::file(&a.base), Input::file(&a.variant)];
    super::outputs::check(&inputs, &outputs, None).map_err(anyhow::Error::msg)?;
    let d = tracelens::diff_traces(&a.base, &a.variant, opts).map_err(anyhow::Error::new)?;
    let tag = |p: &PathBuf| tracelens::default_tag(p, tracelens::InputKind::Trace);
    let (base_tag, variant_tag) = (tag(&a.base), tag(&a.variant));
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
        written.push(format!("{}/ ({n} files)", dir.display()));
    }
    if let Some(dir) = &a.outputs.parquet {
        // The two tables the CSVs hold, left out as they are when empty.
        let tables = Document {
            tables: d.stats.iter().chain(&d.summary).collect(),
            ..Document::default()
        };
        let pq = Parquet { dir: dir.clone() };
        let line = super::stage_sheet_dir(&mut staging, &pq, dir, "parquet", "Parquet", &tables)?;
        written.push(line);
    }
    let md = super::stage_markdown(&mut staging, a.outputs.md.as_ref(), &mut written, || {
        page(&d, &base_tag, &variant_tag, a.top)
    })?;
    super::outputs::commit(staging)?;
    let md_to_stdout = a.outputs.md_to_stdout();
    super::print_results(
        a.quiet,
        md_to_stdout,
        md.as_deref(),
        &summary(&d, a.top),
        &written,
    )
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
