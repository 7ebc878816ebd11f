//! MoE routing helpers (family `MoE_aux`: aiter's biased grouped top-k and
//! token sort kernels, SGLang's shared-expert append) and the all-to-all
//! token exchange of expert parallelism (family `MoE_comm`:
//! `MoEDispatch`/`MoECombine`).
//!
//! * top-k and sort: the operands are the recorded integer shapes;
//!   `flops = max prod(shape)` (one per element of the largest),
//!   `bytes = Σ prod(shape)·bpe` over operands with a known size (unknown
//!   when the sum is 0); precision from the largest operand;
//! * shared-expert append over ids and weights `(M, topk)`:
//!   `flops = prod(ids)`, `bytes = 2·(n_ids·b_ids + n_wts·b_wts)` (4 bytes
//!   for an unknown size);
//! * dispatch/combine of `(tokens, hidden)`: no FLOPs,
//!   `bytes = tokens·hidden·b`, no Compute Spec; the backward is the
//!   forward.

use super::pyval::{Num, Rec, bpe, int_of, invalid, ipy, precision, prod, tuple_of};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Py};
use crate::trace::ArgValue;

/// The MoE routing and communication classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `BiasedGroupedTopk`.
    BiasedGroupedTopk,
    /// `MoeSortScatterGather`.
    SortScatterGather,
    /// `sglang_fused_append_shared_experts`.
    AppendShared,
    /// `moe_dispatch`, `moe_combine`.
    Comm,
}

/// The operands with an all-int non-empty shape, with their dtypes.
fn operands(r: Rec, dims: &[ArgValue]) -> ModelResult<Vec<(Vec<i128>, Option<String>)>> {
    let types = r.types_or_empty();
    let mut out = Vec::new();
    for (i, shape) in dims.iter().enumerate() {
        if !super::pyval::truthy(shape) {
            continue;
        }
        let Some(items) = shape.as_list() else {
            return invalid(format!("{shape} is not iterable"));
        };
        if items
            .iter()
            .all(|d| matches!(d, ArgValue::Int(_) | ArgValue::UInt(_) | ArgValue::Bool(_)))
        {
            let ints = items.iter().map(int_of).collect::<ModelResult<Vec<_>>>()?;
            out.push((ints, types.get(i).cloned()));
        }
    }
    Ok(out)
}

/// aiter's top-k routing and MoE sort kernels.
fn routing(r: Rec, dims: &[ArgValue], bwd: bool) -> ModelResult<Evaluation> {
    let ops = operands(r, dims)?;
    let params = vec![(
        "operands",
        Py::List(
            ops.iter()
                .map(|(s, d)| {
                    let shape = Py::Tuple(s.iter().map(|x| ipy(*x)).collect());
                    Py::Tuple(vec![shape, Py::opt_str(d.as_deref())])
                })
                .collect(),
        ),
    )];
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    // The first operand of the largest size.
    let largest = ops
        .iter()
        .fold(None::<(f64, &Option<String>)>, |best, (s, d)| {
            let n = prod(s).f64();
            match best {
                Some((m, _)) if m >= n => best,
                _ => Some((n, d)),
            }
        });
    let total = ops.iter().fold(Num::I(0), |acc, (s, d)| {
        match bpe(d.as_deref()).map(Num::I) {
            Some(b) => acc.add(prod(s).mul(b)),
            None => acc,
        }
    });
    Ok(Evaluation {
        params,
        flops: largest.map_or(0.0, |(n, _)| n),
        bytes: (total.f64() > 0.0).then(|| total.f64()),
        maf: Some(Maf::Vector),
        precision: largest.and_then(|(_, d)| precision(d.as_deref())),
    })
}

/// The broadcast shape of two shapes (ValueError when incompatible).
fn broadcast(a: &[i128], b: &[i128]) -> ModelResult<()> {
    let n = a.len().max(b.len());
    let at = |s: &[i128], i: usize| {
        if i + s.len() < n {
            1
        } else {
            s[i + s.len() - n]
        }
    };
    for i in 0..n {
        let (x, y) = (at(a, i), at(b, i));
        if x != y && x != 1 && y != 1 {
            return invalid("shapes not broadcastable");
        }
    }
    Ok(())
}

/// SGLang's `fused_append_shared_experts`: ids at 0, weights at 1.
fn append_shared(r: Rec, bwd: bool) -> ModelResult<Evaluation> {
    let dims = r.dims()?;
    let types = r.types()?;
    let ids = r.dim(0)?;
    let wts = match dims.get(1) {
        Some(w) if super::pyval::truthy(w) => w,
        _ => ids,
    };
    let d_ids = types.first().map_or("int", String::as_str);
    let d_wts = types.get(1).map_or("float", String::as_str);
    let params = vec![
        ("shape_in1", tuple_of(ids)?),
        ("shape_in2", tuple_of(wts)?),
        (
            "dtype_in1_in2_out",
            Py::Tuple(
                [d_ids, d_wts, d_wts]
                    .iter()
                    .map(|s| Py::Str(s.to_string()))
                    .collect(),
            ),
        ),
        ("stride_input1", Py::None),
        ("stride_input2", Py::None),
        ("stride_output", Py::None),
    ];
    let (si, sw) = (super::pyval::ints(ids)?, super::pyval::ints(wts)?);
    broadcast(&si, &sw)?;
    if bwd {
        return invalid("fused_append_shared_experts has no backward model");
    }
    let (ni, nw) = (prod(&si), prod(&sw));
    let (bi, bw) = (
        bpe(Some(d_ids)).map(Num::I).unwrap_or(Num::I(4)),
        bpe(Some(d_wts)).map(Num::I).unwrap_or(Num::I(4)),
    );
    Ok(Evaluation {
        params,
        flops: ni.f64(),
        bytes: Some(Num::I(2).mul(ni.mul(bi).add(nw.mul(bw))).f64()),
        maf: Some(Maf::Vector),
        precision: precision(Some(d_wts)),
    })
}

