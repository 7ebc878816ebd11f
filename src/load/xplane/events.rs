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
//! A profile whose events already carry step groups (`group_id`) gets
//! neither the regions nor the derived rows, as in xprof.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::derived::{self, DERIVED_LINES, Symbols};
use super::proto::{XEvent, XLine, XPlane, XSpace};
use super::stats::{PlaneStats, StatKind};
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

/// The XLA statistics of one event, borrowed from the profile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventXla<'a> {
    /// `hlo_module`.
    pub hlo_module: Option<&'a str>,
    /// `hlo_op`.
    pub hlo_op: Option<&'a str>,
    /// `program_id`.
    pub program_id: Option<i64>,
    /// `name` (framework op path).
    pub framework_op: Option<&'a str>,
    /// `kernel_details`.
    pub kernel_details: Option<&'a str>,
}

/// One event of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Synth<'a> {
    /// Process (device).
    pub pid: u32,
    /// Row.
    pub tid: u32,
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

/// The event list and the names of its processes and rows.
#[derive(Debug, Default)]
pub struct Synthesis<'a> {
    /// Events, in the trace viewer's order.
    pub events: Vec<Synth<'a>>,
    /// (pid, plane name) of every plane shown.
    pub processes: Vec<(u32, &'a str)>,
    /// Row names by (pid, tid).
    pub threads: BTreeMap<(u32, u32), &'a str>,
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
/// the `Framework Ops` and `Source code` rows).
pub fn synthesize<'a>(space: &'a XSpace, modules: &[HloModule]) -> Synthesis<'a> {
    let grouped = space
        .planes
        .iter()
        .any(|p| p.stat_metadata.values().any(|m| m.name == "group_id"));
    let symbols = symbols(modules);
    let mut out = Synthesis::default();
    let mut skipped = Skipped::default();
    let mut emit = |plane: &'a XPlane, pid: u32, gpu: bool, out: &mut Synthesis<'a>| {
        let shown = emit_plane(plane, pid, !grouped, out, &mut skipped);
        if gpu && shown {
            out.gpu_planes += 1;
            if !grouped {
                emit_derived(plane, pid, &symbols, out);
            }
        }
    };
    if let Some(host) = space.planes.iter().find(|p| p.name == HOST_PLANE) {
        emit(host, HOST_PID, false, &mut out);
    }
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(GPU_PLANE_PREFIX))
    {
        emit(plane, 1u32.wrapping_add(plane.id as u32), true, &mut out);
    }
    for plane in space
        .planes
        .iter()
        .filter(|p| p.name.starts_with(CUSTOM_PLANE_PREFIX))
    {
        emit(
            plane,
            FIRST_CUSTOM_PID.wrapping_add(plane.id as u32),
            false,
            &mut out,
        );
    }
    if skipped.counters > 0 {
        out.warnings.push(format!(
            "{} counter event(s) (rows \"_counters_\") were left out; \
             the UIDs of the events after them differ from the reference's",
            skipped.counters
        ));
    }
    if skipped.async_events > 0 {
        out.warnings.push(format!(
            "{} asynchronous flow event(s) were left out; \
             the UIDs of the events after them differ from the reference's",
            skipped.async_events
        ));
    }
    if grouped {
        out.warnings.push(
            "the profile's events carry step groups (group_id): \
             no derived rows (XLA Ops, XLA Modules, …) were added, as in xprof"
                .into(),
        );
    }
    // The viewer's order: by process, row, start, the longer event first;
    // the sort is stable, so ties keep the order of the file.
    out.events.sort_by(|a, b| {
        (a.pid, a.tid, a.ts_ps)
            .cmp(&(b.pid, b.tid, b.ts_ps))
            .then(b.dur_ps.cmp(&a.dur_ps))
    });
    out
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
fn display_name(line: &XLine) -> &str {
    if line.display_name.is_empty() {
        &line.name
    } else {
        &line.display_name
    }
}

/// Start of an event in picoseconds, as xprof computes it.
fn start_ps(line: &XLine, e: &XEvent) -> u64 {
    line.timestamp_ns
        .wrapping_mul(1000)
        .wrapping_add(e.offset_ps()) as u64
}

