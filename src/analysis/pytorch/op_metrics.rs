//! The per-event metric pipeline of the roofline sheets:
//! kernel set and busy time, the op's model, achieved TFLOPS/s and TB/s,
//! and, with a GPU spec, the roofline time and bound.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::analysis::common::intervals::events_busy_time;
use crate::analysis::perf_model::{self, Evaluation, ModelClass, ModelResult, OpInput};
use crate::analysis::pytorch::pseudo::PseudoOp;
use crate::gpu_arch::GpuArch;
use crate::trace::tree::Tree;
use crate::trace::{ArgValue, Cat, EventId, StrId, Trace, ValueId};

/// Roofline numbers of one op instance against a GPU spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roofline {
    /// `max(compute time, memory time)` at peak, µs.
    pub time_us: f64,
    /// True when the compute time is at least the memory time.
    pub compute_bound: bool,
    /// Roofline time over measured kernel time, in %; NaN without kernel time.
    pub pct: f64,
}

impl Roofline {
    /// `COMPUTE_BOUND` or `MEMORY_BOUND`.
    pub fn bound_text(&self) -> &'static str {
        bound_name(self.compute_bound)
    }
}

/// `COMPUTE_BOUND` when compute time is at least memory time, else
/// `MEMORY_BOUND` (the sheets' `Bound` cell).
pub fn bound_name(compute_bound: bool) -> &'static str {
    if compute_bound {
        "COMPUTE_BOUND"
    } else {
        "MEMORY_BOUND"
    }
}

/// Everything the sheets print about one modelled op instance: what is
/// kept, and the rates derived from it on demand (a big trace has tens of
/// thousands of instances: 56 bytes each, not 104).
#[derive(Debug, Clone)]
pub struct Metrics {
    /// The model's parameters, FLOPs and bytes (shared by the instances
    /// with the same inputs, see [`EvalMemo`]).
    pub eval: Arc<Evaluation>,
    /// GPU events timed for this instance, in start-time order.
    pub kernels: Box<[EventId]>,
    /// Busy time of those events, µs.
    pub kernel_time: f64,
    /// Present only with a GPU spec that knows this Compute Spec.
    pub roofline: Option<Roofline>,
}

impl Metrics {
    /// `flops / 1e9`.
    pub fn gflops(&self) -> f64 {
        self.eval.flops / 1e9
    }

    /// Achieved TFLOP/s (NaN without kernel time).
    pub fn tflops_s(&self) -> f64 {
        let t = self.kernel_time;
        if t > 0.0 {
            (self.gflops() / 1e3) / (t / 1e6)
        } else {
            f64::NAN
        }
    }

    /// `bytes / 2^20` (NaN when bytes are unknown).
    pub fn data_moved_mb(&self) -> f64 {
        self.eval.bytes.map_or(f64::NAN, |b| b / 1048576.0)
    }

    /// Arithmetic intensity, FLOPs per byte (NaN when unknown).
    pub fn flops_per_byte(&self) -> f64 {
        match self.eval.bytes {
            Some(b) if b > 0.0 => (self.gflops() * 1e9) / b,
            _ => f64::NAN,
        }
    }

    /// Achieved TB/s (NaN when unknown).
    pub fn tb_s(&self) -> f64 {
        let t = self.kernel_time;
        match self.eval.bytes {
            Some(b) if t > 0.0 => (b / 1e12) / (t / 1e6),
            _ => f64::NAN,
        }
    }

    /// `<maf>_<precision>` or empty (from the shared evaluation, not kept
    /// per instance: a big trace has tens of thousands of instances).
    pub fn compute_spec(&self) -> String {
        self.eval.compute_spec()
    }
}

/// Ops whose enclosing `user_annotation` the plain report reads: the
/// reference annotates the events whose name starts with one of these.
pub const PLAIN_ANNOTATED_OPS: &[&str] = &["vllm::unified_attention_with_output"];

/// Ops whose enclosing `user_annotation` the inference report reads.
pub const INFERENCE_ANNOTATED_OPS: &[&str] = &[
    "vllm::unified_attention_with_output",
    "aiter::mha_varlen_fwd",
    "pseudo_mla_decode_fwd",
    "pseudo_mla_prefill_fwd",
    "vllm::gdn_attention_core",
    "aiter::fmha_v3_varlen_fwd",
    "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
    "sglang_profiler::attention_paged_attention_ragged",
    "aiter::mha_batch_prefill",
    "aiter::pa_decode_gluon",
    "aiter::v4_attention_with_output",
    "pseudo_v4_paged_decode_swa",
    "pseudo_v4_paged_decode_csa",
    "pseudo_v4_paged_decode_hca",
];

