//! The fleet reduce: many traces' summaries merged into percentiles across
//! traces, a rank × step grid of where GPU time went, outlier ranks and
//! steps (robust z-scores), and the comparison of two fleets with a
//! bootstrap interval that is usable as a CI gate.
//!
//! Everything here works on the small records a summary holds (per-step
//! figures, per-op and per-kernel times), never on events, so a fleet of
//! thousands of traces fits in little memory.

use std::collections::BTreeMap;

use crate::analysis::commands::collectives::CollectiveReport;
use crate::analysis::commands::steps::StepFigures;
use crate::analysis::diagnosis::fleet::{FleetFinding, TraceHealth};
use crate::names::fleet::{STEP_COLUMNS, sheet};
use crate::numeric::median;
use crate::table::{Table, Value};

/// Robust z-scores at or past this magnitude mark an outlier (Iglewicz and
/// Hoaglin's cut-off for the modified z-score).
pub const Z_THRESHOLD: f64 = 3.5;

/// The time and the share of the trace's GPU time of one op or kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeShare {
    /// Op or kernel name.
    pub name: String,
    /// GPU kernel time, µs.
    pub time_us: f64,
    /// Its share of the trace's kernel time, %.
    pub share_pct: f64,
}

/// What the reduce reads of one trace's summary.
#[derive(Debug, Clone, Default)]
pub struct TraceRecord {
    /// The trace's name (its summary folder).
    pub name: String,
    /// Its rank in the job, when known.
    pub rank: Option<i64>,
    /// The job's world size, when known.
    pub world_size: Option<i64>,
    /// Its profiler steps.
    pub steps: Vec<StepFigures>,
    /// Kernel time per op.
    pub ops: Vec<TimeShare>,
    /// Kernel time per kernel name.
    pub kernels: Vec<TimeShare>,
}

/// A per-step quantity of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepMetric {
    /// From the step's first GPU start to its last GPU end.
    GpuSpan,
    /// Union of the step's GPU activity.
    Busy,
    /// Union of its computation kernels (a slow GPU shows here first).
    Computation,
    /// Communication not hidden under computation.
    ExposedComm,
    /// Span minus busy.
    Idle,
}

impl StepMetric {
    /// The metrics in report order.
    pub const ALL: [StepMetric; 5] = [
        StepMetric::GpuSpan,
        StepMetric::Busy,
        StepMetric::Computation,
        StepMetric::ExposedComm,
        StepMetric::Idle,
    ];

    /// Column name (µs).
    pub fn name(self) -> &'static str {
        match self {
            StepMetric::GpuSpan => "gpu_span_us",
            StepMetric::Busy => "busy_us",
            StepMetric::Computation => "computation_us",
            StepMetric::ExposedComm => "exposed_comm_us",
            StepMetric::Idle => "idle_us",
        }
    }

    /// Words for people.
    pub fn describe(self) -> &'static str {
        match self {
            StepMetric::GpuSpan => "step time (GPU span)",
            StepMetric::Busy => "GPU busy time",
            StepMetric::Computation => "computation time",
            StepMetric::ExposedComm => "exposed communication",
            StepMetric::Idle => "GPU idle time",
        }
    }

    /// The metric's value in a step.
    pub fn of(self, s: &StepFigures) -> f64 {
        match self {
            StepMetric::GpuSpan => s.gpu_span,
            StepMetric::Busy => s.busy,
            StepMetric::Computation => s.computation,
            StepMetric::ExposedComm => s.exposed_comm,
            StepMetric::Idle => s.idle,
        }
    }
}

/// The rank × step grid of a fleet: one row per trace (in rank order), one
/// column per step number.
#[derive(Debug, Clone, Default)]
pub struct StepGrid {
    /// Row labels: the trace's rank, else its position.
    pub ranks: Vec<i64>,
    /// The trace of each row.
    pub traces: Vec<String>,
    /// Column labels: step numbers, ascending.
    pub steps: Vec<i64>,
    /// Row-major cells; None where a trace lacks the step.
    pub cells: Vec<Option<StepFigures>>,
}

