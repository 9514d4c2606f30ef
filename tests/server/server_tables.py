"""The server suites' tables: international 2..4 (2..3 when small) with MTC tables, english and
russian 2..3 without, made by the build's dtbgen into <dir>/<variant>/.

conftest.py makes them for a session run by hand. Under ctest one fixture test makes them once
per build tree (tests/CMakeLists.txt: server_tables, FIXTURES_SETUP) and the suites that use the
same set read them through DTB_TEST_TABLES: international 2..4 with MTC took 14 s of CPU each
time server_api and server_browser made it for themselves.

    python3 server_tables.py DTBGEN DIR [--small]    (replaces DIR)
"""
import os
import shutil
import subprocess
import sys


def make_tables(dtbgen, directory, small):
    for variant, pieces in (("international", 3 if small else 4), ("english", 3), ("russian", 3)):
        subprocess.run([dtbgen, "--variant", variant, "--pieces", str(pieces), "--out", directory,
                        "--quiet", "--threads", "2"] +
                       (["--metrics", "wld,dtw,mtc"] if variant == "international" else []),
                       check=True)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--small"]):
        sys.exit("usage: server_tables.py DTBGEN DIR [--small]")
    dtbgen, directory = sys.argv[1], sys.argv[2]
    # Made beside DIR and renamed, so a failed run leaves no set that looks complete.
    tmp = directory + ".tmp"
    for d in (tmp, directory):
        shutil.rmtree(d, ignore_errors=True)
    make_tables(dtbgen, tmp, len(sys.argv) == 4)
    os.rename(tmp, directory)
