"""`tracelens.report` against the command line: every DataFrame equals the
sheet `tracelens report --csv` writes, read back with `pandas.read_csv`
(values and dtypes); Parquet files read back equal; errors are the
command's lines."""

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

import tracelens
from conftest import TESTDATA, corpus, run


def csv_sheets(binary, trace, tmp_path, *flags):
    """The CSV folder of `tracelens report TRACE FLAGS --csv DIR`."""
    out = tmp_path / "csv"
    run(binary, "report", trace, "--csv", out, "-q", *flags)
    return out


def assert_sheets_equal_csv(report, csv_dir):
    names = report.sheet_names
    files = sorted(p.stem for p in csv_dir.glob("*.csv"))
    assert sorted(names) == files
    for name in names:
        frame = report[name]
        try:
            expected = pd.read_csv(csv_dir / f"{name}.csv")
        except pd.errors.EmptyDataError:
            # A sheet without columns (compare's empty `*_only_*` sheets).
            assert len(frame.columns) == 0, name
            continue
        if len(expected) == 0:
            # An empty CSV carries no types: only the columns can agree.
            assert list(frame.columns) == list(expected.columns), name
            assert len(frame) == 0, name
            continue
        pd.testing.assert_frame_equal(
            frame, expected, check_dtype=True, check_exact=False, rtol=1e-12, obj=name
        )


CASES = [
    ("testdata", "example.json", []),
    ("testdata", "example.json", ["--gpu-arch", "H100"]),
    ("testdata", "rocprof/small.json", []),
    ("testdata", "steps/three_steps.json", []),
    ("corpus", "pytorch/h100_bert_small.json.gz", ["--gpu-arch", "H100"]),
    ("corpus", "pytorch/mi300_qwen15_05b.json.gz", ["--gpu-arch", "MI300X"]),
    ("corpus", "pytorch/mi300_torch_compile_triton.json.gz", []),
]


def trace_path(where, rel):
    return TESTDATA / rel if where == "testdata" else corpus(rel)


def keywords(flags):
    """`["--gpu-arch", "H100"]` as `{"gpu_arch": "H100"}`."""
    return {flags[i][2:].replace("-", "_"): flags[i + 1] for i in range(0, len(flags), 2)}


@pytest.mark.parametrize("where,rel,flags", CASES, ids=[c[1] + " " + " ".join(c[2]) for c in CASES])
def test_every_dataframe_equals_its_csv_sheet(binary, tmp_path, where, rel, flags):
    trace = trace_path(where, rel)
    report = tracelens.report(trace, **keywords(flags))
    assert_sheets_equal_csv(report, csv_sheets(binary, trace, tmp_path, *flags))


def test_parquet_files_read_back_equal(tmp_path):
    report = tracelens.report(TESTDATA / "example.json", gpu_arch="H100")
    report.to_parquet(tmp_path / "pq")
    for name in report.sheet_names:
        path = tmp_path / "pq" / f"{name}.parquet"
        pd.testing.assert_frame_equal(pd.read_parquet(path), report[name], obj=name)


def test_writers_match_the_command(binary, tmp_path):
    trace = TESTDATA / "example.json"
    report = tracelens.report(trace)
    report.to_csv(tmp_path / "py")
    cli = csv_sheets(binary, trace, tmp_path)
    for path in sorted(cli.glob("*.csv")):
        assert (tmp_path / "py" / path.name).read_bytes() == path.read_bytes(), path.name
    book = tmp_path / "r.xlsx"
    report.to_excel(book)
    assert book.stat().st_size > 0
    assert report.markdown() == run(binary, "report", trace, "--md", "-", "-q")


def test_options_are_the_commands_flags(tmp_path):
    # A 1 µs short-kernel threshold counts fewer short kernels than 10 µs.
    trace = TESTDATA / "example.json"
    default = tracelens.report(trace)["short_kernels_summary"]
    strict = tracelens.report(trace, short_kernel_threshold_us=1)["short_kernels_summary"]
    assert len(strict) <= len(default)
    assert "ops_summary" in tracelens.report(trace, include_unlinked_kernels=True)


