//! A JSON object read with its keys in order and its values as their
//! original text, so that a rewritten event keeps every field it had, in
//! its place, with the bytes it had (numbers are never re-printed unless
//! they change).

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// An object's entries in order: each key (unescaped) and its value's JSON
/// text. A repeated key keeps its first place and its last value, as
/// Python's `json` does.
#[derive(Debug, Default)]
pub(crate) struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// A map key borrowed from the input when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> de::Deserialize<'de> for Object<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Object<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Object<'de>, M::Error> {
                let mut obj = Object::default();
                while let Some((Key(k), v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    obj.set(k, Cow::Borrowed(v.get()));
                }
                Ok(obj)
            }
        }
        d.deserialize_map(ObjectVisitor)
    }
}

/// What a value's JSON text is, as Python's `json` would type it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    /// An integer literal (Python `int`; any size that fits in 128 bits).
    Int(i128),
    /// `true` or `false` (Python `bool`, an `int` subclass).
    Bool(bool),
    /// A number with a fraction or exponent (Python `float`).
    Float(f64),
    /// Anything else: a string, null, an array, an object, or an integer
    /// too large for 128 bits.
    Other,
}

/// The kind of the JSON value whose text is `text`.
pub(crate) fn kind(text: &str) -> Kind {
    let t = text.trim();
    match t {
        "true" => return Kind::Bool(true),
        "false" => return Kind::Bool(false),
        _ => {}
    }
    let Some(first) = t.bytes().next() else {
        return Kind::Other;
    };
    if first != b'-' && !first.is_ascii_digit() {
        return Kind::Other;
    }
    if t.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return t.parse().map_or(Kind::Other, Kind::Float);
    }
    t.parse().map_or(Kind::Other, Kind::Int)
}

/// The value `text` as a string, when it is a JSON string.
pub(crate) fn as_str(text: &str) -> Option<Cow<'_, str>> {
    let t = text.trim();
    if !t.starts_with('"') {
        return None;
    }
    if !t.contains('\\') {
        return Some(Cow::Borrowed(&t[1..t.len() - 1]));
    }
    serde_json::from_str::<String>(t).ok().map(Cow::Owned)
}

/// The value `text` as a number (an integer, a float or a bool), for
/// comparing times.
pub(crate) fn as_f64(text: &str) -> Option<f64> {
    match kind(text) {
        Kind::Int(i) => Some(i as f64),
        Kind::Float(f) => Some(f),
        Kind::Bool(b) => Some(f64::from(u8::from(b))),
        Kind::Other => None,
    }
}

impl<'a> Object<'a> {
    /// Reads the object whose JSON text is `text`.
    pub(crate) fn parse(text: &'a str) -> serde_json::Result<Object<'a>> {
        serde_json::from_str(text)
    }

    /// The text of `key`'s value.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// `key`'s value text, as held (borrowed from the input when read
    /// from it).
    pub(crate) fn value(&self, key: &str) -> Option<Cow<'a, str>> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// `key`'s value text borrowed from the input it was read from (None
    /// for a value set since).
    pub(crate) fn borrowed(&self, key: &str) -> Option<&'a str> {
        match self.value(key)? {
            Cow::Borrowed(v) => Some(v),
            Cow::Owned(_) => None,
        }
    }

    /// The entries in order: each key and its value's JSON text.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v.as_ref()))
    }

    /// Whether the object has `key`.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to the JSON text `value`: in its place when present, else
    /// at the end (a Python dict's assignment).
    pub(crate) fn set(&mut self, key: Cow<'a, str>, value: Cow<'a, str>) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Writes the object as compact JSON.
    pub(crate) fn write(&self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        out.write_all(b"{")?;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, k.as_ref())?;
            out.write_all(b":")?;
            out.write_all(v.as_bytes())?;
        }
        out.write_all(b"}")
    }

    /// The object as compact JSON text.
    pub(crate) fn to_text(&self) -> String {
        let mut out = Vec::new();
        self.write(&mut out).expect("writing to memory cannot fail");
        String::from_utf8(out).expect("keys and values are UTF-8 text")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_text_and_repeated_keys_are_kept_as_python_keeps_them() {
        let o = Object::parse(r#"{"b": 1.50, "a\"x": [1, 2], "b": 2e3, "c": {"d": 1}}"#).unwrap();
        assert_eq!(o.to_text(), r#"{"b":2e3,"a\"x":[1, 2],"c":{"d": 1}}"#);
        assert_eq!(o.get("c"), Some(r#"{"d": 1}"#));
        assert!(!o.contains("d"));
    }

    #[test]
    fn kinds_follow_python_json() {
        assert_eq!(kind("42"), Kind::Int(42));
        assert_eq!(kind("-7"), Kind::Int(-7));
        assert_eq!(kind("1.0"), Kind::Float(1.0));
        assert_eq!(kind("1e5"), Kind::Float(100000.0));
        assert_eq!(kind("true"), Kind::Bool(true));
        assert_eq!(kind("\"3\""), Kind::Other);
        assert_eq!(kind("null"), Kind::Other);
        assert_eq!(
            kind("123456789012345678901234567890"),
            Kind::Int(123456789012345678901234567890)
        );
        assert_eq!(as_str(r#""a\u0041""#).as_deref(), Some("aA"));
        assert_eq!(as_str("3"), None);
        assert_eq!(as_f64("true"), Some(1.0));
    }
}
