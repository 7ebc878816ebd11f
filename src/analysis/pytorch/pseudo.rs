//! Pseudo ops (`--pseudo-ops`): ops the reference injects into the call
//! tree to split a fused host op into one op per kernel, so each kernel gets
//! its own perf model (`Trace2Tree/extensions/`). Implemented as an overlay
//! over the unchanged trace and tree: each pseudo op sits under the parent
//! `P` of the launch it takes over, after `P`'s other children; the launch
//! is no longer a child of `P` but keeps `P` as its parent, so the pseudo op
//! is never a launcher (the op sheets do not change) while the unified walk
//! and the roofline sheets see it.
//!
//! Only vLLM's unfused Triton MoE (`vllm::moe_forward` with `matmul_ogs`
//! kernels) is implemented; the other extensions the reference detects are
//! reported as not supported.

use regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::trace::tree::Tree;
use crate::trace::{ArgValue, Cat, EventId, Trace};

/// A host op the sheets show: an event of the trace or a pseudo op of the
/// overlay (index into [`PseudoOps::ops`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpRef {
    /// An event of the trace.
    Event(EventId),
    /// A pseudo op.
    Pseudo(usize),
}

/// One injected pseudo op.
#[derive(Debug, Clone)]
pub struct PseudoOp {
    /// Its UID: after every event of the trace, in injection order.
    pub uid: usize,
    /// `pseudo_op::…`.
    pub name: &'static str,
    /// The op whose recorded arguments it carries (the MoE op).
    pub donor: EventId,
    /// The launch's parent: it holds the pseudo op and gives its pid/tid.
    pub parent: EventId,
    /// The launch it takes over (its only child).
    pub launcher: EventId,
    /// The kernel it times (its only GPU event).
    pub kernel: EventId,
    /// Its extra args (`MoE GEMM type`, `MoE topk`, …) for the models.
    pub extra: Vec<(Box<str>, ArgValue)>,
}

/// The pseudo ops of a trace and where they hang in the tree.
#[derive(Debug, Default)]
pub struct PseudoOps {
    /// In injection (UID) order.
    pub ops: Vec<PseudoOp>,
    /// Parent -> its pseudo ops, in injection order.
    under: FxHashMap<EventId, Vec<usize>>,
    /// Launches moved under a pseudo op.
    moved: FxHashSet<EventId>,
    /// What could not be done, for the report's notes.
    pub warnings: Vec<String>,
}

/// The extension that splits vLLM's unfused Triton MoE.
const MOE_OP: &str = "vllm::moe_forward";
/// The topk fallback when no `TopK` op is found below the MoE op.
const DEFAULT_TOPK: i64 = 4;

impl PseudoOps {
    /// The pseudo ops of `trace`: detects the reference's extensions and
    /// applies the supported ones.
    pub fn detect(trace: &Trace, tree: &Tree) -> Self {
        let mut out = PseudoOps::default();
        let index = NameIndex::of(trace, tree);
        for name in index.unsupported() {
            out.warnings.push(format!(
                "--pseudo-ops: the reference's {name} pseudo ops are not supported; those ops keep their recorded form"
            ));
        }
        if index.has(MOE_OP) && !index.has("vllm::rocm_aiter_fused_moe") && index.matmul_ogs {
            out.moe_unfused_triton(trace, tree, &NameIndex::events_named(trace, tree, MOE_OP));
        }
        out
    }

    /// True when there is no pseudo op.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The pseudo ops under `parent`, in injection order.
    pub fn under(&self, parent: EventId) -> &[usize] {
        self.under.get(&parent).map_or(&[], Vec::as_slice)
    }

    /// True when `launcher` was moved under a pseudo op (it is no longer a
    /// child of its parent).
    pub fn is_moved(&self, launcher: EventId) -> bool {
        self.moved.contains(&launcher)
    }

