//! Rotary position embeddings: TransformerEngine's `FusedRoPEFunc`, aiter's
//! and SGLang's Q/K RoPE kernels (sheet family `RoPE`) and the MLA kernels
//! that fuse RoPE with the KV-cache write (family `FusedRoPE`).
//!
//! A rotated pair costs 6 FLOPs, so rotating E elements costs 3·E; plain
//! RoPE reads and writes them once (2·E·b bytes, b the element size of
//! `Input type[0]`, 2 when unknown). The MLA kernels rotate only the `pe`
//! slices and move Q, K and the written cache rows. None has a backward
//! model.

use super::pyval::{Num, Rec, bpe, dim_at, ipy, numel, precision, tuple_of, unpack};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Precision, Py, precision_of};

/// The RoPE classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `fused_rope_fwd`.
    Fused,
    /// `aiter::rope_cached_positions_2c_fwd_impl`.
    CachedPositions2c,
    /// `sgl_kernel::rotary_embedding`.
    SglRotary,
    /// The fused QK RoPE + MLA cache writes; `concat` for the concat variant.
    MlaCache {
        /// The concat-and-cache variant.
        concat: bool,
    },
}

/// 3 FLOPs and 2·b bytes per rotated element.
fn rotate(params: Vec<(&'static str, Py)>, n: Num, b: Num, p: Option<Precision>) -> Evaluation {
    Evaluation {
        params,
        flops: Num::I(3).mul(n).f64(),
        bytes: Some(Num::I(2).mul(n).mul(b).f64()),
        maf: Some(Maf::Vector),
        precision: p,
    }
}

/// `FusedRoPEFunc`: t = (seq_len, batch, heads, head_dim).
fn fused_rope(r: Rec) -> ModelResult<Evaluation> {
    let t = r.dim(0)?;
    let params = vec![
        ("seq_len", ipy(dim_at(t, 0)?)),
        ("batch", ipy(dim_at(t, 1)?)),
        ("heads", ipy(dim_at(t, 2)?)),
        ("head_dim", ipy(dim_at(t, 3)?)),
        ("num_elements", numel(t)?.to_py()),
    ];
    let n = numel(t)?;
    Ok(rotate(params, n, r.first_bpe(), r.first_precision()))
}

/// `aiter::rope_cached_positions_2c_fwd_impl`: inputs x and y at slots 2, 3.
fn cached_positions_2c(r: Rec) -> ModelResult<Evaluation> {
    let (x, y) = (r.dim(2)?, r.dim(3)?);
    let n = numel(x)?.add(numel(y)?);
    let params = vec![
        ("x_shape", tuple_of(x)?),
        ("y_shape", tuple_of(y)?),
        ("num_elements", n.to_py()),
    ];
    Ok(rotate(params, n, r.first_bpe(), r.first_precision()))
}

/// `sgl_kernel::rotary_embedding`: query and key `(tokens, heads·head)` at
/// slots 1 and 2, the head size at Concrete Inputs[3] (else the query's
/// last dim), the rotated width from the cos/sin cache at slot 4; bytes at
/// the query's element size.
fn sgl_rotary(r: Rec) -> ModelResult<Evaluation> {
    let (q, k) = (r.dim(1)?, r.dim(2)?);
    tuple_of(q)?;
    tuple_of(k)?;
    let mut head = dim_at(q, -1)?;
    if let Some(c) = r.concrete_or_empty().get(3)
        && !c.trim().is_empty()
    {
        head = super::pyval::py_int(c)?;
    }
    let dims = r.dims()?;
    let mut rot = head;
    if dims.len() > 4 && super::pyval::len_of(&dims[4])? > 1 {
        rot = dim_at(&dims[4], 1)?;
    }
    let nq = Num::I(dim_at(q, 1)?).floor_div(head)?;
    let nk = Num::I(dim_at(k, 1)?).floor_div(head)?;
    let n = Num::I(dim_at(q, 0)?).mul(nq.add(nk)).mul(rot);
    let qdtype = r.ty(1)?;
    let b = bpe(Some(qdtype)).map(Num::I).unwrap_or(Num::I(2));
    Ok(rotate(
        vec![("num_elements", n.to_py())],
        n,
        b,
        precision(Some(qdtype)),
    ))
}

/// The MLA RoPE + KV-cache write kernels: `(T, QH, D_lora)` q_nope,
/// `(…, D_pe)` q_pe, KH key heads; `concat` is the per-head variant with a
/// single latent KV head and an FP8 output dtype at slot 5.
fn mla_rope_cache(r: Rec, concat: bool) -> ModelResult<Evaluation> {
    let types = r.types()?;
    let [t, qh, d_lora] = unpack::<3>(r.dim(0)?)?;
    let d_pe = r.dim_int(1, 2)?;
    let kh = if concat { 1 } else { r.dim_int(2, 1)? };
    let dtype_in = r.ty(0)?;
    let slot = |i: usize| {
        types
            .get(i)
            .filter(|t| !t.is_empty())
            .map_or(dtype_in, |t| t)
    };
    let (dtype_kv, dtype_out) = (slot(4), slot(5));
    let mut params = vec![
        ("T", ipy(t)),
        ("QH", ipy(qh)),
        ("KH", ipy(kh)),
        ("D_lora", ipy(d_lora)),
        ("D_pe", ipy(d_pe)),
        ("dtype_in", Py::Str(dtype_in.to_string())),
        ("dtype_kv", Py::Str(dtype_kv.to_string())),
    ];
    if concat {
        params.push(("dtype_out", Py::Str(dtype_out.to_string())));
    }
    let (t, qh, kh) = (Num::I(t), Num::I(qh), Num::I(kh));
    let flops = Num::I(3).mul(t.mul(qh).mul(d_pe).add(t.mul(kh).mul(d_pe)));
    let bytes = bpe(Some(dtype_in)).map(Num::I).map(|b_in| {
        let b_out = if concat {
            bpe(Some(dtype_out)).map(Num::I).unwrap_or(b_in)
        } else {
            b_in
        };
        let b_kv = bpe(Some(dtype_kv)).map(Num::I).unwrap_or(b_in);
        let width = d_lora + d_pe;
        let read_q = t.mul(qh).mul(d_lora).add(t.mul(qh).mul(d_pe)).mul(b_in);
        let read_k = t.mul(kh).mul(d_lora).add(t.mul(kh).mul(d_pe)).mul(b_in);
        let write_q = t.mul(qh).mul(width).mul(b_out);
        read_q
            .add(read_k)
            .add(write_q)
            .add(t.mul(kh).mul(width).mul(b_kv))
    });
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: bytes.map(Num::f64),
        maf: Some(Maf::Vector),
        precision: precision_of(Some(dtype_in)),
    })
}

