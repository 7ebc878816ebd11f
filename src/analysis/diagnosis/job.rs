//! Diagnosis of a multi-rank job: whether its collectives can be matched
//! across ranks (`health.rank_mismatch`), and the findings of the matched
//! collectives' arrival times (`comm.straggler`, `comm.skew`,
//! [`super::rules::arrivals`]).
//!
//! The facts come from the collectives analysis ([`Job`]): the per-rank
//! collective counts of each process group as its alignment found them,
//! and the start and duration on every rank of each collective matched
//! across ranks. Nothing here reads a trace.

use super::health::{Check, Evidence, FAIL_SHARE_PCT, Status};
use super::rules::arrivals;
use super::{Abstention, Diagnosis, Figure, Finding, finding};

/// The id of the job's health check.
pub const RANK_MISMATCH: &str = "health.rank_mismatch";

/// How one process group's collectives were matched across its ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// Every rank has the same collectives in the same order: paired by
    /// position.
    Position,
    /// The ranks disagree; matched by the process group's sequence number
    /// (`Seq`), which names each collective exactly.
    Sequence,
    /// The counts differ and the traces carry no sequence number: aligned
    /// by type, size and end time, a best guess.
    Realigned,
    /// The counts agree but collectives at one position differ in type or
    /// size: paired by position all the same, so some pairs are wrong.
    Mispaired,
}

/// One process group's collective counts per rank, as the alignment of
/// the collectives analysis found them.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupCounts {
    /// The group for people (`process group 0`, or the one group of a job
    /// without process-group metadata).
    pub label: String,
    /// (rank, collectives of the group on it), by rank.
    pub counts: Vec<(i64, usize)>,
    /// How its collectives were matched.
    pub matching: Matching,
    /// Collectives seen on only some of its ranks (left out of the
    /// matched collectives).
    pub unmatched: usize,
    /// The alignment's line about it, when its ranks disagree.
    pub note: Option<String>,
}

/// One rank's part in a matched collective.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    /// The rank.
    pub rank: i64,
    /// Its kernel's start, µs.
    pub start_us: f64,
    /// Its kernel's duration, µs.
    pub dur_us: f64,
}

/// A collective matched across the ranks of its group (a row of
/// `nccl_implicit_sync`).
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    /// Its `collective_id`.
    pub id: String,
    /// Its type for people (`allreduce`, `all_to_all`, …).
    pub kind: String,
    /// Its latency: the shortest kernel duration over its ranks (the
    /// transfer, without waiting), µs.
    pub latency_us: f64,
    /// Every rank's kernel, in table order.
    pub arrivals: Vec<Arrival>,
}

/// What the job's diagnosis reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Job {
    /// The job's number of ranks.
    pub world_size: usize,
    /// Rank traces analysed (ranks 0..ranks).
    pub ranks: usize,
    /// Ranks whose trace holds no collective kernel.
    pub empty_ranks: Vec<i64>,
    /// Each process group's counts, in the alignment's order.
    pub groups: Vec<GroupCounts>,
    /// The collectives matched across ranks, in table order.
    pub collectives: Vec<Matched>,
    /// Per rank, its distinct collective kernel names (sorted).
    pub kernel_names: Vec<Vec<String>>,
    /// How commands name each rank's trace (index = rank); a rank beyond
    /// it is written `RANK<r>_TRACE`.
    pub rank_traces: Vec<String>,
}

impl Job {
    /// How commands name rank `rank`'s trace.
    pub fn trace_of(&self, rank: i64) -> String {
        usize::try_from(rank)
            .ok()
            .and_then(|r| self.rank_traces.get(r))
            .cloned()
            .unwrap_or_else(|| format!("RANK{rank}_TRACE"))
    }
}

/// A finding rule of a job.
struct JobRule {
    /// The id of the finding it gives.
    id: &'static str,
    /// Its findings, or why it cannot tell.
    run: fn(&Job) -> Result<Vec<Finding>, String>,
}