/// The recorded arguments of event `uid`, as the models read them, with
/// the annotation of the plain report ([`PLAIN_ANNOTATED_OPS`]).
pub fn op_input<'t>(trace: &'t Trace, uid: EventId, kernel_names: Vec<&'t str>) -> OpInput<'t> {
    op_input_with(trace, uid, kernel_names, PLAIN_ANNOTATED_OPS)
}

/// [`op_input`] with the enclosing annotation of the ops named (by prefix)
/// in `annotated`.
pub fn op_input_with<'t>(
    trace: &'t Trace,
    uid: EventId,
    kernel_names: Vec<&'t str>,
    annotated: &[&str],
) -> OpInput<'t> {
    let name = trace.name(uid);
    let annotation = if annotated.iter().any(|p| name.starts_with(p)) {
        enclosing_annotation(trace, uid)
    } else {
        None
    };
    OpInput {
        annotation,
        forward: fused_forward(trace, uid)
            .map(|f| Box::new(op_input_with(trace, f, Vec::new(), annotated))),
        ..args_input(trace, name, uid, kernel_names)
    }
}

/// The input of the models for op `name` with the recorded arguments of
/// event `args_of`; no annotation, extras or forward op.
fn args_input<'t>(
    trace: &'t Trace,
    name: &'t str,
    args_of: EventId,
    kernel_names: Vec<&'t str>,
) -> OpInput<'t> {
    let a = trace.op_args(args_of);
    let list = |v: Option<&'t ArgValue>| v.and_then(ArgValue::as_list);
    // Non-string elements (rare) as their compact JSON text.
    let strings = |v: Option<&'t ArgValue>| {
        list(v).map(|items| {
            items
                .iter()
                .map(|x| match x {
                    ArgValue::Str(s) => s.to_string(),
                    other => other.json_text(),
                })
                .collect()
        })
    };
    OpInput {
        name,
        dims: list(a.dims),
        types: strings(a.types),
        strides: list(a.strides),
        concrete: strings(a.concrete),
        kernel_names,
        annotation: None,
        extra: &[],
        forward: None,
    }
}

/// The models' input for a pseudo op: its name and extra args, the
/// recorded arguments of the op it splits. Pseudo ops have no time, so no
/// annotation encloses them.
pub fn pseudo_input<'t>(
    trace: &'t Trace,
    p: &'t PseudoOp,
    kernel_names: Vec<&'t str>,
) -> OpInput<'t> {
    OpInput {
        extra: &p.extra,
        ..args_input(trace, p.name, p.donor, kernel_names)
    }
}

/// For a fused backward op (`ConvBias_Backward`, `ConvBiasReLU_Backward`):
/// the last earlier host op of its forward name with the same sequence
/// number, whose shapes the reference reuses.
pub fn fused_forward(trace: &Trace, uid: EventId) -> Option<EventId> {
    let forward = match trace.name(uid) {
        "ConvBias_Backward" => "ConvBias_",
        "ConvBiasReLU_Backward" => "ConvBiasReLU_",
        _ => return None,
    };
    let seq = trace.args(uid)?.sequence()?;
    trace
        .events()
        .take(uid.index())
        .rev()
        .find(|(i, e)| {
            is_host_op(e.cat)
                && trace.name(*i) == forward
                && trace.args(*i).and_then(|a| a.sequence()) == Some(seq)
        })
        .map(|(i, _)| i)
}

/// The reference's `apply_annotation` for one event: of the host and GPU
/// `user_annotation` ranges with `ts <= event ts` and `event end < range
/// end`, the name of the earliest-starting one (the first in trace order
/// among equal starts).
pub fn enclosing_annotation(trace: &Trace, uid: EventId) -> Option<&str> {
    enclosing_annotation_event(trace, uid).map(|a| trace.name(a))
}

