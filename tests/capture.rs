//! The capture merge (`report --capture-dir`) on hand-made traces:
//! `testdata/capture_steps/graph.json` has three steps (vLLM annotations for
//! batch sizes 2, 4 and 8), each with one `hipGraphLaunch` that replays
//! `k_a` (10 µs), `k_b` (5 µs), `k_a` (10 µs), plus a fourth graph launch
//! outside every step and an eager `aten::add` (`k_add`, 4 µs). Its 30
//! events have UIDs 0-29: the launches are 12, 17, 22 and 26, their kernels
//! the three UIDs after each.
//!
//! Each capture trace (testdata/capture_*/*/) holds, inside its capture
//! window, `nn.Module: M_0` with one op and one `hipLaunchKernel` per
//! kernel (`aten::mm` for `k_a`, `aten::relu` for `k_b`, `aten::sigmoid`
//! for `k_c`, `aten::sin` for `k_x`, `aten::mul` for `k_tail`), 20 µs
//! apart; the first op starts with the frame. So the copied list of a
//! window with k_a, k_b, k_a is, by start (ties in breadth-first order):
//! CaptureRoot, M_0, mm, launch, relu, launch, mm, launch.
//!
//! Expected values are worked out by hand from that layout; the sheet
//! values were also checked against the reference's inference report
//! (`--capture_folder`) run on copies of these folders.

mod common;

use std::path::Path;

use common::{Table, report_csv, testdata};
use tracelens::analysis::pytorch::attribution::launcher_of;
use tracelens::load::load;
use tracelens::trace::capture::{self, CaptureIndex, Mode, Outcome, Skipped};
use tracelens::trace::tree::{Tree, TreeOptions, build};
use tracelens::trace::{EventId, Needs, Trace};

const GRAPH: &str = "capture_steps/graph.json";

fn id(i: usize) -> EventId {
    EventId::new(i)
}

/// Loads `graph`, merges the capture folder `dir` (both under testdata)
/// through the library API, returns the merged trace, tree and outcomes.
fn merged(graph: &str, dir: &str) -> (Trace, Tree, Vec<Outcome>) {
    let dir = testdata(dir);
    let mut trace = load(&testdata(graph), &Needs::ALL).unwrap();
    let mut tree = build(
        &trace,
        TreeOptions {
            include_python: true,
        },
    );
    let text = std::fs::read_to_string(dir.join("execution_details.json")).unwrap();
    let details = capture::parse_details(&text).unwrap();
    let index = CaptureIndex::new(&details, |f| dir.join(f).is_file());
    let mut read = |f: &str| load(&dir.join(f), &Needs::ALL).map_err(|e| e.to_string());
    let outcomes = capture::merge(&mut trace, &mut tree, &index, &mut read).unwrap();
    (trace, tree, outcomes)
}

fn names(trace: &Trace, from: usize, to: usize) -> Vec<&str> {
    (from..to).map(|i| trace.name(id(i))).collect()
}

#[test]
fn positional_merge_copies_the_window_under_the_launch() {
    let (trace, tree, out) = merged(GRAPH, "capture_steps/ok");
    // The step of batch size 2 pairs with cap_bs2.json in order.
    assert_eq!(out.len(), 4);
    let m = out[0].result.as_ref().unwrap();
    assert_eq!((out[0].launch, out[0].exec_root), (id(12), Some(id(5))));
    assert_eq!(
        (m.aligned.mode, m.first_uid, m.copied),
        (Mode::Positional, 30, 8)
    );
    assert_eq!(m.aligned.pairs, [(0, 0), (1, 1), (2, 2)]);
    // Copies: UIDs 30-37 in start order, all at the launch's ts and dur.
    assert_eq!(trace.len(), 38);
    assert_eq!(
        names(&trace, 30, 38),
        [
            "CaptureRoot",
            "nn.Module: M_0",
            "aten::mm",
            "hipLaunchKernel",
            "aten::relu",
            "hipLaunchKernel",
            "aten::mm",
            "hipLaunchKernel"
        ]
    );
    for i in 30..38 {
        let e = trace.event(id(i));
        assert_eq!((e.ts, e.dur), (150.0, 7.0), "UID {i}");
    }
    // The launch's only child is CaptureRoot; each kernel sits under its
    // capture launch, takes its correlation and is launched by its op.
    assert_eq!(tree.children(id(12)).collect::<Vec<_>>(), [id(30)]);
    assert_eq!(tree.parent(id(30)), Some(id(12)));
    assert_eq!(tree.parent(id(31)), Some(id(30)));
    for (k, launch, op, corr) in [(13, 33, 32, 100), (14, 35, 34, 101), (15, 37, 36, 102)] {
        assert_eq!(tree.parent(id(k)), Some(id(launch)), "kernel {k}");
        assert_eq!(trace.args(id(k)).unwrap().correlation(), Some(corr));
        assert_eq!(launcher_of(&trace, &tree, id(k)), Some(id(op)));
    }
    // GPU counts: each kernel once, up to the python frame above the launch
    // (which also holds the eager k_add).
    let count = |i| tree.gpu_count(id(i));
    assert_eq!([12, 30, 31, 32, 33, 6].map(count), [3, 3, 3, 1, 1, 4]);
    // The copied ops are roots of the op walk; the parentless aten::empty
    // inside the window was not copied.
    assert!(tree.cpu_roots.ends_with(&[id(32), id(34), id(36)]));
    assert!(!names(&trace, 30, 38).contains(&"aten::empty"));
}