impl StepGrid {
    /// The grid of `records` (whose order is kept: sort them by rank first).
    pub fn new(records: &[TraceRecord]) -> StepGrid {
        let mut steps: Vec<i64> = records
            .iter()
            .flat_map(|r| r.steps.iter().map(|s| s.step))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        let mut cells = vec![None; records.len() * steps.len()];
        for (i, r) in records.iter().enumerate() {
            for s in &r.steps {
                let j = steps.binary_search(&s.step).expect("step was collected");
                // A step number seen twice in one trace: the first range.
                cells[i * steps.len() + j].get_or_insert(*s);
            }
        }
        StepGrid {
            ranks: records
                .iter()
                .enumerate()
                .map(|(i, r)| r.rank.unwrap_or(i as i64))
                .collect(),
            traces: records.iter().map(|r| r.name.clone()).collect(),
            steps,
            cells,
        }
    }

    /// The cell of row `r`, column `s`.
    pub fn cell(&self, r: usize, s: usize) -> Option<&StepFigures> {
        self.cells[r * self.steps.len() + s].as_ref()
    }

    /// `metric` of every cell, row-major; NaN where missing.
    pub fn values(&self, metric: StepMetric) -> Vec<f64> {
        self.cells
            .iter()
            .map(|c| c.as_ref().map_or(f64::NAN, |s| metric.of(s)))
            .collect()
    }

    /// Whether the grid has no cell.
    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(Option::is_none)
    }
}

/// Linear-interpolated quantile `q` (0..=1) of ascending `sorted` values,
/// numpy's default method. NaN for no values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The least median absolute deviation of ratios to a typical level in
/// [`outliers`]: 2%. Kernel timings jitter by about that from run to run,
/// and where most ranks are alike to the microsecond a tiny MAD would
/// flag a whole group of ranks a few percent apart.
pub const MIN_RELATIVE_MAD: f64 = 0.02;

/// Modified z-scores of `x` (NaN stays NaN): 0.6745·(x − median) / MAD.
/// Where more than half the values are equal (MAD 0), the mean absolute
/// deviation scaled by 1.2533 stands in; where that is 0 too, all are 0.
pub fn robust_z(x: &[f64]) -> Vec<f64> {
    robust_z_floored(x, 0.0)
}

/// [`robust_z`] with the MAD at least `min_mad`.
pub fn robust_z_floored(x: &[f64], min_mad: f64) -> Vec<f64> {
    let med = median(x);
    let dev: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    let mad = median(&dev).max(min_mad);
    let present: Vec<f64> = dev.iter().copied().filter(|d| !d.is_nan()).collect();
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else if present.is_empty() {
        0.0
    } else {
        1.2533 * present.iter().sum::<f64>() / present.len() as f64
    };
    x.iter()
        .map(|v| {
            if v.is_nan() {
                f64::NAN
            } else if scale > 0.0 {
                (v - med) / scale
            } else {
                0.0
            }
        })
        .collect()
}

