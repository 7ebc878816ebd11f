//! Shortest decimal text of doubles, shared by Python's `repr` of a float
//! ([`crate::pyfmt`]) and the workbook's number cells: the shortest digits
//! that read back as the same double (zmij's, on the stack), and the exact
//! check for the one case where formatters may disagree, a double that lies
//! halfway between two shortest candidates.

use std::io::Write as _;

/// The shortest digits of the finite, non-negative `x` that read back as
/// `x`, and the exponent of the first. When `x` is a tie ([`tie`]) the
/// candidate is zmij's: callers that must match another formatter's rule
/// resolve that case themselves.
pub(crate) fn shortest(x: f64) -> (Digits, i32) {
    Digits::parse(zmij::Buffer::new().format_finite(x))
}

/// Appends `x` as Rust's `{}` writes it (the shortest digits, laid out
/// without an exponent), which is how the workbook library writes number
/// cells; faster than the formatter for all but ties, which it leaves to
/// `{}`.
pub(crate) fn push_display(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() && x != 0.0 {
        let (digits, exp) = shortest(x.abs());
        if tie(x.abs(), digits.len).is_none() {
            if x < 0.0 {
                out.push(b'-');
            }
            push_positional(out, digits.bytes(), exp);
            return;
        }
    }
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{x}");
}

/// Appends `digits` (the first one's exponent `exp`) without an exponent:
/// `1234` at 1 is `12.34`, at 5 `123400`, at -3 `0.001234`.
fn push_positional(out: &mut Vec<u8>, digits: &[u8], exp: i32) {
    if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.extend_from_slice(digits);
            out.resize(out.len() + int_len - digits.len(), b'0');
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + (-exp - 1) as usize, b'0');
        out.extend_from_slice(digits);
    }
}

/// The significant digits of a decimal (at most [`Digits::CAP`]), kept on
/// the stack: a number cell allocates nothing of its own.
pub(crate) struct Digits {
    bytes: [u8; Digits::CAP],
    /// How many of `bytes` are digits.
    pub(crate) len: usize,
}

impl Digits {
    /// More than a shortest form (17) or a tie's candidate (18) needs.
    const CAP: usize = 24;

    /// The digits of the non-negative decimal `text` (`123.45`, `0.001`,
    /// `1e-7`, `1.5e16`: what a shortest formatter writes), without leading
    /// or trailing zeros, and the exponent of the first (`0` for zero).
    pub(crate) fn parse(text: &str) -> (Digits, i32) {
        // One pass finds the point and the exponent (the text is short).
        let bytes = text.as_bytes();
        let (mut dot, mut e_at) = (None, bytes.len());
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'.' => dot = Some(i),
                b'e' | b'E' => {
                    e_at = i;
                    break;
                }
                _ => {}
            }
        }
        let exp = match text.get(e_at + 1..) {
            Some(e) if e_at < bytes.len() => e.parse::<i32>().unwrap_or(0),
            _ => 0,
        };
        let mantissa = &bytes[..e_at];
        let (int, frac) = match dot {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, &[][..]),
        };
        let int = trim_leading_zeros(int);
        // The first digit's place: after the integer digits, or before the
        // fraction's leading zeros.
        let (frac, point) = if int.is_empty() {
            let digits = trim_leading_zeros(frac);
            (digits, -((frac.len() - digits.len()) as i32))
        } else {
            (frac, int.len() as i32)
        };
        let mut d = Digits {
            bytes: [b'0'; Digits::CAP],
            len: 0,
        };
        // Past the cap only zeros can come (17 significant digits at most),
        // which are dropped below anyway.
        for part in [int, frac] {
            let n = part.len().min(Digits::CAP - d.len);
            d.bytes[d.len..d.len + n].copy_from_slice(&part[..n]);
            d.len += n;
        }
        while d.len > 0 && d.bytes[d.len - 1] == b'0' {
            d.len -= 1;
        }
        if d.len == 0 {
            d.len = 1;
            return (d, 0);
        }
        (d, exp + point - 1)
    }

    /// The digits.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The digits as text.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }
}

/// `digits` without its leading zeros.
fn trim_leading_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&b| b == b'0').count();
    &digits[zeros..]
}

/// The finite, non-negative `x` as `m * 2^e` (`m` below 2^53).
fn binary_parts(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    }
}

