//! Inference attention (the reference's `InferenceAttention` family): paged
//! and varlen attention of vLLM, SGLang and aiter, whose work depends on the
//! whole batch of the step, read from the enclosing annotation's chunk
//! statistics ([`super::annotation`]).
//!
//! With query heads H_Q, KV heads H_KV, head dims d_qk/d_v and the step's
//! sums (`c_*` context, `g_*` generation):
//!
//! * FLOPs = H_Q·(2·c_sqsk − c_sqsq)·(d_qk + d_v) + H_Q·2·g_sqsk·(d_qk + d_v)
//!   (causal inside the current chunk, full attention to the history);
//! * bytes = (Q + output + current-chunk K/V) elements at the Q dtype's size
//!   plus cached K/V elements (`(sk − sq)·H_KV·(d_qk + d_v)`) at the KV
//!   dtype's size (2 bytes when a dtype has none);
//! * a sliding window W (when set) caps the generation KV sums at g_sq·W.
//!
//! An op whose arguments or annotation do not parse has no estimate
//! ([`ModelError::Invalid`]); a step with no tokens at all is not modelled
//! ([`ModelError::NotImplemented`]). No class has a backward model.

use super::annotation::{ChunkStats, chunk_stats};
use super::pyval::{
    Num, Rec, dim_at, int_of, invalid, ipy, len_of, numel, precision, tuple_of, unpack,
};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Precision, Py, bytes_per_element};
use crate::trace::ArgValue;

/// The inference attention classes: which reader parses the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// q, k, v at slots 0, 1, 2 (vLLM unified, varlen, MLA decode).
    Base,
    /// As [`Kind::Base`], with `d_v` from slot 2's last dimension.
    VFromSlot2,
    /// `attention_paged_attention_ragged`.
    PagedRagged,
    /// `aiter::pa_decode_gluon`.
    PaDecodeGluon,
    /// The DeepSeek-V4 paged decode pseudo ops, by mode.
    V4Decode(V4Mode),
    /// `aiter::pa_sparse_prefill_opus_fwd`.
    SparsePrefill,
    /// `mla_tilelang_sparse_fwd`: `d_v` fixed at 512.
    TilelangSparse,
    /// `gdn_attention_core`.
    Gdn,
    /// `sglang_store_cache`.
    StoreCache,
}

/// The KV span rule of a DeepSeek-V4 decode mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V4Mode {
    /// Sliding window only.
    Swa,
    /// Compressed sparse attention: window plus top-k.
    Csa,
    /// Heavily compressed attention: window plus one per 128.
    Hca,
}

const BF16: &str = "c10::bfloat16";

/// The sizes the formulas use, and the params in the reference's order.
struct Attn {
    params: Vec<(&'static str, Py)>,
    h_q: i128,
    h_kv: i128,
    d_qk: i128,
    d_v: i128,
    stats: ChunkStats,
    window: i128,
    dtype_q: Option<String>,
    dtype_kv: Option<String>,
}

/// Shapes of one attention op.
struct Shape {
    n_q: Num,
    h_q: i128,
    /// `H_V`, `H_K` and `H_KV` (all the same).
    h_kv: i128,
    n_kv: Num,
    d_qk: i128,
    d_v: i128,
}

impl Attn {
    /// `B … flash_impl`, then the chunk statistics.
    fn new(s: &Shape, stats: ChunkStats) -> Attn {
        let mut params = vec![
            ("B", Py::Int(1)),
            ("N_Q", s.n_q.to_py()),
            ("H_Q", ipy(s.h_q)),
            ("H_V", ipy(s.h_kv)),
            ("H_K", ipy(s.h_kv)),
            ("N_KV", s.n_kv.to_py()),
            ("H_KV", ipy(s.h_kv)),
            ("d_h_qk", ipy(s.d_qk)),
            ("d_h_v", ipy(s.d_v)),
            ("dropout", Py::Float(0.0)),
            ("causal", Py::Bool(false)),
            ("flash_impl", Py::Bool(true)),
        ];
        params.extend(stats.items().map(|(k, v)| (k, ipy(v))));
        Attn {
            params,
            h_q: s.h_q,
            h_kv: s.h_kv,
            d_qk: s.d_qk,
            d_v: s.d_v,
            stats,
            window: 0,
            dtype_q: None,
            dtype_kv: None,
        }
    }

