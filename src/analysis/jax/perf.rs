//! The JAX perf models (`jax_gemm`, `jax_te_fused_attn`, `jax_conv`) on the project's GEMM, SDPA and CONV formulas, and the
//! `op_<category>` sheets: one row per kernel name and model parameters,
//! with FLOPs, bytes, achieved rates and kernel-time statistics.
//!
//! TransformerEngine's packed QKV layouts (`BS3HD`: one `(B, S, 3, H, D)`
//! operand with one-element K and V placeholders) are unpacked into the
//! three `(B, S, H, D)` tensors they hold before the SDPA shapes are read;
//! the reference reads the placeholders and stops (docs/deviations.md).

use std::hash::Hash;
use std::sync::{Arc, OnceLock};

use regex::Regex;
use rustc_hash::FxHashMap;

use super::args::{KernelArgs, ModelKind};
use super::categories::CATEGORIES;
use super::kernels::{JaxTrace, Kernel};
use crate::analysis::common::kernel_stats;
use crate::analysis::common::perf_cells::{
    head_columns, param_cells, rate_cells, tail_cells, tail_columns,
};
use crate::analysis::perf_model::conv::conv_numbers;
use crate::analysis::perf_model::gemm::{base_bytes, base_flops, kernel_transpose};
use crate::analysis::perf_model::sdpa::sdpa_numbers;
use crate::analysis::perf_model::{ModelError, Py};
use crate::names::col;
use crate::pyfmt::str_repr;
use crate::table::agg::order_desc_by;
use crate::table::group::{expand_groups, group_first_seen_values};
use crate::table::{Table, Value};
use crate::trace::EventId;

/// What a model says about one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOutput {
    /// `param: …` values in the reference's order.
    pub params: Vec<(&'static str, Py)>,
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved; None when the element size is unknown.
    pub bytes: Option<f64>,
}

/// `jax_dtype2bpe`.
fn jax_bpe(dtype: &str) -> Option<i64> {
    match dtype.to_lowercase().as_str() {
        "f32" => Some(4),
        "f16" | "bf16" => Some(2),
        "f8" | "fp8" => Some(1),
        _ => None,
    }
}

/// `jax_dtype_map`: the GEMM simulator's name of a dtype.
fn simulation_dtype(dtype: &str) -> Option<&'static str> {
    match dtype.to_lowercase().as_str() {
        "f32" => Some("fp32"),
        "f16" => Some("fp16"),
        "bf16" => Some("bf16"),
        "f8" | "fp8" => Some("fp8"),
        _ => None,
    }
}

/// `dtype_jax2torch`: the PyTorch name of a dtype.
fn torch_dtype(dtype: &str) -> Option<&'static str> {
    match dtype {
        "f32" => Some("float"),
        "f64" => Some("double"),
        "f16" => Some("c10::half"),
        "bf16" => Some("c10::bfloat16"),
        "f8" => Some("c10::float8_e4m3fnuz"),
        "fp8" => Some("fp8"),
        _ => None,
    }
}

/// A model error as text.
fn err_text(e: ModelError) -> String {
    match e {
        ModelError::NotImplemented => "not implemented".to_string(),
        ModelError::Invalid(s) => s,
    }
}

/// `jax_gemm`: batched `2·M·N·K (+ M·N bias)` FLOPs; every operand at the
/// GEMM type's size.
fn gemm_model(args: &KernelArgs, kernel_name: &str) -> Result<ModelOutput, String> {
    let g = args.gemm.as_ref().ok_or("no GEMM dimensions")?;
    let t = g.dtype.as_deref().ok_or("the GEMM has no type")?;
    let bias = g.beta != 0;
    let mut params = vec![
        ("B", Py::Int(g.batch)),
        ("M", Py::Int(g.m)),
        ("N", Py::Int(g.n)),
        ("K", Py::Int(g.k)),
        ("bias", Py::Bool(bias)),
        (
            "dtype_A_B",
            Py::Tuple(vec![Py::Str(t.into()), Py::Str(t.into())]),
        ),
        ("simulation_dtype", Py::opt_str(simulation_dtype(t))),
    ];
    if let Some(tr) = kernel_transpose(kernel_name).map_err(err_text)? {
        params.push(("transpose", tr));
    }
    let (b, m, n, k) = (g.batch as i128, g.m as i128, g.n as i128, g.k as i128);
    let flops = b * base_flops(m, n, k, bias).map_err(err_text)?;
    let bytes = match jax_bpe(t).map(i128::from) {
        Some(p) => base_bytes(m, n, k, bias, Some(p), Some(p), Some(p), Some(p))
            .map_err(err_text)?
            .map(|x| (b * x) as f64),
        None => None,
    };
    Ok(ModelOutput {
        params,
        flops: flops as f64,
        bytes,
    })
}

