//! Where the GPU time moved: the LCAs of the diff, grouped by what they
//! hold on each side (the same divergence repeated in every layer is one
//! point), ranked by the absolute change of GPU time under them.

use indexmap::IndexMap;

use super::push_unique;
use super::side::{Side, Which};
use super::stats::StatRow;
use super::{MergedKind, MergedTree};
use crate::table::Value;

/// What one side holds at a divergence point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointSide {
    /// GPU busy time under the point, summed over its occurrences (µs).
    pub busy_us: f64,
    /// GPU events under it.
    pub kernels: usize,
    /// The cpu_ops that launched them, distinct, first seen first.
    pub ops: Vec<String>,
    /// The GPU event names, distinct, first seen first.
    pub kernel_names: Vec<String>,
}

/// One divergence point: an LCA name with the same ops and kernels on each
/// side, over all the places it occurs.
#[derive(Debug, Clone, PartialEq)]
pub struct DivergencePoint {
    /// The LCA's name (`a | b` when the sides name it differently;
    /// `(top level)` for one-sided roots).
    pub name: String,
    /// True when the point is a pair of matched kernels (same place, same
    /// kind of GPU work; only the time differs). False where the trees
    /// diverge (ops, launches or kernels present on one side only).
    pub matched: bool,
    /// How many LCAs of the merged tree it groups.
    pub occurrences: usize,
    /// The first LCA's merged id (to find it in the tree text).
    pub first_id: Option<u32>,
    /// The baseline's side.
    pub base: PointSide,
    /// The variant's side.
    pub variant: PointSide,
}

impl DivergencePoint {
    /// Variant minus baseline busy time (µs).
    pub fn delta_us(&self) -> f64 {
        self.variant.busy_us - self.base.busy_us
    }
}

/// Totals over every point.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PointTotals {
    /// Baseline GPU time attributed to some point (µs).
    pub base_us: f64,
    /// Variant GPU time attributed to some point (µs).
    pub variant_us: f64,
    /// Σ |Δ| over the points (µs): how much moved, in either direction.
    pub abs_delta_us: f64,
    /// Number of points.
    pub points: usize,
}

impl PointTotals {
    /// Net change, variant minus baseline (µs).
    pub fn delta_us(&self) -> f64 {
        self.variant_us - self.base_us
    }
}

/// Per LCA instance (merged id, or a one-sided root), one side's figures.
#[derive(Default)]
struct Instance {
    name: String,
    matched: bool,
    sides: [PointSide; 2],
}

/// Groups the rows into points and ranks them by |Δ|, largest first (ties
/// in first-seen order).
pub fn rank(
    rows: &[StatRow],
    merged: &MergedTree,
    s1: &Side,
    s2: &Side,
) -> (Vec<DivergencePoint>, PointTotals) {
    // LCA instances in first-seen order; rows without an LCA (one-sided
    // roots) form one instance per side.
    let mut inst: IndexMap<(Option<u32>, Option<Which>), Instance> = IndexMap::new();
    for r in rows {
        let key = match r.lca_id {
            Some(id) => (Some(id), None),
            None => (None, Some(r.which)),
        };
        let e = inst.entry(key).or_insert_with(|| Instance {
            name: r
                .lca_name
                .clone()
                .unwrap_or_else(|| "(top level)".to_string()),
            matched: r.lca_id.is_some_and(|id| {
                let n = &merged.nodes[id as usize];
                n.kind == MergedKind::Combined
                    && n.uid1.is_some_and(|u| s1.is_kernel_like(u))
                    && n.uid2.is_some_and(|u| s2.is_kernel_like(u))
            }),
            ..Default::default()
        });
        let side = r.which.pick(s1, s2);
        let ps = &mut e.sides[usize::from(r.which == Which::Variant)];
        // Every row of one side of an LCA carries the same busy time.
        if ps.kernels == 0 {
            ps.busy_us = busy_f64(&r.busy);
        }
        ps.kernels += 1;
        push_unique(&mut ps.ops, side.op_name(r.op));
        push_unique(&mut ps.kernel_names, side.trace.name(r.gpu).to_string());
    }
    let mut points: IndexMap<String, DivergencePoint> = IndexMap::new();
    let mut totals = PointTotals::default();
    for ((id, _), i) in inst {
        totals.base_us += i.sides[0].busy_us;
        totals.variant_us += i.sides[1].busy_us;
        let signature = format!(
            "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
            i.name,
            i.sides[0].ops.join("\u{1}"),
            i.sides[0].kernel_names.join("\u{1}"),
            i.sides[1].ops.join("\u{1}"),
            i.sides[1].kernel_names.join("\u{1}"),
        );
        let [b, v] = i.sides;
        match points.get_mut(&signature) {
            Some(p) => {
                p.occurrences += 1;
                add(&mut p.base, b);
                add(&mut p.variant, v);
            }
            None => {
                points.insert(
                    signature,
                    DivergencePoint {
                        name: i.name,
                        matched: i.matched,
                        occurrences: 1,
                        first_id: id,
                        base: b,
                        variant: v,
                    },
                );
            }
        }
    }
    let mut points: Vec<DivergencePoint> = points.into_values().collect();
    points.sort_by(|a, b| b.delta_us().abs().total_cmp(&a.delta_us().abs()));
    totals.abs_delta_us = points.iter().map(|p| p.delta_us().abs()).sum();
    totals.points = points.len();
    (points, totals)
}

fn busy_f64(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn add(into: &mut PointSide, from: PointSide) {
    into.busy_us += from.busy_us;
    into.kernels += from.kernels;
    for o in from.ops {
        push_unique(&mut into.ops, o);
    }
    for k in from.kernel_names {
        push_unique(&mut into.kernel_names, k);
    }
}
