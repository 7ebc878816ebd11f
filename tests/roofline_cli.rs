//! Roofline features on the command line: the per-category sheets and their
//! GPU-spec columns on the hand-written example trace, `--plots`, the Excel
//! chart, and the `tracelens roofline` calculator. Expected numbers are
//! worked out by hand in the comments.

mod common;

use common::{
    Table, assert_close, report_csv, run, run_cli, testdata, tracelens, xlsx_sheet_names,
};

// example.json: aten::addmm, Input Dims [[32], [4, 16], [16, 32], [], []],
// bf16, one 12 µs kernel. GEMM model: M=4, K=16, N=32, bias:
//   FLOPs = 2·4·32·16 + 4·32 = 4096 + 128 = 4224
//   bytes = (4·16 + 16·32 + 4·32 + 32)·2 = (64 + 512 + 128 + 32)·2 = 1472
// aten::copy_ (dst float (4, 32), src bf16 (4, 32)), one 3 µs memcpy:
//   FLOPs = 128; bytes = 128·4 + 128·2 = 768; Compute Spec vector_fp32.
const GEMM_FLOPS: f64 = 4224.0;
const GEMM_BYTES: f64 = 1472.0;

#[test]
fn example_gets_gemm_and_elementwise_rows() {
    let (_tmp, out, r) = report_csv(&testdata("example.json"), &[]);
    r.assert_ok();
    let g = Table::load(&out, "GEMM");
    assert_eq!(g.rows.len(), 1);
    assert_eq!(g.cell(0, "name"), "aten::addmm");
    assert_eq!(g.cell(0, "param: M"), "4");
    assert_eq!(g.cell(0, "param: N"), "32");
    assert_eq!(g.cell(0, "param: K"), "16");
    assert_eq!(g.cell(0, "param: bias"), "True");
    assert_close(g.num(0, "GFLOPS_first"), GEMM_FLOPS / 1e9, "GFLOPS");
    assert_close(
        g.num(0, "Data Moved (MB)_first"),
        GEMM_BYTES / 1048576.0,
        "MB",
    );
    assert_close(
        g.num(0, "FLOPS/Byte_first"),
        GEMM_FLOPS / GEMM_BYTES,
        "intensity",
    );
    // 4224 FLOPs in 12 µs.
    assert_close(
        g.num(0, "TFLOPS/s_mean"),
        GEMM_FLOPS / 12e-6 / 1e12,
        "TFLOP/s",
    );
    assert_close(g.num(0, "Kernel Time (µs)_sum"), 12.0, "kernel time");
    assert_eq!(g.cell(0, "Compute Spec"), "matrix_bf16");
    assert!(
        !g.header.iter().any(|h| h.starts_with("Roofline")),
        "no roofline without a spec"
    );

    let u = Table::load(&out, "UnaryElementwise");
    assert_eq!(u.cell(0, "name"), "aten::copy_");
    assert_close(u.num(0, "GFLOPS_first"), 128e-9, "copy GFLOPS");
    assert_close(
        u.num(0, "Data Moved (MB)_first"),
        768.0 / 1048576.0,
        "copy MB",
    );
    assert_eq!(u.cell(0, "Compute Spec"), "vector_fp32");

    // The unified table: addmm is modelled (one level below aten::linear),
    // relu is a leaf without a model, the NCCL op is left out.
    let s = Table::load(&out, "unified_perf_summary");
    let names = s.column("name");
    assert!(names.contains(&"aten::addmm"), "{names:?}");
    assert!(names.contains(&"aten::relu"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("record_param_comms")),
        "{names:?}"
    );
    let addmm = names.iter().position(|n| *n == "aten::addmm").unwrap();
    assert_eq!(s.cell(addmm, "has_perf_model"), "True");
    assert!(s.cell(addmm, "perf_params").contains("'M': 4"));
}

#[test]
fn gpu_spec_adds_roofline_columns() {
    let (_tmp, out, r) = report_csv(&testdata("example.json"), &["--gpu-arch", "MI300X"]);
    r.assert_ok();
    let g = Table::load(&out, "GEMM");
    // MI300X: matrix_bf16 708 TFLOP/s, 5300 GB/s.
    //   compute = 4224 / 708e12 s = 5.97e-6 µs; memory = 1472 / 5300e9 s = 2.777e-4 µs
    let memory_us = GEMM_BYTES / 5300e9 * 1e6;
    assert_eq!(g.cell(0, "Roofline Bound_first"), "MEMORY_BOUND");
    assert_close(
        g.num(0, "Roofline Time (µs)_first"),
        memory_us,
        "roofline time",
    );
    assert_close(
        g.num(0, "Pct Roofline_mean"),
        memory_us / 12.0 * 100.0,
        "pct",
    );
}

