//! Scaled-dot-product-attention models: the aten SDPA ops,
//! flash-attn (incl. varlen and backward), aiter, flash_attn_3 and
//! Evoformer.
//!
//! FLOPs count the two GEMMs (`QKᵀ`, `PV`), halved (as a float) for causal
//! attention; the backward adds the recompute (flash) and the gradient
//! GEMMs with GQA reduction terms. Bytes count q, k, v and o (backward:
//! q, k, v, dO, dQ, dK, dV) at **2 bytes per element regardless of the
//! dtype**, because the reference calls `bytes()` without an argument; only
//! `flash_attn::_flash_attn_backward` uses the size of its dtype.

use super::gemm::{elem, str_tuple};
use super::pyval::truthy;
use super::pyval::{Rec, bpe, invalid, item, prod, py_eval, py_float, tuple_of};
use super::{Evaluation, Maf, ModelResult, OpInput, Py, precision_of};
use crate::trace::ArgValue;

use super::pyval::Num::{self, F, I};

// ---------------------------------------------------------------------------
// Formulas: FLOPs and bytes, forward and backward.
// ---------------------------------------------------------------------------

/// The attention sizes, as Python numbers (varlen lengths are floats).
#[derive(Debug, Clone, Copy)]
struct Dims {
    b: Num,
    n_q: Num,
    h_q: Num,
    n_kv: Num,
    h_kv: Num,
    d_qk: Num,
    d_v: Num,
}

/// `causal` halving, which needs `N_Q == N_KV`.
fn causal_half(total: Num, d: &Dims, causal: bool) -> ModelResult<Num> {
    if !causal {
        return Ok(total);
    }
    if d.n_q.eq(d.n_kv) {
        Ok(F(total.f64() / 2.0))
    } else {
        invalid("causal=True but N_Q != N_K")
    }
}

/// `SDPA.flops_func`.
fn flops_fwd(d: &Dims, causal: bool) -> ModelResult<Num> {
    let bh = d.b.mul(d.h_q);
    let qk = bh.mul(prod([I(2), d.n_q, d.n_kv, d.d_qk]));
    let pv = bh.mul(prod([I(2), d.n_q, d.d_v, d.n_kv]));
    causal_half(qk.add(pv), d, causal)
}

/// `SDPA.flops_bwd_func`.
fn flops_bwd(d: &Dims, causal: bool, flash_impl: bool) -> ModelResult<Num> {
    let bh = d.b.mul(d.h_q);
    let gqa = d.h_q.floor_div(d.h_kv)?.sub(I(1));
    let mut total = I(0);
    if flash_impl {
        total = total.add(bh.mul(prod([I(2), d.n_q, d.n_kv, d.d_qk])));
    }
    let dv = bh
        .mul(prod([I(2), d.n_kv, d.n_q, d.d_v]))
        .add(prod([d.b, d.n_kv, d.d_v, gqa]));
    total = total.add(dv);
    total = total.add(bh.mul(prod([I(2), d.n_q, d.n_kv, d.d_v])));
    total = total.add(bh.mul(prod([I(2), d.n_q, d.n_kv, d.d_qk])));
    let dk = bh
        .mul(prod([I(2), d.n_kv, d.n_q, d.d_qk]))
        .add(prod([d.b, d.n_kv, d.d_qk, gqa]));
    total = total.add(dk);
    causal_half(total, d, causal)
}

/// Element counts of q, k, v and o.
fn qkvo(d: &Dims) -> [Num; 4] {
    [
        prod([d.b, d.n_q, d.h_q, d.d_qk]),
        prod([d.b, d.n_kv, d.h_kv, d.d_qk]),
        prod([d.b, d.n_kv, d.h_kv, d.d_v]),
        prod([d.b, d.n_q, d.h_q, d.d_v]),
    ]
}

/// `SDPA.bytes_func`: `(q + k + v + o) · bpe`.
fn bytes_fwd(d: &Dims, bpe: Num) -> Num {
    let [q, k, v, o] = qkvo(d);
    q.add(k).add(v).add(o).mul(bpe)
}

/// `SDPA.bytes_bwd_func`: `(q + k + v + dO + dQ + dK + dV) · bpe`.
fn bytes_bwd(d: &Dims, bpe: Num) -> Num {
    let [q, k, v, o] = qkvo(d);
    let t = q.add(k).add(v).add(o);
    t.add(q).add(k).add(v).mul(bpe)
}

// ---------------------------------------------------------------------------
// Parsing: sizes, flags and parameters from the recorded arguments.
// ---------------------------------------------------------------------------

/// How a class reads dropout and causal from its concrete inputs.
#[derive(Debug, Clone, Copy)]
enum Flags {
    /// `optional_float(CI[d])`, `CI[c].lower() == "true"` unless `""`/`"None"`.
    Lenient(usize, usize),
    /// `float(CI[d])`, `eval(CI[c])`.
    Strict(usize, usize),
    /// flash-attn backward: optional slots, causal defaults to True.
    FlashBwd,
    /// flash_attn_3: dropout 0.0, lenient causal at `CI[c]`.
    NoDropout(usize),
}

