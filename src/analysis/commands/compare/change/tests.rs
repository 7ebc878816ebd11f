//! The change rules on hand-built report tables.

use super::*;
use crate::analysis::commands::compare::SideHealth;
use crate::analysis::commands::compare::tests::{input, sheet, t};
use crate::analysis::commands::compare::{GateOptions, find_changes, gate};
use crate::analysis::commands::diff::points::PointSide;
use crate::analysis::commands::diff::{DivergencePoint, PointTotals, WhereMoved};
use crate::analysis::diagnosis::Check;
use crate::table::{Table, Value};

const DIMS_MM: &str = "((64, 128), (128, 256))";

/// A report: busy time, ops by name and by shape (op kernel times in ms).
fn report(tag: &str, busy: f64, mm: f64, add: f64) -> Input {
    let tl = sheet(
        "gpu_timeline",
        &["type", "time ms"],
        vec![vec![t("busy_time"), Value::Float(busy)]],
    );
    let ops = sheet(
        "ops_summary",
        &["name", "total_direct_kernel_time_ms"],
        vec![
            vec![t("aten::mm"), Value::Float(mm)],
            vec![t("aten::add"), Value::Float(add)],
        ],
    );
    let shape_row = |name: &str, dims: &str, ms: f64, uid: i64| {
        vec![
            t(name),
            t("('float', 'float')"),
            t(dims),
            t("((128, 1), (256, 1))"),
            t("('', '')"),
            Value::Float(ms * 1000.0),
            Value::Int(uid),
        ]
    };
    let shapes = sheet(
        "ops_unique_args",
        &[
            "name",
            "Input type",
            "Input Dims",
            "Input Strides",
            "Concrete Inputs",
            "total_direct_kernel_time_sum",
            "ex_UID",
        ],
        vec![
            shape_row("aten::mm", DIMS_MM, mm, 42),
            shape_row("aten::add", "((64, 256), (64, 256))", add, 7),
        ],
    );
    input(tag, vec![tl, ops, shapes])
}

fn check(id: &'static str, status: Status) -> Check {
    Check {
        id,
        status,
        summary: format!("{id} summary"),
        evidence: vec![Evidence::new("share_of_gpu_busy", 12.5, "%")],
        events: Vec::new(),
        invalidates: Vec::new(),
    }
}

fn healthy(mut i: Input, no_shapes: Status) -> Input {
    i.health = SideHealth::of_trace(vec![
        check("health.no_gpu", Status::Pass),
        check("health.no_shapes", no_shapes),
    ]);
    i
}

fn run(base: &Input, var: &Input, moved: Option<WhereMoved>) -> Changes {
    let inputs = [base.clone(), var.clone()];
    let mut g = gate(&inputs, &GateOptions::default());
    g.comparisons[0].where_moved = moved;
    find_changes(&mut g, &inputs);
    g.comparisons.remove(0).changes
}

fn ids(c: &Changes) -> Vec<&str> {
    c.findings.iter().map(|f| f.id).collect()
}

fn evidence(f: &Finding, name: &str) -> f64 {
    f.evidence.iter().find(|e| e.name == name).unwrap().value
}

#[test]
fn the_op_that_moved_most_is_named_with_its_shape() {
    // mm: 50 -> 54 ms, +4 ms = 4% of the baseline's 100 ms busy time and
    // 8% of its own; add does not move.
    let c = run(
        &report("base", 100.0, 50.0, 10.0),
        &report("new", 104.0, 54.0, 10.0),
        None,
    );
    assert_eq!(ids(&c), ["change.op_moved"]);
    let f = &c.findings[0];
    assert_eq!(f.subject.as_deref(), Some("aten::mm"));
    assert_eq!(f.shape.as_deref(), Some(DIMS_MM));
    assert!((evidence(f, "delta_ms") - 4.0).abs() < 1e-9);
    assert!((evidence(f, "delta_pct") - 8.0).abs() < 1e-9);
    assert!((evidence(f, "share_of_baseline_busy") - 4.0).abs() < 1e-9);
    assert!((evidence(f, "op_delta_ms") - 4.0).abs() < 1e-9);
    assert_eq!(
        (f.impact.low_ms, f.impact.mid_ms, f.impact.high_ms),
        (2.0, 4.0, 4.0)
    );
    assert_eq!(f.impact.base_ms, 100.0);
    // 4% of the base is from 2% on: medium.
    assert_eq!(f.severity, Severity::Medium);
    // No tree diff to confirm it: medium confidence.
    assert_eq!(f.confidence, Confidence::Medium);
    // Reports, not traces: nothing to diff or replay; the gate that
    // would catch it instead.
    let lines: Vec<String> = f.commands.iter().map(|c| c.line("-")).collect();
    assert_eq!(
        lines,
        ["tracelens compare base.xlsx new.xlsx --fail-above 5"]
    );
    assert!(
        f.summary.contains("got slower by 4.000 ms (+8.0%)"),
        "{}",
        f.summary
    );
    // The kernel rule needs the tree diff.
    let a: Vec<&str> = c.abstained.iter().map(|a| a.id).collect();
    assert!(a.contains(&"change.kernels_changed"), "{a:?}");
}

#[test]
fn silent_when_nothing_changed() {
    let b = healthy(report("base", 100.0, 50.0, 10.0), Status::Pass);
    let c = run(&b, &b.clone(), None);
    assert!(c.findings.is_empty(), "{:?}", c.findings);
}

