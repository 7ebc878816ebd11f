//! Python / pandas / numpy text formatting.
//!
//! The reference tool writes its reports with pandas, so every float, string
//! and container that ends up in a cell must be spelled exactly the way
//! Python would spell it: `repr(float)`, `repr(str)`, `str(tuple)` and the
//! numpy 2 scalar reprs (`np.float64(...)`).

use std::fmt::Write as _;

use crate::float_text::{Digits, shortest, tie};
use crate::trace::ArgValue;

/// Python `repr(float)`: the shortest digits that round-trip, laid out the
/// way CPython does it.
///
/// Fixed notation is used when the decimal exponent `e` (as in `d.ddd×10^e`)
/// satisfies `-4 <= e < 16`; integral values keep a trailing `.0`. Otherwise
/// scientific notation like `1e-05` or `1.5e+16` (explicit sign, at least two
/// exponent digits, no `.0` on a one-digit mantissa). Non-finite values are
/// `inf`, `-inf` and `nan`.
pub fn float_repr(x: f64) -> String {
    let mut out = String::new();
    push_float_repr(&mut out, x);
    out
}

/// Python `format(x, "g")`: six significant digits, trailing zeros
/// dropped, scientific notation (`1e+06`, `1.5e-05`) when the decimal
/// exponent is below -4 or at least 6; `inf`, `-inf`, `nan`.
pub fn float_g(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // The exponent after rounding to six digits decides the layout.
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        strip(&format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mantissa), exp.abs())
    }
}

/// [`float_repr`] appended to `out` (a cell's text, without a string of
/// its own).
pub fn push_float_repr(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("nan");
        return;
    }
    let neg = x.is_sign_negative();
    if x.is_infinite() {
        out.push_str(if neg { "-inf" } else { "inf" });
        return;
    }
    // A whole number below 2^53 is the only double within 1 of itself, so
    // its shortest digits are its own: the integer and `.0` (trace times in
    // µs are such numbers, and sheets print them by the hundred thousand).
    let a = x.abs();
    if x.fract() == 0.0 && (1.0..WHOLE_LIMIT).contains(&a) {
        out.push_str(itoa::Buffer::new().format(x as i64));
        out.push_str(".0");
        return;
    }
    push_shortest_repr(out, x);
}

/// Below this every whole number is a double (2^53).
const WHOLE_LIMIT: f64 = 9_007_199_254_740_992.0;

/// [`push_float_repr`] of a finite `x` from its shortest digits.
fn push_shortest_repr(out: &mut String, x: f64) {
    let neg = x.is_sign_negative();
    let (digits, exp) = shortest_digits(x.abs());
    let digits = digits.as_str();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
    }
}

/// Shortest round-trip digits of a finite, non-negative `x` and the
/// exponent of the first digit, as CPython's `repr` chooses them.
///
/// The shortest digits come from zmij (no allocation). When `x` lies
/// exactly halfway between two shortest candidates, formatters differ in
/// the one they pick (Rust's `{:e}` rounds the last digit up), while
/// CPython's dtoa rounds half to even (`1227.43072509765625` is
/// `1227.4307250976562` in Python). Such ties are detected exactly and
/// resolved the Python way, whichever candidate the formatter chose.
fn shortest_digits(x: f64) -> (Digits, i32) {
    let (digits, exp) = shortest(x);
    // Nearly every value is no tie, which its exact digits show.
    tie(x, digits.len)
        .and_then(|(t, q)| half_even(x, t, q))
        .unwrap_or((digits, exp))
}

/// The candidate CPython picks for `x == t * 10^q`, which lies halfway
/// between `t / 10` and `t / 10 + 1` (at `10^(q + 1)`): the even one, or
/// the other when only it reads back as `x`.
fn half_even(x: f64, t: u64, q: i32) -> Option<(Digits, i32)> {
    let down = t / 10;
    let (even, odd) = if down.is_multiple_of(2) {
        (down, down + 1)
    } else {
        (down + 1, down)
    };
    [even, odd].into_iter().find_map(|cand| {
        let text = format!("{cand}e{}", q + 1);
        (text.parse::<f64>().ok() == Some(x)).then(|| Digits::parse(&text))
    })
}