/// A percentile sheet: per name, over every trace (0 where a trace lacks
/// the name), the p50/p90/p99/max of time and p50/p90/p99 of share; most
/// time first.
pub fn percentile_sheet(
    name: &str,
    label: &str,
    records: &[TraceRecord],
    pick: fn(&TraceRecord) -> &[TimeShare],
) -> Table {
    let n = records.len();
    // name → (time per trace, share per trace)
    let mut by_name: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        for t in pick(r) {
            let e = by_name
                .entry(t.name.as_str())
                .or_insert_with(|| (vec![0.0; n], vec![0.0; n]));
            e.0[i] += t.time_us;
            e.1[i] += t.share_pct;
        }
    }
    let mut rows: Vec<Vec<Value>> = by_name
        .into_iter()
        .map(|(k, (mut time, mut share))| {
            let present = time.iter().filter(|&&t| t > 0.0).count();
            time.sort_unstable_by(f64::total_cmp);
            share.sort_unstable_by(f64::total_cmp);
            vec![
                Value::Text(k.into()),
                Value::Int(present as i64),
                Value::Float(quantile(&time, 0.5)),
                Value::Float(quantile(&time, 0.9)),
                Value::Float(quantile(&time, 0.99)),
                Value::Float(time[n - 1]),
                Value::Float(quantile(&share, 0.5)),
                Value::Float(quantile(&share, 0.9)),
                Value::Float(quantile(&share, 0.99)),
            ]
        })
        .collect();
    rows.sort_by(|a, b| b[2].to_f64().total_cmp(&a[2].to_f64()));
    Table::from_rows(
        name,
        &[
            label,
            "traces",
            "time_p50_us",
            "time_p90_us",
            "time_p99_us",
            "time_max_us",
            "share_p50_pct",
            "share_p90_pct",
            "share_p99_pct",
        ],
        rows,
    )
}

/// The cells of the grid as a sheet (rank, trace, then the step's
/// figures), with each cell's robust z-score of step time and of busy
/// time among all cells.
pub fn steps_sheet(grid: &StepGrid) -> Table {
    let z_span = robust_z(&grid.values(StepMetric::GpuSpan));
    let z_busy = robust_z(&grid.values(StepMetric::Busy));
    let mut rows = Vec::new();
    for r in 0..grid.ranks.len() {
        for s in 0..grid.steps.len() {
            let Some(c) = grid.cell(r, s) else { continue };
            let k = r * grid.steps.len() + s;
            let mut row = vec![
                Value::Int(grid.ranks[r]),
                Value::Text(grid.traces[r].as_str().into()),
            ];
            row.extend(c.cells());
            row.push(Value::float_or_null(z_span[k]));
            row.push(Value::float_or_null(z_busy[k]));
            rows.push(row);
        }
    }
    let mut columns = vec!["rank", "trace"];
    columns.extend(STEP_COLUMNS);
    columns.extend(["gpu_span_z", "busy_z"]);
    Table::from_rows(sheet::FLEET_STEPS, &columns, rows)
}

/// One outlier rank or step.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    /// `rank` or `step`.
    pub kind: &'static str,
    /// The rank (rank outliers).
    pub rank: Option<i64>,
    /// The trace of the rank (rank outliers).
    pub trace: Option<String>,
    /// The step number (step outliers).
    pub step: Option<i64>,
    /// The metric that stands out.
    pub metric: StepMetric,
    /// The rank's median over steps, or the step's median over ranks, µs.
    pub value: f64,
    /// The same figure's median over all ranks or steps, µs.
    pub typical: f64,
    /// Robust z-score.
    pub z: f64,
}

/// `v` (row-major, `nr` × `ns`) divided by a level: each row's median
/// over its columns (`by_row`), else each column's median over its rows;
/// NaN where the level is not positive.
fn relative(v: &[f64], nr: usize, ns: usize, by_row: bool) -> Vec<f64> {
    let level: Vec<f64> = if by_row {
        (0..nr).map(|r| median(&v[r * ns..(r + 1) * ns])).collect()
    } else {
        (0..ns)
            .map(|s| median(&(0..nr).map(|r| v[r * ns + s]).collect::<Vec<_>>()))
            .collect()
    };
    (0..nr * ns)
        .map(|k| {
            let m = if by_row { level[k / ns] } else { level[k % ns] };
            if m > 0.0 { v[k] / m } else { f64::NAN }
        })
        .collect()
}

