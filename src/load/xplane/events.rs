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

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost::{DecodeError, Message};
use rustc_hash::FxHashMap;

use super::derived::{self, DERIVED_LINES, Symbols};
use super::proto::{RawLine, RawPlane, RawSpace, XEvent, XEventMetadata};
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

/// One row (thread, stream, derived row) of a process.
#[derive(Debug, Default)]
pub struct Row<'a> {
    /// Row name.
    pub name: String,
    /// Events, in the trace viewer's order.
    pub events: Vec<Synth<'a>>,
}

/// The event list, by row, and the names of its processes and rows.
#[derive(Debug, Default)]
pub struct Synthesis<'a> {
    /// The rows by (pid, tid): in key order, their events make the list.
    pub rows: BTreeMap<(u32, u32), Row<'a>>,
    /// (pid, plane name) of every plane shown.
    pub processes: Vec<(u32, &'a str)>,
    /// Number of GPU planes shown (those with lines; a profile may list
    /// idle GPUs as planes without lines, which xprof does not show).
    pub gpu_planes: usize,
    /// What could not be reproduced.
    pub warnings: Vec<String>,
}

#[derive(Default)]
struct Skipped {
    counters: usize,
    async_events: usize,
}

/// Builds the event list of `space`; `modules` are its HLO modules (for
/// the `Framework Ops` and `Source code` rows). An error when a line or an
/// event does not decode.
pub fn synthesize<'a>(
    space: &'a RawSpace,
    modules: &[HloModule],
) -> Result<Synthesis<'a>, DecodeError> {
    let symbols = symbols(modules);
    let mut out = Synthesis::default();
    let mut skipped = Skipped::default();
    let mut emit = |plane: &'a RawPlane, pid: u32, gpu: bool, out: &mut Synthesis<'a>| {
        let Some(counts) = emit_plane(plane, pid, out, &mut skipped)? else {
            return Ok::<(), DecodeError>(());
        };
        if gpu {
            out.gpu_planes += 1;
            emit_derived(plane, pid, &counts, &symbols, out)?;
        }
        Ok(())
    };
    if let Some(host) = space.planes.iter().find(|p| p.name == HOST_PLANE) {
        emit(host, HOST_PID, false, &mut out)?;
    }
    let gpus = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX));
    for plane in gpus {
        emit(plane, 1u32.wrapping_add(plane.id as u32), true, &mut out)?;
    }
    let customs = space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(CUSTOM_PLANE_PREFIX));
    for plane in customs {
        let pid = FIRST_CUSTOM_PID.wrapping_add(plane.id as u32);
        emit(plane, pid, false, &mut out)?;
    }
    out.warnings.extend(skipped.warnings(may_group(space)));
    // The viewer's order: by process, row (the map's order), start, the
    // longer event first; the sort is stable, so ties keep the order of
    // the file (and a row's events usually come sorted).
    for row in out.rows.values_mut() {
        row.events
            .sort_by(|a, b| a.ts_ps.cmp(&b.ts_ps).then(b.dur_ps.cmp(&a.dur_ps)));
    }
    Ok(out)
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
fn display_name(line: &RawLine) -> &str {
    if line.display_name.is_empty() {
        &line.name
    } else {
        &line.display_name
    }
}

/// Start of an event in picoseconds, as xprof computes it.
pub fn start_ps(line: &RawLine, e: &XEvent) -> u64 {
    line.timestamp_ns
        .wrapping_mul(1000)
        .wrapping_add(e.offset_ps()) as u64
}

