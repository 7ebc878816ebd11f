//! A native decoder of Perfetto protobuf traces (`.pftrace`) as rocprofv3
//! writes them: track events on thread tracks and on child tracks of the
//! process, with interned names, become [`Slice`]s as `traceconv json`
//! would export them (pid/tid, order, args).
//!
//! The trace is streamed packet by packet. Each writer sequence
//! (`trusted_packet_sequence_id`) has its own interning tables, defaults and
//! sequence-scoped clocks, reset when a packet says its incremental state was
//! cleared; packets that need that state before the first reset are skipped,
//! as trace processor skips them. Slice ends are matched to begins per track
//! with a stack. Counter events are dropped (traceconv does not export them).

mod clock;
pub mod proto;
mod sniff;
mod wire;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};

use prost::Message;

use clock::{BOOTTIME, Clocks, FIRST_SEQUENCE_CLOCK};
use proto::{DebugAnnotation, TracePacket, TrackDescriptor, TrackEvent, debug_annotation};
pub use sniff::sniff;
use wire::{Fields, Value, WireError};

/// One slice as traceconv's JSON export would give it.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The event's categories joined with ",".
    pub cat: String,
    /// The event's name.
    pub name: String,
    /// Process id, by traceconv's rule (see `tid`).
    pub pid: i64,
    /// Thread id, by traceconv's rule: a thread track gives its pid/tid; a
    /// child of a thread that thread's; a child of a process (pid, pid); a
    /// track with neither above it (0, 0).
    pub tid: i64,
    /// Begin, trace-clock (BOOTTIME) ns.
    pub begin_ns: i64,
    /// End, trace-clock ns: `begin_ns` for an instant, and for a slice never
    /// ended (counted in [`Stats::unmatched_begins`]).
    pub end_ns: i64,
    /// On a thread track (traceconv writes "X"), else on a child track
    /// (traceconv writes a "b"/"e" pair).
    pub thread_track: bool,
    /// The begin event's debug annotations, names resolved, in written order.
    pub args: Vec<(String, ArgValue)>,
}

/// The value of one slice argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A boolean.
    Bool(bool),
    /// An unsigned integer.
    UInt(u64),
    /// A signed integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A string (pointers become `0x…` strings, as traceconv writes them).
    Str(String),
}

/// The name of a thread, from a thread track's descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadName {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// Thread name.
    pub name: String,
}

/// Counts of what the decoder saw, kept or dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Trace packets read (skipped ones included).
    pub packets: u64,
    /// Slices returned (instants and unfinished slices included).
    pub slices: u64,
    /// Counter events, dropped.
    pub counter_events: u64,
    /// Instant events, returned as zero-length slices.
    pub instants: u64,
    /// Slice begins never ended (returned with `end_ns == begin_ns`).
    pub unmatched_begins: u64,
    /// Slice ends with no open slice on their track, dropped.
    pub unmatched_ends: u64,
    /// Packets needing incremental state seen before the first "cleared"
    /// packet of their sequence, skipped.
    pub skipped_before_cleared: u64,
    /// Tracks that events name but no descriptor describes.
    pub unknown_tracks: u64,
}

impl Stats {
    /// What a reader of the report should know was dropped or guessed.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                out.push(format!("{n} {what}"));
            }
        };
        say(
            self.unmatched_begins,
            "Perfetto slice(s) never ended: kept with zero length",
        );
        say(
            self.unmatched_ends,
            "Perfetto slice end(s) with no open slice on their track: dropped",
        );
        say(
            self.skipped_before_cleared,
            "Perfetto packet(s) needing incremental state before their sequence set it: skipped",
        );
        say(
            self.unknown_tracks,
            "Perfetto track(s) used by events but never described: their slices have pid 0, tid 0",
        );
        out
    }
}

/// A decoded trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// Slices in traceconv's JSON order: thread-track slices by begin time,
    /// then child-track slices by begin time (ties in file order).
    pub slices: Vec<Slice>,
    /// Named threads, in descriptor order.
    pub threads: Vec<ThreadName>,
    /// Named processes (pid, name), in descriptor order.
    pub processes: Vec<(i64, String)>,
    /// What was seen.
    pub stats: Stats,
}

