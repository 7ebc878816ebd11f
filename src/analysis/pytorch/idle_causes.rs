//! Why the GPU waited for the host: each host-wait gap classified by what
//! the thread that launched the next GPU event was doing, read from the
//! host events of that thread only. A cause is named only when the trace
//! shows it; otherwise it is [`Cause::Unknown`].

use rustc_hash::FxHashMap;

use super::idle::{Category, Gap};
use crate::trace::{Cat, EventId, IdentId, Trace};

/// What kept the host from launching in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// The GPU ran dry while the host was in a synchronisation call
    /// (`cudaDeviceSynchronize`, `cudaStreamSynchronize`,
    /// `cudaEventSynchronize`, their HIP and driver forms).
    Sync,
    /// The host was in a blocking copy (`cudaMemcpy` and the other
    /// non-`Async` copies, or an async copy to or from pageable memory).
    BlockingCopy,
    /// The host was inside a launch call that ran long: one running when
    /// the GPU ran dry, or the next event's own launch taking half the gap
    /// or more (a blocking copy call doing so is a blocking copy).
    LongLaunch,
    /// The host was inside another runtime call (an allocation, a query).
    OtherRuntime,
    /// The host was busy in CPU ops: they cover half or more of the time
    /// from the GPU running dry to the launch.
    HostBusy,
    /// The trace does not tell.
    Unknown,
}

impl Cause {
    /// Every cause, in sheet order.
    pub const ALL: [Cause; 6] = [
        Cause::Sync,
        Cause::BlockingCopy,
        Cause::LongLaunch,
        Cause::OtherRuntime,
        Cause::HostBusy,
        Cause::Unknown,
    ];

    /// The cause's name in the sheets.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Sync => "sync",
            Cause::BlockingCopy => "blocking_copy",
            Cause::LongLaunch => "long_launch",
            Cause::OtherRuntime => "other_runtime_call",
            Cause::HostBusy => "host_busy",
            Cause::Unknown => "unknown",
        }
    }
}

/// A host-wait gap's cause and the host events that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitCause {
    /// The cause.
    pub cause: Cause,
    /// The runtime call that shows it (the sync, the copy, the launch).
    pub call: Option<EventId>,
    /// The innermost CPU op the host was in when the gap began.
    pub op: Option<EventId>,
    /// The innermost Python frame the host was in then (when the trace
    /// was loaded with its Python frames).
    pub frame: Option<EventId>,
}

/// An idle gap of one stream before a GPU event, with its cause when the
/// host was late (a host-wait gap): what the diagnosis reads of the idle
/// analysis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdleGap {
    /// The stream.
    pub stream: i64,
    /// Gap start, µs (trace time).
    pub start: f64,
    /// Gap end: the next GPU event's start, µs.
    pub end: f64,
    /// The GPU event after the gap.
    pub next: EventId,
    /// Its launch call, when linked.
    pub launch: Option<EventId>,
    /// Why the host was late, and the events that show it; None when the
    /// gap is not a host wait (the launch began before the gap did).
    pub cause: Option<WaitCause>,
}

impl IdleGap {
    /// The cause, for a host-wait gap.
    pub fn wait(&self) -> Option<Cause> {
        self.cause.map(|c| c.cause)
    }
}

/// The runtime call kinds, by name.
fn call_cause(trace: &Trace, call: EventId, copies: &FxHashMap<EventId, EventId>) -> Cause {
    let name = trace.name(call);
    if name.contains("Synchronize") {
        return Cause::Sync;
    }
    let copy = ["cudaMemcpy", "cuMemcpy", "hipMemcpy"]
        .iter()
        .any(|p| name.starts_with(p));
    if copy && !name.contains("Async") {
        return Cause::BlockingCopy;
    }
    if copy
        && copies
            .get(&call)
            .is_some_and(|&g| trace.name(g).contains("Pageable"))
    {
        return Cause::BlockingCopy;
    }
    if name.contains("Launch") || name.contains("Async") {
        Cause::LongLaunch
    } else {
        Cause::OtherRuntime
    }
}

/// One host thread's events, by start time, and its CPU-op coverage.
struct Thread {
    /// CPU ops, runtime and driver calls, Python frames: start order,
    /// longer first at equal starts (parents before children), then trace
    /// order.
    events: Vec<EventId>,
    /// The CPU ops' merged intervals, in order.
    cover: Vec<(f64, f64)>,
}

impl Thread {
    /// The thread from its events, each with its start, duration and
    /// whether it is a CPU op.
    fn new(mut events: Vec<(f64, f64, bool, EventId)>) -> Thread {
        // Stable: a trace lists a thread's events nearly in time order,
        // which a stable sort exploits; ties keep trace order.
        events.sort_by(|x, y| x.0.total_cmp(&y.0).then(y.1.total_cmp(&x.1)));
        let mut cover: Vec<(f64, f64)> = Vec::new();
        for &(ts, dur, op, _) in &events {
            if !op {
                continue;
            }
            match cover.last_mut() {
                Some(last) if ts <= last.1 => last.1 = last.1.max(ts + dur),
                _ => cover.push((ts, ts + dur)),
            }
        }
        Thread {
            events: events.into_iter().map(|e| e.3).collect(),
            cover,
        }
    }

