//! Direct attribution of GPU work to launchers (spec 02 §3.1): each
//! non-communication GPU event belongs to the innermost enclosing cpu_op of
//! its launch (skipping `execute` and python frames), or to the runtime call
//! itself when there is none. Shared by the ops sheets and the kernel sheets.

use std::collections::HashMap;

use super::categories::is_comm_name;
use crate::trace::tree::Tree;
use crate::trace::{Cat, NONE, Trace};

/// One launcher (a row of the reference's internal table `L`).
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The launcher event (a cpu_op, or a runtime call without one).
    pub uid: u32,
    /// Its GPU events, stably sorted by start time.
    pub kernels: Vec<u32>,
}

/// The launcher table and the reverse lookup.
#[derive(Debug, Default)]
pub struct Attribution {
    /// Launchers sorted by launcher `ts`; ties in order of first kernel met.
    pub launchers: Vec<Launcher>,
    /// Launcher event -> index into `launchers`.
    pub index_of: HashMap<u32, usize>,
}

impl Attribution {
    /// Name of the first GPU event (by start) attributed to `op`, if any.
    pub fn first_kernel<'t>(&self, trace: &'t Trace, op: u32) -> Option<&'t str> {
        let i = *self.index_of.get(&op)?;
        self.launchers[i].kernels.first().map(|&k| trace.name(k))
    }
}

/// Per-name cache of the communication predicate.
pub struct CommNames(Vec<u8>);

impl CommNames {
    /// An empty cache sized for the trace's string table.
    pub fn new(trace: &Trace) -> Self {
        CommNames(vec![2; trace.strings.len()])
    }

    /// True when the event's name is communication.
    pub fn is_comm(&mut self, trace: &Trace, ev: u32) -> bool {
        let id = trace.events[ev as usize].name;
        if id == NONE {
            return false;
        }
        let slot = &mut self.0[id as usize];
        if *slot == 2 {
            *slot = is_comm_name(trace.strings.get(id)) as u8;
        }
        *slot == 1
    }
}

/// The launcher of linked GPU event `k`, or None when it is unlinked.
pub fn launcher_of(trace: &Trace, tree: &Tree, k: u32) -> Option<u32> {
    let r = tree.parent[k as usize];
    if r == NONE {
        return None;
    }
    let mut c = tree.parent[r as usize];
    let mut steps = 0;
    while c != NONE && steps < trace.events.len() {
        let e = &trace.events[c as usize];
        match e.cat {
            Cat::CpuOp if trace.strings.get(e.name) != "execute" => return Some(c),
            Cat::CpuOp | Cat::PythonFunction => c = tree.parent[c as usize],
            _ => break,
        }
        steps += 1;
    }
    Some(r)
}

/// Builds the launcher table.
pub fn attribute(trace: &Trace, tree: &Tree, comm: &mut CommNames) -> Attribution {
    let mut att = Attribution::default();
    let mut first_met: Vec<u32> = Vec::new();
    let mut kernels: Vec<Vec<u32>> = Vec::new();
    for (k, e) in trace.events.iter().enumerate() {
        let k = k as u32;
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
    let mut order: Vec<usize> = (0..first_met.len()).collect();
    order.sort_by(|&a, &b| {
        let ta = trace.events[first_met[a] as usize].ts;
        let tb = trace.events[first_met[b] as usize].ts;
        ta.total_cmp(&tb)
    });
    att.index_of.clear();
    for (pos, &i) in order.iter().enumerate() {
        let mut ks = std::mem::take(&mut kernels[i]);
        ks.sort_by(|&a, &b| {
            trace.events[a as usize]
                .ts
                .total_cmp(&trace.events[b as usize].ts)
        });
        att.index_of.insert(first_met[i], pos);
        att.launchers.push(Launcher {
            uid: first_met[i],
            kernels: ks,
        });
    }
    att
}
