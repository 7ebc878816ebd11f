//! The idle sheets on small traces made for each case: a host gap, a
//! synchronisation, a blocking copy, a long launch (its own, and one
//! running when the GPU ran dry), short kernel waits, a back-to-back
//! stream, a GPU-only trace, HTA's rounding to whole µs and its dropping
//! of the last profiler step. Every figure is worked out by hand in the
//! comments. Host events run on pid 1 / tid 1, GPU events on stream 7.

mod common;

use common::{KinetoTrace as Trace, Table, report_csv};

/// The report's idle sheets, read back.
trait IdleSheets {
    /// The report's idle sheets (`--idle-details`): breakdown, causes,
    /// top gaps, gaps.
    fn sheets(&self) -> [Table; 4];
}

impl IdleSheets for Trace {
    fn sheets(&self) -> [Table; 4] {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.json");
        std::fs::write(&path, self.json()).unwrap();
        let (_t, csv, r) = report_csv(&path, &["--idle-details"]);
        r.assert_ok();
        [
            "idle_breakdown",
            "idle_causes",
            "idle_top_gaps",
            "idle_gaps",
        ]
        .map(|s| Table::load(&csv, s))
    }
}

/// The breakdown as (stream, category, HTA time, HTA ratio, exact time).
fn breakdown(t: &Table) -> Vec<(String, String, String, String, String)> {
    (0..t.rows.len())
        .map(|i| {
            let c = |n| t.cell(i, n).to_string();
            (
                c("stream"),
                c("idle_category"),
                c("idle_time"),
                c("idle_time_ratio"),
                c("idle_time_exact (µs)"),
            )
        })
        .collect()
}

fn row(s: &str, c: &str, t: &str, r: &str, e: &str) -> (String, String, String, String, String) {
    (s.into(), c.into(), t.into(), r.into(), e.into())
}

/// The causes as (cause, gaps, ms).
fn causes(t: &Table) -> Vec<(String, String, String)> {
    (0..t.rows.len())
        .map(|i| {
            let c = |n| t.cell(i, n).to_string();
            (c("cause"), c("gaps"), c("idle_time (ms)"))
        })
        .collect()
}

fn cause(c: &str, n: &str, ms: &str) -> (String, String, String) {
    (c.into(), n.into(), ms.into())
}

/// A host gap: K1 [20, 30] launched from aten::a [0, 100]; K2 [190, 200]
/// launched at 180 from aten::b [100, 200]. The gap 30 → 190 = 160 µs is
/// host wait (launch 180 > 30). At 30 no runtime call runs; K2's launch
/// (5 µs) is under half the gap; the ops cover all of [30, 180]: host_busy,
/// in aten::a.
#[test]
fn a_host_gap_is_host_busy() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 100.0)
        .kernel((10.0, 5.0), (20.0, 10.0));
    t.op("aten::b", 100.0, 100.0)
        .kernel((180.0, 5.0), (190.0, 10.0));
    let [b, c, top, gaps] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "host_wait", "160.0", "1.0", "160.0"),
            row("7", "other", "0.0", "0.0", "0.0")
        ]
    );
    assert_eq!(causes(&c), [cause("host_busy", "1", "0.16")]);
    assert_eq!(c.cell(0, "pct_of_host_wait"), "100.0");
    assert_eq!(top.rows.len(), 1);
    assert_eq!(top.cell(0, "host_op"), "aten::a");
    assert_eq!(top.cell(0, "gap (µs)"), "160.0");
    assert_eq!(top.cell(0, "gap_start_ts (µs)"), "30.0");
    // UIDs: aten::a 0, its launch 1, K1 2, aten::b 3, launch 4, K2 5.
    assert_eq!(top.cell(0, "prev_kernel_uid"), "2");
    assert_eq!(top.cell(0, "next_kernel_uid"), "5");
    assert_eq!(top.cell(0, "launch_uid"), "4");
    assert_eq!(top.cell(0, "host_op_uid"), "0");
    assert_eq!(gaps.rows.len(), 1);
}

/// A sync: K1 [12, 112]; the host sits in cudaDeviceSynchronize [50, 115]
/// when K1 ends at 112; K2 is launched at 125 and runs at 135. The gap
/// 112 → 135 = 23 µs is host wait although under 30 µs (the launch came
/// after 112), caused by the sync; the host was in no op then.
#[test]
fn a_sync_is_named_as_the_cause() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 50.0).kernel((5.0, 5.0), (12.0, 100.0));
    t.call("cudaDeviceSynchronize", 50.0, 65.0);
    t.op("aten::b", 120.0, 20.0)
        .kernel((125.0, 5.0), (135.0, 10.0));
    let [b, c, top, _] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "host_wait", "23.0", "1.0", "23.0"),
            row("7", "other", "0.0", "0.0", "0.0")
        ]
    );
    assert_eq!(causes(&c), [cause("sync", "1", "0.023")]);
    assert_eq!(top.cell(0, "host_call"), "cudaDeviceSynchronize");
    assert_eq!(top.cell(0, "host_op"), "");
}

