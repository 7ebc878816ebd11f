//! The inference report's options (`--inference` and its single flags) on
//! two small traces in `testdata/`:
//!
//! * `layout_ops.json`: python frames and nn.Module frames around a
//!   layer norm, a convolution (two kernels: the conv and its bias add), a
//!   `convolution_backward`, an `aiter::mha_varlen_fwd` inside an
//!   `execute_…` annotation and an `aten::mm` launching two kernels;
//! * `pseudo_moe.json`: two `vllm::moe_forward` ops built like the vLLM
//!   capture (Triton launches of `matmul_ogs` kernels and a
//!   `matmul_scatter` kernel under python frames), the first with a `TopK`
//!   op (k = 2), the second without (the default 4).
//!
//! Expected values come from the reference oracle run on these traces
//! (`TraceLens_generate_perf_report_pytorch_inference --enable_pseudo_ops
//! --group_by_parent_module --group_by_num_kernels --include_call_stack
//! --disable_coll_analysis`, and the single flags), where a comment says so;
//! UIDs are indices in `traceEvents`.

mod common;

use common::{Table, entries, report_csv, testdata};

fn sheets(dir: &std::path::Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .map(|n| n.trim_end_matches(".csv").to_string())
        .collect()
}

/// The row of `t` whose `name` is `name` (the first one).
fn row_of(t: &Table, name: &str) -> usize {
    t.column("name")
        .iter()
        .position(|n| *n == name)
        .unwrap_or_else(|| panic!("{}: no row named {name}", t.name))
}

#[test]
fn inference_layout_sheets_and_op_headers() {
    let (_tmp, csv, r) = report_csv(&testdata("layout_ops.json"), &["--inference"]);
    r.assert_ok();
    // Oracle: the same ten sheets; no kernel summaries, no coll_analysis,
    // `Normalization_fwd`, and no `CONV_bwd` (the inference script writes
    // no backward sheet); plus our idle, health and findings sheets, in
    // every PyTorch report.
    assert_eq!(
        sheets(&csv),
        [
            "BinaryElementwise",
            "CONV_fwd",
            "GEMM",
            "InferenceAttention_fwd",
            "Normalization_fwd",
            "findings",
            "gpu_timeline",
            "health",
            "idle_breakdown",
            "idle_causes",
            "idle_top_gaps",
            "ops_summary",
            "ops_summary_by_category",
            "ops_unique_args",
            "unified_perf_summary"
        ]
    );
    let s = Table::load(&csv, "ops_summary");
    assert_eq!(
        s.header,
        [
            "name",
            "parent_module",
            "total_direct_kernel_time_sum",
            "total_subtree_kernel_time_sum",
            "total_subtree_kernel_time_count",
            "total_direct_kernel_time_ms",
            "Count",
            "Categories",
            "call_stack_first",
            "Percentage (%)",
            "Cumulative Percentage (%)"
        ]
    );
    let mm = row_of(&s, "aten::mm");
    assert_eq!(s.cell(mm, "parent_module"), "nn.Module: Linear");
    assert_eq!(
        s.cell(mm, "call_stack_first"),
        "['aten::mm', 'nn.Module: Linear_0', 'nn.Module: Net_0']"
    );
    assert_eq!(s.cell(mm, "total_subtree_kernel_time_count"), "1");
    // 8 + 2 µs of 55 µs of direct kernel time.
    assert_eq!(s.num(mm, "total_direct_kernel_time_sum"), 10.0);
    common::assert_close(s.num(mm, "Percentage (%)"), 18.181818181818183, "mm %");
    let c = Table::load(&csv, "ops_summary_by_category");
    assert_eq!(
        c.header,
        [
            "op category",
            "parent_module",
            "Count",
            "call_stack_first",
            "total_direct_kernel_time_ms",
            "Percentage (%)",
            "Cumulative Percentage (%)"
        ]
    );
    assert_eq!(
        c.column("op category")[0..2],
        ["CONV_bwd", "CONV_fwd"],
        "largest first: 15 µs, 12 µs"
    );
    assert_eq!(c.cell(0, "parent_module"), "nn.Module: Net");
}

