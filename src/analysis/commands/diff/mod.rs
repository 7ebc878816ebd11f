//! TraceDiff: the morphological diff of two call trees.
//!
//! The two trees are merged node by node (`merge`); every GPU event is
//! then attributed to the lowest common ancestor (LCA) in the merged tree
//! that explains it (`stats`), op names paired under one LCA get a
//! common name ([`opmap`]), and the places where the GPU time moved are
//! ranked ([`points`]). The outputs are the reference's six files plus the
//! ranked points.

mod merge;
mod names;
pub mod opmap;
pub mod points;
mod side;
mod stats;
mod text;

use crate::names::diff::col;
use crate::table::Table;
use crate::trace::tree::Tree;
use crate::trace::{EventId, Trace};
use opmap::{CommonMap, OpKernels};
pub use points::{DivergencePoint, PointTotals};
use side::Side;
pub use side::Which;

/// Why two traces could not be diffed.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A trace has no cpu_op to start the merge from.
    #[error("the {} trace has no CPU ops (cpu_op events) to align", .0.role())]
    NoCpuOps(Which),
    /// The merged tree nests deeper than the limit.
    #[error("the call trees nest deeper than {0} levels")]
    TooDeep(usize),
}

impl Which {
    /// `baseline` or `variant`, for messages.
    pub fn role(self) -> &'static str {
        match self {
            Which::Base => "baseline",
            Which::Variant => "variant",
        }
    }
}

/// How a merged node came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergedKind {
    /// Aligned nodes of both traces.
    Combined,
    /// A node of the baseline only.
    Base,
    /// A node of the variant only.
    Variant,
}

/// One node of the merged tree.
#[derive(Debug, Clone)]
pub struct MergedNode {
    /// The baseline's event, if any.
    pub uid1: Option<EventId>,
    /// The variant's event, if any.
    pub uid2: Option<EventId>,
    /// Combined or one-sided.
    pub kind: MergedKind,
    /// Children, by merged id, in alignment order.
    pub children: Vec<u32>,
}

impl MergedNode {
    /// The event of side `w`, if the node has one.
    pub fn uid(&self, w: Which) -> Option<EventId> {
        w.pick(self.uid1, self.uid2)
    }

    /// The side of a one-sided node; `None` for a combined one.
    pub fn only_side(&self) -> Option<Which> {
        match self.kind {
            MergedKind::Combined => None,
            MergedKind::Base => Some(Which::Base),
            MergedKind::Variant => Some(Which::Variant),
        }
    }
}

/// Pushes `v` unless present (pandas `unique`: distinct, first seen first).
fn push_unique(list: &mut Vec<String>, v: String) {
    if !list.contains(&v) {
        list.push(v);
    }
}

/// The merged tree: nodes by merged id (pre-order), and the roots.
#[derive(Debug, Clone, Default)]
pub struct MergedTree {
    /// Every node; a node's index is its merged id.
    pub nodes: Vec<MergedNode>,
    /// Root ids, one per pair of top-level roots.
    pub roots: Vec<u32>,
}

/// Options of [`diff`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffOptions {
    /// Leave roots on no GPU path out of the tree text.
    pub prune_non_gpu: bool,
}

/// Everything `tracelens diff` computes.
#[derive(Debug, Clone)]
pub struct TraceDiff {
    /// The merged tree.
    pub merged: MergedTree,
    /// `merged_tree_output.txt`.
    pub tree_text: String,
    /// `diff_stats` (`None` when no GPU event sits under a cpu_op).
    pub stats: Option<Table>,
    /// `diff_stats_unique_args_summary` (`None` likewise).
    pub summary: Option<Table>,
    /// `cpu_op_map_trace1.json`, `cpu_op_map_trace2.json` contents.
    pub op_kernels: [OpKernels; 2],
    /// `cpu_op_map.json` contents.
    pub common: CommonMap,
    /// True when both sides gave the same rows: the tables then hold the
    /// baseline's rows only, without `source`.
    pub identical: bool,
    /// Where the GPU time moved, largest absolute change first.
    pub points: Vec<DivergencePoint>,
    /// Totals over all points.
    pub totals: PointTotals,
}

/// Where the GPU time moved: the ranked divergence points and their
/// totals (what `compare` shows of a diff).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WhereMoved {
    /// Points, largest |Δ| first.
    pub points: Vec<DivergencePoint>,
    /// Totals over all points.
    pub totals: PointTotals,
}

