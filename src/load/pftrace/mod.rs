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
use std::io::Read;
use view::{AnnotationView, EventView, Lists, NameView, PacketView, ValueView};
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
    /// The input cannot be read.
    #[error("cannot read the Perfetto trace: {0}")]
    Read(std::io::Error),
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
    let (data, placed, mut meta, _) = decode_placed(bytes)?;
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
    let (data, placed, meta, _) = decode_placed(bytes)?;
    Ok((events_of(data, placed), meta))
}

/// The placed slices as the events traceconv's JSON export would list.
fn events_of(mut data: PerfettoData, placed: Vec<Placed>) -> PerfettoData {
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
    data
}

/// Bytes of the input decoded at a time: the next chunk is read while
/// one is decoded, so that the whole input is never held at once.
const CHUNK: usize = 16 << 20;

/// Packets decoded together: their messages are parsed on every core,
/// then applied to the sequences' state in file order.
const BATCH: usize = 4096;

/// Packets parsed on one core at a time (with their events' lists).
const RUN: usize = 256;

/// Decodes the trace `reader` gives, a chunk at a time, into the placed
/// slices, their texts and the statistics; also the bytes read.
fn decode_placed(reader: impl Read + Send) -> Result<Placing, PftraceError> {
    decode_in_chunks(reader, CHUNK)
}

/// What [`decode_placed`] gives.
type Placing = (PerfettoData, Vec<Placed>, Decoded, u64);

/// [`decode_placed`], reading at least `chunk` bytes at a time.
fn decode_in_chunks(mut reader: impl Read + Send, chunk: usize) -> Result<Placing, PftraceError> {
    let mut decoder = Decoder::default();
    let mut current = Vec::new();
    let mut eof = fill(&mut reader, &mut current, chunk)?;
    let mut spare = Vec::new();
    let mut base = 0usize;
    loop {
        let whole = whole_fields(&current, eof);
        if whole == 0 && !eof {
            // One packet longer than a chunk: read on until it is whole.
            eof = fill(&mut reader, &mut current, chunk)?;
            continue;
        }
        // The cut field at the end starts the next chunk.
        spare.clear();
        spare.extend_from_slice(&current[whole..]);
        let piece = &current[..whole];
        if eof {
            decode_chunk(&mut decoder, piece, base)?;
            break;
        }
        let (decoded, filled) = rayon::join(
            || decode_chunk(&mut decoder, piece, base),
            || fill(&mut reader, &mut spare, chunk),
        );
        decoded?;
        eof = filled?;
        base += whole;
        std::mem::swap(&mut current, &mut spare);
    }
    let read = (base + current.len()) as u64;
    let start = std::time::Instant::now();
    let (data, placed, meta) = decoder.finish();
    crate::timings::stage("placing the Perfetto slices", start);
    Ok((data, placed, meta, read))
}

/// Reads `chunk` more bytes onto `buf` (fewer at the end of the input);
/// true at the end of the input.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, chunk: usize) -> Result<bool, PftraceError> {
    let before = buf.len();
    // Room first: growing while reading would copy the chunk many times.
    buf.reserve(chunk);
    reader
        .take(chunk as u64)
        .read_to_end(buf)
        .map_err(PftraceError::Read)?;
    Ok(buf.len() - before < chunk)
}

/// Where the last whole top-level field of `buf` ends: a field cut by
/// the chunk's end is left for the next chunk, unless the input ends
/// there (`eof`), when the walk reports it; so does any other fault.
fn whole_fields(buf: &[u8], eof: bool) -> usize {
    if eof {
        return buf.len();
    }
    for f in Fields::new(buf) {
        match f {
            Ok(_) => {}
            Err(WireError::Truncated(at)) => return at,
            Err(WireError::Malformed(..)) => break,
        }
    }
    buf.len()
}

