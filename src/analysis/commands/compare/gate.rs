//! The CI gate: judges each variant against the baseline from the GPU busy
//! time and the per-op and per-op+shape kernel times, with a relative
//! threshold, an absolute noise floor and an `inconclusive` outcome.

use indexmap::IndexMap;

use super::verdict::{
    Change, Gate, GateOptions, ItemComparison, SCHEMA_VERSION, Side, TOP_N, TimelineRow, Unmatched,
    VariantGate, Verdict,
};
use super::{Input, SHAPE_KEYS};
use crate::names::{col, row, sheet};
use crate::pyfmt::float_repr;
use crate::table::{Table, Value};

/// A key cell as text (numbers the same whether int or float; missing
/// values empty).
pub(super) fn key_text(c: &Value) -> String {
    match c {
        Value::Int(i) => float_repr(*i as f64),
        other => other.csv_text(),
    }
}

/// Kernel time (ms) per item key.
type PerKey = IndexMap<Vec<String>, f64>;

/// `value` column summed per key (tuple of `keys` columns), in first-seen
/// order, divided by `divisor` (1000 turns µs into ms). None when a column
/// is missing.
fn per_key(sheet: &Table, keys: &[&str], value: &str, divisor: f64) -> Option<PerKey> {
    let kidx: Vec<usize> = keys
        .iter()
        .map(|k| sheet.column_index(k))
        .collect::<Option<_>>()?;
    let v = sheet.column_index(value)?;
    let mut out = PerKey::new();
    for r in sheet.rows() {
        let key: Vec<String> = kidx.iter().map(|&j| key_text(r.get(j))).collect();
        let x = r.get(v).as_f64().unwrap_or(0.0) / divisor;
        *out.entry(key).or_insert(0.0) += x;
    }
    Some(out)
}

/// `type` → `time ms` of a gpu_timeline sheet.
fn timeline_of(input: &Input) -> Option<IndexMap<String, f64>> {
    let s = input.sheet(sheet::GPU_TIMELINE)?;
    let t = s.column_index(col::TYPE)?;
    let v = s.column_index(col::TIME_MS)?;
    let mut out = IndexMap::new();
    for r in s.rows() {
        if let Some(x) = r.get(v).as_f64() {
            out.insert(key_text(r.get(t)), x);
        }
    }
    Some(out)
}

fn delta_pct(base: f64, delta: f64) -> Option<f64> {
    (base != 0.0).then(|| 100.0 * delta / base)
}

/// Whether a slowdown from `base` by `delta` ms is beyond the thresholds.
fn over(opts: &GateOptions, base: f64, delta: f64) -> bool {
    let Some(limit) = opts.fail_above_pct else {
        return false;
    };
    if delta.is_nan() || delta <= 0.0 || delta < opts.min_ms {
        return false;
    }
    match delta_pct(base, delta) {
        Some(p) => p > limit,
        // From nothing to something: an unbounded slowdown.
        None => true,
    }
}

/// Compares two per-key tables.
fn compare_items(
    base: &PerKey,
    var: &PerKey,
    with_shape: bool,
    opts: &GateOptions,
) -> ItemComparison {
    let mut changes = Vec::new();
    let mut un = Unmatched {
        baseline_total_ms: base.values().sum(),
        variant_total_ms: var.values().sum(),
        ..Unmatched::default()
    };
    for (k, &b) in base {
        match var.get(k) {
            Some(&v) => {
                let d = v - b;
                let field = |i: usize| with_shape.then(|| k.get(i).cloned().unwrap_or_default());
                changes.push(Change {
                    name: k.first().cloned().unwrap_or_default(),
                    input_type: field(1),
                    input_dims: field(2),
                    input_strides: field(3),
                    concrete_inputs: field(4),
                    baseline_ms: b,
                    variant_ms: v,
                    delta_ms: d,
                    delta_pct: delta_pct(b, d),
                    over_limit: over(opts, b, d),
                });
            }
            None => {
                un.baseline_only_count += 1;
                un.baseline_only_ms += b;
            }
        }
    }
    for (k, &v) in var {
        if !base.contains_key(k) {
            un.variant_only_count += 1;
            un.variant_only_ms += v;
        }
    }
    let share = |part: f64, total: f64| {
        if total > 0.0 {
            100.0 * part / total
        } else {
            0.0
        }
    };
    un.baseline_only_pct = share(un.baseline_only_ms, un.baseline_total_ms);
    un.variant_only_pct = share(un.variant_only_ms, un.variant_total_ms);

    let mut slower: Vec<&Change> = changes.iter().filter(|c| c.delta_ms > 0.0).collect();
    slower.sort_by(|a, b| b.delta_ms.total_cmp(&a.delta_ms));
    let mut faster: Vec<&Change> = changes.iter().filter(|c| c.delta_ms < 0.0).collect();
    faster.sort_by(|a, b| a.delta_ms.total_cmp(&b.delta_ms));
    ItemComparison {
        compared: changes.len(),
        unmatched: un,
        over_limit: slower
            .iter()
            .filter(|c| c.over_limit)
            .map(|c| (*c).clone())
            .collect(),
        top_regressions: slower.iter().take(TOP_N).map(|c| (*c).clone()).collect(),
        top_improvements: faster.iter().take(TOP_N).map(|c| (*c).clone()).collect(),
    }
}

