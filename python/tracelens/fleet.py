"""Fleet mode from Python: summarise many traces (the map) and merge the
summaries into a fleet report (the reduce), in this process or as tasks of
a Ray cluster.

>>> from tracelens import fleet
>>> fleet.summarize(["rank0.json.gz", "rank1.json.gz"], "summaries/")
>>> report = fleet.reduce("summaries/", "fleet_report/")
>>> report["fleet_outliers"]

On a cluster the map runs as one Ray task per batch of traces, each
writing its summaries where the traces are read (a shared file system or
object-store mount), and the reduce runs as one task, by default on the
node the driver runs on:

>>> import ray; ray.init()
>>> fleet.summarize_ray(paths, "/shared/summaries", traces_per_task=16)
>>> fleet.reduce_ray("/shared/summaries", "/shared/fleet_report")

Ray is optional: ``summarize`` and ``reduce`` need nothing but this package,
and the ``tracelens summarize`` / ``tracelens fleet`` commands do the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Union

from . import _tracelens
from ._tracelens import TracelensError

if TYPE_CHECKING:
    import pandas

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["FleetReport", "MapRun", "reduce", "reduce_ray", "summarize", "summarize_ray"]


def _run(argv: List[str]) -> int:
    """Runs the ``tracelens`` command line in this process (the GIL is
    released); its messages go to this process's stderr."""
    return _tracelens.main(["tracelens", *argv])


def _summarize_args(traces: Sequence[PathLike], out: PathLike, jobs: Optional[int],
                    gpu_arch: Optional[str]) -> List[str]:
    argv = ["summarize", *(os.fspath(t) for t in traces), "--out", os.fspath(out), "-q"]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    if gpu_arch is not None:
        argv += ["--gpu-arch", gpu_arch]
    return argv


def summarize(traces: Iterable[PathLike], out: PathLike, *, jobs: Optional[int] = None,
              gpu_arch: Optional[str] = None) -> Path:
    """Writes one summary folder per trace into ``out`` (``tracelens
    summarize``): its report sheets, per-step figures and collective
    kernels as Parquet. ``jobs`` traces at once (default: the cores).
    Raises ``TracelensError`` if any trace fails (the others are written)."""
    traces = list(traces)
    code = _run(_summarize_args(traces, out, jobs, gpu_arch))
    if code != 0:
        raise TracelensError(
            f"tracelens summarize failed (exit {code}) on some of {len(traces)} traces; "
            "the reasons are on stderr")
    return Path(out)


class FleetReport:
    """A fleet report folder: its sheets as DataFrames
    (``report["fleet_ops"]``), the Markdown page, the heatmap SVG paths and,
    with a baseline and ``fail_above``, whether the CI gate failed."""

    def __init__(self, folder: Path, gate_failed: bool) -> None:
        self.folder = folder
        self.gate_failed = gate_failed

    @property
    def sheet_names(self) -> List[str]:
        """The sheets written, in name order."""
        return sorted(p.stem for p in self.folder.glob("*.csv"))

    def __getitem__(self, name: str) -> "pandas.DataFrame":
        import pandas

        path = self.folder / f"{name}.csv"
        if not path.is_file():
            raise KeyError(f"no sheet {name!r}; sheets: {', '.join(self.sheet_names)}")
        return pandas.read_csv(path)

    @property
    def sheets(self) -> Dict[str, "pandas.DataFrame"]:
        """Every sheet by name."""
        return {n: self[n] for n in self.sheet_names}

    def markdown(self) -> str:
        """The report page (``fleet.md``)."""
        return (self.folder / "fleet.md").read_text()

    @property
    def heatmaps(self) -> List[Path]:
        """The rank × step heatmap SVGs."""
        return sorted(self.folder.glob("heatmap_*.svg"))

    def __repr__(self) -> str:
        return f"<tracelens.fleet.FleetReport {self.folder}: {len(self.sheet_names)} sheets>"


