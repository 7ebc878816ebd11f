"""Fleet mode from Python: ``tracelens.fleet.summarize`` / ``reduce`` in
this process, and the same map and reduce as tasks of a local Ray cluster
(several worker processes), each giving the report the command line gives
on the same synthetic fleet (made by tools/synth_fleet.py)."""

import os
import subprocess
import sys

import pytest

from tracelens import fleet

from conftest import ROOT, TESTDATA


def synth(out):
    """16 ranks of 3 steps from testdata/fleet; rank 5 and step 1 slow."""
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "synth_fleet.py"), str(TESTDATA / "fleet"),
         str(out), "--ranks", "16", "--steps", "3", "--slow-rank", "5", "--slow-step", "1",
         "--jobs", "2"],
        check=True, capture_output=True)
    return out


def cli_report(binary, traces, tmp_path):
    """The fleet report of the command line."""
    s, r = tmp_path / "cli_s", tmp_path / "cli_r"
    subprocess.run([binary, "summarize", str(traces), "--out", str(s), "-q"], check=True)
    subprocess.run([binary, "fleet", str(s), "--out", str(r), "-q"], check=True)
    return s, r


def assert_same_report(a, b, title_a, title_b):
    """Every sheet and heatmap byte for byte; the page but for its title."""
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert any(n.endswith(".svg") for n in names)
    for n in names:
        x, y = (a / n).read_bytes(), (b / n).read_bytes()
        if n == "fleet.md":
            x = x.replace(str(title_a).encode(), b"TITLE")
            y = y.replace(str(title_b).encode(), b"TITLE")
        assert x == y, n


def assert_planted_found(report):
    out = report["fleet_outliers"]
    assert list(out[out.kind == "step"].step) == [6]
    ranks = out[out.kind == "rank"]
    assert set(ranks[ranks.metric == "gpu_span_us"]["rank"]) == {5}


def test_in_process_map_and_reduce_equal_the_command_line(binary, tmp_path):
    traces = synth(tmp_path / "traces")
    cli_s, cli_r = cli_report(binary, traces, tmp_path)
    s = fleet.summarize(sorted(traces.glob("rank*.json.gz")), tmp_path / "s", jobs=2)
    report = fleet.reduce(s, tmp_path / "r")
    assert not report.gate_failed
    assert_same_report(report.folder, cli_r, s, cli_s)
    assert_planted_found(report)
    assert len(report.heatmaps) == 3
    assert "rank 5" in report.markdown()


def test_ray_local_cluster_gives_the_command_lines_report(binary, tmp_path):
    if os.environ.get("TRACELENS_REQUIRE_RAY"):
        # The test command installs ray: a missing one is a failure there.
        import ray
    else:
        ray = pytest.importorskip("ray", reason="needs ray (pip install ray)")
    traces = synth(tmp_path / "traces")
    cli_s, cli_r = cli_report(binary, traces, tmp_path)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run = fleet.summarize_ray(sorted(traces.glob("rank*.json.gz")), tmp_path / "s",
                                  traces_per_task=2)
        report = fleet.reduce_ray(tmp_path / "s", tmp_path / "r")
    finally:
        ray.shutdown()
    assert run.tasks == 8
    # The map ran in worker processes, not in this one.
    assert all(pid != os.getpid() for _, pid in run.workers)
    assert len(run.workers) >= 2, run.workers
    assert_same_report(report.folder, cli_r, tmp_path / "s", cli_s)
    assert_planted_found(report)


def test_errors_raise(tmp_path):
    with pytest.raises(fleet.TracelensError):
        fleet.reduce(tmp_path, tmp_path / "r")
    with pytest.raises(fleet.TracelensError):
        fleet.summarize([tmp_path / "missing.json"], tmp_path / "s")
