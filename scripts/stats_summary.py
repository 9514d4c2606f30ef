#!/usr/bin/env python3
"""Per piece count totals of a generated table set, as a Markdown table for the documentation.

usage: scripts/stats_summary.py DIR/VARIANT [--pieces N] [--mtc]

Reads DIR/VARIANT/STATS (the JSON lines dtbgen writes, one a material, white to move as indexed)
and the sizes of the .wld and .dtw files beside it. Each material's colour flip is a material of
its own, so a piece count's wins, draws and losses cover both sides to move. Prints one row a
piece count (materials, positions, wins, draws, losses, the longest win with its material and
FEN, WLD and DTW bytes, solving seconds) and a total row; exit 1 when STATS is missing or a line
of it is not a record, or when a material's table files are absent.

--mtc: instead, one row a material of a set built with MTC (dtbgen --metrics wld,dtw,mtc): the
longest MTC of its wins and of its losses, each with a position, white to move in the material
named (its colour flip's row is black to move's), and the MTC tables' bytes. Exit 1 when a
record has no MTC fields.
"""
import json
import os
import sys


def read_records(directory):
    """The STATS records of directory, one dict a material; raises ValueError naming a bad line."""
    path = os.path.join(directory, "STATS")
    records = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                r["pieces"] = len(r["material"]) - 1  # "KKvM": the pieces and one 'v'
                int(r["positions"]), int(r["wins"]), int(r["draws"]), int(r["losses"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a material record ({exc})") from None
            records.append(r)
    return records


def file_bytes(directory, material, ext):
    """The size of a material's table file; raises FileNotFoundError when it is absent."""
    return os.path.getsize(os.path.join(directory, f"{material}.{ext}"))


def empty_row(pieces):
    """A row with nothing counted yet."""
    return {"pieces": pieces, "materials": 0, "positions": 0, "wins": 0, "draws": 0, "losses": 0,
            "longest": -1, "longest_material": "", "longest_fen": "", "wld_bytes": 0,
            "dtw_bytes": 0, "seconds": 0.0}


def summarize(directory, max_pieces=None):
    """Rows a piece count (dicts) and the total row, from directory's STATS and table files."""
    rows = {}
    for r in read_records(directory):
        if max_pieces is not None and r["pieces"] > max_pieces:
            continue
        row = rows.setdefault(r["pieces"], empty_row(r["pieces"]))
        row["materials"] += 1
        for key in ("positions", "wins", "draws", "losses"):
            row[key] += int(r[key])
        # The first material of the longest win in STATS order (dependency order): stable.
        if int(r["longest_win"]) > row["longest"]:
            row["longest"] = int(r["longest_win"])
            row["longest_material"] = r["material"]
            row["longest_fen"] = r.get("longest_win_fen", "")
        row["wld_bytes"] += file_bytes(directory, r["material"], "wld")
        row["dtw_bytes"] += file_bytes(directory, r["material"], "dtw")
        row["seconds"] += float(r.get("seconds", 0.0))
    ordered = [rows[k] for k in sorted(rows)]
    total = empty_row("all")
    for row in ordered:
        for key in ("materials", "positions", "wins", "draws", "losses", "wld_bytes", "dtw_bytes",
                    "seconds"):
            total[key] += row[key]
        if row["longest"] > total["longest"]:
            for key in ("longest", "longest_material", "longest_fen"):
                total[key] = row[key]
    return ordered, total


def markdown(ordered, total):
    lines = ["| pieces | materials | positions | wins | draws | losses | longest win (plies) "
             "| WLD bytes | DTW bytes | solving |",
             "|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|"]
    for row in ordered + [total]:
        longest = (f"{row['longest']}, {row['longest_material']} `{row['longest_fen']}`"
                   if row["longest"] > 0 else "none")
        lines.append(f"| {row['pieces']} | {row['materials']:,} | {row['positions']:,} "
                     f"| {row['wins']:,} | {row['draws']:,} | {row['losses']:,} | {longest} "
                     f"| {row['wld_bytes']:,} | {row['dtw_bytes']:,} | {row['seconds']:,.0f} s |")
    return "\n".join(lines)


def mtc_markdown(directory, max_pieces=None):
    """One row a material: the longest MTC of its wins and of its losses with their FENs."""
    lines = ["| material | longest MTC of a win (plies) | longest MTC of a loss (plies) "
             "| MTC bytes |", "|---|---|---|--:|"]
    for r in read_records(directory):
        if max_pieces is not None and r["pieces"] > max_pieces:
            continue
        if "longest_mtc_win" not in r:
            raise ValueError(f"{r['material']}: no MTC in its record (built without --metrics mtc)")
        cells = []
        for kind in ("win", "loss"):
            d = int(r[f"longest_mtc_{kind}"])
            cells.append(f"{d}, `{r[f'longest_mtc_{kind}_fen']}`" if d >= 0 else "none")
        lines.append(f"| {r['material']} | {cells[0]} | {cells[1]} "
                     f"| {file_bytes(directory, r['material'], 'mtc'):,} |")
    return "\n".join(lines)


def main(argv):
    args = argv[1:]
    mtc = "--mtc" in args
    if mtc:
        args.remove("--mtc")
    max_pieces = None
    if "--pieces" in args:
        i = args.index("--pieces")
        if i + 1 >= len(args) or not args[i + 1].isdigit():
            print("stats_summary: --pieces needs a number", file=sys.stderr)
            return 2
        max_pieces = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        if mtc:
            print(mtc_markdown(args[0], max_pieces))
            return 0
        ordered, total = summarize(args[0], max_pieces)
    except (OSError, ValueError) as exc:
        print(f"stats_summary: {exc}", file=sys.stderr)
        return 1
    print(markdown(ordered, total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
