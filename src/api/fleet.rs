//! Fleet mode: `tracelens summarize` (the map: one trace → a compact
//! summary of small tables, no raw events) and `tracelens fleet` (the
//! reduce: many summaries → percentiles across traces, the rank × step
//! grid, outliers, the job's collectives across all ranks, and the
//! comparison of two fleets).
//!
//! A summary is a folder of tables: `trace_info` (one row), `steps`
//! (per-step figures), `collectives` (one row per collective kernel, with
//! the recorded arguments as JSON text so that the reduce rebuilds exactly
//! what `tracelens collectives` reads) and the trace's report sheets. The
//! command line writes them as Parquet; this module only builds and reads
//! tables.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::collectives::rank_in_file_name;
use super::report::{AnalyzeOptions, analyze_full};
use crate::analysis::commands::collectives::{
    CollectiveKernel, CollectiveOptions, analyze_kernels, collective_kernels,
    infer_from_kernel_name,
};
use crate::analysis::commands::fleet::{
    CompareOptions, FleetReport, StepGrid, TimeShare, TraceRecord, compare, compare_sheet,
    outliers, outliers_sheet, percentile_sheet, steps_sheet,
};
use crate::analysis::commands::steps::{StepFigures, step_rows, steps_table};
use crate::analysis::diagnosis::{self, fleet::TraceHealth};
use crate::error::{CollectivesError, Error, FleetError};
use crate::load::kineto::parse_value;
use crate::names::fleet::{STEP_COLUMNS, sheet};
use crate::names::{col, sheet as report_sheet};
use crate::report::read::read_parquet;
use crate::table::{Table, Value};
use crate::trace::{ArgValue, CollectiveArgs};

/// The summary's table files, as the reduce looks for them.
const SUMMARY_MARKER: &str = "trace_info.parquet";

// ---------------------------------------------------------------------------
// The map: one trace's summary
// ---------------------------------------------------------------------------

/// The summary of the trace at `path`: `trace_info`, `steps`,
/// `collectives`, then every sheet of its report.
pub fn summarize(path: &Path, opts: &AnalyzeOptions) -> Result<Vec<Table>, Error> {
    let (trace, tree, report) = analyze_full(path, opts)?;
    let steps = tree
        .as_ref()
        .map(|t| step_rows(&trace, t))
        .unwrap_or_default();
    let kernels = collective_kernels(&trace);
    let info = trace.info();
    let rank = info.rank.or_else(|| rank_in_file_name(path));
    let opt_int = |v: Option<i64>| v.map_or(Value::Null, Value::Int);
    let trace_info = Table::from_rows(
        sheet::TRACE_INFO,
        &[
            "trace",
            "rank",
            "world_size",
            "device_count",
            "steps",
            "collective_kernels",
        ],
        vec![vec![
            Value::Text(path.display().to_string().into()),
            opt_int(rank),
            opt_int(info.world_size),
            Value::Int(info.device_count as i64),
            Value::Int(steps.len() as i64),
            Value::Int(kernels.len() as i64),
        ]],
    );
    let mut tables = vec![
        trace_info,
        steps_table(sheet::STEPS, &steps),
        collectives_table(rank, &kernels),
    ];
    tables.extend(report.sheets);
    Ok(tables)
}

/// The recorded collective arguments, in [`COLLECTIVE_ARG_KEYS`] order, as
/// the `collectives` table's JSON columns name them.
///
/// [`COLLECTIVE_ARG_KEYS`]: crate::trace::args::COLLECTIVE_ARG_KEYS
const ARG_COLUMNS: [&str; 10] = [
    "arg_pg_name",
    "arg_pg_ranks",
    "arg_coll_name",
    "arg_group_size",
    "arg_dtype",
    "arg_in_nelems",
    "arg_out_nelems",
    "arg_in_split",
    "arg_out_split",
    "arg_seq",
];

