//! The JAX report's view of a trace (spec 05 §1.5): its GPU kernels in
//! UID order, each with its launch event, its category and the record of
//! the HLO instruction it ran.
//!
//! The reference links a kernel to its launch through `correlation_id`: the
//! launch is the last `/host:CPU` event (pid 701) sharing the kernel's id.
//! Only a linked kernel gets its HLO record. The record comes from the
//! module the kernel names (`hlo_module`); where the profile compiled that
//! module more than once we take the program the kernel ran (`program_id`),
//! where the reference takes whichever its file search returns first.

use rustc_hash::{FxHashMap, FxHashSet};

use super::categories::categorize;
use super::hlo_records::{HloRecord, ModuleRecords};
use crate::trace::xla::XlaData;
use crate::trace::{Cat, EventId, Ident, IdentId, Trace};

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
    /// Which of [`JaxTrace::modules`] holds its record, and the record's
    /// key, when it has one.
    pub record: Option<(usize, String)>,
}

/// A trace as the JAX report reads it.
pub struct JaxTrace<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Kernels of GPU processes, in UID order.
    pub kernels: Vec<Kernel>,
    /// Records of the modules kernels ran, built on first use.
    pub modules: Vec<ModuleRecords>,
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

/// The kernels' launch events: per correlation id, the last host event
/// (pid 701) carrying it is the parent of every other event carrying it
/// ([`Launches::parent`]).
struct Launches(FxHashMap<i64, EventId>);

impl Launches {
    fn new(trace: &Trace) -> Self {
        let mut last = FxHashMap::default();
        if let Some(host) = trace.int_ident(HOST_PID) {
            for (id, _) in trace.events().filter(|(_, e)| e.pid == host) {
                if let Some(c) = trace.args(id).and_then(|a| a.correlation()) {
                    last.insert(c, id);
                }
            }
        }
        Launches(last)
    }

    /// The launch of event `id` of `trace`, when it has one.
    fn parent(&self, trace: &Trace, id: EventId) -> Option<EventId> {
        let c = trace.args(id)?.correlation()?;
        self.0.get(&c).copied().filter(|&p| p != id)
    }
}

impl<'t> JaxTrace<'t> {
    /// Collects the kernels of `trace`, links them and looks up their
    /// HLO records.
    pub fn new(trace: &'t Trace) -> JaxTrace<'t> {
        let mut jt = JaxTrace {
            trace,
            kernels: Vec::new(),
            modules: Vec::new(),
            warnings: Vec::new(),
            tid_zero: trace.int_ident(0),
        };
        let launches = Launches::new(trace);
        let empty = XlaData::default();
        let xla = trace.xla().unwrap_or(&empty);
        let mut records = RecordIndex::new(xla);
        // A kernel's category and record follow from its name and XLA
        // statistics, which repeat on every step: each distinct set is
        // categorised and looked up once (`find` warns once per op anyway).
        let mut seen = FxHashMap::default();
        let mut at = 0;
        for (id, e) in trace.events() {
            if e.cat != Cat::Kernel || !jt.is_gpu_process(e.pid) {
                continue;
            }
            let stats = xla.event_stats.seek(&mut at, id);
            let hlo_op = stats.and_then(|s| s.hlo_op.as_deref());
            let module = stats.and_then(|s| s.hlo_module.as_deref());
            let program = stats.and_then(|s| s.program_id);
            let parent = launches.parent(trace, id);
            let name = trace.name_of(e);
            let (category, record) = seen
                .entry((name, hlo_op, module, program, parent.is_some()))
                .or_insert_with(|| {
                    // Only a launched kernel with an op has a record.
                    let record = hlo_op
                        .filter(|_| parent.is_some())
                        .and_then(|op| records.find(module, program, op));
                    (categorize(name, hlo_op), record)
                })
                .clone();
            jt.kernels.push(Kernel {
                id,
                category,
                parent,
                record,
            });
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
        let z = self.tid_zero?;
        self.trace.thread_meta(pid, z)?.process_name.as_deref()
    }

    /// True for a GPU process (`/device:GPU` in its name).
    pub fn is_gpu_process(&self, pid: IdentId) -> bool {
        self.process_name(pid)
            .is_some_and(|n| n.contains("/device:GPU"))
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
        let (m, key) = k.record.as_ref()?;
        self.modules.get(*m)?.get(key)
    }

    /// The records of the module a kernel's record came from.
    pub fn module_of(&self, k: &Kernel) -> Option<&ModuleRecords> {
        self.modules.get(k.record.as_ref()?.0)
    }
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
}

impl<'x> RecordIndex<'x> {
    fn new(xla: &'x XlaData) -> Self {
        RecordIndex {
            xla,
            slots: FxHashMap::default(),
            built: Vec::new(),
            missing: FxHashSet::default(),
            warnings: Vec::new(),
        }
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
        let module = &self.xla.modules[m];
        let records = ModuleRecords::build(module);
        let ops = self
            .xla
            .event_stats
            .values()
            .filter(|s| s.hlo_module.as_deref() == Some(module.name.as_str()))
            .filter_map(|s| s.hlo_op.as_deref());
        let aliases = records.collective_aliases(ops);
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
