"""docs/FORMAT.md is enough to read the files: the independent reader (spec_reader.py, written
from the specification) checks every checksum of every table dtbgen writes, finds the sizes the
specification predicts, and gives each quiet position the value dtbprobe gives it."""
import json
import os
import random
import subprocess
import sys
import tempfile

import pytest

from spec_reader import Set, Table, counts, fen_of, index, layout, parse_fen


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from build_programs import program  # noqa: E402 (tests/build_programs.py)


@pytest.fixture(scope="module")
def tables():
    dtbgen = program("DTB_DTBGEN")
    with tempfile.TemporaryDirectory(prefix="dtb_spec_") as d:
        for variant in ("international", "english"):
            subprocess.run([dtbgen, "--variant", variant, "--pieces", "3", "--out", d, "--quiet",
                            "--threads", "2"], check=True)
        yield d


def files(d, variant, ends=(".wld", ".dtw")):
    folder = os.path.join(d, variant)
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(ends))


@pytest.mark.parametrize("variant", ["international", "english"])
def test_every_file_reads_and_checks(tables, variant):
    paths = files(tables, variant)
    assert len(paths) == 32  # 16 materials of 2..3 pieces, two metrics each
    for path in paths:
        t = Table(path)
        assert t.variant == variant and os.path.basename(path).startswith(t.material + ".")
        _, _, _, blocks, block_size = layout(variant, t.material)
        assert t.positions == blocks * block_size, t.material
        assert t.index_version == 1 and t.encoding == (1 if path.endswith(".dtw") else 2)
        # dtbgen's default: DTW tables store their losses only (FORMAT.md 8.7)
        assert t.losses_only == path.endswith(".dtw"), t.material


def random_position(rng, S, H, material):
    wk, wm, bk, bm = counts(material)
    squares = list(range(1, S + 1))
    rng.shuffle(squares)
    wmen = [s for s in squares if s > H][:wm]
    rest = [s for s in squares if s not in wmen]
    bmen = [s for s in rest if s <= S - H][:bm]
    rest = [s for s in rest if s not in bmen]
    return wmen, rest[:wk], bmen, rest[wk:wk + bk]


@pytest.fixture(scope="module")
def listed():
    """english 2..3 with every distance beyond 5 plies in the long lists (FORMAT.md 8.4)."""
    with tempfile.TemporaryDirectory(prefix="dtb_spec_long_") as d:
        subprocess.run([program("DTB_DTBGEN"), "--variant", "english", "--pieces", "3", "--out", d,
                        "--quiet", "--threads", "2", "--dtw-byte-max", "5"], check=True)
        yield d


@pytest.mark.parametrize("variant", ["international", "english"])
def test_values_as_dtbprobe_gives_them(tables, variant):
    seen = {}
    assert check_values(tables, variant, seen=seen) > 500
    assert seen["capture"] > 50 and seen["losses-only win"] > 50, seen


@pytest.fixture(scope="module")
def full_dtw():
    """international 2..3 with DTW tables that store every value (dtbgen --dtw-store full)."""
    with tempfile.TemporaryDirectory(prefix="dtb_spec_full_") as d:
        subprocess.run([program("DTB_DTBGEN"), "--variant", "international", "--pieces", "3",
                        "--out", d, "--quiet", "--threads", "2", "--dtw-store", "full"], check=True)
        yield d


def test_full_dtw_tables_read_as_dtbprobe_gives_them(full_dtw):
    dtw_files = [Table(p) for p in files(full_dtw, "international", (".dtw",))]
    assert len(dtw_files) == 16 and not any(t.losses_only for t in dtw_files)
    assert check_values(full_dtw, "international", (".dtw",)) > 500


def test_long_lists_read_as_dtbprobe_gives_them(listed):
    dtw_files = [Table(p) for p in files(listed, "english") if p.endswith(".dtw")]
    # losses-only tables (8.7) list their losses' distances alone
    assert sum(t.version == 3 and len(t.long) > 0 for t in dtw_files) > len(dtw_files) // 3
    assert all(t.losses_only and all(d % 2 == 0 for d in t.long.values()) for t in dtw_files)
    assert check_values(listed, "english") > 500


@pytest.fixture(scope="module")
def with_mtc():
    """international 2..3 with MTC tables (FORMAT.md 8.5)."""
    with tempfile.TemporaryDirectory(prefix="dtb_spec_mtc_") as d:
        subprocess.run([program("DTB_DTBGEN"), "--variant", "international", "--pieces", "3",
                        "--out", d, "--quiet", "--threads", "2", "--metrics", "wld,dtw,mtc"],
                       check=True)
        yield d