/// Outlier steps and ranks of the grid, largest |z| first.
///
/// Ranks of a real job differ in level (their place in the pipeline,
/// their share of the waiting), so each comparison first removes the
/// other dimension's level, and works on ratios whose MAD is at least
/// [`MIN_RELATIVE_MAD`]:
/// - a step stands out when, with every cell divided by its rank's median
///   over steps, the median over ranks of its cells' z-scores (among all
///   cells) is past [`Z_THRESHOLD`]: most ranks were slow in it;
/// - a rank stands out on a metric when, with every cell divided by its
///   step's median over ranks, its median over steps is an outlier among
///   the ranks.
pub fn outliers(grid: &StepGrid) -> Vec<Outlier> {
    let (nr, ns) = (grid.ranks.len(), grid.steps.len());
    let mut out = Vec::new();
    if nr == 0 || ns == 0 {
        return out;
    }
    // Steps: step time only (a slow step is slow on every metric).
    let span = grid.values(StepMetric::GpuSpan);
    let z = robust_z_floored(&relative(&span, nr, ns, true), MIN_RELATIVE_MAD);
    let all_median = median(&span);
    for s in 0..ns {
        let col_z: Vec<f64> = (0..nr).map(|r| z[r * ns + s]).collect();
        let col: Vec<f64> = (0..nr).map(|r| span[r * ns + s]).collect();
        let zs = median(&col_z);
        if zs.abs() >= Z_THRESHOLD {
            out.push(Outlier {
                kind: "step",
                rank: None,
                trace: None,
                step: Some(grid.steps[s]),
                metric: StepMetric::GpuSpan,
                value: median(&col),
                typical: all_median,
                z: zs,
            });
        }
    }
    // Ranks: each metric.
    for metric in StepMetric::ALL {
        let v = grid.values(metric);
        let rel = relative(&v, nr, ns, false);
        let score: Vec<f64> = (0..nr)
            .map(|r| median(&rel[r * ns..(r + 1) * ns]))
            .collect();
        let zr = robust_z_floored(&score, MIN_RELATIVE_MAD);
        let rank_value: Vec<f64> = (0..nr).map(|r| median(&v[r * ns..(r + 1) * ns])).collect();
        let typical = median(&rank_value);
        for r in 0..nr {
            if zr[r].abs() >= Z_THRESHOLD {
                out.push(Outlier {
                    kind: "rank",
                    rank: Some(grid.ranks[r]),
                    trace: Some(grid.traces[r].clone()),
                    step: None,
                    metric,
                    value: rank_value[r],
                    typical,
                    z: zr[r],
                });
            }
        }
    }
    out.sort_by(|a, b| b.z.abs().total_cmp(&a.z.abs()));
    out
}

/// The outliers as a sheet.
pub fn outliers_sheet(outliers: &[Outlier]) -> Table {
    let rows = outliers
        .iter()
        .map(|o| {
            vec![
                Value::Text(o.kind.into()),
                o.rank.map_or(Value::Null, Value::Int),
                o.trace.clone().map_or(Value::Null, Value::from),
                o.step.map_or(Value::Null, Value::Int),
                Value::Text(o.metric.name().into()),
                Value::float_or_null(o.value),
                Value::float_or_null(o.typical),
                Value::float_or_null(o.z),
            ]
        })
        .collect();
    Table::from_rows(
        sheet::FLEET_OUTLIERS,
        &[
            "kind", "rank", "trace", "step", "metric", "value", "typical", "robust_z",
        ],
        rows,
    )
}

/// Options of [`compare`].
#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    /// Changes within ± this percentage are no change.
    pub threshold_pct: f64,
    /// Bootstrap replicates.
    pub replicates: usize,
    /// Width of the interval (0.95: the 2.5th to 97.5th percentile).
    pub confidence: f64,
    /// Seed of the resampling (the result is reproducible).
    pub seed: u64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            threshold_pct: 5.0,
            replicates: 2000,
            confidence: 0.95,
            seed: 0x5eed,
        }
    }
}

/// What a metric's change between two fleets means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Slower past the threshold with confidence.
    Regression,
    /// Faster past the threshold with confidence.
    Improvement,
    /// The whole interval is within the threshold.
    NoChange,
    /// The interval crosses the threshold: more steps or ranks needed.
    Inconclusive,
}