def test_step_summary_is_a_sheet():
    # testdata/steps/three_steps.json, worked out by hand: step 2's
    # all-reduce overlaps its GEMM by 5 of 25 µs; step 3 launched nothing.
    steps = tracelens.report(TESTDATA / "steps" / "three_steps.json")["step_summary"]
    assert list(steps["step"]) == [1, 2, 3]
    assert list(steps["kernels"]) == [2, 2, 0]
    assert list(steps["busy_us"][:2]) == [40.0, 50.0]
    assert list(steps["exposed_comm_us"][:2]) == [0.0, 20.0]
    assert list(steps["top_category"][:2]) == ["GEMM", "record_param_comms"]
    assert pd.isna(steps["busy_us"][2]) and pd.isna(steps["top_category"][2])


def test_idle_breakdown_is_a_sheet(tmp_path):
    # example.json's stream 7: HTA's split (events rounded to whole µs)
    # beside the exact one; the gap rows only with idle_details.
    trace = TESTDATA / "example.json"
    report = tracelens.report(trace)
    idle = report["idle_breakdown"]
    assert list(idle.columns[:4]) == ["stream", "idle_category", "idle_time", "idle_time_ratio"]
    assert list(idle["idle_category"]) == ["host_wait", "kernel_wait", "other"]
    assert list(idle["idle_time"]) == [149.0, 2.0, 0.0]
    assert list(idle["idle_time_exact (µs)"]) == [148.5, 3.0, 0.0]
    assert "idle_gaps" not in report.sheet_names
    detailed = tracelens.report(trace, idle_details=True)
    assert len(detailed["idle_gaps"]) == 4


def test_health_and_findings_are_the_commands_json(binary, tmp_path):
    # The same checks and findings as `report --json`, as DataFrames and
    # as lists of dicts.
    trace = corpus("pytorch/h100_bert_small.json.gz")
    out = tmp_path / "r.json"
    run(binary, "report", trace, "--json", out, "-q")
    doc = json.loads(out.read_text())
    report = tracelens.report(trace)
    health = report.health
    assert list(health["id"]) == [c["id"] for c in doc["health"]["checks"]]
    assert list(health["status"]) == [c["status"] for c in doc["health"]["checks"]]
    ranked = [f for f in report.finding_records() if f["severity"] != "cannot_tell"]
    assert [f["id"] for f in ranked] == [f["id"] for f in doc["findings"]]
    for got, want in zip(ranked, doc["findings"]):
        assert got["impact_mid_ms"] == pytest.approx(want["impact"]["mid_ms"])
        assert got["summary"] == want["summary"]
    assert len(report.health_records()) == len(doc["health"]["checks"])


def test_errors_are_the_commands_lines(tmp_path):
    with pytest.raises(tracelens.TracelensError, match="no such file"):
        tracelens.report(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    with pytest.raises(tracelens.TracelensError) as err:
        tracelens.report(bad)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(tracelens.TracelensError, match="no-such-option"):
        tracelens.report(TESTDATA / "example.json", no_such_option=1)
    with pytest.raises(tracelens.TracelensError, match="--csv DIR"):
        tracelens.report(TESTDATA / "example.json").to_excel(tmp_path / "r.csv")


def long_trace(path, ops=100_000):
    """A trace of `ops` operators, each launching one kernel (with its
    flow), written to `path`: big enough that its report takes a while
    (every corpus trace reports in about 50 ms)."""
    events = []
    for i in range(ops):
        ts = 10 * i
        events += [
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": {ts}, "dur": 8, "args": {{"External id": {i}, "Input Dims": [[{i % 7 + 1}, 3], [3, 4]]}}}}',
            f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts + 1}, "dur": 2, "args": {{"External id": {i}, "correlation": {i}}}}}',
            f'{{"ph": "s", "id": {i}, "pid": 1, "tid": 1, "ts": {ts + 1}, "cat": "ac2g", "name": "ac2g"}}',
            f'{{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": {ts + 3}, "dur": 4, "args": {{"correlation": {i}, "stream": 7, "device": 0}}}}',
            f'{{"ph": "f", "id": {i}, "pid": 0, "tid": 7, "ts": {ts + 3}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}',
        ]
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    return path


