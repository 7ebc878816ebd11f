//! The PyTorch report's context: data derived once from the trace before
//! the passes run ([`Prepared`]) and what every pass may read
//! ([`Context`]), with the tables several passes share computed on first
//! use.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::attribution::{self, Attribution, CommNames};
use super::op_metrics::{self, INFERENCE_ANNOTATED_OPS, Metrics, PLAIN_ANNOTATED_OPS};
use super::ops::{self, LauncherRow};
use super::perf_sheets;
use super::pseudo::{OpRef, PseudoOps};
use crate::analysis::ReportOptions;
use crate::analysis::common::timeline::{self, Timeline};
use crate::analysis::perf_model::{ModelClass, ModelResult};
use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, IdentId, Trace};

/// Data derived once from the trace before the passes run; a [`Context`]
/// borrows it, so rows built from it can be cached in the context.
pub struct Prepared {
    /// Direct attribution of GPU work to launchers.
    pub attribution: Attribution,
    /// The GPU timeline, when there is GPU activity to count.
    pub timeline: Option<Timeline>,
    /// The pseudo ops (`--pseudo-ops`); empty without the option.
    pub pseudo: PseudoOps,
}

impl Prepared {
    /// Computes the attribution and the timeline (in parallel).
    pub fn new(trace: &Trace, tree: &Tree, opts: &ReportOptions) -> Self {
        let mut comm = CommNames::new(trace);
        let (attribution, timeline) = rayon::join(
            || attribution::attribute(trace, tree, &mut comm),
            || {
                timeline::compute(
                    trace,
                    tree,
                    opts.include_unlinked_kernels,
                    opts.micro_idle_thresh_us,
                )
            },
        );
        let pseudo = if opts.inference.pseudo_ops {
            PseudoOps::detect(trace, tree)
        } else {
            PseudoOps::default()
        };
        Prepared {
            attribution,
            timeline,
            pseudo,
        }
    }
}

/// What every pass may read: the trace, its tree and shared derived tables.
pub struct Context<'a> {
    /// The loaded trace.
    pub trace: &'a Trace,
    /// Its call tree.
    pub tree: &'a Tree,
    /// Options.
    pub opts: &'a ReportOptions,
    /// Direct attribution of GPU work to launchers.
    pub attribution: &'a Attribution,
    /// The GPU timeline, when there is GPU activity to count.
    pub timeline: Option<Timeline>,
    /// True when the trace has no `cpu_op` events (GPU-only mode).
    pub gpu_only: bool,
    /// GPU spec for roofline columns.
    pub arch: Option<&'a crate::gpu_arch::GpuArch>,
    /// The pseudo ops over the tree.
    pub pseudo: &'a PseudoOps,
    /// Interned id of the integer ident 0 (process metadata lives at tid 0).
    tid_zero: Option<IdentId>,
    /// The launcher table, built by the first pass that asks for it.
    launchers: OnceLock<Vec<LauncherRow<'a>>>,
    /// Metrics of the modelled op instances, computed once on both cores
    /// ([`Context::compute_metrics`]) for the passes that share them.
    metrics_table: OnceLock<MetricsTable<ModelResult<Arc<Metrics>>>>,
    /// Model evaluations shared by op instances with equal inputs.
    evaluations: op_metrics::EvalMemo,
    /// The modelled ops by sheet family, found by the first reader.
    modelled: OnceLock<perf_sheets::ByFamily>,
    /// The idle gaps between GPU events, with the causes of the host-wait
    /// ones, set by the idle pass for the diagnosis.
    pub idle_gaps: OnceLock<Vec<super::idle_causes::IdleGap>>,
}

/// An op instance's metrics: the op, its model (by address) and whether the
/// backward kernels time it.
type MetricsKey = (OpRef, usize, bool);

/// Metrics by op instance, sorted by [`MetricsKey`] (a big trace has tens
/// of thousands; a sorted list holds them in half a hash map's memory),
/// with where each run of [`METRICS_RUN`] event ids starts in it: the
/// sheets look each op up several times, and a binary search over the
/// whole list cost about 1% of a big report (a dozen cache misses each).
struct MetricsTable<T> {
    rows: Vec<(MetricsKey, T)>,
    /// `starts[k]`: the first row whose key is at or after event
    /// `k * METRICS_RUN`.
    starts: Vec<u32>,
}

/// Event ids per entry of [`MetricsTable::starts`].
const METRICS_RUN: usize = 64;

