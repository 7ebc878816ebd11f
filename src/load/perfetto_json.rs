//! Perfetto-style JSON: the Chrome trace `traceconv json` writes from a
//! rocprofv3 `.pftrace` (categories `hip_api`, `kernel_dispatch`,
//! `memory_copy`, …, with `begin_ns`/`end_ns`/`delta_ns` arguments). Every
//! element of `traceEvents` is kept with its `cat`, `name`, `pid`, `tid`,
//! `ts`, `dur` and flat `args`, as the Perfetto reports read them; `ph` is
//! not read (the reports do not read it either).

use std::fmt;
use std::io::Read;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Packing;
use crate::error::LoadError;
use crate::trace::Trace;
use crate::trace::builder::TraceBuilder;
use crate::trace::needs::Needs;
use crate::trace::perfetto::{PerfettoData, PerfettoEvent, PyValue, TextId};

/// Bytes of the head [`looks_like`] reads.
const SNIFF_BYTES: usize = 1 << 16;

/// The categories rocprofv3's Perfetto writer gives its slices.
const CATEGORIES: [&[u8]; 6] = [
    b"\"hip_api\"",
    b"\"hsa_api\"",
    b"\"marker_api\"",
    b"\"rccl_api\"",
    b"\"kernel_dispatch\"",
    b"\"memory_copy\"",
];

/// Whether the head of a JSON trace looks like traceconv's export of a
/// rocprofv3 Perfetto trace: a `begin_ns` argument and a rocprofv3 slice
/// category among its first events. PyTorch traces have neither.
pub fn looks_like(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    has(b"\"begin_ns\"") && CATEGORIES.iter().any(|c| has(c))
}

/// Reads a Perfetto-style JSON document from `reader` (unpacked).
pub fn decode<R: Read>(mut reader: R, packing: Packing) -> Result<Trace, LoadError> {
    let start = std::time::Instant::now();
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::read(packing, e))?;
    let mut data = PerfettoData::default();
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let found = DocSeed { data: &mut data }
        .deserialize(&mut de)
        .and_then(|found| de.end().map(|()| found))
        .map_err(|e| LoadError::Syntax(format!("invalid JSON: {e}")))?;
    if !found {
        return Err(LoadError::NotATrace(
            "a JSON object without a \"traceEvents\" list".to_string(),
        ));
    }
    if data.events.is_empty() {
        return Err(LoadError::NoEvents);
    }
    crate::timings::stage("reading the Perfetto JSON", start);
    let mut builder = TraceBuilder::new(&Needs::default());
    let info = builder.info_mut();
    info.profiler = crate::trace::Profiler::Perfetto;
    info.input_bytes = bytes.len() as u64;
    builder.set_perfetto(data);
    Ok(builder.finish())
}

/// The document: an object whose `traceEvents` list is read; true when
/// it had one.
struct DocSeed<'a> {
    data: &'a mut PerfettoData,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DocSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object with \"traceEvents\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key == Key::TraceEvents {
                // A repeated list replaces the first, as in Python.
                self.data.events.clear();
                self.data.args.clear();
                map.next_value_seed(EventsSeed { data: self.data })?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// The keys read; every other key is [`Key::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    TraceEvents,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match v {
            "traceEvents" => Key::TraceEvents,
            "cat" => Key::Cat,
            "name" => Key::Name,
            "pid" => Key::Pid,
            "tid" => Key::Tid,
            "ts" => Key::Ts,
            "dur" => Key::Dur,
            "args" => Key::Args,
            _ => Key::Other,
        })
    }
}

struct EventsSeed<'a> {
    data: &'a mut PerfettoData,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"traceEvents\" as a list of event objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut args = Vec::new();
        while let Some(event) = seq.next_element_seed(EventSeed {
            data: self.data,
            args: &mut args,
        })? {
            self.data.push(event, args.drain(..));
        }
        Ok(())
    }
}

struct EventSeed<'a> {
    data: &'a mut PerfettoData,
    args: &'a mut Vec<(TextId, PyValue)>,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = PerfettoEvent;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<PerfettoEvent, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = PerfettoEvent;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PerfettoEvent, A::Error> {
        let mut e = PerfettoEvent::empty();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let slot = match key {
                Key::Cat => &mut e.cat,
                Key::Name => &mut e.name,
                Key::Pid => &mut e.pid,
                Key::Tid => &mut e.tid,
                Key::Ts => &mut e.ts,
                Key::Dur => &mut e.dur,
                Key::Args => {
                    self.args.clear();
                    map.next_value_seed(ArgsSeed {
                        data: self.data,
                        args: self.args,
                    })?;
                    continue;
                }
                Key::TraceEvents | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value_seed(ValueSeed { data: self.data })?;
        }
        Ok(e)
    }
}