impl Verdict {
    /// The sheet's word.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// One metric compared between two fleets.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricChange {
    /// The metric (higher is slower for all of them).
    pub metric: StepMetric,
    /// Mean over the baseline's cells, µs.
    pub base_mean: f64,
    /// Mean over the new fleet's cells, µs.
    pub new_mean: f64,
    /// new / base − 1, %.
    pub change_pct: f64,
    /// The bootstrap interval of the change, %.
    pub ci_low_pct: f64,
    /// Upper end of the interval, %.
    pub ci_high_pct: f64,
    /// What it means.
    pub verdict: Verdict,
}

/// A small deterministic generator (SplitMix64) for the bootstrap.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Mean of the present cells over the rows and columns drawn (with
/// repetition).
fn mean_of(values: &[f64], ns: usize, rows: &[usize], cols: &[usize]) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for &r in rows {
        for &s in cols {
            let v = values[r * ns + s];
            if !v.is_nan() {
                sum += v;
                n += 1;
            }
        }
    }
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

/// One bootstrap mean of a grid's metric: ranks and steps drawn with
/// repetition, independently.
fn resampled_mean(values: &[f64], nr: usize, ns: usize, rng: &mut SplitMix) -> f64 {
    let rows: Vec<usize> = (0..nr).map(|_| rng.below(nr)).collect();
    let cols: Vec<usize> = (0..ns).map(|_| rng.below(ns)).collect();
    mean_of(values, ns, &rows, &cols)
}

/// Compares the new fleet's grid with the baseline's, metric by metric:
/// the change of the mean over (rank, step) cells, and its interval from
/// a two-way bootstrap (ranks and steps resampled on each side), so that
/// both rank-to-rank and step-to-step noise widen it.
pub fn compare(base: &StepGrid, new: &StepGrid, opts: &CompareOptions) -> Vec<MetricChange> {
    let dims = |g: &StepGrid| (g.ranks.len(), g.steps.len());
    let ((br, bs), (nr, ns)) = (dims(base), dims(new));
    let mut rng = SplitMix(opts.seed);
    StepMetric::ALL
        .iter()
        .map(|&metric| {
            let bv = base.values(metric);
            let nv = new.values(metric);
            let all = |n: usize| (0..n).collect::<Vec<_>>();
            let base_mean = mean_of(&bv, bs, &all(br), &all(bs));
            let new_mean = mean_of(&nv, ns, &all(nr), &all(ns));
            let change = |b: f64, n: f64| (n / b - 1.0) * 100.0;
            let mut draws: Vec<f64> = (0..opts.replicates)
                .map(|_| {
                    let b = resampled_mean(&bv, br, bs, &mut rng);
                    let n = resampled_mean(&nv, nr, ns, &mut rng);
                    change(b, n)
                })
                .filter(|c| c.is_finite())
                .collect();
            draws.sort_unstable_by(f64::total_cmp);
            let tail = (1.0 - opts.confidence) / 2.0;
            let (lo, hi) = (quantile(&draws, tail), quantile(&draws, 1.0 - tail));
            let t = opts.threshold_pct;
            let verdict = if lo.is_nan() || hi.is_nan() {
                Verdict::Inconclusive
            } else if lo > t {
                Verdict::Regression
            } else if hi < -t {
                Verdict::Improvement
            } else if lo >= -t && hi <= t {
                Verdict::NoChange
            } else {
                Verdict::Inconclusive
            };
            MetricChange {
                metric,
                base_mean,
                new_mean,
                change_pct: change(base_mean, new_mean),
                ci_low_pct: lo,
                ci_high_pct: hi,
                verdict,
            }
        })
        .collect()
}

