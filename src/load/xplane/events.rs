//! XPlane -> the trace-event list xprof's trace viewer emits (xprof
//! 2.20.1, `trace_viewer@`), so that an event's index in the list is the
//! UID the reference gives it.
//!
//! What xprof does, and so what this module does: the `/host:CPU` plane
//! becomes pid 701, each `/device:GPU:<n>` plane pid `1 + plane id`, each
//! `/device:CUSTOM:` plane pid `501 + plane id`; a line's row (tid) is its
//! display id (else its id) cut to 32 bits; memory (de)allocation and
//! tf.data producer/consumer events are dropped; each threadpool
//! `StartRegion` … `StopRegion` pair adds a `ThreadpoolListener::Region`
//! event; each GPU gets the derived rows of [`super::derived`]; and the
//! events are ordered by (pid, tid, start) with the longer event first.
//! Grouping events into steps, which xprof does for profiles with step
//! markers or `group_id` stats (adding a `Steps` row and keeping derived
//! events of different steps apart), is not reproduced: a warning says so.
//!
//! The list is not built whole: [`plan`] reads the planes' metadata and
//! the lines' headers (cutting each line into pieces of encoded events)
//! and works out the derived rows; [`Plan::produce`] then decodes the rows
//! in order, piece by piece on every core, and hands each piece on. A row
//! of one line whose events the file holds in the viewer's order already
//! (checked first, without decoding their stats) goes out as decoded; any
//! other row is gathered and sorted first.

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost::{DecodeError, Message};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::derived::{self, DERIVED_LINES, DerivedEvent, Symbols};
use super::proto::{
    EventKey, LineHead, LineScan, RawPlane, RawSpace, XEvent, XEventMetadata, line_events,
    scan_line,
};
use super::stats::{PlaneStats, StatKind, Value};
use crate::trace::xla::HloModule;

/// Plane name prefix of the GPUs.
pub const GPU_PLANE_PREFIX: &str = "/device:GPU:";
/// Name of the host threads plane.
pub const HOST_PLANE: &str = "/host:CPU";
const CUSTOM_PLANE_PREFIX: &str = "/device:CUSTOM:";
/// pid of the host threads (xprof's pseudo device id).
pub const HOST_PID: u32 = 701;
const FIRST_CUSTOM_PID: u32 = 501;

const START_REGION: &str = "ThreadpoolListener::StartRegion";
const STOP_REGION: &str = "ThreadpoolListener::StopRegion";
const REGION: &str = "ThreadpoolListener::Region";

/// Events xprof treats as internal and never shows.
const INTERNAL_EVENTS: [&str; 13] = [
    "MemoryAllocation",
    "MemoryDeallocation",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
];

/// The XLA statistics of one event (borrowed from the plane's metadata
/// where they are references to it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventXla<'a> {
    /// `hlo_module`.
    pub hlo_module: Option<Cow<'a, str>>,
    /// `hlo_op`.
    pub hlo_op: Option<Cow<'a, str>>,
    /// `program_id`.
    pub program_id: Option<i64>,
    /// `name` (framework op path).
    pub framework_op: Option<Cow<'a, str>>,
    /// `kernel_details`.
    pub kernel_details: Option<Cow<'a, str>>,
}

/// One event of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Synth<'a> {
    /// Name as shown.
    pub name: Cow<'a, str>,
    /// Start, picoseconds.
    pub ts_ps: u64,
    /// Duration, picoseconds.
    pub dur_ps: u64,
    /// `correlation_id`.
    pub correlation: Option<i64>,
    /// XLA statistics, when the event has any.
    pub xla: Option<Box<EventXla<'a>>>,
}