fn fmt_ms(x: f64) -> String {
    format!("{x:.3} ms")
}

fn fmt_signed_ms(x: f64) -> String {
    format!("{x:+.3} ms")
}

/// A percentage change as the gate words it: `+12.3%`, or `new` when there
/// is no baseline to compare with.
pub fn fmt_pct(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() => format!("{p:+.1}%"),
        _ => "new".to_string(),
    }
}

/// What the checks of one variant found: the reasons, in order, and whether
/// any of them makes the comparison inconclusive.
#[derive(Default)]
struct Findings {
    reasons: Vec<String>,
    inconclusive: bool,
}

impl Findings {
    /// Records a reason that does not decide the verdict by itself.
    fn note(&mut self, reason: String) {
        self.reasons.push(reason);
    }

    /// Records a reason that makes the comparison inconclusive.
    fn inconclusive(&mut self, reason: String) {
        self.inconclusive = true;
        self.reasons.push(reason);
    }
}

/// The gpu_timeline rows of both sides: every baseline type, then the
/// variant's new ones; empty unless both sides have the sheet.
fn timeline_rows(
    bt: Option<&IndexMap<String, f64>>,
    vt: Option<&IndexMap<String, f64>>,
) -> Vec<TimelineRow> {
    let (Some(bt), Some(vt)) = (bt, vt) else {
        return Vec::new();
    };
    let kinds = bt.keys().chain(vt.keys().filter(|k| !bt.contains_key(*k)));
    kinds
        .map(|k| {
            let (b, v) = (bt.get(k).copied(), vt.get(k).copied());
            let d = b.zip(v).map(|(b, v)| v - b);
            TimelineRow {
                kind: k.clone(),
                baseline_ms: b,
                variant_ms: v,
                delta_ms: d,
                delta_pct: b.zip(d).and_then(|(b, d)| delta_pct(b, d)),
            }
        })
        .collect()
}

/// Judges the GPU busy time row (when both sides have one): whether it got
/// slower beyond the limit.
fn judge_busy_time(
    busy_time: Option<&TimelineRow>,
    missing_in: &str,
    opts: &GateOptions,
    f: &mut Findings,
) -> bool {
    let Some(r) = busy_time else {
        f.inconclusive(format!(
            "no GPU busy time to compare: report {missing_in:?} has no gpu_timeline busy_time row"
        ));
        return false;
    };
    let (b, d) = (r.baseline_ms.unwrap_or(0.0), r.delta_ms.unwrap_or(0.0));
    let over_limit = over(opts, b, d);
    if over_limit {
        f.note(format!(
            "GPU busy time got slower: {} → {} ({}, {})",
            fmt_ms(b),
            fmt_ms(b + d),
            fmt_signed_ms(d),
            fmt_pct(r.delta_pct)
        ));
    }
    over_limit
}

/// Checks that the two sides' op kernel times can be compared: both have
/// some, and neither has too much of it in ops the other lacks.
fn check_op_coverage(
    c: &ItemComparison,
    base: &Input,
    var: &Input,
    opts: &GateOptions,
    f: &mut Findings,
) {
    let u = &c.unmatched;
    if u.baseline_total_ms <= 0.0 || u.variant_total_ms <= 0.0 {
        f.inconclusive("no op kernel time on one side: nothing to compare op by op".into());
    }
    let sides = [
        (
            &base.tag,
            &var.tag,
            u.baseline_only_ms,
            u.baseline_total_ms,
            u.baseline_only_pct,
        ),
        (
            &var.tag,
            &base.tag,
            u.variant_only_ms,
            u.variant_total_ms,
            u.variant_only_pct,
        ),
    ];
    for (side, other, only, total, p) in sides {
        if p > opts.max_unmatched_pct {
            f.inconclusive(format!(
                "not comparable: {p:.1}% of {side}'s op kernel time ({} of {}) is in ops {other} does not have (limit {}%)",
                fmt_ms(only),
                fmt_ms(total),
                opts.max_unmatched_pct
            ));
        }
    }
}