/// The columns of the `collectives` table before the argument columns.
const KERNEL_COLUMNS: [&str; 11] = [
    "rank",
    "kernel",
    "stream",
    "start_us",
    "dur_us",
    "end_us",
    "process_group",
    "seq",
    "type",
    "ts_is_int",
    "dur_is_int",
];

/// One row per collective kernel: readable columns (rank, kernel, stream,
/// start, duration, end, process group, sequence number, collective type
/// as recorded or inferred from the kernel name), then the recorded
/// arguments as JSON text.
fn collectives_table(rank: Option<i64>, kernels: &[CollectiveKernel]) -> Table {
    let text = |v: &Option<ArgValue>| match v {
        None => Value::Null,
        Some(ArgValue::Str(s)) => Value::from(&**s),
        Some(v) => Value::Text(v.json_text().into()),
    };
    let rows = kernels
        .iter()
        .map(|k| {
            let a = k.args;
            let kind = match &a.coll_name {
                Some(_) => text(&a.coll_name),
                None => infer_from_kernel_name(k.name)
                    .collective
                    .map_or(Value::Null, |c| Value::Text(c.into())),
            };
            let mut row = vec![
                rank.map_or(Value::Null, Value::Int),
                Value::Text(k.name.into()),
                k.stream.map_or(Value::Null, Value::Int),
                Value::Float(k.ts),
                Value::Float(k.dur),
                Value::Float(k.ts + k.dur),
                text(&a.pg_name),
                a.seq_number().map_or(Value::Null, Value::Int),
                kind,
                Value::Bool(k.ts_is_int),
                Value::Bool(k.dur_is_int),
            ];
            row.extend(a.values().into_iter().map(|v| {
                v.as_ref()
                    .map_or(Value::Null, |v| Value::Text(v.json_text().into()))
            }));
            row
        })
        .collect();
    let columns: Vec<&str> = KERNEL_COLUMNS.iter().chain(&ARG_COLUMNS).copied().collect();
    Table::from_rows(sheet::COLLECTIVES, &columns, rows)
}

// ---------------------------------------------------------------------------
// The reduce
// ---------------------------------------------------------------------------

/// A collective kernel read back from a summary: what
/// [`CollectiveKernel`] borrows, owned.
#[derive(Debug, Clone)]
struct OwnedKernel {
    name: String,
    ts: f64,
    ts_is_int: bool,
    dur: f64,
    dur_is_int: bool,
    stream: Option<i64>,
    args: CollectiveArgs,
}

impl OwnedKernel {
    fn borrow(&self) -> CollectiveKernel<'_> {
        CollectiveKernel {
            name: &self.name,
            ts: self.ts,
            ts_is_int: self.ts_is_int,
            dur: self.dur,
            dur_is_int: self.dur_is_int,
            stream: self.stream,
            args: &self.args,
        }
    }
}

/// What the reduce keeps of one summary.
struct SummaryRecord {
    record: TraceRecord,
    device_count: usize,
    kernels: Vec<OwnedKernel>,
    /// Its diagnosis, when the summary has a health table (summaries of
    /// JAX or rocprof traces, and older ones, have none).
    health: Option<TraceHealth>,
}

/// Options of [`fleet`].
#[derive(Debug, Clone, Default)]
pub struct FleetOptions {
    /// The folder of summaries (`tracelens summarize --out`).
    pub summaries: PathBuf,
    /// A baseline fleet's summaries to compare with.
    pub baseline: Option<PathBuf>,
    /// How to compare.
    pub compare: CompareOptions,
    /// GPUs per node for the collectives' node columns [default: rank 0's
    /// device count].
    pub gpus_per_node: Option<usize>,
}

