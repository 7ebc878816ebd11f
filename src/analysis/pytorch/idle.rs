//! Idle time of each GPU stream, split as Holistic Trace Analysis (HTA)
//! splits it: every gap between two consecutive GPU events of a stream is
//! charged to the event after it, as *host wait* (the launch call of that
//! event began after the previous one had finished), *kernel wait* (a gap
//! under [`KERNEL_WAIT_US`]) or *other*. [`Rules`] says how the gaps are
//! measured: HTA's way (events rounded inwards to whole µs, the last
//! profiler step dropped, the predecessor by start time) or ours (exact
//! times, the whole trace, the running end of the stream).

use rustc_hash::FxHashMap;

use crate::trace::args::LinkIds;
use crate::trace::{Cat, Event, EventId, StrId, Trace};

/// Gaps shorter than this (µs, strictly) whose launch call began before
/// the previous event ended are kernel waits (HTA's
/// `consecutive_kernel_delay`).
pub const KERNEL_WAIT_US: f64 = 30.0;

/// Prefix of the profiler step annotations (`ProfilerStep#N`).
const STEP_PREFIX: &str = "ProfilerStep#";

/// What a gap is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// The launch call of the next event began after the previous one ended.
    HostWait,
    /// A short gap between events queued back to back.
    KernelWait,
    /// Any other gap, and a stream's first event (no gap before it).
    Other,
}

impl Category {
    /// Every category, in HTA's row order.
    pub const ALL: [Category; 3] = [Category::HostWait, Category::KernelWait, Category::Other];

    /// HTA's name of the category.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::HostWait => "host_wait",
            Category::KernelWait => "kernel_wait",
            Category::Other => "other",
        }
    }
}

/// How gaps are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Round every event inwards to whole µs (`ceil` of its start, `floor`
    /// of its end) when the trace has fractional timestamps, as HTA does.
    pub round_to_us: bool,
    /// Drop what HTA drops when the trace names two or more profiler
    /// steps: every GPU event whose launch call does not start before the
    /// last step annotation.
    pub drop_last_step: bool,
    /// Measure each gap from the end of the event that started just before
    /// (HTA; overlapping events give negative gaps) instead of from the
    /// latest end so far (ours; a gap is never negative).
    pub predecessor_by_start: bool,
    /// Give a GPU event whose correlation id no host event carries the
    /// start of the trace's first event as its launch time (what HTA's
    /// join leaves it), instead of no launch.
    pub unlinked_launch_at_first_event: bool,
}

impl Rules {
    /// HTA's `get_idle_time_breakdown` with its defaults.
    pub const HTA: Rules = Rules {
        round_to_us: true,
        drop_last_step: true,
        predecessor_by_start: true,
        unlinked_launch_at_first_event: true,
    };
    /// Exact times over the whole trace.
    pub const EXACT: Rules = Rules {
        round_to_us: false,
        drop_last_step: false,
        predecessor_by_start: false,
        unlinked_launch_at_first_event: false,
    };
}

/// A GPU event of the analysis and the launch call HTA links it to.
#[derive(Debug, Clone, Copy)]
struct GpuOp {
    id: EventId,
    stream: i64,
    runtime: Option<EventId>,
    /// It has a correlation id that no host event carries.
    unlinked: bool,
}

/// What the gap computation reads of a trace, found once for every
/// [`Rules`]: the GPU events with their launch calls, in trace order.
pub struct Links {
    ops: Vec<GpuOp>,
    /// Whether some timestamp is fractional (HTA rounds only then).
    fractional: bool,
    /// The start of the last profiler step annotation, when the trace
    /// names two or more steps.
    last_step: Option<f64>,
    /// The earliest start of an event (µs, trace time): times are
    /// computed relative to it.
    base: f64,
}

