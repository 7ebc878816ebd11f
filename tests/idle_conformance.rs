//! Conformance of the idle sheets with Holistic Trace Analysis (HTA) on
//! every trace of `../shared/corpus/hta/`:
//!
//! - `idle_breakdown`'s HTA columns (`stream`, `idle_category`,
//!   `idle_time`, `idle_time_ratio`) equal HTA's `idle_time_breakdown.csv`
//!   exactly, row for row (tolerance: none; HTA rounds events to whole µs,
//!   so every figure is an integer or a 2-decimal ratio);
//! - each gap of `idle_gaps` (`--idle-details`) has HTA's category and
//!   length from HTA's own per-kernel frame (`idle_time_per_gap.csv.gz`);
//! - HTA's rules without the rounding equal HTA's `no_ns_rounding/`
//!   outputs within 0.01 µs and 0.01 of ratio (its 2-decimal rounding and
//!   the summation order);
//! - the sheet's exact columns equal those outputs within the same
//!   tolerance on the traces none of HTA's departures from the trace
//!   touches (docs/deviations.md lists them and the traces they touch).
//!
//! Ignored (build.rs sets `cfg(no_shared_corpus)`) when `../shared/corpus`
//! is absent.

mod common;

use std::path::Path;

use common::{Table, csv_file, hta_traces, report_csv};
use tracelens::analysis::pytorch::idle::{Links, Rules, totals};
use tracelens::numeric::np_round2;
use tracelens::trace::Needs;

/// Traces where HTA drops the last profiler step or gives GPU events with
/// no launch in the trace a launch time: our exact figures differ there
/// by design.
const HTA_DEPARTS: &[&str] = &[
    "a100_allreduce_2rank",
    "mi250_minitoy_train",
    "h100_qwen15_05b",
    "mi300_qwen15_05b",
    "mi300_normalization_layers",
];

/// A cell as a number (empty: NaN).
fn num(s: &str) -> f64 {
    if s.is_empty() {
        f64::NAN
    } else {
        s.parse()
            .unwrap_or_else(|_| panic!("{s:?} is not a number"))
    }
}

/// Equal numbers, NaN equal to NaN.
fn same(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol
}

/// HTA's breakdown rows as (stream, category, idle_time, ratio).
fn hta_rows(path: &Path) -> Vec<(String, String, f64, f64)> {
    let (h, rows) = csv_file(path);
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    rows.iter()
        .map(|r| {
            (
                r[c("stream")].clone(),
                r[c("idle_category")].clone(),
                num(&r[c("idle_time")]),
                num(&r[c("idle_time_ratio")]),
            )
        })
        .collect()
}

/// The problems of our `idle_breakdown` columns `time`/`ratio` against
/// `want`, within `tol`.
fn breakdown_problems(
    got: &Table,
    want: &[(String, String, f64, f64)],
    (time, ratio): (&str, &str),
    tol: f64,
) -> Vec<String> {
    let rows: Vec<_> = (0..got.rows.len())
        .filter(|&i| !got.cell(i, time).is_empty())
        .map(|i| {
            (
                got.cell(i, "stream").to_string(),
                got.cell(i, "idle_category").to_string(),
                num(got.cell(i, time)),
                num(got.cell(i, ratio)),
            )
        })
        .collect();
    let ok = rows.len() == want.len()
        && rows
            .iter()
            .zip(want)
            .all(|(g, w)| g.0 == w.0 && g.1 == w.1 && same(g.2, w.2, tol) && same(g.3, w.3, tol));
    if ok {
        Vec::new()
    } else {
        vec![format!("{time}: got {rows:?}\n  want {want:?}")]
    }
}

/// The problems of `idle_gaps` against HTA's per-kernel frame.
fn gap_problems(gaps: &Table, hta_dir: &Path) -> Vec<String> {
    let (h, rows) = csv_file(&hta_dir.join("idle_time_per_gap.csv.gz"));
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    let ours: std::collections::HashMap<&str, usize> = (0..gaps.rows.len())
        .map(|i| (gaps.cell(i, "next_kernel_uid"), i))
        .collect();
    let mut problems = Vec::new();
    let mut matched = 0;
    for r in rows.iter().filter(|r| !r[c("idle_interval")].is_empty()) {
        let uid = &r[c("kernel_event_idx")];
        let Some(&i) = ours.get(uid.as_str()) else {
            problems.push(format!("gap before event {uid}: not in idle_gaps"));
            continue;
        };
        matched += 1;
        let (cat, len) = (
            gaps.cell(i, "idle_category_hta"),
            num(gaps.cell(i, "gap_hta (µs)")),
        );
        if cat != r[c("idle_category")] || len != num(&r[c("idle_interval")]) {
            problems.push(format!(
                "gap before event {uid}: got {cat} {len}, HTA {} {}",
                r[c("idle_category")],
                r[c("idle_interval")]
            ));
        }
    }
    let with_hta = gaps.column("idle_category_hta");
    let extra = with_hta.iter().filter(|c| !c.is_empty()).count();
    if extra != matched {
        problems.push(format!(
            "{extra} gaps with an HTA category, HTA has {matched}"
        ));
    }
    problems.truncate(5);
    problems
}

/// HTA's rules without the rounding, from the library, as breakdown rows.
fn unrounded_rows(trace: &Path) -> Vec<(String, String, f64, f64)> {
    let t = tracelens::load::load(trace, &Needs::EVENTS).unwrap();
    let links = Links::of(&t);
    let rules = Rules {
        round_to_us: false,
        ..Rules::HTA
    };
    let mut out = Vec::new();
    for (s, cats) in totals(&links.gaps(&t, rules)) {
        let sum: f64 = cats.iter().map(|(_, t)| t.idle_us).sum();
        for (cat, t) in cats {
            out.push((
                s.to_string(),
                cat.as_str().to_string(),
                np_round2(t.idle_us),
                np_round2(t.idle_us / sum),
            ));
        }
    }
    out
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn idle_sheets_match_hta_on_every_corpus_trace() {
    let mut failures = Vec::new();
    for (name, dir, trace) in hta_traces("idle_time_breakdown.csv") {
        let (_tmp, out, r) = report_csv(&trace, &["--idle-details"]);
        r.assert_ok();
        let got = Table::load(&out, "idle_breakdown");
        let mut problems = breakdown_problems(
            &got,
            &hta_rows(&dir.join("idle_time_breakdown.csv")),
            ("idle_time", "idle_time_ratio"),
            0.0,
        );
        problems.extend(gap_problems(&Table::load(&out, "idle_gaps"), &dir));
        let no_round = hta_rows(&dir.join("no_ns_rounding/idle_time_breakdown.csv"));
        if !HTA_DEPARTS.contains(&name.as_str()) {
            let cols = ("idle_time_exact (µs)", "idle_time_ratio_exact");
            problems.extend(breakdown_problems(&got, &no_round, cols, 0.01));
        }
        for p in problems {
            failures.push(format!("{name}: {p}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn unrounded_hta_rules_match_hta_without_rounding() {
    let mut failures = Vec::new();
    for (name, dir, trace) in hta_traces("idle_time_breakdown.csv") {
        let got = unrounded_rows(&trace);
        let want = hta_rows(&dir.join("no_ns_rounding/idle_time_breakdown.csv"));
        let ok = got.len() == want.len()
            && got.iter().zip(&want).all(|(g, w)| {
                g.0 == w.0 && g.1 == w.1 && same(g.2, w.2, 0.01) && same(g.3, w.3, 0.01)
            });
        if !ok {
            failures.push(format!("{name}: got {got:?}\n  want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
