//! The trace as the splitter reads it: its events as JSON text, looked up
//! by the reference's keys — meta events (no `ts`), flow events by `id`,
//! GPU events by `args.correlation`, the execution roots, and the timed
//! events of the roots' threads. Values are compared as Python compares
//! them (`1 == 1.0 == True`), numbers added as Python adds them (an
//! integer stays an integer until a float joins it).

use std::collections::HashMap;

use crate::api::event_text::Document;
use crate::api::event_text::object::{self, Kind, Object};
use crate::error::LoadError;
use crate::trace::annotation::{RootTier, root_tier};

/// The categories of the GPU events linked to their launch by correlation.
const GPU_CATEGORIES: [&str; 4] = ["kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"];

/// A JSON number as Python holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// An integer (or a bool).
    Int(i128),
    /// A float.
    Float(f64),
}

impl Num {
    /// The value as a float, for comparing times.
    pub fn f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// `self + other` with Python's types: integer unless one is a float.
    pub fn add(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_add(b)),
            (a, b) => Num::Float(a.f64() + b.f64()),
        }
    }

    /// `self - other` with Python's types.
    pub fn sub(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_sub(b)),
            (a, b) => Num::Float(a.f64() - b.f64()),
        }
    }
}

/// A value used as a dictionary key or compared with `==`: integral
/// numbers and bools are one integer, as Python hashes and compares them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// An integer, a bool, or a float with an integral value.
    Int(i128),
    /// Any other float (its bits).
    Float(u64),
    /// A string (unescaped).
    Str(String),
    /// An array or object, by its text.
    Other(String),
}

impl Key {
    /// The key of the JSON value `text`; None for `null` (Python's `None`,
    /// as for an absent key).
    pub fn of(text: &str) -> Option<Key> {
        Some(match object::kind(text) {
            Kind::Int(i) => Key::Int(i),
            Kind::Bool(b) => Key::Int(i128::from(b)),
            Kind::Float(f) if f.fract() == 0.0 && f.abs() < 1e38 => Key::Int(f as i128),
            Kind::Float(f) => Key::Float(f.to_bits()),
            Kind::Other => {
                let t = text.trim();
                if t == "null" {
                    return None;
                }
                match object::as_str(t) {
                    Some(s) => Key::Str(s.into_owned()),
                    None => Key::Other(t.to_string()),
                }
            }
        })
    }

    /// Python's hash of the key, when it is an integer (other keys' hashes
    /// are salted per process, so their set order cannot be known).
    pub fn int_hash(&self) -> Option<u64> {
        match self {
            Key::Int(i) => Some(super::pyset::int_hash(*i)),
            _ => None,
        }
    }
}

/// The thread of an event: its `(tid, pid)` values.
pub type Thread = (Option<Key>, Option<Key>);

/// An execution root: a step annotation, or a synthetic root made of a
/// repeating block of the call tree.
#[derive(Debug, Clone)]
pub struct Root {
    /// Its name.
    pub name: String,
    /// `ts` (0 when absent).
    pub ts: Num,
    /// `dur` (0 when absent).
    pub dur: Num,
    /// Its thread.
    pub thread: Thread,
}

impl Root {
    /// The end of the root (µs).
    pub fn end(&self) -> f64 {
        self.ts.add(self.dur).f64()
    }
}

/// A GPU event linked by correlation.
#[derive(Debug, Clone, Copy)]
pub struct GpuEvent {
    /// Its index in `traceEvents`.
    pub index: u32,
    /// `ts`.
    pub ts: Num,
    /// `dur` (0 when absent).
    pub dur: Num,
}

/// A timed event (`ts` and `dur`) on a root's thread.
#[derive(Debug, Clone)]
pub struct Timed {
    /// Its index in `traceEvents`.
    pub index: u32,
    /// Start (µs).
    pub ts: f64,
    /// End (µs).
    pub end: f64,
    /// `args.correlation`.
    pub correlation: Option<Key>,
}

/// The indexed trace.
pub struct TraceIndex<'a> {
    /// The document.
    pub doc: Document<'a>,
    /// Events without a `ts`, written into every output.
    pub meta: Vec<u32>,
    /// Flow start and end events (`ph` s or f) by `id`.
    pub flows: HashMap<Key, Vec<u32>>,
    /// GPU events by `args.correlation`.
    pub gpu: HashMap<Key, Vec<GpuEvent>>,
    /// `user_annotation` events matching a detailed execution-root pattern.
    pub detailed: Vec<Root>,
    /// Those matching a native pattern.
    pub native: Vec<Root>,
}

/// The fields of one event the splitter reads.
pub struct Fields<'a> {
    obj: Object<'a>,
}

impl<'a> Fields<'a> {
    /// Reads event `i`.
    pub fn parse(text: &'a str, i: usize) -> Result<Fields<'a>, LoadError> {
        let obj = Object::parse(text).map_err(|_| {
            LoadError::Invalid(format!("event {i} of traceEvents is not a JSON object"))
        })?;
        Ok(Fields { obj })
    }

    /// A string field (None when absent or not a string).
    pub fn text(&self, key: &str) -> Option<std::borrow::Cow<'_, str>> {
        self.obj.get(key).and_then(object::as_str)
    }

