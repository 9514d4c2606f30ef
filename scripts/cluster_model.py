#!/usr/bin/env python3
"""Projected time of an international (10x10) or english (8x8) build under MPI (docs/CLUSTER.md,
"Cost model").

Walks every pair of 2..N pieces (at most --side-max a side) level by level as gen/mpi_build.c
solves them: a level's units (one men placement and its colour flip, K king placements each
half) are independent, cut into parts, and every node solves its own contiguous share of them; a
unit with men is never split between nodes, so a level takes at least one unit's time on one
node. Each node keeps the parts it solves; between two levels the nodes exchange the units the
next level reads of each other's shares. When the pair is solved each node gets the blocks its
range of the table files touches from the others (Z bytes a position, over every node's link
at once), compresses its range's blocks, and rank 0 receives the frames (T bytes a position)
and writes them.
A kings-only pair (one unit) is split by position ranges (gen/mpi_lean.c): each node solves its
range, but every node generates the predecessors of every resolved position (a share P of the
work that does not shrink), and receives the others' resolved positions (L bytes a position);
each node then compresses its range's blocks of the pair's tables, and rank 0 receives the
frames (T bytes a position) and writes them.

    level time = max(level positions / (nodes * cores * rate), unit positions / (cores * rate))
                 + level positions * exchange / nodes / bandwidth   (the units the next level
                                                      reads, each node's link its share)
                 + level positions * Z * (nodes - 1) / nodes**2 / bandwidth  (moved to the
                                                      nodes that write them)
                 + level positions * T * (nodes - 1) / nodes / bandwidth  (frames into rank 0)
    kings-only = positions * ((1 - P) / nodes + P) / (cores * unit rate)
                 + positions * (T + L) * (nodes - 1) / nodes / bandwidth
    pair time  = sum of its level times + pair positions / (nodes * cores * write rate)
                 (a pair rank 0 solves alone: it writes alone)

Pairs under 2^20 positions and kingless pairs are solved by rank 0 alone, as the code does. The
inputs are rates measured on one machine (docs/MEASUREMENTS.md, "MPI"); the outputs are
projections.

usage: cluster_model.py PIECES NODES CORES [--variant V] [--side-max S] [--rate R]
                        [--unit-rate U] [--write W] [--bw B] [--exchange X] [--files F]
                        [--lean-redundant P] [--lean-bytes L] [--result-bytes Z]
                        [--frame-bytes T]
  R  positions/s per core solving (default 6.0e6), U the same for units shared by a node's
  threads (kings-only, default 2.25e6), W positions/s per core writing (default 3.5e7), B bytes/s
  of a node's network link (default 1.25e9: 10 Gbit/s), X bytes exchanged between the nodes a
  position of a level, beyond the results (default 0.5, an upper bound of what was measured), F
  how much slower solving is with finished tables read from their files, as every rank reads
  them under MPI (default 1: R as measured in memory; docs/MEASUREMENTS.md, "MPI", has the
  measured factor), P and L of a split kings-only pair (defaults 0.11 and 0.35, measured on
  KKKKvKK), Z bytes a position of values moved between nodes (values and capture bits, 1.125
  raw; default 0.25: they travel compressed, and 2..5's bytes exchanged fell 4.6x when they
  did), T bytes a position of frames into rank 0 (a pair's .dtw and .wld files; default 0.03,
  KKKKvKK's).
"""
import argparse
from math import comb

# squares, rows, playable squares a row
BOARDS = {"international": (50, 10, 5), "english": (32, 8, 4)}
SQUARES, ROWS, PER_ROW = BOARDS["international"]
SHARE_MIN = 1 << 20
SHARED_UNIT_BIG = 1 << 20  # units of this many positions a half are shared by a node's threads


def placements_by_advancement(wm, bm):
    """{advancement: number of men placements}: white men off row 0, black men off row 9,
    advancement = white men's rows from the bottom + black men's rows from the top."""
    # DP over rows: state (white placed, black placed) -> {adv: count}
    state = {(0, 0): {0: 1}}
    for row in range(ROWS):
        new = {}
        for (w, b), polys in state.items():
            for dw in range(0, min(PER_ROW, wm - w) + 1):
                if dw and row == 0:
                    continue
                for db in range(0, min(PER_ROW - dw, bm - b) + 1):
                    if db and row == ROWS - 1:
                        continue
                    ways = comb(PER_ROW, dw) * comb(PER_ROW - dw, db)
                    add = dw * (ROWS - 1 - row) + db * row
                    tgt = new.setdefault((w + dw, b + db), {})
                    for a, n in polys.items():
                        tgt[a + add] = tgt.get(a + add, 0) + n * ways
        state = new
    return state.get((wm, bm), {})


def materials(pieces, side_max):
    for n in range(2, pieces + 1):
        for wk in range(n + 1):
            for wm in range(n - wk + 1):
                for bk in range(n - wk - wm + 1):
                    bm = n - wk - wm - bk
                    if wk + wm and bk + bm and max(wk + wm, bk + bm) <= side_max:
                        yield (wk, wm, bk, bm)


