"""Fixtures of the Python package's tests: the build's programs and tables made by its dtbgen.

tests/CMakeLists.txt passes DTB_LIBRARY (libdtb.so), DTB_DTBGEN, DTB_DTBPROBE, DTB_INCLUDE (the
build tree's include/ with dtb.h) and PYTHONPATH (probe/python). By hand, from the source tree:

    B=build/release; PYTHONPATH=probe/python DTB_LIBRARY=$B/probe/libdtb.so \
      DTB_DTBGEN=$B/gen/dtbgen DTB_DTBPROBE=$B/probe/dtbprobe python3 -m pytest -q tests/python
"""
import json
import os
import subprocess
import sys
import tempfile

import pytest

# The package from this source tree when PYTHONPATH does not name it.
_PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "probe", "python")
if os.path.normpath(_PKG) not in map(os.path.normpath, sys.path):
    sys.path.insert(0, os.path.normpath(_PKG))


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from build_programs import program  # noqa: E402 (tests/build_programs.py)


@pytest.fixture(scope="session")
def dtbprobe():
    return program("DTB_DTBPROBE")


@pytest.fixture(scope="session")
def tables():
    """2..3-piece tables of international (with MTC), english, russian (with its FMJD-64 rule
    tables) and brazilian in a temporary directory (<dir>/<variant>/, as dtbgen writes
    them)."""
    dtbgen = program("DTB_DTBGEN")
    with tempfile.TemporaryDirectory(prefix="dtb_python_") as d:
        for variant in ("international", "english", "russian", "brazilian"):
            subprocess.run([dtbgen, "--variant", variant, "--pieces", "3", "--out", d,
                            "--quiet", "--threads", "2"] +
                           (["--metrics", "wld,dtw,mtc"] if variant == "international" else
                            ["--metrics", "wld,dtw,rules"] if variant == "russian" else []),
                           check=True)
        yield d


@pytest.fixture(scope="session")
def probe_json(dtbprobe, tables):
    """probe_json(variant, fens, notation=None) -> dtbprobe --json's object for each FEN, in
    order, in notation (None: dtbprobe's default, the variant's, as the package's)."""
    def run(variant, fens, notation=None):
        r = subprocess.run([dtbprobe, "--tables", tables, "--variant", variant, "--json"] +
                           (["--notation", notation] if notation else []),
                           input="".join(f + "\n" for f in fens), capture_output=True,
                           text=True, timeout=300)
        out = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        assert len(out) == len(fens), r.stderr
        return out
    return run
