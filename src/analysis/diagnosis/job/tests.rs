//! The job's check and rules on hand-built jobs: every expected number
//! is worked out in the comments from the starts and durations given.

use super::*;
use crate::analysis::diagnosis::rules::arrivals::{SKEW, STRAGGLER, binomial_tail_pct};
use crate::analysis::diagnosis::{Confidence, Severity};

/// A job of `k` collectives on `offsets.len()` ranks: collective `c`
/// starts on rank `r` at `1000 c + offsets(c)[r]` µs and every rank's
/// kernel ends at `1000 c + end` µs (an implicit-sync collective ends
/// together). One process group, paired by position.
fn job(k: usize, ranks: usize, offsets: impl Fn(usize, usize) -> f64, end: f64) -> Job {
    let collectives = (0..k)
        .map(|c| {
            let t0 = 1000.0 * c as f64;
            let arrivals: Vec<Arrival> = (0..ranks)
                .map(|r| {
                    let start = t0 + offsets(c, r);
                    Arrival {
                        rank: r as i64,
                        start_us: start,
                        dur_us: t0 + end - start,
                    }
                })
                .collect();
            let latency = arrivals.iter().map(|a| a.dur_us).fold(f64::MAX, f64::min);
            Matched {
                id: c.to_string(),
                kind: "allreduce".into(),
                latency_us: latency,
                arrivals,
            }
        })
        .collect();
    Job {
        world_size: ranks,
        ranks,
        empty_ranks: Vec::new(),
        groups: vec![group(
            (0..ranks as i64).map(|r| (r, k)).collect(),
            Matching::Position,
            0,
        )],
        collectives,
        kernel_names: vec![
            vec!["ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)".into()];
            ranks
        ],
        rank_traces: (0..ranks).map(|r| format!("rank{r}.json")).collect(),
    }
}

fn group(counts: Vec<(i64, usize)>, matching: Matching, unmatched: usize) -> GroupCounts {
    GroupCounts {
        label: "process group 0".into(),
        counts,
        matching,
        unmatched,
        note: None,
    }
}

/// Ranks 0-2 arrive at +0, +5, +10 µs, rank 3 at +210: 200 µs after the
/// next latest; every kernel ends at +300.
fn straggler_job() -> Job {
    job(
        10,
        4,
        |_, r| if r == 3 { 210.0 } else { 5.0 * r as f64 },
        300.0,
    )
}