/// Events decoded together and handed on as one piece. A piece's vector
/// (512 KiB) stays under the 1 MiB from which the binary's allocator maps
/// a block of its own (`large_alloc`): pieces of 16,384 events were each a
/// fresh mapping, whose pages faulted in again for every piece and whose
/// release stopped the other core to flush its TLB.
const PIECE_EVENTS: usize = 8_192;
const _: () = assert!(PIECE_EVENTS * std::mem::size_of::<Synth<'_>>() < 1 << 20);

/// Pieces of a line decoded at once (on every core) before they are
/// handed on: a window.
pub const PIECES_AT_ONCE: usize = 8;

/// What makes the event list, found from the planes' metadata and their
/// lines' headers; the events themselves are decoded row by row, in
/// pieces ([`Plan::produce`]), so that the list is never held whole.
pub struct Plan<'a> {
    /// The rows by (pid, tid): in key order, their events make the list.
    pub rows: BTreeMap<(u32, u32), RowPlan<'a>>,
    /// (pid, plane name) of every plane shown.
    pub processes: Vec<(u32, &'a str)>,
    /// Number of GPU planes shown (those with lines; a profile may list
    /// idle GPUs as planes without lines, which xprof does not show).
    pub gpu_planes: usize,
    /// How the events of each plane shown are read.
    readers: Vec<PlaneReader<'a>>,
    /// Counter events left out.
    counters: usize,
    /// Whether xprof may group the events into steps.
    steps: bool,
    /// Whether the lines' pages go back to the system as decoded.
    release: bool,
}

/// One row (thread, stream, derived row) of a process: its name and
/// where its events come from.
#[derive(Default)]
pub struct RowPlan<'a> {
    /// Row name.
    pub name: String,
    /// The sources of its events, in the order xprof appends them.
    parts: Vec<Part<'a>>,
}

/// A source of a row's events.
enum Part<'a> {
    /// An encoded line of the plane read by `readers[reader]`, cut into
    /// pieces ([`scan_line`]).
    Line {
        reader: usize,
        timestamp_ns: i64,
        pieces: Vec<&'a [u8]>,
    },
    /// Events of a derived row.
    Derived(Vec<DerivedEvent>),
}

/// How the events of one plane are read.
struct PlaneReader<'a> {
    stats: PlaneStats<'a>,
    metas: EventMetas<'a>,
    markers: Option<(i64, i64)>,
}

impl<'a> PlaneReader<'a> {
    fn new(plane: &'a RawPlane) -> Self {
        PlaneReader {
            stats: PlaneStats::new(&plane.stat_metadata),
            metas: EventMetas::new(plane),
            markers: region_markers(plane),
        }
    }
}

/// Plans the event list of `space`; `modules` are its HLO modules (for
/// the derived `Framework Ops` and `Source code` rows, which are built
/// here). An error when a line's header does not decode.
pub fn plan<'a>(space: &'a RawSpace, modules: &[HloModule]) -> Result<Plan<'a>, DecodeError> {
    let symbols = symbols(modules);
    let mut out = Plan {
        rows: BTreeMap::new(),
        processes: Vec::new(),
        gpu_planes: 0,
        readers: Vec::new(),
        counters: 0,
        steps: may_group(space),
        release: false,
    };
    let host = space.planes.iter().find(|p| p.name == HOST_PLANE);
    let gpus: Vec<&RawPlane> = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX))
        .collect();
    // The host's lines are scanned while each GPU's derived rows decode
    // its busiest line whole: on every core, the host's longest line (a
    // Python thread's) beside the GPUs' work rather than before it.
    let (host_lines, scanned) = rayon::join(
        || host.map(scan_lines).transpose(),
        || {
            gpus.par_iter()
                .map(|plane| {
                    let lines = scan_lines(plane)?;
                    let derived = derive_rows(plane, &lines, &symbols)?;
                    Ok::<_, DecodeError>((lines, derived))
                })
                .collect::<Vec<_>>()
        },
    );
    if let (Some(host), Some(lines)) = (host, host_lines?) {
        out.plan_plane(host, HOST_PID, lines, None)?;
    }
    for (plane, scanned) in gpus.into_iter().zip(scanned) {
        let (lines, derived) = scanned?;
        let pid = 1u32.wrapping_add(plane.id as u32);
        out.plan_plane(plane, pid, lines, Some(derived))?;
    }
    let customs = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(CUSTOM_PLANE_PREFIX));
    for plane in customs {
        let pid = FIRST_CUSTOM_PID.wrapping_add(plane.id as u32);
        out.plan_plane(plane, pid, scan_lines(plane)?, None)?;
    }
    Ok(out)
}

