//! A hand-written reader for the common shape of a Kineto event: one JSON
//! object of plain strings, numbers and nested arrays/objects, no escape
//! sequences. It reads only the fields the builder takes and gives up
//! (returns `None`) on anything it does not handle exactly as serde would:
//! escapes, duplicate known keys, numbers outside the plain integer and
//! finite float forms, unexpected types, deep nesting, invalid JSON. The
//! caller then parses the event with serde, which decides and words any
//! error, so the result never depends on which reader ran.

use std::borrow::Cow;

use crate::trace::args::LinkIds;

use super::{ArgTexts, EventTexts, Num};

/// Deeper containers than this are left to serde (its limit is 128).
const MAX_DEPTH: usize = 64;

/// Reads `json` (one element of `traceEvents`) into `ev`, which must be
/// empty (its default); false when serde must, `ev` then holding part of
/// the event. Filled in place: the event is some 500 bytes, and moving it
/// out of each reader function cost more than a tenth of the reading.
pub(super) fn read_into<'a>(
    json: &'a [u8],
    ev: &mut EventTexts<'a>,
    seen: Option<&mut SeenArgs<'a>>,
) -> bool {
    let Ok(text) = std::str::from_utf8(json) else {
        return false;
    };
    let mut r = Reader { text, pos: 0, seen };
    if r.event(ev).is_none() {
        return false;
    }
    r.ws();
    r.pos == text.len()
}

/// [`read_into`] a new event; None when serde must.
#[cfg(test)]
pub(super) fn read(json: &[u8]) -> Option<EventTexts<'_>> {
    let mut ev = EventTexts::default();
    read_into(json, &mut ev, None).then_some(ev)
}

/// Buckets of [`SeenArgs`] per op argument key.
const SEEN_BUCKETS: usize = 64;

/// Texts [`SeenArgs`] keeps per bucket, the latest first.
const SEEN_WAYS: usize = 4;

