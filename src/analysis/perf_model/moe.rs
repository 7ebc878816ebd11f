//! Mixture-of-experts GEMMs: fused (one kernel for both projections,
//! family `MoE_fused`) and unfused (an up/gate and a down projection,
//! family `MoE_unfused`), for aiter (1-stage, block-scale, CK 2-stage),
//! vLLM's Triton and GPTQ/AWQ paths, flydsl and SGLang's Triton grouped
//! GEMM.
//!
//! With M tokens, hidden K, intermediate N, E experts, top-k routing and
//! gating factor g (2 for a gated SwiGLU up projection, else 1), the
//! expected number of experts hit by M uniformly routed tokens is
//! `E_active = E·(1 − ((E − topk)/E)^M)`, and
//!
//! * up:   `flops = 2·M·K·N·topk·g`, `bytes = M·K·b_in + E_active·g·K·N·b_w
//!   + M·N·topk·b_out`;
//! * down: `flops = 2·M·N·K·topk`, `bytes = M·N·topk·b_in + E_active·N·K·b_w
//!   + M·K·b_out`;
//! * fused: up + down + `M·K·(2·topk − 1)` for the weighted sum, `bytes =
//!   M·K·b_in + E_active·N·K·b_w·(g + 1) + M·K·b_out`.
//!
//! Element sizes come from the reference's MoE table ([`moe_dtype_bytes`],
//! FP4 = 0.5), with a per-class default for unknown names. The vLLM Triton
//! and GPTQ/AWQ pseudo ops read `MoE topk` / `MoE GEMM gated` from their
//! extra args and the Triton ones the weight dtype from the first kernel's
//! name. No class has a backward model.

use super::pyval::{Num, Rec, dim_at, int_of, invalid, ipy, precision, unpack};
use super::{Evaluation, Maf, ModelError, ModelResult, OpInput, Precision, Py, precision_of};
use crate::trace::ArgValue;

/// The MoE GEMM classes: which parser reads the experts, and the stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Triton's `invoke_fused_moe_kernel` grouped GEMM.
    InvokeGroupedGemm,
    /// aiter's fused one-stage MoE.
    Fused1Stage,
    /// aiter's fused block-scaled MoE.
    FusedBlockscale,
    /// aiter's CK-tile up projection.
    CktileUp,
    /// aiter's CK-tile down projection.
    CktileDown,
    /// aiter's CK stage 1.
    CkStage1,
    /// aiter's CK stage 2.
    CkStage2,
    /// Triton's unfused MoE, one stage.
    TritonUnfused(Stage),
    /// The GPTQ/AWQ MoE, one stage.
    GptqAwq(Stage),
    /// FlyDSL's MoE stages (at the weights' precision).
    Flydsl(Stage),
}

/// Bytes per element of the MoE models' dtype names (exact spelling).
pub fn moe_dtype_bytes(dtype: &str) -> Option<f64> {
    Some(match dtype {
        "Float8_e4m3fn" | "Float8_e4m3fnuz" | "Float8_e5m2" | "Float8_e5m2fnuz" | "FP8" => 1.0,
        "c10::Float8_e4m3fn" | "c10::Float8_e4m3fnuz" => 1.0,
        "FP4" | "c10::Float4_e2m1fn_x2" => 0.5,
        "BFloat16" | "Float16" | "Half" | "c10::BFloat16" | "c10::Half" => 2.0,
        "Float32" | "Float" | "c10::Float" => 4.0,
        _ => return None,
    })
}

/// `DTYPE_TO_BYTES.get(dtype, default)` as a Python number.
fn size_or(dtype: Option<&str>, default: i128) -> Num {
    match dtype.and_then(moe_dtype_bytes) {
        Some(b) if b.fract() == 0.0 => Num::I(b as i128),
        Some(b) => Num::F(b),
        None => Num::I(default),
    }
}

/// Which projection a class models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Both projections in one kernel.
    Fused,
    /// The up (gate-up) projection.
    Up,
    /// The down projection.
    Down,
}