    /// Appends `dtype_Q` (and `dtype_KV` when given).
    fn dtypes(mut self, q: &str, kv: Option<&str>) -> Attn {
        self.params.push(("dtype_Q", Py::Str(q.to_string())));
        self.dtype_q = Some(q.to_string());
        if let Some(kv) = kv {
            self.params.push(("dtype_KV", Py::Str(kv.to_string())));
            self.dtype_kv = Some(kv.to_string());
        }
        self
    }

    /// Replaces `d_h_v` in place.
    fn set_d_v(&mut self, d_v: i128) {
        self.d_v = d_v;
        if let Some(p) = self.params.iter_mut().find(|(k, _)| *k == "d_h_v") {
            p.1 = ipy(d_v);
        }
    }

    /// Appends `sliding_window`.
    fn sliding_window(mut self, w: i128) -> Attn {
        self.window = w;
        self.params.push(("sliding_window", ipy(w)));
        self
    }

    /// A generation KV sum capped to the sliding window.
    fn cap(&self, v: i128) -> i128 {
        if self.window > 0 && self.stats.g_sq != 0 {
            v.min(self.stats.g_sq.saturating_mul(self.window))
        } else {
            v
        }
    }
}

/// The statistics of the op's annotation.
fn stats_of(input: &OpInput) -> Option<ChunkStats> {
    chunk_stats(input.annotation.unwrap_or("None"))
}

/// The base parser: Q `(N_Q, H_Q, d_qk)` at slot 0, K's last three dims at
/// slot 1; the KV dtype from slot 1 (else Q's). None: no estimate.
fn base(r: Rec) -> Option<Attn> {
    let stats = stats_of(r.input())?;
    let [n_q, h_q, d_qk] = unpack::<3>(r.dim(0).ok()?).ok()?;
    let k = r.dim(1).ok()?.as_list()?;
    let last3 = ArgValue::list(k[k.len().checked_sub(3)?..].to_vec());
    let [n_kv, h_kv, d_v] = unpack::<3>(&last3).ok()?;
    let types = r.types().ok()?;
    let q = types.first()?;
    let kv = types.get(1).unwrap_or(q);
    let s = Shape {
        n_q: Num::I(n_q),
        h_q,
        h_kv,
        n_kv: Num::I(n_kv),
        d_qk,
        d_v,
    };
    Some(Attn::new(&s, stats).dtypes(q, Some(kv)))
}

/// The base parser with `d_h_v` taken from V's last dim at slot 2.
fn base_v_from_slot2(r: Rec) -> ModelResult<Option<Attn>> {
    let Some(mut a) = base(r) else {
        return Ok(None);
    };
    let dims = r.dims_or_empty();
    if dims.len() > 2 && len_of(&dims[2])? >= 1 {
        a.set_d_v(dim_at(&dims[2], -1)?);
    }
    Ok(Some(a))
}

/// SGLang's paged ragged attention: Q at 2, paged K/V caches at 3/4,
/// `N_KV = c_sk + g_sk`, no KV dtype.
fn paged_ragged(r: Rec) -> Option<Attn> {
    let stats = stats_of(r.input())?;
    let [n_q, h_q, d_qk] = unpack::<3>(r.dim(2).ok()?).ok()?;
    let h_kv = dim_at(r.dim(3).ok()?, -2).ok()?;
    let d_v = dim_at(r.dim(4).ok()?, -1).ok()?;
    let q = r.ty(2).ok()?;
    let s = Shape {
        n_q: Num::I(n_q),
        h_q,
        h_kv,
        n_kv: Num::I(stats.c_sk).add(stats.g_sk),
        d_qk,
        d_v,
    };
    Some(Attn::new(&s, stats).dtypes(q, None))
}

/// `aiter::pa_decode_gluon`: decode only (context sums zeroed), an FP8 KV
/// cache dtype at slot 2, the window at Concrete Inputs[19].
fn pa_decode_gluon(r: Rec) -> Option<Attn> {
    let mut stats = stats_of(r.input())?;
    let q = r.dim(0).ok()?;
    let (n_q, h_q, d_qk) = (dim_at(q, 0).ok()?, dim_at(q, 1).ok()?, dim_at(q, 2).ok()?);
    let h_kv = r.dim_int(2, 1).ok()?;
    (stats.c_sq, stats.c_sk, stats.c_sqsq, stats.c_sqsk) = (0, 0, 0, 0);
    let types = r.types().ok()?;
    let dq = types.first()?;
    let dkv = types.get(2).unwrap_or(dq);
    let window = r
        .concrete_or_empty()
        .get(19)
        .and_then(|c| super::pyval::py_int(c).ok())
        .unwrap_or(0);
    let s = Shape {
        n_q: Num::I(n_q),
        h_q,
        h_kv,
        n_kv: Num::I(stats.g_sk),
        d_qk,
        d_v: d_qk,
    };
    Some(
        Attn::new(&s, stats)
            .dtypes(dq, Some(dkv))
            .sliding_window(window),
    )
}

/// The DeepSeek-V4 decode variants' fixed settings.
struct V4Config {
    index_topk: i128,
    window: i128,
    n_heads: i128,
    d_h: i128,
}

/// `DeepSeek-V4-Pro` when the model name says so, else `-Flash`.
fn v4_config(model: Option<&ArgValue>) -> V4Config {
    let name = match model {
        Some(ArgValue::Str(s)) => s.to_lowercase(),
        Some(v) if super::pyval::truthy(v) => v.json_text().to_lowercase(),
        _ => String::new(),
    };
    if name.contains("deepseek-v4-pro") {
        V4Config {
            index_topk: 1024,
            window: 128,
            n_heads: 128,
            d_h: 512,
        }
    } else {
        V4Config {
            index_topk: 512,
            window: 128,
            n_heads: 64,
            d_h: 512,
        }
    }
}

/// Python `int(v)` of an extra arg that is truthy, else None.
fn extra_int(r: Rec, key: &str) -> Option<ModelResult<i128>> {
    let v = r.extra(key).filter(|v| super::pyval::truthy(*v))?;
    Some(match v {
        ArgValue::Str(s) => super::pyval::py_int(s),
        ArgValue::Float(x) if x.is_finite() => Ok(x.trunc() as i128),
        other => int_of(other),
    })
}

/// The KV span of a V4 decode query per mode (`swa`, `csa`, `hca`).
fn v4_window(mode: V4Mode, stats: &ChunkStats, window: i128, topk: i128) -> i128 {
    let (g_sq, g_sk) = (stats.g_sq, stats.g_sk);
    let mean = || g_sk as f64 / g_sq as f64;
    match mode {
        V4Mode::Csa if g_sq <= 0 => window + topk,
        V4Mode::Csa => window + ((mean() / 4.0).ceil() as i128).min(topk),
        V4Mode::Hca if g_sq <= 0 => 0,
        V4Mode::Hca => window + (mean() / 128.0).ceil() as i128,
        V4Mode::Swa => window,
    }
}

/// The DeepSeek-V4 paged decode pseudo ops: one latent KV head, bf16.
fn v4_decode(r: Rec, mode: V4Mode) -> Option<Attn> {
    let mut stats = stats_of(r.input())?;
    (stats.c_sq, stats.c_sk, stats.c_sqsq, stats.c_sqsk) = (0, 0, 0, 0);
    let cfg = v4_config(r.extra("v4_model_name"));
    let h_q = match extra_int(r, "v4_H_Q") {
        Some(h) => h.ok()?,
        None => {
            let tp = extra_int(r, "v4_tp").unwrap_or(Ok(1)).ok()?;
            Num::I(cfg.n_heads).floor_div(tp).ok()?.f64().max(1.0) as i128
        }
    };
    let d_h = extra_int(r, "v4_d_h").unwrap_or(Ok(cfg.d_h)).ok()?;
    let mut n_q = Num::I(stats.g_sq);
    if let Some(first) = r.dims_or_empty().first().and_then(ArgValue::as_list)
        && let Some(v) = first.first()
        && super::pyval::truthy(v)
    {
        n_q = Num::I(int_of(v).ok()?);
    }
    let window = extra_int(r, "v4_window").unwrap_or(Ok(cfg.window)).ok()?;
    let topk = extra_int(r, "v4_index_topk")
        .unwrap_or(Ok(cfg.index_topk))
        .ok()?;
    let w = v4_window(mode, &stats, window, topk);
    let s = Shape {
        n_q,
        h_q,
        h_kv: 1,
        n_kv: Num::I(stats.g_sk),
        d_qk: d_h,
        d_v: d_h,
    };
    Some(
        Attn::new(&s, stats)
            .dtypes(BF16, Some(BF16))
            .sliding_window(w),
    )
}

/// The shared FLOPs of the family.
fn flops(a: &Attn) -> Num {
    let s = &a.stats;
    let h = Num::I(a.h_q);
    let (dqk, dv) = (Num::I(a.d_qk), Num::I(a.d_v));
    let g_sqsk = Num::I(a.cap(s.g_sqsk));
    let ctx = |d: Num| {
        h.mul(Num::I(2).mul(s.c_sqsk).mul(d))
            .sub(h.mul(Num::I(s.c_sqsq).mul(d)))
    };
    let gen_ = |d: Num| h.mul(Num::I(2).mul(g_sqsk).mul(d));
    ctx(dqk).add(ctx(dv)).add(gen_(dqk)).add(gen_(dv))
}

/// The shared bytes of the family, with `bpe` for Q/output/current K-V and
/// `bpe_kv` for cached K/V.
fn bytes(a: &Attn, bpe: i128, bpe_kv: i128) -> Num {
    let s = &a.stats;
    let (hq, hkv) = (Num::I(a.h_q), Num::I(a.h_kv));
    let (dqk, dv) = (a.d_qk, a.d_v);
    let q_side = |sq: i128| {
        let sq = Num::I(sq);
        sq.mul(hq)
            .mul(dqk)
            .add(sq.mul(hq).mul(dv))
            .add(sq.mul(hkv).mul(dqk))
            .add(sq.mul(hkv).mul(dv))
    };
    let kv_side = |sk: i128, sq: i128| {
        let n = Num::I(sk).sub(sq);
        n.mul(hkv).mul(dqk).add(n.mul(hkv).mul(dv))
    };
    let g_sk = a.cap(s.g_sk);
    let q = q_side(s.c_sq).add(q_side(s.g_sq));
    let kv = kv_side(s.c_sk, s.c_sq).add(kv_side(g_sk, s.g_sq));
    q.mul(bpe).add(kv.mul(bpe_kv))
}

/// `name2bpe(dtype) or fallback`.
fn size_or(dtype: Option<&str>, fallback: i128) -> i128 {
    bytes_per_element(dtype).map_or(fallback, |b| b as i128)
}

/// Numbers of a parsed op of the shared formulas.
fn shared(a: Attn, compute: Option<Precision>) -> ModelResult<Evaluation> {
    if a.stats.c_sq == 0 && a.stats.g_sq == 0 {
        return Err(ModelError::NotImplemented);
    }
    let f = flops(&a);
    let b = size_or(a.dtype_q.as_deref(), 2);
    let b_kv = match a.dtype_kv.as_deref() {
        Some(d) if !d.is_empty() => size_or(Some(d), b),
        _ => b,
    };
    let by = bytes(&a, b, b_kv);
    Ok(Evaluation {
        params: a.params,
        flops: f.f64(),
        bytes: Some(by.f64()),
        maf: Some(Maf::Matrix),
        precision: compute,
    })
}

/// The parsed op of a class that uses the shared formulas.
fn parse(kind: Kind, r: Rec) -> ModelResult<Option<Attn>> {
    Ok(match kind {
        Kind::VFromSlot2 => base_v_from_slot2(r)?,
        Kind::TilelangSparse => base(r).map(|mut a| {
            // It reads Concrete Inputs off the event itself, never there.
            a.set_d_v(512);
            a
        }),
        Kind::PagedRagged => paged_ragged(r),
        Kind::PaDecodeGluon => pa_decode_gluon(r),
        Kind::V4Decode(mode) => v4_decode(r, mode),
        _ => base(r),
    })
}

/// `aiter::pa_sparse_prefill_opus_fwd`: the exact (query, KV slot) pair
/// count is `Input Dims[2][0] + Input Dims[5][0]`; no annotation needed.
fn sparse_prefill(r: Rec) -> Option<(Attn, Num, Num)> {
    let q = r.dim(0).ok()?;
    let (n_q, h_q, d_h) = (dim_at(q, 0).ok()?, dim_at(q, 1).ok()?, dim_at(q, 2).ok()?);
    let pairs = r.dim_int(2, 0).ok()? + r.dim_int(5, 0).ok()?;
    let types = r.types().ok()?;
    let dq = types.first()?;
    let dkv = types.get(1).unwrap_or(dq);
    let mut params = vec![
        ("B", Py::Int(1)),
        ("N_Q", ipy(n_q)),
        ("H_Q", ipy(h_q)),
        ("H_V", Py::Int(1)),
        ("H_K", Py::Int(1)),
        ("N_KV", ipy(pairs)),
        ("H_KV", Py::Int(1)),
        ("d_h_qk", ipy(d_h)),
        ("d_h_v", ipy(d_h)),
        ("dropout", Py::Float(0.0)),
        ("causal", Py::Bool(false)),
        ("flash_impl", Py::Bool(true)),
        ("prefill_pairs", ipy(pairs)),
    ];
    params.push(("dtype_Q", Py::Str(dq.clone())));
    params.push(("dtype_KV", Py::Str(dkv.clone())));
    let b = size_or(Some(dq), 2);
    let b_kv = if dkv.is_empty() {
        b
    } else {
        size_or(Some(dkv), b)
    };
    let flops = Num::I(pairs).mul(h_q).mul(2).mul(d_h + d_h);
    let qo = Num::I(2).mul(n_q).mul(h_q).mul(d_h).mul(b);
    let bytes = qo.add(Num::I(pairs).mul(d_h).mul(b_kv));
    let a = Attn {
        params,
        h_q,
        h_kv: 1,
        d_qk: d_h,
        d_v: d_h,
        stats: ChunkStats::default(),
        window: 0,
        dtype_q: Some(dq.clone()),
        dtype_kv: Some(dkv.clone()),
    };
    Some((a, flops, bytes))
}

/// `vllm::gdn_attention_core`: gated delta-net linear attention, 7·d_k·d_v
/// FLOPs per token and value head, `H_V·(d_k + 2·d_v + 2)` elements moved
/// per token at 2 bytes. Its parser does not hide failures: a missing
/// annotation is not modelled.
fn gdn(r: Rec, bwd: bool) -> ModelResult<Evaluation> {
    let Some(stats) = stats_of(r.input()) else {
        return Err(ModelError::NotImplemented);
    };
    let d = Num::I(r.dim_int(0, 1)?);
    let h_v = r.dim_int(1, 1)?;
    let d_v = r.dim_int(3, 2)?;
    let h_k = Num::I(h_v).floor_div(2)?;
    let key_dim = d.sub(Num::I(h_v).mul(d_v)).floor_div(2)?;
    let d_k = key_dim.floor_div(h_k)?;
    let dtype = r.ty(0)?;
    let (c_sq, g_sq) = (stats.c_sq, stats.g_sq);
    let params = vec![
        ("B", Py::Int(1)),
        ("N_Q", ipy(c_sq + g_sq)),
        ("H_Q", h_k.to_py()),
        ("N_KV", Py::Int(0)),
        ("H_KV", h_k.to_py()),
        ("H_V", ipy(h_v)),
        ("H_K", h_k.to_py()),
        ("d_h_qk", d_k.to_py()),
        ("d_h_v", ipy(d_v)),
        ("c_sq", ipy(c_sq)),
        ("c_sk", ipy(c_sq)),
        ("c_sqsq", Py::Int(0)),
        ("c_sqsk", Py::Int(0)),
        ("g_sq", ipy(g_sq)),
        ("g_sk", ipy(g_sq)),
        ("g_sqsq", Py::Int(0)),
        ("g_sqsk", Py::Int(0)),
        ("dtype_Q", Py::Str(dtype.to_string())),
    ];
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let tokens = Num::I(c_sq).add(g_sq);
    if tokens.eq(Num::I(0)) {
        return Err(ModelError::NotImplemented);
    }
    let flops = tokens.mul(h_v).mul(7).mul(d_v).mul(d_k);
    let per_token = Num::I(h_v).mul(d_k.add(Num::I(2).mul(d_v)).add(2));
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: Some(tokens.mul(per_token).mul(2).f64()),
        maf: Some(Maf::Matrix),
        precision: precision(Some(dtype)),
    })
}

