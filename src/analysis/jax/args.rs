//! A kernel's perf model and the arguments read from its HLO record
//!: which model the custom-call target selects, the
//! `Input Dims` / `Input type` / `Concrete Inputs` the sheets print, and
//! the GEMM dimensions and convolution shapes the models need.

use std::sync::OnceLock;

use regex::Regex;

use super::categories::{CONV, GEMM};
use super::hlo_records::{HloRecord, ModuleRecords, gemm_dtype_prefix};
use crate::analysis::perf_model::Py;

/// The reference's JAX perf models (`jax_op_mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// No model.
    Rest,
    /// `jax_gemm`: a cuBLAS / matmul custom call in a GEMM kernel.
    Gemm,
    /// `jax_te_fused_attn`: TransformerEngine fused attention, forward.
    TeFwd,
    /// `jax_te_fused_attn_bwd`: its backward.
    TeBwd,
    /// `jax_conv`: a cuDNN forward convolution in a Conv kernel.
    Conv,
    /// `jax_conv_bwd`: a cuDNN backward convolution in a Conv kernel.
    ConvBwd,
}

impl ModelKind {
    /// The reference's perf-model name (the `perf model` column).
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Rest => "rest",
            ModelKind::Gemm => "jax_gemm",
            ModelKind::TeFwd => "jax_te_fused_attn",
            ModelKind::TeBwd => "jax_te_fused_attn_bwd",
            ModelKind::Conv => "jax_conv",
            ModelKind::ConvBwd => "jax_conv_bwd",
        }
    }

    /// Whether the model gives backward numbers.
    pub fn is_bwd(self) -> bool {
        matches!(self, ModelKind::TeBwd | ModelKind::ConvBwd)
    }
}

/// `get_event_perf_model_name`: the model a kernel's record selects. A
/// record needs operands and a custom-call target; the first matching rule
/// wins.
pub fn model_kind(rec: Option<&HloRecord>, category: &str) -> ModelKind {
    let Some(rec) = rec.filter(|r| !r.operands.is_empty()) else {
        return ModelKind::Rest;
    };
    let Some(t) = rec.custom_call_target.as_deref().filter(|t| !t.is_empty()) else {
        return ModelKind::Rest;
    };
    let is = |c: &str| category.eq_ignore_ascii_case(c);
    if (t.contains("matmul") || t.contains("cublas")) && is(GEMM) {
        ModelKind::Gemm
    } else if t.contains("te_fused_attn_forward_ffi") {
        ModelKind::TeFwd
    } else if t.contains("te_fused_attn_backward_ffi") {
        ModelKind::TeBwd
    } else if (t.contains("cudnn$convForward") || t.contains("cudnn$convBiasActivationForward"))
        && is(CONV)
    {
        ModelKind::Conv
    } else if t.contains("cudnn$convBackward") && is(CONV) {
        ModelKind::ConvBwd
    } else {
        ModelKind::Rest
    }
}

/// One tensor read from shape text.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Element type text, e.g. `bf16`.
    pub dtype: String,
    /// Dimensions.
    pub dims: Vec<i64>,
}

/// `parse_operands` on one text: the first `type[dims]{layout}` in it (so
/// the first tensor of a tuple); None for scalars, types without a digit
/// before the bracket (`pred`, `f8e4m3fn`) and unresolved references.
pub fn parse_tensor(text: &str) -> Option<Tensor> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"([A-Za-z]+[0-9]+)\[([0-9,]+)\]\{([0-9,]+)\}").expect("valid regex")
    });
    let c = re.captures(text)?;
    let dims = c[2]
        .split(',')
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect::<Option<Vec<i64>>>()?;
    Some(Tensor {
        dtype: c[1].to_string(),
        dims,
    })
}

/// The tensors of a record's operands, in order (empty texts skipped).
pub fn parse_tensors(texts: &[String]) -> Vec<Tensor> {
    texts
        .iter()
        .filter(|t| !t.is_empty())
        .filter_map(|t| parse_tensor(t))
        .collect()
}

/// `Input Dims` of tensors: a tuple of dimension tuples.
pub fn dims_tuple(ts: &[Tensor]) -> Py {
    Py::Tuple(ts.iter().map(|t| Py::ints(&t.dims)).collect())
}

/// `Input type` of tensors: a tuple of type names.
pub fn types_tuple(ts: &[Tensor]) -> Py {
    Py::Tuple(ts.iter().map(|t| Py::Str(t.dtype.clone())).collect())
}

/// `process_gemm_ops`: a GEMM's batch, M, N, K, beta and element type.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmDims {
    /// Batch (1 without one).
    pub batch: i64,
    /// Rows of the result.
    pub m: i64,
    /// Columns of the result.
    pub n: i64,
    /// The contracted dimension.
    pub k: i64,
    /// `beta` of the cuBLAS config (0 or 1).
    pub beta: i64,
    /// The record's GEMM type.
    pub dtype: Option<String>,
}

