//! The critical path on small traces made for each case: a dependency
//! chain from a host op through a launch and two kernels, a device
//! synchronisation, back-to-back kernels of one stream (and one too far
//! from its predecessor to depend on it), a long launch delay, and the
//! window of a profiler step. Every figure is worked out by hand in the
//! comments. Host events run on pid 1 / tid 1, GPU events on stream 7;
//! all times are whole µs, so nothing is rounded.

mod common;

use tracelens::analysis::pytorch::critical_path::{
    BoundBy, CriticalPath, NEEDS, Span, analyse, graph::EdgeKind,
};

use common::KinetoTrace as Trace;

/// What these tests add to the shared trace builder.
trait CriticalPathTrace {
    /// A `cudaDeviceSynchronize` at `s` and the GPU's `Context Sync`
    /// record of it, ending at `sync_end`.
    fn device_sync(&mut self, s: (f64, f64), sync_end: f64) -> &mut Self;
    /// The critical path of `span`.
    fn path(&self, span: Span) -> CriticalPath;
}

impl CriticalPathTrace for Trace {
    fn device_sync(&mut self, s: (f64, f64), sync_end: f64) -> &mut Self {
        self.corr += 1;
        let c = self.corr;
        let args = format!("\"correlation\":{c}");
        self.push("cuda_runtime", "cudaDeviceSynchronize", s.0, s.1, &args);
        let args = format!("\"correlation\":{c},\"stream\":4294967295,\"device\":0");
        self.push("cuda_sync", "Context Sync", sync_end - 1.0, 1.0, &args);
        self
    }

    fn path(&self, span: Span) -> CriticalPath {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.json");
        std::fs::write(&path, self.json()).unwrap();
        let t = tracelens::load::load(&path, &NEEDS).unwrap();
        analyse(&t, span).unwrap()
    }
}

/// The path as (edge kind, bound by, µs).
fn edges(cp: &CriticalPath) -> Vec<(EdgeKind, BoundBy, f64)> {
    cp.edges
        .iter()
        .map(|e| (e.kind, e.bound_by, e.duration_us))
        .collect()
}

/// The summary as (bound_by, µs).
fn summary(cp: &CriticalPath) -> Vec<(&'static str, f64)> {
    cp.summary()
        .into_iter()
        .map(|(b, us, _)| (b.as_str(), us))
        .collect()
}

/// Op A [0, 100] launches k1 from [10, 20]; k1 runs [30, 230]. Op B
/// [110, 150] launches k2 from [120, 130]; k2 runs [240, 260].
/// The stream's queue holds one launch at a time, so k1 gets a launch
/// edge (10 → 30: 20 µs); k2's launch began (120) before k1 ended (230),
/// so k2 hangs on k1 instead (230 → 240: 10 µs).
/// Longest path: A's start → k1's launch (10, cpu) → k1 (20, launch) →
/// k1 (200, compute) → k2 (10, kernel-kernel) → k2 (20, compute) = 260;
/// the host alone takes 10 + 10 + 80 + 0 + 10 + 10 + 20 = 140.
#[test]
fn a_dependency_chain_through_a_launch_and_two_kernels() {
    let mut t = Trace::default();
    t.op("aten::mm", 0.0, 100.0)
        .kernel((10.0, 10.0), (30.0, 200.0))
        .op("aten::add", 110.0, 40.0)
        .kernel((120.0, 10.0), (240.0, 20.0));
    let cp = t.path(Span::Auto);
    assert_eq!(cp.label, "whole trace");
    use BoundBy::*;
    use EdgeKind::*;
    assert_eq!(
        edges(&cp),
        [
            (Operator, CpuBound, 10.0),
            (LaunchDelay, LaunchOverhead, 20.0),
            (Operator, GpuCompute, 200.0),
            (KernelKernelDelay, KernelKernelOverhead, 10.0),
            (Operator, GpuCompute, 20.0),
        ]
    );
    assert_eq!(
        summary(&cp),
        [
            ("cpu_bound", 10.0),
            ("gpu_compute_bound", 220.0),
            ("gpu_kernel_kernel_overhead", 10.0),
            ("gpu_kernel_launch_overhead", 20.0),
        ]
    );
    let pct: Vec<f64> = cp.summary().iter().map(|s| s.2).collect();
    assert!((pct[1] - 100.0 * 220.0 / 260.0).abs() < 1e-9);
    // 12 nodes; operator edges: 2 launches (lock pass), 4 on the host
    // stacks (A → launch, launch → A's end, B likewise), 2 kernels; one
    // dependency (A's end → B's start), one launch, one kernel-kernel.
    assert_eq!(cp.graph_nodes, 12);
    assert_eq!(cp.graph_edges, [8, 1, 1, 1, 0]);
    // The kernel-kernel edge is charged to the kernel before the gap.
    assert_eq!(cp.edges[3].event.index(), 2);
    assert_eq!((cp.edges[0].begin_us, cp.edges[4].end_us), (0.0, 260.0));
}

