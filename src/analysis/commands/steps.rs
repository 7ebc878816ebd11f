//! Per-step figures of one trace: for each `ProfilerStep#N` range that the
//! profiler recorded on the CPU, the GPU work launched while it ran and
//! where that work's time went (the `gpu_timeline` buckets over the step).
//! A serving trace without profiler steps has its iterations instead: the
//! step annotations of vLLM, SGLang, ATOM or diffusion servers, numbered
//! from 0 in time order, with the batch and phase their names give.
//!
//! A GPU event belongs to the step during which its launching runtime call
//! started. The launch time, not the call tree, decides: backward ops run
//! on autograd threads that are not below the step's annotation.

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::common::op_categories::{categorize_with, launcher_category};
use crate::analysis::common::timeline::{BucketIntervals, Classifier, Timeline};
use crate::analysis::pytorch::attribution::{Attribution, CommNames, attribute, launcher_of};
use crate::names::fleet::{STEP_COLUMNS, STEP_WORK_COLUMNS};
use crate::table::{Table, Value};
use crate::trace::annotation::{RootTier, root_tier, step_counts};
use crate::trace::tree::Tree;
use crate::trace::{Cat, EventId, Trace};

/// The name prefix of the profiler's step annotations.
const STEP_PREFIX: &str = "ProfilerStep#";

/// One profiler step of one trace. Times in µs; the GPU figures are NaN
/// when the step launched no GPU work. As a table row: [`STEP_COLUMNS`].
///
/// [`STEP_COLUMNS`]: crate::names::fleet::STEP_COLUMNS
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepFigures {
    /// The step number (`N` of `ProfilerStep#N`).
    pub step: i64,
    /// Start of the CPU range.
    pub cpu_start: f64,
    /// Length of the CPU range.
    pub cpu_dur: f64,
    /// Start of the step's first GPU event.
    pub gpu_start: f64,
    /// From the first GPU start to the last GPU end of the step's events.
    pub gpu_span: f64,
    /// Union of the step's GPU activity.
    pub busy: f64,
    /// Union of its computation kernels.
    pub computation: f64,
    /// Its communication not hidden under computation.
    pub exposed_comm: f64,
    /// Its copies hidden under neither computation nor communication.
    pub exposed_memcpy: f64,
    /// `gpu_span - busy`.
    pub idle: f64,
    /// GPU events (kernels, copies, fills) launched in the step.
    pub gpu_events: usize,
}

impl StepFigures {
    /// The figures as cells, in [`STEP_COLUMNS`]
    /// order (NaN: empty).
    pub fn cells(&self) -> Vec<Value> {
        let f = Value::float_or_null;
        vec![
            Value::Int(self.step),
            f(self.cpu_start),
            f(self.cpu_dur),
            f(self.gpu_start),
            f(self.gpu_span),
            f(self.busy),
            f(self.computation),
            f(self.exposed_comm),
            f(self.exposed_memcpy),
            f(self.idle),
            Value::Int(self.gpu_events as i64),
        ]
    }

    /// The figures of cells in the same order (as [`Self::cells`]
    /// makes them); None without an integer step number.
    pub fn from_cells(cells: &[&Value]) -> Option<StepFigures> {
        let f = |k: usize| cells[k].to_f64();
        Some(StepFigures {
            step: cells[0].as_i64()?,
            cpu_start: f(1),
            cpu_dur: f(2),
            gpu_start: f(3),
            gpu_span: f(4),
            busy: f(5),
            computation: f(6),
            exposed_comm: f(7),
            exposed_memcpy: f(8),
            idle: f(9),
            gpu_events: cells[10].as_i64().unwrap_or(0) as usize,
        })
    }
}

/// The step number of a `ProfilerStep#N` name.
pub fn step_number(name: &str) -> Option<i64> {
    name.strip_prefix(STEP_PREFIX)?.trim().parse().ok()
}

/// The trace's profiler steps in time order with their GPU figures (empty
/// when it recorded no `ProfilerStep#N` range).
pub fn profiler_steps(trace: &Trace, tree: &Tree) -> Vec<StepFigures> {
    steps_of(trace, tree, None, false)
        .into_iter()
        .map(|r| r.figures)
        .collect()
}

/// One profiler step with what its kernels ran: a row of the report's
/// `step_summary` sheet and of the fleet summary's `steps` table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRow {
    /// The step's times (µs).
    pub figures: StepFigures,
    /// Kernels launched in the step (copies and fills not counted).
    pub kernels: usize,
    /// The op category with the most kernel time in the step (as
    /// `ops_summary_by_category` names it); "" without kernels.
    pub top_category: &'static str,
    /// That category's kernel time in the step (µs, kernel durations summed).
    pub top_category_us: f64,
    /// A serving iteration's batch (tokens, as its annotation gives it).
    pub batch_size: Option<i128>,
    /// A serving iteration's phase (`prefilldecode`, `prefill_only`,
    /// `decode_only`; None for a profiler step or a step without requests).
    pub phase: Option<&'static str>,
}

