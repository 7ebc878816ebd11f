//! The events the critical path reads, as Holistic Trace Analysis (HTA)
//! sees them: times rounded inwards to whole µs when the trace has
//! fractional timestamps, a stream number (-1 for host rows), the launch
//! links of its correlation join, the window's clipped set and the
//! per-stream queue lengths at each launch.

use rustc_hash::FxHashMap;

use crate::trace::{Cat, EventId, IdentId, StrId, Trace};

/// Launch calls that add to a stream's queue (HTA's list; graph launches
/// and `hipModuleLaunchKernel` are not in it).
const QUEUED_LAUNCHES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
    "hipMemcpyWithStream",
    "runFunction - job_prep_and_submit_for_execution",
];

/// GPU synchronisation events HTA puts on the GPU side of its join even
/// without a stream.
const GPU_SIDE_SYNCS: &[&str] = &["Event Sync", "Context Sync"];

/// One event with times and a category.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The event.
    pub id: EventId,
    /// Start, µs, trace time (rounded up when rounding).
    pub ts: f64,
    /// End, µs, trace time (rounded down when rounding).
    pub end: f64,
    /// The `stream` arg; -1 when absent (host rows).
    pub stream: i64,
    /// The category.
    pub cat: Cat,
    /// The name.
    pub name: Option<StrId>,
    /// The process.
    pub pid: IdentId,
    /// The thread.
    pub tid: IdentId,
}

impl Row {
    /// `end - ts` (can be -1 after rounding).
    pub fn dur(&self) -> f64 {
        self.end - self.ts
    }
}

/// Every row of the trace with its launch links and queue lengths.
pub struct View {
    /// The rows, in trace order.
    pub rows: Vec<Row>,
    /// Per row: for a GPU-side row, the host row of its correlation id
    /// (the last in trace order).
    pub launcher: Vec<Option<u32>>,
    /// Per row: for a host row with a correlation id, the GPU-side row it
    /// points to (the last of that id: a graph launch keeps one).
    pub points_to: Vec<Option<u32>>,
    /// Per row: the stream's queue length just after this GPU row's launch
    /// was queued, and just after this row started; None when its launch
    /// call does not queue.
    pub queue: Vec<Option<(i32, i32)>>,
}

/// Times under HTA's rounding.
#[derive(Clone, Copy)]
struct Clock {
    round: bool,
}

impl Clock {
    fn times(self, ts: f64, dur: f64) -> (f64, f64) {
        if self.round {
            (ts.ceil(), (ts + dur).floor())
        } else {
            (ts, ts + dur)
        }
    }
}

impl View {
    /// The rows of `trace` (events with a start, a duration and a
    /// category), rounded as HTA rounds when `round` and the trace has a
    /// fractional timestamp.
    pub fn of(trace: &Trace, round: bool) -> View {
        let fractional = trace
            .events()
            .any(|(_, e)| !e.ts.is_nan() && !e.dur.is_nan() && !e.ts_is_int);
        let clock = Clock {
            round: round && fractional,
        };
        let n = trace.len();
        let mut rows = Vec::with_capacity(n);
        let mut corr: Vec<Option<i64>> = Vec::with_capacity(n);
        let sync_ids: Vec<StrId> = GPU_SIDE_SYNCS
            .iter()
            .filter_map(|n| trace.strings().lookup(n))
            .collect();
        let mut gpu_side = Vec::with_capacity(n);
        for (id, e) in trace.events() {
            if e.ts.is_nan() || e.dur.is_nan() || e.cat == Cat::Missing {
                continue;
            }
            let links = trace.args(id).map(|a| a.links());
            let stream = links.and_then(|l| l.stream).unwrap_or(-1);
            let c = links.and_then(|l| l.correlation);
            let side = (stream >= 0 && c.is_some_and(|c| c >= 0))
                || e.name.is_some_and(|n| sync_ids.contains(&n));
            let (ts, end) = clock.times(e.ts, e.dur);
            rows.push(Row {
                id,
                ts,
                end,
                stream,
                cat: e.cat,
                name: e.name,
                pid: e.pid,
                tid: e.tid,
            });
            corr.push(c);
            gpu_side.push(side);
        }
        let (launcher, points_to) = join(&corr, &gpu_side);
        let queue = queue_lengths(trace, &rows, &launcher);
        View {
            rows,
            launcher,
            points_to,
            queue,
        }
    }
}

/// HTA's correlation join: each GPU-side row gets the last host row of
/// its id, each host row the last GPU-side row of its id.
type Join = (Vec<Option<u32>>, Vec<Option<u32>>);

fn join(corr: &[Option<i64>], gpu_side: &[bool]) -> Join {
    let mut host: FxHashMap<i64, u32> = FxHashMap::default();
    let mut gpu: FxHashMap<i64, u32> = FxHashMap::default();
    for (i, (c, &g)) in corr.iter().zip(gpu_side).enumerate() {
        if let Some(c) = *c {
            if g {
                gpu.insert(c, i as u32);
            } else {
                host.insert(c, i as u32);
            }
        }
    }
    let mut launcher = vec![None; corr.len()];
    let mut points_to = vec![None; corr.len()];
    for (i, (c, &g)) in corr.iter().zip(gpu_side).enumerate() {
        let Some(c) = *c else { continue };
        if g {
            launcher[i] = host.get(&c).copied();
        } else {
            points_to[i] = gpu.get(&c).copied();
        }
    }
    (launcher, points_to)
}

/// The queue length of each GPU row's stream after its launch (+1 at the
/// launch call's start) and after its own start (-1), over the whole
/// trace; at equal times a launch counts before a start.
fn queue_lengths(trace: &Trace, rows: &[Row], launcher: &[Option<u32>]) -> Vec<Option<(i32, i32)>> {
    let queued: Vec<StrId> = QUEUED_LAUNCHES
        .iter()
        .filter_map(|n| trace.strings().lookup(n))
        .collect();
    // (stream, time, 0 for +1 / 1 for -1, row)
    let mut points: Vec<(i64, f64, u8, u32)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(l) = launcher[i] else { continue };
        if r.stream == -1 || !rows[l as usize].name.is_some_and(|n| queued.contains(&n)) {
            continue;
        }
        points.push((r.stream, rows[l as usize].ts, 0, i as u32));
        points.push((r.stream, r.ts, 1, i as u32));
    }
    // (stream, time, kind, row) is unique per point.
    points.sort_unstable_by_key(|&(s, t, kind, row)| (s, super::time_key(t), kind, row));
    let mut out = vec![None; rows.len()];
    let mut after_launch = vec![0i32; rows.len()];
    let mut level = 0i32;
    let mut stream = None;
    for &(s, _, kind, row) in &points {
        if stream != Some(s) {
            stream = Some(s);
            level = 0;
        }
        if kind == 0 {
            level += 1;
            after_launch[row as usize] = level;
        } else {
            level -= 1;
            out[row as usize] = Some((after_launch[row as usize], level));
        }
    }
    out
}
