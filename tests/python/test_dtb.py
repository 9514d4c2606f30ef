"""The Python package dtb (probe/python/dtb) against dtbprobe --json on the same tables: values,
moves, lines; its errors, lifetime, threads, library search, and the reading of pydraughts
boards. Fixtures in conftest.py."""
import ctypes
import os
import random
import re
import shutil
import subprocess
import sys
import threading

import pytest

import dtb
from dtb import _lib

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# (squares, playable squares per row) of each variant's board
BOARDS = {"international": (50, 5), "english": (32, 4), "russian": (32, 4), "brazilian": (32, 4)}
WDL = {"win": 1, "draw": 0, "loss": -1}


def random_fens(variant, n, pieces, seed):
    """n random positions of 2..pieces pieces (both sides present, no man on its promotion row;
    capture positions included, the probe resolves them)."""
    squares, half = BOARDS[variant]
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        k = rng.randint(2, pieces)
        sq = rng.sample(range(1, squares + 1), k)
        nwhite = rng.randint(1, k - 1)
        white, black = [], []
        for i, s in enumerate(sq):
            mine, row_ok = (white, s > half) if i < nwhite else (black, s <= squares - half)
            king = rng.random() < 0.4 or not row_ok
            mine.append(("K" if king else "") + str(s))
        out.append(f"{rng.choice('WB')}:W{','.join(white)}:B{','.join(black)}")
    return out


@pytest.fixture(scope="session")
def tb(tables):
    with dtb.open_tablebase(tables, variant="international") as t:
        yield t


@pytest.fixture(scope="session")
def tbs(tables):
    t = {v: dtb.open_tablebase(tables, variant=v) for v in BOARDS}
    yield t
    for x in t.values():
        x.close()


def as_json(moves):
    return [(m["move"], WDL[m["wdl"]], m["dtw"] or 0) for m in moves]


# ---- values against dtbprobe --json ---------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(BOARDS))
def test_values_equal_dtbprobe(tbs, probe_json, variant):
    fens = random_fens(variant, 400, 3, seed=sorted(BOARDS).index(variant))
    t = tbs[variant]
    checked = 0
    for fen, want in zip(fens, probe_json(variant, fens)):
        assert "error" not in want, want
        wdl, dtw = WDL[want["wdl"]], want["dtw"] or 0
        assert t.probe_wdl(fen) == wdl, fen
        assert t.probe_dtw(fen) == (wdl, dtw), fen
        assert t.get_wdl(fen) == wdl and t.get_dtw(fen) == (wdl, dtw)
        if variant == "international":  # the only set made with MTC
            assert t.probe_mtc(fen) == (wdl, want["mtc"] or 0), fen
            assert (want["mtc"] is None) == (wdl == 0)
        else:
            assert want["mtc"] is None and t.get_mtc(fen) is None
        got = t.moves(fen)
        assert [tuple(m) for m in got] == as_json(want["moves"]), fen
        assert all(isinstance(m, dtb.Move) for m in got)
        assert t.line(fen) == want["line"], fen
        assert t.fen(fen) == want["fen"]
        checked += 1
    # the other notation, asked for
    other = "numeric" if t.notation == "algebraic" else "algebraic"
    for fen, want in zip(fens[:50], probe_json(variant, fens[:50], other)):
        assert [tuple(m) for m in t.moves(fen, notation=other)] == as_json(want["moves"]), fen
        assert t.line(fen, notation=other) == want["line"], fen
        assert t.fen(fen, notation=other) == want["fen"]
    assert checked == len(fens)
    # the sample is not all of one kind
    assert len({WDL[w["wdl"]] for w in probe_json(variant, fens[:100])}) == 3


def test_known_position(tb):
    # the quick-start position of dtb.h: 28-22 wins in 3 plies
    assert tb.probe_wdl("W:WK46,28:BK5") == dtb.WIN
    assert tb.probe_dtw("W:WK46,28:BK5") == (1, 3)
    assert tb.line("W:WK46,28:BK5") == ["28-22", "5-10", "46x5"]
    assert tb.moves("W:WK46,28:BK5")[0] == ("28-22", 1, 3)
    assert tb.moves("W:WK46,28:BK5")[-1].wdl == dtb.LOSS
    # ranges, a trailing dot and unknown fields, as PDN allows
    assert tb.fen("W:WK46,28:BK5:H0:F1.") == "W:W28,K46:BK5"
    assert tb.probe_dtw(b"B:W28,K46:BK5") == tb.probe_dtw("B:W28,K46:BK5")


