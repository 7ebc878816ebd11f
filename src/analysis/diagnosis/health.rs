//! Whether a trace can be trusted: checks of the trace itself, each
//! `pass`, `warn`, `fail` or `cannot_tell`, with the numbers and events
//! behind its status. A failed check names the figures it invalidates.
//!
//! Each check reads the trace and its call tree only (no sheet), so that
//! every command that loads a trace can run the same gate.

use std::borrow::Cow;

use super::Figure;
use crate::analysis::commands::steps::{profiler_steps, step_number};
use crate::analysis::common::intervals::{Interval, length, union};
use crate::trace::tree::{Tree, is_graph_launch};
use crate::trace::{EventId, Trace};

/// A check's outcome, from best to worst (`cannot_tell` ranks between
/// `warn` and `fail`: the trace lacks what the check needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Nothing wrong found.
    Pass,
    /// Something is off; the figures stand, with the caveat.
    Warn,
    /// The trace does not hold what the check needs.
    CannotTell,
    /// Figures named by the check are wrong or meaningless.
    Fail,
}

impl Status {
    /// The status written as `text` ([`Status::as_str`]), if it is one.
    pub fn parse(text: &str) -> Option<Status> {
        [Status::Pass, Status::Warn, Status::CannotTell, Status::Fail]
            .into_iter()
            .find(|s| s.as_str() == text)
    }

    /// The status as written in sheets and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::CannotTell => "cannot_tell",
            Status::Fail => "fail",
        }
    }
}

/// One number a check's status rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// What it counts or measures, e.g. `unlinked_gpu_events`.
    pub name: Cow<'static, str>,
    /// Its value.
    pub value: f64,
    /// Its unit (`count`, `ms`, `%`).
    pub unit: Cow<'static, str>,
}

impl Evidence {
    /// The number `value` of `name`, in `unit`.
    pub fn new(name: &'static str, value: f64, unit: &'static str) -> Evidence {
        Evidence {
            name: Cow::Borrowed(name),
            value,
            unit: Cow::Borrowed(unit),
        }
    }

    /// [`Evidence::new`] with names read back from a written sheet.
    pub fn read(name: String, value: f64, unit: String) -> Evidence {
        Evidence {
            name: Cow::Owned(name),
            value,
            unit: Cow::Owned(unit),
        }
    }
}

/// A check's result.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Stable id, e.g. `health.unlinked_kernels`.
    pub id: &'static str,
    /// The outcome.
    pub status: Status,
    /// One sentence for people, with the numbers.
    pub summary: String,
    /// The numbers.
    pub evidence: Vec<Evidence>,
    /// Up to [`MAX_EVENTS`] events behind it (their UIDs in the sheets).
    pub events: Vec<EventId>,
    /// The figures it invalidates; empty on pass.
    pub invalidates: Vec<Figure>,
}

/// Events listed per check: enough to find them with `tree`.
pub const MAX_EVENTS: usize = 10;

/// Two GPU events of one stream overlapping by less than this (µs) are
/// taken as timestamp rounding, not overlap.
pub const OVERLAP_TOLERANCE_US: f64 = 1.0;

/// GPU work starting before its launch by less than this (µs) is taken as
/// timestamp rounding, not clock skew.
pub const SKEW_TOLERANCE_US: f64 = 1.0;

/// A share (%) of the GPU's busy time at or above which an affected part
/// makes a check fail rather than warn.
pub const FAIL_SHARE_PCT: f64 = 5.0;

/// Every check of the trace and its tree, in a fixed order.
pub fn checks(trace: &Trace, tree: &Tree) -> Vec<Check> {
    checks_of(trace, tree, &GpuEvents::of(trace))
}

/// [`checks`], with the trace's GPU events already gathered.
pub fn checks_of(trace: &Trace, tree: &Tree, gpu: &GpuEvents) -> Vec<Check> {
    vec![
        no_gpu(gpu),
        unlinked_kernels(gpu, &|id| tree.parent(id)),
        overlapping_kernels(gpu),
        clock_skew(trace, gpu, &|id| {
            tree.parent(id).filter(|&p| trace.event(p).cat.is_runtime())
        }),
        dropped_kernels(trace, tree),
        graph_hidden(trace, tree, gpu),
        no_shapes(trace),
        truncated(trace),
        uneven_steps(trace, tree),
    ]
}

/// The id of every check [`checks`] makes, in its order.
pub const CHECK_IDS: &[&str] = &[
    "health.no_gpu",
    "health.unlinked_kernels",
    "health.overlapping_kernels",
    "health.clock_skew",
    "health.dropped_kernels",
    "health.graph_hidden",
    "health.no_shapes",
    "health.truncated",
    "health.uneven_steps",
];

/// Host calls that launch one kernel each.
const KERNEL_LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipModuleLaunchKernel",
];

/// The trace's verdict: the worst status among the checks that could
/// tell (a check that cannot tell, such as `truncated` on a trace without
/// profiler steps, finds nothing wrong); `cannot_tell` only when no check
/// could tell, pass when there is no check.
pub fn verdict(checks: &[Check]) -> Status {
    verdict_of(checks.iter().map(|c| c.status))
}

