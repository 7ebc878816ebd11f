//! `tracelens genesis` end to end on capture folders built here: a JIT
//! dispatch, a 2 s gap, then a burst of three steps of two kernels, beside
//! a copy of the corpus Perfetto fixture. Expected cells are worked out by
//! hand from the dispatch times (comments give the arithmetic); the
//! corpus capture's check against the reference is in `conformance.rs`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{csv_text, files_under, parse_csv, run, testdata, tracelens};

const HEADER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"";

/// The kernel-trace CSV: copyBuffer at 1 s (5 µs); from 3 s, three steps
/// 20 µs apart of kernel_step_1 (10 µs) then func_broad_phase (4 µs,
/// touching it).
fn kernel_csv() -> String {
    let mut rows = vec![HEADER.to_string()];
    let mut push = |id: u64, kid: u64, name: &str, start: u64, end: u64| {
        rows.push(format!(
            "\"KERNEL_DISPATCH\",\"Agent 1\",1,0,77,{id},{kid},\"{name}\",{id},{start},{end},0,0,16,0,32,64,1,1,4096,1,1"
        ));
    };
    push(
        1,
        1,
        "__amd_rocclr_copyBuffer",
        1_000_000_000,
        1_000_005_000,
    );
    for i in 0..3u64 {
        let s = 3_000_000_000 + i * 20_000;
        push(2 + 2 * i, 2, "kernel_step_1_c532_range_for", s, s + 10_000);
        push(
            3 + 2 * i,
            3,
            "func_broad_phase_c402_range_for",
            s + 10_000,
            s + 14_000,
        );
    }
    rows.join("\n") + "\n"
}