impl From<TraceDiff> for WhereMoved {
    fn from(d: TraceDiff) -> WhereMoved {
        WhereMoved {
            points: d.points,
            totals: d.totals,
        }
    }
}

/// Stack for the merge: it recurses once per tree level (up to
/// [`merge::MAX_DEPTH`]).
const MERGE_STACK: usize = 256 << 20;

/// Diffs `base` against `variant`, each with its call tree (built without
/// python frames, as the reference does by default).
pub fn diff(
    base: (&Trace, &Tree),
    variant: (&Trace, &Tree),
    opts: DiffOptions,
) -> Result<TraceDiff, DiffError> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("tracediff".into())
            .stack_size(MERGE_STACK)
            .spawn_scoped(s, || diff_here(base, variant, opts))
            .map_or_else(
                |_| diff_here(base, variant, opts),
                |h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            )
    })
}

fn diff_here(
    base: (&Trace, &Tree),
    variant: (&Trace, &Tree),
    opts: DiffOptions,
) -> Result<TraceDiff, DiffError> {
    let mut s1 = Side::new(base.0, base.1);
    let mut s2 = Side::new(variant.0, variant.1);
    let merged = merge::Merger::new(&mut s1, &mut s2).run()?;
    // The tree text is independent of the tables: drawn on the other core.
    let (tree_text, rows) = std::thread::scope(|s| {
        let text = || text::merged_tree_text(&merged, &s1, &s2, opts.prune_non_gpu);
        let drawn = std::thread::Builder::new()
            .name("tracediff-text".into())
            .stack_size(MERGE_STACK)
            .spawn_scoped(s, text);
        let rows = stats::collect_rows(&merged, &s1, &s2);
        let tree_text = match drawn {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            Err(_) => text::merged_tree_text(&merged, &s1, &s2, opts.prune_non_gpu),
        };
        (tree_text, rows)
    });
    let (points, totals) = points::rank(&rows, &merged, &s1, &s2);
    if rows.is_empty() {
        return Ok(TraceDiff {
            merged,
            tree_text,
            stats: None,
            summary: None,
            op_kernels: Default::default(),
            common: CommonMap::new(),
            identical: true,
            points,
            totals,
        });
    }
    let mut table = stats::stats_table(&rows, &s1, &s2);
    let identical = stats::sides_identical(&table);
    let mut summary = stats::summary_table(&table);
    let op_kernels = [
        opmap::op_kernels(&summary, Which::Base),
        opmap::op_kernels(&summary, Which::Variant),
    ];
    let renames = opmap::rename_map(&table);
    rename_summary(&mut summary, &renames);
    let common = opmap::common_map(&summary);
    if identical {
        keep_baseline_rows(&mut table);
        keep_baseline_rows(&mut summary);
    }
    Ok(TraceDiff {
        merged,
        tree_text,
        stats: Some(table),
        summary: Some(summary),
        op_kernels,
        common,
        identical,
        points,
        totals,
    })
}

/// Applies the common op names to the summary and removes the spaces of
/// its module parents (done after sorting, as the reference does).
fn rename_summary(summary: &mut Table, renames: &indexmap::IndexMap<String, String>) {
    use crate::table::Value;
    for c in summary.columns.iter_mut() {
        if c.name == col::CPU_OP_NAME {
            for v in c.values.iter_mut() {
                if let Some(new) = v.as_str().and_then(|s| renames.get(s)) {
                    *v = Value::Text(new.as_str().into());
                }
            }
        } else if c.name == col::NN_MODULE_PARENT {
            for v in c.values.iter_mut() {
                if let Value::Text(s) = v {
                    *s = (s.replace(' ', "")).into();
                }
            }
        }
    }
}

/// Drops the variant's rows and the `source` column.
fn keep_baseline_rows(t: &mut Table) {
    let Some(src) = t.column_index(col::SOURCE) else {
        return;
    };
    let keep: Vec<bool> = t.columns[src]
        .values
        .iter()
        .map(|v| v.as_str() != Some("trace2"))
        .collect();
    t.columns.remove(src);
    for c in t.columns.iter_mut() {
        let mut k = keep.iter();
        c.values.retain(|_| *k.next().expect("same length"));
    }
}