/// [`verdict`] of the checks' statuses.
pub fn verdict_of(statuses: impl IntoIterator<Item = Status>) -> Status {
    let mut any = false;
    let told = statuses
        .into_iter()
        .inspect(|_| any = true)
        .filter(|&s| s != Status::CannotTell)
        .max();
    match told {
        Some(s) => s,
        None if !any => Status::Pass,
        None => Status::CannotTell,
    }
}

/// The trace's GPU events (kernels, copies, fills) with their streams.
pub struct GpuEvents {
    /// (stream, start µs, end µs, event), by stream then start; the event
    /// is None for work a format keeps no event of (rocprofv3 dispatches),
    /// the stream -1 where the trace names none.
    by_stream: Vec<(i64, f64, f64, Option<EventId>)>,
    /// Union of all their intervals, in order.
    pub busy: Vec<Interval>,
    /// Its length, µs.
    busy_us: f64,
}

impl GpuEvents {
    /// The GPU events of `trace` with finite times. A stream is the
    /// `stream` argument on its process (the device): stream numbers
    /// repeat across the GPUs of one trace and the ranks of a merged one.
    pub fn of(trace: &Trace) -> GpuEvents {
        let work = trace
            .events()
            .filter(|(_, e)| e.cat.is_gpu())
            .map(|(id, e)| {
                let stream = trace.args(id).and_then(|a| a.links().stream);
                (stream.map(|s| (e.pid, s)), e.ts, e.t_end(), Some(id))
            });
        GpuEvents::of_keyed(work)
    }

    /// GPU work given as (stream, start µs, end µs, event); items with a
    /// time that is not finite are left out.
    pub fn of_work(mut work: Vec<(i64, f64, f64, Option<EventId>)>) -> GpuEvents {
        work.retain(|w| w.1.is_finite() && w.2.is_finite());
        work.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let busy = union(work.iter().map(|g| (g.1, g.2)).collect());
        let busy_us = length(&busy);
        GpuEvents {
            by_stream: work,
            busy,
            busy_us,
        }
    }

    /// GPU work whose stream is any key (a device and stream id pair, a
    /// process and thread pair), None where the work names no stream.
    pub fn of_keyed<K: std::hash::Hash + Eq>(
        work: impl IntoIterator<Item = (Option<K>, f64, f64, Option<EventId>)>,
    ) -> GpuEvents {
        let mut streams = rustc_hash::FxHashMap::default();
        let work = work
            .into_iter()
            .map(|(key, a, b, id)| {
                let next = streams.len() as i64;
                let stream = key.map_or(-1, |k| *streams.entry(k).or_insert(next));
                (stream, a, b, id)
            })
            .collect();
        GpuEvents::of_work(work)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.by_stream.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_stream.is_empty()
    }

    /// The events (those that have one), by stream then start.
    pub(super) fn events(&self) -> impl Iterator<Item = (f64, f64, EventId)> + '_ {
        self.by_stream.iter().filter_map(|w| Some((w.1, w.2, w.3?)))
    }

    /// `us` as a share (%) of their busy time.
    pub(super) fn share_pct(&self, us: f64) -> f64 {
        share(us, self.busy_us)
    }
}

/// `part` as a share (%) of `whole`; 0 when `whole` is.
fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// The status of a check that found `affected` of `total` items faulty,
/// the fault weighing `share_pct` (%): nothing to look at cannot tell,
/// no fault passes, a fault from [`FAIL_SHARE_PCT`] on fails.
fn graded(total: usize, affected: usize, share_pct: f64) -> Status {
    match (total, affected) {
        (0, _) => Status::CannotTell,
        (_, 0) => Status::Pass,
        _ if share_pct >= FAIL_SHARE_PCT => Status::Fail,
        _ => Status::Warn,
    }
}

/// A check with its fields.
pub(super) fn check(
    id: &'static str,
    status: Status,
    summary: String,
    evidence: Vec<Evidence>,
) -> Check {
    Check {
        id,
        status,
        summary,
        evidence,
        events: Vec::new(),
        invalidates: Vec::new(),
    }
}

/// `health.no_gpu`: a trace without GPU events has no GPU figures.
pub fn no_gpu(gpu: &GpuEvents) -> Check {
    let n = gpu.len();
    let mut c = check(
        "health.no_gpu",
        if n == 0 { Status::Fail } else { Status::Pass },
        if n == 0 {
            "the trace has no GPU events (kernels, copies, fills): no GPU figure can be given"
                .into()
        } else {
            format!("{n} GPU events")
        },
        vec![Evidence::new("gpu_events", n as f64, "count")],
    );
    if n == 0 {
        c.invalidates = vec![Figure::Timeline, Figure::Idle, Figure::KernelSheets];
    }
    c
}

