//! What Perfetto-style traces (rocprofv3's `.pftrace`, and the JSON
//! `traceconv` writes from it) carry: a list of slices, each with its
//! category, name, process and thread, times and arguments, in the order
//! traceconv's JSON export lists them. Format-free: the Perfetto decoders
//! fill it in, the Perfetto reports read it.
//!
//! Values keep their JSON kind ([`PyValue`]) because the reports read them
//! with Python's conversions (`int(x)`, truthiness, dict keys), which
//! differ by kind.

use rustc_hash::FxHashMap as HashMap;

/// Index of a string in [`PerfettoData`]'s table.
pub type TextId = u32;

/// One value as a JSON reader in Python sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyValue {
    /// The key is absent.
    Missing,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A whole number.
    Int(i64),
    /// A number with a fraction or exponent (or beyond `i64`).
    Float(f64),
    /// A string.
    Str(TextId),
    /// A list or an object (never read as a number or a name).
    Other,
}

impl PyValue {
    /// Present and not `null` (Python's `args.get(k) is not None`).
    pub fn is_given(self) -> bool {
        !matches!(self, PyValue::Missing | PyValue::Null)
    }
}

/// A dict key as Python compares them: equal numbers are one key whatever
/// their kind (`1 == 1.0 == True`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PyKey {
    /// A string key.
    Str(TextId),
    /// A number key: the bits of its value as a float (`-0.0` as `0.0`).
    Num(u64),
}

/// One slice (or, from JSON, any event of `traceEvents`).
#[derive(Debug, Clone, PartialEq)]
pub struct PerfettoEvent {
    /// `cat`.
    pub cat: PyValue,
    /// `name`.
    pub name: PyValue,
    /// `pid`.
    pub pid: PyValue,
    /// `tid`.
    pub tid: PyValue,
    /// `ts` (µs).
    pub ts: PyValue,
    /// `dur` (µs); missing on the async (`b`) events of traceconv's export.
    pub dur: PyValue,
    /// The event's arguments: `args[start..end]` of [`PerfettoData::args`].
    pub args: (u32, u32),
}

impl PerfettoEvent {
    /// An event with no field given and no arguments.
    pub fn empty() -> PerfettoEvent {
        PerfettoEvent {
            cat: PyValue::Missing,
            name: PyValue::Missing,
            pid: PyValue::Missing,
            tid: PyValue::Missing,
            ts: PyValue::Missing,
            dur: PyValue::Missing,
            args: (0, 0),
        }
    }
}

/// The slices of a Perfetto-style trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerfettoData {
    strings: Vec<Box<str>>,
    index: HashMap<Box<str>, TextId>,
    /// Every event's arguments, one run per event: (key, value).
    pub args: Vec<(TextId, PyValue)>,
    /// The events, in the order traceconv's JSON export lists them.
    pub events: Vec<PerfettoEvent>,
}

