"""Fixtures of the Python package's tests: where the command-line binary,
the test data and (when present) the shared corpus are."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"


def shared():
    """The shared corpus folder, or None when the runner was not given one."""
    path = os.environ.get("TRACELENS_SHARED")
    return pathlib.Path(path) if path else None


def corpus(rel):
    """A corpus trace; skips (visibly, with the reason) without a corpus."""
    base = shared()
    if base is None:
        pytest.skip("needs ../shared/corpus (TRACELENS_SHARED unset)")
    return base / "corpus" / rel


@pytest.fixture(scope="session")
def binary():
    """The `tracelens` binary the Rust tests built."""
    path = os.environ.get("TRACELENS_BIN")
    if not path:
        # Run outside `cargo test`: the release build.
        path = str(ROOT / "target" / "release" / "tracelens")
    assert os.path.isfile(path), f"no tracelens binary at {path}"
    return path


def run(binary, *args):
    """Runs the binary; returns stdout, failing the test on an error."""
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout
