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
mod view;
mod wire;

#[cfg(test)]
mod tests;

use prost::Message;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::trace::perfetto::{PerfettoData, PerfettoEvent, PyValue, TextId};

use clock::{BOOTTIME, Clocks, FIRST_SEQUENCE_CLOCK};
use proto::{TracePacket, TrackDescriptor};
pub use sniff::sniff;
use view::{AnnotationView, EventView, NameView, PacketView, ValueView};
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
    /// An integer, signed or unsigned in the trace (Python's `int`
    /// either way; an unsigned value beyond `i64` is read as a double).
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

/// Decodes a whole `.pftrace` (unpacked bytes) into slices with their
/// texts (see [`decode_events`] for the form the report reads).
pub fn decode(bytes: &[u8]) -> Result<Decoded, PftraceError> {
    let (data, placed, mut meta) = decode_placed(bytes)?;
    let arg = |v: PyValue| match v {
        PyValue::Bool(b) => ArgValue::Bool(b),
        PyValue::Int(i) => ArgValue::Int(i),
        PyValue::Float(f) => ArgValue::Double(f),
        PyValue::Str(id) => ArgValue::Str(data.text(id).to_string()),
        _ => ArgValue::Str(String::new()),
    };
    meta.slices = placed
        .iter()
        .map(|p| {
            let (a, b) = p.pending.args;
            Slice {
                cat: data.text(p.pending.cat).to_string(),
                name: data.text(p.pending.name).to_string(),
                pid: p.pid,
                tid: p.tid,
                begin_ns: p.pending.begin_ns,
                end_ns: p.pending.end_ns.unwrap_or(p.pending.begin_ns),
                thread_track: p.thread_track,
                args: data.args[a as usize..b as usize]
                    .iter()
                    .map(|&(k, v)| (data.text(k).to_string(), arg(v)))
                    .collect(),
            }
        })
        .collect();
    Ok(meta)
}

/// Decodes a whole `.pftrace` into the events traceconv's JSON export
/// would list (`ts` and `dur` in µs, whole numbers as integers; `dur` only
/// on thread-track slices, as traceconv writes the others as `b`/`e` pairs
/// without one), and the names and statistics (no slices).
pub fn decode_events(bytes: &[u8]) -> Result<(PerfettoData, Decoded), PftraceError> {
    let (mut data, placed, meta) = decode_placed(bytes)?;
    let micros = |ns: i64| {
        if ns % 1000 == 0 {
            PyValue::Int(ns / 1000)
        } else {
            PyValue::Float(ns as f64 / 1000.0)
        }
    };
    data.events.reserve_exact(placed.len());
    for p in placed {
        let s = &p.pending;
        let end = s.end_ns.unwrap_or(s.begin_ns);
        data.events.push(PerfettoEvent {
            cat: PyValue::Str(s.cat),
            name: PyValue::Str(s.name),
            pid: PyValue::Int(p.pid),
            tid: PyValue::Int(p.tid),
            ts: micros(s.begin_ns),
            dur: if p.thread_track {
                micros(end - s.begin_ns)
            } else {
                PyValue::Missing
            },
            args: s.args,
        });
    }
    Ok((data, meta))
}

/// Packets decoded together: their messages are parsed on every core,
/// then applied to the sequences' state in file order.
const BATCH: usize = 4096;

