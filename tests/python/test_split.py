"""tracelens.split: the steady-state windows of a small serving trace, the
summary it returns, and a refused range that writes nothing."""

import json
from pathlib import Path

import pytest

import tracelens

from conftest import TESTDATA as ROOT

TESTDATA = ROOT / "split"


def test_split_writes_the_windows_and_returns_the_summary(tmp_path):
    out = tmp_path / "rs"
    summary = tracelens.split(TESTDATA / "serving.json", out, find_steady_state=True, num_steps=4)
    assert summary["roots"] == 12
    assert summary["root_source"] == "detailed"
    assert summary["regions"] == [[2, 11]]
    assert summary["regions_fallback"] is False
    names = sorted(Path(p).name for p in summary["outputs"])
    assert names == [
        "decode_only_steady_state_prefill_0_prefilldecode_0_decode_3_bs20_conc20_serving.json.gz",
        "mixed_steady_state_prefill_0_prefilldecode_1_decode_3_bs44_conc20_serving.json.gz",
        "prefilldecode_steady_state_prefill_0_prefilldecode_1_decode_0_bs119_conc20_serving.json.gz",
    ]
    # The manifest equals the reference's on this trace, but for the folder.
    want = json.loads((TESTDATA / "serving_steady4.reference.json").read_text())
    got = json.loads((out / "execution_details.json").read_text())
    for entry in want:
        entry["output_path"] = entry["output_path"].replace("rs/", str(out) + "/", 1)
    assert got == want


def test_split_bad_range_raises_and_writes_nothing(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(tracelens.TracelensError, match="12 iterations"):
        tracelens.split(TESTDATA / "serving.json", out, iterations="20:30", store_single_iteration=True)
    assert not out.exists()
