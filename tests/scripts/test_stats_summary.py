"""scripts/stats_summary.py on a hand-made STATS: totals a piece count, the longest win, errors."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "stats_summary.py")

# Three materials written by hand; the expected rows below are added up by hand from them.
RECORDS = [
    {"material": "KvK", "positions": 10, "wins": 3, "draws": 5, "losses": 2, "longest_win": 11,
     "longest_win_fen": "W:WK1:BK13", "seconds": 0.5, "peak_resident_bytes": 100},
    {"material": "KKvK", "positions": 20, "wins": 15, "draws": 5, "losses": 0, "longest_win": 15,
     "longest_win_fen": "W:WK1,K2:BK32", "seconds": 1.0, "peak_resident_bytes": 300},
    {"material": "KvKK", "positions": 20, "wins": 0, "draws": 5, "losses": 15, "longest_win": 16,
     "longest_win_fen": "W:WK32:BK1,K2", "seconds": 2.0, "peak_resident_bytes": 200},
]
SIZES = {"KvK": (7, 11), "KKvK": (13, 17), "KvKK": (19, 23)}  # (WLD, DTW) bytes


def make_set(tmp_path, records=RECORDS, skip_file=None):
    d = tmp_path / "english"
    d.mkdir()
    (d / "STATS").write_text("".join(json.dumps(r) + "\n" for r in records))
    for material, (wld, dtw) in SIZES.items():
        for ext, size in (("wld", wld), ("dtw", dtw)):
            if f"{material}.{ext}" != skip_file:
                (d / f"{material}.{ext}").write_bytes(b"x" * size)
    return d


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True)


def test_rows(tmp_path):
    out = run(make_set(tmp_path))
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and
            not line.startswith("| pieces")]
    assert rows[0] == "| 2 | 1 | 10 | 3 | 5 | 2 | 11, KvK `W:WK1:BK13` | 7 | 11 | 0 s |"
    assert rows[1] == ("| 3 | 2 | 40 | 15 | 10 | 15 | 16, KvKK `W:WK32:BK1,K2` | 32 | 40 "
                       "| 3 s |")
    assert rows[2] == ("| all | 3 | 50 | 18 | 15 | 17 | 16, KvKK `W:WK32:BK1,K2` | 39 | 51 "
                       "| 4 s |")


def test_mtc_rows(tmp_path):
    mtc = [dict(r, longest_mtc_win=w, longest_mtc_win_fen=wf, longest_mtc_loss=l,
                longest_mtc_loss_fen=lf)
           for r, (w, wf, l, lf) in zip(RECORDS, [(3, "W:WK1:BK13", 2, "W:WK5:BK9"),
                                                  (7, "W:WK1,K2:BK32", -1, ""),
                                                  (-1, "", 8, "W:WK32:BK1,K2")])]
    d = make_set(tmp_path, records=mtc)
    for material, size in (("KvK", 5), ("KKvK", 6), ("KvKK", 9)):
        (d / f"{material}.mtc").write_bytes(b"x" * size)
    out = run(d, "--mtc")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[2:] == [
        "| KvK | 3, `W:WK1:BK13` | 2, `W:WK5:BK9` | 5 |",
        "| KKvK | 7, `W:WK1,K2:BK32` | none | 6 |",
        "| KvKK | none | 8, `W:WK32:BK1,K2` | 9 |"]
    (tmp_path / "plain").mkdir()
    out = run(make_set(tmp_path / "plain"), "--mtc")  # a set without MTC
    assert out.returncode == 1 and "no MTC" in out.stderr


def test_pieces_limit(tmp_path):
    out = run(make_set(tmp_path), "--pieces", 2)
    assert out.returncode == 0, out.stderr
    firsts = [line.split("|")[1].strip() for line in out.stdout.splitlines()[2:]]
    assert firsts == ["2", "all"] and "| all | 1 | 10 |" in out.stdout


def test_missing_table_file(tmp_path):
    out = run(make_set(tmp_path, skip_file="KKvK.dtw"))
    assert out.returncode == 1 and "KKvK.dtw" in out.stderr and out.stdout == ""


def test_bad_line(tmp_path):
    d = make_set(tmp_path)
    with open(d / "STATS", "a") as f:
        f.write("{not json\n")
    out = run(d)
    assert out.returncode == 1 and "STATS:4: not a material record" in out.stderr


def test_missing_stats(tmp_path):
    out = run(tmp_path)
    assert out.returncode == 1 and "STATS" in out.stderr


@pytest.mark.parametrize("args", [[], ["a", "b"], ["x", "--pieces"]])
def test_usage(args):
    assert run(*args).returncode == 2
