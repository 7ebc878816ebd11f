//! The op sheets built on the launcher table:
//! `ops_summary_by_category`, `ops_summary` and `ops_unique_args`.

use crate::analysis::common::intervals::events_busy_time;
use crate::analysis::common::kernel_stats;
use crate::analysis::common::op_summaries::{
    TimedRow, category_summary, group_sums, list_text, name_summary, pick, rank_ms, stats,
};
use crate::analysis::pytorch::callstack::{list_repr, module_stack, parent_module};
use crate::analysis::pytorch::pseudo::OpRef;
use crate::analysis::{common::arg_cells::ArgReprs, pytorch::Context};
use crate::names::{col, sheet};
use crate::table::agg::{Agg, NAN_STATS, order_desc_by, percentages};
use crate::table::group::{group_first_seen_text_by, group_sorted_by};
use crate::table::{Table, Value};
use crate::trace::{EventId, IdentId, StrId, ValueId};

/// One row of the launcher table `L`.
#[derive(Debug, Clone)]
pub struct LauncherRow<'a> {
    /// Launcher event.
    pub uid: EventId,
    /// Launcher name.
    pub name: Option<StrId>,
    /// Busy time of its directly attributed kernels.
    pub direct: f64,
    /// Busy time of every GPU event below it.
    pub subtree: f64,
    /// Op category.
    pub category: &'static str,
    /// Its kernels, by start time.
    pub kernels: &'a [EventId],
    /// Its modules; None unless the sheets group by parent module (boxed:
    /// most reports have none, and a big trace has many launchers).
    pub modules: Option<Box<LauncherModules>>,
}

/// Where a launcher sits among the nn.Modules.
#[derive(Debug, Clone)]
pub struct LauncherModules {
    /// Its name and nn.Module ancestors ([`module_stack`]).
    pub stack: Vec<String>,
    /// Its parent module ([`parent_module`]).
    pub parent: String,
}

impl LauncherRow<'_> {
    /// Its parent module; empty unless the sheets group by parent module.
    pub fn parent_module(&self) -> &str {
        self.modules.as_ref().map_or("", |m| &m.parent)
    }

    /// Its name and nn.Module ancestors; empty unless the sheets group by
    /// parent module.
    pub fn module_stack(&self) -> &[String] {
        self.modules.as_ref().map_or(&[], |m| &m.stack)
    }
}

/// Builds `L` in launcher order.
pub fn launcher_rows<'a>(cx: &Context<'a>) -> Vec<LauncherRow<'a>> {
    let (trace, tree) = (cx.trace, cx.tree);
    let modules = cx.opts.inference.group_by_parent_module;
    cx.attribution
        .launchers
        .iter()
        .map(|l| {
            let e = trace.event(l.uid);
            let kernels = cx.attribution.kernels(l);
            let first = kernels.first().map(|&k| trace.name(k));
            let modules = modules.then(|| {
                let stack = module_stack(trace, tree, l.uid);
                let parent = parent_module(&stack);
                Box::new(LauncherModules { stack, parent })
            });
            LauncherRow {
                modules,
                uid: l.uid,
                name: e.name,
                direct: events_busy_time(trace, kernels),
                subtree: events_busy_time(trace, &tree.gpu_events(trace, l.uid)),
                category: crate::analysis::common::op_categories::categorize(
                    trace.name_of(e),
                    first,
                ),
                kernels,
            }
        })
        .collect()
}

/// `ops_summary_by_category`: the plain sheet, or the module variant.
pub fn summary_by_category(cx: &Context, rows: &[LauncherRow]) -> Table {
    if cx.opts.inference.module_summaries() {
        return summary_by_category_module(cx, rows);
    }
    let timed: Vec<TimedRow> = rows.iter().map(|r| timed(cx, r)).collect();
    category_summary(sheet::OPS_SUMMARY_BY_CATEGORY, &timed)
}

/// `ops_summary`: the plain sheet, or the module variant.
pub fn summary(cx: &Context, rows: &[LauncherRow]) -> Table {
    if cx.opts.inference.module_summaries() {
        return summary_module(cx, rows);
    }
    let timed: Vec<TimedRow> = rows.iter().map(|r| timed(cx, r)).collect();
    name_summary(sheet::OPS_SUMMARY, &timed)
}

/// What the plain summary sheets read of a launcher row.
fn timed<'a>(cx: &Context<'a>, r: &LauncherRow) -> TimedRow<'a> {
    TimedRow {
        name: cx.trace.name(r.uid),
        category: r.category,
        direct: r.direct,
        subtree: r.subtree,
    }
}

/// The distinct texts, sorted, as a Python list (`['a', 'b']`).
fn sorted_list_text<'s>(items: impl Iterator<Item = &'s str>) -> String {
    list_text(&items.collect())
}

/// The sorted categories of a group as a Python list.
fn categories_text(rows: &[LauncherRow], idx: &[usize]) -> String {
    sorted_list_text(idx.iter().map(|&k| rows[k].category))
}