/// What the sheets and models read of a kernel's record.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelArgs {
    /// The model the record selects.
    pub model: ModelKind,
    /// `Input Dims`.
    pub input_dims: Py,
    /// `Input type`.
    pub input_type: Py,
    /// `Input Strides` (always empty for JAX).
    pub input_strides: Py,
    /// `Concrete Inputs` (TE: the bias shape).
    pub concrete: Py,
    /// The tensors `Input Dims` lists.
    pub tensors: Vec<Tensor>,
    /// GEMM dimensions (`jax_gemm`).
    pub gemm: Option<GemmDims>,
    /// Output tensor (convolutions).
    pub output: Option<Tensor>,
    /// Spatial filter shape (convolutions).
    pub filter: Vec<i64>,
}

impl KernelArgs {
    /// A kernel without a model and without shapes.
    pub fn empty() -> KernelArgs {
        KernelArgs {
            model: ModelKind::Rest,
            input_dims: Py::Tuple(vec![]),
            input_type: Py::Tuple(vec![]),
            input_strides: Py::Tuple(vec![]),
            concrete: Py::Tuple(vec![]),
            tensors: Vec::new(),
            gemm: None,
            output: None,
            filter: Vec::new(),
        }
    }

    /// The default parser: every operand tensor.
    fn plain(rec: &HloRecord) -> KernelArgs {
        let tensors = parse_tensors(&rec.operands);
        KernelArgs {
            input_dims: dims_tuple(&tensors),
            input_type: types_tuple(&tensors),
            tensors,
            ..KernelArgs::empty()
        }
    }
}

/// `get_event_metadata`: a kernel's model and arguments. Where the
/// reference would stop on a record its model cannot read, the kernel gets
/// the default arguments and no model, and the error comes back with them.
pub fn kernel_args(
    rec: Option<&HloRecord>,
    module: Option<&ModuleRecords>,
    category: &str,
) -> (KernelArgs, Option<String>) {
    let Some(rec) = rec else {
        return (KernelArgs::empty(), None);
    };
    let model = model_kind(Some(rec), category);
    let plain = KernelArgs::plain(rec);
    let modelled = match model {
        ModelKind::Rest => return (plain, None),
        ModelKind::Gemm => gemm_dims(rec, module).map(|g| KernelArgs {
            gemm: Some(g),
            ..plain.clone()
        }),
        ModelKind::TeFwd | ModelKind::TeBwd => Ok(te_args(&plain.tensors)),
        ModelKind::Conv | ModelKind::ConvBwd => conv_args(rec, plain.clone(), model.is_bwd()),
    };
    match modelled {
        Ok(a) => (KernelArgs { model, ..a }, None),
        Err(e) => (plain, Some(format!("{}: {e}", model.name()))),
    }
}

/// `parse_te_fused_attn_metadata`: the first three tensors (Q, K, V) and
/// the fourth as `Concrete Inputs` (the bias).
fn te_args(tensors: &[Tensor]) -> KernelArgs {
    let qkv = &tensors[..tensors.len().min(3)];
    let bias = tensors.get(3..4).unwrap_or(&[]);
    KernelArgs {
        input_dims: dims_tuple(qkv),
        input_type: types_tuple(qkv),
        concrete: dims_tuple(bias),
        tensors: tensors.to_vec(),
        ..KernelArgs::empty()
    }
}

/// `parse_conv_metadata`: the output tensor and the spatial filter shape
/// (the weight's dims after the first two; for the backward, the
/// output's).
fn conv_args(rec: &HloRecord, plain: KernelArgs, bwd: bool) -> Result<KernelArgs, String> {
    let output = parse_tensor(&rec.output);
    let spatial = |t: &Tensor| t.dims.get(2..).unwrap_or(&[]).to_vec();
    // The weight must exist even for the backward, which then reads the output.
    let mut filter = plain.tensors.get(1).map(spatial);
    if bwd {
        filter = filter.and(output.as_ref().map(spatial));
    }
    let filter = filter.ok_or("tuple index out of range")?;
    Ok(KernelArgs {
        output,
        filter,
        ..plain
    })
}

/// The first capture of `pattern` in `text`.
fn capture<'a>(cell: &'static OnceLock<Regex>, pattern: &str, text: &'a str) -> Option<&'a str> {
    let re = cell.get_or_init(|| Regex::new(pattern).expect("valid regex"));
    re.captures(text).and_then(|c| c.get(1)).map(|m| m.as_str())
}

/// `get_sizes`: the comma-separated items inside the last `[…]` of a
/// shape text; more than three is an error.
fn sizes(text: &str) -> Result<Vec<String>, String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let inner = capture(&RE, r".*\[(.*)\]", text).ok_or_else(|| format!("no sizes in {text}"))?;
    let s: Vec<String> = inner.split(',').map(str::to_string).collect();
    if s.len() > 3 {
        return Err(format!("tensor size is more than 3: {text}"));
    }
    Ok(s)
}

/// Removes the first item equal to `v` (Python `list.remove`).
fn remove_first(v: &mut Vec<String>, x: &str) -> Result<(), String> {
    let i = v
        .iter()
        .position(|s| s == x)
        .ok_or_else(|| format!("list.remove(x): {x} not in list"))?;
    v.remove(i);
    Ok(())
}

