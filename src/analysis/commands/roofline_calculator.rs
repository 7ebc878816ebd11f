//! Back-of-the-envelope roofline numbers without a trace
//! (`tracelens roofline gemm|sdpa|conv`): the same models the report uses,
//! fed with shapes typed on the command line.

use crate::analysis::perf_model::{self, Evaluation, ModelResult, OpInput};
use crate::analysis::pytorch::op_metrics::metrics_from;
use crate::gpu_arch::GpuArch;
use crate::trace::ArgValue;

/// The trace dtype string for a short dtype name (`bf16`, `fp16`, …).
pub fn trace_dtype(short: &str) -> Option<&'static str> {
    Some(match short.to_ascii_lowercase().as_str() {
        "bf16" | "bfloat16" => "c10::BFloat16",
        "fp16" | "half" | "float16" => "c10::Half",
        "fp32" | "float" | "float32" => "float",
        "fp64" | "double" | "float64" => "double",
        "fp8" | "float8" | "e4m3" => "c10::Float8_e4m3fn",
        _ => return None,
    })
}

/// Short names accepted by [`trace_dtype`].
pub const DTYPES: &str = "bf16, fp16, fp32, fp64, fp8";

/// What a roofline answer shows, worked out once for the terminal text and
/// for the Python package.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved; None when a dtype size is unknown.
    pub bytes: Option<f64>,
    /// FLOPs per byte; None without bytes.
    pub intensity: Option<f64>,
    /// `matrix_bf16`, `vector_fp32`, …; empty when the model names none.
    pub compute_spec: String,
    /// The GPU's figures, when one was asked for.
    pub gpu: Option<GpuFigures>,
    /// The rates achieved in a measured time, when one was given.
    pub measured: Option<Measured>,
}

/// The roofline against one GPU spec.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFigures {
    /// The spec's name.
    pub name: String,
    /// Peak TFLOP/s for the compute spec; None when the spec has none.
    pub peak_tflops: Option<f64>,
    /// Memory bandwidth, GB/s.
    pub mem_bw_gbps: f64,
    /// Intensity where compute and memory time meet, FLOPs/byte.
    pub ridge: Option<f64>,
    /// `max(compute time, memory time)` at peak, µs; None without a peak,
    /// bytes or FLOPs.
    pub roofline_us: Option<f64>,
    /// True when compute time is at least memory time; None with no roofline.
    pub compute_bound: Option<bool>,
}

/// Rates achieved in a measured time.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The measured time, µs.
    pub time_us: f64,
    /// Achieved TFLOP/s.
    pub tflops_s: f64,
    /// Achieved TB/s (NaN without bytes).
    pub tb_s: f64,
    /// Roofline time over the measured time, %; None with no roofline.
    pub pct_of_roofline: Option<f64>,
}

/// The figures of a model's answer against an optional GPU spec and
/// measured time (µs).
pub fn figures(eval: &Evaluation, arch: Option<&GpuArch>, time_us: Option<f64>) -> Figures {
    let compute_spec = eval.compute_spec();
    let m = metrics_from(eval.clone(), Vec::new(), time_us.unwrap_or(0.0), arch);
    let gpu = arch.map(|a| {
        let peak_tflops = a.peak_tflops(&compute_spec);
        GpuFigures {
            name: a.name.clone(),
            peak_tflops,
            mem_bw_gbps: a.mem_bw_gbps,
            ridge: peak_tflops.map(|p| p * 1e12 / (a.mem_bw_gbps * 1e9)),
            roofline_us: m.roofline.map(|r| r.time_us),
            compute_bound: m.roofline.map(|r| r.compute_bound),
        }
    });
    let measured = time_us.map(|time_us| Measured {
        time_us,
        tflops_s: m.tflops_s(),
        tb_s: m.tb_s(),
        pct_of_roofline: m.roofline.map(|r| r.pct),
    });
    Figures {
        flops: eval.flops,
        bytes: eval.bytes,
        intensity: eval.bytes.map(|b| eval.flops / b),
        compute_spec,
        gpu,
        measured,
    }
}

/// Runs the model of `op` on arguments as a trace would record them: one
/// shape and one stride list per argument (`[]` for non-tensors).
fn run(
    op: &str,
    dims: Vec<ArgValue>,
    types: Vec<&str>,
    strides: Vec<ArgValue>,
    concrete: Vec<String>,
) -> ModelResult<Evaluation> {
    let class = perf_model::lookup(op).expect("calculator ops have models");
    let input = OpInput {
        name: op,
        dims: Some(&dims),
        types: Some(types.into_iter().map(String::from).collect()),
        strides: Some(&strides),
        concrete: Some(concrete),
        ..Default::default()
    };
    perf_model::evaluate(class, &input, false)
}