/// TransformerEngine's `qkv_layout` from a fused-attention backend config.
fn qkv_layout(backend_config: Option<&str>) -> Option<i64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"qkv_layout = (\d+)").expect("valid regex"));
    re.captures(backend_config?)?[1].parse().ok()
}

/// Drops axis `axis` (the packing axis) of a packed tensor's dims.
fn unpack(dims: &[i64], axis: usize) -> Vec<i64> {
    let mut d = dims.to_vec();
    d.remove(axis);
    d
}

/// Q, K and V as `(B, S, H, D)`: TE's packed layouts unpacked (`BS3HD`
/// = 5, `BSH3D` = 6, `BSHD_BS2HD` = 7, `BSHD_BSH2D` = 8; without a layout,
/// a 5-d Q with 3 at axis 2 and K, V of fewer than four dims is `BS3HD`).
/// The sequence-first (0–4) and THD (10 and up) layouts are an error.
pub fn qkv_shapes(dims: &[Vec<i64>], layout: Option<i64>) -> Result<[Vec<i64>; 3], String> {
    let at = |i: usize| dims.get(i).cloned().ok_or("tuple index out of range");
    let (q, k, v) = (at(0)?, at(1)?, at(2)?);
    let five = |t: &Vec<i64>| t.len() == 5;
    let guessed = layout.is_none() && five(&q) && q[2] == 3 && k.len() < 4 && v.len() < 4;
    if let Some(l @ (0..=4 | 10..)) = layout {
        return Err(format!("qkv_layout {l} (SBHD or THD) is not modelled"));
    }
    Ok(match layout {
        _ if guessed => [unpack(&q, 2), unpack(&q, 2), unpack(&q, 2)],
        Some(5) if five(&q) => [unpack(&q, 2), unpack(&q, 2), unpack(&q, 2)],
        Some(6) if five(&q) => [unpack(&q, 3), unpack(&q, 3), unpack(&q, 3)],
        Some(7) if five(&k) => [q, unpack(&k, 2), unpack(&k, 2)],
        Some(8) if five(&k) => [q, unpack(&k, 3), unpack(&k, 3)],
        _ => [q, k, v],
    })
}

/// `extract_sdpa_cfg` for `(B, S, H, D)` tensors: `(B, N_Q, H_Q, N_KV,
/// H_KV, d_qk, d_v)`, checking that the shapes agree.
fn sdpa_sizes([q, k, v]: &[Vec<i64>; 3]) -> Result<[i64; 7], String> {
    let bhnd = |t: &Vec<i64>| -> Result<[i64; 4], String> {
        match t.as_slice() {
            [b, n, h, d, ..] => Ok([*b, *h, *n, *d]),
            _ => Err("tuple index out of range".to_string()),
        }
    };
    let ([bq, hq, nq, dq], [bk, hk, nk, dk], [bv, hv, nv, dv]) = (bhnd(q)?, bhnd(k)?, bhnd(v)?);
    if bq != bk || bq != bv {
        return Err(format!("Batch sizes do not match: {bq} != {bk} != {bv}"));
    }
    if hk != hv || nk != nv || dq != dk {
        return Err("K and V (or Q and K) shapes do not match".to_string());
    }
    Ok([bq, nq, hq, nk, hk, dq, dv])
}

