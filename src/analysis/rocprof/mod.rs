//! The rocprofv3 report: the reference's `generate_perf_report_rocprof`
//! sheets over a trace's dispatch records, computed from the
//! exact integer nanoseconds of [`DispatchData`].
//!
//! The reference never converts rocprof's nanoseconds, and
//! neither do these sheets: every `(µs)` column holds nanoseconds, `Total
//! Kernel Time (ms)` holds microseconds and the short-kernel threshold is
//! compared with nanoseconds. Only `gpu_timeline` is in the units it says.

use std::cmp::{Ordering, Reverse};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::analysis::common::intervals::busy_time;
use crate::analysis::common::kernel_stats::histogram;
use crate::analysis::common::op_categories::is_comm_name;
use crate::analysis::common::quality::TraceQuality;
use crate::analysis::diagnosis::Diagnosis;
use crate::analysis::diagnosis::device::{self, DeviceTrace};
use crate::analysis::diagnosis::health::GpuEvents;
use crate::analysis::{Pass, Report, ReportOptions, Schedule, run_scheduled};
use crate::names::{col, row, sheet};
use crate::numeric::{kahan_sum, median, welford_std};
use crate::table::agg::percentages;
use crate::table::{Table, Value};
use crate::trace::Trace;
use crate::trace::dispatch::{DispatchData, KernelDispatch, LaunchConfig};

/// What the rocprof report's passes read: the dispatch records, the
/// options, and the kernels grouped by name (built by the first pass that
/// asks for them).
struct Context<'a> {
    trace: &'a Trace,
    dispatches: &'a DispatchData,
    opts: &'a ReportOptions,
    by_name: OnceLock<NameGroups<'a>>,
}

impl<'a> Context<'a> {
    /// The kernels grouped by name, shared by the two kernel summaries.
    fn by_name(&self) -> &NameGroups<'a> {
        self.by_name.get_or_init(|| NameGroups::of(self.dispatches))
    }
}

/// The passes of the rocprof report, in the reference's sheet order.
fn report_passes<'a>() -> [Pass<Context<'a>>; 6] {
    [
        Pass {
            name: sheet::GPU_TIMELINE,
            run: |cx| gpu_timeline(cx.dispatches).into(),
        },
        Pass {
            name: sheet::KERNEL_SUMMARY,
            run: |cx| {
                let mut summary = kernel_summary(cx.dispatches, cx.by_name());
                if let Some(table) = &cx.opts.kernel_categories {
                    table.add_column(&mut summary);
                }
                summary.into()
            },
        },
        Pass {
            name: sheet::KERNEL_SUMMARY_BY_CATEGORY,
            run: |cx| kernel_summary_by_category(cx.dispatches, cx.by_name()).into(),
        },
        Pass {
            name: sheet::KERNEL_DETAILS,
            run: |cx| kernel_details(cx.trace.shared_dispatches(), cx.opts.deferred_sheets).into(),
        },
        Pass {
            name: sheet::SHORT_KERNELS_SUMMARY,
            run: |cx| short_kernels_summary(cx.dispatches, cx.opts).into(),
        },
        Pass {
            name: sheet::SHORT_KERNEL_HISTOGRAM,
            run: |cx| short_kernel_histogram(cx.dispatches, cx.opts).into(),
        },
    ]
}

/// The place of `kernel_details` in [`report_passes`].
const KERNEL_DETAILS_PASS: usize = 3;

/// Every sheet of the rocprof report, in the reference's order.
pub fn run_report(trace: &Trace, opts: &ReportOptions) -> Report {
    let empty = DispatchData::default();
    let d = trace.dispatches().unwrap_or(&empty);
    let cx = Context {
        trace,
        dispatches: d,
        opts,
        by_name: OnceLock::new(),
    };
    // Deferred, `kernel_details` is a sort (on every core): done first, its
    // keys are freed before the other sheets' tables of a value per
    // dispatch are built. Held, it takes as long as the others together and
    // is built beside them.
    let schedule = if opts.deferred_sheets {
        Schedule::First(KERNEL_DETAILS_PASS)
    } else {
        Schedule::Shared
    };
    let sheets = run_scheduled(&cx, &report_passes(), schedule).sheets;
    Report {
        sheets,
        timeline: None,
        diagnosis: diagnose(trace, d),
        quality: TraceQuality {
            gpu_events: d.kernels.len() + d.copies.len(),
            warnings: trace.warnings().to_vec(),
            ..Default::default()
        },
    }
}

