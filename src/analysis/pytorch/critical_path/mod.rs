//! The critical path of a profiler step (or of any window), as Holistic
//! Trace Analysis (HTA) finds it: a dependency graph of the host's ops and
//! runtime calls and the GPU's events, its longest path, and the time on
//! that path by what bounds it.
//!
//! - [`events`]: the trace's rows as HTA reads them (rounding, links,
//!   queue lengths);
//! - [`graph`]: the window's dependency graph;
//! - [`path`]: the longest path through it;
//! - [`sheets`]: `critical_path_summary` and `critical_path`.

pub mod events;
pub mod graph;
pub mod path;
pub mod sheets;

use events::View;
use graph::{EdgeKind, Graph};

use std::time::Instant;

use crate::timings;
use rustc_hash::FxHashMap;

use crate::trace::{Cat, EventId, IdentId, Needs, StrId, Trace};

/// What the loader must keep: the report's events (the GPU's
/// synchronisation records, `cuda_sync`, are among them).
pub const NEEDS: Needs = Needs::EVENTS;

/// Which part of the trace to analyse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    /// The trace's longest `ProfilerStep#N`, or the whole trace when it
    /// has none.
    Auto,
    /// The `ProfilerStep#N` annotation with this N.
    Step(u64),
    /// From one time to another (µs, trace time, both included).
    Window(f64, f64),
}

/// What bounds the time of an edge of the path (HTA's categories).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BoundBy {
    /// Zero-cost orderings and synchronisations (HTA's empty category).
    Nothing,
    /// The host's own work.
    CpuBound,
    /// A collective kernel.
    GpuCommunication,
    /// Any other GPU event (copies and fills included).
    GpuCompute,
    /// The gap between two back-to-back GPU events of a stream.
    KernelKernelOverhead,
    /// From a launch call to its GPU event.
    LaunchOverhead,
}

impl BoundBy {
    /// Every category, in HTA's (alphabetical) order.
    pub const ALL: [BoundBy; 6] = [
        BoundBy::Nothing,
        BoundBy::CpuBound,
        BoundBy::GpuCommunication,
        BoundBy::GpuCompute,
        BoundBy::KernelKernelOverhead,
        BoundBy::LaunchOverhead,
    ];

    /// The position of the category in [`BoundBy::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// HTA's name of the category.
    pub fn as_str(self) -> &'static str {
        match self {
            BoundBy::Nothing => "",
            BoundBy::CpuBound => "cpu_bound",
            BoundBy::GpuCommunication => "gpu_communication_bound",
            BoundBy::GpuCompute => "gpu_compute_bound",
            BoundBy::KernelKernelOverhead => "gpu_kernel_kernel_overhead",
            BoundBy::LaunchOverhead => "gpu_kernel_launch_overhead",
        }
    }
}

/// One edge of the critical path.
#[derive(Debug, Clone)]
pub struct PathEdge {
    /// What the edge stands for.
    pub kind: EdgeKind,
    /// What bounds its time.
    pub bound_by: BoundBy,
    /// Its time, µs (negative where GPU events overlap; the search
    /// counted such an edge as zero).
    pub duration_us: f64,
    /// Where it begins and ends, µs, trace time.
    pub begin_us: f64,
    /// Where it ends.
    pub end_us: f64,
    /// The event its time is charged to: the op, call or GPU event it is
    /// inside (operator edges), the previous GPU event (kernel-kernel
    /// edges), else the event at its end.
    pub event: EventId,
    /// That event's stream (-1 on the host).
    pub stream: i64,
    /// Its process and thread.
    pub pid: IdentId,
    /// Its thread.
    pub tid: IdentId,
    /// A GPU event replayed by a graph launch.
    pub graph_replay: bool,
}

/// The critical path of a window and the graph it was found in.
#[derive(Debug, Clone)]
pub struct CriticalPath {
    /// The window, µs, trace time (after HTA's rounding).
    pub window: (f64, f64),
    /// What the window is: `ProfilerStep#N` or `whole trace` or `window`.
    pub label: String,
    /// Nodes of the graph.
    pub graph_nodes: usize,
    /// Edges of the graph, per kind (in [`EdgeKind`] order).
    pub graph_edges: [usize; 5],
    /// GPU events of the window with no incoming edge.
    pub unlinked_kernels: usize,
    /// The path's edges, in order.
    pub edges: Vec<PathEdge>,
}

impl CriticalPath {
    /// The time on the path per category present (HTA's summary): µs and
    /// share of the path's time (%), in [`BoundBy::ALL`] order.
    pub fn summary(&self) -> Vec<(BoundBy, f64, f64)> {
        let mut sums = [(0usize, 0.0f64); 6];
        for e in &self.edges {
            let k = e.bound_by.index();
            sums[k].0 += 1;
            sums[k].1 += e.duration_us;
        }
        let total: f64 = sums.iter().map(|s| s.1).sum();
        BoundBy::ALL
            .into_iter()
            .zip(sums)
            .filter(|(_, (n, _))| *n > 0)
            .map(|(b, (_, us))| (b, us, 100.0 * us / total))
            .collect()
    }
}

/// Why no critical path was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    /// `--step N`: the trace has no such annotation.
    #[error("the trace has no ProfilerStep#{0} annotation")]
    NoStep(u64),
    /// The graph is not valid.
    #[error("no critical path: {0}")]
    Invalid(path::Invalid),
}

