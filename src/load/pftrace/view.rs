//! The common packets read in place: a packet holding only a track event,
//! interned data and scalar fields (sequence, flags, time, clock) is walked without
//! decoding it into owned messages, and its event's names and arguments
//! borrow the trace's bytes, as does its interned data. Any other packet
//! (descriptors, clock snapshots, defaults), and any packet the walk finds unusual
//! (a known field of the wrong wire type, text that is not UTF-8, groups), is decoded
//! whole by prost, so that both give the same events and the same errors.

use super::proto::{DebugAnnotation, TracePacket, TrackEvent, debug_annotation, track_event};
use super::wire::{Fields, Value};

/// The packet fields the decoder reads besides its nested messages.
#[derive(Debug, Clone, Default)]
pub(super) struct PacketView<'a> {
    pub seq_id: Option<u32>,
    pub flags: Option<u32>,
    pub cleared: Option<bool>,
    pub timestamp: Option<u64>,
    pub clock_id: Option<u32>,
    pub event: Option<EventView<'a>>,
    /// The interned data, when the packet has some (boxed: most packets
    /// have none).
    pub interned: Option<Box<InternedView<'a>>>,
}

/// One interned entry: its id and its text (None when the entry has none).
pub(super) type Entry<'a> = (Option<u64>, Option<&'a [u8]>);

/// A packet's interned data, each table's entries in written order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct InternedView<'a> {
    pub event_categories: Vec<Entry<'a>>,
    pub event_names: Vec<Entry<'a>>,
    pub debug_annotation_names: Vec<Entry<'a>>,
    /// Bytes, read as UTF-8 with replacement.
    pub debug_annotation_string_values: Vec<Entry<'a>>,
}

impl<'a> InternedView<'a> {
    /// The view of decoded interned data.
    pub fn of(d: &'a super::proto::InternedData) -> InternedView<'a> {
        let names = |v: &'a [super::proto::InternedName]| -> Vec<Entry<'a>> {
            v.iter()
                .map(|e| (e.iid, e.name.as_deref().map(str::as_bytes)))
                .collect()
        };
        InternedView {
            event_categories: names(&d.event_categories),
            event_names: names(&d.event_names),
            debug_annotation_names: names(&d.debug_annotation_names),
            debug_annotation_string_values: d
                .debug_annotation_string_values
                .iter()
                .map(|e| (e.iid, e.str.as_deref()))
                .collect(),
        }
    }
}

/// A name given by interned id or in place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum NameView<'a> {
    Iid(u64),
    Text(&'a str),
}

/// A debug annotation's value, of the kinds the decoder reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ValueView<'a> {
    Bool(bool),
    Uint(u64),
    Int(i64),
    Double(f64),
    Str(&'a str),
    Pointer(u64),
    StrIid(u64),
}

/// One debug annotation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct AnnotationView<'a> {
    pub name: Option<NameView<'a>>,
    pub value: Option<ValueView<'a>>,
}

/// A run of one of [`Lists`]' vectors: `start..end`.
pub(super) type Run = (u32, u32);

/// The lists of a batch's events, one after another: an event names its
/// own by [`Run`]s, so that reading an event allocates nothing of its own.
#[derive(Debug, Default)]
pub(super) struct Lists<'a> {
    pub category_iids: Vec<u64>,
    pub categories: Vec<&'a str>,
    pub annotations: Vec<AnnotationView<'a>>,
}

impl<'a> Lists<'a> {
    fn lens(&self) -> (usize, usize, usize) {
        (
            self.category_iids.len(),
            self.categories.len(),
            self.annotations.len(),
        )
    }

    /// Forgets what was added after `lens` (a walk that gave up).
    fn truncate(&mut self, (a, b, c): (usize, usize, usize)) {
        self.category_iids.truncate(a);
        self.categories.truncate(b);
        self.annotations.truncate(c);
    }

    /// An event's category ids.
    pub fn category_iids(&self, e: &EventView) -> &[u64] {
        &self.category_iids[e.category_iids.0 as usize..e.category_iids.1 as usize]
    }

    /// An event's categories given in place.
    pub fn categories(&self, e: &EventView) -> &[&'a str] {
        &self.categories[e.categories.0 as usize..e.categories.1 as usize]
    }