    /// Splits each `vllm::moe_forward` with GPU work: its `matmul_ogs`
    /// kernels by start time (`…_up` first, then `…_down`), and a single
    /// `matmul_scatter` kernel (`…_finalize_matmul_scatter`).
    fn moe_unfused_triton(&mut self, trace: &Trace, tree: &Tree, moe_ops: &[EventId]) {
        for &moe in moe_ops {
            let gpu = tree.gpu_events(trace, moe);
            let mut gemms: Vec<EventId> = gpu
                .iter()
                .copied()
                .filter(|&k| {
                    trace.event(k).cat == Cat::Kernel
                        && trace.name(k).to_lowercase().contains("matmul_ogs")
                })
                .collect();
            if gemms.is_empty() {
                continue;
            }
            let topk = find_topk(trace, tree, moe).unwrap_or(DEFAULT_TOPK);
            gemms.sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
            for (idx, &k) in gemms.iter().enumerate() {
                let kind = if idx == 0 { "up" } else { "down" };
                let gated = {
                    let l = trace.name(k).to_lowercase();
                    l.contains("_swiglu") || l.contains("_glu")
                };
                let extra = vec![
                    ("MoE GEMM type".into(), ArgValue::Str(kind.into())),
                    ("MoE GEMM index".into(), ArgValue::Int(idx as i64)),
                    ("MoE GEMM gated".into(), ArgValue::Bool(gated)),
                    ("MoE topk".into(), ArgValue::Int(topk)),
                ];
                let name = if idx == 0 {
                    "pseudo_op::moe_triton_unfused_up"
                } else {
                    "pseudo_op::moe_triton_unfused_down"
                };
                if !self.inject(trace, tree, moe, k, name, extra) {
                    return;
                }
            }
            let scatter: Vec<EventId> = gpu
                .iter()
                .copied()
                .filter(|&k| trace.name(k).to_lowercase().contains("matmul_scatter"))
                .collect();
            match scatter.as_slice() {
                [] => {}
                &[k] => {
                    let extra = vec![(
                        "MoE GEMM type".into(),
                        ArgValue::Str("finalize_matmul_scatter".into()),
                    )];
                    let name = "pseudo_op::moe_triton_unfused_finalize_matmul_scatter";
                    if !self.inject(trace, tree, moe, k, name, extra) {
                        return;
                    }
                }
                // The reference stops the whole extension here.
                _ => {
                    self.warnings.push(format!(
                        "--pseudo-ops: {MOE_OP} (UID {}) has {} matmul_scatter kernels; no more MoE pseudo ops",
                        moe.index(),
                        scatter.len()
                    ));
                    return;
                }
            }
        }
    }

    /// Puts a pseudo op between kernel `k`'s launch and the launch's parent.
    /// False (with a warning) when the reference's injection fails, which
    /// ends its extension: the launch has no parent, or was already moved.
    fn inject(
        &mut self,
        trace: &Trace,
        tree: &Tree,
        donor: EventId,
        k: EventId,
        name: &'static str,
        extra: Vec<(Box<str>, ArgValue)>,
    ) -> bool {
        let parent = tree.parent(k).and_then(|l| tree.parent(l).map(|p| (l, p)));
        let Some((launcher, parent)) = parent.filter(|(l, _)| !self.moved.contains(l)) else {
            self.warnings.push(format!(
                "--pseudo-ops: cannot isolate kernel {} (UID {}) of {MOE_OP}: its launch has no parent or launches other split kernels; no more MoE pseudo ops",
                trace.name(k),
                k.index()
            ));
            return false;
        };
        let i = self.ops.len();
        self.ops.push(PseudoOp {
            uid: trace.len() + i,
            name,
            donor,
            parent,
            launcher,
            kernel: k,
            extra,
        });
        self.under.entry(parent).or_default().push(i);
        self.moved.insert(launcher);
        true
    }
}

