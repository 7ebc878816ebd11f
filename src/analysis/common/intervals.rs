//! Interval arithmetic on GPU activity, exactly as the reference does it:
//! stable sort by start, merge touching intervals, lengths summed left to right.

/// A half-open interval `[start, end)` in microseconds.
pub type Interval = (f64, f64);

/// Union of intervals: sorted, disjoint. Touching intervals merge.
pub fn union(v: Vec<Interval>) -> Vec<Interval> {
    let mut out: Vec<Interval> = Vec::with_capacity(v.len().min(1024));
    merged(v, |i| out.push(i));
    out
}

/// Sorts `v` by start and hands each interval of its union to `each`, in
/// order ([`union`] without holding the union).
fn merged(mut v: Vec<Interval>, mut each: impl FnMut(Interval)) {
    // Stable: equal starts keep input order, as Python's sort does.
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut cur: Option<Interval> = None;
    for (s, e) in v {
        match &mut cur {
            Some(c) if s <= c.1 => {
                if e > c.1 {
                    c.1 = e;
                }
            }
            _ => {
                if let Some(done) = cur.replace((s, e)) {
                    each(done);
                }
            }
        }
    }
    if let Some(done) = cur {
        each(done);
    }
}

/// `b - a` for sorted, disjoint lists: the parts of `b` not covered by `a`.
pub fn subtract(b: &[Interval], a: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(bs, be) in b {
        // A intervals ending at or before this start can never matter again.
        while j < a.len() && a[j].1 <= bs {
            j += 1;
        }
        let mut cur = bs;
        let mut k = j;
        while k < a.len() && a[k].0 < be {
            let (as_, ae) = a[k];
            if as_ > cur {
                out.push((cur, as_));
            }
            if ae > cur {
                cur = ae;
            }
            k += 1;
        }
        if cur < be {
            out.push((cur, be));
        }
    }
    out
}

/// Total length, summed left to right from zero.
pub fn length(v: &[Interval]) -> f64 {
    v.iter().fold(0.0, |acc, (s, e)| acc + (e - s))
}

/// How much of `iv` the sorted, disjoint intervals `union` cover.
pub fn covered(union: &[Interval], iv: Interval) -> f64 {
    let (a, b) = iv;
    // The first interval ending after `a`; the rest start in order.
    let first = union.partition_point(|&(_, e)| e <= a);
    let mut total = 0.0;
    for &(s, e) in &union[first..] {
        if s >= b {
            break;
        }
        total += e.min(b) - s.max(a);
    }
    total.max(0.0)
}

/// Busy time: the length of the union of the intervals.
pub fn busy_time(v: Vec<Interval>) -> f64 {
    // As `length(&union(v))`, the same sum in the same order, without
    // holding the union (as long as `v` when nothing overlaps).
    let mut total = 0.0;
    merged(v, |(s, e)| total += e - s);
    total
}

/// Busy time of a set of events: the union of their `[ts, ts + dur]`.
pub fn events_busy_time(trace: &crate::trace::Trace, events: &[crate::trace::EventId]) -> f64 {
    busy_time(
        events
            .iter()
            .map(|&k| {
                let e = trace.event(k);
                (e.ts, e.t_end())
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_counts_the_overlap_only() {
        let u = [(0.0, 3.0), (5.0, 9.0), (12.0, 13.0)];
        assert_eq!(covered(&u, (2.0, 6.0)), 2.0);
        assert_eq!(covered(&u, (3.0, 5.0)), 0.0);
        assert_eq!(covered(&u, (-1.0, 20.0)), 8.0);
        assert_eq!(covered(&u, (6.0, 7.0)), 1.0);
        assert_eq!(covered(&[], (0.0, 1.0)), 0.0);
    }

    #[test]
    fn union_merges_overlapping_and_touching() {
        let u = union(vec![
            (5.0, 7.0),
            (0.0, 2.0),
            (2.0, 3.0),
            (6.0, 9.0),
            (10.0, 10.0),
        ]);
        assert_eq!(u, vec![(0.0, 3.0), (5.0, 9.0), (10.0, 10.0)]);
        assert_eq!(length(&u), 7.0);
    }

    #[test]
    fn subtract_leaves_uncovered_gaps() {
        let b = vec![(0.0, 10.0), (20.0, 30.0)];
        let a = vec![(2.0, 4.0), (8.0, 22.0), (25.0, 26.0)];
        assert_eq!(
            subtract(&b, &a),
            vec![(0.0, 2.0), (4.0, 8.0), (22.0, 25.0), (26.0, 30.0)]
        );
        assert_eq!(subtract(&b, &[]), b);
        assert!(subtract(&[(1.0, 2.0)], &[(0.0, 5.0)]).is_empty());
    }

    #[test]
    fn busy_time_of_nested_intervals_counts_once() {
        assert_eq!(busy_time(vec![(0.0, 10.0), (1.0, 2.0), (3.0, 4.0)]), 10.0);
        assert_eq!(busy_time(vec![]), 0.0);
    }

    #[test]
    fn busy_time_is_the_length_of_the_union_to_the_bit() {
        let mut next = crate::test_support::draws(0x2545_f491_4f6c_dd1d);
        for n in [1, 2, 7, 100, 5000] {
            // Thirds of microseconds: sums that round, in every order.
            let v: Vec<Interval> = (0..n)
                .map(|_| {
                    let s = next(1_000_000) as f64 / 3.0;
                    (s, s + next(3000) as f64 / 3.0)
                })
                .collect();
            let want = length(&union(v.clone()));
            assert_eq!(busy_time(v).to_bits(), want.to_bits(), "{n} intervals");
        }
    }
}