impl<T> MetricsTable<T> {
    /// The table of `rows`, sorted here.
    fn new(mut rows: Vec<(MetricsKey, T)>) -> MetricsTable<T> {
        rows.sort_unstable_by_key(|&(key, _)| key);
        let events = rows
            .iter()
            .rev()
            .find_map(|&((op, _, _), _)| match op {
                OpRef::Event(e) => Some(e.index() + 1),
                OpRef::Pseudo(_) => None,
            })
            .unwrap_or(0);
        let mut starts = Vec::with_capacity(events.div_ceil(METRICS_RUN) + 1);
        let mut row = 0;
        for k in 0..=events.div_ceil(METRICS_RUN) {
            let first = OpRef::Event(EventId::new(k * METRICS_RUN));
            while row < rows.len() && rows[row].0.0 < first {
                row += 1;
            }
            starts.push(row as u32);
        }
        MetricsTable { rows, starts }
    }

    /// The metrics of `key`, when the table holds them.
    fn get(&self, key: MetricsKey) -> Option<&T> {
        let rows = match key.0 {
            OpRef::Event(e) => {
                let k = e.index() / METRICS_RUN;
                let (Some(&lo), Some(&hi)) = (self.starts.get(k), self.starts.get(k + 1)) else {
                    return None;
                };
                &self.rows[lo as usize..hi as usize]
            }
            OpRef::Pseudo(_) => &self.rows,
        };
        let i = rows.binary_search_by_key(&key, |&(k, _)| k).ok()?;
        Some(&rows[i].1)
    }
}

/// The table key of `op` under `class`.
fn metrics_key(op: OpRef, class: &ModelClass, bwd: bool) -> MetricsKey {
    (op, std::ptr::from_ref(class) as usize, bwd)
}

impl<'a> Context<'a> {
    /// A context over `prepared`, the trace's derived tables.
    pub fn new(
        trace: &'a Trace,
        tree: &'a Tree,
        opts: &'a ReportOptions,
        prepared: &'a Prepared,
    ) -> Self {
        Context {
            trace,
            tree,
            opts,
            attribution: &prepared.attribution,
            timeline: prepared.timeline,
            gpu_only: !trace.events().any(|(_, e)| e.cat == Cat::CpuOp),
            arch: opts.arch.as_ref(),
            pseudo: &prepared.pseudo,
            tid_zero: trace.int_ident(0),
            launchers: OnceLock::new(),
            metrics_table: OnceLock::new(),
            evaluations: op_metrics::EvalMemo::default(),
            modelled: OnceLock::new(),
            idle_gaps: OnceLock::new(),
        }
    }

    /// The modelled ops by sheet family (`perf_sheets::modelled_events`),
    /// found once and shared by the metrics table and the roofline sheets.
    pub fn modelled_ops(&self) -> &perf_sheets::ByFamily {
        self.modelled
            .get_or_init(|| perf_sheets::modelled_events(self))
    }

    /// Computes, in parallel, the metrics of every modelled op instance the
    /// roofline and unified sheets read (forward, and backward where the
    /// op has linked backward ops), so that the passes share one
    /// evaluation each instead of repeating it.
    pub fn compute_metrics(&self) {
        let mut wanted: Vec<(OpRef, &'static ModelClass, bool)> = Vec::new();
        for &(op, class) in self.modelled_ops().values().flatten() {
            wanted.push((op, class, false));
            if let OpRef::Event(e) = op
                && self.tree.bwd_events.contains_key(&e)
            {
                wanted.push((op, class, true));
            }
        }
        let rows = wanted
            .par_iter()
            .map(|&(op, class, bwd)| {
                let m = self.evaluate_metrics(op, class, bwd).map(Arc::new);
                (metrics_key(op, class, bwd), m)
            })
            .collect();
        let _ = self.metrics_table.set(MetricsTable::new(rows));
    }

    /// The launcher table `L` ([`ops::launcher_rows`]), computed once and
    /// shared by the op sheets.
    pub fn launcher_rows(&self) -> &[LauncherRow<'a>] {
        self.launchers.get_or_init(|| ops::launcher_rows(self))
    }

    /// True when the op sheets have rows to show: the trace has CPU ops and
    /// some of them launch GPU work.
    pub fn has_launchers(&self) -> bool {
        !self.gpu_only && !self.attribution.launchers.is_empty()
    }

    /// The ops whose enclosing annotation the models read (the inference
    /// script annotates more of them).
    pub fn annotated_ops(&self) -> &'static [&'static str] {
        if self.opts.inference.layout {
            INFERENCE_ANNOTATED_OPS
        } else {
            PLAIN_ANNOTATED_OPS
        }
    }

