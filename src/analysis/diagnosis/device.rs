//! The diagnosis of a trace without PyTorch's host call tree (JAX XPlane,
//! rocprofv3): the health checks its GPU work supports, the others as
//! `cannot_tell` with the reason, and the findings its GPU timeline
//! supports (`comm.exposed`); every other rule reads the call tree and
//! abstains, saying so.

use super::health::{
    self, CHECK_IDS, Check, Evidence, GpuEvents, MAX_EVENTS, Status, clock_skew, no_gpu,
    overlapping_kernels, truncated,
};
use super::rules::{self, comm};
use super::{Abstention, Diagnosis, Figure, finding};
use crate::analysis::common::intervals::{length, union};
use crate::analysis::common::timeline::Timeline;
use crate::trace::{EventId, Trace};

/// What the checks read of such a trace.
pub struct DeviceTrace<'a> {
    /// The trace format as the reasons name it: `JAX`, `rocprofv3`.
    pub format: &'static str,
    /// The trace (its profiler steps and launch calls, where it has them).
    pub trace: &'a Trace,
    /// Its GPU work.
    pub gpu: GpuEvents,
    /// The host call that launched a GPU event, where the format links
    /// them (None: it links none).
    pub launch: Option<&'a dyn Fn(EventId) -> Option<EventId>>,
    /// (kernels whose op shapes the trace records, kernels), where the
    /// format can record shapes.
    pub shapes: Option<(usize, usize)>,
    /// The GPU timeline, when the report splits one into compute,
    /// communication and copies.
    pub timeline: Option<&'a Timeline>,
}

/// The checks (in [`CHECK_IDS`] order), then `comm.exposed` where the
/// timeline supports it; every other rule abstains.
pub fn diagnose(t: &DeviceTrace) -> Diagnosis {
    let format = t.format;
    let cannot =
        |id: &'static str, why: String| health::check(id, Status::CannotTell, why, Vec::new());
    let checks = vec![
        no_gpu(&t.gpu),
        match t.launch {
            Some(launch) => unlinked(&t.gpu, launch),
            None => cannot(
                "health.unlinked_kernels",
                format!("{format} traces link no host launch to their GPU work"),
            ),
        },
        overlapping_kernels(&t.gpu),
        match t.launch {
            Some(launch) => clock_skew(t.trace, &t.gpu, launch),
            None => cannot(
                "health.clock_skew",
                format!(
                    "{format} traces link no host launch to their GPU work: launch and start cannot be set side by side"
                ),
            ),
        },
        cannot(
            "health.dropped_kernels",
            format!("launch calls without GPU work are not counted in {format} traces"),
        ),
        cannot(
            "health.graph_hidden",
            format!("graph launches are not read from {format} traces"),
        ),
        shapes(t),
        truncated(t.trace),
        cannot(
            "health.uneven_steps",
            format!("profiler steps are not read from {format} traces"),
        ),
    ];
    debug_assert!(checks.iter().map(|c| c.id).eq(CHECK_IDS.iter().copied()));
    let mut d = Diagnosis {
        checks,
        findings: Vec::new(),
        abstained: Vec::new(),
    };
    let blocked = d
        .invalidating(Figure::Timeline)
        .map(|c| format!("{} is {}", c.id, c.status.as_str()));
    match (blocked, t.timeline) {
        (Some(reason), _) => d.abstained.push(Abstention {
            id: comm::EXPOSED,
            reason,
        }),
        (None, Some(timeline)) => d.findings.extend(comm::exposed_in(timeline)),
        (None, None) => d.abstained.push(Abstention {
            id: comm::EXPOSED,
            reason: format!(
                "the {format} report's GPU timeline does not split communication from compute"
            ),
        }),
    }
    for id in rules::RULES.iter().flat_map(|r| r.ids.iter().copied()) {
        if id != comm::EXPOSED {
            d.abstained.push(Abstention {
                id,
                reason: format!(
                    "the rule reads the host call tree of a PyTorch trace, which {format} traces do not have"
                ),
            });
        }
    }
    finding::rank(&mut d.findings);
    d
}