#[test]
fn inference_unique_args_keys_and_counts() {
    let (_tmp, csv, r) = report_csv(&testdata("layout_ops.json"), &["--inference"]);
    r.assert_ok();
    let u = Table::load(&csv, "ops_unique_args");
    let h = &u.header;
    let at = |c: &str| h.iter().position(|x| x == c).unwrap();
    assert_eq!(at("parent_module"), at("op category") + 1);
    assert_eq!(at("num_kernels"), at("Concrete Inputs") + 1);
    assert_eq!(at("operation_count"), at("num_kernels") + 1);
    assert_eq!(at("call_stack"), at("ex_UID") + 1);
    assert_eq!(at("kernel_details_summary"), at("call_stack") + 1);
    // Oracle: the direct kernel count (aten::mm launches two).
    let mm = row_of(&u, "aten::mm");
    assert_eq!(u.cell(mm, "num_kernels"), "2");
    assert_eq!(u.cell(mm, "ex_UID"), "25");
    assert_eq!(u.cell(mm, "parent_module"), "nn.Module: Linear");
    let conv = row_of(&u, "aten::cudnn_convolution");
    assert_eq!(u.cell(conv, "num_kernels"), "1");
    assert_eq!(u.cell(conv, "parent_module"), "nn.Module: Conv2d");
}

#[test]
fn inference_perf_sheets_num_kernels_fwd_only_and_annotation() {
    let (_tmp, csv, r) = report_csv(&testdata("layout_ops.json"), &["--inference"]);
    r.assert_ok();
    // Oracle: the subtree kernel count as a key after the params; the
    // convolution counts its bias add too; convolution_backward is dropped.
    let conv = Table::load(&csv, "CONV_fwd");
    assert_eq!(conv.column("name"), ["aten::convolution"]);
    assert_eq!(conv.cell(0, "num_kernels"), "2");
    let h = &conv.header;
    let nk = h.iter().position(|x| x == "num_kernels").unwrap();
    assert_eq!(h[nk - 1], "param: groups");
    assert_eq!(h[nk + 1], "GFLOPS_first");
    let g = Table::load(&csv, "GEMM");
    assert_eq!(g.cell(0, "num_kernels"), "2");
    let n = Table::load(&csv, "Normalization_fwd");
    assert_eq!(
        n.column("name"),
        ["aten::layer_norm", "aten::native_layer_norm"]
    );
    // The inference script reads the enclosing annotation of
    // aiter::mha_varlen_fwd (context sq 8, generation sk 40); oracle values.
    let a = Table::load(&csv, "InferenceAttention_fwd");
    assert_eq!(a.cell(0, "param: c_sq"), "8");
    assert_eq!(a.cell(0, "param: g_sk"), "40");
    common::assert_close(a.num(0, "GFLOPS_first"), 1.7408e-05, "attention GFLOPS");
    common::assert_close(
        a.num(0, "Data Moved (MB)_first"),
        0.00323486328125,
        "attention MB",
    );
}

#[test]
fn inference_unified_call_stacks_and_entry_points() {
    let (_tmp, csv, r) = report_csv(&testdata("layout_ops.json"), &["--inference"]);
    r.assert_ok();
    let t = Table::load(&csv, "unified_perf_summary");
    let n = t.header.len();
    assert_eq!(
        t.header[n - 4..],
        [
            "entry_point",
            "call_stack_full",
            "Percentage (%)",
            "Cumulative Percentage (%)"
        ]
    );
    // Oracle values. Inward match: a .py frame below the op naming it.
    let mha = row_of(&t, "aiter::mha_varlen_fwd");
    assert_eq!(
        t.cell(mha, "entry_point"),
        "aiter/ops/mha.py(50): mha_varlen_fwd_impl"
    );
    assert_eq!(
        t.cell(mha, "call_stack_full"),
        "['models/net.py(10): forward', 'nn.Module: Net', 'nn.Module: Attention', 'aiter::mha_varlen_fwd', 'aiter/ops/mha.py(50): mha_varlen_fwd_impl', 'fmha_fwd_kernel']"
    );
    // Outward match; two kernels: common prefix, then one tail per kernel
    // in kernel_details_summary order (shorter total first).
    let mm = row_of(&t, "aten::mm");
    assert_eq!(t.cell(mm, "entry_point"), "models/net.py(10): forward");
    assert_eq!(
        t.cell(mm, "call_stack_full"),
        "['models/net.py(10): forward', 'nn.Module: Net', 'nn.Module: Linear', 'aten::mm', ['Cijk_splitk_reduce_kernel'], ['Cijk_gemm_splitk_kernel']]"
    );
    let conv = row_of(&t, "aten::convolution");
    assert_eq!(
        t.cell(conv, "call_stack_full"),
        "['models/net.py(10): forward', 'nn.Module: Net', 'nn.Module: Conv2d', 'aten::convolution', ['aten::add_', 'void at::native::elementwise_kernel<128, 4>(int)'], ['aten::cudnn_convolution', 'conv2d_fwd_kernel']]"
    );
    // The internal per-kernel stacks are not left in the summary.
    assert!(
        !t.cell(conv, "kernel_details_summary")
            .contains("call_stack")
    );
}