/// Why a trace cannot be decoded.
#[derive(Debug, thiserror::Error)]
pub enum PftraceError {
    /// The bytes end inside a field.
    #[error("truncated Perfetto trace: the field at byte {offset} runs past the end of the input")]
    Truncated {
        /// Offset of the cut field's key.
        offset: usize,
    },
    /// The bytes are not a valid trace.
    #[error("malformed Perfetto trace at byte {offset}: {what}")]
    Malformed {
        /// Offset of the field or packet at fault.
        offset: usize,
        /// What is wrong.
        what: String,
    },
    /// An event uses an interned id its sequence never defined.
    #[error(
        "Perfetto trace: the packet at byte {offset} uses {table} id {iid}, never defined on its sequence"
    )]
    UnknownIid {
        /// Offset of the packet.
        offset: usize,
        /// The interning table.
        table: &'static str,
        /// The id.
        iid: u64,
    },
    /// An event is timed on a clock that no snapshot ties to BOOTTIME.
    #[error(
        "Perfetto trace: the packet at byte {offset} is timed on clock {clock}, which no clock snapshot converts to BOOTTIME"
    )]
    UnknownClock {
        /// Offset of the packet.
        offset: usize,
        /// The clock id.
        clock: u32,
    },
}

impl PftraceError {
    fn from_wire(e: WireError, base: usize) -> Self {
        match e {
            WireError::Truncated(at) => PftraceError::Truncated { offset: base + at },
            WireError::Malformed(at, what) => PftraceError::Malformed {
                offset: base + at,
                what: what.to_string(),
            },
        }
    }
}

/// Decodes a whole `.pftrace` (unpacked bytes).
pub fn decode(bytes: &[u8]) -> Result<Decoded, PftraceError> {
    let mut decoder = Decoder::default();
    for field in Fields::new(bytes) {
        let field = field.map_err(|e| PftraceError::from_wire(e, 0))?;
        match (field.number, field.value) {
            (1, Value::Len(packet)) => {
                // The packet's own bytes start after its key and length.
                let start = packet.as_ptr() as usize - bytes.as_ptr() as usize;
                decoder.packet(packet, start)?;
            }
            (1, _) => {
                return Err(PftraceError::Malformed {
                    offset: field.offset,
                    what: "Trace.packet is not length-delimited".to_string(),
                });
            }
            _ => {}
        }
    }
    Ok(decoder.finish())
}

/// The incremental state of one writer sequence.
#[derive(Debug, Default)]
struct Sequence {
    /// A "cleared" packet was seen: packets needing the state are read.
    valid: bool,
    categories: HashMap<u64, String>,
    names: HashMap<u64, String>,
    annotation_names: HashMap<u64, String>,
    annotation_strings: HashMap<u64, String>,
    default_clock: Option<u32>,
    default_track: Option<u64>,
    clocks: Clocks,
}

impl Sequence {
    fn clear(&mut self) {
        *self = Sequence {
            valid: true,
            ..Sequence::default()
        };
    }
}

/// What a descriptor says about a track.
#[derive(Debug, Default)]
struct Track {
    parent: Option<u64>,
    thread: Option<(i64, i64)>,
    process: Option<i64>,
}

/// A slice being collected, placed on its track at the end.
#[derive(Debug)]
struct Pending {
    track: u64,
    begin_ns: i64,
    end_ns: Option<i64>,
    cat: String,
    name: String,
    args: Vec<(String, ArgValue)>,
}

#[derive(Debug, Default)]
struct Decoder {
    sequences: HashMap<u32, Sequence>,
    global_clocks: Clocks,
    /// The time of the last packet with a timestamp (packets without one get it).
    last_ns: i64,
    tracks: HashMap<u64, Track>,
    thread_names: Vec<(u64, ThreadName)>,
    process_names: Vec<(u64, (i64, String))>,
    slices: Vec<Pending>,
    /// Open slices per track, innermost last.
    open: HashMap<u64, Vec<usize>>,
    stats: Stats,
}

