//! Diagnosis: whether a trace can be trusted ([`health`]) and what to do
//! about its GPU time ([`finding`]s), deterministic and evidence-cited.
//!
//! The health checks read the trace and its call tree; the finding rules
//! read the report's sheets and timeline, so that a finding's numbers are
//! the sheets' numbers. A rule whose figures a health check invalidates
//! abstains: it is listed as "cannot tell" with the check that stopped it,
//! never run on numbers the trace cannot back.
//!
//! - [`health`]: the checks;
//! - [`finding`]: the finding model (severity, impact, commands);
//! - [`rules`]: the finding rules;
//! - [`sheets`]: the `health` and `findings` sheets;
//! - [`fleet`]: the traces' diagnoses across a fleet;
//! - [`job`]: the check and findings of a multi-rank job's collectives.

pub mod device;
pub mod finding;
pub mod fleet;
pub mod health;
pub mod job;
pub mod rules;
pub mod sheets;

use crate::analysis::common::quality::TraceQuality;
use crate::analysis::common::timeline::Timeline;
use crate::analysis::pytorch::idle_causes::IdleGap;
use crate::gpu_arch::GpuArch;
use crate::table::Table;
use crate::trace::Trace;
use crate::trace::tree::Tree;
pub use finding::{Command, Confidence, Finding, Impact, Severity};
pub use health::{Check, Evidence, Status};
use rayon::prelude::*;

/// A figure of the report that a failed health check can invalidate and
/// a finding rule can need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Figure {
    /// The GPU timeline as a whole.
    Timeline,
    /// Idle time: the timeline's idle and the idle sheets.
    Idle,
    /// The kernel sheets' times.
    KernelSheets,
    /// The op sheets' kernel times.
    OpSheets,
    /// The roofline (perf model) sheets.
    Roofline,
    /// Launch delays: the host-wait causes.
    LaunchDelays,
    /// The critical path.
    CriticalPath,
    /// Figures per profiler step.
    Steps,
    /// The collectives matched across ranks: their skew, waits and
    /// stragglers.
    MatchedCollectives,
}

impl Figure {
    /// The figure's name in sheets and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Figure::Timeline => "gpu_timeline",
            Figure::Idle => "idle",
            Figure::KernelSheets => "kernel_sheets",
            Figure::OpSheets => "op_sheets",
            Figure::Roofline => "roofline",
            Figure::LaunchDelays => "launch_delays",
            Figure::CriticalPath => "critical_path",
            Figure::Steps => "steps",
            Figure::MatchedCollectives => "matched_collectives",
        }
    }
}

/// A finding rule that did not run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Abstention {
    /// The rule's finding id.
    pub id: &'static str,
    /// Why, for people (the check that stopped it, or what is missing).
    pub reason: String,
}

/// The health verdict, every check, the ranked findings and the rules
/// that abstained.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    /// The checks, in a fixed order.
    pub checks: Vec<Check>,
    /// The findings, ranked ([`finding::rank`]).
    pub findings: Vec<Finding>,
    /// The rules that could not tell.
    pub abstained: Vec<Abstention>,
}

impl Diagnosis {
    /// The worst check status (pass without checks).
    pub fn verdict(&self) -> Status {
        health::verdict(&self.checks)
    }

    /// The check that invalidates `figure`, if any.
    pub fn invalidating(&self, figure: Figure) -> Option<&Check> {
        self.checks
            .iter()
            .find(|c| c.status != Status::Pass && c.invalidates.contains(&figure))
    }
}

/// What the finding rules read: the report's results and the trace.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The trace.
    pub trace: &'a Trace,
    /// Its call tree.
    pub tree: &'a Tree,
    /// The report's sheets.
    pub sheets: &'a [Table],
    /// The GPU timeline, when there is GPU work.
    pub timeline: Option<&'a Timeline>,
    /// Trace-quality facts.
    pub quality: &'a TraceQuality,
    /// The GPU spec the roofline columns used, if any.
    pub arch: Option<&'a GpuArch>,
    /// The idle gaps of the idle analysis, with the causes of the
    /// host-wait ones.
    pub idle_gaps: &'a [IdleGap],
}

impl Inputs<'_> {
    /// The sheet `name`, when the report has it.
    pub fn sheet(&self, name: &str) -> Option<&Table> {
        crate::table::find(self.sheets, name)
    }

    /// The time shares are of, ms: the timeline's span (first GPU event
    /// start to last end); 0 without GPU work.
    pub fn base_ms(&self) -> f64 {
        self.timeline.map_or(0.0, |t| t.total / 1e3)
    }
}

/// Runs the health checks, then every finding rule whose figures stand.
pub fn diagnose(inputs: &Inputs) -> Diagnosis {
    // Gaps count only inside the timeline's window, which the shares are
    // of (work outside it, such as GPU events launched before profiling
    // began, is not in the span).
    let clipped = clip(inputs.idle_gaps, inputs.timeline);
    let inputs = &Inputs {
        idle_gaps: &clipped,
        ..*inputs
    };
    let gpu = health::GpuEvents::of(inputs.trace);
    // The rules run beside the checks, on every core; a rule a check
    // invalidates then abstains and its findings are dropped (a failed
    // check is rare, the wall time saved is not).
    let (checks, found) = rayon::join(
        || {
            let start = std::time::Instant::now();
            let checks = health::checks_of(inputs.trace, inputs.tree, &gpu);
            crate::timings::stage("diagnosis: health checks", start);
            checks
        },
        || {
            rules::RULES
                .par_iter()
                .map(|rule| {
                    let start = std::time::Instant::now();
                    let found = (rule.run)(inputs, &gpu);
                    crate::timings::stage(&format!("diagnosis: {}", rule.ids[0]), start);
                    found
                })
                .collect::<Vec<_>>()
        },
    );
    let mut d = Diagnosis {
        checks,
        findings: Vec::new(),
        abstained: Vec::new(),
    };
    for (rule, found) in rules::RULES.iter().zip(found) {
        let blocked = rule.needs.iter().find_map(|&f| d.invalidating(f));
        if let Some(c) = blocked {
            let reason = format!("{} is {}", c.id, c.status.as_str());
            for id in rule.ids {
                d.abstained.push(Abstention {
                    id,
                    reason: reason.clone(),
                });
            }
            continue;
        }
        match found {
            Ok(found) => d.findings.extend(found),
            Err(reason) => d.abstained.push(Abstention {
                id: rule.ids[0],
                reason,
            }),
        }
    }
    finding::rank(&mut d.findings);
    d
}

/// The idle gaps cut to the timeline's window (none without one).
fn clip(waits: &[IdleGap], timeline: Option<&Timeline>) -> Vec<IdleGap> {
    let Some(t) = timeline else {
        return Vec::new();
    };
    let (lo, hi) = (t.start, t.start + t.total);
    waits
        .iter()
        .filter_map(|w| {
            let (start, end) = (w.start.max(lo), w.end.min(hi));
            (start < end).then_some(IdleGap { start, end, ..*w })
        })
        .collect()
}
