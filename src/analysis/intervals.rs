//! Interval arithmetic on GPU activity, exactly as the reference does it:
//! stable sort by start, merge touching intervals, lengths summed left to right.

/// A half-open interval `[start, end)` in microseconds.
pub type Interval = (f64, f64);

/// Union of intervals: sorted, disjoint. Touching intervals merge.
pub fn union(mut v: Vec<Interval>) -> Vec<Interval> {
    // Stable: equal starts keep input order, as Python's sort does.
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<Interval> = Vec::with_capacity(v.len().min(1024));
    for (s, e) in v {
        match out.last_mut() {
            Some(cur) if s <= cur.1 => {
                if e > cur.1 {
                    cur.1 = e;
                }
            }
            _ => out.push((s, e)),
        }
    }
    out
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

/// Busy time: the length of the union of the intervals.
pub fn busy_time(v: Vec<Interval>) -> f64 {
    length(&union(v))
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
}
