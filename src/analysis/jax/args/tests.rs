//! Argument extraction tests, worked by hand from the reference's
//! rules (the GEMM example is the reference's record of `custom-call.1`
//! in `jax_te_fused_attn`).

use super::*;

const GEMM_CONFIG: &str = r#"backend_config={"operation_queue_id":"0","gemm_backend_config":{"selected_algorithm":"-1","alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT","grad_x":false}}"#;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn gemm_record(output: &str, operands: &[&str], config: &str) -> HloRecord {
    HloRecord {
        output: output.into(),
        operands: strings(operands),
        gemm: true,
        gemm_type: Some("bf16".into()),
        backend_config: Some(config.into()),
        custom_call_target: Some(r#"custom_call_target="__cublas$gemm""#.into()),
    }
}

#[test]
fn gemm_dims_of_the_spec_example() {
    // A bf16[4096,6144], B bf16[2048,6144], C bf16[4096,2048]
    // with layout {1,0}, contracting 1/1 → K = 6144, N = A's 4096, M = B's 2048.
    let rec = gemm_record(
        "(bf16[4096,2048]{1,0},s8[67108864]{0})",
        &["bf16[4096,6144]{1,0}", "bf16[2048,6144]{1,0}"],
        GEMM_CONFIG,
    );
    let g = gemm_dims(&rec, None).unwrap();
    assert_eq!(
        g,
        GemmDims {
            batch: 1,
            m: 2048,
            n: 4096,
            k: 6144,
            beta: 0,
            dtype: Some("bf16".into())
        }
    );
    // Output layout {0,1}: M from A, N from B.
    let rec = gemm_record(
        "(bf16[4096,2048]{0,1},s8[8]{0})",
        &["bf16[4096,6144]{1,0}", "bf16[2048,6144]{1,0}"],
        GEMM_CONFIG,
    );
    let g = gemm_dims(&rec, None).unwrap();
    assert_eq!((g.m, g.n), (4096, 2048));
}