/// The summary folders below `dir` (each holding `trace_info.parquet`), in
/// name order.
pub fn find_summaries(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let err = |error| FleetError::List {
        dir: dir.to_path_buf(),
        error,
    };
    if !dir.is_dir() {
        return Err(FleetError::NotAFolder(dir.to_path_buf()).into());
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(err)? {
        let p = e.map_err(err)?.path();
        if p.join(SUMMARY_MARKER).is_file() {
            out.push(p);
        }
    }
    if out.is_empty() {
        let dir = dir.to_path_buf();
        let marker = SUMMARY_MARKER;
        return Err(FleetError::NoSummaries { dir, marker }.into());
    }
    out.sort();
    Ok(out)
}

/// Reads `dir/<name>.parquet`; None when the summary has no such table.
fn read_table(dir: &Path, name: &str) -> Result<Option<Table>, Error> {
    let p = dir.join(format!("{name}.parquet"));
    if !p.is_file() {
        return Ok(None);
    }
    Ok(Some(read_parquet(&p)?))
}

/// The column `name` of `t`, or an error naming the summary.
fn column<'t>(t: &'t Table, name: &str, dir: &Path) -> Result<&'t [Value], Error> {
    t.column(name).map(|c| c.values.as_slice()).ok_or_else(|| {
        Error::from(FleetError::NoColumn {
            dir: dir.to_path_buf(),
            table: t.name.clone(),
            column: name.to_string(),
        })
    })
}

/// (name, time, share) of each row of a report sheet.
fn time_shares(t: Option<&Table>, name: &str, time: &str, share: &str) -> Vec<TimeShare> {
    let Some(t) = t else { return Vec::new() };
    let (Some(n), Some(ti), Some(sh)) = (t.column(name), t.column(time), t.column(share)) else {
        return Vec::new();
    };
    n.values
        .iter()
        .zip(&ti.values)
        .zip(&sh.values)
        .map(|((n, t), s)| TimeShare {
            name: n.py_str(),
            time_us: t.to_f64(),
            share_pct: s.to_f64(),
        })
        .filter(|t| t.time_us.is_finite())
        .collect()
}

/// The kernel times of a Perfetto report's `kernel_summary` (ns, a row per
/// name and launch configuration), summed per name, in µs.
fn perfetto_kernel_shares(t: Option<&Table>) -> Vec<TimeShare> {
    use crate::names::perfetto::{NAME, NUMBER_STATS};
    let (total_ns, share) = (NUMBER_STATS[1], NUMBER_STATS[0]);
    let mut out: Vec<TimeShare> = Vec::new();
    for k in time_shares(t, NAME, total_ns, share) {
        let time_us = k.time_us / 1e3;
        match out.iter_mut().find(|o| o.name == k.name) {
            Some(o) => {
                o.time_us += time_us;
                o.share_pct += k.share_pct;
            }
            None => out.push(TimeShare { time_us, ..k }),
        }
    }
    out
}

/// The per-step figures of the summary in `dir` (none without its steps
/// table).
fn read_steps(dir: &Path) -> Result<Vec<StepFigures>, Error> {
    let Some(t) = read_table(dir, sheet::STEPS)? else {
        return Ok(Vec::new());
    };
    let cols: Vec<&[Value]> = STEP_COLUMNS
        .iter()
        .map(|c| column(&t, c, dir))
        .collect::<Result<_, _>>()?;
    Ok((0..t.nrows())
        .filter_map(|i| {
            let cells: Vec<&Value> = cols.iter().map(|c| &c[i]).collect();
            StepFigures::from_cells(&cells)
        })
        .collect())
}