    /// A key field (None when absent or null).
    pub fn key(&self, key: &str) -> Option<Key> {
        self.obj.get(key).and_then(Key::of)
    }

    /// The event's thread.
    pub fn thread(&self) -> Thread {
        (self.key("tid"), self.key("pid"))
    }

    /// A number field: None when absent or null, an error naming event `i`
    /// when it is something else.
    pub fn num(&self, key: &str, i: usize) -> Result<Option<Num>, LoadError> {
        let Some(text) = self.obj.get(key) else {
            return Ok(None);
        };
        match object::kind(text) {
            Kind::Int(v) => Ok(Some(Num::Int(v))),
            Kind::Bool(b) => Ok(Some(Num::Int(i128::from(b)))),
            Kind::Float(f) => Ok(Some(Num::Float(f))),
            Kind::Other if text.trim() == "null" => Ok(None),
            Kind::Other => Err(LoadError::Invalid(format!(
                "event {i}: {key} is not a number"
            ))),
        }
    }

    /// `args.<key>` as a key (None when `args` or the key is absent, or
    /// `args` is not an object).
    pub fn arg_key(&self, key: &str) -> Option<Key> {
        let args = Object::parse(self.obj.get("args")?).ok()?;
        args.get(key).and_then(Key::of)
    }

    /// `args.<key>`'s JSON text.
    pub fn arg_text(&self, key: &str) -> Option<String> {
        let args = Object::parse(self.obj.get("args")?).ok()?;
        args.get(key).map(str::to_string)
    }
}

impl<'a> TraceIndex<'a> {
    /// Indexes the trace whose unpacked bytes are `bytes`.
    pub fn build(bytes: &'a [u8]) -> Result<TraceIndex<'a>, LoadError> {
        let doc = Document::parse(bytes)?;
        let mut ix = TraceIndex {
            doc,
            meta: Vec::new(),
            flows: HashMap::new(),
            gpu: HashMap::new(),
            detailed: Vec::new(),
            native: Vec::new(),
        };
        let events = std::mem::take(&mut ix.doc.events);
        for (i, raw) in events.iter().enumerate() {
            ix.add(i, &Fields::parse(raw.get(), i)?)?;
        }
        ix.doc.events = events;
        // The reference sorts roots by `ts` (stably).
        for roots in [&mut ix.detailed, &mut ix.native] {
            roots.sort_by(|a, b| a.ts.f64().total_cmp(&b.ts.f64()));
        }
        Ok(ix)
    }

    /// Files event `i`.
    fn add(&mut self, i: usize, e: &Fields) -> Result<(), LoadError> {
        let index =
            u32::try_from(i).map_err(|_| LoadError::Limit("more than 2^32 events".to_string()))?;
        let Some(ts) = e.num("ts", i)? else {
            self.meta.push(index);
            return Ok(());
        };
        let dur = e.num("dur", i)?;
        if e.text("cat").as_deref() == Some("user_annotation")
            && let Some(name) = e.text("name")
            && let Some(tier) = root_tier(&name)
        {
            let root = Root {
                name: name.into_owned(),
                ts,
                dur: dur.unwrap_or(Num::Int(0)),
                thread: e.thread(),
            };
            match tier {
                RootTier::Detailed => self.detailed.push(root),
                RootTier::Native => self.native.push(root),
            }
        }
        let ph = e.text("ph");
        if matches!(ph.as_deref(), Some("s" | "f")) {
            if let Some(id) = e.key("id") {
                self.flows.entry(id).or_default().push(index);
            }
            return Ok(());
        }
        if e.text("cat")
            .is_some_and(|c| GPU_CATEGORIES.contains(&c.as_ref()))
            && let Some(corr) = e.arg_key("correlation")
        {
            let dur = dur.unwrap_or(Num::Int(0));
            self.gpu
                .entry(corr)
                .or_default()
                .push(GpuEvent { index, ts, dur });
        }
        Ok(())
    }

    /// The timed events (`ts` and `dur`) of `threads`, each thread's in
    /// `ts` order (ties in trace order).
    pub fn timed_on(&self, threads: &[Thread]) -> Result<HashMap<Thread, Vec<Timed>>, LoadError> {
        let mut out: HashMap<Thread, Vec<Timed>> =
            threads.iter().map(|t| (t.clone(), Vec::new())).collect();
        for (i, raw) in self.doc.events.iter().enumerate() {
            let e = Fields::parse(raw.get(), i)?;
            let (Some(ts), Some(dur)) = (e.num("ts", i)?, e.num("dur", i)?) else {
                continue;
            };
            let Some(list) = out.get_mut(&e.thread()) else {
                continue;
            };
            list.push(Timed {
                index: i as u32,
                ts: ts.f64(),
                end: ts.add(dur).f64(),
                correlation: e.arg_key("correlation"),
            });
        }
        for list in out.values_mut() {
            list.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        }
        Ok(out)
    }

    /// The JSON text of event `i`.
    pub fn text(&self, i: u32) -> &'a str {
        self.doc.events[i as usize].get()
    }
}