/// `health.unlinked_kernels` where the timeline counts every GPU event,
/// launched or not: unlinked work is in the kernel sheets, only without
/// its op's shapes, so the check warns and invalidates nothing.
fn unlinked(gpu: &GpuEvents, launch: &dyn Fn(EventId) -> Option<EventId>) -> Check {
    let (mut ivs, mut events) = (Vec::new(), Vec::new());
    for (a, b, id) in gpu.events() {
        if launch(id).is_none() {
            ivs.push((a, b));
            if events.len() < MAX_EVENTS {
                events.push(id);
            }
        }
    }
    let n = ivs.len();
    let us = length(&union(ivs));
    let pct = gpu.share_pct(us);
    let status = match (gpu.len(), n) {
        (0, _) => Status::CannotTell,
        (_, 0) => Status::Pass,
        _ => Status::Warn,
    };
    let mut c = health::check(
        "health.unlinked_kernels",
        status,
        format!(
            "{n} of {} GPU events have no host launch in the trace: {:.3} ms ({pct:.2}% of GPU busy time), in the kernel sheets without their op's shapes",
            gpu.len(),
            us / 1e3
        ),
        vec![
            Evidence::new("unlinked_gpu_events", n as f64, "count"),
            Evidence::new("unlinked_gpu_time", us / 1e3, "ms"),
            Evidence::new("share_of_gpu_busy", pct, "%"),
        ],
    );
    c.events = events;
    c
}