#[test]
fn plain_report_keeps_its_layout() {
    let (_tmp, csv, r) = report_csv(&testdata("layout_ops.json"), &[]);
    r.assert_ok();
    let names = sheets(&csv);
    for s in ["Normalization", "CONV_bwd", "kernel_summary"] {
        assert!(names.iter().any(|n| n == s), "{s} missing from {names:?}");
    }
    // Oracle (plain script): no annotation read, so no attention row.
    assert!(!names.iter().any(|n| n == "InferenceAttention_fwd"));
    assert!(!names.iter().any(|n| n == "Normalization_fwd"));
    let s = Table::load(&csv, "ops_summary");
    assert!(!s.header.iter().any(|h| h == "parent_module"));
    assert!(s.header.iter().any(|h| h == "total_subtree_kernel_time_ms"));
    let u = Table::load(&csv, "unified_perf_summary");
    assert!(!u.header.iter().any(|h| h == "call_stack_full"));
    let b = Table::load(&csv, "CONV_bwd");
    assert_eq!(b.column("name"), ["aten::convolution_backward"]);
}

#[test]
fn single_flags_add_only_their_columns() {
    let trace = testdata("layout_ops.json");
    let (_t1, csv, r) = report_csv(&trace, &["--group-by-num-kernels"]);
    r.assert_ok();
    let u = Table::load(&csv, "ops_unique_args");
    assert!(u.header.iter().any(|h| h == "num_kernels"));
    assert!(!u.header.iter().any(|h| h == "parent_module"));
    assert!(!u.header.iter().any(|h| h == "call_stack"));
    let g = Table::load(&csv, "GEMM");
    assert_eq!(g.cell(0, "num_kernels"), "2");

    let (_t2, csv, r) = report_csv(&trace, &["--include-call-stack"]);
    r.assert_ok();
    let t = Table::load(&csv, "unified_perf_summary");
    assert_eq!(
        t.cell(row_of(&t, "aten::mm"), "entry_point"),
        "models/net.py(10): forward"
    );
    assert!(
        !Table::load(&csv, "ops_unique_args")
            .header
            .iter()
            .any(|h| h == "num_kernels")
    );

    // Oracle with --group_by_parent_module alone: the module summaries, and
    // each kernel's call stack left inside kernel_details_summary (the
    // reference drops it only when it prints call_stack_full).
    let (_t3, csv, r) = report_csv(&trace, &["--group-by-parent-module"]);
    r.assert_ok();
    let s = Table::load(&csv, "ops_summary");
    assert_eq!(s.header[1], "parent_module");
    let t = Table::load(&csv, "unified_perf_summary");
    assert!(!t.header.iter().any(|h| h == "call_stack_full"));
    let mha = row_of(&t, "aiter::mha_varlen_fwd");
    assert!(
        t.cell(mha, "kernel_details_summary").starts_with(
            "[{'name': 'fmha_fwd_kernel', 'stream': 3, 'call_stack': ['models/net.py(10): forward', 'nn.Module: Net', 'nn.Module: Attention', 'aiter::mha_varlen_fwd', 'aiter/ops/mha.py(50): mha_varlen_fwd_impl'], 'count': 1,"
        ),
        "{}",
        t.cell(mha, "kernel_details_summary")
    );
}

