//! Where op time goes: the op that holds most of it, ops whose time
//! varies across calls, and ops far below their roofline.

use super::super::health::{Evidence, GpuEvents};
use super::super::{Command, Confidence, Finding, Impact, Inputs};
use super::{impact, worth};
use crate::names::{col, sheet};
use crate::table::{RowRef, Table};

/// One op holding most of the kernel time (informational).
pub const DOMINANT: &str = "op.dominant";
/// An op and shape whose kernel time varies strongly across calls.
pub const VARIANCE: &str = "op.variance";
/// An op and shape far below its roofline or its siblings.
pub const LOW_EFFICIENCY: &str = "op.low_efficiency";

/// An op holding at least this share (%) of the kernel time dominates.
pub const DOMINANT_PCT: f64 = 30.0;

/// An op and shape varies when its kernel time's standard deviation is
/// at least this share of its mean…
pub const VARIANCE_CV: f64 = 0.5;

/// …over at least this many calls.
pub const VARIANCE_MIN_CALLS: f64 = 4.0;

/// Below this share (%) of its roofline an op is inefficient.
pub const LOW_ROOFLINE_PCT: f64 = 40.0;

/// What an inefficient op is measured against without siblings: a share
/// (%) of the roofline well-tuned kernels of these categories reach.
pub const TARGET_ROOFLINE_PCT: f64 = 70.0;

/// An op and shape below this fraction of the best share of roofline of
/// the same op at another shape is below its siblings.
pub const SIBLING_FRACTION: f64 = 0.5;

/// Calls shorter than this (µs, mean kernel time) are left alone: fixed
/// costs of a few µs dominate them, not the roofline.
pub const MIN_CALL_US: f64 = 20.0;

/// A sibling shape is compared only when its work per call (FLOPs) is
/// within this factor of the op's: a much smaller or larger problem
/// reaches a different share of the roofline by its size alone.
pub const SIBLING_WORK_FACTOR: f64 = 4.0;

/// The op categories whose roofline models are tight enough to judge an
/// op's efficiency by.
pub const MODELLED_CATEGORIES: &[&str] = &["GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd"];

/// The categories judged against [`TARGET_ROOFLINE_PCT`] without a
/// sibling: attention at short sequences stays far below its roofline in
/// every library, so it is only compared with its own other shapes.
pub const ABSOLUTE_CATEGORIES: &[&str] = &["GEMM", "CONV_fwd", "CONV_bwd"];

/// Findings of one rule about single ops: at most this many.
pub const MAX_PER_RULE: usize = 3;

/// A cell as a number, NaN when absent.
fn num(r: &RowRef, name: &str) -> f64 {
    r.get_named(name).map_or(f64::NAN, |v| v.to_f64())
}

/// A cell as text ("" when absent).
fn text(r: &RowRef, name: &str) -> String {
    r.get_named(name)
        .map_or_else(String::new, |v| match v.as_str() {
            Some(s) => s.to_string(),
            None => v.py_str(),
        })
}

/// The replay command of the op with UID `uid`.
fn replay(uid: f64) -> Option<Command> {
    (uid.is_finite() && uid >= 0.0)
        .then(|| Command::on_trace("replay", &["--uid", &format!("{}", uid as i64)]))
}

/// `op.dominant`: the top op of `ops_summary` when it holds at least
/// [`DOMINANT_PCT`] of the kernel time.
pub fn dominant(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    let Some(t) = inputs.sheet(sheet::OPS_SUMMARY) else {
        return Ok(Vec::new());
    };
    let Some(r) = t.rows().next() else {
        return Ok(Vec::new());
    };
    let pct = num(&r, col::PERCENTAGE);
    if pct.is_nan() || pct < DOMINANT_PCT {
        return Ok(Vec::new());
    }
    let name = text(&r, col::NAME);
    let ms = num(&r, col::TOTAL_DIRECT_KERNEL_TIME_MS);
    let calls = num(&r, col::COUNT);
    let mut f = Finding::new(
        DOMINANT,
        Confidence::High,
        format!(
            "{name} holds {pct:.1}% of the op kernel time ({ms:.3} ms over {calls} calls): start there"
        ),
        Impact::none(inputs.base_ms()),
        vec![
            Evidence::new("share_of_kernel_time", pct, "%"),
            Evidence::new("kernel_time", ms, "ms"),
            Evidence::new("calls", calls, "count"),
        ],
    );
    f.actions =
        vec!["look at its shapes in ops_unique_args and their efficiency in unified_perf_summary"];
    f.commands = vec![Command::on_trace("replay", &["--op", &name])];
    f.subject = Some(name);
    Ok(vec![f])
}

