//! The dependency graph of a window, as HTA builds it: a start and an end
//! node for every host op, runtime or driver call and GPU event of the
//! window, and edges for the time inside each (operator), the host call
//! stacks and the runtime lock (dependency), launches, back-to-back
//! kernels of a stream and synchronisations.

use rustc_hash::FxHashMap;

use super::events::{Row, View};
use super::time_key;
use crate::trace::{Cat, IdentId, StrId, Trace};

/// A gap from a stream's previous GPU event shorter than this (µs) is a
/// kernel-kernel dependency.
pub const KERNEL_KERNEL_DELAY_US: f64 = 1500.0;

/// Calls serialised by the CUDA runtime lock.
const LOCK_CALLS: &[&str] = &["cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"];

/// Calls that block the host until the GPU catches up: the time inside
/// them is not the host's own work.
const BLOCKING_CALLS: &[&str] = &[
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// What an edge stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Time inside a host op or call, or a GPU event's duration.
    Operator,
    /// Zero-cost ordering (consecutive top-level ops, the runtime lock).
    Dependency,
    /// From a launch call's start to its GPU event's start.
    LaunchDelay,
    /// From a stream's previous GPU event's end to the next one's start.
    KernelKernelDelay,
    /// A GPU event the host (or another stream) waited for.
    SyncDependency,
}

impl EdgeKind {
    /// Every kind, in the order of [`super::CriticalPath::graph_edges`].
    pub const ALL: [EdgeKind; 5] = [
        EdgeKind::Operator,
        EdgeKind::Dependency,
        EdgeKind::LaunchDelay,
        EdgeKind::KernelKernelDelay,
        EdgeKind::SyncDependency,
    ];

    /// HTA's name of the edge type.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Operator => "critical_path_operator",
            EdgeKind::Dependency => "critical_path_dependency",
            EdgeKind::LaunchDelay => "critical_path_kernel_launch_delay",
            EdgeKind::KernelKernelDelay => "critical_path_kernel_kernel_delay",
            EdgeKind::SyncDependency => "critical_path_sync_dependency",
        }
    }

    /// Whether the edge costs nothing whatever the times.
    fn zero_weight(self) -> bool {
        matches!(self, EdgeKind::Dependency | EdgeKind::SyncDependency)
    }
}

/// A node: the start or end of a row of the view.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// The row (index into the view's rows).
    pub row: u32,
    /// Its time, µs.
    pub ts: f64,
    /// A start node (else an end node).
    pub start: bool,
}

/// An edge.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// What it stands for.
    pub kind: EdgeKind,
    /// Its weight, µs (negative when events overlap).
    pub weight: f64,
    /// The row the edge's time is charged to (operator and kernel-kernel
    /// edges).
    pub row: Option<u32>,
}

/// The window's graph.
pub struct Graph {
    /// The nodes, by time (then event, starts first).
    pub nodes: Vec<Node>,
    /// The edges, in the order first added.
    pub edges: Vec<Edge>,
    /// Edge position by (source, destination): a repeated edge replaces
    /// the first.
    index: FxHashMap<(u32, u32), u32>,
    /// Per row of the view: its start node (ends follow from `end_of`).
    start_of: Vec<u32>,
    /// Per row of the view: its end node.
    end_of: Vec<u32>,
    /// GPU events with no incoming edge.
    pub unlinked_kernels: usize,
}

/// No node.
const NONE: u32 = u32::MAX;

/// Names looked up once.
struct Names {
    lock: Vec<StrId>,
    blocking: Vec<StrId>,
    stream_sync: Vec<StrId>,
    context_sync: Vec<StrId>,
}

impl Names {
    fn of(trace: &Trace) -> Names {
        let ids = |list: &[&str]| {
            list.iter()
                .filter_map(|n| trace.strings().lookup(n))
                .collect()
        };
        Names {
            lock: ids(LOCK_CALLS),
            blocking: ids(BLOCKING_CALLS),
            stream_sync: ids(&["Stream Sync"]),
            context_sync: ids(&["Context Sync"]),
        }
    }

    /// For a stream synchronisation Some(false), for a device one
    /// Some(true); event waits are not modelled.
    fn sync(&self, r: &Row) -> Option<bool> {
        if !matches!(r.cat, Cat::CudaSync | Cat::Other) {
            None
        } else if Names::is(&self.context_sync, r) {
            Some(true)
        } else {
            Names::is(&self.stream_sync, r).then_some(false)
        }
    }

