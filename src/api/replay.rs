//! `tracelens replay`: the ops to reproduce, chosen from a trace's report,
//! each with its replay IR or the reason it cannot be replayed.

use std::path::Path;

use super::report::{AnalyzeOptions, analyze_full};
use crate::analysis::commands::replay::{ReplayOp, replay_op, schema};
use crate::analysis::common::intervals::events_busy_time;
use crate::error::{Error, ReplayError};
use crate::names::{col, sheet};
use crate::table;
use crate::trace::tree::{TreeOptions, build};
use crate::trace::{Cat, EventId, Trace};

/// Which ops to replay.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplaySelection {
    /// The first N rows of `ops_unique_args` (most GPU kernel time first).
    Top(usize),
    /// These events (the `UID`/`ex_UID` of the sheets, the uid of `tracelens.tree`).
    Uids(Vec<usize>),
    /// Every `ops_unique_args` row of this op name.
    Op(String),
}

/// One selected op.
#[derive(Debug, Clone)]
pub struct SelectedOp {
    /// The event replayed (a representative call of its row).
    pub uid: usize,
    /// The op name.
    pub name: String,
    /// Mean GPU kernel time per call in the trace, µs.
    pub traced_us: f64,
    /// Calls of this op with these arguments in the trace.
    pub count: i64,
    /// Names of the kernels the event launched (at most five).
    pub kernels: Vec<String>,
    /// The overload and arguments to replay, or why the op cannot be
    /// replayed.
    pub replay: Result<ReplayOp, String>,
}

/// The selected ops of a trace, in selection order.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    /// The ops.
    pub ops: Vec<SelectedOp>,
    /// The torch version whose schemas were matched.
    pub torch_version: &'static str,
}

/// The row of `ops_unique_args` as replay reads it.
struct Row {
    uid: usize,
    name: String,
    traced_us: f64,
    count: i64,
}

fn rows(report: &crate::Report) -> Vec<Row> {
    let Some(t) = table::find(&report.sheets, sheet::OPS_UNIQUE_ARGS) else {
        return Vec::new();
    };
    let idx = |c: &str| t.column_index(c);
    let (Some(name), Some(uid), Some(mean), Some(count)) = (
        idx(col::NAME),
        idx(col::EX_UID),
        idx(col::TOTAL_DIRECT_KERNEL_TIME_MEAN),
        idx(col::OPERATION_COUNT),
    ) else {
        return Vec::new();
    };
    t.rows()
        .filter_map(|r| {
            let uid = r.get(uid).as_f64()? as usize;
            Some(Row {
                uid,
                name: r.get(name).as_str()?.to_string(),
                traced_us: r.get(mean).as_f64().unwrap_or(f64::NAN),
                count: r.get(count).as_f64().unwrap_or(1.0) as i64,
            })
        })
        .collect()
}

/// The distinct names of `kernels`, in order, at most five.
fn kernel_names(trace: &Trace, kernels: &[EventId]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for &k in kernels {
        let n = trace.name(k);
        if names.len() < 5 && !names.iter().any(|m| m == n) {
            names.push(n.to_string());
        }
    }
    names
}

/// Chooses the ops of the trace at `path` and builds each one's replay
/// entry.
pub fn replay_plan(path: &Path, selection: &ReplaySelection) -> Result<ReplayPlan, Error> {
    let (trace, tree, report) = analyze_full(path, &AnalyzeOptions::default())?;
    // The report's own tree; only the JAX and rocprof reports build none.
    let tree = tree.unwrap_or_else(|| build(&trace, TreeOptions::default()));
    let all = rows(&report);
    let chosen: Vec<Row> = match selection {
        ReplaySelection::Top(n) => all.into_iter().take(*n).collect(),
        ReplaySelection::Op(op) => {
            let found: Vec<Row> = all.into_iter().filter(|r| &r.name == op).collect();
            if found.is_empty() {
                let path = path.to_path_buf();
                let op = op.clone();
                return Err(ReplayError::NoSuchOp { path, op }.into());
            }
            found
        }
        ReplaySelection::Uids(uids) => uids
            .iter()
            .map(|&uid| {
                if uid >= trace.len() || !matches!(trace.event(EventId::new(uid)).cat, Cat::CpuOp) {
                    let path = path.to_path_buf();
                    return Err(Error::from(ReplayError::NotACpuOp { path, uid }));
                }
                let id = EventId::new(uid);
                Ok(Row {
                    uid,
                    name: trace.name(id).to_string(),
                    traced_us: events_busy_time(&trace, &tree.gpu_events(&trace, id)),
                    count: 1,
                })
            })
            .collect::<Result<_, _>>()?,
    };
    let ops = chosen
        .into_iter()
        .map(|row| {
            let id = EventId::new(row.uid);
            SelectedOp {
                replay: replay_op(&row.name, &trace.op_args(id)),
                kernels: kernel_names(&trace, &tree.gpu_events(&trace, id)),
                uid: row.uid,
                name: row.name,
                traced_us: row.traced_us,
                count: row.count,
            }
        })
        .collect();
    Ok(ReplayPlan {
        ops,
        torch_version: schema::torch_version(),
    })
}
