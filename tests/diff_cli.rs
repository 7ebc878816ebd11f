//! `tracelens diff` on hand-written pairs (`testdata/diff/`), one behaviour
//! each: an op renamed, a kernel split in two, a subtree on one side only.
//! The expected merged trees were worked out by hand from the merge rules
//! (spec C4–C8) and confirmed with the reference's TraceDiff, which writes
//! the same six files byte for byte on these pairs. Also: the Markdown
//! view, a trace diffed with itself, refused inputs, all-or-nothing output.

mod common;

use common::{Table, run, testdata, tracelens};
use std::path::{Path, PathBuf};

fn pair(name: &str) -> (PathBuf, PathBuf) {
    (
        testdata(&format!("diff/{name}_base.json")),
        testdata(&format!("diff/{name}_variant.json")),
    )
}

/// Runs `diff` on the pair into a fresh folder; returns it (kept alive by
/// the temp dir).
fn diff_pair(name: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf, common::Run) {
    let (a, b) = pair(name);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .args(extra));
    (tmp, out, r)
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

fn json(dir: &Path, f: &str) -> serde_json::Value {
    serde_json::from_str(&read(dir, f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

/// The reference's six files and the health checks of both traces.
const OUT_FILES: [&str; 7] = [
    "cpu_op_map.json",
    "cpu_op_map_trace1.json",
    "cpu_op_map_trace2.json",
    "diff_stats.csv",
    "diff_stats_unique_args_summary.csv",
    "health.csv",
    "merged_tree_output.txt",
];

#[test]
fn renamed_op_is_matched_by_position_and_given_a_common_name() {
    let (_t, out, r) = diff_pair("renamed", &["-q"]);
    r.assert_ok();
    assert_eq!(common::entries(&out), OUT_FILES);
    // Same number of children, no launch among them: matched by position
    // although the names differ.
    assert_eq!(
        read(&out, "merged_tree_output.txt"),
        "├── aten::linear\n\
         │   └── combined: aten::addmm | aten::mm\n\
         │       └── cudaLaunchKernel\n\
         │           └── gemm_kernel\n\
         └── aten::relu\n    \
             └── cudaLaunchKernel\n        \
                 └── relu_kernel\n"
    );
    // Matched kernels are their own LCA; the slower variant kernel shows.
    let stats = Table::load(&out, "diff_stats");
    assert_eq!(
        stats.column("lowest_common_ancestor_name")[..2],
        ["gemm_kernel"; 2]
    );
    assert_eq!(
        stats.column("cpu_op_name")[..2],
        ["aten::addmm", "aten::mm"]
    );
    assert_eq!(stats.column("busy_time")[..2], ["20.5", "25.25"]);
    // The two names under one LCA: "mm" is part of "addmm", so both become "mm".
    let map = json(&out, "cpu_op_map.json");
    assert_eq!(map["mm"]["trace1"]["kernels"][0], "gemm_kernel");
    assert_eq!(map["mm"]["trace2"]["kernels"][0], "gemm_kernel");
    assert!(map.get("aten::addmm").is_none());
    // The per-trace maps keep the original names.
    assert_eq!(
        json(&out, "cpu_op_map_trace1.json")["aten::addmm"][0],
        "gemm_kernel"
    );
    assert_eq!(
        json(&out, "cpu_op_map_trace2.json")["aten::mm"][0],
        "gemm_kernel"
    );
    let summary = Table::load(&out, "diff_stats_unique_args_summary");
    assert_eq!(
        summary.column("cpu_op_name"),
        ["mm", "mm", "aten::relu", "aten::relu"]
    );
    assert_eq!(
        summary.column("kernel_time_sum"),
        ["25.25", "20.5", "4.0", "4.0"]
    );
}

#[test]
fn split_kernel_is_attributed_to_the_op_above_both_launches() {
    let (_t, out, r) = diff_pair("split", &["-q"]);
    r.assert_ok();
    // CUDA and HIP launch calls differ by name: each side's launches stay
    // one-sided under the matched op.
    assert_eq!(
        read(&out, "merged_tree_output.txt"),
        "├── aten::mm\n\
         │   ├── >> trace1: cudaLaunchKernel\n\
         │   │   └── >> trace1: sm90_gemm_128x128\n\
         │   ├── << trace2: hipLaunchKernel\n\
         │   │   └── << trace2: Cijk_gemm_part1\n\
         │   └── << trace2: hipLaunchKernel\n\
         │       └── << trace2: Cijk_gemm_part2\n\
         └── aten::add\n    \
             ├── >> trace1: cudaLaunchKernel\n    \
             │   └── >> trace1: add_kernel\n    \
             └── << trace2: hipLaunchKernel\n        \
                 └── << trace2: add_kernel\n"
    );
    let stats = Table::load(&out, "diff_stats");
    assert_eq!(
        stats.column("name"),
        [
            "sm90_gemm_128x128",
            "Cijk_gemm_part1",
            "Cijk_gemm_part2",
            "add_kernel",
            "add_kernel"
        ]
    );
    assert_eq!(
        stats.column("lowest_common_ancestor_name")[..3],
        ["aten::mm"; 3]
    );
    // Busy time under the LCA: 30 µs vs the union of 12 and 14 µs.
    assert_eq!(stats.column("busy_time")[..3], ["30.0", "26.0", "26.0"]);
    assert_eq!(stats.column("Input Dims")[0], "((64, 32), (32, 16))");
    let map = json(&out, "cpu_op_map.json");
    assert_eq!(
        map["aten::mm"]["trace2"]["kernels"],
        serde_json::json!(["Cijk_gemm_part1", "Cijk_gemm_part2"])
    );
}

#[test]
fn one_sided_subtree_is_marked_and_attributed_to_its_parent() {
    let (_t, out, r) = diff_pair("subtree", &["-q"]);
    r.assert_ok();
    assert_eq!(
        read(&out, "merged_tree_output.txt"),
        "└── mylib::fused_block\n    \
             ├── aten::add\n    \
             │   └── cudaLaunchKernel\n    \
             │       └── add_kernel\n    \
             └── << trace2: aten::dropout\n        \
                 └── << trace2: aten::native_dropout\n            \
                     └── << trace2: cudaLaunchKernel\n                \
                         └── << trace2: dropout_kernel\n"
    );
    let stats = Table::load(&out, "diff_stats");
    // The dropout kernel has no counterpart: its LCA is the block.
    assert_eq!(stats.cell(0, "name"), "dropout_kernel");
    assert_eq!(stats.cell(0, "source"), "trace2");
    assert_eq!(
        stats.cell(0, "lowest_common_ancestor_name"),
        "mylib::fused_block"
    );
    assert_eq!(stats.cell(0, "cpu_op_name"), "aten::native_dropout");
    let map = json(&out, "cpu_op_map.json");
    assert!(map["aten::native_dropout"].get("trace1").is_none());
}

#[test]
fn markdown_ranks_where_the_time_moved() {
    let (a, b) = pair("split");
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--md", "-", "--top", "1"]));
    r.assert_ok();
    let md = &r.stdout;
    assert!(
        md.starts_with("## tracelens diff: split_base vs split_variant"),
        "{md}"
    );
    assert!(md.contains("### Where the GPU time moved"), "{md}");
    // The mm point: 30 µs -> 26 µs; the add kernels did not move.
    assert!(
        md.contains("| 1 | `aten::mm` | 1 | 0.030 | 0.026 | -0.004 | `aten::mm` → `sm90_gemm_128x128` | `aten::mm` → `Cijk_gemm_part1`, `Cijk_gemm_part2` |"),
        "{md}"
    );
    assert!(!md.contains("| 2 |"), "--top 1 lists one point: {md}");
    assert!(
        md.contains("GPU time under all 2 points: 0.033 ms → 0.029 ms (Δ -0.004 ms, -12.1%)."),
        "{md}"
    );
    assert!(
        md.contains("The 1 listed points account for Δ -0.004 ms (100% of the net change)"),
        "{md}"
    );
    // Only --md asked for: no output folder.
    assert!(!Path::new("split_base_vs_split_variant_diff").exists());
}

#[test]
fn a_trace_diffed_with_itself_keeps_the_baseline_rows_only() {
    let (a, _) = pair("split");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("same");
    run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&a)
        .arg("--out")
        .arg(&out)
        .arg("-q"))
    .assert_ok();
    let stats = read(&out, "diff_stats.csv");
    assert!(
        stats.starts_with("name,cpu_op_name,cpu_op_uid,Input Dims,"),
        "{stats}"
    );
    assert_eq!(stats.lines().count(), 3, "{stats}");
    // Each op maps straight to its kernels (no per-trace level).
    let map = json(&out, "cpu_op_map.json");
    assert_eq!(map["aten::mm"]["kernels"][0], "sm90_gemm_128x128");
    let tree = read(&out, "merged_tree_output.txt");
    assert!(
        !tree.contains("trace1") && !tree.contains("trace2"),
        "{tree}"
    );
}

#[test]
fn default_folder_and_terminal_summary() {
    let (a, b) = pair("subtree");
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .current_dir(tmp.path())
        .arg("diff")
        .arg(&a)
        .arg(&b));
    r.assert_ok();
    let dir = tmp.path().join("subtree_base_vs_subtree_variant_diff");
    assert_eq!(common::entries(&dir), OUT_FILES);
    assert!(
        r.stdout
            .contains("merged tree: 8 nodes (4 matched, 0 baseline only, 4 variant only)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("+0.006 ms  mylib::fused_block (x1)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("wrote subtree_base_vs_subtree_variant_diff/ (7 files)"),
        "{}",
        r.stdout
    );
}

#[test]
fn prune_non_gpu_drops_roots_without_gpu_work() {
    // The cpu-only trace's ops launch nothing: pruned, the tree is empty.
    let cpu_only = testdata("cpu_only.json");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let r = run(tracelens()
        .arg("diff")
        .arg(&cpu_only)
        .arg(&cpu_only)
        .arg("--out")
        .arg(&out)
        .args(["--prune-non-gpu", "-q"]));
    r.assert_ok();
    assert_eq!(read(&out, "merged_tree_output.txt"), "");
    // No GPU event under an op: no CSVs, empty maps.
    assert!(!out.join("diff_stats.csv").exists());
    assert_eq!(read(&out, "cpu_op_map.json"), "{}");
    let r = run(tracelens()
        .arg("diff")
        .arg(&cpu_only)
        .arg(&cpu_only)
        .arg("--out")
        .arg(&out)
        .arg("-q"));
    r.assert_ok();
    assert!(!read(&out, "merged_tree_output.txt").is_empty());
}

#[test]
fn bad_inputs_fail_with_one_line_and_write_nothing() {
    let (a, _) = pair("split");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("never");
    let bad_json = tmp.path().join("bad.json");
    std::fs::write(&bad_json, b"{\"traceEvents\": [ {\"ph\": \"X\", ").unwrap();
    let truncated_gz = tmp.path().join("t.json.gz");
    let gz = common::gzip(&std::fs::read(&a).unwrap());
    std::fs::write(&truncated_gz, &gz[..gz.len() / 2]).unwrap();
    let gpu_only = tmp.path().join("gpu_only.json");
    std::fs::write(
        &gpu_only,
        br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0, "args": {"correlation": 1}}]}"#,
    )
    .unwrap();
    let jax = testdata("xplane/small.xplane.pb");
    let cases: [(&Path, &str); 5] = [
        (&bad_json, "bad.json"),
        (&truncated_gz, "t.json.gz"),
        (&gpu_only, "gpu_only.json"),
        (&jax, "a JAX profile"),
        (Path::new("/nonexistent/x.json"), "/nonexistent/x.json"),
    ];
    for (bad, what) in cases {
        for args in [[a.as_path(), bad], [bad, a.as_path()]] {
            let r = run(tracelens().arg("diff").args(args).arg("--out").arg(&out));
            r.assert_one_error_line(what);
            assert!(!out.exists(), "{} left output behind", bad.display());
        }
    }
    let r = run(tracelens().args(["diff", "-", "-"]));
    r.assert_one_error_line("stdin");
}

