//! Fusion candidates: runs of memory-bound elementwise and normalization
//! ops under one parent, each taking a tensor of the shape the one before
//! it gave. Unfused, every op writes its result to memory and the next
//! reads it back; one fused kernel keeps it on chip, so the run moves
//! fewer bytes. The trace records shapes but no tensor identities, so a
//! run may join two independent ops of one shape (the query and key
//! halves of a rotary embedding): the finding's confidence is low.

use rustc_hash::FxHashMap;

use super::super::health::{Evidence, GpuEvents, MAX_EVENTS};
use super::super::{Confidence, Finding, Inputs};
use super::{impact, worth};
use crate::analysis::perf_model::{self, Family, OpInput};
use crate::analysis::pytorch::op_metrics::op_input;
use crate::trace::{ArgValue, Cat, EventId, Trace};

/// A run of memory-bound ops a fused kernel would do with fewer bytes.
pub const MEMORY_BOUND_CHAIN: &str = "op.memory_bound_chain";

/// The op families a run is made of: their kernels stream tensors
/// through memory with under a few FLOPs per byte on every GPU.
pub const FUSIBLE_FAMILIES: &[Family] = &[
    Family::UnaryElementwise,
    Family::BinaryElementwise,
    Family::Normalization,
    Family::RmsNorm,
];

/// A run holds at least this many ops.
pub const MIN_CHAIN_OPS: usize = 2;

/// A run is a candidate when fused it would move at most this share of
/// its bytes: a smaller saving is within what the fused kernel's own
/// costs (reductions, broadcasts) take back.
pub const MAX_FUSED_FRACTION: f64 = 0.7;

/// An op that does more FLOPs per byte than this is not memory-bound
/// however it is written (every GPU the tool knows has its ridge above
/// 10 FLOPs/byte).
pub const MAX_FLOPS_PER_BYTE: f64 = 4.0;

/// Runs reported, at most (the ones giving back the most).
pub const MAX_RUNS: usize = 3;

/// One op of a run.
struct Member {
    uid: EventId,
    /// Bytes its model says it moves.
    bytes: f64,
    /// Its kernels' time, µs.
    kernel_us: f64,
    /// Its largest tensor input: the shape its result has.
    main: Option<(Vec<i64>, f64)>,
}

/// The runs of one kind (parent and op names), summed over their
/// occurrences.
#[derive(Default)]
struct Runs {
    occurrences: usize,
    kernel_us: f64,
    bytes: f64,
    fused_bytes: f64,
    /// The first occurrence's ops.
    first: Vec<EventId>,
    /// The first occurrence's result shape.
    shape: Option<Vec<i64>>,
}

impl Runs {
    /// The kernel time fusion would give back, ms, at the bandwidth the
    /// runs reach now.
    fn gain_ms(&self) -> f64 {
        if self.bytes <= 0.0 {
            return 0.0;
        }
        self.kernel_us * (1.0 - self.fused_bytes / self.bytes) / 1e3
    }
}

/// `op.memory_bound_chain`: runs of at least [`MIN_CHAIN_OPS`]
/// consecutive fusible ops under one parent, each reading a tensor of the
/// shape the previous one wrote, whose fused bytes are at most
/// [`MAX_FUSED_FRACTION`] of theirs, grouped by parent and op names.
pub fn memory_bound_chain(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    let trace = inputs.trace;
    let tree = inputs.tree;
    let mut kinds: FxHashMap<(Option<String>, Vec<String>), Runs> = FxHashMap::default();
    let mut record = |parent: Option<EventId>, run: &[Member]| {
        let Some(fused) = fused_bytes(run) else {
            return;
        };
        let bytes: f64 = run.iter().map(|m| m.bytes).sum();
        if run.len() < MIN_CHAIN_OPS || bytes <= 0.0 || fused > MAX_FUSED_FRACTION * bytes {
            return;
        }
        let parent = parent.map(|p| trace.name(p).to_string());
        let names = run.iter().map(|m| trace.name(m.uid).to_string()).collect();
        let k = kinds.entry((parent, names)).or_default();
        if k.occurrences == 0 {
            k.first = run.iter().map(|m| m.uid).collect();
            k.shape = run[0].main.as_ref().map(|m| m.0.clone());
        }
        k.occurrences += 1;
        k.kernel_us += run.iter().map(|m| m.kernel_us).sum::<f64>();
        k.bytes += bytes;
        k.fused_bytes += fused;
    };
    // The top-level ops of each thread, then the children of every op.
    let mut lists: FxHashMap<_, Vec<EventId>> = FxHashMap::default();
    let mut order = Vec::new();
    for &r in &tree.host_roots {
        let e = trace.event(r);
        let key = (e.pid, e.tid);
        if !lists.contains_key(&key) {
            order.push(key);
        }
        lists.entry(key).or_default().push(r);
    }
    let mut memo = FxHashMap::default();
    let mut stack: Vec<EventId> = Vec::new();
    for key in order {
        let roots = &lists[&key];
        scan(
            trace,
            inputs,
            None,
            roots.iter().copied(),
            &mut record,
            &mut memo,
        );
        stack.extend(roots.iter().copied());
    }
    while let Some(n) = stack.pop() {
        if tree.gpu_count(n) == 0 {
            continue;
        }
        let kids: Vec<EventId> = tree
            .children(n)
            .filter(|&c| !trace.event(c).cat.is_gpu())
            .collect();
        scan(
            trace,
            inputs,
            Some(n),
            kids.iter().copied(),
            &mut record,
            &mut memo,
        );
        stack.extend(kids);
    }
    let mut found: Vec<(Option<String>, Vec<String>, Runs)> = kinds
        .into_iter()
        .map(|((p, n), r)| (p, n, r))
        .filter(|(_, _, r)| worth(inputs, r.gain_ms()))
        .collect();
    found.sort_by(|a, b| {
        b.2.gain_ms()
            .total_cmp(&a.2.gain_ms())
            .then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1)))
    });
    found.truncate(MAX_RUNS);
    Ok(found
        .into_iter()
        .map(|(parent, names, r)| finding(inputs, parent, &names, &r))
        .collect())
}

