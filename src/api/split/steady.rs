//! Steady state in a serving trace: the regions where the number of
//! requests a step runs stays near the trace's peak, and the windows of
//! steps taken from the largest one (a representative prefill/decode mix,
//! the longest decode-only run, the longest prefill-bearing run), and the
//! steady steps grouped into runs of one phase. Every rule is the
//! reference's, quirks included (a region still open at the end stops
//! before the last step).

use crate::trace::annotation::StepCounts;

/// A half-open range of step indices.
pub type Span = (usize, usize);

/// A region needs more than this many steps near the peak to start.
const START_COUNT: i64 = 5;

/// The steady-state regions of `steps`; the fallback (the middle of the
/// trace) when none is found, and whether it was used.
pub fn regions(steps: &[StepCounts], num_steps: usize) -> (Vec<Span>, bool) {
    let n = steps.len();
    let frac = if n >= num_steps { 0.1 } else { 0.2 };
    let peak = steps
        .iter()
        .map(StepCounts::num_requests)
        .max()
        .unwrap_or(0);
    let band = (frac * peak as f64).max(1.0);
    let mut started = false;
    let mut count: i64 = 0;
    let mut start = 0usize;
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let near = ((s.num_requests() - peak).abs() as f64) <= band;
        if near && !started {
            count += 1;
        } else if !near && started {
            count -= 1;
        }
        if count > START_COUNT && !started {
            started = true;
            start = (i as i64 - count + 1).max(0) as usize;
        }
        if count <= 0 && started {
            out.push((start, i));
            started = false;
            count = 0;
        }
    }
    if started {
        // Closed at the last index, as the reference closes it.
        out.push((start, n.saturating_sub(1)));
    }
    if !out.is_empty() {
        return (out, false);
    }
    let delta = n.min(8.max(num_steps.saturating_sub(n)));
    let start = delta / 2;
    let end = (start + 1).max(n.min(n - delta / 2));
    (vec![(start, end)], true)
}

/// The steps of `span` that exist.
fn slice(steps: &[StepCounts], (s, e): Span) -> &[StepCounts] {
    let e = e.min(steps.len());
    &steps[s.min(e)..e]
}

/// The largest region (the first of equal ones) and the share of
/// prefill-bearing steps over all regions (the reference ratio).
pub fn largest_and_ratio(steps: &[StepCounts], regions: &[Span]) -> (Span, f64) {
    let mut total = 0usize;
    let mut with_context = 0usize;
    let mut largest: Option<(Span, usize)> = None;
    for &r in regions {
        let w = slice(steps, r);
        total += w.len();
        with_context += w.iter().filter(|s| s.has_context()).count();
        if largest.is_none_or(|(_, size)| w.len() > size) {
            largest = Some((r, w.len()));
        }
    }
    let ratio = if total > 0 {
        with_context as f64 / total as f64
    } else {
        0.0
    };
    (largest.map_or((0, 0), |(r, _)| r), ratio)
}

/// What the mixed window was chosen against.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The share of prefill-bearing steps aimed at.
    pub ratio: f64,
    /// Window length, raised when the ideal ratio needs more steps.
    pub num_steps: usize,
}

/// The ideal share of prefill-bearing steps for `conc` concurrent
/// requests of mean output length `osl·(1+r)/2` (each request's prefill
/// is one step in its lifetime), and the window length it needs.
pub fn ideal_target(conc: i64, osl: f64, r: f64, num_steps: usize) -> Target {
    let r = r.clamp(0.0, 1.0);
    let ratio = (conc as f64 * 2.0) / (osl * (1.0 + r));
    let needed = (1.0 / ratio).ceil();
    let needed = if needed.is_finite() && needed > 0.0 {
        needed as usize
    } else {
        num_steps
    };
    Target {
        ratio,
        num_steps: num_steps.max(needed),
    }
}

/// One candidate window.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    span: Span,
    with_context: usize,
    ratio: f64,
    mean_requests: f64,
}

