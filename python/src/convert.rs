//! Rust values as the Python objects a user of the reference would get:
//! recorded arguments as `json.loads` gives them, model parameters as the
//! reference's Python values.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tracelens::analysis::perf_model::Py as Param;
use tracelens::trace::ArgValue;

/// A recorded argument as `json.loads` would give it.
pub fn arg_value<'py>(py: Python<'py>, v: &ArgValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ArgValue::Null => py.None().into_bound(py),
        ArgValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        ArgValue::Int(i) => i.into_pyobject(py)?.into_any(),
        ArgValue::UInt(u) => u.into_pyobject(py)?.into_any(),
        ArgValue::Float(x) => x.into_pyobject(py)?.into_any(),
        ArgValue::Str(s) => s.into_pyobject(py)?.into_any(),
        ArgValue::List(items) => {
            let items = items
                .iter()
                .map(|x| arg_value(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        ArgValue::Map(entries) => {
            let d = PyDict::new(py);
            for (k, x) in entries.iter() {
                d.set_item(&**k, arg_value(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A model parameter as the reference's Python value.
pub fn param<'py>(py: Python<'py>, v: &Param) -> PyResult<Bound<'py, PyAny>> {
    let all = |items: &[Param]| {
        items
            .iter()
            .map(|x| param(py, x))
            .collect::<PyResult<Vec<_>>>()
    };
    Ok(match v {
        Param::None => py.None().into_bound(py),
        Param::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Param::Int(i) => i.into_pyobject(py)?.into_any(),
        Param::Float(x) => x.into_pyobject(py)?.into_any(),
        Param::Str(s) => s.into_pyobject(py)?.into_any(),
        Param::Tuple(items) => PyTuple::new(py, all(items)?)?.into_any(),
        Param::List(items) => PyList::new(py, all(items)?)?.into_any(),
    })
}