    fn is(list: &[StrId], r: &Row) -> bool {
        r.name.is_some_and(|n| list.contains(&n))
    }
}

/// The rows of the window `[from, to]` HTA keeps: host rows starting in
/// it with a positive duration, and the GPU rows such a host row points
/// to.
pub fn clip(view: &View, from: f64, to: f64) -> Vec<u32> {
    let mut keep = vec![false; view.rows.len()];
    for (i, r) in view.rows.iter().enumerate() {
        if r.stream == -1 && r.ts >= from && r.ts <= to && r.dur() > 0.0 {
            keep[i] = true;
            if let Some(g) = view.points_to[i]
                && view.rows[g as usize].stream != -1
            {
                keep[g as usize] = true;
            }
        }
    }
    (0..view.rows.len() as u32)
        .filter(|&i| keep[i as usize])
        .collect()
}

/// Whether a kept row gets nodes.
fn has_nodes(view: &View, i: u32) -> bool {
    let r = &view.rows[i as usize];
    if r.stream == -1 {
        matches!(r.cat, Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver)
    } else {
        view.launcher[i as usize].is_some()
    }
}

impl Graph {
    /// The graph of the clipped rows `kept` (from [`clip`]).
    pub fn build(trace: &Trace, view: &View, kept: &[u32]) -> Graph {
        let mut g = Graph::nodes(view, kept);
        let names = Names::of(trace);
        g.lock_pass(view, &names);
        g.stack_pass(trace, view, kept, &names);
        g.gpu_pass(view, kept, &names);
        g
    }

    /// Two nodes per kept row that has nodes, by (time, event, start
    /// first).
    fn nodes(view: &View, kept: &[u32]) -> Graph {
        // One integer per node, (time, row, start first), unique and
        // sorted as integers: rows are in event order, so the row breaks
        // ties as the event would.
        let mut keys: Vec<u128> = Vec::with_capacity(kept.len() * 2);
        for &i in kept.iter().filter(|&&i| has_nodes(view, i)) {
            let r = &view.rows[i as usize];
            let row = u128::from(i) << 1;
            keys.push(u128::from(time_key(r.ts)) << 64 | row);
            keys.push(u128::from(time_key(r.end)) << 64 | row | 1);
        }
        keys.sort_unstable();
        let nodes: Vec<Node> = keys
            .into_iter()
            .map(|k| {
                let row = (k as u64 >> 1) as u32;
                let start = k & 1 == 0;
                let r = &view.rows[row as usize];
                Node {
                    row,
                    ts: if start { r.ts } else { r.end },
                    start,
                }
            })
            .collect();
        let mut start_of = vec![NONE; view.rows.len()];
        let mut end_of = vec![NONE; view.rows.len()];
        for (k, n) in nodes.iter().enumerate() {
            let slot = if n.start { &mut start_of } else { &mut end_of };
            slot[n.row as usize] = k as u32;
        }
        // Most nodes have one or two edges in: room for about that many
        // spares the edge list and its index their regrowth.
        let room = nodes.len() * 3 / 2;
        let mut index = FxHashMap::default();
        index.reserve(room);
        Graph {
            nodes,
            edges: Vec::with_capacity(room),
            index,
            start_of,
            end_of,
            unlinked_kernels: 0,
        }
    }

    /// Adds (or replaces) the edge `src → dst`.
    fn add(&mut self, src: u32, dst: u32, kind: EdgeKind, row: Option<u32>) {
        let weight = if kind.zero_weight() {
            0.0
        } else {
            self.nodes[dst as usize].ts - self.nodes[src as usize].ts
        };
        let e = Edge {
            src,
            dst,
            kind,
            weight,
            row,
        };
        match self.index.get(&(src, dst)) {
            Some(&k) => self.edges[k as usize] = e,
            None => {
                self.index.insert((src, dst), self.edges.len() as u32);
                self.edges.push(e);
            }
        }
    }

    /// The edge `src → dst`, if any.
    pub fn edge(&self, src: u32, dst: u32) -> Option<&Edge> {
        self.index
            .get(&(src, dst))
            .map(|&k| &self.edges[k as usize])
    }