/// A size text as an int (`int()`).
fn int(s: &str) -> Result<i64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("invalid literal for int(): {s:?}"))
}

/// The first tensor token of a tuple output text.
fn first_tuple_tensor(output: &str) -> Result<&str, String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let inner = output
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| format!("GEMM output is not a tuple: {output}"))?;
    let re = RE.get_or_init(|| {
        Regex::new(r"[a-z0-9]+\[[^\]]*\]\{[^}]*\}|[a-z0-9]+\[[^\]]*\]").expect("valid regex")
    });
    re.find_iter(inner)
        .map(|m| m.as_str())
        .find(|t| gemm_dtype_prefix(t).is_some() && !t.ends_with("[]"))
        .ok_or_else(|| format!("no wide output in {output}"))
}

/// The operand texts `process_gemm_ops` reads: shape texts that are not
/// scalars, and bare references it resolves itself.
fn gemm_operands(rec: &HloRecord, module: Option<&ModuleRecords>) -> Vec<String> {
    static INDEX: OnceLock<Regex> = OnceLock::new();
    let index = INDEX.get_or_init(|| Regex::new(r"^/\*index=\d+\*/").expect("valid regex"));
    let mut out = Vec::new();
    for o in &rec.operands {
        if o.contains('[') && o.contains(']') {
            if !o.split('[').nth(1).unwrap_or("").starts_with(']') {
                out.push(o.clone());
            }
        } else if !o.contains('[') {
            let key = index.replace(o, "");
            let Some(r) = module.and_then(|m| m.get(key.trim())) else {
                continue;
            };
            let wide = gemm_dtype_prefix(&r.output).is_some() || r.output.starts_with("f8");
            if wide && !r.output.ends_with("[]") {
                out.push(r.output.clone());
            }
        }
    }
    out
}

// One function: the reference's `process_gemm_ops`, step by step.
/// `process_gemm_ops` for one record: the contracted
/// dimension is K; it and the batch are removed from A's and B's sizes;
/// the output layout decides which of the rest is M and which N.
pub fn gemm_dims(rec: &HloRecord, module: Option<&ModuleRecords>) -> Result<GemmDims, String> {
    static BETA: OnceLock<Regex> = OnceLock::new();
    static LHS: OnceLock<Regex> = OnceLock::new();
    static RHS: OnceLock<Regex> = OnceLock::new();
    static EPILOGUE: OnceLock<Regex> = OnceLock::new();
    static ORDER: OnceLock<Regex> = OnceLock::new();
    let bc = rec
        .backend_config
        .as_deref()
        .ok_or("Gemm backend config information missing")?;
    let bias_epilogue = capture(&EPILOGUE, r#""epilogue":"([^"]*)""#, bc) == Some("BIAS");
    let beta = capture(&BETA, r#""beta":([01]),"#, bc).ok_or("no beta in the backend config")?;
    let contracting = |cell, pat| {
        capture(cell, pat, bc)
            .and_then(|s| s.split('"').nth(1))
            .ok_or("no contracting dimension in the backend config")
    };
    let lhs = contracting(&LHS, r#""lhs_contracting_dimensions":(\[["012]*\])"#)?;
    let rhs = contracting(&RHS, r#""rhs_contracting_dimensions":(\[["012]*\])"#)?;
    let out = first_tuple_tensor(&rec.output)?;
    let ops = gemm_operands(rec, module);
    if ops.is_empty() || ops.len() > 4 {
        return Err(format!("invalid operand list {ops:?}"));
    }
    if ops.len() == 4 && !bias_epilogue {
        return Err("4 operands without a bias epilogue".to_string());
    }
    let order = capture(&ORDER, r"\{([012,]*)", out).ok_or("no output layout")?;
    let c = sizes(out)?;
    let mut a = sizes(&ops[0])?;
    let mut b = sizes(ops.get(1).ok_or("list index out of range")?)?;
    let k = a
        .get(int(lhs)? as usize)
        .ok_or("list index out of range")?
        .clone();
    if b.get(int(rhs)? as usize) != Some(&k) {
        return Err("contracting dimension not matching".to_string());
    }
    remove_first(&mut a, &k)?;
    remove_first(&mut b, &k)?;
    let mut batch = "1".to_string();
    if c.len() > 2 {
        batch = c[0].clone();
        remove_first(&mut a, &batch)?;
        remove_first(&mut b, &batch)?;
    }
    let first = |v: &[String]| v.first().map_or(Ok(1), |s| int(s));
    let (m, n) = if order.contains("0,1") {
        (first(&a)?, first(&b)?)
    } else {
        (first(&b)?, first(&a)?)
    };
    Ok(GemmDims {
        batch: int(&batch)?,
        m,
        n,
        k: int(&k)?,
        beta: int(beta)?,
        dtype: rec.gemm_type.clone(),
    })
}

#[cfg(test)]
mod tests;
