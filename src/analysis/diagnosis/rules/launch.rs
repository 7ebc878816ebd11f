//! Kernels shorter than their launch: the host cannot launch them as fast
//! as the GPU runs them, and the GPU idles between them.

use super::super::health::{Evidence, GpuEvents, MAX_EVENTS};
use super::super::{Command, Confidence, Finding, Inputs};
use super::{impact, worth};
use crate::analysis::pytorch::idle_causes::{Cause, IdleGap};

/// Many kernels shorter than their launch overhead, the GPU idle between.
pub const LAUNCH_BOUND: &str = "kernels.launch_bound";

/// A gap is launch-bound when it is at most this many times its next
/// kernel's launch call: longer, the host was doing something else.
pub const GAP_PER_LAUNCH: f64 = 2.0;

/// A launch call longer than this (µs) is not launch overhead but a host
/// stall inside the call (`idle.host_bound`'s).
pub const MAX_LAUNCH_US: f64 = 50.0;

/// A kernel that started more than this (µs) after its launch call began
/// was queued behind other work, so a gap before it is not the launch's:
/// on an empty queue kernels start 5–7 µs after their launch on the H100
/// traces of the corpus and 17–26 µs on the MI300 ones.
pub const MAX_LAUNCH_LATENCY_US: f64 = 50.0;

/// Fewer launch-bound gaps than this are no pattern.
pub const MIN_GAPS: usize = 50;

/// Whether an idle gap is a launch-bound one: its next kernel ran shorter
/// than its launch call took, the call was no longer than
/// [`MAX_LAUNCH_US`], the kernel started within [`MAX_LAUNCH_LATENCY_US`]
/// of the call (it was not queued behind other work), the gap is no
/// longer than [`GAP_PER_LAUNCH`] launches (the host was launching, not
/// elsewhere), and the host was not in a sync or a blocking copy. The gap
/// need not be a host wait: a launch that began just before the GPU ran
/// dry still arrives one launch latency later.
pub fn is_launch_bound(inputs: &Inputs, w: &IdleGap) -> bool {
    let Some(launch) = w.launch else {
        return false;
    };
    if matches!(w.wait(), Some(Cause::Sync | Cause::BlockingCopy)) {
        return false;
    }
    let call = inputs.trace.event(launch);
    let kernel = inputs.trace.event(w.next);
    call.dur <= MAX_LAUNCH_US
        && kernel.dur < call.dur
        && kernel.ts - call.ts <= MAX_LAUNCH_LATENCY_US
        && w.end - w.start <= GAP_PER_LAUNCH * call.dur
}

/// `kernels.launch_bound`: GPU idle in gaps before kernels shorter than
/// their launch, when there are at least [`MIN_GAPS`] of them.
pub fn launch_bound(inputs: &Inputs, gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    super::idle::has_host_side(inputs)?;
    let mut gaps: Vec<(f64, &IdleGap)> = inputs
        .idle_gaps
        .iter()
        .filter(|w| is_launch_bound(inputs, w))
        .map(|w| (super::idle::idle_us(gpu, w), w))
        .filter(|g| g.0 > 0.0)
        .collect();
    let ms = super::idle::idle_ms(gpu, gaps.iter().map(|g| g.1));
    if gaps.len() < MIN_GAPS || !worth(inputs, ms) {
        return Ok(Vec::new());
    }
    gaps.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.start.total_cmp(&b.1.start)));
    let trace = inputs.trace;
    let mut launch_us: Vec<f64> = gaps
        .iter()
        .filter_map(|g| Some(trace.event(g.1.launch?).dur))
        .collect();
    let mut kernel_us: Vec<f64> = gaps.iter().map(|g| trace.event(g.1.next).dur).collect();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (launch_med, kernel_med) = (median(&mut launch_us), median(&mut kernel_us));
    let imp = impact(inputs, ms, 0.25, 0.5, 1.0);
    let summary = format!(
        "{} kernels ran shorter than their launch (median {kernel_med:.1} µs against {launch_med:.1} µs to launch): the GPU sat idle {ms:.3} ms ({:.1}% of the GPU span) between them",
        gaps.len(),
        imp.share_pct(ms)
    );
    let mut f = Finding::new(
        LAUNCH_BOUND,
        Confidence::Medium,
        summary,
        imp,
        vec![
            Evidence::new("launch_bound_kernels", gaps.len() as f64, "count"),
            Evidence::new("gpu_idle_between_them", ms, "ms"),
            Evidence::new("median_kernel", kernel_med, "us"),
            Evidence::new("median_launch_call", launch_med, "us"),
        ],
    );
    let mut names: Vec<&str> = gaps.iter().map(|g| trace.name(g.1.next)).collect();
    names.sort_unstable();
    f.subject = most_common(&names).map(str::to_string);
    f.events = gaps.iter().take(MAX_EVENTS).map(|g| g.1.next).collect();
    f.actions = vec![
        "capture the steady-state step in a CUDA/HIP graph (torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")) so that one launch replays many kernels",
        "fuse the small ops (torch.compile, fused optimizers with foreach=True or fused=True) or batch the work into fewer, larger kernels",
    ];
    f.commands = vec![Command::on_trace(
        "report",
        &["--idle-details", "--csv", "idle_report"],
    )];
    Ok(vec![f])
}

/// The most frequent item of a sorted list (the first at equal counts).
fn most_common<'a>(sorted: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<(&str, usize)> = None;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].partition_point(|&s| s == sorted[i]) + i;
        if best.is_none_or(|(_, n)| j - i > n) {
            best = Some((sorted[i], j - i));
        }
        i = j;
    }
    best.map(|(s, _)| s)
}
