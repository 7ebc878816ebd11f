//! Per-step figures of one trace: for each `ProfilerStep#N` range that the
//! profiler recorded on the CPU, the GPU work launched while it ran and
//! where that work's time went (the `gpu_timeline` buckets over the step).
//!
//! A GPU event belongs to the step during which its launching runtime call
//! started. The launch time, not the call tree, decides: backward ops run
//! on autograd threads that are not below the step's annotation.

use super::intervals::Interval;
use super::timeline::{Bucket, classify, from_intervals};
use crate::trace::tree::Tree;
use crate::trace::{Cat, Trace};

/// The name prefix of the profiler's step annotations.
const STEP_PREFIX: &str = "ProfilerStep#";

/// One profiler step of one trace. Times in µs; the GPU figures are NaN
/// when the step launched no GPU work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepFigures {
    /// The step number (`N` of `ProfilerStep#N`).
    pub step: i64,
    /// Start of the CPU range.
    pub cpu_start: f64,
    /// Length of the CPU range.
    pub cpu_dur: f64,
    /// Start of the step's first GPU event.
    pub gpu_start: f64,
    /// From the first GPU start to the last GPU end of the step's events.
    pub gpu_span: f64,
    /// Union of the step's GPU activity.
    pub busy: f64,
    /// Union of its computation kernels.
    pub computation: f64,
    /// Its communication not hidden under computation.
    pub exposed_comm: f64,
    /// Its copies hidden under neither computation nor communication.
    pub exposed_memcpy: f64,
    /// `gpu_span - busy`.
    pub idle: f64,
    /// GPU events (kernels, copies, fills) launched in the step.
    pub gpu_events: usize,
}

/// The step number of a `ProfilerStep#N` name.
fn step_number(name: &str) -> Option<i64> {
    name.strip_prefix(STEP_PREFIX)?.trim().parse().ok()
}

/// The trace's profiler steps in time order with their GPU figures (empty
/// when it recorded no `ProfilerStep#N` range).
pub fn profiler_steps(trace: &Trace, tree: &Tree) -> Vec<StepFigures> {
    // (start, end, number) of each CPU step range.
    let mut ranges: Vec<(f64, f64, i64)> = trace
        .events()
        .filter(|(_, e)| e.cat == Cat::UserAnnotation && !e.ts.is_nan() && !e.dur.is_nan())
        .filter_map(|(_, e)| Some((e.ts, e.t_end(), step_number(trace.name_of(e))?)))
        .collect();
    ranges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    if ranges.is_empty() {
        return Vec::new();
    }
    // Per step: all, computation, communication and copy intervals.
    let mut parts: Vec<[Vec<Interval>; 4]> = vec![Default::default(); ranges.len()];
    for (id, e) in trace.events() {
        if !e.cat.is_gpu() || e.ts.is_nan() {
            continue;
        }
        let Some(launch) = tree.parent(id) else {
            continue;
        };
        let at = trace.event(launch).ts;
        // The last range starting at or before the launch, if it is still open.
        let k = ranges.partition_point(|r| r.0 <= at);
        if k == 0 || at > ranges[k - 1].1 {
            continue;
        }
        let iv = (e.ts, e.t_end());
        let p = &mut parts[k - 1];
        p[0].push(iv);
        let slot = match classify(e.cat, trace.name_of(e)) {
            Bucket::Computation => 1,
            Bucket::Communication => 2,
            Bucket::Memcpy => 3,
        };
        p[slot].push(iv);
    }
    ranges
        .iter()
        .zip(parts)
        .map(|(&(start, end, step), [all, comp, comm, copy])| {
            let gpu_events = all.len();
            let gpu_start = all.iter().map(|iv| iv.0).fold(f64::NAN, f64::min);
            let t = from_intervals(all, comp, comm, copy, None);
            let get = |f: fn(&super::timeline::Timeline) -> f64| t.as_ref().map_or(f64::NAN, f);
            StepFigures {
                step,
                cpu_start: start,
                cpu_dur: end - start,
                gpu_start,
                gpu_span: get(|t| t.total),
                busy: get(|t| t.busy),
                computation: get(|t| t.computation),
                exposed_comm: get(|t| t.exposed_comm),
                exposed_memcpy: get(|t| t.exposed_memcpy),
                idle: get(|t| t.idle),
                gpu_events,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;
    use crate::trace::tree::{TreeOptions, build};

    #[test]
    fn gpu_work_goes_to_the_step_that_launched_it() {
        // Two steps; step 1 launches a compute kernel and an all-reduce that
        // overlaps it by 5 µs; step 2's launch comes from another thread.
        let trace = trace_of_json(
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":2,"args":{"correlation":1}},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":2,"args":{"correlation":2}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":20,"args":{"correlation":1}},
            {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":8,"ts":45,"dur":15,"args":{"correlation":2}},
            {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":100,"dur":100},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":150,"dur":2,"args":{"correlation":3}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":160,"dur":10,"args":{"correlation":3}},
            {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":250,"dur":2,"args":{"correlation":4}},
            {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":260,"dur":10,"args":{"correlation":4}}"#,
        );
        let tree = build(&trace, TreeOptions::default());
        let steps = profiler_steps(&trace, &tree);
        assert_eq!(steps.len(), 2);
        let s = steps[0];
        assert_eq!((s.step, s.cpu_start, s.cpu_dur), (1, 0.0, 100.0));
        assert_eq!((s.gpu_start, s.gpu_span, s.busy), (30.0, 30.0, 30.0));
        assert_eq!((s.computation, s.exposed_comm, s.idle), (20.0, 10.0, 0.0));
        assert_eq!(s.gpu_events, 2);
        let s = steps[1];
        assert_eq!(
            (s.step, s.gpu_events, s.busy, s.gpu_span),
            (2, 1, 10.0, 10.0)
        );
    }

    #[test]
    fn no_steps_and_steps_without_gpu_work() {
        assert_eq!(step_number("ProfilerStep#12"), Some(12));
        assert_eq!(step_number("ProfilerStep#x"), None);
        let trace = trace_of_json(
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":10}"#,
        );
        let tree = build(&trace, TreeOptions::default());
        let steps = profiler_steps(&trace, &tree);
        assert_eq!(steps.len(), 1);
        assert!(steps[0].busy.is_nan() && steps[0].gpu_events == 0);
        let none = trace_of_json(
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10}"#,
        );
        let tree = build(&none, TreeOptions::default());
        assert!(profiler_steps(&none, &tree).is_empty());
    }
}
