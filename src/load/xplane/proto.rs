//! The protobuf messages the XPlane decoder reads, written by hand from the
//! public schemas (`tsl/profiler/protobuf/xplane.proto`, package
//! `tensorflow.profiler`; `xla/service/hlo.proto` and `xla/xla_data.proto`,
//! package `xla`). Only the fields the decoder uses are declared: prost
//! skips the others.
//!
//! The decoder reads [`RawSpace`]: planes whose lines stay encoded (slices
//! of the input buffer); a line's header is read with [`scan_line`] and
//! its events, borrowed from the buffer, with [`line_events`], decoded
//! when they are used, so that the decoded profile never sits in memory
//! whole.
//! (To write a profile, encode the events and lines into these messages.)

use std::collections::BTreeMap;

use prost::DecodeError;
use prost::bytes::Bytes;
use prost::encoding::{
    DecodeContext, WireType, check_wire_type, decode_key, decode_varint, int64, skip_field, string,
};

/// An XSpace whose lines are still encoded.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawSpace {
    /// The planes.
    #[prost(message, repeated, tag = "1")]
    pub planes: Vec<RawPlane>,
}

/// An XPlane whose lines are still encoded ([`RawLine`]s).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawPlane {
    /// Plane id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Plane name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Encoded lines.
    #[prost(bytes = "bytes", repeated, tag = "3")]
    pub lines: Vec<Bytes>,
    /// Event metadata by id.
    #[prost(btree_map = "int64, message", tag = "4")]
    pub event_metadata: BTreeMap<i64, XEventMetadata>,
    /// Stat metadata by id.
    #[prost(btree_map = "int64, message", tag = "5")]
    pub stat_metadata: BTreeMap<i64, XStatMetadata>,
}

/// An XLine whose events are still encoded ([`XEvent`]s).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RawLine {
    /// Line id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Base time of the events' offsets, in nanoseconds.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    /// Encoded events.
    #[prost(bytes = "bytes", repeated, tag = "4")]
    pub events: Vec<Bytes>,
    /// Row id in the trace viewer (0: the line id).
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    /// Row name in the trace viewer (empty: the line name).
    #[prost(string, tag = "11")]
    pub display_name: String,
}

/// The header of an encoded [`RawLine`]: its fields but the events, which
/// prost skips (read them with [`line_events`]).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LineHead {
    /// Line id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Base time of the events' offsets, in nanoseconds.
    #[prost(int64, tag = "3")]
    pub timestamp_ns: i64,
    /// Row id in the trace viewer (0: the line id).
    #[prost(int64, tag = "10")]
    pub display_id: i64,
    /// Row name in the trace viewer (empty: the line name).
    #[prost(string, tag = "11")]
    pub display_name: String,
}

/// `RawLine.events`' field number.
const LINE_EVENTS: u32 = 4;

/// An encoded line read once through: its header, its number of events,
/// and its fields cut into pieces of at most `piece_events` events each
/// (read a piece's events with [`line_events`]).
pub struct LineScan<'b> {
    /// The header.
    pub head: LineHead,
    /// Number of events.
    pub events: usize,
    /// The pieces, in order; none when the line has no fields.
    pub pieces: Vec<&'b [u8]>,
}

/// Reads an encoded line's header and cuts it into pieces ([`LineScan`])
/// without decoding its events.
pub fn scan_line(line: &[u8], piece_events: usize) -> Result<LineScan<'_>, DecodeError> {
    let mut head = LineHead::default();
    let mut events = 0;
    let mut pieces = Vec::new();
    let mut rest = line;
    let mut start = line;
    let mut in_piece = 0;
    let ctx = DecodeContext::default;
    while !rest.is_empty() {
        let (tag, wire) = decode_key(&mut rest)?;
        match tag {
            LINE_EVENTS => {
                check_wire_type(WireType::LengthDelimited, wire)?;
                skip_field(wire, tag, &mut rest, ctx())?;
                events += 1;
                in_piece += 1;
                if in_piece == piece_events {
                    pieces.push(&start[..start.len() - rest.len()]);
                    start = rest;
                    in_piece = 0;
                }
            }
            1 => int64::merge(wire, &mut head.id, &mut rest, ctx())?,
            2 => string::merge(wire, &mut head.name, &mut rest, ctx())?,
            3 => int64::merge(wire, &mut head.timestamp_ns, &mut rest, ctx())?,
            10 => int64::merge(wire, &mut head.display_id, &mut rest, ctx())?,
            11 => string::merge(wire, &mut head.display_name, &mut rest, ctx())?,
            _ => skip_field(wire, tag, &mut rest, ctx())?,
        }
    }
    if !start.is_empty() {
        pieces.push(start);
    }
    Ok(LineScan {
        head,
        events,
        pieces,
    })
}

