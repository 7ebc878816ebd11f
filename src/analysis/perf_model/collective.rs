//! Custom collectives of aiter, vLLM and SGLang (family
//! `CustomCollective`): only each GPU's own memory traffic is modelled
//! (the inter-GPU bandwidth is not), and none gets a Compute Spec.
//!
//! * all-reduce (`_C_custom_ar`, `sgl_kernel`): read the input, write the
//!   output: `bytes = 2·n·b`, no FLOPs;
//! * reduce-scatter / all-gather: `bytes = (n_in + n_out)·b`, no FLOPs;
//! * fused all-reduce + residual add + RMSNorm (input n elements, C
//!   channels): `flops = n + (n // C)·(2C + 2) + 2n`, `bytes = 4·n·b + C·b`.
//!
//! b is the size of the input's dtype (an unknown size fails). None has a
//! backward model.

use super::pyval::{Num, Rec, bpe_req, forward_only, ipy, numel, tuple_of};
use super::{Evaluation, ModelResult, OpInput, Py};

/// The custom collective classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Fused all-reduce + RMSNorm with x and the weight at these slots.
    AllreduceRmsnorm {
        /// Slot of x.
        x: usize,
        /// Slot of the weight.
        w: usize,
    },
    /// The custom and quick all-reduces.
    AllReduce,
    /// aiter's reduce-scatter and registered all-gather.
    ScatterGather,
    /// `sgl_kernel::reg_all_gather_into_tensor`.
    RegAllGather,
}

fn eval(params: Vec<(&'static str, Py)>, flops: Num, bytes: Num) -> Evaluation {
    Evaluation {
        params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: None,
        precision: None,
    }
}

/// All-reduce + residual add + RMSNorm, input at `x`, weight at `w`.
fn allreduce_rmsnorm(r: Rec, x: usize, w: usize) -> ModelResult<Evaluation> {
    let shape = r.dim(x)?;
    let dtype = r.ty(x)?;
    let stride = r.stride(x)?;
    let c = r.dim_int(w, 0)?;
    let params = vec![
        ("op_shape", tuple_of(shape)?),
        ("dtype_in", Py::Str(dtype.into())),
        ("stride_input", stride),
        ("num_channels", ipy(c)),
    ];
    let n = numel(shape)?;
    let b = bpe_req(Some(dtype));
    let rows = n.floor_div(c)?;
    let flops = n.add(rows.mul(Num::I(2).mul(c).add(2))).add(n.mul(2));
    let b = b?;
    let bytes = Num::I(2)
        .mul(n)
        .mul(b)
        .add(Num::I(c).mul(b))
        .add(Num::I(2).mul(n).mul(b));
    Ok(eval(params, flops, bytes))
}

/// A plain all-reduce: input at slot 1.
fn all_reduce(r: Rec) -> ModelResult<Evaluation> {
    let shape = r.dim(1)?;
    let dtype = r.ty(1)?;
    let params = vec![
        ("op_shape", tuple_of(shape)?),
        ("dtype_in", Py::Str(dtype.into())),
        ("stride_input", r.stride(1)?),
    ];
    let bytes = Num::I(2).mul(numel(shape)?).mul(bpe_req(Some(dtype))?);
    Ok(eval(params, Num::I(0), bytes))
}

/// Reduce-scatter / all-gather with input at 1 and output at 2.
fn scatter_gather(r: Rec) -> ModelResult<Evaluation> {
    let (inp, out) = (r.dim(1)?, r.dim(2)?);
    let dtype = r.ty(1)?;
    let params = vec![
        ("op_shape", tuple_of(inp)?),
        ("out_shape", tuple_of(out)?),
        ("dtype_in", Py::Str(dtype.into())),
        ("stride_input", r.stride(1)?),
    ];
    let bytes = numel(inp)?.add(numel(out)?).mul(bpe_req(Some(dtype))?);
    Ok(eval(params, Num::I(0), bytes))
}

/// SGLang's registered all-gather: output at 0, this rank's shard at 1.
fn reg_all_gather(r: Rec) -> ModelResult<Evaluation> {
    let (out, inp) = (r.dim(0)?, r.dim(1)?);
    let dtype = r.ty(0)?;
    let params = vec![
        ("out_shape", tuple_of(out)?),
        ("op_shape", tuple_of(inp)?),
        ("dtype_in", Py::Str(dtype.into())),
    ];
    let bytes = numel(inp)?.add(numel(out)?).mul(bpe_req(Some(dtype))?);
    Ok(eval(params, Num::I(0), bytes))
}

/// Evaluates a custom collective class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let e = match kind {
        Kind::AllreduceRmsnorm { x, w } => allreduce_rmsnorm(r, x, w)?,
        Kind::AllReduce => all_reduce(r)?,
        Kind::ScatterGather => scatter_gather(r)?,
        Kind::RegAllGather => reg_all_gather(r)?,
    };
    forward_only(bwd, e)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};

    const BF: &str = "c10::BFloat16";

    #[test]
    fn fused_allreduce_rmsnorm() {
        // Python-op layout: inp (64, 7168), res_inp, w (7168).
        let i = test_input(
            "aiter::fused_allreduce_rmsnorm_",
            "[[64, 7168], [64, 7168], [7168], [], [], [], []]",
            &[BF, BF, BF, "Scalar", "", "Scalar", "Scalar"],
            Some("[[7168, 1], [7168, 1], [1], [], [], [], []]"),
            &[],
        );
        let e = evaluate("aiter_fused_allreduce_rmsnorm_", &i, false).unwrap();
        // n 458,752: 458,752 + 64·14,338 + 917,504 = 2,293,888.
        assert_eq!(e.flops, 2_293_888.0);
        // 4·458,752·2 + 7,168·2 = 3,684,352.
        assert_eq!(e.bytes, Some(3_684_352.0));
        assert_eq!(e.compute_spec(), "");
    }

    #[test]
    fn plain_collectives() {
        let i = test_input(
            "_C_custom_ar::all_reduce",
            "[[], [4, 7168], [4, 7168], [], []]",
            &["Scalar", BF, BF, "Scalar", "Scalar"],
            Some("[[], [7168, 1], [7168, 1], [], []]"),
            &[],
        );
        // 2·28,672·2 = 114,688 bytes, no FLOPs.
        let e = evaluate("custom_ar_all_reduce", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (0.0, Some(114_688.0)));
        // Reduce-scatter of (8, 7168) into (4, 7168) shards: (57,344 + 28,672)·2.
        let i = test_input(
            "aiter::reduce_scatter",
            "[[], [8, 7168], [4, 7168]]",
            &["Scalar", BF, BF],
            Some("[[], [7168, 1], [7168, 1]]"),
            &[],
        );
        let e = evaluate("aiter_reduce_scatter", &i, false).unwrap();
        assert_eq!(e.bytes, Some(172_032.0));
        // SGLang all-gather: out (256, 16), shard (32, 16): (512 + 4,096)·2.
        let i = test_input(
            "sglang::reg_all_gather_into_tensor",
            "[[256, 16], [32, 16], []]",
            &[BF, BF, "Scalar"],
            None,
            &[],
        );
        let e = evaluate("sgl_kernel_reg_all_gather_into_tensor", &i, false).unwrap();
        assert_eq!(e.bytes, Some(9_216.0));
        assert!(evaluate("sgl_kernel_reg_all_gather_into_tensor", &i, true).is_err());
    }
}