fn decode_placed(bytes: &[u8]) -> Result<(PerfettoData, Vec<Placed>, Decoded), PftraceError> {
    let mut decoder = Decoder::default();
    let mut fields = Fields::new(bytes);
    let mut next_batch = || -> (Vec<(&[u8], usize)>, Option<PftraceError>) {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            let Some(field) = fields.next() else { break };
            match field {
                Ok(f) => match (f.number, f.value) {
                    (1, Value::Len(packet)) => {
                        // The packet's own bytes start after its key and length.
                        let start = packet.as_ptr() as usize - bytes.as_ptr() as usize;
                        batch.push((packet, start));
                    }
                    (1, _) => {
                        let what = "Trace.packet is not length-delimited".to_string();
                        let e = PftraceError::Malformed {
                            offset: f.offset,
                            what,
                        };
                        return (batch, Some(e));
                    }
                    _ => {}
                },
                Err(e) => return (batch, Some(PftraceError::from_wire(e, 0))),
            }
        }
        (batch, None)
    };

    let (mut batch, mut stop) = next_batch();
    let mut parsed = parse_batch(&batch);
    loop {
        // The next batch is parsed while this one is applied.
        let last = stop.is_some() || batch.len() < BATCH;
        let (applied, upcoming) = rayon::join(
            || -> Result<(), PftraceError> {
                for (packet, offset) in std::mem::take(&mut parsed) {
                    match packet? {
                        Packet::View(v) => decoder.packet(&v, None, offset)?,
                        Packet::Full(p) => decoder.packet(&PacketView::of(&p), Some(&p), offset)?,
                    }
                }
                Ok(())
            },
            || {
                if last {
                    return None;
                }
                let (b, s) = next_batch();
                let p = parse_batch(&b);
                Some((b, s, p))
            },
        );
        applied?;
        match upcoming {
            Some((b, s, p)) => {
                (batch, stop, parsed) = (b, s, p);
            }
            None => break,
        }
    }
    if let Some(e) = stop {
        return Err(e);
    }
    let start = std::time::Instant::now();
    let finished = decoder.finish();
    crate::timings::stage("placing the Perfetto slices", start);
    Ok(finished)
}

/// Parsed packets with their offsets.
type Parsed<'a> = Vec<(Result<Packet<'a>, PftraceError>, usize)>;

/// Parses a batch of packets (bytes, offset) on every core: each read in
/// place when it can be, else decoded whole.
fn parse_batch<'a>(batch: &[(&'a [u8], usize)]) -> Parsed<'a> {
    use rayon::prelude::*;
    batch
        .par_iter()
        .map(|&(packet, offset)| {
            let p = match view::packet(packet) {
                Some(v) => Ok(Packet::View(v)),
                None => TracePacket::decode(packet)
                    .map(|p| Packet::Full(Box::new(p)))
                    .map_err(|e| PftraceError::Malformed {
                        offset,
                        what: e.to_string(),
                    }),
            };
            (p, offset)
        })
        .collect()
}

/// A packet as parsed: read in place, or decoded whole (see [`view`]).
enum Packet<'a> {
    View(PacketView<'a>),
    /// Boxed: rare, and twice the size of a view.
    Full(Box<TracePacket>),
}