/// `jax_te_fused_attn`: SDPA FLOPs (not causal, flash recompute in the
/// backward) and bytes at the first input's size.
fn te_model(args: &KernelArgs, layout: Option<i64>, bwd: bool) -> Result<ModelOutput, String> {
    let dims: Vec<Vec<i64>> = args
        .tensors
        .iter()
        .take(3)
        .map(|t| t.dims.clone())
        .collect();
    let sizes = sdpa_sizes(&qkv_shapes(&dims, layout)?)?;
    let types: Vec<&str> = args.tensors.iter().map(|t| t.dtype.as_str()).collect();
    let bpe = types.first().and_then(|t| jax_bpe(t));
    let dtype_ab = types
        .iter()
        .take(2)
        .map(|t| Py::opt_str(torch_dtype(t)))
        .collect();
    let bias = match &args.concrete {
        Py::Tuple(v) => Py::Tuple(v.iter().take(1).cloned().collect()),
        other => other.clone(),
    };
    let keys = ["B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk", "d_h_v"];
    let mut params: Vec<(&'static str, Py)> = keys
        .iter()
        .zip(sizes)
        .map(|(k, v)| (*k, Py::Int(v)))
        .collect();
    params.extend([
        ("bias", bias),
        ("dtype_A_B", Py::Tuple(dtype_ab)),
        ("causal", Py::Bool(false)),
        ("flash_impl", Py::Bool(true)),
        ("fused", Py::Bool(true)),
        ("bytes_per_element", bpe.map_or(Py::None, Py::Int)),
    ]);
    let (flops, bytes) = sdpa_numbers(sizes, false, true, bwd, bpe).map_err(err_text)?;
    Ok(ModelOutput {
        params,
        flops,
        bytes,
    })
}

/// `jax_conv`: the CONV formulas with the spatial-only filter shape the
/// reference passes (its FLOPs lose the input channels).
fn conv_model(args: &KernelArgs, bwd: bool) -> Result<ModelOutput, String> {
    let x = &args.tensors.first().ok_or("tuple index out of range")?.dims;
    let out = &args.output.as_ref().ok_or("tuple index out of range")?.dims;
    let filter = &args.filter;
    let conv_nd = match x.len() {
        3 => "conv1d",
        4 => "conv2d",
        5 => "conv3d",
        n => return Err(format!("Unknown convolution dimension: {n}")),
    };
    let bias = args.tensors.len() == 3;
    let bpe = jax_bpe(&args.tensors[0].dtype);
    let params = vec![
        ("convNd", Py::Str(conv_nd.into())),
        ("input_shape", Py::ints(x)),
        ("filter_shape", Py::ints(filter)),
        ("output_shape", Py::ints(out)),
        ("bias", Py::Bool(bias)),
        ("bytes_per_element", bpe.map_or(Py::None, Py::Int)),
        ("transposed_conv", Py::Bool(false)),
    ];
    let (flops, bytes) =
        conv_numbers((x, filter, out), bias, false, bwd, bpe.map(i128::from)).map_err(err_text)?;
    Ok(ModelOutput {
        params,
        flops: flops as f64,
        bytes: bytes.map(|b| b as f64),
    })
}

/// Runs a kernel's model.
pub fn evaluate(jt: &JaxTrace, k: &Kernel, args: &KernelArgs) -> Result<ModelOutput, String> {
    match args.model {
        ModelKind::Rest => Err("no model".to_string()),
        ModelKind::Gemm => gemm_model(args, jt.trace.name(k.id)),
        ModelKind::TeFwd | ModelKind::TeBwd => {
            let layout = qkv_layout(jt.record(k).and_then(|r| r.backend_config.as_deref()));
            te_model(args, layout, args.model.is_bwd())
        }
        ModelKind::Conv | ModelKind::ConvBwd => conv_model(args, args.model.is_bwd()),
    }
}

/// The rates of one modelled kernel: a row of `build_df_perf_metrics`,
/// from its model's output and its duration.
struct Rates {
    dur: f64,
    gflops: f64,
    data_moved_mb: f64,
    flops_per_byte: f64,
    tb_s: f64,
    tflops_s: f64,
}

impl Rates {
    fn new(out: &ModelOutput, dur: f64) -> Self {
        let gflops = out.flops / 1e9;
        let per_s = |x: f64| if dur > 0.0 { x / (dur / 1e6) } else { f64::NAN };
        let (data_moved_mb, flops_per_byte, tb_s) = match out.bytes {
            Some(b) => (
                b / (1024.0 * 1024.0),
                if b > 0.0 { gflops * 1e9 / b } else { f64::NAN },
                per_s(b / 1e12),
            ),
            None => (f64::NAN, f64::NAN, f64::NAN),
        };
        Rates {
            dur,
            gflops,
            data_moved_mb,
            flops_per_byte,
            tb_s,
            tflops_s: per_s(gflops / 1e3),
        }
    }
}

/// One distinct evaluation of a model: the first kernel that asked for
/// it, the arguments it read and what it gave.
struct Evaluation<'a> {
    kernel: &'a Kernel,
    args: &'a KernelArgs,
    out: ModelOutput,
}