/// The events of one plane's own lines (and their threadpool regions).
/// Returns the (id, event count) of every line, or None when the plane has
/// no lines (xprof does not show it).
fn emit_plane<'a>(
    plane: &'a RawPlane,
    pid: u32,
    out: &mut Synthesis<'a>,
    skipped: &mut Skipped,
) -> Result<Option<Vec<(i64, usize)>>, DecodeError> {
    if plane.lines.is_empty() {
        return Ok(None);
    }
    out.processes.push((pid, plane.name.as_str()));
    let stats = PlaneStats::new(&plane.stat_metadata);
    let metas = EventMetas::new(plane);
    let markers = region_markers(plane);
    let mut counts = Vec::with_capacity(plane.lines.len());
    // One event buffer, reused: decoding merges into it.
    let mut e = XEvent::default();
    for raw in &plane.lines {
        let line = RawLine::decode(raw.clone())?;
        counts.push((line.id, line.events.len()));
        if display_name(&line) == "Async XLA Ops" || line.events.is_empty() {
            continue;
        }
        if line.name == "_counters_" {
            skipped.counters += line.events.len();
            continue;
        }
        let id = if line.display_id != 0 {
            line.display_id
        } else {
            line.id
        };
        // xprof names a row after the last of its lines.
        let row = out.rows.entry((pid, id as u32)).or_default();
        row.name = display_name(&line).to_string();
        let mut region = Regions::new(markers);
        for raw_event in &line.events {
            e.clear();
            e.merge(raw_event.clone())?;
            region.see(&line, &e, &stats);
            let cx = Context {
                metas: &metas,
                stats: &stats,
                line: &line,
            };
            if let Some(s) = event(cx, &mut e, skipped) {
                row.events.push(s);
            }
        }
        for (begin, end) in region.spans {
            row.events.push(Synth {
                name: Cow::Borrowed(REGION),
                ts_ps: begin,
                dur_ps: end.wrapping_sub(begin),
                correlation: None,
                xla: None,
            });
        }
    }
    Ok(Some(counts))
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
    line: &'c RawLine,
}

/// One event of a line, None when xprof does not show it. The event's
/// strings are moved out.
fn event<'a>(cx: Context<'_, 'a>, e: &mut XEvent, skipped: &mut Skipped) -> Option<Synth<'a>> {
    let stats = cx.stats;
    let meta = match cx.metas.by_id.get(&e.metadata_id) {
        Some(&(_, true)) => return None,
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
    let ts_ps = start_ps(cx.line, e);
    let dur_ps = e.duration_ps as u64;
    for s in &mut e.stats {
        args.apply(stats.kind(s.metadata_id), stats.value_owned(s.value.take()));
    }
    if args.flow && args.is_async {
        skipped.async_events += 1;
        return None;
    }
    let has_xla = args.xla != EventXla::default();
    Some(Synth {
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
    fn see(&mut self, line: &RawLine, e: &XEvent, stats: &PlaneStats<'_>) {
        let Some((start, stop)) = self.markers else {
            return;
        };
        if e.metadata_id == start {
            let consumer = StatKind::ConsumerId;
            if e.stats
                .iter()
                .any(|s| stats.kind(s.metadata_id) == consumer)
            {
                self.begin = start_ps(line, e);
            }
        } else if e.metadata_id == stop && self.begin != 0 {
            self.spans.push((self.begin, start_ps(line, e)));
        }
    }
}

/// The derived rows of a GPU plane; `counts` are the (id, event count) of
/// its lines.
fn emit_derived<'a>(
    plane: &'a RawPlane,
    pid: u32,
    counts: &[(i64, usize)],
    symbols: &Symbols<'_>,
    out: &mut Synthesis<'a>,
) -> Result<(), DecodeError> {
    let stats = PlaneStats::new(&plane.stat_metadata);
    for (row, events) in derived::derive(plane, counts, &stats, symbols)? {
        let (tid, name) = DERIVED_LINES[row];
        let row = out.rows.entry((pid, tid)).or_default();
        row.name = name.to_string();
        row.events.extend(events.into_iter().map(|e| Synth {
            name: Cow::Owned(e.name),
            ts_ps: e.begin_ps,
            dur_ps: e.dur_ps,
            correlation: None,
            xla: None,
        }));
    }
    Ok(())
}
