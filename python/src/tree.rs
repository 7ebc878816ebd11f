//! `tracelens.tree(path)`: the call tree to walk from Python. A [`Tree`]
//! holds the loaded trace; each [`Node`] is a handle (the tree and an event
//! index) whose fields are read from the trace when asked, so walking a big
//! tree creates Python objects only for the nodes visited.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tracelens::CallTree;
use tracelens::analysis::commands::tree_view::{gpu_time, module_rows};
use tracelens::trace::{EventId, Ident};

use crate::TracelensError;
use crate::convert::arg_value;

/// A trace loaded in full with its call tree.
#[pyclass(frozen, module = "tracelens._tracelens")]
pub struct Tree {
    inner: Arc<CallTree>,
}

/// One event of the tree: a Python frame, a host op, a runtime call or GPU
/// work.
#[pyclass(frozen, module = "tracelens._tracelens")]
pub struct Node {
    tree: Arc<CallTree>,
    id: EventId,
}

fn node(tree: &Arc<CallTree>, id: EventId) -> Node {
    Node {
        tree: Arc::clone(tree),
        id,
    }
}

fn nodes(tree: &Arc<CallTree>, ids: impl IntoIterator<Item = EventId>) -> Vec<Node> {
    ids.into_iter().map(|id| node(tree, id)).collect()
}

/// Loads the trace at `path` and links its call tree, Python frames
/// included, with the GIL released.
#[pyfunction]
pub fn load_tree(py: Python<'_>, path: PathBuf) -> PyResult<Tree> {
    py.detach(|| tracelens::cli::embed::tree(&path))
        .map(|t| Tree { inner: Arc::new(t) })
        .map_err(TracelensError::new_err)
}

#[pymethods]
impl Tree {
    /// Events in the trace (uids are 0 … len - 1).
    fn __len__(&self) -> usize {
        self.inner.trace.len()
    }

    /// The node of event `uid` (the `UID` of the report's sheets).
    fn node(&self, uid: usize) -> PyResult<Node> {
        if uid >= self.inner.trace.len() {
            return Err(PyIndexError::new_err(format!(
                "uid {uid} out of range: the trace has {} events",
                self.inner.trace.len()
            )));
        }
        Ok(node(&self.inner, EventId::new(uid)))
    }

    /// The outermost host events (frames and ops without a parent), in
    /// time order per thread.
    #[getter]
    fn roots(&self) -> Vec<Node> {
        nodes(&self.inner, self.inner.tree.host_roots.iter().copied())
    }

    /// Every event whose name matches the regular expression `pattern`
    /// (searched anywhere in the name), optionally of one category, in uid
    /// order.
    #[pyo3(signature = (pattern, category=None))]
    fn find(&self, py: Python<'_>, pattern: &str, category: Option<&str>) -> PyResult<Vec<Node>> {
        let re = regex::Regex::new(pattern)
            .map_err(|e| PyValueError::new_err(format!("invalid pattern {pattern:?}: {e}")))?;
        let t = &self.inner.trace;
        let ids: Vec<EventId> = py.detach(|| {
            t.ids()
                .filter(|&id| category.is_none_or(|c| t.event(id).cat.as_str() == c))
                .filter(|&id| re.is_match(t.name(id)))
                .collect()
        });
        Ok(nodes(&self.inner, ids))
    }

