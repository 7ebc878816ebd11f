//! A hand-written reader for the common shape of a Kineto event: one JSON
//! object of plain strings, numbers and nested arrays/objects, no escape
//! sequences. It reads only the fields the builder takes and gives up
//! (returns `None`) on anything it does not handle exactly as serde would:
//! escapes, duplicate known keys, numbers outside the plain integer and
//! finite float forms, unexpected types, deep nesting, invalid JSON. The
//! caller then parses the event with serde, which decides and words any
//! error, so the result never depends on which reader ran. The plain JSON
//! values are read by [`crate::load::fast_json`]'s reader; this module
//! adds the event's fields and its op argument texts.

use std::borrow::Cow;

use crate::load::fast_json::{POW10, Reader, read_whole};
use crate::trace::args::LinkIds;

use super::{ArgTexts, EventTexts, Num};

/// Reads `json` (one element of `traceEvents`, known to be ASCII when
/// `ascii`) into `ev`, which must be empty (its default); false when serde
/// must, `ev` then holding part of the event. Filled in place: the event
/// is some 500 bytes, and moving it out of each reader function cost more
/// than a tenth of the reading.
pub(super) fn read_into<'a>(
    json: &'a [u8],
    ascii: bool,
    ev: &mut EventTexts<'a>,
    seen: Option<&mut SeenArgs<'a>>,
) -> bool {
    read_whole(json, ascii, seen, |r| r.event(ev)).is_some()
}

/// [`read_into`] a new event; None when serde must.
#[cfg(test)]
pub(super) fn read(json: &[u8]) -> Option<EventTexts<'_>> {
    let mut ev = EventTexts::default();
    read_into(json, false, &mut ev, None).then_some(ev)
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

/// The Kineto event reader: keeps the op argument texts it has checked.
type EventReader<'a, 's> = Reader<'a, Option<&'s mut SeenArgs<'a>>>;

impl<'a, X> Reader<'a, X> {
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
}

impl<'a> EventReader<'a, '_> {
    /// An op argument's text (as [`Self::raw`] reads it at depth 2), not
    /// checked again when it repeats one [`SeenArgs`] holds for the op
    /// (`bucket`: of its name; None before the name is read, or when no
    /// texts are kept).
    fn op_arg(&mut self, slot: usize, bucket: Option<usize>) -> Option<Option<&'a str>> {
        self.opt(|r| {
            let start = r.pos;
            let rest = r.text.get(start..).unwrap_or_default();
            let seen = bucket.zip(r.extra.as_deref());
            if let Some(len) = seen.and_then(|(b, s)| s.find(slot, b, rest)) {
                r.pos += len;
                return r.text.get(start..r.pos);
            }
            let text = r.raw_text(2)?;
            if let (Some(b), Some(s)) = (bucket, r.extra.as_deref_mut()) {
                s.keep(slot, b, text);
            }
            Some(text)
        })
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
                        .extra
                        .as_ref()
                        .and(ev.name.as_deref())
                        .map(SeenArgs::bucket);
                    r.args(ev.args.insert(ArgTexts::default()), bucket)?
                }
            }
            Some(())
        })
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
    fn numbers_read_as_serde_reads_them() {
        let mut next = crate::test_support::draws(0x9e37_79b9_7f4a_7c15);
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
                t.push_str(["e", "E-", "e+"][next(3)]);
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
            let read_with_seen = read_into(json, json.is_ascii(), &mut with_seen, Some(&mut seen));
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
        let mut next = crate::test_support::draws(0x2545_f491_4f6c_dd1d);
        let alphabet = b"0123456789-+.eE ,x";
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..100_000 {
            let t: String = (0..=next(12))
                .map(|_| char::from(alphabet[next(alphabet.len())]))
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
