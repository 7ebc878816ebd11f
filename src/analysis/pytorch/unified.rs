//! `unified_perf_summary`: one row set covering all GPU time —
//! the highest modelled op of each subtree with its perf metrics, leaf ops
//! without a model, and one-kernel "Synthetic Op" rows for the rest.

use std::borrow::Cow;
use std::sync::Arc;

use rustc_hash::FxHashSet as HashSet;

use indexmap::IndexMap;

use crate::analysis::common::kernel_stats::{self, KernelStat};
use crate::analysis::common::op_categories::categorize_with;
use crate::analysis::perf_model::{self, ModelClass, ModelError};
use crate::analysis::pytorch::attribution::CommNames;
use crate::analysis::pytorch::callstack::{
    StackItem, entry_point, full_stack, full_stack_text, is_stack_frame, kernel_suffix, list_repr,
    strip_num_suffixes,
};
use crate::analysis::pytorch::op_metrics::{self, Metrics};
use crate::analysis::pytorch::ops::{arg_identity, arg_key_cells};
use crate::analysis::pytorch::pseudo::OpRef;
use crate::analysis::{common::arg_cells::ArgReprs, pytorch::Context};
use crate::names::{col, sheet};
use crate::numeric::{kahan_sum, median, welford_std};
use crate::table::agg::{
    Agg, NAN_STATS, agg_columns, first_non_nan, nan_stats, order_desc_by, percentages,
};
use crate::table::group::group_first_seen_text_by;
use crate::table::{Table, Value};
use crate::trace::{Cat, EventId, EventSet};

/// One collected row before grouping.
struct Row<'a> {
    /// The op (for synthetic rows: the parent/ancestor it copies).
    op: OpRef,
    /// UID printed as `ex_UID` (synthetic rows get new ones).
    shown_uid: usize,
    /// The op's name, borrowed from the trace (synthetic rows make theirs).
    name: Cow<'a, str>,
    category: &'static str,
    /// CPU duration of the op (NaN for pseudo ops, which have none).
    duration: f64,
    has_perf_model: bool,
    /// Its GPU events in `gpu_events` order: a range of [`Rows::kernels`]
    /// (one list for all rows instead of a small vector each).
    kernels: std::ops::Range<u32>,
    kernel_time: f64,
    metrics: Option<Arc<Metrics>>,
    /// The stack frames from the walk's root down to the op (with python
    /// frames in the tree); None for synthetic rows.
    stack: Option<Vec<OpRef>>,
}

/// How a collected event is measured.
enum Collect {
    /// No model: kernel time only.
    Plain,
    /// Its own model.
    Model(&'static ModelClass),
    /// The compiled-Triton model.
    Triton,
    /// A sole backward op, measured with its forward op's backward model.
    Backward {
        fwd: EventId,
        class: &'static ModelClass,
    },
}

/// A collected op, how it is measured and its stack frames.
type Collected = (OpRef, Collect, Option<Vec<OpRef>>);

/// The rows of the table, and the GPU events they list.
#[derive(Default)]
struct Rows<'a> {
    rows: Vec<Row<'a>>,
    kernels: Vec<EventId>,
}

impl<'a> Rows<'a> {
    /// The GPU events of `row`.
    fn kernels(&self, row: &Row) -> &[EventId] {
        &self.kernels[row.kernels.start as usize..row.kernels.end as usize]
    }

    /// Appends `gpu` to the kernel list; returns its range there.
    fn add_kernels(&mut self, gpu: &[EventId]) -> std::ops::Range<u32> {
        let start = self.kernels.len() as u32;
        self.kernels.extend_from_slice(gpu);
        start..self.kernels.len() as u32
    }
}

/// The walk of the unified sheet: it visits the call tree once and makes the
/// row of each op it collects as it goes (no list of collected ops).
struct Walker<'c, 'a> {
    cx: &'c Context<'a>,
    /// Events visited, one bit each (most host events of a big trace).
    visited: EventSet,
    visited_pseudo: HashSet<usize>,
    out: Rows<'a>,
    /// GPU events of the collected ops, dropped rows' included.
    covered: EventSet,
    comm: CommNames,
    /// With python frames in the tree the walk passes through every
    /// category and records call stacks, as the reference does.
    full: bool,
    /// The stack frames of the nodes being visited.
    path: Vec<OpRef>,
}

