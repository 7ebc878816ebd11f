//! A hand-written reader of JSON values in their plain form: strings
//! without escape sequences, numbers in the forms serde reads exactly,
//! containers not too deep. Every method gives up (returns `None`) on
//! anything else, for the caller to parse the value with serde, which
//! decides and words any error: the fast paths of the Kineto and rocprof
//! loaders, whose results never depend on which reader ran.

/// Deeper containers than this are left to serde (its limit is 128).
pub(crate) const MAX_DEPTH: usize = 64;

/// The index of the first quote, backslash or control character in `b`,
/// sixteen bytes at a time, then eight (strings are mostly short keys,
/// where `memchr` costs more to start than to run).
pub(crate) fn string_stop(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    #[cfg(target_arch = "x86_64")]
    let mut i = {
        let mut i = 0;
        while let Some(chunk) = b.get(i..i + 16).and_then(|c| <&[u8; 16]>::try_from(c).ok()) {
            let hit = string_stops_sse2(chunk);
            if hit != 0 {
                return Some(i + hit.trailing_zeros() as usize);
            }
            i += 16;
        }
        i
    };
    #[cfg(not(target_arch = "x86_64"))]
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 8) {
        let mut le = [0u8; 8];
        le.copy_from_slice(chunk);
        let w = u64::from_le_bytes(le);
        let q = w ^ (ONES * u64::from(b'"'));
        let bs = w ^ (ONES * u64::from(b'\\'));
        // High bit of each byte that is zero in `q` (a quote) or `bs` (a
        // backslash) or below 0x20 in `w`; only bytes above a true hit can
        // be flagged wrongly, so the lowest flag is exact.
        let zero = |v: u64| v.wrapping_sub(ONES) & !v;
        let hit = (zero(q) | zero(bs) | (w.wrapping_sub(ONES * 0x20) & !w)) & HIGHS;
        if hit != 0 {
            return Some(i + hit.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|k| i + k)
}

/// Bit `k` set where byte `k` of `chunk` is a quote, a backslash or a
/// control character: SSE2 compares (part of every x86_64 CPU), sixteen
/// bytes at a time.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn string_stops_sse2(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in the x86_64 baseline; the load reads the 16 bytes
    // of `chunk`, unaligned loads being allowed.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Unsigned: max(v, 0x1f) == 0x1f exactly where v <= 0x1f.
        let limit = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit);
        let any = _mm_or_si128(_mm_or_si128(quote, backslash), control);
        _mm_movemask_epi8(any) as u32
    }
}

/// The length of the plain string whose text starts at `b[start]` (after
/// its opening quote): up to its closing quote, None when an escape, a
/// control character or the end of `b` comes first (left to serde).
#[inline(always)]
pub(crate) fn plain_string_len(b: &[u8], start: usize) -> Option<usize> {
    let len = string_stop(b.get(start..)?)?;
    (b[start + len] == b'"').then_some(len)
}

/// Where the JSON whitespace (space, tab, newline, carriage return) at
/// `b[i..]` ends. Pretty-printed traces indent every line by 4 to 14
/// spaces, nearly half their bytes: runs longer than one byte are taken
/// sixteen bytes at a time.
#[inline(always)]
pub(crate) fn whitespace_end(b: &[u8], mut i: usize) -> usize {
    let is_ws = |c: &u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
    // Most values follow nothing or the one space after a colon.
    if !b.get(i).is_some_and(is_ws) {
        return i;
    }
    i += 1;
    if !b.get(i).is_some_and(is_ws) {
        return i;
    }
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = b.get(i..i + 16).and_then(|c| <&[u8; 16]>::try_from(c).ok()) {
        let other = !whitespace_sse2(chunk) & 0xffff;
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 16;
    }
    while b.get(i).is_some_and(is_ws) {
        i += 1;
    }
    i
}

