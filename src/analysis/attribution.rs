//! Direct attribution of GPU work to launchers (spec 02 §3.1): each
//! non-communication GPU event belongs to the innermost enclosing cpu_op of
//! its launch (skipping `execute` and python frames), or to the runtime call
//! itself when there is none. Shared by the ops sheets and the kernel sheets.

use rustc_hash::FxHashMap;

use super::categories::is_comm_name;
use crate::numeric::total_order_key;
use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, Trace};

/// One launcher (a row of the reference's internal table `L`).
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The launcher event (a cpu_op, or a runtime call without one).
    pub uid: EventId,
    /// Its GPU events, stably sorted by start time.
    pub kernels: Vec<EventId>,
}

/// The launcher table and the reverse lookup.
#[derive(Debug, Default)]
pub struct Attribution {
    /// Launchers sorted by launcher `ts`; ties in order of first kernel met.
    pub launchers: Vec<Launcher>,
    /// Launcher event -> index into `launchers`.
    pub index_of: FxHashMap<EventId, usize>,
}

impl Attribution {
    /// Name of the first GPU event (by start) attributed to `op`, if any.
    pub fn first_kernel<'t>(&self, trace: &'t Trace, op: EventId) -> Option<&'t str> {
        let i = *self.index_of.get(&op)?;
        self.launchers[i].kernels.first().map(|&k| trace.name(k))
    }
}

/// Per-name cache of the communication predicate.
pub struct CommNames(Vec<u8>);

impl CommNames {
    /// An empty cache sized for the trace's string table.
    pub fn new(trace: &Trace) -> Self {
        CommNames(vec![2; trace.strings().len()])
    }

    /// True when the event's name is communication.
    pub fn is_comm(&mut self, trace: &Trace, ev: EventId) -> bool {
        let Some(id) = trace.event(ev).name else {
            return false;
        };
        let slot = &mut self.0[id.index()];
        if *slot == 2 {
            *slot = is_comm_name(trace.string(id)) as u8;
        }
        *slot == 1
    }
}

/// The launcher of linked GPU event `k`, or None when it is unlinked.
pub fn launcher_of(trace: &Trace, tree: &Tree, k: EventId) -> Option<EventId> {
    let r = tree.parent(k)?;
    let mut next = tree.parent(r);
    let mut steps = 0;
    while let Some(c) = next
        && steps < trace.len()
    {
        let e = trace.event(c);
        match e.cat {
            Cat::CpuOp if trace.name_of(e) != "execute" => return Some(c),
            Cat::CpuOp | Cat::PythonFunction => next = tree.parent(c),
            _ => break,
        }
        steps += 1;
    }
    Some(r)
}

/// Builds the launcher table.
pub fn attribute(trace: &Trace, tree: &Tree, comm: &mut CommNames) -> Attribution {
    let mut att = Attribution::default();
    let mut first_met: Vec<EventId> = Vec::new();
    let mut kernels: Vec<Vec<EventId>> = Vec::new();
    for (k, e) in trace.events() {
        if !e.cat.is_gpu() || comm.is_comm(trace, k) {
            continue;
        }
        let Some(l) = launcher_of(trace, tree, k) else {
            continue;
        };
        let i = *att.index_of.entry(l).or_insert_with(|| {
            first_met.push(l);
            kernels.push(Vec::new());
            first_met.len() - 1
        });
        kernels[i].push(k);
    }
    // By start, ties in order of first meeting: the keys are read once (not
    // in every comparison) and the index breaks ties as a stable sort would.
    let mut order: Vec<(i64, usize)> = first_met
        .iter()
        .enumerate()
        .map(|(i, &l)| (total_order_key(trace.event(l).ts), i))
        .collect();
    order.sort_unstable();
    let mut pos_of = vec![0; first_met.len()];
    att.launchers.reserve(order.len());
    for (pos, &(_, i)) in order.iter().enumerate() {
        pos_of[i] = pos;
        let mut ks = std::mem::take(&mut kernels[i]);
        ks.sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
        att.launchers.push(Launcher {
            uid: first_met[i],
            kernels: ks,
        });
    }
    // The map held order-of-meeting indices: renumbered in place.
    for i in att.index_of.values_mut() {
        *i = pos_of[*i];
    }
    att
}
