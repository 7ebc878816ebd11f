//! Change findings: what a comparison says moved, deterministic and
//! evidence-cited, in the finding model of the diagnosis layer.
//!
//! - `change.health_differs`: a health check passes on one side and warns
//!   or fails on the other, which makes the comparison suspect;
//! - `change.op_moved`: the op (and shape) whose kernel time moved most,
//!   when it moved by at least [`MOVED_SHARE_PCT`] of the baseline's GPU
//!   busy time and [`MOVED_ITEM_PCT`] of its own time;
//! - `change.kernels_changed`: the moved op's kernels differ between the
//!   sides (the tree diff's points under it that do not match).
//!
//! Every rule is silent when nothing changed, and says why it cannot tell
//! when the inputs lack what it reads.

use super::gate::key_text;
use super::health::HealthSource;
use super::{Change, Input, ItemComparison, SHAPE_KEYS, VariantGate};
use crate::analysis::commands::diff::{DivergencePoint, WhereMoved};
use crate::analysis::diagnosis::finding::Arg;
use crate::analysis::diagnosis::{
    Abstention, Command, Confidence, Evidence, Finding, Impact, Severity, Status,
};
use crate::names::{col, sheet};

/// An op (or op+shape) moved when its kernel time changed by at least this
/// share (%) of the baseline's GPU busy time: the same floor as a report's
/// findings (1% of the GPU span), below which run-to-run noise dominates.
pub const MOVED_SHARE_PCT: f64 = 1.0;

/// … and by at least this share (%) of its own baseline time: a large op
/// varying by a few percent between runs is noise, not a change.
pub const MOVED_ITEM_PCT: f64 = 5.0;

/// Kernel names a summary lists.
const SUMMARY_KERNELS: usize = 3;

/// Longest kernel name a summary shows, in characters.
const SUMMARY_NAME_CHARS: usize = 80;

/// What the change rules found for one variant, and the rules that could
/// not tell.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// Health differences first (they qualify the rest), then the moved
    /// op and its kernels.
    pub findings: Vec<Finding>,
    /// The rules that could not tell, and why.
    pub abstained: Vec<Abstention>,
}

/// The two sides of one comparison as the rules read them.
pub struct Sides<'a> {
    /// The baseline.
    pub base: &'a Input,
    /// The variant.
    pub variant: &'a Input,
    /// The gate's result for the variant (with the tree diff, when made).
    pub gate: &'a VariantGate,
    /// The noise floor given to the gate (`--min-ms`), ms.
    pub min_ms: f64,
}

/// Runs the change rules on one variant against the baseline.
pub fn changes(s: &Sides) -> Changes {
    let mut out = Changes::default();
    match health_differs(s) {
        Ok(found) => out.findings.extend(found),
        Err(reason) => out.abstained.push(Abstention {
            id: "change.health_differs",
            reason,
        }),
    }
    let suspect = !out.findings.is_empty()
        || [&s.base.health, &s.variant.health]
            .iter()
            .any(|h| h.verdict() == Status::Fail);
    match op_moved(s, suspect) {
        Err(reason) => {
            for id in ["change.op_moved", "change.kernels_changed"] {
                out.abstained.push(Abstention {
                    id,
                    reason: reason.clone(),
                });
            }
        }
        Ok(None) => {}
        Ok(Some((moved, item))) => {
            out.findings.push(moved);
            match kernels_changed(s, &item) {
                Ok(found) => out.findings.extend(found),
                Err(reason) => out.abstained.push(Abstention {
                    id: "change.kernels_changed",
                    reason,
                }),
            }
        }
    }
    out
}

/// How commands name an input: its path, or `BASE`/`VARIANT` for stdin.
fn command_path(i: &Input, stdin_name: &str) -> Arg {
    if i.source == "-" {
        Arg::Text(stdin_name.into())
    } else {
        Arg::Text(i.source.clone())
    }
}

/// `tracelens SUB ARGS…`.
fn command(sub: &str, args: Vec<Arg>) -> Command {
    let mut all = vec![Arg::Text(sub.into())];
    all.extend(args);
    Command { args: all }
}

/// The GPU time the impacts are a share of: the baseline's GPU busy time,
/// else its op kernel time; 0 when it has neither.
fn base_ms(g: &VariantGate) -> f64 {
    if let Some(b) = g.busy_time.as_ref().and_then(|r| r.baseline_ms) {
        return b;
    }
    g.ops
        .as_ref()
        .or(g.op_shapes.as_ref())
        .map_or(0.0, |c| c.unmatched.baseline_total_ms)
}