def test_game_over_and_draw(tbs):
    t = tbs["english"]
    # black to move, its only man blocked: 4-8 is taken and 4x11 lands on a piece
    for over in ("B:W8,11:B4", "B:W21:B"):
        assert t.moves(over) == [] and t.line(over) == []
        assert t.probe_dtw(over) == (dtb.LOSS, 0)
    draw = "B:W21:B1"
    assert t.probe_dtw(draw) == (0, 0)
    assert t.line(draw) == []


def test_info(tb, tbs):
    assert tb.variant == "international" and tb.squares == 50
    assert tbs["english"].squares == 32
    assert tb.max_pieces() == 3 and tb.max_pieces(dtw=True) == 3
    tb.probe_wdl("W:WK46,28:BK5")
    st = tb.cache_stats()
    assert set(st) == {"hits", "misses", "bytes", "blocks"} and st["hits"] + st["misses"] > 0
    assert "international" in repr(tb)


def test_version(dtbprobe):
    v = dtb.version()
    header = open(os.path.join(SRC, "probe", "dtb.h")).read()
    assert v == re.search(r'#define DTB_VERSION_STRING "([^"]+)"', header).group(1)
    major, minor, patch = map(int, v.split("."))
    assert dtb.version_number() == major * 10000 + minor * 100 + patch
    assert v in subprocess.run([dtbprobe, "--version"], capture_output=True, text=True).stdout


# ---- errors --------------------------------------------------------------------------------


def test_missing_table(tb):
    fen = "W:W31,32,33:B1"  # 4 pieces, tables have 3
    with pytest.raises(dtb.MissingTableError) as e:
        tb.probe_wdl(fen)
    assert isinstance(e.value, KeyError) and isinstance(e.value, dtb.TablebaseError)
    assert "no table" in str(e.value) and str(e.value)[0] != "'"
    assert e.value.status == _lib.E_NOTFOUND
    for probe in (tb.probe_dtw, tb.moves, tb.line):
        with pytest.raises(dtb.MissingTableError):
            probe(fen)
    assert tb.get_wdl(fen) is None
    assert tb.get_wdl(fen, default=7) == 7
    assert tb.get_dtw(fen) is None
    assert tb.get_dtw(fen, default=(0, 0)) == (0, 0)
    # a capture resolved through 3-piece tables is fine even with 4 pieces on the board
    assert tb.get_wdl("W:W28,31:B23,K5") is not None


@pytest.mark.parametrize("fen, words", [
    ("", "empty"),
    ("X:W31:B1", "side"),
    ("W:W31,31:B1", "twice"),
    ("W:W51:B1", "range"),
    ("W:W3:B45", "promotion"),
    ("W:W31", "black"),
    ("hello", ""),
])
def test_invalid_position(tb, fen, words):
    with pytest.raises(dtb.InvalidPositionError) as e:
        tb.probe_wdl(fen)
    assert isinstance(e.value, ValueError) and isinstance(e.value, dtb.TablebaseError)
    assert repr(fen) in str(e.value)
    assert words in str(e.value).lower() or not words
    # get_wdl's default is for missing tables, not for bad input
    with pytest.raises(dtb.InvalidPositionError):
        tb.get_wdl(fen, default=0)


def test_not_a_position(tb):
    with pytest.raises(TypeError):
        tb.probe_wdl(42)
    with pytest.raises(TypeError):
        tb.probe_wdl(type("P", (), {"fen": 42})())
    with pytest.raises(ValueError):
        tb.moves("W:WK46,28:BK5", notation="chess")


def test_open_errors(tables, tmp_path):
    with pytest.raises(dtb.TablebaseError, match="several variants"):
        dtb.open_tablebase(tables)
    with pytest.raises(dtb.TablebaseError, match="no such directory") as e:
        dtb.open_tablebase(str(tmp_path / "none"), variant="english")
    assert e.value.status == _lib.E_NOTFOUND
    with pytest.raises(ValueError, match="'chess'"):
        dtb.open_tablebase(tables, variant="chess")
    with pytest.raises(dtb.TablebaseError):
        dtb.open_tablebase([], variant="english")
    # one variant's directory: the variant comes from the tables
    with dtb.open_tablebase(os.path.join(tables, "english")) as t:
        assert t.variant == "english"
    # several directories, searched in order; pydraughts' name for international
    with dtb.open_tablebase([str(tmp_path), tables], variant="standard", cache_mb=1) as t:
        assert t.variant == "international" and t.probe_wdl("W:WK46,28:BK5") == 1
    with dtb.open_tablebase(tables, variant="Russian", cache_mb=0.5) as t:  # any case
        assert t.variant == "russian"