#[test]
fn output_is_all_or_nothing() {
    // The Markdown target is a directory: nothing else may appear.
    let (a, b) = pair("split");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("files");
    let md = tmp.path().join("md_is_a_dir");
    std::fs::create_dir(&md).unwrap();
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .arg("--md")
        .arg(&md));
    r.assert_one_error_line("md_is_a_dir");
    assert!(!out.exists(), "the output folder was left behind");
    assert_eq!(common::entries(tmp.path()), ["md_is_a_dir"]);
}

#[test]
fn json_gives_each_sides_health_and_the_totals() {
    let (a, b) = pair("split");
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--json", "-", "-q"]));
    r.assert_ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["kind"], "diff");
    assert_eq!(v["baseline"]["name"], "split_base");
    assert_eq!(v["variant"]["name"], "split_variant");
    let health = v["health"].as_array().unwrap();
    assert_eq!(health.len(), 2);
    for h in health {
        assert_eq!(h["source"], "trace");
        assert_eq!(h["verdict"], "pass", "{h}");
        let ids: Vec<&str> = h["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"health.overlapping_kernels"), "{ids:?}");
    }
    // The GEMM point: 30 µs -> 26 µs (two kernels of 13 µs); the add
    // kernel did not move: two points, -4 µs in all.
    let s = &v["summary"];
    assert_eq!(s["points"], 2);
    assert!(
        (s["delta_ms"].as_f64().unwrap() + 0.004).abs() < 1e-9,
        "{s}"
    );
    assert!(
        (s["abs_delta_ms"].as_f64().unwrap() - 0.004).abs() < 1e-9,
        "{s}"
    );
    assert_eq!(v["where_moved"]["top"][0]["name"], "aten::mm");
}