#[test]
fn silent_under_the_thresholds() {
    // +0.9 ms: 0.9% of the busy time, under 1%.
    let c = run(
        &report("base", 100.0, 50.0, 10.0),
        &report("new", 100.9, 50.9, 10.0),
        None,
    );
    assert!(c.findings.is_empty(), "{:?}", c.findings);
    // +4 ms on a 100 ms op: 4% of its own time, under 5%.
    let c = run(
        &report("base", 200.0, 100.0, 10.0),
        &report("new", 204.0, 104.0, 10.0),
        None,
    );
    assert!(c.findings.is_empty(), "{:?}", c.findings);
}

#[test]
fn a_speedup_is_informational() {
    let c = run(
        &report("base", 100.0, 50.0, 10.0),
        &report("new", 90.0, 40.0, 10.0),
        None,
    );
    assert_eq!(ids(&c), ["change.op_moved"]);
    let f = &c.findings[0];
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.impact.mid_ms, 0.0);
    assert!(
        f.summary.contains("got faster by 10.000 ms (-20.0%)"),
        "{}",
        f.summary
    );
}

#[test]
fn health_that_differs_is_found_and_makes_the_move_suspect() {
    let b = healthy(report("base", 100.0, 50.0, 10.0), Status::Pass);
    let v = healthy(report("new", 104.0, 54.0, 10.0), Status::Fail);
    let c = run(&b, &v, None);
    assert_eq!(ids(&c), ["change.health_differs", "change.op_moved"]);
    let h = &c.findings[0];
    assert_eq!(h.subject.as_deref(), Some("health.no_shapes"));
    assert_eq!(h.severity, Severity::High);
    assert!(
        h.summary
            .starts_with("health.no_shapes is fail on new and pass on base")
    );
    assert_eq!(evidence(h, "new.share_of_gpu_busy"), 12.5);
    assert_eq!(evidence(h, "base.share_of_gpu_busy"), 12.5);
    let lines: Vec<String> = h.commands.iter().map(|c| c.line("-")).collect();
    assert_eq!(lines, ["tracelens report new.xlsx --strict"]);
    assert_eq!(c.findings[1].confidence, Confidence::Low);
    // A warn on both sides is no difference.
    let w = healthy(report("base", 100.0, 50.0, 10.0), Status::Warn);
    let c = run(
        &w,
        &healthy(report("new", 100.0, 50.0, 10.0), Status::Warn),
        None,
    );
    assert!(c.findings.is_empty(), "{:?}", c.findings);
}

#[test]
fn missing_health_cannot_tell() {
    let c = run(
        &report("base", 100.0, 50.0, 10.0),
        &report("new", 100.0, 50.0, 10.0),
        None,
    );
    assert_eq!(c.abstained[0].id, "change.health_differs");
    assert!(c.abstained[0].reason.contains("base has no health checks"));
}

fn point(matched: bool, base: (&[&str], f64), var: (&[&str], f64)) -> DivergencePoint {
    let side = |(k, us): (&[&str], f64)| PointSide {
        busy_us: us,
        kernels: k.len(),
        ops: vec!["aten::mm".into()],
        kernel_names: k.iter().map(|s| s.to_string()).collect(),
    };
    DivergencePoint {
        name: "aten::mm".into(),
        matched,
        occurrences: 1,
        first_id: None,
        base: side(base),
        variant: side(var),
    }
}

fn traces(mut i: Input) -> Input {
    i.health = SideHealth::of_trace(Vec::new());
    i.source = format!("{}.json", i.tag);
    i
}

#[test]
fn kernels_that_changed_under_the_moved_op() {
    let b = traces(report("base", 100.0, 50.0, 10.0));
    let v = traces(report("new", 104.0, 54.0, 10.0));
    let moved = WhereMoved {
        points: vec![point(
            false,
            (&["gemm_a"], 50_000.0),
            (&["gemm_b"], 54_000.0),
        )],
        totals: PointTotals::default(),
    };
    let c = run(&b, &v, Some(moved));
    assert_eq!(ids(&c), ["change.op_moved", "change.kernels_changed"]);
    // The tree diff confirms the op's move: high confidence, its kernels
    // named, diff and replay (the variant's ex_UID) offered.
    let m = &c.findings[0];
    assert_eq!(m.confidence, Confidence::High);
    assert!(
        m.summary.contains("kernels: gemm_a, gemm_b"),
        "{}",
        m.summary
    );
    let lines: Vec<String> = m.commands.iter().map(|c| c.line("-")).collect();
    assert_eq!(
        lines,
        [
            "tracelens diff base.json new.json",
            "tracelens replay new.json --uid 42"
        ]
    );
    let k = &c.findings[1];
    assert_eq!(evidence(k, "baseline_only_kernels"), 1.0);
    assert_eq!(evidence(k, "variant_only_kernels"), 1.0);
    assert_eq!(evidence(k, "delta_ms"), 4.0);
    assert!(
        k.summary
            .contains("only base runs gemm_a; only new runs gemm_b"),
        "{}",
        k.summary
    );
    // The same kernels, only slower: no kernel change.
    let same = WhereMoved {
        points: vec![point(
            true,
            (&["gemm_a"], 50_000.0),
            (&["gemm_a"], 54_000.0),
        )],
        totals: PointTotals::default(),
    };
    let c = run(&b, &v, Some(same));
    assert_eq!(ids(&c), ["change.op_moved"]);
}

#[test]
fn no_op_tables_cannot_tell() {
    let tl = |busy: f64| {
        Table::from_rows(
            "gpu_timeline",
            &["type", "time ms"],
            vec![vec![t("busy_time"), Value::Float(busy)]],
        )
    };
    let c = run(&input("a", vec![tl(1.0)]), &input("b", vec![tl(2.0)]), None);
    let a: Vec<&str> = c.abstained.iter().map(|a| a.id).collect();
    assert_eq!(
        a,
        [
            "change.health_differs",
            "change.op_moved",
            "change.kernels_changed"
        ]
    );
}
