"""tracelens in Python: performance reports from AI profiler traces as
pandas DataFrames.

>>> import tracelens
>>> r = tracelens.report("trace.json.gz", gpu_arch="H100")
>>> r["ops_summary"].head()

The work is done by the same Rust code as the ``tracelens`` command, with the
GIL released; sheets come over as Parquet (typed columns, read through
Arrow), so each DataFrame equals ``pandas.read_csv`` of the sheet that
``tracelens report --csv`` writes, values and dtypes.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from . import _tracelens
from ._tracelens import Node, TracelensError

if TYPE_CHECKING:
    import pandas

__all__ = [
    "Node",
    "Report",
    "TracelensError",
    "Tree",
    "collectives",
    "compare",
    "critical_path",
    "fleet",
    "merge",
    "report",
    "roofline",
    "split",
    "tree",
    "__version__",
]
__version__: str = _tracelens.__version__

PathLike = Union[str, "os.PathLike[str]"]


def _flags(options: Dict[str, Any]) -> List[str]:
    """Command-line flags for keyword options: ``short_kernel_threshold_us=20``
    is ``--short-kernel-threshold-us=20``, ``True`` a bare flag, a list
    the flag and its values, ``False`` and ``None`` nothing."""
    out: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.append(flag)
            out.extend(str(v) for v in value)
        else:
            # One `--flag=value` word: a value such as `-inf` or `-1` is
            # never taken for a flag of its own.
            text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
            out.append(f"{flag}={text}")
    return out


class Report:
    """What a command computed: every sheet as a DataFrame
    (``report["ops_summary"]``, ``report.sheets``), its Markdown summary,
    its warnings, and the writers of the command line."""

    def __init__(self, inner: "_tracelens.Report") -> None:
        self._inner = inner
        self._frames: Dict[str, "pandas.DataFrame"] = {}

    @property
    def sheet_names(self) -> List[str]:
        """The sheet names, in workbook order."""
        return list(self._inner.sheet_names())

    def __getitem__(self, name: str) -> "pandas.DataFrame":
        """The sheet ``name`` as a DataFrame (built once, then cached)."""
        if name not in self._frames:
            import pyarrow as pa
            import pyarrow.parquet as pq

            data = self._inner.sheet_parquet(name)
            self._frames[name] = pq.read_table(pa.BufferReader(data)).to_pandas()
        return self._frames[name]

    def __contains__(self, name: object) -> bool:
        return name in self.sheet_names

    def __repr__(self) -> str:
        return f"<tracelens.Report: {len(self.sheet_names)} sheets>"

    @property
    def sheets(self) -> Dict[str, "pandas.DataFrame"]:
        """Every sheet, by name, as DataFrames."""
        return {name: self[name] for name in self.sheet_names}

    @property
    def warnings(self) -> List[str]:
        """The warnings the command prints (trace-quality notes, ranks
        left out)."""
        return list(self._inner.warnings())

    @property
    def verdict(self) -> Optional[Dict[str, Any]]:
        """``compare``'s verdict, as the JSON ``--json`` writes it; None for
        other commands."""
        text = self._inner.verdict_json()
        return None if text is None else json.loads(text)

    @property
    def health(self) -> Optional["pandas.DataFrame"]:
        """The trace's health checks (the ``health`` sheet: one row per
        check with its ``status`` and ``evidence``); None for a result
        without one (commands other than ``report``, ``collectives`` and
        ``compare``)."""
        return self["health"] if "health" in self else None

    @property
    def findings(self) -> Optional["pandas.DataFrame"]:
        """The ranked findings (the ``findings`` sheet), then the rules that
        could not tell (``severity`` ``cannot_tell``); None without a
        diagnosis."""
        return self["findings"] if "findings" in self else None

    def health_records(self) -> List[Dict[str, Any]]:
        """:attr:`health` as a list of dicts, one per check ([] without)."""
        h = self.health
        return [] if h is None else h.to_dict("records")

    def finding_records(self) -> List[Dict[str, Any]]:
        """:attr:`findings` as a list of dicts, ranked ([] without)."""
        f = self.findings
        return [] if f is None else f.to_dict("records")

    def markdown(self) -> str:
        """The Markdown summary (``--md``) for a pull request."""
        return self._inner.markdown()

    def to_excel(self, path: PathLike) -> str:
        """Writes the workbook (``-o FILE.xlsx``), formatted as the command
        writes it."""
        return self._inner.write(xlsx=os.fspath(path))[0]

    def to_csv(self, directory: PathLike) -> str:
        """Writes one CSV per sheet into ``directory`` (``--csv DIR``)."""
        return self._inner.write(csv=os.fspath(directory))[0]

    def to_parquet(self, directory: PathLike) -> str:
        """Writes one Parquet file per sheet into ``directory``
        (``--parquet DIR``)."""
        return self._inner.write(parquet=os.fspath(directory))[0]


def report(
    path: PathLike,
    gpu_arch: Optional[str] = None,
    capture_dir: Optional[PathLike] = None,
    **options: Any,
) -> Report:
    """The report of the trace at ``path`` (``.json``, ``.json.gz``, ``.zip``,
    XPlane ``.pb``, rocprofv3 JSON), as ``tracelens report`` computes it.

    ``gpu_arch`` (a name such as ``"H100"`` or a JSON file) adds the
    roofline columns; ``capture_dir`` attributes graph-replayed kernels to
    their captured ops. Other keywords are the command's flags with
    underscores: ``short_kernel_threshold_us=20``,
    ``include_unlinked_kernels=True``, ``inference=True``.

    Raises :class:`TracelensError` with the command's one-line message on a
    bad trace or option.
    """
    args = [os.fspath(path)]
    args += _flags({"gpu_arch": gpu_arch, "capture_dir": capture_dir, **options})
    return Report(_tracelens.report(args))


def collectives(
    trace_dir: PathLike,
    world_size: Optional[int] = None,
    **options: Any,
) -> Report:
    """The multi-rank collective report of the rank traces in ``trace_dir``,
    as ``tracelens collectives`` computes it: ``nccl_summary_by_type``,
    ``straggler_summary`` and the other sheets, as DataFrames.

    ``world_size`` defaults to what the traces say (or the number of rank
    traces). Other keywords are the command's flags with underscores:
    ``gpus_per_node=8``, ``recursive=True``, ``rank_regex=r"rank(\\d+)"``.
    """
    args = _flags({"trace_dir": trace_dir, "world_size": world_size, **options})
    return Report(_tracelens.collectives(args))


def compare(*inputs: PathLike, names: Optional[List[str]] = None, **options: Any) -> Report:
    """Compares two or more runs (traces or report folders/workbooks; the
    first is the baseline), as ``tracelens compare`` does: the comparison
    sheets as DataFrames, ``.verdict`` (the ``--json`` record) and
    ``.markdown()`` (the pull-request comment).

    ``names`` tags the inputs; other keywords are the command's flags:
    ``fail_above=5``, ``min_ms=0.2``, ``no_diff=True``.
    """
    args = [os.fspath(p) for p in inputs]
    args += _flags({"names": names, **options})
    return Report(_tracelens.compare(args))


def critical_path(
    path: PathLike,
    step: Optional[int] = None,
    window: Optional[Tuple[float, float]] = None,
) -> Report:
    """The critical path of one profiler step of the PyTorch trace at
    ``path``, as ``tracelens critical-path`` finds it: sheets
    ``critical_path_summary`` (µs and share of the path per ``bound_by``)
    and ``critical_path`` (one row per edge: event, UID, begin and end in
    µs, what bounds it), and ``.markdown()`` (the terminal summary).

    ``step=N`` analyses ``ProfilerStep#N``; ``window=(a, b)`` the time
    from ``a`` to ``b`` (µs, trace time). Without either the longest step
    is used, or the whole trace when it has no step annotation.
    """
    if step is not None and window is not None:
        raise TracelensError("critical_path: give step or window, not both")
    args = [os.fspath(path)]
    if step is not None:
        args.append(f"--step={int(step)}")
    if window is not None:
        a, b = window
        args.append(f"--window={float(a)!r}:{float(b)!r}")
    return Report(_tracelens.critical_path(args))


def merge(
    *traces: PathLike,
    output: PathLike,
    trace_dir: Optional[PathLike] = None,
    include_pyfunc: bool = False,
    window: Optional[Tuple[float, float]] = None,
    **options: Any,
) -> Dict[str, Any]:
    """Merges several ranks' PyTorch traces into one timeline at
    ``output``, as ``tracelens merge`` does (the reference's TraceFuse):
    the traces in rank order, or ``trace_dir`` to find the ranks as
    ``collectives`` does. ``output`` is written exactly as named, gzip
    JSON when it ends in ``.gz``.

    ``include_pyfunc=True`` keeps ``python_function`` events;
    ``window=(a, b)`` keeps events overlapping ``a``..``b`` (µs, the
    traces' own ``ts``). Other keywords are the command's flags:
    ``world_size=8``, ``rank_regex=r"rank(\\d+)"``, ``recursive=True``,
    ``align_clock=True`` (every rank's ``ts`` moved onto rank 0's
    ``baseTimeNanoseconds``).

    Returns the summary: ``output``, ``bytes``, ``linking_key``,
    ``offsets`` (field to multiplier), ``ranks`` (per rank: ``path``,
    ``events``, ``kept``, ``dropped_metadata``, ``dropped_filter``,
    ``dropped_window``, ``base_time_ns``), ``processes``, ``clock`` and
    ``warnings``. Raises :class:`TracelensError` with the command's
    one-line message on a bad trace or output path; nothing is written
    then.
    """
    if traces and trace_dir is not None:
        raise TracelensError("merge: give traces or trace_dir, not both")
    args = [os.fspath(p) for p in traces]
    args += _flags(
        {"trace_dir": trace_dir, "output": output, "include_pyfunc": include_pyfunc, **options}
    )
    if window is not None:
        a, b = window
        args.append(f"--window={float(a)!r}:{float(b)!r}")
    return json.loads(_tracelens.merge(args))


def split(
    trace: PathLike,
    output_dir: PathLike,
    *,
    iterations: str = "all",
    store_single_iteration: bool = False,
    find_steady_state: bool = False,
    divide_phases: bool = False,
    num_steps: Optional[int] = None,
    conc: Optional[int] = None,
    osl: Optional[float] = None,
    r: Optional[float] = None,
) -> Dict[str, Any]:
    """Cuts an inference trace into per-iteration or steady-state window
    traces in ``output_dir``, as ``tracelens split`` does (the reference's
    ``TraceLens_split_inference_trace``), with ``execution_details.json``
    and ``.csv`` beside them. Give at least one of
    ``store_single_iteration``, ``find_steady_state`` and
    ``divide_phases``; ``iterations`` is ``"all"``, ``"N"`` or
    ``"START:END"``; ``num_steps`` the steady-state window length (32);
    ``conc``, ``osl`` and ``r`` the expected concurrency and output lengths.

    Returns the summary: ``trace``, ``output_dir``, ``events``, ``roots``,
    ``root_source`` (``detailed``, ``native`` or ``call_tree``), ``range``,
    ``regions`` (with ``regions_fallback``), ``notes`` (what was chosen and
    why), ``outputs`` (the traces written) and ``manifest``. Raises
    :class:`TracelensError` with the command's one-line message when there
    is nothing to split, a range names no iteration, or the trace or
    folder is refused; nothing is written then.
    """
    args = [os.fspath(trace)]
    args += _flags(
        {
            "output_dir": output_dir,
            "iterations": iterations,
            "store_single_iteration": store_single_iteration,
            "find_steady_state": find_steady_state,
            "divide_phases": divide_phases,
            "num_steps": num_steps,
            "conc": conc,
            "osl": osl,
            "r": r,
        }
    )
    return json.loads(_tracelens.split(args))


class Tree:
    """A trace's call tree, as ``tracelens tree`` builds it: Python frames
    (``nn.Module: …`` included), host ops, runtime launches and the GPU
    work they caused.

    Walk it from :attr:`roots` through ``Node.children``, or jump to nodes
    with :meth:`find` and :meth:`node`. Each :class:`Node` has ``name``,
    ``category``, ``ts``, ``dur``, ``end``, ``pid``, ``tid``, ``args``,
    ``parent``, ``children``, ``gpu_events`` (the kernels, copies and fills
    below it), ``gpu_time`` (their summed duration, µs) and ``uid`` (the
    ``UID`` of the report's sheets).
    """

    def __init__(self, inner: "_tracelens.Tree") -> None:
        self._inner = inner

    def __len__(self) -> int:
        return len(self._inner)

    @property
    def roots(self) -> List[Node]:
        """The outermost host events (frames and ops without a parent)."""
        return self._inner.roots

    def node(self, uid: int) -> Node:
        """The node of event ``uid`` (a sheet's ``UID``)."""
        return self._inner.node(uid)

    def find(self, pattern: str, category: Optional[str] = None) -> List[Node]:
        """Every node whose name matches the regular expression ``pattern``
        (Rust syntax, searched anywhere in the name), optionally only of
        one ``category`` (``"python_function"``, ``"cpu_op"``,
        ``"kernel"``, …), in uid order."""
        return self._inner.find(pattern, category)

    def modules(self, all: bool = False) -> "pandas.DataFrame":
        """The nn.Module view: one row per module frame, parents before
        their children, as ``tracelens tree --modules`` prints it: ``uid``,
        ``parent_uid``, ``depth``, ``module``, ``path`` (the dotted names
        from the outermost module), ``ts``, ``dur``, ``gpu_time_us`` and
        ``gpu_events`` (the GPU work below the module). Modules that
        launch no GPU work are included only with ``all=True``. Needs a
        trace profiled with ``with_stack=True, with_modules=True``."""
        import pandas as pd

        frame = pd.DataFrame(self._inner.module_columns(all))
        frame["parent_uid"] = frame["parent_uid"].astype("Int64")
        return frame

    @property
    def gpu_total(self) -> int:
        """GPU events (kernels, copies, fills) in the trace."""
        return self._inner.gpu_total

    @property
    def gpu_unlinked(self) -> int:
        """GPU events that no launch claimed (under no node)."""
        return self._inner.gpu_unlinked

    def __repr__(self) -> str:
        return repr(self._inner)


def tree(path: PathLike) -> Tree:
    """The call tree of the trace at ``path``, loaded in full (the GIL is
    released while it loads).

    >>> t = tracelens.tree("trace.json.gz")
    >>> [k.name for k in t.find("^nn.Module: BertSelfOutput_0$")[0].gpu_events]
    """
    return Tree(_tracelens.load_tree(os.fspath(path)))


from . import fleet, roofline  # noqa: E402  (the submodules need the names above)