impl<'a> Plan<'a> {
    /// Adds the rows of one plane shown as process `pid`, whose `lines`
    /// are scanned ([`scan_lines`]); a GPU plane comes with its derived
    /// rows ([`derive_rows`]).
    fn plan_plane(
        &mut self,
        plane: &'a RawPlane,
        pid: u32,
        lines: Vec<LineScan<'a>>,
        derived: Option<DerivedRows>,
    ) -> Result<(), DecodeError> {
        if plane.lines.is_empty() {
            return Ok(());
        }
        self.processes.push((pid, plane.name.as_str()));
        let reader = self.readers.len();
        self.readers.push(PlaneReader::new(plane));
        for LineScan {
            head,
            events,
            pieces,
        } in lines
        {
            if display_name(&head) == "Async XLA Ops" || events == 0 {
                continue;
            }
            if head.name == "_counters_" {
                self.counters += events;
                continue;
            }
            let id = if head.display_id != 0 {
                head.display_id
            } else {
                head.id
            };
            // xprof names a row after the last of its lines.
            let row = self.rows.entry((pid, id as u32)).or_default();
            row.name = display_name(&head).to_string();
            row.parts.push(Part::Line {
                reader,
                timestamp_ns: head.timestamp_ns,
                pieces,
            });
        }
        if let Some(derived) = derived {
            self.gpu_planes += 1;
            for (row, events) in derived {
                let (tid, name) = DERIVED_LINES[row];
                let row = self.rows.entry((pid, tid)).or_default();
                row.name = name.to_string();
                row.parts.push(Part::Derived(events));
            }
        }
        Ok(())
    }

    /// The plan, giving the pages of each line back to the system once its
    /// events are decoded (`load::pages::release`): the profile's
    /// buffer then shrinks as the trace grows.
    ///
    /// # Safety
    ///
    /// The buffer of the planned space must be private anonymous memory of
    /// the caller's (the bytes read from the file), and its lines must not
    /// be read again once [`Plan::produce`] is called.
    #[allow(unsafe_code)]
    pub unsafe fn releasing_lines(mut self) -> Self {
        self.release = true;
        self
    }

    /// Decodes the rows in key order and hands their events to `sink` in
    /// pieces, in the viewer's order, with the row's (pid, tid); `sink`
    /// returns false to stop. Lines are decoded in pieces on every core.
    /// Returns the warnings about what could not be reproduced; an error
    /// when an event does not decode.
    pub fn produce(
        self,
        sink: &mut dyn FnMut((u32, u32), Vec<Synth<'a>>) -> bool,
    ) -> Result<Vec<String>, DecodeError> {
        let mut skipped = Skipped {
            counters: self.counters,
            async_events: 0,
        };
        let lines = Lines {
            readers: &self.readers,
            release: self.release,
        };
        for (key, row) in self.rows {
            if !lines.produce_row(row, &mut skipped, &mut |p| sink(key, p))? {
                break;
            }
        }
        Ok(skipped.warnings(self.steps))
    }
}

/// The derived rows of a GPU plane, by index in [`DERIVED_LINES`].
type DerivedRows = Vec<(usize, Vec<DerivedEvent>)>;

/// The headers of a plane's lines, each line cut into pieces of
/// [`PIECE_EVENTS`] events; the lines are walked on every core. An error
/// when a header does not decode (the first line's of several).
fn scan_lines(plane: &RawPlane) -> Result<Vec<LineScan<'_>>, DecodeError> {
    over_pieces(&plane.lines, |raw| scan_line(raw, PIECE_EVENTS))
}