    /// An event's annotations.
    pub fn annotations(&self, e: &EventView) -> &[AnnotationView<'a>] {
        &self.annotations[e.annotations.0 as usize..e.annotations.1 as usize]
    }
}

/// Where a vector's next run starts.
fn start_of<T>(v: &[T]) -> Run {
    let n = v.len() as u32;
    (n, n)
}

/// A track event's fields the decoder reads; its lists are runs of the
/// batch's [`Lists`].
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct EventView<'a> {
    pub category_iids: Run,
    pub categories: Run,
    pub annotations: Run,
    pub kind: Option<i32>,
    pub name: Option<NameView<'a>>,
    pub track_uuid: Option<u64>,
}

impl<'a> EventView<'a> {
    /// The view of a decoded event, its lists added to `lists`.
    pub fn of(e: &'a TrackEvent, lists: &mut Lists<'a>) -> EventView<'a> {
        let mut v = EventView {
            category_iids: start_of(&lists.category_iids),
            categories: start_of(&lists.categories),
            annotations: start_of(&lists.annotations),
            kind: e.r#type,
            name: e.name_field.as_ref().map(|n| match n {
                track_event::NameField::NameIid(i) => NameView::Iid(*i),
                track_event::NameField::Name(s) => NameView::Text(s),
            }),
            track_uuid: e.track_uuid,
        };
        lists.category_iids.extend(&e.category_iids);
        lists
            .categories
            .extend(e.categories.iter().map(String::as_str));
        lists
            .annotations
            .extend(e.debug_annotations.iter().map(annotation_of));
        let (a, b, c) = lists.lens();
        v.category_iids.1 = a as u32;
        v.categories.1 = b as u32;
        v.annotations.1 = c as u32;
        v
    }
}

fn annotation_of(a: &DebugAnnotation) -> AnnotationView<'_> {
    use debug_annotation::{NameField, Value as V};
    AnnotationView {
        name: a.name_field.as_ref().map(|n| match n {
            NameField::NameIid(i) => NameView::Iid(*i),
            NameField::Name(s) => NameView::Text(s),
        }),
        value: a.value.as_ref().map(|v| match v {
            V::BoolValue(b) => ValueView::Bool(*b),
            V::UintValue(u) => ValueView::Uint(*u),
            V::IntValue(i) => ValueView::Int(*i),
            V::DoubleValue(d) => ValueView::Double(*d),
            V::StringValue(s) => ValueView::Str(s),
            V::PointerValue(p) => ValueView::Pointer(*p),
            V::StringValueIid(i) => ValueView::StrIid(*i),
        }),
    }
}

impl<'a> PacketView<'a> {
    /// The view of a decoded packet, its event's lists added to `lists`.
    pub fn of(p: &'a TracePacket, lists: &mut Lists<'a>) -> PacketView<'a> {
        PacketView {
            seq_id: p.trusted_packet_sequence_id,
            flags: p.sequence_flags,
            cleared: p.incremental_state_cleared,
            timestamp: p.timestamp,
            clock_id: p.timestamp_clock_id,
            event: p.track_event.as_ref().map(|e| EventView::of(e, lists)),
            interned: p
                .interned_data
                .as_ref()
                .map(|d| Box::new(InternedView::of(d))),
        }
    }
}

/// The packet read in place, its event's lists added to `lists`; or None
/// (and `lists` as it was) when prost must decode it.
pub(super) fn packet<'a>(bytes: &'a [u8], lists: &mut Lists<'a>) -> Option<PacketView<'a>> {
    let lens = lists.lens();
    let view = walk(bytes, lists);
    if view.is_none() {
        lists.truncate(lens);
    }
    view
}

