//! The statistics of a list of nanosecond durations as the Perfetto
//! reports compute them: plain Python (`statistics.pstdev`) for the HIP API
//! report, numpy for the activity report; and their human-readable times.

use crate::numeric::{np_mean, np_std_pop, py_pstdev_int};
use crate::table::Value;

/// Mean, median, min, max and population standard deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stats {
    pub total: i64,
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    pub std: f64,
}

impl Stats {
    /// Python's statistics of a list (zeros for an empty one): the mean
    /// from the exact sum, the median of the sorted list, `pstdev` (0 for
    /// one value).
    pub fn python(values: &[i64]) -> Stats {
        if values.is_empty() {
            return Stats::zero();
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let total: i128 = sorted.iter().map(|&v| i128::from(v)).sum();
        let median = if n % 2 == 1 {
            sorted[n / 2] as f64
        } else {
            (i128::from(sorted[n / 2 - 1]) + i128::from(sorted[n / 2])) as f64 / 2.0
        };
        Stats {
            total: total as i64,
            count: n,
            mean: py_int_div(total, n as i128),
            median,
            min: sorted[0],
            max: sorted[n - 1],
            std: py_pstdev_int(&sorted),
        }
    }

    /// numpy's statistics of an int64 array: `sum`, `mean` and `std`
    /// (pairwise over the values as floats), `median`.
    pub fn numpy(values: &[i64]) -> Stats {
        if values.is_empty() {
            return Stats::zero();
        }
        let floats: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2] as f64
        } else {
            (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
        };
        Stats {
            total: values.iter().fold(0i64, |a, &v| a.wrapping_add(v)),
            count: n,
            mean: np_mean(&floats),
            median,
            min: sorted[0],
            max: sorted[n - 1],
            std: np_std_pop(&floats),
        }
    }

    fn zero() -> Stats {
        Stats {
            total: 0,
            count: 0,
            mean: 0.0,
            median: 0.0,
            min: 0,
            max: 0,
            std: 0.0,
        }
    }
}

/// Python's `a / b` of integers: the exact quotient rounded once. Exact
/// here for sums below 2^53 ns (104 days); beyond, off by at most an ulp.
fn py_int_div(a: i128, b: i128) -> f64 {
    a as f64 / b as f64
}

/// A duration as the activity report prints it: `x.xxx ms` from 1 ms,
/// `x.xxx μs` (Greek mu) from 1 µs, else whole `ns`.
pub(crate) fn human_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} μs", ns / 1e3)
    } else {
        format!("{} ns", ns.trunc() as i64)
    }
}

/// The text and number cells of one summary row: the eight text
/// statistics first, the seven numbers last (see
/// [`crate::names::perfetto::TEXT_STATS`], [`crate::names::perfetto::NUMBER_STATS`]).
pub(crate) fn summary_cells(s: &Stats, baseline_ns: i64) -> (Vec<Value>, Vec<Value>) {
    let frac = if baseline_ns > 0 {
        s.total as f64 / baseline_ns as f64
    } else {
        0.0
    };
    let pct = frac * 100.0;
    let text = |t: String| Value::Text(t.into());
    let texts = vec![
        text(format!("{pct:.1}%")),
        text(human_time(s.total as f64)),
        Value::Int(s.count as i64),
        text(human_time(s.mean)),
        text(human_time(s.median)),
        text(human_time(s.min as f64)),
        text(human_time(s.max as f64)),
        text(human_time(s.std)),
    ];
    let numbers = vec![
        Value::Float(pct),
        Value::Int(s.total),
        Value::Float(s.mean),
        Value::Float(s.median),
        Value::Int(s.min),
        Value::Int(s.max),
        Value::Float(s.std),
    ];
    (texts, numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_and_numpy_statistics() {
        // Values from Python 3.12: statistics.pstdev, np.std.
        let p = Stats::python(&[131_000, 129_000, 130_000]);
        assert_eq!(p.std, 816.4965809277261);
        assert_eq!(
            (p.min, p.max, p.mean, p.median),
            (129_000, 131_000, 130_000.0, 130_000.0)
        );
        assert_eq!(Stats::python(&[5000, 6000, 6000]).std, 471.4045207910317);
        assert_eq!(Stats::python(&[7]).std, 0.0);
        assert_eq!(Stats::python(&[]).count, 0);
        let n = Stats::numpy(&[5000, 6000, 6000]);
        assert_eq!(n.mean, 5666.666666666667);
        assert_eq!(n.std, 471.4045207910317);
        assert_eq!(Stats::numpy(&[40_000, 42_000]).median, 41_000.0);
    }

    #[test]
    fn human_times() {
        assert_eq!(human_time(40_000.0), "40.000 μs");
        assert_eq!(human_time(471.40452), "471 ns");
        assert_eq!(human_time(2_500_000.0), "2.500 ms");
        assert_eq!(human_time(0.0), "0 ns");
    }
}