/// A blocking copy: K1 [6, 16]; aten::copy_ [20, 300] holds cudaMemcpy
/// [25, 290] whose copy runs [200, 280]; K3 launched at 305 runs at 310.
/// Gap 16 → 200 = 184 µs: host wait (the copy call began at 25 > 16); no
/// call runs at 16 but the copy call itself (265 µs) is over half the gap:
/// blocking copy. Gap 280 → 310 = 30 µs: host wait; at 280 the host is in
/// cudaMemcpy: blocking copy. 214 µs in all.
#[test]
fn a_blocking_copy_is_named_as_the_cause() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 20.0).kernel((2.0, 3.0), (6.0, 10.0));
    t.op("aten::copy_", 20.0, 280.0).gpu(
        ("cudaMemcpy", 25.0, 265.0),
        "gpu_memcpy",
        "Memcpy DtoH (Device -> Pageable)",
        (200.0, 80.0),
    );
    t.op("aten::b", 300.0, 20.0)
        .kernel((305.0, 3.0), (310.0, 5.0));
    let [b, c, top, _] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "host_wait", "214.0", "1.0", "214.0"),
            row("7", "other", "0.0", "0.0", "0.0")
        ]
    );
    assert_eq!(causes(&c), [cause("blocking_copy", "2", "0.214")]);
    assert_eq!(top.column("gap (µs)"), ["184.0", "30.0"]);
    assert_eq!(top.column("host_call"), ["cudaMemcpy", "cudaMemcpy"]);
    assert_eq!(top.column("host_op"), ["aten::a", "aten::copy_"]);
}

/// Long launches. K1 [7, 9]; K2's launch [12, 95] takes 83 of the gap
/// 9 → 96 = 87 µs: long launch (that launch). Then K3's launch [100, 120]
/// runs [101, 103] and K4's launch [120, 140] runs [122, 125]: the gap
/// 103 → 122 = 19 µs is host wait (launch 120 > 103) and at 103 the host
/// is inside K3's launch: long launch (K3's launch, UID 7). Between them
/// K2 [96, 100] → K3 [101, 103]: 1 µs, launched at 100, not after 100: a
/// kernel wait. Host wait 87 + 19 = 106 µs (106/107 → 0.99).
#[test]
fn a_long_launch_is_named_as_the_cause() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 10.0).kernel((2.0, 4.0), (7.0, 2.0));
    t.op("aten::b", 10.0, 90.0)
        .kernel((12.0, 83.0), (96.0, 4.0));
    t.op("aten::c", 100.0, 40.0)
        .kernel((100.0, 20.0), (101.0, 2.0))
        .kernel((120.0, 20.0), (122.0, 3.0));
    let [b, c, top, _] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "host_wait", "106.0", "0.99", "106.0"),
            row("7", "kernel_wait", "1.0", "0.01", "1.0"),
            row("7", "other", "0.0", "0.0", "0.0"),
        ]
    );
    assert_eq!(causes(&c), [cause("long_launch", "2", "0.106")]);
    assert_eq!(top.column("gap (µs)"), ["87.0", "19.0"]);
    assert_eq!(top.column("host_call_uid"), ["4", "7"]);
}

/// Short kernel waits and nothing else: launches at 1, 4, 7 all before
/// the kernels [10, 20], [25, 35], [100, 110]: the gap 20 → 25 = 5 µs is
/// a kernel wait, 35 → 100 = 65 µs is "other"; no host wait, so no cause.
#[test]
fn short_kernel_waits_have_no_cause() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 50.0)
        .kernel((1.0, 2.0), (10.0, 10.0))
        .kernel((4.0, 2.0), (25.0, 10.0))
        .kernel((7.0, 2.0), (100.0, 10.0));
    let [b, c, top, gaps] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "kernel_wait", "5.0", "0.07", "5.0"),
            row("7", "other", "65.0", "0.93", "65.0")
        ]
    );
    assert!(c.rows.is_empty() && top.rows.is_empty());
    assert_eq!(gaps.column("idle_category"), ["kernel_wait", "other"]);
    assert_eq!(gaps.column("cause"), ["", ""]);
}