fn walk<'a>(bytes: &'a [u8], lists: &mut Lists<'a>) -> Option<PacketView<'a>> {
    let mut view = PacketView::default();
    for f in Fields::new(bytes) {
        let f = f.ok()?;
        match (f.number, f.value) {
            (8, Value::Varint(v)) => view.timestamp = Some(v),
            (10, Value::Varint(v)) => view.seq_id = Some(v as u32),
            (13, Value::Varint(v)) => view.flags = Some(v as u32),
            (41, Value::Varint(v)) => view.cleared = Some(v != 0),
            (58, Value::Varint(v)) => view.clock_id = Some(v as u32),
            // A repeated event merges into the first: left to prost.
            (11, Value::Len(b)) if view.event.is_none() => view.event = Some(event(b, lists)?),
            // Repeated interned data merges: its lists append.
            (12, Value::Len(b)) => interned(b, view.interned.get_or_insert_with(Box::default))?,
            // Nested messages the walk does not read, or a wrong wire type.
            (6 | 8 | 10 | 11 | 12 | 13 | 41 | 58 | 59 | 60, _) => return None,
            _ => {}
        }
    }
    Some(view)
}

/// Adds the entries of one interned-data message to `into`.
fn interned<'a>(bytes: &'a [u8], into: &mut InternedView<'a>) -> Option<()> {
    for f in Fields::new(bytes) {
        let f = f.ok()?;
        let (table, utf8) = match f.number {
            1 => (&mut into.event_categories, true),
            2 => (&mut into.event_names, true),
            3 => (&mut into.debug_annotation_names, true),
            29 => (&mut into.debug_annotation_string_values, false),
            _ => continue,
        };
        let Value::Len(b) = f.value else { return None };
        table.push(entry(b, utf8)?);
    }
    Some(())
}

/// One interned entry (`iid` 1, text 2); its text checked as UTF-8 when
/// `utf8` (a `string` field, not `bytes`).
fn entry(bytes: &[u8], utf8: bool) -> Option<Entry<'_>> {
    let (mut iid, mut text) = (None, None);
    for f in Fields::new(bytes) {
        let f = f.ok()?;
        match (f.number, f.value) {
            (1, Value::Varint(v)) => iid = Some(v),
            (2, Value::Len(b)) => {
                if utf8 {
                    std::str::from_utf8(b).ok()?;
                }
                text = Some(b);
            }
            (1 | 2, _) => return None,
            _ => {}
        }
    }
    Some((iid, text))
}

/// A length-delimited field's text, when it is UTF-8.
fn text(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

fn event<'a>(bytes: &'a [u8], lists: &mut Lists<'a>) -> Option<EventView<'a>> {
    let mut e = EventView {
        category_iids: start_of(&lists.category_iids),
        categories: start_of(&lists.categories),
        annotations: start_of(&lists.annotations),
        ..EventView::default()
    };
    for f in Fields::new(bytes) {
        let f = f.ok()?;
        match (f.number, f.value) {
            (3, Value::Varint(v)) => lists.category_iids.push(v),
            (3, Value::Len(packed)) => varints(packed, &mut lists.category_iids)?,
            (4, Value::Len(b)) => lists.annotations.push(annotation(b)?),
            (9, Value::Varint(v)) => e.kind = Some(v as i32),
            (10, Value::Varint(v)) => e.name = Some(NameView::Iid(v)),
            (11, Value::Varint(v)) => e.track_uuid = Some(v),
            (22, Value::Len(b)) => lists.categories.push(text(b)?),
            (23, Value::Len(b)) => e.name = Some(NameView::Text(text(b)?)),
            (30, Value::Varint(_)) => {}
            (3 | 4 | 9 | 10 | 11 | 22 | 23 | 30, _) => return None,
            _ => {}
        }
    }
    let (a, b, c) = lists.lens();
    e.category_iids.1 = a as u32;
    e.categories.1 = b as u32;
    e.annotations.1 = c as u32;
    Some(e)
}

fn annotation(bytes: &[u8]) -> Option<AnnotationView<'_>> {
    let mut a = AnnotationView {
        name: None,
        value: None,
    };
    for f in Fields::new(bytes) {
        let f = f.ok()?;
        match (f.number, f.value) {
            (1, Value::Varint(v)) => a.name = Some(NameView::Iid(v)),
            (10, Value::Len(b)) => a.name = Some(NameView::Text(text(b)?)),
            (2, Value::Varint(v)) => a.value = Some(ValueView::Bool(v != 0)),
            (3, Value::Varint(v)) => a.value = Some(ValueView::Uint(v)),
            (4, Value::Varint(v)) => a.value = Some(ValueView::Int(v as i64)),
            (5, Value::Fixed64(bits)) => a.value = Some(ValueView::Double(f64::from_bits(bits))),
            (6, Value::Len(b)) => a.value = Some(ValueView::Str(text(b)?)),
            (7, Value::Varint(v)) => a.value = Some(ValueView::Pointer(v)),
            (17, Value::Varint(v)) => a.value = Some(ValueView::StrIid(v)),
            (1..=7 | 10 | 17, _) => return None,
            _ => {}
        }
    }
    Some(a)
}

