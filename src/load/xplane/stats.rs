//! Reading XStats: a stat's meaning comes from its metadata's name, which
//! is looked up once per plane.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::proto::{XStat, XStatMetadata, XStatValue};

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

/// A stat value as the decoder uses it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// An integer (signed values as their two's complement).
    Int(u64),
    /// A string, or the name a reference value points to.
    Text(Cow<'a, str>),
    /// A double or bytes, or no value.
    Other,
}

/// The stat metadata of one plane.
#[derive(Debug)]
pub struct PlaneStats<'a> {
    metadata: &'a BTreeMap<i64, XStatMetadata>,
    kinds: FxHashMap<i64, StatKind>,
}

impl<'a> PlaneStats<'a> {
    /// Indexes a plane's stat metadata.
    pub fn new(metadata: &'a BTreeMap<i64, XStatMetadata>) -> Self {
        let kinds = metadata
            .iter()
            .map(|(&id, m)| (id, StatKind::of(&m.name)))
            .filter(|(_, k)| *k != StatKind::Other)
            .collect();
        PlaneStats { metadata, kinds }
    }

    /// The name a reference value points to ("" when none).
    fn referenced(&self, r: u64) -> &'a str {
        i64::try_from(r)
            .ok()
            .and_then(|r| self.metadata.get(&r))
            .map_or("", |m| m.name.as_str())
    }

    /// The value of a stat that lives as long as the plane.
    pub fn value(&self, s: &'a XStat) -> Value<'a> {
        match &s.value {
            Some(XStatValue::Str(v)) => Value::Text(Cow::Borrowed(v)),
            Some(XStatValue::Ref(r)) => Value::Text(Cow::Borrowed(self.referenced(*r))),
            Some(XStatValue::Uint64(v)) => Value::Int(*v),
            Some(XStatValue::Int64(v)) => Value::Int(*v as u64),
            _ => Value::Other,
        }
    }

    /// The value of a stat of a decoded event (its strings are moved out).
    pub fn value_owned(&self, v: Option<XStatValue>) -> Value<'a> {
        match v {
            Some(XStatValue::Str(v)) => Value::Text(Cow::Owned(v)),
            Some(XStatValue::Ref(r)) => Value::Text(Cow::Borrowed(self.referenced(r))),
            Some(XStatValue::Uint64(v)) => Value::Int(v),
            Some(XStatValue::Int64(v)) => Value::Int(v as u64),
            _ => Value::Other,
        }
    }

    /// What the stat with metadata id `id` is.
    pub fn kind(&self, id: i64) -> StatKind {
        self.kinds.get(&id).copied().unwrap_or(StatKind::Other)
    }

    /// The stat's text: a string value, or the name a reference value
    /// points to; empty for other values (as xprof's `StrOrRefValue`).
    pub fn str_or_ref<'s>(&self, s: &'s XStat) -> &'s str
    where
        'a: 's,
    {
        match &s.value {
            Some(XStatValue::Str(v)) => v,
            Some(XStatValue::Ref(r)) => self.referenced(*r),
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
}