impl Decoder {
    fn packet(&mut self, bytes: &[u8], offset: usize) -> Result<(), PftraceError> {
        self.stats.packets += 1;
        let packet = TracePacket::decode(bytes).map_err(|e| PftraceError::Malformed {
            offset,
            what: e.to_string(),
        })?;
        let seq_id = packet.trusted_packet_sequence_id.unwrap_or(0);
        let seq = self.sequences.entry(seq_id).or_default();
        let flags = packet.sequence_flags.unwrap_or(0);
        if flags & 1 != 0 || packet.incremental_state_cleared == Some(true) {
            seq.clear();
        }
        if let Some(defaults) = &packet.trace_packet_defaults {
            seq.default_clock = defaults.timestamp_clock_id;
            seq.default_track = defaults
                .track_event_defaults
                .as_ref()
                .and_then(|d| d.track_uuid);
        }
        if let Some(snapshot) = &packet.clock_snapshot {
            seq.clocks.add_snapshot(snapshot, true);
            self.global_clocks.add_snapshot(snapshot, false);
        }
        if flags & 2 != 0 && !seq.valid {
            self.stats.skipped_before_cleared += 1;
            return Ok(());
        }
        if let Some(data) = &packet.interned_data {
            for e in &data.event_categories {
                intern(&mut seq.categories, e.iid, e.name.as_deref());
            }
            for e in &data.event_names {
                intern(&mut seq.names, e.iid, e.name.as_deref());
            }
            for e in &data.debug_annotation_names {
                intern(&mut seq.annotation_names, e.iid, e.name.as_deref());
            }
            for e in &data.debug_annotation_string_values {
                if let Some(iid) = e.iid {
                    let s = String::from_utf8_lossy(e.str.as_deref().unwrap_or_default());
                    seq.annotation_strings.insert(iid, s.into_owned());
                }
            }
        }

        let time = match packet.timestamp {
            Some(raw) => {
                let clock = packet
                    .timestamp_clock_id
                    .or(seq.default_clock)
                    .unwrap_or(BOOTTIME);
                let converted = if clock == BOOTTIME {
                    Some(i64::try_from(raw).unwrap_or(i64::MAX))
                } else if clock >= FIRST_SEQUENCE_CLOCK {
                    seq.clocks.to_boottime(clock, raw)
                } else if self.global_clocks.knows(clock) {
                    self.global_clocks.to_boottime(clock, raw)
                } else {
                    None
                };
                match converted {
                    Some(t) => {
                        self.last_ns = t;
                        Ok(t)
                    }
                    None => Err(clock),
                }
            }
            None => Ok(self.last_ns),
        };

        if let Some(desc) = &packet.track_descriptor {
            self.descriptor(desc);
        }
        let Some(event) = &packet.track_event else {
            return Ok(());
        };
        let time = time.map_err(|clock| PftraceError::UnknownClock { offset, clock })?;
        let seq = &self.sequences[&seq_id];
        let track = event.track_uuid.or(seq.default_track).unwrap_or(0);
        match event.r#type {
            Some(1) | Some(3) => {
                let instant = event.r#type == Some(3);
                let pending = slice(seq, event, track, time, instant, offset)?;
                let index = self.slices.len();
                self.slices.push(pending);
                if instant {
                    self.stats.instants += 1;
                } else {
                    self.open.entry(track).or_default().push(index);
                }
            }
            Some(2) => match self.open.get_mut(&track).and_then(Vec::pop) {
                Some(index) => self.slices[index].end_ns = Some(time),
                None => self.stats.unmatched_ends += 1,
            },
            Some(4) => self.stats.counter_events += 1,
            _ => {}
        }
        Ok(())
    }

    fn descriptor(&mut self, desc: &TrackDescriptor) {
        let Some(uuid) = desc.uuid else { return };
        let thread = desc.thread.as_ref().map(|t| {
            (
                i64::from(t.pid.unwrap_or(0)),
                i64::from(t.tid.unwrap_or(0)),
                t.thread_name.clone().unwrap_or_default(),
            )
        });
        let process = desc.process.as_ref().map(|p| {
            (
                i64::from(p.pid.unwrap_or(0)),
                p.process_name.clone().unwrap_or_default(),
            )
        });
        // Writers repeat descriptors: the names keep their first place.
        if let Some((pid, tid, name)) = &thread {
            if !name.is_empty() {
                let entry = ThreadName {
                    pid: *pid,
                    tid: *tid,
                    name: name.clone(),
                };
                match self.thread_names.iter_mut().find(|(u, _)| *u == uuid) {
                    Some((_, t)) => *t = entry,
                    None => self.thread_names.push((uuid, entry)),
                }
            }
        }
        if let Some((pid, name)) = &process {
            if !name.is_empty() {
                let entry = (*pid, name.clone());
                match self.process_names.iter_mut().find(|(u, _)| *u == uuid) {
                    Some((_, p)) => *p = entry,
                    None => self.process_names.push((uuid, entry)),
                }
            }
        }
        self.tracks.insert(
            uuid,
            Track {
                parent: desc.parent_uuid,
                thread: thread.map(|(pid, tid, _)| (pid, tid)),
                process: process.map(|(pid, _)| pid),
            },
        );
    }

    /// Where traceconv puts a slice of `track`: (pid, tid, on a thread track).
    fn place(&self, track: u64) -> (i64, i64, bool) {
        let Some(t) = self.tracks.get(&track) else {
            return (0, 0, false);
        };
        if let Some((pid, tid)) = t.thread {
            return (pid, tid, true);
        }
        let mut current = Some(t);
        // Bounded by the number of tracks: a parent cycle ends the walk.
        for _ in 0..=self.tracks.len() {
            let Some(t) = current else { break };
            if let Some(pid) = t.process {
                return (pid, pid, false);
            }
            if let Some((pid, tid)) = t.thread {
                return (pid, tid, false);
            }
            current = t.parent.and_then(|p| self.tracks.get(&p));
        }
        (0, 0, false)
    }

    fn finish(mut self) -> Decoded {
        let mut places: HashMap<u64, (i64, i64, bool)> = HashMap::new();
        let mut unknown: HashSet<u64> = HashSet::new();
        let mut slices: Vec<Slice> = Vec::with_capacity(self.slices.len());
        for p in std::mem::take(&mut self.slices) {
            if !self.tracks.contains_key(&p.track) {
                unknown.insert(p.track);
            }
            let (pid, tid, thread_track) =
                *places.entry(p.track).or_insert_with(|| self.place(p.track));
            let end_ns = p.end_ns.unwrap_or_else(|| {
                self.stats.unmatched_begins += 1;
                p.begin_ns
            });
            slices.push(Slice {
                cat: p.cat,
                name: p.name,
                pid,
                tid,
                begin_ns: p.begin_ns,
                end_ns,
                thread_track,
                args: p.args,
            });
        }
        // Stable: equal keys keep file order.
        slices.sort_by_key(|s| (!s.thread_track, s.begin_ns));
        self.stats.slices = slices.len() as u64;
        self.stats.unknown_tracks = unknown.len() as u64;
        Decoded {
            slices,
            threads: self.thread_names.into_iter().map(|(_, t)| t).collect(),
            processes: self.process_names.into_iter().map(|(_, p)| p).collect(),
            stats: self.stats,
        }
    }
}

