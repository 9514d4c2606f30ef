"""The server facing a public address: slow and greedy clients, odd requests, answers that must
not leak the server's directories. Every wait here is bounded; nothing is timed for speed.

- trickling clients (a byte every 0.3 s, never a whole request) are cut by the request deadline
  while ordinary clients are served without a failure;
- one address holding 600 connections does not keep another address from being served (the
  per-address limit; the other address is 127.0.0.2, also loopback on Linux);
- NUL and other control bytes, 405, 414, 431 come back as JSON; CORS preflight; keep-alive;
  /index.html; /api/russian/; no path of the server's file system in an answer.
"""
import concurrent.futures
import http.client
import json
import os
import selectors
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse

import pytest

from conftest import start_server


def stop(s):
    s.process.terminate()
    assert s.process.wait(timeout=10) == 0


def get_from(port, path, source="127.0.0.1", timeout=5):
    """(status, body) of GET path over a fresh connection from source address."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                   source_address=(source, 0))
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class Tricklers:
    """n connections from source sending a request one byte at a time, never finishing it."""

    def __init__(self, port, n, source="127.0.0.1"):
        self.sel = selectors.DefaultSelector()
        self.open = {}
        self.cut_after = []  # seconds from connecting to the server's close, per client cut
        self.refused = 0
        for _ in range(n):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5,
                                             source_address=(source, 0))
            except OSError:
                self.refused += 1
                continue
            s.setblocking(False)
            self.open[s] = time.monotonic()
            self.sel.register(s, selectors.EVENT_READ)

    def run(self, seconds, every=0.3):
        """Sends a byte on every open connection each `every` seconds for at most `seconds`,
        noting the connections the server closes; returns when all are closed or time is up."""
        end = time.monotonic() + seconds
        header = b"GET /api/variants HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000
        sent = 0
        while self.open and time.monotonic() < end:
            for s in list(self.open):
                try:
                    s.send(header[sent:sent + 1])
                except OSError:
                    self._closed(s)
            sent += 1
            for key, _ in self.sel.select(timeout=every):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data or data.startswith(b"HTTP/"):
                    self._closed(s)

    def _closed(self, s):
        if s in self.open:
            self.cut_after.append(time.monotonic() - self.open.pop(s))
            self.sel.unregister(s)
            s.close()

    def close(self):
        for s in list(self.open):
            self.sel.unregister(s)
            s.close()
        self.open.clear()


def test_trickling_clients_are_cut_while_others_are_served(dtbprobe, tables):
    """30 clients trickling a byte every 0.3 s (each byte would reset an idle timer) are all cut
    within the 2 s deadline (plus the watchdog's step and slack), and 16 ordinary clients asking
    meanwhile see no failure."""
    s = start_server(dtbprobe, tables, "--threads", "2", "--timeout", "2")
    try:
        slow = Tricklers(s.port, 30)
        assert slow.refused == 0
        results = []

        def ordinary(_):
            """20 requests over one keep-alive connection, as a browser makes them."""
            codes = []
            c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
            for _ in range(20):
                try:
                    c.request("GET", "/api/international?fen=W:WK46,K47:BK5")
                    r = c.getresponse()
                    r.read()
                    codes.append(r.status)
                except (OSError, http.client.HTTPException) as e:
                    codes.append(repr(e))
            c.close()
            return codes

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(ordinary, i) for i in range(16)]
            slow.run(seconds=12)
            for f in futures:
                results += f.result()
        still_open = len(slow.open)
        slow.close()
        assert still_open == 0, f"{still_open} trickling clients still connected after 12 s"
        assert len(slow.cut_after) == 30
        assert max(slow.cut_after) < 6, sorted(slow.cut_after)
        assert results == [200] * (16 * 20), [r for r in results if r != 200][:5]
    finally:
        stop(s)


def test_one_address_does_not_starve_another(dtbprobe, tables):
    """600 connections from 127.0.0.1 (trickling, and the deadline long: only the per-address
    limit protects) leave 127.0.0.2 served at once; beyond the limit 127.0.0.1's are closed."""
    s = start_server(dtbprobe, tables, "--threads", "2", "--timeout", "60")
    try:
        greedy = Tricklers(s.port, 600)
        stop_flag = threading.Event()
        trickle = threading.Thread(target=lambda: [greedy.run(seconds=0.5)
                                                   for _ in iter(stop_flag.is_set, True)])
        trickle.start()
        try:
            codes = []
            for _ in range(16):
                try:
                    codes.append(get_from(s.port, "/api/international?fen=W:WK46:BK5",
                                          source="127.0.0.2")[0])
                except OSError as e:
                    codes.append(repr(e))
        finally:
            stop_flag.set()
            trickle.join()
        greedy.run(seconds=1)  # (the connections refused beyond the limit are seen closed)
        held = len(greedy.open)
        greedy.close()
        assert codes == [200] * 16, codes
        assert held <= 64, f"{held} connections of one address held (the limit is 64)"
    finally:
        stop(s)


def raw(port, data, timeout=5):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(data)
        chunks = []
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                chunks.append(b)
        except (ConnectionResetError, socket.timeout):
            pass
        return b"".join(chunks)


def split(reply):
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def json_error(reply, status):
    code, headers, body = split(reply)
    assert code == status, reply[:200]
    assert headers["content-type"].startswith("application/json"), headers
    error = json.loads(body)["error"]
    assert error and "\n" not in error
    return headers, error


def test_odd_requests_answered_in_json(server):
    port = server.port
    close = b"Connection: close\r\n\r\n"
    # NUL and other control bytes, in the FEN, the notation or the path: 400, never a shorter FEN.
    for target in (b"/api/international?fen=W:WK46%00,K47:BK5", b"/api/international?fen=W:WK46%01:BK5",
                   b"/api/international?fen=W:WK46:BK5&notation=numeric%00x",
                   b"/api/inter%00national?fen=W:WK46:BK5", b"/api/international?fen=W:WK46%7f:BK5"):
        _, error = json_error(raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n" + close), 400)
        assert "control character" in error
    # The rules' arguments, on both APIs: control bytes, bad clocks and rule names, a bad H.
    for api in (b"/api/international", b"/lidraughts/standard"):
        for query in (b"?fen=W:WK46:BK5&clock=1%00", b"?fen=W:WK46:BK5&rules=fmjd%0a",
                      b"?fen=W:WK46:BK5:H1%00"):
            _, error = json_error(raw(port, b"GET " + api + query + b" HTTP/1.1\r\nHost: x\r\n"
                                      + close), 400)
            assert "control character" in error
        for query, words in ((b"?fen=W:WK46:BK5&clock=-1", "clock is a count of plies"),
                             (b"?fen=W:WK46:BK5&clock=1e3", "clock is a count of plies"),
                             (b"?fen=W:WK46:BK5&clock=" + b"9" * 5000, "clock is a count of plies"),
                             (b"?fen=W:WK46:BK5&clock=", "clock is a count of plies"),
                             (b"?fen=W:WK46:BK5&rules=fide", "rules is fmjd, wcdf, fmjd64 or none"),
                             (b"?fen=W:WK46:BK5:H12x", "H field"),
                             (b"?fen=W:WK46:BK5:H1:H2", "second H field")):
            _, error = json_error(raw(port, b"GET " + api + query + b" HTTP/1.1\r\nHost: x\r\n"
                                      + close), 400)
            assert words in error, error
    _, error = json_error(raw(port, b"GET /lidraughts/frisian?fen=W:WK46:BK5 HTTP/1.1\r\n"
                              b"Host: x\r\n" + close), 404)
    assert "frisian" in error
    # 405 says what is allowed.
    for method in (b"POST", b"PUT", b"DELETE", b"BREW"):
        headers, _ = json_error(raw(port, method + b" /api/variants HTTP/1.1\r\nHost: x\r\n"
                                    b"Content-Length: 0\r\n" + close), 405)
        assert headers["allow"] == "GET, HEAD, OPTIONS"
    # A request target or headers beyond 8 KiB (within libmicrohttpd's 32 KiB).
    json_error(raw(port, b"GET /api/international?fen=" + b"W" * 12000 + b" HTTP/1.1\r\nHost: x\r\n"
                   + close), 414)
    json_error(raw(port, b"GET /api/variants HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 12000 +
                   b"\r\n" + close), 431)
    json_error(raw(port, b"GET /api/variants HTTP/1.1\r\nHost: x\r\n" +
                   b"".join(b"X-%d: %s\r\n" % (i, b"c" * 100) for i in range(100)) + close), 431)
    # The full CORS preflight.
    code, headers, _ = split(raw(port, b"OPTIONS /api/international HTTP/1.1\r\nHost: x\r\n"
                                 b"Origin: http://other\r\nAccess-Control-Request-Method: GET\r\n"
                                 b"Access-Control-Request-Headers: x-requested-with, content-type\r\n"
                                 + close))
    assert code == 204
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
    assert headers["access-control-allow-headers"] == "x-requested-with, content-type"
    # /index.html is the page, /api/russian/ the variant.
    status, _, body = server.get("/index.html")
    assert status == 200 and b"<script src=\"dtb.js\">" in body
    status, _, body = server.get("/api/russian/?fen=" + urllib.parse.quote("W:WKc1:BKh8"))
    assert status == 200 and json.loads(body)["variant"] == "russian"
    status, _, body = server.get("/api/russian/x?fen=W:W1:B5")
    assert status == 404


def test_materials(server, tables):
    """/api/<variant>/materials: STATS's counts of every table, without the build's times."""
    status, _, body = server.get("/api/international/materials")
    assert status == 200
    answer = json.loads(body)
    assert answer["variant"] == "international"
    got = {m["material"]: m for m in answer["materials"]}
    with open(os.path.join(tables, "international", "STATS")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    assert set(got) == {m["material"] for m in lines}
    for m in lines:
        g = got[m["material"]]
        assert all(g[k] == m[k] for k in ("positions", "wins", "draws", "losses", "longest_win"))
        assert g["wins"] + g["draws"] + g["losses"] == g["positions"]
        assert "seconds" not in g and "peak_resident_bytes" not in g
    status, _, _ = server.get("/api/chess/materials")
    assert status == 404


def test_keep_alive(server):
    """Several requests over one connection; the answers do not say Connection: close."""
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for fen in ("W:WK46,K47:BK5", "B:WK46,K47:BK5", "W:WK46:BK5"):
            c.request("GET", "/api/international?fen=" + urllib.parse.quote(fen))
            r = c.getresponse()
            assert r.status == 200 and json.loads(r.read())["fen"] == fen
            assert (r.getheader("Connection") or "").lower() != "close"
        first = c.sock
        c.request("GET", "/api/variants")
        r = c.getresponse()
        r.read()
        assert c.sock is first, "the connection was not reused"
    finally:
        c.close()


def test_no_path_in_answers(dtbprobe, tables):
    """A damaged table answers 500 naming the file, not the directory it is in; nor does any
    other error show the tables' directory."""
    with tempfile.TemporaryDirectory(prefix="dtb_secret_dir_") as d:
        shutil.copytree(os.path.join(tables, "international"), os.path.join(d, "international"))
        # the .wld: a DTW probe of a drawn KKvK position reads it and not the losses-only .dtw
        # (FORMAT.md §8.7)
        f = os.path.join(d, "international", "KKvK.wld")
        data = bytearray(open(f, "rb").read())
        # the frames' bytes (FORMAT.md §3: they start at data_offset), in the second half of the
        # file: a small table's half falls in the header
        frames = int.from_bytes(data[184:192], "little")
        for i in range(max(len(data) // 2, frames), len(data) - 16):
            data[i] ^= 0x5A
        open(f, "wb").write(data)
        s = start_server(dtbprobe, d)
        try:
            status, _, body = s.get("/api/international?fen=W:WK46,K47:BK5")
            assert status == 500
            error = json.loads(body)["error"]
            assert "KKvK.wld" in error and "checksum" in error
            for path in ("/api/international?fen=W:WK1,K2,K3,K4,K6:BK50", "/api/variants",
                         "/api/nosuch?fen=W:W1:B5", "/api/international?fen=bad", "/"):
                status, _, body = s.get(path)
                assert d.encode() not in body and b"dtb_secret_dir" not in body, (path, body[:200])
        finally:
            stop(s)
            s.process.stderr.close()


def test_missing_table_directory(dtbprobe, tmp_path):
    """serve --tables naming a directory that is not there says so (exit 1)."""
    import subprocess
    r = subprocess.run([dtbprobe, "serve", "--tables", str(tmp_path / "nonexistent"), "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert f"the table directory {tmp_path / 'nonexistent'} does not exist" in r.stderr
