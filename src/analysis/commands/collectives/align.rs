//! Checks that every rank of a process group has the same collectives
//! before they are matched across ranks by position, and realigns them
//! when not. The reference pairs the k-th collective of each rank blindly:
//! one kernel missing on one rank (a trace cut short, an event dropped)
//! shifts every later pair and silently changes skew, waits and the
//! slowest-rank verdict.
//!
//! Newer PyTorch writes the process group's sequence number (`Seq`) into
//! each collective kernel's args: where every collective of a group has
//! one, collectives are matched by it. Older traces (the corpus) have
//! none, so a rank with a different count is aligned to the rank with the
//! most collectives by what the kernels carry: the collective's type, size and dtype must agree, and among the
//! alignments with the fewest unmatched collectives the one whose matched
//! collectives end closest in time wins (an implicit-sync collective ends
//! together on every rank). Collectives then seen on only some ranks keep
//! their `nccl_long` rows but are left out of the matched sheets.

use std::collections::{BTreeMap, BTreeSet};

use super::long::{LongRow, Mode};
use crate::analysis::diagnosis::job::{GroupCounts, Matching};

/// What [`check_and_realign`] found.
#[derive(Debug, Default)]
pub(super) struct Alignment {
    /// One line per process group whose ranks disagree.
    pub(super) warnings: Vec<String>,
    /// Collective ids seen on only some ranks of their group.
    pub(super) partial: BTreeSet<String>,
    /// Each group's per-rank counts and how its collectives were matched.
    pub(super) groups: Vec<GroupCounts>,
}

/// A collective's identity as far as the trace tells it.
type Signature = (String, String, String);

fn signature(r: &LongRow) -> Signature {
    (
        r.shown_name().py_str(),
        r.in_nelems.csv_text(),
        r.shown_dtype().py_str(),
    )
}

fn end_time(r: &LongRow) -> f64 {
    r.ts.to_f64() + r.dur.to_f64()
}

/// Checks each process group's per-rank collective counts (and, where they
/// agree, the types of the collectives paired by position); where counts
/// differ, renumbers `index_in_group` and `cid` so that the same collective
/// shares an id across ranks. `world` is the number of ranks: in
/// [`Mode::Simplified`] every rank is in the one group.
pub(super) fn check_and_realign(rows: &mut [LongRow], mode: Mode, world: usize) -> Alignment {
    let mut groups: BTreeMap<String, BTreeMap<i64, Vec<usize>>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key = match mode {
            Mode::Simplified => String::new(),
            Mode::Regular => r.pg_name.py_str(),
        };
        groups
            .entry(key)
            .or_default()
            .entry(r.rank)
            .or_default()
            .push(i);
    }
    let mut out = Alignment::default();
    for (key, mut by_rank) in groups {
        if mode == Mode::Simplified {
            for rank in 0..world as i64 {
                by_rank.entry(rank).or_default();
            }
        }
        for idx in by_rank.values_mut() {
            idx.sort_by_key(|&i| rows[i].index_in_group);
        }
        let label = match mode {
            Mode::Simplified => {
                "the collectives (one group, no process-group metadata)".to_string()
            }
            Mode::Regular => format!("process group {key}"),
        };
        let counts: Vec<(i64, usize)> = by_rank.iter().map(|(&r, v)| (r, v.len())).collect();
        let mut group = GroupCounts {
            label: label.clone(),
            counts: counts.clone(),
            matching: Matching::Position,
            unmatched: 0,
            note: None,
        };
        match by_sequence(rows, &by_rank, mode, &key) {
            SeqMatch::Unusable => {}
            SeqMatch::Agrees => {
                if let Some(w) = positional_mismatch(rows, &by_rank, &label) {
                    group.matching = Matching::Mispaired;
                    group.note = Some(w.clone());
                    out.warnings.push(w);
                }
                out.groups.push(group);
                continue;
            }
            SeqMatch::Renumbered(partial) => {
                let w = seq_warning(&label, &counts, &partial);
                group.matching = Matching::Sequence;
                group.unmatched = partial.len();
                group.note = Some(w.clone());
                out.warnings.push(w);
                out.partial.extend(partial.into_iter().map(|(cid, _)| cid));
                out.groups.push(group);
                continue;
            }
        }
        if counts.iter().all(|c| c.1 == counts[0].1) {
            if let Some(w) = positional_mismatch(rows, &by_rank, &label) {
                group.matching = Matching::Mispaired;
                group.note = Some(w.clone());
                out.warnings.push(w);
            }
            out.groups.push(group);
            continue;
        }
        let partial = realign_group(rows, &by_rank, mode, &key);
        let ids: Vec<&str> = partial.iter().take(5).map(String::as_str).collect();
        let more = if partial.len() > 5 { ", …" } else { "" };
        let w = format!(
            "{label}: {}; matched by type, size and end time instead of position; \
             left out of the matched sheets, as seen on only some ranks: {} ({}{more})",
            count_text(&counts),
            plural(partial.len(), "collective"),
            ids.join(", ")
        );
        group.matching = Matching::Realigned;
        group.unmatched = partial.len();
        group.note = Some(w.clone());
        out.warnings.push(w);
        out.groups.push(group);
        out.partial.extend(partial);
    }
    out
}

