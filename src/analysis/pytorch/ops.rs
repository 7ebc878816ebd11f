//! The op sheets built on the launcher table:
//! `ops_summary_by_category`, `ops_summary` and `ops_unique_args`.

use std::collections::BTreeSet;

use crate::analysis::common::intervals::events_busy_time;
use crate::analysis::common::kernel_stats;
use crate::analysis::pytorch::callstack::{list_repr, module_stack, parent_module};
use crate::analysis::pytorch::pseudo::OpRef;
use crate::analysis::{common::arg_cells::ArgReprs, pytorch::Context};
use crate::names::{col, sheet};
use crate::numeric::kahan_sum;
use crate::pyfmt::str_repr;
use crate::table::agg::{Agg, NAN_STATS, nan_stats, order_desc, order_desc_by, percentages};
use crate::table::group::{Group, group_first_seen_text_by, group_sorted_by};
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

/// The `field` of the rows `idx`, in that order.
fn pick<T>(rows: &[T], idx: &[usize], field: fn(&T) -> f64) -> Vec<f64> {
    idx.iter().map(|&i| field(&rows[i])).collect()
}

/// The Kahan sum of `field` over each group's rows.
fn group_sums<T, K>(rows: &[T], groups: &[Group<K>], field: fn(&T) -> f64) -> Vec<f64> {
    groups
        .iter()
        .map(|(_, idx)| kahan_sum(&pick(rows, idx, field)))
        .collect()
}

/// Groups ranked by their summed direct kernel time (µs): the order
/// (descending), and per rank the time in ms and its percentages.
struct RankedMs {
    order: Vec<usize>,
    ms: Vec<f64>,
    pct: Vec<f64>,
    cum: Vec<f64>,
}

fn rank_ms(sums_us: &[f64]) -> RankedMs {
    let order = order_desc(sums_us);
    let ms: Vec<f64> = order.iter().map(|&i| sums_us[i] / 1000.0).collect();
    let (pct, cum) = percentages(&ms);
    RankedMs {
        order,
        ms,
        pct,
        cum,
    }
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

/// One launcher as the summary sheets see it: its name, category and
/// kernel times (µs). The JAX report's kernels are their own launchers.
#[derive(Debug, Clone, Copy)]
pub struct TimedRow<'s> {
    /// Launcher name.
    pub name: &'s str,
    /// Op category.
    pub category: &'s str,
    /// Busy time of its direct kernels.
    pub direct: f64,
    /// Busy time of every GPU event below it.
    pub subtree: f64,
}

/// The by-category summary sheet `name` (`ops_summary_by_category`,
/// `kernel_launchers_summary_by_category`): rows grouped by category,
/// ranked by summed direct time.
pub fn category_summary(name: &str, rows: &[TimedRow]) -> Table {
    let groups = group_sorted_by(rows.iter().map(|r| r.category).enumerate(), Ord::cmp);
    let totals: Vec<CategoryTotals> = groups
        .iter()
        .map(|(category, idx)| CategoryTotals {
            category,
            count: idx.len(),
            direct: kahan_sum(&pick(rows, idx, |r| r.direct)),
        })
        .collect();
    category_summary_of(name, &totals)
}

/// One group of a by-category summary: its category, row count and
/// summed direct time (µs, Kahan in row order).
#[derive(Debug, Clone, Copy)]
pub struct CategoryTotals<'s> {
    /// The category.
    pub category: &'s str,
    /// Rows in the group.
    pub count: usize,
    /// Their summed direct kernel time.
    pub direct: f64,
}

/// [`category_summary`] of groups already totalled, in ascending category
/// order: a sheet whose rows are many and categories few can total them
/// as they go by instead of listing them.
pub fn category_summary_of(name: &str, groups: &[CategoryTotals]) -> Table {
    let sums: Vec<f64> = groups.iter().map(|g| g.direct).collect();
    let r = rank_ms(&sums);
    let mut s = Table::new(
        name,
        &[
            col::OP_CATEGORY,
            col::COUNT,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ],
    );
    for (j, &i) in r.order.iter().enumerate() {
        let g = &groups[i];
        s.push_row(vec![
            Value::from(g.category),
            Value::Int(g.count as i64),
            Value::Float(r.ms[j]),
            Value::Float(r.pct[j]),
            Value::Float(r.cum[j]),
        ]);
    }
    s
}

/// The by-name summary sheet `name` (`ops_summary`,
/// `kernel_launchers_summary`): rows grouped by name, ranked by summed
/// direct time, with their sorted categories.
pub fn name_summary(name: &str, rows: &[TimedRow]) -> Table {
    let groups = group_sorted_by(rows.iter().map(|r| r.name).enumerate(), Ord::cmp);
    let totals: Vec<NameTotals> = groups
        .iter()
        .map(|(key, idx)| NameTotals {
            name: key,
            direct: kahan_sum(&pick(rows, idx, |r| r.direct)),
            subtree: kahan_sum(&pick(rows, idx, |r| r.subtree)),
            count: idx.len(),
            categories: idx.iter().map(|&k| rows[k].category).collect(),
        })
        .collect();
    name_summary_of(name, &totals)
}

/// One group of a by-name summary: its name, its rows' summed direct and
/// subtree times (µs, Kahan in row order), their count and categories.
#[derive(Debug, Clone)]
pub struct NameTotals<'s> {
    /// The name.
    pub name: &'s str,
    /// Summed direct kernel time.
    pub direct: f64,
    /// Summed subtree kernel time.
    pub subtree: f64,
    /// Rows in the group.
    pub count: usize,
    /// Their distinct categories.
    pub categories: BTreeSet<&'s str>,
}

/// [`name_summary`] of groups already totalled, in ascending name order
/// (see [`category_summary_of`]).
pub fn name_summary_of(name: &str, groups: &[NameTotals]) -> Table {
    let dsum: Vec<f64> = groups.iter().map(|g| g.direct).collect();
    let r = rank_ms(&dsum);
    let mut s = Table::new(
        name,
        &[
            col::NAME,
            col::TOTAL_DIRECT_KERNEL_TIME_SUM,
            col::TOTAL_SUBTREE_KERNEL_TIME_SUM,
            col::TOTAL_DIRECT_KERNEL_TIME_MS,
            col::TOTAL_SUBTREE_KERNEL_TIME_MS,
            col::COUNT,
            col::CATEGORIES,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
        ],
    );
    for (j, &i) in r.order.iter().enumerate() {
        let g = &groups[i];
        s.push_row(vec![
            Value::from(g.name),
            Value::Float(g.direct),
            Value::Float(g.subtree),
            Value::Float(r.ms[j]),
            Value::Float(g.subtree / 1000.0),
            Value::Int(g.count as i64),
            Value::Text(list_text(&g.categories).into()),
            Value::Float(r.pct[j]),
            Value::Float(r.cum[j]),
        ]);
    }
    s
}

/// Texts, in the set's (sorted) order, as a Python list (`['a', 'b']`).
fn list_text(set: &BTreeSet<&str>) -> String {
    let items: Vec<String> = set.iter().map(|c| str_repr(c)).collect();
    format!("[{}]", items.join(", "))
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

/// Mean, median, sample std, min, max and sum of a group's values, pandas
/// style (a NaN std, of one value, is written as an empty cell).
pub fn stats(v: &[f64]) -> [Value; 6] {
    let [mean, median, std, min, max] = nan_stats(v);
    [mean, median, std, min, max, kahan_sum(v)].map(Value::Float)
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
