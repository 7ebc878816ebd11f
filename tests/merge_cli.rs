//! `tracelens merge` end to end: the two hand-made ranks in
//! `testdata/merge/` (expected values worked out by hand in the comments),
//! the options, bad inputs and refused outputs; and, with `../shared`, the
//! reference's merged traces of its two small ranks and of the 8 DLRM ranks.

mod common;

use std::path::{Path, PathBuf};

use common::{csv_text, gunzip, gzip, run, testdata, tracelens};
use serde_json::{Value, json};

/// The hand-made ranks, rank 0 first.
fn ranks() -> [PathBuf; 2] {
    [testdata("merge/rank0.json"), testdata("merge/rank1.json")]
}

/// Runs `tracelens merge ARGS`.
fn merge(args: &[&Path]) -> common::Run {
    run(tracelens().arg("merge").args(args))
}

/// The events of a merged trace (gzip or plain).
fn events_of(path: &Path) -> Vec<Value> {
    let bytes = std::fs::read(path).unwrap();
    let bytes = match bytes.starts_with(&[0x1f, 0x8b]) {
        true => gunzip(&bytes),
        false => bytes,
    };
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["traceEvents"], "only traceEvents at the top");
    doc["traceEvents"].as_array().unwrap().clone()
}

/// The names of the events, in order.
fn names(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["name"].as_str().unwrap()).collect()
}

/// Merges the hand-made ranks with `extra` options into a temporary
/// folder; the folder, the output and the run.
fn merge_ranks(out_name: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf, common::Run) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(out_name);
    let [a, b] = ranks();
    let r = run(tracelens()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .args(extra));
    (dir, out, r)
}