/// `op.variance`: op and shape groups of `ops_unique_args` whose kernel
/// time varies (coefficient of variation at least [`VARIANCE_CV`]) and
/// whose time above the median is worth a finding.
pub fn variance(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    let Some(t) = inputs.sheet(sheet::OPS_UNIQUE_ARGS) else {
        return Ok(Vec::new());
    };
    let stat = |s: &str| format!("{}_{s}", col::TOTAL_DIRECT_KERNEL_TIME);
    let (mean, std, median, min, sum) = (
        stat("mean"),
        stat("std"),
        stat("median"),
        stat("min"),
        stat("sum"),
    );
    let mut out = Vec::new();
    for r in t.rows() {
        let n = num(&r, col::OPERATION_COUNT);
        let (m, sd, med, lo, total) = (
            num(&r, &mean),
            num(&r, &std),
            num(&r, &median),
            num(&r, &min),
            num(&r, &sum),
        );
        if !(n >= VARIANCE_MIN_CALLS && m > 0.0 && sd / m >= VARIANCE_CV) {
            continue;
        }
        // The time above the calls' typical (median) time, ms.
        let excess_ms = (total - n * med).max(0.0) / 1e3;
        let spread_ms = (total - n * lo).max(0.0) / 1e3;
        if !worth(inputs, excess_ms) {
            continue;
        }
        let imp = Impact {
            low_ms: excess_ms / 2.0,
            mid_ms: excess_ms,
            high_ms: spread_ms,
            base_ms: inputs.base_ms(),
        };
        let name = text(&r, col::NAME);
        let shape = text(&r, col::INPUT_DIMS);
        let mut f = Finding::new(
            VARIANCE,
            Confidence::Medium,
            format!(
                "{name} at one shape varies across its {n} calls: kernel time {m:.1} µs on average with a standard deviation of {sd:.1} µs (median {med:.1} µs); the calls above the median cost {excess_ms:.3} ms more"
            ),
            imp,
            vec![
                Evidence::new("calls", n, "count"),
                Evidence::new("mean_kernel_time", m, "us"),
                Evidence::new("std_kernel_time", sd, "us"),
                Evidence::new("median_kernel_time", med, "us"),
                Evidence::new("min_kernel_time", lo, "us"),
                Evidence::new("time_above_median", excess_ms, "ms"),
            ],
        );
        f.actions = vec![
            "see which calls are slow (clock or power throttling, contention with another stream or process, a different kernel picked for the same shape)",
            "replay the shape alone: a steady replay time points at the environment, not the op",
        ];
        f.commands.extend(replay(num(&r, col::EX_UID)));
        f.subject = Some(name);
        f.shape = Some(shape);
        out.push(f);
    }
    keep_top(&mut out);
    Ok(out)
}

/// Keeps the [`MAX_PER_RULE`] findings of most mid impact.
fn keep_top(v: &mut Vec<Finding>) {
    v.sort_by(|a, b| b.impact.mid_ms.total_cmp(&a.impact.mid_ms));
    v.truncate(MAX_PER_RULE);
}

/// One row's roofline facts: op name, share of roofline (%), GFLOPS per
/// call, row index.
struct RoofRow {
    name: String,
    pct: f64,
    gflops: f64,
    row: usize,
}

/// The rows of `t` with a share of roofline.
fn roof_rows(t: &Table) -> Vec<RoofRow> {
    t.rows()
        .map(|r| RoofRow {
            name: text(&r, col::NAME),
            pct: num(&r, col::PCT_ROOFLINE_MEAN),
            gflops: num(&r, col::GFLOPS),
            row: r.index(),
        })
        .filter(|x| x.pct.is_finite())
        .collect()
}