/// The collective kernels of the summary in `dir`, from its collectives
/// table `t`.
fn read_kernels(t: &Table, dir: &Path) -> Result<Vec<OwnedKernel>, Error> {
    let mut kernels = Vec::new();
    let get = |c: &str| column(t, c, dir);
    let (kname, stream, start, dur) = (
        get("kernel")?,
        get("stream")?,
        get("start_us")?,
        get("dur_us")?,
    );
    let (ts_int, dur_int) = (get("ts_is_int")?, get("dur_is_int")?);
    let args: Vec<&[Value]> = ARG_COLUMNS
        .iter()
        .map(|c| get(c))
        .collect::<Result<_, _>>()?;
    for i in 0..t.nrows() {
        let mut fields: [Option<ArgValue>; 10] = Default::default();
        for (k, f) in fields.iter_mut().enumerate() {
            // The JSON text was stored as pandas types a CSV column:
            // a column of JSON numbers (or booleans) as those values.
            *f = match &args[k][i] {
                Value::Text(s) => Some(parse_value(s).ok_or_else(|| FleetError::NotJson {
                    dir: dir.to_path_buf(),
                    column: ARG_COLUMNS[k],
                    text: s.to_string(),
                })?),
                Value::Int(i) => Some(ArgValue::Int(*i)),
                Value::Float(x) => Some(ArgValue::Float(*x)),
                Value::Bool(b) => Some(ArgValue::Bool(*b)),
                _ => None,
            };
        }
        kernels.push(OwnedKernel {
            name: kname[i].py_str(),
            ts: start[i].to_f64(),
            ts_is_int: ts_int[i] == Value::Bool(true),
            dur: dur[i].to_f64(),
            dur_is_int: dur_int[i] == Value::Bool(true),
            stream: stream[i].as_i64(),
            args: CollectiveArgs::from_values(fields),
        });
    }
    Ok(kernels)
}

/// Reads what the reduce needs of one summary; its collective kernels only
/// `with_kernels`.
fn read_summary(dir: &Path, with_kernels: bool) -> Result<SummaryRecord, Error> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let info = read_table(dir, sheet::TRACE_INFO)?.ok_or_else(|| FleetError::NoInfo {
        dir: dir.to_path_buf(),
        marker: SUMMARY_MARKER,
    })?;
    if info.nrows() != 1 {
        let (dir, marker, rows) = (dir.to_path_buf(), SUMMARY_MARKER, info.nrows());
        return Err(FleetError::InfoRows { dir, marker, rows }.into());
    }
    let rank = column(&info, "rank", dir)?[0].as_i64();
    let world_size = column(&info, "world_size", dir)?[0].as_i64();
    let device_count = column(&info, "device_count", dir)?[0].as_i64().unwrap_or(0) as usize;
    let steps = read_steps(dir)?;
    let kernels = match with_kernels {
        true => read_table(dir, sheet::COLLECTIVES)?
            .map(|t| read_kernels(&t, dir))
            .transpose()?
            .unwrap_or_default(),
        false => Vec::new(),
    };
    let ops_t = read_table(dir, report_sheet::OPS_SUMMARY)?;
    let ops = time_shares(
        ops_t.as_ref(),
        col::NAME,
        col::TOTAL_DIRECT_KERNEL_TIME_SUM,
        col::PERCENTAGE,
    );
    let kern_t = read_table(dir, report_sheet::KERNEL_SUMMARY)?;
    let mut kernels_time = time_shares(
        kern_t.as_ref(),
        col::KERNEL_NAME,
        col::KERNEL_DURATION_US_SUM,
        col::PERCENT_OF_KERNELS_TIME,
    );
    if kernels_time.is_empty() {
        kernels_time = perfetto_kernel_shares(kern_t.as_ref());
    }
    let health = match read_table(dir, report_sheet::HEALTH)? {
        Some(h) => {
            let findings = read_table(dir, report_sheet::FINDINGS)?;
            let read = diagnosis::fleet::read(&name, rank, &h, findings.as_ref());
            let why = |why| FleetError::Diagnosis {
                dir: dir.to_path_buf(),
                why,
            };
            Some(read.map_err(why)?)
        }
        None => None,
    };
    Ok(SummaryRecord {
        health,
        record: TraceRecord {
            name,
            rank,
            world_size,
            steps,
            ops,
            kernels: kernels_time,
        },
        device_count,
        kernels,
    })
}