    /// How much of `[a, b]` the CPU ops cover (µs).
    fn covered(&self, a: f64, b: f64) -> f64 {
        let first = self.cover.partition_point(|&(_, end)| end <= a);
        self.cover[first..]
            .iter()
            .take_while(|&&(s, _)| s < b)
            .map(|&(s, e)| e.min(b) - s.max(a))
            .filter(|&d| d > 0.0)
            .sum()
    }
}

/// The host thread events of interest: CPU ops, runtime and driver calls,
/// Python frames when `frames`, grouped by (pid, tid).
fn threads(
    trace: &Trace,
    wanted: &[(IdentId, IdentId)],
    frames: bool,
) -> FxHashMap<(IdentId, IdentId), Thread> {
    type Events = Vec<(f64, f64, bool, EventId)>;
    let mut ids: FxHashMap<(IdentId, IdentId), Events> =
        wanted.iter().map(|&k| (k, Vec::new())).collect();
    for (id, e) in trace.events() {
        let frame = frames && e.cat == Cat::PythonFunction;
        let op = e.cat == Cat::CpuOp;
        if !(frame || op || e.cat.is_runtime()) || e.ts.is_nan() || e.dur.is_nan() {
            continue;
        }
        if let Some(v) = ids.get_mut(&(e.pid, e.tid)) {
            v.push((e.ts, e.dur, op, id));
        }
    }
    ids.into_iter().map(|(k, v)| (k, Thread::new(v))).collect()
}

/// The cause of every host-wait gap of `gaps` (by position in the
/// flattened list of each stream's gaps, in order); `copies` maps a copy
/// call to its GPU copy; `frames`: also find the Python frame (only when
/// asked, so that a report is the same whether or not the trace was
/// loaded with its frames).
pub fn classify(
    trace: &Trace,
    gaps: &[&Gap],
    copies: &FxHashMap<EventId, EventId>,
    frames: bool,
) -> Vec<Option<WaitCause>> {
    let thread_of = |g: &Gap| {
        let r = trace.event(g.runtime?);
        Some((r.pid, r.tid))
    };
    let mut queries: FxHashMap<(IdentId, IdentId), Vec<usize>> = FxHashMap::default();
    for (i, g) in gaps.iter().enumerate() {
        if g.category == Category::HostWait
            && let Some(t) = thread_of(g)
        {
            queries.entry(t).or_default().push(i);
        }
    }
    let wanted: Vec<_> = queries.keys().copied().collect();
    let threads = threads(trace, &wanted, frames);
    let mut out = vec![None; gaps.len()];
    for (t, mut qs) in queries {
        let thread = &threads[&t];
        qs.sort_by(|&a, &b| gaps[a].start.total_cmp(&gaps[b].start));
        let chains = chains_at(trace, &thread.events, qs.iter().map(|&q| gaps[q].start));
        for (&q, chain) in qs.iter().zip(chains) {
            out[q] = Some(finding(trace, gaps[q], thread, &chain, copies));
        }
    }
    out
}

/// For each time of `at` (ascending), the events of `events` (sorted by
/// start, parents first) running then, outermost first: a sweep with the
/// stack of open events.
fn chains_at(
    trace: &Trace,
    events: &[EventId],
    at: impl Iterator<Item = f64>,
) -> Vec<Vec<EventId>> {
    let mut stack: Vec<EventId> = Vec::new();
    let mut next = 0;
    let mut out = Vec::new();
    for p in at {
        while next < events.len() && trace.event(events[next]).ts <= p {
            let e = trace.event(events[next]);
            while stack
                .last()
                .is_some_and(|&top| trace.event(top).t_end() <= e.ts)
            {
                stack.pop();
            }
            stack.push(events[next]);
            next += 1;
        }
        while stack
            .last()
            .is_some_and(|&top| trace.event(top).t_end() <= p)
        {
            stack.pop();
        }
        let open = stack.iter().copied();
        out.push(open.filter(|&id| trace.event(id).t_end() > p).collect());
    }
    out
}

/// The cause of one host-wait gap from the events running when it began.
fn finding(
    trace: &Trace,
    gap: &Gap,
    thread: &Thread,
    chain: &[EventId],
    copies: &FxHashMap<EventId, EventId>,
) -> WaitCause {
    let innermost = |cat: fn(Cat) -> bool| {
        chain
            .iter()
            .rev()
            .copied()
            .find(|&id| cat(trace.event(id).cat))
    };
    let op = innermost(|c| c == Cat::CpuOp);
    let frame = innermost(|c| c == Cat::PythonFunction);
    let with = |cause, call| WaitCause {
        cause,
        call,
        op,
        frame,
    };
    let calls = chain
        .iter()
        .copied()
        .filter(|&id| trace.event(id).cat.is_runtime());
    // The strongest cause any running call shows.
    if let Some((cause, call)) = calls.map(|c| (call_cause(trace, c, copies), c)).min() {
        return with(cause, Some(call));
    }
    let Some(launch) = gap.runtime else {
        return with(Cause::Unknown, None);
    };
    let l = trace.event(launch);
    if 2.0 * l.dur >= gap.length {
        // A blocking copy call that ran long delayed its own copy.
        let cause = match call_cause(trace, launch, copies) {
            Cause::BlockingCopy => Cause::BlockingCopy,
            _ => Cause::LongLaunch,
        };
        return with(cause, Some(launch));
    }
    let window = l.ts - gap.start;
    if window > 0.0 && 2.0 * thread.covered(gap.start, l.ts) >= window {
        return with(Cause::HostBusy, None);
    }
    with(Cause::Unknown, None)
}
