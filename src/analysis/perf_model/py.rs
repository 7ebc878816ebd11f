//! Python values as the reference's models store them in `param_details`,
//! rendered with Python's `str()` (the text pandas groups and prints).

use crate::pyfmt::{float_repr, str_repr};
use crate::table::Value;
use crate::trace::ArgValue;

/// A Python object held in a model parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// A Python int.
    Int(i64),
    /// A Python float.
    Float(f64),
    /// A Python str.
    Str(String),
    /// A tuple.
    Tuple(Vec<Py>),
    /// A list.
    List(Vec<Py>),
}

impl Py {
    /// Python `repr()`.
    pub fn repr(&self) -> String {
        match self {
            Py::None => "None".to_string(),
            Py::Bool(true) => "True".to_string(),
            Py::Bool(false) => "False".to_string(),
            Py::Int(i) => i.to_string(),
            Py::Float(f) => float_repr(*f),
            Py::Str(s) => str_repr(s),
            Py::Tuple(v) if v.len() == 1 => format!("({},)", v[0].repr()),
            Py::Tuple(v) => format!("({})", join(v)),
            Py::List(v) => format!("[{}]", join(v)),
        }
    }

    /// Python `str()`: strings bare, everything else as `repr()`.
    pub fn to_str(&self) -> String {
        match self {
            Py::Str(s) => s.clone(),
            other => other.repr(),
        }
    }

    /// A recorded argument as Python would hold it after `json.loads`, with
    /// lists turned into tuples (the reference's `tuple(...)` of shapes)
    /// when `as_tuples` is set. Integers beyond `i64` are floats (as
    /// serde_json made them); maps are kept as their JSON text.
    pub fn from_arg(v: &ArgValue, as_tuples: bool) -> Py {
        match v {
            ArgValue::Null => Py::None,
            ArgValue::Bool(b) => Py::Bool(*b),
            ArgValue::Int(i) => Py::Int(*i),
            ArgValue::UInt(u) => Py::Float(*u as f64),
            ArgValue::Float(x) => Py::Float(*x),
            ArgValue::Str(s) => Py::Str(s.to_string()),
            ArgValue::List(a) => {
                let items = a.iter().map(|x| Py::from_arg(x, as_tuples)).collect();
                if as_tuples {
                    Py::Tuple(items)
                } else {
                    Py::List(items)
                }
            }
            ArgValue::Map(_) => Py::Str(v.json_text()),
        }
    }

    /// A tuple of ints.
    pub fn ints(v: &[i64]) -> Py {
        Py::Tuple(v.iter().map(|&i| Py::Int(i)).collect())
    }

    /// A string, or None.
    pub fn opt_str(s: Option<&str>) -> Py {
        s.map(|s| Py::Str(s.to_string())).unwrap_or(Py::None)
    }

    /// The value as a table cell: `None` is `Null`, numbers, bools and
    /// strings keep their type, tuples and lists are their repr.
    pub fn to_value(&self) -> Value {
        match self {
            Py::None => Value::Null,
            Py::Bool(b) => Value::Bool(*b),
            Py::Int(i) => Value::Int(*i),
            Py::Float(x) => Value::Float(*x),
            Py::Str(s) => Value::Text(s.as_str().into()),
            Py::Tuple(_) | Py::List(_) => Value::Py(self.repr().into()),
        }
    }
}

fn join(v: &[Py]) -> String {
    v.iter().map(Py::repr).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_python() {
        assert_eq!(Py::ints(&[5]).repr(), "(5,)");
        assert_eq!(Py::ints(&[]).repr(), "()");
        assert_eq!(Py::ints(&[1, 5184, 768]).to_str(), "(1, 5184, 768)");
        let t = Py::Tuple(vec![Py::Str("c10::BFloat16".into()), Py::None]);
        assert_eq!(t.to_str(), "('c10::BFloat16', None)");
        assert_eq!(
            Py::List(vec![Py::Bool(true), Py::Bool(false)]).to_str(),
            "[True, False]"
        );
        assert_eq!(Py::Str("fp8".into()).to_str(), "fp8");
        assert_eq!(Py::Float(16.0).to_str(), "16.0");
        let j = crate::test_support::arg!([[1, 2], [], 3.5, "x"]);
        assert_eq!(Py::from_arg(&j, true).repr(), "((1, 2), (), 3.5, 'x')");
        assert_eq!(Py::from_arg(&j, false).repr(), "[[1, 2], [], 3.5, 'x']");
    }

    #[test]
    fn cells_print_like_str() {
        for p in [
            Py::None,
            Py::Bool(true),
            Py::Int(3),
            Py::Float(2.0),
            Py::Str("fp8".into()),
            Py::ints(&[1, 2]),
        ] {
            let v = p.to_value();
            if p != Py::None {
                assert_eq!(v.py_str(), p.to_str(), "{p:?}");
            }
        }
        assert_eq!(Py::None.to_value(), Value::Null);
        assert_eq!(Py::ints(&[1]).to_value(), Value::Py("(1,)".into()));
    }
}