/// One GPU event and the gap before it on its stream.
#[derive(Debug, Clone, Copy)]
pub struct Gap {
    /// The stream number.
    pub stream: i64,
    /// The GPU event after the gap.
    pub next: EventId,
    /// The GPU event whose end starts the gap; None for a stream's first.
    pub prev: Option<EventId>,
    /// The launch call of `next`, when the trace links one.
    pub runtime: Option<EventId>,
    /// Where the gap starts (µs, trace time); NaN for a stream's first event.
    pub start: f64,
    /// Where it ends: the start of `next` (µs, trace time).
    pub end: f64,
    /// Its length (µs): `end - start`; NaN for a stream's first event.
    pub length: f64,
    /// What it is charged to.
    pub category: Category,
}

/// HTA's "GPU side" of the correlation join: events with a stream and a
/// correlation id, and the GPU's `Event Sync` and `Context Sync` records
/// (`cuda_sync`; any category HTA does not know reads the same).
fn is_gpu_side(trace: &Trace, e: &Event, links: Option<LinkIds>) -> bool {
    let linked = links
        .is_some_and(|a| a.stream.is_some_and(|s| s >= 0) && a.correlation.is_some_and(|c| c >= 0));
    linked
        || (matches!(e.cat, Cat::CudaSync | Cat::Other)
            && matches!(trace.name_of(e), "Event Sync" | "Context Sync"))
}

/// Whether each interned name is a profiler step's, worked out once per
/// name (a trace repeats few names many times).
struct StepNames(Vec<u8>);

impl StepNames {
    fn is_step(&mut self, trace: &Trace, name: Option<StrId>) -> bool {
        let Some(id) = name else { return false };
        if self.0.len() <= id.index() {
            self.0.resize(trace.strings().len().max(id.index() + 1), 0);
        }
        let slot = &mut self.0[id.index()];
        if *slot == 0 {
            *slot = if is_step_name(trace.string(id)) { 1 } else { 2 };
        }
        *slot == 1
    }
}

impl Links {
    /// The GPU events of `trace` HTA's idle analysis reads (kernels,
    /// copies and fills with a stream other than -1), each with the host
    /// event of the same correlation id (the last one in trace order, as
    /// HTA's join leaves it).
    pub fn of(trace: &Trace) -> Links {
        let mut host: FxHashMap<i64, EventId> = FxHashMap::default();
        // GPU events with their correlation id, when GPU side.
        let mut gpu: Vec<(EventId, i64, Option<i64>)> = Vec::new();
        let mut fractional = false;
        let mut names = StepNames(Vec::new());
        let mut steps: Vec<StrId> = Vec::new();
        let mut last_step = f64::NEG_INFINITY;
        let mut base = f64::INFINITY;
        for (id, e) in trace.events() {
            // Stubs (events no pass keeps) have no times and no links.
            if e.dur.is_nan() || e.ts.is_nan() {
                continue;
            }
            fractional |= !e.ts_is_int;
            base = base.min(e.ts);
            let links = trace.args(id).map(|a| a.links());
            let gpu_side = is_gpu_side(trace, e, links);
            if e.cat.is_gpu()
                && let Some(stream) = links.and_then(|l| l.stream).filter(|&s| s != -1)
            {
                let corr = links.and_then(|l| l.correlation).filter(|_| gpu_side);
                gpu.push((id, stream, corr));
            }
            if gpu_side {
                continue;
            }
            if names.is_step(trace, e.name) {
                let name = e.name.expect("a step has a name");
                if !steps.contains(&name) {
                    steps.push(name);
                }
                last_step = last_step.max(e.ts);
            }
            if let Some(c) = links.and_then(|l| l.correlation) {
                host.insert(c, id);
            }
        }
        let ops = gpu
            .into_iter()
            .map(|(id, stream, corr)| {
                let runtime = corr.and_then(|c| host.get(&c).copied());
                GpuOp {
                    id,
                    stream,
                    runtime,
                    unlinked: corr.is_some() && runtime.is_none(),
                }
            })
            .collect();
        Links {
            ops,
            fractional,
            last_step: (steps.len() >= 2).then_some(last_step),
            base: if base.is_finite() { base } else { 0.0 },
        }
    }

