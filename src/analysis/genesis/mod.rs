//! The Genesis report's own sheets (physics-simulation workloads built on
//! Genesis/Taichi): the rocprof kernel summary in the units its headers
//! say with physics categories instead of ML ones, the summary by those
//! categories, and the GPU timeline of the steady state (the simulation
//! burst after JIT compilation and scene build) instead of the whole
//! profiling session.

use crate::analysis::rocprof::empty_by_category;
use crate::names::{col, row, sheet};
use crate::numeric::{kahan_sum, pairwise_sum};
use crate::table::agg::{order_desc, percentages};
use crate::table::{Column, Table, Value};

/// The physics categories: the first whose patterns one is a substring of
/// the kernel name (case-sensitive) names it; `Other` otherwise.
const CATEGORIES: &[(&str, &[&str])] = &[
    (
        "Rigid Body Solver",
        &[
            "_kernel_solve_body",
            "_kernel_solve_one_iter",
            "func_solve_body",
            "func_solve_init",
            "_kernel_linesearch",
            "_kernel_solve_iter_post_linesearch",
            "_kernel_update_constraint",
            "_kernel_update_gradient",
            "_kernel_cg_save",
            "_kernel_update_search_direction",
            "kernel_compute_mass_matrix",
        ],
    ),
    ("Broadphase Collision", &["func_broad_phase"]),
    (
        "Narrowphase Collision",
        &[
            "_func_narrowphase",
            "_func_prepare_gjk",
            "_func_reset_narrowphase",
        ],
    ),
    (
        "Contact Management",
        &["func_sort_contacts", "func_update_contact"],
    ),
    (
        "Time Integration",
        &["kernel_step_1", "kernel_step_2", "func_update_qacc"],
    ),
    (
        "Constraints",
        &["add_equality_constraints", "add_inequality_constraints"],
    ),
    (
        "Forward Kinematics",
        &["kernel_forward_kinematics", "kernel_update_verts"],
    ),
    (
        "Geometry / AABB",
        &["kernel_update_geom", "kernel_bit_reduction"],
    ),
    (
        "Memory Ops (ROCm)",
        &[
            "__amd_rocclr_copyBuffer",
            "__amd_rocclr_fillBuffer",
            "__amd_rocclr_initHeap",
        ],
    ),
    (
        "Runtime Init",
        &[
            "runtime_initialize",
            "runtime_get_memory",
            "runtime_allocate",
            "fill_ndarray",
            "kernel_init_geom",
            "kernel_init_vvert",
            "ext_arr_to_ndarray",
        ],
    ),
    ("PyTorch Runtime", &["at::native::", "elementwise_kernel"]),
];

/// The physics category of a kernel name.
pub fn categorize(name: &str) -> &'static str {
    CATEGORIES
        .iter()
        .find(|(_, patterns)| patterns.iter().any(|p| name.contains(p)))
        .map_or("Other", |(category, _)| category)
}

/// The rocprof `kernel_summary` as the Genesis report shows it: `Total
/// Kernel Time (ms)` and `Mean Kernel Time (µs)` divided by 1000 (the
/// rocprof sheet holds µs and ns under those headers; the other statistics
/// stay in ns, as the reference leaves them), and `Category` the physics
/// category.
pub fn fix_kernel_summary(summary: &mut Table) {
    for name in [col::TOTAL_KERNEL_TIME_MS, col::MEAN_KERNEL_TIME_US] {
        if let Some(c) = summary.column_mut(name) {
            for v in &mut c.values {
                *v = match *v {
                    Value::Float(x) => Value::Float(x / 1000.0),
                    Value::Int(x) => Value::Float(x as f64 / 1000.0),
                    ref other => other.clone(),
                };
            }
        }
    }
    if summary.nrows() == 0 {
        return;
    }
    let Some(names) = summary.column(col::NAME) else {
        return;
    };
    let categories: Vec<Value> = names
        .values
        .iter()
        .map(|v| Value::from(categorize(&v.py_str())))
        .collect();
    match summary.column_mut(col::CATEGORY) {
        Some(c) => c.values = categories,
        None => summary.push_column(Column::new(col::CATEGORY, categories)),
    }
}

