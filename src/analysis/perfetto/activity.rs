//! The activity sheets: GPU kernel time by category per GPU with the
//! communication kernels' overlap with compute (`category_summary`), the
//! longest uncategorised (`xla`) kernels (`xla_top`), kernel time per name
//! and launch configuration (`kernel_summary`) and host time per HIP call
//! (`hip_summary`).
//!
//! GPUs are the distinct `agent` arguments in order of first appearance;
//! copies carry none, so this part of the report does not see them.

use rustc_hash::FxHashMap;

use super::events::Events;
use super::stats::{Stats, summary_cells};
use super::{HipGroup, KernelBaseline, KernelGroup, PerfettoOptions};
use crate::names::perfetto::{
    self as names, CATEGORY_COLUMNS, CONFIG_COLUMNS, DIMENSION_COLUMNS, NUMBER_STATS, TEXT_STATS,
    XLA_TOP_COLUMNS, sheet,
};
use crate::numeric::Kahan;
use crate::table::{Table, Value};
use crate::trace::is_collective_name;
use crate::trace::perfetto::PyValue;

/// A kernel category, in the order of the summary's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Category {
    Xla,
    AiterFwd,
    AiterBwd,
    Gemm,
    CkBwd,
    CkFwd,
    Te,
    Memcpy,
    FillBuffer,
    Rccl,
}

/// The categories with their row labels, in row order.
const CATEGORIES: [(Category, &str); 10] = [
    (Category::Xla, "xla"),
    (Category::AiterFwd, "aiterfwd"),
    (Category::AiterBwd, "aiterbwd"),
    (Category::Gemm, "gemm"),
    (Category::CkBwd, "ckbwd"),
    (Category::CkFwd, "ckfwd"),
    (Category::Te, "te"),
    (Category::Memcpy, "memcpy/memset"),
    (Category::FillBuffer, "fillBuffer"),
    (Category::Rccl, "rccl"),
];

/// The classifier's rules after communication, first match wins
/// (case-insensitive substrings).
const RULES: [(&[&str], Category); 8] = [
    (&["cublaslt", "cijk", "gemm", "nvjet"], Category::Gemm),
    (&["fmhabwd", "kernel_func", "flash_bprop"], Category::CkBwd),
    (&["fmhafwd", "flash_fprop"], Category::CkFwd),
    (&["copy", "memcpy", "memset"], Category::Memcpy),
    (&["transformer_engine"], Category::Te),
    (&["aiter::fmha_fwd"], Category::AiterFwd),
    (&["aiter::fmha_bwd"], Category::AiterBwd),
    (&["fillbuffer"], Category::FillBuffer),
];

/// The category of a kernel name.
fn classify(name: &str) -> Category {
    if is_collective_name(name) {
        return Category::Rccl;
    }
    let lower = name.to_lowercase();
    RULES
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| lower.contains(n)))
        .map_or(Category::Xla, |&(_, c)| c)
}

/// One GPU event.
struct GpuEvent {
    name: String,
    ts: i64,
    dur: i64,
    /// grid, workgroup, VGPR, AccumVGPR, SGPR, LDS, scratch (missing: 0).
    config: [i64; 7],
}

/// A `kernel_summary` group: the name and the launch configuration.
type KernelKey = (String, [i64; 7]);

/// A `hip_summary` group: the name, stream and operation.
type HipKey<'a> = (&'a str, i64, i64);

/// One HIP API call.
struct HipCall {
    name: String,
    ts: i64,
    dur: i64,
    stream: i64,
    operation: i64,
}

/// One GPU's category totals (ns, count) and communication overlap.
#[derive(Default, Clone)]
struct GpuStats {
    totals: [(i64, i64); 10],
    overlapped: i64,
    non_overlapped: i64,
}

impl GpuStats {
    fn get(&self, c: Category) -> (i64, i64) {
        self.totals[c as usize]
    }

    /// Every category but communication.
    fn compute_total(&self) -> i64 {
        CATEGORIES
            .iter()
            .filter(|(c, _)| *c != Category::Rccl)
            .map(|(c, _)| self.get(*c).0)
            .sum()
    }
}

