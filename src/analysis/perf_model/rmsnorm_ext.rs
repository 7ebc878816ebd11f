//! The RMSNorm ops of aiter and vLLM (the reference's extension `RMSNorm`
//! family, its own sheet): the core RMSNorm model on the op's
//! input tensor, plus the fused residual add, FP8/MXFP4 quantization or
//! padding each op adds.
//!
//! With N input elements, C channels (the weight's length), R = N / C rows
//! and b bytes per input element, the core is
//! `flops = R·(2C + 2) + 2N` (a float, as the reference divides) and
//! `bytes = 2·N·b + C·b`. Every class has params `op_shape, dtype_in_out,
//! stride_input, stride_output, num_channels, has_bias, is_affine,
//! is_training` and no backward model.

use super::pyval::{Num, Rec, bpe_req, dim_at, ipy, len_of, numel, precision, py_int};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};

/// The RMSNorm extension classes: what each adds to the core RMSNorm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// RMSNorm alone, x and the weight at these slots.
    Plain {
        /// Slot of x.
        x: usize,
        /// Slot of the weight.
        w: usize,
    },
    /// `rmsnorm2d_fwd_with_add_ck`: a fused residual add.
    WithAdd,
    /// `rmsnorm2d_fwd_with_dynamicquant_ck`: per-row quantization.
    DynamicQuant,
    /// `aiter::rmsnorm_quant`: group quantization, group size at slot 5.
    Quant,
    /// vLLM's FP8 group quantization.
    Fp8GroupQuant,
    /// vLLM's residual add with FP8 group quantization.
    AddFp8GroupQuant,
    /// vLLM's Triton residual add with padding.
    AddPad,
    /// `fused_rms_mxfp4_quant`.
    Mxfp4Quant,
}

/// An op's input tensor and weight, as its parser finds them.
struct Norm {
    params: Vec<(&'static str, Py)>,
    /// Input elements N.
    n: Num,
    /// Channels C.
    c: Num,
    dtype: String,
}

impl Norm {
    /// Input at slot `x`, weight length at `Input Dims[w][0]`.
    fn parse(r: Rec, x: usize, w: usize) -> ModelResult<Norm> {
        let shape = r.dim(x)?;
        let op_shape = super::pyval::tuple_of(shape)?;
        let dtype = r.ty(x)?.to_string();
        let stride = r.stride(x)?;
        let c = r.dim_int(w, 0)?;
        let params = vec![
            ("op_shape", op_shape),
            (
                "dtype_in_out",
                Py::Tuple(vec![Py::Str(dtype.clone()), Py::None]),
            ),
            ("stride_input", stride),
            ("stride_output", Py::None),
            ("num_channels", ipy(c)),
            ("has_bias", Py::Bool(false)),
            ("is_affine", Py::Bool(true)),
            ("is_training", Py::Bool(false)),
        ];
        Ok(Norm {
            params,
            n: numel(shape)?,
            c: Num::I(c),
            dtype,
        })
    }

    /// The core RMSNorm FLOPs (affine).
    fn core_flops(&self) -> ModelResult<Num> {
        let rows = self.n.div(self.c)?;
        Ok(rows.mul(Num::I(2).mul(self.c).add(2)).add(self.n.mul(2)))
    }

    /// Bytes per input element (unknown sizes raise).
    fn b(&self) -> ModelResult<Num> {
        bpe_req(Some(&self.dtype))
    }

    /// Rows M = N // C.
    fn rows(&self) -> ModelResult<Num> {
        self.n.floor_div(self.c)
    }