/// `1 collective`, `2 collectives`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// "rank 3 has 62 collectives, ranks 0-2, 4-7 have 63".
fn count_text(counts: &[(i64, usize)]) -> String {
    let mut by_count: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
    for &(r, n) in counts {
        by_count.entry(n).or_default().push(r);
    }
    let mut parts: Vec<(usize, Vec<i64>)> = by_count.into_iter().collect();
    // The odd ones out first.
    parts.sort_by_key(|(n, ranks)| (ranks.len(), *n));
    parts
        .iter()
        .map(|(n, ranks)| {
            let (word, verb) = if ranks.len() == 1 {
                ("rank", "has")
            } else {
                ("ranks", "have")
            };
            format!(
                "{word} {} {verb} {}",
                rank_list(ranks),
                plural(*n, "collective")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sorted ranks with runs shortened: `0-2, 4-7`.
fn rank_list(ranks: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => ranks[i].to_string(),
            1 => format!("{}, {}", ranks[i], ranks[j]),
            _ => format!("{}-{}", ranks[i], ranks[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// With equal counts: the first position where two ranks' collectives
/// differ in type, size or dtype, as a warning.
fn positional_mismatch(
    rows: &[LongRow],
    by_rank: &BTreeMap<i64, Vec<usize>>,
    label: &str,
) -> Option<String> {
    let mut ranks = by_rank.iter();
    let (&r0, first) = ranks.next()?;
    for (&r, idx) in ranks {
        for (k, (&a, &b)) in first.iter().zip(idx).enumerate() {
            let (sa, sb) = (signature(&rows[a]), signature(&rows[b]));
            if sa != sb {
                return Some(format!(
                    "{label}: collective {k} is {} on rank {r0} but {} on rank {r}; \
                     paired by position, as the counts agree",
                    sig_text(&sa),
                    sig_text(&sb)
                ));
            }
        }
    }
    None
}

fn sig_text(s: &Signature) -> String {
    let mut t = s.0.clone();
    if !s.1.is_empty() {
        t += &format!(" of {} elements", s.1);
    }
    t
}

/// Renumbers one group's collectives: those of the rank with the most
/// keep their positions, each other rank's are aligned to them; returns
/// the collective ids not seen on every rank of the group.
fn realign_group(
    rows: &mut [LongRow],
    by_rank: &BTreeMap<i64, Vec<usize>>,
    mode: Mode,
    key: &str,
) -> BTreeSet<String> {
    // The first rank with the most collectives is the reference.
    let (_, reference) = by_rank
        .iter()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))
        .expect("a group has a rank");
    let reference = reference.clone();
    let n = reference.len();
    let mut seen = vec![0usize; n];
    let mut extra = n;
    for idx in by_rank.values() {
        let matched = align(rows, &reference, idx);
        for (&i, m) in idx.iter().zip(matched) {
            rows[i].index_in_group = match m {
                Some(k) => {
                    seen[k] += 1;
                    k
                }
                None => {
                    extra += 1;
                    extra - 1
                }
            };
        }
    }
    let ranks = by_rank.len();
    let cid = |k: usize| match mode {
        Mode::Simplified => k.to_string(),
        Mode::Regular => format!("{key}_{k}"),
    };
    for idx in by_rank.values() {
        for &i in idx {
            rows[i].cid = cid(rows[i].index_in_group);
        }
    }
    let mut partial: BTreeSet<String> = (0..n).filter(|&k| seen[k] < ranks).map(cid).collect();
    partial.extend((n..extra).map(cid));
    partial
}

/// One step of the alignment's back-track.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    Start,
    Match,
    SkipReference,
    SkipOther,
}

/// For each collective of `other`, the position in `reference` it matches
/// (None: not there). Fewest unmatched first, then the least total
/// end-time distance between matched collectives; a band around the
/// diagonal bounds the work (counts differ by a few, not by thousands).
fn align(rows: &[LongRow], reference: &[usize], other: &[usize]) -> Vec<Option<usize>> {
    let (n, m) = (reference.len(), other.len());
    let band = n.abs_diff(m) + 16;
    let width = 2 * band + 1;
    // Cell (i, j) lives at i * width + (j + band - centre(i)).
    let centre = |i: usize| (i * m).checked_div(n).unwrap_or(0);
    let slot = |i: usize, j: usize| -> Option<usize> {
        let off = (j + band).checked_sub(centre(i))?;
        (off < width).then_some(i * width + off)
    };
    let mut cost = vec![(u32::MAX, f64::INFINITY); (n + 1) * width];
    let mut step = vec![Step::Start; (n + 1) * width];
    let sigs_ref: Vec<Signature> = reference.iter().map(|&i| signature(&rows[i])).collect();
    let sigs_other: Vec<Signature> = other.iter().map(|&i| signature(&rows[i])).collect();
    cost[slot(0, 0).expect("origin in band")] = (0, 0.0);
    for i in 0..=n {
        for j in 0..=m {
            let Some(here) = slot(i, j) else { continue };
            // The reachable cell before a move, if any.
            let from = |di: usize, dj: usize| {
                let p = slot(i.checked_sub(di)?, j.checked_sub(dj)?)?;
                (cost[p].0 != u32::MAX).then_some(cost[p])
            };
            let mut moves = Vec::with_capacity(3);
            if let Some(c) = from(1, 1).filter(|_| sigs_ref[i - 1] == sigs_other[j - 1]) {
                let d = end_time(&rows[reference[i - 1]]) - end_time(&rows[other[j - 1]]);
                let d = if d.is_finite() { d.abs() } else { 0.0 };
                moves.push(((c.0, c.1 + d), Step::Match));
            }
            if let Some(c) = from(1, 0) {
                moves.push(((c.0 + 1, c.1), Step::SkipReference));
            }
            if let Some(c) = from(0, 1) {
                moves.push(((c.0 + 1, c.1), Step::SkipOther));
            }
            for (c, s) in moves {
                let best = cost[here];
                if c.0 < best.0 || (c.0 == best.0 && c.1 < best.1) {
                    cost[here] = c;
                    step[here] = s;
                }
            }
        }
    }
    let mut out = vec![None; m];
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let Some(here) = slot(i, j) else { break };
        match step[here] {
            Step::Match => {
                out[j - 1] = Some(i - 1);
                i -= 1;
                j -= 1;
            }
            Step::SkipReference => i -= 1,
            Step::SkipOther => j -= 1,
            Step::Start => break,
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Matching by sequence number
// ---------------------------------------------------------------------------

/// What a group's sequence numbers allow.
enum SeqMatch {
    /// Some collective has no `Seq`, or a rank repeats one: use positions.
    Unusable,
    /// Every rank has the same sequence numbers in the same order: the
    /// positional match is already right.
    Agrees,
    /// Renumbered by sequence number; the collectives (id, `Seq`) not seen
    /// on every rank of the group.
    Renumbered(Vec<(String, i64)>),
}

/// A collective's key within its group: point-to-point operations count
/// on their own sequence (PyTorch keeps a separate counter for them).
fn seq_key(r: &LongRow) -> Option<(bool, i64)> {
    let p2p = matches!(r.coll_name.as_str(), Some("send" | "recv"));
    r.seq.map(|s| (p2p, s))
}

/// Matches one group's collectives by `Seq` where every one has it and no
/// rank repeats one; renumbers `index_in_group` and `cid` in order of the
/// earliest start of each sequence number when the ranks disagree.
fn by_sequence(
    rows: &mut [LongRow],
    by_rank: &BTreeMap<i64, Vec<usize>>,
    mode: Mode,
    key: &str,
) -> SeqMatch {
    let mut keys: Vec<Vec<(bool, i64)>> = Vec::with_capacity(by_rank.len());
    for idx in by_rank.values() {
        let Some(ks) = idx
            .iter()
            .map(|&i| seq_key(&rows[i]))
            .collect::<Option<Vec<_>>>()
        else {
            return SeqMatch::Unusable;
        };
        if ks.iter().collect::<BTreeSet<_>>().len() != ks.len() {
            return SeqMatch::Unusable;
        }
        keys.push(ks);
    }
    if keys.iter().all(|k| *k == keys[0]) {
        return SeqMatch::Agrees;
    }
    // Each sequence number: its earliest start and on how many ranks.
    let mut seen: BTreeMap<(bool, i64), (f64, usize)> = BTreeMap::new();
    for idx in by_rank.values() {
        for &i in idx {
            let e = seen
                .entry(seq_key(&rows[i]).expect("checked above"))
                .or_insert((f64::INFINITY, 0));
            e.0 = e.0.min(rows[i].ts.to_f64());
            e.1 += 1;
        }
    }
    let mut order: Vec<((bool, i64), f64)> = seen.iter().map(|(&k, v)| (k, v.0)).collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let position: BTreeMap<(bool, i64), usize> = order
        .iter()
        .enumerate()
        .map(|(k, (s, _))| (*s, k))
        .collect();
    let cid = |k: usize| match mode {
        Mode::Simplified => k.to_string(),
        Mode::Regular => format!("{key}_{k}"),
    };
    for idx in by_rank.values() {
        for &i in idx {
            let k = position[&seq_key(&rows[i]).expect("checked above")];
            rows[i].index_in_group = k;
            rows[i].cid = cid(k);
        }
    }
    let partial = order
        .iter()
        .enumerate()
        .filter(|(_, (s, _))| seen[s].1 < by_rank.len())
        .map(|(k, (s, _))| (cid(k), s.1))
        .collect();
    SeqMatch::Renumbered(partial)
}

/// The warning of a group matched by sequence number.
fn seq_warning(label: &str, counts: &[(i64, usize)], partial: &[(String, i64)]) -> String {
    let what = if counts.iter().all(|c| c.1 == counts[0].1) {
        format!(
            "every rank has {} but not the same sequence numbers in the same order",
            plural(counts[0].1, "collective")
        )
    } else {
        count_text(counts)
    };
    let mut text = format!("{label}: {what}; matched by sequence number (Seq) instead of position");
    if !partial.is_empty() {
        let ids: Vec<String> = partial
            .iter()
            .take(5)
            .map(|(cid, seq)| format!("{cid} (Seq {seq})"))
            .collect();
        let more = if partial.len() > 5 { ", …" } else { "" };
        text += &format!(
            "; left out of the matched sheets, as seen on only some ranks: {}: {}{more}",
            plural(partial.len(), "collective"),
            ids.join(", ")
        );
    }
    text
}