/// `change.health_differs`: one finding per check that passes on one side
/// and warns or fails on the other. Cannot tell when a side's health is
/// missing.
fn health_differs(s: &Sides) -> Result<Vec<Finding>, String> {
    let (bh, vh) = (&s.base.health, &s.variant.health);
    for (h, i) in [(bh, s.base), (vh, s.variant)] {
        if h.source == HealthSource::Missing {
            return Err(format!("{} has no health checks", i.tag));
        }
    }
    let base = base_ms(s.gate);
    let mut out = Vec::new();
    for b in &bh.checks {
        let Some(v) = vh.check(b.id) else { continue };
        let flagged = |st: Status| matches!(st, Status::Warn | Status::Fail);
        let (bad, bad_side, good_side) = match (b.status, v.status) {
            (Status::Pass, st) if flagged(st) => (v, s.variant, s.base),
            (st, Status::Pass) if flagged(st) => (b, s.base, s.variant),
            _ => continue,
        };
        let mut evidence: Vec<Evidence> = bad
            .evidence
            .iter()
            .map(|e| {
                Evidence::read(
                    format!("{}.{}", bad_side.tag, e.name),
                    e.value,
                    e.unit.to_string(),
                )
            })
            .collect();
        let good = if bad_side.tag == s.base.tag { v } else { b };
        evidence.extend(good.evidence.iter().map(|e| {
            Evidence::read(
                format!("{}.{}", good_side.tag, e.name),
                e.value,
                e.unit.to_string(),
            )
        }));
        let mut f = Finding::new(
            "change.health_differs",
            Confidence::High,
            format!(
                "{} is {} on {} and pass on {}: {} — the comparison's figures that check covers are suspect",
                bad.id,
                bad.status.as_str(),
                bad_side.tag,
                good_side.tag,
                bad.summary
            ),
            Impact::none(base),
            evidence,
        );
        f.severity = if bad.status == Status::Fail {
            Severity::High
        } else {
            Severity::Medium
        };
        f.subject = Some(bad.id.to_string());
        f.actions = vec![
            "Fix or re-record the trace of the side whose check does not pass, then compare again; until then, read the moved figures that check covers as unproven",
        ];
        f.commands = vec![command(
            "report",
            vec![
                command_path(bad_side, "TRACE"),
                Arg::Text("--strict".into()),
            ],
        )];
        out.push(f);
    }
    Ok(out)
}

/// The item (op+shape when both reports have `ops_unique_args`, else op)
/// whose kernel time moved most, in either direction.
fn most_moved(c: &ItemComparison) -> Option<&Change> {
    c.top_regressions
        .iter()
        .chain(&c.top_improvements)
        .max_by(|a, b| a.delta_ms.abs().total_cmp(&b.delta_ms.abs()))
}

/// The divergence points whose ops (either side) include `op`.
fn points_of<'a>(m: &'a WhereMoved, op: &str) -> Vec<&'a DivergencePoint> {
    m.points
        .iter()
        .filter(|p| p.base.ops.iter().chain(&p.variant.ops).any(|o| o == op))
        .collect()
}

