//! The finding rules on small hand-built traces: each fires where its
//! pattern is, with the evidence worked out by hand, and stays silent on a
//! trace without it.

use crate::analysis::ReportOptions;
use crate::analysis::diagnosis::{Diagnosis, Finding};
use crate::analysis::pytorch::run_report;
use crate::test_support::trace_of_json;
use crate::trace::tree::{TreeOptions, build};

/// A GPU event `name` of category `cat` on stream 7 at `[k_ts, k_ts +
/// k_dur)`, launched by the runtime call `call` at `[ts, ts + dur)` with
/// correlation `c`, and their flow.
fn gpu(call: &str, ts: f64, dur: f64, c: u32, cat: &str, name: &str, k: (f64, f64)) -> String {
    let (k_ts, k_dur) = k;
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{call}", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1, "args": {{"correlation": {c}}}}},
        {{"ph": "X", "cat": "{cat}", "name": "{name}", "ts": {k_ts}, "dur": {k_dur}, "pid": 0, "tid": 7, "args": {{"correlation": {c}, "stream": 7, "device": 0}}}},
        {{"ph": "s", "cat": "ac2g", "id": {c}, "ts": {ts}, "pid": 1, "tid": 1}},
        {{"ph": "f", "cat": "ac2g", "id": {c}, "ts": {k_ts}, "pid": 0, "tid": 7, "bp": "e"}}"#
    )
}

/// A 2 µs `cudaLaunchKernel` at `ts` (correlation `c`) of kernel `kC` at
/// `[k_ts, k_ts + k_dur)`.
fn launch(ts: f64, c: u32, k_ts: f64, k_dur: f64) -> String {
    kernel(ts, 2.0, c, k_ts, k_dur)
}

/// A `cudaLaunchKernel` at `[ts, ts + dur)` of kernel `kC`.
fn kernel(ts: f64, dur: f64, c: u32, k_ts: f64, k_dur: f64) -> String {
    gpu(
        "cudaLaunchKernel",
        ts,
        dur,
        c,
        "kernel",
        &format!("k{c}"),
        (k_ts, k_dur),
    )
}

/// A CPU op `name` with shapes over `[ts, ts + dur)`.
fn op(name: &str, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1, "args": {{"Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}}}}"#
    )
}

/// A runtime call without GPU work.
fn call(name: &str, ts: f64, dur: f64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "ts": {ts}, "dur": {dur}, "pid": 1, "tid": 1}}"#
    )
}

fn diagnose(events: &[String]) -> Diagnosis {
    let trace = trace_of_json(&events.join(","));
    let tree = build(&trace, TreeOptions::default());
    let report = run_report(&trace, &tree, &ReportOptions::default());
    report.diagnosis
}

/// The finding `id`, failing the test when there is none.
fn found<'a>(d: &'a Diagnosis, id: &str) -> &'a Finding {
    d.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id} in {d:#?}"))
}

/// `id` neither found nor abstained.
fn silent(d: &Diagnosis, id: &str) {
    assert!(!d.findings.iter().any(|f| f.id == id), "{id} in {d:#?}");
    assert!(!d.abstained.iter().any(|a| a.id == id), "{id} in {d:#?}");
}

fn value(f: &Finding, name: &str) -> f64 {
    f.evidence
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no {name} in {f:?}"))
        .value
}

fn assert_value(f: &Finding, name: &str, want: f64) {
    let got = value(f, name);
    assert!(
        (got - want).abs() <= 1e-6,
        "{}: {name} {got}, not {want}",
        f.id
    );
}

/// Kernel k1 at [10, 110), a sync (when `sync`) from 5 to 115, then k2
/// launched at 120 running at [130, 230).
fn synced(sync: bool) -> Vec<String> {
    let mut v = vec![launch(0.0, 1, 10.0, 100.0), launch(120.0, 2, 130.0, 100.0)];
    if sync {
        v.push(call("cudaDeviceSynchronize", 5.0, 110.0));
    }
    v
}

#[test]
fn idle_sync_counts_the_idle_after_a_sync() {
    // The GPU runs dry at 110 inside the sync; k2 starts at 130: 20 µs
    // idle of a 220 µs span (9%).
    let d = diagnose(&synced(true));
    let f = found(&d, "idle.sync");
    assert_value(f, "gpu_idle_after_sync", 0.02);
    assert_value(f, "syncs", 1.0);
    assert_value(f, "longest_gap", 0.02);
    assert_eq!(f.subject.as_deref(), Some("cudaDeviceSynchronize"));
}

#[test]
fn idle_sync_is_silent_without_a_sync() {
    silent(&diagnose(&synced(false)), "idle.sync");
}