@pytest.mark.parametrize("args, error, words", [
    (dict(cache_mb="big"), TypeError, "'big'"),
    (dict(cache_mb=True), TypeError, "True"),
    (dict(cache_mb=-1), ValueError, "-1"),
    (dict(cache_mb=0), ValueError, "not 0"),
    (dict(cache_mb=1e30), ValueError, "1e+30"),
    (dict(cache_mb=float("nan")), ValueError, "nan"),
    (dict(variant=5), TypeError, "5"),
    (dict(variant="chess"), ValueError, "'chess'"),
    (dict(variant=b"english"), TypeError, "b'english'"),
    (dict(directory=None), TypeError, "None"),
    (dict(directory=42), TypeError, "42"),
    (dict(directory=["ok", None]), TypeError, "None"),
    (dict(directory="tab\0les"), ValueError, "NUL"),
])
def test_bad_open_arguments(tables, args, error, words):
    """Each argument open_tablebase cannot mean raises the documented exception, quoting it,
    before anything is opened."""
    kw = dict(directory=tables, variant="english")
    kw.update(args)
    with pytest.raises(error) as e:
        dtb.open_tablebase(kw.pop("directory"), **kw)
    assert words in str(e.value)


def test_open_without_tables_of_the_variant(tables, tmp_path):
    """Directories without a table of the variant asked for: the open fails, not every probe."""
    with pytest.raises(dtb.TablebaseError, match="no canadian tables") as e:
        dtb.open_tablebase(tables, variant="canadian")
    assert e.value.status == _lib.E_NOTFOUND
    with pytest.raises(dtb.TablebaseError):
        dtb.open_tablebase(str(tmp_path), variant="english")


def test_errors_quote_the_text_given(tbs):
    """A FEN is quoted as the caller wrote it, not as converted (algebraic to numbers)."""
    with pytest.raises(dtb.InvalidPositionError) as e:
        tbs["russian"].probe_wdl("W:Wc3,c3:Bf6")
    assert "'W:Wc3,c3:Bf6'" in str(e.value) and "W:W22" not in str(e.value)
    # NUL and other control characters are refused, never read as a shorter FEN
    for fen in ("W:WK46\0,28:BK5", "W:WK46,28:BK5\0", "W:WK46,28\x01:BK5", "W:WK46\n:BK5"):
        with pytest.raises(dtb.InvalidPositionError, match="control character"):
            tbs["international"].probe_wdl(fen)
        with pytest.raises(dtb.InvalidPositionError):
            tbs["international"].moves(fen.encode())


def test_walk_a_game_with_play(tbs):
    """Every move's fen is the position after it; play() walks the best line to the end in
    exactly DTW plies, in numbers and in algebraic notation."""
    for variant, fen in (("international", "W:WK46,28:BK5"), ("russian", "W:Wc3,e3:Bh8"),
                         ("english", "W:W21,22:B1")):
        tb = tbs[variant]
        wdl, dtw = tb.probe_dtw(fen)
        assert wdl == 1 and dtw > 0
        plies = 0
        while True:
            moves = tb.moves(fen)
            if not moves:
                break
            best = moves[0]
            for m in moves:
                assert m.fen == tb.play(fen, m.move) == tb.play(fen, m)
                move, w, d = m  # still a 3-tuple
            after = tb.play(fen, best)
            assert tb.fen(after) == after
            fen = after
            plies += 1
            assert plies <= dtw
        assert plies == dtw, (variant, plies, dtw)
    # texts in the other notation, and captures with 'x' or ':'
    ru = tbs["russian"]
    assert ru.play("W:Wc3:Bd4,h8", "c3:e5") == ru.play("W:Wc3:Bd4,h8", "22x15") == \
        ru.play("W:Wc3:Bd4,h8", "22:15")
    assert ru.play("W:Wc3:Bd4,h8", "c3:e5", notation="numeric").startswith("B:W15")
    # a capture of two: written with its landing (russian players' way) or by its ends
    two = "W:Wc5:Bd6,f6"
    assert [m.move for m in ru.moves(two)] == ["c5:e7:g5"]
    assert ru.play(two, "c5:e7:g5") == ru.play(two, "c5:g5") == ru.play(two, "c5xg5") == \
        ru.moves(two)[0].fen
    with pytest.raises(dtb.IllegalMoveError, match="'c3-d4' is not a legal move") as e:
        ru.play("W:Wc3:Bd4,h8", "c3-d4")
    assert isinstance(e.value, ValueError) and "c3:e5" in str(e.value)
    with pytest.raises(TypeError):
        ru.play("W:Wc3:Bd4,h8", 22)