/// Reads every summary below `dir` in parallel (with their collective
/// kernels when `with_kernels`), in rank order (then name order; traces
/// without a rank last).
fn read_fleet(dir: &Path, with_kernels: bool) -> Result<Vec<SummaryRecord>, Error> {
    let dirs = find_summaries(dir)?;
    let mut recs: Vec<SummaryRecord> = dirs
        .par_iter()
        .map(|d| read_summary(d, with_kernels))
        .collect::<Result<_, _>>()?;
    recs.sort_by(|a, b| {
        let key = |r: &SummaryRecord| (r.record.rank.is_none(), r.record.rank);
        key(a)
            .cmp(&key(b))
            .then_with(|| a.record.name.cmp(&b.record.name))
    });
    Ok(recs)
}

/// Whether the summaries are ranks 0..N-1 of one job; the reason if not.
fn one_job(recs: &[SummaryRecord]) -> Result<usize, String> {
    let n = recs.len();
    for (i, r) in recs.iter().enumerate() {
        match r.record.rank {
            None => return Err(format!("{} has no rank", r.record.name)),
            Some(k) if k != i as i64 => {
                return Err(format!(
                    "the ranks are not 0..{} each once (found rank {k} at position {i}, trace {})",
                    n - 1,
                    r.record.name
                ));
            }
            _ => {}
        }
        if let Some(w) = r.record.world_size
            && w != n as i64
        {
            return Err(format!(
                "{} says world size {w}, but {n} summaries were given",
                r.record.name
            ));
        }
    }
    if recs.iter().all(|r| r.kernels.is_empty()) {
        return Err("no collective kernels in any trace".into());
    }
    Ok(n)
}

/// Merges the summaries in `opts.summaries` (and compares them with
/// `opts.baseline`'s).
pub fn fleet(opts: &FleetOptions) -> Result<FleetReport, Error> {
    let recs = read_fleet(&opts.summaries, true)?;
    let (collectives, collectives_skipped) = match one_job(&recs) {
        Ok(world) => {
            let owned: Vec<Vec<CollectiveKernel>> = recs
                .iter()
                .map(|r| r.kernels.iter().map(OwnedKernel::borrow).collect())
                .collect();
            let copts = CollectiveOptions {
                world_size: world,
                gpus_per_node: opts.gpus_per_node,
                ..CollectiveOptions::default()
            };
            let report =
                analyze_kernels(&owned, recs[0].device_count, &copts).map_err(CollectivesError)?;
            (Some(report), None)
        }
        Err(why) => (None, Some(why)),
    };
    let health: Vec<TraceHealth> = recs.iter().filter_map(|r| r.health.clone()).collect();
    let records: Vec<TraceRecord> = recs.into_iter().map(|r| r.record).collect();
    let grid = StepGrid::new(&records);
    let found = outliers(&grid);
    let mut sheets = vec![
        percentile_sheet(sheet::FLEET_OPS, "name", &records, |r| &r.ops),
        percentile_sheet(sheet::FLEET_KERNELS, "kernel", &records, |r| &r.kernels),
        steps_sheet(&grid),
        outliers_sheet(&found),
    ];
    let by_id = diagnosis::fleet::by_id(&health);
    if !health.is_empty() {
        sheets.push(diagnosis::fleet::health_sheet(&health));
        sheets.push(diagnosis::fleet::findings_sheet(&by_id));
    }
    let (changes, baseline_traces) = match &opts.baseline {
        Some(b) => {
            let base: Vec<TraceRecord> = read_fleet(b, false)?
                .into_iter()
                .map(|r| r.record)
                .collect();
            let base_grid = StepGrid::new(&base);
            if base_grid.is_empty() || grid.is_empty() {
                let empty = if grid.is_empty() { &opts.summaries } else { b };
                return Err(FleetError::NoSteps(empty.clone()).into());
            }
            let c = compare(&base_grid, &grid, &opts.compare);
            sheets.push(compare_sheet(&c));
            (Some(c), Some(base.len()))
        }
        None => (None, None),
    };
    Ok(FleetReport {
        traces: records.len(),
        sheets,
        grid,
        outliers: found,
        changes,
        baseline_traces,
        collectives,
        collectives_skipped,
        health,
        findings: by_id,
    })
}