/// The rocprof categoriser: lower-cased name, first rule
/// with a matching substring wins; communication (NCCL/RCCL) comes last,
/// so `ncclReduceScatter` is a `Reduction`.
const CATEGORY_RULES: &[(&[&str], &str)] = &[
    (&["gemm", "matmul", "cijk"], "GEMM"),
    (&["elementwise"], "Elementwise"),
    (&["reduce", "sum"], "Reduction"),
    (&["conv"], "Convolution"),
    (&["norm", "batch_norm", "layer_norm"], "Normalization"),
    (&["flash", "attn", "fmha"], "Attention"),
    (&["copy", "memcpy"], "Memory"),
];

/// The category of a kernel name (`CATEGORY_RULES`, then `COMM`, else `Other`).
pub fn categorize(name: &str) -> &'static str {
    let lower = name.to_lowercase();
    for (needles, category) in CATEGORY_RULES {
        if needles.iter().any(|n| lower.contains(n)) {
            return category;
        }
    }
    if is_comm_name(name) { "COMM" } else { "Other" }
}

/// The health checks of the dispatches (each on its stream; copies name
/// none) and why the findings cannot be told: rocprofv3 links no host
/// launches and records no op shapes, and its timeline keeps no
/// communication apart.
fn diagnose(trace: &Trace, d: &DispatchData) -> Diagnosis {
    // A stream id is unique within a device only (each has a default
    // stream); copies name none.
    let kernels = d.kernels.iter().map(|k| {
        let c = d.config(k);
        let stream = Some((c.agent_id, c.stream));
        (stream, k.start_ns as f64 / 1e3, k.end_ns as f64 / 1e3, None)
    });
    let copies = d
        .copies
        .iter()
        .map(|c| (None, c.start_ns as f64 / 1e3, c.end_ns as f64 / 1e3, None));
    device::diagnose(&DeviceTrace {
        format: "rocprofv3",
        trace,
        gpu: GpuEvents::of_keyed(kernels.chain(copies)),
        launch: None,
        shapes: None,
        timeline: None,
    })
}

/// `gpu_timeline`: total (init to fini), the unions of kernel, copy and all
/// intervals, and idle, in ms. Intervals are in µs as the reference makes
/// them (ns / 1000), merged and summed in its order.
fn gpu_timeline(d: &DispatchData) -> Table {
    let mut t = Table::new(
        sheet::GPU_TIMELINE,
        &[col::TYPE, col::TIME_MS, col::PERCENT],
    );
    if d.kernels.is_empty() {
        return t;
    }
    let us = |ns: i64| ns as f64 / 1000.0;
    let total = us(d.fini_time_ns.unwrap_or(0)) - us(d.init_time_ns.unwrap_or(0));
    // One list of intervals at a time (16 bytes a dispatch).
    let kernels = || d.kernels.iter().map(|k| (us(k.start_ns), us(k.end_ns)));
    let copies = || d.copies.iter().map(|c| (us(c.start_ns), us(c.end_ns)));
    let kernel = busy_time(kernels().collect());
    let memory = busy_time(copies().collect());
    let busy = busy_time(kernels().chain(copies()).collect());
    let idle = (total - busy).max(0.0);
    let pct = |v: f64| if total > 0.0 { v / total * 100.0 } else { 0.0 };
    t.push_row(vec![
        row::TOTAL_TIME.into(),
        Value::Float(total / 1000.0),
        Value::Float(100.0),
    ]);
    for (label, v) in [
        (row::KERNEL, kernel),
        (row::MEMORY, memory),
        (row::BUSY_TIME, busy),
        (row::IDLE, idle),
    ] {
        t.push_row(vec![
            label.into(),
            Value::Float(v / 1000.0),
            Value::Float(pct(v)),
        ]);
    }
    t
}

/// The dispatches grouped by kernel name, groups in name order (pandas'
/// sorted groupby).
struct NameGroups<'a> {
    /// (name, durations in ns in input order), by name.
    groups: Vec<(&'a str, Vec<i64>)>,
}

