//! PyTorch profiler (Kineto) JSON: turns each event into the compact
//! [`Event`] of the arena, keeping only the fields some pass reads.

use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::scan::{self, ScanError, Sink};
use super::{LoadError, Packing};
use crate::trace::{Args, Cat, Event, Ident, IdentId, NO_INT, NONE, Phase, Trace};

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
    #[serde(borrow, default)]
    kernel_file: Option<&'a RawValue>,
    /// `M` events: process/thread name.
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    /// `M` events: process labels.
    #[serde(borrow, default)]
    labels: Option<&'a RawValue>,
    // Collective metadata of NCCL/RCCL kernels (coll_analysis).
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

/// Builds the arena while the splitter walks the document.
struct Builder {
    /// Categories whose events are kept as stubs (UID only, not parsed).
    skip: Vec<Cat>,
    /// The interned null pid/tid, for stubs.
    null_ident: IdentId,
    trace: Trace,
    idents: HashMap<Ident, IdentId>,
    unknown_phases: HashMap<String, usize>,
    missing_ph: usize,
    gpu_without_dur: usize,
}

impl Builder {
    fn ident(&mut self, raw: Option<RawIdent<'_>>) -> IdentId {
        let key = match raw {
            None | Some(RawIdent::Null) => Ident::Null,
            Some(RawIdent::Int(v)) => Ident::Int(v),
            Some(RawIdent::Str(s)) => Ident::Str(s.into()),
        };
        if let Some(&id) = self.idents.get(&key) {
            return id;
        }
        let id = self.trace.idents.len() as IdentId;
        self.trace.idents.push(key.clone());
        self.idents.insert(key, id);
        id
    }

    fn raw_text(&mut self, v: Option<&RawValue>) -> u32 {
        match v {
            Some(r) if r.get() != "null" => self.trace.strings.intern(r.get()),
            _ => NONE,
        }
    }
}

/// The text of a JSON value for metadata: strings unquoted, others as written.
fn meta_text(v: &RawValue) -> String {
    serde_json::from_str::<String>(v.get()).unwrap_or_else(|_| v.get().to_string())
}

fn short(name: &str) -> String {
    let mut s: String = name.chars().take(60).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    s
}

impl Sink for Builder {
    fn event(&mut self, index: usize, json: &[u8]) -> Result<(), String> {
        if !self.skip.is_empty()
            && let Some(cat) = quick_cat(json)
            && let Ok(cat) = std::str::from_utf8(cat)
            && self.skip.contains(&Cat::parse(cat))
        {
            // Keep the UID numbering; nothing else of the event is read.
            self.trace.events.push(Event {
                ts: f64::NAN,
                dur: f64::NAN,
                name: NONE,
                pid: self.null_ident,
                tid: self.null_ident,
                args: NONE,
                cat: Cat::parse(cat),
                ph: Phase::Other,
                dur_is_int: false,
            });
            return Ok(());
        }
        let raw: RawEvent = serde_json::from_slice(json).map_err(|e| {
            format!(
                "event #{index} of traceEvents: {}",
                strip_position(&e.to_string())
            )
        })?;
        let ph = match raw.ph.as_deref() {
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
        };
        let cat = raw.cat.as_deref().map(Cat::parse).unwrap_or(Cat::Missing);
        let name = match raw.name.as_deref() {
            Some(n) => self.trace.strings.intern(n),
            None => NONE,
        };
        let pid = self.ident(raw.pid);
        let tid = self.ident(raw.tid);
        let ts = raw.ts.map(|n| n.value).unwrap_or(f64::NAN);
        let (mut dur, dur_is_int) = raw
            .dur
            .map(|n| (n.value, n.is_int))
            .unwrap_or((f64::NAN, false));
        if dur < 0.0 {
            return Err(format!(
                "event #{index} ({}) has a negative duration ({dur})",
                short(self.trace.strings.get(name))
            ));
        }
        if cat.is_gpu() && ph == Phase::Complete && dur.is_nan() {
            // The reference crashes here; a GPU event without a duration
            // takes no time.
            self.gpu_without_dur += 1;
            dur = 0.0;
        }
        let uid = self.trace.events.len() as u32;
        let mut args_idx = NONE;
        if let Some(a) = raw.args {
            if ph == Phase::Metadata {
                let key = (pid, tid);
                let value = a.name.map(meta_text);
                let labels = a.labels.map(meta_text);
                match self.trace.strings.get(name) {
                    "process_name" => self.trace.meta.entry(key).or_default().process_name = value,
                    "process_labels" => {
                        self.trace.meta.entry(key).or_default().process_labels = labels
                    }
                    "thread_name" => self.trace.meta.entry(key).or_default().thread_name = value,
                    _ => {}
                }
            }
            if cat == Cat::Kernel {
                let coll = [
                    a.pg_name,
                    a.pg_ranks,
                    a.coll_name,
                    a.group_size,
                    a.dtype,
                    a.in_nelems,
                    a.out_nelems,
                    a.in_split,
                    a.out_split,
                ];
                if coll.iter().any(Option::is_some) {
                    let c = super::collectives::CollectiveArgs::from_raw(coll);
                    if !c.is_empty() {
                        self.trace.collective_args.insert(uid, c);
                    }
                }
            }
            let rec = Args {
                correlation: a.correlation.and_then(|v| v.0).unwrap_or(NO_INT),
                external_id: a.external_id.and_then(|v| v.0).unwrap_or(NO_INT),
                stream: a.stream.and_then(|v| v.0).unwrap_or(NO_INT),
                sequence: a.sequence.and_then(|v| v.0).unwrap_or(NO_INT),
                input_dims: self.raw_text(a.input_dims),
                input_type: self.raw_text(a.input_type),
                input_strides: self.raw_text(a.input_strides),
                concrete_inputs: self.raw_text(a.concrete_inputs),
                kernel_file: self.raw_text(a.kernel_file),
            };
            args_idx = self.trace.args.len() as u32;
            self.trace.args.push(rec);
        }
        if matches!(ph, Phase::FlowStart | Phase::FlowEnd)
            && let Some(id) = raw.id.and_then(|v| v.0)
        {
            self.trace.flow_ids.insert(uid, id);
        }
        self.trace.events.push(Event {
            ts,
            dur,
            name,
            pid,
            tid,
            args: args_idx,
            cat,
            ph,
            dur_is_int,
        });
        Ok(())
    }

