//! Kernel-name categories for every input format (`--kernel-categories`):
//! one ordered keyword table, first match wins, shared by the PyTorch,
//! JAX and rocprof reports. The per-format categorisers the reference's
//! sheets use (JAX `op category`, rocprof `Category`) stay as they are;
//! this one adds a `kernel_category` column next to them, the same for
//! every format, so that reports of different profilers line up.
//!
//! The keywords come from the reference's lists (JAX `JaxOpKeys`, the
//! rocprof and Perfetto classifiers), reordered so that a more specific
//! family is tested before a generic one (`ncclReduceScatter` is
//! communication, not a reduction; `fmha_bwd` is attention backward, not
//! forward). The table is documented in `docs/kernel-categories.md`; a
//! test keeps the two in step.

use std::sync::Arc;

use crate::names::col;
use crate::table::{Column, Table, Value};

/// The built-in table: (category, keywords), tested in order; a kernel
/// whose lower-cased name contains a keyword gets the category.
pub const BUILTIN: &[(&str, &[&str])] = &[
    (
        "communication",
        &[
            "nccl",
            "rccl",
            "cross_device_reduce",
            "all_reduce",
            "allreduce",
            "all_gather",
            "allgather",
            "reduce_scatter",
            "reducescatter",
            "all_to_all",
            "alltoall",
        ],
    ),
    (
        "attention backward",
        &[
            "fmhabwd",
            "fmha_bwd",
            "flash_bprop",
            "flash_bwd",
            "dk_dv_reduce",
            "attn_bwd",
            "attention_bwd",
            "kernel_func",
        ],
    ),
    (
        "attention forward",
        &[
            "fmhafwd",
            "fmha_fwd",
            "flash_fprop",
            "flash_fwd",
            "flash_attn",
            "paged_attention",
            "unified_attention",
            "attn_fwd",
            "attention",
            "fmha",
        ],
    ),
    (
        "convolution",
        &[
            "conv_",
            "conv.",
            "conv-",
            "conv1d",
            "conv2d",
            "conv3d",
            "convolution",
            "im2col",
            "im3d2col",
            "winograd",
            "miopensp",
        ],
    ),
    (
        "GEMM",
        &[
            "cijk",
            "gemm",
            "nvjet",
            "cublaslt",
            "matmul",
            "xmma",
            "wgmma",
            "hipblaslt",
        ],
    ),
    (
        "norm",
        &[
            "layer_norm",
            "layernorm",
            "rmsnorm",
            "rms_norm",
            "batch_norm",
            "batchnorm",
            "group_norm",
            "groupnorm",
            "instance_norm",
            "l2norm",
        ],
    ),
    ("Triton", &["triton"]),
    (
        "memory",
        &[
            "memcpy",
            "memset",
            "copybuffer",
            "fillbuffer",
            "copy_",
            "copy.",
            "copydevice",
            "dtod",
            "htod",
            "dtoh",
            "batchedcopy",
            "reshape_and_cache",
            "indexselect",
            "index_select",
            "gather",
            "scatter",
        ],
    ),
    (
        "reduce",
        &[
            "reduce",
            "reduction",
            "cumsum",
            "softmax",
            "argmax",
            "argmin",
            "sum_kernel",
            "_sum",
            "topk",
        ],
    ),
    (
        "elementwise",
        &[
            "elementwise",
            "vectorized_",
            "loop_",
            "pointwise",
            "multi_tensor_apply",
            "rotary",
            "silu",
            "gelu",
            "activation",
        ],
    ),
];

/// The category of kernels no keyword matches.
pub const OTHER: &str = "other";

/// One rule: a category and its lower-cased keywords.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    category: Arc<str>,
    keywords: Vec<String>,
}

/// An ordered keyword table (user rules first, then [`BUILTIN`]).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCategories {
    rules: Vec<Rule>,
}

impl Default for KernelCategories {
    fn default() -> Self {
        Self::builtin()
    }
}

impl KernelCategories {
    /// The built-in table.
    pub fn builtin() -> Self {
        let rules = BUILTIN
            .iter()
            .map(|(c, kws)| Rule {
                category: Arc::from(*c),
                keywords: kws.iter().map(|k| k.to_ascii_lowercase()).collect(),
            })
            .collect();
        KernelCategories { rules }
    }

