//! One cell of a [`Table`](super::Table): [`Value`], its pandas rendering,
//! and the one total order and equality that group keys, join keys and
//! sort columns share.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::pyfmt::push_float_repr;

/// One cell value, typed as pandas holds it.
///
/// `Null` (pandas/Python `None`) and `Float(NaN)` (pandas `NaN`) are both
/// missing ([`Value::is_missing`]) but stay distinct cells: writers treat
/// them differently (Markdown alignment counts a NaN float as a number).
/// `Py` is text that is the Python repr of a tuple, list or dict: written
/// like text, but unequal to a `Text` with the same characters and sorted
/// after all text, as pandas orders an object column.
#[derive(Debug, Clone)]
pub enum Value {
    /// Python `None`: a missing value in an object column.
    Null,
    /// An integer (int64 column, or a Python int in an object column).
    Int(i64),
    /// A float; NaN is pandas' missing value of a float column.
    Float(f64),
    /// A boolean, written `True` / `False`.
    Bool(bool),
    /// A Python str, written verbatim.
    Text(std::sync::Arc<str>),
    /// The Python repr of a tuple, list or dict, written verbatim.
    Py(std::sync::Arc<str>),
}

// Text cells are shared, immutable strings (a fat pointer): a cell is 24
// bytes, not the 32 of an owned `String`, and rows repeating a name (a
// kernel per dispatch) can share its text.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Value>() == 24);

/// Identical cells: the same variant and the same content. Floats are
/// identical when their bits are (so `-0.0` and `0.0` differ, as they print
/// differently), and any NaN is identical to any NaN. This is the equality
/// of tests and `assert_eq!`; Python's `==` (`2 == 2.0`) is
/// [`Value::key_eq`].
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Text(a), Value::Text(b)) | (Value::Py(a), Value::Py(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    /// A float cell; NaN stays `Float(NaN)` (see [`Value::float_or_null`]).
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s.into())
    }
}

/// Texts that share one allocation per distinct text: for columns whose
/// texts repeat down the rows (a kernel's name, category and shapes on
/// each of its launches), or an event's XLA statistics repeating on every
/// step, where a fresh allocation per copy would cost more than the cell.
#[derive(Debug, Default)]
pub struct SharedTexts(rustc_hash::FxHashSet<std::sync::Arc<str>>);

impl SharedTexts {
    /// The shared text equal to `s`, kept on first sight.
    pub fn share(&mut self, s: &str) -> std::sync::Arc<str> {
        if let Some(t) = self.0.get(s) {
            return t.clone();
        }
        let t: std::sync::Arc<str> = s.into();
        self.0.insert(t.clone());
        t
    }

    /// A [`Value::Text`] cell of `s`.
    pub fn text(&mut self, s: &str) -> Value {
        Value::Text(self.share(s))
    }

    /// A [`Value::Py`] cell of `s`.
    pub fn py(&mut self, s: &str) -> Value {
        Value::Py(self.share(s))
    }
}

/// A number that remembers whether it is an integer, so that arithmetic on
/// integers stays integer as in Python (timestamps, sums of ints).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A Python int.
    Int(i64),
    /// A Python float.
    Float(f64),
}

impl Num {
    /// The value as a float.
    pub fn f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }

    /// `self < o`: ints compared exactly, otherwise as floats.
    pub fn lt(self, o: Num) -> bool {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => a < b,
            _ => self.f64() < o.f64(),
        }
    }

    /// The number as a cell (`Int` or `Float`; a NaN float stays a float).
    pub fn value(self) -> Value {
        match self {
            Num::Int(i) => Value::Int(i),
            Num::Float(x) => Value::Float(x),
        }
    }
}

/// `a + b`: int + int stays int (a float when it would overflow).
impl std::ops::Add for Num {
    type Output = Num;

    fn add(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => a
                .checked_add(b)
                .map_or(Num::Float(a as f64 + b as f64), Num::Int),
            _ => Num::Float(self.f64() + o.f64()),
        }
    }
}

/// `a - b`: int - int stays int (a float when it would overflow).
impl std::ops::Sub for Num {
    type Output = Num;