/// Walks one list of siblings, handing each maximal run of linked
/// fusible ops to `record`. Ops without GPU work (views, allocations) are
/// passed over; any other op or launch with GPU work ends a run.
fn scan(
    trace: &Trace,
    inputs: &Inputs,
    parent: Option<EventId>,
    siblings: impl Iterator<Item = EventId>,
    record: &mut impl FnMut(Option<EventId>, &[Member]),
    memo: &mut FxHashMap<InputKey, Modelled>,
) {
    let tree = inputs.tree;
    let mut run: Vec<Member> = Vec::new();
    for c in siblings {
        if tree.gpu_count(c) == 0 {
            continue;
        }
        let member = (trace.event(c).cat == Cat::CpuOp)
            .then(|| member(trace, inputs, c, memo))
            .flatten();
        match member {
            Some(m) if run.last().is_none_or(|prev| linked(prev, &m, trace)) => run.push(m),
            Some(m) => {
                record(parent, &run);
                run = vec![m];
            }
            None => {
                record(parent, &run);
                run.clear();
            }
        }
    }
    record(parent, &run);
}

/// An op's name and recorded arguments, by address: the trace interns
/// both, so equal addresses are equal inputs (ops repeat per layer and
/// step with the same shapes).
type InputKey = [usize; 5];

/// What a model evaluation gives a run member: its bytes and its largest
/// tensor input; None for an op that is no member.
type Modelled = Option<(f64, Option<(Vec<i64>, f64)>)>;

/// The op `uid` as a run member: a fusible, memory-bound op whose model
/// gives its bytes. Evaluations are memoised in `memo`.
fn member(
    trace: &Trace,
    inputs: &Inputs,
    uid: EventId,
    memo: &mut FxHashMap<InputKey, Modelled>,
) -> Option<Member> {
    let name = trace.name(uid);
    let class = perf_model::lookup(name)?;
    if !FUSIBLE_FAMILIES.contains(&class.family) {
        return None;
    }
    let a = trace.op_args(uid);
    let addr = |v: Option<&ArgValue>| v.map_or(0, |v| v as *const ArgValue as usize);
    let key = [
        name.as_ptr() as usize,
        addr(a.dims),
        addr(a.types),
        addr(a.strides),
        addr(a.concrete),
    ];
    let kernels = inputs.tree.gpu_events(trace, uid);
    let modelled = memo
        .entry(key)
        .or_insert_with(|| {
            let names = kernels.iter().map(|&k| trace.name(k)).collect();
            let input = op_input(trace, uid, names);
            let eval = perf_model::evaluate(class, &input, false).ok()?;
            let bytes = eval.bytes.filter(|b| *b > 0.0)?;
            (eval.flops / bytes <= MAX_FLOPS_PER_BYTE).then(|| (bytes, main_tensor(&input)))
        })
        .clone()?;
    Some(Member {
        uid,
        bytes: modelled.0,
        kernel_us: kernels.iter().map(|&k| trace.event(k).dur).sum(),
        main: modelled.1,
    })
}