/// Compares the ops by name (`ops_summary`), when the sheets allow it.
fn compare_ops(
    base: &Input,
    var: &Input,
    opts: &GateOptions,
    f: &mut Findings,
) -> Option<ItemComparison> {
    let ops_of = |i: &Input| {
        i.sheet(sheet::OPS_SUMMARY)
            .and_then(|s| per_key(s, &[col::NAME], col::TOTAL_DIRECT_KERNEL_TIME_MS, 1.0))
    };
    match (ops_of(base), ops_of(var)) {
        (Some(b), Some(v)) => {
            let c = compare_items(&b, &v, false, opts);
            check_op_coverage(&c, base, var, opts, f);
            Some(c)
        }
        (None, None) => {
            f.note("neither report has ops_summary: ops not compared".into());
            None
        }
        (b, _) => {
            let who = if b.is_none() { &base.tag } else { &var.tag };
            f.inconclusive(format!(
                "report {who:?} has no usable ops_summary: ops cannot be compared"
            ));
            None
        }
    }
}

/// Compares the ops by name and shape (`ops_unique_args`), when both
/// sides have the sheet.
fn compare_op_shapes(base: &Input, var: &Input, opts: &GateOptions) -> Option<ItemComparison> {
    let shapes_of = |i: &Input| {
        i.sheet(sheet::OPS_UNIQUE_ARGS)
            .and_then(|s| per_key(s, SHAPE_KEYS, col::TOTAL_DIRECT_KERNEL_TIME_SUM, 1000.0))
    };
    match (shapes_of(base), shapes_of(var)) {
        (Some(b), Some(v)) => Some(compare_items(&b, &v, true, opts)),
        _ => None,
    }
}

/// Notes the items of `c` (`what`: "op(s)", "op shape(s)") that got slower
/// beyond the limit, naming the worst by `label`.
fn note_over_limit(
    c: Option<&ItemComparison>,
    what: &str,
    label: impl Fn(&Change) -> String,
    f: &mut Findings,
) {
    let Some((c, first)) = c.and_then(|c| Some((c, c.over_limit.first()?))) else {
        return;
    };
    f.note(format!(
        "{} {what} got slower beyond the limit, most: {} {} ({})",
        c.over_limit.len(),
        label(first),
        fmt_signed_ms(first.delta_ms),
        fmt_pct(first.delta_pct)
    ));
}

/// The verdict from what was found: inconclusive wins over everything, then
/// no gate, then a regression.
fn verdict_of(inconclusive: bool, gated: bool, regressed: bool) -> Verdict {
    if inconclusive {
        Verdict::Inconclusive
    } else if !gated {
        Verdict::NotGated
    } else if regressed {
        Verdict::Regression
    } else {
        Verdict::Pass
    }
}

/// The reason given for a pass: the limits nothing went beyond.
fn pass_reason(opts: &GateOptions) -> String {
    format!(
        "nothing got slower by more than {}%{}",
        opts.fail_above_pct.unwrap_or(0.0),
        if opts.min_ms > 0.0 {
            format!(" and {}", fmt_ms(opts.min_ms))
        } else {
            String::new()
        }
    )
}

/// Judges one variant against the baseline.
fn gate_one(base: &Input, var: &Input, opts: &GateOptions) -> VariantGate {
    let mut f = Findings::default();

    let (bt, vt) = (timeline_of(base), timeline_of(var));
    let timeline = timeline_rows(bt.as_ref(), vt.as_ref());
    let busy_time = timeline
        .iter()
        .find(|r| r.kind == row::BUSY_TIME && r.baseline_ms.is_some() && r.variant_ms.is_some())
        .cloned();
    let missing_in = if bt.is_none() { &base.tag } else { &var.tag };
    let busy_time_over_limit = judge_busy_time(busy_time.as_ref(), missing_in, opts, &mut f);

    let ops = compare_ops(base, var, opts, &mut f);
    note_over_limit(ops.as_ref(), "op(s)", |c| c.name.clone(), &mut f);
    let op_shapes = compare_op_shapes(base, var, opts);
    note_over_limit(
        op_shapes.as_ref(),
        "op shape(s)",
        |c| format!("{} {}", c.name, c.input_dims.as_deref().unwrap_or("")),
        &mut f,
    );

    let regressed = busy_time_over_limit
        || ops.as_ref().is_some_and(|c| !c.over_limit.is_empty())
        || op_shapes.as_ref().is_some_and(|c| !c.over_limit.is_empty());
    let verdict = verdict_of(f.inconclusive, opts.fail_above_pct.is_some(), regressed);
    if verdict == Verdict::Pass {
        f.note(pass_reason(opts));
    }
    VariantGate {
        variant: Side {
            name: var.tag.clone(),
            input: var.source.clone(),
        },
        verdict,
        reasons: f.reasons,
        timeline,
        busy_time,
        busy_time_over_limit,
        ops,
        op_shapes,
        where_moved: None,
        changes: super::Changes::default(),
    }
}

