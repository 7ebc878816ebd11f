//! Trace-quality facts: how much of the GPU work the report could attribute,
//! and what the user can do about the rest. Printed on stderr and in the
//! summary page, never in a sheet.

use crate::analysis::ReportOptions;
use crate::analysis::common::intervals::{Interval, length, union};
use crate::analysis::common::timeline::Timeline;
use crate::trace::Trace;
use crate::trace::tree::{LinkMode, Tree, is_graph_launch};

/// GPU time launched by graph launches (their kernels are booked to the launch
/// itself, since the ops that captured them are in another trace).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphWork {
    /// Graph launches that launched GPU work.
    pub launches: usize,
    /// Name of the first such launch (`hipGraphLaunch`, `cudaGraphLaunch`).
    pub name: String,
    /// GPU events they launched.
    pub gpu_events: usize,
    /// Union of those events' intervals, µs.
    pub busy_us: f64,
}

/// Facts about how well the trace could be analysed.
#[derive(Debug, Clone, Default)]
pub struct TraceQuality {
    /// GPU events in the trace.
    pub gpu_events: usize,
    /// GPU events no launch claimed (left out of the op sheets, and of the
    /// timeline unless `include_unlinked_kernels`).
    pub unlinked_gpu_events: usize,
    /// GPU time only unlinked events cover, µs: union of all GPU events minus
    /// union of the linked ones.
    pub unlinked_us: f64,
    /// Whether `--include-unlinked-kernels` counted them in the timeline.
    pub include_unlinked_kernels: bool,
    /// True when launches were linked by correlation because the trace has no
    /// flows and its graph launches (if any) linked nothing.
    pub linked_by_correlation: bool,
    /// True when the trace has no flows and, as in the reference, only its
    /// graph launches were linked.
    pub graph_launches_only: bool,
    /// GPU work still booked to graph launches; None when there is none.
    pub graph_work: Option<GraphWork>,
    /// The timeline's busy time, µs (the base of the graph-work percentage).
    pub busy_us: f64,
    /// Loader warnings.
    pub warnings: Vec<String>,
    /// What the capture merge (`--capture-dir`) did; None without one.
    pub capture: Option<CaptureNotes>,
    /// The GPU the trace names and the spec the report used; None when
    /// the report was not made by [`crate::analyze`].
    pub gpu: Option<crate::gpu_arch::DetectedGpu>,
}

/// The capture merge's notes: the outcome and every warning.
#[derive(Debug, Clone, Default)]
pub struct CaptureNotes {
    /// One line per fact (merged launches, launches left unmerged and why,
    /// discarded capture launches, inferred capture details).
    pub notes: Vec<String>,
}

impl TraceQuality {
    /// The facts about `trace` and its `tree`, reported with `opts`, whose GPU
    /// timeline is `timeline`.
    pub fn of(
        trace: &Trace,
        tree: &Tree,
        opts: &ReportOptions,
        timeline: Option<&Timeline>,
    ) -> Self {
        let mut all: Vec<Interval> = Vec::new();
        let mut linked: Vec<Interval> = Vec::new();
        let mut graph = GraphWork::default();
        let mut graph_iv: Vec<Interval> = Vec::new();
        let mut launches: Vec<crate::trace::EventId> = Vec::new();
        for (i, e) in trace.events() {
            if !e.cat.is_gpu() {
                continue;
            }
            let iv = (e.ts, e.t_end());
            all.push(iv);
            let Some(p) = tree.parent(i) else { continue };
            linked.push(iv);
            let pe = trace.event(p);
            if pe.cat.is_runtime() && is_graph_launch(trace.name_of(pe)) {
                graph_iv.push(iv);
                if graph.name.is_empty() {
                    graph.name = trace.name_of(pe).to_string();
                }
                launches.push(p);
            }
        }
        let unlinked_us = if tree.gpu_unlinked > 0 {
            length(&union(all)) - length(&union(linked))
        } else {
            0.0
        };
        let graph_work = (!graph_iv.is_empty()).then(|| {
            launches.sort_unstable();
            launches.dedup();
            graph.launches = launches.len();
            graph.gpu_events = graph_iv.len();
            graph.busy_us = length(&union(graph_iv));
            graph
        });
        TraceQuality {
            gpu_events: tree.gpu_total,
            unlinked_gpu_events: tree.gpu_unlinked,
            unlinked_us,
            include_unlinked_kernels: opts.include_unlinked_kernels,
            linked_by_correlation: tree.link_mode == LinkMode::CorrelationOnly
                && tree.gpu_total > 0,
            graph_launches_only: tree.link_mode == LinkMode::NoFlows && tree.gpu_total > 0,
            graph_work,
            busy_us: timeline.map_or(0.0, |t| t.busy),
            warnings: trace.warnings().to_vec(),
            capture: None,
            gpu: None,
        }
    }