impl PerfettoData {
    /// The id of `s`, added to the table when new.
    pub fn intern(&mut self, s: &str) -> TextId {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = self.strings.len() as TextId;
        self.strings.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    /// The id of `s`, if some value or key is `s`.
    pub fn lookup(&self, s: &str) -> Option<TextId> {
        self.index.get(s).copied()
    }

    /// The text of an id.
    pub fn text(&self, id: TextId) -> &str {
        &self.strings[id as usize]
    }

    /// Appends an event whose arguments are `args`.
    pub fn push(
        &mut self,
        mut event: PerfettoEvent,
        args: impl IntoIterator<Item = (TextId, PyValue)>,
    ) {
        let start = self.args.len() as u32;
        self.args.extend(args);
        event.args = (start, self.args.len() as u32);
        self.events.push(event);
    }

    /// The arguments of `e`.
    pub fn args_of(&self, e: &PerfettoEvent) -> &[(TextId, PyValue)] {
        &self.args[e.args.0 as usize..e.args.1 as usize]
    }

    /// `e["args"].get(key)`: the value of argument `key` (looked up with
    /// [`PerfettoData::lookup`]), [`PyValue::Missing`] when absent.
    pub fn arg(&self, e: &PerfettoEvent, key: Option<TextId>) -> PyValue {
        let Some(key) = key else {
            return PyValue::Missing;
        };
        // The last of repeated keys wins, as in a Python dict.
        self.args_of(e)
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map_or(PyValue::Missing, |(_, v)| *v)
    }

    /// `int(v)` in Python; None where it raises (or `v` is missing).
    pub fn py_int(&self, v: PyValue) -> Option<i64> {
        match v {
            PyValue::Int(i) => Some(i),
            PyValue::Bool(b) => Some(i64::from(b)),
            PyValue::Float(f) if f.is_finite() => {
                let t = f.trunc();
                (t >= i64::MIN as f64 && t < i64::MAX as f64).then_some(t as i64)
            }
            PyValue::Str(id) => {
                crate::numeric::py_int(self.text(id)).and_then(|i| i64::try_from(i).ok())
            }
            _ => None,
        }
    }

    /// Python truthiness of `v` (a missing key reads as `None`).
    pub fn truthy(&self, v: PyValue) -> bool {
        match v {
            PyValue::Missing | PyValue::Null => false,
            PyValue::Bool(b) => b,
            PyValue::Int(i) => i != 0,
            PyValue::Float(f) => f != 0.0,
            PyValue::Str(id) => !self.text(id).is_empty(),
            // Only empty lists and objects are falsy; neither is ever read.
            PyValue::Other => true,
        }
    }

    /// The text of a string value; "" for any other kind (the reports'
    /// `e.get("cat") or ""`).
    pub fn str_or_empty(&self, v: PyValue) -> &str {
        match v {
            PyValue::Str(id) => self.text(id),
            _ => "",
        }
    }

    /// `v` as a dict key; None for values no report keys on (missing,
    /// `None`, lists and objects).
    pub fn key(&self, v: PyValue) -> Option<PyKey> {
        let num = |f: f64| PyKey::Num(if f == 0.0 { 0.0f64 } else { f }.to_bits());
        match v {
            PyValue::Str(id) => Some(PyKey::Str(id)),
            PyValue::Int(i) => Some(num(i as f64)),
            PyValue::Float(f) => Some(num(f)),
            PyValue::Bool(b) => Some(num(f64::from(u8::from(b)))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_conversions() {
        let mut d = PerfettoData::default();
        let s = |d: &mut PerfettoData, t: &str| PyValue::Str(d.intern(t));
        let twelve = s(&mut d, " 12 ");
        let frac = s(&mut d, "3.5");
        let empty = s(&mut d, "");
        assert_eq!(d.py_int(twelve), Some(12));
        assert_eq!(d.py_int(frac), None);
        assert_eq!(d.py_int(PyValue::Float(-3.9)), Some(-3));
        assert_eq!(d.py_int(PyValue::Float(f64::NAN)), None);
        assert_eq!(d.py_int(PyValue::Bool(true)), Some(1));
        assert_eq!(d.py_int(PyValue::Null), None);
        assert!(!d.truthy(empty));
        assert!(!d.truthy(PyValue::Int(0)));
        assert!(d.truthy(twelve));
        assert_eq!(d.key(PyValue::Int(1)), d.key(PyValue::Float(1.0)));
        assert_eq!(d.key(PyValue::Bool(true)), d.key(PyValue::Int(1)));
        assert_ne!(d.key(twelve), d.key(PyValue::Int(12)));
    }

    #[test]
    fn last_repeated_argument_wins() {
        let mut d = PerfettoData::default();
        let k = d.intern("agent");
        d.push(
            PerfettoEvent::empty(),
            [(k, PyValue::Int(1)), (k, PyValue::Int(2))],
        );
        let e = d.events[0].clone();
        assert_eq!(d.arg(&e, Some(k)), PyValue::Int(2));
        assert_eq!(d.arg(&e, d.lookup("nope")), PyValue::Missing);
    }
}