#[test]
fn idle_host_bound_counts_the_idle_in_cpu_ops() {
    // k1 ends at 110 while the host is in aten::foo [100, 200); k2 is
    // launched at 200 and starts at 210: 100 µs idle, CPU ops over 90 of
    // the 90 µs before the launch (host busy), in a 300 µs span.
    let d = diagnose(&[
        launch(0.0, 1, 10.0, 100.0),
        op("aten::foo", 100.0, 100.0),
        launch(200.0, 2, 210.0, 100.0),
    ]);
    let f = found(&d, "idle.host_bound");
    assert_value(f, "gpu_idle_waiting_for_host", 0.1);
    assert_value(f, "host_busy_in_cpu_ops", 0.1);
    assert_value(f, "gaps", 1.0);
    assert_eq!(f.subject.as_deref(), Some("aten::foo"));
}

#[test]
fn idle_host_bound_is_silent_when_kernels_are_back_to_back() {
    // k2 is launched long before k1 ends and starts as it ends; k3 waits
    // 2 µs for its launch, 0.2% of the 1200 µs span: below the threshold.
    let d = diagnose(&[
        launch(0.0, 1, 10.0, 100.0),
        op("aten::foo", 20.0, 30.0),
        launch(50.0, 2, 110.0, 100.0),
        launch(211.0, 3, 212.0, 998.0),
    ]);
    silent(&d, "idle.host_bound");
    // Without any host-wait gap, the linked trace has nothing to find.
    let d = diagnose(&[launch(0.0, 1, 10.0, 100.0), launch(50.0, 2, 110.0, 100.0)]);
    for id in ["idle.host_bound", "idle.sync", "kernels.launch_bound"] {
        silent(&d, id);
    }
}

/// A copy `name` at [10, 60) on stream 7 and kernel k2 at [60, 110).
fn copy_then_kernel(name: &str) -> Vec<String> {
    vec![
        gpu(
            "cudaMemcpyAsync",
            0.0,
            2.0,
            1,
            "gpu_memcpy",
            name,
            (10.0, 50.0),
        ),
        launch(3.0, 2, 60.0, 50.0),
    ]
}

#[test]
fn memcpy_exposed_counts_copies_without_compute() {
    // 50 µs of copy with nothing beside it, no blocking copy.
    let d = diagnose(&copy_then_kernel("Memcpy HtoD (Pinned -> Device)"));
    let f = found(&d, "memcpy.exposed");
    assert_value(f, "exposed_memcpy", 0.05);
    assert_value(f, "total_memcpy", 0.05);
    assert_value(f, "gpu_idle_in_blocking_copies", 0.0);
}

#[test]
fn memcpy_exposed_is_silent_without_copies() {
    let d = diagnose(&[launch(0.0, 1, 10.0, 50.0), launch(3.0, 2, 60.0, 50.0)]);
    silent(&d, "memcpy.exposed");
}

#[test]
fn memcpy_pageable_counts_pageable_copies() {
    let d = diagnose(&copy_then_kernel("Memcpy HtoD (Pageable -> Device)"));
    let f = found(&d, "memcpy.pageable");
    assert_value(f, "pageable_copies", 1.0);
    assert_value(f, "pageable_copy_time", 0.05);
}

#[test]
fn memcpy_pageable_is_silent_on_pinned_copies() {
    let d = diagnose(&copy_then_kernel("Memcpy HtoD (Pinned -> Device)"));
    silent(&d, "memcpy.pageable");
}

/// `n` 8 µs launches every `period` µs, launch i at `period * i`, its
/// kernel `k_dur` µs long starting 1 µs after the launch ends.
fn launches(n: u32, period: f64, k_dur: f64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let ts = period * f64::from(i);
            kernel(ts, 8.0, i + 1, ts + 9.0, k_dur)
        })
        .collect()
}

#[test]
fn launch_bound_counts_the_gaps_before_short_kernels() {
    // Kernel i runs [12i + 9, 12i + 11); launch i + 1 begins at 12i + 12
    // (after the GPU ran dry) and its kernel starts at 12i + 21: 59 gaps of
    // 10 µs, each within two 8 µs launches, before 2 µs kernels.
    let d = diagnose(&launches(60, 12.0, 2.0));
    let f = found(&d, "kernels.launch_bound");
    assert_value(f, "launch_bound_kernels", 59.0);
    assert_value(f, "gpu_idle_between_them", 0.59);
    assert_value(f, "median_kernel", 2.0);
    assert_value(f, "median_launch_call", 8.0);
    // Those gaps are not the host-bound finding's.
    silent(&d, "idle.host_bound");
}