    fn sub(self, o: Num) -> Num {
        match (self, o) {
            (Num::Int(a), Num::Int(b)) => a
                .checked_sub(b)
                .map_or(Num::Float(a as f64 - b as f64), Num::Int),
            _ => Num::Float(self.f64() - o.f64()),
        }
    }
}

impl Value {
    /// A float cell, or `Null` for NaN: the collectives tables collapse
    /// pandas' NaN into `None` (their writers print both as empty).
    pub fn float_or_null(x: f64) -> Value {
        if x.is_nan() {
            Value::Null
        } else {
            Value::Float(x)
        }
    }

    /// Missing in pandas' sense (`isna`): `Null` or a NaN float.
    pub fn is_missing(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Float(x) => x.is_nan(),
            _ => false,
        }
    }

    /// The present number of an `Int` or non-NaN `Float` cell (bools are
    /// not numbers here: numpy refuses arithmetic on them).
    pub fn num(&self) -> Option<Num> {
        match self {
            Value::Int(i) => Some(Num::Int(*i)),
            Value::Float(x) if !x.is_nan() => Some(Num::Float(*x)),
            _ => None,
        }
    }

    /// The present number as a float (see [`Value::num`]).
    pub fn as_f64(&self) -> Option<f64> {
        self.num().map(Num::f64)
    }

    /// The number as a float, NaN when the cell holds no number.
    pub fn to_f64(&self) -> f64 {
        self.as_f64().unwrap_or(f64::NAN)
    }

    /// The integer of an `Int` cell.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string of a `Text` cell (not of `Py`: a repr is not a str).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The field pandas `to_csv` writes, before quoting: `Null` and NaN
    /// empty, ints in decimal, floats as Python `repr`, bools `True` /
    /// `False`, text and reprs verbatim.
    pub fn csv_text(&self) -> String {
        let mut out = String::new();
        self.push_csv_text(&mut out);
        out
    }

    /// Appends [`Value::csv_text`] to `out` (no allocation for ints, bools
    /// and text).
    pub fn push_csv_text(&self, out: &mut String) {
        match self {
            Value::Null => {}
            Value::Float(x) if x.is_nan() => {}
            other => other.push_py_str(out),
        }
    }

    /// Python `str()` of the value (the text of ids and labels): `None`,
    /// ints in decimal, floats as `repr` (`nan`, `inf`), `True` / `False`,
    /// text and reprs verbatim.
    pub fn py_str(&self) -> String {
        let mut out = String::new();
        self.push_py_str(&mut out);
        out
    }

    /// Appends [`Value::py_str`] to `out`.
    pub fn push_py_str(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("None"),
            Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
            Value::Float(x) => push_float_repr(out, *x),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Text(s) | Value::Py(s) => out.push_str(s),
        }
    }

    /// The rank of the value's class in [`Value::key_cmp`].
    fn class(&self) -> u8 {
        match self {
            v if v.is_missing() => 3,
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => 0,
            Value::Text(_) => 1,
            Value::Py(_) => 2,
            Value::Null => 3,
        }
    }

    /// The order of group keys, join keys and sort columns: numbers (bools
    /// as 0 and 1) by value, then text by code point, then Python reprs,
    /// then missing values (`Null` and NaN, equal to each other).
    ///
    /// Numbers compare by exact value, as Python does: ints with ints
    /// exactly, ints with floats without rounding the int, `-0.0 == 0.0`.
    /// The order is total, and `Equal` is Python's `==` ([`Value::key_eq`]).
    pub fn key_cmp(&self, other: &Value) -> Ordering {
        match self.class().cmp(&other.class()) {
            Ordering::Equal => {}
            o => return o,
        }
        match (self, other) {
            (Value::Text(a), Value::Text(b)) | (Value::Py(a), Value::Py(b)) => a.cmp(b),
            (a, b) => match (a.key_number(), b.key_number()) {
                (Some(x), Some(y)) => cmp_numbers(x, y),
                // Both missing.
                _ => Ordering::Equal,
            },
        }
    }

    /// Python equality of keys: `2 == 2.0`, `True == 1`, missing equals
    /// missing, a str never equals a repr. Agrees with [`Value::key_cmp`].
    pub fn key_eq(&self, other: &Value) -> bool {
        self.key_cmp(other) == Ordering::Equal
    }

    /// Feeds `state` so that values equal under [`Value::key_eq`] hash
    /// alike (numbers by value, an integral float as its int).
    pub fn key_hash<H: Hasher>(&self, state: &mut H) {
        self.class().hash(state);
        match self {
            Value::Text(s) | Value::Py(s) => s.hash(state),
            v => match v.key_number() {
                Some(Num::Int(i)) => (0u8, i).hash(state),
                Some(Num::Float(x)) => match float_as_int(x) {
                    Some(i) => (0u8, i).hash(state),
                    None => (1u8, x.to_bits()).hash(state),
                },
                // Missing values are all equal: the class is the hash.
                None => {}
            },
        }
    }

    /// The number of a present numeric or bool cell, for ordering.
    fn key_number(&self) -> Option<Num> {
        match self {
            Value::Bool(b) => Some(Num::Int(i64::from(*b))),
            v => v.num(),
        }
    }
}

