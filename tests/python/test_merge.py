"""`tracelens.merge` on the two hand-made ranks in testdata/merge: the
merged file read back with Python's own json and gzip, against values
worked out by hand from the inputs (pid offset 1000, correlation offset
1000), and a bad trace refused with nothing written."""

import gzip
import json

import pytest

import tracelens
from conftest import TESTDATA

RANKS = [TESTDATA / "merge" / "rank0.json", TESTDATA / "merge" / "rank1.json"]


def test_merge_writes_the_merged_trace_and_returns_the_summary(tmp_path):
    out = tmp_path / "merged.json.gz"
    summary = tracelens.merge(*RANKS, output=out)
    assert summary["output"] == str(out)
    assert summary["linking_key"] == "correlation"
    assert summary["offsets"] == {"pid": 1000, "correlation": 1000}
    assert [r["kept"] for r in summary["ranks"]] == [7, 7]
    assert [r["dropped_filter"] for r in summary["ranks"]] == [2, 2]
    assert summary["processes"] == 4
    with gzip.open(out, "rt") as f:
        events = json.load(f)["traceEvents"]
    (gemm1,) = [e for e in events if e.get("name") == "gemm_rank1"]
    assert gemm1["pid"] == 1002
    assert gemm1["args"]["correlation"] == 1090
    assert gemm1["args"]["correlation_raw"] == 90
    labels = [e["args"]["name"] for e in events if e.get("name") == "process_name"]
    assert labels == ["RANK 0 - GPU", "RANK 0 - CPU", "RANK 1 - GPU", "RANK 1 - CPU"]


def test_merge_options_window_and_pyfunc(tmp_path):
    out = tmp_path / "w.json"
    summary = tracelens.merge(*RANKS, output=out, include_pyfunc=True, window=(1000, 1500))
    # The python_function spans (1000-1400, 1400-2100) overlap the window.
    names = [e["name"] for e in json.loads(out.read_text())["traceEvents"]]
    assert names.count("train.py(10): step") == 2
    assert "gemm_rank1" not in names
    assert summary["ranks"][1]["dropped_window"] == 4


def test_merge_bad_trace_raises_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [')
    out = tmp_path / "m.json.gz"
    with pytest.raises(tracelens.TracelensError, match="bad.json"):
        tracelens.merge(RANKS[0], bad, output=out)
    assert not out.exists()
