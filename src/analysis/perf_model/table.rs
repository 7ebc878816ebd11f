//! The op -> perf-model class map of the reference: every op name that has
//! a perf model, its class, sheet family and the model that evaluates it.
//! One row per class; the row carries the model, so evaluation dispatches
//! from the row without a second list of class names.

use super::activation::Kind as A;
use super::collective::Kind as CC;
use super::conv::Kind as C;
use super::elementwise::Kind as E;
use super::gemm::Kind as G;
use super::gemm_ext::Kind as GX;
use super::group_quant::Kind as Q;
use super::grouped_gemm::Kind as GG;
use super::inference_attention::{Kind as IA, V4Mode as V4};
use super::mhc::Kind as H;
use super::moe::{Kind as MO, Stage::Down, Stage::Up};
use super::moe_aux::Kind as MA;
use super::norm::Kind as N;
use super::rmsnorm_ext::Kind as RN;
use super::rope::Kind as R;
use super::sdpa;
use super::ssm::Kind as S;
use super::{
    Evaluation, ModelResult, OpInput, activation, collective, conv, cross_entropy, elementwise,
    gemm, gemm_ext, group_quant, grouped_gemm, inference_attention, mhc, moe, moe_aux, norm,
    reduce, rmsnorm_ext, rope, ssm,
};

/// The sheet family of a class: which roofline sheet (or `_fwd`/`_bwd`
/// pair) its ops go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `GEMM`.
    Gemm,
    /// `SDPA`.
    Sdpa,
    /// `CONV`.
    Conv,
    /// `InferenceAttention`.
    InferenceAttention,
    /// `BinaryElementwise`.
    BinaryElementwise,
    /// `GroupedGEMM`.
    GroupedGemm,
    /// `MoE_comm`.
    MoeComm,
    /// `SSM`.
    Ssm,
    /// `RoPE`.
    Rope,
    /// `CrossEntropy`.
    CrossEntropy,
    /// `UnaryElementwise`.
    UnaryElementwise,
    /// `MoE_fused`.
    MoeFused,
    /// `MoE_unfused`.
    MoeUnfused,
    /// `MoE_aux`.
    MoeAux,
    /// `RMSNorm`.
    RmsNorm,
    /// `elementwise`.
    Elementwise,
    /// `GroupQuant`.
    GroupQuant,
    /// `FusedRoPE`.
    FusedRope,
    /// `CustomCollective`.
    CustomCollective,
    /// `mHC`.
    Mhc,
    /// `Normalization`.
    Normalization,
    /// `Reduce`.
    Reduce,
}

impl Family {
    /// The family's name as the sheet names print it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Gemm => "GEMM",
            Family::Sdpa => "SDPA",
            Family::Conv => "CONV",
            Family::InferenceAttention => "InferenceAttention",
            Family::BinaryElementwise => "BinaryElementwise",
            Family::GroupedGemm => "GroupedGEMM",
            Family::MoeComm => "MoE_comm",
            Family::Ssm => "SSM",
            Family::Rope => "RoPE",
            Family::CrossEntropy => "CrossEntropy",
            Family::UnaryElementwise => "UnaryElementwise",
            Family::MoeFused => "MoE_fused",
            Family::MoeUnfused => "MoE_unfused",
            Family::MoeAux => "MoE_aux",
            Family::RmsNorm => "RMSNorm",
            Family::Elementwise => "elementwise",
            Family::GroupQuant => "GroupQuant",
            Family::FusedRope => "FusedRoPE",
            Family::CustomCollective => "CustomCollective",
            Family::Mhc => "mHC",
            Family::Normalization => "Normalization",
            Family::Reduce => "Reduce",
        }
    }

    /// True when the family writes one sheet named like the family; other
    /// families write `<family>_fwd` and `<family>_bwd`.
    pub fn single_sheet(self) -> bool {
        matches!(
            self,
            Family::Gemm
                | Family::UnaryElementwise
                | Family::BinaryElementwise
                | Family::Normalization
        )
    }
}

/// The model that evaluates a class, with the class's parameters (which
/// operand slots it reads, which formula variant it takes).
#[derive(Debug, Clone, Copy)]
pub enum Model {
    /// A core GEMM.
    Gemm(gemm::Kind),
    /// An extension GEMM.
    GemmExt(gemm_ext::Kind),
    /// Scaled dot-product attention.
    Sdpa(sdpa::Kind),
    /// A convolution.
    Conv(conv::Kind),
    /// Inference (paged, varlen, MLA) attention.
    Attention(inference_attention::Kind),
    /// A core elementwise op.
    Elementwise(elementwise::Kind),
    /// A grouped GEMM.
    GroupedGemm(grouped_gemm::Kind),
    /// SSM kernels.
    Ssm(ssm::Kind),
    /// RoPE kernels.
    Rope(rope::Kind),
    /// Fused cross entropy.
    CrossEntropy,
    /// Gated activations and the sampler.
    Activation(activation::Kind),
    /// MoE GEMMs.
    Moe(moe::Kind),
    /// MoE routing and communication.
    MoeAux(moe_aux::Kind),
    /// RMSNorm extensions.
    RmsNormExt(rmsnorm_ext::Kind),
    /// Group quantization.
    GroupQuant(group_quant::Kind),
    /// Custom collectives.
    Collective(collective::Kind),
    /// mHC kernels.
    Mhc(mhc::Kind),
    /// Core normalizations.
    Norm(norm::Kind),
    /// Core reductions.
    Reduce,
}

