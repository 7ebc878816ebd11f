//! `tracelens._tracelens`: the extension module under the `tracelens`
//! Python package (python/tracelens). It runs the command line's own code
//! ([`tracelens::cli`]) with the GIL released, and hands sheets to Python
//! as Parquet bytes that pyarrow turns into DataFrames. The call tree
//! ([`tree`]) and the roofline calculator ([`roofline`]) come over as
//! objects and dicts.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use tracelens::cli::embed::{self, ReportRun, SheetsRun};
use tracelens::table::Table;

mod convert;
mod roofline;
mod tree;

create_exception!(
    _tracelens,
    TracelensError,
    PyException,
    "A trace or an argument tracelens cannot use; the message is the line the command prints."
);

/// What a command computed: `report`'s report, or another command's
/// sheets.
enum Run {
    /// `tracelens report`.
    Report(Box<ReportRun>),
    /// `tracelens collectives`, `tracelens compare`,
    /// `tracelens critical-path`.
    Sheets(SheetsRun),
}

/// A computed report: its sheets, Markdown summary and writers.
#[pyclass(frozen, module = "tracelens._tracelens")]
struct Report {
    run: Run,
}

impl Report {
    fn sheets(&self) -> &[Table] {
        match &self.run {
            Run::Report(r) => &r.report.sheets,
            Run::Sheets(s) => &s.sheets,
        }
    }
}

#[pymethods]
impl Report {
    /// The sheet names, in workbook order.
    fn sheet_names(&self) -> Vec<String> {
        self.sheets().iter().map(|s| s.name.clone()).collect()
    }

    /// The sheet `name` as a Parquet file's bytes (columns typed as
    /// `read_csv` types the sheet's CSV).
    fn sheet_parquet<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let table = tracelens::table::find(self.sheets(), name)
            .ok_or_else(|| TracelensError::new_err(format!("no sheet named {name:?}")))?;
        let bytes = py
            .detach(|| tracelens::report::parquet::table_to_parquet(table))
            .map_err(|e| TracelensError::new_err(format!("{name}: {e}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The warnings the command would have printed (trace-quality notes,
    /// ranks left out).
    fn warnings(&self) -> Vec<String> {
        match &self.run {
            Run::Report(r) => r.report.quality.notes(),
            Run::Sheets(s) => s.warnings.clone(),
        }
    }

    /// `compare`'s verdict as the JSON `--json` writes; None otherwise.
    fn verdict_json(&self) -> Option<String> {
        match &self.run {
            Run::Report(_) => None,
            Run::Sheets(s) => s.verdict_json().map(str::to_string),
        }
    }

    /// The Markdown summary (`--md`).
    fn markdown(&self) -> String {
        match &self.run {
            Run::Report(r) => r.markdown(),
            Run::Sheets(s) => s.markdown().to_string(),
        }
    }

    /// Writes a workbook, CSV sheets and Parquet sheets, as asked; all or
    /// nothing. Returns what was written.
    #[pyo3(signature = (xlsx=None, csv=None, parquet=None))]
    fn write(
        &self,
        py: Python<'_>,
        xlsx: Option<PathBuf>,
        csv: Option<PathBuf>,
        parquet: Option<PathBuf>,
    ) -> PyResult<Vec<String>> {
        let (x, c, p) = (xlsx.as_deref(), csv.as_deref(), parquet.as_deref());
        py.detach(|| match &self.run {
            Run::Report(r) => r.write(x, c, p),
            Run::Sheets(s) => s.write(x, c, p),
        })
        .map_err(TracelensError::new_err)
    }
}

/// `tracelens report ARGS` without writing: `args` follow `report`.
#[pyfunction]
fn report(py: Python<'_>, args: Vec<String>) -> PyResult<Report> {
    py.detach(|| embed::report(args))
        .map(|r| Report {
            run: Run::Report(Box::new(r)),
        })
        .map_err(TracelensError::new_err)
}

/// `tracelens collectives ARGS` without writing: `args` follow
/// `collectives`.
#[pyfunction]
fn collectives(py: Python<'_>, args: Vec<String>) -> PyResult<Report> {
    py.detach(|| embed::collectives(args))
        .map(|s| Report {
            run: Run::Sheets(s),
        })
        .map_err(TracelensError::new_err)
}

/// `tracelens critical-path ARGS` without writing: `args` follow
/// `critical-path`.
#[pyfunction]
fn critical_path(py: Python<'_>, args: Vec<String>) -> PyResult<Report> {
    py.detach(|| embed::critical_path(args))
        .map(|s| Report {
            run: Run::Sheets(s),
        })
        .map_err(TracelensError::new_err)
}

/// `tracelens compare ARGS` without writing: `args` follow `compare`.
#[pyfunction]
fn compare(py: Python<'_>, args: Vec<String>) -> PyResult<Report> {
    py.detach(|| embed::compare(args))
        .map(|s| Report {
            run: Run::Sheets(s),
        })
        .map_err(TracelensError::new_err)
}

/// `tracelens merge ARGS`: writes the merged trace and returns the
/// command's summary as JSON text.
#[pyfunction]
fn merge(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.detach(|| embed::merge(args))
        .map_err(TracelensError::new_err)
}

/// `tracelens split ARGS`: writes the split traces and manifests and
/// returns the command's summary as JSON text.
#[pyfunction]
fn split(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.detach(|| embed::split(args))
        .map_err(TracelensError::new_err)
}

/// Runs the command line `argv` (program name first); returns the exit
/// code. The `tracelens` console script.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(|| tracelens::cli::run_from(argv))
}

/// The module.
#[pymodule]
fn _tracelens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Report>()?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(collectives, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(critical_path, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_class::<tree::Tree>()?;
    m.add_class::<tree::Node>()?;
    m.add_function(wrap_pyfunction!(tree::load_tree, m)?)?;
    m.add_function(wrap_pyfunction!(roofline::roofline, m)?)?;
    m.add("TracelensError", m.py().get_type::<TracelensError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