/// `x` as an i64 when it is integral and in range (`-0.0` is 0).
fn float_as_int(x: f64) -> Option<i64> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    (x.fract() == 0.0 && (-TWO_63..TWO_63).contains(&x)).then_some(x as i64)
}

/// Exact order of two present numbers (no NaN).
fn cmp_numbers(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x.cmp(&y),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Num::Int(i), Num::Float(f)) => cmp_int_float(i, f),
        (Num::Float(f), Num::Int(i)) => cmp_int_float(i, f).reverse(),
    }
}

/// Exact order of an int and a non-NaN float, as Python compares them.
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let t = f.trunc();
    // In range, so the integral part converts exactly.
    match i.cmp(&(t as i64)) {
        // i == trunc(f): the fraction decides.
        Ordering::Equal => 0.0f64.partial_cmp(&(f - t)).unwrap_or(Ordering::Equal),
        o => o,
    }
}

/// Order of two key rows, column by column ([`Value::key_cmp`]).
pub fn cmp_rows(a: &[Value], b: &[Value]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.key_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// A row of key values with Python's equality, order and hashing
/// ([`Value::key_cmp`]), for maps keyed by group keys.
#[derive(Debug, Clone)]
pub struct Key(pub Vec<Value>);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        cmp_rows(&self.0, &other.0) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        cmp_rows(&self.0, &other.0)
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.len().hash(state);
        for v in &self.0 {
            v.key_hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn text(s: &str) -> Value {
        Value::Text(s.into())
    }

    fn hash_of(v: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        Key(vec![v.clone()]).hash(&mut h);
        h.finish()
    }

    #[test]
    fn identical_cells() {
        assert_eq!(Value::Float(f64::NAN), Value::Float(-f64::NAN));
        assert_ne!(Value::Float(0.0), Value::Float(-0.0));
        assert_ne!(Value::Null, Value::Float(f64::NAN));
        assert_ne!(Value::Int(2), Value::Float(2.0));
        assert_ne!(text("(0, 1)"), Value::Py("(0, 1)".into()));
        assert_eq!(Value::from("a"), text("a"));
        assert_eq!(Value::from(3i64), Value::Int(3));
        assert_eq!(Value::from(true), Value::Bool(true));
        assert_eq!(Value::from(String::from("s")), text("s"));
        assert_eq!(Value::from(1.5), Value::Float(1.5));
    }

    #[test]
    fn missing_values() {
        assert!(Value::Null.is_missing());
        assert!(Value::Float(f64::NAN).is_missing());
        assert!(!Value::Float(0.0).is_missing());
        assert!(!text("").is_missing());
        assert_eq!(Value::float_or_null(f64::NAN), Value::Null);
        assert_eq!(Value::float_or_null(2.5), Value::Float(2.5));
        // Missing and bool cells hold no number.
        assert_eq!(Value::Float(f64::NAN).num(), None);
        assert_eq!(Value::Bool(true).num(), None);
        assert!(Value::Null.to_f64().is_nan());
        assert_eq!(Value::Int(3).to_f64(), 3.0);
        assert_eq!(Value::Int(3).as_i64(), Some(3));
        assert_eq!(Value::Float(3.0).as_i64(), None);
        assert_eq!(text("x").as_str(), Some("x"));
        assert_eq!(Value::Py("x".into()).as_str(), None);
    }

    #[test]
    fn csv_text_like_to_csv() {
        // pandas: to_csv writes None and NaN as empty fields.
        assert_eq!(Value::Null.csv_text(), "");
        assert_eq!(Value::Float(f64::NAN).csv_text(), "");
        assert_eq!(Value::Int(-3).csv_text(), "-3");
        assert_eq!(Value::Float(1e-5).csv_text(), "1e-05");
        assert_eq!(Value::Float(5.0).csv_text(), "5.0");
        assert_eq!(Value::Float(1e16).csv_text(), "1e+16");
        assert_eq!(Value::Float(f64::INFINITY).csv_text(), "inf");
        assert_eq!(Value::Float(f64::NEG_INFINITY).csv_text(), "-inf");
        assert_eq!(Value::Bool(true).csv_text(), "True");
        assert_eq!(Value::Bool(false).csv_text(), "False");
        assert_eq!(text("aten::mm").csv_text(), "aten::mm");
        assert_eq!(Value::Py("((1, 2), ())".into()).csv_text(), "((1, 2), ())");
    }

    #[test]
    fn py_str_like_python() {
        assert_eq!(Value::Null.py_str(), "None");
        assert_eq!(Value::Float(f64::NAN).py_str(), "nan");
        assert_eq!(Value::Int(8).py_str(), "8");
        assert_eq!(Value::Float(8.0).py_str(), "8.0");
        assert_eq!(Value::Float(0.1).py_str(), "0.1");
        assert_eq!(Value::Bool(true).py_str(), "True");
        assert_eq!(Value::Bool(false).py_str(), "False");
        assert_eq!(text("x y").py_str(), "x y");
        assert_eq!(Value::Py("(4, 5)".into()).py_str(), "(4, 5)");
    }

    #[test]
    fn num_arithmetic_keeps_ints() {
        assert_eq!(Num::Int(2) + Num::Int(3), Num::Int(5));
        assert_eq!(Num::Int(2) + Num::Float(0.5), Num::Float(2.5));
        assert_eq!(Num::Int(2) - Num::Int(3), Num::Int(-1));
        assert_eq!(Num::Float(2.5) - Num::Int(1), Num::Float(1.5));
        // Overflow goes to float rather than wrapping.
        assert_eq!(
            Num::Int(i64::MAX) + Num::Int(1),
            Num::Float(i64::MAX as f64 + 1.0)
        );
        assert_eq!(
            Num::Int(i64::MIN) - Num::Int(1),
            Num::Float(i64::MIN as f64 - 1.0)
        );
        // Ints compare exactly even where f64 cannot tell them apart.
        assert!(Num::Int(1 << 53).lt(Num::Int((1 << 53) + 1)));
        assert!(Num::Int(1).lt(Num::Float(1.5)));
        assert_eq!(Num::Int(4).value(), Value::Int(4));
        assert_eq!(Num::Float(0.5).value(), Value::Float(0.5));
    }

    #[test]
    fn key_order_classes() {
        // Copied from collectives/values.rs: numbers before strings.
        let mut v = [text("Unknown"), Value::Float(3.0), Value::Int(1)];
        v.sort_by(Value::key_cmp);
        assert_eq!(v[0], Value::Int(1));
        assert_eq!(v[2], text("Unknown"));
        // Full ladder: numbers and bools < str < repr < missing.
        let mut v = vec![
            Value::Null,
            Value::Py("(1,)".into()),
            text("b"),
            Value::Float(f64::NAN),
            Value::Bool(true),
            text("a"),
            Value::Float(-1.5),
            Value::Int(7),
        ];
        v.sort_by(Value::key_cmp);
        assert_eq!(
            v,
            vec![
                Value::Float(-1.5),
                Value::Bool(true),
                Value::Int(7),
                text("a"),
                text("b"),
                Value::Py("(1,)".into()),
                Value::Null,
                Value::Float(f64::NAN),
            ]
        );
    }

    #[test]
    fn key_equality_is_pythons() {
        assert!(Value::Int(2).key_eq(&Value::Float(2.0)));
        assert!(Value::Bool(true).key_eq(&Value::Int(1)));
        assert!(Value::Bool(false).key_eq(&Value::Float(0.0)));
        assert!(Value::Float(-0.0).key_eq(&Value::Float(0.0)));
        assert!(Value::Null.key_eq(&Value::Float(f64::NAN)));
        assert!(!text("(0, 1)").key_eq(&Value::Py("(0, 1)".into())));
        assert!(!text("1").key_eq(&Value::Int(1)));
        assert!(!Value::Int(2).key_eq(&Value::Float(2.5)));
    }

    #[test]
    fn key_order_of_numbers_is_exact() {
        use Ordering::*;
        let big = 1i64 << 53;
        // f64 cannot hold 2^53 + 1: Python still orders it above 2^53.
        assert_eq!(
            Value::Int(big + 1).key_cmp(&Value::Float(big as f64)),
            Greater
        );
        assert_eq!(Value::Int(big + 1).key_cmp(&Value::Int(big)), Greater);
        assert_eq!(Value::Int(2).key_cmp(&Value::Float(2.5)), Less);
        assert_eq!(Value::Int(3).key_cmp(&Value::Float(2.5)), Greater);
        assert_eq!(Value::Int(-3).key_cmp(&Value::Float(-2.5)), Less);
        assert_eq!(Value::Int(-2).key_cmp(&Value::Float(-2.5)), Greater);
        assert_eq!(Value::Float(-2.5).key_cmp(&Value::Int(-2)), Less);
        assert_eq!(Value::Int(i64::MAX).key_cmp(&Value::Float(1e19)), Less);
        assert_eq!(Value::Int(i64::MIN).key_cmp(&Value::Float(-1e19)), Greater);
        assert_eq!(
            Value::Int(i64::MIN).key_cmp(&Value::Float(i64::MIN as f64)),
            Equal
        );
        assert_eq!(Value::Int(0).key_cmp(&Value::Float(f64::INFINITY)), Less);
        assert_eq!(
            Value::Int(0).key_cmp(&Value::Float(f64::NEG_INFINITY)),
            Greater
        );
        // Text by code point, as Python compares str.
        assert_eq!(text("Z").key_cmp(&text("a")), Less);
        assert_eq!(text("é").key_cmp(&text("z")), Greater);
    }

    #[test]
    fn key_hash_agrees_with_key_eq() {
        let same = [
            (Value::Int(2), Value::Float(2.0)),
            (Value::Bool(true), Value::Int(1)),
            (Value::Float(-0.0), Value::Int(0)),
            (Value::Null, Value::Float(f64::NAN)),
            (Value::Float(1e19), Value::Float(1e19)),
            (Value::Float(0.5), Value::Float(0.5)),
        ];
        for (a, b) in same {
            assert!(a.key_eq(&b), "{a:?} {b:?}");
            assert_eq!(hash_of(&a), hash_of(&b), "{a:?} {b:?}");
        }
        assert_ne!(hash_of(&text("x")), hash_of(&Value::Py("x".into())));
    }

    #[test]
    fn key_rows() {
        let a = Key(vec![Value::Int(1), text("x")]);
        let b = Key(vec![Value::Float(1.0), text("x")]);
        let c = Key(vec![Value::Int(1), text("y")]);
        assert_eq!(a, b);
        assert!(a < c);
        let mut m = std::collections::HashMap::new();
        m.insert(a, 1);
        assert_eq!(m.get(&b), Some(&1));
        assert_eq!(
            cmp_rows(&[Value::Int(1)], &[Value::Int(1), Value::Null]),
            Ordering::Less
        );
    }
}