def test_the_gil_is_released_during_a_report(tmp_path):
    # A Python thread keeps running while one long report is computed: had
    # the call held the GIL, the thread's longest pause would span the call.
    trace = long_trace(tmp_path / "long.json")
    stamps = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        time.sleep(0.02)
        start = time.perf_counter()
        tracelens.report(trace, gpu_arch="H100")
        took = time.perf_counter() - start
        time.sleep(0.02)
    finally:
        done.set()
        t.join()
    during = [s for s in stamps if start <= s <= start + took]
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert took > 0.05, f"the report took {took:.3f} s: too short to tell"
    assert len(during) > 2 and max(gaps) < took / 2, (took, max(gaps), len(during))


def test_console_script_is_the_command(tmp_path):
    script = pathlib.Path(os.environ.get("TRACELENS_VENV_BIN", pathlib.Path(sys.executable).parent)) / "tracelens"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("tracelens "), done
    done = subprocess.run(
        [str(script), "report", str(tmp_path / "missing.json"), "--md", "-"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("tracelens: error: ") and "no such file" in done.stderr


def two_rank_job(tmp_path):
    """A job of two ranks: copies of the example trace (one all-reduce)."""
    job = tmp_path / "job"
    job.mkdir()
    for rank in range(2):
        (job / f"rank{rank}.json").write_bytes((TESTDATA / "example.json").read_bytes())
    return job


def collectives_csv(binary, job, tmp_path, *flags):
    out = tmp_path / "coll_csv"
    run(binary, "collectives", "--trace-dir", job, "--csv", out, "-q", *flags)
    return out


def test_collectives_dataframes_equal_csv_sheets(binary, tmp_path):
    job = two_rank_job(tmp_path)
    result = tracelens.collectives(job, world_size=2, agg_metrics=["mean", "max"])
    assert "nccl_summary_by_type" in result
    expected = collectives_csv(binary, job, tmp_path, "--world-size", "2", "--agg-metrics", "mean", "max")
    assert_sheets_equal_csv(result, expected)
    assert result.markdown().startswith("## tracelens collectives")


def test_collectives_on_eight_real_ranks(binary, tmp_path):
    job = corpus("multirank/dlrm_v100_8rank")
    result = tracelens.collectives(job)
    assert_sheets_equal_csv(result, collectives_csv(binary, job, tmp_path))
    with pytest.raises(tracelens.TracelensError, match="missing"):
        tracelens.collectives(tmp_path / "missing")


def test_compare_sheets_and_verdict_match_the_command(binary, tmp_path):
    trace = TESTDATA / "example.json"
    result = tracelens.compare(trace, trace, names=["base", "new"], fail_above=5)
    out = tmp_path / "cmp_csv"
    run(binary, "compare", trace, trace, "--names", "base", "new", "--fail-above", "5", "--csv", out, "-q")
    assert_sheets_equal_csv(result, out)
    assert result.verdict["verdict"] == "pass", result.verdict
    json_text = run(binary, "compare", trace, trace, "--names", "base", "new", "--fail-above", "5", "--json", "-")
    assert result.verdict == __import__("json").loads(json_text)
    assert "**Verdict: pass**" in result.markdown()
    with pytest.raises(tracelens.TracelensError):
        tracelens.compare(trace)


def test_compare_and_collectives_health_are_their_json(binary, tmp_path):
    # compare: each side's checks, then the change findings, as in --json.
    base, variant = TESTDATA / "diff/split_base.json", TESTDATA / "diff/split_variant.json"
    result = tracelens.compare(base, variant)
    doc = json.loads(run(binary, "compare", base, variant, "--json", "-"))
    health = result.health
    assert list(health["side"].unique()) == ["split_base", "split_variant"]
    for side in doc["health"]:
        rows = health[health["side"] == side["name"]]
        assert list(rows["id"]) == [c["id"] for c in side["checks"]]
        assert list(rows["status"]) == [c["status"] for c in side["checks"]]
    found = [f["id"] for f in result.finding_records() if f["severity"] != "cannot_tell"]
    assert found == [f["id"] for f in doc["findings"]]
    assert found[:2] == ["change.op_moved", "change.kernels_changed"]
    # collectives: the job's checks and findings.
    job = corpus("multirank/dlrm_v100_8rank")
    coll = tracelens.collectives(job)
    doc = json.loads(run(binary, "collectives", "--trace-dir", job, "--json", "-", "-q"))
    assert list(coll.health["id"]) == [c["id"] for c in doc["health"]["checks"]]
    ranked = [f["id"] for f in coll.finding_records() if f["severity"] != "cannot_tell"]
    assert ranked == [f["id"] for f in doc["findings"]]
    assert "comm.skew" in ranked


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -1])
def test_compare_refuses_a_threshold_the_command_refuses(bad):
    trace = TESTDATA / "example.json"
    # The command line refuses the same values with the same line.
    with pytest.raises(tracelens.TracelensError, match="--fail-above must be a percentage of 0 or more"):
        tracelens.compare(trace, trace, fail_above=bad)
    with pytest.raises(tracelens.TracelensError, match="--min-ms must be a duration of 0 or more"):
        tracelens.compare(trace, trace, min_ms=bad)