fn evidence(f: &Finding, name: &str) -> f64 {
    f.evidence
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no evidence {name}"))
        .value
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn the_rank_the_others_wait_for_is_the_straggler() {
    let d = diagnose_job(&straggler_job());
    assert_eq!(d.checks[0].status, Status::Pass);
    assert!(d.abstained.is_empty(), "{:?}", d.abstained);
    // The other ranks' spread (10 µs) is below the 20 µs floor: no skew.
    let ids: Vec<&str> = d.findings.iter().map(|f| f.id).collect();
    assert_eq!(ids, [STRAGGLER]);
    let f = &d.findings[0];
    assert_eq!(f.subject.as_deref(), Some("rank 3"));
    close(evidence(f, "straggler_rank"), 3.0);
    close(evidence(f, "times_last"), 10.0);
    close(evidence(f, "last_share"), 100.0);
    close(evidence(f, "mean_lateness"), 200.0);
    // 10 collectives x 200 µs.
    close(f.impact.mid_ms, 2.0);
    close(f.impact.low_ms, 1.0);
    // rank 3 at +210 against the others' mean start +5: 205 µs, x 10.
    close(f.impact.high_ms, 2.05);
    // From 0 to the last end, 9000 + 300 µs.
    close(f.impact.base_ms, 9.3);
    // 2 / 9.3 = 21.5% of the span; the ends agree.
    assert_eq!(f.severity, Severity::High);
    assert_eq!(f.confidence, Confidence::High);
    let lines: Vec<String> = f.commands.iter().map(|c| c.line("")).collect();
    // Rank 0 waits most (210 µs a collective).
    assert_eq!(
        lines,
        [
            "tracelens report rank3.json",
            "tracelens compare rank0.json rank3.json"
        ]
    );
    assert!(f.summary.contains("ncclKernel_AllReduce_RING_LL_Sum_float"));
    assert!(!f.summary.contains("ncclDevComm"), "{}", f.summary);
}

#[test]
fn spread_arrivals_with_no_one_rank_last_are_skew() {
    // Collective c: rank r arrives at ((r + c) mod 4) x 100 µs, so the
    // last rank rotates (ranks 3 and 2 last 3 times of 10, ranks 1 and 0
    // twice); every kernel ends at +400.
    let j = job(10, 4, |c, r| ((r + c) % 4) as f64 * 100.0, 400.0);
    let d = diagnose_job(&j);
    let ids: Vec<&str> = d.findings.iter().map(|f| f.id).collect();
    assert_eq!(ids, [SKEW]);
    let f = &d.findings[0];
    // The last rank left out, the others arrive over 200 µs, twice the
    // 100 µs latency: every collective is skewed.
    close(evidence(f, "skewed_collectives"), 10.0);
    close(evidence(f, "median_spread"), 200.0);
    close(evidence(f, "median_latency"), 100.0);
    // Each collective: (200 + 100 + 0) / 4 = 75 µs a rank; x 10.
    close(evidence(f, "spread_wait"), 0.75);
    close(f.impact.high_ms, 0.75);
    close(f.impact.mid_ms, 0.375);
    close(f.impact.low_ms, 0.1875);
    close(f.impact.base_ms, 9.4);
    // 0.375 / 9.4 = 4.0%.
    assert_eq!(f.severity, Severity::Medium);
    assert_eq!(f.confidence, Confidence::High);
}

#[test]
fn a_balanced_job_has_no_finding() {
    // Arrivals 2 µs apart (rank 3 always last, by 2 µs: launch jitter).
    let d = diagnose_job(&job(10, 4, |_, r| 2.0 * r as f64, 300.0));
    assert_eq!(d.checks[0].status, Status::Pass);
    assert!(d.findings.is_empty(), "{:?}", d.findings);
    assert!(d.abstained.is_empty());
}

#[test]
fn a_rank_last_at_most_but_not_three_quarters_is_no_straggler() {
    // Rank 3 is 200 µs late at 7 of 10 collectives (70% < 75%); rank 0 at
    // the others.
    let j = job(
        10,
        4,
        |c, r| match (c < 7, r) {
            (true, 3) | (false, 0) => 210.0,
            _ => 5.0 * r as f64,
        },
        300.0,
    );
    let d = diagnose_job(&j);
    assert!(
        d.findings.iter().all(|f| f.id != STRAGGLER),
        "{:?}",
        d.findings
    );
}

#[test]
fn a_failed_mismatch_check_stops_both_rules() {
    let mut j = straggler_job();
    // Rank 3 has 9 collectives, the others 10; realigned, one left out:
    // 10% of the group's collectives unmatched.
    j.groups = vec![group(
        vec![(0, 10), (1, 10), (2, 10), (3, 9)],
        Matching::Realigned,
        1,
    )];
    let d = diagnose_job(&j);
    let c = &d.checks[0];
    assert_eq!(c.status, Status::Fail);
    assert_eq!(c.invalidates, [Figure::MatchedCollectives]);
    let ev = |n: &str| c.evidence.iter().find(|e| e.name == n).unwrap().value;
    assert_eq!(ev("min_count"), 9.0);
    assert_eq!(ev("max_count"), 10.0);
    assert_eq!(ev("ranks_differing"), 1.0);
    assert_eq!(ev("first_differing_rank"), 3.0);
    assert_eq!(ev("collectives_unmatched"), 1.0);
    assert!(d.findings.is_empty());
    let abstained: Vec<(&str, &str)> = d
        .abstained
        .iter()
        .map(|a| (a.id, a.reason.as_str()))
        .collect();
    assert_eq!(
        abstained,
        [
            (STRAGGLER, "health.rank_mismatch is fail"),
            (SKEW, "health.rank_mismatch is fail")
        ]
    );
}

#[test]
fn mismatch_statuses() {
    let status = |g: GroupCounts| {
        let mut j = straggler_job();
        j.groups = vec![g];
        rank_mismatch(&j).status
    };
    let even = vec![(0, 10), (1, 10)];
    let uneven = vec![(0, 100), (1, 99)];
    // Matched by sequence number: exact, but the ranks disagree.
    assert_eq!(
        status(group(uneven.clone(), Matching::Sequence, 1)),
        Status::Warn
    );
    // Realigned, 1 of 100 left out (1% < 5%).
    assert_eq!(
        status(group(uneven.clone(), Matching::Realigned, 1)),
        Status::Warn
    );
    // Realigned, 5 of 100 left out.
    assert_eq!(status(group(uneven, Matching::Realigned, 5)), Status::Fail);
    // Equal counts, types differ at one position.
    assert_eq!(
        status(group(even.clone(), Matching::Mispaired, 0)),
        Status::Fail
    );
    assert_eq!(status(group(even, Matching::Position, 0)), Status::Pass);
    // A warned check does not stop the rules.
    let mut j = straggler_job();
    j.groups = vec![group(vec![(0, 10), (1, 11)], Matching::Sequence, 1)];
    let d = diagnose_job(&j);
    assert_eq!(d.checks[0].status, Status::Warn);
    assert_eq!(d.findings[0].id, STRAGGLER);
}

#[test]
fn missing_and_empty_ranks_fail_and_nothing_to_compare_cannot_tell() {
    let mut j = straggler_job();
    j.world_size = 6;
    let c = rank_mismatch(&j);
    assert_eq!(c.status, Status::Fail);
    assert!(c.summary.contains("ranks 4-5"), "{}", c.summary);
    let mut j = straggler_job();
    j.empty_ranks = vec![2];
    let c = rank_mismatch(&j);
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.summary.starts_with("rank 2 has no collective"),
        "{}",
        c.summary
    );
    let mut j = straggler_job();
    j.ranks = 1;
    j.world_size = 1;
    assert_eq!(rank_mismatch(&j).status, Status::CannotTell);
    let none = Job {
        world_size: 2,
        ranks: 2,
        ..Job::default()
    };
    assert_eq!(rank_mismatch(&none).status, Status::CannotTell);
}