/// Whether Python's `str.isprintable()` would call `c` printable.
///
/// Python consults the full Unicode database (categories Cc, Cf, Cs, Co, Cn,
/// Zl, Zp and Zs other than the ASCII space are non-printable). This is an
/// approximation: exact for ASCII and Latin-1, and covering the format,
/// separator, private-use and non-character code points one meets in
/// practice; code points unassigned within otherwise used blocks are treated
/// as printable.
fn is_printable(c: char) -> bool {
    let u = c as u32;
    if c.is_control() {
        return false;
    }
    !matches!(
        u,
        // Zs (except U+0020), Zl, Zp
        0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000
        // Cf
        | 0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE007F
        // Co
        | 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD
        // Cn: non-characters and wholly unassigned planes 4 to 13 and 14
        // (except its variation selectors, which are printable marks)
        | 0xFDD0..=0xFDEF | 0x40000..=0xDFFFF | 0xE0080..=0xE00FF | 0xE01F0..=0xEFFFF
    ) && (u & 0xFFFE) != 0xFFFE
}

/// Python `repr(str)`.
///
/// Single quotes unless the text contains `'` but no `"`; backslash, the
/// chosen quote, `\n`, `\r` and `\t` are escaped; other non-printable
/// characters become `\xhh`, `\uhhhh` or `\Uhhhhhhhh`; printable non-ASCII
/// characters are kept as they are.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    // Printable ASCII without a backslash or the quote (kernel and op
    // names, the common case) is written as it is.
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'\\' && b != quote as u8)
    {
        out.push_str(s);
        out.push(quote);
        return out;
    }
    escape_into(&mut out, s, quote);
    out.push(quote);
    out
}

/// How [`block_literal`] lays a block of text out when it can be written
/// verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// `"""text"""`: a docstring.
    Doc,
    /// `r'''text'''`: text full of backslashes (JSON).
    Raw,
}

/// A Python literal whose value is exactly `text`, laid out as a
/// triple-quoted block (`layout`) when every character can stand there as
/// it is, and as [`str_repr`] otherwise.
///
/// Verbatim means: only line breaks (`\n`) and characters `repr` keeps,
/// no quote of the block's kind, and no backslash (a docstring) or no
/// final backslash (a raw block, where it would escape the closing quote).
/// Any other text (a name with `"""` and code after it, a `\N`, a
/// carriage return) takes the escaped form, so no text can end the literal
/// early or fail to parse.
pub fn block_literal(text: &str, layout: Block) -> String {
    let (open, quote) = match layout {
        Block::Doc => ("\"\"\"", '"'),
        Block::Raw => ("r'''", '\''),
    };
    let verbatim = text
        .chars()
        .all(|c| c == '\n' || (c != quote && is_printable(c)))
        && match layout {
            Block::Doc => !text.contains('\\'),
            Block::Raw => !text.ends_with('\\'),
        };
    if !verbatim {
        return str_repr(text);
    }
    let close = &open[open.len() - 3..];
    format!("{open}{text}{close}")
}

/// `s` escaped as Python's `repr()` escapes a string quoted by `quote`.
fn escape_into(out: &mut String, s: &str, quote: char) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let u = c as u32;
                let _ = if u < 0x100 {
                    write!(out, "\\x{u:02x}")
                } else if u < 0x10000 {
                    write!(out, "\\u{u:04x}")
                } else {
                    write!(out, "\\U{u:08x}")
                };
            }
        }
    }
}

