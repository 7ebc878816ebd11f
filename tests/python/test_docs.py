"""The Python code of docs/python.md runs as written, from the repository
root, and makes what it says it makes."""

import os
import re

from conftest import ROOT


def test_python_md_example_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python block"
    # Paths in the example are relative to the repository root.
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "testdata", tmp_path / "testdata")
    for code in blocks:
        exec(compile(code, "docs/python.md", "exec"), {})
    assert (tmp_path / "roofline.png").stat().st_size > 0
    assert (tmp_path / "example_perf_report.xlsx").is_file()
    assert (tmp_path / "example_parquet" / "ops_summary.parquet").is_file()