/// Op argument texts (`Input Dims`, `Input type`, ...) the reader has
/// already checked, borrowed from the bytes being read, filed by key and
/// by a hash of the op's name, the last few per bucket: an op's shapes
/// repeat (every layer, every step), so a value that starts with one of
/// the texts kept for its op and key is that value (an array or a string
/// ends at its own closing bracket or quote, so the reader would stop at
/// the same byte) and needs no second check. Checking these values took
/// about a tenth of a report's instructions, most of them on repeats. One
/// serves all the events of one buffer (the texts borrow it).
pub(super) struct SeenArgs<'a> {
    texts: [[[&'a str; SEEN_WAYS]; SEEN_BUCKETS]; 4],
}

impl<'a> SeenArgs<'a> {
    /// Nothing seen yet.
    pub(super) fn new() -> SeenArgs<'a> {
        SeenArgs {
            texts: [[[""; SEEN_WAYS]; SEEN_BUCKETS]; 4],
        }
    }

    /// The bucket of an op named `name`.
    fn bucket(name: &str) -> usize {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(name) as usize % SEEN_BUCKETS
    }

    /// The length of a text kept for key `slot` in `bucket` that `rest`
    /// starts with.
    fn find(&self, slot: usize, bucket: usize, rest: &str) -> Option<usize> {
        self.texts[slot][bucket]
            .iter()
            .find(|t| !t.is_empty() && rest.starts_with(**t))
            .map(|t| t.len())
    }

    /// Keeps `text`, a checked value of key `slot`, if it ends itself (an
    /// array, object or string; a number could go on in a longer one).
    fn keep(&mut self, slot: usize, bucket: usize, text: &'a str) {
        if matches!(text.as_bytes().first(), Some(b'[' | b'{' | b'"')) {
            let ways = &mut self.texts[slot][bucket];
            ways.rotate_right(1);
            ways[0] = text;
        }
    }
}

/// The index of the first quote, backslash or control character in `b`,
/// sixteen bytes at a time, then eight (strings are mostly short keys,
/// where `memchr` costs more to start than to run).
fn string_stop(b: &[u8]) -> Option<usize> {
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

struct Reader<'a, 's> {
    text: &'a str,
    pos: usize,
    /// Op argument texts checked before, when the caller keeps them.
    seen: Option<&'s mut SeenArgs<'a>>,
}

/// The powers of ten that are exact in an `f64`.
const POW10: [f64; 23] = [
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
struct Number<'a> {
    text: &'a str,
    negative: bool,
    /// The digits before any exponent as one integer, when at most 19.
    mantissa: Option<u64>,
    /// How many of them follow the decimal point.
    fraction: usize,
    exponent: bool,
}

impl Number<'_> {
    /// The integer serde reads as `i64`: no fraction or exponent, at most
    /// 18 digits, not `-0` (a float to serde).
    fn int(&self) -> Option<i64> {
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

/// Event keys the reader takes, as bits of a seen-mask (serde refuses a
/// repeated field; the reader leaves that case to it).
const PH: u32 = 1;
const CAT: u32 = 1 << 1;
const NAME: u32 = 1 << 2;
const PID: u32 = 1 << 3;
const TID: u32 = 1 << 4;
const TS: u32 = 1 << 5;
const DUR: u32 = 1 << 6;
const ID: u32 = 1 << 7;
const ARGS: u32 = 1 << 8;

impl<'a> Reader<'a, '_> {
    /// A reader of `text` from its start that keeps no op texts.
    #[cfg(test)]
    fn of(text: &'a str) -> Self {
        Reader {
            text,
            pos: 0,
            seen: None,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn ws(&mut self) {
        let b = self.bytes();
        while self.pos < b.len() && matches!(b[self.pos], b' ' | b'\n' | b'\r' | b'\t') {
            self.pos += 1;
        }
    }

    /// Skips whitespace and consumes `c`.
    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek()? == c).then(|| self.pos += 1)
    }

    /// A string (after whitespace) without its quotes; None for one with an
    /// escape (serde unescapes it) or a control character (serde refuses it).
    fn string(&mut self) -> Option<&'a str> {
        let (start, len) = self.string_span()?;
        self.text.get(start..start + len)
    }

    /// Moves past a string (after whitespace) as [`Self::string`] reads
    /// it; where its text starts, and its length.
    #[inline(always)]
    fn string_span(&mut self) -> Option<(usize, usize)> {
        self.eat(b'"')?;
        let start = self.pos;
        let len = string_stop(&self.bytes()[start..])?;
        if self.bytes()[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        Some((start, len))
    }

    /// `null` (after whitespace), consumed; false (nothing consumed) otherwise.
    fn null(&mut self) -> bool {
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
    fn number(&mut self) -> Option<Number<'a>> {
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
    fn int(&mut self) -> Option<i64> {
        self.number()?.int()
    }

    /// A number as serde reads it into [`Num`]; None for the forms left to
    /// serde (long integers, `-0`, floats out of range).
    fn num(&mut self) -> Option<Num> {
        let n = self.number()?;
        if n.fraction == 0 && !n.exponent {
            return Some(Num {
                value: n.int()? as f64,
                is_int: true,
            });
        }
        let value = match n.mantissa {
            // Both operands exact, so the one division is correctly rounded
            // (Clinger's fast path), as every correct parser's result is.
            Some(m) if !n.exponent && m <= 1 << 53 && n.fraction < POW10.len() => {
                let v = m as f64 / POW10[n.fraction];
                if n.negative { -v } else { v }
            }
            // serde_json's float_roundtrip parsing and std's are both
            // correctly rounded, so they agree.
            _ => n.text.parse().ok()?,
        };
        value.is_finite().then_some(Num {
            value,
            is_int: false,
        })
    }

    /// Skips a number (at `pos`) that [`Self::number`] would read: the same
    /// grammar, without folding its digits.
    fn skip_number(&mut self) -> Option<()> {
        self.pos = number_shape(self.bytes(), self.pos, |_| {})?.end;
        Some(())
    }

    /// Skips one value, checking its syntax; None when serde must decide.
    fn skip(&mut self, depth: usize) -> Option<()> {
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
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null() {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A value's text as written (serde's `RawValue`); `null` is absent.
    fn raw(&mut self, depth: usize) -> Option<Option<&'a str>> {
        self.opt(|r| r.raw_text(depth))
    }

    /// The text of the value at `pos` (not `null`), checked at `depth`.
    fn raw_text(&mut self, depth: usize) -> Option<&'a str> {
        let start = self.pos;
        self.skip(depth)?;
        self.text.get(start..self.pos)
    }

    /// An op argument's text (as [`Self::raw`] reads it at depth 2), not
    /// checked again when it repeats one [`SeenArgs`] holds for the op
    /// (`bucket`: of its name; None before the name is read, or when no
    /// texts are kept).
    fn op_arg(&mut self, slot: usize, bucket: Option<usize>) -> Option<Option<&'a str>> {
        self.opt(|r| {
            let start = r.pos;
            let rest = r.text.get(start..).unwrap_or_default();
            let seen = bucket.zip(r.seen.as_deref());
            if let Some(len) = seen.and_then(|(b, s)| s.find(slot, b, rest)) {
                r.pos += len;
                return r.text.get(start..r.pos);
            }
            let text = r.raw_text(2)?;
            if let (Some(b), Some(s)) = (bucket, r.seen.as_deref_mut()) {
                s.keep(slot, b, text);
            }
            Some(text)
        })
    }

    /// The members of an object, after its `{`: calls `member` with each
    /// key (the reader then before its value), through the closing `}`.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.items(b'}', |r| {
            let key = r.string()?;
            r.eat(b':')?;
            member(r, key)
        })
    }

    /// The comma-separated items of an array or object, after its opening
    /// bracket, through `close`; `item` reads one.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
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

    fn event(&mut self, ev: &mut EventTexts<'a>) -> Option<()> {
        self.eat(b'{')?;
        let mut seen = 0u32;
        self.members(|r, key| {
            let bit = match key {
                "ph" => PH,
                "cat" => CAT,
                "name" => NAME,
                "pid" => PID,
                "tid" => TID,
                "ts" => TS,
                "dur" => DUR,
                "id" => ID,
                "args" => ARGS,
                _ => return r.skip(1),
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match bit {
                PH => ev.ph = r.opt(Self::string)?.map(Cow::Borrowed),
                CAT => ev.cat = r.opt(Self::string)?.map(Cow::Borrowed),
                NAME => ev.name = r.opt(Self::string)?.map(Cow::Borrowed),
                PID => ev.pid = Some(r.ident()?),
                TID => ev.tid = Some(r.ident()?),
                TS => ev.ts = r.opt(Self::num)?,
                DUR => ev.dur = r.opt(Self::num)?,
                ID => ev.id = r.opt(Self::int)?,
                // `null` is absent, as for the other fields.
                _ if r.null() => ev.args = None,
                _ => {
                    // Hashed only when the texts are kept.
                    let bucket = r
                        .seen
                        .as_ref()
                        .and(ev.name.as_deref())
                        .map(SeenArgs::bucket);
                    r.args(ev.args.insert(ArgTexts::default()), bucket)?
                }
            }
            Some(())
        })
    }

    /// A pid/tid: an integer, a string or `null`.
    fn ident(&mut self) -> Option<super::Ident<'a>> {
        use super::Ident;
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(|s| Ident::Str(Cow::Borrowed(s))),
            b'n' => self.null().then_some(Ident::Null),
            _ => self.int().map(Ident::Int),
        }
    }

    /// The `args` object, into `a` (empty); `bucket`: the op's in
    /// [`SeenArgs`].
    fn args(&mut self, a: &mut ArgTexts<'a>, bucket: Option<usize>) -> Option<()> {
        self.eat(b'{')?;
        let mut seen = 0u32;
        let mut links = LinkIds::default();
        self.members(|r, key| {
            // Each known key: its bit, then where its value goes.
            let (bit, slot): (u32, Slot) = match key {
                "correlation" => (1, Slot::Link(0)),
                "External id" => (1 << 1, Slot::Link(1)),
                "stream" => (1 << 2, Slot::Link(2)),
                "Sequence number" => (1 << 3, Slot::Link(3)),
                "Input Dims" => (1 << 4, Slot::Op(0)),
                "Input type" => (1 << 5, Slot::Op(1)),
                "Input Strides" => (1 << 6, Slot::Op(2)),
                "Concrete Inputs" => (1 << 7, Slot::Op(3)),
                "kernel" => (1 << 8, Slot::Kernel),
                "name" => (1 << 9, Slot::Name),
                "labels" => (1 << 10, Slot::Labels),
                _ => match crate::trace::args::COLLECTIVE_ARG_KEYS
                    .iter()
                    .position(|k| *k == key)
                {
                    Some(i) => (1 << (11 + i), Slot::Collective(i)),
                    None => return r.skip(2),
                },
            };
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            match slot {
                Slot::Link(i) => {
                    let v = r.opt(Self::int)?;
                    match i {
                        0 => links.correlation = v,
                        1 => links.external_id = v,
                        2 => links.stream = v,
                        _ => links.sequence = v,
                    }
                }
                Slot::Op(i) => a.op[i] = r.op_arg(i, bucket)?,
                Slot::Kernel => a.kernel = r.raw(2)?,
                Slot::Name => a.name = r.raw(2)?,
                Slot::Labels => a.labels = r.raw(2)?,
                Slot::Collective(i) => a.collective[i] = r.raw(2)?,
            }
            Some(())
        })?;
        a.links = links;
        Some(())
    }
}