/// How an SDPA class reads its operands: a [`Spec`], or Evoformer's own
/// 5-D layout.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// The shared readers, with the class's slots and flags.
    Spec(Spec),
    /// `EvoformerAttention`: q = `(Batch, N_seq, N_res, Head, Dim)`.
    Evoformer,
}

/// Static description of one SDPA class.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Slots of q, k, v.
    qkv: [usize; 3],
    /// Index permutation to (B, H, N, d); varlen uses the first three as (H, N, d).
    perm: [usize; 4],
    varlen: Option<Varlen>,
    flags: Flags,
    flash_impl: bool,
    /// Strides are recorded as `q_stride`, `k_stride`, `v_stride`.
    strides: bool,
    /// `dtype_A_B` is recorded.
    dtype: bool,
    /// A backward-category class: `flops()`/`bytes()` are the backward ones.
    backward: bool,
    /// The backward bytes take the size of the first dtype (not 2 bytes).
    bwd_bytes_from_dtype: bool,
}

/// Where the varlen classes read cu_seqlens and max_seqlen.
#[derive(Debug, Clone, Copy)]
struct Varlen {
    cu_q: usize,
    cu_kv: usize,
    max_q: usize,
    max_kv: usize,
}

const BNHD: [usize; 4] = [0, 2, 1, 3];
const BHND: [usize; 4] = [0, 1, 2, 3];

/// Varlen slots: cu_seqlens q/kv and max_seqlen q/kv sit in four
/// consecutive Input Dims / Concrete Inputs slots from `first`.
const fn varlen_from(first: usize) -> Option<Varlen> {
    Some(Varlen {
        cu_q: first,
        cu_kv: first + 1,
        max_q: first + 2,
        max_kv: first + 3,
    })
}

/// What a class does not say otherwise: q, k, v at 0..3 in (B, N, H, d),
/// lenient flags at 3 and 5, flash FLOPs, a forward op (the
/// `aiter::_flash_attn_forward`, `aiter::mha_fwd` and `aiter::fmha_v3_fwd`
/// classes as they are).
pub const BASE: Kind = Kind::Spec(SPEC);

const SPEC: Spec = Spec {
    qkv: [0, 1, 2],
    perm: BNHD,
    varlen: None,
    flags: Flags::Lenient(3, 5),
    flash_impl: true,
    strides: false,
    dtype: false,
    backward: false,
    bwd_bytes_from_dtype: false,
};

/// `aten::_scaled_dot_product_flash_attention`: (B, H, N, d).
pub const ATEN_FLASH: Kind = Kind::Spec(Spec {
    perm: BHND,
    flags: Flags::Lenient(3, 4),
    dtype: true,
    ..SPEC
});

/// `aten::_scaled_dot_product_efficient_attention` and `_cudnn_attention`:
/// (B, H, N, d), math (not flash) FLOPs.
pub const ATEN_EFFICIENT: Kind = Kind::Spec(Spec {
    perm: BHND,
    flags: Flags::Lenient(5, 6),
    flash_impl: false,
    dtype: true,
    ..SPEC
});

/// The flash-attn package's classes: strict flags, strides and dtypes
/// recorded.
const FLASH: Spec = Spec {
    strides: true,
    dtype: true,
    ..SPEC
};

/// `flash_attn::_flash_attn_forward`.
pub const FLASH_ATTENTION: Kind = Kind::Spec(Spec {
    flags: Flags::Strict(3, 5),
    ..FLASH
});

/// `flash_attn::_flash_attn_backward`: q, k, v after the output gradient;
/// its bytes at the size of its first dtype.
pub const FLASH_ATTENTION_BACKWARD: Kind = Kind::Spec(Spec {
    qkv: [1, 2, 3],
    flags: Flags::FlashBwd,
    backward: true,
    bwd_bytes_from_dtype: true,
    ..FLASH
});

/// `flash_attn::_flash_attn_varlen_forward`: (N, H, d) with cu_seqlens.
pub const FLASH_VARLEN_FORWARD: Kind = Kind::Spec(Spec {
    perm: [1, 0, 2, 0],
    varlen: varlen_from(3),
    flags: Flags::Strict(7, 9),
    ..FLASH
});

/// `flash_attn::_flash_attn_varlen_backward`.
pub const FLASH_VARLEN_BACKWARD: Kind = Kind::Spec(Spec {
    qkv: [1, 2, 3],
    perm: [1, 0, 2, 0],
    varlen: varlen_from(9),
    flags: Flags::Strict(13, 15),
    backward: true,
    ..FLASH
});

/// An aiter class: q, k, v from `qkv_from`, lenient flags at `d` and `c`.
const fn lenient(qkv_from: usize, d: usize, c: usize, backward: bool) -> Kind {
    Kind::Spec(Spec {
        qkv: [qkv_from, qkv_from + 1, qkv_from + 2],
        flags: Flags::Lenient(d, c),
        backward,
        ..SPEC
    })
}