#[test]
fn batched_gemm_removes_the_batch() {
    // A (8, 128, 64) · B (8, 64, 32) contracting 2/1: K = 64; the batch 8
    // (C's first size) goes from both; layout {2,1,0} → N = 128, M = 32.
    let config = GEMM_CONFIG
        .replace(
            r#""lhs_contracting_dimensions":["1"]"#,
            r#""lhs_contracting_dimensions":["2"]"#,
        )
        .replace(r#""beta":0"#, r#""beta":1"#);
    let rec = gemm_record(
        "(f32[8,128,32]{2,1,0},s8[8]{0})",
        &[
            "f32[8,128,64]{2,1,0}",
            "f32[8,64,32]{2,1,0}",
            "f32[8,128,32]{2,1,0}",
        ],
        &config,
    );
    let g = gemm_dims(&rec, None).unwrap();
    assert_eq!((g.batch, g.m, g.n, g.k, g.beta), (8, 32, 128, 64, 1));
}

#[test]
fn gemm_dims_errors_where_the_reference_stops() {
    let ops = ["bf16[4096,6144]{1,0}", "bf16[2048,6144]{1,0}"];
    // Not a tuple output.
    assert!(
        gemm_dims(
            &gemm_record("bf16[4096,2048]{1,0}", &ops, GEMM_CONFIG),
            None
        )
        .is_err()
    );
    // No backend config.
    let mut rec = gemm_record("(bf16[4096,2048]{1,0},s8[8]{0})", &ops, GEMM_CONFIG);
    rec.backend_config = None;
    assert!(gemm_dims(&rec, None).is_err());
    // Contracted sizes differ.
    let rec = gemm_record(
        "(bf16[4096,2048]{1,0},s8[8]{0})",
        &["bf16[4096,6144]{1,0}", "bf16[2048,6000]{1,0}"],
        GEMM_CONFIG,
    );
    assert!(gemm_dims(&rec, None).is_err());
}

#[test]
fn tensors_parse_like_the_reference() {
    assert_eq!(
        parse_tensor("(bf16[1,5120,34,31,53]{4,3,2,1,0},u8[7150336]{0})"),
        Some(Tensor {
            dtype: "bf16".into(),
            dims: vec![1, 5120, 34, 31, 53]
        })
    );
    // Scalars, `pred`, f8 types and unresolved references are skipped.
    for t in [
        "f32[]",
        "pred[4]{0}",
        "f8e4m3fn[2,3]{1,0}",
        "/*index=5*/%x",
        "0",
    ] {
        assert_eq!(parse_tensor(t), None, "{t}");
    }
    let ts = parse_tensors(&strings(&["bf16[2,3]{1,0}", "", "s32[3]{0}"]));
    assert_eq!(dims_tuple(&ts).repr(), "((2, 3), (3,))");
    assert_eq!(types_tuple(&ts).repr(), "('bf16', 's32')");
}

fn custom_call(target: &str, operands: &[&str], output: &str) -> HloRecord {
    HloRecord {
        output: output.into(),
        operands: strings(operands),
        custom_call_target: Some(format!("custom_call_target=\"{target}\"")),
        ..Default::default()
    }
}

#[test]
fn model_selection() {
    let ops = ["bf16[2]{0}"];
    let kind = |t: &str, cat: &str| model_kind(Some(&custom_call(t, &ops, "bf16[2]{0}")), cat);
    assert_eq!(kind("__cublas$gemm", "GEMM"), ModelKind::Gemm);
    assert_eq!(kind("__cublas$gemm", "Conv"), ModelKind::Rest);
    assert_eq!(kind("te_fused_attn_forward_ffi", "TE"), ModelKind::TeFwd);
    assert_eq!(
        kind("te_fused_attn_backward_ffi", "FA BWD"),
        ModelKind::TeBwd
    );
    assert_eq!(kind("__cudnn$convForward", "Conv"), ModelKind::Conv);
    assert_eq!(
        kind("__cudnn$convForward", "Uncategorized Events/XLA"),
        ModelKind::Rest
    );
    assert_eq!(
        kind("__cudnn$convBackwardInput", "Conv"),
        ModelKind::ConvBwd
    );
    // No operands, or no target: no model.
    assert_eq!(
        model_kind(Some(&custom_call("__cublas$gemm", &[], "x")), "GEMM"),
        ModelKind::Rest
    );
    let no_target = HloRecord {
        operands: strings(&ops),
        ..Default::default()
    };
    assert_eq!(model_kind(Some(&no_target), "GEMM"), ModelKind::Rest);
    assert_eq!(model_kind(None, "GEMM"), ModelKind::Rest);
}

#[test]
fn conv_args_take_the_spatial_filter() {
    // The cuDNN convolution of jax_conv_minimal_08.
    let rec = custom_call(
        "__cudnn$convForward",
        &[
            "bf16[1,16,32,60,104]{4,3,2,1,0}",
            "bf16[5120,16,1,2,2]{4,3,2,1,0}",
        ],
        "(bf16[1,5120,34,31,53]{4,3,2,1,0},u8[7150336]{0})",
    );
    let (a, err) = kernel_args(Some(&rec), None, "Conv");
    assert_eq!(err, None);
    assert_eq!(a.model, ModelKind::Conv);
    assert_eq!(
        a.input_dims.repr(),
        "((1, 16, 32, 60, 104), (5120, 16, 1, 2, 2))"
    );
    assert_eq!(a.input_type.repr(), "('bf16', 'bf16')");
    assert_eq!(a.filter, vec![1, 2, 2]);
    assert_eq!(a.output.unwrap().dims, vec![1, 5120, 34, 31, 53]);
    // One operand: the reference's IndexError; we keep the default args.
    let rec = custom_call(
        "__cudnn$convForward",
        &["bf16[1,16,32,60,104]{4,3,2,1,0}"],
        "bf16[1]{0}",
    );
    let (a, err) = kernel_args(Some(&rec), None, "Conv");
    assert_eq!(a.model, ModelKind::Rest);
    assert_eq!(a.input_dims.repr(), "((1, 16, 32, 60, 104),)");
    assert!(err.is_some());
}

#[test]
fn te_args_keep_three_inputs_and_the_bias() {
    // The reference's Input Dims of te_fused_attn_backward_ffi.12.
    let rec = custom_call(
        "te_fused_attn_backward_ffi",
        &[
            "bf16[2,2048,3,16,128]{4,3,2,1,0}",
            "bf16[0]{0}",
            "bf16[0]{0}",
            "bf16[0]{0}",
            "f32[2,16,2048,1]{3,2,1,0}",
            "/*index=5*/%te_fused_attn_forward_ffi.18.0",
        ],
        "(bf16[2,2048,3,16,128]{4,3,2,1,0},bf16[0]{0})",
    );
    let (a, _) = kernel_args(Some(&rec), None, "FA BWD");
    assert_eq!(a.model, ModelKind::TeBwd);
    assert_eq!(a.input_dims.repr(), "((2, 2048, 3, 16, 128), (0,), (0,))");
    assert_eq!(a.input_type.repr(), "('bf16', 'bf16', 'bf16')");
    assert_eq!(a.concrete.repr(), "((0,),)");
    // Without a record: empty tuples everywhere.
    let (a, _) = kernel_args(None, None, "FA BWD");
    assert_eq!(a.input_dims.repr(), "()");
    assert_eq!(a.model, ModelKind::Rest);
}