/// What a parser found.
struct Moe {
    params: Vec<(&'static str, Py)>,
    m: Num,
    k: Num,
    n: Num,
    e: Num,
    topk: Num,
    gated: bool,
    /// Element sizes of input, weights and output (None: a dtype the
    /// model refuses when asked for bytes).
    sizes: Option<(Num, Num, Num)>,
    precision: Option<Precision>,
}

/// The common key order `num_tokens … topk[, gated]`.
fn head(
    m: i128,
    k: i128,
    n: i128,
    e: i128,
    topk: &Py,
    gated: Option<&Py>,
) -> Vec<(&'static str, Py)> {
    let mut p = vec![
        ("num_tokens", ipy(m)),
        ("hidden_dim", ipy(k)),
        ("inter_dim", ipy(n)),
        ("num_experts", ipy(e)),
        ("topk", topk.clone()),
    ];
    if let Some(g) = gated {
        p.push(("gated", g.clone()));
    }
    p
}

fn dtype_param(p: &mut Vec<(&'static str, Py)>, key: &'static str, d: Option<&str>) {
    p.push((key, Py::opt_str(d)));
}

/// Integer shapes of an aiter/flydsl MoE op; `gated` None for a down
/// projection (no `gated` key).
struct Shape {
    m: i128,
    k: i128,
    n: i128,
    e: i128,
    topk: i128,
    gated: Option<bool>,
}

impl Shape {
    fn new(m: i128, k: i128, n: i128, e: i128, topk: i128, gated: Option<bool>) -> Shape {
        Shape {
            m,
            k,
            n,
            e,
            topk,
            gated,
        }
    }
}

/// Dtype names of an aiter/flydsl MoE op; the output's only where recorded.
struct Dtypes<'a> {
    input: &'a str,
    weight: &'a str,
    output: Option<&'a str>,
}

/// Input and weight dtypes at `Input type[input]`, `[weight]`; no output.
fn in_weight_dtypes(r: Rec, input: usize, weight: usize) -> ModelResult<Dtypes> {
    Ok(Dtypes {
        input: r.ty(input)?,
        weight: r.ty(weight)?,
        output: None,
    })
}

impl Moe {
    /// An aiter/flydsl op: keys `num_tokens … [gated]` then its dtypes;
    /// element sizes from the dtypes (defaults: input `in_default`, weights
    /// 1, output 2, the output taking the input's dtype when not recorded).
    /// Precision: the input dtype's.
    fn aiter(s: Shape, d: Dtypes, in_default: i128) -> Moe {
        let gated = s.gated.map(Py::Bool);
        let mut params = head(s.m, s.k, s.n, s.e, &ipy(s.topk), gated.as_ref());
        dtype_param(&mut params, "input_dtype", Some(d.input));
        dtype_param(&mut params, "weight_dtype", Some(d.weight));
        if d.output.is_some() {
            dtype_param(&mut params, "output_dtype", d.output);
        }
        let b_out = size_or(Some(d.output.unwrap_or(d.input)), 2);
        Moe {
            params,
            m: Num::I(s.m),
            k: Num::I(s.k),
            n: Num::I(s.n),
            e: Num::I(s.e),
            topk: Num::I(s.topk),
            gated: s.gated.unwrap_or(false),
            sizes: Some((
                size_or(Some(d.input), in_default),
                size_or(Some(d.weight), 1),
                b_out,
            )),
            precision: precision(Some(d.input)),
        }
    }
}

/// Input, weight and output dtypes at `Input type[0..3]`.
fn three_dtypes(r: Rec) -> ModelResult<Dtypes> {
    Ok(Dtypes {
        input: r.ty(0)?,
        weight: r.ty(1)?,
        output: Some(r.ty(2)?),
    })
}

/// M from `x[0]`, `(E, rows, ·) = w1`, `(E, K, N) = w2` with the INT4/FP4
/// packing ratio `K // w1[-1]` applied to N: `[M, K, N, rows]`.
fn packed_weights(r: Rec, x: usize, w1: usize, w2: usize) -> ModelResult<[i128; 4]> {
    let m = r.dim_int(x, 0)?;
    let w1v = r.dim(w1)?;
    let [_, rows, _] = unpack::<3>(w1v)?;
    let [_, k, n] = unpack::<3>(r.dim(w2)?)?;
    let ratio = Num::I(k).floor_div(dim_at(w1v, -1)?)?;
    let n = Num::I(n).mul(ratio);
    let Num::I(n) = n else {
        return invalid("inter_dim out of range");
    };
    Ok([m, k, n, rows])
}

/// aiter 1-stage fused MoE and the flydsl stages (shared layout): x, w1,
/// w2, topk weights `(M, topk)` at 0..3.
fn fused_layout(r: Rec) -> ModelResult<Moe> {
    let [m, k, n, rows] = packed_weights(r, 0, 1, 2)?;
    let e = r.dim_int(1, 0)?;
    let topk = r.dim_int(3, 1)?;
    let gated = Some(rows == 2 * n);
    let shape = Shape::new(m, k, n, e, topk, gated);
    Ok(Moe::aiter(shape, in_weight_dtypes(r, 0, 1)?, 2))
}

/// aiter's FP8 block-scale fused MoE: out at 0, w1/w2 at 2/3, top-k at
/// Concrete Inputs[8].
fn blockscale(r: Rec) -> ModelResult<Moe> {
    let [m, k, n, rows] = packed_weights(r, 0, 2, 3)?;
    let e = r.dim_int(2, 0)?;
    let ci = r.concrete_or_empty();
    let topk = match ci.get(8) {
        Some(t) if !t.is_empty() => super::pyval::py_int(t)?,
        _ => return invalid("topk missing from Concrete Inputs[8]"),
    };
    let gated = rows == 2 * n;
    let types = r.types_or_empty();
    let get = |i: usize| match types.get(i) {
        Some(t) => Ok(t.as_str()),
        None => invalid(format!("Input type[{i}] out of range")),
    };
    let (output, input, weight) = (get(0)?, get(1)?, get(2)?);
    let precision = match input {
        "" => None,
        "fp8" | "bf16" => Some(Precision::Fp8),
        d => precision_of(Some(d)),
    };
    let d = Dtypes {
        input,
        weight,
        output: Some(output),
    };
    let mut moe = Moe::aiter(Shape::new(m, k, n, e, topk, Some(gated)), d, 1);
    moe.precision = precision;
    Ok(moe)
}

/// aiter CK-tile 2-stage GEMM1: x `(M, K)`, w1 `(E, rows, ·)`, out
/// `(M, topk, N)`.
fn cktile_up(r: Rec) -> ModelResult<Moe> {
    let [m, k] = unpack::<2>(r.dim(0)?)?;
    let [e, rows, _] = unpack::<3>(r.dim(1)?)?;
    let [_, topk, n] = unpack::<3>(r.dim(2)?)?;
    let gated = Some(rows == 2 * n);
    let shape = Shape::new(m, k, n, e, topk, gated);
    Ok(Moe::aiter(shape, three_dtypes(r)?, 2))
}

/// aiter CK-tile 2-stage GEMM2: x `(M, topk, N)`, w `(E, K, ·)`.
fn cktile_down(r: Rec) -> ModelResult<Moe> {
    let [m, topk, n] = unpack::<3>(r.dim(0)?)?;
    let [e, k, _] = unpack::<3>(r.dim(1)?)?;
    let shape = Shape::new(m, k, n, e, topk, None);
    Ok(Moe::aiter(shape, three_dtypes(r)?, 2))
}

/// aiter CK stage 1: x at 0, w1 at 1, w2 `(E, K, N)` at 2, out `(M, topk,
/// ·)` at 6.
fn ck_stage1(r: Rec) -> ModelResult<Moe> {
    let m = r.dim_int(0, 0)?;
    let w1 = r.dim(1)?;
    let [e, k, n] = unpack::<3>(r.dim(2)?)?;
    let ratio = Num::I(k).floor_div(dim_at(w1, -1)?)?;
    let Num::I(n) = Num::I(n).mul(ratio) else {
        return invalid("inter_dim out of range");
    };
    let topk = r.dim_int(6, 1)?;
    let gated = Some(dim_at(w1, 1)? == 2 * n);
    let shape = Shape::new(m, k, n, e, topk, gated);
    Ok(Moe::aiter(shape, in_weight_dtypes(r, 0, 1)?, 2))
}

/// aiter CK stage 2: x `(M, topk, N)` at 0, w1 at 1, w2 `(E, K, ·)` at 2.
fn ck_stage2(r: Rec) -> ModelResult<Moe> {
    let [m, topk, n] = unpack::<3>(r.dim(0)?)?;
    let w1 = r.dim(1)?;
    let [e, k, _] = unpack::<3>(r.dim(2)?)?;
    let packed = matches!(w1, ArgValue::List(a) if !a.is_empty());
    let ratio = if packed {
        Num::I(k).floor_div(dim_at(w1, -1)?)?
    } else {
        Num::I(1)
    };
    let Num::I(n) = Num::I(n).mul(ratio) else {
        return invalid("inter_dim out of range");
    };
    let shape = Shape::new(m, k, n, e, topk, None);
    Ok(Moe::aiter(shape, in_weight_dtypes(r, 0, 2)?, 2))
}

/// A number held in an extra arg (`MoE topk`).
fn extra_num(r: Rec, key: &str) -> ModelResult<(Num, Py)> {
    let Some(v) = r.extra(key) else {
        return invalid(format!("'{key}' not found in event args"));
    };
    let n = match v {
        ArgValue::Float(x) => Num::F(*x),
        other => Num::I(int_of(other)?),
    };
    Ok((n, Py::from_arg(v, false)))
}

/// vLLM's Triton unfused MoE pseudo ops: x `(M, K)`, router logits
/// `(M, E)`; N = K (not in the trace); the weight dtype from the first
/// kernel's name.
fn triton_unfused(r: Rec) -> ModelResult<Moe> {
    let dims = r.dims()?;
    if dims.len() < 2 {
        return invalid("unfused MoE needs at least 2 Input Dims");
    }
    let (m, k, e) = (
        dim_at(&dims[0], 0)?,
        dim_at(&dims[0], 1)?,
        dim_at(&dims[1], 1)?,
    );
    let (topk, topk_py) = extra_num(r, "MoE topk")?;
    let Some(gated) = r.extra("MoE GEMM gated") else {
        return invalid("'MoE GEMM gated' not found in event args");
    };
    let Some(kernel) = r.input().kernel_names.first() else {
        return invalid("Kernel details not found in event");
    };
    let lower = kernel.to_lowercase();
    let weight = if lower.contains("mxfp4") || lower.contains("fp4") {
        Some("FP4")
    } else if lower.contains("fp8") || lower.contains("e4m3") {
        Some("FP8")
    } else {
        None
    };
    let types = r.types_or_empty();
    if types.len() < 2 {
        return invalid("unfused MoE needs at least 2 Input types");
    }
    let din = types[0].as_str();
    let mut params = head(m, k, k, e, &topk_py, Some(&Py::from_arg(gated, false)));
    dtype_param(&mut params, "input_dtype", Some(din));
    dtype_param(&mut params, "weight_dtype", weight);
    let sizes = match (moe_dtype_bytes(din), weight.and_then(moe_dtype_bytes)) {
        (Some(_), Some(_)) => {
            let b_in = size_or(Some(din), 0);
            Some((b_in, size_or(weight, 0), b_in))
        }
        _ => None,
    };
    Ok(Moe {
        params,
        m: Num::I(m),
        k: Num::I(k),
        n: Num::I(k),
        e: Num::I(e),
        topk,
        gated: super::pyval::truthy(gated),
        sizes,
        precision: precision(weight),
    })
}

/// vLLM's GPTQ/AWQ INT4 MoE pseudo ops (`outplace_fused_experts`): x
/// `(M, K)` at 0; up reads w1 `(E, rows, ·)` at 1 (N = rows/2 when gated),
/// down w2 `(E, K, N/2)` at 2; weights 0.5 byte per element.
fn gptq_awq(r: Rec, up: bool) -> ModelResult<Moe> {
    let (m, k) = (r.dim_int(0, 0)?, r.dim_int(0, 1)?);
    let (e, n) = if up {
        (r.dim_int(1, 0)?, r.dim_int(1, 1)?)
    } else {
        (r.dim_int(2, 0)?, r.dim_int(2, 2)? * 2)
    };
    let (topk, topk_py) = extra_num(r, "MoE topk")?;
    let gated_v = r.extra("MoE GEMM gated");
    let gated = gated_v.is_none_or(super::pyval::truthy);
    let n = if up && gated {
        Num::I(n).floor_div(2)?
    } else {
        Num::I(n)
    };
    let Num::I(n) = n else {
        return invalid("inter_dim out of range");
    };
    let din = match &r.input().types {
        Some(t) => match t.first() {
            Some(d) => d.as_str(),
            None => return invalid("Input type[0] out of range"),
        },
        None => "BFloat16",
    };
    let gated_py = gated_v.map_or(Py::Bool(true), |v| Py::from_arg(v, false));
    let mut params = head(m, k, n, e, &topk_py, up.then_some(&gated_py));
    dtype_param(&mut params, "input_dtype", Some(din));
    let b_in = size_or(Some(din), 2);
    Ok(Moe {
        params,
        m: Num::I(m),
        k: Num::I(k),
        n: Num::I(n),
        e: Num::I(e),
        topk,
        gated: up && gated,
        sizes: Some((b_in, Num::F(0.5), b_in)),
        precision: precision(Some(din)),
    })
}

/// `E·(1 − ((E − topk)/E)^M)`.
fn active_experts(e: Num, topk: Num, m: Num) -> ModelResult<Num> {
    let share = e.sub(topk).div(e)?.powf(m)?;
    Ok(e.mul(Num::I(1).sub(share)))
}

/// FLOPs and bytes of a parsed op.
fn numbers(p: &Moe, stage: Stage) -> ModelResult<(Num, Num)> {
    let (m, k, n, topk) = (p.m, p.k, p.n, p.topk);
    let g = if p.gated { 2 } else { 1 };
    let up = Num::I(2).mul(m).mul(k).mul(n).mul(topk).mul(g);
    let down = Num::I(2).mul(m).mul(n).mul(k).mul(topk);
    let flops = match stage {
        Stage::Up => up,
        Stage::Down => down,
        Stage::Fused => {
            let sum = m.mul(k).mul(Num::I(2).mul(topk).sub(1));
            up.add(Num::I(2).mul(m).mul(k).mul(n).mul(topk)).add(sum)
        }
    };
    let Some((b_in, b_w, b_out)) = p.sizes else {
        return invalid("unknown MoE dtype");
    };
    let ea = active_experts(p.e, topk, m)?;
    let bytes = match stage {
        Stage::Up => m
            .mul(k)
            .mul(b_in)
            .add(ea.mul(g).mul(k).mul(n).mul(b_w))
            .add(m.mul(n).mul(topk).mul(b_out)),
        Stage::Down => m
            .mul(n)
            .mul(topk)
            .mul(b_in)
            .add(ea.mul(n).mul(k).mul(b_w))
            .add(m.mul(k).mul(b_out)),
        Stage::Fused => m
            .mul(k)
            .mul(b_in)
            .add(ea.mul(n).mul(k).mul(b_w).mul(g))
            .add(ea.mul(n).mul(k).mul(b_w))
            .add(m.mul(k).mul(b_out)),
    };
    Ok((flops, bytes))
}

/// SGLang's Triton `invoke_fused_moe_kernel`: one grouped GEMM of
/// `tokens·topk` rows against W `(E, N, K)` at slot 1, topk ids
/// `(tokens, topk)` at slot 8.
fn invoke_grouped_gemm(r: Rec, bwd: bool) -> ModelResult<Evaluation> {
    let dims = r.dims()?;
    if dims.len() < 9 {
        return invalid("invoke_fused_moe_kernel needs at least 9 Input Dims");
    }
    let [e, n, k] = unpack::<3>(&dims[1])?;
    let [tokens, topk] = unpack::<2>(&dims[8])?;
    let work = Num::I(tokens).mul(topk);
    let types = r.types_or_empty();
    let din = types.first().map(String::as_str);
    let dw = types.get(1).map(String::as_str);
    let dout = types
        .get(3)
        .map(String::as_str)
        .filter(|d| !d.is_empty())
        .or(din);
    let mut params = vec![
        ("m_work", work.to_py()),
        ("num_tokens", ipy(tokens)),
        ("topk", ipy(topk)),
        ("N", ipy(n)),
        ("K", ipy(k)),
        ("num_experts", ipy(e)),
    ];
    dtype_param(&mut params, "input_dtype", din);
    dtype_param(&mut params, "weight_dtype", dw);
    dtype_param(&mut params, "output_dtype", dout);
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let flops = Num::I(2).mul(work).mul(n).mul(k);
    let ea = if e > 0 {
        active_experts(Num::I(e), Num::I(topk), Num::I(tokens))?
    } else {
        Num::I(0)
    };
    let bytes = work
        .mul(k)
        .mul(size_or(din, 2))
        .add(ea.mul(n).mul(k).mul(size_or(dw, 1)))
        .add(work.mul(n).mul(size_or(dout, 2)));
    Ok(Evaluation {
        params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Matrix),
        precision: precision(dw),
    })
}

