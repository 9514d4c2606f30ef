"""Fixtures of the server tests: tables made by the build's dtbgen, and a running
`dtbprobe serve` on a free port of localhost.

The build passes its programs through the environment (tests/CMakeLists.txt):
DTB_DTBGEN, DTB_DTBPROBE.
"""
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from build_programs import program  # noqa: E402 (tests/build_programs.py)
from server_tables import make_tables  # noqa: E402


@pytest.fixture(scope="session")
def dtbprobe():
    return program("DTB_DTBPROBE")


@pytest.fixture(scope="session")
def tables():
    """International 2..4 (2..3 where DTB_TEST_SMALL: the sanitizer build, and the defences
    suite, which probes no 4-piece position) with MTC tables,
    english and russian 2..3 tables without (server_tables.py): those ctest's server_tables
    fixture made when DTB_TEST_TABLES names them, else made here in a temporary directory."""
    given = os.environ.get("DTB_TEST_TABLES")
    if given:
        yield given
        return
    dtbgen = program("DTB_DTBGEN")
    small = os.environ.get("DTB_TEST_SMALL") == "1"
    with tempfile.TemporaryDirectory(prefix="dtb_server_") as d:
        make_tables(dtbgen, d, small)
        yield d


class Server:
    def __init__(self, url, process):
        self.url = url
        self.process = process
        self.port = int(url.rsplit(":", 1)[1].strip("/"))

    def get(self, path, timeout=10):
        """(status, headers, body bytes) of GET path; HTTP errors are answers, not exceptions."""
        try:
            with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=timeout) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()


def start_server(dtbprobe, tables, *extra):
    p = subprocess.Popen([dtbprobe, "serve", "--tables", tables, "--port", "0", "--quiet",
                          *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("http://"):
        p.kill()
        pytest.fail(f"dtbprobe serve printed {line!r}, stderr: {p.stderr.read()}")
    server = Server(line, p)
    for _ in range(50):  # listening already, but be sure before the first request
        try:
            server.get("/api/variants", timeout=2)
            break
        except OSError:
            time.sleep(0.1)
    return server


@pytest.fixture(scope="session")
def server(dtbprobe, tables):
    s = start_server(dtbprobe, tables, "--threads", "4", "--timeout", "2")
    yield s
    s.process.terminate()
    assert s.process.wait(timeout=10) == 0, "the server did not stop cleanly on SIGTERM"