/// The encoded events of an encoded line (or of a piece of one that
/// starts and ends at field boundaries), in order, borrowed from it.
pub fn line_events(line: &[u8]) -> LineEvents<'_> {
    LineEvents { rest: line }
}

/// The iterator of [`line_events`]; after an error it ends.
pub struct LineEvents<'b> {
    rest: &'b [u8],
}

impl<'b> LineEvents<'b> {
    /// The bytes not read yet.
    pub fn rest(&self) -> &'b [u8] {
        self.rest
    }

    /// The next field: an event's bytes, or None for another field.
    fn field(&mut self) -> Result<Option<&'b [u8]>, DecodeError> {
        let (tag, wire) = decode_key(&mut self.rest)?;
        let start = self.rest;
        skip_field(wire, tag, &mut self.rest, DecodeContext::default())?;
        if tag != LINE_EVENTS {
            return Ok(None);
        }
        check_wire_type(WireType::LengthDelimited, wire)?;
        // The skipped bytes are the length, then the event.
        let mut body = &start[..start.len() - self.rest.len()];
        decode_varint(&mut body)?;
        Ok(Some(body))
    }
}

impl<'b> Iterator for LineEvents<'b> {
    type Item = Result<&'b [u8], DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.rest.is_empty() {
            match self.field() {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => {}
                Err(e) => {
                    self.rest = &[];
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// What orders an event in its row, decoded without its stats (which
/// prost skips).
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventKey {
    /// Key into the plane's event metadata.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Start offset or occurrence count.
    #[prost(oneof = "XEventData", tags = "2, 5")]
    pub data: Option<XEventData>,
    /// Duration in picoseconds.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
}

/// One event on a line.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XEvent {
    /// Key into the plane's event metadata.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// Start offset or occurrence count.
    #[prost(oneof = "XEventData", tags = "2, 5")]
    pub data: Option<XEventData>,
    /// Duration in picoseconds.
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    /// Per-occurrence stats.
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<XStat>,
}

/// `XEvent.data`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum XEventData {
    /// Start, in picoseconds after the line's `timestamp_ns`.
    #[prost(int64, tag = "2")]
    OffsetPs(i64),
    /// Number of occurrences of an aggregated event.
    #[prost(int64, tag = "5")]
    NumOccurrences(i64),
}

impl XEventData {
    /// The start offset in picoseconds (0 for an aggregated event, as the
    /// C++ accessor gives).
    pub fn offset_ps(data: Option<&XEventData>) -> i64 {
        match data {
            Some(XEventData::OffsetPs(v)) => *v,
            _ => 0,
        }
    }
}

impl XEvent {
    /// The start offset in picoseconds ([`XEventData::offset_ps`]).
    pub fn offset_ps(&self) -> i64 {
        XEventData::offset_ps(self.data.as_ref())
    }
}

impl EventKey {
    /// The start offset in picoseconds ([`XEventData::offset_ps`]).
    pub fn offset_ps(&self) -> i64 {
        XEventData::offset_ps(self.data.as_ref())
    }
}

/// A named value; the name is the stat metadata's.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XStat {
    /// Key into the plane's stat metadata.
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    /// The value.
    #[prost(oneof = "XStatValue", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<XStatValue>,
}