/// `aiter::_flash_attn_backward`.
pub const AITER_FLASH_BACKWARD: Kind = lenient(0, 10, 12, true);
/// `aiter::wrapper_fmha_v3_fwd`.
pub const AITER_V3_FORWARD: Kind = lenient(1, 4, 6, false);
/// `aiter::wrapper_fmha_v3_bwd`.
pub const AITER_V3_BACKWARD: Kind = lenient(1, 7, 9, true);
/// `aiter::mha_bwd`.
pub const AITER_MHA_BACKWARD: Kind = lenient(1, 6, 8, true);

/// `flash_attn_3::fwd`: dropout 0.0, lenient causal at slot 24.
pub const FLASH_ATTN_3: Kind = Kind::Spec(Spec {
    flags: Flags::NoDropout(24),
    ..SPEC
});

/// `EvoformerAttention`.
pub const EVOFORMER: Kind = Kind::Evoformer;

/// `extract_sdpa_cfg` / `extract_sdpa_varlen_cfg`: B, N_Q, H_Q, N_KV, H_KV,
/// d_h_qk, d_h_v with the consistency checks.
fn extract(dims: &[ArgValue], spec: &Spec) -> ModelResult<[i64; 7]> {
    let [qi, ki, vi] = spec.qkv;
    let q = item(dims, qi, "Input Dims")?;
    let k = item(dims, ki, "Input Dims")?;
    let v = item(dims, vi, "Input Dims")?;
    let pick = |s: &ArgValue| -> ModelResult<[i64; 4]> {
        if spec.varlen.is_some() {
            let p = &spec.perm;
            Ok([1, elem(s, p[0])?, elem(s, p[1])?, elem(s, p[2])?])
        } else {
            let p = &spec.perm;
            Ok([
                elem(s, p[0])?,
                elem(s, p[1])?,
                elem(s, p[2])?,
                elem(s, p[3])?,
            ])
        }
    };
    let [b_q, h_q, n_q, d_q] = pick(q)?;
    let [b_k, h_k, n_k, d_k] = pick(k)?;
    let [b_v, h_v, n_v, d_v] = pick(v)?;
    if b_q != b_k || b_q != b_v {
        return invalid(format!("Batch sizes do not match: {b_q} != {b_k} != {b_v}"));
    }
    if h_k != h_v {
        return invalid(format!(
            "Head sizes do not match for K and V: {h_k} != {h_v}"
        ));
    }
    if n_k != n_v {
        return invalid(format!(
            "Length sizes do not match for K and V: {n_k} != {n_v}"
        ));
    }
    if d_q != d_k {
        return invalid(format!(
            "Head dimensions do not match for Q and K: {d_q} != {d_k}"
        ));
    }
    Ok([b_q, n_q, h_q, n_k, h_k, d_q, d_v])
}

/// `optional_float`: `""`/`"None"` and unparsable texts are 0.0.
fn optional_float(s: &str) -> f64 {
    if s.is_empty() || s == "None" {
        0.0
    } else {
        py_float(s).unwrap_or(0.0)
    }
}

/// The lenient causal flag: `s.lower() == "true"` unless `""`/`"None"`.
fn lenient_causal(s: &str) -> bool {
    !(s.is_empty() || s == "None") && s.to_lowercase() == "true"
}

/// `(dropout, causal)` as stored in the params.
fn flags(input: &OpInput, f: Flags) -> ModelResult<(Py, Py)> {
    Ok(match f {
        Flags::Lenient(d, c) => {
            let ci = Rec::new(input).concrete()?;
            let dropout = optional_float(item(ci, d, "Concrete Inputs")?);
            let causal = lenient_causal(item(ci, c, "Concrete Inputs")?);
            (Py::Float(dropout), Py::Bool(causal))
        }
        Flags::Strict(d, c) => {
            let ci = Rec::new(input).concrete()?;
            let dropout = py_float(item(ci, d, "Concrete Inputs")?)?;
            let causal = py_eval(item(ci, c, "Concrete Inputs")?)?;
            (Py::Float(dropout), causal)
        }
        Flags::FlashBwd => {
            let ci = input.concrete.as_deref().unwrap_or(&[]);
            let dropout = match ci.get(8) {
                Some(s) if !s.is_empty() => py_float(s)?,
                _ => 0.0,
            };
            let causal = match ci.get(10) {
                Some(s) if !s.is_empty() => py_eval(s)?,
                _ => Py::Bool(true),
            };
            (Py::Float(dropout), causal)
        }
        Flags::NoDropout(c) => {
            let ci = Rec::new(input).concrete()?;
            (
                Py::Float(0.0),
                Py::Bool(lenient_causal(item(ci, c, "Concrete Inputs")?)),
            )
        }
    })
}