def reduce(summaries: PathLike, out: PathLike, *, baseline: Optional[PathLike] = None,
           fail_above: Optional[float] = None, parquet: bool = False,
           gpus_per_node: Optional[int] = None) -> FleetReport:
    """Merges the summaries in ``summaries`` into a fleet report folder
    ``out`` (``tracelens fleet``), compared with ``baseline``'s summaries if
    given; ``fail_above`` sets the gate's threshold (%)."""
    argv = ["fleet", os.fspath(summaries), "--out", os.fspath(out), "-q"]
    if baseline is not None:
        argv += ["--baseline", os.fspath(baseline)]
    if fail_above is not None:
        argv += ["--fail-above", str(fail_above)]
    if parquet:
        argv.append("--parquet")
    if gpus_per_node is not None:
        argv += ["--gpus-per-node", str(gpus_per_node)]
    code = _run(argv)
    if code not in (0, 1):
        raise TracelensError(f"tracelens fleet failed (exit {code}); the reason is on stderr")
    return FleetReport(Path(out), gate_failed=code == 1)


def _batches(items: Sequence[PathLike], size: int) -> List[List[str]]:
    return [[os.fspath(t) for t in items[i:i + size]] for i in range(0, len(items), size)]


class MapRun:
    """What ``summarize_ray`` did: the summaries folder, the tasks run and
    the worker processes (host, pid) that ran them."""

    def __init__(self, out: Path, tasks: int, workers: List[tuple]) -> None:
        self.out = out
        self.tasks = tasks
        self.workers = sorted(set(workers))

    def __repr__(self) -> str:
        return (f"<tracelens.fleet.MapRun {self.out}: {self.tasks} tasks on "
                f"{len(self.workers)} worker processes>")


def summarize_ray(traces: Iterable[PathLike], out: PathLike, *, traces_per_task: int = 8,
                  gpu_arch: Optional[str] = None, num_cpus: float = 1) -> MapRun:
    """``summarize`` as Ray tasks: one task per ``traces_per_task`` traces,
    each using ``num_cpus`` cores (its traces one after another, so a
    worker holds one trace at a time). ``out`` must be reachable from every
    node (a shared or mounted file system). Uses the running Ray cluster,
    or starts a local one (``ray.init()``) when none is."""
    import ray

    if not ray.is_initialized():
        ray.init()
    traces = list(traces)
    task = ray.remote(num_cpus=num_cpus)(_summarize_task)
    refs = [task.remote(batch, os.fspath(out), gpu_arch)
            for batch in _batches(traces, max(1, traces_per_task))]
    results = ray.get(refs)
    failed = [msg for msg, _ in results if msg]
    if failed:
        raise TracelensError("; ".join(failed))
    return MapRun(Path(out), len(refs), [w for _, w in results])


def _summarize_task(batch: List[str], out: str, gpu_arch: Optional[str]) -> tuple:
    """One Ray task: summarises its traces one at a time; returns an error
    text (empty when all were written) and the worker (host, pid)."""
    import socket

    worker = (socket.gethostname(), os.getpid())
    code = _run(_summarize_args(batch, out, 1, gpu_arch))
    if code != 0:
        return (f"tracelens summarize failed (exit {code}) on a batch starting with "
                f"{batch[0]}", worker)
    return ("", worker)


def reduce_ray(summaries: PathLike, out: PathLike, *, node_id: Optional[str] = None,
               **options) -> FleetReport:
    """``reduce`` as one Ray task, on the node ``node_id`` (default: the
    driver's node, where the summaries usually are); the report folder is
    written there. ``options`` are ``reduce``'s."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if not ray.is_initialized():
        ray.init()
    node = node_id or ray.get_runtime_context().get_node_id()
    task = ray.remote(num_cpus=1)(_reduce_task).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False))
    code = ray.get(task.remote(os.fspath(summaries), os.fspath(out), options))
    if code not in (0, 1):
        raise TracelensError(f"tracelens fleet failed (exit {code}) in the Ray task")
    return FleetReport(Path(out), gate_failed=code == 1)


def _reduce_task(summaries: str, out: str, options: dict) -> int:
    """One Ray task: the reduce; returns the command's exit code."""
    try:
        return 1 if reduce(summaries, out, **options).gate_failed else 0
    except TracelensError:
        return 2