#[test]
fn too_few_matched_collectives_cannot_tell() {
    let d = diagnose_job(&job(7, 4, |_, r| if r == 3 { 210.0 } else { 0.0 }, 300.0));
    assert!(d.findings.is_empty());
    assert_eq!(d.abstained.len(), 2);
    assert_eq!(
        d.abstained[0].reason,
        "too few collectives matched across ranks: 7 (needs 8)"
    );
}

#[test]
fn chance_of_arriving_last() {
    // All 8 of 8 at p = 1/2: 1/256.
    close(binomial_tail_pct(8, 8, 0.5), 100.0 / 256.0);
    // 6 or more of 8: (28 + 8 + 1) / 256.
    close(binomial_tail_pct(8, 6, 0.5), 100.0 * 37.0 / 256.0);
    close(binomial_tail_pct(8, 0, 0.5), 100.0);
}

#[test]
fn a_straggler_whose_collectives_end_late_counts_its_largest_lateness() {
    // As the straggler job, but rank 3's kernel runs 300 µs from its own
    // start (its ends 210 µs after the others'), its lateness 100 µs at
    // collective c < 5 and 400 µs after.
    let mut j = job(
        10,
        4,
        |c, r| match r {
            3 if c < 5 => 110.0,
            3 => 410.0,
            _ => 5.0 * r as f64,
        },
        300.0,
    );
    for c in &mut j.collectives {
        c.arrivals[3].dur_us = 300.0;
    }
    let d = diagnose_job(&j);
    let f = d.findings.iter().find(|f| f.id == STRAGGLER).unwrap();
    assert_eq!(f.confidence, Confidence::Medium);
    close(f.impact.mid_ms, 0.4);
    // Summed: 5 x 100 + 5 x 400 µs.
    close(f.impact.high_ms, 2.5);
}