/// The strides of a contiguous tensor of `shape`.
fn contiguous(shape: &[i64]) -> ArgValue {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    ArgValue::ints(&s)
}

/// A shape.
fn shape(dims: &[i64]) -> ArgValue {
    ArgValue::ints(dims)
}

/// `[]`: a non-tensor argument's shape or strides.
fn none() -> ArgValue {
    ArgValue::ints(&[])
}

/// `op(A, B)` on contiguous operands of shapes `a` and `b`.
fn product(op: &str, a: &[i64], b: &[i64], dtype: &str) -> ModelResult<Evaluation> {
    run(
        op,
        vec![shape(a), shape(b)],
        vec![dtype, dtype],
        vec![contiguous(a), contiguous(b)],
        vec![String::new(), String::new()],
    )
}

/// `op(bias, A, B, beta=1, alpha=1)` on contiguous tensors of shapes
/// `bias`, `a` and `b`.
fn product_with_bias(
    op: &str,
    bias: &[i64],
    a: &[i64],
    b: &[i64],
    dtype: &str,
) -> ModelResult<Evaluation> {
    run(
        op,
        vec![shape(bias), shape(a), shape(b), none(), none()],
        vec![dtype, dtype, dtype, "Scalar", "Scalar"],
        vec![
            contiguous(bias),
            contiguous(a),
            contiguous(b),
            none(),
            none(),
        ],
        ["", "", "", "1", "1"].map(String::from).to_vec(),
    )
}

/// A GEMM `[batch ×] (M×K) · (K×N)`, optionally with a bias.
pub fn gemm(
    m: i64,
    n: i64,
    k: i64,
    batch: Option<i64>,
    bias: bool,
    dtype: &str,
) -> ModelResult<Evaluation> {
    match (batch, bias) {
        (Some(b), false) => product("aten::bmm", &[b, m, k], &[b, k, n], dtype),
        (Some(b), true) => {
            product_with_bias("aten::baddbmm", &[b, m, n], &[b, m, k], &[b, k, n], dtype)
        }
        (None, false) => product("aten::mm", &[m, k], &[k, n], dtype),
        // The bias of addmm is a row vector of N (stride (1,)).
        (None, true) => product_with_bias("aten::addmm", &[n], &[m, k], &[k, n], dtype),
    }
}

/// Attention (flash SDPA layout `B, H, N, d`) with grouped-query heads.
#[allow(clippy::too_many_arguments)]
pub fn sdpa(
    batch: i64,
    heads: i64,
    kv_heads: i64,
    seq_q: i64,
    seq_kv: i64,
    head_dim: i64,
    causal: bool,
    dtype: &str,
) -> ModelResult<Evaluation> {
    let q = [batch, heads, seq_q, head_dim];
    let kv = [batch, kv_heads, seq_kv, head_dim];
    run(
        "aten::_scaled_dot_product_flash_attention",
        vec![
            shape(&q),
            shape(&kv),
            shape(&kv),
            none(),
            none(),
            none(),
            none(),
        ],
        vec![dtype, dtype, dtype, "Scalar", "", "", ""],
        vec![
            contiguous(&q),
            contiguous(&kv),
            contiguous(&kv),
            none(),
            none(),
            none(),
            none(),
        ],
        vec![
            String::new(),
            String::new(),
            String::new(),
            "0.".into(),
            if causal {
                "True".into()
            } else {
                "False".into()
            },
            "False".into(),
            String::new(),
        ],
    )
}

fn list_text(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A forward convolution (`aten::convolution`), input `N, C, spatial…` and
/// weight `C_out, C_in/groups, kernel…`.
pub fn conv(
    input: &[i64],
    weight: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
    dtype: &str,
) -> ModelResult<Evaluation> {
    let nd = input.len().saturating_sub(2);
    let zeros = vec![0i64; nd];
    run(
        "aten::convolution",
        [shape(input), shape(weight)]
            .into_iter()
            .chain(std::iter::repeat_with(none).take(7))
            .collect(),
        vec![
            dtype,
            dtype,
            "",
            "ScalarList",
            "ScalarList",
            "ScalarList",
            "Scalar",
            "ScalarList",
            "Scalar",
        ],
        [contiguous(input), contiguous(weight)]
            .into_iter()
            .chain(std::iter::repeat_with(none).take(7))
            .collect(),
        vec![
            String::new(),
            String::new(),
            String::new(),
            list_text(stride),
            list_text(padding),
            list_text(dilation),
            "False".into(),
            list_text(&zeros),
            groups.to_string(),
        ],
    )
}