/// Whether the CI gate fails: the step time is a regression past
/// `threshold_pct`, or inconclusive with its point estimate past it
/// (likely slower, not yet shown).
pub fn gate_fails(changes: &[MetricChange], threshold_pct: f64) -> bool {
    changes.iter().any(|m| {
        m.metric == StepMetric::GpuSpan
            && (m.verdict == Verdict::Regression
                || (m.verdict == Verdict::Inconclusive && m.change_pct > threshold_pct))
    })
}

/// The comparison as a sheet.
pub fn compare_sheet(changes: &[MetricChange]) -> Table {
    let rows = changes
        .iter()
        .map(|c| {
            vec![
                Value::Text(c.metric.name().into()),
                Value::float_or_null(c.base_mean),
                Value::float_or_null(c.new_mean),
                Value::float_or_null(c.change_pct),
                Value::float_or_null(c.ci_low_pct),
                Value::float_or_null(c.ci_high_pct),
                Value::Text(c.verdict.name().into()),
            ]
        })
        .collect();
    Table::from_rows(
        sheet::FLEET_COMPARE,
        &[
            "metric",
            "baseline_mean",
            "new_mean",
            "change_pct",
            "ci_low_pct",
            "ci_high_pct",
            "verdict",
        ],
        rows,
    )
}

/// The merged report of a fleet.
pub struct FleetReport {
    /// Summaries read.
    pub traces: usize,
    /// The fleet's own sheets: `fleet_ops`, `fleet_kernels`,
    /// `fleet_steps`, `fleet_outliers`, `fleet_health` and `fleet_findings`
    /// (when summaries hold a diagnosis), `fleet_compare` (with a baseline);
    /// [`FleetReport::tables`] adds the collective sheets.
    pub sheets: Vec<Table>,
    /// The rank × step grid (heatmaps).
    pub grid: StepGrid,
    /// Outlier ranks and steps, largest |z| first.
    pub outliers: Vec<Outlier>,
    /// The comparison with the baseline, metric by metric.
    pub changes: Option<Vec<MetricChange>>,
    /// Traces in the baseline.
    pub baseline_traces: Option<usize>,
    /// The collective analysis across the job's ranks, when the traces are
    /// ranks 0..N-1 of one job.
    pub collectives: Option<CollectiveReport>,
    /// Why the collective analysis was left out, when it was.
    pub collectives_skipped: Option<String>,
    /// The diagnosis of each trace whose summary holds one, in the
    /// summaries' order.
    pub health: Vec<TraceHealth>,
    /// Their findings by id across the traces.
    pub findings: Vec<FleetFinding>,
}