#[test]
fn unmerged_launches_keep_their_kernels_and_say_why() {
    let (trace, tree, out) = merged(GRAPH, "capture_steps/ok");
    let why: Vec<(usize, Skipped)> = out[1..]
        .iter()
        .map(|o| (o.launch.index(), o.result.clone().unwrap_err()))
        .collect();
    assert_eq!(why[0].0, 17);
    let Skipped::Misaligned(text) = &why[0].1 else {
        panic!("{:?}", why[0])
    };
    assert_eq!(
        text,
        "replayed kernel 2 of 3 is `k_b` but capture launch 2 launched `k_x`; `k_x` occurs 1 times in the capture and 0 times in the replay"
    );
    assert_eq!(why[1], (22, Skipped::NoCaptureAtLeast(8)));
    assert_eq!(why[2], (26, Skipped::NoExecRoot));
    for (l, ks) in [(17, 18..21), (22, 23..26), (26, 27..30)] {
        for k in ks {
            assert_eq!(tree.parent(id(k)), Some(id(l)));
            assert_eq!(launcher_of(&trace, &tree, id(k)), Some(id(l)));
        }
    }
}

#[test]
fn report_with_capture_dir_books_kernels_to_the_captured_ops() {
    let dir = testdata("capture_steps/ok");
    let (_t, csv, r) = report_csv(&testdata(GRAPH), &["--capture-dir", dir.to_str().unwrap()]);
    r.assert_ok();
    // Direct kernel time: three unmerged launches 25 µs each; the merged
    // one's kernels go to two aten::mm (10 each) and aten::relu (5).
    let ops = Table::load(&csv, "ops_summary");
    assert_eq!(
        ops.column("name"),
        ["hipGraphLaunch", "aten::mm", "aten::relu", "aten::add"]
    );
    assert_eq!(
        ops.column("total_direct_kernel_time_sum"),
        ["75.0", "20.0", "5.0", "4.0"]
    );
    assert_eq!(ops.column("Count"), ["3", "2", "1", "1"]);
    // 75 / 104 µs of direct kernel time.
    assert_eq!(ops.cell(0, "Percentage (%)"), "72.1153846153846");
    let args = Table::load(&csv, "ops_unique_args");
    assert_eq!(args.column("ex_UID"), ["17", "32", "34", "7"]);
    // Copies keep the capture's pid/tid; their names come from the graph trace.
    assert_eq!(args.cell(1, "thread_name"), "thread 100 (python3)");
    let lines = r.stderr_lines();
    let has = |s: &str| lines.iter().any(|l| l.contains(s));
    assert!(
        has("capture merge: merged 1 graph launch, 3 kernels, from cap_bs2.json (bs 2, FULL)"),
        "{lines:#?}"
    );
    assert!(has(
        "graph launch `hipGraphLaunch` (UID 17, ts 450) in step `execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk20sqsq4sqsk20)` not merged: replayed kernel 2 of 3 is `k_b`"
    ));
    assert!(has(
        "(UID 22, ts 750) in step `execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk40sqsq8sqsk40)` not merged: no capture trace has a batch size of at least 8"
    ));
    assert!(has(
        "(UID 26, ts 1000) not merged: it is inside no step annotation"
    ));
    assert!(has(
        "execution_details.json names missing.json, which is not in the folder"
    ));
    assert!(has(
        "entry for cap_bs2.json skipped (batch_size 2, mode \"DECODE\")"
    ));
    assert!(has(
        "3 graph launches (`hipGraphLaunch`) launched 9 GPU events: 0.075 ms = 72.1% of GPU busy time, still booked to the launch itself because the capture merge left them unmerged"
    ));
    assert!(!has("--capture-dir DIR"));
}