/// Python `repr()` of a recorded argument value (the object `json.loads`
/// would build).
///
/// With `lists_as_tuples`, lists are rendered as tuples at every depth
/// (the reference turns `Input Dims` and friends into nested tuples so they
/// are hashable): `(a, b)`, `(a,)`, `()`. Otherwise lists: `[a, b]`.
/// Maps render as `{'k': v}` in key order (the reference's values went
/// through serde_json without `preserve_order`, so keys come out sorted).
/// Integers print as integers, other numbers via [`float_repr`] (an integer
/// too large for 64 bits has already become a float), strings via
/// [`str_repr`], and null, true, false as `None`, `True`, `False`.
pub fn py_repr(v: &ArgValue, lists_as_tuples: bool) -> String {
    let mut out = String::new();
    write_py(&mut out, v, lists_as_tuples);
    out
}

/// Python `str()` of a recorded argument value: a string bare, anything
/// else as [`py_repr`].
pub fn py_str(v: &ArgValue, lists_as_tuples: bool) -> String {
    match v {
        ArgValue::Str(s) => s.to_string(),
        other => py_repr(other, lists_as_tuples),
    }
}

/// Appends the Python rendering of `v` to `out` (see [`py_repr`]).
fn write_py(out: &mut String, v: &ArgValue, tuples: bool) {
    match v {
        ArgValue::Null => out.push_str("None"),
        ArgValue::Bool(true) => out.push_str("True"),
        ArgValue::Bool(false) => out.push_str("False"),
        ArgValue::Int(i) => {
            let _ = write!(out, "{i}");
        }
        ArgValue::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        ArgValue::Float(x) => out.push_str(&float_repr(*x)),
        ArgValue::Str(s) => out.push_str(&str_repr(s)),
        ArgValue::List(items) => {
            let (open, close) = if tuples { ('(', ')') } else { ('[', ']') };
            out.push(open);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_py(out, item, tuples);
            }
            // A one-element tuple needs its trailing comma: `(1,)`.
            if tuples && items.len() == 1 {
                out.push(',');
            }
            out.push(close);
        }
        ArgValue::Map(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(k));
                out.push_str(": ");
                write_py(out, item, tuples);
            }
            out.push('}');
        }
    }
}

/// numpy 2 `repr` of a `float64` scalar: `np.float64(1.5)`.
pub fn np_float(x: f64) -> String {
    format!("np.float64({})", float_repr(x))
}

/// numpy 2 `repr` of an `int64` scalar: `np.int64(5)`.
pub fn np_int(x: i64) -> String {
    format!("np.int64({x})")
}

#[cfg(test)]
mod tests {

    #[test]
    fn g_format_is_pythons() {
        for (x, want) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (40000.0, "40000"),
            (5666.666666666667, "5666.67"),
            (45.97701149425287, "45.977"),
            (0.687285, "0.687285"),
            (0.005, "0.005"),
            (100.0, "100"),
            (999999.5, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1e100, "1e+100"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(float_g(x), want, "{x}");
        }
    }