fn intern(table: &mut HashMap<u64, String>, iid: Option<u64>, name: Option<&str>) {
    if let Some(iid) = iid {
        table.insert(iid, name.unwrap_or_default().to_string());
    }
}

fn lookup<'a>(
    table: &'a HashMap<u64, String>,
    name: &'static str,
    iid: u64,
    offset: usize,
) -> Result<&'a str, PftraceError> {
    table
        .get(&iid)
        .map(String::as_str)
        .ok_or(PftraceError::UnknownIid {
            offset,
            table: name,
            iid,
        })
}

/// A begin or instant event as a slice, its names resolved on `seq`.
fn slice(
    seq: &Sequence,
    event: &TrackEvent,
    track: u64,
    time: i64,
    instant: bool,
    offset: usize,
) -> Result<Pending, PftraceError> {
    let mut cats = Vec::with_capacity(event.category_iids.len() + event.categories.len());
    for &iid in &event.category_iids {
        cats.push(lookup(&seq.categories, "event_categories", iid, offset)?);
    }
    cats.extend(event.categories.iter().map(String::as_str));
    let name = match &event.name_field {
        Some(proto::track_event::NameField::NameIid(iid)) => {
            lookup(&seq.names, "event_names", *iid, offset)?.to_string()
        }
        Some(proto::track_event::NameField::Name(name)) => name.clone(),
        None => String::new(),
    };
    let mut args = Vec::with_capacity(event.debug_annotations.len());
    for a in &event.debug_annotations {
        if let Some(arg) = annotation(seq, a, offset)? {
            args.push(arg);
        }
    }
    Ok(Pending {
        track,
        begin_ns: time,
        end_ns: instant.then_some(time),
        cat: cats.join(","),
        name,
        args,
    })
}