    fn eval(self, flops: Num, bytes: Num) -> Evaluation {
        Evaluation {
            precision: precision(Some(&self.dtype)),
            params: self.params,
            flops: flops.f64(),
            bytes: Some(bytes.f64()),
            maf: Some(Maf::Vector),
        }
    }
}

/// Plain RMSNorm: read the input and weight, write the output.
fn plain(p: Norm) -> ModelResult<Evaluation> {
    let f = p.core_flops()?;
    let b = p.b()?;
    let bytes = p.n.mul(b).add(p.n.mul(b)).add(p.c.mul(b));
    Ok(p.eval(f, bytes))
}

/// Residual add + RMSNorm: read input, residual and weight, write output
/// and the new residual.
fn with_add(p: Norm) -> ModelResult<Evaluation> {
    let f = p.n.add(p.core_flops()?);
    let b = p.b()?;
    let bytes = Num::I(2)
        .mul(p.n)
        .mul(b)
        .add(p.c.mul(b))
        .add(Num::I(2).mul(p.n).mul(b));
    Ok(p.eval(f, bytes))
}

/// `ceil(C / group)` quant groups per row (ZeroDivisionError on 0).
fn groups(c: Num, group: i128) -> ModelResult<Num> {
    c.add(group).sub(1).floor_div(group)
}

/// RMSNorm + FP8 quant (per token, or per group of `group` channels):
/// 2 more FLOPs per element; FP8 output and 4-byte scales per row·group.
fn quant(p: Norm, group: Option<i128>) -> ModelResult<Evaluation> {
    let f = p.core_flops()?.add(p.n.mul(2));
    let b = p.b()?;
    let m = p.rows()?;
    let g = match group {
        Some(gs) => groups(p.c, gs)?,
        None => Num::I(1),
    };
    let bytes = p.n.mul(b).add(p.c.mul(b)).add(p.n).add(m.mul(g).mul(4));
    Ok(p.eval(f, bytes))
}

/// Residual add + RMSNorm + per-group FP8 quant.
fn add_quant(p: Norm, group: i128) -> ModelResult<Evaluation> {
    let f = p.core_flops()?.add(p.n.mul(3));
    let b = p.b()?;
    let m = p.rows()?;
    let g = groups(p.c, group)?;
    let bytes =
        p.n.mul(b)
            .add(p.n.mul(b))
            .add(p.c.mul(b))
            .add(p.n)
            .add(p.n.mul(b))
            .add(m.mul(g).mul(4));
    Ok(p.eval(f, bytes))
}

/// Residual add + RMSNorm whose output rows are padded to a multiple of `pad`.
fn add_pad(p: Norm, pad: i128) -> ModelResult<Evaluation> {
    let n_out = if pad > 0 {
        groups(p.c, pad)?.mul(pad)
    } else {
        p.c
    };
    let f = p.n.add(p.core_flops()?);
    let b = p.b()?;
    let m = p.rows()?;
    let bytes = Num::I(2)
        .mul(p.n)
        .mul(b)
        .add(p.c.mul(b))
        .add(m.mul(n_out).mul(b))
        .add(m.mul(p.c).mul(b));
    Ok(p.eval(f, bytes))
}

/// Optional residual add and second RMSNorm of `fused_rms_mxfp4_quant`,
/// read from the ranks of slots 3 (x2) and 6 (res1).
fn mxfp4_quant(r: Rec, p: Norm) -> ModelResult<Evaluation> {
    let dims = r.dims()?;
    let two = |i: usize| -> ModelResult<bool> { Ok(dims.len() > i && len_of(&dims[i])? == 2) };
    let n2 = if two(3)? {
        Some(dim_at(&dims[3], 1)?)
    } else {
        None
    };
    let res1 = two(6)?;
    let m = p.rows()?;
    let core = p.core_flops()?;
    let mut f = core;
    if res1 {
        f = f.add(m.mul(p.c));
    }
    if let Some(n2) = n2 {
        let x2 = m.mul(n2);
        let share = core.mul(x2).div(p.n.f64().max(1.0))?;
        f = f.add(share.f64().trunc());
    }
    f = f.add(p.n.mul(2));
    let b = p.b()?;
    let mut bytes =
        p.n.mul(b)
            .add(p.c.mul(b))
            .add(p.n.mul(0.5))
            .add(p.n.floor_div(32)?);
    if res1 {
        bytes = bytes.add(p.n.mul(b)).add(p.n.mul(b));
    }
    if let Some(n2) = n2 {
        let x2 = m.mul(n2);
        bytes = bytes.add(x2.mul(b)).add(Num::I(n2).mul(b)).add(x2.mul(b));
    }
    Ok(p.eval(f, bytes))
}

/// Evaluates an extension RMSNorm class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    // The padded variant reads its pad before anything else.
    let pad = match kind {
        Kind::AddPad => r.ci_int(4)?,
        _ => 0,
    };
    let (x, w) = match kind {
        Kind::Plain { x, w } => (x, w),
        Kind::WithAdd => (1, 4),
        Kind::DynamicQuant | Kind::Quant => (1, 3),
        Kind::AddFp8GroupQuant => (0, 2),
        Kind::Fp8GroupQuant | Kind::AddPad | Kind::Mxfp4Quant => (0, 1),
    };
    let p = Norm::parse(r, x, w)?;
    let group = match kind {
        Kind::Fp8GroupQuant => r.ci_int(3)?,
        Kind::AddFp8GroupQuant => r.ci_int(4)?,
        // Unparseable or absent: 0, one group per row.
        Kind::Quant => r
            .concrete_or_empty()
            .get(5)
            .and_then(|c| py_int(c).ok())
            .unwrap_or(0),
        _ => 0,
    };
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    match kind {
        Kind::Plain { .. } => plain(p),
        Kind::WithAdd => with_add(p),
        Kind::DynamicQuant => quant(p, None),
        Kind::Quant => {
            let c = match p.c {
                Num::I(c) => c,
                Num::F(_) => 0,
            };
            quant(p, Some(if group > 0 { group } else { c }))
        }
        Kind::Fp8GroupQuant => quant(p, Some(group)),
        Kind::AddFp8GroupQuant => add_quant(p, group),
        Kind::AddPad => add_pad(p, pad),
        Kind::Mxfp4Quant => mxfp4_quant(r, p),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_keys, evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn aiter_rms_norm_core_model() {
        // x (32, 2880) bf16, weight (2880): N 92,160, C 2,880, 32 rows.
        let i = test_input(
            "aiter::rms_norm",
            "[[32, 2880], [2880], [], []]",
            &[BF, BF, "Scalar", "Scalar"],
            Some("[[2880, 1], [1], [], []]"),
            &["", "", "1.0000000000000001e-05", "0"],
        );
        let e = evaluate("aiter_rms_norm", &i, false).unwrap();
        assert_keys(
            &e,
            "op_shape dtype_in_out stride_input stride_output num_channels has_bias is_affine is_training",
        );
        assert_eq!(e.params[1].1.to_str(), "('c10::BFloat16', None)");
        // 32·(2·2880 + 2) + 2·92,160 = 184,384 + 184,320 = 368,704.
        assert_eq!(e.flops, 368_704.0);
        // 2·92,160·2 + 2,880·2 = 374,400.
        assert_eq!(e.bytes, Some(374_400.0));
        assert_eq!(e.compute_spec(), "vector_bf16");
        assert_eq!(
            evaluate("aiter_rms_norm", &i, true),
            Err(ModelError::NotImplemented)
        );
    }

    #[test]
    fn residual_add_variants() {
        // add_rmsnorm (32, 4096): N 131,072, C 4,096.
        let i = test_input(
            "aiter::add_rmsnorm",
            "[[32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096], []]",
            &[BF, BF, BF, BF, BF, "Scalar"],
            Some("[[4096, 1], [4096, 1], [4096, 1], [4096, 1], [1], []]"),
            &["", "", "", "", "", "1e-06"],
        );
        let e = evaluate("aiter_rmsnorm2d_fwd_with_add_ck", &i, false).unwrap();
        // 131,072 + 32·8,194 + 262,144 = 655,424.
        assert_eq!(e.flops, 655_424.0);
        // 4·131,072·2 + 4,096·2 = 1,056,768 (1.0078125 MiB).
        assert_eq!(e.bytes, Some(1_056_768.0));
        // triton add+rmsnorm+pad: x (64, 2880), pad to 256 → 3072 columns.
        let i = test_input(
            "vllm::rocm_aiter_triton_add_rmsnorm_pad",
            "[[64, 2880], [2880], [], [64, 2880], []]",
            &[BF, BF, "Scalar", BF, "Scalar"],
            Some("[[2880, 1], [1], [], [2880, 1], []]"),
            &["", "", "1e-05", "", "256"],
        );
        let e = evaluate("vllm_rocm_aiter_triton_add_rmsnorm_pad", &i, false).unwrap();
        // N 184,320: 184,320 + 64·5,762 + 368,640 = 921,728.
        assert_eq!(e.flops, 921_728.0);
        // 2·184,320·2 + 2,880·2 + 64·3,072·2 + 64·2,880·2
        // = 737,280 + 5,760 + 393,216 + 368,640 = 1,504,896.
        assert_eq!(e.bytes, Some(1_504_896.0));
    }

    #[test]
    fn quantizing_variants() {
        // vLLM rmsnorm + fp8 group quant: x (4, 1536), groups of 128 → 12.
        let i = test_input(
            "vllm::rocm_aiter_rmsnorm_fp8_group_quant",
            "[[4, 1536], [1536], [], []]",
            &[BF, BF, "Scalar", "Scalar"],
            Some("[[1536, 1], [1], [], []]"),
            &["", "", "1e-06", "128"],
        );
        let e = evaluate("vllm_rocm_aiter_rmsnorm_fp8_group_quant", &i, false).unwrap();
        // N 6,144: 4·3,074 + 12,288 + 12,288 = 36,872.
        assert_eq!(e.flops, 36_872.0);
        // 6,144·2 + 1,536·2 + 6,144 + 4·12·4 = 12,288 + 3,072 + 6,144 + 192.
        assert_eq!(e.bytes, Some(21_696.0));
        // With a residual add: 3N extra FLOPs, residual read and written.
        let i = test_input(
            "vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant",
            "[[4, 1536], [4, 1536], [1536], [], []]",
            &[BF, BF, BF, "Scalar", "Scalar"],
            Some("[[1536, 1], [1536, 1], [1], [], []]"),
            &["", "", "", "1e-06", "128"],
        );
        let e = evaluate(
            "vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant",
            &i,
            false,
        )
        .unwrap();
        // core 24,584 + 3·6,144 = 43,016 FLOPs; bytes 3·12,288 + 3,072 +
        // 6,144 + 192.
        assert_eq!(e.flops, 43_016.0);
        assert_eq!(e.bytes, Some(46_272.0));
        // CK dynamic quant: per-token scales (4 rows · 4 B).
        let i = test_input(
            "aiter::rmsnorm2d_fwd_with_dynamicquant_ck",
            "[[4, 1536], [4, 1536], [4, 1], [1536], [], []]",
            &["c10::Float8_e4m3fnuz", BF, "float", BF, "Scalar", "Scalar"],
            Some("[[1536, 1], [1536, 1], [1, 1], [1], [], []]"),
            &["", "", "", "", "1e-06", "0"],
        );
        let e = evaluate("aiter_rmsnorm2d_fwd_with_dynamicquant_ck", &i, false).unwrap();
        assert_eq!(e.flops, 36_872.0);
        // 12,288 + 3,072 + 6,144 + 16 = 21,520.
        assert_eq!(e.bytes, Some(21_520.0));
        // rmsnorm_quant without a group size: one group per row (16 B).
        let e = evaluate("aiter_rmsnorm_quant", &i, false).unwrap();
        assert_eq!(e.bytes, Some(21_520.0));
    }

    #[test]
    fn mxfp4_quant_with_residual_and_second_norm() {
        // x1 (8, 512), w1 (512), eps, x2 (8, 256), w2, eps, res1 (8, 512).
        let i = test_input(
            "aiter::_fuse_rmsnorm_fp4_quant",
            "[[8, 512], [512], [], [8, 256], [256], [], [8, 512]]",
            &[BF, BF, "Scalar", BF, BF, "Scalar", BF],
            Some("[[512, 1], [1], [], [256, 1], [1], [], [512, 1]]"),
            &[],
        );
        let e = evaluate("fused_rms_mxfp4_quant", &i, false).unwrap();
        // N 4,096, 8 rows: core = 8·1,026 + 8,192 = 16,400; + res1 8·512 =
        // 4,096; + int(16,400·2,048/4,096) = 8,200; + 2N = 8,192 → 36,888.
        assert_eq!(e.flops, 36_888.0);
        // 8,192 + 1,024 + 2,048 + 128 (x1, w1, fp4 out, scales)
        // + 16,384 (residual in and out) + 4,096 + 512 + 4,096 (x2, w2, out2).
        assert!(approx(e.bytes.unwrap(), 36_480.0));
    }
}
