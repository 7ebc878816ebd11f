//! The finding rules: each reads the report's results ([`Inputs`]) and
//! gives its findings, or says why it cannot tell. Thresholds and impact
//! formulas are documented in `docs/findings.md`.
//!
//! - [`idle`]: GPU idle the host caused (`idle.host_bound`, `idle.sync`)
//!   and host copies the GPU waits on (`memcpy.exposed`,
//!   `memcpy.pageable`);
//! - [`launch`]: kernels shorter than their launch (`kernels.launch_bound`);
//! - [`comm`]: communication not hidden under compute (`comm.exposed`);
//! - [`arrivals`]: when the ranks of a job reach their collectives
//!   (`comm.straggler`, `comm.skew`; run by [`super::job`]);
//! - [`ops`]: where op time goes (`op.dominant`, `op.variance`,
//!   `op.low_efficiency`);
//! - [`fusion`]: runs of memory-bound ops one kernel could do
//!   (`op.memory_bound_chain`).

pub mod arrivals;
pub mod comm;
pub mod fusion;
pub mod idle;
pub mod launch;
pub mod ops;

use super::health::GpuEvents;
use super::{Figure, Finding, Inputs};

/// A finding rule.
pub struct Rule {
    /// The ids of the findings it gives (the first names it when it
    /// abstains).
    pub ids: &'static [&'static str],
    /// The figures it reads: a health check invalidating one stops it.
    pub needs: &'static [Figure],
    /// Its findings, or why it cannot tell.
    pub run: fn(&Inputs, &GpuEvents) -> Result<Vec<Finding>, String>,
}

/// A finding is shown from this share (%) of the GPU span on (below it,
/// the rule stays silent): a smaller gain is within the run-to-run noise
/// of most traces.
pub const MIN_SHARE_PCT: f64 = 1.0;

/// Every rule, in the order their findings are listed at equal impact.
pub const RULES: &[Rule] = &[
    Rule {
        ids: &[idle::HOST_BOUND],
        needs: &[Figure::Idle, Figure::LaunchDelays],
        run: idle::host_bound,
    },
    Rule {
        ids: &[idle::SYNC],
        needs: &[Figure::Idle, Figure::LaunchDelays],
        run: idle::sync,
    },
    Rule {
        ids: &[idle::MEMCPY_EXPOSED],
        needs: &[Figure::Timeline, Figure::Idle],
        run: idle::memcpy_exposed,
    },
    Rule {
        ids: &[idle::MEMCPY_PAGEABLE],
        needs: &[Figure::KernelSheets],
        run: idle::memcpy_pageable,
    },
    Rule {
        ids: &[launch::LAUNCH_BOUND],
        needs: &[Figure::Idle, Figure::LaunchDelays],
        run: launch::launch_bound,
    },
    Rule {
        ids: &[comm::EXPOSED],
        needs: &[Figure::Timeline],
        run: comm::exposed,
    },
    Rule {
        ids: &[ops::LOW_EFFICIENCY],
        needs: &[Figure::Roofline, Figure::OpSheets],
        run: ops::low_efficiency,
    },
    Rule {
        ids: &[fusion::MEMORY_BOUND_CHAIN],
        needs: &[Figure::Roofline, Figure::OpSheets],
        run: fusion::memory_bound_chain,
    },
    Rule {
        ids: &[ops::VARIANCE],
        needs: &[Figure::OpSheets],
        run: ops::variance,
    },
    Rule {
        ids: &[ops::DOMINANT],
        needs: &[Figure::OpSheets],
        run: ops::dominant,
    },
];

/// The three estimates of a gain of up to `ms`: `low`, `mid` and `high`
/// shares of it (0..=1), against the inputs' GPU span.
pub fn impact(inputs: &Inputs, ms: f64, low: f64, mid: f64, high: f64) -> super::Impact {
    impact_against(inputs.base_ms(), ms, low, mid, high)
}

/// [`impact`] against a span of `base_ms`.
pub fn impact_against(base_ms: f64, ms: f64, low: f64, mid: f64, high: f64) -> super::Impact {
    super::Impact {
        low_ms: ms * low,
        mid_ms: ms * mid,
        high_ms: ms * high,
        base_ms,
    }
}

/// Whether `ms` is worth a finding: at least [`MIN_SHARE_PCT`] of the GPU
/// span.
pub fn worth(inputs: &Inputs, ms: f64) -> bool {
    worth_against(inputs.base_ms(), ms)
}

/// [`worth`] against a span of `base_ms`.
pub fn worth_against(base_ms: f64, ms: f64) -> bool {
    base_ms > 0.0 && 100.0 * ms / base_ms >= MIN_SHARE_PCT
}

#[cfg(test)]
mod tests;