/// Adds the varints of a packed field to `out`; None when one is cut short.
fn varints(mut b: &[u8], out: &mut Vec<u64>) -> Option<()> {
    while !b.is_empty() {
        let mut value = 0u64;
        let mut i = 0;
        loop {
            let byte = *b.get(i)?;
            if i == 9 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            i += 1;
            if byte & 0x80 == 0 {
                break;
            }
            if i == 10 {
                return None;
            }
        }
        out.push(value);
        b = &b[i..];
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// An event's fields with its lists resolved, to compare two readings.
    type Resolved<'a> = (
        Vec<u64>,
        Vec<&'a str>,
        Vec<AnnotationView<'a>>,
        Option<i32>,
        Option<NameView<'a>>,
        Option<u64>,
    );

    fn resolved<'a>(e: &EventView<'a>, l: &Lists<'a>) -> Resolved<'a> {
        (
            l.category_iids(e).to_vec(),
            l.categories(e).to_vec(),
            l.annotations(e).to_vec(),
            e.kind,
            e.name,
            e.track_uuid,
        )
    }

    /// The walk's reading of `bytes` and that of prost's `decoded`, resolved;
    /// None when the walk leaves the packet to prost.
    type Both<'a> = (Option<Resolved<'a>>, Option<Resolved<'a>>);

    fn both<'a>(bytes: &'a [u8], decoded: &'a TracePacket) -> Option<Both<'a>> {
        let mut lists = Lists::default();
        let walked = packet(bytes, &mut lists)?;
        let walked = walked.event.as_ref().map(|e| resolved(e, &lists));
        let mut plists = Lists::default();
        let want = PacketView::of(decoded, &mut plists);
        let want = want.event.as_ref().map(|e| resolved(e, &plists));
        Some((walked, want))
    }

    fn event_packet(e: TrackEvent) -> TracePacket {
        TracePacket {
            timestamp: Some(1234),
            trusted_packet_sequence_id: Some(7),
            sequence_flags: Some(2),
            track_event: Some(e),
            ..Default::default()
        }
    }

    fn full_event() -> TrackEvent {
        use debug_annotation::{NameField, Value as V};
        let a = |name: NameField, value: V| DebugAnnotation {
            name_field: Some(name),
            value: Some(value),
        };
        TrackEvent {
            category_iids: vec![3, 4],
            categories: vec!["hip_api".into()],
            debug_annotations: vec![
                a(NameField::NameIid(1), V::BoolValue(true)),
                a(NameField::Name("u".into()), V::UintValue(u64::MAX)),
                a(NameField::NameIid(2), V::IntValue(-5)),
                a(NameField::NameIid(2), V::DoubleValue(2.5)),
                a(NameField::Name("s".into()), V::StringValue("x".into())),
                a(NameField::NameIid(9), V::PointerValue(0xabc)),
                a(NameField::NameIid(9), V::StringValueIid(12)),
            ],
            r#type: Some(1),
            name_field: Some(track_event::NameField::Name("hipLaunchKernel".into())),
            track_uuid: Some(99),
            counter_value: Some(3),
        }
    }

    #[test]
    fn the_walk_reads_what_prost_reads() {
        let p = event_packet(full_event());
        let bytes = p.encode_to_vec();
        let decoded = TracePacket::decode(&bytes[..]).unwrap();
        let (walked_event, want_event) = both(&bytes, &decoded).expect("read in place");
        assert_eq!(walked_event, want_event);
        let walked = packet(&bytes, &mut Lists::default()).unwrap();
        let want = PacketView::of(&p, &mut Lists::default());
        assert_eq!(
            (
                walked.seq_id,
                walked.flags,
                walked.timestamp,
                walked.clock_id,
                walked.cleared
            ),
            (
                want.seq_id,
                want.flags,
                want.timestamp,
                want.clock_id,
                want.cleared
            )
        );
    }

    #[test]
    fn packed_category_ids_and_last_names_win_as_in_prost() {
        // category_iids packed (field 3, wire type 2), then a name id after
        // a name: the id wins, as prost's oneof does.
        let mut e = Vec::new();
        e.extend([0x1a, 0x02, 0x05, 0x06]); // 3: packed [5, 6]
        e.extend([0xba, 0x01, 0x01, b'n']); // 23: "n"
        e.extend([0x50, 0x08]); // 10: 8
        e.extend([0x48, 0x01]); // 9: 1
        let mut p = vec![0x5a, e.len() as u8];
        p.extend(&e);
        let decoded = TracePacket::decode(&p[..]).unwrap();
        let (walked, want) = both(&p, &decoded).expect("read in place");
        assert_eq!(walked, want);
        let walked = walked.unwrap();
        assert_eq!(walked.4, Some(NameView::Iid(8)));
        assert_eq!(walked.0, [5, 6]);
    }

    #[test]
    fn interned_data_is_read_in_place_as_prost_reads_it() {
        use super::super::proto::{InternedData, InternedName, InternedString};
        let name = |iid: u64, name: &str| InternedName {
            iid: Some(iid),
            name: Some(name.into()),
        };
        let p = TracePacket {
            interned_data: Some(InternedData {
                event_categories: vec![name(1, "hip_api")],
                event_names: vec![name(1, "a"), name(2, "b"), InternedName::default()],
                debug_annotation_names: vec![name(4, "stream")],
                debug_annotation_string_values: vec![InternedString {
                    iid: Some(9),
                    str: Some(vec![0xff, b'x']),
                }],
            }),
            ..event_packet(full_event())
        };
        let bytes = p.encode_to_vec();
        let walked = packet(&bytes, &mut Lists::default()).expect("read in place");
        assert_eq!(
            walked.interned,
            PacketView::of(&p, &mut Lists::default()).interned
        );
        let decoded = TracePacket::decode(&bytes[..]).unwrap();
        let (walked_event, want_event) = both(&bytes, &decoded).unwrap();
        assert_eq!(walked_event, want_event);
        // Two interned-data fields merge: their lists append.
        let twice = [bytes.clone(), bytes].concat();
        let decoded = TracePacket::decode(&twice[..]).unwrap();
        assert_eq!(
            TracePacket::decode(&twice[..]).map(|d| d.interned_data.unwrap().event_names.len()),
            Ok(6)
        );
        assert!(
            packet(&twice, &mut Lists::default()).is_none(),
            "the repeated event is prost's"
        );
        assert!(decoded.track_event.is_some());
    }

    #[test]
    fn unusual_packets_are_left_to_prost() {
        let with_descriptor = TracePacket {
            track_descriptor: Some(Default::default()),
            ..event_packet(full_event())
        };
        assert!(packet(&with_descriptor.encode_to_vec(), &mut Lists::default()).is_none());
        // A name that is not UTF-8.
        let e = [0xba, 0x01, 0x01, 0xff];
        let mut p = vec![0x5a, e.len() as u8];
        p.extend(e);
        assert!(packet(&p, &mut Lists::default()).is_none());
        assert!(TracePacket::decode(&p[..]).is_err());
        // The event's type as a length-delimited field.
        let e = [0x4a, 0x00];
        let mut p = vec![0x5a, e.len() as u8];
        p.extend(e);
        assert!(packet(&p, &mut Lists::default()).is_none());
        // Two events in one packet merge: prost's business.
        let one = event_packet(full_event()).encode_to_vec();
        let twice = [one.clone(), one].concat();
        assert!(packet(&twice, &mut Lists::default()).is_none());
        // Cut short.
        let bytes = event_packet(full_event()).encode_to_vec();
        let mut lists = Lists::default();
        assert!(packet(&bytes[..bytes.len() - 3], &mut lists).is_none());
        // A walk that gives up leaves nothing in the lists.
        assert_eq!(lists.lens(), (0, 0, 0));
    }
}