/// What the activity sheets and page read, computed once.
pub(crate) struct Activity {
    /// The GPUs' agent names, by GPU number.
    pub agents: Vec<String>,
    /// Whether a FlashAttention v3 backward kernel (`kernel_func`) ran.
    pub used_fav3: bool,
    compute: Vec<Vec<GpuEvent>>,
    rccl: Vec<Vec<GpuEvent>>,
    /// (name, ns, count) of `xla` kernels, in order of first appearance.
    xla: Vec<(String, i64, i64)>,
    stats: Vec<GpuStats>,
    hip: Vec<HipCall>,
}

/// `name` with its decimal digits removed (`--merge-kernels`); `\d` is
/// Unicode's decimal digits, as in Python.
fn without_digits(name: &str) -> String {
    static DIGITS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    DIGITS
        .get_or_init(|| regex::Regex::new(r"\d+").expect("a valid pattern"))
        .replace_all(name, "")
        .into_owned()
}

impl Activity {
    /// The per-GPU event lists, totals and HIP calls of the trace.
    pub fn of(ev: &Events, opts: &PerfettoOptions) -> Activity {
        let agents = ev.agents();
        let n = agents.names.len();
        // Names repeat: each is classified once.
        let mut classified: FxHashMap<u32, (String, Category)> = FxHashMap::default();
        let mut compute: Vec<Vec<GpuEvent>> = (0..n).map(|_| Vec::new()).collect();
        let mut rccl: Vec<Vec<GpuEvent>> = (0..n).map(|_| Vec::new()).collect();
        let mut xla: Vec<(String, i64, i64)> = Vec::new();
        let mut xla_at: FxHashMap<String, usize> = FxHashMap::default();
        let mut used_fav3 = false;
        let k = &ev.k;
        for e in &ev.d.events {
            let Some(gpu) = ev.gpu_of(agents, e) else {
                continue;
            };
            let (ts, dur) = ev.activity_times(e);
            if dur <= 0 {
                continue;
            }
            let tid = ev.tid_or(e, -1);
            if tid < opts.min_tid || tid > opts.max_tid {
                continue;
            }
            let (name, category) = match e.name {
                PyValue::Str(id) => classified
                    .entry(id)
                    .or_insert_with(|| {
                        let name = ev.py_str(e.name);
                        let c = classify(&name);
                        (name, c)
                    })
                    .clone(),
                _ => {
                    let name = ev.py_str(e.name);
                    let c = classify(&name);
                    (name, c)
                }
            };
            let int0 = |key| ev.int_arg(e, key).unwrap_or(0);
            let config = [
                int0(k.grid_size),
                int0(k.workgroup_size),
                int0(k.vgpr),
                int0(k.accum_vgpr),
                int0(k.sgpr),
                int0(k.lds),
                int0(k.scratch),
            ];
            if category == Category::Xla {
                let key = if opts.merge_kernels {
                    without_digits(&name)
                } else {
                    name.clone()
                };
                let at = *xla_at.entry(key.clone()).or_insert_with(|| {
                    xla.push((key, 0, 0));
                    xla.len() - 1
                });
                xla[at].1 += dur;
                xla[at].2 += 1;
            }
            if category == Category::CkBwd && name.contains("kernel_func") {
                used_fav3 = true;
            }
            let event = GpuEvent {
                name,
                ts,
                dur,
                config,
            };
            if category == Category::Rccl {
                rccl[gpu].push(event);
            } else {
                compute[gpu].push(event);
            }
        }
        for list in compute.iter_mut().chain(rccl.iter_mut()) {
            list.sort_by(|a, b| (a.ts, a.dur, &a.name).cmp(&(b.ts, b.dur, &b.name)));
        }
        let long = |e: &&GpuEvent| e.dur >= opts.min_event_ns;
        let stats = (0..n)
            .map(|g| {
                let comp: Vec<&GpuEvent> = compute[g].iter().filter(long).collect();
                let comm: Vec<&GpuEvent> = rccl[g].iter().filter(long).collect();
                let mut s = GpuStats::default();
                for e in comp.iter().chain(&comm) {
                    let slot = &mut s.totals[classify(&e.name) as usize];
                    slot.0 += e.dur;
                    slot.1 += 1;
                }
                let (ov, non) = overlap(&comp, &comm);
                s.overlapped = ov;
                s.non_overlapped = non;
                s
            })
            .collect();
        Activity {
            agents: agents.names.clone(),
            used_fav3,
            compute,
            rccl,
            xla,
            stats,
            hip: hip_calls(ev, opts),
        }
    }

