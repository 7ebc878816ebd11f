//! Bit-exact replicas of the numpy / pandas reductions the reference uses.
//!
//! Floating-point addition is not associative, so a plain left-to-right sum
//! can differ from numpy in the last bits and change a printed `repr`. Each
//! function here follows the summation order of the library it mirrors.

/// Python `int(text)` of a string: surrounding whitespace, a sign and
/// underscores between digits allowed; None where Python raises.
pub fn py_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let ok = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_');
    let v = ok.then(|| digits.replace('_', "").parse::<i128>().ok())??;
    Some(if neg { -v } else { v })
}

/// numpy's pairwise summation (`np.sum` of a contiguous float64 array).
///
/// Below 8 elements a plain loop from `0.0`; up to 128 elements eight
/// interleaved accumulators combined as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`
/// followed by the leftover tail; above that, split at `n/2` rounded down to
/// a multiple of 8 and recurse.
pub fn pairwise_sum(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in x {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&x[..8]);
        let body = n - n % 8;
        let mut i = 8;
        while i < body {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += x[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &x[body..] {
            res += v;
        }
        res
    } else {
        let mut m = n / 2;
        m -= m % 8;
        pairwise_sum(&x[..m]) + pairwise_sum(&x[m..])
    }
}

/// `np.mean`: pairwise sum divided by the length; NaN for an empty slice.
pub fn np_mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    pairwise_sum(x) / x.len() as f64
}

/// `np.std` with `ddof=0`: `sqrt(sum((x - mean)^2) / n)`, both sums pairwise.
/// NaN for an empty slice.
pub fn np_std_pop(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mu = np_mean(x);
    let sq: Vec<f64> = x.iter().map(|&v| (v - mu) * (v - mu)).collect();
    (pairwise_sum(&sq) / x.len() as f64).sqrt()
}

/// pandas' compensated (Kahan) sum, as in `groupby(...).sum()`.
///
/// NaN values are skipped, as pandas does with its default `skipna`; the sum
/// of nothing is `0.0`. The compensation is reset when it stops being finite
/// so that one infinity does not poison the rest with NaN.
pub fn kahan_sum(x: &[f64]) -> f64 {
    let mut k = Kahan::default();
    for &v in x {
        k.add(v);
    }
    k.sum()
}

/// [`kahan_sum`] one value at a time: a group's sum accumulated as its
/// rows go by, with no list of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kahan {
    s: f64,
    c: f64,
}

impl Kahan {
    /// Adds `v` (NaN is skipped).
    #[inline]
    pub fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        let y = v - self.c;
        let t = self.s + y;
        self.c = (t - self.s) - y;
        if !self.c.is_finite() {
            self.c = 0.0;
        }
        self.s = t;
    }

    /// The sum so far.
    pub fn sum(&self) -> f64 {
        self.s
    }
}

/// pandas' sample standard deviation (`ddof=1`) by Welford's online update,
/// as in `groupby(...).std()`.
///
/// NaN values are skipped (pandas `skipna`); `None` when fewer than two
/// values remain, where pandas yields NaN.
pub fn welford_std(x: &[f64]) -> Option<f64> {
    let mut n = 0.0f64;
    let mut mean = 0.0f64;
    let mut m2 = 0.0f64;
    for &v in x {
        if v.is_nan() {
            continue;
        }
        n += 1.0;
        let d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
    }
    if n <= 1.0 {
        return None;
    }
    Some((m2 / (n - 1.0)).sqrt())
}

/// An integer that orders like `f64::total_cmp` orders `x`: sorting by it
/// sorts by the float without reading the float in every comparison.
pub fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // Negative floats order backwards by their bits: flip all but the sign.
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// Median as pandas computes it: NaN values are skipped, the middle value of
/// the sorted rest, or the mean of the two middle values for an even count.
/// NaN when nothing remains.
pub fn median(x: &[f64]) -> f64 {
    let mut a: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    let n = a.len();
    if n == 0 {
        return f64::NAN;
    }
    a.sort_unstable_by(f64::total_cmp);
    if n % 2 == 1 {
        a[n / 2]
    } else {
        (a[n / 2] + a[n / 2 - 1]) / 2.0
    }
}