    /// True when the trace has GPU events to analyse.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The gaps of every stream under `rules`: streams in order of their
    /// first event in the trace, each stream's events by start time.
    pub fn gaps(&self, trace: &Trace, rules: Rules) -> Vec<(i64, Vec<Gap>)> {
        let clock = Clock {
            round: rules.round_to_us && self.fractional,
            base: self.base,
        };
        let cutoff = self
            .last_step
            .filter(|_| rules.drop_last_step)
            .map(|s| clock.start(s));
        let mut streams: Vec<(i64, Vec<Timed>)> = Vec::new();
        let mut at: FxHashMap<i64, usize> = FxHashMap::default();
        let first = trace.ids().next().map(|id| trace.event(id));
        let first_start = first
            .filter(|e| !e.dur.is_nan())
            .map_or(f64::NAN, |e| clock.start(e.ts));
        for op in &self.ops {
            let launch = op.runtime.map(|r| clock.start(trace.event(r).ts));
            if let Some(s) = cutoff
                && !launch.is_some_and(|l| l < s)
            {
                continue;
            }
            let launch = match launch {
                None if op.unlinked && rules.unlinked_launch_at_first_event => Some(first_start),
                l => l,
            };
            let e = trace.event(op.id);
            let k = *at.entry(op.stream).or_insert_with(|| {
                streams.push((op.stream, Vec::new()));
                streams.len() - 1
            });
            streams[k].1.push(Timed {
                op: *op,
                ts: clock.start(e.ts),
                end: clock.end(e.ts, e.dur),
                launch: launch.unwrap_or(f64::NAN),
            });
        }
        streams
            .into_iter()
            .map(|(s, mut evs)| {
                // Stable: events starting together stay in trace order.
                evs.sort_by(|a, b| a.ts.total_cmp(&b.ts));
                let mut gaps = stream_gaps(&evs, rules.predecessor_by_start);
                for g in &mut gaps {
                    g.start += self.base;
                    g.end += self.base;
                }
                (s, gaps)
            })
            .collect()
    }
}

/// Times under the rules in force, relative to the trace's first event:
/// differences of times that close are exact, and an end computed from
/// them keeps the precision of the duration (at the trace's absolute
/// times one float step is about 0.2 ns).
struct Clock {
    round: bool,
    base: f64,
}

impl Clock {
    /// An event's start (rounded up to a whole µs when rounding).
    fn start(&self, ts: f64) -> f64 {
        if self.round {
            ts.ceil() - self.base.ceil()
        } else {
            ts - self.base
        }
    }

    /// An event's end (rounded down to a whole µs when rounding, from the
    /// absolute end as HTA rounds it).
    fn end(&self, ts: f64, dur: f64) -> f64 {
        if self.round {
            (ts + dur).floor() - self.base.ceil()
        } else {
            (ts - self.base) + dur
        }
    }
}

/// A GPU event with its times under the rules in force.
struct Timed {
    op: GpuOp,
    ts: f64,
    end: f64,
    /// The start of its launch call; NaN when unknown.
    launch: f64,
}

/// The gap before each of a stream's events (sorted by start).
fn stream_gaps(evs: &[Timed], by_start: bool) -> Vec<Gap> {
    let mut out = Vec::with_capacity(evs.len());
    let mut prev: Option<(EventId, f64)> = None;
    for t in evs {
        let gap = match prev {
            None => Gap {
                stream: t.op.stream,
                next: t.op.id,
                prev: None,
                runtime: t.op.runtime,
                start: f64::NAN,
                end: t.ts,
                length: f64::NAN,
                category: Category::Other,
            },
            Some((p, start)) => {
                let raw = t.ts - start;
                let length = if by_start { raw } else { raw.max(0.0) };
                Gap {
                    stream: t.op.stream,
                    next: t.op.id,
                    prev: Some(p),
                    runtime: t.op.runtime,
                    start,
                    end: t.ts,
                    length,
                    category: categorize(t.launch, start, length),
                }
            }
        };
        out.push(gap);
        prev = match prev {
            Some((p, end)) if !by_start && end >= t.end => Some((p, end)),
            _ => Some((t.op.id, t.end)),
        };
    }
    out
}

