//! One trace as TraceDiff sees it: its call tree, the two tree edits the
//! root discovery makes, and the cached normalised names.

use rustc_hash::FxHashMap;

use super::names::{NameId, NameTable, normalize};
use crate::trace::tree::Tree;
use crate::trace::{ArgValue, Cat, EventId, Trace};

/// Runtime calls that launch a whole graph: they never stop a descent and
/// are not dispatch nodes.
const GRAPH_LAUNCHES: [&str; 2] = ["hipGraphLaunch", "cudaGraphLaunch"];

/// Cache slot not computed yet.
const UNSET: u32 = u32::MAX;
/// Cache slot of an empty name.
const NO_NAME: u32 = u32::MAX - 1;

/// Which trace of the pair: the baseline (`trace1`) or the variant (`trace2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Which {
    /// The baseline, reported as `trace1`.
    Base,
    /// The variant, reported as `trace2`.
    Variant,
}

impl Which {
    /// The label the reference writes: `trace1` or `trace2`.
    pub fn label(self) -> &'static str {
        match self {
            Which::Base => "trace1",
            Which::Variant => "trace2",
        }
    }

    /// `base` for the baseline, `variant` for the variant.
    pub fn pick<T>(self, base: T, variant: T) -> T {
        match self {
            Which::Base => base,
            Which::Variant => variant,
        }
    }
}

/// A trace, its tree and TraceDiff's view of both.
pub struct Side<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// Its call tree (built without python frames, as the reference's default).
    pub tree: &'a Tree,
    /// Children replaced by the root discovery.
    kids: FxHashMap<EventId, Vec<EventId>>,
    /// Parents replaced by the root discovery.
    parents: FxHashMap<EventId, EventId>,
    /// Normalised name id per interned name (plain, and with details stripped).
    norm: [Vec<u32>; 2],
}