def test_log_callback(tables, tmp_path):
    got = []
    with dtb.open_tablebase([str(tmp_path / "none"), tables], variant="english",
                            log=got.append) as t:
        assert t.probe_wdl("W:W21,22:B1") == 1
    assert got and "none" in got[0]


# ---- lifetime -------------------------------------------------------------------------------


def test_context_manager_and_close(tables):
    with dtb.open_tablebase(tables, variant="international") as t:
        assert t.probe_wdl("W:WK46,28:BK5") == 1
    with pytest.raises(dtb.TablebaseError, match="closed"):
        t.probe_wdl("W:WK46,28:BK5")
    t.close()  # again: nothing
    t2 = dtb.open_tablebase(tables, variant="english")
    t2.close()
    with pytest.raises(dtb.TablebaseError, match="closed"):
        t2.moves("W:W21,22:B1")
    with pytest.raises(dtb.TablebaseError, match="closed"):
        t2.max_pieces()


# ---- positions as objects -------------------------------------------------------------------


class FenAttribute:
    def __init__(self, fen):
        self.fen = fen


class FenMethod:
    def __init__(self, fen):
        self._fen = fen

    def fen(self):
        return self._fen


def test_objects_with_fen(tb):
    fen = "W:WK46,28:BK5"
    assert tb.probe_dtw(FenAttribute(fen)) == (1, 3)
    assert tb.probe_dtw(FenMethod(fen)) == (1, 3)
    assert tb.line(FenMethod(fen)) == ["28-22", "5-10", "46x5"]
    with pytest.raises(dtb.MissingTableError):
        tb.probe_wdl(FenAttribute("W:W31,32,33:B1"))
    # something with a variant but not from pydraughts is only its fen
    other = FenAttribute(fen)
    other.variant = "russian"
    assert tb.probe_wdl(other) == 1


def test_algebraic(tbs, probe_json):
    t = tbs["russian"]
    assert dtb.algebraic_to_square("a1") == 29 and dtb.algebraic_to_square("c3") == 22
    assert dtb.algebraic_to_square("b8") == 1 and dtb.algebraic_to_square("h8") == 4
    assert dtb.algebraic_to_square("g1") == 32 and dtb.algebraic_to_square("H2") == 28
    for s in range(1, 33):
        assert dtb.algebraic_to_square(dtb.square_to_algebraic(s)) == s
    with pytest.raises(ValueError):
        dtb.algebraic_to_square("a2")  # a light square
    # russian texts are algebraic unless numbers are asked for ("pdn": the old name)
    assert t.notation == "algebraic" and tbs["international"].notation == "numeric"
    assert tbs["english"].notation == "numeric" and tbs["brazilian"].notation == "algebraic"
    assert t.fen("W:W22,K29:B4") == "W:Wc3,Ka1:Bh8"
    assert t.fen("W:Wc3,Ka1:Bh8", notation="numeric") == "W:W22,K29:B4"
    assert t.fen("B:BKh8:Wc3", notation="pdn") == "B:W22:BK4"
    want = probe_json("russian", ["W:W22:B4"])[0]
    assert t.probe_dtw("W:Wc3:Bh8") == (WDL[want["wdl"]], want["dtw"] or 0)
    assert t.moves("W:Wc3:Bh8") == t.moves("W:W22:B4")
    alg = t.moves("W:W22:B4")
    numeric = t.moves("W:W22:B4", notation="numeric")
    assert [m.move for m in alg] == [dtb.move_to_algebraic(m.move).replace("x", ":")
                                     for m in numeric]
    assert alg[0].move == "c3-d4" and numeric[0].move == "22-18"
    assert t.line("W:Wc3:Bh8")[0] == "c3-d4"
    assert t.line("W:Wc3:Bh8", notation="numeric")[0] == "22-18"
    assert t.line("W:WKc1:BKe3")[0].startswith("c1:")  # a capture: ':'
    assert tbs["international"].line("W:WK46,28:BK5", notation="algebraic") == \
        ["e5-d6", "j10-i9", "a1:j10"]  # any board has names when asked (28-22 5-10 46x5)
    with pytest.raises(dtb.InvalidPositionError):
        t.probe_wdl("W:Wa2:Bh8")
    with pytest.raises(dtb.InvalidPositionError):
        t.probe_wdl("W:Wa1-c1:Bh8")
    # algebraic squares mean nothing on the 10x10 board
    with pytest.raises(dtb.InvalidPositionError):
        tbs["international"].probe_wdl("W:Wc3:Bh8")


