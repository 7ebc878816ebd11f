//! Communication the GPU waits on: collective time not hidden under
//! compute.

use super::super::health::{Evidence, GpuEvents};
use super::super::{Confidence, Finding, Inputs};
use super::{impact_against, worth_against};
use crate::analysis::common::timeline::Timeline;

/// Communication not overlapped with computation.
pub const EXPOSED: &str = "comm.exposed";

/// `comm.exposed`: the timeline's exposed communication, with the share
/// of communication that compute hides.
pub fn exposed(inputs: &Inputs, _gpu: &GpuEvents) -> Result<Vec<Finding>, String> {
    Ok(inputs.timeline.map_or_else(Vec::new, exposed_in))
}

/// `comm.exposed` of a GPU timeline, against its span.
pub fn exposed_in(t: &Timeline) -> Vec<Finding> {
    let base_ms = t.total / 1e3;
    let ms = t.exposed_comm / 1e3;
    let total_ms = t.total_comm / 1e3;
    if !worth_against(base_ms, ms) {
        return Vec::new();
    }
    let overlap_pct = if total_ms > 0.0 {
        100.0 * (1.0 - ms / total_ms)
    } else {
        0.0
    };
    // Overlap rarely hides all of it: data dependencies keep some exposed.
    let imp = impact_against(base_ms, ms, 0.25, 0.5, 1.0);
    let summary = format!(
        "{ms:.3} ms of communication ({:.1}% of the GPU span) ran with no compute beside it; compute hid {overlap_pct:.1}% of the {total_ms:.3} ms of communication",
        imp.share_pct(ms)
    );
    let mut f = Finding::new(
        EXPOSED,
        Confidence::High,
        summary,
        imp,
        vec![
            Evidence::new("exposed_comm", ms, "ms"),
            Evidence::new("total_comm", total_ms, "ms"),
            Evidence::new("overlap_ratio", overlap_pct, "%"),
        ],
    );
    f.actions = vec![
        "overlap collectives with compute: DDP/FSDP bucketing and prefetch (forward/backward prefetch, limit_all_gathers), async tensor-parallel collectives",
        "compare the ranks: a slow rank makes the others wait inside their collectives (`tracelens collectives` on the rank traces)",
    ];
    vec![f]
}
