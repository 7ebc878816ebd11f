//! Activation quantization ops (the reference's `GroupQuant` category):
//! aiter's per-token/per-group scaled quant and vLLM's Triton per-token-group
//! FP8 quant (on the BinaryElementwise sheet), and the MXFP4 quant kernels
//! (their own `GroupQuant` sheet).
//!
//! * `per_group_quant` (out at slot 0, input 1, scales 2):
//!   `flops = 2.59375·numel(out)`, `bytes = Σ numel(shape)·bpe` of the three;
//! * vLLM FP8 group quant of x `(M, N)` in groups of g (Concrete Inputs\[1\],
//!   128 by default): `flops = 6·M·N`, `bytes = M·N·(b_x + 1) +
//!   4·M·ceil(N/g)`;
//! * MXFP4 quant of n elements: `flops = 2·n`, `bytes = n·b + n/2 + n // 32`
//!   (packed FP4 out, one E8M0 scale per 32).
//!
//! None has a backward model.

use super::pyval::{Num, Rec, bpe, bpe_req, forward_only, ipy, numel, precision, py_int, tuple_of};
use super::{Evaluation, Maf, ModelResult, OpInput, Py};

/// The group quantization classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `per_group_quant`.
    PerGroup,
    /// vLLM's Triton per-token-group FP8 quantization.
    VllmFp8,
    /// The MXFP4 quantizations: input at `slot`, strides recorded or not.
    Mxfp4 {
        /// Slot of the input tensor.
        slot: usize,
        /// The parameters record the input strides.
        strides: bool,
    },
}

const FP8: &str = "c10::float8_e4m3fn";

fn str_tuple(items: &[Option<&str>]) -> Py {
    Py::Tuple(items.iter().map(|s| Py::opt_str(*s)).collect())
}

/// aiter's dynamic per-token / per-group / per-tensor quant.
fn per_group(r: Rec) -> ModelResult<Evaluation> {
    let (out, x, scales) = (r.dim(0)?, r.dim(1)?, r.dim(2)?);
    let (d_out, d_x, d_s) = (r.ty(0)?, r.ty(1)?, r.ty(2)?);
    let (s_out, s_x, s_s) = (r.stride(0)?, r.stride(1)?, r.stride(2)?);
    let params = vec![
        ("shape_in1", tuple_of(x)?),
        ("shape_in2", tuple_of(scales)?),
        ("shape_out", tuple_of(out)?),
        (
            "dtype_in1_in2_out",
            str_tuple(&[Some(d_x), Some(d_s), Some(d_out)]),
        ),
        ("stride_input1", s_x),
        ("stride_input2", s_s),
        ("stride_output", s_out),
    ];
    let n_out = numel(out)?;
    let bytes = n_out
        .mul(bpe_req(Some(d_out))?)
        .add(numel(x)?.mul(bpe_req(Some(d_x))?))
        .add(numel(scales)?.mul(bpe_req(Some(d_s))?));
    Ok(Evaluation {
        params,
        flops: n_out.mul(2.59375).f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Vector),
        precision: precision(Some(d_x)),
    })
}

/// `vllm::triton_per_token_group_quant_fp8`.
fn vllm_fp8(r: Rec) -> ModelResult<Evaluation> {
    let dims = r.dims_or_empty();
    let x = dims.first();
    let shape = match x {
        Some(v) => super::pyval::ints(v)?,
        None => Vec::new(),
    };
    let (m, n) = match shape[..] {
        [a, b, ..] => (a, b),
        [a] => (1, a),
        [] => (1, 1),
    };
    let mut group = 128;
    if let Some(raw) = r.concrete_or_empty().get(1).map(|s| s.trim())
        && !raw.is_empty()
        && raw.to_lowercase() != "none"
        && let Ok(g) = py_int(raw)
    {
        group = g;
    }
    let groups = Num::I(n).add(group).sub(1).floor_div(group)?;
    let groups = if groups.f64() < 1.0 {
        Num::I(1)
    } else {
        groups
    };
    let dtype = r.types_or_empty().first().map_or("", String::as_str);
    let shape_x = match x {
        Some(v) => tuple_of(v)?,
        None => Py::Tuple(Vec::new()),
    };
    let params = vec![
        ("M", ipy(m)),
        ("N", ipy(n)),
        ("group_size", ipy(group)),
        ("num_groups", groups.to_py()),
        ("shape_x", shape_x.clone()),
        ("dtype_x", Py::Str(dtype.into())),
        ("shape_in1", shape_x.clone()),
        ("shape_in2", Py::Tuple(Vec::new())),
        ("shape_out", shape_x),
        (
            "dtype_in1_in2_out",
            str_tuple(&[Some(dtype), None, Some(FP8)]),
        ),
        ("stride_input1", Py::None),
        ("stride_input2", Py::None),
        ("stride_output", Py::None),
    ];
    let mn = Num::I(m).mul(n);
    let bytes = bpe(Some(dtype))
        .map(Num::I)
        .map(|b| mn.mul(b).add(mn).add(Num::I(m).mul(groups).mul(4)));
    Ok(Evaluation {
        params,
        flops: Num::I(6).mul(mn).f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype)),
    })
}

