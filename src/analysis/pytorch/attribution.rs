//! Direct attribution of GPU work to launchers: each
//! non-communication GPU event belongs to the innermost enclosing cpu_op of
//! its launch (skipping `execute` and python frames), or to the runtime call
//! itself when there is none. Shared by the ops sheets and the kernel sheets.

use rustc_hash::FxHashMap;

use crate::analysis::common::op_categories::is_comm_name;
use crate::numeric::total_order_key;
use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, Trace};

/// One launcher (a row of the reference's internal table `L`).
#[derive(Debug, Clone)]
pub struct Launcher {
    /// The launcher event (a cpu_op, or a runtime call without one).
    pub uid: EventId,
    /// Where its GPU events are in [`Attribution::kernels`] (one list for
    /// all launchers, not a small vector each: a big trace has tens of
    /// thousands of launchers).
    kernels: std::ops::Range<u32>,
}

/// The launcher table and the reverse lookup.
#[derive(Debug, Default)]
pub struct Attribution {
    /// Launchers sorted by launcher `ts`; ties in order of first kernel met.
    pub launchers: Vec<Launcher>,
    /// Launcher event -> index into `launchers`.
    pub index_of: FxHashMap<EventId, u32>,
    /// The launchers' GPU events, launcher after launcher, each launcher's
    /// stably sorted by start time.
    kernels: Vec<EventId>,
}

impl Attribution {
    /// The GPU events of launcher `l`, stably sorted by start time.
    pub fn kernels(&self, l: &Launcher) -> &[EventId] {
        &self.kernels[l.kernels.start as usize..l.kernels.end as usize]
    }

    /// Name of the first GPU event (by start) attributed to `op`, if any.
    pub fn first_kernel<'t>(&self, trace: &'t Trace, op: EventId) -> Option<&'t str> {
        let i = *self.index_of.get(&op)?;
        self.kernels(&self.launchers[i as usize])
            .first()
            .map(|&k| trace.name(k))
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
    // (launcher in order of first meeting, GPU event), in trace order.
    let mut pairs: Vec<(u32, EventId)> = Vec::new();
    for (k, e) in trace.events() {
        if !e.cat.is_gpu() || comm.is_comm(trace, k) {
            continue;
        }
        let Some(l) = launcher_of(trace, tree, k) else {
            continue;
        };
        let i = *att.index_of.entry(l).or_insert_with(|| {
            first_met.push(l);
            first_met.len() as u32 - 1
        });
        pairs.push((i, k));
    }
    // By start, ties in order of first meeting: the keys are read once (not
    // in every comparison) and the index breaks ties as a stable sort would.
    let mut order: Vec<(i64, u32)> = first_met
        .iter()
        .zip(0..)
        .map(|(&l, i)| (total_order_key(trace.event(l).ts), i))
        .collect();
    order.sort_unstable();
    let mut pos_of = vec![0u32; first_met.len()];
    for (pos, &(_, i)) in (0..).zip(&order) {
        pos_of[i as usize] = pos;
    }
    // Each launcher's slice of the list, in launcher order; its events
    // placed in trace order, then stably sorted by start time.
    let mut starts = vec![0u32; first_met.len() + 1];
    for &(i, _) in &pairs {
        starts[pos_of[i as usize] as usize + 1] += 1;
    }
    for p in 1..starts.len() {
        starts[p] += starts[p - 1];
    }
    let mut next = starts.clone();
    att.kernels = vec![EventId::new(0); pairs.len()];
    for &(i, k) in &pairs {
        let slot = &mut next[pos_of[i as usize] as usize];
        att.kernels[*slot as usize] = k;
        *slot += 1;
    }
    att.launchers.reserve(order.len());
    for (pos, &(_, i)) in order.iter().enumerate() {
        let range = starts[pos]..starts[pos + 1];
        att.kernels[range.start as usize..range.end as usize]
            .sort_by(|&a, &b| trace.event(a).ts.total_cmp(&trace.event(b).ts));
        att.launchers.push(Launcher {
            uid: first_met[i as usize],
            kernels: range,
        });
    }
    // The map held order-of-meeting indices: renumbered in place.
    for i in att.index_of.values_mut() {
        *i = pos_of[*i as usize];
    }
    att
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;
    use crate::trace::tree::{TreeOptions, build};

    /// Launchers come by start time, ties in the order their first GPU
    /// event is met; each one's GPU events by start time, ties in trace
    /// order; the reverse lookup finds each launcher's place.
    #[test]
    fn launchers_and_their_kernels_come_in_start_order() {
        let op = |name: &str, tid: u32, ts: u32| {
            format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":{tid},"ts":{ts},"dur":100}}"#
            )
        };
        let launch = |tid: u32, ts: u32, corr: u32| {
            format!(
                r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":{tid},"ts":{ts},"dur":1,"args":{{"correlation":{corr}}}}}"#
            )
        };
        let kernel = |name: &str, ts: u32, corr: u32| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":7,"ts":{ts},"dur":1,"args":{{"correlation":{corr}}}}}"#
            )
        };
        let events = [
            op("a", 1, 50),
            launch(1, 51, 1),
            launch(1, 52, 2),
            launch(1, 53, 3),
            op("b", 2, 10),
            launch(2, 11, 4),
            op("c", 3, 50),
            launch(3, 51, 5),
            kernel("c0", 5, 5),
            kernel("a1", 300, 1),
            kernel("a2", 200, 2),
            kernel("a3", 200, 3),
            kernel("b0", 100, 4),
        ];
        let trace = trace_of_json(&events.join(","));
        let tree = build(&trace, TreeOptions::default());
        let att = attribute(&trace, &tree, &mut CommNames::new(&trace));
        let shown: Vec<(&str, Vec<&str>)> = att
            .launchers
            .iter()
            .map(|l| {
                let ks = att.kernels(l).iter().map(|&k| trace.name(k)).collect();
                (trace.name(l.uid), ks)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("b", vec!["b0"]),
                ("c", vec!["c0"]),
                ("a", vec!["a2", "a3", "a1"]),
            ]
        );
        for (pos, l) in att.launchers.iter().enumerate() {
            assert_eq!(att.index_of[&l.uid] as usize, pos);
        }
        assert_eq!(att.first_kernel(&trace, att.launchers[2].uid), Some("a2"));
    }
}