/// Evaluates a RoPE class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let e = match kind {
        Kind::Fused => fused_rope(r)?,
        Kind::CachedPositions2c => cached_positions_2c(r)?,
        Kind::SglRotary => sgl_rotary(r)?,
        Kind::MlaCache { concat } => mla_rope_cache(r, concat)?,
    };
    if bwd {
        return Err(ModelError::Invalid("RoPE models have no backward".into()));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";

    #[test]
    fn transformer_engine_rope() {
        // t (128, 2, 16, 64) bf16: 262,144 elements.
        let i = test_input(
            "FusedRoPEFunc",
            "[[128, 2, 16, 64], [128, 1, 1, 64]]",
            &[BF, "float"],
            None,
            &[],
        );
        let e = evaluate("fused_rope_fwd", &i, false).unwrap();
        assert_eq!(e.params[4].1, Py::Int(262_144));
        // 3·262,144 FLOPs; 2·262,144·2 bytes.
        assert_eq!((e.flops, e.bytes), (786_432.0, Some(1_048_576.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
        assert!(evaluate("fused_rope_fwd", &i, true).is_err());
    }

    #[test]
    fn sglang_rotary_embedding() {
        // positions (32), q (32, 4096), k (32, 1024), head 128, cache (41216,
        // 128): (32 + 8) heads · 32 tokens · 128 = 163,840 elements.
        let i = test_input(
            "sgl_kernel::rotary_embedding",
            "[[32], [32, 4096], [32, 1024], [], [41216, 128], []]",
            &["long int", BF, BF, "Scalar", BF, "Scalar"],
            None,
            &["", "", "", "128", "", "True"],
        );
        let e = evaluate("sgl_kernel_rotary_embedding", &i, false).unwrap();
        assert_eq!(e.params, vec![("num_elements", Py::Int(163_840))]);
        // 491,520 FLOPs; 2·163,840·2 = 655,360 bytes (0.625 MiB) at q's bf16.
        assert_eq!((e.flops, e.bytes), (491_520.0, Some(655_360.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
    }

    #[test]
    fn two_channel_cached_rope() {
        // x (1, 16, 8, 128), y (1, 16, 2, 128): 16,384 + 4,096 elements,
        // element size from Input type[0] (fp32 output here: 4 bytes).
        let i = test_input(
            "aiter::rope_cached_positions_2c_fwd_impl",
            "[[1, 16, 8, 128], [1, 16, 2, 128], [1, 16, 8, 128], [1, 16, 2, 128], [4096, 1, 1, 64], [4096, 1, 1, 64], [1, 16]]",
            &["float", "float", BF, BF, BF, BF, "long int"],
            None,
            &[],
        );
        let e = evaluate("aiter_rope_cached_positions_2c_fwd_impl", &i, false).unwrap();
        assert_eq!(e.params[0].1.to_str(), "(1, 16, 8, 128)");
        assert_eq!((e.flops, e.bytes), (61_440.0, Some(163_840.0)));
        assert_eq!(e.compute_spec(), "vector_fp32");
    }

    #[test]
    fn mla_rope_and_cache_write() {
        // T 4, QH 16, D_lora 512, D_pe 64, KH 1 (k_nope (4, 1, 512)), fp8 cache.
        let i = test_input(
            "aiter::fused_qk_rope_cat_and_cache_mla",
            "[[4, 16, 512], [4, 16, 64], [4, 1, 512], [4, 1, 64], [100, 1, 576]]",
            &[BF, BF, BF, BF, "c10::Float8_e4m3fnuz"],
            None,
            &[],
        );
        let e = evaluate("aiter_fused_qk_rope_cat_and_cache_mla", &i, false).unwrap();
        assert_eq!(e.params.len(), 7);
        // 3·(4·16·64 + 4·1·64) = 3·4,352 = 13,056.
        assert_eq!(e.flops, 13_056.0);
        // read q 4·16·576·2 = 73,728; read k 4·576·2 = 4,608; write q
        // 73,728; write kv 4·576·1 = 2,304. Total 154,368.
        assert_eq!(e.bytes, Some(154_368.0));
        // The per-head concat variant: 2-D kv_c/k_pe (KH 1) and an fp8 q_out.
        let i = test_input(
            "aiter::fused_qk_rope_concat_and_cache_mla",
            "[[4, 16, 512], [4, 16, 64], [4, 512], [4, 64], [100, 1, 576], [4, 16, 576]]",
            &[
                BF,
                BF,
                BF,
                BF,
                "c10::Float8_e4m3fnuz",
                "c10::Float8_e4m3fnuz",
            ],
            None,
            &[],
        );
        let e = evaluate("fused_qk_rope_concat_and_cache_mla", &i, false).unwrap();
        assert_eq!(e.params[7].0, "dtype_out");
        // write q at 1 byte: 154,368 − 36,864 = 117,504.
        assert_eq!(e.bytes, Some(117_504.0));
        assert_eq!(e.compute_spec(), "vector_bf16");
    }
}
