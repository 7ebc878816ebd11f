//! The GPU spec picked from a Kineto trace's `deviceProperties` name when
//! `--gpu-arch` is not given: roofline columns without flags for a bundled
//! part, none (and a note) for another part, none with `--gpu-arch none`,
//! and `--gpu-arch` overriding the trace's name.

mod common;

use common::{KinetoTrace, Table, report_csv, run, tracelens};
use std::path::{Path, PathBuf};

/// A roofline column of the GEMM sheet.
const ROOFLINE: &str = "Roofline Time (µs)_first";

/// A trace with one bf16 GEMM whose device is named `name` (with the
/// memory of an 80 GB H100).
fn trace_naming(dir: &Path, name: &str) -> PathBuf {
    let mut t = KinetoTrace::default();
    t.push(
        "cpu_op",
        "aten::mm",
        0.0,
        100.0,
        r#""External id":1,"Input Dims":[[512,1024],[1024,2048]],"Input type":["c10::BFloat16","c10::BFloat16"],"Input Strides":[[1024,1],[2048,1]],"Concrete Inputs":["",""]"#,
    );
    t.gpu(
        ("cudaLaunchKernel", 10.0, 5.0),
        "kernel",
        "gemm_bf16",
        (20.0, 50.0),
    );
    let props = format!(
        r#""deviceProperties":[{{"id":0,"name":"{name}","totalGlobalMem":85018279936,"computeMajor":9,"numSms":132}}]"#
    );
    let path = dir.join("trace.json");
    std::fs::write(&path, t.json_with(&props)).unwrap();
    path
}

/// The GEMM sheet's header and the roofline time of its row, if any,
/// and the run's stderr.
fn gemm(name: &str, extra: &[&str]) -> (Vec<String>, Option<String>, String) {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_naming(dir.path(), name);
    let (_tmp, csv, r) = report_csv(&trace, extra);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let g = Table::load(&csv, "GEMM");
    assert_eq!(g.rows.len(), 1, "{:?}", g.rows);
    let time = g
        .header
        .iter()
        .position(|h| h == ROOFLINE)
        .map(|i| g.rows[0][i].clone());
    (g.header, time, r.stderr)
}

#[test]
fn a_bundled_part_gets_roofline_columns_without_flags() {
    let (header, time, stderr) = gemm("NVIDIA H100 80GB HBM3", &[]);
    assert!(
        header.iter().any(|h| h == "Pct Roofline_mean"),
        "{header:?}"
    );
    assert!(time.as_ref().is_some_and(|t| !t.is_empty()));
    assert!(
        stderr.contains(
            "GPU spec H100 picked from the trace's deviceProperties name \"NVIDIA H100 80GB HBM3\" (`--gpu-arch` overrides)"
        ),
        "{stderr}"
    );
    // The same sheets as naming the spec.
    let (h2, t2, _) = gemm("NVIDIA H100 80GB HBM3", &["--gpu-arch", "H100"]);
    assert_eq!((header, time), (h2, t2));
}

#[test]
fn another_part_gets_none_and_a_note() {
    let (header, time, stderr) = gemm("NVIDIA H100 PCIe", &[]);
    assert!(!header.iter().any(|h| h.contains("Roofline")), "{header:?}");
    assert_eq!(time, None);
    assert!(
        stderr.contains(
            "the trace's GPU \"NVIDIA H100 PCIe\" has no bundled spec: roofline columns are left out; pass --gpu-arch FILE"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("picked"), "{stderr}");
}

#[test]
fn gpu_arch_none_turns_detection_off() {
    let (header, _, stderr) = gemm("NVIDIA H100 80GB HBM3", &["--gpu-arch", "none"]);
    assert!(!header.iter().any(|h| h.contains("Roofline")), "{header:?}");
    assert!(!stderr.contains("GPU spec"), "{stderr}");
    // Like a run with no name at all.
    let (plain, _, _) = gemm("", &[]);
    assert_eq!(header, plain);
}

#[test]
fn gpu_arch_overrides_the_traces_name() {
    let (header, time, stderr) = gemm("NVIDIA H100 80GB HBM3", &["--gpu-arch", "MI300X"]);
    assert!(header.iter().any(|h| h == ROOFLINE), "{header:?}");
    assert!(!stderr.contains("picked"), "{stderr}");
    // MI300X's roofline, not H100's.
    let (_, mi300x, _) = gemm("NVIDIA H100 PCIe", &["--gpu-arch", "MI300X"]);
    let (_, h100, _) = gemm("NVIDIA H100 80GB HBM3", &[]);
    assert_eq!(time, mi300x);
    assert_ne!(time, h100);
}

#[test]
fn the_markdown_summary_names_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_naming(dir.path(), "NVIDIA H100 80GB HBM3");
    let r = run(tracelens()
        .current_dir(dir.path())
        .arg("report")
        .arg(&trace)
        .args(["--md", "-", "-q"]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("GPU spec H100 picked from the trace's deviceProperties name"),
        "{}",
        r.stdout
    );
}
