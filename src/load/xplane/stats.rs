//! Reading XStats: a stat's meaning comes from its metadata's name, which
//! is looked up once per plane.

use rustc_hash::FxHashMap;

use super::proto::{XPlane, XStat, XStatValue};

/// The stats the decoder reads, by their metadata name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatKind {
    /// Any other stat.
    Other,
    /// `correlation_id`: links a launch to its GPU work.
    CorrelationId,
    /// `hlo_module`.
    HloModule,
    /// `hlo_op`.
    HloOp,
    /// `program_id`.
    ProgramId,
    /// `name`: the framework op path.
    Name,
    /// `kernel_details`.
    KernelDetails,
    /// `tf_op`.
    TfOp,
    /// `step_name`: replaces the event's name.
    StepName,
    /// `flow`.
    Flow,
    /// `_a`: an asynchronous event.
    IsAsync,
    /// `cuda_graph_exec_id`.
    CudaGraphExecId,
    /// `_c`: the consumer id of the TraceMe context semantics.
    ConsumerId,
}

impl StatKind {
    fn of(name: &str) -> StatKind {
        match name {
            "correlation_id" => StatKind::CorrelationId,
            "hlo_module" => StatKind::HloModule,
            "hlo_op" => StatKind::HloOp,
            "program_id" => StatKind::ProgramId,
            "name" => StatKind::Name,
            "kernel_details" => StatKind::KernelDetails,
            "tf_op" => StatKind::TfOp,
            "step_name" => StatKind::StepName,
            "flow" => StatKind::Flow,
            "_a" => StatKind::IsAsync,
            "cuda_graph_exec_id" => StatKind::CudaGraphExecId,
            "_c" => StatKind::ConsumerId,
            _ => StatKind::Other,
        }
    }
}

/// The stat metadata of one plane.
#[derive(Debug)]
pub struct PlaneStats<'a> {
    plane: &'a XPlane,
    kinds: FxHashMap<i64, StatKind>,
}

impl<'a> PlaneStats<'a> {
    /// Indexes the stat metadata of `plane`.
    pub fn new(plane: &'a XPlane) -> Self {
        let kinds = plane
            .stat_metadata
            .iter()
            .map(|(&id, m)| (id, StatKind::of(&m.name)))
            .filter(|(_, k)| *k != StatKind::Other)
            .collect();
        PlaneStats { plane, kinds }
    }

    /// What the stat with metadata id `id` is.
    pub fn kind(&self, id: i64) -> StatKind {
        self.kinds.get(&id).copied().unwrap_or(StatKind::Other)
    }

    /// The stat's text: a string value, or the name a reference value
    /// points to; empty for other values (as xprof's `StrOrRefValue`).
    pub fn str_or_ref(&self, s: &'a XStat) -> &'a str {
        match &s.value {
            Some(XStatValue::Str(v)) => v,
            Some(XStatValue::Ref(r)) => i64::try_from(*r)
                .ok()
                .and_then(|r| self.plane.stat_metadata.get(&r))
                .map_or("", |m| m.name.as_str()),
            _ => "",
        }
    }

    /// The stat's integer value, unsigned or signed (0 for other values,
    /// as xprof's `IntOrUintValue`).
    pub fn int_or_uint(&self, s: &XStat) -> u64 {
        match s.value {
            Some(XStatValue::Uint64(v)) => v,
            Some(XStatValue::Int64(v)) => v as u64,
            _ => 0,
        }
    }

    /// True when the stat holds an integer.
    pub fn is_int(s: &XStat) -> bool {
        matches!(s.value, Some(XStatValue::Uint64(_) | XStatValue::Int64(_)))
    }
}