impl<'a> NameGroups<'a> {
    fn of(d: &'a DispatchData) -> NameGroups<'a> {
        // Counted first: each name's list is allocated once, to size.
        let mut counts = vec![0usize; d.names.len()];
        for k in &d.kernels {
            counts[k.name as usize] += 1;
        }
        let mut durs: Vec<Vec<i64>> = counts.into_iter().map(Vec::with_capacity).collect();
        for k in &d.kernels {
            durs[k.name as usize].push(k.dur_ns());
        }
        let mut groups: Vec<(&str, Vec<i64>)> = d
            .names
            .iter()
            .map(String::as_str)
            .zip(durs)
            .filter(|(_, v)| !v.is_empty())
            .collect();
        groups.sort_by(|a, b| a.0.cmp(b.0));
        NameGroups { groups }
    }
}

fn floats(v: &[i64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

/// Indices `0..keys.len()` by `keys` descending; ties keep their order
/// (the name or category order of the groups).
fn desc_order(keys: &[i64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[b].cmp(&keys[a]));
    order
}

/// `kernel_summary`: per name, count and duration statistics; the
/// percentages and their running total are taken in name order, then the
/// rows sorted by total time (the reference's order of steps).
fn kernel_summary(d: &DispatchData, g: &NameGroups) -> Table {
    let stats = [
        col::MEAN_KERNEL_TIME_US,
        col::MEDIAN_KERNEL_TIME_US,
        col::STD_KERNEL_TIME_US,
        col::MIN_KERNEL_TIME_US,
        col::MAX_KERNEL_TIME_US,
    ];
    if d.kernels.is_empty() {
        // The reference's empty frame puts the total before the percentages.
        let mut cols = vec![col::NAME, col::COUNT];
        cols.extend(stats);
        cols.extend([
            col::TOTAL_KERNEL_TIME_MS,
            col::PERCENTAGE,
            col::CUMULATIVE_PERCENTAGE,
            col::CATEGORY,
        ]);
        return Table::new(sheet::KERNEL_SUMMARY, &cols);
    }
    let mut cols = vec![col::NAME, col::COUNT];
    cols.extend(stats);
    cols.extend([
        col::PERCENTAGE,
        col::CUMULATIVE_PERCENTAGE,
        col::TOTAL_KERNEL_TIME_MS,
        col::CATEGORY,
    ]);
    let mut t = Table::new(sheet::KERNEL_SUMMARY, &cols);
    let sums: Vec<i64> = g.groups.iter().map(|(_, v)| v.iter().sum()).collect();
    let (pct, cum) = percentages(&floats(&sums));
    for i in desc_order(&sums) {
        let (kname, v) = &g.groups[i];
        let f = floats(v);
        t.push_row(vec![
            Value::from(*kname),
            Value::Int(v.len() as i64),
            Value::Float(kahan_sum(&f) / v.len() as f64),
            Value::Float(median(&f)),
            Value::float_or_null(welford_std(&f).unwrap_or(f64::NAN)),
            Value::Int(*v.iter().min().unwrap_or(&0)),
            Value::Int(*v.iter().max().unwrap_or(&0)),
            Value::Float(pct[i]),
            Value::Float(cum[i]),
            Value::Float(sums[i] as f64 / 1000.0),
            Value::from(categorize(kname)),
        ]);
    }
    t
}

/// `kernel_summary_by_category` without rows: category, count, time and
/// the two percentages.
pub fn empty_by_category() -> Table {
    let cols = [
        col::OP_CATEGORY,
        col::COUNT,
        col::TOTAL_DIRECT_KERNEL_TIME_MS,
        col::PERCENTAGE,
        col::CUMULATIVE_PERCENTAGE,
    ];
    Table::new(sheet::KERNEL_SUMMARY_BY_CATEGORY, &cols)
}

/// `kernel_summary_by_category`: count and time (the "ms" column holds µs)
/// per category, percentages in category order, rows by time.
fn kernel_summary_by_category(d: &DispatchData, g: &NameGroups) -> Table {
    let mut t = empty_by_category();
    if d.kernels.is_empty() {
        return t;
    }
    let mut cats: Vec<(&str, i64, i64)> = Vec::new();
    for (kname, v) in &g.groups {
        let c = categorize(kname);
        let sum: i64 = v.iter().sum();
        match cats.iter_mut().find(|e| e.0 == c) {
            Some(e) => {
                e.1 += v.len() as i64;
                e.2 += sum;
            }
            None => cats.push((c, v.len() as i64, sum)),
        }
    }
    cats.sort_by(|a, b| a.0.cmp(b.0));
    let ms: Vec<f64> = cats.iter().map(|c| c.2 as f64 / 1000.0).collect();
    let (pct, cum) = percentages(&ms);
    let sums: Vec<i64> = cats.iter().map(|c| c.2).collect();
    for i in desc_order(&sums) {
        t.push_row(vec![
            Value::from(cats[i].0),
            Value::Int(cats[i].1),
            Value::Float(ms[i]),
            Value::Float(pct[i]),
            Value::Float(cum[i]),
        ]);
    }
    t
}

/// `kernel_details`: every dispatch, longest first. The reference leaves
/// ties to numpy's unstable sort; here they go by dispatch id, then input
/// order (docs/deviations.md). With `deferred`, the rows are computed as
/// the sheet is written ([`Table::deferred`]): held, they would take more
/// memory than the dispatches themselves.
fn kernel_details(d: Option<Arc<DispatchData>>, deferred: bool) -> Table {
    let Some(d) = d.filter(|d| !d.kernels.is_empty()) else {
        // The reference's frame without columns.
        return Table::new(sheet::KERNEL_DETAILS, &[]);
    };
    // Longest first, then by dispatch id, then in input order: the keys are
    // read once (not in every comparison), the index keeps the sort stable.
    let mut order: Vec<(Reverse<i64>, i64, usize)> = d
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| (Reverse(k.dur_ns()), k.dispatch_id, i))
        .collect();
    order.par_sort_unstable();
    let rows = DetailRows {
        order: order.into_iter().map(|(_, _, i)| i as u32).collect(),
        data: d,
    };
    let mut t = Table::deferred(sheet::KERNEL_DETAILS, &DETAIL_COLUMNS, Arc::new(rows));
    if !deferred {
        t.materialize();
    }
    t
}

/// The rows of `kernel_details`: the dispatches in sheet order.
struct DetailRows {
    /// Indices into `data.kernels`, in row order (they fit in 32 bits: the
    /// loader refuses more dispatches).
    order: Vec<u32>,
    data: Arc<DispatchData>,
}

impl crate::table::RowSource for DetailRows {
    fn len(&self) -> usize {
        self.order.len()
    }

    fn rows(&self, rows: std::ops::Range<usize>, each: &mut dyn FnMut(&mut [Value])) {
        let kernels = &self.data.kernels;
        // Names of this call's own: rows written on other cores do not
        // count references to the same shared texts.
        let texts: Vec<Arc<str>> = self
            .data
            .names
            .iter()
            .map(|name| Arc::from(name.as_str()))
            .collect();
        let order = &self.order[rows];
        for (j, &i) in order.iter().enumerate() {
            // The dispatches are read in duration order, a random access:
            // ask for one a few rows ahead while this one is written.
            if let Some(&ahead) = order.get(j + PREFETCH_ROWS) {
                prefetch(&kernels[ahead as usize]);
            }
            let k = &kernels[i as usize];
            each(&mut detail_row(k, self.data.config(k), &texts));
        }
    }
}

/// `kernel_details`' columns.
const DETAIL_COLUMNS: [&str; 12] = [
    col::NAME,
    col::KERNEL_DURATION_US,
    col::STREAM,
    col::DISPATCH_ID,
    col::GRID_X,
    col::GRID_Y,
    col::GRID_Z,
    col::BLOCK_X,
    col::BLOCK_Y,
    col::BLOCK_Z,
    col::AGENT_ID,
    col::THREAD_ID,
];

/// `kernel_details`' cells for dispatch `k`, one per [`DETAIL_COLUMNS`]
/// (a column added there without its cell here does not compile);
/// `config` is its launch configuration, `texts` holds the kernel names.
fn detail_row(
    k: &KernelDispatch,
    config: &LaunchConfig,
    texts: &[Arc<str>],
) -> [Value; DETAIL_COLUMNS.len()] {
    let [gx, gy, gz] = config.grid;
    let [bx, by, bz] = config.block;
    [
        Value::Text(Arc::clone(&texts[k.name as usize])),
        Value::Int(k.dur_ns()),
        Value::Int(config.stream),
        Value::Int(k.dispatch_id),
        Value::Int(gx),
        Value::Int(gy),
        Value::Int(gz),
        Value::Int(bx),
        Value::Int(by),
        Value::Int(bz),
        Value::Int(config.agent_id),
        Value::Int(config.thread_id),
    ]
}

/// How many rows ahead `kernel_details` asks for its dispatch.
const PREFETCH_ROWS: usize = 8;

/// Asks the CPU to bring `value`'s first two cache lines in.
#[allow(unsafe_code)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let at = (value as *const T).cast::<i8>();
        // SAFETY: SSE is in the x86_64 baseline, and a prefetch reads
        // nothing and never faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(at);
            _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(64));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The dispatches the reference calls short: duration (ns) under the
/// threshold given in "µs".
fn is_short(k: &KernelDispatch, opts: &ReportOptions) -> bool {
    (k.dur_ns() as f64) < opts.short_kernel_threshold_us
}

/// `short_kernels_summary`: per name, the short dispatches' count, sum,
/// mean and share of all kernel time; by sum descending, then the other
/// columns ascending.
fn short_kernels_summary(d: &DispatchData, opts: &ReportOptions) -> Table {
    let cols = [
        col::NAME,
        col::SHORT_KERNEL_COUNT,
        col::SHORT_KERNEL_DURATION_SUM,
        col::SHORT_KERNEL_DURATION_MEAN,
        col::SHORT_KERNEL_DURATION_PCT_TOTAL,
    ];
    let mut t = Table::new(sheet::SHORT_KERNELS_SUMMARY, &cols);
    let mut by_name: Vec<Vec<i64>> = vec![Vec::new(); d.names.len()];
    for k in d.kernels.iter().filter(|k| is_short(k, opts)) {
        by_name[k.name as usize].push(k.dur_ns());
    }
    let total: i64 = d.kernels.iter().map(KernelDispatch::dur_ns).sum();
    let mut rows: Vec<(&str, i64, i64, f64, f64)> = d
        .names
        .iter()
        .zip(&by_name)
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| {
            let sum: i64 = v.iter().sum();
            let mean = kahan_sum(&floats(v)) / v.len() as f64;
            let pct = if total > 0 {
                sum as f64 / total as f64 * 100.0
            } else {
                0.0
            };
            (n.as_str(), v.len() as i64, sum, mean, pct)
        })
        .collect();
    rows.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then_with(|| a.0.cmp(b.0))
            .then(a.1.cmp(&b.1))
            .then(a.3.partial_cmp(&b.3).unwrap_or(Ordering::Equal))
    });
    if let Some(k) = opts.topk_short_kernels {
        rows.truncate(k);
    }
    for (n, count, sum, mean, pct) in rows {
        t.push_row(vec![
            Value::from(n),
            Value::Int(count),
            Value::Int(sum),
            Value::Float(mean),
            Value::Float(pct),
        ]);
    }
    t
}

