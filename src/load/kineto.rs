//! PyTorch profiler (Kineto) JSON, the Chrome trace format: decodes each
//! element of `traceEvents` into an [`EventInput`] for the
//! [`TraceBuilder`], reading only the fields some pass needs.
//!
//! The splitter ([`scan`]) runs on the calling thread; parsing events and
//! building run on a second thread, fed in input order through a bounded
//! channel, or on the same thread ([`Threads`]).

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use rustc_hash::FxHashMap as HashMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

mod fast;
mod parallel;

use super::scan::{self, Sink};
use super::{LoadError, Packing};
use crate::trace::args::LinkIds;
use crate::trace::builder::{self, ArgsInput, EventInput, IdentRef, Keep, Time};
use crate::trace::{ArgValue, Cat, Needs, Phase, Trace, TraceBuilder};

/// A JSON number that must be a number: ints and floats are accepted, a
/// string is an error (the reference crashes on string timestamps).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Num {
    value: f64,
    is_int: bool,
}

impl Num {
    /// The builder's form.
    fn time(self) -> Time {
        Time {
            value: self.value,
            is_int: self.is_int,
        }
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
                Ok(Num {
                    value: v as f64,
                    is_int: true,
                })
            }
            fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
                Ok(Num {
                    value: v as f64,
                    is_int: true,
                })
            }
            fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
                Ok(Num {
                    value: v,
                    is_int: false,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// An integer-valued argument (correlation, stream, …). Integral floats count
/// as integers (Python's `5 == 5.0`); any other value counts as absent.
#[derive(Debug, Clone, Copy)]
struct IntLike(Option<i64>);

impl<'de> Deserialize<'de> for IntLike {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IntLike;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E>(self, v: i64) -> Result<IntLike, E> {
                Ok(IntLike(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<IntLike, E> {
                Ok(IntLike(i64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<IntLike, E> {
                let ok = v.fract() == 0.0 && v.abs() < 9.0e18;
                Ok(IntLike(ok.then_some(v as i64)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<IntLike, E> {
                Ok(IntLike(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<IntLike, E> {
                Ok(IntLike(None))
            }
            fn visit_unit<E>(self) -> Result<IntLike, E> {
                Ok(IntLike(None))
            }
            fn visit_none<E>(self) -> Result<IntLike, E> {
                Ok(IntLike(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<IntLike, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IntLike(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<IntLike, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IntLike(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A pid/tid value as written.
#[derive(Debug, PartialEq)]
enum Ident<'a> {
    Int(i64),
    Str(Cow<'a, str>),
    Null,
}

impl<'de: 'a, 'a> Deserialize<'de> for Ident<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ident<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Ident::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(v)
                    .map(Ident::Int)
                    .unwrap_or_else(|_| Ident::Str(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e18 {
                    Ok(Ident::Int(v as i64))
                } else {
                    Ok(Ident::Str(Cow::Owned(v.to_string())))
                }
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Ident::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Ident::Str(Cow::Owned(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Ident::Null)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawArgs<'a> {
    #[serde(default)]
    correlation: Option<IntLike>,
    #[serde(rename = "External id", default)]
    external_id: Option<IntLike>,
    #[serde(default)]
    stream: Option<IntLike>,
    #[serde(rename = "Sequence number", default)]
    sequence: Option<IntLike>,
    #[serde(rename = "Input Dims", borrow, default)]
    input_dims: Option<&'a RawValue>,
    #[serde(rename = "Input type", borrow, default)]
    input_type: Option<&'a RawValue>,
    #[serde(rename = "Input Strides", borrow, default)]
    input_strides: Option<&'a RawValue>,
    #[serde(rename = "Concrete Inputs", borrow, default)]
    concrete_inputs: Option<&'a RawValue>,
    /// Runtime launches: the launched kernel's name.
    #[serde(borrow, default)]
    kernel: Option<&'a RawValue>,
    /// `M` events: process/thread name.
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    /// `M` events: process labels.
    #[serde(borrow, default)]
    labels: Option<&'a RawValue>,
    // Collective metadata of NCCL/RCCL kernels, in COLLECTIVE_ARG_KEYS order.
    #[serde(rename = "Process Group Name", borrow, default)]
    pg_name: Option<&'a RawValue>,
    #[serde(rename = "Process Group Ranks", borrow, default)]
    pg_ranks: Option<&'a RawValue>,
    #[serde(rename = "Collective name", borrow, default)]
    coll_name: Option<&'a RawValue>,
    #[serde(rename = "Group size", borrow, default)]
    group_size: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dtype: Option<&'a RawValue>,
    #[serde(rename = "In msg nelems", borrow, default)]
    in_nelems: Option<&'a RawValue>,
    #[serde(rename = "Out msg nelems", borrow, default)]
    out_nelems: Option<&'a RawValue>,
    #[serde(rename = "In split size", borrow, default)]
    in_split: Option<&'a RawValue>,
    #[serde(rename = "Out split size", borrow, default)]
    out_split: Option<&'a RawValue>,
    #[serde(rename = "Seq", borrow, default)]
    seq: Option<&'a RawValue>,
}

/// The fields of an event's `args` the builder takes, as source text
/// (what either reader, [`fast`] or serde, gives).
#[derive(Debug, Default, PartialEq)]
struct ArgTexts<'a> {
    links: LinkIds,
    /// In [`crate::trace::args::OP_ARG_KEYS`] order.
    op: [Option<&'a str>; 4],
    /// In [`crate::trace::args::COLLECTIVE_ARG_KEYS`] order.
    collective: [Option<&'a str>; 10],
    kernel: Option<&'a str>,
    name: Option<&'a str>,
    labels: Option<&'a str>,
}

impl<'a> From<RawArgs<'a>> for ArgTexts<'a> {
    fn from(a: RawArgs<'a>) -> Self {
        let text = |r: Option<&'a RawValue>| r.map(RawValue::get);
        ArgTexts {
            links: LinkIds {
                correlation: a.correlation.and_then(|v| v.0),
                external_id: a.external_id.and_then(|v| v.0),
                stream: a.stream.and_then(|v| v.0),
                sequence: a.sequence.and_then(|v| v.0),
            },
            op: [
                a.input_dims,
                a.input_type,
                a.input_strides,
                a.concrete_inputs,
            ]
            .map(text),
            collective: [
                a.pg_name,
                a.pg_ranks,
                a.coll_name,
                a.group_size,
                a.dtype,
                a.in_nelems,
                a.out_nelems,
                a.in_split,
                a.out_split,
                a.seq,
            ]
            .map(text),
            kernel: text(a.kernel),
            name: text(a.name),
            labels: text(a.labels),
        }
    }
}

impl<'a> ArgTexts<'a> {
    /// The builder's view; metadata texts only for metadata events.
    fn input(&self, metadata: bool) -> ArgsInput<'a> {
        let (meta_name, meta_labels) = self.meta(metadata);
        ArgsInput {
            links: self.links,
            op: self.op,
            collective: self.collective,
            meta_name,
            meta_labels,
            kernel: self.kernel.map(kernel_text),
        }
    }

    /// The process/thread name and labels of a metadata event (none for
    /// other events).
    fn meta(&self, metadata: bool) -> (Option<String>, Option<String>) {
        if metadata {
            (self.name.map(meta_text), self.labels.map(meta_text))
        } else {
            (None, None)
        }
    }
}

/// The fields of one event the builder takes (what either reader gives).
#[derive(Debug, Default, PartialEq)]
struct EventTexts<'a> {
    ph: Option<Cow<'a, str>>,
    cat: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    pid: Option<Ident<'a>>,
    tid: Option<Ident<'a>>,
    ts: Option<Num>,
    dur: Option<Num>,
    id: Option<i64>,
    args: Option<ArgTexts<'a>>,
}

impl<'a> EventTexts<'a> {
    /// Reads element `index` of `traceEvents` into `self` (empty): with
    /// the [`fast`] reader when it can, else with serde, whose error it
    /// returns.
    fn read_into(
        &mut self,
        json: &'a [u8],
        ascii: bool,
        index: usize,
        seen: Option<&mut fast::SeenArgs<'a>>,
    ) -> Result<(), String> {
        if !fast::read_into(json, ascii, self, seen) {
            *self = Self::read_with_serde(json, index)?;
        }
        Ok(())
    }

    /// [`Self::read`] with serde only.
    fn read_with_serde(json: &'a [u8], index: usize) -> Result<Self, String> {
        let raw: RawEvent = serde_json::from_slice(json).map_err(|e| {
            format!(
                "event #{index} of traceEvents: {}",
                strip_position(&e.to_string())
            )
        })?;
        Ok(EventTexts {
            ph: raw.ph,
            cat: raw.cat,
            name: raw.name,
            pid: raw.pid,
            tid: raw.tid,
            ts: raw.ts,
            dur: raw.dur,
            id: raw.id.and_then(|v| v.0),
            args: raw.args.map(ArgTexts::from),
        })
    }

    /// The category.
    fn cat(&self) -> Cat {
        self.cat.as_deref().map_or(Cat::Missing, Cat::parse)
    }

    /// The builder's view, with the phase already classified.
    fn input(&self, ph: Phase) -> EventInput<'_> {
        EventInput {
            cat: self.cat(),
            ph,
            name: self.name.as_deref(),
            pid: ident(&self.pid),
            tid: ident(&self.tid),
            ts: self.ts.map(Num::time),
            dur: self.dur.map(Num::time),
            flow_id: self.id,
            args: self.args.as_ref().map(|a| a.input(ph == Phase::Metadata)),
        }
    }
}

#[derive(Deserialize)]
#[serde(expecting = "an event object")]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cat: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pid: Option<Ident<'a>>,
    #[serde(borrow, default)]
    tid: Option<Ident<'a>>,
    #[serde(default)]
    ts: Option<Num>,
    #[serde(default)]
    dur: Option<Num>,
    #[serde(default)]
    id: Option<IntLike>,
    #[serde(borrow, default)]
    args: Option<RawArgs<'a>>,
}

/// `args.kernel` as text: a string's value (borrowed unless it has
/// escapes); any other JSON value as written, which no kernel name equals.
fn kernel_text(raw: &str) -> Cow<'_, str> {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        _ => serde_json::from_str::<String>(raw).map_or(Cow::Borrowed(raw), Cow::Owned),
    }
}

fn ident<'a>(raw: &'a Option<Ident<'_>>) -> IdentRef<'a> {
    match raw {
        None | Some(Ident::Null) => IdentRef::Null,
        Some(Ident::Int(v)) => IdentRef::Int(*v),
        Some(Ident::Str(s)) => IdentRef::Str(s),
    }
}

/// An argument value as `json.loads` gives it (see [`ArgValue`]); numbers
/// keep serde_json's integer/float split, maps serde_json's key order.
struct ArgValueDe(ArgValue);

impl<'de> Deserialize<'de> for ArgValueDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgValueDe;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Int(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(match i64::try_from(v) {
                    Ok(i) => ArgValue::Int(i),
                    Err(_) => ArgValue::UInt(v),
                }))
            }
            fn visit_f64<E>(self, v: f64) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Float(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Str(v.into())))
            }
            fn visit_unit<E>(self) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Null))
            }
            fn visit_none<E>(self) -> Result<ArgValueDe, E> {
                Ok(ArgValueDe(ArgValue::Null))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<ArgValueDe, D2::Error> {
                ArgValueDe::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<ArgValueDe, A::Error> {
                let mut items = Vec::new();
                while let Some(ArgValueDe(v)) = s.next_element()? {
                    items.push(v);
                }
                Ok(ArgValueDe(ArgValue::list(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ArgValueDe, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, ArgValueDe(v))) = m.next_entry::<String, ArgValueDe>()? {
                    entries.push((k.into_boxed_str(), v));
                }
                Ok(ArgValueDe(ArgValue::map(entries)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses the JSON text of an argument value; None when it is not valid
/// JSON (a number out of range).
pub(crate) fn parse_value(text: &str) -> Option<ArgValue> {
    serde_json::from_str::<ArgValueDe>(text).ok().map(|v| v.0)
}

/// The value of the event's own `"cat"` key read straight from its bytes,
/// when it can be read without a parser: a plain string right after the
/// key, with only plain members before it (no object, array or escape),
/// which Kineto's events have (it writes `cat` second, after `ph`). None
/// otherwise, and the event is parsed in full: a `"cat"` inside `args` is
/// not the event's.
pub(crate) fn quick_cat(json: &[u8]) -> Option<&[u8]> {
    use crate::load::fast_json::{plain_key, plain_string_len, whitespace_end};
    // An unescaped `"cat"` followed by `:` can only be a key; with no
    // bracket or backslash since the event's `{`, the key is the event's.
    let open = whitespace_end(json, 0);
    if json.get(open) != Some(&b'{') {
        return None;
    }
    let mut from = open + 1;
    loop {
        let key = plain_key(json, from, b"\"cat\"")?;
        let j = whitespace_end(json, key + 5);
        if json.get(j) == Some(&b':') {
            let j = whitespace_end(json, j + 1);
            if json.get(j) != Some(&b'"') {
                return None;
            }
            // Escapes are left to the parser.
            let len = plain_string_len(json, j + 1)?;
            return Some(&json[j + 1..j + 1 + len]);
        }
        // A string value "cat": the search goes on after it.
        from = key + 5;
    }
}

/// Counts of phases no pass reads, for the load's warnings.
#[derive(Debug, Default)]
struct PhaseCounts {
    unknown: HashMap<String, usize>,
    missing: usize,
}

impl PhaseCounts {
    /// Classifies `ph`, counting unknown and missing phases.
    fn phase(&mut self, ph: Option<&str>) -> Phase {
        match ph {
            Some("X") => Phase::Complete,
            Some("M") => Phase::Metadata,
            Some("s") => Phase::FlowStart,
            Some("f") => Phase::FlowEnd,
            Some("i") | Some("I") => Phase::Instant,
            Some(other) => {
                if !matches!(
                    other,
                    "B" | "E" | "b" | "e" | "n" | "C" | "P" | "O" | "N" | "D" | "t"
                ) {
                    *self.unknown.entry(other.to_string()).or_default() += 1;
                }
                Phase::Other
            }
            None => {
                self.missing += 1;
                Phase::Other
            }
        }
    }

    /// Adds the counts of a later part of the document.
    fn add(&mut self, other: PhaseCounts) {
        for (ph, n) in other.unknown {
            *self.unknown.entry(ph).or_default() += n;
        }
        self.missing += other.missing;
    }
}

/// What the builder does with an event, decided from its raw bytes before
/// parsing (when some category is skipped and `cat` can be read directly);
/// `Full` when it cannot tell, with the category for stubs.
fn early_keep(needs: &Needs, json: &[u8]) -> (Keep, Cat) {
    match quick_cat(json).and_then(Cat::from_bytes) {
        Some(cat) => (builder::keep(needs, cat), cat),
        None => (Keep::Full, Cat::Missing),
    }
}

/// Decodes events while the splitter walks the document, one at a time
/// (see [`parallel`] for batches decoded on worker threads).
struct Decoder {
    builder: TraceBuilder,
    /// True when some category is stubbed or dropped: worth reading `cat`
    /// from the raw bytes first.
    skips_any: bool,
    /// Elements of `traceEvents` seen.
    seen: usize,
    phases: PhaseCounts,
}

/// The text of a JSON value for metadata: strings unquoted, others as written.
fn meta_text(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())
}

impl Decoder {
    /// The trace, with the decoder's warnings first.
    fn finish(mut self, input_bytes: u64) -> Trace {
        // Collectives-only loads never look at phases (nor warn about them).
        if !self.builder.needs().collectives_only {
            let mut phases: Vec<_> = self.phases.unknown.into_iter().collect();
            phases.sort();
            for (ph, n) in phases {
                self.builder.warn(format!(
                    "{n} event(s) with unknown phase \"{ph}\" were ignored"
                ));
            }
            if self.phases.missing > 0 {
                self.builder.warn(format!(
                    "{} event(s) without a \"ph\" field were ignored",
                    self.phases.missing
                ));
            }
        }
        self.builder.info_mut().input_bytes = input_bytes;
        self.builder.finish()
    }
}

impl Sink for Decoder {
    fn event(&mut self, index: usize, json: &[u8], ascii: bool) -> Result<(), String> {
        self.seen += 1;
        if self.skips_any {
            match early_keep(self.builder.needs(), json) {
                (Keep::Full, _) => {}
                // Nothing else of the event is read.
                (Keep::Stub, cat) => return self.builder.push_stub(cat),
                (Keep::Drop, _) => return Ok(()),
            }
        }
        let mut ev = EventTexts::default();
        ev.read_into(json, ascii, index, None)?;
        let ph = self.phases.phase(ev.ph.as_deref());
        self.builder
            .push_event(index, ev.input(ph), &mut parse_value)?;
        Ok(())
    }

    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
        if !self.builder.needs().collectives_only {
            // Validate strictly (the reference rejects malformed JSON anywhere).
            serde_json::from_slice::<&RawValue>(json).map_err(|e| {
                format!(
                    "top-level key \"{key}\": {}",
                    strip_position(&e.to_string())
                )
            })?;
        }
        match key {
            "distributedInfo" => {
                // A malformed distributedInfo only costs the rank hint.
                if let Ok(d) = serde_json::from_slice::<DistributedInfo>(json) {
                    let info = self.builder.info_mut();
                    info.rank = int_of(&d.rank);
                    info.world_size = int_of(&d.world_size);
                }
            }
            "deviceProperties" => {
                if let Ok(v) = serde_json::from_slice::<Vec<DeviceProperties>>(json) {
                    let info = self.builder.info_mut();
                    info.device_count = v.len();
                    info.devices = v.into_iter().map(DeviceProperties::into_pair).collect();
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// One `deviceProperties` entry: only what picks a GPU spec is read; any
/// entry shape is accepted (a non-object reads as a nameless device).
#[derive(Default)]
struct DeviceProperties {
    name: String,
    total_global_mem: Option<u64>,
}

impl<'de> Deserialize<'de> for DeviceProperties {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(DeviceProperties {
            name: v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            total_global_mem: v.get("totalGlobalMem").and_then(Value::as_u64),
        })
    }
}

impl DeviceProperties {
    fn into_pair(self) -> (String, Option<u64>) {
        (self.name, self.total_global_mem)
    }
}

#[derive(Deserialize)]
struct DistributedInfo {
    #[serde(default)]
    rank: Option<Value>,
    #[serde(default)]
    world_size: Option<Value>,
}

/// An integer from a number or a numeric string.
fn int_of(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|x| x.fract() == 0.0).map(|x| x as i64)),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

/// serde_json positions are relative to one event; they would mislead.
fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Counts bytes as they pass, for throughput figures.
pub(super) struct Counted<R> {
    pub(super) inner: R,
    pub(super) bytes: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

impl Decoder {
    fn new(needs: &Needs) -> Decoder {
        let builder = TraceBuilder::new(needs);
        Decoder {
            skips_any: builder.skips_any(),
            builder,
            seen: 0,
            phases: PhaseCounts::default(),
        }
    }
}

/// How a decode uses the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Splitting on the calling thread, parsing batches of events on
    /// worker threads, building on another: the fastest for one large
    /// trace (collectives-only loads, which keep little, use `One`).
    Parallel,
    /// Everything on the calling thread, without batch buffers: for many
    /// traces loaded in parallel, where memory per load counts.
    One,
}

/// Decodes a Kineto JSON document from `reader` (already unpacked),
/// keeping what `needs` asks for.
pub fn decode<R: Read>(
    reader: R,
    packing: Packing,
    needs: &Needs,
    threads: Threads,
) -> Result<Trace, LoadError> {
    decode_sized(reader, packing, needs, threads, None)
}

/// [`decode`], told roughly how many bytes the document has (a hint for
/// sizing the event tables at once instead of growing them).
pub fn decode_sized<R: Read>(
    reader: R,
    packing: Packing,
    needs: &Needs,
    threads: Threads,
    size_hint: Option<u64>,
) -> Result<Trace, LoadError> {
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let (decoder, outline) = match threads {
        Threads::Parallel if !needs.collectives_only => {
            parallel::split_and_build(&mut counted, packing, needs, size_hint)?
        }
        _ => {
            let mut d = Decoder::new(needs);
            let outline =
                scan::split(&mut counted, &mut d).map_err(|e| super::scan_error(packing, e))?;
            (d, outline)
        }
    };
    if !outline.has_trace_events {
        return Err(LoadError::NotATrace(
            "not a trace: the JSON object has no \"traceEvents\" array".into(),
        ));
    }
    // A rank without collectives is a finding of the collective report,
    // not an error.
    if decoder.seen == 0 && !needs.collectives_only {
        return Err(LoadError::NoEvents);
    }
    Ok(decoder.finish(counted.bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events of the shapes Kineto writes, to mutate.
    const SEEDS: [&str; 4] = [
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1694128201545.125, "dur": 12.5, "args": {"External id": 5, "Record function id": 0, "Ev Idx": 4, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"], "Input Strides": [[3, 1], [4, 1]], "Concrete Inputs": ["", ""]}}"#,
        r#"{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7, "ts": 100, "dur": 3, "args": {"queued": 0, "device": 0, "stream": 7, "correlation": 99, "grid": [1, 1, 1], "Collective name": "allreduce", "In msg nelems": 1024, "Process Group Ranks": "[0, 1]", "dtype": "Float", "Seq": 4}}"#,
        r#"{"ph": "M", "name": "thread_name", "pid": "host", "tid": "stream 7", "args": {"name": "stream 7 \u00e9", "labels": null}}"#,
        r#"{"ph": "s", "id": 12, "pid": 1, "tid": 2, "ts": -1.5e-3, "cat": "ac2g", "name": "ac2g", "bp": "e", "args": {"kernel": "void k<1>()", "cbid": 211}}"#,
    ];

    /// Deterministic mutations: bytes replaced, inserted or removed, drawn
    /// from JSON's own characters.
    fn mutate(seed: &str, rng: &mut u64) -> Vec<u8> {
        let pieces: [&[u8]; 16] = [
            b"\"",
            b"\\",
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"1",
            b"-",
            b".",
            b"e",
            b"null",
            b" ",
            b"\"ts\": 1",
            b"\\u0001",
        ];
        let mut next = || {
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            *rng
        };
        let mut out = seed.as_bytes().to_vec();
        for _ in 0..(next() % 3 + 1) {
            let at = (next() % (out.len() as u64 + 1)) as usize;
            let piece = pieces[(next() % 16) as usize];
            match next() % 3 {
                0 => out.splice(at..at, piece.iter().copied()).for_each(drop),
                1 if at < out.len() => {
                    out.remove(at);
                }
                _ if at < out.len() => out[at] = piece[0],
                _ => {}
            }
        }
        out
    }

    #[test]
    fn the_category_is_read_from_the_raw_bytes() {
        let cat = |json: &str| {
            quick_cat(json.as_bytes()).map(|c| String::from_utf8_lossy(c).into_owned())
        };
        // Kineto's shapes, compact and indented.
        assert_eq!(
            SEEDS.map(cat)[..2],
            [Some("cpu_op".into()), Some("kernel".into())]
        );
        assert_eq!(cat(SEEDS[3]).as_deref(), Some("ac2g"));
        let indented =
            "{\n      \"ph\": \"X\",\n      \"cat\": \"cpu_op\",\n      \"name\": \"a\"\n    }";
        assert_eq!(cat(indented).as_deref(), Some("cpu_op"));
        let scalars = r#"{"id": -1.5e3, "ok": true, "no": false, "x": null, "cat" : "kernel"}"#;
        assert_eq!(cat(scalars).as_deref(), Some("kernel"));
        // A "cat" inside args is not the event's: the event is read in full.
        assert_eq!(
            cat(r#"{"ph": "X", "args": {"cat": "python_function"}, "cat": "cpu_op"}"#),
            None
        );
        assert_eq!(
            cat(r#"{"ph": "X", "s": ["cat", "x"], "cat": "cpu_op"}"#),
            None
        );
        // Escapes, a category that is not a plain string, none, not JSON.
        assert_eq!(cat(r#"{"p\"cat": "kernel", "cat": "cpu_op"}"#), None);
        assert_eq!(cat(r#"{"ph": "X", "cat": "cpu\u005fop"}"#), None);
        assert_eq!(cat(r#"{"ph": "X", "cat": null}"#), None);
        assert_eq!(cat(r#"{"ph": "X", "cat": 7}"#), None);
        assert_eq!(cat(r#"{"ph": "X", "name": "cat"}"#), None);
        assert_eq!(cat(r#"["cat", "cpu_op"]"#), None);
        assert_eq!(cat(r#"{"cat": "cpu_op"#), None);
        assert_eq!(
            Cat::from_bytes(b"python_function"),
            Some(Cat::PythonFunction)
        );
        assert_eq!(Cat::from_bytes(b"Runtime"), Some(Cat::Other));
        assert_eq!(Cat::from_bytes(b"\xff"), None);
    }

    /// Wherever the quick category is read, it is the category serde reads
    /// (the one of the event object, not of a member's value).
    #[test]
    fn the_quick_category_agrees_with_serde() {
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        let (mut quick, mut agreed) = (0, 0);
        for seed in SEEDS {
            for _ in 0..4000 {
                let json = mutate(seed, &mut rng);
                let Some(cat) = quick_cat(&json) else {
                    continue;
                };
                quick += 1;
                // The rest of the event may be broken: serde then refuses it.
                if let Ok(ev) = EventTexts::read_with_serde(&json, 0) {
                    agreed += 1;
                    assert_eq!(
                        ev.cat.as_deref().map(str::as_bytes),
                        Some(cat),
                        "{}",
                        String::from_utf8_lossy(&json)
                    );
                }
            }
        }
        assert!(quick > 5000 && agreed > 1000, "{quick} {agreed}");
    }

    /// A trace of several batches whose pid/tid values and op argument
    /// texts repeat, alternate and collide (equal lengths, other texts),
    /// decoded on worker threads and on one thread: every event, handle
    /// and argument value comes out the same.
    #[test]
    fn parallel_and_one_thread_loads_agree() {
        let names = ["aten::mm", "aten::add", "aten::linear", "aten::copy_"];
        let idents = ["7", "8", "\"host\"", "null", "\"t 1\""];
        // Same lengths, other texts; one written with other spacing.
        let dims = [
            "[[1, 2], []]",
            "[[3, 4], []]",
            "[[5, 6], []]",
            "[[1,  2], []]",
        ];
        let types = ["[\"float\", \"\"]", "[\"int64\", \"\"]", "[\"c10::Half\"]"];
        let mut next = crate::test_support::draws(0x5851_f42d_4c95_7f2d);
        let pick = |list: &[&'static str], n: usize| list[n % list.len()];
        let mut events = Vec::new();
        for i in 0..12_000 {
            let (pid, tid) = (pick(&idents, next(9) / 4), pick(&idents, next(7) / 3));
            let event = match next(10) {
                0..=5 => format!(
                    r#"{{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": {pid}, "tid": {tid}, "ts": {i}.5, "dur": 2, "args": {{"External id": {i}, "Input Dims": {}, "Input type": {}, "Input Strides": {}, "Concrete Inputs": {}}}}}"#,
                    pick(&names, next(4)),
                    pick(&dims, next(4)),
                    pick(&types, next(3)),
                    pick(&dims, next(4)),
                    pick(&types, next(3)),
                ),
                6 | 7 => format!(
                    r#"{{"ph": "X", "cat": "python_function", "name": "f{}", "pid": {pid}, "tid": {tid}, "ts": {i}, "dur": 1, "args": {{"Python id": {i}}}}}"#,
                    next(50)
                ),
                8 => format!(
                    r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, "tid": {tid}, "ts": {i}, "dur": 1, "args": {{"correlation": {i}, "kernel": "k{}"}}}}"#,
                    next(5)
                ),
                _ => format!(
                    r#"{{"ph": "X", "cat": "kernel", "name": "k{}", "pid": 0, "tid": 7, "ts": {i}, "dur": 1, "args": {{"correlation": {i}, "stream": 7}}}}"#,
                    next(5)
                ),
            };
            events.push(event);
        }
        let text = format!("{{\"traceEvents\": [\n{}\n]}}", events.join(",\n"));
        assert!(text.len() > 2 << 20, "{} bytes: a few batches", text.len());
        for needs in [Needs::ALL, crate::analysis::pytorch::REPORT_NEEDS] {
            let load = |threads| {
                decode(
                    text.as_bytes(),
                    crate::load::Packing::Plain,
                    &needs,
                    threads,
                )
                .unwrap()
            };
            let (parallel, one) = (load(Threads::Parallel), load(Threads::One));
            assert_eq!(parallel.len(), one.len());
            for id in one.ids() {
                let seen = |t: &crate::trace::Trace| {
                    format!(
                        "{:?} {:?} {:?} {:?} {:?} {:?}",
                        t.event(id),
                        t.name(id),
                        t.ident(t.event(id).pid),
                        t.ident(t.event(id).tid),
                        t.args(id),
                        t.op_args(id).all()
                    )
                };
                assert_eq!(seen(&parallel), seen(&one), "event {id:?}");
            }
        }
    }

    #[test]
    fn the_fast_reader_agrees_with_serde() {
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let (mut fast_reads, mut left_to_serde) = (0, 0);
        for seed in SEEDS {
            // The seeds themselves (but the escaped one) take the fast path.
            let read = fast::read(seed.as_bytes());
            assert_eq!(read.is_some(), !seed.contains('\\'), "{seed}");
            for _ in 0..4000 {
                let json = mutate(seed, &mut rng);
                match fast::read(&json) {
                    Some(ev) => {
                        fast_reads += 1;
                        let by_serde = EventTexts::read_with_serde(&json, 0);
                        assert_eq!(
                            Ok(&ev),
                            by_serde.as_ref(),
                            "{}",
                            String::from_utf8_lossy(&json)
                        );
                    }
                    None => left_to_serde += 1,
                }
            }
        }
        // Both paths were exercised.
        assert!(
            fast_reads > 1000 && left_to_serde > 1000,
            "{fast_reads} {left_to_serde}"
        );
    }
}