fn own_model(cx: &Context, op: OpRef) -> Option<&'static ModelClass> {
    perf_model::lookup(cx.op_name(op))
}

/// A compiled Triton op whose arguments the Triton model can use.
fn triton_model(cx: &Context, op: OpRef) -> bool {
    let OpRef::Event(uid) = op else {
        return false;
    };
    let name = cx.trace.name(uid);
    perf_model::is_triton_compiled(name)
        && perf_model::triton::can_model(&op_metrics::op_input(cx.trace, uid, Vec::new()))
}

/// The GPU events below an op (a pseudo op: its one kernel).
fn gpu_events(cx: &Context, op: OpRef) -> Vec<EventId> {
    match op {
        OpRef::Event(e) => cx.tree.gpu_events(cx.trace, e),
        OpRef::Pseudo(i) => vec![cx.pseudo.ops[i].kernel],
    }
}

impl Walker<'_, '_> {
    fn cat(&self, n: OpRef) -> Cat {
        match n {
            OpRef::Event(e) => self.cx.trace.event(e).cat,
            OpRef::Pseudo(_) => Cat::CpuOp,
        }
    }

    fn gpu(&self, n: OpRef) -> bool {
        match n {
            OpRef::Event(e) => self.cx.tree.gpu_count(e) > 0,
            OpRef::Pseudo(_) => true,
        }
    }