#[test]
fn extra_capture_launches_are_discarded_greedily() {
    let (trace, tree, out) = merged(GRAPH, "capture_steps/greedy");
    // Steps of batch sizes 2, 4 and 8 all use the only capture (8): three
    // copies of its 10-event window, one after the other.
    for (o, (launch, first, ts)) in
        out.iter()
            .zip([(12, 30, 150.0), (17, 40, 450.0), (22, 50, 750.0)])
    {
        let m = o.result.as_ref().unwrap();
        assert_eq!((o.launch, m.first_uid, m.copied), (id(launch), first, 10));
        assert_eq!(
            (m.aligned.mode, m.aligned.discarded.as_slice()),
            (Mode::Greedy, &[3][..])
        );
        assert_eq!(m.first_discarded.as_deref(), Some("k_tail"));
        assert_eq!(trace.event(id(first + 9)).ts, ts);
        assert_eq!(trace.name(id(first + 8)), "aten::mul");
        // The discarded launch has no kernel.
        assert!(tree.is_leaf(id(first + 9)));
    }
    assert_eq!(tree.parent(id(19)), Some(id(45)));
    assert_eq!(trace.len(), 60);
    let dir = testdata("capture_steps/greedy");
    let (_t, csv, r) = report_csv(&testdata(GRAPH), &["--capture-dir", dir.to_str().unwrap()]);
    r.assert_ok();
    assert!(r.stderr.contains("merged 3 graph launches, 9 kernels, from cap_bs8.json (bs 8, FULL; kernels paired greedily (counts differ))"), "{}", r.stderr);
    assert!(r.stderr.contains(
        "greedy alignment discarded 1 of 4 capture launches (first: `k_tail`) for 3 graph launches"
    ));
    let ops = Table::load(&csv, "ops_summary");
    assert_eq!(
        ops.column("name"),
        ["aten::mm", "hipGraphLaunch", "aten::relu", "aten::add"]
    );
    assert_eq!(
        ops.column("total_direct_kernel_time_sum"),
        ["60.0", "25.0", "15.0", "4.0"]
    );
    let gemm = Table::load(&csv, "GEMM");
    assert_eq!(
        (gemm.cell(0, "UID_first"), gemm.cell(0, "name_count")),
        ("32", "6")
    );
}

#[test]
fn another_order_pairs_by_name() {
    let (_trace, tree, out) = merged(GRAPH, "capture_steps/grouped");
    let m = out[0].result.as_ref().unwrap();
    // Capture k_b, k_a, k_a against replay k_a, k_b, k_a.
    assert_eq!(m.aligned.mode, Mode::Grouped);
    assert_eq!(m.aligned.pairs, [(1, 0), (0, 1), (2, 2)]);
    // Copies: CaptureRoot 30, M_0 31, relu 32, launch 33, mm 34, launch 35, mm 36, launch 37.
    assert_eq!(
        [13, 14, 15].map(|k| tree.parent(id(k))),
        [Some(id(35)), Some(id(33)), Some(id(37))]
    );
    let dir = testdata("capture_steps/grouped");
    let (_t, csv, r) = report_csv(&testdata(GRAPH), &["--capture-dir", dir.to_str().unwrap()]);
    r.assert_ok();
    // Launchers tie on ts (150); the first kernel met (13) belongs to mm 34.
    let args = Table::load(&csv, "ops_unique_args");
    assert_eq!(
        args.column("name"),
        ["aten::mm", "hipGraphLaunch", "aten::relu", "aten::add"]
    );
    assert_eq!(args.column("ex_UID"), ["34", "26", "32", "7"]);
}

#[test]
fn a_capture_that_matches_nothing_is_an_error() {
    let dir = testdata("capture_steps/mismatch");
    let (_t, csv, r) = report_csv(&testdata(GRAPH), &["--capture-dir", dir.to_str().unwrap()]);
    let line = r.assert_one_error_line(dir.to_str().unwrap());
    assert!(line.contains("no graph launch could be merged (4 tried); graph launch `hipGraphLaunch` (UID 12, ts 150)"), "{line}");
    assert!(line.contains("replayed kernel 2 of 3 is `k_b` but capture launch 2 launched `k_x`"));
    assert!(!csv.exists());
}