/// What a parsed SDPA op holds.
struct Parsed {
    params: Vec<(&'static str, Py)>,
    dims: Dims,
    causal: bool,
    flash_impl: bool,
    /// `dtype_A_B[0]` when the class records dtypes (outer None: it does not).
    dtype0: Option<Option<String>>,
    /// `(num_seqs_q, num_seqs_kv, max_seqlen_q, max_seqlen_kv)`.
    varlen: Option<(i64, i64, f64, f64)>,
}

const KEYS: [&str; 7] = ["B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk", "d_h_v"];

fn ints_to_dims(v: [i64; 7]) -> Dims {
    Dims {
        b: I(v[0] as i128),
        n_q: I(v[1] as i128),
        h_q: I(v[2] as i128),
        n_kv: I(v[3] as i128),
        h_kv: I(v[4] as i128),
        d_qk: I(v[5] as i128),
        d_v: I(v[6] as i128),
    }
}

/// FLOPs and bytes of attention with sizes `(B, N_Q, H_Q, N_KV, H_KV,
/// d_qk, d_v)` (the SDPA base formulas): forward, or with `bwd` backward;
/// bytes at `bpe` bytes per element, None when that size is unknown.
pub fn sdpa_numbers(
    sizes: [i64; 7],
    causal: bool,
    flash_impl: bool,
    bwd: bool,
    bpe: Option<i64>,
) -> ModelResult<(f64, Option<f64>)> {
    let d = ints_to_dims(sizes);
    let (flops, bytes) = if bwd {
        let bytes = bpe.map(|b| bytes_bwd(&d, I(b as i128)));
        (flops_bwd(&d, causal, flash_impl)?, bytes)
    } else {
        let bytes = bpe.map(|b| bytes_fwd(&d, I(b as i128)));
        (flops_fwd(&d, causal)?, bytes)
    };
    Ok((flops.f64(), bytes.map(Num::f64)))
}

fn parse(input: &OpInput, spec: &Spec) -> ModelResult<Parsed> {
    let dims = Rec::new(input).dims()?;
    let cfg = extract(dims, spec)?;
    let mut params: Vec<(&'static str, Py)> = KEYS
        .iter()
        .zip(cfg)
        .map(|(k, v)| (*k, Py::Int(v)))
        .collect();
    let mut dtype0 = None;
    let mut dtype_param = None;
    if spec.dtype {
        let types = Rec::new(input).types()?;
        let d = &types[..types.len().min(2)];
        dtype0 = Some(d.first().cloned());
        dtype_param = Some(str_tuple(d));
    }
    if spec.strides {
        let Some(strides) = input.strides else {
            return invalid("missing 'Input Strides'");
        };
        for (key, slot) in ["q_stride", "k_stride", "v_stride"]
            .into_iter()
            .zip(spec.qkv)
        {
            params.push((key, tuple_of(item(strides, slot, "Input Strides")?)?));
        }
    }
    let mut varlen = None;
    let mut varlen_params = Vec::new();
    if let Some(vl) = spec.varlen {
        let nq = elem(item(dims, vl.cu_q, "Input Dims")?, 0)?.checked_sub(1);
        let nkv = elem(item(dims, vl.cu_kv, "Input Dims")?, 0)?.checked_sub(1);
        let (Some(nq), Some(nkv)) = (nq, nkv) else {
            return invalid("integer overflow");
        };
        let ci = Rec::new(input).concrete()?;
        let mq = py_float(item(ci, vl.max_q, "Concrete Inputs")?)?;
        let mkv = py_float(item(ci, vl.max_kv, "Concrete Inputs")?)?;
        varlen = Some((nq, nkv, mq, mkv));
        varlen_params = vec![
            ("num_seqs_q", Py::Int(nq)),
            ("num_seqs_kv", Py::Int(nkv)),
            ("max_seqlen_q", Py::Float(mq)),
            ("max_seqlen_kv", Py::Float(mkv)),
        ];
    }
    let (dropout, causal) = flags(input, spec.flags)?;
    params.push(("dropout", dropout));
    let causal_flag = truthy(&causal);
    params.push(("causal", causal));
    params.push(("flash_impl", Py::Bool(spec.flash_impl)));
    if let Some(p) = dtype_param {
        params.push(("dtype_A_B", p));
    }
    params.extend(varlen_params);
    Ok(Parsed {
        params,
        dims: ints_to_dims(cfg),
        causal: causal_flag,
        flash_impl: spec.flash_impl,
        dtype0,
        varlen,
    })
}

/// `EvoformerAttention`: q = `(Batch, N_seq, N_res, Head, Dim)`.
fn parse_evoformer(input: &OpInput) -> ModelResult<Parsed> {
    let dims = Rec::new(input).dims()?;
    let q = item(dims, 0, "Input Dims")?;
    if !matches!(q, ArgValue::List(a) if a.len() == 5) {
        return invalid("Evoformer q must be 5-D");
    }
    let v: Vec<i64> = (0..5).map(|i| elem(q, i)).collect::<ModelResult<_>>()?;
    let Some(b) = v[0].checked_mul(v[1]) else {
        return invalid("integer overflow");
    };
    let cfg = [b, v[2], v[3], v[2], v[3], v[4], v[4]];
    let dtype = input.types.as_deref().and_then(|t| t.first().cloned());
    let mut params: Vec<(&'static str, Py)> = KEYS
        .iter()
        .zip(cfg)
        .map(|(k, v)| (*k, Py::Int(v)))
        .collect();
    params.push(("causal", Py::Bool(false)));
    params.push(("flash_impl", Py::Bool(false)));
    params.push(("dtype_A_B", Py::List(vec![Py::opt_str(dtype.as_deref())])));
    Ok(Parsed {
        params,
        dims: ints_to_dims(cfg),
        causal: false,
        flash_impl: false,
        dtype0: Some(dtype),
        varlen: None,
    })
}

/// The varlen estimate: the longest sequence plus `num_seqs - 1` equal
/// sequences sharing the remaining tokens.
fn varlen_flops(p: &Parsed, f: impl Fn(&Dims) -> ModelResult<Num>) -> ModelResult<Num> {
    let (nq, nkv, mq, mkv) = p.varlen.unwrap_or((0, 0, 0.0, 0.0));
    let d = &p.dims;
    let mut acc = f(&Dims {
        n_q: F(mq),
        n_kv: F(mkv),
        ..*d
    })?;
    if nq > 1 {
        let rest_q = d.n_q.sub(F(mq)).floor_div(I(nq as i128 - 1))?;
        let rest_kv = d.n_kv.sub(F(mkv)).floor_div(I(nkv as i128 - 1))?;
        let more = f(&Dims {
            n_q: rest_q,
            n_kv: rest_kv,
            ..*d
        })?;
        acc = acc.add(I(nq as i128 - 1).mul(more));
    }
    Ok(acc)
}

/// Evaluates an SDPA-family model of kind `kind` on `input`.
///
/// Forward classes give their forward numbers, or with `bwd` the backward
/// ones (`flops_bwd`, `bytes_bwd` at 2 bytes/element). Backward-category
/// classes give their backward numbers either way.
pub fn evaluate(kind: &Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let (p, spec) = match kind {
        Kind::Evoformer => (parse_evoformer(input)?, None),
        Kind::Spec(spec) => (parse(input, spec)?, Some(spec)),
    };
    let backward_class = spec.is_some_and(|s| s.backward);
    let d = &p.dims;
    let two = I(2);
    let (flops, bytes) = if bwd {
        (flops_bwd(d, p.causal, p.flash_impl)?, bytes_bwd(d, two))
    } else if p.varlen.is_some() && backward_class {
        let f = varlen_flops(&p, |x| flops_bwd(x, p.causal, p.flash_impl))?;
        (f, bytes_bwd(d, two))
    } else if p.varlen.is_some() {
        (
            varlen_flops(&p, |x| flops_fwd(x, p.causal))?,
            bytes_fwd(d, two),
        )
    } else if backward_class {
        let size = if spec.is_some_and(|s| s.bwd_bytes_from_dtype) {
            // `name2bpe(dtype_A_B[0])`; an unknown size fails the multiplication.
            let Some(Some(dt)) = &p.dtype0 else {
                return invalid("tuple index out of range");
            };
            match bpe(Some(dt)) {
                Some(b) => I(b),
                None => return invalid("unsupported operand type(s) for *: 'int' and 'NoneType'"),
            }
        } else {
            two
        };
        (flops_bwd(d, p.causal, p.flash_impl)?, bytes_bwd(d, size))
    } else {
        (flops_fwd(d, p.causal)?, bytes_fwd(d, two))
    };
    let precision = match &p.dtype0 {
        None => None,
        Some(None) if spec.is_some() => return invalid("tuple index out of range"),
        Some(dt) => precision_of(dt.as_deref()),
    };
    Ok(Evaluation {
        params: p.params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Matrix),
        precision,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        assert_keys, evaluate, is_invalid, keys, op_input, param, strs,
    };
    use super::*;
    use crate::test_support::{arg, arg_value};

    const BF16: &str = "c10::BFloat16";

    fn inp(
        dims: ArgValue,
        types: &[&str],
        strides: Option<ArgValue>,
        ci: &[&str],
    ) -> OpInput<'static> {
        op_input("sdpa", dims, types, strides, ci)
    }

    fn cells(e: &Evaluation) -> Vec<(String, String)> {
        e.params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str()))
            .collect()
    }