/// The modelled kernels of one category whose model gave an answer, in
/// kernel order, each with the index of its [`Evaluation`].
struct Modelled<'a> {
    /// (kernel, evaluation) per modelled kernel: 16 bytes a kernel, where
    /// an output of its own cost some 500.
    members: Vec<(&'a Kernel, u32)>,
    /// The distinct evaluations, in order of first use.
    evals: Vec<Evaluation<'a>>,
}

/// The kernels of `category` with a model, each evaluated once per
/// distinct `key` (kernels of one key must give one output); every kernel
/// whose model failed is counted in `failed` under the sheet's `name`.
fn modelled<'a, K: Hash + Eq>(
    jt: &JaxTrace,
    kernels: &'a [Kernel],
    args: &'a [Arc<KernelArgs>],
    category: &str,
    name: &str,
    key: &impl Fn(usize, &Kernel, &KernelArgs) -> K,
    failed: &mut indexmap::IndexMap<String, usize>,
) -> Modelled<'a> {
    let mut m = Modelled {
        members: Vec::new(),
        evals: Vec::new(),
    };
    // Key -> the evaluation's index, or the warning its failure counts under.
    let mut seen: FxHashMap<K, Result<u32, String>> = FxHashMap::default();
    for (i, (k, a)) in kernels.iter().zip(args).enumerate() {
        if k.category != category || a.model == ModelKind::Rest {
            continue;
        }
        let slot = seen.entry(key(i, k, a)).or_insert_with(|| {
            match evaluate(jt, k, a) {
                Ok(out) => {
                    m.evals.push(Evaluation {
                        kernel: k,
                        args: a,
                        out,
                    });
                    // Fewer evaluations than events, whose handles are 32 bits.
                    Ok((m.evals.len() - 1) as u32)
                }
                Err(e) => Err(format!("{name}: {}: {e}", a.model.name())),
            }
        });
        match slot {
            Ok(e) => m.members.push((k, *e)),
            Err(w) => match failed.get_mut(w.as_str()) {
                Some(n) => *n += 1,
                None => {
                    failed.insert(w.clone(), 1);
                }
            },
        }
    }
    m
}

/// The columns of an op sheet with param columns `pcols`.
fn columns(pcols: &[&str]) -> Vec<String> {
    let mut cols = head_columns(pcols, false);
    cols.extend(
        [
            col::KERNEL_DETAILS_SUMMARIZE,
            col::INPUT_DIMS_FIRST,
            col::INPUT_TYPE_FIRST,
        ]
        .map(String::from),
    );
    cols.extend(tail_columns());
    cols
}

/// One group's cells after its keys, and its kernel-time sum; `rows`
/// index `m.members`, ascending.
fn group_cells(jt: &JaxTrace, m: &Modelled, rows: &[usize]) -> (Vec<Value>, f64) {
    let rates: Vec<Rates> = rows
        .iter()
        .map(|&i| {
            let (k, e) = m.members[i];
            Rates::new(&m.evals[e as usize].out, jt.trace.event(k.id).dur)
        })
        .collect();
    let col = |f: fn(&Rates) -> f64| -> Vec<f64> { rates.iter().map(f).collect() };
    let mut row = rate_cells([
        col(|r| r.gflops),
        col(|r| r.data_moved_mb),
        col(|r| r.flops_per_byte),
        col(|r| r.tb_s),
        col(|r| r.tflops_s),
    ]);
    let (first, e) = m.members[rows[0]];
    let args = m.evals[e as usize].args;
    // The reference looks process names up under thread 0, where xprof
    // keeps none: always `Unknown`.
    row.extend([Value::from("Unknown"), Value::from("Unknown")]);
    row.push(Value::from(jt.thread_name(first.id).unwrap_or("Unknown")));
    let lists: Vec<[EventId; 1]> = rows.iter().map(|&i| [m.members[i].0.id]).collect();
    let lists: Vec<&[EventId]> = lists.iter().map(|l| l.as_slice()).collect();
    let stats = kernel_stats::summarise(jt.trace, &lists);
    let text = kernel_stats::summary_text_with_head(&stats, |s| {
        format!("'name': {}", str_repr(jt.trace.name(s.kernel)))
    });
    row.push(Value::Py(text.into()));
    row.push(Value::Py(args.input_dims.repr().into()));
    row.push(Value::Py(args.input_type.repr().into()));
    let (tail, sum) = tail_cells(&col(|r| r.dur), first.id.index());
    row.extend(tail);
    (row, sum)
}