/// Decodes the whole fields of one chunk, whose first byte is byte `base`
/// of the input.
fn decode_chunk(decoder: &mut Decoder, bytes: &[u8], base: usize) -> Result<(), PftraceError> {
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
                        batch.push((packet, base + start));
                    }
                    (1, _) => {
                        let what = "Trace.packet is not length-delimited".to_string();
                        let e = PftraceError::Malformed {
                            offset: base + f.offset,
                            what,
                        };
                        return (batch, Some(e));
                    }
                    _ => {}
                },
                Err(e) => return (batch, Some(PftraceError::from_wire(e, base))),
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
            || decoder.apply(std::mem::take(&mut parsed)),
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
    match stop {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Packets parsed on one core, with their offsets and their events' lists.
struct ParsedRun<'a> {
    packets: Vec<(Result<Packet<'a>, PftraceError>, usize)>,
    lists: Lists<'a>,
}

/// Parses a batch of packets (bytes, offset) on every core, [`RUN`] at a
/// time: each read in place when it can be, else decoded whole.
fn parse_batch<'a>(batch: &[(&'a [u8], usize)]) -> Vec<ParsedRun<'a>> {
    use rayon::prelude::*;
    batch
        .par_chunks(RUN)
        .map(|run| {
            let mut lists = Lists::default();
            let packets = run
                .iter()
                .map(|&(packet, offset)| {
                    let p = match view::packet(packet, &mut lists) {
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
                .collect();
            ParsedRun { packets, lists }
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
    categories: IidTable,
    names: IidTable,
    annotation_names: IidTable,
    annotation_strings: IidTable,
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

/// One interning table of a sequence: iid -> text. Writers number their
/// entries 1, 2, 3 …, so small ids are looked up by index; the index grows
/// only with the entries (twice their number), so that a hostile id costs
/// no memory, and other ids are hashed.
#[derive(Debug, Default)]
struct IidTable {
    /// The text of each small id; [`NO_TEXT`] where none.
    by_index: Vec<TextId>,
    hashed: HashMap<u64, TextId>,
    entries: usize,
}

/// An index of [`IidTable::by_index`] with no entry.
const NO_TEXT: TextId = TextId::MAX;

impl IidTable {
    fn insert(&mut self, iid: u64, text: TextId) {
        self.entries += 1;
        let room = 2 * self.entries as u64 + 64;
        match usize::try_from(iid) {
            Ok(i) if iid < room && text != NO_TEXT => {
                if i >= self.by_index.len() {
                    self.by_index.resize(i + 1, NO_TEXT);
                }
                // Lookups try the index first: a later definition of an id
                // hashed before (when the index was shorter) wins, as it should.
                self.by_index[i] = text;
            }
            _ => {
                self.hashed.insert(iid, text);
            }
        }
    }

    fn get(&self, iid: u64) -> Option<TextId> {
        match usize::try_from(iid).ok().and_then(|i| self.by_index.get(i)) {
            Some(&t) if t != NO_TEXT => Some(t),
            _ => self.hashed.get(&iid).copied(),
        }
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
    /// Applies parsed packets in file order.
    fn apply(&mut self, parsed: Vec<ParsedRun>) -> Result<(), PftraceError> {
        for run in parsed {
            for (packet, offset) in run.packets {
                match packet? {
                    Packet::View(v) => self.packet(&v, &run.lists, None, offset)?,
                    Packet::Full(p) => {
                        let mut lists = Lists::default();
                        let v = PacketView::of(&p, &mut lists);
                        self.packet(&v, &lists, Some(&p), offset)?
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies one packet: its fields (its event's lists in `lists`), and
    /// `full`'s nested messages other than the event (None when the packet
    /// has none).
    fn packet(
        &mut self,
        packet: &PacketView,
        lists: &Lists,
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
                        let bytes = name.unwrap_or_default();
                        // Checked first: the lossy reading scans slower.
                        let text = match std::str::from_utf8(bytes) {
                            Ok(text) => data.intern(text),
                            Err(_) => data.intern(&String::from_utf8_lossy(bytes)),
                        };
                        table.insert(iid, text);
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
                    lists,
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
    table: &IidTable,
    name: &'static str,
    iid: u64,
    offset: usize,
) -> Result<TextId, PftraceError> {
    table.get(iid).ok_or(PftraceError::UnknownIid {
        offset,
        table: name,
        iid,
    })
}

/// What turning one event into a slice reads and adds to.
struct SliceCx<'a> {
    seq: &'a Sequence,
    lists: &'a Lists<'a>,
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
        let cat = match (
            self.lists.category_iids(event),
            self.lists.categories(event),
        ) {
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
        for a in self.lists.annotations(event) {
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
pub fn decode_trace<R: Read + Send>(
    reader: R,
    packing: super::Packing,
) -> Result<crate::trace::Trace, crate::error::LoadError> {
    use crate::error::LoadError;
    let start = std::time::Instant::now();
    let (data, placed, decoded, input_bytes) = decode_placed(reader).map_err(|e| match e {
        PftraceError::Read(e) => LoadError::read(packing, e),
        e => LoadError::Syntax(e.to_string()),
    })?;
    let data = events_of(data, placed);
    crate::timings::stage("reading and decoding the Perfetto protobuf", start);
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
