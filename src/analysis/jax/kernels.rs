//! The JAX report's view of a trace: its GPU kernels in
//! UID order, each with its launch event, its category and the record of
//! the HLO instruction it ran.
//!
//! The reference links a kernel to its launch through `correlation_id`: the
//! launch is the last `/host:CPU` event (pid 701) sharing the kernel's id.
//! Only a linked kernel gets its HLO record. The record comes from the
//! module the kernel names (`hlo_module`); where the profile compiled that
//! module more than once we take the program the kernel ran (`program_id`),
//! where the reference takes whichever its file search returns first.

use std::ops::Range;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::categories::categorize;
use super::hlo_records::{HloRecord, ModuleRecords};
use crate::trace::xla::XlaData;
use crate::trace::{Cat, Event, EventId, Ident, IdentId, StrId, Trace};

/// xprof's pid of the host threads (`/host:CPU`), where launches live.
pub const HOST_PID: i64 = 701;

/// One GPU kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The kernel event.
    pub id: EventId,
    /// Its category ([`categorize`]).
    pub category: &'static str,
    /// The host event that launched it, when linked.
    pub parent: Option<EventId>,
    /// Its HLO record, when it has one ([`JaxTrace::record`]).
    pub record: Option<RecordId>,
}

/// A handle to an HLO record of a [`JaxTrace`]: the kernels of one record
/// (one per step) share it, and two handles are equal when their records
/// are, so it keys maps in place of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordId(u32);

/// A trace as the JAX report reads it.
pub struct JaxTrace<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Kernels of GPU processes, in UID order.
    pub kernels: Vec<Kernel>,
    /// Records of the modules kernels ran, built on first use.
    pub modules: Vec<ModuleRecords>,
    /// Per [`RecordId`], which of `modules` holds the record, and its key.
    records: Vec<(usize, String)>,
    /// What the report should tell the user.
    pub warnings: Vec<String>,
    /// Interned tid 0, where process names live.
    tid_zero: Option<IdentId>,
}

/// An integer pid or tid.
pub fn ident_int(trace: &Trace, id: IdentId) -> Option<i64> {
    match trace.ident(id) {
        Ident::Int(i) => Some(*i),
        _ => None,
    }
}

/// The launch events by correlation id: the last host event (pid 701)
/// carrying each id, the parent of every other event carrying it.
fn launches(trace: &Trace, piece_events: usize) -> FxHashMap<i64, EventId> {
    let Some(host) = trace.int_ident(HOST_PID) else {
        return FxHashMap::default();
    };
    // The host events are found on every core, then entered in order.
    let found: Vec<Vec<(i64, EventId)>> = event_pieces(trace, piece_events)
        .map(|events| {
            events
                .map(EventId::new)
                .filter(|&id| trace.event(id).pid == host)
                .filter_map(|id| Some((trace.args(id)?.correlation()?, id)))
                .collect()
        })
        .collect();
    let mut last = FxHashMap::default();
    last.reserve(found.iter().map(Vec::len).sum());
    for (c, id) in found.into_iter().flatten() {
        last.insert(c, id);
    }
    last
}

/// The launch of event `id` ([`launches`]): none for the launch itself.
fn launch_of(trace: &Trace, launches: &FxHashMap<i64, EventId>, id: EventId) -> Option<EventId> {
    let c = trace.args(id)?.correlation()?;
    launches.get(&c).copied().filter(|&p| p != id)
}