impl StepRow {
    /// The row's cells: [`STEP_COLUMNS`] then [`STEP_WORK_COLUMNS`].
    pub fn cells(&self) -> Vec<Value> {
        let mut cells = self.figures.cells();
        cells.push(Value::Int(self.kernels as i64));
        // Empty, not "", without kernels: as a CSV reader reads the cell.
        cells.push(match self.top_category {
            "" => Value::Null,
            c => Value::from(c),
        });
        cells.push(Value::float_or_null(self.top_category_us));
        cells.push(self.batch_size.map_or(Value::Null, |b| {
            i64::try_from(b).map_or(Value::Float(b as f64), Value::Int)
        }));
        cells.push(self.phase.map_or(Value::Null, Value::from));
        cells
    }
}

/// The steps as a table named `name`: [`STEP_COLUMNS`] then
/// [`STEP_WORK_COLUMNS`], one row per step in time order.
pub fn steps_table(name: &str, rows: &[StepRow]) -> Table {
    let columns: Vec<&str> = STEP_COLUMNS
        .iter()
        .chain(&STEP_WORK_COLUMNS)
        .copied()
        .collect();
    Table::from_rows(name, &columns, rows.iter().map(StepRow::cells).collect())
}

/// The GPU work of one step: its events by bucket, and kernel time by op
/// category.
#[derive(Default)]
struct StepWork {
    parts: BucketIntervals,
    kernels: usize,
    by_category: Vec<(&'static str, f64)>,
}

/// The trace's profiler steps (else its serving iterations) with their
/// GPU figures and top categories (empty when it recorded neither).
pub fn step_rows(trace: &Trace, tree: &Tree) -> Vec<StepRow> {
    steps_of(trace, tree, Some(&mut OpCategories::default()), true)
}

/// [`step_rows`] with the trace's launcher table already built.
pub fn step_rows_with(trace: &Trace, tree: &Tree, attribution: &Attribution) -> Vec<StepRow> {
    let mut categories = OpCategories {
        given: Some(attribution),
        ..OpCategories::default()
    };
    steps_of(trace, tree, Some(&mut categories), true)
}

/// One CPU step range: start, end, number, and a serving iteration's
/// annotation name.
type Range<'t> = (f64, f64, i64, Option<&'t str>);

/// The `ProfilerStep#N` ranges in time order.
fn profiler_ranges(trace: &Trace) -> Vec<Range<'_>> {
    let mut ranges: Vec<Range> = trace
        .events()
        .filter(|(_, e)| e.cat == Cat::UserAnnotation && !e.ts.is_nan() && !e.dur.is_nan())
        .filter_map(|(_, e)| Some((e.ts, e.t_end(), step_number(trace.name_of(e))?, None)))
        .collect();
    ranges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    ranges
}

/// The serving iterations in time order, numbered from 0: the step
/// annotations of the detailed formats, else of the native ones.
fn serving_ranges(trace: &Trace) -> Vec<Range<'_>> {
    let mut by_tier: [Vec<Range>; 2] = [Vec::new(), Vec::new()];
    for (_, e) in trace.events() {
        if e.cat != Cat::UserAnnotation || e.ts.is_nan() || e.dur.is_nan() {
            continue;
        }
        let name = trace.name_of(e);
        match root_tier(name) {
            Some(RootTier::Detailed) => by_tier[0].push((e.ts, e.t_end(), 0, Some(name))),
            Some(RootTier::Native) => by_tier[1].push((e.ts, e.t_end(), 0, Some(name))),
            None => {}
        }
    }
    let [detailed, native] = by_tier;
    let mut ranges = if detailed.is_empty() {
        native
    } else {
        detailed
    };
    ranges.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (i, r) in ranges.iter_mut().enumerate() {
        r.2 = i as i64;
    }
    ranges
}