/// The derived rows of a GPU plane whose `lines` are scanned (none when
/// it has no lines).
fn derive_rows(
    plane: &RawPlane,
    lines: &[LineScan<'_>],
    symbols: &Symbols<'_>,
) -> Result<DerivedRows, DecodeError> {
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    derived::derive(
        plane,
        lines,
        &PlaneStats::new(&plane.stat_metadata),
        symbols,
    )
}

/// How the planned lines are read, and whether their pages are given
/// back once decoded.
struct Lines<'p, 'a> {
    readers: &'p [PlaneReader<'a>],
    release: bool,
}

impl<'a> Lines<'_, 'a> {
    /// Gives the pages of decoded pieces back when the plan says so.
    fn done_with(&self, pieces: &[&[u8]]) {
        if self.release {
            for piece in pieces {
                #[allow(unsafe_code)]
                // SAFETY: `releasing_lines`' contract: the buffer is the
                // caller's anonymous memory, and a piece is read no more
                // once decoded (each line belongs to one row).
                unsafe {
                    crate::load::pages::release(piece);
                }
            }
        }
    }

    /// The events of one row, in the viewer's order: by start, the longer
    /// event first, ties in the order xprof appends them (a stable sort). A
    /// row of one line whose events come in that order already (the usual
    /// case) is handed on piece by piece as decoded; any other is gathered
    /// and sorted first.
    fn produce_row(
        &self,
        row: RowPlan<'a>,
        skipped: &mut Skipped,
        sink: &mut dyn FnMut(Vec<Synth<'a>>) -> bool,
    ) -> Result<bool, DecodeError> {
        let readers = self.readers;
        if let [
            Part::Line {
                reader,
                timestamp_ns,
                ref pieces,
            },
        ] = row.parts[..]
        {
            let r = &readers[reader];
            if in_order(r, timestamp_ns, pieces)? {
                for window in pieces.chunks(PIECES_AT_ONCE) {
                    let decoded = decode_pieces(r, timestamp_ns, window)?;
                    self.done_with(window);
                    for piece in decoded {
                        skipped.async_events += piece.1;
                        if !sink(piece.0) {
                            return Ok(false);
                        }
                    }
                }
                return Ok(true);
            }
        }
        let mut events = Vec::new();
        for part in row.parts {
            match part {
                Part::Line {
                    reader,
                    timestamp_ns,
                    pieces,
                } => {
                    let r = &readers[reader];
                    for (piece, async_events) in decode_pieces(r, timestamp_ns, &pieces)? {
                        skipped.async_events += async_events;
                        events.extend(piece);
                    }
                    let regions = regions(r, timestamp_ns, &pieces)?;
                    self.done_with(&pieces);
                    for (begin, end) in regions {
                        events.push(Synth {
                            name: Cow::Borrowed(REGION),
                            ts_ps: begin,
                            dur_ps: end.wrapping_sub(begin),
                            correlation: None,
                            xla: None,
                        });
                    }
                }
                Part::Derived(derived) => events.extend(derived.into_iter().map(|e| Synth {
                    name: Cow::Owned(e.name),
                    ts_ps: e.begin_ps,
                    dur_ps: e.dur_ps,
                    correlation: None,
                    xla: None,
                })),
            }
        }
        events.sort_by(|a, b| a.ts_ps.cmp(&b.ts_ps).then(b.dur_ps.cmp(&a.dur_ps)));
        Ok(events.is_empty() || sink(events))
    }
}

/// The place of an event in the viewer's order: start, then the longer
/// event first.
fn order_key(start_ps: u64, dur_ps: u64) -> (u64, std::cmp::Reverse<u64>) {
    (start_ps, std::cmp::Reverse(dur_ps))
}