def project(pieces, nodes, cores, rate, unit_rate, write, bw, exchange, files, side_max=99,
            lean_redundant=0.11, lean_bytes=0.35, result_bytes=0.25, frame_bytes=0.03):
    seen, total = set(), dict(positions=0, solve=0.0, net=0.0, write=0.0, alone=0.0)
    worst = (0, None)
    for m in materials(pieces, side_max):
        f = (m[2], m[3], m[0], m[1])
        if f in seen:
            continue
        seen.add(m)
        wk, wm, bk, bm = m
        free = SQUARES - wm - bm
        K = comb(free, wk) * comb(free - wk, bk)
        self_flip = f == m
        levels = placements_by_advancement(wm, bm)
        # units of a level: a block and its flipped block (a self-flip pair's blocks pair up
        # among themselves), 2K positions each
        parts = {a: ((n + 1) // 2, K * n) if self_flip else (n, 2 * K * n) for a, n in levels.items()}
        pair = sum(lp for _, lp in parts.values())
        total["positions"] += pair
        unit = 2 * K
        r_unit = unit_rate if K >= SHARED_UNIT_BIG else rate
        t_pair = 0.0
        writers = 1  # rank 0 writes alone a pair it solves alone
        for units, lp in parts.values():
            if nodes == 1:  # one process: finished tables in memory
                t, t_net = lp / (cores * rate), 0.0
            elif wm + bm == 0 and pair >= SHARE_MIN:  # kings-only, split by ranges
                t = files * lp * ((1 - lean_redundant) / nodes + lean_redundant) / (cores * r_unit)
                t_net = lp * (frame_bytes + lean_bytes) * (nodes - 1) / nodes / bw
                writers = nodes
            elif pair < SHARE_MIN or wk + bk == 0 or wm + bm == 0:  # rank 0 alone
                t, t_net = lp * files / (cores * (rate if wm + bm else r_unit)), 0.0
                total["alone"] += t
            else:
                t = files * max(lp / (nodes * cores * rate), min(unit, lp) / (cores * r_unit))
                t_net = (lp * exchange / nodes
                         + lp * result_bytes * (nodes - 1) / nodes / nodes
                         + lp * frame_bytes * (nodes - 1) / nodes) / bw
                writers = nodes
            total["solve"] += t
            total["net"] += t_net
            t_pair += t + t_net
        t_write = pair / (writers * cores * write)
        total["write"] += t_write
        if t_pair > worst[0]:
            worst = (t_pair, m)
    total["worst"] = worst
    return total


def name(m):
    wk, wm, bk, bm = m
    return "K" * wk + "M" * wm + "v" + "K" * bk + "M" * bm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pieces", type=int)
    ap.add_argument("nodes", type=int)
    ap.add_argument("cores", type=int)
    ap.add_argument("--variant", choices=sorted(BOARDS), default="international")
    ap.add_argument("--side-max", type=int, default=99)
    ap.add_argument("--lean-redundant", type=float, default=0.11)
    ap.add_argument("--lean-bytes", type=float, default=0.35)
    ap.add_argument("--rate", type=float, default=6.0e6)
    ap.add_argument("--unit-rate", type=float, default=2.25e6)
    ap.add_argument("--write", type=float, default=3.5e7)
    ap.add_argument("--bw", type=float, default=1.25e9)
    ap.add_argument("--exchange", type=float, default=0.5)
    ap.add_argument("--files", type=float, default=1.0)
    ap.add_argument("--result-bytes", type=float, default=0.25)
    ap.add_argument("--frame-bytes", type=float, default=0.03)
    a = ap.parse_args()
    global SQUARES, ROWS, PER_ROW
    SQUARES, ROWS, PER_ROW = BOARDS[a.variant]
    t = project(a.pieces, a.nodes, a.cores, a.rate, a.unit_rate, a.write, a.bw, a.exchange,
                a.files, a.side_max, a.lean_redundant, a.lean_bytes, a.result_bytes,
                a.frame_bytes)
    hours = (t["solve"] + t["net"] + t["write"]) / 3600
    ideal = t["positions"] / (a.nodes * a.cores * a.rate) / 3600
    sides = f" (at most {a.side_max} a side)" if a.side_max < 99 else ""
    print(f"{a.variant} 2..{a.pieces}{sides} on {a.nodes} node(s) x {a.cores} cores: {t['positions']:.3g} positions, "
          f"projected {hours:.1f} h (solving {t['solve'] / 3600:.1f} h, network "
          f"{t['net'] / 3600:.1f} h, writing {t['write'] / 3600:.1f} h); perfect "
          f"scaling of the solving would be {ideal:.1f} h; longest pair "
          f"{name(t['worst'][1])} {t['worst'][0] / 3600:.2f} h")


if __name__ == "__main__":
    main()
