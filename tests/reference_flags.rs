//! The reference's command lines (`generate_perf_report_pytorch`,
//! `compare_perf_reports_pytorch`) run unchanged: each of its flags is a
//! hidden alias giving the same sheets as the tracelens flag, is accepted
//! and ignored where tracelens always does what it asks, or is refused
//! with one line saying what replaces it. (The collective script's flags:
//! tests/collectives_cli.rs.)

mod common;

use common::{entries, read_dir_bytes, run, testdata, tracelens};
use std::path::Path;

fn example() -> std::path::PathBuf {
    testdata("example.json")
}

/// Runs `tracelens ARGS -q` in a fresh folder; returns it and the CSV
/// folder `c` in it, after checking the run succeeded.
fn csvs(args: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    run(tracelens().current_dir(dir.path()).args(args).arg("-q")).assert_ok();
    let c = dir.path().join("c");
    assert!(
        c.is_dir(),
        "{args:?} wrote no c/: {:?}",
        entries(dir.path())
    );
    (dir, c)
}

#[test]
fn report_flags_of_the_reference_give_the_same_sheets() {
    let t = example();
    let t = t.to_str().unwrap();
    let arch = common::root().join("gpu_specs/MI300X.json");
    let arch = arch.to_str().unwrap();
    let reference = [
        "report",
        "--profile_json_path",
        t,
        "--output_csvs_dir",
        "c",
        "--short_kernel_threshold_us",
        "13",
        "--short_kernel_histogram_bins",
        "7",
        "--topk_short_kernels",
        "2",
        "--micro_idle_thresh_us",
        "5",
        "--include_unlinked_kernels",
        "--enable_kernel_summary",
        "--short_kernel_study",
        "--disable_coll_analysis",
        "--enable_pseudo_ops",
        "--group_by_num_kernels",
        "--include_call_stack",
        "--gpu_arch_json_path",
        arch,
    ];
    let ours = [
        "report",
        t,
        "--csv",
        "c",
        "--short-kernel-threshold-us",
        "13",
        "--short-kernel-histogram-bins",
        "7",
        "--topk-short-kernels",
        "2",
        "--micro-idle-thresh-us",
        "5",
        "--include-unlinked-kernels",
        "--no-coll-analysis",
        "--pseudo-ops",
        "--group-by-num-kernels",
        "--include-call-stack",
        "--gpu-arch",
        arch,
    ];
    let (_a, a) = csvs(&reference);
    let (_b, b) = csvs(&ours);
    assert!(
        read_dir_bytes(&a) == read_dir_bytes(&b),
        "the sheets differ"
    );
    // The options took effect: 7 histogram bins (plus the header).
    let hist = common::csv_text(&a, "short_kernel_histogram");
    assert_eq!(hist.lines().count(), 8, "{hist}");
    // The bundled name, as --gpu_arch_platform.
    let (_c, c) = csvs(&[
        "report",
        t,
        "--output_csvs_dir",
        "c",
        "--gpu_arch_platform",
        "MI300X",
    ]);
    let (_d, d) = csvs(&["report", t, "--csv", "c", "--gpu-arch", "MI300X"]);
    assert!(
        read_dir_bytes(&c) == read_dir_bytes(&d),
        "the sheets differ"
    );
}

#[test]
fn output_xlsx_path_writes_the_workbook() {
    let dir = tempfile::tempdir().unwrap();
    run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg("--profile_json_path")
        .arg(example())
        .args(["--output_xlsx_path", "r.xlsx", "-q"]))
    .assert_ok();
    assert_eq!(entries(dir.path()), ["r.xlsx"]);
    assert!(common::xlsx_sheet_names(&dir.path().join("r.xlsx")).contains(&"ops_summary".into()));
}

#[test]
fn trace_given_twice_is_a_usage_error() {
    let r = run(tracelens()
        .arg("report")
        .arg(example())
        .arg("--profile_json_path")
        .arg(example())
        .args(["--md", "-"]));
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("--profile_json_path"), "{}", r.stderr);
    let r = run(tracelens().args(["report", "--md", "-"]));
    assert_eq!(r.code, Some(2), "{r:?}");
}

#[test]
fn report_flags_without_an_equivalent_say_what_replaces_them() {
    let cases: &[(&[&str], &str)] = &[
        (&["--topk_ops", "5"], "not supported"),
        (&["--topk_roofline_ops", "5"], "not supported"),
        (&["--comparison_json_path", "b.json"], "tracelens diff"),
        (&["--extension_file", "e.py"], "not supported"),
        (&["--python_path", "/usr/bin/python3"], "not supported"),
        (&["--enable-origami"], "Origami"),
        (&["--inductor_cache_dir", "/tmp"], "not supported"),
        (&["--include_overlap_info"], "not supported"),
        (&["--detect_recompute"], "not supported"),
        (&["--include_first_occurrence_time"], "not supported"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in cases {
        let r = run(tracelens()
            .current_dir(dir.path())
            .arg("report")
            .arg(example())
            .args(*args));
        r.assert_no_panic();
        assert_eq!(r.code, Some(2), "{args:?}: {r:?}");
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {r:?}");
        assert!(lines[0].starts_with("tracelens: error: "), "{r:?}");
        assert!(lines[0].contains(args[0]), "{args:?}: {r:?}");
        assert!(lines[0].contains(says), "{args:?}: {r:?}");
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn reference_spellings_stay_out_of_help() {
    for cmd in ["report", "compare", "collectives"] {
        let r = run(tracelens().args([cmd, "--help"]));
        r.assert_ok();
        for hidden in [
            "profile_json_path",
            "output_csvs_dir",
            "output_xlsx_path",
            "short_kernel_study",
            "topk_ops",
            "world_size",
            "trace_pattern",
        ] {
            let flag = format!("--{hidden}");
            assert!(!r.stdout.contains(&flag), "{cmd} --help shows {flag}");
        }
    }
}

#[test]
fn compare_flags_of_the_reference() {
    let t = example();
    let t = t.to_str().unwrap();
    let n = testdata("no_flows.json");
    let n = n.to_str().unwrap();
    let (_a, a) = csvs(&[
        "compare",
        t,
        n,
        "--names",
        "x",
        "y",
        "--sheets",
        "ops_summary",
        "--output_csvs_dir",
        "c",
    ]);
    let (_b, b) = csvs(&[
        "compare",
        t,
        n,
        "--names",
        "x",
        "y",
        "--sheets",
        "ops_summary",
        "--csv",
        "c",
    ]);
    assert!(
        read_dir_bytes(&a) == read_dir_bytes(&b),
        "the sheets differ"
    );
    assert!(!entries(Path::new(&a)).is_empty());
}