    /// The nn.Module view as columns: one entry per module frame, parents
    /// before children (the order of `tracelens tree --modules`); modules
    /// without GPU work only with `all`.
    #[pyo3(signature = (all=false))]
    fn module_columns<'py>(&self, py: Python<'py>, all: bool) -> PyResult<Bound<'py, PyDict>> {
        let CallTree { trace, tree } = &*self.inner;
        let rows = py.detach(|| module_rows(trace, tree, all));
        let module_name = |id: EventId| {
            let name = trace.name(id);
            name.strip_prefix("nn.Module: ").unwrap_or(name).to_string()
        };
        // A module's path: the names of the modules above it and its own.
        let mut paths: Vec<String> = Vec::with_capacity(rows.len());
        let mut stack: Vec<(EventId, usize)> = Vec::new();
        for r in &rows {
            stack.truncate(r.depth);
            stack.push((r.id, paths.len()));
            let own = module_name(r.id);
            paths.push(match r.depth {
                0 => own,
                _ => format!("{}.{own}", paths[stack[r.depth - 1].1]),
            });
        }
        let cols = PyDict::new(py);
        cols.set_item("uid", rows.iter().map(|r| r.id.index()).collect::<Vec<_>>())?;
        cols.set_item(
            "parent_uid",
            rows.iter()
                .map(|r| r.parent.map(|p| p.index()))
                .collect::<Vec<_>>(),
        )?;
        cols.set_item("depth", rows.iter().map(|r| r.depth).collect::<Vec<_>>())?;
        cols.set_item(
            "module",
            rows.iter().map(|r| module_name(r.id)).collect::<Vec<_>>(),
        )?;
        cols.set_item("path", paths)?;
        let event = |r: &tracelens::analysis::commands::tree_view::ModuleRow| trace.event(r.id);
        cols.set_item("ts", rows.iter().map(|r| event(r).ts).collect::<Vec<_>>())?;
        cols.set_item("dur", rows.iter().map(|r| event(r).dur).collect::<Vec<_>>())?;
        cols.set_item(
            "gpu_time_us",
            rows.iter().map(|r| r.gpu_time_us).collect::<Vec<_>>(),
        )?;
        cols.set_item(
            "gpu_events",
            rows.iter().map(|r| r.gpu_events).collect::<Vec<_>>(),
        )?;
        Ok(cols)
    }

    /// GPU events (kernels, copies, fills) in the trace.
    #[getter]
    fn gpu_total(&self) -> usize {
        self.inner.tree.gpu_total
    }

    /// GPU events that no launch claimed (not under any node).
    #[getter]
    fn gpu_unlinked(&self) -> usize {
        self.inner.tree.gpu_unlinked
    }

    fn __repr__(&self) -> String {
        format!(
            "<tracelens.Tree: {} events, {} roots, {} of {} GPU events linked>",
            self.inner.trace.len(),
            self.inner.tree.host_roots.len(),
            self.inner.tree.gpu_total - self.inner.tree.gpu_unlinked,
            self.inner.tree.gpu_total
        )
    }
}

/// A `pid` or `tid` as Python sees it in the trace: an int, a str or None.
fn ident<'py>(py: Python<'py>, v: &Ident) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Ident::Null => py.None().into_bound(py),
        Ident::Int(i) => i.into_pyobject(py)?.into_any(),
        Ident::Str(s) => s.into_pyobject(py)?.into_any(),
    })
}

#[pymethods]
impl Node {
    /// The event's index in the trace: the `UID` of the report's sheets and
    /// the handle `Tree.node` takes.
    #[getter]
    fn uid(&self) -> usize {
        self.id.index()
    }

    /// The event's name.
    #[getter]
    fn name(&self) -> &str {
        self.tree.trace.name(self.id)
    }

