//! aiter's manifold-constrained hyper-connection kernels (family `mHC`)
//! and its fused MoE router `topk_softplus` (same base in the reference,
//! family `MoE_aux`).
//!
//! Notation: M tokens, n residual streams of C channels, K = n·C, hc3 =
//! n² + 2n projection rows, split_k partial sums; mixes and partials are
//! fp32 (4 bytes), activations take b = size of the op's activation dtype
//! (bytes unknown when it has none).
//!
//! * `mhc_post`: `flops = 2·M·n·C·(n + 1)`, reads x, residual and mixes,
//!   writes the next residual;
//! * `mhc_pre_gemm_sqrsum`: `flops = 2·M·hc3·K` (a GEMM), reads x and the
//!   fp32 projection, writes partial logits and square sums;
//! * `mhc_pre_big_fuse_rmsnorm`: `flops = 2·M·C·n + 5·M·C`;
//! * `mhc_fused_post_pre_gemm_sqrsum`: post + pre GEMM;
//! * `topk_softplus` over gating logits `(M, E)`: `flops = 6·M·E`.
//!
//! None has a backward model.

use super::pyval::{Num, Rec, bpe, forward_only, ipy, precision};
use super::{Evaluation, Maf, ModelResult, OpInput, Py};

/// The mHC classes (and `topk_softplus`, which the reference models with
/// them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `mhc_post`.
    Post,
    /// `mhc_pre_gemm_sqrsum`.
    PreGemmSqrsum,
    /// `mhc_pre_big_fuse_rmsnorm`.
    PreBigFuseRmsnorm,
    /// `mhc_fused_post_pre_gemm_sqrsum`.
    FusedPostPreGemmSqrsum,
    /// `topk_softplus`.
    TopkSoftplus,
}

/// `types[i] if len(types) > i else bf16`.
fn dtype_at<'a>(r: Rec<'a>, i: usize) -> &'a str {
    r.ty_or(i, "c10::BFloat16")
}