/// HTA's rule: host wait when the launch began after the gap started,
/// else kernel wait when the gap is short, else other.
fn categorize(launch: f64, start: f64, length: f64) -> Category {
    if launch > start {
        Category::HostWait
    } else if length < KERNEL_WAIT_US {
        Category::KernelWait
    } else {
        Category::Other
    }
}

/// `ProfilerStep#` followed by digits.
fn is_step_name(name: &str) -> bool {
    name.strip_prefix(STEP_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The idle time of one stream and category: the kernels charged to it
/// and the sum of their gaps (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Total {
    /// Events whose preceding gap is in the category (a stream's first
    /// event counts as `other`).
    pub kernels: usize,
    /// The sum of the gaps (µs), the first event's missing gap skipped.
    pub idle_us: f64,
}

/// Per stream (in order) the totals of the categories that occur.
pub fn totals(gaps: &[(i64, Vec<Gap>)]) -> Vec<(i64, Vec<(Category, Total)>)> {
    gaps.iter()
        .map(|(s, g)| {
            let mut t = [Total::default(); 3];
            for gap in g {
                let k = &mut t[gap.category as usize];
                k.kernels += 1;
                if !gap.length.is_nan() {
                    k.idle_us += gap.length;
                }
            }
            let present = Category::ALL
                .into_iter()
                .zip(t)
                .filter(|(_, t)| t.kernels > 0)
                .collect();
            (*s, present)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(i: usize, ts: f64, end: f64, launch: f64) -> Timed {
        Timed {
            op: GpuOp {
                id: EventId::new(i),
                stream: 7,
                runtime: None,
                unlinked: false,
            },
            ts,
            end,
            launch,
        }
    }

    /// Kernels 0–10, 5–8 (inside the first), 20–25: HTA measures the third
    /// gap from the end of the event that started just before (8), so
    /// 20 − 8 = 12 and the second gap is 5 − 10 = −5; ours from the latest
    /// end (10): 10 and 0.
    #[test]
    fn overlapping_events_give_hta_negative_gaps_and_ours_none() {
        let evs = [
            timed(0, 0.0, 10.0, -1.0),
            timed(1, 5.0, 8.0, -1.0),
            timed(2, 20.0, 25.0, 1.0),
        ];
        let hta: Vec<f64> = stream_gaps(&evs, true).iter().map(|g| g.length).collect();
        assert!(hta[0].is_nan());
        assert_eq!(&hta[1..], &[-5.0, 12.0]);
        let ours: Vec<f64> = stream_gaps(&evs, false).iter().map(|g| g.length).collect();
        assert_eq!(&ours[1..], &[0.0, 10.0]);
        assert_eq!(stream_gaps(&evs, false)[2].prev, Some(EventId::new(0)));
    }

    #[test]
    fn categories_follow_the_launch_and_the_threshold() {
        assert_eq!(categorize(11.0, 10.0, 5.0), Category::HostWait);
        assert_eq!(categorize(10.0, 10.0, 29.9), Category::KernelWait);
        assert_eq!(categorize(10.0, 10.0, 30.0), Category::Other);
        assert_eq!(categorize(f64::NAN, 10.0, 500.0), Category::Other);
        assert_eq!(categorize(f64::NAN, 10.0, -3.0), Category::KernelWait);
    }

    #[test]
    fn step_names() {
        assert!(is_step_name("ProfilerStep#12"));
        assert!(!is_step_name("ProfilerStep#"));
        assert!(!is_step_name("ProfilerStep#1a"));
        assert!(!is_step_name("Step#1"));
    }
}