# ---- threads ---------------------------------------------------------------------------------


def test_threads(tb):
    fens = random_fens("international", 300, 3, seed=7)
    want = [(tb.probe_dtw(f), tb.moves(f)) for f in fens]
    # positions whose tables are missing, each naming its own material, and bad FENs
    missing = ["W:W31,32,33:B1", "W:WK31,32,33:B1", "W:W31:B1,2,3", "W:WK31,K32:BK1,K2",
               "B:W40,41,42,43:B1"]
    bad = ["W:W31,31:B1", "W:W3:B45", "W:W77:B1", "Q:W31:B1"]
    msg = {}
    for f in missing + bad:
        try:
            tb.probe_wdl(f)
        except dtb.TablebaseError as e:
            msg[f] = (type(e), str(e))
    assert len(msg) == len(missing + bad) and len(set(msg.values())) >= 6
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        rng = random.Random(i)
        order = list(range(len(fens)))
        rng.shuffle(order)
        barrier.wait()
        try:
            for j in order:
                assert (tb.probe_dtw(fens[j]), tb.moves(fens[j])) == want[j], fens[j]
                f = (missing + bad)[(i + j) % len(missing + bad)]
                try:
                    tb.probe_wdl(f)
                except dtb.TablebaseError as e:
                    # this thread's own message, read right after its own failing call
                    assert (type(e), str(e)) == msg[f], (f, str(e))
                else:
                    raise AssertionError(f"{f} probed")
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_close_while_probing(tables):
    t = dtb.open_tablebase(tables, variant="international")
    fens = random_fens("international", 50, 3, seed=11)
    started = threading.Barrier(5)
    ends = []

    def work():
        started.wait()
        n = 0
        try:
            while True:
                t.moves(fens[n % len(fens)])
                n += 1
        except dtb.TablebaseError as e:
            ends.append((n, str(e)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    started.wait()
    while not all(th.is_alive() for th in threads):
        pass
    t.close()
    for th in threads:
        th.join(timeout=30)
    assert len(ends) == 4 and all("closed" in e for _, e in ends), ends


# ---- the library's layout and where it is found -------------------------------------------


def test_struct_layouts(tmp_path):
    """The ctypes structs against the C compiler's sizes and offsets for dtb.h. The structs that
    start with struct_size may have grown in dtb.h since: the package's must be a prefix."""
    cc = shutil.which("cc") or shutil.which("gcc")
    inc = os.environ.get("DTB_INCLUDE")
    if not cc or not inc:
        pytest.skip("no C compiler or DTB_INCLUDE")
    checks = {
        "offsetof(dtb_options, texts) + sizeof(int)": ctypes.sizeof(_lib.Options),
        "offsetof(dtb_options, loader_threads)": _lib.Options.loader_threads.offset,
        "offsetof(dtb_options, texts)": _lib.Options.texts.offset,
        "DTB_TEXTS_VARIANT": _lib.TEXTS_VARIANT,
        "DTB_NOTATION_ALGEBRAIC": _lib.NOTATION_ALGEBRAIC,
        "DTB_NOTATION_NUMERIC": _lib.NOTATION_NUMERIC,
        "offsetof(dtb_options, npaths)": _lib.Options.npaths.offset,
        "offsetof(dtb_options, variant)": _lib.Options.variant.offset,
        "offsetof(dtb_options, cache_bytes)": _lib.Options.cache_bytes.offset,
        "offsetof(dtb_options, log_user)": _lib.Options.log_user.offset,
        "sizeof(dtb_position)": ctypes.sizeof(_lib.Position),
        "offsetof(dtb_position, side)": _lib.Position.side.offset,
        "sizeof(dtb_pdn_move)": ctypes.sizeof(_lib.PdnMove),
        "offsetof(dtb_pdn_move, promotes)": _lib.PdnMove.promotes.offset,
        "offsetof(dtb_pdn_move, text)": _lib.PdnMove.text.offset,
        "sizeof(dtb_ranked_move)": ctypes.sizeof(_lib.RankedMove),
        "offsetof(dtb_ranked_move, dtw)": _lib.RankedMove.dtw.offset,
        "offsetof(dtb_cache_stats, blocks) + 8": ctypes.sizeof(_lib.CacheStats),
        "offsetof(dtb_pdn_move, captured)": _lib.PdnMove.captured.offset,
        "offsetof(dtb_ranked_move, wdl)": _lib.RankedMove.wdl.offset,
        "DTB_MESSAGE_SIZE": _lib.MESSAGE_SIZE,
        "DTB_MOVE_TEXT_SIZE": _lib.MOVE_TEXT_SIZE,
        "DTB_MAX_LINE": _lib.MAX_LINE,
        "DTB_API_VERSION": _lib.API_VERSION,
        "DTB_E_NOTCACHED": _lib.E_NOTCACHED,
        "DTB_E_GAMEOVER": _lib.E_GAMEOVER,
        "DTB_E_NOROOM": _lib.E_NOROOM,
        "DTB_E_NOTFOUND": _lib.E_NOTFOUND,
    }
    src = tmp_path / "layout.c"
    src.write_text('#include <stdio.h>\n#include <stddef.h>\n#include "dtb.h"\nint main(void){\n'
                   + "".join(f'printf("%zu\\n", (size_t)({k}));\n' for k in checks) + "}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", inc, str(src), "-o", str(exe)], check=True)
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                          check=True).stdout.split()]
    assert dict(zip(checks, got)) == checks