/// Evaluation with bytes from `bytes(b)` when the activation size is known.
fn eval(
    params: Vec<(&'static str, Py)>,
    dtype: &str,
    matrix: bool,
    flops: Num,
    bytes: impl Fn(Num) -> Num,
) -> Evaluation {
    Evaluation {
        params,
        flops: flops.f64(),
        bytes: bpe(Some(dtype)).map(Num::I).map(|b| bytes(b).f64()),
        maf: Some(if matrix { Maf::Matrix } else { Maf::Vector }),
        precision: precision(Some(dtype)),
    }
}

/// The keys `M, n, C`, then `middle`, then `dtype_in`.
fn mhc_params(
    m: i128,
    n: i128,
    c: i128,
    middle: &[(&'static str, Py)],
    dtype: &str,
) -> Vec<(&'static str, Py)> {
    let mut p = vec![("M", ipy(m)), ("n", ipy(n)), ("C", ipy(c))];
    p.extend_from_slice(middle);
    p.push(("dtype_in", Py::Str(dtype.into())));
    p
}

/// `hc3, K, split_k`: the pre-GEMM's own keys.
fn gemm_keys(hc3: i128, k: i128, split: i128) -> [(&'static str, Py); 3] {
    [("hc3", ipy(hc3)), ("K", ipy(k)), ("split_k", ipy(split))]
}

/// `M·n·4 + M·n·n·4`: the fp32 post and residual mixes.
fn mixes(m: Num, n: Num) -> Num {
    m.mul(n).mul(4).add(m.mul(n).mul(n).mul(4))
}

fn post(r: Rec) -> ModelResult<Evaluation> {
    let (m, c, n) = (r.dim_int(1, 0)?, r.dim_int(1, 1)?, r.dim_int(0, 1)?);
    let dtype = dtype_at(r, 1);
    let params = mhc_params(m, n, c, &[("hc3", Py::None)], dtype);
    let (m, n, c) = (Num::I(m), Num::I(n), Num::I(c));
    let flops = Num::I(2).mul(m).mul(n).mul(c).mul(n.add(1));
    Ok(eval(params, dtype, false, flops, |b| {
        let mnc = m.mul(n).mul(c).mul(b);
        m.mul(c).mul(b).add(mnc).add(mixes(m, n)).add(mnc)
    }))
}

fn pre_gemm(r: Rec) -> ModelResult<Evaluation> {
    let (m, n, c) = (r.dim_int(2, 0)?, r.dim_int(2, 1)?, r.dim_int(2, 2)?);
    let (hc3, k, split) = (r.dim_int(3, 0)?, r.dim_int(3, 1)?, r.dim_int(0, 0)?);
    let dtype = dtype_at(r, 2);
    let params = mhc_params(m, n, c, &gemm_keys(hc3, k, split), dtype);
    let (m, hc3, k, split) = (Num::I(m), Num::I(hc3), Num::I(k), Num::I(split));
    let flops = Num::I(2).mul(m).mul(hc3).mul(k);
    Ok(eval(params, dtype, true, flops, |b| {
        m.mul(n)
            .mul(c)
            .mul(b)
            .add(hc3.mul(k).mul(4))
            .add(split.mul(m).mul(hc3).mul(4))
            .add(split.mul(m).mul(4))
    }))
}

fn pre_big_fuse(r: Rec) -> ModelResult<Evaluation> {
    let (m, c, n) = (r.dim_int(2, 0)?, r.dim_int(2, 1)?, r.dim_int(0, 1)?);
    let (hc3, split) = (r.dim_int(6, 0)?, r.dim_int(3, 0)?);
    let dtype = dtype_at(r, 7);
    let middle = [("hc3", ipy(hc3)), ("split_k", ipy(split))];
    let params = mhc_params(m, n, c, &middle, dtype);
    let (m, n, c) = (Num::I(m), Num::I(n), Num::I(c));
    let flops = Num::I(2).mul(m).mul(c).mul(n).add(Num::I(5).mul(m).mul(c));
    Ok(eval(params, dtype, false, flops, |b| {
        m.mul(n)
            .mul(c)
            .mul(b)
            .add(Num::I(split).mul(m).mul(hc3).mul(4))
            .add(c.mul(b))
            .add(m.mul(c).mul(b))
            .add(mixes(m, n))
    }))
}

fn fused_post_pre(r: Rec) -> ModelResult<Evaluation> {
    let (m, c, n) = (r.dim_int(3, 0)?, r.dim_int(3, 1)?, r.dim_int(2, 1)?);
    let (hc3, k, split) = (r.dim_int(7, 0)?, r.dim_int(7, 1)?, r.dim_int(0, 0)?);
    let dtype = dtype_at(r, 3);
    let params = mhc_params(m, n, c, &gemm_keys(hc3, k, split), dtype);
    let (m, n, c, hc3, k, split) = (
        Num::I(m),
        Num::I(n),
        Num::I(c),
        Num::I(hc3),
        Num::I(k),
        Num::I(split),
    );
    let post = Num::I(2).mul(m).mul(n).mul(c).mul(n.add(1));
    let flops = post.add(Num::I(2).mul(m).mul(hc3).mul(k));
    Ok(eval(params, dtype, true, flops, |b| {
        let mnc = m.mul(n).mul(c).mul(b);
        m.mul(c)
            .mul(b)
            .add(mnc)
            .add(mnc)
            .add(mnc)
            .add(mixes(m, n))
            .add(hc3.mul(k).mul(4))
            .add(split.mul(m).mul(hc3).mul(4).add(split.mul(m).mul(4)))
    }))
}

fn topk_softplus(r: Rec) -> ModelResult<Evaluation> {
    let (m, e, topk) = (r.dim_int(2, 0)?, r.dim_int(2, 1)?, r.dim_int(0, 1)?);
    let dtype = dtype_at(r, 2);
    let params = vec![
        ("M", ipy(m)),
        ("n", Py::Int(1)),
        ("C", ipy(e)),
        ("E", ipy(e)),
        ("topk", ipy(topk)),
        ("dtype_in", Py::Str(dtype.into())),
    ];
    let (m, e, topk) = (Num::I(m), Num::I(e), Num::I(topk));
    let flops = Num::I(6).mul(m).mul(e);
    Ok(eval(params, dtype, false, flops, |b| {
        m.mul(e)
            .mul(b)
            .add(e.mul(4))
            .add(m.mul(topk).mul(4))
            .add(m.mul(topk).mul(4))
    }))
}

/// Evaluates an mHC (or `topk_softplus`) class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let e = match kind {
        Kind::Post => post(r)?,
        Kind::PreGemmSqrsum => pre_gemm(r)?,
        Kind::PreBigFuseRmsnorm => pre_big_fuse(r)?,
        Kind::FusedPostPreGemmSqrsum => fused_post_pre(r)?,
        Kind::TopkSoftplus => topk_softplus(r)?,
    };
    forward_only(bwd, e)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    #[test]
    fn post_and_pre() {
        // M 8, n 4, C 16: out (8, 4, 16), x (8, 16), residual, mixes.
        let i = test_input(
            "aiter::mhc_post",
            "[[8, 4, 16], [8, 16], [8, 4, 16], [8, 4, 1], [8, 4, 4], []]",
            &[BF, BF, BF, "float", "float", "Scalar"],
            None,
            &[],
        );
        let e = evaluate("mhc_post", &i, false).unwrap();
        assert_eq!(e.params[3], ("hc3", Py::None));
        // 2·8·4·16·5 = 5,120; bytes 128·2 + 512·2 + 32·4 + 128·4 + 512·2
        // = 256 + 1,024 + 128 + 512 + 1,024 = 2,944.
        assert_eq!((e.flops, e.bytes), (5_120.0, Some(2_944.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
        // pre GEMM: out (2, 8, 24), sqrsum (2, 8), x (8, 4, 16), fn (24, 64).
        let i = test_input(
            "aiter::mhc_pre_gemm_sqrsum",
            "[[2, 8, 24], [2, 8], [8, 4, 16], [24, 64], [], []]",
            &["float", "float", BF, "float", "Scalar", "Scalar"],
            None,
            &[],
        );
        let e = evaluate("mhc_pre_gemm_sqrsum", &i, false).unwrap();
        // 2·8·24·64 = 24,576; 512·2 + 24·64·4 + 2·8·24·4 + 2·8·4
        // = 1,024 + 6,144 + 1,536 + 64 = 8,768.
        assert_eq!((e.flops, e.bytes), (24_576.0, Some(8_768.0)));
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn big_fuse_fused_and_router() {
        // post_mix (8, 4, 1), comb_mix (8, 4, 4), out (8, 16), gemm_out
        // (2, 8, 24), sqrsum (2, 8), hc_scale, hc_base (24,), residual
        // (8, 4, 16) at 7.
        let i = test_input(
            "aiter::mhc_pre_big_fuse_rmsnorm",
            "[[8, 4, 1], [8, 4, 4], [8, 16], [2, 8, 24], [2, 8], [3], [24], [8, 4, 16], [16]]",
            &[
                "float", "float", BF, "float", "float", "float", "float", BF, BF,
            ],
            None,
            &[],
        );
        let e = evaluate("mhc_pre_big_fuse_rmsnorm", &i, false).unwrap();
        // 2·8·16·4 + 5·8·16 = 1,024 + 640; bytes 512·2 + 2·8·24·4 + 16·2
        // + 128·2 + 32·4 + 128·4 = 1,024 + 1,536 + 32 + 256 + 640 = 3,488.
        assert_eq!((e.flops, e.bytes), (1_664.0, Some(3_488.0)));
        let i = test_input(
            "aiter::mhc_fused_post_pre_gemm_sqrsum",
            "[[2, 8, 24], [2, 8], [8, 4, 16], [8, 16], [8, 4, 16], [8, 4, 1], [8, 4, 4], [24, 64]]",
            &["float", "float", BF, BF, BF, "float", "float", "float"],
            None,
            &[],
        );
        let e = evaluate("mhc_fused_post_pre_gemm_sqrsum", &i, false).unwrap();
        // 5,120 + 24,576; bytes 256 + 3·1,024 + 640 + 6,144 + 1,536 + 64.
        assert_eq!((e.flops, e.bytes), (29_696.0, Some(11_712.0)));
        // Router: weights (16, 8), ids (16, 8), logits (16, 256).
        let i = test_input(
            "aiter::topk_softplus",
            "[[16, 8], [16, 8], [16, 256]]",
            &["float", "int", BF],
            None,
            &[],
        );
        let e = evaluate("topk_softplus", &i, false).unwrap();
        // 6·16·256 = 24,576; 4,096·2 + 256·4 + 2·128·4 = 10,240.
        assert_eq!((e.flops, e.bytes), (24_576.0, Some(10_240.0)));
    }
}