/// The exact value of the finite, non-negative `x`, whose shortest digits
/// number `n`, as `(t, q)` with `x == t * 10^q`, when `x` lies halfway
/// between two `n`-digit candidates (`t / 10` and `t / 10 + 1`, at
/// `10^(q + 1)`); None when it does not. That is when `t` has `n + 1`
/// significant digits, the last a 5: with `x = m * 2^e`, `m` odd, the
/// exact digits are those of `m * 2^e` (`e >= 0`) or of `m * 5^-e`
/// (`e < 0`), found with integer arithmetic.
pub(crate) fn tie(x: f64, n: usize) -> Option<(u64, i32)> {
    let (m, e) = binary_parts(x);
    if m == 0 {
        return None;
    }
    let (m, e) = (m >> m.trailing_zeros(), e + m.trailing_zeros() as i32);
    // Ties are looked for up to 18 digits (a u64 candidate). Below 2^-25,
    // m * 5^-e is past 10^18; from 2^60 on, m * 2^e stripped of its zeros
    // is even (m holds at most 22 fives, 5^23 > 2^53), so it cannot end in
    // 5.
    let (mut t, mut q) = match e {
        0..=59 => (u128::from(m) << e, 0),
        -25..=-1 => (u128::from(m) * 5u128.pow(e.unsigned_abs()), e),
        _ => return None,
    };
    while t.is_multiple_of(10) {
        t /= 10;
        q += 1;
    }
    let is_tie = t % 10 == 5 && t < 10u128.pow(18) && t.ilog10() as usize + 1 == n + 1;
    is_tie.then_some((t as u64, q))
}

/// Whether the finite, non-negative `x` equals `t * 10^q` exactly, using
/// integer arithmetic on `x = m * 2^e`: the check of the exact-formatting
/// tie test that [`tie`] replaced, kept as the tests' reference.
#[cfg(test)]
pub(crate) fn equals_decimal(x: f64, t: u64, q: i32) -> bool {
    let (m, e) = binary_parts(x);
    let (m, t) = (u128::from(m), u128::from(t));
    // m * 2^e == t * 2^q * 5^q. With t < 10^18 and m < 2^53, a power of five
    // above 5^25 can divide neither side, so larger |q| never matches, and
    // every product below stays under 2^128.
    if q.unsigned_abs() > 25 {
        return false;
    }
    let five = 5u128.pow(q.unsigned_abs());
    // Gather the powers of five on the side where they are positive:
    // lhs * 2^(e - q) == rhs.
    let (lhs, rhs) = if q >= 0 { (m, t * five) } else { (m * five, t) };
    let shift = e - q;
    if shift >= 0 {
        shifted_eq(lhs, shift.unsigned_abs(), rhs)
    } else {
        shifted_eq(rhs, shift.unsigned_abs(), lhs)
    }
}

/// Whether `a * 2^k == b`, without overflow for any `k`.
#[cfg(test)]
fn shifted_eq(a: u128, k: u32, b: u128) -> bool {
    if b == 0 {
        return a == 0;
    }
    b.trailing_zeros() >= k && (b >> k) == a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_of_every_layout() {
        let parsed = |t: &str| {
            let (d, e) = Digits::parse(t);
            (d.as_str().to_string(), e)
        };
        assert_eq!(parsed("123.45"), ("12345".into(), 2));
        assert_eq!(parsed("0.00123"), ("123".into(), -3));
        assert_eq!(parsed("100.0"), ("1".into(), 2));
        assert_eq!(parsed("1e-7"), ("1".into(), -7));
        assert_eq!(parsed("1.5e16"), ("15".into(), 16));
        assert_eq!(parsed("2.5E+300"), ("25".into(), 300));
        assert_eq!(parsed("0.0"), ("0".into(), 0));
        assert_eq!(parsed("0"), ("0".into(), 0));
        assert_eq!(parsed(&format!("1{}.0", "0".repeat(30))), ("1".into(), 30));
    }

    #[test]
    fn display_as_rust_writes_it() {
        let mut values = vec![
            0.0,
            -0.0,
            5e-324,
            -1.5,
            0.1,
            1e-7,
            1e22,
            1e23,
            1.5e300,
            f64::MAX,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            // Ties, which Rust resolves its own way.
            1227.0 + 7057.0 / 16384.0,
            -(9319412.0 + 133.0 / 1024.0),
            15137.0 / 524288.0,
        ];
        for k in 0..20_000u32 {
            let k = f64::from(k);
            values.extend([k * 0.001, -k / 3.0, k * 1.1, k / 7.0 * 1e-6, k * 12.5]);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
        }
        for x in values {
            let mut out = Vec::new();
            push_display(&mut out, x);
            assert_eq!(String::from_utf8(out).unwrap(), format!("{x}"), "{x:e}");
        }
    }

    #[test]
    fn exact_decimal_check() {
        assert!(equals_decimal(1.5, 15, -1));
        assert!(equals_decimal(1.5, 150, -2));
        assert!(!equals_decimal(0.1, 1, -1));
        assert!(equals_decimal(1e22, 1, 22));
        // 1e23 is not representable; the nearest double is 99999999999999991611392.
        assert!(!equals_decimal(1e23, 1, 23));
        assert!(!equals_decimal(5e-324, 0, 0));
        assert!(equals_decimal(0.25, 25, -2));
        assert!(equals_decimal(0.0, 0, 5));
    }
}