/// `kernel_summary_by_category` rebuilt from the fixed kernel summary:
/// count and time (ms) per physics category, share of the total, the
/// running share in category (alphabetical) order, then rows by time
/// descending (so the running share is not monotonic, as the reference
/// leaves it).
pub fn category_summary(summary: &Table) -> Table {
    let mut t = empty_by_category();
    let (Some(cats), Some(counts), Some(ms)) = (
        summary.column(col::CATEGORY),
        summary.column(col::COUNT),
        summary.column(col::TOTAL_KERNEL_TIME_MS),
    ) else {
        return t;
    };
    // (category, count, the times in row order), by category.
    let mut groups: Vec<(String, i64, Vec<f64>)> = Vec::new();
    for ((c, n), m) in cats.values.iter().zip(&counts.values).zip(&ms.values) {
        let c = c.py_str();
        let i = match groups.binary_search_by(|g| g.0.as_str().cmp(&c)) {
            Ok(i) => i,
            Err(i) => {
                groups.insert(i, (c, 0, Vec::new()));
                i
            }
        };
        groups[i].1 += n.as_f64().map_or(0, |x| x as i64);
        groups[i].2.push(m.as_f64().unwrap_or(f64::NAN));
    }
    let totals: Vec<f64> = groups.iter().map(|g| kahan_sum(&g.2)).collect();
    // A zero total gives shares of 0, not NaN.
    let (pct, cum) = if pairwise_sum(&totals) > 0.0 {
        percentages(&totals)
    } else {
        (vec![0.0; totals.len()], vec![0.0; totals.len()])
    };
    for i in order_desc(&totals) {
        t.push_row(vec![
            Value::from(groups[i].0.as_str()),
            Value::Int(groups[i].1),
            Value::Float(totals[i]),
            Value::Float(pct[i]),
            Value::Float(cum[i]),
        ]);
    }
    t
}

/// How the steady state is found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyOptions {
    /// A gap between dispatches at least this long (ns) separates the
    /// JIT/build phase from the simulation burst.
    pub gap_threshold_ns: i64,
    /// Without such a gap: the last this many ns of the trace.
    pub fallback_window_ns: i64,
}

/// The steady state found, and its GPU timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    /// How its start was chosen: `after_max_gap_<gap>ms`,
    /// `last_<window>s` or `single_dispatch`.
    pub method: String,
    /// Dispatches starting at or after this time (ns) are in it.
    pub cutoff_ns: i64,
    /// From its first start to its last end, ms.
    pub window_ms: f64,
    /// Dispatches in it.
    pub dispatch_count: usize,
    /// Share of the window with a kernel running, %.
    pub gpu_util_pct: f64,
    /// The `gpu_timeline` sheet of the window.
    pub timeline: Table,
}

/// The dispatches starting at or after a cutoff.
struct Window {
    /// Share of the window with a kernel running, %.
    busy_pct: f64,
    /// First start, ns.
    start: i64,
    /// Last end, ns.
    end: i64,
    /// The dispatches (start, end).
    inside: Vec<(i64, i64)>,
}

/// The dispatches starting at or after `cutoff`; None when there are none.
fn window_from(times: &[(i64, i64)], cutoff: i64) -> Option<Window> {
    let inside: Vec<(i64, i64)> = times.iter().copied().filter(|t| t.0 >= cutoff).collect();
    let start = inside.iter().map(|t| t.0).min()?;
    let end = inside.iter().map(|t| t.1).max()?;
    let busy = union_length(&inside);
    let total = (end - start).max(1);
    Some(Window {
        busy_pct: 100.0 * busy as f64 / total as f64,
        start,
        end,
        inside,
    })
}