/// The best share of roofline (%) among the other shapes of the same op
/// whose work per call is within [`SIBLING_WORK_FACTOR`] of this one's.
fn best_sibling(rows: &[RoofRow], me: &RoofRow) -> Option<f64> {
    rows.iter()
        .filter(|x| x.name == me.name && x.row != me.row)
        .filter(|x| {
            let ratio = x.gflops / me.gflops;
            ratio.is_finite() && (1.0 / SIBLING_WORK_FACTOR..=SIBLING_WORK_FACTOR).contains(&ratio)
        })
        .map(|x| x.pct)
        .max_by(f64::total_cmp)
}

/// `op.low_efficiency`: modelled ops and shapes of `unified_perf_summary`
/// below [`LOW_ROOFLINE_PCT`] of their roofline or below
/// [`SIBLING_FRACTION`] of the same op's best shape; the gain is the time
/// saved at the better share.
pub fn low_efficiency(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    if inputs.arch.is_none() {
        return Err("no GPU spec (the trace names no bundled GPU; pass --gpu-arch)".into());
    }
    let Some(t) = inputs.sheet(sheet::UNIFIED_PERF_SUMMARY) else {
        return Err("no unified_perf_summary sheet".into());
    };
    if t.column(col::PCT_ROOFLINE_MEAN).is_none() {
        return Err("no roofline column".into());
    }
    let rows = roof_rows(t);
    let mut out = Vec::new();
    for r in t.rows() {
        let category = text(&r, col::OP_CATEGORY);
        if !MODELLED_CATEGORIES.contains(&category.as_str()) {
            continue;
        }
        if let Some(f) = low_efficiency_row(inputs, &r, &rows) {
            out.push(f);
        }
    }
    keep_top(&mut out);
    Ok(out)
}

/// The `op.low_efficiency` finding of one row, if it is one.
fn low_efficiency_row(inputs: &Inputs, r: &RowRef, rows: &[RoofRow]) -> Option<Finding> {
    let me = rows.iter().find(|x| x.row == r.index())?;
    let (pct, name) = (me.pct, me.name.clone());
    let us = num(r, col::KERNEL_TIME_US_SUM);
    let calls = num(r, col::OPERATION_COUNT);
    if !(pct > 0.0 && us > 0.0 && us / calls >= MIN_CALL_US) {
        return None;
    }
    let sibling = best_sibling(rows, me).filter(|&b| pct < SIBLING_FRACTION * b);
    let absolute = ABSOLUTE_CATEGORIES.contains(&text(r, col::OP_CATEGORY).as_str());
    let target = match sibling {
        Some(b) => b.min(100.0),
        None if absolute && pct < LOW_ROOFLINE_PCT => TARGET_ROOFLINE_PCT,
        None => return None,
    };
    let gain_ms = us / 1e3 * (1.0 - pct / target);
    if !worth(inputs, gain_ms) {
        return None;
    }
    let imp = impact(inputs, gain_ms, 0.25, 0.5, 1.0);
    let shape = text(r, col::INPUT_DIMS);
    let against = match sibling {
        Some(b) => format!("the same op reaches {b:.1}% at another shape"),
        None => format!("well-tuned kernels reach about {TARGET_ROOFLINE_PCT:.0}%"),
    };
    let mut f = Finding::new(
        LOW_EFFICIENCY,
        if sibling.is_some() {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        format!(
            "{name} at {shape} runs at {pct:.1}% of its roofline over {calls} calls ({:.3} ms); {against}: at that share it would take {:.3} ms less",
            us / 1e3,
            gain_ms
        ),
        imp,
        vec![
            Evidence::new("pct_of_roofline", pct, "%"),
            Evidence::new("target_pct_of_roofline", target, "%"),
            Evidence::new("kernel_time", us / 1e3, "ms"),
            Evidence::new("calls", calls, "count"),
        ],
    );
    f.actions = vec![
        "replay the shape and compare kernels and libraries (cuBLAS/hipBLASLt heuristics, TF32/bf16 settings, a tuned or different backend)",
        "pad or reshape to dimensions the kernels favour (multiples of 64/128), or batch small calls",
    ];
    f.commands.extend(replay(num(r, col::EX_UID)));
    f.subject = Some(name);
    f.shape = Some(shape);
    Some(f)
}