    /// The runtime lock: across every thread, each end of a locked call
    /// closes every locked call begun since the last end.
    fn lock_pass(&mut self, view: &View, names: &Names) {
        let mut pending: Vec<u32> = Vec::new();
        let mut last_end: Option<u32> = None;
        for k in 0..self.nodes.len() as u32 {
            let n = self.nodes[k as usize];
            let r = &view.rows[n.row as usize];
            if r.stream != -1 || !Names::is(&names.lock, r) {
                continue;
            }
            if n.start {
                pending.push(k);
                last_end = None;
                continue;
            }
            while let Some(s) = pending.pop() {
                if self.nodes[s as usize].row == n.row {
                    self.add(s, k, EdgeKind::Operator, Some(n.row));
                } else {
                    self.add(s, k, EdgeKind::Dependency, None);
                }
            }
            if let Some(p) = last_end {
                self.add(p, k, EdgeKind::Dependency, None);
            }
            last_end = Some(k);
        }
    }
}

/// The threads of the kept host rows, each with its rows (trace order);
/// a backward thread is merged into the forward one when the names say
/// which is which, and threads with GPU streams are left out.
fn cpu_threads(trace: &Trace, view: &View, kept: &[u32]) -> Vec<Vec<u32>> {
    type Key = (IdentId, IdentId);
    let has = |needle: &str| -> Vec<Key> {
        let mut seen: Vec<Key> = Vec::new();
        let mut cache: FxHashMap<StrId, bool> = FxHashMap::default();
        for &i in kept {
            let r = &view.rows[i as usize];
            if !matches!(r.cat, Cat::CpuOp | Cat::UserAnnotation) {
                continue;
            }
            let Some(n) = r.name else { continue };
            let hit = *cache
                .entry(n)
                .or_insert_with(|| trace.string(n).contains(needle));
            if hit && !seen.contains(&(r.pid, r.tid)) {
                seen.push((r.pid, r.tid));
            }
        }
        seen
    };
    let (fwd, bwd) = (has("forward"), has("autograd"));
    let merge = (fwd.len() == 1 && bwd.len() == 1 && fwd[0] != bwd[0]).then(|| (bwd[0], fwd[0]));
    let mut at: FxHashMap<Key, usize> = FxHashMap::default();
    // Per thread: rows, any stream > 0, any stream in 0..=0.
    let mut threads: Vec<(Vec<u32>, bool, bool)> = Vec::new();
    for &i in kept {
        let r = &view.rows[i as usize];
        let mut key = (r.pid, r.tid);
        if let Some((from, to)) = merge
            && key == from
        {
            key = to;
        }
        let k = *at.entry(key).or_insert_with(|| {
            threads.push((Vec::new(), false, false));
            threads.len() - 1
        });
        let t = &mut threads[k];
        t.0.push(i);
        t.1 |= r.stream > 0;
        t.2 |= r.stream == 0;
    }
    threads
        .into_iter()
        .filter(|(_, gpu, zero)| !gpu && !zero)
        .map(|(rows, _, _)| rows)
        .collect()
}

/// Entering or leaving a host event during the call-stack walk.
#[derive(Clone, Copy)]
struct Step {
    row: u32,
    ts: f64,
    dur: f64,
    enter: bool,
}

/// HTA's order of the walk's steps at equal times: ends before starts
/// (host events here all last a while), shorter ends and longer starts
/// first, then the later event's end and the earlier event's start. The
/// key is unique per step.
fn walk_key(s: &Step) -> (u64, bool, u64, u32) {
    let dur = time_key(s.dur);
    if s.enter {
        (time_key(s.ts), true, !dur, s.row)
    } else {
        (time_key(s.ts), false, dur, !s.row)
    }
}

impl Graph {
    /// The host call stacks: each thread's events walked depth first,
    /// chaining every start and end to the node before it; between
    /// top-level events the chain costs nothing.
    fn stack_pass(&mut self, trace: &Trace, view: &View, kept: &[u32], names: &Names) {
        let threads = cpu_threads(trace, view, kept);
        let mut thread_of = vec![NONE; view.rows.len()];
        for (t, rows) in threads.iter().enumerate() {
            for &i in rows {
                thread_of[i as usize] = t as u32;
            }
        }
        // The nodes are in time order already: each thread's steps are
        // taken from them, and only runs at one time are put in walk order.
        let mut steps: Vec<Vec<Step>> = threads
            .iter()
            .map(|rows| Vec::with_capacity(rows.len() * 2))
            .collect();
        for n in &self.nodes {
            let t = thread_of[n.row as usize];
            if t != NONE {
                steps[t as usize].push(Step {
                    row: n.row,
                    ts: n.ts,
                    dur: view.rows[n.row as usize].dur(),
                    enter: n.start,
                });
            }
        }
        for mut thread in steps {
            for run in thread.chunk_by_mut(|a, b| a.ts == b.ts) {
                if run.len() > 1 {
                    run.sort_unstable_by_key(walk_key);
                }
            }
            self.walk(view, &thread, names);
        }
    }