/// `health.unlinked_kernels`: GPU work no host launch in the trace claims
/// (launched before profiling began, or its host side missing). Outside
/// the span of the linked GPU work it only leaves work out (warn); inside
/// it, the timeline reports that time as idle and the op sheets miss it
/// (fail from [`FAIL_SHARE_PCT`] of the GPU's busy time).
/// `launch`: the host call that launched a GPU event, if the trace links
/// one.
fn unlinked_kernels(gpu: &GpuEvents, launch: &dyn Fn(EventId) -> Option<EventId>) -> Check {
    let (mut all, mut linked): (Vec<Interval>, Vec<Interval>) = (Vec::new(), Vec::new());
    let mut events = Vec::new();
    for (a, b, id) in gpu.events() {
        all.push((a, b));
        if launch(id).is_some() {
            linked.push((a, b));
        } else if events.len() < MAX_EVENTS {
            events.push(id);
        }
    }
    let n = gpu.len() - linked.len();
    let span = linked
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |s, iv| {
            (s.0.min(iv.0), s.1.max(iv.1))
        });
    let inside: Vec<Interval> = all
        .iter()
        .map(|&(a, b)| (a.max(span.0), b.min(span.1)))
        .filter(|(a, b)| a < b)
        .collect();
    let linked_us = length(&union(linked));
    let us = length(&union(all)) - linked_us;
    let inside_us = (length(&union(inside)) - linked_us).max(0.0);
    let pct = gpu.share_pct(inside_us);
    let status = graded(gpu.len(), n, pct);
    let mut c = check(
        "health.unlinked_kernels",
        status,
        format!(
            "{n} of {} GPU events have no host launch in the trace: {:.3} ms, of which {:.3} ms ({pct:.2}% of GPU busy time) among the linked work, where it reads as idle",
            gpu.len(),
            us / 1e3,
            inside_us / 1e3
        ),
        vec![
            Evidence::new("unlinked_gpu_events", n as f64, "count"),
            Evidence::new("unlinked_gpu_time", us / 1e3, "ms"),
            Evidence::new("unlinked_inside_linked_span", inside_us / 1e3, "ms"),
            Evidence::new("share_of_gpu_busy", pct, "%"),
        ],
    );
    c.events = events;
    if status == Status::Fail {
        c.invalidates = vec![Figure::Idle, Figure::OpSheets];
    }
    c
}

/// `health.overlapping_kernels`: GPU events of one stream overlapping in
/// time, which a stream cannot do: a corrupted or merged trace. Sheets
/// that sum kernel times then count the overlap twice.
pub fn overlapping_kernels(gpu: &GpuEvents) -> Check {
    let mut pairs = 0usize;
    let mut overlap_us = 0.0;
    let mut events = Vec::new();
    for w in gpu.by_stream.windows(2) {
        let (prev, next) = (w[0], w[1]);
        if prev.0 != next.0 || prev.0 < 0 {
            continue;
        }
        let o = prev.2.min(next.2) - next.1;
        if o > OVERLAP_TOLERANCE_US {
            pairs += 1;
            overlap_us += o;
            if events.len() < MAX_EVENTS {
                events.extend([prev.3, next.3].into_iter().flatten());
            }
        }
    }
    let pct = gpu.share_pct(overlap_us);
    let status = graded(gpu.len(), pairs, pct);
    let mut c = check(
        "health.overlapping_kernels",
        status,
        format!(
            "{pairs} pairs of GPU events on one stream overlap by more than {OVERLAP_TOLERANCE_US} µs: {:.3} ms, {pct:.2}% of GPU busy time",
            overlap_us / 1e3
        ),
        vec![
            Evidence::new("overlapping_pairs", pairs as f64, "count"),
            Evidence::new("overlap_time", overlap_us / 1e3, "ms"),
            Evidence::new("share_of_gpu_busy", pct, "%"),
        ],
    );
    c.events = events;
    if status == Status::Fail {
        c.invalidates = vec![Figure::KernelSheets, Figure::OpSheets];
    }
    c
}

/// `health.clock_skew`: GPU work starting before the host call that
/// launched it: the host and GPU clocks disagree, and every launch delay
/// and idle cause read from the two is off by as much.
/// `launch`: the host launch call of a GPU event, if the trace links one.
pub fn clock_skew(
    trace: &Trace,
    gpu: &GpuEvents,
    launch: &dyn Fn(EventId) -> Option<EventId>,
) -> Check {
    let (mut linked, mut early, mut worst) = (0usize, 0usize, 0.0f64);
    let mut events = Vec::new();
    for (a, _, id) in gpu.events() {
        let Some(p) = launch(id) else { continue };
        let launch = trace.event(p);
        linked += 1;
        let lead = launch.ts - a;
        if lead > SKEW_TOLERANCE_US {
            early += 1;
            worst = worst.max(lead);
            if events.len() < MAX_EVENTS {
                events.push(id);
            }
        }
    }
    let status = graded(linked, early, share(early as f64, linked as f64));
    let mut c = check(
        "health.clock_skew",
        status,
        format!(
            "{early} of {linked} launched GPU events start before their launch call (by up to {:.3} ms)",
            worst / 1e3
        ),
        vec![
            Evidence::new("early_gpu_events", early as f64, "count"),
            Evidence::new("linked_gpu_events", linked as f64, "count"),
            Evidence::new("worst_lead", worst / 1e3, "ms"),
        ],
    );
    c.events = events;
    if status == Status::Fail {
        c.invalidates = vec![Figure::LaunchDelays, Figure::CriticalPath];
    }
    c
}