/// Runs the gate for every variant (`inputs[1..]`) against the baseline
/// (`inputs[0]`).
///
/// A variant **regresses** when, with a `fail_above_pct` set, the GPU busy
/// time, an op's kernel time (by name, from `ops_summary`) or an op+shape's
/// kernel time (from `ops_unique_args`) grew by more than that percentage
/// and by at least `min_ms`. It is **inconclusive** when the runs cannot be
/// compared: a report lacks the busy time, one report has `ops_summary` and
/// the other does not, one side has no op time, or more than
/// `max_unmatched_pct` of either side's op kernel time is in ops (by name)
/// the other side lacks. Inconclusive wins over regression. The overall
/// verdict is the worst one; the exit code is 1 for regression or
/// inconclusive when a gate was asked, else 0.
pub fn gate(inputs: &[Input], opts: &GateOptions) -> Gate {
    let comparisons: Vec<VariantGate> = match inputs.split_first() {
        Some((base, vars)) => vars.iter().map(|v| gate_one(base, v, opts)).collect(),
        None => Vec::new(),
    };
    let verdict = comparisons
        .iter()
        .map(|c| c.verdict)
        .max()
        .unwrap_or(Verdict::NotGated);
    let exit_code = match verdict {
        _ if opts.fail_above_pct.is_none() => 0,
        Verdict::Regression | Verdict::Inconclusive => 1,
        _ => 0,
    };
    let mut g = Gate {
        schema_version: SCHEMA_VERSION,
        tool: "tracelens".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        verdict,
        exit_code,
        gate: *opts,
        baseline: inputs.first().map_or(
            Side {
                name: String::new(),
                input: String::new(),
            },
            |b| Side {
                name: b.tag.clone(),
                input: b.source.clone(),
            },
        ),
        comparisons,
        health: inputs
            .iter()
            .map(|i| {
                let side = Side {
                    name: i.tag.clone(),
                    input: i.source.clone(),
                };
                (side, i.health.clone())
            })
            .collect(),
    };
    find_changes(&mut g, inputs);
    g
}

/// Runs the change rules on every variant of `g` against the baseline
/// (again, after the tree diffs are attached to `g`'s comparisons).
/// `inputs` are the gate's inputs.
pub fn find_changes(g: &mut Gate, inputs: &[Input]) {
    let Some((base, vars)) = inputs.split_first() else {
        return;
    };
    let min_ms = g.gate.min_ms;
    for (c, v) in g.comparisons.iter_mut().zip(vars) {
        let found = super::change::changes(&super::change::Sides {
            base,
            variant: v,
            gate: c,
            min_ms,
        });
        c.changes = found;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::commands::compare::tests::gate_inputs;

    #[test]
    fn gate_thresholds() {
        let opts = |p: f64, m: f64| GateOptions {
            fail_above_pct: Some(p),
            min_ms: m,
            ..GateOptions::default()
        };
        // add: 1.0 -> 1.2 ms is +20% and +0.2 ms.
        let inputs = gate_inputs(11.0, 11.2, &[("mm", 10.0), ("add", 1.2)]);
        let g = gate(&inputs, &opts(10.0, 0.0));
        assert_eq!(g.verdict, Verdict::Regression);
        assert_eq!(g.exit_code, 1);
        let ops = g.comparisons[0].ops.as_ref().unwrap();
        assert_eq!(ops.over_limit.len(), 1);
        assert_eq!(ops.over_limit[0].name, "add");
        assert!((ops.over_limit[0].delta_pct.unwrap() - 20.0).abs() < 1e-9);
        // Busy time +1.8% is within 10%.
        assert!(!g.comparisons[0].busy_time_over_limit);
        // Above the percentage but under the floor: pass.
        assert_eq!(gate(&inputs, &opts(10.0, 0.25)).verdict, Verdict::Pass);
        // Under the percentage: pass.
        assert_eq!(gate(&inputs, &opts(25.0, 0.0)).verdict, Verdict::Pass);
        // No gate: never fails.
        let g = gate(&inputs, &GateOptions::default());
        assert_eq!((g.verdict, g.exit_code), (Verdict::NotGated, 0));
    }

    #[test]
    fn gate_inconclusive_when_ops_do_not_match() {
        // 10 of 11 ms of the baseline's op time is in "mm", absent in new.
        let inputs = gate_inputs(11.0, 11.0, &[("bmm", 10.0), ("add", 1.0)]);
        let g = gate(
            &inputs,
            &GateOptions {
                fail_above_pct: Some(5.0),
                ..GateOptions::default()
            },
        );
        assert_eq!(g.verdict, Verdict::Inconclusive);
        assert_eq!(g.exit_code, 1);
        let reason = g.comparisons[0].reasons.join("\n");
        assert!(reason.contains("90.9%"), "{reason}");
    }
}