/// The MXFP4 quant kernels: the input tensor at `slot`; `strides` says
/// whether the class records its input strides.
fn mxfp4(r: Rec, slot: usize, strides: bool) -> ModelResult<Evaluation> {
    let x = r.dim(slot)?;
    let op_shape = tuple_of(x)?;
    let dtype = r.ty(slot)?;
    let stride = if strides { r.stride(slot)? } else { Py::None };
    let params = vec![
        ("op_shape", op_shape),
        ("dtype_in_out", str_tuple(&[Some(dtype), Some(dtype)])),
        ("stride_input", stride),
        ("stride_output", Py::None),
    ];
    let n = numel(x)?;
    let bytes = bpe(Some(dtype))
        .map(Num::I)
        .map(|b| n.mul(b).add(n.mul(0.5)).add(n.floor_div(32).unwrap_or(n)));
    Ok(Evaluation {
        params,
        flops: Num::I(2).mul(n).f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype)),
    })
}

/// Evaluates a quantization class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let e = match kind {
        Kind::PerGroup => per_group(r)?,
        Kind::VllmFp8 => vllm_fp8(r)?,
        Kind::Mxfp4 { slot, strides } => mxfp4(r, slot, strides)?,
    };
    forward_only(bwd, e)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";
    const F8: &str = "c10::Float8_e4m3fnuz";

    #[test]
    fn aiter_per_token_quant() {
        // out (32, 7168) fp8, input (32, 7168) bf16, scales (32, 1) fp32.
        let i = test_input(
            "aiter::dynamic_per_token_scaled_quant",
            "[[32, 7168], [32, 7168], [32, 1], [], [], [], []]",
            &[F8, BF, "float", "", "Scalar", "", "Scalar"],
            Some("[[7168, 1], [7168, 1], [1, 1], [], [], [], []]"),
            &[],
        );
        let e = evaluate("per_group_quant", &i, false).unwrap();
        assert_eq!(
            e.params[3].1.to_str(),
            "('c10::BFloat16', 'float', 'c10::Float8_e4m3fnuz')"
        );
        // 229,376 elements · 2.59375 = 594,944.
        assert_eq!(e.flops, 594_944.0);
        // 229,376·1 + 229,376·2 + 32·4 = 688,256.
        assert_eq!(e.bytes, Some(688_256.0));
        assert_eq!(e.compute_spec(), "vector_bf16");
    }

    #[test]
    fn vllm_fp8_group_quant() {
        // x (16, 1000), group 128 → ceil(1000/128) = 8 groups.
        let i = test_input(
            "vllm::triton_per_token_group_quant_fp8",
            "[[16, 1000], []]",
            &[BF, "Scalar"],
            None,
            &["", "128"],
        );
        let e = evaluate("vllm_triton_per_token_group_quant_fp8", &i, false).unwrap();
        assert_eq!(e.params[3], ("num_groups", Py::Int(8)));
        assert_eq!(
            e.params[9].1.to_str(),
            "('c10::BFloat16', None, 'c10::float8_e4m3fn')"
        );
        // 6·16,000 = 96,000; 16,000·2 + 16,000 + 16·8·4 = 48,512.
        assert_eq!((e.flops, e.bytes), (96_000.0, Some(48_512.0)));
    }

    #[test]
    fn mxfp4_quants() {
        // x (4, 8, 96) bf16: n = 3,072. bytes 6,144 + 1,536 + 96 = 7,776.
        let i = test_input(
            "sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant",
            "[[4, 8, 96]]",
            &[BF],
            Some("[[768, 96, 1]]"),
            &[],
        );
        let e = evaluate("fused_flatten_mxfp4_quant", &i, false).unwrap();
        assert_eq!(e.params[2].1.to_str(), "(768, 96, 1)");
        assert_eq!((e.flops, e.bytes), (6_144.0, Some(7_776.0)));
        // The fused sort variant reads its bf16 input at slot 2.
        let i = test_input(
            "aiter::fused_dynamic_mxfp4_quant_moe_sort_hip",
            "[[32, 48], [64, 3], [32, 96], [100], [1]]",
            &["unsigned char", "unsigned char", BF, "int", "int"],
            None,
            &[],
        );
        let e = evaluate("aiter_fused_dynamic_mxfp4_quant_moe_sort_hip", &i, false).unwrap();
        // n 3,072 again; no strides recorded.
        assert_eq!(e.params[2].1, Py::None);
        assert_eq!(e.bytes, Some(7_776.0));
        assert!(evaluate("fused_dynamic_mx_quant_moe_sort_hip", &i, false).is_err());
    }
}