impl<'t> JaxTrace<'t> {
    /// Collects the kernels of `trace`, links them and looks up their
    /// HLO records.
    pub fn new(trace: &'t Trace) -> JaxTrace<'t> {
        JaxTrace::in_pieces(trace, PIECE_EVENTS)
    }

    /// [`JaxTrace::new`], scanning the events in pieces of `piece_events`.
    fn in_pieces(trace: &'t Trace, piece_events: usize) -> JaxTrace<'t> {
        let mut jt = JaxTrace {
            trace,
            kernels: Vec::new(),
            modules: Vec::new(),
            records: Vec::new(),
            warnings: Vec::new(),
            tid_zero: trace.int_ident(0),
        };
        // Only the launches are listed, not every event with a correlation
        // id: a kernel finds its launch by its own id.
        let launches = launches(trace, piece_events);
        let empty = XlaData::default();
        let xla = trace.xla().unwrap_or(&empty);
        // A kernel's statistics and launch are a lookup in a big table
        // each, most of the time here: they are looked up on every core, a
        // piece of the event list at a time, and each piece lists the
        // distinct sets of what a kernel's category and record follow
        // from (they repeat on every step).
        let pieces: Vec<Piece> = event_pieces(trace, piece_events)
            .map(|events| Piece::scan(trace, xla, &launches, events))
            .collect();
        let mut records = RecordIndex::new(xla);
        // Distinct records (module slot, key) -> their handles.
        let mut ids: FxHashMap<(usize, String), RecordId> = FxHashMap::default();
        // Each distinct set is categorised and looked up once, in the order
        // the kernels first show it (`find` warns once per op anyway): the
        // pieces in order, each piece's sets in the order it saw them.
        let mut seen = FxHashMap::default();
        for piece in &pieces {
            let resolved: Vec<(&'static str, Option<RecordId>)> = piece
                .sets
                .iter()
                .map(|&(set, first)| {
                    let (_, hlo_op, module, program, linked) = set;
                    *seen.entry(set).or_insert_with(|| {
                        // Only a launched kernel with an op has a record.
                        let found = hlo_op
                            .filter(|_| linked)
                            .and_then(|op| records.find(module, program, op));
                        let record = found.map(|r| {
                            *ids.entry(r).or_insert_with_key(|r| {
                                jt.records.push(r.clone());
                                // Fewer records than events, whose handles are 32 bits.
                                RecordId((jt.records.len() - 1) as u32)
                            })
                        });
                        (categorize(trace.name(first), hlo_op), record)
                    })
                })
                .collect();
            jt.kernels
                .extend(piece.kernels.iter().map(|&(id, parent, set)| {
                    let (category, record) = resolved[set as usize];
                    Kernel {
                        id,
                        category,
                        parent,
                        record,
                    }
                }));
        }
        jt.warnings.append(&mut records.warnings);
        jt.modules = records.built;
        for m in &jt.modules {
            jt.warnings.extend(m.warnings.iter().cloned());
        }
        jt
    }

    /// The process name of `pid` (kept at tid 0).
    pub fn process_name(&self, pid: IdentId) -> Option<&'t str> {
        process_name(self.trace, self.tid_zero, pid)
    }

    /// True for a GPU process (`/device:GPU` in its name).
    pub fn is_gpu_process(&self, pid: IdentId) -> bool {
        is_gpu_name(self.process_name(pid))
    }

    /// The thread name of an event's row, when it has a non-empty one.
    pub fn thread_name(&self, id: EventId) -> Option<&'t str> {
        let e = self.trace.event(id);
        let name = self
            .trace
            .thread_meta(e.pid, e.tid)?
            .thread_name
            .as_deref()?;
        (!name.is_empty()).then_some(name)
    }

    /// A kernel's HLO record.
    pub fn record(&self, k: &Kernel) -> Option<&HloRecord> {
        let (m, key) = &self.records[k.record?.0 as usize];
        self.modules.get(*m)?.get(key)
    }

    /// The records of the module a kernel's record came from.
    pub fn module_of(&self, k: &Kernel) -> Option<&ModuleRecords> {
        self.modules.get(self.records[k.record?.0 as usize].0)
    }
}

/// Events in a piece of [`JaxTrace::new`]'s scan: some sixty pieces for
/// a profile of millions of events, a few for a small one.
const PIECE_EVENTS: usize = 1 << 16;

/// What a kernel's category and record follow from: its name, its XLA
/// statistics (`hlo_op`, `hlo_module`, `program_id`) and whether it has a
/// launch.
type KernelSet<'x> = (
    Option<StrId>,
    Option<&'x str>,
    Option<&'x str>,
    Option<i64>,
    bool,
);