/// The window of `target.num_steps` steps in `region` whose share of
/// prefill-bearing steps is nearest the target (more requests on a tie),
/// among windows with at least one such step when there are any.
pub fn mixed_window(steps: &[StepCounts], region: Span, target: &Target) -> Span {
    let n = target.num_steps.max(1);
    let stride = (n / (n / 2).clamp(1, 10)).max(1);
    let (s, e) = region;
    let make = |span: Span, len: usize| {
        let w = slice(steps, span);
        let with_context = w.iter().filter(|t| t.has_context()).count();
        let mean_requests = if w.is_empty() {
            0.0
        } else {
            w.iter().map(|t| t.num_requests() as f64).sum::<f64>() / w.len() as f64
        };
        Candidate {
            span,
            with_context,
            ratio: if len > 0 {
                with_context as f64 / len as f64
            } else {
                0.0
            },
            mean_requests,
        }
    };
    let candidates: Vec<Candidate> = if e.saturating_sub(s) >= n {
        (s..=e - n)
            .step_by(stride)
            .map(|s1| make((s1, s1 + n), n))
            .collect()
    } else {
        vec![make((s, e), slice(steps, (s, e)).len())]
    };
    let bearing: Vec<Candidate> = candidates
        .iter()
        .copied()
        .filter(|c| c.with_context > 0)
        .collect();
    let pool = if bearing.is_empty() {
        &candidates
    } else {
        &bearing
    };
    let mut best = pool[0];
    for c in &pool[1..] {
        let key = |c: &Candidate| ((c.ratio - target.ratio).abs(), -c.mean_requests);
        if key(c) < key(&best) {
            best = *c;
        }
    }
    best.span
}

/// The longest run (the first of equal ones) of steps for which `keep`
/// holds in `region`, cut to `num_steps` from its start; None without one.
pub fn longest_run(
    steps: &[StepCounts],
    region: Span,
    num_steps: usize,
    keep: impl Fn(&StepCounts) -> bool,
) -> Option<Span> {
    let (s, e) = region;
    let mut best: Option<Span> = None;
    let mut run: Option<usize> = None;
    let close = |start: usize, end: usize, best: &mut Option<Span>| {
        if best.is_none_or(|(bs, be)| end - start > be - bs) {
            *best = Some((start, end));
        }
    };
    for i in s..e {
        if steps.get(i).is_some_and(&keep) {
            run.get_or_insert(i);
        } else if let Some(start) = run.take() {
            close(start, i, &mut best);
        }
    }
    if let Some(start) = run {
        close(start, e, &mut best);
    }
    best.map(|(rs, re)| (rs, re.min(rs + num_steps)))
}

/// The two phases steady steps are divided into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Steps with at least one prefill request.
    PrefillDecodeMix,
    /// Steps with decode requests only.
    DecodeOnly,
}

impl Phase {
    /// The name used for its folder and files.
    pub fn name(self) -> &'static str {
        match self {
            Phase::PrefillDecodeMix => "prefilldecodemix",
            Phase::DecodeOnly => "decode_only",
        }
    }
}

/// The steps of `regions`, in region order, grouped into runs of one phase
/// (steps with no request are left out): each run's phase and step indices.
pub fn phase_runs(steps: &[StepCounts], regions: &[Span]) -> Vec<(Phase, Vec<usize>)> {
    let mut runs: Vec<(Phase, Vec<usize>)> = Vec::new();
    for &(s, e) in regions {
        for (i, step) in steps.iter().enumerate().take(e).skip(s) {
            let phase = if step.has_context() {
                Phase::PrefillDecodeMix
            } else if step.has_generation() {
                Phase::DecodeOnly
            } else {
                continue;
            };
            match runs.last_mut() {
                Some((p, idx)) if *p == phase => idx.push(i),
                _ => runs.push((phase, vec![i])),
            }
        }
    }
    runs
}

/// A window's phase summary: prefill-only, mixed and decode-only step
/// counts, and the mean batch size and request count (truncated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PhaseSummary {
    /// Steps with prefill requests only.
    pub num_prefill: usize,
    /// Steps with prefill and decode requests.
    pub num_prefilldecode: usize,
    /// Steps with decode requests only.
    pub num_decode: usize,
    /// Mean batch size, truncated.
    pub avg_bs: i128,
    /// Mean requests per step, truncated.
    pub avg_conc: i128,
}