/// The rank labels the merge appends: (pid, name, sort index).
fn labels(events: &[Value]) -> Vec<(i64, String, i64)> {
    events
        .chunks(2)
        .map(|p| {
            assert_eq!(p[0]["name"], "process_name");
            assert_eq!(p[1]["name"], "process_sort_index");
            assert_eq!(p[0]["pid"], p[1]["pid"]);
            (
                p[0]["pid"].as_i64().unwrap(),
                p[0]["args"]["name"].as_str().unwrap().to_string(),
                p[1]["args"]["sort_index"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn two_ranks_default_filter_offsets_and_labels() {
    let (_dir, out, r) = merge_ranks("merged.json.gz", &[]);
    r.assert_ok();
    // Written at exactly the -o path, gzip-packed.
    assert!(std::fs::read(&out).unwrap().starts_with(&[0x1f, 0x8b]));
    assert!(r.stdout.contains("merged 2 ranks"), "{}", r.stdout);
    assert!(
        r.stdout.contains("no trace records baseTimeNanoseconds"),
        "{}",
        r.stdout
    );
    let ev = events_of(&out);
    // Each rank: 10 events less process_name, python_function and Trace.
    let per_rank = |r: usize| {
        [
            "thread_name".to_string(),
            "aten::mm".to_string(),
            "cudaLaunchKernel".to_string(),
            format!("gemm_rank{r}"),
            "aten::add".to_string(),
            "cudaLaunchKernel".to_string(),
            format!("add_rank{r}"),
        ]
    };
    assert_eq!(names(&ev[..7]), per_rank(0));
    assert_eq!(names(&ev[7..14]), per_rank(1));
    // pid max 12 -> 10^(ceil(log10 13) + 1) = 1000; correlation max 78
    // -> 1000; no `id`: no offset. Rank 1's kernel: pid 2 + 1000.
    let k = &ev[10];
    assert_eq!(k["name"], "gemm_rank1");
    assert_eq!(k["pid"], 1002);
    assert_eq!(k["tid"], 7);
    assert_eq!(k["ts"], 1600);
    assert_eq!(
        k["args"],
        json!({"External id": 5, "correlation": 1090, "device": 2, "stream": 7,
               "rank": 1, "pid_raw": 2, "correlation_raw": 90})
    );
    // Rank 0 keeps its values, with the copies.
    assert_eq!(ev[3]["pid"], 1);
    assert_eq!(ev[3]["args"]["correlation"], 77);
    assert_eq!(ev[3]["args"]["correlation_raw"], 77);
    assert_eq!(ev[3]["args"]["rank"], 0);
    // By (rank, pid): rank 0's GPU pid 1 (sort 1), CPU 12 (sort 0); rank
    // 1's GPU 1002 (sort 3), CPU 1013 (sort 2).
    assert_eq!(
        labels(&ev[14..]),
        [
            (1, "RANK 0 - GPU".to_string(), 1),
            (12, "RANK 0 - CPU".to_string(), 0),
            (1002, "RANK 1 - GPU".to_string(), 3),
            (1013, "RANK 1 - CPU".to_string(), 2),
        ]
    );
}

#[test]
fn include_pyfunc_keeps_python_functions_with_rank_and_offset() {
    let (_dir, out, r) = merge_ranks("merged.json", &["--include-pyfunc"]);
    r.assert_ok();
    let bytes = std::fs::read(&out).unwrap();
    assert!(bytes.starts_with(b"{"), "plain JSON without .gz");
    let ev = events_of(&out);
    assert_eq!(ev.len(), 2 * 8 + 8);
    let py: Vec<&Value> = ev
        .iter()
        .filter(|e| e["cat"] == "python_function")
        .collect();
    assert_eq!(py.len(), 2);
    // It had no args: they are made.
    assert_eq!(py[1]["pid"], 1013);
    assert_eq!(py[1]["args"], json!({"rank": 1, "pid_raw": 13}));
    assert!(ev.iter().all(|e| e["cat"] != "Trace"));
}

#[test]
fn window_keeps_events_overlapping_it() {
    let (_dir, out, r) = merge_ranks("w.json.gz", &["--window", "1000:1500"]);
    r.assert_ok();
    assert!(r.stdout.contains("outside the window"), "{}", r.stdout);
    let ev = events_of(&out);
    // Rank 0: mm (1010-1060), its launch and gemm (1100-1130) overlap;
    // add at 2000 does not. Rank 1: mm (1490-1540) and its launch
    // (1495) overlap; gemm at 1600 does not. Thread names have no ts.
    assert_eq!(
        names(&ev[..8]),
        [
            "thread_name",
            "aten::mm",
            "cudaLaunchKernel",
            "gemm_rank0",
            "thread_name",
            "aten::mm",
            "cudaLaunchKernel",
            "process_name",
        ]
    );
    // Rank 1 kept no GPU event: its pid 1013 is a CPU; pid 1002 is not
    // labelled at all.
    assert_eq!(
        labels(&ev[7..]),
        [
            (1, "RANK 0 - GPU".to_string(), 1),
            (12, "RANK 0 - CPU".to_string(), 0),
            (1013, "RANK 1 - CPU".to_string(), 2),
        ]
    );
    let bad = merge_ranks("w2.json.gz", &["--window", "5:1"]);
    bad.2.assert_one_error_line("--window");
    assert!(!bad.1.exists());
}

#[test]
fn bad_inputs_fail_with_one_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(testdata("merge/rank1.json")).unwrap();
    let zipped = gzip(&text);
    let cases: [(&str, Vec<u8>); 4] = [
        ("truncated.json.gz", zipped[..zipped.len() / 2].to_vec()),
        ("cut.json", text[..text.len() - 40].to_vec()),
        ("empty.json", Vec::new()),
        (
            "nonobject.json",
            br#"{"traceEvents": [{"ph": "X"}, 3]}"#.to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        let bad = dir.path().join(name);
        std::fs::write(&bad, bytes).unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        let out = out_dir.path().join("m.json.gz");
        let r = merge(&[&testdata("merge/rank0.json"), &bad, Path::new("-o"), &out]);
        r.assert_one_error_line(name);
        let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: left {left:?}");
    }
}

#[test]
fn output_on_an_input_or_in_the_trace_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b] = ranks();
    let a2 = dir.path().join("rank0.json");
    std::fs::copy(&a, &a2).unwrap();
    let before = std::fs::read(&a2).unwrap();
    let r = merge(&[&a2, &b, Path::new("-o"), &a2]);
    r.assert_one_error_line("rank0.json");
    assert_eq!(
        std::fs::read(&a2).unwrap(),
        before,
        "the input is untouched"
    );
    // The same file by another spelling.
    let other = dir.path().join(".").join("rank0.json");
    merge(&[&a2, &b, Path::new("-o"), &other]).assert_one_error_line("rank0.json");
    // Inside --trace-dir it would be read as a rank next time.
    let r = run(tracelens()
        .arg("merge")
        .arg("--trace-dir")
        .arg(dir.path())
        .arg("-o")
        .arg(dir.path().join("merged.json.gz")));
    r.assert_one_error_line("merged.json.gz");
    assert!(!dir.path().join("merged.json.gz").exists());
}

#[cfg(unix)]
#[test]
fn a_link_as_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("m.json.gz");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let [a, b] = ranks();
    merge(&[&a, &b, Path::new("-o"), &link]).assert_one_error_line("m.json.gz");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn trace_dir_finds_ranks_as_collectives_does() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    // Named so that name order is not rank order: ranks come from the
    // file names' rank numbers.
    std::fs::copy(testdata("merge/rank1.json"), traces.join("b_rank1.json")).unwrap();
    std::fs::copy(testdata("merge/rank0.json"), traces.join("c_rank0.json")).unwrap();
    let out = dir.path().join("m.json.gz");
    let r = run(tracelens()
        .arg("merge")
        .arg("--trace-dir")
        .arg(&traces)
        .arg("-o")
        .arg(&out));
    r.assert_ok();
    let ev = events_of(&out);
    assert_eq!(ev[3]["name"], "gemm_rank0");
    assert_eq!(ev[10]["name"], "gemm_rank1");
    assert_eq!(ev[10]["pid"], 1002);
}

#[test]
fn merged_trace_opens_in_report_and_tree() {
    let (dir, out, r) = merge_ranks("m.json.gz", &[]);
    r.assert_ok();
    let csv = dir.path().join("csv");
    let rep = run(tracelens().arg("report").arg(&out).arg("--csv").arg(&csv));
    rep.assert_ok();
    // Both ranks' GPU kernels are linked to their ops, and both ranks'
    // processes carry their labels.
    let kernels = csv_text(&csv, "kernel_summary");
    for k in ["gemm_rank0", "gemm_rank1", "add_rank0", "add_rank1"] {
        assert!(kernels.contains(k), "{k} missing: {kernels}");
    }
    let ops = csv_text(&csv, "ops_unique_args");
    assert!(
        ops.contains("RANK 0 - CPU") && ops.contains("RANK 1 - CPU"),
        "{ops}"
    );
    let tree = run(tracelens().arg("tree").arg(&out));
    tree.assert_ok();
    assert!(tree.stdout.contains("gemm_rank0") && tree.stdout.contains("gemm_rank1"));
}

/// The events of a reference output (gzip JSON).
fn reference_events(name: &str) -> Vec<Value> {
    events_of(&common::shared().join("corpus/fusion").join(name))
}

/// Compares event lists one by one, naming the first difference.
fn assert_same_events(ours: &[Value], reference: &[Value]) {
    for (i, (a, b)) in ours.iter().zip(reference).enumerate() {
        assert_eq!(a, b, "event {i} differs");
    }
    assert_eq!(ours.len(), reference.len(), "event counts differ");
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn two_small_ranks_match_the_reference() {
    let fusion = common::shared().join("corpus/fusion");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged_trace.json.gz");
    let r = merge(&[
        &fusion.join("rank0.json"),
        &fusion.join("rank1.json"),
        Path::new("-o"),
        &out,
    ]);
    r.assert_ok();
    assert_same_events(&events_of(&out), &reference_events("merged_trace.json.gz"));
}

/// The 8 DLRM rank traces, in name order.
fn dlrm_ranks() -> Vec<PathBuf> {
    let dir = common::shared().join("corpus/multirank/dlrm_v100_8rank");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 8);
    files
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn eight_dlrm_ranks_match_the_reference_and_open_in_report_and_tree() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dlrm_merged.json.gz");
    let r = run(tracelens()
        .arg("merge")
        .args(dlrm_ranks())
        .arg("-o")
        .arg(&out));
    r.assert_ok();
    let reference = reference_events("dlrm_v100_8rank_merged.json.gz");
    assert_same_events(&events_of(&out), &reference);
    // --trace-dir finds the same ranks (distributedInfo.rank).
    let by_dir = dir.path().join("by_dir.json.gz");
    let shared = common::shared();
    let r = run(tracelens()
        .arg("merge")
        .arg("--trace-dir")
        .arg(shared.join("corpus/multirank/dlrm_v100_8rank"))
        .arg("-o")
        .arg(&by_dir));
    r.assert_ok();
    assert_same_events(&events_of(&by_dir), &reference);
    let csv = dir.path().join("csv");
    run(tracelens().arg("report").arg(&out).arg("--csv").arg(&csv)).assert_ok();
    let ops = csv_text(&csv, "ops_unique_args");
    for rank in 0..8 {
        assert!(ops.contains(&format!("RANK {rank} - CPU")), "rank {rank}");
    }
    let tree = run(tracelens().arg("tree").arg(&out));
    tree.assert_ok();
    assert!(tree.stdout.contains("(kernel)"));
}

#[test]
fn clock_bases_are_reported_and_timestamps_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut traces = Vec::new();
    for (r, base) in [
        (0, 1_700_000_000_000_000_000i64),
        (1, 1_700_000_000_000_250_000),
    ] {
        let text = std::fs::read_to_string(testdata(&format!("merge/rank{r}.json"))).unwrap();
        let with_base = text.replacen(
            "{\"schemaVersion\": 1,",
            &format!("{{\"baseTimeNanoseconds\": {base}, \"schemaVersion\": 1,"),
            1,
        );
        assert_ne!(with_base, text);
        let path = dir.path().join(format!("rank{r}.json"));
        std::fs::write(&path, with_base).unwrap();
        traces.push(path);
    }
    let out = dir.path().join("out").join("m.json.gz");
    let r = merge(&[&traces[0], &traces[1], Path::new("-o"), &out]);
    r.assert_ok();
    assert!(
        r.stdout
            .contains("baseTimeNanoseconds differs between the traces by up to 250000 ns"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("not aligned"), "{}", r.stdout);
    let ev = events_of(&out);
    assert_eq!(ev[10]["name"], "gemm_rank1");
    assert_eq!(ev[10]["ts"], 1600);
}

/// The hand-made ranks written into `dir` with `baseTimeNanoseconds`
/// values `bases` (None: left without one).
fn ranks_with_bases(dir: &Path, bases: [Option<i64>; 2]) -> [PathBuf; 2] {
    let mut out = ranks();
    for (i, base) in bases.iter().enumerate() {
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&out[i]).unwrap()).unwrap();
        if let Some(b) = base {
            doc["baseTimeNanoseconds"] = json!(b);
        }
        let path = dir.join(format!("r{i}.json"));
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        out[i] = path;
    }
    out
}