impl FleetReport {
    /// Every sheet of the report: the fleet's, then the job's collective
    /// sheets (when the traces are one job's ranks).
    pub fn tables(&self) -> Vec<&Table> {
        let collectives = self.collectives.iter().flat_map(|c| &c.sheets);
        self.sheets.iter().chain(collectives).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(step: i64, span: f64) -> StepFigures {
        StepFigures {
            step,
            cpu_start: 0.0,
            cpu_dur: span,
            gpu_start: 0.0,
            gpu_span: span,
            busy: span * 0.8,
            computation: span * 0.6,
            exposed_comm: span * 0.2,
            exposed_memcpy: 0.0,
            idle: span * 0.2,
            gpu_events: 10,
        }
    }

    /// `ranks` traces of `steps` steps, 1000 µs with a ±1% pattern, times
    /// `slow_rank` / `slow_step` factors.
    fn fleet(
        ranks: i64,
        steps: i64,
        slow: Option<(i64, f64)>,
        slow_step: Option<(i64, f64)>,
    ) -> Vec<TraceRecord> {
        (0..ranks)
            .map(|r| TraceRecord {
                name: format!("rank{r}"),
                rank: Some(r),
                steps: (0..steps)
                    .map(|s| {
                        let mut f = 1.0 + 0.01 * (((r * 7 + s * 3) % 5) as f64 - 2.0) / 2.0;
                        if slow.is_some_and(|(x, _)| x == r) {
                            f *= slow.unwrap().1;
                        }
                        if slow_step.is_some_and(|(x, _)| x == s) {
                            f *= slow_step.unwrap().1;
                        }
                        step(s, 1000.0 * f)
                    })
                    .collect(),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn quantiles_follow_numpy() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&x, 0.5), 2.5);
        assert!((quantile(&x, 0.9) - 3.7).abs() < 1e-12);
        assert_eq!(quantile(&x, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn robust_z_flags_the_far_value_only() {
        let z = robust_z(&[10.0, 11.0, 9.0, 10.5, 9.5, 30.0]);
        assert!(z[5] > Z_THRESHOLD);
        assert!(z[..5].iter().all(|v| v.abs() < Z_THRESHOLD));
        // More than half equal: the mean absolute deviation stands in.
        let z = robust_z(&[1.0, 1.0, 1.0, 1.0, 5.0]);
        assert!(z[4] > Z_THRESHOLD && z[0] == 0.0, "{z:?}");
        assert_eq!(robust_z(&[2.0, 2.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn the_planted_slow_rank_and_step_are_found() {
        let recs = fleet(64, 4, Some((13, 1.3)), Some((2, 1.5)));
        let grid = StepGrid::new(&recs);
        let out = outliers(&grid);
        let steps: Vec<i64> = out
            .iter()
            .filter(|o| o.kind == "step")
            .filter_map(|o| o.step)
            .collect();
        assert_eq!(steps, vec![2]);
        let ranks: Vec<i64> = out
            .iter()
            .filter(|o| o.kind == "rank" && o.metric == StepMetric::GpuSpan)
            .filter_map(|o| o.rank)
            .collect();
        assert_eq!(ranks, vec![13]);
        // No planted outlier: nothing is flagged.
        assert!(outliers(&StepGrid::new(&fleet(64, 4, None, None))).is_empty());
    }

    #[test]
    fn compare_finds_a_regression_and_no_change() {
        let base = StepGrid::new(&fleet(32, 4, None, None));
        let same = StepGrid::new(&fleet(32, 4, None, None));
        let slower: Vec<TraceRecord> = fleet(32, 4, None, None)
            .into_iter()
            .map(|mut r| {
                r.steps
                    .iter_mut()
                    .for_each(|s| *s = step(s.step, s.gpu_span * 1.2));
                r
            })
            .collect();
        let opts = CompareOptions::default();
        let c = compare(&base, &same, &opts);
        assert!(c.iter().all(|m| m.verdict == Verdict::NoChange), "{c:?}");
        let c = compare(&base, &StepGrid::new(&slower), &opts);
        let span = &c[0];
        assert_eq!(span.verdict, Verdict::Regression);
        assert!((span.change_pct - 20.0).abs() < 0.5);
        assert!(span.ci_low_pct > 15.0 && span.ci_high_pct < 25.0);
        let back = compare(&StepGrid::new(&slower), &base, &opts);
        assert_eq!(back[0].verdict, Verdict::Improvement);
    }

    #[test]
    fn percentiles_count_absent_traces_as_zero() {
        let mut recs = fleet(4, 1, None, None);
        for (i, r) in recs.iter_mut().enumerate() {
            r.ops.push(TimeShare {
                name: "aten::mm".into(),
                time_us: 10.0 * (i + 1) as f64,
                share_pct: 50.0,
            });
        }
        recs[0].ops.push(TimeShare {
            name: "aten::add".into(),
            time_us: 4.0,
            share_pct: 5.0,
        });
        let t = percentile_sheet("ops", "name", &recs, |r| &r.ops);
        assert_eq!(t.value(0, 0), &Value::Text("aten::mm".into()));
        assert_eq!(t.value(0, 1), &Value::Int(4));
        assert_eq!(t.value(0, 2), &Value::Float(25.0));
        assert_eq!(t.value(0, 5), &Value::Float(40.0));
        assert_eq!(t.value(1, 1), &Value::Int(1));
        assert_eq!(t.value(1, 2), &Value::Float(0.0));
    }
}