/// Bit `k` set where byte `k` of `chunk` is JSON whitespace (SSE2, as
/// [`string_stops_sse2`]).
#[cfg(target_arch = "x86_64")]
fn whitespace_sse2(chunk: &[u8; 16]) -> u32 {
    any_of_sse2(chunk, *b" \n\r\t")
}

/// Bit `k` set where byte `k` of `chunk` is one of `set` (SSE2, as
/// [`string_stops_sse2`]).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
fn any_of_sse2<const N: usize>(chunk: &[u8; 16], set: [u8; N]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    // SAFETY: SSE2 is in the x86_64 baseline; the load reads the 16 bytes
    // of `chunk`, unaligned loads being allowed.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
        let any = set.iter().fold(_mm_setzero_si128(), |any, &c| {
            _mm_or_si128(any, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)))
        });
        _mm_movemask_epi8(any) as u32
    }
}

/// Where `text` (five bytes: a key with its quotes, `"cat"`) first occurs
/// in `b` from `from` on, provided no `{`, `[` or backslash comes before
/// it: with `from` just inside an object, such an occurrence is in no
/// nested value and no escaped string. None when one of those bytes comes
/// first, or `text` does not occur. Sixteen places at a time where `b` has
/// the bytes (one search and one check: an event's `cat` follows a few
/// short members).
pub(crate) fn plain_key(b: &[u8], mut from: usize, text: &[u8; 5]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    while let Some(window) = b
        .get(from..from + 20)
        .and_then(|w| <&[u8; 20]>::try_from(w).ok())
    {
        let (found, blocked) = key_places_sse2(window, text);
        // The lowest set bit comes first; no place is both.
        let first = |m: u32| if m == 0 { 16 } else { m.trailing_zeros() };
        if first(blocked) < first(found) {
            return None;
        }
        if found != 0 {
            return Some(from + first(found) as usize);
        }
        from += 16;
    }
    while from < b.len() {
        if b[from..].starts_with(text) {
            return Some(from);
        }
        if matches!(b[from], b'{' | b'[' | b'\\') {
            return None;
        }
        from += 1;
    }
    None
}

/// For the first sixteen places of `window`: bit `k` of the first mask
/// set where `text` starts at place `k`, of the second where a `{`, `[`
/// or backslash is (SSE2, as [`string_stops_sse2`]).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn key_places_sse2(window: &[u8; 20], text: &[u8; 5]) -> (u32, u32) {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in the x86_64 baseline; each load reads 16 of the 20
    // bytes of `window` (from offsets 0 to 4), unaligned loads being allowed.
    let found = unsafe {
        let at = |k: usize| {
            let v = _mm_loadu_si128(window.as_ptr().add(k).cast::<__m128i>());
            _mm_cmpeq_epi8(v, _mm_set1_epi8(text[k] as i8))
        };
        let all = _mm_and_si128(
            _mm_and_si128(_mm_and_si128(at(0), at(1)), _mm_and_si128(at(2), at(3))),
            at(4),
        );
        _mm_movemask_epi8(all) as u32
    };
    let head = window.first_chunk::<16>().expect("20 bytes hold 16");
    (found, any_of_sse2(head, *b"{[\\"))
}

/// A reader of one JSON value in `text`, at `pos`, keeping `extra` for
/// what a format's reader adds (the Kineto reader: the op argument texts it
/// has checked).
pub(crate) struct Reader<'a, X> {
    /// The value's text.
    pub(crate) text: &'a str,
    /// Where the reader is.
    pub(crate) pos: usize,
    /// What a format's reader keeps besides.
    pub(crate) extra: X,
}

/// The powers of ten that are exact in an `f64`.
pub(crate) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Moves `i` past the digits at `b[i..]`, handing each to `digit`; how many.
#[inline(always)]
fn digit_run(b: &[u8], i: &mut usize, digit: &mut impl FnMut(u8)) -> usize {
    let from = *i;
    while let Some(&c) = b.get(*i)
        && c.is_ascii_digit()
    {
        digit(c - b'0');
        *i += 1;
    }
    *i - from
}