/// `sglang::store_cache`: K and V rows read and written into the paged
/// cache, no FLOPs: bytes = 4·numel(K)·bpe (2 when unknown).
fn store_cache(r: Rec, bwd: bool) -> ModelResult<Evaluation> {
    let k = r.dim(0)?;
    let op_shape = tuple_of(k)?;
    let nelems = numel(k)?;
    let dtype = r.ty(0)?;
    let params = vec![
        ("op_shape", op_shape),
        ("nelems", nelems.to_py()),
        ("dtype", Py::Str(dtype.to_string())),
    ];
    if bwd {
        return invalid("store_cache has no backward model");
    }
    let b = if dtype.is_empty() {
        2
    } else {
        size_or(Some(dtype), 2)
    };
    Ok(Evaluation {
        params,
        flops: 0.0,
        bytes: Some(Num::I(4).mul(nelems).mul(b).f64()),
        maf: Some(Maf::Vector),
        precision: precision(Some(dtype)),
    })
}

/// Evaluates an inference attention class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    match kind {
        Kind::StoreCache => return store_cache(r, bwd),
        Kind::Gdn => return gdn(r, bwd),
        Kind::SparsePrefill => {
            let parsed = sparse_prefill(r);
            if bwd {
                return Err(ModelError::NotImplemented);
            }
            let Some((a, flops, bytes)) = parsed else {
                return invalid("no perf estimate for these arguments");
            };
            let dq = a.dtype_q.as_deref().filter(|d| !d.is_empty());
            return Ok(Evaluation {
                params: a.params,
                flops: flops.f64(),
                bytes: Some(bytes.f64()),
                maf: Some(Maf::Matrix),
                precision: precision(Some(dq.unwrap_or(BF16))),
            });
        }
        _ => {}
    }
    let parsed = parse(kind, r)?;
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let Some(a) = parsed else {
        return invalid("no perf estimate: arguments or annotation do not parse");
    };
    let compute = if matches!(kind, Kind::V4Decode(_)) {
        precision(Some(BF16))
    } else {
        precision(a.dtype_q.as_deref())
    };
    shared(a, compute)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";
    const FP8: &str = "c10::Float8_e4m3fn";

    fn with(mut i: OpInput<'static>, ann: &'static str) -> OpInput<'static> {
        i.annotation = Some(ann);
        i
    }

    fn param(e: &Evaluation, key: &str) -> String {
        let p = e.params.iter().find(|(k, _)| *k == key);
        p.map(|(_, v)| v.to_str())
            .unwrap_or_else(|| panic!("no {key}"))
    }

    fn vllm_decode() -> OpInput<'static> {
        let i = test_input(
            "vllm::unified_attention_with_output",
            "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]",
            &[BF, BF, BF, BF, "", "", "", BF],
            None,
            &["", "", "", "", "", "", "", ""],
        );
        with(
            i,
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
        )
    }

    #[test]
    fn vllm_decode_step() {
        let e = evaluate("vllm_unified_attention_with_output", &vllm_decode(), false).unwrap();
        let keys: Vec<_> = e.params.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "B",
                "N_Q",
                "H_Q",
                "H_V",
                "H_K",
                "N_KV",
                "H_KV",
                "d_h_qk",
                "d_h_v",
                "dropout",
                "causal",
                "flash_impl",
                "c_sq",
                "c_sk",
                "c_sqsq",
                "c_sqsk",
                "g_sq",
                "g_sk",
                "g_sqsq",
                "g_sqsk",
                "dtype_Q",
                "dtype_KV"
            ]
        );
        assert_eq!(param(&e, "dropout"), "0.0");
        assert_eq!(param(&e, "g_sk"), "55086");
        // Generation only: H_Q·2·g_sqsk·(d_qk + d_v) = 64·2·55,086·128
        // = 902,529,024.
        assert_eq!(e.flops, 902_529_024.0);
        // Q side 32·(64·64 + 64·64 + 8·64 + 8·64) = 294,912 elements; cached
        // (55,086 − 32)·8·(64 + 64) = 56,375,296; all bf16:
        // (294,912 + 56,375,296)·2 = 113,340,416 B (108.08984375 MiB).
        assert_eq!(e.bytes, Some(113_340_416.0));
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn mixed_step_with_an_fp8_cache() {
        // H_Q 4, H_KV 2, d 8; context sq 8 sk 16 sqsq 64 sqsk 128,
        // generation sq 2 sk 40 sqsq 2 sqsk 40.
        let i = test_input(
            "aiter::mha_varlen_fwd",
            "[[10, 4, 8], [100, 16, 2, 8]]",
            &[BF, FP8],
            None,
            &[],
        );
        let i = with(
            i,
            "execute_10_context_1(sq8sk16sqsq64sqsk128)_generation_2(sq2sk40sqsq2sqsk40)",
        );
        let e = evaluate("mha_varlen_fwd", &i, false).unwrap();
        // ctx: 2 × [4·2·128·8 − 4·64·8] = 2 × 6,144; gen: 2 × 4·2·40·8 =
        // 2 × 2,560. Total 17,408.
        assert_eq!(e.flops, 17_408.0);
        // Q side (bf16): ctx 8·(32 + 32 + 16 + 16) = 768, gen 2·96 = 192 →
        // 960·2 = 1,920. Cached (fp8): (16−8)·2·16 + (40−2)·2·16 = 256 +
        // 1,216 = 1,472·1. Total 3,392.
        assert_eq!(e.bytes, Some(3_392.0));
        assert_eq!(param(&e, "N_KV"), "16");
    }

    #[test]
    fn failures_and_backward() {
        let mut i = vllm_decode();
        assert_eq!(
            evaluate("vllm_unified_attention_with_output", &i, true),
            Err(ModelError::NotImplemented)
        );
        // No annotation: no estimate (but still no backward).
        i.annotation = None;
        assert!(matches!(
            evaluate("vllm_unified_attention_with_output", &i, false),
            Err(ModelError::Invalid(_))
        ));
        assert_eq!(
            evaluate("vllm_unified_attention_with_output", &i, true),
            Err(ModelError::NotImplemented)
        );
        // An idle step (no tokens) is not modelled.
        i.annotation = Some("execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)");
        assert_eq!(
            evaluate("vllm_unified_attention_with_output", &i, false),
            Err(ModelError::NotImplemented)
        );
    }

    #[test]
    fn sglang_paged_ragged_attention() {
        let i = test_input(
            "sglang_profiler::attention_paged_attention_ragged",
            "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], [20971520], [4096], [], [1], [1], []]",
            &[
                BF,
                "unsigned char",
                BF,
                BF,
                BF,
                "int",
                "int",
                "int",
                "",
                "float",
                "float",
                "",
            ],
            None,
            &[],
        );
        let i = with(
            i,
            "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)",
        );
        let e = evaluate("aiter_paged_attention_ragged", &i, false).unwrap();
        assert_eq!(param(&e, "N_KV"), "32785");
        assert_eq!(e.params.last().unwrap().0, "dtype_Q");
        // 32·2·32,785·256 = 537,149,440.
        assert_eq!(e.flops, 537_149_440.0);
        // Q side 32·(32·128·2 + 8·128·2) = 327,680; cached (32,785 − 32)·8·256
        // = 67,078,144; ×2 B = 134,811,648 (128.56640625 MiB).
        assert_eq!(e.bytes, Some(134_811_648.0));
    }

    #[test]
    fn varlen_v_head_dim_and_tilelang() {
        // MLA-like: Q/K head dim 192, V 128; one 8-token prefill chunk.
        let i = test_input(
            "aiter::fmha_v3_varlen_fwd",
            "[[8, 16, 192], [8, 16, 192], [8, 16, 128]]",
            &[BF, BF, BF],
            None,
            &[],
        );
        let i = with(
            i,
            "execute_8_context_1(sq8sk8sqsq64sqsk64)_generation_0(sq0sk0sqsq0sqsk0)",
        );
        let e = evaluate("aiter_fmha_v3_varlen_fwd", &i, false).unwrap();
        assert_eq!(param(&e, "d_h_v"), "128");
        // 16·(2·64 − 64)·192 + 16·(2·64 − 64)·128 = 196,608 + 131,072.
        assert_eq!(e.flops, 327_680.0);
        // 8·16·(192 + 128 + 192 + 128) = 81,920 elements × 2 B; no history.
        assert_eq!(e.bytes, Some(163_840.0));
        // The tilelang sparse MLA always takes d_v = 512.
        let e = evaluate("mla_tilelang_sparse_fwd", &i, false).unwrap();
        assert_eq!(param(&e, "d_h_v"), "512");
        // 16·64·192 + 16·64·512 = 196,608 + 524,288.
        assert_eq!(e.flops, 720_896.0);
    }

    #[test]
    fn gluon_decode_with_a_sliding_window() {
        let mut ci = vec![""; 19];
        ci.push("128");
        let i = test_input(
            "aiter::pa_decode_gluon",
            "[[4, 8, 64], [], [100, 2, 16, 64]]",
            &[BF, "", FP8],
            None,
            &ci,
        );
        let i = with(
            i,
            "execute_5_context_1(sq1sk1sqsq1sqsk1)_generation_4(sq4sk4000sqsq4sqsk4000)",
        );
        let e = evaluate("pa_decode_gluon", &i, false).unwrap();
        assert_eq!(param(&e, "c_sq"), "0");
        assert_eq!(param(&e, "sliding_window"), "128");
        // Window 128 caps g_sqsk and g_sk at 4·128 = 512:
        // 8·2·512·128 = 1,048,576 FLOPs.
        assert_eq!(e.flops, 1_048_576.0);
        // Q side 4·(8·64·2 + 2·64·2) = 5,120 × 2 B = 10,240; cached
        // (512 − 4)·2·128 = 130,048 × 1 B. Total 140,288.
        assert_eq!(e.bytes, Some(140_288.0));
    }

    #[test]
    fn deepseek_v4_decode_modes() {
        let i = test_input(
            "pseudo_v4_paged_decode_csa",
            "[[2, 64, 576]]",
            &[BF],
            None,
            &[],
        );
        let i = with(
            i,
            "execute_2_context_0(sq0sk0sqsq0sqsk0)_generation_2(sq2sk8000sqsq2sqsk8000)",
        );
        // Flash defaults: 64 heads, d 512, window 128, top-k 512. Mean
        // context 4,000: csa span 128 + min(ceil(4000/4), 512) = 640 → cap
        // 2·640 = 1,280.
        let e = evaluate("pseudo_v4_paged_decode_csa", &i, false).unwrap();
        assert_eq!(param(&e, "sliding_window"), "640");
        assert_eq!(param(&e, "H_Q"), "64");
        assert_eq!(param(&e, "dtype_Q"), "c10::bfloat16");
        // 64·2·1,280·1,024 = 167,772,160.
        assert_eq!(e.flops, 167_772_160.0);
        // Q side 2·(64·1,024 + 1·1,024) = 133,120 × 2; cached (1,280 − 2)·1,024
        // × 2 = 2,617,344. Total 2,883,584.
        assert_eq!(e.bytes, Some(2_883_584.0));
        assert_eq!(e.compute_spec(), "matrix_bf16");
        // hca: 128 + ceil(4000/128) = 160 → 320: 64·2·320·1,024.
        let e = evaluate("pseudo_v4_paged_decode_hca", &i, false).unwrap();
        assert_eq!(e.flops, 41_943_040.0);
        // swa: 128 → 256.
        let e = evaluate("pseudo_v4_paged_decode_swa", &i, false).unwrap();
        assert_eq!(e.flops, 33_554_432.0);
    }

    #[test]
    fn sparse_prefill_pairs() {
        let i = test_input(
            "aiter::pa_sparse_prefill_opus_fwd",
            "[[10, 16, 64], [], [300], [], [], [20]]",
            &[BF, FP8],
            None,
            &[],
        );
        let e = evaluate("pa_sparse_prefill_opus_fwd", &i, false).unwrap();
        assert_eq!(param(&e, "prefill_pairs"), "320");
        // 320 pairs · 16 heads · 2 · (64 + 64) = 1,310,720.
        assert_eq!(e.flops, 1_310_720.0);
        // Q and output 2·10·16·64·2 = 40,960; KV 320·64·1 = 20,480.
        assert_eq!(e.bytes, Some(61_440.0));
        assert_eq!(e.compute_spec(), "matrix_bf16");
    }

    #[test]
    fn gated_delta_net() {
        // H_V 4, d_v 8, D = 96 → H_K 2, d_k = ((96 − 32) // 2) // 2 = 16.
        let i = test_input(
            "vllm::gdn_attention_core",
            "[[8, 96], [8, 4], [8, 4], [8, 4, 8], []]",
            &[BF, BF, BF, BF, ""],
            None,
            &[],
        );
        assert_eq!(
            evaluate("gdn_attention_core", &i, false),
            Err(ModelError::NotImplemented)
        );
        let i = with(
            i,
            "execute_8_context_1(sq3sk3sqsq9sqsk9)_generation_5(sq5sk50sqsq5sqsk50)",
        );
        let e = evaluate("gdn_attention_core", &i, false).unwrap();
        assert_eq!(param(&e, "d_h_qk"), "16");
        assert_eq!(param(&e, "N_Q"), "8");
        // 8 tokens · 4 · 7 · 8 · 16 = 28,672; bytes 8 · 4·(16 + 16 + 2) · 2.
        assert_eq!((e.flops, e.bytes), (28_672.0, Some(2_176.0)));
    }

    #[test]
    fn store_cache_moves_k_and_v_twice() {
        let i = test_input(
            "sglang::store_cache",
            "[[32, 1024], [32, 1024], [835874, 1024], [835874, 1024], [32], [], []]",
            &[BF, BF, BF, BF, "long int", "Scalar", "Scalar"],
            None,
            &["", "", "", "", "", "2048", "0"],
        );
        let e = evaluate("sglang_store_cache", &i, false).unwrap();
        assert_eq!(param(&e, "op_shape"), "(32, 1024)");
        assert_eq!(param(&e, "nelems"), "32768");
        // 4 · 32,768 · 2 B = 262,144 (0.25 MiB), no FLOPs.
        assert_eq!((e.flops, e.bytes), (0.0, Some(262_144.0)));
        assert_eq!(e.compute_spec(), "vector_bf16");
    }
}
