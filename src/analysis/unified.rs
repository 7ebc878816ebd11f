//! `unified_perf_summary` (spec 02 §6): one row set covering all GPU time —
//! the highest modelled op of each subtree with its perf metrics, leaf ops
//! without a model, and one-kernel "Synthetic Op" rows for the rest.

use std::collections::HashSet;

use indexmap::IndexMap;

use super::attribution::CommNames;
use super::categories::categorize;
use super::kernel_details;
use super::ops::{ARG_KEYS, arg_key_texts};
use super::perf_model::{self, ModelClass, ModelError};
use super::perf_sheets::nan_stats;
use super::roofline::{self, Metrics};
use super::{ArgReprs, Context};
use crate::numeric::{kahan_sum, median, pairwise_sum, welford_std};
use crate::report::{Cell, Sheet};
use crate::trace::{Cat, EventId};

/// One collected row before grouping.
struct Row {
    /// The event (for synthetic rows: the parent/ancestor it copies).
    uid: EventId,
    /// UID printed as `ex_UID` (synthetic rows get new ones).
    shown_uid: usize,
    name: String,
    category: String,
    /// CPU duration of the event.
    duration: f64,
    has_perf_model: bool,
    /// GPU events in `gpu_events` order.
    kernels: Vec<EventId>,
    kernel_time: f64,
    metrics: Option<Metrics>,
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

struct Walker<'c, 'a> {
    cx: &'c Context<'a>,
    visited: HashSet<EventId>,
    collected: Vec<(EventId, Collect)>,
    comm: CommNames,
}

fn own_model(cx: &Context, uid: EventId) -> Option<&'static ModelClass> {
    perf_model::lookup(cx.trace.name(uid))
}

/// A compiled Triton op whose arguments the Triton model can use.
fn triton_model(cx: &Context, uid: EventId) -> bool {
    let name = cx.trace.name(uid);
    perf_model::is_triton_compiled(name)
        && perf_model::triton::can_model(&roofline::op_input(cx.trace, uid, Vec::new()))
}

impl Walker<'_, '_> {
    fn gpu(&self, n: EventId) -> bool {
        self.cx.tree.gpu_count(n) > 0
    }

    /// Some descendant cpu_op with its own model and GPU work.
    fn modelled_descendant(&self, n: EventId) -> bool {
        let (trace, tree) = (self.cx.trace, self.cx.tree);
        let mut stack: Vec<EventId> = tree.children(n).collect();
        while let Some(c) = stack.pop() {
            match trace.event(c).cat {
                Cat::CpuOp => {
                    if (own_model(self.cx, c).is_some() || triton_model(self.cx, c)) && self.gpu(c)
                    {
                        return true;
                    }
                    stack.extend(tree.children(c));
                }
                Cat::PythonFunction => stack.extend(tree.children(c)),
                _ => {}
            }
        }
        false
    }

    /// A GPU event reachable through up to 10 runtime/python children.
    fn is_leaf_op(&self, n: EventId, depth: usize) -> bool {
        let (trace, tree) = (self.cx.trace, self.cx.tree);
        tree.children(n).any(|c| match trace.event(c).cat {
            cat if cat.is_gpu() => true,
            Cat::CudaRuntime | Cat::PythonFunction if depth < 10 => self.is_leaf_op(c, depth + 1),
            _ => false,
        })
    }

    /// Spec 02 §6.2: a backward op whose forward op has a model with a
    /// backward category. Returns the forward op and its class.
    fn sole_backward(&self, x: EventId) -> Option<(EventId, &'static ModelClass)> {
        let (trace, tree) = (self.cx.trace, self.cx.tree);
        let w = tree
            .ancestors(x)
            .take(5)
            .find(|a| tree.fwd_event.contains_key(a))?;
        let f = tree.fwd_event[&w];
        let class = own_model(self.cx, f)?;
        class.bwd_category?;
        let wname = trace.name(w);
        let wanted = wname.split_once(": ").map(|(_, t)| t);
        let mut matches = Vec::new();
        let mut stack: Vec<EventId> = tree.children(w).collect();
        while let Some(c) = stack.pop() {
            if trace.event(c).cat != Cat::CpuOp {
                continue;
            }
            if self.gpu(c) && wanted.is_none_or(|t| trace.name(c) == t) {
                matches.push(c);
            }
            stack.extend(tree.children(c));
        }
        if matches != [x] {
            return None;
        }
        roofline::compute(trace, tree, f, class, true, self.cx.arch).ok()?;
        Some((f, class))
    }