/// The job's rules; both read the matched collectives.
const JOB_RULES: &[JobRule] = &[
    JobRule {
        id: arrivals::STRAGGLER,
        run: arrivals::straggler,
    },
    JobRule {
        id: arrivals::SKEW,
        run: arrivals::skew,
    },
];

/// The job's health check, then its findings; a failed
/// `health.rank_mismatch` stops the rules (the matched collectives are
/// not the same collectives on every rank).
pub fn diagnose_job(job: &Job) -> Diagnosis {
    let mut d = Diagnosis {
        checks: vec![rank_mismatch(job)],
        findings: Vec::new(),
        abstained: Vec::new(),
    };
    let blocked = d
        .invalidating(Figure::MatchedCollectives)
        .map(|c| format!("{} is {}", c.id, c.status.as_str()));
    for rule in JOB_RULES {
        if let Some(reason) = &blocked {
            d.abstained.push(Abstention {
                id: rule.id,
                reason: reason.clone(),
            });
            continue;
        }
        match (rule.run)(job) {
            Ok(found) => d.findings.extend(found),
            Err(reason) => d.abstained.push(Abstention {
                id: rule.id,
                reason,
            }),
        }
    }
    finding::rank(&mut d.findings);
    d
}

/// `health.rank_mismatch`: ranks missing from the job, ranks without
/// collectives beside ranks with some, and process groups whose ranks
/// disagree on their collectives.
///
/// Fail: a rank trace is missing, a rank has no collective while others
/// have some, a group's collectives were paired by position although
/// their types differ, or a group realigned by type and time left at
/// least [`FAIL_SHARE_PCT`] of its collectives unmatched. Warn: the
/// counts disagree but the collectives were matched by sequence number,
/// or realigned with fewer left unmatched. Cannot tell: one rank, or no
/// collective on any.
pub fn rank_mismatch(job: &Job) -> Check {
    let missing = job.world_size.saturating_sub(job.ranks);
    let any = job.groups.iter().any(|g| g.counts.iter().any(|c| c.1 > 0));
    let mut evidence = vec![
        Evidence::new("world_size", job.world_size as f64, "count"),
        Evidence::new("rank_traces", job.ranks as f64, "count"),
        Evidence::new("ranks_missing", missing as f64, "count"),
        Evidence::new(
            "ranks_without_collectives",
            job.empty_ranks.len() as f64,
            "count",
        ),
        Evidence::new("process_groups", job.groups.len() as f64, "count"),
    ];
    if missing > 0 {
        let summary = format!(
            "{missing} of the job's {} ranks have no trace (ranks {}-{}): their collectives cannot be matched",
            job.world_size,
            job.ranks,
            job.world_size - 1
        );
        return failed(summary, evidence);
    }
    if job.ranks < 2 || !any {
        let why = if job.ranks < 2 {
            "one rank"
        } else {
            "no collective on any rank"
        };
        return check(
            Status::CannotTell,
            format!("nothing to compare across ranks: {why}"),
            evidence,
        );
    }
    if !job.empty_ranks.is_empty() {
        let summary = format!(
            "rank{} {} {} no collective kernel while the others have some: none of their collectives can be matched",
            if job.empty_ranks.len() == 1 { "" } else { "s" },
            rank_list(&job.empty_ranks),
            if job.empty_ranks.len() == 1 {
                "has"
            } else {
                "have"
            }
        );
        evidence.push(Evidence::new(
            "first_rank_without_collectives",
            job.empty_ranks[0] as f64,
            "rank",
        ));
        return failed(summary, evidence);
    }
    // The worst group decides; its numbers are the evidence.
    let graded: Vec<(Status, &GroupCounts)> =
        job.groups.iter().map(|g| (group_status(g), g)).collect();
    let disagreeing = graded.iter().filter(|g| g.0 != Status::Pass).count();
    let unmatched: usize = job.groups.iter().map(|g| g.unmatched).sum();
    evidence.push(Evidence::new(
        "groups_disagreeing",
        disagreeing as f64,
        "count",
    ));
    evidence.push(Evidence::new(
        "collectives_unmatched",
        unmatched as f64,
        "count",
    ));
    let Some(&(status, worst)) = graded.iter().max_by_key(|g| g.0) else {
        return check(Status::CannotTell, "no process group".into(), evidence);
    };
    if status == Status::Pass {
        let n = job.collectives.len();
        return check(
            Status::Pass,
            format!(
                "every rank of each of the {} process group{} has the same collectives; {n} matched across ranks",
                job.groups.len(),
                if job.groups.len() == 1 { "" } else { "s" }
            ),
            evidence,
        );
    }
    let (lo, hi) = count_range(worst);
    let odd = odd_ranks(worst);
    evidence.extend([
        Evidence::new("min_count", lo as f64, "count"),
        Evidence::new("max_count", hi as f64, "count"),
        Evidence::new("ranks_differing", odd.len() as f64, "count"),
    ]);
    if let Some(&r) = odd.first() {
        evidence.push(Evidence::new("first_differing_rank", r as f64, "rank"));
    }
    let how = match worst.matching {
        Matching::Position => "",
        Matching::Sequence => "matched by sequence number",
        Matching::Realigned => "realigned by type, size and end time",
        Matching::Mispaired => "paired by position although the collectives differ",
    };
    let mut summary = match &worst.note {
        Some(note) => format!("{note} ({how})"),
        None => format!("{}: {how}", worst.label),
    };
    if disagreeing > 1 {
        summary += &format!(" (and {} more groups)", disagreeing - 1);
    }
    if status == Status::Fail {
        failed(summary, evidence)
    } else {
        check(status, summary, evidence)
    }
}