/// Back to back: kernels [10, 20], [20, 30], [30, 40] queued early. Two
/// kernel waits of 0 µs; every total is 0 so every ratio is 0/0, empty
/// as HTA's NaN; no cause, no top gap.
#[test]
fn a_back_to_back_stream_has_no_idle_and_no_cause() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 50.0)
        .kernel((1.0, 2.0), (10.0, 10.0))
        .kernel((4.0, 2.0), (20.0, 10.0))
        .kernel((7.0, 2.0), (30.0, 10.0));
    let [b, c, top, _] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "kernel_wait", "0.0", "", "0.0"),
            row("7", "other", "0.0", "", "0.0")
        ]
    );
    assert_eq!(b.column("kernels"), ["2", "1"]);
    assert!(c.rows.is_empty() && top.rows.is_empty());
}

/// GPU-only (runtime calls, no ops): K1 [3, 5], K2 launched at 50 runs at
/// 53: 48 µs host wait; nothing runs on the host at 5, the launch is 2 µs,
/// no op covers the window: the trace cannot tell, so unknown.
#[test]
fn without_ops_the_cause_is_unknown() {
    let mut t = Trace::default();
    t.kernel((0.0, 2.0), (3.0, 2.0))
        .kernel((50.0, 2.0), (53.0, 2.0));
    let [_, c, top, _] = t.sheets();
    assert_eq!(causes(&c), [cause("unknown", "1", "0.048")]);
    assert_eq!(top.cell(0, "host_call"), "");
}

/// HTA rounds events inwards to whole µs: K1 [10.4, 20.6] → [11, 20], K2
/// [25.5, 30.2] → [26, 30]: HTA's gap 26 − 20 = 6 µs, the exact one
/// 25.5 − 20.6 = 4.9 µs; both kernel waits (launches at 1.2 and 3.5).
#[test]
fn hta_columns_round_to_whole_us_and_ours_do_not() {
    let mut t = Trace::default();
    t.op("aten::a", 0.5, 50.0)
        .kernel((1.2, 1.0), (10.4, 10.2))
        .kernel((3.5, 1.0), (25.5, 4.7));
    let [b, _, _, gaps] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "kernel_wait", "6.0", "1.0", "4.9"),
            row("7", "other", "0.0", "0.0", "0.0")
        ]
    );
    assert_eq!(gaps.cell(0, "gap_hta (µs)"), "6.0");
    assert_eq!(gaps.cell(0, "gap (µs)"), "4.9");
}

/// Two profiler steps: HTA keeps only the GPU events launched before the
/// last step starts (100); ours keep the whole trace. Step 1 launches K1
/// [20, 30] and K2 [60, 70] (launch 50 > 30: 30 µs host wait); step 2
/// launches K3 [150, 160] (launch 140 > 70: 80 µs host wait, ours only).
#[test]
fn hta_columns_drop_the_last_profiler_step() {
    let mut t = Trace::default();
    t.push("user_annotation", "ProfilerStep#1", 0.0, 100.0, "");
    t.op("aten::a", 1.0, 98.0)
        .kernel((10.0, 5.0), (20.0, 10.0))
        .kernel((50.0, 5.0), (60.0, 10.0));
    t.push("user_annotation", "ProfilerStep#2", 100.0, 100.0, "");
    t.op("aten::b", 101.0, 98.0)
        .kernel((140.0, 5.0), (150.0, 10.0));
    let [b, _, _, _] = t.sheets();
    assert_eq!(
        breakdown(&b),
        [
            row("7", "host_wait", "30.0", "1.0", "110.0"),
            row("7", "other", "0.0", "0.0", "0.0")
        ]
    );
    assert_eq!(b.column("kernels"), ["1", "1"]);
    assert_eq!(b.column("kernels_exact"), ["2", "1"]);
}

/// Without `--idle-details` there is no `idle_gaps` sheet.
#[test]
fn idle_gaps_only_with_idle_details() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 100.0)
        .kernel((10.0, 5.0), (20.0, 10.0));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.json");
    std::fs::write(&path, t.json()).unwrap();
    let (_t, csv, r) = report_csv(&path, &[]);
    r.assert_ok();
    assert!(csv.join("idle_breakdown.csv").is_file());
    assert!(!csv.join("idle_gaps.csv").exists());
}