/// `name` cut to [`SUMMARY_NAME_CHARS`] characters.
fn short(name: &str) -> String {
    if name.chars().count() <= SUMMARY_NAME_CHARS {
        name.to_string()
    } else {
        let cut: String = name.chars().take(SUMMARY_NAME_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// Up to [`SUMMARY_KERNELS`] names, shortened, and how many more.
fn names_text(names: &[&str]) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(SUMMARY_KERNELS)
        .map(|n| short(n))
        .collect();
    if names.len() > SUMMARY_KERNELS {
        shown.push(format!("{} more", names.len() - SUMMARY_KERNELS));
    }
    shown.join(", ")
}

/// The variant's `ex_UID` of the op+shape `c` (an instance to replay).
fn variant_uid(variant: &Input, c: &Change) -> Option<i64> {
    let t = variant.sheet(sheet::OPS_UNIQUE_ARGS)?;
    let keys: Vec<usize> = SHAPE_KEYS
        .iter()
        .map(|k| t.column_index(k))
        .collect::<Option<_>>()?;
    let uid = t.column_index(col::EX_UID)?;
    let want = [
        Some(c.name.as_str()),
        c.input_type.as_deref(),
        c.input_dims.as_deref(),
        c.input_strides.as_deref(),
        c.concrete_inputs.as_deref(),
    ];
    t.rows()
        .find(|r| {
            keys.iter()
                .zip(want)
                .all(|(&k, w)| key_text(r.get(k)) == w.unwrap_or(""))
        })
        .and_then(|r| r.get(uid).as_i64())
}

/// `change.op_moved`: the op and shape that moved most, with the kernels
/// behind it (from the tree diff); `None` when nothing moved beyond the
/// thresholds. `suspect`: a side's health fails or differs, so the
/// confidence is low. Returns the item found with the finding.
fn op_moved(s: &Sides, suspect: bool) -> Result<Option<(Finding, Change)>, String> {
    let g = s.gate;
    let table =
        g.op_shapes.as_ref().or(g.ops.as_ref()).ok_or_else(|| {
            "neither ops_unique_args nor ops_summary is on both sides".to_string()
        })?;
    let base = base_ms(g);
    if base <= 0.0 {
        return Err("the baseline has no GPU busy time to measure a move against".into());
    }
    let Some(c) = most_moved(table) else {
        return Ok(None);
    };
    let d = c.delta_ms;
    let share = 100.0 * d.abs() / base;
    let own_pct = c.delta_pct.map_or(f64::INFINITY, f64::abs);
    if share < MOVED_SHARE_PCT || own_pct < MOVED_ITEM_PCT || d.abs() < s.min_ms || d == 0.0 {
        return Ok(None);
    }
    let points = g
        .where_moved
        .as_ref()
        .map(|m| points_of(m, &c.name))
        .unwrap_or_default();
    // The kernels behind the move: those of the points under the op that
    // moved the same way (other shapes of the op may run other kernels).
    let mut kernels: Vec<&str> = Vec::new();
    for p in points.iter().filter(|p| p.delta_us() * d > 0.0) {
        for k in p.base.kernel_names.iter().chain(&p.variant.kernel_names) {
            if !kernels.contains(&k.as_str()) {
                kernels.push(k);
            }
        }
    }
    // The tree diff confirms the move when its points under this op moved
    // the same way by at least half as much.
    let diff_delta_ms: f64 = points.iter().map(|p| p.delta_us()).sum::<f64>() / 1e3;
    let confirmed =
        !points.is_empty() && diff_delta_ms * d > 0.0 && diff_delta_ms.abs() >= d.abs() / 2.0;
    let confidence = if suspect {
        Confidence::Low
    } else if confirmed {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let slower = d > 0.0;
    let what = match &c.input_dims {
        Some(dims) => format!("{} at {dims}", c.name),
        None => c.name.clone(),
    };
    let mut summary = format!(
        "{what} got {} by {:.3} ms ({}): {:.3} → {:.3} ms, {:.2}% of {}'s GPU busy time",
        if slower { "slower" } else { "faster" },
        d.abs(),
        super::fmt_pct(c.delta_pct),
        c.baseline_ms,
        c.variant_ms,
        share,
        s.base.tag
    );
    if !kernels.is_empty() {
        summary.push_str(&format!("; kernels: {}", names_text(&kernels)));
    }
    if suspect {
        summary.push_str("; the sides' health differs or fails, so the move is unproven");
    }
    let impact = if slower {
        Impact {
            low_ms: d / 2.0,
            mid_ms: d,
            high_ms: d,
            base_ms: base,
        }
    } else {
        Impact::none(base)
    };
    let mut evidence = vec![
        Evidence::new("baseline_ms", c.baseline_ms, "ms"),
        Evidence::new("variant_ms", c.variant_ms, "ms"),
        Evidence::new("delta_ms", d, "ms"),
    ];
    if let Some(p) = c.delta_pct.filter(|p| p.is_finite()) {
        evidence.push(Evidence::new("delta_pct", p, "%"));
    }
    evidence.push(Evidence::new("share_of_baseline_busy", share, "%"));
    if c.input_dims.is_some()
        && let Some(op) = g.ops.as_ref().and_then(|o| {
            o.top_regressions
                .iter()
                .chain(&o.top_improvements)
                .find(|x| x.name == c.name)
        })
    {
        evidence.push(Evidence::new("op_delta_ms", op.delta_ms, "ms"));
    }
    if !points.is_empty() {
        evidence.push(Evidence::new("tree_diff_delta_ms", diff_delta_ms, "ms"));
        evidence.push(Evidence::new("kernels", kernels.len() as f64, "count"));
    }
    let uid = c
        .input_dims
        .as_ref()
        .and(variant_uid(s.variant, c))
        .filter(|_| s.variant.health.source == HealthSource::Trace);
    let mut f = Finding::new("change.op_moved", confidence, summary, impact, evidence);
    f.subject = Some(c.name.clone());
    f.shape = c.input_dims.clone();
    f.actions = if slower {
        vec![
            "Find what changed for this op and shape between the runs (library or driver version, kernel choice, dtype, layout): the tree diff names its kernels on each side",
            "Replay the op alone on the variant (and the baseline) to tell the kernel from its context",
            "If the change is intended, make the variant the new baseline",
        ]
    } else {
        vec![
            "Confirm the speedup is the intended change: the tree diff names its kernels on each side",
        ]
    };
    let both_traces = [s.base, s.variant]
        .iter()
        .all(|i| i.health.source == HealthSource::Trace);
    if both_traces {
        f.commands.push(command(
            "diff",
            vec![
                command_path(s.base, "BASE"),
                command_path(s.variant, "VARIANT"),
            ],
        ));
    }
    if let Some(uid) = uid {
        f.commands.push(command(
            "replay",
            vec![
                command_path(s.variant, "VARIANT"),
                Arg::Text("--uid".into()),
                Arg::Text(uid.to_string()),
            ],
        ));
    }
    if f.commands.is_empty() {
        f.commands.push(command(
            "compare",
            vec![
                command_path(s.base, "BASE"),
                command_path(s.variant, "VARIANT"),
                Arg::Text("--fail-above".into()),
                Arg::Text(crate::analysis::diagnosis::sheets::number_text(
                    MOVED_ITEM_PCT,
                )),
            ],
        ));
    }
    Ok(Some((f, c.clone())))
}

/// `change.kernels_changed`: the kernels under the moved op differ between
/// the sides (kernels one side runs and the other does not, at the tree
/// diff's points under the op that do not match and moved the way the op
/// did). Cannot tell without a tree diff.
fn kernels_changed(s: &Sides, c: &Change) -> Result<Option<Finding>, String> {
    let m = s.gate.where_moved.as_ref().ok_or_else(|| {
        "needs the tree diff: both inputs PyTorch traces, without --no-diff".to_string()
    })?;
    // The op's points that moved the way the op did and do not match.
    let points: Vec<&DivergencePoint> = points_of(m, &c.name)
        .into_iter()
        .filter(|p| !p.matched && p.delta_us() * c.delta_ms > 0.0)
        .collect();
    let mut base_k: Vec<&str> = Vec::new();
    let mut var_k: Vec<&str> = Vec::new();
    for p in &points {
        for k in &p.base.kernel_names {
            if !base_k.contains(&k.as_str()) {
                base_k.push(k);
            }
        }
        for k in &p.variant.kernel_names {
            if !var_k.contains(&k.as_str()) {
                var_k.push(k);
            }
        }
    }
    let gone: Vec<&str> = base_k
        .iter()
        .copied()
        .filter(|k| !var_k.contains(k))
        .collect();
    let new: Vec<&str> = var_k
        .iter()
        .copied()
        .filter(|k| !base_k.contains(k))
        .collect();
    if gone.is_empty() && new.is_empty() {
        return Ok(None);
    }
    let delta_ms: f64 = points.iter().map(|p| p.delta_us()).sum::<f64>() / 1e3;
    let base = base_ms(s.gate);
    let impact = if delta_ms > 0.0 {
        Impact {
            low_ms: delta_ms / 2.0,
            mid_ms: delta_ms,
            high_ms: delta_ms,
            base_ms: base,
        }
    } else {
        Impact::none(base)
    };
    let mut parts = Vec::new();
    if !gone.is_empty() {
        parts.push(format!("only {} runs {}", s.base.tag, names_text(&gone)));
    }
    if !new.is_empty() {
        parts.push(format!("only {} runs {}", s.variant.tag, names_text(&new)));
    }
    let summary = format!(
        "the kernels of {} differ between the sides: {}; GPU time where they differ {:+.3} ms",
        c.name,
        parts.join("; "),
        delta_ms
    );
    let evidence = vec![
        Evidence::new("baseline_only_kernels", gone.len() as f64, "count"),
        Evidence::new("variant_only_kernels", new.len() as f64, "count"),
        Evidence::new("points", points.len() as f64, "count"),
        Evidence::new("delta_ms", delta_ms, "ms"),
    ];
    let mut f = Finding::new(
        "change.kernels_changed",
        Confidence::High,
        summary,
        impact,
        evidence,
    );
    f.subject = Some(c.name.clone());
    f.shape = c.input_dims.clone();
    f.actions = vec![
        "A different kernel was chosen or the op was lowered differently (library heuristics, autotuning, a fused or split kernel): pin the library version or the algorithm and compare again",
    ];
    f.commands = vec![command(
        "diff",
        vec![
            command_path(s.base, "BASE"),
            command_path(s.variant, "VARIANT"),
        ],
    )];
    Ok(Some(f))
}

#[cfg(test)]
mod tests;