    /// The name of an op.
    pub fn op_name(&self, op: OpRef) -> &'a str {
        match op {
            OpRef::Event(e) => self.trace.name(e),
            OpRef::Pseudo(i) => self.pseudo.ops[i].name,
        }
    }

    /// The UID the sheets print for an op.
    pub fn op_uid(&self, op: OpRef) -> usize {
        match op {
            OpRef::Event(e) => e.index(),
            OpRef::Pseudo(i) => self.pseudo.ops[i].uid,
        }
    }

    /// The event whose recorded arguments an op carries.
    pub fn args_event(&self, op: OpRef) -> EventId {
        match op {
            OpRef::Event(e) => e,
            OpRef::Pseudo(i) => self.pseudo.ops[i].donor,
        }
    }

    /// The event whose pid/tid an op has.
    pub fn proc_event(&self, op: OpRef) -> EventId {
        match op {
            OpRef::Event(e) => e,
            OpRef::Pseudo(i) => self.pseudo.ops[i].parent,
        }
    }

    /// How many op instances [`Context::compute_metrics`] computed.
    pub fn metrics_count(&self) -> usize {
        self.metrics_table.get().map_or(0, |t| t.rows.len())
    }

    /// The perf metrics of an op instance under `class`: from the table of
    /// [`Context::compute_metrics`] when it holds them, else computed now
    /// ([`op_metrics::compute`]).
    pub fn metrics(&self, op: OpRef, class: &ModelClass, bwd: bool) -> ModelResult<Arc<Metrics>> {
        let key = metrics_key(op, class, bwd);
        if let Some(m) = self.metrics_table.get().and_then(|t| t.get(key)) {
            return m.clone();
        }
        self.evaluate_metrics(op, class, bwd).map(Arc::new)
    }

    fn evaluate_metrics(&self, op: OpRef, class: &ModelClass, bwd: bool) -> ModelResult<Metrics> {
        match op {
            OpRef::Event(e) => op_metrics::compute(
                self.trace,
                self.tree,
                e,
                class,
                bwd,
                self.arch,
                self.annotated_ops(),
                &self.evaluations,
            ),
            OpRef::Pseudo(i) => {
                op_metrics::compute_pseudo(self.trace, &self.pseudo.ops[i], class, self.arch)
            }
        }
    }

    /// (process_name, process_label, thread_name) of an event, "Unknown"
    /// where the trace has no metadata.
    pub fn process_names(&self, ev: EventId) -> (String, String, String) {
        let e = self.trace.event(ev);
        self.thread_names(e.pid, e.tid)
    }

    /// [`Context::process_names`] of the thread `tid` of process `pid`.
    pub fn thread_names(&self, pid: IdentId, tid: IdentId) -> (String, String, String) {
        let unknown = || "Unknown".to_string();
        let proc = self.tid_zero.and_then(|z| self.trace.thread_meta(pid, z));
        let thread = self.trace.thread_meta(pid, tid);
        (
            proc.and_then(|m| m.process_name.clone())
                .unwrap_or_else(unknown),
            proc.and_then(|m| m.process_labels.clone())
                .unwrap_or_else(unknown),
            thread
                .and_then(|m| m.thread_name.clone())
                .unwrap_or_else(unknown),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of the table is found with its value, wherever its event
    /// falls in the runs of event ids (first, last, an empty run between),
    /// pseudo ops too; keys it lacks are not, past its last event either.
    #[test]
    fn the_metrics_table_finds_exactly_its_keys() {
        let ev = |i: usize| OpRef::Event(EventId::new(i));
        let mut keys = vec![
            (ev(0), 1, false),
            (ev(0), 1, true),
            (ev(0), 2, false),
            (ev(63), 1, false),
            (ev(64), 1, false),
            (ev(300), 1, false),
            (ev(1000), 3, true),
            (OpRef::Pseudo(0), 1, false),
            (OpRef::Pseudo(7), 2, false),
        ];
        // Given out of order, as the parallel evaluation collects them.
        keys.reverse();
        let table = MetricsTable::new(keys.iter().map(|&k| (k, format!("{k:?}"))).collect());
        for &k in &keys {
            assert_eq!(table.get(k), Some(&format!("{k:?}")), "{k:?}");
        }
        for k in [
            (ev(0), 2, true),
            (ev(1), 1, false),
            (ev(65), 1, false),
            (ev(200), 1, false),
            (ev(1000), 3, false),
            (ev(1001), 1, false),
            (ev(5000), 1, false),
            (OpRef::Pseudo(1), 1, false),
        ] {
            assert_eq!(table.get(k), None, "{k:?}");
        }
        let empty = MetricsTable::<u8>::new(Vec::new());
        assert_eq!(empty.get((ev(0), 1, false)), None);
    }
}
