//! `kernel_details_summary` and `trunc_kernel_details`:
//! per-position kernel statistics over the instances of a group.

use crate::names::{col, sheet};
use crate::numeric::{median, np_mean, np_round2, np_std_pop, pairwise_sum};
use crate::pyfmt::{np_float, np_int, str_repr};
use crate::table::{Table, Value};
use crate::trace::{EventId, Trace};

/// One summarised kernel position.
#[derive(Debug, Clone)]
pub struct KernelStat {
    /// The kernel at this position in the group's first list.
    pub kernel: EventId,
    name: String,
    stream: Option<i64>,
    count: usize,
    all_int: bool,
    total: f64,
    mean: f64,
    median: f64,
    std: f64,
    min: f64,
    max: f64,
}

fn stream_repr(s: Option<i64>) -> String {
    match s {
        None => "None".to_string(),
        Some(s) => s.to_string(),
    }
}

fn num(v: f64, as_int: bool) -> String {
    if as_int {
        np_int(v as i64)
    } else {
        np_float(v)
    }
}

/// Summarises the kernel lists of one group's rows. The first non-empty list
/// is the template; rows with another length are left out; positions are
/// aligned by index only. Sorted by (total, name) ascending.
pub fn summarise(trace: &Trace, lists: &[&[EventId]]) -> Vec<KernelStat> {
    let Some(template) = lists.iter().find(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let n = template.len();
    let mut buckets: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut ints = vec![true; n];
    for l in lists.iter().filter(|l| l.len() == n) {
        for (i, &k) in l.iter().enumerate() {
            let e = trace.event(k);
            buckets[i].push(e.dur);
            ints[i] &= e.dur_is_int;
        }
    }
    let mut out: Vec<KernelStat> = template
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let b = &buckets[i];
            let stream = trace.args(k).and_then(|a| a.stream());
            KernelStat {
                kernel: k,
                name: trace.name(k).to_string(),
                stream,
                count: b.len(),
                all_int: ints[i],
                total: pairwise_sum(b),
                mean: np_mean(b),
                median: median(b),
                std: np_std_pop(b),
                min: b.iter().copied().fold(f64::INFINITY, f64::min),
                max: b.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.total
            .total_cmp(&b.total)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The `kernel_details_summary` cell text (a Python list of dicts).
pub fn summary_text(stats: &[KernelStat]) -> String {
    summary_text_with_head(stats, |s| name_stream_head(s, None))
}

/// [`summary_text`] with each kernel's `call_stack` (the Python list text
/// of `stacks`, parallel to `stats`) after its stream: the reference leaves
/// that internal field in the unified sheet when it tracked call stacks
/// without being asked to print them.
pub fn summary_text_with_stacks(stats: &[KernelStat], stacks: &[String]) -> String {
    let items: Vec<String> = stats
        .iter()
        .zip(stacks)
        .map(|(s, st)| item_text(s, &name_stream_head(s, Some(st))))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The summary cell text with each kernel's leading dict entries (what
/// the group's first row held besides `dur`, as `'key': value` text)
/// given by `head`.
pub fn summary_text_with_head(
    stats: &[KernelStat],
    head: impl Fn(&KernelStat) -> String,
) -> String {
    let items: Vec<String> = stats.iter().map(|s| item_text(s, &head(s))).collect();
    format!("[{}]", items.join(", "))
}

/// The leading entries of a PyTorch kernel: name, stream and, when given,
/// the text of its `call_stack`.
fn name_stream_head(s: &KernelStat, stack: Option<&str>) -> String {
    let stack = stack.map_or(String::new(), |t| format!(", 'call_stack': {t}"));
    format!(
        "'name': {}, 'stream': {}{stack}",
        str_repr(&s.name),
        stream_repr(s.stream)
    )
}

/// One kernel's dict after its leading entries `head`.
fn item_text(s: &KernelStat, head: &str) -> String {
    format!(
        "{{{head}, 'count': {}, 'total_duration_us': {}, 'mean_duration_us': {}, 'median_duration_us': {}, 'std_dev_duration_us': {}, 'min_duration_us': {}, 'max_duration_us': {}}}",
        s.count,
        num(s.total, s.all_int),
        np_float(s.mean),
        np_float(s.median),
        np_float(s.std),
        num(s.min, s.all_int),
        num(s.max, s.all_int),
    )
}

/// The `trunc_kernel_details` cell text; None (an empty cell) for no kernels.
pub fn trunc_text(stats: &[KernelStat]) -> Option<String> {
    if stats.is_empty() {
        return None;
    }
    let items: Vec<String> = stats
        .iter()
        .map(|s| {
            let name = if s.name.chars().count() > 64 {
                let cut: String = s.name.chars().take(64).collect();
                format!("{cut}...")
            } else {
                s.name.clone()
            };
            format!(
                "{{'name': {}, 'stream': {}, 'mean_duration_us': {}}}",
                str_repr(&name),
                stream_repr(s.stream),
                np_float(np_round2(s.mean))
            )
        })
        .collect();
    Some(format!("[{}]", items.join(", ")))
}

/// `short_kernel_histogram`: `numpy.histogram(durations, bins)`, equal-width
/// bins over the durations' range (shared by the PyTorch and rocprof reports).
pub fn histogram(durations: &[f64], bins: usize) -> Table {
    let mut s = Table::new(
        sheet::SHORT_KERNEL_HISTOGRAM,
        &[col::BIN_START, col::BIN_END, col::COUNT_LC],
    );
    if durations.is_empty() || bins == 0 {
        return s;
    }
    let mut lo = durations.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = durations.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo == hi {
        lo -= 0.5;
        hi += 0.5;
    }
    let step = (hi - lo) / bins as f64;
    let mut edges: Vec<f64> = (0..bins).map(|i| i as f64 * step + lo).collect();
    edges.push(hi);
    let mut counts = vec![0i64; bins];
    let norm = bins as f64 / (hi - lo);
    for &v in durations {
        let mut i = (((v - lo) * norm) as usize).min(bins - 1);
        // Correct the float estimate against the actual edges, as numpy does.
        while i > 0 && v < edges[i] {
            i -= 1;
        }
        while i < bins - 1 && v >= edges[i + 1] {
            i += 1;
        }
        counts[i] += 1;
    }
    for i in 0..bins {
        s.push_row(vec![
            Value::Float(edges[i]),
            Value::Float(edges[i + 1]),
            Value::Int(counts[i]),
        ]);
    }
    s
}
