"""The ``tracelens`` command installed by ``pip``: the binary's command line,
run in this process."""

import sys

from . import _tracelens


def main() -> None:
    """Runs ``tracelens`` with this process's arguments and exits with its
    code."""
    sys.exit(_tracelens.main(["tracelens", *sys.argv[1:]]))