/// Where a known `args` key's value goes.
#[derive(Clone, Copy)]
enum Slot {
    Link(usize),
    Op(usize),
    Kernel,
    Name,
    Labels,
    Collective(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_common_shape() {
        let json = br#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": "t 1",
            "ts": 1694128201545.125, "dur": 12, "unknown": [1, {"a": [true, null]}, -2.5e3],
            "args": {"External id": 5, "Input Dims": [[2, 3], []], "Ev Idx": 4,
                     "In msg nelems": 1024, "Concrete Inputs": null}}"#;
        let ev = read(json).unwrap();
        assert_eq!(ev.ph.as_deref(), Some("X"));
        assert_eq!(ev.name.as_deref(), Some("aten::mm"));
        assert!(matches!(ev.pid, Some(super::super::Ident::Int(7))));
        assert!(matches!(&ev.tid, Some(super::super::Ident::Str(t)) if t == "t 1"));
        let ts = ev.ts.unwrap();
        assert_eq!((ts.value, ts.is_int), (1694128201545.125, false));
        assert_eq!(ev.dur.map(|d| (d.value, d.is_int)), Some((12.0, true)));
        let a = ev.args.unwrap();
        assert_eq!(a.links.external_id, Some(5));
        assert_eq!(a.op[0], Some("[[2, 3], []]"));
        assert_eq!(
            a.op[3], None,
            "null is absent, as serde reads Option<&RawValue>"
        );
        assert_eq!(a.collective[5], Some("1024"));
    }

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