    #[test]
    fn whole_numbers_take_the_short_path_with_the_same_result() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut cases: Vec<f64> = vec![1.0, 9.0, 10.0, 1e15, 9_007_199_254_740_991.0];
        cases.extend((0..16).map(|k| 10f64.powi(k)));
        for _ in 0..20_000 {
            // A xorshift walk over whole numbers of every magnitude below 2^53.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bits = 1 + x % 53;
            cases.push((x >> (64 - bits)) as f64);
        }
        for v in cases {
            for v in [v, -v] {
                let (mut fast, mut slow) = (String::new(), String::new());
                super::push_float_repr(&mut fast, v);
                super::push_shortest_repr(&mut slow, v);
                assert_eq!(fast, slow, "{v}");
            }
        }
        assert_eq!(super::float_repr(-0.0), "-0.0");
        assert_eq!(super::float_repr(1e16), "1e+16");
    }

    #[test]
    fn plain_ascii_takes_the_short_path_with_the_same_result() {
        for b in 0x20u8..0x7f {
            for s in [format!("a{}b", b as char), (b as char).to_string()] {
                let quote = if s.contains('\'') && !s.contains('"') {
                    '"'
                } else {
                    '\''
                };
                let mut slow = String::from(quote);
                super::escape_into(&mut slow, &s, quote);
                slow.push(quote);
                assert_eq!(super::str_repr(&s), slow, "{s:?}");
            }
        }
    }

    use super::*;
    use crate::float_text::equals_decimal;
    use crate::test_support::arg_value as arg;

    #[test]
    fn float_repr_fixed() {
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(0.0), "0.0");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(5.0), "5.0");
        assert_eq!(float_repr(-5.0), "-5.0");
        assert_eq!(float_repr(1.5), "1.5");
        assert_eq!(float_repr(100.0), "100.0");
        assert_eq!(float_repr(123.456), "123.456");
        assert_eq!(float_repr(1e-4), "0.0001");
        assert_eq!(float_repr(0.00012), "0.00012");
        assert_eq!(float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(float_repr(1e15), "1000000000000000.0");
        assert_eq!(float_repr(9999999999999998.0), "9999999999999998.0");
        assert_eq!(float_repr(5.7919921875), "5.7919921875");
        // 2**-12 = 0.000244140625 exactly; exponent -4 stays fixed.
        assert_eq!(float_repr(2f64.powi(-12)), "0.000244140625");
        assert_eq!(float_repr(100.00000000000001), "100.00000000000001");
        assert_eq!(float_repr(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(float_repr(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(float_repr(-2.5e-3), "-0.0025");
    }

    #[test]
    fn float_repr_scientific() {
        assert_eq!(float_repr(1e-5), "1e-05");
        assert_eq!(float_repr(7.2192e-05), "7.2192e-05");
        assert_eq!(float_repr(1.6e-08), "1.6e-08");
        assert_eq!(float_repr(-1.6e-08), "-1.6e-08");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1.5e16), "1.5e+16");
        assert_eq!(float_repr(1e100), "1e+100");
        assert_eq!(float_repr(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(float_repr(f64::MIN_POSITIVE), "2.2250738585072014e-308");
        assert_eq!(float_repr(5e-324), "5e-324");
        assert_eq!(float_repr(-5e-324), "-5e-324");
    }

    #[test]
    fn float_repr_ties_go_to_even() {
        // 1227.43072509765625 = 1227 + 7057/16384 is exact in binary and sits
        // halfway between the 17-digit candidates ...562 and ...563; CPython
        // picks the even digit.
        assert_eq!(float_repr(1227.0 + 7057.0 / 16384.0), "1227.4307250976562");
        assert_eq!(
            float_repr(-(9319412.0 + 133.0 / 1024.0)),
            "-9319412.129882812"
        );
        assert_eq!(float_repr(15137.0 / 524288.0), "0.028871536254882812");
        // 2**-10 + 2**-30 = 0.0009765634313225746154785156250 has far more
        // digits than 17, so it is no tie: plain shortest digits.
        assert_eq!(
            float_repr(2f64.powi(-10) + 2f64.powi(-30)),
            "0.0009765634313225746"
        );
    }

    /// Splits Rust's `{:e}` output into its digit string and decimal exponent:
    /// `d1.d2d3...e<exp>` becomes (`"d1d2d3..."`, `exp`).
    fn split_sci(sci: &str) -> (String, i32) {
        let (mantissa, exp) = match sci.split_once('e') {
            Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
            None => (sci, 0),
        };
        (
            mantissa.chars().filter(|c| c.is_ascii_digit()).collect(),
            exp,
        )
    }

    /// The tests' reference for finding ties: the check this module made
    /// before [`tie`], a second, exact formatting of every value; when `x`
    /// is a tie between two of `digits` (the shortest digits of `x`, with
    /// the first digit's exponent `exp`), [`half_even`]'s candidate.
    fn resolve_tie(x: f64, digits: String, exp: i32) -> (String, i32) {
        let n = digits.len();
        // One more significant digit than the shortest form; printed exactly
        // when `x` is a tie, because then `x` has exactly n + 1 digits.
        let (longer, longer_exp) = split_sci(&format!("{x:.n$e}"));
        if !longer.ends_with('5') || longer.len() != n + 1 || n + 1 > 18 {
            return (digits, exp);
        }
        let Ok(t) = longer.parse::<u64>() else {
            return (digits, exp);
        };
        // x == t * 10^q exactly, or this is no tie.
        let q = longer_exp - n as i32;
        if !equals_decimal(x, t, q) {
            return (digits, exp);
        }
        match half_even(x, t, q) {
            Some((d, e)) => (d.as_str().to_string(), e),
            None => (digits, exp),
        }
    }

    #[test]
    fn the_tie_filter_passes_every_tie() {
        // The slow path alone (resolve_tie) against shortest_digits, which
        // skips it where may_tie says no: the same digits for ties, values
        // near them and pseudo-random doubles of every magnitude.
        let slow = |x: f64| {
            let (digits, exp) = split_sci(&format!("{x:e}"));
            resolve_tie(x, digits, exp)
        };
        let mut values = vec![
            0.0,
            5e-324,
            0.5,
            1.25,
            1e22,
            1e23,
            2f64.powi(60),
            2f64.powi(59) * 3.0,
            1227.0 + 7057.0 / 16384.0,
            9319412.0 + 133.0 / 1024.0,
            15137.0 / 524288.0,
            2f64.powi(-10) + 2f64.powi(-30),
            f64::MAX,
        ];
        // Binary fractions with few bits: where ties live.
        for k in 1..=30 {
            for num in [1u64, 3, 7057, 133, 15137, 999_999, 123_456_789] {
                for whole in [0.0, 1.0, 1227.0, 9319412.0, 4503599627370496.0] {
                    values.push(whole + num as f64 / 2f64.powi(k));
                }
            }
        }
        // Values like a report's: microseconds, milliseconds, ratios.
        for k in 0..50_000u32 {
            let k = f64::from(k);
            values.extend([k * 0.001, k / 3.0, k * 1.1, k / 7.0 * 1e-6, k * 12.5]);
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state >> 1);
            if x.is_finite() {
                values.push(x);
            }
        }
        let mut ties = 0;
        for x in values {
            let (digits, exp) = split_sci(&format!("{x:e}"));
            let expected = slow(x);
            ties += usize::from(expected != (digits.clone(), exp));
            let (digits, exp) = shortest_digits(x);
            assert_eq!((digits.as_str().to_string(), exp), expected, "{x:e}");
        }
        // The values above do hold ties, so the check compared something.
        assert!(ties > 10, "{ties} ties");
    }

    #[test]
    fn float_repr_non_finite() {
        assert_eq!(float_repr(f64::INFINITY), "inf");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(-f64::NAN), "nan");
    }

    #[test]
    fn str_repr_quotes() {
        assert_eq!(str_repr(""), "''");
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("say \"hi\""), "'say \"hi\"'");
        assert_eq!(str_repr("it's \"q\""), "'it\\'s \"q\"'");
        assert_eq!(str_repr("a\\b"), "'a\\\\b'");
    }

    #[test]
    fn str_repr_escapes() {
        assert_eq!(str_repr("a\nb\rc\td"), "'a\\nb\\rc\\td'");
        assert_eq!(str_repr("\0\x07\x1b\x7f"), "'\\x00\\x07\\x1b\\x7f'");
        assert_eq!(str_repr("\u{80}\u{a0}\u{ad}"), "'\\x80\\xa0\\xad'");
        assert_eq!(
            str_repr("\u{200b}\u{2028}\u{e000}"),
            "'\\u200b\\u2028\\ue000'"
        );
        assert_eq!(str_repr("\u{e0001}"), "'\\U000e0001'");
        assert_eq!(str_repr("\u{ffff}"), "'\\uffff'");
        // Printable non-ASCII is kept.
        assert_eq!(str_repr("é µs 😀 中"), "'é µs 😀 中'");
        assert_eq!(str_repr(" "), "' '");
    }

    #[test]
    fn block_literal_is_verbatim_only_when_nothing_needs_escaping() {
        let doc = "Replays aten::mm (uid 3, trace t.json).\n\nWritten by `x`.\n";
        assert_eq!(block_literal(doc, Block::Doc), format!("\"\"\"{doc}\"\"\""));
        let json = "{\n  \"a\": \"b\\\"c\\\\N\"\n}";
        assert_eq!(block_literal(json, Block::Raw), format!("r'''{json}'''"));
        // Text that would end the block, escape its quote or not parse.
        for (text, layout) in [
            ("t\"\"\";open('PWNED','w');\"\"\"", Block::Doc),
            ("a\"", Block::Doc),
            ("t\\N", Block::Doc),
            ("a\rb", Block::Doc),
            ("a\u{0}b", Block::Doc),
            ("a\u{2028}b", Block::Doc),
            ("x''';import os;'''", Block::Raw),
            ("ends with \\", Block::Raw),
            ("tab\there", Block::Raw),
        ] {
            assert_eq!(block_literal(text, layout), str_repr(text), "{text:?}");
        }
    }

    #[test]
    fn str_repr_never_holds_a_raw_line_break_or_control() {
        // The code points below U+3000 and the plane ends: a repr is one
        // line of printable text.
        let mut text: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        text.extend([
            '\u{feff}',
            '\u{fffe}',
            '\u{ffff}',
            '\u{10ffff}',
            '\u{1f600}',
        ]);
        let r = str_repr(&text);
        assert!(r.chars().all(|c| c == ' ' || is_printable(c)), "{r}");
        assert!(!r.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}']));
    }

    #[test]
    fn json_tuples() {
        let v = arg("[[512], [141, 512], [], []]");
        assert_eq!(py_repr(&v, true), "((512,), (141, 512), (), ())");
        assert_eq!(py_repr(&v, false), "[[512], [141, 512], [], []]");
        assert_eq!(py_repr(&arg(r#"["", "1", "0."]"#), true), "('', '1', '0.')");
        assert_eq!(
            py_repr(&arg(r#"["c10::BFloat16", "Scalar"]"#), true),
            "('c10::BFloat16', 'Scalar')"
        );
        assert_eq!(py_repr(&arg(r#"[]"#), true), "()");
        assert_eq!(py_repr(&arg(r#"[[]]"#), true), "((),)");
        assert_eq!(py_repr(&arg(r#"[1]"#), false), "[1]");
    }

    #[test]
    fn json_scalars_and_dicts() {
        assert_eq!(py_repr(&arg(r#"null"#), true), "None");
        assert_eq!(py_repr(&arg(r#"true"#), true), "True");
        assert_eq!(py_repr(&arg(r#"false"#), true), "False");
        assert_eq!(py_repr(&arg(r#"-3"#), true), "-3");
        assert_eq!(
            py_repr(&arg("18446744073709551615"), true),
            "18446744073709551615"
        );
        assert_eq!(py_repr(&arg(r#"1.0"#), true), "1.0");
        assert_eq!(py_repr(&arg(r#"1e-5"#), true), "1e-05");
        assert_eq!(py_repr(&arg(r#""it's""#), true), "\"it's\"");
        let v = arg(r#"{"b": [1, 2.5], "a": {"x": null}}"#);
        assert_eq!(py_repr(&v, true), "{'a': {'x': None}, 'b': (1, 2.5)}");
        assert_eq!(py_repr(&v, false), "{'a': {'x': None}, 'b': [1, 2.5]}");
        assert_eq!(py_repr(&arg(r#"{}"#), true), "{}");
        assert_eq!(
            py_repr(&arg(r#"[true, null, [1.5, "a"]]"#), true),
            "(True, None, (1.5, 'a'))"
        );
    }

    #[test]
    fn numpy_scalars() {
        assert_eq!(np_float(5.0), "np.float64(5.0)");
        assert_eq!(np_float(1e-5), "np.float64(1e-05)");
        assert_eq!(np_float(f64::NAN), "np.float64(nan)");
        assert_eq!(np_int(5), "np.int64(5)");
        assert_eq!(np_int(-7), "np.int64(-7)");
    }
}