/// The window of `span`, with its label.
fn window(trace: &Trace, view: &View, span: Span) -> Result<(f64, f64, String), Failure> {
    let steps = view.rows.iter().filter_map(|r| {
        let n = trace.string(r.name?).strip_prefix("ProfilerStep#")?;
        let n: u64 = n.parse().ok()?;
        (r.cat == Cat::UserAnnotation).then_some((n, r))
    });
    match span {
        Span::Window(a, b) => Ok((a, b, "window".to_string())),
        Span::Step(n) => steps
            .into_iter()
            .find(|(k, _)| *k == n)
            .map(|(_, r)| (r.ts, r.end, format!("ProfilerStep#{n}")))
            .ok_or(Failure::NoStep(n)),
        Span::Auto => {
            let mut best: Option<(u64, f64, f64)> = None;
            for (n, r) in steps {
                if best.is_none_or(|(_, a, b)| r.dur() > b - a) {
                    best = Some((n, r.ts, r.end));
                }
            }
            Ok(match best {
                Some((n, a, b)) => (a, b, format!("ProfilerStep#{n}")),
                None => (f64::NEG_INFINITY, f64::INFINITY, "whole trace".to_string()),
            })
        }
    }
}

/// The critical path of `span` in `trace`, found as HTA finds it (times
/// rounded inwards to whole µs when the trace has fractional ones).
pub fn analyse(trace: &Trace, span: Span) -> Result<CriticalPath, Failure> {
    let start = Instant::now();
    let view = View::of(trace, true);
    timings::stage("critical path: events", start);
    let (from, to, label) = window(trace, &view, span)?;
    let kept = graph::clip(&view, from, to);
    let start = Instant::now();
    let g = Graph::build(trace, &view, &kept);
    timings::stage("critical path: graph", start);
    let start = Instant::now();
    let nodes =
        path::longest(&g, |row| view.rows[row as usize].stream).map_err(Failure::Invalid)?;
    timings::stage("critical path: longest path", start);
    let mut counts = [0usize; 5];
    for e in &g.edges {
        counts[kind_index(e.kind)] += 1;
    }
    // Kernel names repeat along a path and are long: each is classified once.
    let mut communication = FxHashMap::default();
    let edges = nodes
        .windows(2)
        .map(|w| path_edge(trace, &view, &g, (w[0], w[1]), &mut communication))
        .collect();
    Ok(CriticalPath {
        window: (from, to),
        label,
        graph_nodes: g.nodes.len(),
        graph_edges: counts,
        unlinked_kernels: g.unlinked_kernels,
        edges,
    })
}

/// A key that orders times as [`f64::total_cmp`] does: sorting by
/// integer keys costs far less than by chained float comparisons, and the
/// graph sorts every node and step of a window.
pub fn time_key(t: f64) -> u64 {
    let b = t.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The position of an edge kind in [`CriticalPath::graph_edges`].
pub fn kind_index(k: EdgeKind) -> usize {
    match k {
        EdgeKind::Operator => 0,
        EdgeKind::Dependency => 1,
        EdgeKind::LaunchDelay => 2,
        EdgeKind::KernelKernelDelay => 3,
        EdgeKind::SyncDependency => 4,
    }
}

/// The path edge from node `a` to node `b`; `communication` holds whether
/// each GPU event name seen so far is a collective's.
fn path_edge(
    trace: &Trace,
    view: &View,
    g: &Graph,
    (a, b): (u32, u32),
    communication: &mut FxHashMap<Option<StrId>, bool>,
) -> PathEdge {
    let e = g.edge(a, b).expect("consecutive path nodes are joined");
    let row = e.row.unwrap_or(g.nodes[b as usize].row);
    let r = &view.rows[row as usize];
    let bound_by = match e.kind {
        EdgeKind::KernelKernelDelay => BoundBy::KernelKernelOverhead,
        EdgeKind::LaunchDelay => BoundBy::LaunchOverhead,
        EdgeKind::Dependency | EdgeKind::SyncDependency => BoundBy::Nothing,
        EdgeKind::Operator if r.stream < 0 => BoundBy::CpuBound,
        EdgeKind::Operator
            if *communication
                .entry(r.name)
                .or_insert_with(|| is_communication(&short_name(trace.name(r.id)))) =>
        {
            BoundBy::GpuCommunication
        }
        EdgeKind::Operator => BoundBy::GpuCompute,
    };
    let graph_replay = r.stream != -1
        && view.launcher[row as usize]
            .is_some_and(|l| trace.name(view.rows[l as usize].id).contains("GraphLaunch"));
    PathEdge {
        kind: e.kind,
        bound_by,
        duration_us: e.weight,
        begin_us: g.nodes[a as usize].ts,
        end_us: g.nodes[b as usize].ts,
        event: r.id,
        stream: r.stream,
        pid: r.pid,
        tid: r.tid,
        graph_replay,
    }
}

/// HTA's short name of an event: bracketed template and argument lists
/// removed and the last word kept; copies and fills keep their names.
pub fn short_name(name: &str) -> String {
    if name.starts_with("Memcpy") || name.starts_with("Memset") {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().last().unwrap_or("").to_string()
}

/// HTA's communication kernels.
fn is_communication(short: &str) -> bool {
    ["nccl", "hip", "hccl"].iter().any(|p| short.starts_with(p)) || short.contains("ncclKernel")
}

#[cfg(test)]
mod tests {
    use super::time_key;

    #[test]
    fn time_keys_order_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -1e12,
            -1.5,
            -0.0,
            0.0,
            1e-300,
            0.5,
            1.0,
            1e12 + 0.25,
            f64::INFINITY,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(time_key(a).cmp(&time_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }
}