/// True when the events of a line's pieces come in the viewer's order and
/// none can close a threadpool region (which would add an event out of
/// it): then its events can be handed on as decoded. Read on every core,
/// without the events' stats.
fn in_order(r: &PlaneReader<'_>, timestamp_ns: i64, pieces: &[&[u8]]) -> Result<bool, DecodeError> {
    let stop = r.markers.map(|(_, stop)| stop);
    // Per piece: in order within, and its first and last keys.
    let each = |piece: &&[u8]| {
        let mut key = EventKey::default();
        let mut first = None;
        let mut last = None;
        for e in line_events(piece) {
            key.clear();
            key.merge(e?)?;
            if Some(key.metadata_id) == stop {
                return Ok(None);
            }
            let k = order_key(
                start_ps(timestamp_ns, key.offset_ps()),
                key.duration_ps as u64,
            );
            if last.is_some_and(|l| k < l) {
                return Ok(None);
            }
            first.get_or_insert(k);
            last = Some(k);
        }
        Ok::<_, DecodeError>(first.zip(last))
    };
    let spans = over_pieces(pieces, each)?;
    let mut last = None;
    for span in spans {
        let Some((first, end)) = span else {
            return Ok(false);
        };
        if last.is_some_and(|l| first < l) {
            return Ok(false);
        }
        last = Some(end);
    }
    Ok(true)
}

/// The events xprof shows of each piece (on every core), with the number
/// of asynchronous flow events left out of it.
fn decode_pieces<'a>(
    r: &PlaneReader<'a>,
    timestamp_ns: i64,
    pieces: &[&[u8]],
) -> Result<Vec<(Vec<Synth<'a>>, usize)>, DecodeError> {
    let each = |piece: &&[u8]| {
        let cx = Context {
            metas: &r.metas,
            stats: &r.stats,
            timestamp_ns,
        };
        // One event buffer, reused: decoding merges into it.
        let mut e = XEvent::default();
        let mut events = Vec::with_capacity(PIECE_EVENTS);
        let mut async_events = 0;
        for raw in line_events(piece) {
            e.clear();
            e.merge(raw?)?;
            match event(cx, &mut e) {
                Shown::Yes(s) => events.push(s),
                Shown::Async => async_events += 1,
                Shown::No => {}
            }
        }
        Ok::<_, DecodeError>((events, async_events))
    };
    over_pieces(pieces, each)
}

/// `each` of the pieces (or lines), in order: on every core when there
/// are several (a row of one piece, the usual small row, stays on this
/// thread). An error is the first piece's of those that fail, whichever
/// core met it first.
fn over_pieces<'p, P: Sync, T: Send>(
    pieces: &'p [P],
    each: impl Fn(&'p P) -> Result<T, DecodeError> + Sync + Send,
) -> Result<Vec<T>, DecodeError> {
    if pieces.len() > 1 {
        let all: Vec<_> = pieces.par_iter().map(each).collect();
        all.into_iter().collect()
    } else {
        pieces.iter().map(each).collect()
    }
}

/// The threadpool regions of a line's pieces ([`Regions`]): none unless
/// its plane has both markers.
fn regions(
    r: &PlaneReader<'_>,
    timestamp_ns: i64,
    pieces: &[&[u8]],
) -> Result<Vec<(u64, u64)>, DecodeError> {
    let mut regions = Regions::new(r.markers);
    if r.markers.is_some() {
        let mut e = XEvent::default();
        for raw in pieces.iter().flat_map(|p| line_events(p)) {
            e.clear();
            e.merge(raw?)?;
            regions.see(timestamp_ns, &e, &r.stats);
        }
    }
    Ok(regions.spans)
}

/// Events left out of the list, counted for a warning.
#[derive(Default)]
struct Skipped {
    counters: usize,
    async_events: usize,
}