/// One annotation as a named value; None for kinds not read (nested values).
fn annotation(
    seq: &Sequence,
    a: &DebugAnnotation,
    offset: usize,
) -> Result<Option<(String, ArgValue)>, PftraceError> {
    use debug_annotation::{NameField, Value as V};
    let value = match &a.value {
        Some(V::BoolValue(b)) => ArgValue::Bool(*b),
        Some(V::UintValue(u)) => ArgValue::UInt(*u),
        Some(V::IntValue(i)) => ArgValue::Int(*i),
        Some(V::DoubleValue(d)) => ArgValue::Double(*d),
        Some(V::StringValue(s)) => ArgValue::Str(s.clone()),
        Some(V::PointerValue(p)) => ArgValue::Str(format!("0x{p:x}")),
        Some(V::StringValueIid(iid)) => ArgValue::Str(
            lookup(
                &seq.annotation_strings,
                "debug_annotation_string_values",
                *iid,
                offset,
            )?
            .to_string(),
        ),
        None => return Ok(None),
    };
    let name = match &a.name_field {
        Some(NameField::NameIid(iid)) => lookup(
            &seq.annotation_names,
            "debug_annotation_names",
            *iid,
            offset,
        )?
        .to_string(),
        Some(NameField::Name(name)) => name.clone(),
        None => String::new(),
    };
    Ok(Some((name, value)))
}

/// Reads a whole `.pftrace` from `reader` (unpacked) into a trace whose
/// Perfetto slices are those traceconv's JSON export would list.
pub fn decode_trace<R: std::io::Read>(
    mut reader: R,
    packing: super::Packing,
    size_hint: Option<u64>,
) -> Result<crate::trace::Trace, crate::error::LoadError> {
    use crate::error::LoadError;
    let start = std::time::Instant::now();
    let mut bytes = Vec::new();
    if let Some(n) = size_hint.and_then(|n| usize::try_from(n).ok()) {
        let _ = bytes.try_reserve_exact(n.saturating_add(1));
    }
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::read(packing, e))?;
    let decoded = decode(&bytes).map_err(|e| LoadError::Syntax(e.to_string()))?;
    crate::timings::stage("decoding the Perfetto protobuf", start);
    let input_bytes = bytes.len() as u64;
    drop(bytes);
    let mut builder =
        crate::trace::builder::TraceBuilder::new(&crate::trace::needs::Needs::default());
    for w in decoded.stats.warnings() {
        builder.warn(w);
    }
    let info = builder.info_mut();
    info.profiler = crate::trace::Profiler::Perfetto;
    info.input_bytes = input_bytes;
    builder.set_perfetto(slices_as_events(decoded.slices));
    Ok(builder.finish())
}

/// The slices as traceconv's JSON events: `ts` and `dur` in µs (whole
/// numbers as integers), `dur` only on thread-track slices (traceconv
/// writes the others as `b`/`e` pairs, which have none).
fn slices_as_events(slices: Vec<Slice>) -> crate::trace::perfetto::PerfettoData {
    use crate::trace::perfetto::{PerfettoData, PerfettoEvent, PyValue};
    let micros = |ns: i64| {
        if ns % 1000 == 0 {
            PyValue::Int(ns / 1000)
        } else {
            PyValue::Float(ns as f64 / 1000.0)
        }
    };
    let mut data = PerfettoData::default();
    let mut args = Vec::new();
    for s in slices {
        args.clear();
        for (key, value) in &s.args {
            let key = data.intern(key);
            let value = match value {
                ArgValue::Bool(b) => PyValue::Bool(*b),
                ArgValue::UInt(u) => {
                    i64::try_from(*u).map_or(PyValue::Float(*u as f64), PyValue::Int)
                }
                ArgValue::Int(i) => PyValue::Int(*i),
                ArgValue::Double(d) => PyValue::Float(*d),
                ArgValue::Str(t) => PyValue::Str(data.intern(t)),
            };
            args.push((key, value));
        }
        let event = PerfettoEvent {
            cat: PyValue::Str(data.intern(&s.cat)),
            name: PyValue::Str(data.intern(&s.name)),
            pid: PyValue::Int(s.pid),
            tid: PyValue::Int(s.tid),
            ts: micros(s.begin_ns),
            dur: if s.thread_track {
                micros(s.end_ns - s.begin_ns)
            } else {
                PyValue::Missing
            },
            args: (0, 0),
        };
        data.push(event, args.drain(..));
    }
    data
}