/// `short_kernel_histogram` of the short dispatches' durations (ns).
fn short_kernel_histogram(d: &DispatchData, opts: &ReportOptions) -> Table {
    let short: Vec<f64> = d
        .kernels
        .iter()
        .filter(|k| is_short(k, opts))
        .map(|k| k.dur_ns() as f64)
        .collect();
    histogram(&short, opts.histogram_bins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_first_rule_wins() {
        for (n, c) in [
            ("Cijk_Ailk_Bljk", "GEMM"),
            ("vectorized_elementwise_kernel", "Elementwise"),
            ("ncclReduceScatter", "Reduction"),
            ("cumsum_kernel", "Reduction"),
            ("ncclDevKernel_Generic_1", "COMM"),
            ("RCCL_thing", "COMM"),
            ("layer_norm_fwd", "Normalization"),
            ("fmha_fwd", "Attention"),
            ("__amd_rocclr_copyBuffer.kd", "Memory"),
            ("__amd_rocclr_fillBufferAligned.kd", "Other"),
            ("conv2d_kernel", "Convolution"),
        ] {
            assert_eq!(categorize(n), c, "{n}");
        }
    }

    #[test]
    fn kernel_details_filled_in_pieces_lists_every_dispatch_longest_first() {
        // Several pieces of rows, the last one short; durations repeat, so
        // ties go by dispatch id (given in reverse input order here).
        let n = 3 * 16_384 + 123;
        let mut draw = crate::test_support::draws(0x9E37_79B9_7F4A_7C15);
        // A launch configuration per dispatch; the kernel names repeat.
        let (kernels, configs): (Vec<KernelDispatch>, Vec<LaunchConfig>) = (0..n)
            .map(|i| {
                let x = draw(usize::MAX);
                let start = i as i64 * 100;
                let k = KernelDispatch {
                    name: (x % 5) as u32,
                    config: i as u32,
                    start_ns: start,
                    end_ns: start + (x % 97) as i64,
                    dispatch_id: (n - i) as i64,
                };
                let c = LaunchConfig {
                    stream: (x % 3) as i64,
                    grid: [i as i64, 1, 2],
                    block: [3, (x % 11) as i64, 4],
                    agent_id: 7,
                    thread_id: -(i as i64),
                };
                (k, c)
            })
            .unzip();
        let d = Arc::new(DispatchData {
            names: (0..5).map(|k| format!("kernel_{k}")).collect(),
            kernels,
            configs,
            ..Default::default()
        });
        let t = kernel_details(Some(Arc::clone(&d)), false);
        assert!(!t.is_deferred());
        assert_eq!(t.nrows(), n);
        // Deferred, the same rows are computed as they are read.
        let deferred = kernel_details(Some(Arc::clone(&d)), true);
        assert!(deferred.is_deferred());
        assert_eq!(*deferred.held(), t);
        let int = |v: &Value| match v {
            Value::Int(i) => *i,
            other => panic!("not an int: {other:?}"),
        };
        let mut seen = vec![false; n];
        let mut last: Option<(i64, i64)> = None;
        for row in t.rows() {
            let id = int(row.get(3));
            let i = n - id as usize;
            let k = &d.kernels[i];
            assert!(
                !std::mem::replace(&mut seen[i], true),
                "dispatch {id} twice"
            );
            assert_eq!(row.get(0), &Value::from(d.name(k)));
            let cells: Vec<i64> = (1..12).map(|c| int(row.get(c))).collect();
            let c = d.config(k);
            let mut expected = vec![k.dur_ns(), c.stream, k.dispatch_id];
            expected.extend(c.grid);
            expected.extend(c.block);
            expected.extend([c.agent_id, c.thread_id]);
            assert_eq!(cells, expected, "dispatch {id}");
            let key = (-k.dur_ns(), k.dispatch_id);
            assert!(last.is_none_or(|l| l < key), "{last:?} before {key:?}");
            last = Some(key);
        }
    }

    #[test]
    fn streams_of_one_id_on_two_devices_may_overlap() {
        let trace = crate::test_support::trace_of_json(
            r#"{"ph": "X", "cat": "cpu_op", "name": "f", "ts": 0, "dur": 1, "pid": 1, "tid": 1}"#,
        );
        let data = |agents: [i64; 2]| DispatchData {
            names: vec!["k".into()],
            // Two 100 µs dispatches, 50 µs apart, both on stream 0.
            kernels: (0..2)
                .map(|i| KernelDispatch {
                    name: 0,
                    config: i,
                    start_ns: 50_000 * i as i64,
                    end_ns: 50_000 * i as i64 + 100_000,
                    dispatch_id: i as i64,
                })
                .collect(),
            configs: agents
                .iter()
                .map(|&agent_id| LaunchConfig {
                    agent_id,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let overlap = |d: &DispatchData| {
            let d = diagnose(&trace, d);
            let c = d
                .checks
                .iter()
                .find(|c| c.id == "health.overlapping_kernels")
                .unwrap();
            c.status.as_str()
        };
        assert_eq!(overlap(&data([1, 1])), "fail");
        assert_eq!(overlap(&data([1, 2])), "pass");
    }

    #[test]
    fn empty_report_has_the_reference_headers() {
        let d = DispatchData::default();
        let g = NameGroups::of(&d);
        assert_eq!(
            gpu_timeline(&d).column_names(),
            ["type", "time ms", "percent"]
        );
        assert_eq!(
            kernel_summary(&d, &g).column_names()[7],
            "Total Kernel Time (ms)"
        );
        assert_eq!(kernel_details(Some(Arc::new(d)), true).ncols(), 0);
        assert_eq!(kernel_details(None, true).ncols(), 0);
    }
}