    /// `category_summary`: per GPU the fourteen rows, then their means
    /// across GPUs (`Avg`) in alphabetical order of category.
    pub fn category_summary(&self) -> Table {
        if self.stats.is_empty() {
            return Table::new(sheet::CATEGORY_SUMMARY, &[]);
        }
        let mut t = Table::new(sheet::CATEGORY_SUMMARY, &CATEGORY_COLUMNS);
        // (category, [ms, count, fraction of compute, fraction of total]) per row.
        let mut rows: Vec<(i64, &str, [f64; 4])> = Vec::new();
        for (g, s) in self.stats.iter().enumerate() {
            let compute = s.compute_total();
            let total = compute + s.get(Category::Rccl).0;
            let mut push = |label: &'static str, ns: i64, count: i64| {
                let frac = |d: i64| if d > 0 { ns as f64 / d as f64 } else { 0.0 };
                rows.push((
                    g as i64,
                    label,
                    [ns as f64 / 1e6, count as f64, frac(compute), frac(total)],
                ));
            };
            for (c, label) in CATEGORIES {
                let (ns, count) = s.get(c);
                push(label, ns, count);
            }
            push("overlapped_comm", s.overlapped, 0);
            push("non_overlapped_comm", s.non_overlapped, 0);
            push("compute_total", compute, 0);
            push("total_incl_comm", total, 0);
        }
        for (g, label, v) in &rows {
            let mut row = vec![Value::Int(*g), Value::Text((*label).into())];
            row.extend(v.iter().map(|&x| Value::Float(x)));
            t.push_row(row);
        }
        let mut labels: Vec<&str> = rows.iter().map(|r| r.1).collect();
        labels.sort_unstable();
        labels.dedup();
        for label in labels {
            let mut sums = [Kahan::default(); 4];
            let mut n = 0usize;
            for (_, l, v) in rows.iter().filter(|r| r.1 == label) {
                debug_assert_eq!(*l, label);
                for (s, &x) in sums.iter_mut().zip(v) {
                    s.add(x);
                }
                n += 1;
            }
            let mut row = vec![Value::Text("Avg".into()), Value::Text(label.into())];
            row.extend(sums.iter().map(|s| Value::Float(s.sum() / n as f64)));
            t.push_row(row);
        }
        t
    }

    /// The longest `xla` kernels: (name, ns, count, fraction of all `xla`
    /// time), at most `top`.
    pub fn xla_top(&self, top: usize) -> Vec<(&str, i64, i64, f64)> {
        let mut order: Vec<&(String, i64, i64)> = self.xla.iter().collect();
        order.sort_by_key(|x| std::cmp::Reverse(x.1));
        let total: i64 = self.xla.iter().map(|x| x.1).sum();
        let total = if total == 0 { 1 } else { total };
        order
            .into_iter()
            .take(top)
            .map(|(name, ns, count)| (name.as_str(), *ns, *count, *ns as f64 / total as f64))
            .collect()
    }

    /// `xla_top`.
    pub fn xla_top_sheet(&self, top: usize) -> Table {
        let rows = self.xla_top(top);
        if rows.is_empty() {
            return Table::new(sheet::XLA_TOP, &[]);
        }
        let mut t = Table::new(sheet::XLA_TOP, &XLA_TOP_COLUMNS);
        for (name, ns, count, frac) in rows {
            t.push_row(vec![
                Value::Text(name.into()),
                Value::Float(ns as f64 / 1e6),
                Value::Int(count),
                Value::Float(frac),
            ]);
        }
        t
    }

    /// `kernel_summary`: the long kernels of every GPU (communication too
    /// with `--kernel-summary-include-rccl`), by name and launch
    /// configuration or by name alone; shares of the GPUs' total (or
    /// compute) time.
    pub fn kernel_summary(&self, opts: &PerfettoOptions) -> Table {
        let baseline: i64 = self
            .stats
            .iter()
            .map(|s| match opts.kernel_summary_baseline {
                KernelBaseline::Total => s.compute_total() + s.get(Category::Rccl).0,
                KernelBaseline::Compute => s.compute_total(),
            })
            .sum();
        let events = (0..self.stats.len()).flat_map(|g| {
            let comm = opts
                .kernel_summary_include_rccl
                .then(|| self.rccl[g].iter())
                .into_iter()
                .flatten();
            self.compute[g].iter().chain(comm)
        });
        let by_config = opts.kernel_summary_group == KernelGroup::Config;
        let mut groups: Vec<(KernelKey, Vec<i64>)> = Vec::new();
        let mut at: FxHashMap<KernelKey, usize> = FxHashMap::default();
        for e in events.filter(|e| e.dur >= opts.min_event_ns) {
            let name = if opts.merge_kernels {
                without_digits(&e.name)
            } else {
                e.name.clone()
            };
            let key = (name, if by_config { e.config } else { [0; 7] });
            let i = *at.entry(key.clone()).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(e.dur);
        }
        let mut columns: Vec<&str> = TEXT_STATS.to_vec();
        if by_config {
            columns.extend(CONFIG_COLUMNS);
        }
        columns.push(names::NAME);
        columns.extend(NUMBER_STATS);
        if by_config {
            columns.extend(DIMENSION_COLUMNS);
        }
        if groups.is_empty() {
            return Table::new(sheet::KERNEL_SUMMARY, &[]);
        }
        let mut rows: Vec<(Stats, Vec<Value>)> = groups
            .into_iter()
            .map(|((name, config), durations)| {
                let s = Stats::numpy(&durations);
                let (mut row, numbers) = summary_cells(&s, baseline);
                if by_config {
                    let xyz = |x: i64| Value::Text(format!("{x:>7} {:>4} {:>4}", 1, 1).into());
                    row.extend([xyz(config[0]), xyz(config[1])]);
                    row.extend(config[2..].iter().map(|&v| Value::Int(v)));
                }
                row.push(Value::Text(name.into()));
                row.extend(numbers);
                if by_config {
                    row.extend([config[0], 1, 1, config[1], 1, 1].map(Value::Int));
                }
                (s, row)
            })
            .collect();
        sort_by_total(&mut rows);
        let mut t = Table::new(sheet::KERNEL_SUMMARY, &columns);
        for (_, row) in rows {
            t.push_row(row);
        }
        t
    }

    /// `hip_summary`: the long HIP calls by name (and stream or
    /// operation, as `--hip-summary-group` says); shares of all their time.
    pub fn hip_summary(&self, opts: &PerfettoOptions) -> Table {
        if self.hip.is_empty() {
            return Table::new(sheet::HIP_SUMMARY, &[]);
        }
        let baseline: i64 = self.hip.iter().map(|h| h.dur).sum();
        let (stream, op) = match opts.hip_summary_group {
            HipGroup::Name => (false, false),
            HipGroup::NameStream => (true, false),
            HipGroup::NameOp => (false, true),
            HipGroup::NameStreamOp => (true, true),
        };
        let mut groups: Vec<(HipKey<'_>, Vec<i64>)> = Vec::new();
        let mut at: FxHashMap<HipKey<'_>, usize> = FxHashMap::default();
        for h in &self.hip {
            let key = (
                h.name.as_str(),
                if stream { h.stream } else { 0 },
                if op { h.operation } else { 0 },
            );
            let i = *at.entry(key).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(h.dur);
        }
        let mut columns: Vec<&str> = TEXT_STATS.to_vec();
        if stream {
            columns.push(names::STREAM);
        }
        if op {
            columns.push(names::OP);
        }
        columns.push(names::NAME);
        columns.extend(NUMBER_STATS);
        let mut rows: Vec<(Stats, Vec<Value>)> = groups
            .into_iter()
            .map(|((name, s_id, op_id), durations)| {
                let s = Stats::numpy(&durations);
                let (mut row, numbers) = summary_cells(&s, baseline);
                if stream {
                    row.push(Value::Int(s_id));
                }
                if op {
                    row.push(Value::Int(op_id));
                }
                row.push(Value::Text(name.into()));
                row.extend(numbers);
                (s, row)
            })
            .collect();
        sort_by_total(&mut rows);
        let mut t = Table::new(sheet::HIP_SUMMARY, &columns);
        for (_, row) in rows {
            t.push_row(row);
        }
        t
    }

    /// The figures of the page: per GPU (agent, compute ns, communication
    /// ns, exposed communication ns).
    pub fn per_gpu(&self) -> Vec<(&str, i64, i64, i64)> {
        self.stats
            .iter()
            .zip(&self.agents)
            .map(|(s, a)| {
                (
                    a.as_str(),
                    s.compute_total(),
                    s.get(Category::Rccl).0,
                    s.non_overlapped,
                )
            })
            .collect()
    }
}

