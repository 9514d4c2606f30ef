"""The HTTP API of `dtbprobe serve`: its answers equal `dtbprobe --json` position by position,
and bad or hostile requests get clean HTTP errors while the server keeps serving."""
import concurrent.futures
import json
import random
import re
import socket
import subprocess
import time
import os
import shutil
import tempfile
import urllib.parse

import pytest

from conftest import start_server

# The sanitizer build (DTB_TEST_SMALL, set by tests/CMakeLists.txt) is several times slower:
# there the tables are international 2..3 (conftest.py), the position-by-position and load tests
# ask a fifth as many and only of 3 pieces or fewer; every kind of request is still made. That
# keeps the suite within its time budget.
SMALL = os.environ.get("DTB_TEST_SMALL") == "1"
SCALE = 5 if SMALL else 1


def random_fens(rng, squares, promotion_white, promotion_black, materials, n):
    """n random FENs of the given materials (wk, wm, bk, bm): distinct squares, no man on its
    promotion row; the rest (captures, lost positions) is left to the probes."""
    fens = []
    for _ in range(n):
        wk, wm, bk, bm = rng.choice(materials)
        free = list(range(1, squares + 1))
        rng.shuffle(free)

        def take(count, banned):
            out = []
            for sq in list(free):
                if len(out) == count:
                    break
                if sq not in banned:
                    out.append(sq)
                    free.remove(sq)
            return out

        wmen = take(wm, promotion_white)
        bmen = take(bm, promotion_black)
        wkings = take(wk, ())
        bkings = take(bk, ())
        side = rng.choice("WB")
        w = ",".join([str(s) for s in sorted(wmen)] + ["K%d" % s for s in sorted(wkings)])
        b = ",".join([str(s) for s in sorted(bmen)] + ["K%d" % s for s in sorted(bkings)])
        fens.append(f"{side}:W{w}:B{b}")
    return fens


