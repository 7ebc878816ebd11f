//! When the ranks reach their collectives: the rank the others wait for
//! (`comm.straggler`) and arrival spread that no one rank explains
//! (`comm.skew`), from the collectives matched across ranks.
//!
//! A collective that synchronises its ranks starts its transfer when the
//! last rank arrives; every earlier rank spins in its kernel until then.
//! For one collective with starts `t` on its ranks, the last rank `l`
//! arriving `lateness = t_l - t_2` after the next latest (`t_2`), the
//! wait splits into the part the last rank alone causes (every other rank
//! waits `lateness` longer for it) and the spread of the others,
//! `spread_wait = sum over r != l of (t_2 - t_r) / n`, the mean wait per
//! rank that remains were `l` on time.

use super::super::health::Evidence;
use super::super::job::{Job, Matched};
use super::super::{Command, Confidence, Finding, Impact};
use super::MIN_SHARE_PCT;
use crate::analysis::diagnosis::finding::Arg;

/// The rank the others wait for.
pub const STRAGGLER: &str = "comm.straggler";

/// Ranks reaching the same collective at different times, no one rank
/// to blame.
pub const SKEW: &str = "comm.skew";

/// Fewer collectives matched across ranks than this: the rules cannot
/// tell (a rank's arrival order over a handful of collectives is noise).
pub const MIN_MATCHED: usize = 8;

/// A straggler arrives last at least at this share (%) of its matched
/// collectives.
pub const STRAGGLER_LAST_PCT: f64 = 75.0;

/// ... and arriving last that often by chance (every rank of a
/// collective as likely to be last) has at most this probability (%).
pub const CHANCE_PCT: f64 = 1.0;

/// Lateness and spread below this (µs) are launch jitter, not waiting.
pub const MIN_LATE_US: f64 = 20.0;

/// A collective is skewed when its ranks (the last one left out) arrive
/// spread over at least this many times its latency.
pub const SKEW_RATIO: f64 = 1.0;

/// The ranks' clocks agree when the collectives' ends differ by at most
/// this share of the start differences (an implicit-sync collective ends
/// together on every rank; an offset clock moves both).
pub const ENDS_AGREE_SHARE: f64 = 0.25;

/// One matched collective's arrival order.
struct Order<'a> {
    c: &'a Matched,
    /// The rank arriving strictly after every other, if one does.
    last: Option<i64>,
    /// Its start minus the next latest start, µs (0 without a last).
    lateness: f64,
    /// The next latest start minus the earliest, µs.
    spread: f64,
    /// The others' mean wait for the next latest, µs (`spread_wait`).
    spread_wait: f64,
    /// The last rank's start minus the others' mean start, µs.
    others_wait: f64,
    /// The last rank's end minus the median end of the others, µs.
    end_offset: f64,
    /// Latest end minus earliest end of the others (the last rank left
    /// out), µs.
    end_skew: f64,
}

/// The arrival order of `c`; None with fewer than two ranks with times.
fn order(c: &Matched) -> Option<Order<'_>> {
    let mut a: Vec<(f64, f64, i64)> = c
        .arrivals
        .iter()
        .filter(|a| a.start_us.is_finite() && a.dur_us.is_finite())
        .map(|a| (a.start_us, a.start_us + a.dur_us, a.rank))
        .collect();
    if a.len() < 2 {
        return None;
    }
    a.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.2.cmp(&y.2)));
    let n = a.len() as f64;
    let (t_last, end_last, rank_last) = a[a.len() - 1];
    let t2 = a[a.len() - 2].0;
    let others = &a[..a.len() - 1];
    let last = (t_last > t2).then_some(rank_last);
    let spread_wait = others.iter().map(|x| t2 - x.0).sum::<f64>() / n;
    let mean_others = others.iter().map(|x| x.0).sum::<f64>() / (n - 1.0);
    let mut ends: Vec<f64> = others.iter().map(|x| x.1).collect();
    ends.sort_by(f64::total_cmp);
    let end_skew = ends[ends.len() - 1] - ends[0];
    Some(Order {
        c,
        last,
        lateness: if last.is_some() { t_last - t2 } else { 0.0 },
        spread: t2 - a[0].0,
        spread_wait,
        others_wait: t_last - mean_others,
        end_offset: end_last - median(&ends),
        end_skew,
    })
}

/// The median of sorted `v` (0 when empty).
fn median(v: &[f64]) -> f64 {
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The median of `v`, unsorted.
fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    median(&v)
}

