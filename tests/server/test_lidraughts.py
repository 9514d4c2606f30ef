"""The lidraughts-shaped endpoint (/lidraughts/standard?fen=, lidraughts.h) against the C API,
through the Python package over libdtb: for a few hundred positions of international 2..3 at
random clocks, with the FMJD limits lowered to 6,6,4 plies so that every category occurs, the
answer's category and dtz are dtb_probe_rules's; its moves are dtb_probe_rule_moves's, the
same set in the same order, each with the category and dtz of the position after it at the
clock after it (lichess's convention: the values of the side then to move), zeroing where the
move resets the count, and lidraughts' UCI (two digits a square, a capture's every landing).

Needs DTB_LIBRARY and PYTHONPATH (tests/CMakeLists.txt passes them; not in the sanitizer tree,
whose libdtb python3 cannot load)."""
import json
import os
import random
import subprocess
import sys
import tempfile
import urllib.parse

import pytest

from conftest import program, start_server

dtb = pytest.importorskip("dtb")

SIGN = {"win": 1, "cursed-win": 1, "draw": 0, "blessed-loss": -1, "loss": -1}
OPPOSITE = {"win": "loss", "cursed-win": "blessed-loss", "draw": "draw", "blessed-loss": "cursed-win",
            "loss": "win"}
WDL = {"win": 2, "cursed-win": 1, "draw": 0, "blessed-loss": -1, "loss": -2}


@pytest.fixture(scope="module")
def rule_tables():
    with tempfile.TemporaryDirectory(prefix="dtb_lidraughts_") as d:
        subprocess.run([program("DTB_DTBGEN"), "--variant", "international", "--pieces", "3",
                        "--out", d, "--quiet", "--threads", "2", "--metrics", "wld,dtw,rules",
                        "--rule-limits", "6,6,4"], check=True)
        yield d


@pytest.fixture(scope="module")
def lidraughts(dtbprobe, rule_tables):
    s = start_server(dtbprobe, rule_tables, "--threads", "2")
    yield s
    s.process.terminate()
    assert s.process.wait(timeout=10) == 0


def positions(tb, n, seed=37):
    """n legal positions of 2..3 pieces (a side to move with a piece), each with a clock."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        pieces = rng.choice((2, 3, 3, 3))
        squares = rng.sample(range(1, 51), pieces)
        sides = [0, 1] + [rng.randint(0, 1) for _ in range(pieces - 2)]
        items = {0: [], 1: []}
        for sq, side in zip(squares, sides):
            items[side].append(("K" if rng.random() < 0.6 else "") + str(sq))
        fen = "%s:W%s:B%s" % (rng.choice("WB"), ",".join(items[0]), ",".join(items[1]))
        try:
            tb.fen(fen)
        except dtb.InvalidPositionError:  # a man on its promotion row
            continue
        out.append((fen, rng.randint(0, 6)))
    return out


def signed(category, plies):
    return 0 if category == "draw" else None if plies is None else SIGN[category] * plies


def test_consistent_with_the_c_api(lidraughts, rule_tables):
    with dtb.open_tablebase(rule_tables, "international") as tb:
        checked = captures = cursed = 0
        for fen, clock in positions(tb, 300):
            status, _, body = lidraughts.get("/lidraughts/standard?fen=" +
                                             urllib.parse.quote(f"{fen}:H{clock}:F1"))
            assert status == 200, body
            got = json.loads(body)
            want = tb.probe_rules(fen, clock=clock, notation="numeric")
            assert got["rules"] == "fmjd"
            assert (got["category"], got["wdl"], got["dtz"], got["precise_dtz"]) == \
                (want.category, WDL[want.category], signed(want.category, want.plies),
                 signed(want.category, want.plies)), (fen, clock, got, want)
            assert got["checkmate"] == (want.category == "loss" and want.plies == 0)
            # the same moves in the same order
            assert [m["san"] for m in got["moves"]] == \
                [m.move if m.move.count("x") < 2 else m.move.split("x")[0] + "x" +
                 m.move.split("x")[-1] for m in want.moves], (fen, clock)
            for g, w in zip(got["moves"], want.moves):
                assert g["category"] == OPPOSITE[w.category], (fen, g, w)
                assert g["wdl"] == WDL[g["category"]]
                assert g["zeroing"] == (w.clock == 0)
                if _side_has_pieces(w.fen):
                    after = tb.probe_rules(w.fen, clock=w.clock)
                    assert g["category"] == after.category, (fen, g, after)
                    assert g["dtz"] == signed(after.category, after.plies), (fen, g, after)
                else:  # the last piece taken: the side to move has lost
                    assert (g["category"], g["dtz"], g["checkmate"]) == ("loss", 0, True)
                # lidraughts' UCI: the start and every landing square, two digits each
                path = [int(x) for x in w.move.replace("-", "x").split("x")]
                assert g["uci"][:2] == "%02d" % path[0] and g["uci"][-2:] == "%02d" % path[-1]
                assert len(g["uci"]) % 2 == 0 and len(g["uci"]) >= 4
                captures += "x" in w.move
                if len(g["uci"]) > 4:
                    assert len(path) == 2 or g["uci"] == "".join("%02d" % q for q in path)
            cursed += want.category in ("cursed-win", "blessed-loss")
            checked += 1
        assert checked == 300 and captures > 20 and cursed > 10, (captures, cursed)


def _side_has_pieces(fen):
    side, *parts = fen.split(":")
    mine = next((p for p in parts if p[:1] == side), "")
    return len(mine) > 1


def test_rules_none_and_unknown_variant(lidraughts):
    status, _, body = lidraughts.get("/lidraughts/standard?rules=none&fen=" +
                                     urllib.parse.quote("W:WK46,K47:BK5:H2"))
    got = json.loads(body)
    assert status == 200 and got["rules"] == "none" and got["category"] == "win"
    assert got["dtm"] == 3 and got["dtz"] is None
    status, _, body = lidraughts.get("/lidraughts/antidraughts?fen=W:WK46:BK5")
    assert status == 404 and "antidraughts" in json.loads(body)["error"]
