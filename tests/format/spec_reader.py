"""An independent reader of dtb table files, written from docs/FORMAT.md alone (not from the C
code): it checks every checksum the specification defines, decodes blocks with the zstd command,
undoes packing and tiling, and finds a position's value by the index the specification gives.
The tests beside it hold it against dtbprobe, so a specification that no longer describes the
files fails them."""
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
        MTC table (FORMAT.md 8.5)."""
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
