//! The `gpu_timeline` sheet: where GPU time went, as the union
//! of computation, exposed communication, exposed memcpy and idle time.

use std::sync::OnceLock;

use regex::Regex;

use crate::analysis::common::intervals::{Interval, length, subtract, union};
use crate::analysis::common::op_categories::is_comm_name;
use crate::names::{col, row, sheet};
use crate::table::{Table, Value};
use crate::trace::tree::Tree;
use crate::trace::{Cat, Trace};

/// The timeline metrics in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timeline {
    /// Union of computation kernels.
    pub computation: f64,
    /// Communication not hidden under computation.
    pub exposed_comm: f64,
    /// Copies hidden under neither computation nor communication.
    pub exposed_memcpy: f64,
    /// Union of all GPU activity.
    pub busy: f64,
    /// `total - busy`.
    pub idle: f64,
    /// Idle gaps shorter than the micro-idle threshold (when one is set).
    pub micro_idle: Option<f64>,
    /// Idle gaps at least as long as the threshold (when one is set).
    pub macro_idle: Option<f64>,
    /// From the first start to the last end of GPU activity.
    pub total: f64,
    /// Where it starts: the first start of GPU activity (trace time; an
    /// average of timelines: the earliest).
    pub start: f64,
    /// Union of communication.
    pub total_comm: f64,
    /// Union of copies.
    pub total_memcpy: f64,
}

fn rocm_copy_kernel() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"^(MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)|__amd_rocclr_copyBuffer(Rect)?(Aligned)?)(\.kd)?$")
            .expect("valid regex")
    })
}

fn rocm_fill_kernel() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"^__amd_rocclr_fillBuffer(Aligned)?(\.kd)?$").expect("valid regex")
    })
}

/// Which timeline bucket a GPU event falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// Kernels and fills.
    Computation,
    /// NCCL/RCCL and custom all-reduce.
    Communication,
    /// Copies (incl. ROCm copy kernels).
    Memcpy,
}

/// Classifies one GPU event.
pub fn classify(cat: Cat, name: &str) -> Bucket {
    if cat == Cat::GpuMemcpy {
        return Bucket::Memcpy;
    }
    if cat == Cat::Kernel {
        if rocm_copy_kernel().is_match(name) {
            return Bucket::Memcpy;
        }
        if rocm_fill_kernel().is_match(name) {
            return Bucket::Computation;
        }
    }
    if is_comm_name(name) {
        Bucket::Communication
    } else {
        Bucket::Computation
    }
}

/// GPU activity as intervals, by timeline bucket: what
/// [`from_intervals`] reads, gathered one event at a time.
#[derive(Debug, Clone, Default)]
pub struct BucketIntervals {
    all: Vec<Interval>,
    comp: Vec<Interval>,
    comm: Vec<Interval>,
    copy: Vec<Interval>,
}

impl BucketIntervals {
    /// Adds one event's interval to `bucket` (and to all activity).
    pub fn push(&mut self, iv: Interval, bucket: Bucket) {
        self.all.push(iv);
        match bucket {
            Bucket::Computation => self.comp.push(iv),
            Bucket::Communication => self.comm.push(iv),
            Bucket::Memcpy => self.copy.push(iv),
        }
    }

    /// The number of intervals added.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// Whether none was added.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// The earliest start, NaN for none.
    pub fn start(&self) -> f64 {
        self.all.iter().map(|iv| iv.0).fold(f64::NAN, f64::min)
    }

    /// The timeline of the intervals; None when there are none.
    pub fn timeline(self, micro_idle_thresh_us: Option<f64>) -> Option<Timeline> {
        from_intervals(
            self.all,
            self.comp,
            self.comm,
            self.copy,
            micro_idle_thresh_us,
        )
    }
}

/// [`classify`] of trace events, worked out once per distinct name (names
/// repeat a lot).
#[derive(Debug, Default)]
pub struct Classifier {
    cache: rustc_hash::FxHashMap<(Option<crate::trace::StrId>, bool), Bucket>,
}