/// The parent module part of a group key: empty when not grouping by it.
fn module_key<'r>(r: &'r LauncherRow, modules: bool) -> &'r str {
    if modules { r.parent_module() } else { "" }
}

/// The `call_stack` of a group's first launcher.
fn first_stack(rows: &[LauncherRow], idx: &[usize]) -> Value {
    Value::Text(list_repr(rows[idx[0]].module_stack()).into())
}

/// The inference script's `ops_summary` (`_module` variant): grouped by
/// name (and parent module with `--group-by-parent-module`), with subtree
/// counts and, when grouped by module, the first launcher's call stack.
fn summary_module(cx: &Context, rows: &[LauncherRow]) -> Table {
    let modules = cx.opts.inference.group_by_parent_module;
    let keys = rows.iter().enumerate().map(|(i, r)| {
        let pm = module_key(r, modules);
        (i, (cx.trace.name(r.uid), pm))
    });
    let groups = group_sorted_by(keys, Ord::cmp);
    let dsum = group_sums(rows, &groups, |r| r.direct);
    let ssum = group_sums(rows, &groups, |r| r.subtree);
    let r = rank_ms(&dsum);
    let mut cols = vec![col::NAME];
    if modules {
        cols.push(col::PARENT_MODULE);
    }
    cols.extend([
        col::TOTAL_DIRECT_KERNEL_TIME_SUM,
        col::TOTAL_SUBTREE_KERNEL_TIME_SUM,
        col::TOTAL_SUBTREE_KERNEL_TIME_COUNT,
        col::TOTAL_DIRECT_KERNEL_TIME_MS,
        col::COUNT,
        col::CATEGORIES,
    ]);
    if modules {
        cols.push(col::CALL_STACK_FIRST);
    }
    cols.extend([col::PERCENTAGE, col::CUMULATIVE_PERCENTAGE]);
    let mut s = Table::new(sheet::OPS_SUMMARY, &cols);
    for (j, &i) in r.order.iter().enumerate() {
        let ((name, pm), idx) = &groups[i];
        let mut row = vec![Value::from(*name)];
        if modules {
            row.push(Value::from(*pm));
        }
        row.extend([
            Value::Float(dsum[i]),
            Value::Float(ssum[i]),
            Value::Int(idx.len() as i64),
            Value::Float(r.ms[j]),
            Value::Int(idx.len() as i64),
            Value::Text(categories_text(rows, idx).into()),
        ]);
        if modules {
            row.push(first_stack(rows, idx));
        }
        row.extend([Value::Float(r.pct[j]), Value::Float(r.cum[j])]);
        s.push_row(row);
    }
    s
}

/// The inference script's `ops_summary_by_category` (`_module` variant):
/// with `--group-by-parent-module`, grouped by category and parent module,
/// with the first launcher's call stack.
fn summary_by_category_module(cx: &Context, rows: &[LauncherRow]) -> Table {
    let modules = cx.opts.inference.group_by_parent_module;
    let keys = rows.iter().enumerate().map(|(i, r)| {
        let pm = module_key(r, modules);
        (i, (r.category, pm))
    });
    let groups = group_sorted_by(keys, Ord::cmp);
    let r = rank_ms(&group_sums(rows, &groups, |r| r.direct));
    let mut cols = vec![col::OP_CATEGORY];
    if modules {
        cols.push(col::PARENT_MODULE);
    }
    cols.push(col::COUNT);
    if modules {
        cols.push(col::CALL_STACK_FIRST);
    }
    cols.extend([
        col::TOTAL_DIRECT_KERNEL_TIME_MS,
        col::PERCENTAGE,
        col::CUMULATIVE_PERCENTAGE,
    ]);
    let mut s = Table::new(sheet::OPS_SUMMARY_BY_CATEGORY, &cols);
    for (j, &i) in r.order.iter().enumerate() {
        let ((category, pm), idx) = &groups[i];
        let mut row = vec![Value::from(*category)];
        if modules {
            row.push(Value::from(*pm));
        }
        row.push(Value::Int(idx.len() as i64));
        if modules {
            row.push(first_stack(rows, idx));
        }
        row.extend([
            Value::Float(r.ms[j]),
            Value::Float(r.pct[j]),
            Value::Float(r.cum[j]),
        ]);
        s.push_row(row);
    }
    s
}

/// What an op's [`arg_key_cells`] are a function of: the pid and tid that
/// name its process and thread, and its argument value handles.
pub type ArgIdentity = (IdentId, IdentId, [Option<ValueId>; 4]);

/// The [`ArgIdentity`] of an op.
pub fn arg_identity(cx: &Context, op: OpRef) -> ArgIdentity {
    let e = cx.trace.event(cx.proc_event(op));
    let a = cx.trace.args(cx.args_event(op)).unwrap_or_default();
    let values = [
        a.input_dims,
        a.input_type,
        a.input_strides,
        a.concrete_inputs,
    ];
    (e.pid, e.tid, values)
}