/// The annotation event [`enclosing_annotation`] names.
fn enclosing_annotation_event(trace: &Trace, uid: EventId) -> Option<EventId> {
    let e = trace.event(uid);
    let end = e.t_end();
    let mut best: Option<(f64, EventId)> = None;
    for (i, a) in trace.events() {
        if !matches!(a.cat, Cat::UserAnnotation | Cat::GpuUserAnnotation) {
            continue;
        }
        if a.ts <= e.ts && end < a.t_end() && best.is_none_or(|(ts, _)| a.ts < ts) {
            best = Some((a.ts, i));
        }
    }
    best.map(|(_, i)| i)
}

/// The backward ops linked to `uid` or to any of its host descendants.
pub fn linked_backward(trace: &Trace, tree: &Tree, uid: EventId) -> Vec<EventId> {
    let mut out = Vec::new();
    let mut stack = vec![uid];
    while let Some(n) = stack.pop() {
        if let Some(b) = tree.bwd_events.get(&n) {
            out.extend_from_slice(b);
        }
        for c in tree.children(n) {
            if !trace.event(c).cat.is_gpu() {
                stack.push(c);
            }
        }
    }
    out
}

/// The GPU events an instance is timed by: its own subtree (forward), or
/// the subtrees of its linked backward ops (`bwd`). Sorted by start.
pub fn kernel_set(trace: &Trace, tree: &Tree, uid: EventId, bwd: bool) -> Vec<EventId> {
    let mut ks = Vec::new();
    if bwd {
        for b in linked_backward(trace, tree, uid) {
            ks.extend(tree.gpu_events(trace, b));
        }
    } else {
        ks.extend(tree.gpu_events(trace, uid));
    }
    ks.sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
    ks
}

/// Everything a model evaluation of a trace event reads, by handle: the
/// model, the direction, the op's name and recorded arguments, its kernels'
/// names, the enclosing annotation and the fused forward op's name and
/// arguments. Equal keys give equal [`OpInput`]s, hence equal evaluations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct EvalKey {
    class: usize,
    bwd: bool,
    op: (Option<StrId>, [Option<ValueId>; 4]),
    kernels: Vec<Option<StrId>>,
    annotation: Option<Option<StrId>>,
    forward: Option<(Option<StrId>, [Option<ValueId>; 4])>,
}

/// Model evaluations by their inputs (`EvalKey`): ops repeat per layer
/// and per step with the same shapes, and the models are pure functions of
/// the inputs, so each distinct input is evaluated once and its result
/// shared. Safe to use from several threads.
#[derive(Default)]
pub struct EvalMemo(Mutex<FxHashMap<EvalKey, ModelResult<Arc<Evaluation>>>>);