#[test]
fn missing_execution_details_are_inferred_in_memory() {
    let dir = testdata("capture_steps/nodetails");
    let before = common::entries(&dir);
    let (_t, csv, r) = report_csv(&testdata(GRAPH), &["--capture-dir", dir.to_str().unwrap()]);
    r.assert_ok();
    // a_cap.json: one capture_8_FULL annotation and one _dummy_run frame;
    // b_cap.json: no annotation, one capture, first dimensions 16, 3, 16, 16, 3.
    assert!(r.stderr.contains("inferred in memory (not written) as the reference classifies capture traces: a_cap.json (batch size 8, mode FULL); b_cap.json (batch size 16, mode FULL)"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("merged 3 graph launches, 9 kernels, from a_cap.json (bs 8, FULL)")
    );
    assert_eq!(
        common::entries(&dir),
        before,
        "nothing is written into the folder"
    );
    let ops = Table::load(&csv, "ops_summary");
    assert_eq!(
        ops.column("total_direct_kernel_time_sum"),
        ["60.0", "25.0", "15.0", "4.0"]
    );
}

#[test]
fn two_streams_pair_per_stream() {
    // Replay: k_a (stream 7, ts 300), k_b (9, 302), k_c (7, 312); capture
    // order k_b, k_a, k_c. Copies: CaptureRoot 10, M_0 11, relu 12, launch
    // 13, mm 14, launch 15, sigmoid 16, launch 17.
    let (trace, tree, out) = merged("capture_streams/graph.json", "capture_streams/ok");
    let m = out[0].result.as_ref().unwrap();
    assert_eq!(m.aligned.mode, Mode::Streams);
    assert_eq!(
        [7, 8, 9].map(|k| tree.parent(id(k))),
        [Some(id(15)), Some(id(13)), Some(id(17))]
    );
    assert_eq!(launcher_of(&trace, &tree, id(9)), Some(id(16)));
    let dir = testdata("capture_streams/nonames");
    let (_t, _csv, r) = report_csv(
        &testdata("capture_streams/graph.json"),
        &["--capture-dir", dir.to_str().unwrap()],
    );
    let line = r.assert_one_error_line("capture_streams/nonames");
    assert!(line.contains("graph launch UID 6 replays kernels on several streams, but launches in cap.json lack args.kernel"), "{line}");
}

#[test]
fn bad_folders_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |dir: &Path, graph: &str| {
        report_csv(&testdata(graph), &["--capture-dir", dir.to_str().unwrap()]).2
    };
    // Not a directory.
    let file = testdata(GRAPH);
    let line = run(&file, GRAPH).assert_one_error_line("graph.json");
    assert!(line.ends_with("graph.json: not a directory"), "{line}");
    // An empty folder: no index and no capture traces.
    let line = run(tmp.path(), GRAPH).assert_one_error_line(tmp.path().to_str().unwrap());
    assert!(
        line.contains("no execution_details.json and no capture traces"),
        "{line}"
    );
    // A broken index names itself.
    std::fs::write(
        tmp.path().join("execution_details.json"),
        "[{\"file\": \"a.json\"}]",
    )
    .unwrap();
    let line = run(tmp.path(), GRAPH)
        .assert_one_error_line("execution_details.json: entry 1 has no \"batch_size\"");
    assert!(line.starts_with("tracelens: error: --capture-dir"));
    // A trace without graph launches has nothing to merge.
    std::fs::write(tmp.path().join("execution_details.json"), "[]").unwrap();
    let line = run(tmp.path(), "example.json").assert_one_error_line("nothing to merge");
    assert!(line.contains("the trace has no graph launch"));
    // A capture trace that cannot be read names itself.
    std::fs::write(
        tmp.path().join("execution_details.json"),
        r#"[{"file": "bad.json", "batch_size": 8, "mode": "FULL"}]"#,
    )
    .unwrap();
    std::fs::write(tmp.path().join("bad.json"), "{\"traceEvents\": [").unwrap();
    let line = run(tmp.path(), GRAPH).assert_one_error_line("bad.json");
    assert!(line.contains("--capture-dir"), "{line}");
}

#[test]
fn piecewise_windows_pair_with_the_steps_launches_in_order() {
    // One step (batch size 2) with two graph launches: k_a, k_b at ts 150
    // and k_c at ts 250. FULL and PIECEWISE captures of batch size 2 exist;
    // with two launches the PIECEWISE one (two windows) is chosen. Copies:
    // window 1 -> CaptureRoot 11, M_0 12, mm 13, launch 14, relu 15, launch
    // 16; window 2 -> CaptureRoot 17, M_0 18, sigmoid 19, launch 20.
    let (trace, tree, out) = merged("capture_piecewise/graph.json", "capture_piecewise/captures");
    let firsts: Vec<(usize, usize)> = out
        .iter()
        .map(|o| {
            let m = o.result.as_ref().unwrap();
            assert_eq!((m.file.as_str(), m.mode.as_str()), ("pw.json", "PIECEWISE"));
            (m.first_uid, m.copied)
        })
        .collect();
    assert_eq!(firsts, [(11, 6), (17, 4)]);
    assert_eq!(
        [7, 8, 10].map(|k| tree.parent(id(k))),
        [Some(id(14)), Some(id(16)), Some(id(20))]
    );
    assert_eq!(
        (trace.event(id(19)).ts, trace.event(id(19)).dur),
        (250.0, 7.0)
    );
    assert_eq!(tree.children(id(9)).collect::<Vec<_>>(), [id(17)]);
}