impl Model {
    /// Runs the model on `input`; `bwd` asks for the backward FLOPs and
    /// bytes of a forward op.
    pub fn evaluate(&self, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
        match *self {
            Model::Gemm(k) => gemm::evaluate(k, input, bwd),
            Model::GemmExt(k) => gemm_ext::evaluate(k, input, bwd),
            Model::Sdpa(k) => sdpa::evaluate(&k, input, bwd),
            Model::Conv(k) => conv::evaluate(k, input, bwd),
            Model::Attention(k) => inference_attention::evaluate(k, input, bwd),
            Model::Elementwise(k) => elementwise::evaluate(k, input, bwd),
            Model::GroupedGemm(k) => grouped_gemm::evaluate(k, input, bwd),
            Model::Ssm(k) => ssm::evaluate(k, input, bwd),
            Model::Rope(k) => rope::evaluate(k, input, bwd),
            Model::CrossEntropy => cross_entropy::evaluate(input, bwd),
            Model::Activation(k) => activation::evaluate(k, input, bwd),
            Model::Moe(k) => moe::evaluate(k, input, bwd),
            Model::MoeAux(k) => moe_aux::evaluate(k, input, bwd),
            Model::RmsNormExt(k) => rmsnorm_ext::evaluate(k, input, bwd),
            Model::GroupQuant(k) => group_quant::evaluate(k, input, bwd),
            Model::Collective(k) => collective::evaluate(k, input, bwd),
            Model::Mhc(k) => mhc::evaluate(k, input, bwd),
            Model::Norm(k) => norm::evaluate(k, input, bwd),
            Model::Reduce => reduce::evaluate(input, bwd),
        }
    }
}

/// One perf-model class of the reference: its sheet family, the ops it
/// models and its model.
#[derive(Debug, Clone, Copy)]
pub struct ModelClass {
    /// The reference's class name, e.g. `aten_addmm`.
    pub class: &'static str,
    /// Sheet family.
    pub family: Family,
    /// Category of the backward of this forward op, if the model has one.
    pub bwd_category: Option<&'static str>,
    /// True for classes of the reference's core (false: bundled extensions).
    pub core: bool,
    /// Op names mapped to this class.
    pub ops: &'static [&'static str],
    /// The model that evaluates the class's ops.
    pub model: Model,
}

impl ModelClass {
    /// True when the family writes one sheet named like the family.
    pub fn single_sheet(&self) -> bool {
        self.family.single_sheet()
    }
}

/// A table row (positional, so that a row fits a line or two).
const fn c(
    class: &'static str,
    family: Family,
    core: bool,
    bwd_category: Option<&'static str>,
    model: Model,
    ops: &'static [&'static str],
) -> ModelClass {
    ModelClass {
        class,
        family,
        bwd_category,
        core,
        ops,
        model,
    }
}

/// A class of the reference's core.
const CORE: bool = true;
/// A class of a bundled extension.
const EXT: bool = false;
const SDPA_BWD: Option<&str> = Some("SDPA_bwd");
const CONV_BWD: Option<&str> = Some("CONV_bwd");
const NORM_BWD: Option<&str> = Some("NORM_bwd");
const GROUPED_GEMM_BWD: Option<&str> = Some("GroupedGEMM_bwd");
const MOE_COMM_BWD: Option<&str> = Some("MoE_comm_bwd");
const SSM_BWD: Option<&str> = Some("SSM_bwd");

use Model::*;
type F = Family;