def snapshot(folder):
    """Every file under ``folder`` with its bytes."""
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_writers_refuse_to_overwrite_or_remove_an_input(binary, tmp_path):
    trace = tmp_path / "t.json"
    trace.write_bytes((TESTDATA / "example.json").read_bytes())
    base = tmp_path / "base"
    run(binary, "report", trace, "--csv", base, "-q")
    (tmp_path / "link").symlink_to(base)
    before = snapshot(tmp_path)
    result = tracelens.compare(base, trace)
    # The input folder, the same folder through a link, a folder in it.
    for target in [base, tmp_path / "link", base / "sub"]:
        with pytest.raises(tracelens.TracelensError, match="input"):
            result.to_csv(target)
    # The trace, as a workbook, from compare and from report.
    with pytest.raises(tracelens.TracelensError, match="-o names an input"):
        result.to_excel(trace)
    named_xlsx = tmp_path / "t.xlsx"
    named_xlsx.write_bytes(trace.read_bytes())
    before[named_xlsx] = named_xlsx.read_bytes()
    report = tracelens.report(named_xlsx)
    with pytest.raises(tracelens.TracelensError, match="-o names an input"):
        report.to_excel(named_xlsx)
    # A report's trace that is a .csv in the CSV folder it is written to.
    as_csv = tmp_path / "run.csv"
    as_csv.write_bytes(trace.read_bytes())
    before[as_csv] = as_csv.read_bytes()
    with pytest.raises(tracelens.TracelensError, match="run.csv"):
        tracelens.report(as_csv).to_csv(tmp_path)
    assert snapshot(tmp_path) == before
    # Elsewhere the writers still write.
    assert result.to_csv(tmp_path / "cmp")
    assert report.to_excel(tmp_path / "r.xlsx")


def test_critical_path_equals_the_commands_csv(binary, tmp_path):
    trace = TESTDATA / "example.json"
    out = tmp_path / "cp"
    run(binary, "critical-path", trace, "--csv", out)
    cp = tracelens.critical_path(trace)
    assert cp.sheet_names == ["critical_path_summary", "critical_path"]
    assert_sheets_equal_csv(cp, out)
    assert cp.markdown().startswith("critical path of ")
    # A window is a part of the trace: its path is no longer than the whole.
    path = cp["critical_path"]
    a, b = path["begin (µs)"].min(), path["end (µs)"].max()
    half = tracelens.critical_path(trace, window=(a, (a + b) / 2))
    assert half["critical_path"]["duration_us"].sum() < path["duration_us"].sum()
    with pytest.raises(tracelens.TracelensError, match="ProfilerStep#99"):
        tracelens.critical_path(trace, step=99)
    with pytest.raises(tracelens.TracelensError, match="not both"):
        tracelens.critical_path(trace, step=1, window=(0, 1))