    /// The built-in table extended by a user's rules, which are tested
    /// first (so they can also override a built-in match). The text has one
    /// rule per line, `category: keyword, keyword, …`; blank lines and
    /// lines starting with `#` are ignored; keywords match
    /// case-insensitively. An error names the line.
    pub fn with_user_rules(text: &str) -> Result<Self, String> {
        let mut user = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((cat, kws)) = line.split_once(':') else {
                return Err(format!(
                    "line {}: expected `category: keyword, keyword, …`",
                    n + 1
                ));
            };
            let cat = cat.trim();
            let keywords: Vec<String> = kws
                .split(',')
                .map(|k| k.trim().to_ascii_lowercase())
                .filter(|k| !k.is_empty())
                .collect();
            if cat.is_empty() || keywords.is_empty() {
                return Err(format!(
                    "line {}: a rule needs a category and at least one keyword",
                    n + 1
                ));
            }
            user.push(Rule {
                category: Arc::from(cat),
                keywords,
            });
        }
        let mut table = Self::builtin();
        user.append(&mut table.rules);
        table.rules = user;
        Ok(table)
    }

    /// Appends the `kernel_category` column to a kernel summary sheet,
    /// computed from its kernel-name column (`Kernel name`, or `name` in
    /// the rocprof and JAX summaries).
    pub fn add_column(&self, s: &mut Table) {
        let Some(names) = s.column(col::KERNEL_NAME).or_else(|| s.column(col::NAME)) else {
            return;
        };
        let cats: Vec<Value> = names
            .values
            .iter()
            .map(|v| Value::from(self.categorize(&v.py_str())))
            .collect();
        s.push_column(Column::new(col::KERNEL_CATEGORY, cats));
    }

    /// The category of a kernel named `name` ([`OTHER`] when none matches).
    pub fn categorize(&self, name: &str) -> &str {
        let lower = name.to_ascii_lowercase();
        self.rules
            .iter()
            .find(|r| r.keywords.iter().any(|k| lower.contains(k.as_str())))
            .map_or(OTHER, |r| &r.category)
    }
}

/// The built-in table as Markdown rows (`| category | keywords |`), as
/// `docs/kernel-categories.md` shows it.
pub fn builtin_markdown() -> String {
    let mut out = String::from(
        "| order | category | keywords (substring of the lower-cased name) |\n|---|---|---|\n",
    );
    for (i, (cat, kws)) in BUILTIN.iter().enumerate() {
        let kws: Vec<String> = kws.iter().map(|k| format!("`{k}`")).collect();
        out.push_str(&format!("| {} | {cat} | {} |\n", i + 1, kws.join(", ")));
    }
    out.push_str(&format!("| — | {OTHER} | no keyword matched |\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_categories_of_real_kernel_names() {
        let t = KernelCategories::builtin();
        let cases = [
            ("ncclDevKernel_Generic_1", "communication"),
            // Communication before reduce: a reduce-scatter is a collective.
            ("ncclReduceScatterRingLLKernel", "communication"),
            ("fmha_bwd_d128_bf16_batch", "attention backward"),
            ("FmhaBwdDotDoO", "attention backward"),
            ("ck_tile::FmhaFwdKernel<...>", "attention forward"),
            ("flash_fwd_kernel", "attention forward"),
            ("Cijk_Alik_Bljk_BBS_BH_MT128x128x64", "GEMM"),
            ("nvjet_tst_128x256_64x4", "GEMM"),
            ("Im3d2Col.kd", "convolution"),
            ("cudnn-conv.1", "convolution"),
            (
                "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel",
                "norm",
            ),
            ("triton_poi_fused_add_0", "Triton"),
            ("__amd_rocclr_copyBuffer.kd", "memory"),
            ("__amd_rocclr_fillBufferAligned.kd", "memory"),
            ("void at::native::reduce_kernel<512, 1>", "reduce"),
            ("cunn_SoftMaxForward", "reduce"),
            (
                "void at::native::vectorized_elementwise_kernel<4>",
                "elementwise",
            ),
            ("loop_transpose_fusion.kd", "elementwise"),
            ("convert_element_type_fusion", "other"),
            ("input_transpose_fusion", "other"),
            (
                "void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16>",
                "memory",
            ),
            (
                "void at::native::CatArrayBatchedCopy<OpaqueType<2u>>",
                "memory",
            ),
            ("_topk_forward", "reduce"),
            (
                "void vllm::rotary_embedding_kernel<c10::BFloat16, true>",
                "elementwise",
            ),
            ("_combined_routing_compute", "other"),
        ];
        for (name, want) in cases {
            assert_eq!(t.categorize(name), want, "{name}");
        }
    }

    #[test]
    fn user_rules_come_first_and_can_add_categories() {
        let t = KernelCategories::with_user_rules(
            "# MoE kernels of our stack\n\nMoE: fused_moe, MoeSorting\nGEMM: input_transpose\n",
        )
        .unwrap();
        assert_eq!(t.categorize("fused_moe_kernel_gptq"), "MoE");
        assert_eq!(t.categorize("MoeSortingKernel"), "MoE");
        assert_eq!(t.categorize("input_transpose_fusion"), "GEMM");
        // Built-in rules still apply after the user's.
        assert_eq!(t.categorize("nccl_allreduce"), "communication");
    }

    #[test]
    fn user_rule_errors_name_the_line() {
        let e = KernelCategories::with_user_rules("MoE: fused_moe\nno colon here\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = KernelCategories::with_user_rules(": x").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        let e = KernelCategories::with_user_rules("MoE: , ,").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
    }

    #[test]
    fn docs_show_the_builtin_table() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/kernel-categories.md"
        ))
        .unwrap();
        assert!(
            doc.contains(&builtin_markdown()),
            "docs/kernel-categories.md is out of date; its table must be:\n{}",
            builtin_markdown()
        );
    }
}