impl Skipped {
    fn warnings(&self, steps: bool) -> Vec<String> {
        let mut out = Vec::new();
        if self.counters > 0 {
            out.push(format!(
                "{} counter event(s) (rows \"_counters_\") were left out; \
                 the UIDs of the events after them differ from the reference's",
                self.counters
            ));
        }
        if self.async_events > 0 {
            out.push(format!(
                "{} asynchronous flow event(s) were left out; \
                 the UIDs of the events after them differ from the reference's",
                self.async_events
            ));
        }
        if steps {
            out.push(
                "the profile marks steps (root events or step groups); xprof groups events by step, \
                 which this decoder does not: its derived rows (XLA Ops, …), and so the \
                 UIDs, may differ from the reference's"
                    .into(),
            );
        }
        out
    }
}

/// Events that make xprof group the events into steps (roots, or loops).
const STEP_MARKERS: [&str; 9] = [
    "TraceContext",
    "ProcessBatch",
    "OrbaxServing::ProcessBatch",
    "BatchingSessionRun",
    "WhileOp-EvalCond",
    "WhileOp-StartBody",
    "ForOp",
    "ParallelForOp",
    "ForeverOp",
];

/// True when xprof may group the events of `space` into steps (which
/// changes its derived rows): some stat is a root marker (`_r`) or a step
/// group (`group_id`), or some event a step marker. Decided from the
/// metadata, so it may say yes for markers no event uses.
fn may_group(space: &RawSpace) -> bool {
    space.planes.iter().any(|p| {
        p.stat_metadata
            .values()
            .any(|m| m.name == "_r" || m.name == "group_id")
            || p.event_metadata
                .values()
                .any(|m| STEP_MARKERS.contains(&m.name.as_str()))
    })
}

/// The instructions of every program by name (the first of a name wins).
fn symbols(modules: &[HloModule]) -> Symbols<'_> {
    let mut out: Symbols<'_> = Symbols::new();
    for m in modules {
        let by_name = out.entry(m.program_id).or_default();
        for c in &m.computations {
            for i in &c.instructions {
                by_name.entry(i.name.as_str()).or_insert(i);
            }
        }
    }
    out
}

/// A line's row name: its display name, else its name.
fn display_name(line: &LineHead) -> &str {
    if line.display_name.is_empty() {
        &line.name
    } else {
        &line.display_name
    }
}

/// Start of an event in picoseconds, as xprof computes it from its line's
/// base time and its offset.
pub fn start_ps(timestamp_ns: i64, offset_ps: i64) -> u64 {
    timestamp_ns.wrapping_mul(1000).wrapping_add(offset_ps) as u64
}

/// The event metadata of a plane by id, with whether xprof hides the
/// events.
struct EventMetas<'a> {
    by_id: FxHashMap<i64, (&'a XEventMetadata, bool)>,
}

impl<'a> EventMetas<'a> {
    fn new(plane: &'a RawPlane) -> Self {
        let by_id = plane
            .event_metadata
            .iter()
            .map(|(&id, m)| (id, (m, INTERNAL_EVENTS.contains(&m.name.as_str()))))
            .collect();
        EventMetas { by_id }
    }
}

/// What an event of a line is read with.
#[derive(Clone, Copy)]
struct Context<'c, 'a> {
    metas: &'c EventMetas<'a>,
    stats: &'c PlaneStats<'a>,
    timestamp_ns: i64,
}

/// Whether xprof shows an event.
enum Shown<'a> {
    /// Shown, as this event.
    Yes(Synth<'a>),
    /// Left out: an asynchronous flow event (counted for a warning).
    Async,
    /// Left out: an internal event.
    No,
}