/// The length of the union of `intervals` (touching ones merge), ns.
fn union_length(intervals: &[(i64, i64)]) -> i64 {
    let mut sorted = intervals.to_vec();
    sorted.sort_unstable();
    let mut busy = 0;
    let mut current: Option<(i64, i64)> = None;
    for (s, e) in sorted {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                busy += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    busy + current.map_or(0, |(s, e)| e - s)
}

/// Python's `f"{x:.1f}"`.
fn one_decimal(x: f64) -> String {
    format!("{x:.1}")
}

/// Where the simulation burst starts: after the first longest gap
/// between consecutive dispatches (in start order; each gap from the
/// previous dispatch's own end) when it reaches the threshold, else the
/// last fallback window before the end of the last-starting dispatch.
fn gap_cutoff(times: &[(i64, i64)], opts: SteadyOptions) -> (i64, String) {
    let mut sorted = times.to_vec();
    sorted.sort_by_key(|t| t.0);
    if sorted.len() < 2 {
        return (sorted.first().map_or(0, |t| t.0), "single_dispatch".into());
    }
    let mut best: Option<(i64, usize)> = None;
    for (i, w) in sorted.windows(2).enumerate() {
        let gap = w[1].0 - w[0].1;
        if best.is_none_or(|(g, _)| gap > g) {
            best = Some((gap, i));
        }
    }
    let (gap, i) = best.unwrap_or((0, 0));
    if gap >= opts.gap_threshold_ns {
        return (
            sorted[i + 1].0,
            format!("after_max_gap_{}ms", one_decimal(gap as f64 / 1e6)),
        );
    }
    let last_end = sorted[sorted.len() - 1].1;
    (last_end - opts.fallback_window_ns, last_method(opts))
}

fn last_method(opts: SteadyOptions) -> String {
    format!(
        "last_{}s",
        one_decimal(opts.fallback_window_ns as f64 / 1e9)
    )
}

/// The steady state of dispatches `times` ((start, end) ns, in any order):
/// of the gap cut and the last fallback window of the trace, the one with
/// the higher busy share (the gap cut on a tie). None without dispatches.
pub fn steady_state(times: &[(i64, i64)], opts: SteadyOptions) -> Option<SteadyState> {
    let (gap_cut, gap_method) = gap_cutoff(times, opts);
    let last_end = times.iter().map(|t| t.1).max()?;
    let candidates = [
        (gap_method, gap_cut),
        (last_method(opts), last_end - opts.fallback_window_ns),
    ];
    let mut best: Option<(String, i64, f64)> = None;
    for (method, cutoff) in candidates {
        let pct = window_from(times, cutoff).map_or(0.0, |w| w.busy_pct);
        if best.as_ref().is_none_or(|b| pct > b.2) {
            best = Some((method, cutoff, pct));
        }
    }
    let (method, cutoff_ns, gpu_util_pct) = best?;
    let w = window_from(times, cutoff_ns)?;
    Some(SteadyState {
        method,
        cutoff_ns,
        window_ms: (w.end - w.start) as f64 / 1e6,
        dispatch_count: w.inside.len(),
        gpu_util_pct,
        timeline: window_timeline(w.start, w.end, &w.inside),
    })
}

/// `gpu_timeline` of a window: its length, the kernels' union (busy), no
/// copies, and idle, in ms and % of the window.
fn window_timeline(start: i64, end: i64, intervals: &[(i64, i64)]) -> Table {
    let total = (end - start).max(1);
    let busy = union_length(intervals);
    let idle = (total - busy).max(0);
    let pct = |ns: i64| 100.0 * ns as f64 / total as f64;
    let ms = |ns: i64| ns as f64 / 1e6;
    let rows = vec![
        vec![
            row::TOTAL_TIME.into(),
            Value::Float(ms(total)),
            Value::Float(100.0),
        ],
        vec![
            row::KERNEL.into(),
            Value::Float(ms(busy)),
            Value::Float(pct(busy)),
        ],
        vec![row::MEMORY.into(), Value::Float(0.0), Value::Float(0.0)],
        vec![
            row::BUSY_TIME.into(),
            Value::Float(ms(busy)),
            Value::Float(pct(busy)),
        ],
        vec![
            row::IDLE.into(),
            Value::Float(ms(idle)),
            Value::Float(pct(idle)),
        ],
    ];
    Table::from_rows(
        sheet::GPU_TIMELINE,
        &[col::TYPE, col::TIME_MS, col::PERCENT],
        rows,
    )
}

/// A workbook sheet name as the reference makes them: cut to 31
/// characters; a name already used gets `_1`, `_2`, … (its base cut to
/// fit).
pub fn sheet_name(name: &str, used: &mut Vec<String>) -> String {
    let cut = |n: usize| name.chars().take(n).collect::<String>();
    let mut base = cut(31);
    let mut n = 0;
    while used.contains(&base) {
        n += 1;
        let suffix = format!("_{n}");
        base = cut(31 - suffix.len()) + &suffix;
    }
    used.push(base.clone());
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: SteadyOptions = SteadyOptions {
        gap_threshold_ns: 1_000_000_000,
        fallback_window_ns: 5_000_000_000,
    };

    #[test]
    fn first_matching_category_wins() {
        assert_eq!(
            categorize("_kernel_solve_body_tiled_c530_0"),
            "Rigid Body Solver"
        );
        assert_eq!(categorize("func_broad_phase_c402"), "Broadphase Collision");
        assert_eq!(categorize("__amd_rocclr_copyBuffer"), "Memory Ops (ROCm)");
        assert_eq!(
            categorize("void at::native::elementwise_kernel<4>"),
            "PyTorch Runtime"
        );
        // Case-sensitive substrings.
        assert_eq!(categorize("KERNEL_STEP_1"), "Other");
        assert_eq!(categorize("Cijk_Ailk"), "Other");
    }

    #[test]
    fn the_burst_after_the_longest_gap_is_the_steady_state() {
        // JIT: two dispatches; a 3 s gap; then a burst of 4 of 10 µs each
        // 5 µs apart.
        let mut times = vec![(0, 1_000), (500_000, 510_000)];
        let t0 = 3_510_000_000;
        for i in 0..4 {
            let s = t0 + i * 15_000;
            times.push((s, s + 10_000));
        }
        let s = steady_state(&times, OPTS).unwrap();
        // 3 510 000 000 - 510 000 ns = 3509.49 ms.
        assert_eq!(s.method, "after_max_gap_3509.5ms");
        assert_eq!(s.cutoff_ns, t0);
        assert_eq!(s.dispatch_count, 4);
        assert_eq!(s.window_ms, 0.055);
        assert_eq!(s.gpu_util_pct, 100.0 * 40_000.0 / 55_000.0);
        let tl = &s.timeline;
        assert_eq!(tl.value(4, 1), &Value::Float(0.015));
    }

    #[test]
    fn without_a_long_gap_the_last_window_is_taken() {
        let times = vec![(0, 10), (20, 30), (40, 50)];
        let opts = SteadyOptions {
            gap_threshold_ns: 100,
            fallback_window_ns: 35,
        };
        let s = steady_state(&times, opts).unwrap();
        // Cut at 50 - 35 = 15: the last two dispatches.
        assert_eq!(
            (s.method.as_str(), s.cutoff_ns, s.dispatch_count),
            ("last_0.0s", 15, 2)
        );
        assert!(steady_state(&[], opts).is_none());
        let one = steady_state(&[(5, 9)], opts).unwrap();
        assert_eq!(
            (one.method.as_str(), one.dispatch_count),
            ("single_dispatch", 1)
        );
    }

    #[test]
    fn overlapping_and_touching_dispatches_count_once() {
        assert_eq!(union_length(&[(0, 10), (5, 15), (15, 20), (30, 31)]), 21);
        assert_eq!(union_length(&[]), 0);
    }

    #[test]
    fn sheet_names_are_cut_and_numbered_as_the_reference_does() {
        let mut used = Vec::new();
        let long = "a".repeat(40);
        assert_eq!(sheet_name(&long, &mut used), "a".repeat(31));
        assert_eq!(
            sheet_name(&long, &mut used),
            format!("{}_1", "a".repeat(29))
        );
        assert_eq!(
            sheet_name(&long, &mut used),
            format!("{}_2", "a".repeat(29))
        );
        assert_eq!(
            sheet_name("pftrace_hip_activity_category_summary", &mut used),
            "pftrace_hip_activity_category_s"
        );
    }

    #[test]
    fn categories_are_summed_and_ranked() {
        let mut ks = Table::from_rows(
            sheet::KERNEL_SUMMARY,
            &[
                col::NAME,
                col::COUNT,
                col::MEAN_KERNEL_TIME_US,
                col::TOTAL_KERNEL_TIME_MS,
                col::CATEGORY,
            ],
            vec![
                vec![
                    "kernel_step_1_a".into(),
                    Value::Int(2),
                    Value::Float(4000.0),
                    Value::Float(8.0),
                    "Other".into(),
                ],
                vec![
                    "func_broad_phase_b".into(),
                    Value::Int(1),
                    Value::Float(3000.0),
                    Value::Float(3.0),
                    "Other".into(),
                ],
                vec![
                    "kernel_step_2_c".into(),
                    Value::Int(1),
                    Value::Float(1000.0),
                    Value::Float(1.0),
                    "Other".into(),
                ],
            ],
        );
        fix_kernel_summary(&mut ks);
        assert_eq!(ks.value(0, 2), &Value::Float(4.0));
        assert_eq!(ks.value(0, 3), &Value::Float(0.008));
        assert_eq!(ks.value(1, 4), &Value::from("Broadphase Collision"));
        let c = category_summary(&ks);
        assert_eq!(c.nrows(), 2);
        assert_eq!(c.value(0, 0), &Value::from("Time Integration"));
        assert_eq!(c.value(0, 1), &Value::Int(3));
        assert_eq!(c.value(0, 2), &Value::Float(0.008 + 0.001));
        // The running share is taken alphabetically: Broadphase first.
        assert_eq!(c.value(1, 4), c.value(1, 3));
        assert!((c.value(0, 4).to_f64() - 100.0).abs() < 1e-12);
    }
}