def _python(code, env, cwd=None):
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def test_library_search(tmp_path):
    lib = os.environ["DTB_LIBRARY"]
    base = {k: v for k, v in os.environ.items() if k not in ("DTB_LIBRARY", "PYTHONPATH")}
    # $DTB_LIBRARY naming nothing: a clear OSError that names it
    r = _python("import dtb\ntry:\n  dtb.version()\nexcept OSError as e:\n  print('E', e)",
                dict(base, DTB_LIBRARY="/nonexistent/libdtb.so",
                     PYTHONPATH=os.path.join(SRC, "probe", "python")))
    assert r.stdout.startswith("E ") and "/nonexistent/libdtb.so" in r.stdout, r.stderr
    # an explicit path wins over $DTB_LIBRARY
    r = _python(f"import dtb; print(dtb.version({lib!r}))",
                dict(base, DTB_LIBRARY="/nonexistent/libdtb.so",
                     PYTHONPATH=os.path.join(SRC, "probe", "python")))
    assert r.stdout.strip() == dtb.version(), r.stderr
    # the package's own directory
    pkg = tmp_path / "site" / "dtb"
    shutil.copytree(os.path.join(SRC, "probe", "python", "dtb"), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "_install.py"))
    shutil.copy(lib, pkg / "libdtb.so")
    r = _python("import dtb; print(dtb.version())", dict(base, PYTHONPATH=str(tmp_path / "site")))
    assert r.stdout.strip() == dtb.version(), r.stderr
    # nowhere: LibraryNotFoundError (an OSError) saying how to fix it
    os.remove(pkg / "libdtb.so")
    r = _python("import dtb\ntry:\n  dtb.version()\nexcept dtb.LibraryNotFoundError as e:\n"
                "  print('E', isinstance(e, OSError), e)",
                dict(base, PYTHONPATH=str(tmp_path / "site"), LD_LIBRARY_PATH=""))
    if "E " not in r.stdout and r.returncode == 0:
        pytest.skip("a libdtb is installed on this system: find_library found it")
    assert r.stdout.startswith("E True") and "DTB_LIBRARY" in r.stdout, (r.stdout, r.stderr)


