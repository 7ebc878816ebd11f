//! The protobuf messages the Perfetto decoder reads, written by hand from the
//! public schema (`protos/perfetto/trace/**`, package `perfetto.protos`).
//! Only the fields the decoder uses are declared: prost skips the others.
//!
//! The decoder never decodes a whole [`Trace`]: it walks the trace's packets
//! one by one and decodes each [`TracePacket`] on its own. [`Trace`] is here
//! to write traces (tests, fixtures).
//!
//! The schema is proto2, so repeated scalars are written unpacked; prost
//! reads both forms.

/// A whole trace: its packets (only used to write traces).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets, in file order.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// One packet of the trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// A clock snapshot: the values of several clocks at one instant.
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    /// The packet's time, on the clock `timestamp_clock_id` names.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer sequence the packet belongs to (set by the tracing service).
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// A track event (slice begin/end, instant, counter).
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// New entries of the sequence's interning tables.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// Bit 1: incremental state cleared; bit 2: needs incremental state.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Deprecated form of the "incremental state cleared" flag.
    #[prost(bool, optional, tag = "41")]
    pub incremental_state_cleared: Option<bool>,
    /// The clock of `timestamp` (else the sequence default, else BOOTTIME).
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    /// Defaults for the following packets of the sequence.
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    /// The description of a track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// Values of several clocks taken at the same instant.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    /// The clocks and their values.
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    /// The clock the trace's times are expressed in (BOOTTIME when unset).
    #[prost(int32, optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

/// One clock of a [`ClockSnapshot`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    /// Builtin ids are below 64; ids from 64 on are scoped to the sequence.
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    /// The clock's value, in its units.
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
    /// Whether packet timestamps on this clock are deltas to the previous one.
    #[prost(bool, optional, tag = "3")]
    pub is_incremental: Option<bool>,
    /// Nanoseconds per unit of the clock (1 when unset).
    #[prost(uint64, optional, tag = "4")]
    pub unit_multiplier_ns: Option<u64>,
}

/// Defaults of a sequence, set by a packet for the packets after it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    /// Defaults of the track events.
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
    /// The clock of packets that name none.
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
}

/// Defaults of the track events of a sequence.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    /// The track of events that name none.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// What a track is: a thread, a process, or a named child of one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id, which events name in `track_uuid`.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// The track's name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Set on a process track.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Set on a thread track.
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    /// The parent track.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Set on a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// The process of a process track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// Process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Command line, one argument an entry.
    #[prost(string, repeated, tag = "2")]
    pub cmdline: Vec<String>,
    /// Process name.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// The thread of a thread track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    /// Process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// Thread id.
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    /// Thread name.
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// What makes a track a counter track (its fields are not used).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// Unit (an enum of the schema).
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    /// Multiplier of the values to the unit.
    #[prost(int64, optional, tag = "4")]
    pub unit_multiplier: Option<i64>,
}

/// A track event: a slice begin or end, an instant, or a counter value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Interned categories.
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    /// Arguments.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// 1 slice begin, 2 slice end, 3 instant, 4 counter.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The event's name, interned or inline.
    #[prost(oneof = "track_event::NameField", tags = "10, 23")]
    pub name_field: Option<track_event::NameField>,
    /// The event's track (else the sequence default).
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// Inline categories (after the interned ones).
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// A counter event's value.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

/// The oneofs of [`TrackEvent`].
pub mod track_event {
    /// How a track event's name is given.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum NameField {
        /// Interned in `event_names`.
        #[prost(uint64, tag = "10")]
        NameIid(u64),
        /// Inline.
        #[prost(string, tag = "23")]
        Name(String),
    }
}

/// One argument of a track event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// The argument's name, interned or inline.
    #[prost(oneof = "debug_annotation::NameField", tags = "1, 10")]
    pub name_field: Option<debug_annotation::NameField>,
    /// The argument's value.
    #[prost(oneof = "debug_annotation::Value", tags = "2, 3, 4, 5, 6, 7, 17")]
    pub value: Option<debug_annotation::Value>,
}

/// The oneofs of [`DebugAnnotation`].
pub mod debug_annotation {
    /// How an annotation's name is given.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum NameField {
        /// Interned in `debug_annotation_names`.
        #[prost(uint64, tag = "1")]
        NameIid(u64),
        /// Inline.
        #[prost(string, tag = "10")]
        Name(String),
    }

    /// An annotation's value (nested, dictionary and array values are not read).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Value {
        /// A boolean.
        #[prost(bool, tag = "2")]
        BoolValue(bool),
        /// An unsigned integer.
        #[prost(uint64, tag = "3")]
        UintValue(u64),
        /// A signed integer.
        #[prost(int64, tag = "4")]
        IntValue(i64),
        /// A double.
        #[prost(double, tag = "5")]
        DoubleValue(f64),
        /// An inline string.
        #[prost(string, tag = "6")]
        StringValue(String),
        /// A pointer (exported as a hex string).
        #[prost(uint64, tag = "7")]
        PointerValue(u64),
        /// A string interned in `debug_annotation_string_values`.
        #[prost(uint64, tag = "17")]
        StringValueIid(u64),
    }
}

/// New entries of a sequence's interning tables.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    /// Category names.
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<InternedName>,
    /// Event names.
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<InternedName>,
    /// Annotation names.
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<InternedName>,
    /// Annotation string values.
    #[prost(message, repeated, tag = "29")]
    pub debug_annotation_string_values: Vec<InternedString>,
}

/// An interned name (`EventCategory`, `EventName`, `DebugAnnotationName`
/// share this layout).
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedName {
    /// The id the events use.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// An interned string given as bytes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedString {
    /// The id the annotations use.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The string's bytes.
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}
