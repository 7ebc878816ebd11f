//! Kernel categories of the JAX report: the reference's
//! `JaxOpKeys` keyword table and its tree categoriser, which matches the
//! kernel name first and lets the XLA op (`hlo_op`) override the result
//! unless the name said flash attention.

/// The categories and their keywords, in the reference's dictionary order
/// (the first category with a matching keyword wins). Keywords are
/// case-sensitive substrings.
pub const CATEGORIES: &[(&str, &[&str])] = &[
    (GEMM, &["Cijk", "gemm", "nvjet", "cublasLt"]),
    (
        FA_BWD,
        &[
            "FmhaBwd",
            "flash_bprop",
            "ck_fused_attn::dk_dv_reduce_thd",
            "fmha_bwd",
        ],
    ),
    (FA_FWD, &["FmhaFwd", "flash_fprop", "fmha_fwd"]),
    (FA_V3, &["kernel_func"]),
    (CONV, &["conv_", "conv.", "conv-"]),
    (TE, &["transformer_engine", "te_fused_attn"]),
    (COMMUNICATION, &["rccl", "nccl"]),
];

/// GEMM kernels (Tensile `Cijk_…`, cuBLAS, nvjet).
pub const GEMM: &str = "GEMM";
/// Flash-attention backward kernels.
pub const FA_BWD: &str = "FA BWD";
/// Flash-attention forward kernels.
pub const FA_FWD: &str = "FA FWD";
/// Flash-attention v3 kernels.
pub const FA_V3: &str = "FA V3";
/// Convolutions.
pub const CONV: &str = "Conv";
/// TransformerEngine helper kernels.
pub const TE: &str = "TE";
/// Collectives.
pub const COMMUNICATION: &str = "Communication rccl/nccl";
/// Every kernel no keyword matched: the XLA-generated ones.
pub const UNCATEGORIZED: &str = "Uncategorized Events/XLA";

/// The first category with a keyword contained in `text`.
pub fn keyword_category(text: &str) -> Option<&'static str> {
    CATEGORIES
        .iter()
        .find(|(_, keys)| keys.iter().any(|k| text.contains(k)))
        .map(|(c, _)| *c)
}

/// The category of a GPU kernel (`gpu_kernel_op_cat`): the kernel name's,
/// overridden by the XLA op's when the op matches a keyword and the name
/// did not say flash attention (a CK `FmhaBwd` kernel inside a TE custom
/// call stays `FA BWD`); uncategorised otherwise.
pub fn categorize(name: &str, hlo_op: Option<&str>) -> &'static str {
    let by_name = keyword_category(name);
    let fa = matches!(by_name, Some(FA_BWD | FA_FWD | FA_V3));
    let by_op = match hlo_op {
        Some(op) if !op.is_empty() && !fa => keyword_category(op),
        _ => None,
    };
    by_op.or(by_name).unwrap_or(UNCATEGORIZED)
}

/// The sheet of a category's modelled kernels: `op_` and the lower-cased
/// name with whitespace runs as `_` (`FA BWD` -> `op_fa_bwd`).
pub fn op_sheet_name(category: &str) -> String {
    let words: Vec<String> = category.split_whitespace().map(str::to_lowercase).collect();
    format!("{}{}", crate::names::sheet::OP_PREFIX, words.join("_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_first_then_the_xla_op_overrides() {
        // Worked by hand from the reference's rules and the corpus README.
        let cases = [
            // A Tensile GEMM running a cuDNN convolution is a convolution.
            (
                "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64.kd",
                Some("cudnn-conv.1"),
                CONV,
            ),
            // No keyword in the name: the op decides.
            ("Im3d2Col.kd", Some("cudnn-conv.1"), CONV),
            // No op: the name alone.
            ("Im3d2Col.kd", None, UNCATEGORIZED),
            ("Cijk_Alik_Bljk_BBS_BH_Bias", Some("custom-call.1"), GEMM),
            // A fill kernel inside a TE custom call is TE.
            (
                "__amd_rocclr_fillBufferAligned.kd",
                Some("te_fused_attn_backward_ffi.12"),
                TE,
            ),
            // Flash-attention names are never overridden.
            (
                "ck_tile::FmhaBwdDQDKDVKernel<...>",
                Some("te_fused_attn_backward_ffi.12"),
                FA_BWD,
            ),
            (
                "ck_tile::FmhaFwdKernel<...>",
                Some("te_fused_attn_forward_ffi.10"),
                FA_FWD,
            ),
            // TE helper kernels: by name, and the op agrees.
            (
                "transformer_engine::fused_attn_rocm::populate_rng_state_kernel",
                Some("te_fused_attn_forward_ffi.10"),
                TE,
            ),
            // An empty op is no op; keyword order decides ties.
            ("gemm_fusion_dot.kd", Some(""), GEMM),
            (
                "ncclDevKernel_AllReduce",
                Some("all-reduce-start.1"),
                COMMUNICATION,
            ),
            (
                "loop_transpose_fusion.kd",
                Some("loop_transpose_fusion"),
                UNCATEGORIZED,
            ),
            // Case-sensitive: `Conv_` is not `conv_`.
            ("Conv_fwd", None, UNCATEGORIZED),
        ];
        for (name, op, want) in cases {
            assert_eq!(categorize(name, op), want, "{name} / {op:?}");
        }
    }

    #[test]
    fn op_sheet_names() {
        assert_eq!(op_sheet_name(GEMM), "op_gemm");
        assert_eq!(op_sheet_name(FA_BWD), "op_fa_bwd");
        assert_eq!(op_sheet_name(CONV), "op_conv");
        assert_eq!(op_sheet_name(COMMUNICATION), "op_communication_rccl/nccl");
    }
}