/// The events of one plane's own lines (and their threadpool regions);
/// false when the plane has no lines (xprof does not show it).
fn emit_plane<'a>(
    plane: &'a XPlane,
    pid: u32,
    regions: bool,
    out: &mut Synthesis<'a>,
    skipped: &mut Skipped,
) -> bool {
    if plane.lines.is_empty() {
        return false;
    }
    out.processes.push((pid, plane.name.as_str()));
    let stats = PlaneStats::new(plane);
    let markers = if regions { region_markers(plane) } else { None };
    for line in &plane.lines {
        if display_name(line) == "Async XLA Ops" {
            continue;
        }
        let spans = markers.map_or_else(Vec::new, |m| region_spans(line, &stats, m));
        if line.events.is_empty() && spans.is_empty() {
            continue;
        }
        if line.name == "_counters_" {
            skipped.counters += line.events.len();
            continue;
        }
        let tid = (if line.display_id != 0 {
            line.display_id
        } else {
            line.id
        }) as u32;
        out.threads.insert((pid, tid), display_name(line));
        for e in &line.events {
            if let Some(s) = event(plane, &stats, line, e, pid, tid, skipped) {
                out.events.push(s);
            }
        }
        for (begin, end) in spans {
            out.events.push(Synth {
                pid,
                tid,
                name: Cow::Borrowed(REGION),
                ts_ps: begin,
                dur_ps: end.wrapping_sub(begin),
                correlation: None,
                xla: None,
            });
        }
    }
    true
}

/// One event of a line, None when xprof does not show it.
fn event<'a>(
    plane: &'a XPlane,
    stats: &PlaneStats<'a>,
    line: &XLine,
    e: &'a XEvent,
    pid: u32,
    tid: u32,
    skipped: &mut Skipped,
) -> Option<Synth<'a>> {
    let meta = plane.event_metadata.get(&e.metadata_id);
    let meta_name = meta.map_or("", |m| m.name.as_str());
    if INTERNAL_EVENTS.contains(&meta_name) {
        return None;
    }
    let mut name = match meta {
        Some(m) if !m.display_name.is_empty() => m.display_name.as_str(),
        _ => meta_name,
    };
    let mut correlation = None;
    let mut xla = EventXla::default();
    let (mut flow, mut is_async) = (false, false);
    // Metadata stats first, then the event's own (which win).
    let all = meta
        .map_or(&[][..], |m| m.stats.as_slice())
        .iter()
        .chain(&e.stats);
    for s in all {
        let int = PlaneStats::is_int(s);
        let text = || Some(stats.str_or_ref(s)).filter(|_| !int);
        match stats.kind(s.metadata_id) {
            StatKind::CorrelationId if int => correlation = Some(stats.int_or_uint(s) as i64),
            StatKind::ProgramId if int => xla.program_id = Some(stats.int_or_uint(s) as i64),
            StatKind::HloModule => xla.hlo_module = text().or(xla.hlo_module),
            StatKind::HloOp => xla.hlo_op = text().or(xla.hlo_op),
            StatKind::Name => xla.framework_op = text().or(xla.framework_op),
            StatKind::KernelDetails => xla.kernel_details = text().or(xla.kernel_details),
            StatKind::StepName => {
                if let Some(t) = text().filter(|t| !t.is_empty()) {
                    name = t;
                }
            }
            StatKind::Flow if int => flow = true,
            StatKind::IsAsync if int => is_async = true,
            _ => {}
        }
    }
    if flow && is_async {
        skipped.async_events += 1;
        return None;
    }
    let has_xla = xla != EventXla::default();
    Some(Synth {
        pid,
        tid,
        name: Cow::Borrowed(name),
        ts_ps: start_ps(line, e),
        dur_ps: e.duration_ps as u64,
        correlation,
        xla: has_xla.then(|| Box::new(xla)),
    })
}

/// The metadata ids of the threadpool region markers, when the plane has
/// both.
fn region_markers(plane: &XPlane) -> Option<(i64, i64)> {
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
fn region_spans(
    line: &XLine,
    stats: &PlaneStats<'_>,
    (start, stop): (i64, i64),
) -> Vec<(u64, u64)> {
    let mut spans = Vec::new();
    let mut begin: u64 = 0;
    for e in &line.events {
        if e.metadata_id == start {
            let has_consumer = e
                .stats
                .iter()
                .any(|s| stats.kind(s.metadata_id) == StatKind::ConsumerId);
            if has_consumer {
                begin = start_ps(line, e);
            }
        } else if e.metadata_id == stop && begin != 0 {
            spans.push((begin, start_ps(line, e)));
        }
    }
    spans
}

/// The derived rows of a GPU plane.
fn emit_derived<'a>(plane: &'a XPlane, pid: u32, symbols: &Symbols<'_>, out: &mut Synthesis<'a>) {
    let stats = PlaneStats::new(plane);
    for (row, events) in derived::derive(plane, &stats, symbols) {
        let (tid, name) = DERIVED_LINES[row];
        out.threads.insert((pid, tid), name);
        out.events.extend(events.into_iter().map(|e| Synth {
            pid,
            tid,
            name: Cow::Owned(e.name),
            ts_ps: e.begin_ps,
            dur_ps: e.dur_ps,
            correlation: None,
            xla: None,
        }));
    }
}