/// The collectives with an arrival order, or why the rules cannot tell.
fn orders(job: &Job) -> Result<Vec<Order<'_>>, String> {
    let o: Vec<Order> = job.collectives.iter().filter_map(order).collect();
    if o.len() < MIN_MATCHED {
        return Err(format!(
            "too few collectives matched across ranks: {} (needs {MIN_MATCHED})",
            o.len()
        ));
    }
    Ok(o)
}

/// What shares are of, ms: the span of the matched collectives, from the
/// earliest start to the latest end over all ranks.
fn span_ms(orders: &[Order]) -> f64 {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for o in orders {
        for a in &o.c.arrivals {
            if a.start_us.is_finite() && a.dur_us.is_finite() {
                lo = lo.min(a.start_us);
                hi = hi.max(a.start_us + a.dur_us);
            }
        }
    }
    if hi > lo { (hi - lo) / 1e3 } else { 0.0 }
}

/// Whether `ms` is at least [`MIN_SHARE_PCT`] of `base_ms`.
fn worth(ms: f64, base_ms: f64) -> bool {
    base_ms > 0.0 && 100.0 * ms / base_ms >= MIN_SHARE_PCT
}

/// P(X >= k) for X binomial (n, p), as a share (%).
pub fn binomial_tail_pct(n: usize, k: usize, p: f64) -> f64 {
    if k == 0 {
        return 100.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 100.0;
    }
    // Terms in logs: ln C(n,i) + i ln p + (n-i) ln(1-p).
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut ln_c = 0.0; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..=n {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        if i >= k {
            sum += (ln_c + i as f64 * lp + (n - i) as f64 * lq).exp();
        }
    }
    100.0 * sum.min(1.0)
}

/// Per rank, its arrivals summed over the matched collectives.
#[derive(Default, Clone)]
struct RankTally {
    /// Collectives it takes part in.
    n: usize,
    /// Of those, where it arrived last.
    last: usize,
    /// Its summed lateness where last, µs.
    lateness: f64,
    /// The others' summed mean wait for it where last, µs.
    others_wait: f64,
    /// The chance of being last, summed over its collectives (1/size).
    chance: f64,
    /// Its summed wait for the latest rank, µs.
    waited: f64,
    /// Lateness and end offset of each collective where it was last.
    late: Vec<(f64, f64)>,
}

/// Every rank's tally, by rank.
fn tallies(orders: &[Order]) -> std::collections::BTreeMap<i64, RankTally> {
    let mut t: std::collections::BTreeMap<i64, RankTally> = Default::default();
    for o in orders {
        let present: Vec<_> =
            o.c.arrivals
                .iter()
                .filter(|a| a.start_us.is_finite() && a.dur_us.is_finite())
                .collect();
        let latest = present
            .iter()
            .map(|a| a.start_us)
            .fold(f64::NEG_INFINITY, f64::max);
        for a in &present {
            let e = t.entry(a.rank).or_default();
            e.n += 1;
            e.chance += 1.0 / present.len() as f64;
            e.waited += latest - a.start_us;
            if o.last == Some(a.rank) {
                e.last += 1;
                e.lateness += o.lateness;
                e.others_wait += o.others_wait;
                e.late.push((o.lateness, o.end_offset));
            }
        }
    }
    t
}