#[test]
fn moe_pseudo_ops_split_the_triton_moe() {
    let (_tmp, csv, r) = report_csv(&testdata("pseudo_moe.json"), &["--inference"]);
    r.assert_ok();
    // Oracle: one row per (name, topk); UIDs follow the 46 events, in
    // injection order (up, down, finalize per MoE op); gated from the
    // kernel name, topk 2 from TopK's concrete input, else 4.
    let m = Table::load(&csv, "MoE_unfused_fwd");
    let rows: Vec<(&str, &str, &str, &str, &str)> = (0..m.rows.len())
        .map(|i| {
            (
                m.cell(i, "name"),
                m.cell(i, "param: topk"),
                m.cell(i, "param: gated"),
                m.cell(i, "num_kernels"),
                m.cell(i, "UID_first"),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("pseudo_op::moe_triton_unfused_up", "2", "True", "1", "46"),
            ("pseudo_op::moe_triton_unfused_up", "4", "True", "1", "49"),
            (
                "pseudo_op::moe_triton_unfused_down",
                "2",
                "False",
                "1",
                "47"
            ),
            (
                "pseudo_op::moe_triton_unfused_down",
                "4",
                "False",
                "1",
                "50"
            ),
        ]
    );
    common::assert_close(m.num(0, "GFLOPS_first"), 2.1233664, "up GFLOPS");
    // The pseudo ops have no duration: sum 0, mean empty; the finalize op
    // has no model.
    let t = Table::load(&csv, "unified_perf_summary");
    let up = row_of(&t, "pseudo_op::moe_triton_unfused_up");
    assert_eq!(t.cell(up, "ex_UID"), "46");
    assert_eq!(t.cell(up, "operation_count"), "2");
    assert_eq!(t.num(up, "total_duration_us"), 0.0);
    assert_eq!(t.cell(up, "mean_duration_us"), "");
    assert_eq!(t.num(up, "Kernel Time (µs)_sum"), 80.0);
    assert_eq!(t.cell(up, "op category"), "MoE_unfused");
    assert_eq!(t.cell(up, "entry_point"), "triton/runtime/jit.py(574): run");
    // The kernel's parent walk never meets the pseudo op: the chain repeats.
    assert_eq!(
        t.cell(up, "call_stack_full"),
        "['vllm/model_executor/models/gpt_oss.py(200): forward', 'nn.Module: GptOssMoE', 'vllm::moe_forward', 'triton/runtime/jit.py(574): run', 'pseudo_op::moe_triton_unfused_up', 'vllm/model_executor/models/gpt_oss.py(200): forward', 'nn.Module: GptOssMoE', 'vllm::moe_forward', 'triton/runtime/jit.py(574): run', '_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu']"
    );
    let fin = row_of(&t, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter");
    assert_eq!(t.cell(fin, "ex_UID"), "48");
    assert_eq!(t.cell(fin, "op category"), "other");
    assert_eq!(t.cell(fin, "has_perf_model"), "False");
    // The launches keep their parents: the op sheets still show the MoE op.
    let s = Table::load(&csv, "ops_summary");
    assert_eq!(s.column("name"), ["vllm::moe_forward", "aten::mm", "TopK"]);
    let u = Table::load(&csv, "ops_unique_args");
    assert_eq!(u.cell(row_of(&u, "vllm::moe_forward"), "num_kernels"), "3");
}

#[test]
fn no_pseudo_ops_without_the_option() {
    let (_tmp, csv, r) = report_csv(&testdata("pseudo_moe.json"), &[]);
    r.assert_ok();
    assert!(!sheets(&csv).iter().any(|n| n == "MoE_unfused_fwd"));
    let t = Table::load(&csv, "unified_perf_summary");
    assert!(
        !t.column("name")
            .iter()
            .any(|n| n.starts_with("pseudo_op::"))
    );
}

#[test]
fn unsupported_pseudo_op_extensions_are_named() {
    let (_tmp, _csv, r) = report_csv(&testdata("pseudo_unsupported.json"), &["--pseudo-ops"]);
    r.assert_ok();
    for ext in ["MoE_Fused (aiter)", "MoE_Flydsl"] {
        assert!(
            r.stderr.contains(&format!(
                "the reference's {ext} pseudo ops are not supported"
            )),
            "{ext}: {}",
            r.stderr
        );
    }
}
