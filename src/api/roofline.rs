//! `tracelens roofline`: FLOPs, bytes and roofline of one operation typed
//! by hand, through the same models the report uses.

use crate::analysis::commands::roofline_calculator::{self, Figures};
use crate::analysis::perf_model::{Evaluation, ModelResult};
use crate::error::{Error, RooflineError};
use crate::gpu_arch::GpuArch;

/// One operation, with the shapes as typed.
#[derive(Debug, Clone)]
pub enum RooflineOp {
    /// `[batch ×] (M×K)·(K×N)`, optionally with a bias.
    Gemm {
        /// Rows of A and of the output.
        m: i64,
        /// Columns of B and of the output.
        n: i64,
        /// The reduction dimension.
        k: i64,
        /// Batch count (bmm).
        batch: Option<i64>,
        /// Add a bias (addmm / baddbmm).
        bias: bool,
    },
    /// Scaled dot-product attention (flash layout).
    Sdpa {
        /// Batch size.
        batch: i64,
        /// Query heads.
        heads: i64,
        /// Key/value heads [default: heads].
        kv_heads: Option<i64>,
        /// Query sequence length.
        seq_q: i64,
        /// Key/value sequence length [default: seq_q].
        seq_kv: Option<i64>,
        /// Head dimension.
        head_dim: i64,
        /// Causal mask.
        causal: bool,
    },
    /// Forward convolution; empty stride, padding or dilation lists mean
    /// 1, 0 and 1 per spatial dimension.
    Conv {
        /// Input shape N,C,spatial….
        input: Vec<i64>,
        /// Weight shape C_out,C_in/groups,kernel….
        weight: Vec<i64>,
        /// Stride per spatial dimension.
        stride: Vec<i64>,
        /// Padding per spatial dimension.
        padding: Vec<i64>,
        /// Dilation per spatial dimension.
        dilation: Vec<i64>,
        /// Groups.
        groups: i64,
    },
}

/// A roofline question: an operation, its data type, and optionally a GPU
/// and a measured time.
#[derive(Debug, Clone)]
pub struct RooflineQuery {
    /// The operation.
    pub op: RooflineOp,
    /// Data type: bf16, fp16, fp32, fp64, fp8.
    pub dtype: String,
    /// GPU spec: a bundled name or a JSON file.
    pub gpu_arch: Option<String>,
    /// Measured kernel time (µs).
    pub time_us: Option<f64>,
}

/// The model's numbers for a [`RooflineQuery`].
pub struct Roofline {
    /// FLOPs, bytes and the model's details.
    pub eval: Evaluation,
    /// The GPU asked for.
    pub arch: Option<GpuArch>,
    /// The measured time asked for.
    pub time_us: Option<f64>,
}

/// Evaluates `q`. Checks run in a fixed order (dtype, GPU, shapes, model,
/// time), so the first problem is the one reported.
pub fn roofline(q: &RooflineQuery) -> Result<Roofline, Error> {
    let dtype =
        roofline_calculator::trace_dtype(&q.dtype).ok_or_else(|| RooflineError::UnknownDtype {
            given: q.dtype.clone(),
            known: roofline_calculator::DTYPES,
        })?;
    let arch = q
        .gpu_arch
        .as_deref()
        .map(super::resolve_gpu_arch)
        .transpose()?;
    let eval = evaluate(&q.op, dtype)?.map_err(|e| RooflineError::Model(format!("{e:?}")))?;
    if let Some(t) = q.time_us
        && (t.is_nan() || t <= 0.0)
    {
        return Err(RooflineError::TimeNotPositive.into());
    }
    Ok(Roofline {
        eval,
        arch,
        time_us: q.time_us,
    })
}

impl Roofline {
    /// The figures of this answer.
    pub fn figures(&self) -> Figures {
        roofline_calculator::figures(&self.eval, self.arch.as_ref(), self.time_us)
    }
}

/// `v` when positive.
fn positive(what: &'static str, v: i64) -> Result<i64, RooflineError> {
    if v > 0 {
        Ok(v)
    } else {
        Err(RooflineError::NotPositive { what, value: v })
    }
}

/// Checks the shapes of `op` and runs its model.
fn evaluate(op: &RooflineOp, dtype: &str) -> Result<ModelResult<Evaluation>, RooflineError> {
    Ok(match op {
        &RooflineOp::Gemm {
            m,
            n,
            k,
            batch,
            bias,
        } => {
            let b = batch.map(|b| positive("batch", b)).transpose()?;
            let (m, n, k) = (positive("m", m)?, positive("n", n)?, positive("k", k)?);
            roofline_calculator::gemm(m, n, k, b, bias, dtype)
        }
        &RooflineOp::Sdpa {
            batch,
            heads,
            kv_heads,
            seq_q,
            seq_kv,
            head_dim,
            causal,
        } => roofline_calculator::sdpa(
            positive("batch", batch)?,
            positive("heads", heads)?,
            positive("kv_heads", kv_heads.unwrap_or(heads))?,
            positive("seq_q", seq_q)?,
            positive("seq_kv", seq_kv.unwrap_or(seq_q))?,
            positive("head_dim", head_dim)?,
            causal,
            dtype,
        ),
        RooflineOp::Conv {
            input,
            weight,
            stride,
            padding,
            dilation,
            groups,
        } => conv(input, weight, [stride, padding, dilation], *groups, dtype)?,
    })
}

/// Checks a convolution's shapes, fills in default strides, paddings and
/// dilations, and runs its model.
fn conv(
    input: &[i64],
    weight: &[i64],
    [stride, padding, dilation]: [&Vec<i64>; 3],
    groups: i64,
    dtype: &str,
) -> Result<ModelResult<Evaluation>, RooflineError> {
    if !(3..=5).contains(&input.len()) || weight.len() != input.len() {
        return Err(RooflineError::ConvRank);
    }
    let nd = input.len() - 2;
    let or = |v: &Vec<i64>, d: i64| if v.is_empty() { vec![d; nd] } else { v.clone() };
    Ok(roofline_calculator::conv(
        input,
        weight,
        &or(stride, 1),
        &or(padding, 0),
        &or(dilation, 1),
        positive("groups", groups)?,
        dtype,
    ))
}