    /// The children of a node with the pseudo ops in place: a parent's
    /// moved launches replaced by its pseudo ops (at the end), a pseudo
    /// op's launch under it.
    fn children(&self, n: OpRef) -> impl Iterator<Item = OpRef> + use<'_> {
        let pseudo = self.cx.pseudo;
        let (ev, extra, launcher) = match n {
            OpRef::Event(e) => (Some(e), pseudo.under(e), None),
            OpRef::Pseudo(i) => (None, &[][..], Some(OpRef::Event(pseudo.ops[i].launcher))),
        };
        ev.into_iter()
            .flat_map(|e| self.cx.tree.children(e))
            .filter(move |&c| !pseudo.is_moved(c))
            .map(OpRef::Event)
            .chain(extra.iter().map(|&i| OpRef::Pseudo(i)))
            .chain(launcher)
    }

    /// Some descendant cpu_op with its own model and GPU work.
    fn modelled_descendant(&self, n: OpRef) -> bool {
        let mut stack: Vec<OpRef> = self.children(n).collect();
        while let Some(c) = stack.pop() {
            match self.cat(c) {
                Cat::CpuOp => {
                    if (own_model(self.cx, c).is_some() || triton_model(self.cx, c)) && self.gpu(c)
                    {
                        return true;
                    }
                    stack.extend(self.children(c));
                }
                Cat::PythonFunction => stack.extend(self.children(c)),
                _ => {}
            }
        }
        false
    }

    /// A GPU event reachable through runtime/python children, at most
    /// `budget` - 1 of them.
    fn is_leaf_op(&self, n: OpRef, budget: usize) -> bool {
        if budget == 0 {
            return false;
        }
        self.children(n).any(|c| match self.cat(c) {
            cat if cat.is_gpu() => true,
            Cat::CudaRuntime | Cat::PythonFunction => self.is_leaf_op(c, budget - 1),
            _ => false,
        })
    }

    /// A backward op whose forward op has a model with a
    /// backward category. Returns the forward op and its class.
    fn sole_backward(&self, x: EventId) -> Option<(EventId, &'static ModelClass)> {
        let (trace, tree) = (self.cx.trace, self.cx.tree);
        let w = tree
            .ancestors(x)
            .take(5)
            .find(|a| tree.fwd_event.contains_key(a))?;
        let f = tree.fwd_event[&w];
        let class = own_model(self.cx, OpRef::Event(f))?;
        class.bwd_category?;
        let wname = trace.name(w);
        let wanted = wname.split_once(": ").map(|(_, t)| t);
        let mut matches = Vec::new();
        let mut stack: Vec<EventId> = tree.children(w).collect();
        while let Some(c) = stack.pop() {
            if trace.event(c).cat != Cat::CpuOp {
                continue;
            }
            if tree.gpu_count(c) > 0 && wanted.is_none_or(|t| trace.name(c) == t) {
                matches.push(c);
            }
            stack.extend(tree.children(c));
        }
        if matches != [x] {
            return None;
        }
        self.cx.metrics(OpRef::Event(f), class, true).ok()?;
        Some((f, class))
    }

    fn collect(&mut self, n: OpRef, how: Collect) {
        let stack = self.full.then(|| self.path.clone());
        let gpu = gpu_events(self.cx, n);
        // A dropped row's kernels count as covered all the same.
        self.covered.extend(gpu.iter().copied());
        if let Some(row) = op_row(self.cx, (n, how, stack), &gpu, &mut self.out) {
            self.out.rows.push(row);
        }
    }

    fn visit(&mut self, n: OpRef) {
        let new = match n {
            OpRef::Event(e) => self.visited.insert(e),
            OpRef::Pseudo(i) => self.visited_pseudo.insert(i),
        };
        if !new {
            return;
        }
        let cat = self.cat(n);
        let framed = self.full && is_stack_frame(self.cx.op_name(n), cat);
        if framed {
            self.path.push(n);
        }
        self.visit_node(n, cat);
        if framed {
            self.path.pop();
        }
    }

    fn visit_node(&mut self, n: OpRef, cat: Cat) {
        if (cat != Cat::CpuOp && !self.full) || !self.gpu(n) {
            return;
        }
        // Without python frames only cpu_ops get here.
        if let Some(class) = own_model(self.cx, n) {
            self.collect(n, Collect::Model(class));
            return;
        }
        if triton_model(self.cx, n) {
            self.collect(n, Collect::Triton);
            return;
        }
        if let OpRef::Event(e) = n
            && cat == Cat::CpuOp
            && let Some((fwd, class)) = self.sole_backward(e)
        {
            if self.modelled_descendant(n) {
                self.visit_children(n);
            } else {
                self.collect(n, Collect::Backward { fwd, class });
            }
            return;
        }
        if self.modelled_descendant(n) {
            self.visit_children(n);
            return;
        }
        if cat == Cat::CpuOp && self.is_leaf_op(n, 10) {
            let gpu = gpu_events(self.cx, n);
            if !gpu.iter().any(|&g| self.comm.is_comm(self.cx.trace, g)) {
                self.collect(n, Collect::Plain);
            }
            return;
        }
        self.visit_children(n);
    }

    fn visit_children(&mut self, n: OpRef) {
        let kids: Vec<OpRef> = self.children(n).collect();
        for c in kids {
            self.visit(c);
        }
    }
}

/// Walks the call tree from its roots (Python roots first, when the tree
/// has them) and returns the rows of the collected ops, in collection
/// order, the GPU events they cover and the communication-kernel names the
/// walk used.
fn collect_events<'a>(cx: &Context<'a>) -> (Rows<'a>, EventSet, CommNames) {
    let (trace, tree) = (cx.trace, cx.tree);
    let mut w = Walker {
        cx,
        visited: EventSet::with_capacity(trace.len()),
        visited_pseudo: HashSet::default(),
        out: Rows::default(),
        covered: EventSet::with_capacity(trace.len()),
        comm: CommNames::new(trace),
        full: tree.python_included,
        path: Vec::new(),
    };
    if tree.python_included {
        for (i, e) in trace.events() {
            if e.cat == Cat::PythonFunction && tree.parent(i).is_none() && tree.gpu_count(i) > 0 {
                w.visit(OpRef::Event(i));
            }
        }
    }
    for &r in &tree.cpu_roots {
        w.visit(OpRef::Event(r));
    }
    (w.out, w.covered, w.comm)
}

