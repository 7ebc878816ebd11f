//! Collective (NCCL/RCCL) analysis across ranks: the long
//! table of collective kernels, matching of the same collective across
//! ranks, implicit-sync metrics (latency, skew, wait, bandwidth), the
//! straggler summary, all_to_allv sheets, and the single-trace
//! `coll_analysis` sheet.
//!
//! Values are [`Value`](crate::table::Value)s that follow pandas' typing: a column of numbers
//! with any missing value, or any float, is a float column (ints print as
//! `8.0`, [`crate::table::typing::widen_ints`]); other columns keep each
//! value's own type. Every table is typed column by column exactly where
//! the reference builds a DataFrame.
//!
//! Submodules: `values` (cells of arguments and times),
//! `infer` (collective types, kernel-name inference), `long` (the long
//! table, matching mode, node columns), `implicit_sync` (collectives matched
//! across ranks), `summary` (straggler and per-type summaries) and
//! `all2allv` (all_to_allv sheets).

use crate::analysis::diagnosis::Diagnosis;
use crate::analysis::diagnosis::job::{Arrival, GroupCounts, Job, Matched, diagnose_job};
use crate::names::sheet;
use crate::table::Table;
use crate::trace::{Cat, CollectiveArgs, Trace, is_collective_name};

mod align;
mod all2allv;
mod implicit_sync;
mod infer;
mod long;
mod summary;
mod values;

pub use crate::table::agg::Agg;
pub use infer::{KernelGuess, infer_from_kernel_name};
pub use long::Mode;
pub use values::DEFAULT_AGG_METRICS;

use all2allv::{a2av_sheet, build_a2av, summary_a2av_sheet};
use implicit_sync::{SyncRow, build_sync, summary_sync_sheet, sync_sheet};
use long::{Nodes, build_long, long_sheet, summary_long_sheet};
use summary::{by_type_sheet, straggler_sheet};

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/// Options of the multi-rank collective report.
#[derive(Debug, Clone)]
pub struct CollectiveOptions {
    /// Number of ranks of the job.
    pub world_size: usize,
    /// GPUs per node for `node_id` / `node_span`; `None`: from the first
    /// trace's `deviceProperties`, if it has any.
    pub gpus_per_node: Option<usize>,
    /// Aggregations of `nccl_summary_implicit_sync` and
    /// `nccl_summary_all2allv`.
    pub agg_metrics: Vec<Agg>,
    /// How the diagnosis's commands name each rank's trace (index =
    /// rank); empty: `RANK<r>_TRACE`.
    pub rank_traces: Vec<String>,
}

impl Default for CollectiveOptions {
    fn default() -> Self {
        CollectiveOptions {
            world_size: 1,
            gpus_per_node: None,
            agg_metrics: DEFAULT_AGG_METRICS.to_vec(),
            rank_traces: Vec::new(),
        }
    }
}

/// The multi-rank collective report.
#[derive(Debug, Clone)]
pub struct CollectiveReport {
    /// Sheets in the reference's write order, then `nccl_summary_by_type`.
    pub sheets: Vec<Table>,
    /// How collectives were matched across ranks.
    pub mode: Mode,
    /// Collective kernels over all ranks.
    pub kernels: usize,
    /// Ranks analysed.
    pub ranks: usize,
    /// Collectives matched across ranks with a `nccl_implicit_sync` row.
    pub matched: usize,
    /// Of those, how many were named from the kernel name.
    pub inferred: usize,
    /// GPUs per node used for the node columns.
    pub gpus_per_node: Option<usize>,
    /// Ranks that disagree on their collectives (counts or types), one
    /// line per process group.
    pub warnings: Vec<String>,
    /// What the job's diagnosis read: counts per group and rank, the
    /// matched collectives' arrivals.
    pub job: Job,
    /// The job's health check (`health.rank_mismatch`) and its findings
    /// (`comm.straggler`, `comm.skew`).
    pub diagnosis: Diagnosis,
}

impl CollectiveReport {
    /// The sheet named `name`, if written.
    pub fn sheet(&self, name: &str) -> Option<&Table> {
        crate::table::find(&self.sheets, name)
    }
}

/// Runs the multi-rank analysis over the ranks' traces (index = rank; a
/// collectives-only load is enough). Fails on a metadata mismatch between
/// ranks (the reference's strict check).
pub fn analyze(ranks: &[Trace], opts: &CollectiveOptions) -> Result<CollectiveReport, String> {
    let kernels: Vec<Vec<CollectiveKernel>> = ranks.iter().map(collective_kernels).collect();
    let device_count = ranks.first().map_or(0, |r| r.info().device_count);
    analyze_kernels(&kernels, device_count, opts)
}