    /// One-line-per-fact note for people; empty when all is well.
    pub fn notes(&self) -> Vec<String> {
        let mut out = self.warnings.clone();
        if let Some(c) = &self.capture {
            out.extend(c.notes.iter().cloned());
        }
        out.extend(self.gpu.as_ref().and_then(|g| g.note()));
        if self.gpu_events == 0 {
            out.push(
                "the trace has no GPU events (kernels, copies, fills): GPU sheets are empty".into(),
            );
        }
        if self.linked_by_correlation {
            out.push(
                "the trace has no launch flow events (ac2g); launches were linked to GPU work by their correlation id"
                    .into(),
            );
        }
        if self.graph_launches_only {
            out.push(
                "the trace has no launch flow events (ac2g): as in the reference, only graph launches were linked to their GPU work (by correlation id); ordinary launches stay unlinked"
                    .into(),
            );
        }
        if let Some(g) = &self.graph_work {
            out.push(self.graph_note(g));
        }
        if self.unlinked_gpu_events > 0 {
            out.push(self.unlinked_note());
        }
        out
    }

    /// How much GPU time graph launches hide, and how to recover the ops.
    fn graph_note(&self, g: &GraphWork) -> String {
        let pct = if self.busy_us > 0.0 {
            g.busy_us / self.busy_us * 100.0
        } else {
            0.0
        };
        let head = format!(
            "{} graph launch{} (`{}`) launched {} GPU events: {:.3} ms = {:.1}% of GPU busy time",
            g.launches,
            if g.launches == 1 { "" } else { "es" },
            g.name,
            g.gpu_events,
            g.busy_us / 1e3,
            pct
        );
        if self.capture.is_some() {
            format!(
                "{head}, still booked to the launch itself because the capture merge left {} unmerged (see the warnings above)",
                if g.launches == 1 { "it" } else { "them" }
            )
        } else {
            format!(
                "{head}, booked to the launch itself because the ops that captured those kernels are in a separate capture trace: rerun with `--capture-dir DIR` (the folder of capture traces) to attribute them to their ops"
            )
        }
    }

    /// How many GPU events (and how much GPU time) no launch claimed.
    fn unlinked_note(&self) -> String {
        let why = if self.graph_launches_only {
            "no launch flow event links them"
        } else {
            "launched before profiling started, or CPU side missing"
        };
        let fate = if self.include_unlinked_kernels {
            "`--include-unlinked-kernels` counts them in gpu_timeline; they stay out of the op sheets"
        } else {
            "they are left out of gpu_timeline and the op sheets; `--include-unlinked-kernels` counts them in gpu_timeline"
        };
        format!(
            "{} of {} GPU events ({:.3} ms of GPU time) have no host launch in the trace ({why}); {fate}",
            self.unlinked_gpu_events,
            self.gpu_events,
            self.unlinked_us / 1e3
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_note_counts_launches_and_guards_an_empty_timeline() {
        let q = TraceQuality {
            gpu_events: 8,
            graph_work: Some(GraphWork {
                launches: 2,
                name: "cudaGraphLaunch".into(),
                gpu_events: 8,
                busy_us: 1500.0,
            }),
            busy_us: 0.0,
            ..Default::default()
        };
        assert_eq!(
            q.notes()[0],
            "2 graph launches (`cudaGraphLaunch`) launched 8 GPU events: 1.500 ms = 0.0% of GPU busy time, booked to the launch itself because the ops that captured those kernels are in a separate capture trace: rerun with `--capture-dir DIR` (the folder of capture traces) to attribute them to their ops"
        );
        let q = TraceQuality {
            busy_us: 2000.0,
            ..q
        };
        assert!(q.notes()[0].contains("1.500 ms = 75.0% of GPU busy time"));
        let q = TraceQuality {
            capture: Some(CaptureNotes {
                notes: vec!["capture merge: merged 1 graph launch".into()],
            }),
            ..q
        };
        let notes = q.notes();
        assert_eq!(notes[0], "capture merge: merged 1 graph launch");
        assert!(notes[1].ends_with(
            "still booked to the launch itself because the capture merge left them unmerged (see the warnings above)"
        ));
    }
}