/// Sorts summary rows by total time, longest first; equal totals keep
/// their order (pandas' `sort_values(ascending=False)` on the small
/// tables it sorts by insertion, stably).
fn sort_by_total(rows: &mut [(Stats, Vec<Value>)]) {
    rows.sort_by_key(|r| std::cmp::Reverse(r.0.total));
}

/// The HIP API calls with a positive duration, within the thread range and
/// at least `min_event_ns` long, sorted by (start, duration, name).
fn hip_calls(ev: &Events, opts: &PerfettoOptions) -> Vec<HipCall> {
    let mut calls = Vec::new();
    for e in &ev.d.events {
        if ev.cat(e) != "hip_api" {
            continue;
        }
        let (ts, dur) = ev.activity_times(e);
        if dur <= 0 {
            continue;
        }
        // `e.get("tid", args.get("tid", -1))`.
        let tid = if e.tid == PyValue::Missing {
            ev.int_arg(e, ev.k.tid).unwrap_or(-1)
        } else {
            ev.tid_or(e, -1)
        };
        if tid < opts.min_tid || tid > opts.max_tid {
            continue;
        }
        calls.push(HipCall {
            name: ev.py_str(e.name),
            ts,
            dur,
            stream: ev.int_arg(e, ev.k.stream).unwrap_or(0),
            operation: ev.int_arg(e, ev.k.operation).unwrap_or(0),
        });
    }
    calls.sort_by(|a, b| (a.ts, a.dur, &a.name).cmp(&(b.ts, b.dur, &b.name)));
    calls.retain(|c| c.dur >= opts.min_event_ns);
    calls
}

