//! What XLA profiles (JAX, XPlane) carry beyond events: the compiled HLO
//! modules embedded in the profile and the XLA statistics of the events
//! that ran them. Format-free: the XPlane decoder fills it in, the JAX
//! report reads it.

use std::sync::Arc;

use super::handle::EventId;

/// The XLA side of a trace.
#[derive(Debug, Clone, Default)]
pub struct XlaData {
    /// The compiled programs (one per `/host:metadata` entry), in profile order.
    pub modules: Vec<HloModule>,
    /// The XLA statistics of the events that carry any (kernels, launches).
    pub event_stats: EventStats,
}

/// The XLA statistics of events, by event id, kept in id order: the
/// decoder adds them in that order, and the report reads them walking the
/// events in that order ([`EventStats::seek`]), so no lookup jumps about a
/// table of hundreds of thousands of entries.
#[derive(Debug, Clone, Default)]
pub struct EventStats {
    ids: Vec<EventId>,
    stats: Vec<XlaEventStats>,
}

impl EventStats {
    /// Sets the statistics of `id` (replacing any it had).
    pub fn insert(&mut self, id: EventId, stats: XlaEventStats) {
        match self.ids.last() {
            Some(last) if *last >= id => match self.ids.binary_search(&id) {
                Ok(i) => self.stats[i] = stats,
                Err(i) => {
                    self.ids.insert(i, id);
                    self.stats.insert(i, stats);
                }
            },
            _ => {
                self.ids.push(id);
                self.stats.push(stats);
            }
        }
    }

    /// The statistics of `id`, if it has any.
    pub fn get(&self, id: &EventId) -> Option<&XlaEventStats> {
        let i = self.ids.binary_search(id).ok()?;
        Some(&self.stats[i])
    }

    /// The place in the table of the first id at or after `id`: where a
    /// walk of ids from `id` upwards starts ([`EventStats::seek`]).
    pub fn place_of(&self, id: EventId) -> usize {
        self.ids.partition_point(|&i| i < id)
    }

    /// The statistics of `id`, for ids asked in increasing order: `at` is
    /// the caller's place in the table (start it at 0, or at the
    /// [`EventStats::place_of`] the walk's first id), moved on past the
    /// ids before `id`.
    pub fn seek(&self, at: &mut usize, id: EventId) -> Option<&XlaEventStats> {
        while self.ids.get(*at).is_some_and(|&i| i < id) {
            *at += 1;
        }
        (self.ids.get(*at) == Some(&id)).then(|| &self.stats[*at])
    }

    /// How many events have statistics.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when no event has statistics.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The statistics, in event order.
    pub fn values(&self) -> std::slice::Iter<'_, XlaEventStats> {
        self.stats.iter()
    }
}

impl std::ops::Index<&EventId> for EventStats {
    type Output = XlaEventStats;

    fn index(&self, id: &EventId) -> &XlaEventStats {
        self.get(id).expect("an event with XLA statistics")
    }
}

/// XLA statistics of one event (XStats `hlo_module`, `hlo_op`,
/// `program_id`, `name`, `tf_op`, `kernel_details`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XlaEventStats {
    /// `hlo_module`: the module's name, e.g. `jit_forward_3d_conv`.
    pub hlo_module: Option<Arc<str>>,
    /// `hlo_op`: the HLO instruction, e.g. `cudnn-conv.1`.
    pub hlo_op: Option<Arc<str>>,
    /// `program_id`: which compilation of the module ran.
    pub program_id: Option<i64>,
    /// `name`: the framework op path, e.g. `jit(f)/conv_general_dilated`.
    pub framework_op: Option<Arc<str>>,
    /// `kernel_details`: launch geometry text (`grid:… block:…`).
    pub kernel_details: Option<Arc<str>>,
}

/// One compiled XLA program (`HloModuleProto`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloModule {
    /// Module name, e.g. `jit_forward_3d_conv`.
    pub name: String,
    /// Program id (the profile's `<name>(<id>)`).
    pub program_id: i64,
    /// Name of the entry computation.
    pub entry_computation: String,
    /// Computations in module order.
    pub computations: Vec<HloComputation>,
}

/// One HLO computation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloComputation {
    /// Name, e.g. `fused_transpose`.
    pub name: String,
    /// Instructions in computation order.
    pub instructions: Vec<HloInstruction>,
    /// Id of the root instruction.
    pub root_id: i64,
}

/// One HLO instruction, with the fields the report reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloInstruction {
    /// Unique id within the module (operands refer to it).
    pub id: i64,
    /// Name, e.g. `cudnn-conv.1.0`.
    pub name: String,
    /// Opcode, e.g. `custom-call`, `fusion`.
    pub opcode: String,
    /// Result shape.
    pub shape: HloShape,
    /// Operand instruction ids, in order.
    pub operand_ids: Vec<i64>,
    /// `custom_call_target` of custom calls (e.g. `__cudnn$convForward`).
    pub custom_call_target: Option<String>,
    /// `backend_config` text (JSON for cuBLAS/cuDNN, attribute text for FFI).
    pub backend_config: Option<String>,
    /// `metadata.op_type`.
    pub op_type: Option<String>,
    /// `metadata.op_name`.
    pub op_name: Option<String>,
    /// `metadata.source_file`.
    pub source_file: Option<String>,
    /// `metadata.source_line`.
    pub source_line: Option<i64>,
}

/// An HLO shape (`ShapeProto`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HloShape {
    /// XLA `PrimitiveType` number (`BF16 = 16`, `TUPLE = 13`, …).
    pub element_type: i32,
    /// Dimensions (arrays).
    pub dims: Vec<i64>,
    /// Layout `minor_to_major`, when the shape has a layout.
    pub minor_to_major: Option<Vec<i64>>,
    /// Element shapes of a tuple.
    pub tuple: Vec<HloShape>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(op: &str) -> XlaEventStats {
        XlaEventStats {
            hlo_op: Some(op.into()),
            ..Default::default()
        }
    }

    #[test]
    fn event_stats_by_id_in_any_insertion_order() {
        let mut s = EventStats::default();
        for (id, op) in [(5, "a"), (9, "b"), (2, "c"), (7, "d"), (9, "e")] {
            s.insert(EventId::new(id), stats(op));
        }
        assert_eq!(s.len(), 4, "id 9 was set twice");
        let ops: Vec<&str> = s.values().filter_map(|v| v.hlo_op.as_deref()).collect();
        assert_eq!(ops, ["c", "a", "d", "e"], "in id order, the later 9 kept");
        assert_eq!(s.get(&EventId::new(7)), Some(&stats("d")));
        assert_eq!(s.get(&EventId::new(6)), None);
        // Walking ids upwards finds the same as looking each one up.
        let mut at = 0;
        for id in 0..12 {
            let id = EventId::new(id);
            assert_eq!(s.seek(&mut at, id), s.get(&id), "{id:?}");
        }
        // A walk may start anywhere.
        for start in 0..12 {
            let mut at = s.place_of(EventId::new(start));
            for id in (start..12).map(EventId::new) {
                assert_eq!(s.seek(&mut at, id), s.get(&id), "from {start}: {id:?}");
            }
        }
    }
}