impl Classifier {
    /// The bucket of GPU event `e` of `trace`.
    pub fn bucket(&mut self, trace: &Trace, e: &crate::trace::Event) -> Bucket {
        *self
            .cache
            .entry((e.name, e.cat == Cat::Kernel))
            .or_insert_with(|| classify(e.cat, trace.name_of(e)))
    }
}

/// Computes the timeline over GPU events (linked ones unless
/// `include_unlinked`). None when there is no GPU event to count.
pub fn compute(
    trace: &Trace,
    tree: &Tree,
    include_unlinked: bool,
    micro_idle_thresh_us: Option<f64>,
) -> Option<Timeline> {
    let mut parts = BucketIntervals::default();
    let mut classifier = Classifier::default();
    for (i, e) in trace.events() {
        if !e.cat.is_gpu() || !(include_unlinked || tree.parent(i).is_some()) {
            continue;
        }
        parts.push((e.ts, e.t_end()), classifier.bucket(trace, e));
    }
    parts.timeline(micro_idle_thresh_us)
}

/// The timeline of GPU activity given as intervals: all of it, and its
/// computation, communication and copy parts. None when there is none.
pub fn from_intervals(
    all: Vec<Interval>,
    comp: Vec<Interval>,
    comm: Vec<Interval>,
    copy: Vec<Interval>,
    micro_idle_thresh_us: Option<f64>,
) -> Option<Timeline> {
    if all.is_empty() {
        return None;
    }
    let c = union(comp);
    let m = union(comm);
    let y = union(copy);
    let u = union(all);
    let total = u.last().map(|l| l.1).unwrap_or(0.0) - u.first().map(|f| f.0).unwrap_or(0.0);
    let busy = length(&u);
    let (micro_idle, macro_idle) = match micro_idle_thresh_us {
        Some(th) => {
            let span = [(u[0].0, u[u.len() - 1].1)];
            let gaps = subtract(&span, &u);
            let micro = gaps
                .iter()
                .filter(|g| g.1 - g.0 < th)
                .fold(0.0, |a, g| a + (g.1 - g.0));
            let mac = gaps
                .iter()
                .filter(|g| g.1 - g.0 >= th)
                .fold(0.0, |a, g| a + (g.1 - g.0));
            (Some(micro), Some(mac))
        }
        None => (None, None),
    };
    Some(Timeline {
        computation: length(&c),
        exposed_comm: length(&subtract(&m, &c)),
        exposed_memcpy: length(&subtract(&subtract(&y, &c), &m)),
        busy,
        idle: total - busy,
        micro_idle,
        macro_idle,
        total,
        start: u[0].0,
        total_comm: length(&m),
        total_memcpy: length(&y),
    })
}

/// The `gpu_timeline` sheet: `type`, `time ms`, `percent`.
pub fn sheet(t: &Timeline) -> Table {
    let mut s = Table::new(
        sheet::GPU_TIMELINE,
        &[col::TYPE, col::TIME_MS, col::PERCENT],
    );
    let mut rows: Vec<(&str, f64)> = vec![
        (row::COMPUTATION_TIME, t.computation),
        (row::EXPOSED_COMM_TIME, t.exposed_comm),
        (row::EXPOSED_MEMCPY_TIME, t.exposed_memcpy),
        (row::BUSY_TIME, t.busy),
    ];
    match (t.micro_idle, t.macro_idle) {
        (Some(mi), Some(ma)) => {
            rows.push((row::MICRO_IDLE_TIME, mi));
            rows.push((row::MACRO_IDLE_TIME, ma));
        }
        _ => rows.push((row::IDLE_TIME, t.idle)),
    }
    rows.push((row::TOTAL_TIME, t.total));
    rows.push((row::TOTAL_COMM_TIME, t.total_comm));
    rows.push((row::TOTAL_MEMCPY_TIME, t.total_memcpy));
    for (name, us) in rows {
        s.push_row(vec![
            Value::from(name),
            Value::Float(us / 1e3),
            Value::Float((us / t.total) * 100.0),
        ]);
    }
    s
}