impl EvalMemo {
    /// The memoised result for `key`, or `eval()`'s, remembered. The lock
    /// is not held while evaluating (a race evaluates twice, harmlessly).
    fn get_or_eval(
        &self,
        key: EvalKey,
        eval: impl FnOnce() -> ModelResult<Evaluation>,
    ) -> ModelResult<Arc<Evaluation>> {
        if let Some(found) = self.lock().get(&key) {
            return found.clone();
        }
        let result = eval().map(Arc::new);
        self.lock().insert(key, result.clone());
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<EvalKey, ModelResult<Arc<Evaluation>>>> {
        // A panic elsewhere cannot leave the map half-updated: use it anyway.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The name and recorded-argument handles of an event.
fn arg_handles(trace: &Trace, uid: EventId) -> (Option<StrId>, [Option<ValueId>; 4]) {
    let ids = trace.args(uid).map_or([None; 4], |a| {
        [
            a.input_dims,
            a.input_type,
            a.input_strides,
            a.concrete_inputs,
        ]
    });
    (trace.event(uid).name, ids)
}

/// Runs the metric pipeline for one event, reading the enclosing
/// annotation of the ops named in `annotated`; the model evaluation goes
/// through `memo`.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    trace: &Trace,
    tree: &Tree,
    uid: EventId,
    class: &ModelClass,
    bwd: bool,
    arch: Option<&GpuArch>,
    annotated: &[&str],
    memo: &EvalMemo,
) -> ModelResult<Metrics> {
    let kernels = kernel_set(trace, tree, uid, bwd);
    let t = events_busy_time(trace, &kernels);
    let name = trace.name(uid);
    let annotation = if annotated.iter().any(|p| name.starts_with(p)) {
        enclosing_annotation_event(trace, uid)
    } else {
        None
    };
    let forward = fused_forward(trace, uid);
    let key = EvalKey {
        class: std::ptr::from_ref(class) as usize,
        bwd,
        op: arg_handles(trace, uid),
        kernels: kernels.iter().map(|&k| trace.event(k).name).collect(),
        annotation: annotation.map(|a| trace.event(a).name),
        forward: forward.map(|f| arg_handles(trace, f)),
    };
    let eval = memo.get_or_eval(key, || {
        let names = kernels.iter().map(|&k| trace.name(k)).collect();
        let input = OpInput {
            annotation: annotation.map(|a| trace.name(a)),
            forward: forward.map(|f| Box::new(op_input_with(trace, f, Vec::new(), annotated))),
            ..args_input(trace, name, uid, names)
        };
        perf_model::evaluate(class, &input, bwd)
    })?;
    Ok(metrics_from(eval, kernels, t, arch))
}

/// [`compute`] for a pseudo op (forward only): timed by its one kernel.
pub fn compute_pseudo(
    trace: &Trace,
    p: &PseudoOp,
    class: &ModelClass,
    arch: Option<&GpuArch>,
) -> ModelResult<Metrics> {
    let kernels = vec![p.kernel];
    let t = events_busy_time(trace, &kernels);
    let input = pseudo_input(trace, p, vec![trace.name(p.kernel)]);
    let eval = perf_model::evaluate(class, &input, false)?;
    Ok(metrics_from(eval, kernels, t, arch))
}

/// The metrics of a model evaluation timed at `t` µs: the roofline
/// numbers computed now, the rates derived on demand ([`Metrics`]).
pub fn metrics_from(
    eval: impl Into<Arc<Evaluation>>,
    kernels: Vec<EventId>,
    t: f64,
    arch: Option<&GpuArch>,
) -> Metrics {
    let mut m = Metrics {
        eval: eval.into(),
        kernels: kernels.into_boxed_slice(),
        kernel_time: t,
        roofline: None,
    };
    let gflops = m.gflops();
    let compute_spec = m.compute_spec();
    m.roofline = arch.and_then(|a| {
        let peak = a.peak_tflops(&compute_spec)?;
        let bytes = m.eval.bytes?;
        if gflops.is_nan() || gflops <= 0.0 {
            return None;
        }
        let compute_us = (gflops * 1e9 / (peak * 1e12)) * 1e6;
        let memory_us = (bytes / (a.mem_bw_gbps * 1e9)) * 1e6;
        let time_us = compute_us.max(memory_us);
        Some(Roofline {
            time_us,
            compute_bound: compute_us >= memory_us,
            pct: if t > 0.0 {
                time_us / t * 100.0
            } else {
                f64::NAN
            },
        })
    });
    m
}

/// True when the event is a host op the sheets may model.
pub fn is_host_op(cat: Cat) -> bool {
    matches!(
        cat,
        Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver | Cat::PythonFunction
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;
    use crate::trace::tree::{TreeOptions, build};

    fn mm(ts: u32, m: u32) -> String {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                "ts": {ts}, "dur": 5, "args": {{"Input Dims": [[{m}, 64], [64, 32]],
                "Input type": ["float", "float"], "Input Strides": [[64, 1], [32, 1]],
                "Concrete Inputs": ["", ""]}}}}"#
        )
    }

    #[test]
    fn equal_inputs_share_one_evaluation() {
        let trace = trace_of_json(&[mm(0, 128), mm(10, 128), mm(20, 256)].join(","));
        let tree = build(&trace, TreeOptions::default());
        let class = perf_model::lookup("aten::mm").expect("aten::mm has a model");
        let memo = EvalMemo::default();
        let eval = |i: usize, memo: &EvalMemo| {
            let uid = trace.ids().nth(i).unwrap();
            compute(&trace, &tree, uid, class, false, None, &[], memo)
                .expect("aten::mm evaluates")
                .eval
        };
        let (a, b, c) = (eval(0, &memo), eval(1, &memo), eval(2, &memo));
        assert!(Arc::ptr_eq(&a, &b), "same shapes: one shared evaluation");
        assert!(!Arc::ptr_eq(&a, &c), "other shapes: their own evaluation");
        assert_eq!(c.flops, 2.0 * 256.0 * 64.0 * 32.0);
        // The memoised result is what a fresh evaluation gives.
        let fresh = eval(1, &EvalMemo::default());
        assert_eq!((fresh.flops, fresh.bytes), (b.flops, b.bytes));
        assert_eq!(a.flops, 2.0 * 128.0 * 64.0 * 32.0);
    }
}