/// The category, metrics and "has a perf model" flag of a collected op;
/// None when the reference drops its row (a model without a forward/backward
/// formula for it).
fn measure(
    cx: &Context,
    op: OpRef,
    name: &str,
    how: Collect,
) -> Option<(&'static str, Option<Arc<Metrics>>, bool)> {
    let trace = cx.trace;
    let first = || match op {
        OpRef::Event(e) => cx.attribution.first_kernel(trace, e),
        OpRef::Pseudo(_) => None,
    };
    let category = || categorize_with(name, first);
    Some(match how {
        Collect::Plain => (category(), None, false),
        Collect::Model(class) => match cx.metrics(op, class, false) {
            Ok(m) => (category(), Some(m), true),
            // The reference drops the row, GPU time and all.
            Err(ModelError::NotImplemented) => return None,
            Err(ModelError::Invalid(_)) => (category(), None, true),
        },
        Collect::Triton => {
            let uid = cx.args_event(op);
            let input = op_metrics::op_input(trace, uid, Vec::new());
            match perf_model::triton::evaluate(&input) {
                Ok(ev) => {
                    let ks = op_metrics::kernel_set(trace, cx.tree, uid, false);
                    let t = crate::analysis::common::intervals::events_busy_time(trace, &ks);
                    let m = Arc::new(op_metrics::metrics_from(ev, ks, t, cx.arch));
                    (category(), Some(m), true)
                }
                Err(_) => (category(), None, true),
            }
        }
        Collect::Backward { fwd, class } => {
            let m = cx.metrics(OpRef::Event(fwd), class, true).ok();
            (class.bwd_category.unwrap_or("other"), m, true)
        }
    })
}

/// The row of a collected op measured as `how` (its GPU events `gpu`,
/// added to `out`'s list); None when the reference drops it.
fn op_row<'a>(
    cx: &Context<'a>,
    c: Collected,
    gpu: &[EventId],
    out: &mut Rows<'a>,
) -> Option<Row<'a>> {
    let (op, how, stack) = c;
    let name = cx.op_name(op);
    let (category, metrics, has_model) = measure(cx, op, name, how)?;
    let kernel_time = match &metrics {
        Some(m) => m.kernel_time,
        None => crate::analysis::common::intervals::events_busy_time(cx.trace, gpu),
    };
    let duration = match op {
        OpRef::Event(e) => cx.trace.event(e).dur,
        OpRef::Pseudo(_) => f64::NAN,
    };
    Some(Row {
        op,
        shown_uid: cx.op_uid(op),
        name: Cow::Borrowed(name),
        category,
        duration,
        has_perf_model: has_model,
        kernels: out.add_kernels(gpu),
        kernel_time,
        metrics,
        stack,
    })
}

/// Orphan kernels (GPU events no collected row covers, communication aside):
/// one synthetic row each, copying the parent (or the nearest cpu_op
/// ancestor), the parent-grouped ones first; appended to `out`.
fn add_orphan_rows<'a>(
    cx: &Context<'a>,
    covered: &EventSet,
    comm: &mut CommNames,
    out: &mut Rows<'a>,
) {
    let (trace, tree) = (cx.trace, cx.tree);
    let mut by_parent: IndexMap<EventId, Vec<EventId>, rustc_hash::FxBuildHasher> =
        IndexMap::default();
    let mut with_op: Vec<(EventId, EventId)> = Vec::new();
    for (k, e) in trace.events() {
        if !e.cat.is_gpu() || covered.contains(k) || comm.is_comm(trace, k) {
            continue;
        }
        let Some(parent) = tree.parent(k) else {
            continue;
        };
        match tree
            .ancestors(k)
            .find(|&a| trace.event(a).cat == Cat::CpuOp)
        {
            Some(op) => with_op.push((k, op)),
            None => by_parent.entry(parent).or_default().push(k),
        }
    }
    let pairs = by_parent
        .into_iter()
        .flat_map(|(p, ks)| ks.into_iter().map(move |k| (k, p)))
        .chain(with_op);
    // Synthetic rows get new UIDs after the last event and pseudo op.
    for (next_uid, (k, p)) in (trace.len() + cx.pseudo.ops.len()..).zip(pairs) {
        let name = format!("{}->{} (Synthetic Op)", trace.name(p), trace.name(k));
        let first = || cx.attribution.first_kernel(trace, p);
        let row = Row {
            op: OpRef::Event(p),
            shown_uid: next_uid,
            category: categorize_with(&name, first),
            name: Cow::Owned(name),
            duration: trace.event(p).dur,
            has_perf_model: false,
            kernel_time: crate::analysis::common::intervals::events_busy_time(trace, &[k]),
            kernels: out.add_kernels(&[k]),
            metrics: None,
            stack: None,
        };
        out.rows.push(row);
    }
}