def test_mtc_reads_as_dtbprobe_gives_it(with_mtc):
    mtc_files = [Table(p) for p in files(with_mtc, "international", (".mtc",))]
    assert len(mtc_files) == 16 and all(t.version == 4 and t.metric == 3 for t in mtc_files)
    assert check_values(with_mtc, "international", (".mtc",), "mtc") > 500


class Moves:
    """The legal moves of positions (the rules of the game, which the format leaves to the reader:
    FORMAT.md section 10), from dtbprobe --json, asked in batches and kept: fen -> its answer."""

    def __init__(self, tables, variant):
        self.tables, self.variant, self.known = tables, variant, {}

    def ask(self, fens):
        new = [f for f in dict.fromkeys(fens) if f not in self.known]
        if not new:
            return
        out = subprocess.run([program("DTB_DTBPROBE"), "--tables", self.tables, "--variant",
                              self.variant, "--json"], input="\n".join(new) + "\n",
                             capture_output=True, text=True)
        answers = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        assert len(answers) == len(new)
        self.known.update(zip(new, answers))

    def __call__(self, fen):
        self.ask([fen])
        a = self.known[fen]
        assert "error" not in a, a
        return [("x" in m["move"], fen_of(parse_fen(m["fen"]))) for m in a["moves"]]

    def prefetch(self, fens, expand, losses_only):
        """Asks, a batch a ply, for the successors the reader's search of fens will want: those of
        the positions expand(answer) says it searches, then of the capture positions among them,
        and, in a set whose DTW tables store losses only, of the wins a capture leads to."""
        capture = lambda f: any("x" in m["move"] for m in self.known[f]["moves"])
        level = [f for f in fens if "error" not in self.known[f] and expand(self.known[f])]
        while level:
            after = {p: [f for f in (fen_of(parse_fen(m["fen"])) for m in self.known[p]["moves"])
                         if not Set._no_piece(parse_fen(f))] for p in level}
            self.ask([f for fs in after.values() for f in fs])
            level = [f for p, fs in after.items() for f in fs
                     if "error" not in self.known[f] and (capture(f) or (
                         losses_only and capture(p) and self.known[f]["wdl"] == "win"))]


def check_values(tables, variant, ends=(".wld", ".dtw"), key="dtw", seen=None):
    """Positions of every table whose value the reader finds as dtbprobe gives it (its distance
    as dtbprobe's JSON key `key`): quiet positions and capture positions (section 10.1), and in a
    losses-only DTW table (8.7) its wins by the reader's search, WLD first. seen, a dict, counts
    the capture positions and those wins among them."""
    rng = random.Random(7 + len(variant))
    moves = Moves(tables, variant)
    reader = Set(tables, variant, moves)
    checked = 0
    for path in files(tables, variant, ends):
        t = Table(path)
        S, H, _, _, _ = layout(variant, t.material)
        positions = [random_position(rng, S, H, t.material) for _ in range(60)]
        fens = [fen_of((True,) + tuple(sorted(x) for x in p)) for p in positions]
        moves.ask(fens)
        searched = lambda a: any("x" in m["move"] for m in a["moves"]) or (
            t.losses_only and a["wdl"] == "win")
        moves.prefetch(fens, searched, t.losses_only)
        for (wm, wk, bm, bk), fen in zip(positions, fens):
            a = moves.known[fen]
            if "error" in a:
                continue  # an impossible position
            capture = any("x" in m["move"] for m in a["moves"])
            if t.metric == 3:
                if capture:
                    continue  # at MTC 1 (8.5); its byte is don't-care
                wdl, dtw = t.result(index(variant, t.material, wm, wk, bm, bk))
            elif t.metric == 1:
                wdl, dtw = reader.wdl(parse_fen(fen)), None
            else:
                wdl, dtw = reader.value(parse_fen(fen))
            assert wdl == a["wdl"], (t.material, a["fen"])
            if dtw is not None and wdl != "draw":  # a draw has no distance in the JSON
                assert dtw == a[key], (t.material, a["fen"])
            checked += 1
            if seen is not None:
                seen["capture"] = seen.get("capture", 0) + capture
                win = t.losses_only and not capture and wdl == "win"
                seen["losses-only win"] = seen.get("losses-only win", 0) + win
    return checked