/// A capture folder in `root`: kernel_trace/ with the CSV, the agent info
/// and the Perfetto fixture; run.log and the manifest.
fn capture(root: &Path) -> PathBuf {
    let dir = root.join("capture");
    let kt = dir.join("kernel_trace");
    std::fs::create_dir_all(&kt).unwrap();
    std::fs::write(kt.join("kernel_kernel_trace.csv"), kernel_csv()).unwrap();
    std::fs::write(
        kt.join("kernel_agent_info.csv"),
        "\"Node_Id\",\"Agent_Type\",\"Name\"\n0,\"CPU\",\"cpu\"\n1,\"GPU\",\"gfx942\"\n",
    )
    .unwrap();
    std::fs::copy(
        testdata("pftrace/corpus_fixture.pftrace"),
        kt.join("kernel_results.pftrace"),
    )
    .unwrap();
    // A 10.5 s fallback window holds every dispatch: the gap cut wins.
    std::fs::write(dir.join("run.log"), "n_envs= 8 | wall_time=10s | FPS=3\n").unwrap();
    std::fs::write(
        dir.join("capture_manifest.json"),
        r#"{"timestamp": "20261204_120000", "n_envs": 8, "num_steps": 3, "precision": "16"}"#,
    )
    .unwrap();
    dir
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_under(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

/// `genesis --capture-dir CAPTURE --output-dir OUT --csv CSV -q EXTRA`.
fn genesis(capture: &Path, out: &Path, csv: &Path, extra: &[&str]) -> common::Run {
    run(tracelens()
        .arg("genesis")
        .arg("--capture-dir")
        .arg(capture)
        .arg("--output-dir")
        .arg(out)
        .arg("--csv")
        .arg(csv)
        .args(extra))
}

/// Column `name` of a CSV sheet, as text.
fn column(dir: &Path, sheet: &str, name: &str) -> Vec<String> {
    let cells = parse_csv(&csv_text(dir, sheet));
    let c = cells[0].iter().position(|h| h == name).unwrap();
    cells[1..].iter().map(|r| r[c].clone()).collect()
}

#[test]
fn the_burst_after_the_gap_is_the_timeline_and_kernels_get_physics_categories() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = capture(tmp.path());
    let before = snapshot(&cap);
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    let r = genesis(&cap, &out, &csv, &[]);
    r.assert_ok();
    // Gap: 3 000 000 000 - 1 000 005 000 ns = 1999.995 ms, shown to one decimal.
    assert!(
        r.stdout
            .contains("steady state: after_max_gap_2000.0ms (6 dispatches"),
        "{}",
        r.stdout
    );
    // Window 3 s .. 3 s + 54 µs; busy 3 x 14 µs = 42 µs; idle 12 µs.
    assert_eq!(
        column(&csv, "gpu_timeline", "time ms"),
        ["0.054", "0.042", "0.0", "0.042", "0.012"]
    );
    let pct = column(&csv, "gpu_timeline", "percent");
    assert_eq!(pct[1], (100.0 * 42_000.0 / 54_000.0_f64).to_string());
    // All dispatches, in ms and µs: 3 x 10 µs = 0.03 ms, mean 10 µs; the
    // median stays in ns as the reference leaves it.
    assert_eq!(
        column(&csv, "kernel_summary", "name"),
        [
            "kernel_step_1_c532_range_for",
            "func_broad_phase_c402_range_for",
            "__amd_rocclr_copyBuffer"
        ]
    );
    assert_eq!(
        column(&csv, "kernel_summary", "Total Kernel Time (ms)"),
        ["0.03", "0.012", "0.005"]
    );
    assert_eq!(
        column(&csv, "kernel_summary", "Mean Kernel Time (µs)"),
        ["10.0", "4.0", "5.0"]
    );
    assert_eq!(
        column(&csv, "kernel_summary", "Median Kernel Time (µs)"),
        ["10000.0", "4000.0", "5000.0"]
    );
    assert_eq!(
        column(&csv, "kernel_summary", "Category"),
        [
            "Time Integration",
            "Broadphase Collision",
            "Memory Ops (ROCm)"
        ]
    );
    // 30, 12 and 5 of 47 µs; the running share goes alphabetically
    // (Broadphase, Memory Ops, Time Integration), rows by time.
    assert_eq!(
        column(&csv, "kernel_summary_by_category", "op category"),
        [
            "Time Integration",
            "Broadphase Collision",
            "Memory Ops (ROCm)"
        ]
    );
    let cum = column(
        &csv,
        "kernel_summary_by_category",
        "Cumulative Percentage (%)",
    );
    let cum: Vec<f64> = cum.iter().map(|c| c.parse().unwrap()).collect();
    assert_eq!(cum[0], 100.0);
    assert!((cum[1] - 1200.0 / 47.0).abs() < 1e-9, "{cum:?}");
    assert!((cum[2] - 1700.0 / 47.0).abs() < 1e-9, "{cum:?}");
    // The Perfetto sheets are the fixture's report's.
    let (_t, report) = {
        let (t, dir, r) = common::report_csv(&testdata("pftrace/corpus_fixture.pftrace"), &[]);
        r.assert_ok();
        (t, dir)
    };
    assert_eq!(
        csv_text(&csv, "pftrace_hip_activity_hip_summar"),
        csv_text(&report, "hip_summary")
    );
    assert_eq!(
        csv_text(&csv, "pftrace_memory_copy_memory_copy"),
        csv_text(&report, "memory_copy_by_copy_bytes")
    );
    let page = std::fs::read_to_string(out.join("genesis_summary.md")).unwrap();
    for line in [
        "**Capture:** 20261204_120000 — n_envs=8, steps=3, fp16",
        "Steady-state window: `after_max_gap_2000.0ms` — 6 dispatches, **77.8%** GPU busy over 0.1 ms",
        "- **idle**: 0.01 ms (22.2%)",
        "| `kernel_step_1_c532_range_for` | 3 | 0.0 | 63.83 | Time Integration |",
        "## Top HIP API (pftrace)",
    ] {
        assert!(page.contains(line), "{line:?} not in:\n{page}");
    }
    assert!(out.join("genesis_perf_report.xlsx").is_file());
    assert_eq!(snapshot(&cap), before, "the capture folder was written to");
}

#[test]
fn a_shorter_fallback_window_wins_when_it_is_busier() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = capture(tmp.path());
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    // The last 15 µs (from 3 s + 39 µs) hold the last step only: 14 µs of
    // 14 µs busy, 100 % against the burst's 77.8 %.
    let r = genesis(&cap, &out, &csv, &["--steady-state-fallback-s", "0.000015"]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains("steady state: last_0.0s (2 dispatches, 100.0 %"),
        "{}",
        r.stdout
    );
    assert_eq!(column(&csv, "gpu_timeline", "time ms")[0], "0.014");
}