/// k1 launched from [0, 10] runs [20, 520]; the host waits in
/// cudaDeviceSynchronize [15, 530] (its own time counts as 0: blocking)
/// and then runs relu [540, 560]. The GPU's Context Sync record ties the
/// wait's end to k1's end, so relu comes after k1:
/// launch (20) + k1 (500) + sync (0) + gap to relu (0, top level) +
/// relu (20) = 540. Without the record the path is only 20 + 500.
#[test]
fn a_device_synchronisation_puts_the_host_after_the_kernel() {
    let mut t = Trace::default();
    t.kernel((0.0, 10.0), (20.0, 500.0))
        .device_sync((15.0, 515.0), 530.0)
        .op("aten::relu", 540.0, 20.0);
    let cp = t.path(Span::Auto);
    use BoundBy::*;
    use EdgeKind::*;
    assert_eq!(
        edges(&cp),
        [
            (LaunchDelay, LaunchOverhead, 20.0),
            (Operator, GpuCompute, 500.0),
            (SyncDependency, Nothing, 0.0),
            (Dependency, Nothing, 0.0),
            (Operator, CpuBound, 20.0),
        ]
    );
    assert_eq!(
        summary(&cp),
        [
            ("", 0.0),
            ("cpu_bound", 20.0),
            ("gpu_compute_bound", 500.0),
            ("gpu_kernel_launch_overhead", 20.0),
        ]
    );
    assert_eq!(cp.graph_edges[4], 1);

    let mut t = Trace::default();
    t.kernel((0.0, 10.0), (20.0, 500.0)).push(
        "cuda_runtime",
        "cudaDeviceSynchronize",
        15.0,
        515.0,
        "",
    );
    t.op("aten::relu", 540.0, 20.0);
    let cp = t.path(Span::Auto);
    assert_eq!(
        summary(&cp),
        [
            ("gpu_compute_bound", 500.0),
            ("gpu_kernel_launch_overhead", 20.0)
        ]
    );
}

/// Three launches queued back to back: k1 [20, 120], k2 [125, 225], k3
/// [2000, 2010], launched from [0, 10], [12, 22], [24, 34]. When k1
/// starts, k2 is still queued, so k1 gets no launch edge (nor a
/// predecessor): the path starts at it. k2 hangs on k1 (5 µs); k3 is
/// 1775 µs after k2, beyond the 1500 µs window, and gets no edge either.
/// Longest path: k1 (100) + 5 + k2 (100) = 205.
#[test]
fn back_to_back_kernels_of_one_stream() {
    let mut t = Trace::default();
    t.kernel((0.0, 10.0), (20.0, 100.0))
        .kernel((12.0, 10.0), (125.0, 100.0))
        .kernel((24.0, 10.0), (2000.0, 10.0));
    let cp = t.path(Span::Auto);
    use BoundBy::*;
    use EdgeKind::*;
    assert_eq!(
        edges(&cp),
        [
            (Operator, GpuCompute, 100.0),
            (KernelKernelDelay, KernelKernelOverhead, 5.0),
            (Operator, GpuCompute, 100.0),
        ]
    );
    assert_eq!(cp.unlinked_kernels, 2);
    // Operator: 3 launches, 3 kernels; dependency: launch 1 → 2 → 3.
    assert_eq!(cp.graph_edges, [6, 2, 0, 1, 0]);
}

/// A launch [0, 5] whose kernel starts only at 400 and runs 10 µs: the
/// path is the launch delay (400) and the kernel (10).
#[test]
fn a_long_launch_delay() {
    let mut t = Trace::default();
    t.kernel((0.0, 5.0), (400.0, 10.0));
    let cp = t.path(Span::Auto);
    assert_eq!(
        summary(&cp),
        [
            ("gpu_compute_bound", 10.0),
            ("gpu_kernel_launch_overhead", 400.0)
        ]
    );
    let pct = cp.summary()[1].2;
    assert!((pct - 100.0 * 400.0 / 410.0).abs() < 1e-9);
}

/// Two steps: #1 [0, 100] holds op a [10, 40]; #2 [100, 400] holds op b
/// [110, 310]. Without an option the longer step (#2) is analysed: its
/// path is b (200); `--step 1` gives a (30); a window [0, 50] gives a.
#[test]
fn the_window_of_a_step() {
    let mut t = Trace::default();
    t.push("user_annotation", "ProfilerStep#1", 0.0, 100.0, "");
    t.op("a", 10.0, 30.0);
    t.push("user_annotation", "ProfilerStep#2", 100.0, 300.0, "");
    t.op("b", 110.0, 200.0);
    let cp = t.path(Span::Auto);
    assert_eq!(cp.label, "ProfilerStep#2");
    assert_eq!(summary(&cp), [("cpu_bound", 200.0)]);
    assert_eq!(summary(&t.path(Span::Step(1))), [("cpu_bound", 30.0)]);
    assert_eq!(
        summary(&t.path(Span::Window(0.0, 50.0))),
        [("cpu_bound", 30.0)]
    );
}