def cli_answers(dtbprobe, tables, variant, fens):
    """dtbprobe --json for each FEN (read from stdin, one JSON object per line)."""
    r = subprocess.run([dtbprobe, "--tables", tables, "--variant", variant, "--json"],
                       input="\n".join(fens) + "\n", capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    assert len(lines) == len(fens), r.stderr[-500:]
    return [json.loads(l) for l in lines]


CASES = [
    # variant, squares, white men's promotion row, black men's, materials (wk, wm, bk, bm)
    ("international", 50, range(1, 6), range(46, 51),
     [(1, 0, 1, 0), (2, 0, 1, 0), (1, 1, 1, 0), (0, 1, 1, 0), (1, 0, 0, 1), (0, 1, 0, 1),
      (2, 0, 2, 0), (1, 1, 1, 1), (0, 2, 0, 2), (3, 0, 1, 0), (0, 3, 1, 0), (1, 2, 0, 1)]),
    ("english", 32, range(1, 5), range(29, 33),
     [(1, 0, 1, 0), (2, 0, 1, 0), (1, 1, 1, 0), (0, 1, 0, 1), (0, 2, 1, 0), (1, 0, 0, 2)]),
]


@pytest.mark.parametrize("variant,squares,wprom,bprom,materials", CASES)
def test_answers_equal_dtbprobe_json(server, dtbprobe, tables, variant, squares, wprom, bprom,
                                     materials):
    rng = random.Random(20261202 + squares)
    if SMALL:
        materials = [m for m in materials if sum(m) <= 3]
    fens = random_fens(rng, squares, set(wprom), set(bprom), materials, 1500 // SCALE)
    expected = cli_answers(dtbprobe, tables, variant, fens)

    def ask(fen):
        status, headers, body = server.get(f"/api/{variant}?fen={urllib.parse.quote(fen)}")
        return status, headers, json.loads(body)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(ask, fens))
    ok = 0
    for fen, want, (status, headers, answer) in zip(fens, expected, got):
        assert answer == want, fen
        assert headers["Access-Control-Allow-Origin"] == "*"
        assert headers["Content-Type"].startswith("application/json")
        if "error" in answer:
            assert status in (400, 404), (fen, status)
        else:
            assert status == 200
            ok += 1
    assert ok > len(fens) // 2  # most random positions are legal and answered
    # MTC where the set has it (international's), null elsewhere and for draws
    answered = [a for _, _, a in got if "error" not in a]
    if variant == "international":
        assert any(a["mtc"] for a in answered)
        assert all((a["mtc"] is None) == (a["wdl"] == "draw") for a in answered)
    else:
        assert all(a["mtc"] is None for a in answered)


def api_answers(server, variant, fens, query=""):
    return [json.loads(server.get(f"/api/{variant}?fen={urllib.parse.quote(f)}{query}")[2])
            for f in fens]


def test_russian_notation(server, dtbprobe, tables):
    """The API writes russian as its players do (algebraic, captures with ':') unless asked for
    numbers, as dtbprobe does, and the names are the same squares (1 = b8, 4 = h8, 29 = a1:
    the mapping here is built from the board's layout, not taken from the code under test)."""
    rng = random.Random(25)
    fens = random_fens(rng, 32, set(range(1, 5)), set(range(29, 33)),
                       [(1, 0, 1, 0), (1, 1, 1, 0), (0, 1, 0, 1), (2, 0, 1, 0), (0, 2, 1, 0)], 300)
    cli = cli_answers(dtbprobe, tables, "russian", fens)  # cli_answers passes --json only
    api = api_answers(server, "russian", fens)
    assert api == cli  # the default: the variant's notation, in both
    numeric = api_answers(server, "russian", fens, "&notation=numeric")
    assert api_answers(server, "russian", fens, "&notation=algebraic") == api
    layout = json.loads(server.get("/api/variants")[2])["variants"]
    rows = {v["name"]: v for v in layout}["russian"]["layout"]
    name = {i + 1: "abcdefgh"[c] + str(8 - r) for i, (r, c) in enumerate(rows)}
    assert (name[1], name[4], name[29]) == ("b8", "h8", "a1")

    def named(text):
        return re.sub(r"[0-9]+", lambda m: name[int(m.group())], text).replace("x", ":")

    def ends(text):  # a move's first and last squares: names write a capture's every landing
        squares = re.split(r"[-:]", text)
        return squares[0], squares[-1], "-" in text

    r = subprocess.run([dtbprobe, "--tables", tables, "--variant", "russian", "--json",
                        "--notation", "numeric"], input="\n".join(fens) + "\n",
                       capture_output=True, text=True)
    plain = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    assert plain == numeric  # the API's numbers and --notation numeric agree
    ok = 0
    for a, n in zip(api, numeric):
        if "error" in a:
            assert a == n
            continue
        assert re.search(r"[a-h][1-8]", a["fen"]) and not re.search(r"[0-9]{2}", a["fen"])
        assert a["fen"] == named(n["fen"])
        assert [ends(m["move"]) for m in a["moves"]] == [ends(named(m["move"])) for m in n["moves"]]
        assert [m["fen"] for m in a["moves"]] == [named(m["fen"]) for m in n["moves"]]
        assert [ends(m) for m in a["line"]] == [ends(named(m)) for m in n["line"]]
        ok += 1
    assert ok > 100
    # The same position given in names and in numbers gets the same answer.
    assert api_answers(server, "russian", ["W:WKc1,e3:BKh8"]) == \
        api_answers(server, "russian", ["W:WK30,23:BK4"])
    # International: numbers by default, names only when asked.
    intl = api_answers(server, "international", ["W:WK46,K47:BK5"])[0]
    assert intl["fen"] == "W:WK46,K47:BK5" and intl["line"][0].count("-") == 1
    assert api_answers(server, "international", ["W:WK46,K47:BK5"], "&notation=numeric")[0] == intl
    assert api_answers(server, "international", ["W:WK46,K47:BK5"],
                       "&notation=algebraic")[0]["fen"] == "W:WKa1,Kc1:BKj10"
    assert "notation is numeric or algebraic" in error_of(
        server, "/api/russian?fen=W:WKc1:BKh8&notation=pdn", 400)


def test_variants(server):
    status, _, body = server.get("/api/variants")
    assert status == 200
    variants = {v["name"]: v for v in json.loads(body)["variants"]}
    assert set(variants) == {"international", "english", "russian"}
    assert variants["international"]["wdl_pieces"] == (3 if SMALL else 4)
    assert variants["international"]["dtw_pieces"] == (3 if SMALL else 4)
    assert variants["english"]["wdl_pieces"] == 3
    intl = variants["international"]
    assert intl["size"] == 10 and intl["squares"] == 50 and len(intl["layout"]) == 50
    assert intl["layout"][0] == [0, 1]  # square 1: the top row's leftmost dark square
    assert len({tuple(x) for x in intl["layout"]}) == 50
    # Each variant's notation and its squares' texts in it, square by square.
    assert intl["notation"] == "numeric" and intl["names"] == [str(i) for i in range(1, 51)]
    ru = variants["russian"]
    assert ru["notation"] == "algebraic" and variants["english"]["notation"] == "numeric"
    assert ru["names"] == ["abcdefgh"[c] + str(8 - r) for r, c in ru["layout"]]
    assert (ru["names"][0], ru["names"][3], ru["names"][21], ru["names"][28]) == \
        ("b8", "h8", "c3", "a1")


def error_of(server, path, code):
    status, headers, body = server.get(path)
    assert status == code, (path, status, body[:200])
    assert headers["Access-Control-Allow-Origin"] == "*"
    answer = json.loads(body)
    assert isinstance(answer["error"], str) and answer["error"]
    assert "\n" not in answer["error"]
    return answer["error"]


def test_bad_requests(server):
    assert "bad FEN" in error_of(server, "/api/international?fen=W:W99:B1", 400)
    assert "bad FEN" in error_of(server, "/api/international?fen=hello", 400)
    # Bad algebraic squares: one line naming the token.
    assert "'i9'" in error_of(server, "/api/russian?fen=W:WKc1:BKi9", 400)
    assert "'a8'" in error_of(server, "/api/russian?fen=W:WKc1:BKa8", 400)  # a light square
    assert "'c3'" in error_of(server, "/api/international?fen=W:Wc3:B1", 400)  # no names here
    assert "no position" in error_of(server, "/api/international", 400)
    assert "no position" in error_of(server, "/api/international?fen=", 400)
    assert "longer than" in error_of(server, "/api/international?fen=" + "W" * 5000, 400)
    assert "no tables of variant 'chess'" in error_of(server, "/api/chess?fen=W:W31:B1", 404)
    assert "brazilian" in error_of(server, "/api/brazilian?fen=W:W31:B1", 404)  # not served
    assert "KKKKKvK" in error_of(server, "/api/international?fen=W:WK1,K2,K3,K4,K6:BK50", 404)
    error_of(server, "/nothing/here", 404)
    assert error_of(server, "/api/international?fen=W:W%00:B1", 400)
    # Non-ASCII bytes in an echoed FEN still give valid JSON.
    error_of(server, "/api/international?fen=W:W%C3%A9%FF:B1", 400)


def raw(server, data, read_timeout=5):
    """Sends data on a fresh connection; returns what came back before the server closed it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=read_timeout) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        chunks = []
        try:
            while True:
                c = s.recv(65536)
                if not c:
                    break
                chunks.append(c)
        except (ConnectionResetError, socket.timeout):
            pass
        return b"".join(chunks)


def status_of(reply):
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.") else None


def test_hostile_requests(server):
    # Paths that try to leave the page's files: nothing but the fixed files is ever served.
    for path in (b"/../../../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd", b"//etc/passwd",
                 b"/dtb.js/../../tables", b"/index.html/../../etc/passwd"):
        reply = raw(server, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert status_of(reply) == 404, (path, reply[:100])
        assert b"root:" not in reply
    # Methods other than GET, HEAD, OPTIONS.
    for method in (b"POST", b"PUT", b"DELETE", b"BREW"):
        reply = raw(server, method + b" /api/variants HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n")
        assert status_of(reply) in (405, 400, 501), (method, reply[:100])
    # A 1 MB query: refused by the server's limits, not answered, not a crash.
    reply = raw(server, b"GET /api/international?fen=" + b"W" * (1 << 20) +
                b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(reply) in (400, 413, 414, 431, None), reply[:100]
    # Headers beyond the connection's memory.
    reply = raw(server, b"GET /api/variants HTTP/1.1\r\nHost: x\r\nX-Junk: " + b"j" * 100000 +
                b"\r\n\r\n")
    assert status_of(reply) in (400, 413, 431, None), reply[:100]
    # Garbage instead of HTTP.
    reply = raw(server, b"\x00\x01\x02 hello there\r\n\r\n")
    assert status_of(reply) in (400, 505, None)
    # HEAD and the cross-origin preflight.
    reply = raw(server, b"HEAD /api/variants HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status_of(reply) == 200 and reply.endswith(b"\r\n\r\n")
    reply = raw(server, b"OPTIONS /api/international HTTP/1.1\r\nHost: x\r\nOrigin: http://other\r\n"
                b"Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n")
    assert status_of(reply) == 204
    assert b"Access-Control-Allow-Origin: *" in reply
    assert b"Access-Control-Allow-Methods: GET, HEAD, OPTIONS" in reply
    # Still serving.
    status, _, body = server.get("/api/international?fen=W:WK46,K47:BK5")
    assert status == 200 and json.loads(body)["wdl"] == "win"


def test_slow_client(server):
    """A client that sends half a request and waits is cut off after the timeout (2 s here);
    meanwhile, and afterwards, others are served."""
    slow = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    slow.sendall(b"GET /api/variants HTTP/1.1\r\nHost: x\r\n")  # never finished
    started = time.monotonic()
    status, _, _ = server.get("/api/variants")
    assert status == 200
    try:
        while slow.recv(4096):
            pass
    except ConnectionResetError:
        pass
    waited = time.monotonic() - started
    slow.close()
    assert 1.0 <= waited < 8, waited
    status, _, _ = server.get("/api/international?fen=W:WK46:BK5")
    assert status == 200


def test_many_clients_at_once(server):
    fen = urllib.parse.quote("W:W28,K46:BK5" if SMALL else "W:W28,K46:BK5,K10")
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        codes = list(pool.map(lambda _: server.get(f"/api/international?fen={fen}")[0],
                              range(2000 // SCALE)))
    assert codes.count(200) == len(codes)


def test_page_files(server):
    for path, kind in (("/", "text/html"), ("/dtb.js", "text/javascript"),
                       ("/dtb.css", "text/css")):
        status, headers, body = server.get(path)
        assert status == 200 and headers["Content-Type"].startswith(kind), path
        assert len(body) > 500
    status, _, body = server.get("/")
    assert b"<script src=\"dtb.js\">" in body


def test_wld_only_set_ranks_moves(dtbprobe, tables):
    """A set of .wld tables alone still ranks every move by its result (libdtb falls back to the
    WDL tables, dtb_probe_moves): each move's result is the full set's, wins before draws before
    losses, "dtw" null where no DTW table could tell it; dtbprobe and the server agree."""
    # 3 pieces: the sanitizer build's tables are international 2..3 (conftest.py)
    fens = ["W:WK46,28:BK5", "B:WK46,28:BK5", "W:W32,K50:BK1", "B:W34:BK3,10", "W:WK1:BK50,41"]
    full = [json.loads(line) for line in subprocess.run(
        [dtbprobe, "--tables", tables, "--variant", "international", "--json", *fens],
        capture_output=True, text=True, check=True).stdout.splitlines()]
    with tempfile.TemporaryDirectory(prefix="dtb_wld_only_") as d:
        os.mkdir(os.path.join(d, "international"))
        src = os.path.join(tables, "international")
        for f in os.listdir(src):
            if f.endswith(".wld"):
                shutil.copy(os.path.join(src, f), os.path.join(d, "international"))
        wld = [json.loads(line) for line in subprocess.run(
            [dtbprobe, "--tables", d, "--variant", "international", "--json", *fens],
            capture_output=True, text=True, check=True).stdout.splitlines()]
        s = start_server(dtbprobe, d)
        try:
            served = [json.loads(s.get("/api/international?fen=" + urllib.parse.quote(f))[2])
                      for f in fens]
        finally:
            s.process.terminate()
            s.process.wait(timeout=10)
    order = {"win": 0, "draw": 1, "loss": 2}
    ranked = 0
    for a, b, c in zip(full, wld, served):
        assert b == c
        # a DTW is given only where the search found it without DTW tables (captures): exact
        assert b["wdl"] == a["wdl"] and b["dtw"] in (None, a["dtw"])
        assert {m["move"]: m["wdl"] for m in b["moves"]} == {m["move"]: m["wdl"] for m in a["moves"]}
        dtw = {m["move"]: m["dtw"] for m in a["moves"]}
        assert all(m["dtw"] in (None, dtw[m["move"]]) for m in b["moves"])
        assert [order[m["wdl"]] for m in b["moves"]] == sorted(order[m["wdl"]] for m in b["moves"])
        ranked += len(b["moves"])
    assert ranked >= 10