/// (overlapped, not overlapped) communication ns of one GPU: for each
/// communication kernel in start order, the compute kernels from the
/// first that ends after its start, up to and including the first that
/// ends after its end, each adding its overlap. Compute kernels that
/// overlap each other are counted once each, so the overlap can exceed the
/// communication time (the reference's rule).
fn overlap(compute: &[&GpuEvent], comm: &[&GpuEvent]) -> (i64, i64) {
    let mut i = 0;
    let mut overlapped = 0i64;
    let mut total = 0i64;
    for c in comm {
        let (cs, ce) = (c.ts, c.ts + c.dur);
        total += c.dur;
        while i < compute.len() && compute[i].ts + compute[i].dur <= cs {
            i += 1;
        }
        let mut k = i;
        while k < compute.len() && compute[k].ts < ce {
            let (s1, e1) = (compute[k].ts, compute[k].ts + compute[k].dur);
            overlapped += (e1.min(ce) - s1.max(cs)).max(0);
            if e1 <= ce {
                k += 1;
            } else {
                break;
            }
        }
    }
    (overlapped, total - overlapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_first_match() {
        assert_eq!(classify("ncclDevKernel_Generic_1"), Category::Rccl);
        assert_eq!(classify("Cijk_Ailk_Bljk_HHS"), Category::Gemm);
        assert_eq!(classify("FmhaBwdKernel_func"), Category::CkBwd);
        assert_eq!(classify("fmhaFwd"), Category::CkFwd);
        assert_eq!(classify("__amd_rocclr_copyBuffer"), Category::Memcpy);
        assert_eq!(classify("aiter::fmha_fwd_v3"), Category::AiterFwd);
        assert_eq!(classify("FillBufferAligned"), Category::FillBuffer);
        assert_eq!(classify("redzone_checker_kernel"), Category::Xla);
    }

    #[test]
    fn digits_are_stripped() {
        assert_eq!(without_digits("Cijk_MT128x128x32"), "Cijk_MTxx");
        assert_eq!(without_digits("k½٣"), "k½");
    }

    #[test]
    fn overlap_counts_each_compute_kernel() {
        let e = |ts, dur| GpuEvent {
            name: String::new(),
            ts,
            dur,
            config: [0; 7],
        };
        let (a, b, c) = (e(0, 10), e(5, 10), e(8, 100));
        // Communication [4, 20): overlaps 6 + 10 + 12 = 28 > 16.
        let comm = e(4, 16);
        assert_eq!(overlap(&[&a, &b, &c], &[&comm]), (28, -12));
        let lone = e(200, 5);
        assert_eq!(overlap(&[&a], &[&lone]), (0, 5));
    }
}