/// The element-wise mean of timelines, summed in order.
pub fn average(ts: &[Timeline]) -> Option<Timeline> {
    let (first, rest) = ts.split_first()?;
    let mut sum = *first;
    for t in rest {
        sum.computation += t.computation;
        sum.exposed_comm += t.exposed_comm;
        sum.exposed_memcpy += t.exposed_memcpy;
        sum.busy += t.busy;
        sum.idle += t.idle;
        sum.total += t.total;
        sum.total_comm += t.total_comm;
        sum.total_memcpy += t.total_memcpy;
    }
    let n = ts.len() as f64;
    Some(Timeline {
        computation: sum.computation / n,
        exposed_comm: sum.exposed_comm / n,
        exposed_memcpy: sum.exposed_memcpy / n,
        busy: sum.busy / n,
        idle: sum.idle / n,
        micro_idle: None,
        macro_idle: None,
        total: sum.total / n,
        start: ts.iter().map(|t| t.start).fold(f64::INFINITY, f64::min),
        total_comm: sum.total_comm / n,
        total_memcpy: sum.total_memcpy / n,
    })
}

/// `gpu_timeline` with one block of rows per GPU (its id in the column
/// `gpu_col`) and `gpu_events_averages` (their mean), and the mean
/// timeline (None for no GPU).
pub fn per_gpu_sheets(gpus: &[(i64, Timeline)], gpu_col: &str) -> (Vec<Table>, Option<Timeline>) {
    let mut timeline = Table::new(
        sheet::GPU_TIMELINE,
        &[col::TYPE, col::TIME_MS, col::PERCENT, gpu_col],
    );
    for (gpu, t) in gpus {
        for r in self::sheet(t).rows() {
            let mut row = r.to_vec();
            row.push(Value::Int(*gpu));
            timeline.push_row(row);
        }
    }
    let kept: Vec<Timeline> = gpus.iter().map(|(_, t)| *t).collect();
    let avg = average(&kept);
    let mut averages = match &avg {
        Some(a) => self::sheet(a),
        None => Table::new(
            sheet::GPU_TIMELINE,
            &[col::TYPE, col::TIME_MS, col::PERCENT],
        ),
    };
    averages.name = sheet::GPU_EVENTS_AVERAGES.to_string();
    (vec![timeline, averages], avg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_reference_order() {
        // Full match only for the copy names: a longer name is an ordinary kernel.
        let cases = [
            (Cat::GpuMemcpy, "Memcpy HtoD", Bucket::Memcpy),
            (Cat::Kernel, "__amd_rocclr_copyBuffer.kd", Bucket::Memcpy),
            (Cat::Kernel, "MEMORY_COPY_DEVICE_TO_HOST", Bucket::Memcpy),
            (
                Cat::Kernel,
                "__amd_rocclr_fillBufferAligned",
                Bucket::Computation,
            ),
            (Cat::Kernel, "ncclKernel_AllReduce", Bucket::Communication),
            (Cat::GpuMemset, "Memset (Device)", Bucket::Computation),
            (Cat::Kernel, "__amd_rocclr_copyBufferX", Bucket::Computation),
        ];
        for (cat, name, want) in cases {
            assert_eq!(classify(cat, name), want, "{name}");
        }
    }

    #[test]
    fn average_sums_in_order_then_divides() {
        let a = Timeline {
            computation: 1.0,
            busy: 1.0,
            idle: 3.0,
            total: 4.0,
            ..Default::default()
        };
        let b = Timeline {
            computation: 2.0,
            busy: 2.0,
            idle: 0.0,
            total: 2.0,
            ..Default::default()
        };
        let m = average(&[a, b]).unwrap();
        assert_eq!(
            (m.computation, m.busy, m.idle, m.total),
            (1.5, 1.5, 1.5, 3.0)
        );
        assert!(average(&[]).is_none());
    }
}