/// Where a number in JSON's grammar starting at `b[i]` ends, and its
/// shape; `digit` gets each digit before the exponent, in order. None when
/// none starts there. The one grammar of [`Reader::number`], which folds
/// the digits, and [`Reader::skip`], which passes over them.
#[inline(always)]
fn number_shape(b: &[u8], mut i: usize, mut digit: impl FnMut(u8)) -> Option<NumberShape> {
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let mut digits = match b.get(i)? {
        b'0' => {
            digit(0);
            i += 1;
            1
        }
        b'1'..=b'9' => digit_run(b, &mut i, &mut digit),
        _ => return None,
    };
    let mut fraction = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        fraction = digit_run(b, &mut i, &mut digit);
        if fraction == 0 {
            return None;
        }
        digits += fraction;
    }
    let mut exponent = false;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        exponent = true;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digit_run(b, &mut i, &mut |_| {}) == 0 {
            return None;
        }
    }
    Some(NumberShape {
        end: i,
        negative,
        digits,
        fraction,
        exponent,
    })
}

/// What [`number_shape`] found.
struct NumberShape {
    end: usize,
    negative: bool,
    /// Digits before any exponent.
    digits: usize,
    /// How many of them follow the decimal point.
    fraction: usize,
    exponent: bool,
}

/// A number as [`Reader::number`] read it.
pub(crate) struct Number<'a> {
    pub(crate) text: &'a str,
    pub(crate) negative: bool,
    /// The digits before any exponent as one integer, when at most 19.
    pub(crate) mantissa: Option<u64>,
    /// How many of them follow the decimal point.
    pub(crate) fraction: usize,
    pub(crate) exponent: bool,
}

impl Number<'_> {
    /// The integer serde reads as `i64`: no fraction or exponent, at most
    /// 18 digits, not `-0` (a float to serde).
    pub(crate) fn int(&self) -> Option<i64> {
        if self.fraction > 0 || self.exponent {
            return None;
        }
        let digits = self.text.len() - usize::from(self.negative);
        let m = i64::try_from(self.mantissa?).ok()?;
        match (self.negative, m) {
            _ if digits > 18 => None,
            (true, 0) => None,
            (true, m) => Some(-m),
            (false, m) => Some(m),
        }
    }
}

/// Reads all of `json` with `read`, given a reader that keeps `extra`:
/// None unless `json` is UTF-8, `read` reads a value, and only whitespace
/// follows it. `ascii` says the splitter's walk saw only ASCII bytes in
/// `json`, which are UTF-8 without a check.
pub(crate) fn read_whole<'a, X, T>(
    json: &'a [u8],
    ascii: bool,
    extra: X,
    read: impl FnOnce(&mut Reader<'a, X>) -> Option<T>,
) -> Option<T> {
    let text = text_of(json, ascii)?;
    let mut r = Reader {
        text,
        pos: 0,
        extra,
    };
    let value = read(&mut r)?;
    r.ws();
    (r.pos == text.len()).then_some(value)
}

/// `json` as text, checked unless `ascii` (see [`read_whole`]): None when
/// it is not UTF-8.
#[allow(unsafe_code)]
fn text_of(json: &[u8], ascii: bool) -> Option<&str> {
    if ascii {
        debug_assert!(json.is_ascii());
        // SAFETY: ASCII bytes are UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(json) })
    } else {
        std::str::from_utf8(json).ok()
    }
}

impl<'a> Reader<'a, ()> {
    /// A reader of `text` from its start that keeps nothing else.
    #[cfg(test)]
    pub(crate) fn of(text: &'a str) -> Reader<'a, ()> {
        Reader {
            text,
            pos: 0,
            extra: (),
        }
    }
}

impl<'a, X> Reader<'a, X> {
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    pub(crate) fn ws(&mut self) {
        self.pos = whitespace_end(self.bytes(), self.pos);
    }

