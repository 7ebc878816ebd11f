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

use super::scan::{self, ScanError, Sink};
use super::{LoadError, Packing};
use crate::trace::args::LinkIds;
use crate::trace::builder::{ArgsInput, EventInput, IdentRef, Keep, Time};
use crate::trace::{ArgValue, Cat, Needs, Phase, Trace, TraceBuilder};

/// A JSON number that must be a number: ints and floats are accepted, a
/// string is an error (the reference crashes on string timestamps).
#[derive(Debug, Clone, Copy)]
struct Num {
    value: f64,
    is_int: bool,
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
#[derive(Debug)]
enum RawIdent<'a> {
    Int(i64),
    Str(Cow<'a, str>),
    Null,
}

impl<'de: 'a, 'a> Deserialize<'de> for RawIdent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawIdent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(RawIdent::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(i64::try_from(v)
                    .map(RawIdent::Int)
                    .unwrap_or_else(|_| RawIdent::Str(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                if v.fract() == 0.0 && v.abs() < 9.0e18 {
                    Ok(RawIdent::Int(v as i64))
                } else {
                    Ok(RawIdent::Str(Cow::Owned(v.to_string())))
                }
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(RawIdent::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(RawIdent::Str(Cow::Owned(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(RawIdent::Null)
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

impl<'a> RawArgs<'a> {
    /// The builder's view; metadata texts only for metadata events.
    fn input(self, metadata: bool) -> ArgsInput<'a> {
        let text = |r: Option<&'a RawValue>| r.map(RawValue::get);
        ArgsInput {
            links: LinkIds {
                correlation: self.correlation.and_then(|v| v.0),
                external_id: self.external_id.and_then(|v| v.0),
                stream: self.stream.and_then(|v| v.0),
                sequence: self.sequence.and_then(|v| v.0),
            },
            op: [
                text(self.input_dims),
                text(self.input_type),
                text(self.input_strides),
                text(self.concrete_inputs),
            ],
            collective: [
                self.pg_name,
                self.pg_ranks,
                self.coll_name,
                self.group_size,
                self.dtype,
                self.in_nelems,
                self.out_nelems,
                self.in_split,
                self.out_split,
                self.seq,
            ]
            .map(text),
            meta_name: if metadata {
                self.name.map(meta_text)
            } else {
                None
            },
            meta_labels: if metadata {
                self.labels.map(meta_text)
            } else {
                None
            },
            kernel: self.kernel.map(kernel_text),
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
    pid: Option<RawIdent<'a>>,
    #[serde(borrow, default)]
    tid: Option<RawIdent<'a>>,
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
fn kernel_text(v: &RawValue) -> Cow<'_, str> {
    let raw = v.get();
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        _ => serde_json::from_str::<String>(raw).map_or(Cow::Borrowed(raw), Cow::Owned),
    }
}

fn ident<'a>(raw: &'a Option<RawIdent<'_>>) -> IdentRef<'a> {
    match raw {
        None | Some(RawIdent::Null) => IdentRef::Null,
        Some(RawIdent::Int(v)) => IdentRef::Int(*v),
        Some(RawIdent::Str(s)) => IdentRef::Str(s),
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

/// The value of the `"cat"` key read straight from an event's bytes, when
/// it can be read without a parser (a plain string right after the key).
pub(crate) fn quick_cat(json: &[u8]) -> Option<&[u8]> {
    // An unescaped `"cat"` followed by `:` can only be the key: inside a JSON
    // string a quote is always escaped.
    let mut from = 0;
    while let Some(i) = memchr::memmem::find(&json[from..], b"\"cat\"") {
        let mut j = from + i + 5;
        while j < json.len() && json[j].is_ascii_whitespace() {
            j += 1;
        }
        if json.get(j) == Some(&b':') {
            j += 1;
            while j < json.len() && json[j].is_ascii_whitespace() {
                j += 1;
            }
            if json.get(j) != Some(&b'"') {
                return None;
            }
            let start = j + 1;
            let len = memchr::memchr2(b'"', b'\\', &json[start..])?;
            if json[start + len] != b'"' {
                return None; // escapes: let the parser decide
            }
            return Some(&json[start..start + len]);
        }
        from = from + i + 5;
    }
    None
}

/// Decodes events while the splitter walks the document (on the builder
/// thread).
struct Decoder {
    builder: TraceBuilder,
    /// True when some category is stubbed or dropped: worth reading `cat`
    /// from the raw bytes first.
    skips_any: bool,
    /// Elements of `traceEvents` seen.
    seen: usize,
    unknown_phases: HashMap<String, usize>,
    missing_ph: usize,
}

/// The text of a JSON value for metadata: strings unquoted, others as written.
fn meta_text(v: &RawValue) -> String {
    serde_json::from_str::<String>(v.get()).unwrap_or_else(|_| v.get().to_string())
}

impl Decoder {
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
                    *self.unknown_phases.entry(other.to_string()).or_default() += 1;
                }
                Phase::Other
            }
            None => {
                self.missing_ph += 1;
                Phase::Other
            }
        }
    }

    /// The trace, with the decoder's warnings first.
    fn finish(mut self, input_bytes: u64) -> Trace {
        // Collectives-only loads never look at phases (nor warn about them).
        if !self.builder.needs().collectives_only {
            let mut phases: Vec<_> = self.unknown_phases.into_iter().collect();
            phases.sort();
            for (ph, n) in phases {
                self.builder.warn(format!(
                    "{n} event(s) with unknown phase \"{ph}\" were ignored"
                ));
            }
            if self.missing_ph > 0 {
                self.builder.warn(format!(
                    "{} event(s) without a \"ph\" field were ignored",
                    self.missing_ph
                ));
            }
        }
        self.builder.info_mut().input_bytes = input_bytes;
        self.builder.finish()
    }
}

impl Sink for Decoder {
    fn event(&mut self, index: usize, json: &[u8]) -> Result<(), String> {
        self.seen += 1;
        if self.skips_any
            && let Some(cat) = quick_cat(json)
            && let Ok(cat) = std::str::from_utf8(cat)
        {
            let cat = Cat::parse(cat);
            match self.builder.keep(cat) {
                Keep::Full => {}
                // Nothing else of the event is read.
                Keep::Stub => return self.builder.push_stub(cat),
                Keep::Drop => return Ok(()),
            }
        }
        let raw: RawEvent = serde_json::from_slice(json).map_err(|e| {
            format!(
                "event #{index} of traceEvents: {}",
                strip_position(&e.to_string())
            )
        })?;
        let ph = self.phase(raw.ph.as_deref());
        let time = |n: Num| Time {
            value: n.value,
            is_int: n.is_int,
        };
        let ev = EventInput {
            cat: raw.cat.as_deref().map(Cat::parse).unwrap_or(Cat::Missing),
            ph,
            name: raw.name.as_deref(),
            pid: ident(&raw.pid),
            tid: ident(&raw.tid),
            ts: raw.ts.map(time),
            dur: raw.dur.map(time),
            flow_id: raw.id.and_then(|v| v.0),
            args: raw.args.map(|a| a.input(ph == Phase::Metadata)),
        };
        self.builder.push_event(index, ev, &mut parse_value)?;
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
                if let Ok(v) = serde_json::from_slice::<Vec<IgnoredAny>>(json) {
                    self.builder.info_mut().device_count = v.len();
                }
            }
            _ => {}
        }
        Ok(())
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

/// Work handed from the splitter thread to the builder thread, in file order.
enum Batch {
    /// Consecutive events: their bytes packed in `buf`, bounds in `ends`.
    Events {
        first_index: usize,
        buf: Vec<u8>,
        ends: Vec<usize>,
    },
    /// A top-level key other than `traceEvents`.
    Other { key: String, json: Vec<u8> },
}

const BATCH_BYTES: usize = 2 << 20;

/// The splitter's sink: packs events into batches for the builder thread.
struct BatchSink {
    tx: std::sync::mpsc::SyncSender<Batch>,
    /// Batch buffers the builder has finished with, for reuse.
    spare: std::sync::mpsc::Receiver<(Vec<u8>, Vec<usize>)>,
    first_index: usize,
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl BatchSink {
    fn flush(&mut self) -> Result<(), String> {
        if self.ends.is_empty() {
            return Ok(());
        }
        let (mut buf, mut ends) = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| (Vec::with_capacity(BATCH_BYTES + (64 << 10)), Vec::new()));
        buf.clear();
        ends.clear();
        let batch = Batch::Events {
            first_index: self.first_index,
            buf: std::mem::replace(&mut self.buf, buf),
            ends: std::mem::replace(&mut self.ends, ends),
        };
        self.tx.send(batch).map_err(|_| BUILDER_STOPPED.to_string())
    }
}

/// The builder thread hung up (it found an error, which takes precedence).
const BUILDER_STOPPED: &str = "builder stopped";

impl Sink for BatchSink {
    fn event(&mut self, index: usize, json: &[u8]) -> Result<(), String> {
        if self.ends.is_empty() {
            self.first_index = index;
        }
        // An event may be as large as the splitter's limit: no abort if
        // memory cannot hold a copy.
        self.buf.try_reserve(json.len()).map_err(|_| {
            format!(
                "event #{index} of traceEvents: out of memory copying {} bytes",
                json.len()
            )
        })?;
        self.buf.extend_from_slice(json);
        self.ends.push(self.buf.len());
        if self.buf.len() >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
        self.flush()?;
        let batch = Batch::Other {
            key: key.to_string(),
            json: json.to_vec(),
        };
        self.tx.send(batch).map_err(|_| BUILDER_STOPPED.to_string())
    }
}

impl Decoder {
    fn new(needs: &Needs) -> Decoder {
        let builder = TraceBuilder::new(needs);
        Decoder {
            skips_any: builder.skips_any(),
            builder,
            seen: 0,
            unknown_phases: HashMap::default(),
            missing_ph: 0,
        }
    }
}

fn build_from(
    rx: std::sync::mpsc::Receiver<Batch>,
    spare: std::sync::mpsc::Sender<(Vec<u8>, Vec<usize>)>,
    needs: Needs,
) -> Result<Decoder, String> {
    let mut d = Decoder::new(&needs);
    for batch in rx {
        match batch {
            Batch::Events {
                first_index,
                buf,
                ends,
            } => {
                let mut start = 0;
                for (i, &end) in ends.iter().enumerate() {
                    d.event(first_index + i, &buf[start..end])?;
                    start = end;
                }
                // The splitter may have finished; then the buffers are dropped.
                let _ = spare.send((buf, ends));
            }
            Batch::Other { key, json } => d.other(&key, &json)?,
        }
    }
    Ok(d)
}

/// How a decode uses the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Splitting on the calling thread, parsing and building on a second
    /// one: the fastest for one large trace.
    Two,
    /// Everything on the calling thread, without batch buffers: for many
    /// traces loaded in parallel, where memory per load counts.
    One,
}

fn scan_error(packing: Packing, e: ScanError) -> LoadError {
    match e {
        ScanError::Io(io) => LoadError::read(packing, io),
        ScanError::Syntax(m) => LoadError::Syntax(m),
        ScanError::Callback(m) => LoadError::Invalid(m),
        ScanError::Limit(m) => LoadError::Limit(m),
    }
}

/// Decodes a Kineto JSON document from `reader` (already unpacked),
/// keeping what `needs` asks for.
pub fn decode<R: Read>(
    reader: R,
    packing: Packing,
    needs: &Needs,
    threads: Threads,
) -> Result<Trace, LoadError> {
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let (decoder, outline) = match threads {
        Threads::One => {
            let mut d = Decoder::new(needs);
            let outline = scan::split(&mut counted, &mut d).map_err(|e| scan_error(packing, e))?;
            (d, outline)
        }
        Threads::Two => split_and_build(&mut counted, packing, needs)?,
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

/// [`Threads::Two`]: the splitter here, the decoder on a second thread fed
/// in input order through a bounded channel.
fn split_and_build<R: Read>(
    reader: &mut R,
    packing: Packing,
    needs: &Needs,
) -> Result<(Decoder, scan::Outline), LoadError> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(4);
    let (spare_tx, spare_rx) = std::sync::mpsc::channel();
    let needs = *needs;
    let builder = std::thread::spawn(move || build_from(rx, spare_tx, needs));
    let mut sink = BatchSink {
        tx,
        spare: spare_rx,
        first_index: 0,
        buf: Vec::with_capacity(BATCH_BYTES + (64 << 10)),
        ends: Vec::new(),
    };
    let split = scan::split(reader, &mut sink);
    // Events before a syntax error are still checked: their errors come first.
    let flushed = sink.flush();
    drop(sink);
    let decoder = builder
        .join()
        .map_err(|_| LoadError::Internal)?
        .map_err(LoadError::Invalid)?;
    let outline = split.map_err(|e| scan_error(packing, e))?;
    flushed.map_err(LoadError::Invalid)?;
    Ok((decoder, outline))
}