#[test]
fn health_sheet_in_the_folder_and_strict_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = common::overlapping_split_base(tmp.path());
    let (a, _) = pair("split");
    let out = tmp.path().join("out");
    let json = tmp.path().join("d.json");
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .arg(&json));
    r.assert_ok();
    assert_eq!(common::entries(&out), OUT_FILES);
    let h = Table::load(&out, "health");
    assert_eq!(&h.header[..3], ["side", "trace", "id"]);
    let row = (0..h.rows.len())
        .find(|&i| {
            h.cell(i, "side") == "variant" && h.cell(i, "id") == "health.overlapping_kernels"
        })
        .expect("the variant's overlap check");
    assert_eq!(h.cell(row, "status"), "fail");
    let base_row = (0..h.rows.len())
        .find(|&i| {
            h.cell(i, "side") == "baseline" && h.cell(i, "id") == "health.overlapping_kernels"
        })
        .unwrap();
    assert_eq!(h.cell(base_row, "status"), "pass");
    let v: serde_json::Value = serde_json::from_str(&read(tmp.path(), "d.json")).unwrap();
    assert_eq!(v["health"][0]["verdict"], "pass");
    assert_eq!(v["health"][1]["verdict"], "fail");
    // The terminal names the failed check.
    assert!(
        r.stdout.contains("health.overlapping_kernels fail"),
        "{}",
        r.stdout
    );
    // --strict: exit 3, the outputs written all the same.
    let out2 = tmp.path().join("out2");
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&bad)
        .arg("--out")
        .arg(&out2)
        .args(["--strict", "-q"]));
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    assert!(r.stderr.contains("--strict"), "{}", r.stderr);
    assert_eq!(common::entries(&out2), OUT_FILES);
    // Two healthy traces pass --strict.
    let (_t, _out, r) = diff_pair("split", &["--strict", "-q"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn json_never_replaces_an_input() {
    let (a, b) = pair("split");
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("b.json");
    std::fs::copy(&b, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let r = run(tracelens()
        .arg("diff")
        .arg(&a)
        .arg(&copy)
        .arg("--json")
        .arg(&copy));
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}