def test_installed(tmp_path, tables):
    """`cmake --install` puts the package under the prefix (in DTB_PYTHON_DIR), and it finds
    the installed libdtb without help."""
    build, cmake = os.environ.get("DTB_BUILD_DIR"), os.environ.get("DTB_CMAKE")
    if not (build and cmake):
        pytest.skip("DTB_BUILD_DIR and DTB_CMAKE not given")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", build, "--prefix", str(prefix)], check=True,
                   capture_output=True)
    found = sorted(prefix.glob("**/dtb/_install.py"))
    assert len(found) == 1, found
    site = found[0].parent.parent
    assert (site / "dtb" / "__init__.py").exists() and "dist-packages" in str(site)
    env = {k: v for k, v in os.environ.items() if k not in ("DTB_LIBRARY", "PYTHONPATH")}
    code = ("import dtb, sys; t = dtb.open_tablebase(sys.argv[1], variant='english'); "
            "print(dtb.version(), t.probe_dtw('W:W21,22:B1'), dtb.__file__)")
    r = subprocess.run([sys.executable, "-c", code, tables], env=dict(env, PYTHONPATH=str(site)),
                       capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{dtb.version()} (1, 5) {site}")
    # moved elsewhere, the package still finds the library through its relative path
    moved = tmp_path / "moved"
    prefix.rename(moved)
    r = subprocess.run([sys.executable, "-c", code, tables], capture_output=True, text=True,
                       env=dict(env, PYTHONPATH=str(moved / site.relative_to(prefix))))
    assert r.returncode == 0 and r.stdout.startswith(dtb.version()), r.stderr


# ---- pydraughts ------------------------------------------------------------------------------
#
# Fakes of pydraughts' objects, written from its source (github.com/AttackingOrDefending/
# pydraughts): the class Board in draughts/__init__.py (0.6+) has a str `variant` and a `fen`
# property, fen_to_variant(<internal FEN>, variant) of draughts/convert.py; the class Game in
# draughts/core/game.py has get_li_fen(), the internal FEN. The internal board numbers every
# variant like international PDN (row 0 at the top, its first square in the second column), and
# white (which always starts inside) moves towards square 1. fen_to_variant, by variant:
#   standard: unchanged (_rotate_move notation 2);
#   english: square s -> 33 - s (notation 1), white and black exchanged, side to move exchanged
#     (_change_fen_from_variant: "in english black starts");
#   russian, brazilian: rows reversed (notation 0, reverse_row: s -> 33 - s, then each row's
#     order reversed, so a1 = 1, c1 = 2, ..., h8 = 32), then each square n written as
#     _numeric_to_algebraic_square does: rank ceil(n/4), file 2*((n-1) % 4), plus one on even
#     ranks; kings keep their K.
# Checked below against the examples of pydraughts' own test_pydraughts/test_convert.py.


def _pd_rows_reversed(s):
    row, k = divmod(s - 1, 4)
    return (7 - row) * 4 + k + 1


def _pd_algebraic(n):
    rank = (n - 1) // 4 + 1
    file = 2 * ((n - 1) % 4) + (1 if rank % 2 == 0 else 0)
    return "abcdefgh"[file] + str(rank)


def _pd_tokens(fen):
    side, *fields = fen.split(":")
    secs = {f[0]: [t for t in f[1:].split(",") if t] for f in fields}
    return side, secs.get("W", []), secs.get("B", [])


def _pd_map(tokens, f):
    return [("K" if t[0] == "K" else "") + f(int(t.lstrip("K"))) for t in tokens]


def pd_fen_to_variant(internal, variant):
    """What pydraughts' fen_to_variant makes of an internal FEN (no ranges)."""
    side, white, black = _pd_tokens(internal)
    if variant == "english":
        turn = lambda s: str(33 - s)  # noqa: E731
        return f"{'B' if side == 'W' else 'W'}:W{','.join(_pd_map(black, turn))}:B" \
               f"{','.join(_pd_map(white, turn))}"
    if variant in ("russian", "brazilian"):
        alg = lambda s: _pd_algebraic(_pd_rows_reversed(s))  # noqa: E731
        return f"{side}:W{','.join(_pd_map(white, alg))}:B{','.join(_pd_map(black, alg))}"
    return internal


class Board:
    """A pydraughts Board as its `fen` shows it."""

    def __init__(self, variant, internal):
        self.variant = variant
        self._internal = internal

    @property
    def fen(self):
        return pd_fen_to_variant(self._internal, self.variant)


Board.__module__ = "draughts"


class Game:
    """A pydraughts Game: the internal FEN."""

    def __init__(self, variant, internal):
        self.variant = variant
        self._internal = internal

    def get_li_fen(self):
        return self._internal

    def get_fen(self):  # the Hub FEN; not what dtb reads
        return "W" + "e" * 50


Game.__module__ = "draughts.core.game"


def _same_fen(a, b):
    sa, wa, ba = _pd_tokens(a)
    sb, wb, bb = _pd_tokens(b)
    return sa == sb and sorted(wa) == sorted(wb) and sorted(ba) == sorted(bb)


def test_fake_is_pydraughts():
    # the examples of pydraughts' test_pydraughts/test_convert.py (test_convert)
    assert _same_fen(pd_fen_to_variant("W:WK12,K13,K14:BK28,K29,K30,K31", "russian"),
                     "W:WKa5,Kc5,Kh6:BKa1,Kc1,Ke1,Kh2")
    assert _same_fen(pd_fen_to_variant(
        "B:W17,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", "russian"),
        "B:Wa1,c3,e3,g3,b4,c1,e1,g1,b2,d2,f2,h2:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8")
    assert _same_fen(pd_fen_to_variant(
        "W:W21,22,23,24,26,27,28,29,30,31,32:B1,10,11,12,14,2,3,4,6,7,8", "english"),
        "B:W19,21,22,23,25,26,27,29,30,31,32:B1,10,11,12,2,3,4,5,6,7,9")
    # and its move example: g3-h4 is internal 24-20
    assert _pd_algebraic(_pd_rows_reversed(24)) == "g3"
    assert _pd_algebraic(_pd_rows_reversed(20)) == "h4"


# (pydraughts variant, internal FEN, the PDN FEN the tables must be asked about)
PYDRAUGHTS_CASES = [
    ("standard", "W:W28,K46:BK5", "W:W28,K46:BK5"),
    ("standard", "B:W33:B18,K49", "B:W33:B18,K49"),
    # english: internal white (it starts) is black; the board turned half a turn
    ("english", "W:W22,23:B9", "B:W24:B10,11"),
    ("english", "B:WK5:B20,K26", "W:W13,K7:BK28"),
    ("english", "W:W18:BK1", "B:WK32:B15"),
    # russian, brazilian: the internal numbers are PDN's (b8 = 1, a1 = 29)
    ("russian", "W:W22:B4", "W:W22:B4"),
    ("russian", "W:W18,K30:B11", "W:W18,K30:B11"),
    ("russian", "B:W26:B7,K23", "B:W26:B7,K23"),
    ("russian", "W:W19,20:B13", "W:W19,20:B13"),
    ("brazilian", "W:W22:B4", "W:W22:B4"),
    ("brazilian", "B:W26:B7,K23", "B:W26:B7,K23"),
    ("brazilian", "W:W19,20:B13", "W:W19,20:B13"),
]
DTB_NAME = {"standard": "international", "english": "english", "russian": "russian",
            "brazilian": "brazilian"}


def _canonical(fen):
    side, white, black = _pd_tokens(fen)
    key = lambda t: int(t.lstrip("K"))  # noqa: E731
    return f"{side}:W{','.join(sorted(white, key=key))}:B{','.join(sorted(black, key=key))}"


@pytest.mark.parametrize("variant, internal, pdn", PYDRAUGHTS_CASES)
def test_pydraughts_board(tbs, probe_json, variant, internal, pdn):
    t = tbs[DTB_NAME[variant]]
    want = probe_json(t.variant, [pdn])[0]
    assert "error" not in want, want
    numeric = probe_json(t.variant, [pdn], "numeric")[0]
    for obj in (Board(variant, internal), Game(variant, internal)):
        assert t.fen(obj, notation="numeric") == numeric["fen"] == _canonical(pdn)
        assert t.fen(obj) == want["fen"]
        assert t.probe_dtw(obj) == (WDL[want["wdl"]], want["dtw"] or 0)
        assert [tuple(m) for m in t.moves(obj)] == as_json(want["moves"])
        assert t.line(obj) == want["line"]


def test_pydraughts_not_mirrored(tbs, probe_json):
    """Reading pydraughts' russian squares in its own numbering (a1 = 1) as if they were PDN
    probes the board upside down; these cases tell the two apart."""
    differ = 0
    for variant in ("russian", "brazilian"):
        t = tbs[variant]
        for v, internal, pdn in PYDRAUGHTS_CASES:
            if v != variant:
                continue
            side, white, black = _pd_tokens(internal)
            wrong = f"{side}:W{','.join(_pd_map(white, lambda s: str(_pd_rows_reversed(s))))}" \
                    f":B{','.join(_pd_map(black, lambda s: str(_pd_rows_reversed(s))))}"
            right = t.probe_dtw(Board(variant, internal))
            try:
                mirrored = t.probe_dtw(wrong)
            except dtb.InvalidPositionError:
                differ += 1  # a man on its promotion row when read upside down
                continue
            differ += mirrored != right
        assert differ >= 2, variant
    # pydraughts' numeric russian squares, had a Board shown them, are read its way too
    numeric = type("Board", (), {"variant": "russian",
                                 "fen": "W:W" + str(_pd_rows_reversed(22)) + ":BK4"})
    numeric.__module__ = "draughts"
    assert tbs["russian"].fen(numeric(), notation="numeric") == "W:W22:BK32"


def test_pydraughts_errors(tbs):
    with pytest.raises(dtb.InvalidPositionError, match="russian"):
        tbs["international"].probe_wdl(Board("russian", "W:W22:B4"))
    with pytest.raises(dtb.InvalidPositionError, match="frisian"):
        tbs["international"].probe_wdl(Board("frisian", "W:W28:B5"))
    with pytest.raises(dtb.MissingTableError):
        tbs["english"].probe_wdl(Board("english", "W:W22,23,24:B9"))