/// `XStat.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum XStatValue {
    /// double.
    #[prost(double, tag = "2")]
    Double(f64),
    /// uint64.
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    /// int64.
    #[prost(int64, tag = "4")]
    Int64(i64),
    /// string.
    #[prost(string, tag = "5")]
    Str(String),
    /// bytes (e.g. a serialized HloProto).
    #[prost(bytes = "bytes", tag = "6")]
    Bytes(Bytes),
    /// A string stored as the name of another stat metadata.
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

/// What the events with one metadata id share.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XEventMetadata {
    /// Id (for `/host:metadata` entries, the XLA program id).
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Event name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Name shown in the trace viewer (empty: the name).
    #[prost(string, tag = "4")]
    pub display_name: String,
    /// Stats shared by the events.
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<XStat>,
}

/// The name of a stat.
#[derive(Clone, PartialEq, prost::Message)]
pub struct XStatMetadata {
    /// Id.
    #[prost(int64, tag = "1")]
    pub id: i64,
    /// Name (`correlation_id`, `hlo_op`, …).
    #[prost(string, tag = "2")]
    pub name: String,
}

/// `xla.HloProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloProto {
    /// The module.
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}

/// `xla.HloModuleProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProto {
    /// Module name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Name of the entry computation.
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    /// Computations.
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    /// Parameter and result shapes of the entry computation.
    #[prost(message, optional, tag = "4")]
    pub host_program_shape: Option<ProgramShapeProto>,
    /// Module id (the program id).
    #[prost(int64, tag = "5")]
    pub id: i64,
    /// Id of the entry computation.
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
}

/// `xla.HloComputationProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloComputationProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Instructions, operands before users.
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    /// Parameter and result shapes.
    #[prost(message, optional, tag = "4")]
    pub program_shape: Option<ProgramShapeProto>,
    /// Id.
    #[prost(int64, tag = "5")]
    pub id: i64,
    /// Id of the root instruction.
    #[prost(int64, tag = "6")]
    pub root_id: i64,
}

/// `xla.HloInstructionProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInstructionProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Opcode text.
    #[prost(string, tag = "2")]
    pub opcode: String,
    /// Result shape.
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    /// Source metadata.
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    /// Custom-call target.
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    /// Id, unique in the module.
    #[prost(int64, tag = "35")]
    pub id: i64,
    /// Operand ids.
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    /// Backend configuration (JSON or attribute text).
    #[prost(bytes = "vec", tag = "43")]
    pub backend_config: Vec<u8>,
}

/// `xla.OpMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpMetadata {
    /// Framework op type.
    #[prost(string, tag = "1")]
    pub op_type: String,
    /// Framework op name (`jit(f)/dot_general`).
    #[prost(string, tag = "2")]
    pub op_name: String,
    /// Source file.
    #[prost(string, tag = "3")]
    pub source_file: String,
    /// Source line.
    #[prost(int32, tag = "4")]
    pub source_line: i32,
}

/// `xla.ShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShapeProto {
    /// `PrimitiveType` number.
    #[prost(int32, tag = "2")]
    pub element_type: i32,
    /// Dimensions.
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    /// Tuple elements.
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
    /// Layout.
    #[prost(message, optional, tag = "5")]
    pub layout: Option<LayoutProto>,
    /// Which dimensions are dynamic.
    #[prost(bool, repeated, tag = "6")]
    pub is_dynamic_dimension: Vec<bool>,
}

/// `xla.ProgramShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProgramShapeProto {
    /// Parameter shapes.
    #[prost(message, repeated, tag = "1")]
    pub parameters: Vec<ShapeProto>,
    /// Result shape.
    #[prost(message, optional, tag = "2")]
    pub result: Option<ShapeProto>,
    /// Parameter names.
    #[prost(string, repeated, tag = "3")]
    pub parameter_names: Vec<String>,
}

/// `xla.LayoutProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LayoutProto {
    /// Dimension order, minor first.
    #[prost(int64, repeated, tag = "1")]
    pub minor_to_major: Vec<i64>,
}