/// `health.dropped_kernels`: kernel launches with no GPU work in the
/// trace, before the last launch that has some (launches at the very end
/// may run after the profiler stopped). The GPU did work the trace does
/// not show, so its idle time is overstated.
fn dropped_kernels(trace: &Trace, tree: &Tree) -> Check {
    let launches: Vec<(f64, EventId, bool)> = trace
        .events()
        .filter(|(_, e)| e.cat.is_runtime() && KERNEL_LAUNCHES.contains(&trace.name_of(e)))
        .map(|(id, e)| (e.ts, id, tree.gpu_count(id) > 0))
        .collect();
    let last_served = launches
        .iter()
        .filter(|l| l.2)
        .map(|l| l.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let dropped: Vec<EventId> = launches
        .iter()
        .filter(|l| !l.2 && l.0 < last_served)
        .map(|l| l.1)
        .collect();
    let n = launches.len();
    let pct = share(dropped.len() as f64, n as f64);
    let status = graded(n, dropped.len(), pct);
    let mut c = check(
        "health.dropped_kernels",
        status,
        format!(
            "{} of {n} kernel launches have no GPU work in the trace ({pct:.2}%), before its last launch that has some",
            dropped.len()
        ),
        vec![
            Evidence::new("launches_without_gpu_work", dropped.len() as f64, "count"),
            Evidence::new("kernel_launches", n as f64, "count"),
            Evidence::new("share_of_launches", pct, "%"),
        ],
    );
    c.events = dropped.into_iter().take(MAX_EVENTS).collect();
    if status == Status::Fail {
        c.invalidates = vec![Figure::Idle, Figure::KernelSheets];
    }
    c
}

/// `health.no_shapes`: host ops without `Input Dims` (a trace recorded
/// without `record_shapes=True`): no FLOP or byte model can be applied,
/// so roofline columns and shape rows cannot be given.
fn no_shapes(trace: &Trace) -> Check {
    let (mut ops, mut shaped) = (0usize, 0usize);
    for (id, e) in trace.events() {
        if e.cat == crate::trace::Cat::CpuOp {
            ops += 1;
            shaped += usize::from(trace.op_args(id).dims.is_some());
        }
    }
    no_shapes_of(
        ["ops", "ops_with_shapes"],
        (ops, shaped),
        format!("{shaped} of {ops} host ops carry Input Dims"),
    )
}

/// `health.no_shapes` from `(items, shaped)` counts, with the evidence
/// `names` of the two: cannot tell without items, warn when none is
/// shaped (no roofline figure can be given), else pass.
pub(super) fn no_shapes_of(
    names: [&'static str; 2],
    (items, shaped): (usize, usize),
    summary: String,
) -> Check {
    let status = match (items, shaped) {
        (0, _) => Status::CannotTell,
        (_, 0) => Status::Warn,
        _ => Status::Pass,
    };
    let mut c = check(
        "health.no_shapes",
        status,
        summary,
        vec![
            Evidence::new(names[0], items as f64, "count"),
            Evidence::new(names[1], shaped as f64, "count"),
        ],
    );
    if status == Status::Warn {
        c.invalidates = vec![Figure::Roofline];
    }
    c
}

/// `health.truncated`: a `ProfilerStep#N` that ends after every other
/// event of the trace ends: the trace was cut inside the step, whose
/// figures cover only part of it.
pub fn truncated(trace: &Trace) -> Check {
    let mut last_end = f64::NEG_INFINITY;
    let mut steps: Vec<(f64, EventId)> = Vec::new();
    for (id, e) in trace.events() {
        if !(e.ts.is_finite() && e.dur.is_finite()) {
            continue;
        }
        if e.cat == crate::trace::Cat::UserAnnotation
            && trace.name_of(e).starts_with("ProfilerStep#")
        {
            steps.push((e.t_end(), id));
        } else {
            last_end = last_end.max(e.t_end());
        }
    }
    let cut: Vec<(f64, EventId)> = steps
        .iter()
        .copied()
        .filter(|s| s.0 > last_end + SKEW_TOLERANCE_US)
        .collect();
    let beyond = cut.iter().map(|s| s.0 - last_end).fold(0.0, f64::max);
    let status = match (steps.len(), cut.len()) {
        (0, _) => Status::CannotTell,
        (_, 0) => Status::Pass,
        _ => Status::Warn,
    };
    let summary = if steps.is_empty() {
        "the trace names no profiler step: whether one was cut cannot be told".to_string()
    } else {
        format!(
            "{} of {} profiler steps end after the trace's last event (by up to {:.3} ms)",
            cut.len(),
            steps.len(),
            beyond / 1e3
        )
    };
    let mut c = check(
        "health.truncated",
        status,
        summary,
        vec![
            Evidence::new("steps_cut", cut.len() as f64, "count"),
            Evidence::new("steps", steps.len() as f64, "count"),
            Evidence::new("past_last_event", beyond / 1e3, "ms"),
        ],
    );
    c.events = cut.into_iter().map(|s| s.1).take(MAX_EVENTS).collect();
    if status == Status::Warn {
        c.invalidates = vec![Figure::Steps];
    }
    c
}

/// A step whose CPU length is at least this many times the median step's,
/// or at most its inverse, is far from the others.
pub const UNEVEN_STEP_RATIO: f64 = 2.0;

/// `health.uneven_steps`: profiler steps far from the typical one — a CPU
/// length at least [`UNEVEN_STEP_RATIO`] times the median step's or at
/// most its inverse, or no GPU work where the median step has some (a
/// warm-up step, a profiler flush, a degenerate batch). Each step's own
/// figures stand (`step_summary`), but the trace's totals and means mix
/// the odd steps in. One step passes (the trace's figures are its own);
/// a trace without steps cannot tell.
pub fn uneven_steps(trace: &Trace, tree: &Tree) -> Check {
    let steps = profiler_steps(trace, tree);
    let cpu: Vec<f64> = steps.iter().map(|s| s.cpu_dur).collect();
    let median_us = crate::numeric::median(&cpu);
    let gpu: Vec<f64> = steps.iter().map(|s| s.gpu_events as f64).collect();
    let works = crate::numeric::median(&gpu) > 0.0;
    // (step, ratio to the median, launched nothing) of each odd step.
    let odd: Vec<(i64, f64, bool)> = steps
        .iter()
        .filter_map(|s| {
            // A zero median (steps of no length) makes no step far.
            let ratio = if median_us > 0.0 {
                s.cpu_dur / median_us
            } else {
                1.0
            };
            let idle = works && s.gpu_events == 0;
            let far = ratio >= UNEVEN_STEP_RATIO || ratio <= 1.0 / UNEVEN_STEP_RATIO;
            (far || idle).then_some((s.step, ratio, idle))
        })
        .collect();
    let status = match (steps.len(), odd.is_empty()) {
        (0, _) => Status::CannotTell,
        (1, _) | (_, true) => Status::Pass,
        _ => Status::Warn,
    };
    let named: Vec<String> = odd
        .iter()
        .take(MAX_EVENTS)
        .map(|&(step, ratio, idle)| {
            let idle = if idle { ", no GPU work" } else { "" };
            format!("#{step} ({ratio:.2}x{idle})")
        })
        .collect();
    let summary = match status {
        Status::CannotTell => {
            "the trace names no profiler step: whether its steps are even cannot be told"
                .to_string()
        }
        _ => format!(
            "{} of {} profiler steps are far from the median step ({:.3} ms on the CPU){}{}",
            odd.len(),
            steps.len(),
            median_us / 1e3,
            if named.is_empty() { "" } else { ": " },
            named.join(", ")
        ),
    };
    let worst = odd
        .iter()
        .map(|o| if o.1 >= 1.0 { o.1 } else { 1.0 / o.1 })
        .fold(1.0, f64::max);
    let mut c = check(
        "health.uneven_steps",
        status,
        summary,
        vec![
            Evidence::new("uneven_steps", odd.len() as f64, "count"),
            Evidence::new("steps", steps.len() as f64, "count"),
            Evidence::new("median_step", median_us / 1e3, "ms"),
            Evidence::new("worst_ratio", worst, "x"),
        ],
    );
    if status == Status::Warn {
        c.events = step_events(trace, &odd.iter().map(|o| o.0).collect::<Vec<_>>());
    }
    c
}

/// The `ProfilerStep#N` annotations of the step numbers `numbers`, in
/// trace order (at most [`MAX_EVENTS`]).
fn step_events(trace: &Trace, numbers: &[i64]) -> Vec<EventId> {
    trace
        .events()
        .filter(|(_, e)| e.cat == crate::trace::Cat::UserAnnotation)
        .filter(|(_, e)| step_number(trace.name_of(e)).is_some_and(|n| numbers.contains(&n)))
        .map(|(id, _)| id)
        .take(MAX_EVENTS)
        .collect()
}

/// `health.graph_hidden`: GPU work booked to CUDA/HIP graph launches
/// because the ops that captured it are in another trace (not merged
/// with `--capture-dir`). The timeline stands; the op sheets show the
/// launch instead of the ops (warn from [`FAIL_SHARE_PCT`] of the GPU's
/// busy time, which then invalidates the op and roofline figures).
fn graph_hidden(trace: &Trace, tree: &Tree, gpu: &GpuEvents) -> Check {
    let mut ivs: Vec<Interval> = Vec::new();
    let mut events = Vec::new();
    for (a, b, id) in gpu.events() {
        let Some(p) = tree.parent(id) else { continue };
        let pe = trace.event(p);
        if pe.cat.is_runtime() && is_graph_launch(trace.name_of(pe)) {
            ivs.push((a, b));
            if !events.contains(&p) && events.len() < MAX_EVENTS {
                events.push(p);
            }
        }
    }
    let n = ivs.len();
    let us = length(&union(ivs));
    let pct = gpu.share_pct(us);
    let status = match gpu.len() {
        0 => Status::CannotTell,
        _ if n == 0 => Status::Pass,
        _ => Status::Warn,
    };
    let mut c = check(
        "health.graph_hidden",
        status,
        format!(
            "{n} GPU events ({:.3} ms, {pct:.2}% of GPU busy time) ran under graph launches whose capturing ops are not in the trace: the op sheets book them to the launch (merge the capture traces with --capture-dir)",
            us / 1e3
        ),
        vec![
            Evidence::new("gpu_events_under_graph_launches", n as f64, "count"),
            Evidence::new("gpu_time_under_graph_launches", us / 1e3, "ms"),
            Evidence::new("share_of_gpu_busy", pct, "%"),
        ],
    );
    c.events = events;
    if status == Status::Warn && pct >= FAIL_SHARE_PCT {
        c.invalidates = vec![Figure::OpSheets, Figure::Roofline];
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;
    use crate::trace::tree::{TreeOptions, build};

    /// A launch at `ts` (correlation `c`) and its kernel on stream 7.
    fn launch(ts: f64, c: u32, k_ts: f64, k_dur: f64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": {ts}, "dur": 2, "pid": 1, "tid": 1, "args": {{"correlation": {c}}}}},
            {{"ph": "X", "cat": "kernel", "name": "k{c}", "ts": {k_ts}, "dur": {k_dur}, "pid": 0, "tid": 7, "args": {{"correlation": {c}, "stream": 7}}}},
            {{"ph": "s", "cat": "ac2g", "id": {c}, "ts": {ts}, "pid": 1, "tid": 1}},
            {{"ph": "f", "cat": "ac2g", "id": {c}, "ts": {k_ts}, "pid": 0, "tid": 7, "bp": "e"}}"#
        )
    }

    fn run(events: &[String]) -> Vec<Check> {
        let trace = trace_of_json(&events.join(","));
        let tree = build(&trace, TreeOptions::default());
        checks(&trace, &tree)
    }

    fn find<'a>(checks: &'a [Check], id: &str) -> &'a Check {
        checks.iter().find(|c| c.id == id).unwrap()
    }

    fn value(c: &Check, name: &str) -> f64 {
        c.evidence.iter().find(|e| e.name == name).unwrap().value
    }

    /// A host op with shapes around `[ts, ts + dur)`.
    fn op(ts: f64, dur: f64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1, "args": {{"Input Dims": [[2, 3], [3, 4]]}}}}"#
        )
    }

    /// `ProfilerStep#1` over `[ts, ts + dur)`.
    fn step(ts: f64, dur: f64) -> String {
        step_n(1, ts, dur)
    }

    /// `ProfilerStep#n` over `[ts, ts + dur)`.
    fn step_n(n: i64, ts: f64, dur: f64) -> String {
        format!(
            r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{n}", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1}}"#
        )
    }

    /// Steps `#1..` of the given CPU lengths end to end from 0, each with an
    /// op launching one 10 µs kernel (none where `works` is false), and a
    /// last op ending with the last step (nothing is cut).
    fn steps_of(lengths: &[f64], works: &[bool]) -> Vec<String> {
        let mut events = Vec::new();
        let mut t = 0.0;
        for (i, (&len, &work)) in lengths.iter().zip(works).enumerate() {
            events.push(step_n(i as i64 + 1, t, len));
            if work {
                events.push(op(t, 8.0));
                events.push(launch(t + 1.0, i as u32 + 1, t + 4.0, 10.0));
            }
            t += len;
        }
        events.push(op(t - 8.0, 8.0));
        events
    }

    #[test]
    fn the_verdict_is_the_worst_of_the_checks_that_could_tell() {
        let of = |st: &[Status]| {
            let v: Vec<Check> = st
                .iter()
                .map(|&s| check("x", s, String::new(), vec![]))
                .collect();
            verdict(&v)
        };
        assert_eq!(of(&[Status::Pass, Status::CannotTell]), Status::Pass);
        assert_eq!(of(&[Status::Warn, Status::CannotTell]), Status::Warn);
        assert_eq!(of(&[Status::Fail, Status::Warn]), Status::Fail);
        assert_eq!(of(&[Status::CannotTell]), Status::CannotTell);
        assert_eq!(of(&[]), Status::Pass);
    }

    #[test]
    fn a_clean_trace_passes_every_check() {
        let mut events = vec![
            op(0.0, 8.0),
            launch(0.0, 1, 10.0, 20.0),
            launch(5.0, 2, 30.0, 20.0),
        ];
        // Three even steps of 50 µs; the last kernel ends with the last one.
        for n in 1..=3 {
            events.push(step_n(n, 50.0 * (n - 1) as f64, 50.0));
        }
        events.extend([
            op(60.0, 8.0),
            launch(61.0, 4, 70.0, 10.0),
            op(120.0, 8.0),
            launch(121.0, 3, 130.0, 20.0),
        ]);
        let checks = run(&events);
        for c in &checks {
            assert_eq!(c.status, Status::Pass, "{c:?}");
        }
        assert_eq!(verdict(&checks), Status::Pass);
        // The ids the health sheet is read back with are the checks made.
        let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
        assert_eq!(ids, CHECK_IDS);
    }

    #[test]
    fn steps_far_from_the_median_are_uneven() {
        // Four steps of 100 µs but the third (250 µs: 2.5x); the fourth
        // launched nothing while the others did.
        let checks = run(&steps_of(
            &[100.0, 100.0, 250.0, 100.0],
            &[true, true, true, false],
        ));
        let c = find(&checks, "health.uneven_steps");
        assert_eq!(c.status, Status::Warn, "{}", c.summary);
        assert_eq!(value(c, "uneven_steps"), 2.0);
        assert_eq!(value(c, "median_step"), 0.1);
        assert_eq!(value(c, "worst_ratio"), 2.5);
        assert!(c.summary.contains("#3 (2.50x)"), "{}", c.summary);
        assert!(
            c.summary.contains("#4 (1.00x, no GPU work)"),
            "{}",
            c.summary
        );
        assert_eq!(c.events.len(), 2);
        // A step half the median's length is far too.
        let short = run(&steps_of(&[100.0, 50.0, 100.0], &[true; 3]));
        let c = find(&short, "health.uneven_steps");
        assert_eq!((c.status, value(c, "worst_ratio")), (Status::Warn, 2.0));
    }

    #[test]
    fn even_steps_pass_and_a_trace_without_steps_cannot_tell() {
        // Within a factor of two of the median, all launching work.
        let even = run(&steps_of(&[100.0, 190.0, 60.0, 100.0], &[true; 4]));
        let c = find(&even, "health.uneven_steps");
        assert_eq!(c.status, Status::Pass, "{}", c.summary);
        assert!(c.events.is_empty());
        // Steps that all launch nothing: none is odd for that.
        let host_only = run(&steps_of(&[100.0, 100.0, 100.0], &[false; 3]));
        assert_eq!(find(&host_only, "health.uneven_steps").status, Status::Pass);
        // Two steps: the median is their mean, so only the one far below
        // it is odd (100 of a 500 µs median; 900 is 1.8x).
        let two = run(&steps_of(&[100.0, 900.0], &[true; 2]));
        let c = find(&two, "health.uneven_steps");
        assert_eq!(c.status, Status::Warn, "{}", c.summary);
        assert!(c.summary.contains("#1 (0.20x)"), "{}", c.summary);
        // One step is its trace; no step cannot tell.
        let one = run(&steps_of(&[100.0], &[false]));
        assert_eq!(find(&one, "health.uneven_steps").status, Status::Pass);
        let none = run(&[launch(0.0, 1, 10.0, 20.0)]);
        let c = find(&none, "health.uneven_steps");
        assert_eq!(c.status, Status::CannotTell);
        assert!(c.summary.contains("no profiler step"), "{}", c.summary);
    }

    #[test]
    fn a_launch_without_its_kernel_before_a_served_one_is_dropped() {
        // Launch 2 at 5 has no kernel and launch 3 at 9 has one; launch 4
        // at 50 has none but comes after the last served launch.
        let bare = |ts: f64, c: u32| {
            format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": {ts}, "dur": 2, "pid": 1, "tid": 1, "args": {{"correlation": {c}}}}}"#
            )
        };
        let checks = run(&[
            launch(0.0, 1, 10.0, 5.0),
            bare(5.0, 2),
            launch(9.0, 3, 20.0, 5.0),
            bare(50.0, 4),
        ]);
        let c = find(&checks, "health.dropped_kernels");
        assert_eq!(value(c, "launches_without_gpu_work"), 1.0);
        assert_eq!(value(c, "kernel_launches"), 4.0);
        assert_eq!(c.status, Status::Fail, "25% of launches");
        assert_eq!(c.events.len(), 1);
    }

    #[test]
    fn ops_without_input_dims_warn_and_name_the_roofline() {
        let bare = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 8, "pid": 1, "tid": 1}"#;
        let checks = run(&[bare.to_string(), launch(0.0, 1, 10.0, 20.0)]);
        let c = find(&checks, "health.no_shapes");
        assert_eq!(c.status, Status::Warn);
        assert_eq!(value(c, "ops_with_shapes"), 0.0);
        assert!(c.invalidates.contains(&Figure::Roofline));
        // Without any host op there is nothing to tell.
        let c = run(&[launch(0.0, 1, 10.0, 20.0)]);
        assert_eq!(find(&c, "health.no_shapes").status, Status::CannotTell);
    }

    #[test]
    fn a_step_ending_after_the_last_event_is_truncated() {
        // The last event ends at 30; the step runs to 100.
        let checks = run(&[step(0.0, 100.0), op(0.0, 8.0), launch(0.0, 1, 10.0, 20.0)]);
        let c = find(&checks, "health.truncated");
        assert_eq!(c.status, Status::Warn);
        assert!((value(c, "past_last_event") - 0.070).abs() < 1e-12);
        let c = run(&[op(0.0, 8.0), launch(0.0, 1, 10.0, 20.0)]);
        assert_eq!(find(&c, "health.truncated").status, Status::CannotTell);
    }

    #[test]
    fn no_gpu_events_fail_the_gate() {
        let checks = run(&[
            r#"{"ph": "X", "cat": "cpu_op", "name": "op", "ts": 0, "dur": 10, "pid": 1, "tid": 1}"#
                .to_string(),
        ]);
        assert_eq!(find(&checks, "health.no_gpu").status, Status::Fail);
        // Nothing was launched: whether launches ran early cannot be told.
        assert_eq!(
            find(&checks, "health.clock_skew").status,
            Status::CannotTell
        );
        assert_eq!(verdict(&checks), Status::Fail);
    }

    #[test]
    fn unlinked_kernels_are_counted_with_their_share() {
        // k1 [10, 30) and k2 [50, 60) linked; an unlinked kernel [40, 45)
        // between them: 5 of 35 µs busy, inside the linked span.
        let orphan = |ts: f64| {
            format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "orphan", "ts": {ts}, "dur": 5, "pid": 0, "tid": 7, "args": {{"stream": 7}}}}"#
            )
        };
        let linked = [launch(0.0, 1, 10.0, 20.0), launch(5.0, 2, 50.0, 10.0)];
        let checks = run(&[linked[0].clone(), linked[1].clone(), orphan(40.0)]);
        let c = find(&checks, "health.unlinked_kernels");
        assert_eq!(c.status, Status::Fail, "14% is above the fail share");
        assert_eq!(value(c, "unlinked_gpu_events"), 1.0);
        assert!((value(c, "unlinked_gpu_time") - 0.005).abs() < 1e-12);
        assert!((value(c, "share_of_gpu_busy") - 500.0 / 35.0).abs() < 1e-9);
        assert_eq!(c.events.len(), 1);
        // The same kernel before the first linked one (launched before
        // profiling began) leaves work out but corrupts no figure.
        let checks = run(&[linked[0].clone(), linked[1].clone(), orphan(1.0)]);
        let c = find(&checks, "health.unlinked_kernels");
        assert_eq!(c.status, Status::Warn);
        assert_eq!(value(c, "unlinked_inside_linked_span"), 0.0);
    }

    #[test]
    fn same_stream_overlap_beyond_rounding_is_found() {
        // k1 [10, 30), k2 [25, 45): 5 µs overlap of 35 µs busy; a 0.5 µs
        // overlap (k3 [44.5, 50)) is rounding.
        let checks = run(&[
            launch(0.0, 1, 10.0, 20.0),
            launch(5.0, 2, 25.0, 20.0),
            launch(8.0, 3, 44.5, 5.5),
        ]);
        let c = find(&checks, "health.overlapping_kernels");
        assert_eq!(value(c, "overlapping_pairs"), 1.0);
        assert!((value(c, "overlap_time") - 0.005).abs() < 1e-12);
        assert_eq!(c.status, Status::Fail);
        assert_eq!(c.events.len(), 2);
    }

    #[test]
    fn the_same_stream_number_on_two_devices_is_two_streams() {
        // k1 [10, 30) on device 0 and k2 [25, 45) on device 1, both "stream 7"
        // (two GPUs of one process, or two ranks of a merged trace).
        let other_device = launch(5.0, 2, 25.0, 20.0)
            .replace(r#""pid": 0, "tid": 7"#, r#""pid": 1000000, "tid": 7"#);
        let checks = run(&[launch(0.0, 1, 10.0, 20.0), other_device]);
        let c = find(&checks, "health.overlapping_kernels");
        assert_eq!(value(c, "overlapping_pairs"), 0.0, "{}", c.summary);
        assert_eq!(c.status, Status::Pass);
    }

    #[test]
    fn gpu_work_before_its_launch_is_clock_skew() {
        // k2 starts 3 µs before its launch at 20; k1 is fine.
        let checks = run(&[launch(0.0, 1, 10.0, 5.0), launch(20.0, 2, 17.0, 5.0)]);
        let c = find(&checks, "health.clock_skew");
        assert_eq!(value(c, "early_gpu_events"), 1.0);
        assert_eq!(value(c, "linked_gpu_events"), 2.0);
        assert!((value(c, "worst_lead") - 0.003).abs() < 1e-12);
        assert_eq!(c.status, Status::Fail, "1 of 2 is above the fail share");
    }

    /// No check fails on an unmodified corpus trace (each trace's statuses
    /// are printed for the record).
    #[test]
    #[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
    fn no_check_fails_on_the_corpus() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/pytorch");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty());
        let mut failed = Vec::new();
        for p in paths {
            let trace = crate::test_support::load_file(&p);
            let tree = build(&trace, TreeOptions::default());
            let checks = checks(&trace, &tree);
            let line: Vec<String> = checks
                .iter()
                .map(|c| {
                    format!(
                        "{}={}",
                        c.id.trim_start_matches("health."),
                        c.status.as_str()
                    )
                })
                .collect();
            eprintln!(
                "{}: {}",
                p.file_name().unwrap().to_string_lossy(),
                line.join(" ")
            );
            for c in checks.iter().filter(|c| c.status == Status::Fail) {
                failed.push(format!("{}: {}", p.display(), c.summary));
            }
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    /// Each planted fault (tools/plant_faults.py on a corpus trace) is
    /// found by the check its manifest names.
    #[test]
    #[cfg_attr(
        any(no_shared_corpus, no_python3),
        ignore = "needs ../shared/corpus and python3"
    )]
    fn planted_faults_are_found() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let src = root.join("../shared/corpus/pytorch/h100_bert_small.json.gz");
        let tmp = tempfile::tempdir().unwrap();
        for fault in [
            "dropped_kernels",
            "overlapping_kernels",
            "stripped_shapes",
            "broken_links",
            "clock_skew",
            "truncated",
        ] {
            let out = tmp.path().join(format!("{fault}.json.gz"));
            let done = std::process::Command::new("python3")
                .arg(root.join("tools/plant_faults.py"))
                .args([fault, &src.to_string_lossy(), &out.to_string_lossy()])
                .output()
                .unwrap();
            assert!(
                done.status.success(),
                "{fault}: {}",
                String::from_utf8_lossy(&done.stderr)
            );
            let manifest: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(format!("{}.planted.json", out.display())).unwrap(),
            )
            .unwrap();
            let trace = crate::test_support::load_file(&out);
            let tree = build(&trace, TreeOptions::default());
            let checks = checks(&trace, &tree);
            for id in manifest["expected"].as_array().unwrap() {
                let c = find(&checks, id.as_str().unwrap());
                assert!(
                    matches!(c.status, Status::Warn | Status::Fail),
                    "{fault}: {} is {}: {}",
                    c.id,
                    c.status.as_str(),
                    c.summary
                );
                eprintln!("{fault}: {} {}: {}", c.id, c.status.as_str(), c.summary);
            }
        }
    }
}