/// `health.no_shapes` of kernels: warn when none has its op's shapes (the
/// roofline figures cannot be given).
fn shapes(t: &DeviceTrace) -> Check {
    let Some((shaped, kernels)) = t.shapes else {
        return health::check(
            "health.no_shapes",
            Status::CannotTell,
            format!("{} traces record no op shapes", t.format),
            Vec::new(),
        );
    };
    health::no_shapes_of(
        ["kernels", "kernels_with_shapes"],
        (kernels, shaped),
        format!("{shaped} of {kernels} kernels have the shapes of their op"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::trace_of_json;

    fn status<'a>(d: &'a Diagnosis, id: &str) -> (&'static str, &'a str) {
        let c = d.checks.iter().find(|c| c.id == id).unwrap();
        (c.status.as_str(), &c.summary)
    }

    fn reason<'a>(d: &'a Diagnosis, id: &str) -> Option<&'a str> {
        d.abstained
            .iter()
            .find(|a| a.id == id)
            .map(|a| a.reason.as_str())
    }

    /// A trace of one host call: the checks that read the trace itself
    /// (its steps) have something to read.
    fn host_only() -> Trace {
        trace_of_json(
            r#"{"ph": "X", "cat": "cpu_op", "name": "f", "ts": 0, "dur": 1, "pid": 1, "tid": 1}"#,
        )
    }

    /// rocprofv3-like: dispatches without events or launches.
    fn dispatches<'a>(trace: &'a Trace, work: &[(i64, f64, f64)]) -> DeviceTrace<'a> {
        let work = work.iter().map(|&(s, a, b)| (s, a, b, None)).collect();
        DeviceTrace {
            format: "rocprofv3",
            trace,
            gpu: GpuEvents::of_work(work),
            launch: None,
            shapes: None,
            timeline: None,
        }
    }

    #[test]
    fn dispatches_overlapping_on_one_stream_fail_and_unread_checks_cannot_tell() {
        let trace = host_only();
        // 40 of the 110 µs busy overlap on stream 0; stream 1 and the
        // copies (stream -1) are apart.
        let t = dispatches(
            &trace,
            &[
                (0, 0.0, 100.0),
                (0, 60.0, 110.0),
                (1, 0.0, 10.0),
                (-1, 0.0, 50.0),
                (-1, 10.0, 60.0),
            ],
        );
        let d = diagnose(&t);
        let (s, text) = status(&d, "health.overlapping_kernels");
        assert_eq!(s, "fail", "{text}");
        assert!(
            text.starts_with("1 pairs of GPU events on one stream overlap"),
            "{text}"
        );
        assert_eq!(status(&d, "health.no_gpu").0, "pass");
        for id in [
            "health.unlinked_kernels",
            "health.clock_skew",
            "health.dropped_kernels",
            "health.graph_hidden",
            "health.no_shapes",
        ] {
            let (s, text) = status(&d, id);
            assert_eq!(s, "cannot_tell", "{id}");
            assert!(text.contains("rocprofv3"), "{id}: {text}");
        }
        assert!(d.findings.is_empty());
        assert!(
            reason(&d, comm::EXPOSED)
                .unwrap()
                .contains("does not split communication")
        );
        assert!(
            reason(&d, "idle.host_bound")
                .unwrap()
                .contains("host call tree")
        );
        // Every rule id is answered once: a finding or an abstention.
        let ids: Vec<&str> = rules::RULES
            .iter()
            .flat_map(|r| r.ids.iter().copied())
            .collect();
        assert_eq!(d.abstained.len(), ids.len());
    }

    #[test]
    fn apart_dispatches_pass_and_no_work_fails_no_gpu() {
        let trace = host_only();
        let d = diagnose(&dispatches(&trace, &[(0, 0.0, 10.0), (0, 10.0, 20.0)]));
        assert_eq!(status(&d, "health.overlapping_kernels").0, "pass");
        let d = diagnose(&dispatches(&trace, &[]));
        assert_eq!(status(&d, "health.no_gpu").0, "fail");
        assert_eq!(status(&d, "health.overlapping_kernels").0, "cannot_tell");
        // No GPU work invalidates the timeline: comm.exposed says why.
        assert_eq!(reason(&d, comm::EXPOSED), Some("health.no_gpu is fail"));
    }

    /// Kernels at `(ts, dur)`, each with correlation `i`.
    fn kernels(spans: &[(f64, f64)]) -> Trace {
        let events: Vec<String> = spans
            .iter()
            .enumerate()
            .map(|(i, (ts, dur))| {
                format!(
                    r#"{{"ph": "X", "cat": "kernel", "name": "k{i}", "ts": {ts}, "dur": {dur}, "pid": 0, "tid": 7, "args": {{"stream": 7}}}}"#
                )
            })
            .collect();
        trace_of_json(&events.join(","))
    }

    #[test]
    fn work_without_a_launch_warns_and_invalidates_nothing() {
        let trace = kernels(&[(0.0, 30.0), (40.0, 10.0)]);
        let gpu = GpuEvents::of(&trace);
        let first = gpu.events().next().unwrap().2;
        // The first kernel has a launch; the second none.
        let launch = move |id: EventId| (id == first).then_some(id);
        let t = DeviceTrace {
            format: "JAX",
            trace: &trace,
            gpu,
            launch: Some(&launch),
            shapes: Some((0, 2)),
            timeline: Some(&Timeline {
                computation: 40.0,
                busy: 40.0,
                total: 50.0,
                idle: 10.0,
                ..Timeline::default()
            }),
        };
        let d = diagnose(&t);
        let c = d
            .checks
            .iter()
            .find(|c| c.id == "health.unlinked_kernels")
            .unwrap();
        assert_eq!(c.status, Status::Warn);
        assert!(
            c.summary.starts_with("1 of 2 GPU events have no host launch in the trace: 0.010 ms (25.00% of GPU busy time)"),
            "{}",
            c.summary
        );
        assert!(c.invalidates.is_empty());
        assert_eq!(c.events.len(), 1);
        // No kernel has its op's shapes: the roofline figures go.
        let c = d
            .checks
            .iter()
            .find(|c| c.id == "health.no_shapes")
            .unwrap();
        assert_eq!(
            (c.status, c.summary.as_str()),
            (Status::Warn, "0 of 2 kernels have the shapes of their op")
        );
        assert_eq!(c.invalidates, vec![Figure::Roofline]);
        // A timeline without communication: comm.exposed is silent and
        // does not abstain.
        assert!(d.findings.is_empty());
        assert_eq!(reason(&d, comm::EXPOSED), None);
        // The one launch given (the kernel itself) does not start after
        // its kernel.
        assert_eq!(status(&d, "health.clock_skew").0, "pass");
        // A launch 40 µs after its kernel's start is skew.
        let second = t.gpu.events().nth(1).unwrap().2;
        let late = move |id: EventId| (id == first).then_some(second);
        let skewed = DeviceTrace {
            launch: Some(&late),
            gpu: GpuEvents::of(&trace),
            ..t
        };
        assert_ne!(status(&diagnose(&skewed), "health.clock_skew").0, "pass");
        let t = skewed;

        let all = |id: EventId| Some(id);
        let t = DeviceTrace {
            launch: Some(&all),
            ..t
        };
        assert_eq!(status(&diagnose(&t), "health.unlinked_kernels").0, "pass");
    }

    #[test]
    fn exposed_communication_on_the_timeline_is_a_finding() {
        let trace = host_only();
        let timeline = Timeline {
            computation: 60.0,
            exposed_comm: 30.0,
            total_comm: 50.0,
            busy: 90.0,
            total: 100.0,
            idle: 10.0,
            ..Timeline::default()
        };
        let t = DeviceTrace {
            timeline: Some(&timeline),
            ..dispatches(&trace, &[(0, 0.0, 90.0)])
        };
        let d = diagnose(&t);
        assert_eq!(d.findings.len(), 1);
        assert_eq!(d.findings[0].id, comm::EXPOSED);
        assert_eq!(reason(&d, comm::EXPOSED), None);
    }
}