#[test]
fn align_clock_moves_each_rank_onto_rank_0s_base() {
    let dir = tempfile::tempdir().unwrap();
    // Rank 1's clock starts 2.5 ms after rank 0's: its ts + 2500 µs.
    let [a, b] = ranks_with_bases(dir.path(), [Some(1_000_000_000), Some(1_002_500_000)]);
    let plain = dir.path().join("plain.json");
    let aligned = dir.path().join("aligned.json");
    run(tracelens()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&plain))
    .assert_ok();
    let r = run(tracelens()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&aligned)
        .arg("--align-clock"));
    r.assert_ok();
    assert!(
        r.stdout
            .contains("clock: aligned on rank 0's baseTimeNanoseconds: rank 1 +2500 µs"),
        "{}",
        r.stdout
    );
    let (p, q) = (events_of(&plain), events_of(&aligned));
    assert_eq!(p.len(), q.len());
    for (e, f) in p.iter().zip(&q) {
        match (e["args"]["rank"].as_i64(), e["ts"].as_i64()) {
            (Some(1), Some(ts)) => assert_eq!(f["ts"], ts + 2500, "{e}"),
            _ => assert_eq!(e["ts"], f["ts"], "{e}"),
        }
    }
    // A shift of part of a µs makes the shifted ts floats.
    let [a, b] = ranks_with_bases(dir.path(), [Some(0), Some(1500)]);
    let frac = dir.path().join("frac.json");
    run(tracelens()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&frac)
        .arg("--align-clock"))
    .assert_ok();
    let gemm = events_of(&frac)
        .into_iter()
        .find(|e| e["name"] == "gemm_rank1")
        .unwrap();
    let want = events_of(&plain)
        .into_iter()
        .find(|e| e["name"] == "gemm_rank1")
        .unwrap()["ts"]
        .as_f64()
        .unwrap()
        + 1.5;
    assert_eq!(gemm["ts"].as_f64(), Some(want));
    // A trace without a clock base: one line naming it, nothing written.
    let [a, b] = ranks_with_bases(dir.path(), [Some(0), None]);
    let out = dir.path().join("none.json");
    let r = run(tracelens()
        .arg("merge")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .arg("--align-clock"));
    let line = r.assert_one_error_line("records no baseTimeNanoseconds");
    assert!(line.contains("r1.json"), "{line}");
    assert!(!out.exists());
}