/// The largest tensor input (its dims and bytes per element).
fn main_tensor(input: &OpInput) -> Option<(Vec<i64>, f64)> {
    let dims = input.dims?;
    let types = input.types.as_ref()?;
    let mut best: Option<(Vec<i64>, f64, f64)> = None;
    for (d, t) in dims.iter().zip(types) {
        let Some(shape) = shape_of(d) else { continue };
        let Some(size) = perf_model::bytes_per_element(Some(t)) else {
            continue;
        };
        let numel: f64 = shape.iter().map(|&x| x as f64).product();
        if best.as_ref().is_none_or(|b| numel > b.2) {
            best = Some((shape, size, numel));
        }
    }
    best.filter(|b| b.2 > 0.0).map(|(s, size, _)| (s, size))
}

/// A tensor's dims, for a non-empty list of integers.
fn shape_of(v: &ArgValue) -> Option<Vec<i64>> {
    let items = v.as_list()?;
    if items.is_empty() {
        return None;
    }
    items.iter().map(ArgValue::as_i64).collect()
}

/// Whether `next` reads a tensor of the shape `prev` wrote: one of its
/// recorded inputs has those dims.
fn linked(prev: &Member, next: &Member, trace: &Trace) -> bool {
    let Some((shape, _)) = &prev.main else {
        return false;
    };
    let dims = trace.op_args(next.uid).dims.and_then(ArgValue::as_list);
    dims.is_some_and(|ds| ds.iter().any(|d| shape_of(d).as_ref() == Some(shape)))
}

/// The bytes one fused kernel would move for `run`: its ops' bytes less
/// a write and a read of each tensor handed from one op to the next, and
/// never less than its largest op's.
fn fused_bytes(run: &[Member]) -> Option<f64> {
    let total: f64 = run.iter().map(|m| m.bytes).sum();
    let largest = run.iter().map(|m| m.bytes).fold(0.0, f64::max);
    let mut saved = 0.0;
    for m in &run[..run.len().saturating_sub(1)] {
        let (shape, size) = m.main.as_ref()?;
        let numel: f64 = shape.iter().map(|&x| x as f64).product();
        saved += 2.0 * numel * size;
    }
    Some((total - saved).max(largest))
}

/// The finding of one kind of run.
fn finding(inputs: &Inputs, parent: Option<String>, names: &[String], r: &Runs) -> Finding {
    let ms = r.gain_ms();
    let imp = impact(inputs, ms, 0.25, 0.5, 1.0);
    let fused_pct = 100.0 * r.fused_bytes / r.bytes;
    let shape = r.shape.as_ref().map(|s| {
        let dims: Vec<String> = s.iter().map(i64::to_string).collect();
        format!("({})", dims.join(", "))
    });
    let summary = format!(
        "{} run(s) of {} memory-bound ops ({}) {} took {:.3} ms of kernel time; if each op reads the result of the one before (the shapes say it may), one fused kernel would move about {fused_pct:.0}% of their bytes: up to {ms:.3} ms less ({:.1}% of the GPU span)",
        r.occurrences,
        names.len(),
        names.join(" → "),
        parent
            .as_ref()
            .map_or_else(|| "at the top level".to_string(), |p| format!("under {p}")),
        r.kernel_us / 1e3,
        imp.share_pct(ms)
    );
    let per = r.occurrences.max(1) as f64;
    let mut f = Finding::new(
        MEMORY_BOUND_CHAIN,
        Confidence::Low,
        summary,
        imp,
        vec![
            Evidence::new("ops_per_run", names.len() as f64, "count"),
            Evidence::new("runs", r.occurrences as f64, "count"),
            Evidence::new("kernel_time", r.kernel_us / 1e3, "ms"),
            Evidence::new("bytes_per_run", r.bytes / per / 1e6, "MB"),
            Evidence::new("fused_bytes_per_run", r.fused_bytes / per / 1e6, "MB"),
            Evidence::new("kernel_time_fusion_saves", ms, "ms"),
        ],
    );
    f.events = r.first.iter().copied().take(MAX_EVENTS).collect();
    f.shape = shape;
    f.actions = vec![
        "compile the module (torch.compile) so that its elementwise and normalization ops become one kernel",
        "use a fused implementation (fused LayerNorm/RMSNorm with the residual add, a GEMM epilogue for bias and activation)",
    ];
    // The tree under the parent shows the run; at the top level, the tree
    // under its first op.
    f.commands = vec![super::idle::tree_command(
        parent.as_deref().unwrap_or(&names[0]),
    )];
    f.subject = parent;
    f
}