/// The kinds of `orders`' collectives, most frequent first, at most three.
fn kinds<'a>(orders: impl Iterator<Item = &'a Matched>) -> String {
    let mut count: indexmap::IndexMap<&str, usize> = Default::default();
    for c in orders {
        *count.entry(c.kind.as_str()).or_default() += 1;
    }
    let mut v: Vec<(&str, usize)> = count.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.iter()
        .take(3)
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `tracelens SUB FILES…` on rank traces.
fn command(sub: &str, traces: &[String]) -> Command {
    let mut args = vec![Arg::Text(sub.into())];
    args.extend(traces.iter().map(|t| Arg::Text(t.clone())));
    Command { args }
}

/// `comm.straggler`: a rank that arrives last at most of its collectives,
/// more often than chance allows, late enough to matter.
///
/// Impact, against the span of the matched collectives (and at most it):
/// where the collectives end together on every rank, mid = its summed
/// lateness behind the next latest rank where it is last (each other
/// rank's wait for it alone), high = the others' summed mean wait for it;
/// where its collectives end late too, mid = its largest lateness (the
/// lateness carries over), high = the summed lateness; low = mid / 2.
pub fn straggler(job: &Job) -> Result<Vec<Finding>, String> {
    let orders = orders(job)?;
    let base = span_ms(&orders);
    let t = tallies(&orders);
    let Some((&rank, s)) = t
        .iter()
        .filter(|(_, s)| s.n >= MIN_MATCHED && s.last > 0)
        .max_by(|a, b| {
            let share = |s: &RankTally| s.last as f64 / s.n as f64;
            share(a.1)
                .total_cmp(&share(b.1))
                .then(a.1.lateness.total_cmp(&b.1.lateness))
                .then(b.0.cmp(a.0))
        })
    else {
        return Ok(Vec::new());
    };
    let last_pct = 100.0 * s.last as f64 / s.n as f64;
    let chance_pct = binomial_tail_pct(s.n, s.last, s.chance / s.n as f64);
    let delay_ms = s.lateness / 1e3;
    let mean_late_us = s.lateness / s.last as f64;
    if last_pct < STRAGGLER_LAST_PCT
        || chance_pct > CHANCE_PCT
        || mean_late_us < MIN_LATE_US
        || !worth(delay_ms, base)
    {
        return Ok(Vec::new());
    }
    let max_late_us = s.late.iter().map(|l| l.0).fold(0.0, f64::max);
    let end_offset_us = median_of(s.late.iter().map(|l| l.1).collect());
    let median_late_us = median_of(s.late.iter().map(|l| l.0).collect());
    let ends_agree = end_offset_us.abs() <= ENDS_AGREE_SHARE * median_late_us;
    // Where the collectives end together, each one resynchronises the
    // ranks and every lateness is new delay; where the straggler's
    // collectives end late too, its lateness carries from one collective
    // to the next, and the largest is the delay by the end.
    let (mid_ms, high_ms) = if ends_agree {
        (delay_ms, s.others_wait / 1e3)
    } else {
        (max_late_us / 1e3, delay_ms)
    };
    let impact = Impact {
        low_ms: (mid_ms / 2.0).min(base),
        mid_ms: mid_ms.min(base),
        high_ms: high_ms.max(mid_ms).min(base),
        base_ms: base,
    };
    let last_at = orders.iter().filter(|o| o.last == Some(rank)).map(|o| o.c);
    let kinds = kinds(last_at);
    let names = job
        .kernel_names
        .get(rank as usize)
        .map(|n| {
            let short: Vec<&str> = n
                .iter()
                .take(3)
                .map(|k| k.split('(').next().unwrap_or(k))
                .collect();
            short.join(", ")
        })
        .unwrap_or_default();
    let mut summary = format!(
        "rank {rank} arrived last at {} of its {} matched collectives ({kinds}), {mean_late_us:.0} µs on average (at most {max_late_us:.0} µs) after the next latest rank",
        s.last, s.n
    );
    if ends_agree {
        summary += &format!(
            ": each other rank waited {delay_ms:.3} ms in all for it alone ({:.1}% of the {base:.3} ms the matched collectives span)",
            impact.share_pct(delay_ms)
        );
    } else {
        summary += &format!(
            "; its collectives also end {end_offset_us:.0} µs after the others' (median), so the trace does not show the ranks resynchronising at each collective (its lateness carries over, or its clock is offset): the delay counted is its largest lateness, {:.3} ms ({:.1}% of the {base:.3} ms the matched collectives span)",
            impact.mid_ms,
            impact.share_pct(impact.mid_ms)
        );
    }
    if !names.is_empty() {
        summary += &format!("; its collective kernels: {names}");
    }
    let mut f = Finding::new(
        STRAGGLER,
        if ends_agree {
            Confidence::High
        } else {
            Confidence::Medium
        },
        summary,
        impact,
        vec![
            Evidence::new("straggler_rank", rank as f64, "rank"),
            Evidence::new("times_last", s.last as f64, "count"),
            Evidence::new("collectives", s.n as f64, "count"),
            Evidence::new("last_share", last_pct, "%"),
            Evidence::new("chance_of_share", chance_pct, "%"),
            Evidence::new("delay", delay_ms, "ms"),
            Evidence::new("mean_lateness", mean_late_us, "us"),
            Evidence::new("max_lateness", max_late_us, "us"),
            Evidence::new("others_wait", s.others_wait / 1e3, "ms"),
            Evidence::new("median_end_offset", end_offset_us, "us"),
            Evidence::new("span", base, "ms"),
        ],
    );
    f.subject = Some(format!("rank {rank}"));
    f.actions = vec![
        "open the straggler's own report: what it does before its collectives (host gaps, data loading, more or slower GPU work) is what the others wait for",
        "compare it with a rank that waits: the ops whose time differs are its extra work",
        "when the ranks are on different nodes and its collectives also end late, check that the nodes' clocks agree: an offset clock looks like a straggler",
    ];
    let waiter = t
        .iter()
        .filter(|(r, _)| **r != rank)
        .max_by(|a, b| a.1.waited.total_cmp(&b.1.waited).then(b.0.cmp(a.0)))
        .map(|(&r, _)| r);
    f.commands = vec![command("report", &[job.trace_of(rank)])];
    if let Some(w) = waiter {
        f.commands
            .push(command("compare", &[job.trace_of(w), job.trace_of(rank)]));
    }
    Ok(vec![f])
}

/// `comm.skew`: collectives whose ranks, the last one left out, arrive
/// spread over more than the collective takes, the waiting worth a
/// finding.
///
/// Impact: `wait` = the summed `spread_wait` of the skewed collectives
/// (the mean wait per rank that remains with the last rank on time); low
/// = wait / 4, mid = wait / 2, high = wait; against the span of the
/// matched collectives.
pub fn skew(job: &Job) -> Result<Vec<Finding>, String> {
    let orders = orders(job)?;
    let base = span_ms(&orders);
    let skewed: Vec<&Order> = orders
        .iter()
        .filter(|o| o.spread >= MIN_LATE_US && o.spread >= SKEW_RATIO * o.c.latency_us)
        .collect();
    let wait_ms = skewed.iter().map(|o| o.spread_wait).sum::<f64>() / 1e3;
    if skewed.is_empty() || !worth(wait_ms, base) {
        return Ok(Vec::new());
    }
    let median_spread = median_of(skewed.iter().map(|o| o.spread).collect());
    let median_latency = median_of(skewed.iter().map(|o| o.c.latency_us).collect());
    let median_end_skew = median_of(skewed.iter().map(|o| o.end_skew).collect());
    let worst = skewed
        .iter()
        .max_by(|a, b| a.spread_wait.total_cmp(&b.spread_wait))
        .expect("not empty");
    let ends_agree = median_end_skew <= ENDS_AGREE_SHARE * median_spread;
    let impact = Impact {
        low_ms: wait_ms / 4.0,
        mid_ms: wait_ms / 2.0,
        high_ms: wait_ms,
        base_ms: base,
    };
    let kinds = kinds(skewed.iter().map(|o| o.c));
    let mut summary = format!(
        "at {} of {} matched collectives ({kinds}) the ranks arrived spread over more than the collective takes, the last rank left out (median {median_spread:.0} µs against a median latency of {median_latency:.0} µs): each rank waited {wait_ms:.3} ms in all ({:.1}% of the {base:.3} ms the matched collectives span); the widest: collective {} ({}), {:.0} µs from the first to the next-to-last arrival",
        skewed.len(),
        orders.len(),
        impact.share_pct(wait_ms),
        worst.c.id,
        worst.c.kind,
        worst.spread
    );
    if !ends_agree {
        summary += &format!(
            "; the collectives' ends differ too (median {median_end_skew:.0} µs), which offset clocks would explain"
        );
    }
    let mut f = Finding::new(
        SKEW,
        if ends_agree {
            Confidence::High
        } else {
            Confidence::Low
        },
        summary,
        impact,
        vec![
            Evidence::new("collectives", orders.len() as f64, "count"),
            Evidence::new("skewed_collectives", skewed.len() as f64, "count"),
            Evidence::new("spread_wait", wait_ms, "ms"),
            Evidence::new("median_spread", median_spread, "us"),
            Evidence::new("median_latency", median_latency, "us"),
            Evidence::new("median_end_skew", median_end_skew, "us"),
            Evidence::new("widest_spread", worst.spread, "us"),
            Evidence::new("span", base, "ms"),
        ],
    );
    f.subject = Some(format!("collective {}", worst.c.id));
    f.actions = vec![
        "balance the work before the collectives across ranks: uneven batches or sequence lengths, embedding tables or experts with uneven load, per-rank data loading",
        "compare a rank that waits with one that arrives late: the ops whose time differs are the imbalance",
        "when the ranks are on different nodes, check that the nodes' clocks agree: offset clocks look like skew",
    ];
    let t = tallies(&orders);
    let by_wait = |a: &(&i64, &RankTally), b: &(&i64, &RankTally)| {
        a.1.waited.total_cmp(&b.1.waited).then(b.0.cmp(a.0))
    };
    let early = t.iter().max_by(by_wait).map(|(&r, _)| r);
    let late = t.iter().min_by(by_wait).map(|(&r, _)| r);
    if let (Some(e), Some(l)) = (early, late)
        && e != l
    {
        f.commands = vec![command("compare", &[job.trace_of(e), job.trace_of(l)])];
    }
    Ok(vec![f])
}