#[test]
fn launch_bound_is_silent_when_kernels_last_their_launch() {
    // The same pattern with 8 µs kernels (every 20 µs: the gaps are 12
    // µs): a kernel as long as its launch is not launch-bound.
    let d = diagnose(&launches(60, 20.0, 8.0));
    silent(&d, "kernels.launch_bound");
}

/// `n` 3 µs launches every `period` µs, launch i at `period * i`, its
/// kernel `k_dur` µs long starting `latency` µs after the launch begins.
fn latency_launches(n: u32, period: f64, k_dur: f64, latency: f64) -> Vec<String> {
    (0..n)
        .map(|i| {
            let ts = period * f64::from(i);
            kernel(ts, 3.0, i + 1, ts + latency, k_dur)
        })
        .collect()
}

#[test]
fn launch_bound_counts_gaps_whose_launch_began_before_them() {
    // Launch i + 1 begins at 6i + 6, before kernel i ends at 6i + 15 (so
    // no gap is a host wait), and its kernel starts 13 µs later at 6i +
    // 19: 59 gaps of 4 µs, within two 3 µs launches, before 2 µs kernels.
    let d = diagnose(&latency_launches(60, 6.0, 2.0, 13.0));
    let f = found(&d, "kernels.launch_bound");
    assert_value(f, "launch_bound_kernels", 59.0);
    assert_value(f, "gpu_idle_between_them", 0.236);
    assert_value(f, "median_kernel", 2.0);
    assert_value(f, "median_launch_call", 3.0);
}

#[test]
fn launch_bound_is_silent_when_kernels_were_queued() {
    // The same gaps, but each kernel starts 60 µs after its launch: it
    // was queued behind other work, so the gaps are not the launch's.
    let d = diagnose(&latency_launches(60, 6.0, 2.0, 60.0));
    silent(&d, "kernels.launch_bound");
}

/// `durs.len()` calls of aten::mm (same shape), each a 10 µs op with a
/// kernel of that duration, 100 µs apart.
fn mm_calls(durs: &[f64]) -> Vec<String> {
    let mut v = Vec::new();
    for (i, &d) in durs.iter().enumerate() {
        let ts = 100.0 * i as f64;
        v.push(op("aten::mm", ts, 10.0));
        v.push(launch(ts + 1.0, i as u32 + 1, ts + 20.0, d));
    }
    v
}

#[test]
fn op_variance_counts_the_time_above_the_median() {
    // Kernel times 10, 10, 10, 50 µs: mean 20, median 10, standard
    // deviation 20 (17.3 over n): the calls cost 80 - 4 * 10 = 40 µs over
    // the median, of a 370 µs span.
    let d = diagnose(&mm_calls(&[10.0, 10.0, 10.0, 50.0]));
    let f = found(&d, "op.variance");
    assert_value(f, "calls", 4.0);
    assert_value(f, "mean_kernel_time", 20.0);
    assert_value(f, "median_kernel_time", 10.0);
    assert_value(f, "min_kernel_time", 10.0);
    assert_value(f, "time_above_median", 0.04);
    assert_eq!(f.subject.as_deref(), Some("aten::mm"));
}

#[test]
fn op_variance_is_silent_on_steady_calls() {
    silent(&diagnose(&mm_calls(&[10.0; 6])), "op.variance");
}

#[test]
fn op_dominant_names_the_op_with_most_kernel_time() {
    // aten::mm 90 µs of kernels, aten::add 10 µs: 90%.
    let mut v = mm_calls(&[90.0]);
    v.push(op("aten::add", 200.0, 10.0));
    v.push(launch(201.0, 9, 220.0, 10.0));
    let d = diagnose(&v);
    let f = found(&d, "op.dominant");
    assert_value(f, "share_of_kernel_time", 90.0);
    assert_value(f, "kernel_time", 0.09);
    assert_value(f, "calls", 1.0);
    assert_eq!(f.subject.as_deref(), Some("aten::mm"));
}

#[test]
fn op_dominant_is_silent_when_time_is_spread() {
    // Four ops of 10 µs each: 25% apiece.
    let mut v = Vec::new();
    for (i, name) in ["aten::a", "aten::b", "aten::c", "aten::d"]
        .iter()
        .enumerate()
    {
        let ts = 100.0 * i as f64;
        v.push(op(name, ts, 10.0));
        v.push(launch(ts + 1.0, i as u32 + 1, ts + 20.0, 10.0));
    }
    silent(&diagnose(&v), "op.dominant");
}