/// All classes, in the reference's map order (which fixes sheet order).
#[rustfmt::skip]
pub const CLASSES: &[ModelClass] = &[
    // GEMM
    c("aten_mm", F::Gemm, CORE, None, Gemm(G::Mm), &["aten::mm"]),
    c("aten_addmm", F::Gemm, CORE, None, Gemm(G::Addmm), &["aten::addmm"]),
    c("aten_scaled_mm", F::Gemm, CORE, None, Gemm(G::ScaledMm), &[
        "aten::_scaled_mm", "trtllm::cublas_scaled_mm", "bitsandbytes::int8_linear_matmul"
    ]),
    c("aten_bmm", F::Gemm, CORE, None, Gemm(G::Bmm), &["aten::bmm"]),
    c("tex_ts_te_gemm_ts", F::Gemm, CORE, None, Gemm(G::TexTs), &["tex_ts::te_gemm_ts"]),
    c("aten_baddbmm", F::Gemm, CORE, None, Gemm(G::Baddbmm), &["aten::baddbmm"]),
    c("vllm_gemm_with_dynamic_quant", F::Gemm, CORE, None, Gemm(G::VllmDynamicQuant), &[
        "vllm::gemm_with_dynamic_quant"
    ]),
    c("tev2_pseudo_gemm", F::Gemm, CORE, None, Gemm(G::Tev2Pseudo), &[
        "_Linear_yfwd_mm", "_LinearBackward_xgrad_mm", "_LinearBackward_wgrad_mm",
        "_LayerNormLinear_yfwd_mm", "_LayerNormLinearBackward_xgrad_mm",
        "_LayerNormLinearBackward_wgrad_mm"
    ]),
    c("hipblaslt_gemm_fp8", F::Gemm, CORE, None, Gemm(G::HipblasltFp8), &[
        "primus_turbo_cpp_extension::hipblaslt_gemm_fp8", "primus_turbo::hipblaslt_gemm_fp8"
    ]),
    c("hipblaslt_gemm_fp4", F::Gemm, CORE, None, Gemm(G::HipblasltFp4), &[
        "primus_turbo_cpp_extension::hipblaslt_gemm_fp4", "primus_turbo::hipblaslt_gemm_fp4"
    ]),
    c("aiter_gemm_a4w4", F::Gemm, CORE, None, Gemm(G::AiterA4w4), &[
        "aiter::gemm_a4w4", "aiter::_gemm_a4w4_asm"
    ]),
    c("batched_gemm_a16wfp4", F::Gemm, EXT, None, GemmExt(GX::BatchedA16wfp4), &[
        "aiter::batched_gemm_a16wfp4_"
    ]),
    c("gemm_a8w8_blockscale", F::Gemm, EXT, None, GemmExt(GX::A8w8Blockscale), &[
        "sglang_profiler::fp8_utils_gemm_a8w8_blockscale",
        "sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale",
        "vllm::rocm_aiter_triton_gemm_a8w8_blockscale", "aiter::gemm_a8w8_blockscale_ck",
        "aiter::gemm_a8w8_blockscale_cktile", "aiter::gemm_a8w8_blockscale_bpreshuffle_ck",
        "aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", "aiter::flatmm_a8w8_blockscale_asm",
        "aiter::gfx950_a8w8_blockscale_asm", "aiter::gemm_a8w8_ck",
        "aiter::gemm_a8w8_bpreshuffle_ck", "aiter::gemm_a8w8_bpreshuffle",
        "vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm",
        "aiter::_gemm_a8w8_blockscale_bpreshuffle_asm"
    ]),
    c("vllm_rocm_unquantized_gemm", F::Gemm, EXT, None, GemmExt(GX::RocmUnquantized), &[
        "vllm::rocm_unquantized_gemm"
    ]),
    c("gemm_a16w16", F::Gemm, EXT, None, GemmExt(GX::A16w16), &["aiter::gemm_a16w16"]),
    c("gemm_a16w16_atomic_", F::Gemm, EXT, None, GemmExt(GX::A16w16Atomic), &[
        "aiter::gemm_a16w16_atomic_", "sglang_profiler::gemm_kernels_flydsl_hgemm"
    ]),
    c("gemm_a16w16_asm", F::Gemm, EXT, None, GemmExt(GX::A16w16Asm), &["aiter::_gemm_a16w16_asm"]),
    c("gemm_afp4wfp4", F::Gemm, EXT, None, GemmExt(GX::Afp4wfp4), &["aiter::gemm_afp4wfp4_"]),
    c("batched_gemm_a8w8", F::Gemm, EXT, None, GemmExt(GX::BatchedA8w8), &[
        "sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant"
    ]),

    // SDPA
    c("flash_attention", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::FLASH_ATTENTION), &[
        "FlashAttnFunc", "flash_attn::_flash_attn_forward"
    ]),
    c("flash_attention_backward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::FLASH_ATTENTION_BACKWARD), &[
        "flash_attn::_flash_attn_backward"
    ]),
    c("flash_attention_varlen_forward", F::Sdpa, CORE, SDPA_BWD,
        Sdpa(sdpa::FLASH_VARLEN_FORWARD), &["flash_attn::_flash_attn_varlen_forward"]),
    c("flash_attention_varlen_backward", F::Sdpa, CORE, SDPA_BWD,
        Sdpa(sdpa::FLASH_VARLEN_BACKWARD), &["flash_attn::_flash_attn_varlen_backward"]),
    c("aten__scaled_dot_product_cudnn_attention", F::Sdpa, CORE, SDPA_BWD,
        Sdpa(sdpa::ATEN_EFFICIENT), &["aten::_scaled_dot_product_cudnn_attention"]),
    c("aten__scaled_dot_product_efficient_attention", F::Sdpa, CORE, SDPA_BWD,
        Sdpa(sdpa::ATEN_EFFICIENT), &["aten::_scaled_dot_product_efficient_attention"]),
    c("aten__scaled_dot_product_flash_attention", F::Sdpa, CORE, SDPA_BWD,
        Sdpa(sdpa::ATEN_FLASH), &["aten::_scaled_dot_product_flash_attention"]),
    c("aiter__flash_attn_forward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::BASE), &[
        "aiter::_flash_attn_forward"
    ]),
    c("aiter__flash_attn_backward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::AITER_FLASH_BACKWARD), &[
        "aiter::_flash_attn_backward"
    ]),
    c("aiter__fmha_v3_forward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::AITER_V3_FORWARD), &[
        "aiter::wrapper_fmha_v3_fwd"
    ]),
    c("aiter__fmha_v3_backward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::AITER_V3_BACKWARD), &[
        "aiter::wrapper_fmha_v3_bwd"
    ]),
    c("aiter__mha_fwd", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::BASE), &["aiter::mha_fwd"]),
    c("aiter__fmha_v3_fwd", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::BASE), &["aiter::fmha_v3_fwd"]),
    c("aiter__mha_bwd", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::AITER_MHA_BACKWARD), &[
        "aiter::mha_bwd"
    ]),
    c("flash_attn_v3_forward", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::FLASH_ATTN_3), &[
        "flash_attn_3::fwd"
    ]),
    c("evoformer_attention", F::Sdpa, CORE, SDPA_BWD, Sdpa(sdpa::EVOFORMER), &[
        "EvoformerAttention"
    ]),

    // CONV
    c("aten_conv", F::Conv, CORE, CONV_BWD, Conv(C::Conv), &["aten::convolution"]),
    c("aten_conv_bwd", F::Conv, CORE, CONV_BWD, Conv(C::ConvBwd), &["aten::convolution_backward"]),
    c("ConvBias_", F::Conv, CORE, CONV_BWD, Conv(C::Fused), &["ConvBias_"]),
    c("ConvBiasReLU_", F::Conv, CORE, CONV_BWD, Conv(C::Fused), &["ConvBiasReLU_"]),
    c("ConvBias_Backward", F::Conv, CORE, CONV_BWD, Conv(C::FusedBwd), &["ConvBias_Backward"]),
    c("ConvBiasReLU_Backward", F::Conv, CORE, CONV_BWD, Conv(C::FusedBwd), &[
        "ConvBiasReLU_Backward"
    ]),

    // InferenceAttention
    c("vllm_unified_attention_with_output", F::InferenceAttention, EXT, None,
        Attention(IA::Base), &["vllm::unified_attention_with_output"]),
    c("mha_varlen_fwd", F::InferenceAttention, EXT, None, Attention(IA::Base), &[
        "aiter::mha_varlen_fwd"
    ]),
    c("aiter_fmha_v3_varlen_fwd", F::InferenceAttention, EXT, None, Attention(IA::VFromSlot2), &[
        "aiter::fmha_v3_varlen_fwd"
    ]),
    c("aiter_mha_batch_prefill", F::InferenceAttention, EXT, None, Attention(IA::VFromSlot2), &[
        "aiter::mha_batch_prefill"
    ]),
    c("aiter_paged_attention_ragged", F::InferenceAttention, EXT, None,
        Attention(IA::PagedRagged), &["sglang_profiler::attention_paged_attention_ragged"]),
    c("mla_decode_fwd", F::InferenceAttention, EXT, None, Attention(IA::Base), &[
        "pseudo_mla_decode_fwd"
    ]),
    c("pseudo_mla_prefill_fwd", F::InferenceAttention, EXT, None, Attention(IA::VFromSlot2), &[
        "pseudo_mla_prefill_fwd"
    ]),
    c("pa_decode_gluon", F::InferenceAttention, EXT, None, Attention(IA::PaDecodeGluon), &[
        "aiter::pa_decode_gluon"
    ]),
    c("pseudo_v4_paged_decode_swa", F::InferenceAttention, EXT, None,
        Attention(IA::V4Decode(V4::Swa)), &["pseudo_v4_paged_decode_swa"]),
    c("pseudo_v4_paged_decode_csa", F::InferenceAttention, EXT, None,
        Attention(IA::V4Decode(V4::Csa)), &["pseudo_v4_paged_decode_csa"]),
    c("pseudo_v4_paged_decode_hca", F::InferenceAttention, EXT, None,
        Attention(IA::V4Decode(V4::Hca)), &["pseudo_v4_paged_decode_hca"]),
    c("pa_sparse_prefill_opus_fwd", F::InferenceAttention, EXT, None,
        Attention(IA::SparsePrefill), &["aiter::pa_sparse_prefill_opus_fwd"]),
    c("mla_tilelang_sparse_fwd", F::InferenceAttention, EXT, None, Attention(IA::TilelangSparse), &[
        "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd"
    ]),
    c("gdn_attention_core", F::InferenceAttention, EXT, None, Attention(IA::Gdn), &[
        "vllm::gdn_attention_core", "aiter::linear_attention_with_output_base"
    ]),
    c("sglang_store_cache", F::InferenceAttention, EXT, None, Attention(IA::StoreCache), &[
        "sglang::store_cache"
    ]),

    // BinaryElementwise
    c("liger_silu_mul_function", F::BinaryElementwise, CORE, None, Elementwise(E::LigerSiluMul), &[
        "LigerSiLUMulFunction"
    ]),
    c("per_group_quant", F::BinaryElementwise, EXT, None, GroupQuant(Q::PerGroup), &[
        "aiter::dynamic_per_token_scaled_quant", "aiter::dynamic_per_group_scaled_quant",
        "aiter::dynamic_per_tensor_quant"
    ]),
    c("vllm_triton_per_token_group_quant_fp8", F::BinaryElementwise, EXT, None,
        GroupQuant(Q::VllmFp8), &["vllm::triton_per_token_group_quant_fp8"]),
    c("aten_binary_elementwise", F::BinaryElementwise, CORE, None, Elementwise(E::Binary), &[
        "aten::div", "aten::div_", "aten::mul", "aten::mul_", "aten::add", "aten::add_",
        "aten::sigmoid_backward", "aten::threshold_backward"
    ]),

    // GroupedGEMM
    c("primus_turbo_grouped_gemm", F::GroupedGemm, CORE, GROUPED_GEMM_BWD,
        GroupedGemm(GG::FixedK), &[
        "primus_turbo::grouped_gemm", "primus_turbo::grouped_gemm_impl",
        "primus_turbo_cpp_extension::grouped_gemm", "primus_turbo_cpp_extension::ck_grouped_gemm"
    ]),
    c("primus_turbo_grouped_gemm_variable_k", F::GroupedGemm, CORE, GROUPED_GEMM_BWD,
        GroupedGemm(GG::VariableK), &[
        "primus_turbo::grouped_gemm_variable_k", "primus_turbo::grouped_gemm_variable_k_impl",
        "primus_turbo_cpp_extension::grouped_gemm_variable_k",
        "primus_turbo_cpp_extension::ck_grouped_gemm_variable_k"
    ]),

    // MoE_comm
    c("moe_dispatch", F::MoeComm, CORE, MOE_COMM_BWD, MoeAux(MA::Comm), &["MoEDispatch"]),
    c("moe_combine", F::MoeComm, CORE, MOE_COMM_BWD, MoeAux(MA::Comm), &["MoECombine"]),

    // SSM
    c("causal_conv1d_fwd", F::Ssm, CORE, None, Ssm(S::CausalConv1d), &[
        "DaoAILab::_causal_conv1d_fwd_cpp"
    ]),
    c("mamba_ssd_fwd", F::Ssm, CORE, SSM_BWD, Ssm(S::MambaSsd), &[
        "MambaSplitConv1dScanCombinedFn"
    ]),

    // RoPE
    c("fused_rope_fwd", F::Rope, CORE, None, Rope(R::Fused), &["FusedRoPEFunc"]),
    c("aiter_rope_cached_positions_2c_fwd_impl", F::Rope, EXT, None, Rope(R::CachedPositions2c), &[
        "aiter::rope_cached_positions_2c_fwd_impl"
    ]),
    c("sgl_kernel_rotary_embedding", F::Rope, EXT, None, Rope(R::SglRotary), &[
        "sgl_kernel::rotary_embedding"
    ]),

    // CrossEntropy
    c("cross_entropy_fwd", F::CrossEntropy, CORE, None, CrossEntropy, &["CrossEntropyFunction"]),

    // UnaryElementwise
    c("primus_turbo_quantize_fp8", F::UnaryElementwise, CORE, None, Elementwise(E::QuantizeFp8), &[
        "primus_turbo_cpp_extension::quantize_fp8_tensorwise",
        "primus_turbo::quantize_fp8_tensorwise"
    ]),
    c("primus_turbo_quantize_mxfp4_dual", F::UnaryElementwise, CORE, None,
        Elementwise(E::QuantizeMxfp4Dual), &[
        "primus_turbo_cpp_extension::quantize_mxfp4_dual", "primus_turbo::quantize_mxfp4_dual",
        "primus::quantize_mxfp4_dual"
    ]),
    c("aiter_silu_and_mul", F::UnaryElementwise, EXT, None, Activation(A::Gated(5)), &[
        "aiter::silu_and_mul", "_C::silu_and_mul"
    ]),
    c("sgl_kernel_silu_and_mul", F::UnaryElementwise, EXT, None, Activation(A::Gated(5)), &[
        "sgl_kernel::silu_and_mul"
    ]),
    c("aiter_gelu_and_mul", F::UnaryElementwise, EXT, None, Activation(A::Gated(8)), &[
        "aiter::gelu_and_mul"
    ]),
    c("aiter_gelu_tanh_and_mul", F::UnaryElementwise, EXT, None, Activation(A::Gated(10)), &[
        "aiter::gelu_tanh_and_mul"
    ]),
    c("aten_unary_elementwise", F::UnaryElementwise, CORE, None, Elementwise(E::Unary), &[
        "aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_", "aten::clamp_max",
        "aten::clamp_max_", "aten::sigmoid", "aten::rsqrt", "aten::silu", "aten::neg", "aten::pow"
    ]),
    c("aten_replication_pad", F::UnaryElementwise, CORE, None, Elementwise(E::ReplicationPad), &[
        "aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d"
    ]),
    c("aten_upsample_nearest", F::UnaryElementwise, CORE, None, Elementwise(E::UpsampleNearest), &[
        "aten::upsample_nearest1d", "aten::upsample_nearest2d", "aten::upsample_nearest3d"
    ]),

    // MoE_fused
    c("moe_aiter_fused_1stage", F::MoeFused, EXT, None, Moe(MO::Fused1Stage), &[
        "pseudo_op::moe_aiter_fused_1stage"
    ]),
    c("moe_aiter_fused_blockscale", F::MoeFused, EXT, None, Moe(MO::FusedBlockscale), &[
        "aiter::fmoe_fp8_blockscale_g1u1", "aiter::fmoe_g1u1"
    ]),

    // MoE_unfused
    c("moe_aiter_unfused_up", F::MoeUnfused, EXT, None, Moe(MO::CktileUp), &[
        "aiter::moe_cktile2stages_gemm1_ck"
    ]),
    c("moe_aiter_unfused_down", F::MoeUnfused, EXT, None, Moe(MO::CktileDown), &[
        "aiter::moe_cktile2stages_gemm2_ck"
    ]),
    c("moe_aiter_ck_stage1", F::MoeUnfused, EXT, None, Moe(MO::CkStage1), &[
        "aiter::ck_moe_stage1"
    ]),
    c("moe_aiter_ck_stage2", F::MoeUnfused, EXT, None, Moe(MO::CkStage2), &[
        "aiter::ck_moe_stage2"
    ]),
    c("moe_triton_unfused_up", F::MoeUnfused, EXT, None, Moe(MO::TritonUnfused(Up)), &[
        "pseudo_op::moe_triton_unfused_up"
    ]),
    c("moe_triton_unfused_down", F::MoeUnfused, EXT, None, Moe(MO::TritonUnfused(Down)), &[
        "pseudo_op::moe_triton_unfused_down"
    ]),
    c("moe_gptq_awq_up", F::MoeUnfused, EXT, None, Moe(MO::GptqAwq(Up)), &[
        "pseudo_op::moe_gptq_awq_up"
    ]),
    c("moe_gptq_awq_down", F::MoeUnfused, EXT, None, Moe(MO::GptqAwq(Down)), &[
        "pseudo_op::moe_gptq_awq_down"
    ]),
    c("moe_flydsl_stage1", F::MoeUnfused, EXT, None, Moe(MO::Flydsl(Up)), &[
        "pseudo_op::moe_flydsl_stage1"
    ]),
    c("moe_flydsl_stage2", F::MoeUnfused, EXT, None, Moe(MO::Flydsl(Down)), &[
        "pseudo_op::moe_flydsl_stage2"
    ]),
    c("moe_triton_invoke_grouped_gemm", F::MoeUnfused, EXT, None, Moe(MO::InvokeGroupedGemm), &[
        "sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel"
    ]),

    // MoE_aux
    c("BiasedGroupedTopk", F::MoeAux, EXT, None, MoeAux(MA::BiasedGroupedTopk), &[
        "aiter::biased_grouped_topk_hip"
    ]),
    c("MoeSortScatterGather", F::MoeAux, EXT, None, MoeAux(MA::SortScatterGather), &[
        "aiter::moe_sorting_fwd", "aiter::mxfp4_moe_sort_hip"
    ]),
    c("sglang_fused_append_shared_experts", F::MoeAux, EXT, None, MoeAux(MA::AppendShared), &[
        "sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts"
    ]),
    c("topk_softplus", F::MoeAux, EXT, None, Mhc(H::TopkSoftplus), &["aiter::topk_softplus"]),

    // RMSNorm
    c("vllm_rocm_aiter_triton_add_rmsnorm_pad", F::RmsNorm, EXT, None, RmsNormExt(RN::AddPad), &[
        "aiter::fused_add_rmsnorm_pad_", "vllm::rocm_aiter_triton_add_rmsnorm_pad"
    ]),
    c("aiter_rms_norm", F::RmsNorm, EXT, None, RmsNormExt(RN::Plain { x: 0, w: 1 }), &[
        "aiter::rms_norm", "aiter::rmsnorm2d_fwd_ck"
    ]),
    c("aiter_rmsnorm", F::RmsNorm, EXT, None, RmsNormExt(RN::Plain { x: 1, w: 2 }), &["aiter::rmsnorm"]),
    c("aiter_rmsnorm2d_fwd_with_add_ck", F::RmsNorm, EXT, None, RmsNormExt(RN::WithAdd), &[
        "aiter::rmsnorm2d_fwd_with_add_ck", "aiter::add_rmsnorm"
    ]),
    c("aiter_rmsnorm2d_fwd_with_dynamicquant_ck", F::RmsNorm, EXT, None,
        RmsNormExt(RN::DynamicQuant), &["aiter::rmsnorm2d_fwd_with_dynamicquant_ck"]),
    c("vllm_rocm_aiter_rmsnorm_fp8_group_quant", F::RmsNorm, EXT, None,
        RmsNormExt(RN::Fp8GroupQuant), &["vllm::rocm_aiter_rmsnorm_fp8_group_quant"]),
    c("vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant", F::RmsNorm, EXT, None,
        RmsNormExt(RN::AddFp8GroupQuant), &["vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant"]),
    c("fused_rms_mxfp4_quant", F::RmsNorm, EXT, None, RmsNormExt(RN::Mxfp4Quant), &[
        "sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant",
        "aiter::_fuse_rmsnorm_fp4_quant"
    ]),
    c("aiter_rmsnorm_quant", F::RmsNorm, EXT, None, RmsNormExt(RN::Quant), &[
        "aiter::rmsnorm_quant"
    ]),

    // elementwise
    c("mixed_sample_outer_exponential", F::Elementwise, EXT, None, Activation(A::Sampler), &[
        "aiter::mixed_sample_outer_exponential"
    ]),

    // GroupQuant
    c("fused_dynamic_mx_quant_moe_sort_hip", F::GroupQuant, EXT, None,
        GroupQuant(Q::Mxfp4 { slot: 2, strides: true }), &[
        "aiter::fused_dynamic_mx_quant_moe_sort_hip"
    ]),
    c("fused_flatten_mxfp4_quant", F::GroupQuant, EXT, None,
        GroupQuant(Q::Mxfp4 { slot: 0, strides: true }), &[
        "sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant"
    ]),
    c("sglang_quant_dynamic_mxfp4_quant", F::GroupQuant, EXT, None,
        GroupQuant(Q::Mxfp4 { slot: 0, strides: false }), &[
        "sglang_profiler::quant_dynamic_mxfp4_quant"
    ]),
    c("aiter_fused_dynamic_mxfp4_quant_moe_sort_hip", F::GroupQuant, EXT, None,
        GroupQuant(Q::Mxfp4 { slot: 2, strides: false }), &[
        "aiter::fused_dynamic_mxfp4_quant_moe_sort_hip"
    ]),
    c("aiter_dynamic_per_group_scaled_quant_fp4", F::GroupQuant, EXT, None,
        GroupQuant(Q::Mxfp4 { slot: 1, strides: false }), &[
        "aiter::dynamic_per_group_scaled_quant_fp4"
    ]),

    // FusedRoPE
    c("fused_qk_rope_concat_and_cache_mla", F::FusedRope, EXT, None,
        Rope(R::MlaCache { concat: true }), &["aiter::fused_qk_rope_concat_and_cache_mla"]),
    c("aiter_fused_qk_rope_cat_and_cache_mla", F::FusedRope, EXT, None,
        Rope(R::MlaCache { concat: false }), &["aiter::fused_qk_rope_cat_and_cache_mla"]),

    // CustomCollective
    c("aiter_fused_allreduce_rmsnorm", F::CustomCollective, EXT, None,
        Collective(CC::AllreduceRmsnorm { x: 2, w: 6 }), &["aiter::fused_allreduce_rmsnorm"]),
    c("aiter_fused_allreduce_rmsnorm_", F::CustomCollective, EXT, None,
        Collective(CC::AllreduceRmsnorm { x: 0, w: 2 }), &["aiter::fused_allreduce_rmsnorm_"]),
    c("custom_ar_all_reduce", F::CustomCollective, EXT, None, Collective(CC::AllReduce), &[
        "_C_custom_ar::all_reduce"
    ]),
    c("aiter_reduce_scatter", F::CustomCollective, EXT, None, Collective(CC::ScatterGather), &[
        "aiter::reduce_scatter"
    ]),
    c("aiter_all_gather_reg", F::CustomCollective, EXT, None, Collective(CC::ScatterGather), &[
        "aiter::all_gather_reg"
    ]),
    c("sgl_kernel_all_reduce_reg", F::CustomCollective, EXT, None, Collective(CC::AllReduce), &[
        "sgl_kernel::all_reduce_reg"
    ]),
    c("sgl_kernel_qr_all_reduce", F::CustomCollective, EXT, None, Collective(CC::AllReduce), &[
        "sgl_kernel::qr_all_reduce"
    ]),
    c("sgl_kernel_reg_all_gather_into_tensor", F::CustomCollective, EXT, None,
        Collective(CC::RegAllGather), &["sglang::reg_all_gather_into_tensor"]),
    c("custom_ar_qr_all_reduce", F::CustomCollective, EXT, None, Collective(CC::AllReduce), &[
        "_C_custom_ar::qr_all_reduce"
    ]),

    // mHC
    c("mhc_post", F::Mhc, EXT, None, Mhc(H::Post), &["aiter::mhc_post"]),
    c("mhc_pre_gemm_sqrsum", F::Mhc, EXT, None, Mhc(H::PreGemmSqrsum), &[
        "aiter::mhc_pre_gemm_sqrsum"
    ]),
    c("mhc_pre_big_fuse_rmsnorm", F::Mhc, EXT, None, Mhc(H::PreBigFuseRmsnorm), &[
        "aiter::mhc_pre_big_fuse_rmsnorm"
    ]),
    c("mhc_fused_post_pre_gemm_sqrsum", F::Mhc, EXT, None, Mhc(H::FusedPostPreGemmSqrsum), &[
        "aiter::mhc_fused_post_pre_gemm_sqrsum"
    ]),

    // Normalization
    c("GroupNorm", F::Normalization, CORE, NORM_BWD, Norm(N::Group), &[
        "aiter::_groupnorm_run", "aten::group_norm", "aten::native_group_norm",
        "aten::miopen_group_norm", "aten::cudnn_group_norm"
    ]),
    c("BatchNorm", F::Normalization, CORE, NORM_BWD, Norm(N::Batch), &[
        "aten::batch_norm", "aten::native_batch_norm", "aten::miopen_batch_norm",
        "aten::cudnn_batch_norm"
    ]),
    c("LayerNorm", F::Normalization, CORE, NORM_BWD, Norm(N::Layer), &[
        "aten::layer_norm", "aten::native_layer_norm", "aten::miopen_layer_norm",
        "aten::cudnn_layer_norm"
    ]),
    c("InstanceNorm", F::Normalization, CORE, NORM_BWD, Norm(N::Instance), &[
        "aten::instance_norm", "aten::native_instance_norm", "aten::miopen_instance_norm",
        "aten::cudnn_instance_norm"
    ]),
    c("RMSNorm", F::Normalization, CORE, NORM_BWD, Norm(N::Rms), &["aten::_fused_rms_norm"]),
    c("BatchNormBwd", F::Normalization, CORE, NORM_BWD, Norm(N::BatchBwd), &[
        "aten::batch_norm_backward", "aten::native_batch_norm_backward",
        "aten::miopen_batch_norm_backward", "aten::cudnn_batch_norm_backward"
    ]),
    c("LayerNormBwd", F::Normalization, CORE, NORM_BWD, Norm(N::LayerBwd), &[
        "aten::layer_norm_backward", "aten::native_layer_norm_backward",
        "aten::miopen_layer_norm_backward", "aten::cudnn_layer_norm_backward"
    ]),
    c("GroupNormBwd", F::Normalization, CORE, NORM_BWD, Norm(N::GroupBwd), &[
        "aten::group_norm_backward", "aten::native_group_norm_backward",
        "aten::miopen_group_norm_backward", "aten::cudnn_group_norm_backward"
    ]),
    c("InstanceNormBwd", F::Normalization, CORE, NORM_BWD, Norm(N::InstanceBwd), &[
        "aten::instance_norm_backward", "aten::native_instance_norm_backward",
        "aten::miopen_instance_norm_backward", "aten::cudnn_instance_norm_backward"
    ]),
    c("RMSNormBwd", F::Normalization, CORE, NORM_BWD, Norm(N::RmsBwd), &[
        "aten::rms_norm_backward", "aten::native_rms_norm_backward",
        "aten::miopen_rms_norm_backward", "aten::cudnn_rms_norm_backward",
        "aten::_fused_rms_norm_backward"
    ]),
    c("FusedLnModulate", F::Normalization, CORE, NORM_BWD, Norm(N::LnModulate), &[
        "primus::fused_ln_modulate"
    ]),
    c("FusedLnModulateBackward", F::Normalization, CORE, NORM_BWD, Norm(N::LnModulateBwd), &[
        "primus::fused_ln_modulate_backward"
    ]),

    // Reduce
    c("aten_reduce", F::Reduce, CORE, None, Reduce, &[
        "aten::sum", "aten::mean", "aten::max", "aten::min", "aten::norm", "aten::linalg_norm",
        "aten::std", "aten::var", "aten::logsumexp", "aten::cumsum", "aten::cumprod", "aten::amin",
        "aten::amax"
    ]),
];
