//! Converting packet timestamps to BOOTTIME nanoseconds through the trace's
//! clock snapshots. Builtin clocks (ids below 64) are shared by the whole
//! trace; ids from 64 on belong to one sequence, and an incremental one
//! gives each packet's time as a delta to the previous packet's.

use std::collections::{BTreeMap, HashMap};

use super::proto::ClockSnapshot;

/// BUILTIN_CLOCK_BOOTTIME, the trace clock.
pub(super) const BOOTTIME: u32 = 6;

/// The first id of the sequence-scoped clocks.
pub(super) const FIRST_SEQUENCE_CLOCK: u32 = 64;

/// What the snapshots told about one clock.
#[derive(Debug, Default)]
struct ClockState {
    /// Nanoseconds per unit.
    multiplier: i128,
    incremental: bool,
    /// The last value of an incremental clock, in its units.
    last: i128,
    /// Snapshot points: the clock's time in ns -> BOOTTIME ns then.
    points: BTreeMap<i128, i128>,
}

/// The clocks of one scope: the whole trace, or one sequence.
#[derive(Debug, Default)]
pub(super) struct Clocks {
    clocks: HashMap<u32, ClockState>,
}

impl Clocks {
    /// Takes in the clocks of `snapshot` that belong to this scope
    /// (`sequence`: the clocks from 64 on, else the builtin ones).
    pub fn add_snapshot(&mut self, snapshot: &ClockSnapshot, sequence: bool) {
        let boot = snapshot
            .clocks
            .iter()
            .find(|c| c.clock_id == Some(BOOTTIME))
            .and_then(|c| c.timestamp)
            .map(i128::from);
        for c in &snapshot.clocks {
            let Some(id) = c.clock_id else { continue };
            if (id >= FIRST_SEQUENCE_CLOCK) != sequence || id == BOOTTIME {
                continue;
            }
            let value = i128::from(c.timestamp.unwrap_or(0));
            let state = self.clocks.entry(id).or_default();
            state.multiplier = i128::from(c.unit_multiplier_ns.unwrap_or(1).max(1));
            state.incremental = c.is_incremental.unwrap_or(false);
            state.last = value;
            if let Some(boot) = boot {
                state
                    .points
                    .insert(value.saturating_mul(state.multiplier), boot);
            }
        }
    }

    /// Whether this scope knows `clock`.
    pub fn knows(&self, clock: u32) -> bool {
        self.clocks.contains_key(&clock)
    }

    /// BOOTTIME ns of `raw` on `clock`, which this scope must know; advances
    /// an incremental clock. None when no snapshot ties it to BOOTTIME.
    pub fn convert_to_boottime(&mut self, clock: u32, raw: u64) -> Option<i64> {
        let state = self.clocks.get_mut(&clock)?;
        let value = if state.incremental {
            state.last = state.last.saturating_add(i128::from(raw));
            state.last
        } else {
            i128::from(raw)
        };
        let ns = value.saturating_mul(state.multiplier);
        // The latest snapshot at or before the time, else the first one.
        let (&clock_ns, &boot_ns) = state
            .points
            .range(..=ns)
            .next_back()
            .or_else(|| state.points.iter().next())?;
        Some(clamp(boot_ns.saturating_add(ns - clock_ns)))
    }
}

/// An i128 time squeezed into i64.
fn clamp(t: i128) -> i64 {
    t.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}
