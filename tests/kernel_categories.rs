//! `report --kernel-categories` on `testdata/kernel_categories.json`: an
//! `aten::mm` launching one cuBLASLt GEMM (40 µs), and a `hipGraphLaunch`
//! replaying two Tensile GEMMs (60 + 40 µs), an NCCL kernel (50 µs), a CK
//! attention forward (30 µs) and a Triton kernel (20 µs). The categories
//! follow the table in docs/kernel-categories.md; shares are worked out by
//! hand: the graph launch's 200 µs are GEMM 100 (50%), communication 50
//! (25%), attention forward 30 (15%), Triton 20 (10%).

mod common;

use common::{Table, report_csv, run, testdata, tracelens};

fn trace() -> std::path::PathBuf {
    testdata("kernel_categories.json")
}

#[test]
fn kernel_summary_gains_a_kernel_category_column() {
    let (_tmp, dir, r) = report_csv(&trace(), &["--kernel-categories"]);
    r.assert_ok();
    let t = Table::load(&dir, "kernel_summary");
    let names = t.column("Kernel name");
    let cats = t.column("kernel_category");
    let got: Vec<(&str, &str)> = names.into_iter().zip(cats).collect();
    for want in [
        ("Cijk_Alik_Bljk_BBS_BH_MT128x128x64", "GEMM"),
        ("ncclDevKernel_Generic_1", "communication"),
        ("cublasLt_gemm_kernel", "GEMM"),
        ("fmha_fwd_d128_bf16", "attention forward"),
        ("triton_poi_fused_add_0", "Triton"),
    ] {
        assert!(got.contains(&want), "{want:?} not in {got:?}");
    }
}

#[test]
fn graph_launch_time_is_split_by_category() {
    let (_tmp, dir, r) = report_csv(&trace(), &["--kernel-categories"]);
    r.assert_ok();
    let t = Table::load(&dir, "kernel_category_by_launcher");
    let rows: Vec<(String, String, String, f64, f64)> = (0..t.rows.len())
        .map(|i| {
            (
                t.cell(i, "name").to_string(),
                t.cell(i, "kernel_category").to_string(),
                t.cell(i, "kernel_count").to_string(),
                t.num(i, "kernel_time_ms"),
                t.num(i, "Percent of launcher time (%)"),
            )
        })
        .collect();
    let want = [
        ("hipGraphLaunch", "GEMM", "2", 0.1, 50.0),
        ("hipGraphLaunch", "communication", "1", 0.05, 25.0),
        ("hipGraphLaunch", "attention forward", "1", 0.03, 15.0),
        ("hipGraphLaunch", "Triton", "1", 0.02, 10.0),
        ("aten::mm", "GEMM", "1", 0.04, 100.0),
    ];
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for (got, want) in rows.iter().zip(want) {
        assert_eq!(
            (got.0.as_str(), got.1.as_str(), got.2.as_str()),
            (want.0, want.1, want.2)
        );
        assert!((got.3 - want.3).abs() < 1e-12, "{got:?}");
        assert!((got.4 - want.4).abs() < 1e-9, "{got:?}");
    }
}

#[test]
fn without_the_flag_nothing_changes() {
    let (_tmp, dir, r) = report_csv(&trace(), &[]);
    r.assert_ok();
    assert!(!dir.join("kernel_category_by_launcher.csv").exists());
    let t = Table::load(&dir, "kernel_summary");
    assert!(!t.header.iter().any(|h| h == "kernel_category"));
}

#[test]
fn user_rules_are_tested_first() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.txt");
    std::fs::write(&rules, "# ours\nfused adds: triton_poi_fused_add\n").unwrap();
    let (_t, dir, r) = report_csv(
        &trace(),
        &["--kernel-categories-file", rules.to_str().unwrap()],
    );
    r.assert_ok();
    let t = Table::load(&dir, "kernel_summary");
    let i = t
        .column("Kernel name")
        .iter()
        .position(|n| *n == "triton_poi_fused_add_0")
        .unwrap();
    assert_eq!(t.cell(i, "kernel_category"), "fused adds");
}

#[test]
fn a_malformed_rules_file_is_one_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("rules.txt");
    std::fs::write(&rules, "GEMM: gemm\nthis line has no colon\n").unwrap();
    let out = tmp.path().join("csv");
    let r = run(tracelens().args([
        "report",
        trace().to_str().unwrap(),
        "--kernel-categories-file",
        rules.to_str().unwrap(),
        "--csv",
        out.to_str().unwrap(),
    ]));
    let line = r.assert_one_error_line("invalid kernel-category rule");
    assert!(
        line.contains("rules.txt") && line.contains("line 2"),
        "{line}"
    );
    assert!(!out.exists());
}