/// [`analyze`] over the ranks' collective kernels (index = rank), as
/// [`collective_kernels`] gives them or as read back from a summary;
/// `device_count` is rank 0's number of GPUs (0: unknown), the default of
/// the GPUs per node.
pub fn analyze_kernels(
    ranks: &[Vec<CollectiveKernel>],
    device_count: usize,
    opts: &CollectiveOptions,
) -> Result<CollectiveReport, String> {
    let gpn = opts
        .gpus_per_node
        .or_else(|| Some(device_count).filter(|&n| n > 0 && !ranks.is_empty()));
    let nodes = gpn.map(|g| Nodes {
        gpus_per_node: g as i64,
        world_size: opts.world_size as i64,
    });
    let (mut long, mode) = build_long(ranks);
    let aligned = align::check_and_realign(&mut long, mode, ranks.len());
    let kernels = long.len();
    let mut sheets = Vec::new();
    if long.is_empty() {
        // The reference crashes here; we write the empty summaries.
        sheets.push(Table::new(sheet::NCCL_SUMMARY_IMPLICIT_SYNC, &[]));
        sheets.push(Table::new(sheet::NCCL_SUMMARY_LONG, &[]));
        let job = job_facts(ranks, opts, &aligned.groups, &[]);
        let diagnosis = diagnose_job(&job);
        return Ok(CollectiveReport {
            sheets,
            mode,
            kernels,
            ranks: ranks.len(),
            matched: 0,
            inferred: 0,
            gpus_per_node: gpn,
            warnings: aligned.warnings,
            job,
            diagnosis,
        });
    }
    let sync = build_sync(&long, mode, &aligned.partial)?;
    let a2av = build_a2av(&long)?;
    sheets.push(summary_sync_sheet(&sync, &opts.agg_metrics));
    sheets.push(summary_long_sheet(sheet::NCCL_SUMMARY_LONG, &long, nodes));
    if !a2av.is_empty()
        && let Some(s) = summary_a2av_sheet(&a2av, &opts.agg_metrics, nodes)
    {
        sheets.push(s);
    }
    sheets.push(long_sheet(&long, nodes));
    sheets.push(sync_sheet(&sync, nodes));
    if !a2av.is_empty() {
        sheets.push(a2av_sheet(&a2av, nodes));
    }
    if let Some(s) = straggler_sheet(&sync, &long, nodes) {
        sheets.push(s);
    }
    if !sync.is_empty() {
        sheets.push(by_type_sheet(&sync));
    }
    let job = job_facts(ranks, opts, &aligned.groups, &sync);
    let diagnosis = diagnose_job(&job);
    Ok(CollectiveReport {
        sheets,
        mode,
        kernels,
        ranks: ranks.len(),
        matched: sync.len(),
        inferred: sync.iter().filter(|r| r.inferred).count(),
        gpus_per_node: gpn,
        warnings: aligned.warnings,
        job,
        diagnosis,
    })
}

/// The facts the job's diagnosis reads: the world, the ranks without
/// collectives, each group's counts and the matched collectives' times.
fn job_facts(
    ranks: &[Vec<CollectiveKernel>],
    opts: &CollectiveOptions,
    groups: &[GroupCounts],
    sync: &[SyncRow],
) -> Job {
    let collectives = sync
        .iter()
        .map(|r| Matched {
            id: r.cid.clone(),
            kind: r.kind.clone(),
            latency_us: r.comm_latency.as_f64().unwrap_or(f64::NAN),
            arrivals: r
                .ranks
                .iter()
                .map(|(rank, ts, dur, _)| Arrival {
                    rank: *rank,
                    start_us: ts.as_f64().unwrap_or(f64::NAN),
                    dur_us: dur.as_f64().unwrap_or(f64::NAN),
                })
                .collect(),
        })
        .collect();
    let any = ranks.iter().any(|k| !k.is_empty());
    Job {
        world_size: opts.world_size.max(ranks.len()),
        ranks: ranks.len(),
        empty_ranks: (0..ranks.len() as i64)
            .filter(|&r| any && ranks[r as usize].is_empty())
            .collect(),
        groups: groups.to_vec(),
        collectives,
        kernel_names: ranks
            .iter()
            .map(|k| {
                let names: std::collections::BTreeSet<&str> = k.iter().map(|c| c.name).collect();
                names.into_iter().map(String::from).collect()
            })
            .collect(),
        rank_traces: opts.rank_traces.clone(),
    }
}

/// One collective kernel of a rank, as the long table reads it.
#[derive(Debug, Clone, Copy)]
pub struct CollectiveKernel<'t> {
    /// Kernel name.
    pub name: &'t str,
    /// Start, µs.
    pub ts: f64,
    /// The start was written as an integer.
    pub ts_is_int: bool,
    /// Duration, µs (0 when absent).
    pub dur: f64,
    /// The duration was written as an integer.
    pub dur_is_int: bool,
    /// `args.stream`.
    pub stream: Option<i64>,
    /// The collective metadata.
    pub args: &'t CollectiveArgs,
}

/// The collective kernels of a trace in trace order: kernels
/// named like a collective that carry a link id and a start time. A full
/// load and a collectives-only load give the same kernels.
pub fn collective_kernels(trace: &Trace) -> Vec<CollectiveKernel<'_>> {
    trace
        .events()
        .filter_map(|(id, e)| {
            if e.cat != Cat::Kernel || e.ts.is_nan() {
                return None;
            }
            let name = trace.name_of(e);
            if !is_collective_name(name) {
                return None;
            }
            let a = trace.args(id)?;
            if a.correlation().is_none() && a.external_id().is_none() {
                return None;
            }
            let dur = if e.dur.is_nan() { 0.0 } else { e.dur };
            Some(CollectiveKernel {
                name,
                ts: e.ts,
                ts_is_int: e.ts_is_int,
                dur,
                dur_is_int: e.dur_is_int,
                stream: a.stream(),
                args: trace.collective_args(id).unwrap_or(&CollectiveArgs::EMPTY),
            })
        })
        .collect()
}

/// Number of collective kernels of a trace (see [`analyze`]).
pub fn collective_kernel_count(trace: &Trace) -> usize {
    collective_kernels(trace).len()
}

/// The single-trace report's `coll_analysis` sheet: the
/// `nccl_summary_long` table of the trace as rank 0, without node columns.
/// `None` when it has no rows.
pub fn coll_analysis(trace: &Trace) -> Option<Table> {
    if !trace.has_collective_args() {
        // Without metadata every row drops out of the group-by.
        return None;
    }
    let (long, _) = build_long(&[collective_kernels(trace)]);
    let s = summary_long_sheet(sheet::COLL_ANALYSIS, &long, None);
    (s.nrows() > 0).then_some(s)
}
