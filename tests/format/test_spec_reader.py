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

from spec_reader import Table, counts, index, layout


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
    assert check_values(tables, variant) > 500


def test_long_lists_read_as_dtbprobe_gives_them(listed):
    dtw_files = [Table(p) for p in files(listed, "english") if p.endswith(".dtw")]
    assert sum(t.version == 3 and len(t.long) > 0 for t in dtw_files) > len(dtw_files) // 2
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


def check_values(tables, variant, ends=(".wld", ".dtw"), key="dtw"):
    """Positions of every table whose value the reader finds as dtbprobe gives it (its distance
    as dtbprobe's JSON key `key`)."""
    rng = random.Random(7 + len(variant))
    checked = 0
    for path in files(tables, variant, ends):
        t = Table(path)
        S, H, _, _, _ = layout(variant, t.material)
        positions = [random_position(rng, S, H, t.material) for _ in range(60)]
        fens = ["W:W%s:B%s" % (",".join([str(s) for s in sorted(wm)] + ["K%d" % s for s in sorted(wk)]),
                               ",".join([str(s) for s in sorted(bm)] + ["K%d" % s for s in sorted(bk)]))
                for wm, wk, bm, bk in positions]
        out = subprocess.run([program("DTB_DTBPROBE"), "--tables", tables, "--variant", variant,
                              "--json"], input="\n".join(fens) + "\n", capture_output=True, text=True)
        answers = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        assert len(answers) == len(fens)
        for (wm, wk, bm, bk), a in zip(positions, answers):
            if "error" in a or any("x" in m["move"] for m in a["moves"]):
                continue  # an impossible position, or a capture position (its byte is don't-care)
            wdl, dtw = t.result(index(variant, t.material, wm, wk, bm, bk))
            assert wdl == a["wdl"], (t.material, a["fen"])
            if dtw is not None:
                assert dtw == a[key], (t.material, a["fen"])
            checked += 1
    return checked