/// The phase summary of `steps`.
pub fn summary(steps: &[StepCounts]) -> PhaseSummary {
    let mean = |f: fn(&StepCounts) -> i128| {
        if steps.is_empty() {
            return 0;
        }
        let sum: i128 = steps.iter().map(f).sum();
        (sum as f64 / steps.len() as f64).trunc() as i128
    };
    PhaseSummary {
        num_prefill: steps.iter().filter(|s| s.is_prefill_only()).count(),
        num_prefilldecode: steps.iter().filter(|s| s.is_mixed()).count(),
        num_decode: steps.iter().filter(|s| s.is_decode_only()).count(),
        avg_bs: mean(|s| s.batch_size),
        avg_conc: mean(StepCounts::num_requests),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(ctx: i128, generation: i128) -> StepCounts {
        StepCounts {
            batch_size: ctx * 100 + generation,
            context_requests: ctx,
            context_sum: ctx * 100,
            generation_requests: generation,
            generation_sum: generation,
        }
    }

    fn requests(n: &[i128]) -> Vec<StepCounts> {
        n.iter().map(|&r| step(0, r)).collect()
    }

    #[test]
    fn a_region_starts_after_six_steps_near_the_peak_and_stops_before_the_last() {
        // 4 steps at 2 requests, then 30 at 20: the region opens at the
        // first steady step and, still open, closes at the last index.
        let mut n = vec![2; 4];
        n.extend([20; 30]);
        assert_eq!(regions(&requests(&n), 32), (vec![(4, 33)], false));
    }

    #[test]
    fn alternating_steps_never_open_a_region() {
        // Ten steps alternating 20 and 2 requests: five near the peak, one
        // short of opening a region, so the middle is taken.
        let n: Vec<i128> = (0..10).map(|i| if i % 2 == 0 { 20 } else { 2 }).collect();
        assert_eq!(regions(&requests(&n), 12), (vec![(4, 6)], true));
        // A sixth near-peak step opens one, counted back from it.
        let n: Vec<i128> = n.into_iter().chain([20, 2]).collect();
        assert_eq!(regions(&requests(&n), 12), (vec![(5, 11)], false));
    }

    #[test]
    fn no_region_takes_the_middle() {
        let n = [1, 9, 1, 9, 1, 9, 1, 9, 1, 9];
        assert_eq!(regions(&requests(&n), 32), (vec![(5, 6)], true));
        assert_eq!(regions(&requests(&[3]), 32), (vec![(0, 1)], true));
    }

    #[test]
    fn windows_pick_the_mix_the_longest_decode_run_and_the_longest_prefill_run() {
        // Decode-only steps with a prefill-bearing step at 3 and at 9-10.
        let mut steps: Vec<StepCounts> = (0..16).map(|_| step(0, 20)).collect();
        steps[3] = step(1, 19);
        steps[9] = step(1, 19);
        steps[10] = step(1, 19);
        let target = Target {
            ratio: 0.125,
            num_steps: 8,
        };
        // Stride 8 / 4 = 2: windows at 0, 2, ..., 8; [0, 8) holds one of
        // eight (0.125), the first exact match.
        assert_eq!(mixed_window(&steps, (0, 16), &target), (0, 8));
        let dec = longest_run(&steps, (0, 16), 8, StepCounts::is_decode_only);
        assert_eq!(dec, Some((4, 9)));
        let pd = longest_run(&steps, (0, 16), 8, StepCounts::has_context);
        assert_eq!(pd, Some((9, 11)));
        assert_eq!(
            longest_run(&steps, (0, 3), 8, StepCounts::has_context),
            None
        );
    }

    #[test]
    fn the_ideal_ratio_raises_the_window() {
        let t = ideal_target(20, 64.0, 0.5, 8);
        assert!((t.ratio - 40.0 / 96.0).abs() < 1e-12);
        assert_eq!(t.num_steps, 8);
        assert_eq!(ideal_target(2, 100.0, 3.0, 8).num_steps, 50);
    }

    #[test]
    fn phases_group_runs_and_summaries_truncate() {
        let steps = vec![step(1, 0), step(0, 4), step(0, 5), step(0, 0), step(1, 3)];
        let runs = phase_runs(&steps, &[(0, 5)]);
        assert_eq!(
            runs,
            vec![
                (Phase::PrefillDecodeMix, vec![0]),
                (Phase::DecodeOnly, vec![1, 2]),
                (Phase::PrefillDecodeMix, vec![4]),
            ]
        );
        let s = summary(&steps);
        assert_eq!(
            (s.num_prefill, s.num_prefilldecode, s.num_decode),
            (1, 1, 2)
        );
        // Batches 100, 4, 5, 0, 103: mean 42.4; requests 1, 4, 5, 0, 4: 2.8.
        assert_eq!((s.avg_bs, s.avg_conc), (42, 2));
    }
}
