"""An independent reader of dtb table files, written from docs/FORMAT.md alone (not from the C
code): it checks every checksum the specification defines, decodes blocks with the zstd command,
undoes packing and tiling, and finds a position's value by the index the specification gives.
The tests beside it hold it against dtbprobe, so a specification that no longer describes the
files fails them.

Positions whose byte is don't-care are answered as FORMAT.md section 10 says: capture positions by
searching their captures (10.1), and the wins of a DTW table that stores its losses only (8.7) by
the one-ply search over their moves, WLD first. The search needs the game's legal moves, which are
the rules of the game and not of the format: Set takes them from a function its caller gives."""
import struct
import subprocess
from math import comb

MASK = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)
BOARD_SIZE = {"international": 10, "english": 8, "russian": 8, "brazilian": 8, "canadian": 12}


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & MASK, 31) * P1) & MASK


def xxh64(data, seed=0):
    """XXH64 of data (FORMAT.md, "Checksums")."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & MASK, (seed + P2) & MASK, seed, (seed - P1) & MASK]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & MASK
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & MASK
    else:
        h = (seed + P5) & MASK
    h = (h + n) & MASK
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * P1 + P4) & MASK
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * P1 & MASK), 23) * P2 + P3) & MASK
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * P5 & MASK), 11) * P1) & MASK
        i += 1
    h ^= h >> 33
    h = h * P2 & MASK
    h ^= h >> 29
    h = h * P3 & MASK
    h ^= h >> 32
    return h


def _u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def _u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def _text(b, o, n):
    return b[o:o + n].split(b"\0")[0].decode()


class Table:
    """One table file, every checksum checked at open."""

    def __init__(self, path):
        f = open(path, "rb").read()
        assert f[:8] == b"\x89DTB\r\n\x1a\n" and f[-8:] == b"DTB-END\n", "magic"
        self.version = _u32(f, 8)
        assert self.version in (2, 3, 4) and _u32(f, 12) == 256 and _u64(f, 192) == len(f), "header"
        self.variant, self.material = _text(f, 16, 24), _text(f, 48, 64)
        self.metric, self.encoding = _u32(f, 44), _u32(f, 116)
        self.index_version, self.positions = _u32(f, 112), _u64(f, 120)
        self.block_positions, self.blocks = _u32(f, 128), _u64(f, 136)
        self.dontcare_kind, self.flags, self.dontcare_count = _u32(f, 144), _u32(f, 148), _u64(f, 152)
        table, dict_off, dict_size, data = _u64(f, 160), _u64(f, 168), _u64(f, 176), _u64(f, 184)
        self.bits, self.tile = _u32(f, 200), _u32(f, 204)
        long_size, long_count = _u64(f, 208), _u64(f, 216)
        assert f[224:248] == bytes(24), "reserved bytes"
        assert (self.version == 3) == (self.encoding == 3) == (long_count > 0) == (long_size > 0)
        assert (self.version == 4) == (self.metric == 3) == (self.encoding == 4), "MTC (8.5)"
        assert self.flags & ~(1 | 4 | 8) == 0 and self.dontcare_kind & ~15 == 0, "known bits (3)"
        self.losses_only = bool(self.flags & 8)  # FORMAT.md 8.7
        assert self.losses_only == bool(self.dontcare_kind & 8), "flag 8 with kind 8 (8.7)"
        assert not self.losses_only or (self.metric == 2 and not self.flags & 5), "8.7: DTW, full set"
        assert table == 256 and dict_off == 256 + 8 * self.blocks
        assert data == dict_off + dict_size + long_size
        assert self.blocks == -(-self.positions // self.block_positions)
        assert xxh64(f[:248] + f[256:data]) == _u64(f, 248), "meta hash"
        assert xxh64(f[:len(f) - 16]) == _u64(f, len(f) - 16), "file hash"
        self.dictionary = f[dict_off:dict_off + dict_size] if dict_size else None
        self.long = {}  # index -> DTW of the long list (FORMAT.md 8.4)
        if long_count:
            raw = subprocess.run(["zstd", "-d", "-c", "-q"], input=f[dict_off + dict_size:data],
                                 capture_output=True, check=True).stdout
            assert len(raw) == 10 * long_count, "long list length"
            idx = struct.unpack_from("<%dQ" % long_count, raw, 0)
            dtw = struct.unpack_from("<%dH" % long_count, raw, 8 * long_count)
            assert all(a < b for a, b in zip(idx, idx[1:])) and idx[-1] < self.positions
            assert all(1 <= d <= 1022 for d in dtw)
            self.long = dict(zip(idx, dtw))
        self.frames, off = [], data
        for b in range(self.blocks):
            size, check = _u32(f, 256 + 8 * b), _u32(f, 256 + 8 * b + 4)
            frame = f[off:off + size]
            assert xxh64(frame, b) & 0xFFFFFFFF == check, "frame check of block %d" % b
            self.frames.append(frame)
            off += size
        assert off == len(f) - 16, "frames fill the data section"
        self._blocks = {}

    def block(self, b):
        """Block b's values in index order."""
        if b not in self._blocks:
            length = min(self.block_positions, self.positions - b * self.block_positions)
            assert self.dictionary is None, "a dictionary needs zstd -D"
            packed = subprocess.run(["zstd", "-d", "-c", "-q"], input=self.frames[b],
                                    capture_output=True, check=True).stdout
            assert len(packed) == (length * self.bits + 7) // 8, "decoded length"
            per, mask = 8 // self.bits, (1 << self.bits) - 1
            stored = [(packed[i // per] >> (i % per * self.bits)) & mask for i in range(length)]
            if self.tile:
                c = self.tile
                r = length // c
                stored = [stored[(i % c) * r + i // c if i < r * c else i] for i in range(length)]
            self._blocks[b] = stored
        return self._blocks[b]

    def value(self, i):
        return self.block(i // self.block_positions)[i % self.block_positions]

    def result(self, i):
        """(wdl, dtw) of position i for the side to move; dtw None in a WLD table, the MTC in an
        MTC table (FORMAT.md 8.5). The stored value: a don't-care position's means nothing, and
        in a losses-only table (8.7) only a loss's is a value (Set.value answers the others)."""
        v = self.value(i)
        if self.encoding == 4:
            return ("draw", None) if v == 0 else ("win", v) if v < 128 else ("loss", v - 128)
        if self.encoding == 2:
            return {0: ("draw", None), 1: ("win", None), 2: ("loss", None)}[v]
        if v == 0:
            return ("draw", None)
        if v in (127, 255) and i in self.long:  # an escape with its distance listed
            return ("win" if v == 127 else "loss", self.long[i])
        return ("win", 2 * v - 1) if v < 128 else ("loss", 2 * (v - 128))


def _rank(squares, universe):
    """Colex rank of the set of squares among the subsets of universe (FORMAT.md, "The index")."""
    u = sorted(universe)
    return sum(comb(sum(1 for x in u if x < s), i) for i, s in enumerate(sorted(squares), 1))


def counts(material):
    """(white kings, white men, black kings, black men) of a name like KKMvK."""
    w, b = material.split("v")
    return w.count("K"), w.count("M"), b.count("K"), b.count("M")


def layout(variant, material):
    """Squares S, half-row H, the groups of white men's bottom-row counts, blocks, block size."""
    n = BOARD_SIZE[variant]
    H = n // 2
    S = n * H
    mid = S - 2 * H
    wk, wm, bk, bm = counts(material)
    groups, blocks = {}, 0
    for j in range(max(0, wm - mid), min(wm, H) + 1):
        gmid, gblack = comb(mid, wm - j), comb(S - H - (wm - j), bm)
        groups[j] = (blocks, gmid, gblack)
        blocks += comb(H, j) * gmid * gblack
    free = S - wm - bm
    return S, H, groups, blocks, comb(free, wk) * comb(free - wk, bk)


def index(variant, material, wmen, wkings, bmen, bkings):
    """The index of a white-to-move position given by its squares (PDN numbers)."""
    S, H, groups, _, block_size = layout(variant, material)
    wk, wm, bk, bm = counts(material)
    bottom, middle = set(range(S - H + 1, S + 1)), set(range(H + 1, S - H + 1))
    low = [s for s in wmen if s in bottom]
    goff, gmid, gblack = groups[len(low)]
    white = (_rank(low, bottom) * gmid + _rank([s for s in wmen if s in middle], middle)) * gblack
    block = goff + white + _rank(bmen, set(range(1, S - H + 1)) - set(wmen))
    empty = set(range(1, S + 1)) - set(wmen) - set(bmen)
    kings = _rank(wkings, empty) * comb(len(empty) - wk, bk) + _rank(bkings, empty - set(wkings))
    return block * block_size + kings


def material_of(wmen, wkings, bmen, bkings):
    """The material name of a white-to-move position: white first, kings before men."""
    return "K" * len(wkings) + "M" * len(wmen) + "v" + "K" * len(bkings) + "M" * len(bmen)


def parse_fen(fen):
    """(white to move, white men, white kings, black men, black kings) of a FEN like
    W:W31,K46:BK5 (PDN numbers, as dtbprobe writes them)."""
    fields = fen.strip().rstrip(".").split(":")
    sets = {"W": ([], []), "B": ([], [])}
    for f in fields[1:]:
        if f[:1] in sets:
            for sq in filter(None, f[1:].split(",")):
                sets[f[0]][sq.startswith("K")].append(int(sq.lstrip("K")))
    return (fields[0] == "W", tuple(sorted(sets["W"][0])), tuple(sorted(sets["W"][1])),
            tuple(sorted(sets["B"][0])), tuple(sorted(sets["B"][1])))


def fen_of(pos):
    white, wm, wk, bm, bk = pos
    side = lambda men, kings: ",".join([str(s) for s in men] + ["K%d" % s for s in kings])
    return "%s:W%s:B%s" % ("W" if white else "B", side(wm, wk), side(bm, bk))


class Set:
    """The tables of one variant in a directory, answering any position as FORMAT.md section 10
    says. moves(fen) gives the legal moves of a position whose side to move has a piece: a list of
    (is a capture, FEN after it)."""

    def __init__(self, folder, variant, moves):
        self.folder, self.variant, self.moves = folder, variant, moves
        self.squares = BOARD_SIZE[variant] ** 2 // 2
        self._tables = {}

    def table(self, material, ext):
        key = (material, ext)
        if key not in self._tables:
            path = "%s/%s/%s.%s" % (self.folder, self.variant, material, ext)
            try:
                self._tables[key] = Table(path)
            except FileNotFoundError:
                self._tables[key] = None
        return self._tables[key]

    def white(self, pos):
        """pos with white to move: itself, or its colour flip (9.6)."""
        white, wm, wk, bm, bk = pos
        if white:
            return pos
        f = lambda squares: tuple(sorted(self.squares + 1 - s for s in squares))
        return (True, f(bm), f(bk), f(wm), f(wk))

    def _moves(self, pos):
        """(the position is a capture position, the positions after its moves)."""
        moves = self.moves(fen_of(pos))
        return any(c for c, _ in moves), [parse_fen(after) for _, after in moves]

    @staticmethod
    def _no_piece(pos):
        white, wm, wk, bm, bk = pos
        return not (wm or wk) if white else not (bm or bk)

    def _locate(self, pos, ext):
        _, wm, wk, bm, bk = self.white(pos)
        material = material_of(wm, wk, bm, bk)
        return self.table(material, ext), index(self.variant, material, wm, wk, bm, bk), material

    def wdl(self, pos):
        """Win, draw or loss for the side to move of pos."""
        if self._no_piece(pos):
            return "loss"
        capture, after = self._moves(pos)
        if capture:  # 10.1: the best of the captures, each successor's value negated
            results = {self.wdl(q) for q in after}
            return "win" if "loss" in results else "draw" if "draw" in results else "loss"
        t, i, material = self._locate(pos, "wld")
        if t is None:  # 10: the .dtw file where there is no .wld, unless it stores losses only
            t, i, material = self._locate(pos, "dtw")
            assert t is not None, "no table for " + material
            assert not t.losses_only, "%s.dtw stores its losses only and needs %s.wld (8.7)" % (
                material, material)
        return t.result(i)[0]

    def value(self, pos):
        """(wdl, DTW) for the side to move of pos: a draw at 0 (8.2)."""
        if self._no_piece(pos):
            return ("loss", 0)
        capture, after = self._moves(pos)
        if capture:  # 10.1, 10: the shortest win, else a draw, else the longest loss
            return best([self.value(q) for q in after])
        t, i, material = self._locate(pos, "dtw")
        if not t.losses_only:
            wdl, dtw = t.result(i)
            return (wdl, dtw or 0)
        # 8.7: the result from the .wld table, a loss from its byte, a win by one ply: 1 + the
        # smallest DTW of a successor lost for the opponent (only those need their DTW)
        w = self.table(material, "wld")
        assert w is not None, "%s.dtw stores its losses only and needs %s.wld (8.7)" % (material,
                                                                                      material)
        wdl = w.result(i)[0]
        if wdl == "draw":
            return ("draw", 0)
        if wdl == "loss":
            stored = t.result(i)
            assert stored[0] == "loss", "8.7: a loss stores its DTW"
            return stored
        return ("win", 1 + min(self.value(q)[1] for q in after if self.wdl(q) == "loss"))


def best(values):
    """The value of a position from its successors' (each for the opponent, to move there), by
    FORMAT.md section 10's rule; a position without a move is a loss in 0."""
    lost = [d for w, d in values if w == "loss"]
    if lost:
        return ("win", 1 + min(lost))
    if any(w == "draw" for w, _ in values):
        return ("draw", 0)
    return ("loss", 1 + max(d for _, d in values)) if values else ("loss", 0)