    fn visit(&mut self, n: EventId) {
        if !self.visited.insert(n) {
            return;
        }
        let (trace, tree) = (self.cx.trace, self.cx.tree);
        let cat = trace.event(n).cat;
        if cat != Cat::CpuOp && !(tree.python_included && cat == Cat::PythonFunction) {
            return;
        }
        if !self.gpu(n) {
            return;
        }
        if cat == Cat::CpuOp {
            if let Some(class) = own_model(self.cx, n) {
                self.collected.push((n, Collect::Model(class)));
                return;
            }
            if triton_model(self.cx, n) {
                self.collected.push((n, Collect::Triton));
                return;
            }
            if let Some((fwd, class)) = self.sole_backward(n) {
                if self.modelled_descendant(n) {
                    self.visit_children(n);
                } else {
                    self.collected.push((n, Collect::Backward { fwd, class }));
                }
                return;
            }
        }
        if self.modelled_descendant(n) {
            self.visit_children(n);
            return;
        }
        if cat == Cat::CpuOp && self.is_leaf_op(n, 0) {
            let gpu = tree.gpu_events(trace, n);
            if !gpu.iter().any(|&g| self.comm.is_comm(trace, g)) {
                self.collected.push((n, Collect::Plain));
            }
            return;
        }
        self.visit_children(n);
    }

    fn visit_children(&mut self, n: EventId) {
        let kids: Vec<EventId> = self.cx.tree.children(n).collect();
        for c in kids {
            self.visit(c);
        }
    }
}