    /// The event's `cat`: `python_function`, `cpu_op`, `cuda_runtime`,
    /// `kernel`, `gpu_memcpy`, … (`other` for categories no pass reads).
    #[getter]
    fn category(&self) -> &'static str {
        self.tree.trace.event(self.id).cat.as_str()
    }

    /// Start time, µs as in the trace.
    #[getter]
    fn ts(&self) -> f64 {
        self.tree.trace.event(self.id).ts
    }

    /// Duration, µs.
    #[getter]
    fn dur(&self) -> f64 {
        self.tree.trace.event(self.id).dur
    }

    /// End time, µs.
    #[getter]
    fn end(&self) -> f64 {
        self.tree.trace.event(self.id).t_end()
    }

    /// The process id as written in the trace.
    #[getter]
    fn pid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        ident(
            py,
            self.tree.trace.ident(self.tree.trace.event(self.id).pid),
        )
    }

    /// The thread (or GPU stream) id as written in the trace.
    #[getter]
    fn tid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        ident(
            py,
            self.tree.trace.ident(self.tree.trace.event(self.id).tid),
        )
    }

    /// The arguments tracelens reads, under the trace's key names: `Input
    /// Dims`, `Input type`, `Input Strides`, `Concrete Inputs`,
    /// `correlation`, `External id`, `stream`, `Sequence number`, `kernel`
    /// (those the event has). Other keys are not kept at load.
    #[getter]
    fn args<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let trace = &self.tree.trace;
        let Some(a) = trace.args(self.id) else {
            return Ok(out);
        };
        let op = trace.op_args(self.id);
        for (key, v) in [
            ("Input Dims", op.dims),
            ("Input type", op.types),
            ("Input Strides", op.strides),
            ("Concrete Inputs", op.concrete),
        ] {
            if let Some(v) = v {
                out.set_item(key, arg_value(py, v)?)?;
            }
        }
        let links = a.links();
        for (key, v) in [
            ("correlation", links.correlation),
            ("External id", links.external_id),
            ("stream", links.stream),
            ("Sequence number", links.sequence),
        ] {
            if let Some(v) = v {
                out.set_item(key, v)?;
            }
        }
        if let Some(k) = a.kernel {
            out.set_item("kernel", trace.string(k))?;
        }
        Ok(out)
    }

    /// The enclosing host event, or for GPU work the launch that claimed it;
    /// None for a root or unlinked GPU work.
    #[getter]
    fn parent(&self) -> Option<Node> {
        self.tree.tree.parent(self.id).map(|p| node(&self.tree, p))
    }

    /// The nodes below: host children in time order, then GPU work in link
    /// order.
    #[getter]
    fn children(&self) -> Vec<Node> {
        nodes(&self.tree, self.tree.tree.children(self.id))
    }

    /// Every GPU event (kernel, copy, fill) below this node, ordered by
    /// launching event, then in link order.
    #[getter]
    fn gpu_events(&self) -> Vec<Node> {
        nodes(
            &self.tree,
            self.tree.tree.gpu_events(&self.tree.trace, self.id),
        )
    }

    /// GPU time below this node: the summed durations of its GPU events,
    /// µs (a GPU event's own duration).
    #[getter]
    fn gpu_time(&self) -> f64 {
        let t = &self.tree.trace;
        if t.event(self.id).cat.is_gpu() {
            return t.event(self.id).dur;
        }
        gpu_time(t, &self.tree.tree, self.id)
    }

    /// True for GPU work: kernels, copies and fills.
    #[getter]
    fn is_gpu(&self) -> bool {
        self.tree.trace.event(self.id).cat.is_gpu()
    }

    /// For a backward wrapper (`autograd::engine::evaluate_function: …`),
    /// the forward op it differentiates.
    #[getter]
    fn forward(&self) -> Option<Node> {
        let fwd = self.tree.tree.fwd_event.get(&self.id)?;
        Some(node(&self.tree, *fwd))
    }

    /// For a forward op, its backward wrappers.
    #[getter]
    fn backward(&self) -> Vec<Node> {
        let bwd = self.tree.tree.bwd_events.get(&self.id);
        nodes(&self.tree, bwd.into_iter().flatten().copied())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Node>()
            .is_ok_and(|o| Arc::ptr_eq(&o.get().tree, &self.tree) && o.get().id == self.id)
    }

    fn __hash__(&self) -> u64 {
        self.id.index() as u64
    }

    fn __repr__(&self) -> String {
        let e = self.tree.trace.event(self.id);
        format!(
            "<tracelens.Node uid={} {} {:?} ts={} dur={}>",
            self.id.index(),
            e.cat.as_str(),
            self.tree.trace.name(self.id),
            e.ts,
            e.dur
        )
    }
}