    /// One thread's walk.
    fn walk(&mut self, view: &View, steps: &[Step], names: &Names) {
        let mut last: Option<u32> = None;
        let mut open: Vec<u32> = Vec::new();
        let lock = |row: u32| Names::is(&names.lock, &view.rows[row as usize]);
        for s in steps {
            let (start, end) = (self.start_of[s.row as usize], self.end_of[s.row as usize]);
            let node = if s.enter { start } else { end };
            if let Some(l) = last {
                let from = self.nodes[l as usize];
                // Locked calls are chained by the lock pass, except an end
                // followed by a start.
                let end_then_start = !from.start && s.enter;
                let shared = lock(from.row) && lock(s.row) && !end_then_start;
                if !shared {
                    let attr = if from.start {
                        Some(from.row)
                    } else if !s.enter {
                        Some(s.row)
                    } else {
                        open.last().copied()
                    };
                    let kind = if s.enter && open.is_empty() {
                        EdgeKind::Dependency
                    } else {
                        EdgeKind::Operator
                    };
                    self.add(l, node, kind, attr.filter(|_| kind == EdgeKind::Operator));
                    if !s.enter && Names::is(&names.blocking, &view.rows[s.row as usize]) {
                        let k = self.index[&(l, node)];
                        self.edges[k as usize].weight = 0.0;
                    }
                }
            }
            if s.enter {
                open.push(s.row);
            } else if let Some(p) = open.iter().rposition(|&r| r == s.row) {
                open.remove(p);
            }
            last = Some(node);
        }
    }

    /// The GPU events by start (synchronisations by end): each event's
    /// duration, and the edge that made it wait: its launch when the
    /// stream was idle, else the stream's previous event when close.
    fn gpu_pass(&mut self, view: &View, kept: &[u32], names: &Names) {
        let mut gpu: Vec<(f64, u32)> = kept
            .iter()
            .filter(|&&i| view.rows[i as usize].stream != -1 && has_nodes(view, i))
            .map(|&i| {
                let r = &view.rows[i as usize];
                (if names.sync(r).is_some() { r.end } else { r.ts }, i)
            })
            .collect();
        gpu.sort_unstable_by_key(|&(t, i)| (time_key(t), i));
        let mut last: FxHashMap<i64, u32> = FxHashMap::default();
        for (_, i) in gpu {
            let r = view.rows[i as usize];
            if let Some(every) = names.sync(&r) {
                self.sync(view, i, every, &last);
                continue;
            }
            let (start, end) = (self.start_of[i as usize], self.end_of[i as usize]);
            self.add(start, end, EdgeKind::Operator, Some(i));
            let runtime = view.launcher[i as usize].expect("a kept GPU row has a launch");
            let call = self.start_of[runtime as usize];
            let prev = last.get(&r.stream).copied();
            let prev_end = prev.map(|p| self.nodes[p as usize].ts);
            let launch_ts = view.rows[runtime as usize].ts;
            let idle_queue = view.queue[i as usize] == Some((1, 0));
            if call != NONE && idle_queue && prev_end.is_none_or(|e| e < launch_ts) {
                self.add(call, start, EdgeKind::LaunchDelay, None);
            } else if let Some(p) = prev
                && r.ts - self.nodes[p as usize].ts < KERNEL_KERNEL_DELAY_US
            {
                let prev_row = self.nodes[p as usize].row;
                self.add(p, start, EdgeKind::KernelKernelDelay, Some(prev_row));
            } else {
                self.unlinked_kernels += 1;
            }
            last.insert(r.stream, end);
        }
    }

    /// A stream or device synchronisation: the host call that waited ends
    /// after the stream's (every stream's) last GPU event so far.
    fn sync(&mut self, view: &View, i: u32, every: bool, last: &FxHashMap<i64, u32>) {
        let Some(call) = view.launcher[i as usize] else {
            return;
        };
        let call_end = self.end_of[call as usize];
        if call_end == NONE {
            return;
        }
        let r = &view.rows[i as usize];
        let mut sources: Vec<u32> = if every {
            last.values().copied().collect()
        } else {
            last.get(&r.stream).copied().into_iter().collect()
        };
        sources.sort_unstable();
        for s in sources {
            self.add(s, call_end, EdgeKind::SyncDependency, None);
        }
    }
}