/// Builds the rows of the unified table, in collection order.
fn collect_rows(cx: &Context) -> Vec<Row> {
    let (trace, tree) = (cx.trace, cx.tree);
    let mut w = Walker {
        cx,
        visited: HashSet::new(),
        collected: Vec::new(),
        comm: CommNames::new(trace),
    };
    if tree.python_included {
        for (i, e) in trace.events() {
            if e.cat == Cat::PythonFunction && tree.parent(i).is_none() && w.gpu(i) {
                w.visit(i);
            }
        }
    }
    for &r in &tree.cpu_roots {
        w.visit(r);
    }
    let mut rows = Vec::new();
    let mut covered: HashSet<EventId> = HashSet::new();
    let collected = std::mem::take(&mut w.collected);
    for (uid, how) in collected {
        let e = trace.event(uid);
        let name = trace.name(uid).to_string();
        let gpu = tree.gpu_events(trace, uid);
        covered.extend(gpu.iter().copied());
        let first = cx.attribution.first_kernel(trace, uid);
        let (category, metrics, has_model) = match how {
            Collect::Plain => (categorize(&name, first).to_string(), None, false),
            Collect::Model(class) => {
                match roofline::compute(trace, tree, uid, class, false, cx.arch) {
                    Ok(m) => (categorize(&name, first).to_string(), Some(m), true),
                    // The reference drops the row, GPU time and all.
                    Err(ModelError::NotImplemented) => continue,
                    Err(ModelError::Invalid(_)) => {
                        (categorize(&name, first).to_string(), None, true)
                    }
                }
            }
            Collect::Triton => {
                let input = roofline::op_input(trace, uid, Vec::new());
                match perf_model::triton::evaluate(&input) {
                    Ok(ev) => {
                        let ks = roofline::kernel_set(trace, tree, uid, false);
                        let t = super::intervals::events_busy_time(trace, &ks);
                        let m = roofline::metrics_from(ev, ks, t, cx.arch);
                        (categorize(&name, first).to_string(), Some(m), true)
                    }
                    Err(_) => (categorize(&name, first).to_string(), None, true),
                }
            }
            Collect::Backward { fwd, class } => {
                let m = roofline::compute(trace, tree, fwd, class, true, cx.arch).ok();
                (class.bwd_category.unwrap_or("other").to_string(), m, true)
            }
        };
        let kernel_time = match &metrics {
            Some(m) => m.kernel_time,
            None => super::intervals::events_busy_time(trace, &gpu),
        };
        rows.push(Row {
            uid,
            shown_uid: uid.index(),
            name,
            category,
            duration: e.dur,
            has_perf_model: has_model,
            kernels: gpu,
            kernel_time,
            metrics,
        });
    }
    // Orphan kernels: one synthetic row each.
    let mut by_parent: IndexMap<EventId, Vec<EventId>> = IndexMap::new();
    let mut with_op: Vec<(EventId, EventId)> = Vec::new();
    for (k, e) in trace.events() {
        if !e.cat.is_gpu() || covered.contains(&k) || w.comm.is_comm(trace, k) {
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
    // Synthetic rows get new UIDs after the last event.
    for (next_uid, (k, p)) in (trace.len()..).zip(pairs) {
        let name = format!("{}->{} (Synthetic Op)", trace.name(p), trace.name(k));
        let first = cx.attribution.first_kernel(trace, p);
        let kernels = vec![k];
        rows.push(Row {
            uid: p,
            shown_uid: next_uid,
            category: categorize(&name, first).to_string(),
            name,
            duration: trace.event(p).dur,
            has_perf_model: false,
            kernel_time: super::intervals::events_busy_time(trace, &kernels),
            kernels,
            metrics: None,
        });
    }
    rows
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

/// The `unified_perf_summary` sheet; None when there is no row.
pub fn sheet(cx: &Context) -> Option<Sheet> {
    let rows = collect_rows(cx);
    if rows.is_empty() {
        return None;
    }
    let mut reprs = ArgReprs::default();
    // Group text key -> (key cells shown, member rows).
    type Group = (Vec<Option<String>>, Vec<usize>);
    let mut groups: IndexMap<Vec<String>, Group> = IndexMap::new();
    for (i, r) in rows.iter().enumerate() {
        let mut keys = vec![Some(r.name.clone()), Some(r.category.clone())];
        keys.extend(arg_key_texts(cx, &mut reprs, r.uid));
        let text: Vec<String> = keys
            .iter()
            .map(|k| k.clone().unwrap_or_else(|| "None".into()))
            .collect();
        let g = groups
            .entry(text)
            .or_insert_with(|| (keys.clone(), Vec::new()));
        for (slot, k) in g.0.iter_mut().zip(keys) {
            if slot.is_none() {
                *slot = k;
            }
        }
        g.1.push(i);
    }
    let perf = rows.iter().any(|r| r.metrics.is_some());
    let roof = rows
        .iter()
        .any(|r| r.metrics.as_ref().is_some_and(|m| m.roofline.is_some()));
    let mut cols: Vec<String> = ["name", "op category"]
        .iter()
        .chain(ARG_KEYS.iter())
        .map(|s| s.to_string())
        .collect();
    cols.extend(
        [
            "ex_UID",
            "operation_count",
            "total_duration_us",
            "mean_duration_us",
            "std_duration_us",
        ]
        .map(String::from),
    );
    if perf {
        cols.extend(["GFLOPS", "Data Moved (MB)", "FLOPS/Byte", "Compute Spec"].map(String::from));
        if roof {
            cols.push("Roofline Bound".into());
        }
        cols.extend(["TB/s_mean", "TB/s_std", "TFLOPS/s_mean", "TFLOPS/s_std"].map(String::from));
    }
    cols.extend(
        [
            "Kernel Time (µs)_mean",
            "Kernel Time (µs)_std",
            "Kernel Time (µs)_sum",
        ]
        .map(String::from),
    );
    cols.extend(["duration_us_median", "duration_us_min", "duration_us_max"].map(String::from));
    if perf {
        cols.extend(
            [
                "TB/s_median",
                "TB/s_min",
                "TB/s_max",
                "TFLOPS/s_median",
                "TFLOPS/s_min",
                "TFLOPS/s_max",
            ]
            .map(String::from),
        );
        if roof {
            cols.push("Roofline Time (µs)_first".into());
            cols.extend(
                ["mean", "median", "std", "min", "max"].map(|s| format!("Pct Roofline_{s}")),
            );
        }
    }
    cols.extend(
        [
            "Kernel Time (µs)_median",
            "Kernel Time (µs)_min",
            "Kernel Time (µs)_max",
        ]
        .map(String::from),
    );
    cols.extend(
        [
            "kernel_details_summary",
            "trunc_kernel_details",
            "perf_params",
            "has_perf_model",
        ]
        .map(String::from),
    );
    cols.extend(["Percentage (%)", "Cumulative Percentage (%)"].map(String::from));

    let text = |s: Option<String>| s.map(Cell::Text).unwrap_or(Cell::Empty);
    let f = Cell::Float;
    let mut built: Vec<(f64, usize, Vec<Cell>)> = Vec::new();
    for (keys, idx) in groups.values() {
        let g: Vec<&Row> = idx.iter().map(|&i| &rows[i]).collect();
        let metric = |get: fn(&Metrics) -> f64| -> Vec<f64> {
            g.iter()
                .map(|r| r.metrics.as_ref().map(get).unwrap_or(f64::NAN))
                .collect()
        };
        let first = |v: Vec<f64>| v.into_iter().find(|x| !x.is_nan()).unwrap_or(f64::NAN);
        let dur: Vec<f64> = g.iter().map(|r| r.duration).collect();
        let kt: Vec<f64> = g.iter().map(|r| r.kernel_time).collect();
        let kt_sum = kahan_sum(&kt);
        let [kt_mean, kt_median, kt_std, kt_min, kt_max] = nan_stats(&kt);
        let tb = nan_stats(&metric(|m| m.tb_s));
        let tf = nan_stats(&metric(|m| m.tflops_s));
        let mut row: Vec<Cell> = keys.iter().cloned().map(text).collect();
        let dsum = kahan_sum(&dur);
        row.extend([
            Cell::Int(g[0].shown_uid as i64),
            Cell::Int(g.len() as i64),
            f(dsum),
            f(dsum / g.len() as f64),
            welford_std(&dur).map(f).unwrap_or(Cell::Empty),
        ]);
        let with_m: Vec<&Metrics> = g.iter().filter_map(|r| r.metrics.as_ref()).collect();
        if perf {
            row.push(f(first(metric(|m| m.gflops))));
            row.push(f(first(metric(|m| m.data_moved_mb))));
            row.push(f(first(metric(|m| m.flops_per_byte))));
            row.push(
                with_m
                    .first()
                    .map(|m| Cell::Text(m.compute_spec.clone()))
                    .unwrap_or(Cell::Empty),
            );
            if roof {
                row.push(
                    with_m
                        .iter()
                        .find_map(|m| m.roofline)
                        .map(|r| Cell::Text(r.bound_text().into()))
                        .unwrap_or(Cell::Empty),
                );
            }
            row.extend([f(tb[0]), f(tb[2]), f(tf[0]), f(tf[2])]);
        }
        row.extend([f(kt_mean), f(kt_std), f(kt_sum)]);
        let dmin = dur.iter().copied().fold(f64::INFINITY, f64::min);
        let dmax = dur.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        row.extend([f(median(&dur)), f(dmin), f(dmax)]);
        if perf {
            row.extend([f(tb[1]), f(tb[3]), f(tb[4]), f(tf[1]), f(tf[3]), f(tf[4])]);
            if roof {
                row.push(
                    with_m
                        .iter()
                        .find_map(|m| m.roofline)
                        .map(|r| f(r.time_us))
                        .unwrap_or(Cell::Empty),
                );
                let pct: Vec<f64> = g
                    .iter()
                    .map(|r| {
                        r.metrics
                            .as_ref()
                            .and_then(|m| m.roofline)
                            .map(|x| x.pct)
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                row.extend(nan_stats(&pct).map(f));
            }
        }
        row.extend([f(kt_median), f(kt_min), f(kt_max)]);
        let lists: Vec<&[EventId]> = g.iter().map(|r| r.kernels.as_slice()).collect();
        let ks = kernel_details::summarise(cx.trace, &lists);
        row.push(Cell::Text(kernel_details::summary_text(&ks)));
        row.push(text(kernel_details::trunc_text(&ks)));
        row.push(
            with_m
                .first()
                .map(|m| Cell::Text(perf_params_text(m)))
                .unwrap_or(Cell::Empty),
        );
        row.push(Cell::Bool(g[0].has_perf_model));
        built.push((kt_sum, g[0].shown_uid, row));
    }
    built.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let sums: Vec<f64> = built.iter().map(|b| b.0).collect();
    let total = pairwise_sum(&sums);
    let mut cum = 0.0;
    let mut s = Sheet {
        name: "unified_perf_summary".into(),
        columns: cols,
        rows: Vec::new(),
    };
    for (sum, _, mut row) in built {
        let pct = sum / total * 100.0;
        cum += pct;
        row.push(f(pct));
        row.push(f(cum));
        s.rows.push(row);
    }
    Some(s)
}