/// Evaluates an MoE class on `input`.
pub fn evaluate(kind: Kind, input: &OpInput, bwd: bool) -> ModelResult<Evaluation> {
    let r = Rec::new(input);
    let (p, stage) = match kind {
        Kind::InvokeGroupedGemm => return invoke_grouped_gemm(r, bwd),
        Kind::Fused1Stage => (fused_layout(r)?, Stage::Fused),
        Kind::FusedBlockscale => (blockscale(r)?, Stage::Fused),
        Kind::CktileUp => (cktile_up(r)?, Stage::Up),
        Kind::CktileDown => (cktile_down(r)?, Stage::Down),
        Kind::CkStage1 => (ck_stage1(r)?, Stage::Up),
        Kind::CkStage2 => (ck_stage2(r)?, Stage::Down),
        Kind::TritonUnfused(stage) => (triton_unfused(r)?, stage),
        Kind::GptqAwq(stage) => (gptq_awq(r, stage == Stage::Up)?, stage),
        Kind::Flydsl(stage) => {
            let mut p = fused_layout(r)?;
            // The flydsl GEMMs run at the weights' (FP4) precision.
            p.precision = precision(r.types_or_empty().get(1).map(String::as_str));
            (p, stage)
        }
    };
    if bwd {
        return Err(ModelError::NotImplemented);
    }
    let (flops, bytes) = numbers(&p, stage)?;
    Ok(Evaluation {
        params: p.params,
        flops: flops.f64(),
        bytes: Some(bytes.f64()),
        maf: Some(Maf::Matrix),
        precision: p.precision,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{evaluate, test_input};
    use super::*;

    const BF: &str = "c10::BFloat16";
    const F8: &str = "c10::Float8_e4m3fnuz";

    fn extra(pairs: Vec<(&str, ArgValue)>) -> &'static [(Box<str>, ArgValue)] {
        let v: Vec<(Box<str>, ArgValue)> = pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
        Box::leak(v.into_boxed_slice())
    }

    fn param(e: &Evaluation, key: &str) -> String {
        let p = e.params.iter().find(|(k, _)| *k == key);
        p.map(|(_, v)| v.to_str())
            .unwrap_or_else(|| panic!("no {key}"))
    }

    #[test]
    fn vllm_triton_unfused_pseudo_ops() {
        let mut i = test_input(
            "pseudo_op::moe_triton_unfused_up",
            "[[32, 3072], [32, 32], [], []]",
            &[BF, BF, "", ""],
            None,
            &["", "", "", ""],
        );
        i.extra = extra(vec![
            ("MoE topk", ArgValue::Int(4)),
            ("MoE GEMM gated", ArgValue::Bool(true)),
        ]);
        // Without kernels the weight dtype is unknown: no model.
        assert!(evaluate("moe_triton_unfused_up", &i, false).is_err());
        i.kernel_names = vec!["_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1"];
        let e = evaluate("moe_triton_unfused_up", &i, false).unwrap();
        assert_eq!(param(&e, "weight_dtype"), "FP4");
        assert_eq!(param(&e, "gated"), "True");
        // 2·32·3072·3072·4·2 = 4,831,838,208.
        assert_eq!(e.flops, 4_831_838_208.0);
        // 32·3072·2 + E_active·2·3072·3072·0.5 + 32·3072·4·2 with
        // E_active = 32·(1 − (28/32)^32) ≈ 31.554: the reference's
        // 284.9228269331473 MiB.
        assert!((e.bytes.unwrap() / 1048576.0 - 284.9228269331473).abs() < 1e-9);
        assert_eq!(e.compute_spec(), "matrix_fp4");
        let mut d = i.clone();
        d.name = "pseudo_op::moe_triton_unfused_down";
        d.extra = extra(vec![
            ("MoE topk", ArgValue::Int(4)),
            ("MoE GEMM gated", ArgValue::Bool(false)),
        ]);
        let e = evaluate("moe_triton_unfused_down", &d, false).unwrap();
        // 2·32·3072·3072·4 = 2,415,919,104; bytes the reference's 142.93 MiB.
        assert_eq!(e.flops, 2_415_919_104.0);
        assert!((e.bytes.unwrap() / 1048576.0 - 142.93016346657365).abs() < 1e-9);
        assert_eq!(
            evaluate("moe_triton_unfused_down", &d, true),
            Err(ModelError::NotImplemented)
        );
    }

    #[test]
    fn aiter_fused_and_blockscale() {
        // x (4, 7168), w1 (8, 512, 7168), w2 (8, 7168, 256), topk w (4, 2):
        // K 7168, N 256, gated (512 = 2·256), E_active = 8·(1 − (6/8)^4)
        // = 5.46875.
        let i = test_input(
            "pseudo_op::moe_aiter_fused_1stage",
            "[[4, 7168], [8, 512, 7168], [8, 7168, 256], [4, 2]]",
            &[BF, F8, F8, "float"],
            None,
            &[],
        );
        let e = evaluate("moe_aiter_fused_1stage", &i, false).unwrap();
        assert_eq!(param(&e, "inter_dim"), "256");
        // up 2·4·7168·256·2·2 = 58,720,256, down 2·4·7168·256·2 =
        // 29,360,128, weighted sum 4·7168·3 = 86,016.
        assert_eq!(e.flops, 88_166_400.0);
        // 57,344 + 5.46875·256·7168·(2 + 1) + 57,344 = 30,220,288.
        assert_eq!(e.bytes, Some(30_220_288.0));
        assert_eq!(e.compute_spec(), "matrix_bf16");
        // Block-scale: out (2, 1024) bf16, x fp8, w1 (4, 1024, 1024), w2
        // (4, 1024, 512), topk 2 from Concrete Inputs[8]: E_active 3.
        let mut ci = vec![""; 9];
        ci[8] = "2";
        let i = test_input(
            "aiter::fmoe_fp8_blockscale_g1u1",
            "[[2, 1024], [2, 1024], [4, 1024, 1024], [4, 1024, 512]]",
            &[BF, F8, F8, F8],
            None,
            &ci,
        );
        let e = evaluate("moe_aiter_fused_blockscale", &i, false).unwrap();
        // 8,388,608 + 4,194,304 + 2·1024·3 = 12,589,056.
        assert_eq!(e.flops, 12_589_056.0);
        // 2,048 + 3·512·1024·(2 + 1) + 4,096 = 4,724,736.
        assert_eq!(e.bytes, Some(4_724_736.0));
        assert_eq!(param(&e, "output_dtype"), BF);
        assert_eq!(e.compute_spec(), "matrix_fp8");
    }

    #[test]
    fn unfused_stages() {
        // CK-tile GEMM2: x (4, 2, 256), w (8, 7168, 128): M 4, topk 2,
        // N 256, K 7168, E_active 5.46875.
        let i = test_input(
            "aiter::moe_cktile2stages_gemm2_ck",
            "[[4, 2, 256], [8, 7168, 128], [4, 7168]]",
            &[BF, F8, BF],
            None,
            &[],
        );
        let e = evaluate("moe_aiter_unfused_down", &i, false).unwrap();
        assert!(!e.params.iter().any(|(k, _)| *k == "gated"));
        // 2·4·256·7168·2 = 29,360,128; 4·256·2·2 + 5.46875·256·7168 +
        // 4·7168·2 = 4,096 + 10,035,200 + 57,344.
        assert_eq!((e.flops, e.bytes), (29_360_128.0, Some(10_096_640.0)));
        // flydsl stage 1 with packed FP4 weights: w1 (4, 1024, 512), w2
        // (4, 1024, 256) → N = 256·(1024 // 512) = 512, gated; E_active 3.
        let i = test_input(
            "pseudo_op::moe_flydsl_stage1",
            "[[2, 1024], [4, 1024, 512], [4, 1024, 256], [2, 2]]",
            &[
                BF,
                "c10::Float4_e2m1fn_x2",
                "c10::Float4_e2m1fn_x2",
                "float",
            ],
            None,
            &[],
        );
        let e = evaluate("moe_flydsl_stage1", &i, false).unwrap();
        // 2·2·1024·512·2·2 = 8,388,608; 4,096 + 3·2·1024·512·0.5 + 2·512·2·2.
        assert_eq!((e.flops, e.bytes), (8_388_608.0, Some(1_581_056.0)));
        assert_eq!(e.compute_spec(), "matrix_fp4");
    }

    #[test]
    fn gptq_awq_and_sglang_grouped_gemm() {
        // GPTQ up: x (2, 2048) fp16, w1 (4, 1536, 1024): gated → N 768,
        // topk 2, E_active 4·(1 − (2/4)^2) = 3, INT4 weights.
        let mut i = test_input(
            "pseudo_op::moe_gptq_awq_up",
            "[[2, 2048], [4, 1536, 1024], [4, 2048, 384], [], [2, 2]]",
            &["c10::Half", "unsigned char", "unsigned char", "", "int"],
            None,
            &[],
        );
        i.extra = extra(vec![("MoE topk", ArgValue::Int(2))]);
        let e = evaluate("moe_gptq_awq_up", &i, false).unwrap();
        assert_eq!(param(&e, "gated"), "True");
        // 2·2·2048·768·2·2 = 25,165,824; 8,192 + 3·2·2048·768·0.5 + 6,144.
        assert_eq!((e.flops, e.bytes), (25_165_824.0, Some(4_732_928.0)));
        assert_eq!(e.compute_spec(), "matrix_fp16");
        // Down: N = 384·2 = 768: 2·2·768·2048·2 = 12,582,912;
        // 2·768·2·2 + 3·768·2048·0.5 + 2·2048·2 = 6,144 + 2,359,296 + 8,192.
        let e = evaluate("moe_gptq_awq_down", &i, false).unwrap();
        assert_eq!((e.flops, e.bytes), (12_582_912.0, Some(2_373_632.0)));
        // SGLang invoke_fused_moe_kernel: B (4, 1536, 2048), topk ids (2, 2).
        let i = test_input(
            "sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel",
            "[[2, 2048], [4, 1536, 2048], [], [4, 1536], [], [4], [2, 2], [2, 2], [2, 2]]",
            &[BF, F8, "", BF, "", "float", "float", "int", "int"],
            None,
            &[],
        );
        let e = evaluate("moe_triton_invoke_grouped_gemm", &i, false).unwrap();
        assert_eq!(param(&e, "m_work"), "4");
        // 2·4·1536·2048 = 25,165,824; 4·2048·2 + 3·1536·2048·1 + 4·1536·2.
        assert_eq!((e.flops, e.bytes), (25_165_824.0, Some(9_465_856.0)));
        assert_eq!(e.compute_spec(), "matrix_fp8");
    }
}
