"""The package under the move-count draw rules (Tablebase.probe_rules) against dtbprobe --json's
"rules" object, on international KKvK and the 2-piece materials with the FMJD limits lowered to 6,6,4 plies
(W:WK46,K47:BK5 wins in 3 plies: a win at clock 0 and 1, a cursed win at 2); the clock from the
FEN's H field or the keyword; the documented exceptions for bad arguments."""
import json
import subprocess
import tempfile

import pytest

import dtb


@pytest.fixture(scope="module")
def rule_tables():
    with tempfile.TemporaryDirectory(prefix="dtb_python_rules_") as d:
        subprocess.run([pytest.importorskip("build_programs").program("DTB_DTBGEN"),
                        "--variant", "international", "--pieces", "3", "--material", "KKvK",
                        "--material", "MvK", "--material", "MvM", "--out", d, "--quiet", "--threads", "2",
                        "--metrics", "wld,dtw,rules", "--rule-limits", "6,6,4"], check=True)
        yield d


@pytest.fixture(scope="module")
def rtb(rule_tables):
    with dtb.open_tablebase(rule_tables, "international") as tb:
        yield tb


FENS = ["W:WK46,K47:BK5", "W:WK46,K47:BK5:H1", "W:WK46,K47:BK5:H2", "B:WK41,K46:BK5:H3",
        "W:W28:BK5", "B:W28:BK5:H9"]


def test_equal_to_dtbprobe(rtb, rule_tables, dtbprobe):
    r = subprocess.run([dtbprobe, "--tables", rule_tables, "--json"], input="\n".join(FENS),
                       capture_output=True, text=True, check=True)
    for fen, line in zip(FENS, r.stdout.splitlines()):
        want = json.loads(line)["rules"]
        got = rtb.probe_rules(fen)
        assert (got.rules, got.rule, got.category, got.plies, got.limit, got.clock) == \
            (want["name"], want["rule"], want["category"], want["plies"], want["limit"],
             want["clock"]), fen
        assert {1: "win", 0: "draw", -1: "loss"}[got.wdl] == want["wdl"]
        assert [(m.move, m.category, m.plies, m.clock, m.fen) for m in got.moves] == \
            [(m["move"], m["category"], m["plies"], m["clock"], m["fen"]) for m in want["moves"]]


def test_clock(rtb):
    assert rtb.probe_rules("W:WK46,K47:BK5").category == "win"
    assert rtb.probe_rules("W:WK46,K47:BK5:H2").category == "cursed-win"
    cursed = rtb.probe_rules("W:WK46,K47:BK5:H0", clock=2)   # the keyword wins over H
    assert (cursed.category, cursed.wdl, cursed.unlimited, cursed.clock) == \
        ("cursed-win", dtb.DRAW, dtb.WIN, 2)
    assert rtb.probe_rules("W:WK46,K47:BK5:H2", clock=0).category == "win"
    none = rtb.probe_rules("W:WK46,K47:BK5:H2", rules="none")
    assert (none.rules, none.category, none.plies, none.limit) == ("none", "win", None, None)


@pytest.mark.parametrize("kwargs, exc, words", [
    ({"clock": -1}, ValueError, "0..1000000"),
    ({"clock": 10**7}, ValueError, "0..1000000"),
    ({"clock": "3"}, TypeError, "int"),
    ({"clock": True}, TypeError, "int"),
    ({"rules": "fide"}, ValueError, "'fmjd', 'wcdf', 'fmjd64' or 'none'"),
])
def test_bad_arguments(rtb, kwargs, exc, words):
    with pytest.raises(exc, match=words):
        rtb.probe_rules("W:WK46,K47:BK5", **kwargs)


def test_bad_h_and_missing_tables(rtb, tables):
    with pytest.raises(dtb.InvalidPositionError, match="H field"):
        rtb.probe_rules("W:WK46,K47:BK5:Hx")
    with dtb.open_tablebase(tables, "international") as plain:  # made without rule tables
        with pytest.raises(dtb.MissingTableError, match="fmjd"):
            plain.probe_rules("W:WK46,K47:BK5")
        assert plain.get_rules("W:WK46,K47:BK5") is None
    with dtb.open_tablebase(tables, "brazilian") as brazilian:  # made without rule tables
        with pytest.raises(dtb.MissingTableError, match="fmjd64"):
            brazilian.probe_rules("W:WK29:BK4")
    with dtb.open_tablebase(tables, "russian") as russian:  # FMJD-64's rule tables
        a = russian.probe_rules("W:WK29:BK4")
        assert (a.rules, a.rule, a.limit, a.diagonal) == ("fmjd64", "5-move", 10, 0)
        assert all(m.diagonal == 0 for m in a.moves)  # no lone king against three pieces
        with pytest.raises(ValueError, match="'fmjd64', not 'fmjd'"):
            russian.probe_rules("W:WK29:BK4", rules="fmjd")
        with pytest.raises(ValueError, match="0..1000000"):
            russian.probe_rules("W:WK29:BK4", diagonal=-1)
        with pytest.raises(TypeError, match="int"):
            russian.probe_rules("W:WK29:BK4", diagonal="2")