impl<'a> Side<'a> {
    /// The view of `trace` with its `tree`, unedited.
    pub fn new(trace: &'a Trace, tree: &'a Tree) -> Side<'a> {
        let n = trace.strings().len();
        Side {
            trace,
            tree,
            kids: FxHashMap::default(),
            parents: FxHashMap::default(),
            norm: [vec![UNSET; n], vec![UNSET; n]],
        }
    }

    /// The children of `n`, in tree order.
    pub fn children(&self, n: EventId) -> Vec<EventId> {
        match self.kids.get(&n) {
            Some(k) => k.clone(),
            None => self.tree.children(n).collect(),
        }
    }

    /// The parent of `n`.
    pub fn parent(&self, n: EventId) -> Option<EventId> {
        match self.parents.get(&n) {
            Some(&p) => Some(p),
            None => self.tree.parent(n),
        }
    }

    /// The event's category.
    pub fn cat(&self, n: EventId) -> Cat {
        self.trace.event(n).cat
    }

    /// The raw name, or the UID when the event has none (`_get_op_name`).
    pub fn op_name(&self, n: EventId) -> String {
        let name = self.trace.name(n);
        if name.is_empty() {
            n.index().to_string()
        } else {
            name.to_string()
        }
    }

    /// True for a graph launch (`cudaGraphLaunch`, `hipGraphLaunch`).
    fn is_graph_launch(&self, n: EventId) -> bool {
        GRAPH_LAUNCHES.contains(&self.trace.name(n))
    }

    /// A runtime or driver call that launches one piece of GPU work.
    pub fn is_dispatch(&self, n: EventId) -> bool {
        self.cat(n).is_runtime() && !self.is_graph_launch(n)
    }

    /// A kernel or a copy (not a fill).
    pub fn is_kernel_like(&self, n: EventId) -> bool {
        matches!(self.cat(n), Cat::Kernel | Cat::GpuMemcpy)
    }

    /// Skipped by the reconciliation: kernels and dispatch calls.
    pub fn is_reconcile_skipped(&self, n: EventId) -> bool {
        (self.cat(n) == Cat::Kernel || self.cat(n).is_runtime()) && !self.is_graph_launch(n)
    }

    /// On the GPU path: GPU work itself, or an event with GPU work below it
    /// (the reference's `non_gpu_path` unset).
    pub fn on_gpu_path(&self, n: EventId) -> bool {
        self.cat(n).is_gpu() || self.tree.gpu_count(n) > 0
    }

    /// The GPU-path children of `n`, in tree order.
    pub fn gpu_children(&self, n: EventId) -> Vec<EventId> {
        let mut k = self.children(n);
        k.retain(|&c| self.on_gpu_path(c));
        k
    }

    /// The start time, 0 when absent (the sort key of child lists).
    pub fn ts(&self, n: EventId) -> f64 {
        let ts = self.trace.event(n).ts;
        if ts.is_nan() { 0.0 } else { ts }
    }

    /// Sorts `nodes` by start time, keeping the order of equal ones.
    pub fn sort_by_ts(&self, nodes: &mut [EventId]) {
        nodes.sort_by(|&a, &b| self.ts(a).total_cmp(&self.ts(b)));
    }

    /// The normalised name, `None` when the event has no name
    /// (`_get_name_node`).
    pub fn name(&mut self, n: EventId, names: &mut NameTable) -> Option<NameId> {
        let sid = self.trace.event(n).name?;
        let slot = self.norm[0][sid.index()];
        let id = if slot == UNSET {
            let raw = self.trace.string(sid);
            let id = if raw.is_empty() {
                NO_NAME
            } else {
                names.intern(normalize(raw, false))
            };
            self.norm[0][sid.index()] = id;
            id
        } else {
            slot
        };
        (id != NO_NAME).then_some(id)
    }

    /// The name Wagner–Fischer compares: the normalised name, or the UID
    /// when the event has none.
    pub fn align_name(&mut self, n: EventId, strip: bool, names: &mut NameTable) -> NameId {
        let Some(sid) = self
            .trace
            .event(n)
            .name
            .filter(|s| !self.trace.string(*s).is_empty())
        else {
            return names.intern(normalize(&n.index().to_string(), strip));
        };
        let k = usize::from(strip);
        let slot = self.norm[k][sid.index()];
        if slot != UNSET {
            return slot;
        }
        let id = names.intern(normalize(self.trace.string(sid), strip));
        self.norm[k][sid.index()] = id;
        id
    }

    /// The node a cpu root hangs from: the top of its parent
    /// chain, then down through single children that are neither ops nor
    /// dispatch calls. When that descent moves, the top node takes over
    /// the final node's children, as the reference's tree edit does.
    pub fn top_level_root(&mut self, start: EventId) -> EventId {
        let mut top = start;
        // A parent chain is finite in a tree; the bound guards edited trees.
        for _ in 0..self.trace.len() {
            match self.parent(top) {
                Some(p) => top = p,
                None => break,
            }
        }
        let mut cur = top;
        loop {
            let kids = self.children(cur);
            let [only] = kids[..] else { break };
            let stops = matches!(
                self.cat(only),
                Cat::CpuOp | Cat::CudaRuntime | Cat::CudaDriver
            ) && !self.is_graph_launch(only);
            if stops || only == top {
                break;
            }
            cur = only;
        }
        if cur != top {
            let kids = self.children(cur);
            for &k in &kids {
                self.parents.insert(k, top);
            }
            self.kids.insert(top, kids);
        }
        cur
    }

    /// The nearest `cpu_op` above a GPU event, if any.
    pub fn enclosing_op(&self, gpu: EventId) -> Option<EventId> {
        let mut p = self.parent(gpu);
        let mut steps = 0;
        while let Some(x) = p {
            if self.cat(x) == Cat::CpuOp {
                return Some(x);
            }
            steps += 1;
            if steps > self.trace.len() {
                return None;
            }
            p = self.parent(x);
        }
        None
    }

    /// An op argument as the reference reads it (`_get_node_arg`): lists
    /// as tuples, `""` when absent.
    pub fn op_arg(&self, n: EventId, which: usize) -> Option<&'a ArgValue> {
        self.trace.op_args(n).all()[which]
    }
}