    /// Deterministic draws below `n` (xorshift from `seed`).
    fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    #[test]
    fn numbers_read_as_serde_reads_them() {
        let mut next = draws(0x9e37_79b9_7f4a_7c15);
        let mut fast = 0;
        for _ in 0..200_000 {
            let mut t = String::new();
            if next(3) == 0 {
                t.push('-');
            }
            for _ in 0..=next(20) {
                t.push(char::from(b'0' + next(10) as u8));
            }
            if next(2) == 0 {
                t.push('.');
                for _ in 0..=next(12) {
                    t.push(char::from(b'0' + next(10) as u8));
                }
            }
            if next(8) == 0 {
                t.push_str(["e", "E-", "e+"][next(3) as usize]);
                t.push_str(&next(400).to_string());
            }
            let mut r = Reader::of(&t);
            // A number the reader stops inside (a leading zero) is refused
            // by the member after it.
            let mine = r.num().filter(|_| r.pos == t.len());
            let theirs = serde_json::from_str::<Num>(&t).ok();
            if let Some(n) = mine {
                fast += 1;
                let want = theirs.unwrap_or_else(|| panic!("{t}: serde refuses"));
                assert_eq!(n.value.to_bits(), want.value.to_bits(), "{t}");
                assert_eq!(n.is_int, want.is_int, "{t}");
            }
        }
        assert!(fast > 100_000, "{fast}");
        for (t, want) in [
            ("1694128201545.125", Some(1694128201545.125)),
            ("-0.0", Some(-0.0)),
            ("0.30000000000000004", Some(0.30000000000000004)),
            ("9007199254740993.5", Some(9007199254740993.5)),
            ("-0", None),
            ("1234567890123456789", None),
        ] {
            let got = Reader::of(t).num().map(|n| n.value.to_bits());
            assert_eq!(got, want.map(f64::to_bits), "{t}");
        }
    }