/// The kernels of a piece of the event list, with the distinct sets they
/// show.
struct Piece<'x> {
    /// Per kernel: its event, its launch, and the index of its set in
    /// `sets`.
    kernels: Vec<(EventId, Option<EventId>, u32)>,
    /// The distinct sets, in the order the piece first shows them, each
    /// with its first kernel.
    sets: Vec<(KernelSet<'x>, EventId)>,
}

impl<'x> Piece<'x> {
    /// The GPU kernels among `events`, looked up.
    fn scan(
        trace: &Trace,
        xla: &'x XlaData,
        launches: &FxHashMap<i64, EventId>,
        events: Range<usize>,
    ) -> Piece<'x> {
        let mut gpu = GpuProcesses::new(trace);
        let mut piece = Piece {
            kernels: Vec::new(),
            sets: Vec::new(),
        };
        let mut index: FxHashMap<KernelSet, u32> = FxHashMap::default();
        // The piece's ids go upwards: its statistics are read in step.
        let mut at = xla.event_stats.place_of(EventId::new(events.start));
        for id in events.map(EventId::new) {
            let e = trace.event(id);
            if e.cat != Cat::Kernel || !gpu.is_gpu(e.pid) {
                continue;
            }
            let stats = xla.event_stats.seek(&mut at, id);
            let parent = launch_of(trace, launches, id);
            let set = (
                e.name,
                stats.and_then(|s| s.hlo_op.as_deref()),
                stats.and_then(|s| s.hlo_module.as_deref()),
                stats.and_then(|s| s.program_id),
                parent.is_some(),
            );
            let i = *index.entry(set).or_insert_with(|| {
                piece.sets.push((set, id));
                // Fewer sets than events, whose handles are 32 bits.
                (piece.sets.len() - 1) as u32
            });
            piece.kernels.push((id, parent, i));
        }
        piece
    }
}

/// The number of kernels a [`JaxTrace`] of `trace` lists, without
/// linking or looking them up.
pub fn count_kernels(trace: &Trace) -> usize {
    count_in_gpu_processes(trace, |e| e.cat == Cat::Kernel)
}

/// The events of GPU processes that `keep` accepts, counted on every
/// core.
pub fn count_in_gpu_processes(trace: &Trace, keep: impl Fn(&Event) -> bool + Sync) -> usize {
    event_pieces(trace, PIECE_EVENTS)
        .map(|events| {
            let mut gpu = GpuProcesses::new(trace);
            events
                .map(|i| trace.event(EventId::new(i)))
                .filter(|e| keep(e) && gpu.is_gpu(e.pid))
                .count()
        })
        .sum()
}

/// The events of GPU processes that `keep` accepts, in UID order, found
/// on every core.
pub fn in_gpu_processes(trace: &Trace, keep: impl Fn(&Event) -> bool + Sync) -> Vec<EventId> {
    let pieces: Vec<Vec<EventId>> = event_pieces(trace, PIECE_EVENTS)
        .map(|events| {
            let mut gpu = GpuProcesses::new(trace);
            events
                .map(EventId::new)
                .filter(|&id| {
                    let e = trace.event(id);
                    keep(e) && gpu.is_gpu(e.pid)
                })
                .collect()
        })
        .collect();
    pieces.concat()
}

/// The event list in consecutive pieces of `size` events, on every core.
fn event_pieces(trace: &Trace, size: usize) -> impl IndexedParallelIterator<Item = Range<usize>> {
    let n = trace.len();
    (0..n.div_ceil(size))
        .into_par_iter()
        .map(move |p| p * size..((p + 1) * size).min(n))
}

/// [`JaxTrace::is_gpu_process`] remembered per pid: a trace has a few
/// processes and millions of events.
struct GpuProcesses<'t> {
    trace: &'t Trace,
    tid_zero: Option<IdentId>,
    known: FxHashMap<IdentId, bool>,
}

impl<'t> GpuProcesses<'t> {
    fn new(trace: &'t Trace) -> Self {
        GpuProcesses {
            trace,
            tid_zero: trace.int_ident(0),
            known: FxHashMap::default(),
        }
    }

    /// Whether `pid` is a GPU process.
    fn is_gpu(&mut self, pid: IdentId) -> bool {
        let (trace, zero) = (self.trace, self.tid_zero);
        *self
            .known
            .entry(pid)
            .or_insert_with(|| is_gpu_name(process_name(trace, zero, pid)))
    }
}