    fn other(&mut self, key: &str, json: &[u8]) -> Result<(), String> {
        // Validate strictly (the reference rejects malformed JSON anywhere).
        let v: &RawValue = serde_json::from_slice(json).map_err(|e| {
            format!(
                "top-level key \"{key}\": {}",
                strip_position(&e.to_string())
            )
        })?;
        self.trace
            .top_level
            .push((key.to_string(), v.get().to_string()));
        Ok(())
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
struct Counted<R> {
    inner: R,
    bytes: u64,
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

fn build_from(
    rx: std::sync::mpsc::Receiver<Batch>,
    spare: std::sync::mpsc::Sender<(Vec<u8>, Vec<usize>)>,
    skip: Vec<Cat>,
) -> Result<Builder, String> {
    let mut b = Builder {
        skip,
        null_ident: 0,
        trace: Trace::default(),
        idents: HashMap::default(),
        unknown_phases: HashMap::default(),
        missing_ph: 0,
        gpu_without_dur: 0,
    };
    b.null_ident = b.ident(None);
    for batch in rx {
        match batch {
            Batch::Events {
                first_index,
                buf,
                ends,
            } => {
                let mut start = 0;
                for (i, &end) in ends.iter().enumerate() {
                    b.event(first_index + i, &buf[start..end])?;
                    start = end;
                }
                // The splitter may have finished; then the buffers are dropped.
                let _ = spare.send((buf, ends));
            }
            Batch::Other { key, json } => b.other(&key, &json)?,
        }
    }
    Ok(b)
}

/// What the loader may leave out.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Event categories kept only as stubs (their UID counts, nothing else is
    /// parsed or validated): for passes that never read them.
    pub stub_categories: Vec<Cat>,
}

/// Parses a Kineto JSON document from `reader` (already decompressed).
///
/// The splitter runs on the calling thread; parsing events and building the
/// arena run on a second thread, fed in file order through a bounded channel.
pub fn parse<R: Read>(reader: R, packing: Packing, opts: &LoadOptions) -> Result<Trace, LoadError> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(4);
    let skip = opts.stub_categories.clone();
    let (spare_tx, spare_rx) = std::sync::mpsc::channel();
    let builder = std::thread::spawn(move || build_from(rx, spare_tx, skip));
    let mut sink = BatchSink {
        tx,
        spare: spare_rx,
        first_index: 0,
        buf: Vec::with_capacity(BATCH_BYTES + (64 << 10)),
        ends: Vec::new(),
    };
    let mut counted = Counted {
        inner: reader,
        bytes: 0,
    };
    let split = scan::split(&mut counted, &mut sink);
    // Events before a syntax error are still checked: their errors come first.
    let flushed = sink.flush();
    drop(sink);
    let built = builder
        .join()
        .map_err(|_| LoadError("internal error: the parser thread panicked".into()))?;
    let b = match built {
        Err(m) => return Err(LoadError(format!("invalid trace: {m}"))),
        Ok(b) => b,
    };
    let outline = split.map_err(|e| match e {
        ScanError::Io(io) => {
            let what = match packing {
                Packing::Gzip => "truncated or corrupt gzip data",
                Packing::Zip => "cannot read the zip member",
                Packing::Plain => "read error",
            };
            LoadError(format!("{what}: {io}"))
        }
        ScanError::Syntax(m) => LoadError(m),
        ScanError::Callback(m) => LoadError(format!("invalid trace: {m}")),
    })?;
    flushed.map_err(|m| LoadError(format!("invalid trace: {m}")))?;
    if !outline.has_trace_events {
        return Err(LoadError(
            "not a trace: the JSON object has no \"traceEvents\" array".into(),
        ));
    }
    let mut t = b.trace;
    t.json_bytes = counted.bytes;
    if t.events.is_empty() {
        return Err(LoadError(
            "the trace has no events (\"traceEvents\" is empty)".into(),
        ));
    }
    let mut phases: Vec<_> = b.unknown_phases.into_iter().collect();
    phases.sort();
    for (ph, n) in phases {
        t.warnings.push(format!(
            "{n} event(s) with unknown phase \"{ph}\" were ignored"
        ));
    }
    if b.missing_ph > 0 {
        t.warnings.push(format!(
            "{} event(s) without a \"ph\" field were ignored",
            b.missing_ph
        ));
    }
    if b.gpu_without_dur > 0 {
        t.warnings.push(format!(
            "{} GPU event(s) without \"dur\" were counted as zero-length",
            b.gpu_without_dur
        ));
    }
    t.events.shrink_to_fit();
    t.args.shrink_to_fit();
    Ok(t)
}