/// The key cells of an op for the columns of [`col::ARG_KEYS`]:
/// process and thread names, and the arguments as Python reprs (text;
/// `Null` when absent).
pub fn arg_key_cells(cx: &Context, reprs: &mut ArgReprs, op: OpRef) -> [Value; 7] {
    let (pid, tid, values) = arg_identity(cx, op);
    let (pname, plabel, tname) = cx.thread_names(pid, tid);
    let [dims, types, strides, concrete] =
        values.map(|id| reprs.get(cx.trace, id).map_or(Value::Null, Value::from));
    [
        Value::Text(pname.into()),
        Value::Text(plabel.into()),
        Value::Text(tname.into()),
        dims,
        types,
        strides,
        concrete,
    ]
}

/// The columns of `ops_unique_args`: with `modules`, the `parent_module`
/// key and the `call_stack` column; with `num_kernels`, that key.
fn unique_args_columns(modules: bool, num_kernels: bool) -> Vec<String> {
    let mut cols: Vec<String> = vec![col::NAME.into(), col::OP_CATEGORY.into()];
    if modules {
        cols.push(col::PARENT_MODULE.into());
    }
    cols.extend(col::ARG_KEYS.iter().map(|c| c.to_string()));
    if num_kernels {
        cols.push(col::NUM_KERNELS.into());
    }
    cols.push(col::OPERATION_COUNT.into());
    for stat in NAN_STATS.into_iter().chain([Agg::Sum]) {
        for base in [
            col::TOTAL_DIRECT_KERNEL_TIME,
            col::TOTAL_SUBTREE_KERNEL_TIME,
        ] {
            cols.push(stat.column(base));
        }
    }
    cols.push(col::EX_UID.into());
    if modules {
        cols.push(col::CALL_STACK.into());
    }
    cols.extend(
        [
            col::KERNEL_DETAILS_SUMMARY,
            col::TRUNC_KERNEL_DETAILS,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ]
        .map(String::from),
    );
    cols
}

/// `ops_unique_args`.
pub fn unique_args(cx: &Context, rows: &[LauncherRow]) -> Table {
    let mut reprs = ArgReprs::default();
    let inf = &cx.opts.inference;
    let (modules, num_kernels) = (inf.group_by_parent_module, inf.group_by_num_kernels);
    let ids = rows.iter().map(|r| {
        let module = if modules { r.parent_module() } else { "" };
        // The direct kernel count keys only with `num_kernels`.
        let kernels = if num_kernels { r.kernels.len() } else { 0 };
        let name = cx.trace.event(r.uid).name;
        let args = arg_identity(cx, OpRef::Event(r.uid));
        (name, r.category, module, args, kernels)
    });
    let groups = group_first_seen_text_by(ids, |i| {
        let r = &rows[i];
        let mut keys = vec![Value::from(cx.trace.name(r.uid)), Value::from(r.category)];
        if modules {
            keys.push(Value::from(r.parent_module()));
        }
        keys.extend(arg_key_cells(cx, &mut reprs, OpRef::Event(r.uid)));
        if num_kernels {
            keys.push(Value::Int(r.kernels.len() as i64));
        }
        keys
    });
    let sums = group_sums(rows, &groups, |r| r.direct);
    let ex_uid: Vec<EventId> = groups.iter().map(|(_, idx)| rows[idx[0]].uid).collect();
    let order = order_desc_by(&sums, |a, b| ex_uid[a].cmp(&ex_uid[b]));
    let sorted_sums: Vec<f64> = order.iter().map(|&i| sums[i]).collect();
    let (pct, cum) = percentages(&sorted_sums);

    let mut s = Table::with_headers(
        sheet::OPS_UNIQUE_ARGS,
        unique_args_columns(modules, num_kernels),
    );
    for (j, &i) in order.iter().enumerate() {
        let (keys, idx) = &groups[i];
        let mut row: Vec<Value> = keys.clone();
        row.push(Value::Int(idx.len() as i64));
        let direct = pick(rows, idx, |r| r.direct);
        let subtree = pick(rows, idx, |r| r.subtree);
        for (d, t) in stats(&direct).into_iter().zip(stats(&subtree)) {
            row.push(d);
            row.push(t);
        }
        row.push(Value::Int(ex_uid[i].index() as i64));
        if modules {
            row.push(first_stack(rows, idx));
        }
        let lists: Vec<&[EventId]> = idx.iter().map(|&r| rows[r].kernels).collect();
        let ks = kernel_stats::summarise(cx.trace, &lists);
        row.push(Value::Text(kernel_stats::summary_text(&ks).into()));
        row.push(kernel_stats::trunc_text(&ks).map_or(Value::Null, Value::from));
        row.push(Value::Float(pct[j]));
        row.push(Value::Float(cum[j]));
        s.push_row(row);
    }
    s
}