/// The process name of `pid`, kept at tid 0 (`tid_zero`, interned).
fn process_name(trace: &Trace, tid_zero: Option<IdentId>, pid: IdentId) -> Option<&str> {
    trace.thread_meta(pid, tid_zero?)?.process_name.as_deref()
}

/// Whether a process name is a GPU's (`/device:GPU` in it).
fn is_gpu_name(name: Option<&str>) -> bool {
    name.is_some_and(|n| n.contains("/device:GPU"))
}

/// Finds kernels' records, building each module's records once.
struct RecordIndex<'x> {
    xla: &'x XlaData,
    /// Module index in `xla.modules` -> slot in `built`, with the module's
    /// collective aliases.
    slots: FxHashMap<usize, (usize, FxHashMap<String, String>)>,
    built: Vec<ModuleRecords>,
    /// (module, op) pairs already reported missing.
    missing: FxHashSet<(String, String)>,
    warnings: Vec<String>,
    /// The distinct ops the trace names in each module (by name), once
    /// one is built ([`RecordIndex::module_ops`]).
    ops: Option<FxHashMap<&'x str, FxHashSet<&'x str>>>,
}

impl<'x> RecordIndex<'x> {
    fn new(xla: &'x XlaData) -> Self {
        RecordIndex {
            xla,
            slots: FxHashMap::default(),
            built: Vec::new(),
            missing: FxHashSet::default(),
            warnings: Vec::new(),
            ops: None,
        }
    }

    /// The distinct ops the trace names in each module, gathered in one
    /// pass over the statistics on first use. Why: the statistics are an
    /// entry per event; a pass per module built, copying every op named,
    /// took as long as the rest of the kernel list.
    fn module_ops(&mut self) -> &FxHashMap<&'x str, FxHashSet<&'x str>> {
        let xla = self.xla;
        self.ops.get_or_insert_with(|| {
            let mut ops: FxHashMap<&str, FxHashSet<&str>> = FxHashMap::default();
            for s in xla.event_stats.values() {
                if let (Some(m), Some(op)) = (s.hlo_module.as_deref(), s.hlo_op.as_deref()) {
                    ops.entry(m).or_default().insert(op);
                }
            }
            ops
        })
    }

    /// The module named `name`: the compilation `program` when the profile
    /// has it, else the first of that name.
    fn module(&self, name: &str, program: Option<i64>) -> Option<usize> {
        let named = |i: &usize| self.xla.modules[*i].name == name;
        let all = 0..self.xla.modules.len();
        all.clone()
            .filter(named)
            .find(|&i| Some(self.xla.modules[i].program_id) == program)
            .or_else(|| all.clone().find(named))
    }

    /// The slot of module `m`'s records, building them (and its aliases,
    /// from every op the trace names in a module of that name) first.
    fn build(&mut self, m: usize) {
        if self.slots.contains_key(&m) {
            return;
        }
        let xla = self.xla;
        let module = &xla.modules[m];
        let records = ModuleRecords::build(module);
        let ops = self.module_ops().get(module.name.as_str());
        let aliases = records.collective_aliases(ops.into_iter().flatten().copied());
        self.built.push(records);
        self.slots.insert(m, (self.built.len() - 1, aliases));
    }

    /// The (slot, key) of the record of `op` in module `name`; a warning,
    /// once per (module, op), when there is none.
    fn find(
        &mut self,
        name: Option<&str>,
        program: Option<i64>,
        op: &str,
    ) -> Option<(usize, String)> {
        let name = name.unwrap_or("");
        let found = self.module(name, program).and_then(|m| {
            self.build(m);
            let (slot, aliases) = &self.slots[&m];
            let key = self.built[*slot].lookup_key(op, aliases)?;
            Some((*slot, key.to_string()))
        });
        if found.is_none() && self.missing.insert((name.to_string(), op.to_string())) {
            self.warnings.push(format!(
                "no HLO record of {op} in module {name}: its kernels have no shapes"
            ));
        }
        found
    }
}

#[cfg(test)]
mod tests;