/// The incremental state of one writer sequence.
#[derive(Debug, Default)]
struct Sequence {
    /// A "cleared" packet was seen: packets needing the state are read.
    valid: bool,
    categories: HashMap<u64, TextId>,
    names: HashMap<u64, TextId>,
    annotation_names: HashMap<u64, TextId>,
    annotation_strings: HashMap<u64, TextId>,
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

/// A slice being collected, placed on its track at the end: its texts
/// are ids of the decoder's table, its arguments `args[args.0..args.1]`.
#[derive(Debug)]
struct Pending {
    track: u64,
    begin_ns: i64,
    end_ns: Option<i64>,
    cat: TextId,
    name: TextId,
    args: (u32, u32),
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
    /// Every string of the slices, and their arguments in one list.
    data: PerfettoData,
    args: Vec<(TextId, PyValue)>,
    /// Open slices per track, innermost last.
    open: HashMap<u64, Vec<usize>>,
    stats: Stats,
}

impl Decoder {
    /// Applies one packet: its fields, and `full`'s nested messages other
    /// than the event (None when the packet has none).
    fn packet(
        &mut self,
        packet: &PacketView,
        full: Option<&TracePacket>,
        offset: usize,
    ) -> Result<(), PftraceError> {
        self.stats.packets += 1;
        let seq_id = packet.seq_id.unwrap_or(0);
        let seq = self.sequences.entry(seq_id).or_default();
        let flags = packet.flags.unwrap_or(0);
        if flags & 1 != 0 || packet.cleared == Some(true) {
            seq.clear();
        }
        if let Some(defaults) = full.and_then(|p| p.trace_packet_defaults.as_ref()) {
            seq.default_clock = defaults.timestamp_clock_id;
            seq.default_track = defaults
                .track_event_defaults
                .as_ref()
                .and_then(|d| d.track_uuid);
        }
        if let Some(snapshot) = full.and_then(|p| p.clock_snapshot.as_ref()) {
            seq.clocks.add_snapshot(snapshot, true);
            self.global_clocks.add_snapshot(snapshot, false);
        }
        if flags & 2 != 0 && !seq.valid {
            self.stats.skipped_before_cleared += 1;
            return Ok(());
        }
        if let Some(interned) = &packet.interned {
            let data = &mut self.data;
            let tables = [
                (&mut seq.categories, &interned.event_categories),
                (&mut seq.names, &interned.event_names),
                (&mut seq.annotation_names, &interned.debug_annotation_names),
                (
                    &mut seq.annotation_strings,
                    &interned.debug_annotation_string_values,
                ),
            ];
            for (table, entries) in tables {
                for &(iid, name) in entries {
                    if let Some(iid) = iid {
                        let text = String::from_utf8_lossy(name.unwrap_or_default());
                        table.insert(iid, data.intern(&text));
                    }
                }
            }
        }

        let time = match packet.timestamp {
            Some(raw) => {
                let clock = packet.clock_id.or(seq.default_clock).unwrap_or(BOOTTIME);
                let converted = if clock == BOOTTIME {
                    Some(i64::try_from(raw).unwrap_or(i64::MAX))
                } else if clock >= FIRST_SEQUENCE_CLOCK {
                    seq.clocks.convert_to_boottime(clock, raw)
                } else if self.global_clocks.knows(clock) {
                    self.global_clocks.convert_to_boottime(clock, raw)
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

        if let Some(desc) = full.and_then(|p| p.track_descriptor.as_ref()) {
            self.descriptor(desc);
        }
        let Some(event) = &packet.event else {
            return Ok(());
        };
        let time = time.map_err(|clock| PftraceError::UnknownClock { offset, clock })?;
        let seq = &self.sequences[&seq_id];
        let track = event.track_uuid.or(seq.default_track).unwrap_or(0);
        match event.kind {
            Some(1) | Some(3) => {
                let instant = event.kind == Some(3);
                let mut cx = SliceCx {
                    seq,
                    data: &mut self.data,
                    args: &mut self.args,
                    offset,
                };
                let pending = cx.slice(event, track, time, instant)?;
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
        if let Some((pid, tid, name)) = &thread
            && !name.is_empty()
        {
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
        if let Some((pid, name)) = &process
            && !name.is_empty()
        {
            let entry = (*pid, name.clone());
            match self.process_names.iter_mut().find(|(u, _)| *u == uuid) {
                Some((_, p)) => *p = entry,
                None => self.process_names.push((uuid, entry)),
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

    /// The slices in traceconv's order with the names of threads and
    /// processes and the statistics.
    fn finish(mut self) -> (PerfettoData, Vec<Placed>, Decoded) {
        let mut places: HashMap<u64, (i64, i64, bool)> = HashMap::default();
        let mut unknown: HashSet<u64> = HashSet::default();
        let mut slices: Vec<Placed> = Vec::with_capacity(self.slices.len());
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
            slices.push(Placed {
                pending: Pending {
                    end_ns: Some(end_ns),
                    ..p
                },
                pid,
                tid,
                thread_track,
            });
        }
        // Equal keys keep file order (the index breaks ties); the small
        // keys are sorted, not the slices.
        let mut order: Vec<(bool, i64, u32)> = slices
            .iter()
            .enumerate()
            .map(|(i, s)| (!s.thread_track, s.pending.begin_ns, i as u32))
            .collect();
        order.sort_unstable();
        let mut taken: Vec<Option<Placed>> = slices.into_iter().map(Some).collect();
        let slices: Vec<Placed> = order
            .iter()
            .filter_map(|&(_, _, i)| taken[i as usize].take())
            .collect();
        self.stats.slices = slices.len() as u64;
        self.stats.unknown_tracks = unknown.len() as u64;
        let mut data = std::mem::take(&mut self.data);
        data.args = std::mem::take(&mut self.args);
        let meta = Decoded {
            slices: Vec::new(),
            threads: self.thread_names.into_iter().map(|(_, t)| t).collect(),
            processes: self.process_names.into_iter().map(|(_, p)| p).collect(),
            stats: self.stats,
        };
        (data, slices, meta)
    }
}

/// A slice with its place: traceconv's pid and tid, and whether it is on a
/// thread track.
struct Placed {
    pending: Pending,
    pid: i64,
    tid: i64,
    thread_track: bool,
}

fn lookup(
    table: &HashMap<u64, TextId>,
    name: &'static str,
    iid: u64,
    offset: usize,
) -> Result<TextId, PftraceError> {
    table.get(&iid).copied().ok_or(PftraceError::UnknownIid {
        offset,
        table: name,
        iid,
    })
}

/// What turning one event into a slice reads and adds to.
struct SliceCx<'a> {
    seq: &'a Sequence,
    data: &'a mut PerfettoData,
    args: &'a mut Vec<(TextId, PyValue)>,
    offset: usize,
}

impl SliceCx<'_> {
    /// A begin or instant event as a slice, its names resolved on the sequence.
    fn slice(
        &mut self,
        event: &EventView,
        track: u64,
        time: i64,
        instant: bool,
    ) -> Result<Pending, PftraceError> {
        let (seq, offset) = (self.seq, self.offset);
        let cat = match (event.category_iids.as_slice(), event.categories.as_slice()) {
            ([iid], []) => lookup(&seq.categories, "event_categories", *iid, offset)?,
            ([], [one]) => self.data.intern(one),
            (iids, names) => {
                let mut cats = Vec::with_capacity(iids.len() + names.len());
                for &iid in iids {
                    let id = lookup(&seq.categories, "event_categories", iid, offset)?;
                    cats.push(self.data.text(id).to_string());
                }
                cats.extend(names.iter().map(|n| n.to_string()));
                self.data.intern(&cats.join(","))
            }
        };
        let name = match event.name {
            Some(NameView::Iid(iid)) => lookup(&seq.names, "event_names", iid, offset)?,
            Some(NameView::Text(name)) => self.data.intern(name),
            None => self.data.intern(""),
        };
        let start = self.args.len() as u32;
        for a in &event.annotations {
            if let Some(arg) = self.annotation(a)? {
                self.args.push(arg);
            }
        }
        Ok(Pending {
            track,
            begin_ns: time,
            end_ns: instant.then_some(time),
            cat,
            name,
            args: (start, self.args.len() as u32),
        })
    }

    /// One annotation as a named value; None for kinds not read (nested values).
    fn annotation(
        &mut self,
        a: &AnnotationView,
    ) -> Result<Option<(TextId, PyValue)>, PftraceError> {
        let (seq, offset) = (self.seq, self.offset);
        let value = match a.value {
            Some(ValueView::Bool(b)) => PyValue::Bool(b),
            Some(ValueView::Uint(u)) => {
                i64::try_from(u).map_or(PyValue::Float(u as f64), PyValue::Int)
            }
            Some(ValueView::Int(i)) => PyValue::Int(i),
            Some(ValueView::Double(d)) => PyValue::Float(d),
            Some(ValueView::Str(s)) => PyValue::Str(self.data.intern(s)),
            Some(ValueView::Pointer(p)) => PyValue::Str(self.data.intern(&format!("0x{p:x}"))),
            Some(ValueView::StrIid(iid)) => PyValue::Str(lookup(
                &seq.annotation_strings,
                "debug_annotation_string_values",
                iid,
                offset,
            )?),
            None => return Ok(None),
        };
        let name = match a.name {
            Some(NameView::Iid(iid)) => {
                lookup(&seq.annotation_names, "debug_annotation_names", iid, offset)?
            }
            Some(NameView::Text(name)) => self.data.intern(name),
            None => self.data.intern(""),
        };
        Ok(Some((name, value)))
    }
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
    let bytes = super::read_whole(&mut reader, packing, size_hint)?;
    crate::timings::stage("reading the Perfetto protobuf", start);
    let start = std::time::Instant::now();
    let (data, decoded) = decode_events(&bytes).map_err(|e| LoadError::Syntax(e.to_string()))?;
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
    builder.set_perfetto(data);
    Ok(builder.finish())
}