/// Groups modelled kernels by (name, params) and aggregates them.
fn summarise(jt: &JaxTrace, name: &str, m: &Modelled) -> Table {
    // A kernel's key cells follow from its evaluation (whose kernels share
    // the name): they are built once per evaluation, grouped, and the
    // groups taken back to kernels.
    let outs = || m.evals.iter().map(|e| e.out.params.as_slice());
    let mut pcols: Vec<&'static str> = Vec::new();
    for params in outs() {
        for (k, _) in params {
            if !pcols.contains(k) {
                pcols.push(k);
            }
        }
    }
    // Columns with no value at all are dropped, as the reference drops
    // all-NaN columns before grouping. Typed over the distinct outputs:
    // the typing looks only at which kinds of value a column holds, which
    // the distinct outputs show as all kernels do.
    let mut params: Vec<Vec<Value>> = Vec::new();
    pcols.retain(|k| {
        let cells = param_cells(outs(), k);
        let keep = cells.iter().any(|c| !c.is_missing());
        if keep {
            params.push(cells);
        }
        keep
    });
    let mut by_eval: Vec<Vec<usize>> = vec![Vec::new(); m.evals.len()];
    for (i, &(_, e)) in m.members.iter().enumerate() {
        by_eval[e as usize].push(i);
    }
    let keys = m.evals.iter().enumerate().map(|(d, e)| {
        let mut key = vec![Value::from(jt.trace.name(e.kernel.id))];
        key.extend(params.iter().map(|c| c[d].clone()));
        key
    });
    let groups = expand_groups(group_first_seen_values(keys), by_eval);
    let (cells, sums): (Vec<Vec<Value>>, Vec<f64>) = groups
        .iter()
        .map(|(_, rows)| group_cells(jt, m, rows))
        .unzip();
    let uid = |i: usize| m.members[groups[i].1[0]].0.id;
    let order = order_desc_by(&sums, |a, b| uid(a).cmp(&uid(b)));
    let mut s = Table::with_headers(name, columns(&pcols));
    for i in order {
        let mut row = groups[i].0.clone();
        row.extend(cells[i].iter().cloned());
        s.push_row(row);
    }
    s
}

/// The `op_<category>` sheets, in category order, of the categories with
/// modelled kernels; warnings for kernels whose model failed. `args` are
/// the kernels' arguments as `all_args` gives them: one shared
/// value per HLO record and category.
pub fn op_sheets(jt: &JaxTrace, args: &[Arc<KernelArgs>]) -> (Vec<Table>, Vec<String>) {
    // A model reads a kernel's arguments, its name (GEMM transposes) and
    // its record (TE layouts), and the arguments are shared per record:
    // kernels with the same arguments and name get the same output, so
    // each pair is evaluated once (the steps of a run repeat them all).
    op_sheets_by(jt, args, &|_, k: &Kernel, a: &KernelArgs| {
        (std::ptr::from_ref(a), jt.trace.event(k.id).name)
    })
}

/// [`op_sheets`], evaluating each model once per distinct `key(index,
/// kernel, args)`.
fn op_sheets_by<K: Hash + Eq>(
    jt: &JaxTrace,
    args: &[Arc<KernelArgs>],
    key: &impl Fn(usize, &Kernel, &KernelArgs) -> K,
) -> (Vec<Table>, Vec<String>) {
    let mut sheets = Vec::new();
    let mut failed: indexmap::IndexMap<String, usize> = indexmap::IndexMap::new();
    for (category, _) in CATEGORIES {
        let name = super::categories::op_sheet_name(category);
        let m = modelled(jt, &jt.kernels, args, category, &name, key, &mut failed);
        if !m.members.is_empty() {
            sheets.push(summarise(jt, &name, &m));
        }
    }
    let warnings = failed
        .into_iter()
        .map(|(e, n)| format!("{n} kernel(s) left out of {e}"))
        .collect();
    (sheets, warnings)
}

#[cfg(test)]
mod tests;
