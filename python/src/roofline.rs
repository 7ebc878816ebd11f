//! `tracelens.roofline.gemm/sdpa/conv`: the `tracelens roofline` answer as
//! a dict of figures and the command's text.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::TracelensError;
use crate::convert::param;

/// Answers `tracelens roofline ARGS` (`args`: what follows `roofline`, the
/// operation first): the figures as a dict, and the text the command
/// prints.
#[pyfunction]
pub fn roofline<'py>(py: Python<'py>, args: Vec<String>) -> PyResult<(Bound<'py, PyDict>, String)> {
    let r = tracelens::cli::embed::roofline(args).map_err(TracelensError::new_err)?;
    let f = r.figures();
    let out = PyDict::new(py);
    let params = PyDict::new(py);
    for (k, v) in &r.eval.params {
        params.set_item(*k, param(py, v)?)?;
    }
    out.set_item("params", params)?;
    out.set_item("flops", f.flops)?;
    out.set_item("bytes", f.bytes)?;
    out.set_item("flops_per_byte", f.intensity)?;
    out.set_item("compute_spec", &f.compute_spec)?;
    let gpu = f.gpu.as_ref();
    out.set_item("gpu_arch", gpu.map(|g| g.name.as_str()))?;
    out.set_item("peak_tflops", gpu.and_then(|g| g.peak_tflops))?;
    out.set_item("mem_bw_gbps", gpu.map(|g| g.mem_bw_gbps))?;
    out.set_item("ridge_flops_per_byte", gpu.and_then(|g| g.ridge))?;
    out.set_item("roofline_time_us", gpu.and_then(|g| g.roofline_us))?;
    out.set_item(
        "bound",
        gpu.and_then(|g| g.compute_bound)
            .map(tracelens::analysis::pytorch::op_metrics::bound_name),
    )?;
    let m = f.measured.as_ref();
    out.set_item("time_us", m.map(|m| m.time_us))?;
    out.set_item("tflops_s", m.map(|m| m.tflops_s))?;
    out.set_item("tb_s", m.map(|m| m.tb_s))?;
    out.set_item("pct_of_roofline", m.and_then(|m| m.pct_of_roofline))?;
    Ok((out, tracelens::report::view::calculator::text(&r.eval, &f)))
}