/// The `k` of the first `TopK` op below `moe` (its second concrete input),
/// searched depth first through at most 10 levels.
fn find_topk(trace: &Trace, tree: &Tree, moe: EventId) -> Option<i64> {
    fn search(trace: &Trace, tree: &Tree, n: EventId, depth: usize) -> Option<i64> {
        if depth > 10 {
            return None;
        }
        if trace.name(n).contains("TopK") {
            let concrete = trace.op_args(n).concrete.and_then(ArgValue::as_list);
            let k = concrete
                .and_then(|c| c.get(1))
                .and_then(ArgValue::as_str)
                .and_then(|s| s.trim().parse::<i64>().ok());
            if k.is_some() {
                return k;
            }
        }
        tree.children(n)
            .find_map(|c| search(trace, tree, c, depth + 1))
    }
    tree.children(moe).find_map(|c| search(trace, tree, c, 0))
}

/// The reference's name index (`name2event_uids`): the names of the host
/// events it nests and of the linked GPU events.
struct NameIndex<'t> {
    names: FxHashSet<&'t str>,
    /// Some `kernel` event's name contains `matmul_ogs` (any case).
    matmul_ogs: bool,
    /// Some `kernel` event's name contains `fused_moe_kernel_gptq_awq`.
    gptq_awq: bool,
}

impl<'t> NameIndex<'t> {
    fn of(trace: &'t Trace, tree: &Tree) -> Self {
        let mut idx = NameIndex {
            names: FxHashSet::default(),
            matmul_ogs: false,
            gptq_awq: false,
        };
        for (i, e) in trace.events() {
            let name = trace.name_of(e);
            if e.cat == Cat::Kernel {
                idx.matmul_ogs |= name.to_lowercase().contains("matmul_ogs");
                idx.gptq_awq |= name.contains("fused_moe_kernel_gptq_awq");
            }
            if in_name_index(tree, i, e.cat) {
                idx.names.insert(name);
            }
        }
        idx
    }

    fn has(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    fn any_match(&self, pattern: &str) -> bool {
        let re = Regex::new(pattern).expect("valid pattern");
        self.names.iter().any(|n| re.is_match(n))
    }

    /// The reference's extensions this trace would trigger that we do not
    /// implement.
    fn unsupported(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.has(MOE_OP) && self.has("vllm::rocm_aiter_fused_moe") {
            out.push("MoE_Fused (aiter)");
        }
        if self.has("vllm::outplace_fused_experts") && self.gptq_awq {
            out.push("MoE_GPTQ_AWQ");
        }
        if self.has("aiter::fused_moe_") {
            out.push("MoE_Flydsl");
        }
        if self.has("aiter::mla_decode_stage1_asm_fwd")
            && self.any_match(r"aiter/mla.py\(\d+\): mla_decode_fwd")
        {
            out.push("MLA_Decode");
        }
        if self.has("aiter::mla_prefill_ps_asm_fwd")
            && self.any_match(r":\s*mla_fp8_prefill_attn(\b|$)")
        {
            out.push("MLA_Prefill");
        }
        if self.any_match(r"paged_decode\.py\(\d+\):\s*sparse_attn_v4_paged_decode") {
            out.push("V4_Paged_Decode");
        }
        if self.has("_rocm_C::paged_attention") {
            out.push("RocmPagedAttn_KVCacheDtype");
        }
        if self.has("aiter::paged_attention_v1") {
            out.push("AiterPagedAttn_KVCacheDtype");
        }
        out
    }

    /// The events named `name` in index order: by start time, ties in
    /// trace order.
    fn events_named(trace: &Trace, tree: &Tree, name: &str) -> Vec<EventId> {
        let mut out: Vec<EventId> = trace
            .events()
            .filter(|&(i, e)| in_name_index(tree, i, e.cat) && trace.name_of(e) == name)
            .map(|(i, _)| i)
            .collect();
        out.sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
        out
    }
}

/// Whether the reference's name index holds event `i`: the host events its
/// tree nests (python frames only when the tree holds them) and the linked
/// GPU events.
fn in_name_index(tree: &Tree, i: EventId, cat: Cat) -> bool {
    match cat {
        Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver => true,
        Cat::PythonFunction => tree.python_included,
        c if c.is_gpu() => tree.parent(i).is_some(),
        _ => false,
    }
}