#[test]
fn op_low_efficiency_abstains_without_a_gpu_spec() {
    let d = diagnose(&mm_calls(&[10.0; 4]));
    let a = d
        .abstained
        .iter()
        .find(|a| a.id == "op.low_efficiency")
        .unwrap_or_else(|| panic!("op.low_efficiency did not abstain: {d:#?}"));
    assert!(a.reason.contains("GPU spec"), "{a:?}");
    assert!(!d.findings.iter().any(|f| f.id == "op.low_efficiency"));
}

/// A CPU op `name` over `[ts, ts + 20)` with the recorded `dims`,
/// `strides` and `types` (JSON), launching kernel `kC` of `k_dur` µs at
/// `ts + 30`.
fn shaped(
    name: &str,
    ts: f64,
    dims: &str,
    strides: &str,
    types: &str,
    c: u32,
    k_dur: f64,
) -> Vec<String> {
    vec![
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "ts": {ts}, "dur": 20, "pid": 1, "tid": 1, "args": {{"Input Dims": {dims}, "Input type": {types}, "Input Strides": {strides}}}}}"#
        ),
        kernel(ts + 1.0, 2.0, c, ts + 30.0, k_dur),
    ]
}

/// Under a parent op `block`, `aten::add`, `aten::mul` (both of two
/// 1024 × 1024 floats) and `aten::sigmoid` of `last` dims (and
/// `last_strides`), 100 µs kernels
/// each, 200 µs apart.
fn elementwise_run(last: &str, last_strides: &str) -> Vec<String> {
    let m = "[1024, 1024]";
    let mut v = vec![format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "block", "ts": 0, "dur": 700, "pid": 1, "tid": 1}}"#
    )];
    v.extend(shaped(
        "aten::add",
        10.0,
        &format!("[{m}, {m}, []]"),
        "[[1024, 1], [1024, 1], []]",
        r#"["float", "float", "Scalar"]"#,
        1,
        100.0,
    ));
    v.extend(shaped(
        "aten::mul",
        210.0,
        &format!("[{m}, {m}]"),
        "[[1024, 1], [1024, 1]]",
        r#"["float", "float"]"#,
        2,
        100.0,
    ));
    v.extend(shaped(
        "aten::sigmoid",
        410.0,
        &format!("[{last}]"),
        &format!("[{last_strides}]"),
        r#"["float"]"#,
        3,
        100.0,
    ));
    v
}

#[test]
fn memory_bound_chain_finds_a_run_of_elementwise_ops() {
    // N = 1024² floats (4 bytes): add and mul each move 3·4N bytes,
    // sigmoid 2·4N, 8·4N = 33.554 MB in all; the two tensors handed on
    // save a write and a read each, 4·4N, so fused they move 4·4N =
    // 16.777 MB, half: the 300 µs of kernels would take 150 µs less.
    let d = diagnose(&elementwise_run("[1024, 1024]", "[1024, 1]"));
    let f = found(&d, "op.memory_bound_chain");
    assert_eq!(f.subject.as_deref(), Some("block"));
    assert_eq!(f.shape.as_deref(), Some("(1024, 1024)"));
    assert_value(f, "ops_per_run", 3.0);
    assert_value(f, "runs", 1.0);
    assert_value(f, "kernel_time", 0.3);
    assert_value(f, "bytes_per_run", 33.554432);
    assert_value(f, "fused_bytes_per_run", 16.777216);
    assert_value(f, "kernel_time_fusion_saves", 0.15);
    assert_eq!(f.impact.high_ms, 0.15);
}

#[test]
fn memory_bound_chain_ends_where_the_shapes_do_not_follow() {
    // sigmoid takes another shape: add → mul alone is left, 3·4N each,
    // fused 6·4N − 2·4N = 4·4N of 6·4N: two thirds, under the 70 %
    // bound; 200 µs of kernels, 66.7 µs less.
    let d = diagnose(&elementwise_run("[512, 64]", "[64, 1]"));
    let f = found(&d, "op.memory_bound_chain");
    assert_value(f, "ops_per_run", 2.0);
    assert_value(f, "fused_bytes_per_run", 16.777216);
    assert!((value(f, "kernel_time_fusion_saves") - 0.2 / 3.0).abs() < 1e-9);
}

#[test]
fn memory_bound_chain_is_silent_with_other_work_between() {
    // A GEMM between each pair ends every run at one op.
    let mut v = elementwise_run("[1024, 1024]", "[1024, 1]");
    for (i, ts) in [(4u32, 150.0), (5, 350.0)] {
        v.extend(shaped(
            "aten::mm",
            ts,
            "[[1024, 1024], [1024, 1024]]",
            "[[1024, 1], [1024, 1]]",
            r#"["float", "float"]"#,
            i,
            20.0,
        ));
    }
    let d = diagnose(&v);
    silent(&d, "op.memory_bound_chain");
}
