//! Recorded arguments as sheet cells: the reference's DataFrame values and
//! Python reprs of argument values.

use rustc_hash::FxHashMap;

use crate::table::Value;
use crate::trace::{ArgValue, Trace, ValueId};

/// lists and maps as Python tuples / dicts; absent or `null` as `None`.
pub fn arg_value(a: Option<&ArgValue>) -> Value {
    match a {
        None | Some(ArgValue::Null) => Value::Null,
        Some(ArgValue::Int(i)) => Value::Int(*i),
        Some(ArgValue::UInt(u)) => Value::float_or_null(*u as f64),
        Some(ArgValue::Float(x)) => Value::float_or_null(*x),
        Some(ArgValue::Bool(b)) => Value::Bool(*b),
        Some(ArgValue::Str(s)) => Value::from(&**s),
        Some(v @ (ArgValue::List(_) | ArgValue::Map(_))) => {
            Value::Py(crate::pyfmt::py_repr(v, true).into())
        }
    }
}

/// Cache of Python reprs of argument values (lists become tuples).
#[derive(Default)]
pub struct ArgReprs(FxHashMap<ValueId, String>);

impl ArgReprs {
    /// The Python repr of the argument behind `id`; None when absent.
    pub fn get(&mut self, trace: &Trace, id: Option<ValueId>) -> Option<String> {
        let id = id?;
        Some(
            self.0
                .entry(id)
                .or_insert_with(|| crate::pyfmt::py_repr(trace.value(id), true))
                .clone(),
        )
    }
}
