//! What XLA profiles (JAX, XPlane) carry beyond events: the compiled HLO
//! modules embedded in the profile and the XLA statistics of the events
//! that ran them. Format-free: the XPlane decoder fills it in, the JAX
//! report reads it.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::handle::EventId;

/// The XLA side of a trace.
#[derive(Debug, Clone, Default)]
pub struct XlaData {
    /// The compiled programs (one per `/host:metadata` entry), in profile order.
    pub modules: Vec<HloModule>,
    /// The XLA statistics of the events that carry any (kernels, launches).
    pub event_stats: FxHashMap<EventId, XlaEventStats>,
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