/// The `.item()` pattern: K0 [4, 150]; aten::_local_scalar_dense [5, 159]
/// queues a copy to pinned memory ([150, 155]) and waits in
/// cudaStreamSynchronize [9, 158]; K2 is launched at 165 and runs at 172.
/// K0 → copy: 0 µs, launched early: kernel wait. Copy → K2: 155 → 172 =
/// 17 µs host wait, the host in the stream sync: sync, in the op.
#[test]
fn a_stream_sync_inside_an_op_is_a_sync() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 4.0).kernel((1.0, 1.0), (4.0, 146.0));
    t.op("aten::_local_scalar_dense", 5.0, 154.0).gpu(
        ("cudaMemcpyAsync", 6.0, 3.0),
        "gpu_memcpy",
        "Memcpy DtoH (Device -> Pinned)",
        (150.0, 5.0),
    );
    t.call("cudaStreamSynchronize", 9.0, 149.0);
    t.op("aten::b", 160.0, 20.0)
        .kernel((165.0, 3.0), (172.0, 8.0));
    let [b, c, top, _] = t.sheets();
    assert_eq!(
        b.column("idle_category"),
        ["host_wait", "kernel_wait", "other"]
    );
    assert_eq!(causes(&c), [cause("sync", "1", "0.017")]);
    assert_eq!(top.cell(0, "host_call"), "cudaStreamSynchronize");
    assert_eq!(top.cell(0, "host_op"), "aten::_local_scalar_dense");
}

/// An async copy that blocks because its memory is pageable: the host is
/// in cudaMemcpyAsync [6, 157] when its copy [150, 155] ends; K2 launched
/// at 165 runs at 172: 17 µs host wait, a blocking copy. The same trace
/// with pinned memory (the copy does not block) reads as a long launch.
#[test]
fn an_async_copy_blocks_only_with_pageable_memory() {
    for (memory, want) in [("Pageable", "blocking_copy"), ("Pinned", "long_launch")] {
        let mut t = Trace::default();
        t.op("aten::a", 0.0, 4.0).kernel((1.0, 1.0), (4.0, 146.0));
        t.op("aten::copy_", 5.0, 154.0).gpu(
            ("cudaMemcpyAsync", 6.0, 151.0),
            "gpu_memcpy",
            &format!("Memcpy DtoH (Device -> {memory})"),
            (150.0, 5.0),
        );
        t.op("aten::b", 160.0, 20.0)
            .kernel((165.0, 3.0), (172.0, 8.0));
        let [_, c, top, _] = t.sheets();
        assert_eq!(causes(&c), [cause(want, "1", "0.017")], "{memory}");
        assert_eq!(top.cell(0, "host_call"), "cudaMemcpyAsync", "{memory}");
    }
}

/// Another runtime call: K1 [3, 10]; the host is in cudaMalloc [6, 90]
/// (inside aten::empty) at 10; K2 launched at 105 runs at 110: 100 µs,
/// other_runtime_call.
#[test]
fn an_allocation_is_another_runtime_call() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 5.0).kernel((1.0, 1.0), (3.0, 7.0));
    t.op("aten::empty", 5.0, 95.0).call("cudaMalloc", 6.0, 84.0);
    t.op("aten::b", 100.0, 20.0)
        .kernel((105.0, 3.0), (110.0, 5.0));
    let [_, c, top, _] = t.sheets();
    assert_eq!(causes(&c), [cause("other_runtime_call", "1", "0.1")]);
    assert_eq!(top.cell(0, "host_call"), "cudaMalloc");
    assert_eq!(top.cell(0, "host_op"), "aten::empty");
}

/// Ops that cover little of the window are no evidence: K1 [3, 10] ends
/// inside aten::a [0, 12]; nothing runs until aten::b [90, 100], whose
/// launch at 92 (2 µs) starts K2 at 95. Gap 85 µs; the ops cover 2 + 2 of
/// the 82 µs from 10 to 92: unknown (the host was in aten::a at 10).
#[test]
fn untraced_host_time_is_unknown() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 12.0).kernel((1.0, 2.0), (3.0, 7.0));
    t.op("aten::b", 90.0, 10.0).kernel((92.0, 2.0), (95.0, 5.0));
    let [_, c, top, _] = t.sheets();
    assert_eq!(causes(&c), [cause("unknown", "1", "0.085")]);
    assert_eq!(top.cell(0, "host_op"), "aten::a");
}

/// `idle_top_gaps` keeps the 10 longest host-wait gaps, longest first:
/// 13 kernels of 5 µs, each launched 2 µs before it starts and 40 + i µs
/// after the previous one ended (gap i = 42 + i µs, i = 1..12).
#[test]
fn top_gaps_are_the_ten_longest() {
    let mut t = Trace::default();
    t.op("aten::a", 0.0, 2000.0);
    let mut start = 10.0;
    for i in 0..13 {
        if i > 0 {
            start += 5.0 + 42.0 + i as f64;
        }
        t.kernel((start - 2.0, 1.0), (start, 5.0));
    }
    let [_, c, top, _] = t.sheets();
    assert_eq!(c.cell(0, "gaps"), "12");
    let want: Vec<String> = (3..=12).rev().map(|i| format!("{}.0", 42 + i)).collect();
    assert_eq!(top.column("gap (µs)"), want);
}