/// An event's `args`: an object's flat values (nested ones read as
/// [`PyValue::Other`]); anything but an object is no arguments.
struct ArgsSeed<'a> {
    data: &'a mut PerfettoData,
    args: &'a mut Vec<(TextId, PyValue)>,
}

impl<'de> DeserializeSeed<'de> for ArgsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an arguments object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key_seed(InternSeed { data: self.data })? {
            let value = map.next_value_seed(ValueSeed { data: self.data })?;
            self.args.push((key, value));
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A key, interned.
struct InternSeed<'a> {
    data: &'a mut PerfettoData,
}

impl<'de> DeserializeSeed<'de> for InternSeed<'_> {
    type Value = TextId;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TextId, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for InternSeed<'_> {
    type Value = TextId;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TextId, E> {
        Ok(self.data.intern(v))
    }
}

/// One value, its kind kept.
struct ValueSeed<'a> {
    data: &'a mut PerfettoData,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = PyValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<PyValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = PyValue;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<PyValue, E> {
        Ok(PyValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<PyValue, E> {
        Ok(PyValue::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<PyValue, E> {
        Ok(i64::try_from(v).map_or(PyValue::Float(v as f64), PyValue::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<PyValue, E> {
        Ok(PyValue::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<PyValue, E> {
        Ok(PyValue::Str(self.data.intern(v)))
    }
    fn visit_unit<E>(self) -> Result<PyValue, E> {
        Ok(PyValue::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PyValue, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(PyValue::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PyValue, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(PyValue::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_rocprof_perfetto_json_only() {
        let perfetto = br#"{"traceEvents":[{"ts":1,"cat":"hip_api","name":"hipMalloc","args":{"begin_ns":1000}}]}"#;
        assert!(looks_like(perfetto));
        let kineto = br#"{"traceEvents":[{"ts":1,"cat":"kernel","name":"k","args":{"stream":7}}]}"#;
        assert!(!looks_like(kineto));
    }

    #[test]
    fn keeps_value_kinds_and_flat_args() {
        let json = br#"{"x": 1, "traceEvents": [
            {"cat": "kernel_dispatch", "name": "k", "pid": 7, "tid": "8", "ts": 1.5,
             "args": {"agent": "Agent-1", "grid_size": 1024, "nested": {"a": 1}, "n": null}},
            {"ph": "e", "name": 3}
        ]}"#;
        let t = decode(&json[..], Packing::Plain).unwrap();
        let d = t.perfetto().unwrap();
        assert_eq!(d.events.len(), 2);
        let e = &d.events[0];
        assert_eq!(d.str_or_empty(e.cat), "kernel_dispatch");
        assert_eq!(e.pid, PyValue::Int(7));
        assert_eq!(d.py_int(e.tid), Some(8));
        assert_eq!(e.ts, PyValue::Float(1.5));
        assert_eq!(e.dur, PyValue::Missing);
        assert_eq!(d.py_int(d.arg(e, d.lookup("grid_size"))), Some(1024));
        assert_eq!(d.arg(e, d.lookup("nested")), PyValue::Other);
        assert_eq!(d.arg(e, d.lookup("n")), PyValue::Null);
        assert_eq!(d.events[1].name, PyValue::Int(3));
        assert!(d.args_of(&d.events[1]).is_empty());
    }

    #[test]
    fn refuses_what_is_no_perfetto_trace() {
        let no_list = br#"{"events": []}"#;
        assert!(matches!(
            decode(&no_list[..], Packing::Plain),
            Err(LoadError::NotATrace(_))
        ));
        let empty = br#"{"traceEvents": []}"#;
        assert!(matches!(
            decode(&empty[..], Packing::Plain),
            Err(LoadError::NoEvents)
        ));
        let cut = br#"{"traceEvents": [{"cat": "hip_api""#;
        assert!(matches!(
            decode(&cut[..], Packing::Plain),
            Err(LoadError::Syntax(_))
        ));
        let not_object = br#"{"traceEvents": [1]}"#;
        assert!(matches!(
            decode(&not_object[..], Packing::Plain),
            Err(LoadError::Syntax(_))
        ));
    }
}