#[test]
fn unknown_gpu_lists_the_known_ones() {
    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .args([
            "--gpu-arch",
            "NoSuchGPU",
            "--csv",
            "/tmp/never-written-tracelens",
        ]));
    let line = r.assert_one_error_line("NoSuchGPU");
    for known in ["MI300X", "MI325X", "H100", "B200"] {
        assert!(line.contains(known), "{line}");
    }
    assert!(!std::path::Path::new("/tmp/never-written-tracelens").exists());
}

#[test]
fn plots_and_chart_need_a_spec_and_are_written_with_one() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .arg("--plots")
        .arg(tmp.path().join("p")));
    assert_eq!(
        r.code,
        Some(2),
        "--plots without --gpu-arch is a usage error: {r:#?}"
    );

    let xlsx = tmp.path().join("r.xlsx");
    let r = run(tracelens()
        .arg("report")
        .arg(testdata("example.json"))
        .args(["--gpu-arch", "H100", "-q", "--plots"])
        .arg(tmp.path().join("p"))
        .arg("-o")
        .arg(&xlsx));
    r.assert_ok();
    for sheet in ["GEMM", "UnaryElementwise"] {
        let svg = std::fs::read_to_string(tmp.path().join(format!("p/{sheet}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") || svg.contains("<svg"),
            "{sheet}.svg"
        );
        assert!(svg.contains("<circle"), "{sheet}.svg has a point");
        assert!(svg.contains("H100"), "{sheet}.svg names the GPU");
    }
    let names = xlsx_sheet_names(&xlsx);
    assert!(names.iter().any(|n| n == "roofline_chart"), "{names:?}");
    assert!(names.iter().any(|n| n == "GEMM"), "{names:?}");
}

#[test]
fn calculator_gemm_with_spec_and_time() {
    // 1024³ bf16 GEMM: 2·1024³ = 2147483648 FLOPs; 3·1024²·2 = 6291456 bytes.
    // MI300X bf16 708 TFLOP/s: 2147483648 / 708e12 s = 3.033 µs (compute-bound:
    // memory needs 6291456 / 5300e9 s = 1.187 µs). In 10 µs: 214.748 TFLOP/s, 30.3 %.
    let r = run_cli("roofline gemm --m 1024 --n 1024 --k 1024 --gpu-arch MI300X --time-us 10");
    r.assert_ok();
    let o = &r.stdout;
    assert!(o.contains("FLOPs:        2147483648 "), "{o}");
    assert!(o.contains("bytes moved:  6291456 "), "{o}");
    assert!(o.contains("intensity:    341.333 FLOPs/byte"), "{o}");
    assert!(o.contains("roofline:     3.033 µs, COMPUTE_BOUND"), "{o}");
    assert!(o.contains("achieved:     214.748 TFLOP/s"), "{o}");
    assert!(o.contains("of roofline:  30.3%"), "{o}");
}

#[test]
fn calculator_conv_and_sdpa() {
    // conv: input (1,3,8,8), weight (4,3,3,3), stride 1, no padding -> out (1,4,6,6)
    // = 144 elements; FLOPs = 144 · 2 · 3·3·3 = 7776; bytes = (192 + 108 + 144) · 2 = 888.
    let r = run_cli("roofline conv --input 1,3,8,8 --weight 4,3,3,3");
    r.assert_ok();
    assert!(r.stdout.contains("FLOPs:        7776 "), "{}", r.stdout);
    assert!(r.stdout.contains("bytes moved:  888 "), "{}", r.stdout);
    // sdpa: B=1, H=2, N=4, d=8, not causal: FLOPs = 1·2·(2·4·4·8) · 2 = 1024;
    // bytes = (q + k + v + o) · 2 = 4 · (1·4·2·8) · 2 = 512.
    let r = run_cli("roofline sdpa --batch 1 --heads 2 --seq-q 4 --head-dim 8 --dtype fp16");
    r.assert_ok();
    assert!(r.stdout.contains("FLOPs:        1024 "), "{}", r.stdout);
    assert!(r.stdout.contains("bytes moved:  512 "), "{}", r.stdout);
    assert!(r.stdout.contains("matrix_fp16"), "{}", r.stdout);
    // Causal attention needs equal query and key lengths.
    let r = run_cli("roofline sdpa --batch 1 --heads 2 --seq-q 4 --seq-kv 8 --head-dim 8 --causal");
    r.assert_one_error_line("shapes");
    let r = run_cli("roofline gemm --m 0 --n 1 --k 1");
    r.assert_one_error_line("--m");
}