    fn aten_flash(ci4: &str) -> OpInput<'static> {
        inp(
            arg!([
                [16, 16, 559, 64],
                [16, 16, 559, 64],
                [16, 16, 559, 64],
                [],
                [],
                [],
                []
            ]),
            &[BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", "Scalar"],
            Some(arg!([
                [572416, 35776, 64, 1],
                [572416, 35776, 64, 1],
                [572416, 35776, 64, 1],
                [],
                [],
                [],
                []
            ])),
            &["", "", "", "0.", ci4, "False", "0.125"],
        )
    }

    #[test]
    fn aten_flash_causal() {
        let e = evaluate(
            "aten__scaled_dot_product_flash_attention",
            &aten_flash("True"),
            false,
        )
        .unwrap();
        // qk = pv = B*H*(2*N*N*d) = 16*16*(2*559*559*64) = 256 * 39997568 = 10239377408
        // causal: (qk + pv) / 2 = 10239377408
        assert_eq!(e.flops, 10_239_377_408.0);
        // q = k = v = o = 16*559*16*64 = 9158656; 4 * 9158656 * 2 = 73269248
        assert_eq!(e.bytes, Some(73_269_248.0));
        assert_eq!(e.bytes.unwrap() / 1048576.0, 69.875);
        let expect: Vec<(String, String)> = [
            ("B", "16"),
            ("N_Q", "559"),
            ("H_Q", "16"),
            ("N_KV", "559"),
            ("H_KV", "16"),
            ("d_h_qk", "64"),
            ("d_h_v", "64"),
            ("dropout", "0.0"),
            ("causal", "True"),
            ("flash_impl", "True"),
            ("dtype_A_B", "('c10::BFloat16', 'c10::BFloat16')"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(cells(&e), expect);
        assert_eq!(e.compute_spec(), "matrix_bf16");

        // Not causal: twice the FLOPs.
        let e = evaluate(
            "aten__scaled_dot_product_flash_attention",
            &aten_flash("False"),
            false,
        )
        .unwrap();
        assert_eq!(e.flops, 20_478_754_816.0);
    }

    #[test]
    fn efficient_fp32_still_two_bytes_and_causal_mismatch() {
        // B=2, H=4, N_Q=8, N_KV=16, d=32, float
        let i = inp(
            arg!([
                [2, 4, 8, 32],
                [2, 4, 16, 32],
                [2, 4, 16, 32],
                [],
                [],
                [],
                [],
                []
            ]),
            &[
                "float", "float", "float", "", "Scalar", "Scalar", "Scalar", "",
            ],
            None,
            &["", "", "", "", "False", "0.1", "False", ""],
        );
        let e = evaluate("aten__scaled_dot_product_efficient_attention", &i, false).unwrap();
        // 2*4*(2*8*16*32) * 2 = 8 * 8192 * 2
        assert_eq!(e.flops, 131_072.0);
        // q = o = 2*8*4*32 = 2048; k = v = 2*16*4*32 = 4096; (2048*2 + 4096*2) * 2 bytes
        assert_eq!(e.bytes, Some(24_576.0));
        assert_eq!(param(&e, "dropout"), &Py::Float(0.1));
        assert_eq!(param(&e, "flash_impl"), &Py::Bool(false));
        assert_eq!(e.compute_spec(), "matrix_fp32");
        // causal with N_Q != N_KV fails.
        let mut c = i.clone();
        c.concrete = strs(&["", "", "", "", "False", "0.1", "true", ""]);
        assert!(is_invalid(&evaluate(
            "aten__scaled_dot_product_cudnn_attention",
            &c,
            false
        )));
        // backward of the forward op (flash_impl False: no recompute):
        // dV = 8*(2*16*8*32) + 2*16*32*(4//4 - 1) = 65536; dP = dQ = dK = 65536
        let b = evaluate("aten__scaled_dot_product_efficient_attention", &i, true).unwrap();
        assert_eq!(b.flops, 262_144.0);
        // (q + k + v + dO + dQ + dK + dV) * 2 = (2048+4096+4096+2048+2048+4096+4096) * 2
        assert_eq!(b.bytes, Some(45_056.0));
    }

    fn flash_fwd(h_kv: i64, causal: &str) -> OpInput<'static> {
        // (B, N, H, d): q (2, 64, 8, 16), k/v (2, 64, h_kv, 16)
        inp(
            arg_value(&format!(
                "[[2, 64, 8, 16], [2, 64, {h_kv}, 16], [2, 64, {h_kv}, 16], [], [], []]"
            )),
            &[BF16, BF16, BF16, "Scalar", "Scalar", "Scalar"],
            Some(arg!([
                [8192, 128, 16, 1],
                [2048, 32, 16, 1],
                [2048, 32, 16, 1],
                [],
                [],
                []
            ])),
            &["", "", "", "0.0", "0.25", causal],
        )
    }

    #[test]
    fn flash_attn_func_gqa_backward() {
        let e = evaluate("flash_attention", &flash_fwd(2, "False"), false).unwrap();
        // 2*8*(2*64*64*16) * 2 = 16 * 131072 * 2
        assert_eq!(e.flops, 4_194_304.0);
        // q = o = 2*64*8*16 = 16384; k = v = 2*64*2*16 = 4096; (16384*2 + 4096*2) * 2
        assert_eq!(e.bytes, Some(81_920.0));
        assert_keys(
            &e,
            "B N_Q H_Q N_KV H_KV d_h_qk d_h_v q_stride k_stride v_stride dropout causal flash_impl dtype_A_B",
        );
        assert_eq!(param(&e, "k_stride").to_str(), "(2048, 32, 16, 1)");
        let b = evaluate("flash_attention", &flash_fwd(2, "False"), true).unwrap();
        // each GEMM = 16 * 131072 = 2097152; five GEMMs (recompute, dV, dP, dQ, dK)
        // GQA terms: B*N_KV*d*(8//2 - 1) = 2*64*16*3 = 6144, for dV and dK
        // 5*2097152 + 2*6144 = 10485760 + 12288
        assert_eq!(b.flops, 10_498_048.0);
        // (16384 + 4096 + 4096 + 16384 + 16384 + 4096 + 4096) * 2
        assert_eq!(b.bytes, Some(131_072.0));
        // causal halves the backward too: 10498048 / 2
        let c = evaluate("flash_attention", &flash_fwd(2, "True"), true).unwrap();
        assert_eq!(c.flops, 5_249_024.0);
        // eval('') fails.
        assert!(evaluate("flash_attention", &flash_fwd(2, ""), false).is_err());
        // Strides are required.
        let mut n = flash_fwd(2, "False");
        n.strides = None;
        assert!(evaluate("flash_attention", &n, false).is_err());
    }

    #[test]
    fn flash_backward_uses_dtype_size() {
        // dout, q, k, v ... (B, N, H, d) = (1, 32, 4, 8), float
        let mut ci = vec![""; 11];
        ci[8] = "0.0";
        ci[10] = "False";
        let i = inp(
            arg!([[1, 32, 4, 8], [1, 32, 4, 8], [1, 32, 4, 8], [1, 32, 4, 8]]),
            &["float", "float", "float", "float"],
            Some(arg!([
                [1024, 32, 8, 1],
                [1024, 32, 8, 1],
                [1024, 32, 8, 1],
                [1024, 32, 8, 1]
            ])),
            &ci,
        );
        let e = evaluate("flash_attention_backward", &i, false).unwrap();
        // each GEMM = 1*4*(2*32*32*8) = 65536; 5 GEMMs, no GQA term (4//4 - 1 = 0)
        assert_eq!(e.flops, 327_680.0);
        // each tensor = 32*4*8 = 1024; 7 tensors * 4 bytes (float)
        assert_eq!(e.bytes, Some(28_672.0));
        assert_eq!(e.compute_spec(), "matrix_fp32");
        // Missing causal: True by default -> halved.
        let mut j = i.clone();
        j.concrete = None;
        let e = evaluate("flash_attention_backward", &j, false).unwrap();
        assert_eq!(param(&e, "causal"), &Py::Bool(true));
        assert_eq!(e.flops, 163_840.0);
        // An unknown dtype size fails.
        let mut k = i.clone();
        k.types = strs(&["bool", "bool"]);
        assert!(evaluate("flash_attention_backward", &k, false).is_err());
    }

    #[test]
    fn varlen_forward_and_backward() {
        // q/k/v (T=100, H=2, d=8); cu_seqlens of 4 entries -> 3 sequences; max 50
        let mut ci = vec![""; 10];
        ci[5] = "50";
        ci[6] = "50";
        ci[7] = "0.0";
        ci[9] = "False";
        let i = inp(
            arg!([
                [100, 2, 8],
                [100, 2, 8],
                [100, 2, 8],
                [4],
                [4],
                [],
                [],
                [],
                [],
                []
            ]),
            &[BF16, BF16, BF16, "int", "int"],
            Some(arg!([[16, 8, 1], [16, 8, 1], [16, 8, 1], [1], [1]])),
            &ci,
        );
        let e = evaluate("flash_attention_varlen_forward", &i, false).unwrap();
        // longest: 1*2*(2*50*50*8)*2 = 160000; rest: (100-50)//2 = 25 per sequence
        // 2 * (2*(2*25*25*8)*2) = 2 * 40000 = 80000; total 240000
        assert_eq!(e.flops, 240_000.0);
        // bytes use the total tokens: 4 * (100*2*8) * 2
        assert_eq!(e.bytes, Some(12_800.0));
        assert_eq!(param(&e, "num_seqs_q"), &Py::Int(3));
        assert_eq!(param(&e, "max_seqlen_q").to_str(), "50.0");
        assert_eq!(param(&e, "B"), &Py::Int(1));
        assert_eq!(
            &keys(&e)[13..],
            [
                "dtype_A_B",
                "num_seqs_q",
                "num_seqs_kv",
                "max_seqlen_q",
                "max_seqlen_kv"
            ]
        );

        let mut ci = vec![""; 16];
        ci[11] = "50";
        ci[12] = "50";
        ci[13] = "0.0";
        ci[15] = "True";
        let dims = arg!([
            [100, 2, 8],
            [100, 2, 8],
            [100, 2, 8],
            [100, 2, 8],
            [],
            [],
            [],
            [],
            [],
            [4],
            [4]
        ]);
        let s = arg!([[16, 8, 1], [16, 8, 1], [16, 8, 1], [16, 8, 1]]);
        let b = inp(dims, &[BF16, BF16], Some(s), &ci);
        let e = evaluate("flash_attention_varlen_backward", &b, false).unwrap();
        // backward per sequence of n tokens: 5 GEMMs of 2*(2*n*n*8), halved (causal)
        // longest n=50: 5*80000/2 = 200000; rest 2 * (5*20000/2) = 100000
        assert_eq!(e.flops, 300_000.0);
        // 7 tensors * 1600 elements * 2 bytes
        assert_eq!(e.bytes, Some(22_400.0));
    }

    #[test]
    fn aiter_and_v3_have_no_dtype() {
        let mut ci = vec![""; 13];
        ci[10] = "None";
        ci[12] = "TRUE";
        let i = inp(
            arg!([[1, 16, 2, 8], [1, 16, 2, 8], [1, 16, 2, 8]]),
            &[BF16, BF16, BF16],
            None,
            &ci,
        );
        let e = evaluate("aiter__flash_attn_backward", &i, false).unwrap();
        // 5 GEMMs of 1*2*(2*16*16*8) = 8192, halved: 20480
        assert_eq!(e.flops, 20_480.0);
        // 7 * (16*2*8) * 2
        assert_eq!(e.bytes, Some(3_584.0));
        assert_eq!(e.compute_spec(), "");
        assert_eq!(e.params.len(), 10);

        let mut ci = vec![""; 25];
        ci[24] = "False";
        let i = inp(
            arg!([[1, 16, 2, 8], [1, 16, 2, 8], [1, 16, 2, 8]]),
            &[BF16],
            None,
            &ci,
        );
        let e = evaluate("flash_attn_v3_forward", &i, false).unwrap();
        // 2 GEMMs of 8192
        assert_eq!(e.flops, 16_384.0);
        assert_eq!(param(&e, "dropout"), &Py::Float(0.0));

        // q, k, v at slots 1..3 for the fmha_v3 wrapper.
        let i = inp(
            arg!([[], [1, 16, 2, 8], [1, 16, 2, 8], [1, 16, 2, 8]]),
            &[],
            None,
            &["", "", "", "", "bad", "", "False"],
        );
        let e = evaluate("aiter__fmha_v3_forward", &i, false).unwrap();
        assert_eq!(e.flops, 16_384.0);
        assert_eq!(param(&e, "dropout"), &Py::Float(0.0));
        // Short concrete inputs fail.
        let i = inp(
            arg!([[1, 16, 2, 8], [1, 16, 2, 8], [1, 16, 2, 8]]),
            &[],
            None,
            &["", ""],
        );
        assert!(evaluate("aiter__mha_fwd", &i, false).is_err());
    }

    #[test]
    fn evoformer() {
        let i = inp(
            arg!([[1, 4, 32, 2, 8], [1, 4, 32, 2, 8], [1, 4, 32, 2, 8]]),
            &[BF16],
            None,
            &[],
        );
        let e = evaluate("evoformer_attention", &i, false).unwrap();
        // B = 1*4 = 4: 4*2*(2*32*32*8) * 2 = 8 * 16384 * 2
        assert_eq!(e.flops, 262_144.0);
        // 4 * (4*32*2*8) * 2
        assert_eq!(e.bytes, Some(16_384.0));
        assert_eq!(param(&e, "dtype_A_B").to_str(), "['c10::BFloat16']");
        assert!(e.params.iter().all(|(k, _)| *k != "dropout"));
        assert_eq!(e.compute_spec(), "matrix_bf16");
        let j = inp(arg!([[1, 4, 32, 2, 8]]), &[], None, &[]);
        let e = evaluate("evoformer_attention", &j, false).unwrap();
        assert_eq!(param(&e, "dtype_A_B").to_str(), "[None]");
        assert_eq!(e.compute_spec(), "");
    }

    #[test]
    fn failures() {
        // Batch mismatch.
        let i = inp(
            arg!([[2, 4, 8, 32], [1, 4, 8, 32], [1, 4, 8, 32]]),
            &[BF16, BF16],
            None,
            &["", "", "", "0.", "False"],
        );
        assert!(evaluate("aten__scaled_dot_product_flash_attention", &i, false).is_err());
        // Short shapes, missing keys, nested shapes, unknown class.
        let i = inp(
            arg!([[2, 4], [[1]], []]),
            &[BF16, BF16],
            None,
            &["", "", "", "0.", "False"],
        );
        assert!(evaluate("aten__scaled_dot_product_flash_attention", &i, false).is_err());
        let empty = OpInput::default();
        for c in [
            "flash_attention",
            "aiter__mha_bwd",
            "evoformer_attention",
            "flash_attention_varlen_forward",
        ] {
            assert!(is_invalid(&evaluate(c, &empty, false)));
        }
        assert!(is_invalid(&evaluate("nope", &aten_flash("True"), false)));
        // No dtypes at all: the precision lookup fails.
        let mut n = aten_flash("True");
        n.types = Some(vec![]);
        assert!(evaluate("aten__scaled_dot_product_flash_attention", &n, false).is_err());
        // H_KV = 0: division by zero in the GQA term.
        let z = inp(
            arg!([[1, 2, 4, 8], [1, 0, 4, 8], [1, 0, 4, 8]]),
            &[BF16, BF16],
            None,
            &["", "", "", "0.", "False"],
        );
        assert!(evaluate("aten__scaled_dot_product_flash_attention", &z, false).is_ok());
        assert!(evaluate("aten__scaled_dot_product_flash_attention", &z, true).is_err());
    }
}