/// [`step_rows`]; the categories only with `categories` (the rows have
/// none without); serving iterations when `serving` and the trace has no
/// profiler step.
fn steps_of(
    trace: &Trace,
    tree: &Tree,
    mut categories: Option<&mut OpCategories<'_>>,
    serving: bool,
) -> Vec<StepRow> {
    let mut ranges = profiler_ranges(trace);
    if ranges.is_empty() && serving {
        ranges = serving_ranges(trace);
    }
    if ranges.is_empty() {
        return Vec::new();
    }
    let mut work: Vec<StepWork> = (0..ranges.len()).map(|_| StepWork::default()).collect();
    let mut classifier = Classifier::default();
    for (id, e) in trace.events() {
        if !e.cat.is_gpu() || e.ts.is_nan() {
            continue;
        }
        let Some(launch) = tree.parent(id) else {
            continue;
        };
        let at = trace.event(launch).ts;
        // The last range starting at or before the launch, if it is still open.
        let k = ranges.partition_point(|r| r.0 <= at);
        if k == 0 || at > ranges[k - 1].1 {
            continue;
        }
        let w = &mut work[k - 1];
        w.parts.push((e.ts, e.t_end()), classifier.bucket(trace, e));
        if e.cat == Cat::Kernel {
            w.kernels += 1;
            let Some(categories) = categories.as_deref_mut() else {
                continue;
            };
            let category = categories.of(trace, tree, id);
            match w.by_category.iter_mut().find(|(c, _)| *c == category) {
                Some((_, t)) => *t += e.dur,
                None => w.by_category.push((category, e.dur)),
            }
        }
    }
    ranges
        .iter()
        .zip(work)
        .map(|(&(start, end, step, annotation), w)| {
            let gpu_events = w.parts.len();
            let gpu_start = w.parts.start();
            let t = w.parts.timeline(None);
            let get = |f: fn(&Timeline) -> f64| t.as_ref().map_or(f64::NAN, f);
            // Most time first; equal times by name, so the choice is stable.
            let top = w
                .by_category
                .iter()
                .min_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            StepRow {
                figures: StepFigures {
                    step,
                    cpu_start: start,
                    cpu_dur: end - start,
                    gpu_start,
                    gpu_span: get(|t| t.total),
                    busy: get(|t| t.busy),
                    computation: get(|t| t.computation),
                    exposed_comm: get(|t| t.exposed_comm),
                    exposed_memcpy: get(|t| t.exposed_memcpy),
                    idle: get(|t| t.idle),
                    gpu_events,
                },
                kernels: w.kernels,
                top_category: top.map_or("", |t| t.0),
                top_category_us: top.map_or(f64::NAN, |t| t.1),
                batch_size: annotation.map(|n| step_counts(n).batch_size),
                phase: annotation.and_then(|n| step_counts(n).phase()),
            }
        })
        .collect()
}

/// The op category of each kernel's launching op, as the op sheets give
/// it: a cpu_op's category from its name (and, when the name does not
/// decide, its first kernel), else the runtime call's.
#[derive(Default)]
struct OpCategories<'a> {
    /// Per launching op: its category, once known.
    of_op: HashMap<EventId, &'static str>,
    /// The caller's launcher table (the report has one).
    given: Option<&'a Attribution>,
    /// Else one built on first need (most op names decide alone).
    built: Option<Attribution>,
}

impl OpCategories<'_> {
    fn of(&mut self, trace: &Trace, tree: &Tree, kernel: EventId) -> &'static str {
        let Some(op) = launcher_of(trace, tree, kernel) else {
            return "";
        };
        if let Some(&c) = self.of_op.get(&op) {
            return c;
        }
        let e = trace.event(op);
        let name = trace.name_of(e);
        let category = if e.cat == Cat::CpuOp {
            let (given, built) = (self.given, &mut self.built);
            categorize_with(name, || {
                given
                    .unwrap_or_else(|| {
                        built.get_or_insert_with(|| {
                            attribute(trace, tree, &mut CommNames::new(trace))
                        })
                    })
                    .first_kernel(trace, op)
            })
        } else {
            launcher_category(name)
        };
        self.of_op.insert(op, category);
        category
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;
    use crate::trace::tree::{TreeOptions, build};

    #[test]
    fn gpu_work_goes_to_the_step_that_launched_it() {
        // Two steps; step 1 launches a compute kernel and an all-reduce that
        // overlaps it by 5 µs; step 2's launch comes from another thread.
        let trace = trace_of_json(
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":2,"args":{"correlation":1}},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":2,"args":{"correlation":2}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":20,"args":{"correlation":1}},
            {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":8,"ts":45,"dur":15,"args":{"correlation":2}},
            {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":150,"dur":2,"args":{"correlation":3}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":160,"dur":10,"args":{"correlation":3}},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":250,"dur":2,"args":{"correlation":4}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":260,"dur":10,"args":{"correlation":4}}"#,
        );
        let tree = build(&trace, TreeOptions::default());
        let steps = profiler_steps(&trace, &tree);
        assert_eq!(steps.len(), 2);
        let s = steps[0];
        assert_eq!((s.step, s.cpu_start, s.cpu_dur), (1, 0.0, 100.0));
        assert_eq!((s.gpu_start, s.gpu_span, s.busy), (30.0, 30.0, 30.0));
        assert_eq!((s.computation, s.exposed_comm, s.idle), (20.0, 10.0, 0.0));
        assert_eq!(s.gpu_events, 2);
        let s = steps[1];
        assert_eq!(
            (s.step, s.gpu_events, s.busy, s.gpu_span),
            (2, 1, 10.0, 10.0)
        );
    }

    #[test]
    fn no_steps_and_steps_without_gpu_work() {
        assert_eq!(step_number("ProfilerStep#12"), Some(12));
        assert_eq!(step_number("ProfilerStep#x"), None);
        let trace = trace_of_json(
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":10}"#,
        );
        let tree = build(&trace, TreeOptions::default());
        let steps = profiler_steps(&trace, &tree);
        assert_eq!(steps.len(), 1);
        assert!(steps[0].busy.is_nan() && steps[0].gpu_events == 0);
        let none = trace_of_json(
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10}"#,
        );
        let tree = build(&none, TreeOptions::default());
        assert!(profiler_steps(&none, &tree).is_empty());
    }
}