/// The status of one group: see [`rank_mismatch`].
fn group_status(g: &GroupCounts) -> Status {
    match g.matching {
        Matching::Position => Status::Pass,
        Matching::Sequence => Status::Warn,
        Matching::Mispaired => Status::Fail,
        Matching::Realigned => {
            let (_, hi) = count_range(g);
            let share = if hi > 0 {
                100.0 * g.unmatched as f64 / hi as f64
            } else {
                100.0
            };
            if share >= FAIL_SHARE_PCT {
                Status::Fail
            } else {
                Status::Warn
            }
        }
    }
}

/// The least and the most collectives a rank of `g` has.
fn count_range(g: &GroupCounts) -> (usize, usize) {
    let lo = g.counts.iter().map(|c| c.1).min().unwrap_or(0);
    let hi = g.counts.iter().map(|c| c.1).max().unwrap_or(0);
    (lo, hi)
}

/// The ranks of `g` whose count is not the most common one (ties: the
/// larger count is the common one), by rank.
fn odd_ranks(g: &GroupCounts) -> Vec<i64> {
    let mut freq: std::collections::BTreeMap<usize, usize> = Default::default();
    for c in &g.counts {
        *freq.entry(c.1).or_default() += 1;
    }
    let Some((&common, _)) = freq.iter().max_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0))) else {
        return Vec::new();
    };
    g.counts
        .iter()
        .filter(|c| c.1 != common)
        .map(|c| c.0)
        .collect()
}

/// `0, 3, 5` (at most eight, then how many more).
fn rank_list(ranks: &[i64]) -> String {
    let mut s: Vec<String> = ranks.iter().take(8).map(|r| r.to_string()).collect();
    if ranks.len() > 8 {
        s.push(format!("and {} more", ranks.len() - 8));
    }
    s.join(", ")
}

/// The check with its fields; nothing invalidated.
fn check(status: Status, summary: String, evidence: Vec<Evidence>) -> Check {
    Check {
        id: RANK_MISMATCH,
        status,
        summary,
        evidence,
        events: Vec::new(),
        invalidates: Vec::new(),
    }
}

/// A failed check: the matched collectives cannot be trusted.
fn failed(summary: String, evidence: Vec<Evidence>) -> Check {
    Check {
        invalidates: vec![Figure::MatchedCollectives],
        ..check(Status::Fail, summary, evidence)
    }
}

#[cfg(test)]
mod tests;