/// Builds the rows of the unified table, in collection order, then the
/// synthetic rows of the kernels no collected row covers.
fn collect_rows<'a>(cx: &Context<'a>) -> Rows<'a> {
    let (mut out, covered, mut comm) = collect_events(cx);
    add_orphan_rows(cx, &covered, &mut comm, &mut out);
    out
}

/// The stack of each kernel of a group whose first row is `row`, for the
/// kernel statistics `ks` (in their sheet order): the row's stack and the
/// frames between the kernel and the op. None for rows without a stack
/// (synthetic rows, or no python frames in the tree).
fn kernel_stacks(cx: &Context, row: &Row, ks: &[KernelStat]) -> Option<Vec<Vec<String>>> {
    let stack = row.stack.as_deref()?;
    let base: Vec<String> = stack
        .iter()
        .map(|&f| strip_num_suffixes(cx.op_name(f)))
        .collect();
    let top = match row.op {
        OpRef::Event(e) => Some(e),
        OpRef::Pseudo(_) => None,
    };
    let stacks = ks.iter().map(|k| {
        let mut chain = base.clone();
        chain.extend(kernel_suffix(cx.trace, cx.tree, k.kernel, top));
        chain
    });
    Some(stacks.collect())
}

/// `call_stack_full` from the kernel stacks (each chain ends in the
/// kernel's name; a row without stacks has the names alone).
fn full_stack_of(
    cx: &Context,
    stacks: Option<&[Vec<String>]>,
    ks: &[KernelStat],
) -> Option<Vec<StackItem>> {
    let chains: Vec<Vec<String>> = ks
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut chain = stacks.map_or_else(Vec::new, |s| s[i].clone());
            chain.push(cx.trace.name(k.kernel).to_string());
            chain
        })
        .collect();
    full_stack(&chains)
}