/// One event of a line as xprof shows it, or why it does not. The
/// event's strings are moved out.
fn event<'a>(cx: Context<'_, 'a>, e: &mut XEvent) -> Shown<'a> {
    let stats = cx.stats;
    let meta = match cx.metas.by_id.get(&e.metadata_id) {
        Some(&(_, true)) => return Shown::No,
        Some(&(m, false)) => Some(m),
        None => None,
    };
    let meta_name = meta.map_or("", |m| m.name.as_str());
    let name = match meta {
        Some(m) if !m.display_name.is_empty() => m.display_name.as_str(),
        _ => meta_name,
    };
    let mut args = Args {
        name: Cow::Borrowed(name),
        ..Args::default()
    };
    // Metadata stats first, then the event's own (which win).
    for s in meta.map_or(&[][..], |m| m.stats.as_slice()) {
        args.apply(stats.kind(s.metadata_id), stats.value(s));
    }
    let ts_ps = start_ps(cx.timestamp_ns, e.offset_ps());
    let dur_ps = e.duration_ps as u64;
    for s in &mut e.stats {
        args.apply(stats.kind(s.metadata_id), stats.value_owned(s.value.take()));
    }
    if args.flow && args.is_async {
        return Shown::Async;
    }
    let has_xla = args.xla != EventXla::default();
    Shown::Yes(Synth {
        name: args.name,
        ts_ps,
        dur_ps,
        correlation: args.correlation,
        xla: has_xla.then(|| Box::new(args.xla)),
    })
}

/// What the stats of an event say.
#[derive(Default)]
struct Args<'a> {
    name: Cow<'a, str>,
    correlation: Option<i64>,
    xla: EventXla<'a>,
    flow: bool,
    is_async: bool,
}

impl<'a> Args<'a> {
    fn apply(&mut self, kind: StatKind, v: Value<'a>) {
        let x = &mut self.xla;
        match (kind, v) {
            (StatKind::CorrelationId, Value::Int(i)) => self.correlation = Some(i as i64),
            (StatKind::ProgramId, Value::Int(i)) => x.program_id = Some(i as i64),
            (StatKind::HloModule, Value::Text(t)) => x.hlo_module = Some(t),
            (StatKind::HloOp, Value::Text(t)) => x.hlo_op = Some(t),
            (StatKind::Name, Value::Text(t)) => x.framework_op = Some(t),
            (StatKind::KernelDetails, Value::Text(t)) => x.kernel_details = Some(t),
            // xprof renames an event after a non-empty `step_name`.
            (StatKind::StepName, Value::Text(t)) if !t.is_empty() => self.name = t,
            (StatKind::Flow, Value::Int(_)) => self.flow = true,
            (StatKind::IsAsync, Value::Int(_)) => self.is_async = true,
            _ => {}
        }
    }
}

/// The metadata ids of the threadpool region markers, when the plane has
/// both.
fn region_markers(plane: &RawPlane) -> Option<(i64, i64)> {
    let find = |name: &str| {
        plane
            .event_metadata
            .values()
            .find(|m| m.name == name)
            .map(|m| m.id)
    };
    Some((find(START_REGION)?, find(STOP_REGION)?))
}

/// xprof's threadpool regions of a line: from each `StartRegion` that has
/// a consumer id to the next `StopRegion` (a start is remembered until
/// the next one, so two stops after one start give two regions).
struct Regions {
    markers: Option<(i64, i64)>,
    begin: u64,
    spans: Vec<(u64, u64)>,
}

impl Regions {
    fn new(markers: Option<(i64, i64)>) -> Self {
        Regions {
            markers,
            begin: 0,
            spans: Vec::new(),
        }
    }

    /// The next event of the line, in file order.
    fn see(&mut self, timestamp_ns: i64, e: &XEvent, stats: &PlaneStats<'_>) {
        let Some((start, stop)) = self.markers else {
            return;
        };
        if e.metadata_id == start {
            let consumer = StatKind::ConsumerId;
            if e.stats
                .iter()
                .any(|s| stats.kind(s.metadata_id) == consumer)
            {
                self.begin = start_ps(timestamp_ns, e.offset_ps());
            }
        } else if e.metadata_id == stop && self.begin != 0 {
            self.spans
                .push((self.begin, start_ps(timestamp_ns, e.offset_ps())));
        }
    }
}