#[test]
fn sheet_options_add_and_drop_sheets() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = capture(tmp.path());
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    genesis(
        &cap,
        &out,
        &csv,
        &["--kernel-details", "--no-short-kernel-study", "-q"],
    )
    .assert_ok();
    let mut names: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "gpu_timeline.csv",
            "kernel_details.csv",
            "kernel_summary.csv",
            "kernel_summary_by_category.csv",
            "pftrace_hip_activity_category_s.csv",
            "pftrace_hip_activity_hip_summar.csv",
            "pftrace_hip_activity_kernel_sum.csv",
            "pftrace_hip_activity_xla_top.csv",
            "pftrace_memory_copy_memory_copy.csv",
        ]
    );
    assert_eq!(parse_csv(&csv_text(&csv, "kernel_details")).len(), 1 + 7);
}

#[test]
fn outputs_inside_the_capture_folder_are_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = capture(tmp.path());
    let before = snapshot(&cap);
    for (out, csv) in [
        (cap.join("analysis"), tmp.path().join("csv")),
        (tmp.path().join("out"), cap.join("kernel_trace")),
        (cap.clone(), tmp.path().join("csv")),
    ] {
        let r = genesis(&cap, &out, &csv, &[]);
        r.assert_one_error_line("inside the capture folder");
        assert_eq!(snapshot(&cap), before);
        assert!(!tmp.path().join("csv").exists() && !tmp.path().join("out").exists());
    }
}

#[test]
fn bad_captures_get_one_line_and_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = capture(tmp.path());
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    // A timestamp that is not an integer.
    let kt = cap.join("kernel_trace/kernel_kernel_trace.csv");
    let text = kernel_csv().replacen("1000005000", "10000x5000", 1);
    std::fs::write(&kt, text).unwrap();
    genesis(&cap, &out, &csv, &[]).assert_one_error_line("kernel_kernel_trace.csv");
    assert!(!out.exists() && !csv.exists());
    // A corrupt Perfetto trace.
    std::fs::write(&kt, kernel_csv()).unwrap();
    let pf = cap.join("kernel_trace/kernel_results.pftrace");
    let bytes = std::fs::read(&pf).unwrap();
    std::fs::write(&pf, &bytes[..bytes.len() / 2]).unwrap();
    genesis(&cap, &out, &csv, &[]).assert_one_error_line("kernel_results.pftrace");
    assert!(!out.exists() && !csv.exists());
    // No kernel trace at all.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    genesis(&empty, &out, &csv, &[]).assert_one_error_line("no kernel trace");
    genesis(&tmp.path().join("absent"), &out, &csv, &[]).assert_one_error_line("not a folder");
    assert!(!out.exists() && !csv.exists());
}

#[test]
fn a_json_kernel_trace_keeps_the_session_timeline_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = tmp.path().join("capture");
    std::fs::create_dir(&cap).unwrap();
    std::fs::copy(testdata("rocprof/small.json"), cap.join("x_results.json")).unwrap();
    let (out, csv) = (tmp.path().join("out"), tmp.path().join("csv"));
    let r = genesis(&cap, &out, &csv, &["-q"]);
    r.assert_ok();
    assert!(r.stderr.contains("no kernel-trace CSV"), "{}", r.stderr);
    // The rocprof report's own timeline of the same trace.
    let (_t, report, rr) = common::report_csv(&testdata("rocprof/small.json"), &[]);
    rr.assert_ok();
    assert_eq!(
        csv_text(&csv, "gpu_timeline"),
        csv_text(&report, "gpu_timeline")
    );
    let page = std::fs::read_to_string(out.join("genesis_summary.md")).unwrap();
    assert!(page.contains("Steady-state window: not found"), "{page}");
    assert!(!page.contains("Top HIP API"), "no .pftrace, no HIP table");
}