    #[test]
    fn repeated_op_arguments_read_as_when_read_alone() {
        let events = [
            r#"{"name": "aten::mm", "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": 12}}"#,
            r#"{"name": "aten::mm", "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Concrete Inputs": 123}}"#,
            r#"{"name": "aten::mm", "args": {"Input Dims": [[2, 3], [3, 4], [5]], "Input type": ["float", "float"]}}"#,
            r#"{"name": "aten::mm", "args": {"Input Dims": [[2, 3], [3, 4]]x, "Input type": ["float"]}}"#,
            r#"{"name": "aten::mm", "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}}"#,
            r#"{"name": "aten::add", "args": {"Input Dims": [[2, 3], [3, 4]], "Input type": null}}"#,
            r#"{"args": {"Input Dims": [[2, 3], [3, 4]]}, "name": "aten::mm"}"#,
        ];
        let buffer = events.concat();
        let mut seen = SeenArgs::new();
        let mut at = 0;
        for e in events {
            let json = &buffer.as_bytes()[at..at + e.len()];
            at += e.len();
            let mut with_seen = EventTexts::default();
            let read_with_seen = read_into(json, &mut with_seen, Some(&mut seen));
            let alone = read(json);
            assert_eq!(read_with_seen, alone.is_some(), "{e}");
            if let Some(alone) = alone {
                assert_eq!(with_seen, alone, "{e}");
            }
        }
        // The shapes of aten::mm were kept; the number was not.
        let mm = SeenArgs::bucket("aten::mm");
        assert_eq!(seen.find(0, mm, "[[2, 3], [3, 4]], "), Some(16));
        assert_eq!(seen.find(1, mm, r#"["float", "float"]}"#), Some(18));
        assert_eq!(seen.find(3, mm, "123"), None);
    }

    #[test]
    fn any_whitespace_between_tokens_reads_the_same() {
        let compact = r#"{"ph":"X","name":"mm","pid":7,"tid":"t 1","ts":1.5,"dur":12,"x":[1,{"a":[true,null]},-2.5e3],"args":{"External id":5,"Input Dims":[[2,3],[]]}}"#;
        let want = read(compact.as_bytes()).unwrap();
        for gap in [" ", "  ", "\t", "\n", "\r\n", " \n\t ", "\n      "] {
            let spaced = compact
                .replace(',', &format!("{gap},{gap}"))
                .replace(':', &format!("{gap}:{gap}"))
                .replace('{', &format!("{{{gap}"))
                .replace('[', &format!("[{gap}"))
                .replace('}', &format!("{gap}}}"))
                .replace(']', &format!("{gap}]"));
            // (Raw values keep their inner whitespace: not compared.)
            let got = read(spaced.as_bytes()).unwrap_or_else(|| panic!("{spaced:?}"));
            assert_eq!(
                (got.ph, got.name, got.ts, got.dur, got.args.map(|a| a.links)),
                (
                    want.ph.clone(),
                    want.name.clone(),
                    want.ts,
                    want.dur,
                    want.args.as_ref().map(|a| a.links)
                ),
                "{gap:?}"
            );
        }
        // A control character that is not whitespace is refused, as serde does.
        assert!(read(b"{\"ph\": \x01\"X\"}").is_none());
        assert!(read(b"{\"ph\":\x0b\"X\"}").is_none());
    }

    #[test]
    fn skipping_a_number_accepts_what_reading_it_does() {
        let mut next = draws(0x2545_f491_4f6c_dd1d);
        let alphabet = b"0123456789-+.eE ,x";
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..100_000 {
            let t: String = (0..=next(12))
                .map(|_| char::from(alphabet[next(alphabet.len() as u64) as usize]))
                .collect();
            let mut read = Reader::of(&t);
            let mut skipped = Reader::of(&t);
            let by_reading = read.number().map(|_| read.pos);
            // `skip` passes the whitespace before calling it.
            skipped.ws();
            let by_skipping = skipped.skip_number().map(|()| skipped.pos);
            assert_eq!(by_skipping, by_reading, "{t:?}");
            if by_reading.is_some() {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
        assert!(
            accepted > 10_000 && refused > 10_000,
            "{accepted} {refused}"
        );
    }

    #[test]
    fn leaves_unusual_events_to_serde() {
        for json in [
            r#"{"name": "a\"b"}"#,
            r#"{"name": "a", "name": "b"}"#,
            r#"{"ts": "12"}"#,
            r#"{"ts": 1e400}"#,
            r#"{"ts": 12345678901234567890}"#,
            r#"{"ts": -0}"#,
            r#"{"ts": 01}"#,
            r#"{"pid": 1.5}"#,
            r#"{"args": {"correlation": 1, "correlation": 2}}"#,
            r#"{"args": {"stream": 7.0}}"#,
            r#"{"args": 5}"#,
            "{\"name\": \"tab\there\"}",
            r#"{"x": [1, 2,]}"#,
            r#"{"x": tru}"#,
            r#"{"a": 1} x"#,
            r#"[1]"#,
            r#"{"a": 1"#,
        ] {
            assert!(read(json.as_bytes()).is_none(), "{json}");
        }
        let deep = format!(r#"{{"x": {}{}}}"#, "[".repeat(100), "]".repeat(100));
        assert!(read(deep.as_bytes()).is_none());
    }
}