fn perf_params_text(m: &Metrics) -> String {
    let items: Vec<String> = m
        .eval
        .params
        .iter()
        .map(|(k, v)| format!("'{k}': {}", v.repr()))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// The statistics of the second half of a metric's columns.
const MEDIAN_MIN_MAX: [Agg; 3] = [Agg::Median, Agg::Min, Agg::Max];

/// The columns of `unified_perf_summary`: perf columns only when some row
/// has metrics (`perf`), roofline columns only when some has a roofline,
/// call-stack columns with `stacks`.
fn columns(perf: bool, roof: bool, stacks: bool) -> Vec<String> {
    let mut cols: Vec<String> = [col::NAME, col::OP_CATEGORY]
        .iter()
        .chain(col::ARG_KEYS.iter())
        .map(|s| s.to_string())
        .collect();
    cols.extend(
        [
            col::EX_UID,
            col::OPERATION_COUNT,
            col::TOTAL_DURATION_US,
            col::MEAN_DURATION_US,
            col::STD_DURATION_US,
        ]
        .map(String::from),
    );
    if perf {
        cols.extend(
            [
                col::GFLOPS,
                col::DATA_MOVED_MB,
                col::FLOPS_PER_BYTE,
                col::COMPUTE_SPEC,
            ]
            .map(String::from),
        );
        if roof {
            cols.push(col::ROOFLINE_BOUND.into());
        }
        cols.extend(agg_columns(col::TB_S, &[Agg::Mean, Agg::Std]));
        cols.extend(agg_columns(col::TFLOPS_S, &[Agg::Mean, Agg::Std]));
    }
    cols.extend(agg_columns(
        col::KERNEL_TIME_US,
        &[Agg::Mean, Agg::Std, Agg::Sum],
    ));
    cols.extend(agg_columns(col::DURATION_US, &MEDIAN_MIN_MAX));
    if perf {
        cols.extend(agg_columns(col::TB_S, &MEDIAN_MIN_MAX));
        cols.extend(agg_columns(col::TFLOPS_S, &MEDIAN_MIN_MAX));
        if roof {
            cols.push(col::ROOFLINE_TIME_US_FIRST.into());
            cols.extend(agg_columns(col::PCT_ROOFLINE, &NAN_STATS));
        }
    }
    cols.extend(agg_columns(col::KERNEL_TIME_US, &MEDIAN_MIN_MAX));
    cols.extend(
        [
            col::KERNEL_DETAILS_SUMMARY,
            col::TRUNC_KERNEL_DETAILS,
            col::PERF_PARAMS,
            col::HAS_PERF_MODEL,
        ]
        .map(String::from),
    );
    if stacks {
        cols.extend([col::ENTRY_POINT, col::CALL_STACK_FULL].map(String::from));
    }
    cols.extend([col::PERCENTAGE, col::CUMULATIVE_PERCENTAGE].map(String::from));
    cols
}

/// One group's cells, from its key cells to `has_perf_model` (the
/// percentages are added once every group is known), and its kernel time.
fn group_row(
    cx: &Context,
    all: &Rows,
    keys: &[Value],
    g: &[&Row],
    perf: bool,
    roof: bool,
) -> (Vec<Value>, f64) {
    let f = Value::Float;
    let metric = |get: fn(&Metrics) -> f64| -> Vec<f64> {
        g.iter()
            .map(|r| r.metrics.as_deref().map(get).unwrap_or(f64::NAN))
            .collect()
    };
    let d = Durations::of(g);
    let kt: Vec<f64> = g.iter().map(|r| r.kernel_time).collect();
    let kt_sum = kahan_sum(&kt);
    let [kt_mean, kt_median, kt_std, kt_min, kt_max] = nan_stats(&kt);
    let tb = nan_stats(&metric(|m| m.tb_s()));
    let tf = nan_stats(&metric(|m| m.tflops_s()));
    let with_m: Vec<&Metrics> = g.iter().filter_map(|r| r.metrics.as_deref()).collect();
    let roofline = with_m.iter().find_map(|m| m.roofline);
    let mut row: Vec<Value> = keys.to_vec();
    row.extend([
        Value::Int(g[0].shown_uid as i64),
        Value::Int(g.len() as i64),
        f(d.sum),
        f(d.mean),
        d.std.map_or(Value::Null, f),
    ]);
    if perf {
        row.push(f(first_non_nan(metric(|m| m.gflops()))));
        row.push(f(first_non_nan(metric(|m| m.data_moved_mb()))));
        row.push(f(first_non_nan(metric(|m| m.flops_per_byte()))));
        row.push(
            with_m
                .first()
                .map_or(Value::Null, |m| Value::Text(m.compute_spec().into())),
        );
        if roof {
            row.push(roofline.map_or(Value::Null, |r| Value::from(r.bound_text())));
        }
        row.extend([f(tb[0]), f(tb[2]), f(tf[0]), f(tf[2])]);
    }
    row.extend([f(kt_mean), f(kt_std), f(kt_sum)]);
    row.extend([f(d.median), f(d.min), f(d.max)]);
    if perf {
        row.extend([f(tb[1]), f(tb[3]), f(tb[4]), f(tf[1]), f(tf[3]), f(tf[4])]);
        if roof {
            row.push(roofline.map_or(Value::Null, |r| f(r.time_us)));
            let pct = g.iter().map(|r| {
                r.metrics
                    .as_ref()
                    .and_then(|m| m.roofline)
                    .map_or(f64::NAN, |x| x.pct)
            });
            row.extend(nan_stats(&pct.collect::<Vec<f64>>()).map(f));
        }
    }
    row.extend([f(kt_median), f(kt_min), f(kt_max)]);
    row.extend(detail_cells(cx, all, g, with_m.first().copied()));
    (row, kt_sum)
}

/// A group's CPU duration statistics; pandas skips missing durations
/// (pseudo ops have none: sum 0, the rest NaN).
struct Durations {
    sum: f64,
    mean: f64,
    std: Option<f64>,
    median: f64,
    min: f64,
    max: f64,
}

impl Durations {
    fn of(g: &[&Row]) -> Self {
        let dur: Vec<f64> = g.iter().map(|r| r.duration).collect();
        let timed = dur.iter().filter(|d| !d.is_nan()).count();
        let sum = kahan_sum(&dur);
        let (min, max) = if timed == 0 {
            (f64::NAN, f64::NAN)
        } else {
            (
                dur.iter().copied().fold(f64::INFINITY, f64::min),
                dur.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        Durations {
            sum,
            mean: sum / timed as f64,
            std: welford_std(&dur),
            median: median(&dur),
            min,
            max,
        }
    }
}

/// A group's cells from `kernel_details_summary` to `has_perf_model`, and
/// `entry_point`, `call_stack_full` with `--include-call-stack`.
fn detail_cells(cx: &Context, all: &Rows, g: &[&Row], metrics: Option<&Metrics>) -> Vec<Value> {
    let lists: Vec<&[EventId]> = g.iter().map(|r| all.kernels(r)).collect();
    let ks = kernel_stats::summarise(cx.trace, &lists);
    let stacks = kernel_stacks(cx, g[0], &ks);
    let print_stacks = cx.opts.inference.include_call_stack;
    let summary = match &stacks {
        Some(st) if !print_stacks => {
            let texts: Vec<String> = st.iter().map(|s| list_repr(s)).collect();
            kernel_stats::summary_text_with_stacks(&ks, &texts)
        }
        _ => kernel_stats::summary_text(&ks),
    };
    let mut row = vec![
        Value::Text(summary.into()),
        kernel_stats::trunc_text(&ks).map_or(Value::Null, Value::from),
        metrics.map_or(Value::Null, |m| Value::Text(perf_params_text(m).into())),
        Value::Bool(g[0].has_perf_model),
    ];
    if print_stacks {
        let stack = full_stack_of(cx, stacks.as_deref(), &ks);
        row.push(Value::Text(
            (entry_point(stack.as_deref(), &g[0].name)).into(),
        ));
        row.push(Value::Text(full_stack_text(stack.as_deref()).into()));
    }
    row
}

/// The `unified_perf_summary` sheet; None when there is no row.
pub fn sheet(cx: &Context) -> Option<Table> {
    let all = collect_rows(cx);
    let rows = &all.rows;
    if rows.is_empty() {
        return None;
    }
    let mut reprs = ArgReprs::default();
    let ids = rows
        .iter()
        .map(|r| (&*r.name, r.category, arg_identity(cx, r.op)));
    let groups = group_first_seen_text_by(ids, |i| {
        let r = &rows[i];
        let mut keys = vec![Value::from(&*r.name), Value::from(r.category)];
        keys.extend(arg_key_cells(cx, &mut reprs, r.op));
        keys
    });
    let perf = rows.iter().any(|r| r.metrics.is_some());
    let roof = rows
        .iter()
        .any(|r| r.metrics.as_ref().is_some_and(|m| m.roofline.is_some()));
    let (built, sums): (Vec<Vec<Value>>, Vec<f64>) = groups
        .iter()
        .map(|(keys, idx)| {
            let g: Vec<&Row> = idx.iter().map(|&i| &rows[i]).collect();
            group_row(cx, &all, keys, &g, perf, roof)
        })
        .unzip();
    let uid = |i: usize| rows[groups[i].1[0]].shown_uid;
    let order = order_desc_by(&sums, |a, b| uid(a).cmp(&uid(b)));
    let sorted: Vec<f64> = order.iter().map(|&i| sums[i]).collect();
    let (pct, cum) = percentages(&sorted);
    let stacks = cx.opts.inference.include_call_stack;
    let mut s = Table::with_headers(sheet::UNIFIED_PERF_SUMMARY, columns(perf, roof, stacks));
    let mut built: Vec<Option<Vec<Value>>> = built.into_iter().map(Some).collect();
    for (j, &i) in order.iter().enumerate() {
        let mut row = built[i].take().expect("each group once");
        row.push(Value::Float(pct[j]));
        row.push(Value::Float(cum[j]));
        s.push_row(row);
    }
    Some(s)
}