/// `MoEDispatch` / `MoECombine`: tokens and hidden size of slot 0.
fn moe_comm(r: Rec) -> ModelResult<Evaluation> {
    let tok = r.dims_or_empty().first();
    let len = match tok {
        Some(t) => super::pyval::len_of(t)?,
        None => 0,
    };
    let get = |i: usize| -> ModelResult<Option<i128>> {
        match tok {
            Some(t) if len > i => super::pyval::dim_at(t, i as isize).map(Some),
            _ => Ok(None),
        }
    };
    let (tokens, hidden) = (get(0)?, get(1)?);
    let dtype = r.types_or_empty().first().map_or("", String::as_str);
    let b = if dtype.is_empty() {
        None
    } else {
        bpe(Some(dtype)).map(Num::I)
    };
    let opt = |v: Option<i128>| v.map_or(Py::None, ipy);
    let params = vec![
        ("num_tokens", opt(tokens)),
        ("hidden_dim", opt(hidden)),
        ("bpe", b.map_or(Py::None, Num::to_py)),
    ];
    let bytes = match (tokens, hidden, b) {
        (Some(t), Some(h), Some(b)) => Some(Num::I(t).mul(h).mul(b).f64()),
        _ => None,
    };
    Ok(Evaluation {
        params,
        flops: 0.0,
        bytes,
        maf: None,
        precision: None,
    })
}

/// Evaluates an MoE routing or communication class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    match kind {
        Kind::BiasedGroupedTopk => routing(r, r.dims()?, bwd),
        Kind::SortScatterGather => routing(r, r.dims_or_empty(), bwd),
        Kind::AppendShared => append_shared(r, bwd),
        // Same numbers forward and backward.
        Kind::Comm => moe_comm(r),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    #[test]
    fn routing_kernels() {
        // logits (32, 256), bias (256), weights (32, 8) fp32, ids (32, 8) int.
        let i = test_input(
            "aiter::biased_grouped_topk_hip",
            "[[32, 256], [256], [32, 8], [32, 8], [], []]",
            &[BF, BF, "float", "int", "Scalar", "Scalar"],
            None,
            &[],
        );
        let e = evaluate("BiasedGroupedTopk", &i, false).unwrap();
        assert_eq!(
            e.params[0].1.to_str(),
            "[((32, 256), 'c10::BFloat16'), ((256,), 'c10::BFloat16'), ((32, 8), 'float'), ((32, 8), 'int')]"
        );
        // max(8,192, 256, 256, 256) FLOPs; 8,192·2 + 256·2 + 256·4 + 256·4.
        assert_eq!((e.flops, e.bytes), (8_192.0, Some(18_944.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
        assert_eq!(
            evaluate("BiasedGroupedTopk", &i, true),
            Err(ModelError::NotImplemented)
        );
        // No sized operand: bytes unknown.
        let i = test_input(
            "aiter::moe_sorting_fwd",
            "[[4, 2], [[1], [2]]]",
            &["short int", "int"],
            None,
            &[],
        );
        let e = evaluate("MoeSortScatterGather", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (8.0, None));
    }

    #[test]
    fn shared_expert_append_and_all_to_all() {
        // ids (16, 9) int, weights (16, 9) fp32: 144 FLOPs,
        // 2·(144·4 + 144·4) = 2,304 bytes.
        let i = test_input(
            "sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts",
            "[[16, 9], [16, 9], [], []]",
            &["int", "float", "Scalar", "Scalar"],
            None,
            &[],
        );
        let e = evaluate("sglang_fused_append_shared_experts", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (144.0, Some(2_304.0)));
        assert_eq!(e.compute_spec(), "vector_fp32");
        // Dispatch of (128, 4096) bf16: 1 MiB, no FLOPs, no Compute Spec.
        let i = test_input(
            "MoEDispatch",
            "[[128, 4096], [128, 8]]",
            &[BF, "long int"],
            None,
            &[],
        );
        let e = evaluate("moe_dispatch", &i, false).unwrap();
        assert_eq!(e.params[2], ("bpe", Py::Int(2)));
        assert_eq!((e.flops, e.bytes), (0.0, Some(1_048_576.0)));
        assert_eq!(e.compute_spec(), "");
        assert_eq!(
            evaluate("moe_combine", &i, true),
            evaluate("moe_combine", &i, false)
        );
    }
}