/// `np.round(x, 2)`: scale by 100, round half to even (`rint`), scale back.
pub fn np_round2(x: f64) -> f64 {
    np_round(x, 2)
}

/// `np.round(x, decimals)` for `decimals >= 0`: scale by `10^decimals`,
/// round half to even (`rint`), scale back.
pub fn np_round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

/// Python's `statistics.pstdev` of integers: the population standard
/// deviation from the exact variance, rounded once (0.0 for fewer than two
/// values, as the reports that use it write).
pub fn py_pstdev_int(x: &[i64]) -> f64 {
    use num_bigint::{BigInt, BigUint};
    if x.len() < 2 {
        return 0.0;
    }
    let n = BigInt::from(x.len());
    let sum: BigInt = x.iter().map(|&v| BigInt::from(v)).sum();
    let squares: BigInt = x.iter().map(|&v| BigInt::from(v) * BigInt::from(v)).sum();
    // variance = (n·Σx² − (Σx)²) / n², never negative.
    let num = (&n * squares - &sum * &sum).magnitude().clone();
    let den: BigUint = (&n * &n).magnitude().clone();
    sqrt_of_ratio(&num, &den)
}

/// `sqrt(num / den)` correctly rounded: the integer root of the ratio
/// scaled to at least 55 bits, its last bit set when inexact (rounding to
/// odd), then one rounding to a float.
fn sqrt_of_ratio(num: &num_bigint::BigUint, den: &num_bigint::BigUint) -> f64 {
    use num_bigint::BigUint;
    if num.bits() == 0 {
        return 0.0;
    }
    let spread = num.bits() as i64 - den.bits() as i64;
    let t = ((112 - spread) / 2 + 1).max(0) as u64;
    let scaled: BigUint = num << (2 * t);
    let ratio = &scaled / den;
    let mut root = ratio.sqrt();
    if &root * &root * den != scaled {
        root |= BigUint::from(1u8);
    }
    // Keep 63 bits, the dropped ones folded into the last (still odd when inexact).
    let bits = root.bits();
    let shift = bits.saturating_sub(63);
    let mut top = root.clone() >> shift;
    if shift > 0 && (top.clone() << shift) != root {
        top |= BigUint::from(1u8);
    }
    let mantissa = top.iter_u64_digits().next().unwrap_or(0) as f64;
    mantissa * 2f64.powi(shift as i32 - t as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_order_keys_order_like_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            1.0000000000000002,
            1694128201545.125,
            f64::INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(
                    total_order_key(a).cmp(&total_order_key(b)),
                    a.total_cmp(&b),
                    "{a} vs {b}"
                );
            }
        }
    }

    /// numpy's `pairwise_sum` written independently, straight from the C
    /// source structure (index arithmetic rather than slices).
    fn reference(a: &[f64], lo: usize, n: usize) -> f64 {
        if n < 8 {
            let mut res = 0.0;
            for i in 0..n {
                res += a[lo + i];
            }
            res
        } else if n <= 128 {
            let (mut r0, mut r1, mut r2, mut r3) = (a[lo], a[lo + 1], a[lo + 2], a[lo + 3]);
            let (mut r4, mut r5, mut r6, mut r7) = (a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]);
            let mut i = 8;
            while i < n - (n % 8) {
                r0 += a[lo + i];
                r1 += a[lo + i + 1];
                r2 += a[lo + i + 2];
                r3 += a[lo + i + 3];
                r4 += a[lo + i + 4];
                r5 += a[lo + i + 5];
                r6 += a[lo + i + 6];
                r7 += a[lo + i + 7];
                i += 8;
            }
            let mut res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
            while i < n {
                res += a[lo + i];
                i += 1;
            }
            res
        } else {
            let n2 = (n / 2) - (n / 2) % 8;
            reference(a, lo, n2) + reference(a, lo + n2, n - n2)
        }
    }

    /// Deterministic awkward values: mixed magnitudes so order matters.
    fn data(n: usize) -> Vec<f64> {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let frac = (s >> 11) as f64 / (1u64 << 53) as f64;
                frac * 10f64.powi((i % 7) as i32 - 3)
            })
            .collect()
    }

    fn naive(x: &[f64]) -> f64 {
        x.iter().fold(0.0, |a, &b| a + b)
    }

    #[test]
    fn pairwise_matches_reference() {
        for n in [0, 1, 5, 7, 8, 9, 10, 16, 127, 128, 129, 300, 1000, 4099] {
            let x = data(n);
            assert_eq!(
                pairwise_sum(&x).to_bits(),
                reference(&x, 0, n).to_bits(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn pairwise_small_by_hand() {
        assert_eq!(pairwise_sum(&[]), 0.0);
        assert_eq!(pairwise_sum(&[1.0, 2.0, 3.0, 4.0, 5.0]), 15.0);
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(pairwise_sum(&x), 55.0);
    }

    #[test]
    fn pairwise_differs_from_naive() {
        // n = 9: the eight accumulators pair the small terms up before they
        // meet 1e16, while the naive loop loses each 1.0 against 1e16 (the
        // spacing of doubles there is 2, and ties go to even).
        let x = [1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        // Pairwise: r = [1e16, 1, 1, 1, 1, 1, 1, 1], then tail x[8] = 1.
        // (1e16+1) = 1e16, + (1+1) = 1e16+2, + ((1+1)+(1+1)) = 1e16+6, and
        // + 1 gives the tie 1e16+7, which rounds to the even 1e16+8.
        assert_eq!(pairwise_sum(&x), 1e16 + 8.0);
        // Naive: 1e16 + 1 = 1e16 (ties to even) every time.
        assert_eq!(naive(&x), 1e16);
    }

    #[test]
    fn mean_and_std() {
        assert!(np_mean(&[]).is_nan());
        assert!(np_std_pop(&[]).is_nan());
        assert_eq!(np_mean(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        // Population std of 2,4,4,4,5,5,7,9 is exactly 2.
        assert_eq!(np_std_pop(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 2.0);
        assert_eq!(np_std_pop(&[3.0]), 0.0);
        // np.mean([0.1, 0.2, 0.3]) == 0.20000000000000004 in numpy.
        assert_eq!(np_mean(&[0.1, 0.2, 0.3]), 0.20000000000000004);
    }

    #[test]
    fn kahan() {
        assert_eq!(kahan_sum(&[]), 0.0);
        assert_eq!(kahan_sum(&[f64::NAN]), 0.0);
        assert_eq!(kahan_sum(&[1.0, f64::NAN, 2.0]), 3.0);
        // Compensation recovers what the naive loop drops: 0.1 * 10 == 1.0.
        assert_eq!(kahan_sum(&[0.1; 10]), 1.0);
        assert_eq!(naive(&[0.1; 10]), 0.9999999999999999);
        // An infinity makes the compensation NaN; it is reset, not spread.
        assert_eq!(kahan_sum(&[f64::INFINITY, 1.0]), f64::INFINITY);
    }

    #[test]
    fn welford() {
        assert_eq!(welford_std(&[]), None);
        assert_eq!(welford_std(&[5.0]), None);
        assert_eq!(welford_std(&[5.0, f64::NAN]), None);
        // Sample variance of 2,4,4,4,5,5,7,9 is 32/7.
        let s = welford_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-15);
        assert_eq!(welford_std(&[1.0, 3.0]), Some(2f64.sqrt()));
    }

    #[test]
    fn medians() {
        assert!(median(&[]).is_nan());
        assert!(median(&[f64::NAN]).is_nan());
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[1.0, f64::NAN, 3.0]), 2.0);
        assert_eq!(median(&[-1.0, 5.0]), 2.0);
    }

    #[test]
    fn round2() {
        // 2.645 * 100 == 264.5 in binary, and rint sends the tie to 264.
        assert_eq!(np_round2(2.645), 2.64);
        assert_eq!(np_round2(1.005), 1.0);
        assert_eq!(np_round2(0.125), 0.12);
        assert_eq!(np_round2(0.375), 0.38);
        assert_eq!(np_round2(-2.5), -2.5);
        assert_eq!(np_round2(1234.5678), 1234.57);
        assert!(np_round2(f64::NAN).is_nan());
    }
}