    /// Skips whitespace and consumes `c`.
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.pos += 1)
    }

    /// A string (after whitespace) without its quotes; None for one with an
    /// escape (serde unescapes it) or a control character (serde refuses it).
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<&'a str> {
        let (start, len) = self.string_span()?;
        self.text.get(start..start + len)
    }

    /// Moves past a string (after whitespace) as [`Self::string`] reads
    /// it; where its text starts, and its length.
    #[inline(always)]
    pub(crate) fn string_span(&mut self) -> Option<(usize, usize)> {
        self.eat(b'"')?;
        let start = self.pos;
        let len = plain_string_len(self.bytes(), start)?;
        self.pos = start + len + 1;
        Some((start, len))
    }

    /// `null` (after whitespace), consumed; false (nothing consumed) otherwise.
    #[inline(always)]
    pub(crate) fn null(&mut self) -> bool {
        self.ws();
        if self.bytes()[self.pos..].starts_with(b"null") {
            self.pos += 4;
            true
        } else {
            false
        }
    }

    /// A number in JSON's grammar, read once: its text, and its digits as
    /// an integer where there are few enough of them.
    pub(crate) fn number(&mut self) -> Option<Number<'a>> {
        self.ws();
        let start = self.pos;
        // The digits before the exponent as one integer (wrapping: exact
        // while there are at most 19 of them).
        let mut mantissa = 0u64;
        let shape = number_shape(self.bytes(), start, |d| {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(d));
        })?;
        self.pos = shape.end;
        Some(Number {
            text: self.text.get(start..shape.end)?,
            negative: shape.negative,
            mantissa: (shape.digits <= 19).then_some(mantissa),
            fraction: shape.fraction,
            exponent: shape.exponent,
        })
    }

    /// An integer in the plain form serde reads as `i64` (at most 18 digits,
    /// not `-0`, which serde reads as a float).
    pub(crate) fn int(&mut self) -> Option<i64> {
        self.number()?.int()
    }

    /// Skips a number (at `pos`) that [`Self::number`] would read: the same
    /// grammar, without folding its digits.
    pub(crate) fn skip_number(&mut self) -> Option<()> {
        self.pos = number_shape(self.bytes(), self.pos, |_| {})?.end;
        Some(())
    }

    /// Skips one value, checking its syntax; None when serde must decide.
    pub(crate) fn skip(&mut self, depth: usize) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => self.string_span().map(drop),
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => {
                self.pos += 1;
                self.members(|r, _| r.skip(depth + 1))
            }
            b'[' => {
                self.pos += 1;
                self.items(b']', |r| r.skip(depth + 1))
            }
            b't' | b'f' | b'n' => {
                let rest = &self.bytes()[self.pos..];
                let n = [&b"true"[..], b"false", b"null"]
                    .into_iter()
                    .find(|w| rest.starts_with(w))?
                    .len();
                self.pos += n;
                Some(())
            }
            _ => self.skip_number(),
        }
    }

    /// `null` (absent, as serde reads an `Option`), or what `read` reads.
    #[inline(always)]
    pub(crate) fn opt<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        if self.null() {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A value's text as written (serde's `RawValue`); `null` is absent.
    pub(crate) fn raw(&mut self, depth: usize) -> Option<Option<&'a str>> {
        self.opt(|r| r.raw_text(depth))
    }

    /// The text of the value at `pos` (not `null`), checked at `depth`.
    pub(crate) fn raw_text(&mut self, depth: usize) -> Option<&'a str> {
        let start = self.pos;
        self.skip(depth)?;
        self.text.get(start..self.pos)
    }

    /// The members of an object, after its `{`: calls `member` with each
    /// key (the reader then before its value), through the closing `}`.
    pub(crate) fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.items(b'}', |r| {
            let key = r.string()?;
            r.eat(b':')?;
            member(r, key)
        })
    }

    /// The comma-separated items of an array or object, after its opening
    /// bracket, through `close`; `item` reads one.
    pub(crate) fn items(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.ws();
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek()? {
                b',' => self.pos += 1,
                c if c == close => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_quote_backslash_or_control_character() {
        for (text, want) in [
            ("abc\"", Some(3)),
            ("abcdefghijklmnop\"x\"", Some(16)),
            ("abcdefgh\u{1}ij\"", Some(8)),
            ("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\"", Some(10)),
            ("\u{7f}\u{80}xyz", None),
            ("", None),
            ("\"", Some(0)),
            ("ab\tc\"", Some(2)),
            ("abcdefghij\\\"", Some(10)),
        ] {
            assert_eq!(string_stop(text.as_bytes()), want, "{text:?}");
        }
        // Every position, every kind of hit, behind every byte value.
        for n in 0..20 {
            for filler in 0x20..=0xffu8 {
                if filler == b'"' || filler == b'\\' {
                    continue;
                }
                for hit in [b'"', b'\\', 0x1f, 0x00] {
                    let mut b = vec![filler; n];
                    b.push(hit);
                    b.extend([0u8, b'"']);
                    assert_eq!(string_stop(&b), Some(n), "{filler} {hit}");
                }
            }
        }
    }

    /// The whitespace skipper stops where a byte-by-byte walk does: every
    /// run length (through several 16-byte chunks), every following byte,
    /// from any start, at the end of the input too.
    #[test]
    fn whitespace_ends_where_a_bytewise_walk_ends() {
        let bytewise = |b: &[u8], mut i: usize| {
            while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
                i += 1;
            }
            i
        };
        let blanks = b" \n\r\t";
        for n in 0..40 {
            let run: Vec<u8> = (0..n).map(|k| blanks[(k * 7 + n) % 4]).collect();
            for next in (0..=0xffu8).map(Some).chain([None]) {
                let mut b = b"x".to_vec();
                b.extend(&run);
                b.extend(next);
                // Blanks past `end`: a read beyond the slice would take them.
                b.extend(b"   ");
                let end = 1 + n + usize::from(next.is_some());
                for from in 0..b.len().min(end + 1) {
                    assert_eq!(
                        whitespace_end(&b[..end], from),
                        bytewise(&b[..end], from),
                        "run {n}, next {next:?}, from {from}"
                    );
                }
            }
        }
        assert_eq!(whitespace_end(b"", 0), 0);
        assert_eq!(whitespace_end(b"  ", 2), 2);
        // A form feed is not JSON whitespace (it is ASCII whitespace).
        assert_eq!(whitespace_end(b"  \x0c ", 0), 2);
    }

    #[test]
    fn plain_key_finds_what_a_bytewise_scan_finds() {
        let text = b"\"cat\"";
        let bytewise = |b: &[u8], from: usize| {
            (from..b.len())
                .find(|&i| b[i..].starts_with(text) || matches!(b[i], b'{' | b'[' | b'\\'))
                .filter(|&i| b[i..].starts_with(text))
        };
        // The key, a near miss or nothing at one place, a blocking byte
        // or a harmless one at another, in buffers of up to three windows
        // (the bytewise tail included), from every start in the first.
        let pieces: [&[u8]; 4] = [text, b"\"cax\"", b"\"ca", b""];
        for len in (0..=24).chain([36, 51]) {
            for key_at in 0..len {
                for piece in pieces {
                    for (other_at, other) in
                        (0..len).flat_map(|k| [b'{', b'[', b'\\', b'}'].map(|c| (k, c)))
                    {
                        let mut b = vec![b' '; len];
                        b[other_at] = other;
                        let end = (key_at + piece.len()).min(len);
                        b[key_at..end].copy_from_slice(&piece[..end - key_at]);
                        for from in 0..=len.min(21) {
                            assert_eq!(
                                plain_key(&b, from, text),
                                bytewise(&b, from),
                                "{:?} from {from}",
                                String::from_utf8_lossy(&b)
                            );
                        }
                    }
                }
            }
        }
    }
}
