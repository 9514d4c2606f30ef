/* Perfect index: ranks of square sets in the combinatorial number system.
 *
 * A k-subset {c_1 < ... < c_k} of a set of n "free" squares (c = rank of the square among the
 * free ones) has rank sum_i C(c_i, i), a bijection onto [0, C(n, k)). The rank of a square
 * among the free ones is popcount(free & below(square)); the inverse picks, from the top, the
 * largest c with C(c, i) <= r (a table guesses it, a short scan corrects the guess) and maps c
 * back to a square with a select. On boards of up to 64 squares the last two c are one read of
 * a table of pairs, and one pdep (a shift for a run of squares) maps them all (unrank_numbers).
 *
 * Men placements (blocks). White men may stand on rows 1..size-1, black men on rows 0..size-2.
 * The white men on the bottom row (black's promotion row) take no square from black, the others
 * take one each, so the number of black placements depends on j = white men on the bottom row.
 * Blocks are therefore grouped by j (increasing); inside group j a block is
 *   (rank of the bottom-row white men among the bottom row x C(middle squares, wm - j)
 *    + rank of the other white men among the middle rows) x C(black squares left, bm)
 *   + rank of the black men among rows 0..size-2 minus the white men,
 * which is dense: every group holds exactly its placements, and the group offsets make the
 * whole gap-free. Kings: white kings among the squares the men leave free, then black kings among
 * the rest; kings rank = white rank x C(free - wk, bk) + black rank.
 *
 * So a block number depends on the men only (a king move stays in the block, a man move leaves
 * it), every block has C(free, wk) x C(free - wk, bk) positions, and the index of a position is
 * a mixed-radix number whose digits are ranks; see index_pos_t for how they are read back. */
#include "index.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Pieces of one kind we can rank (a side starts with at most 30). */
#define KMAX 30
/* log2 of the entries of a guess table. */
#define GUESS_BITS 12
#define GUESS_SIZE (1 << GUESS_BITS)
/* Columns of the binomial table: n = 0..DTB_MAX_SQUARES + 1, padded to a power of two so that a
 * row is a shift away. */
#define BINOM_COLS 128

typedef struct index_impl index_impl;

/* Division by an invariant d as a multiply and shifts (Granlund & Montgomery 1994, fig. 4.1):
 * exact for every 64-bit numerator, and about half the latency of a 64-bit div. */
typedef struct divider {
    uint64_t d, m;
    int sh1, sh2;
} divider;

static divider divider_make(uint64_t d)
{
    divider v = {d, 0, 0, 0};
    if (d == 0)
        return v; /* never divided by: an empty group */
    const int l = d > 1 ? 64 - __builtin_clzll(d - 1) : 0; /* ceil(log2 d) */
    const uint64_t pow_minus_d = (l == 64 ? 0 : (1ull << l)) - d; /* 2^l - d, mod 2^64 */
    v.m = (uint64_t)((((unsigned __int128)pow_minus_d) << 64) / d) + 1;
    v.sh1 = l < 1 ? l : 1;
    v.sh2 = l > 1 ? l - 1 : 0;
    return v;
}

static inline uint64_t divide(uint64_t n, const divider *v)
{
    const uint64_t t = (uint64_t)(((unsigned __int128)v->m * n) >> 64);
    return (t + ((n - t) >> v->sh1)) >> v->sh2;
}

/* Division of n < 2^62 by an invariant d >= 1: floor(n / d) = mulhi(m, 2n) >> s with
 * s = floor(log2 d) and m = ceil(2^(63 + s) / d) < 2^64 (m d = 2^(63 + s) + e, 0 <= e < d, so
 * 2n m / 2^(64 + s) = n / d + e n / (d 2^(63 + s)) and e n < 2^(s + 1) 2^62 keeps the floor).
 * One multiply and one shift, where divider takes four more steps; the caller doubles n once
 * for all the divisions of one number. */
typedef struct recip62 {
    uint64_t m;
    int s;
} recip62;

static recip62 recip62_make(uint64_t d)
{
    recip62 v = {0, 0};
    if (d == 0)
        return v; /* never divided by: an empty group */
    v.s = 63 - __builtin_clzll(d);
    v.m = (uint64_t)((((unsigned __int128)1 << (63 + v.s)) + d - 1) / d);
    return v;
}

/* floor(n / d) for n2 = 2n, n < 2^62, given recip62_make(d)'s m and s. */
static inline uint64_t divide62(uint64_t n2, uint64_t m, int s)
{
    return (uint64_t)(((unsigned __int128)m * n2) >> 64) >> s;
}

/* Groups of white men on the bottom row that men_narrow handles: rows of up to 5 squares (every
 * board of up to 64 squares that a variant has; wider rows keep the templates below). */
#define NARROW_GROUPS 6

/* What men_narrow needs of group j (white men on the bottom row), in one cache line. */
typedef struct unindex_group {
    uint64_t first2;          /* 2 x first index of the group (gfirst) */
    uint64_t goff;            /* its first block */
    uint64_t white_m, bot_m;  /* recip62 of the indexes per white, per bottom placement */
    uint64_t black_n, mid_n;  /* black placements per white one, middle placements */
    const uint64_t *mid_set;  /* small_set or pair_set: the last numbers of wm - j men */
    uint16_t bottom;          /* first bottom_set entry of j men */
    uint8_t white_s, bot_s;   /* the recip62 shifts */
    uint8_t kmid;             /* middle men: wm - j */
} unindex_group;

struct dtb_index {
    /* What dtb_index_of reads (a probe's hot path: every probe reads the index of another
     * material) first, in the first two cache lines of a 64-byte aligned block; with j white
     * men on the bottom row, goff[j] is in them too for j < 4. */
    const index_impl *impl;       /* code for this board width and this CPU */
    int wm, bm, wk, bk;
    int bottom_first;             /* first square of the bottom row */
    uint64_t *wtab;               /* [wm - j][man][square], see white_part */
    uint64_t block_positions;     /* block_size.d */
    uint64_t nbk_count;           /* nbk.d */
    dtb_bb all, black_men_sq;
    uint64_t goff[DTB_MAX_SQUARES + 2];   /* first block of group j; goff[jhi + 1] = blocks */
    /* The rest. */
    const dtb_board *b;
    dtb_material m;
    int middle_first;             /* first square of row 1 */
    uint64_t size, blocks;
    divider block_size;
    divider nbk;                  /* black king placements per white king placement */
    int jlo, jhi;                 /* range of white men on the bottom row */
    divider gblack[DTB_MAX_SQUARES + 1];  /* black placements per white placement, group j */
    divider gmid[DTB_MAX_SQUARES + 1];    /* placements of the middle white men, group j */
    uint64_t gfirst[DTB_MAX_SQUARES + 2]; /* first index of group j: goff[j] x block size */
    divider gwhite_i[DTB_MAX_SQUARES + 1]; /* indexes per white placement: gblack x block size */
    divider gbot_i[DTB_MAX_SQUARES + 1];  /* indexes per bottom placement: gmid x gwhite_i */
    uint64_t nwk;                         /* white king placements: C(free, wk) */
    uint64_t binom[KMAX + 1][BINOM_COLS]; /* C(n, k) as binom[k][n], saturating */
    uint8_t gshift[KMAX + 1];             /* guess table index = r >> gshift[i] */
    uint8_t guess[KMAX + 1][GUESS_SIZE];  /* rows 1..max pieces of a kind filled */
    /* Boards of up to 64 squares, see unrank_narrow: the subsets of at most two numbers by
     * rank as sets of numbers (bit c = the c-th square of the set they are taken from):
     * small_set[0] = {}, small_set[1 + c] = {c}, pair_set[r] = the pair of rank r. */
    uint64_t small_set[1 + 64];
    uint64_t pair_set[64 * 63 / 2];
    /* men_narrow's constants (plan_narrow): per group j, and the j-subsets of the bottom row as
     * squares by rank. */
    recip62 block_r, nbk_r;
    uint64_t ufirst[NARROW_GROUPS - 1];   /* gfirst[jlo + 1 ..] then UINT64_MAX */
    _Alignas(64) unindex_group ugroup[NARROW_GROUPS];
    uint64_t bottom_set[1 << (NARROW_GROUPS - 1)];
};

/* ---- Code variants.
 * The work is popcounts, selects and table reads. Compiled for the baseline ISA, popcount is a
 * library call and select a loop, several times slower than the popcnt and pdep instructions;
 * so each operation is compiled twice, once for the baseline and once for popcnt+BMI2, and
 * dtb_index_create picks by the running CPU. Boards of up to 64 squares (all but 12x12) get
 * 64-bit code: 128-bit arithmetic costs twice. The templates below are always inlined into each
 * variant with `wide` and `fast` constant. Ranking loops run a count fixed by the material and
 * read tables instead of branching on the position: the generator ranks successors in no
 * predictable order, and a mispredicted branch costs as much as a whole rank. Unranking is a
 * chain of dependent steps; what shortens the chain (parallel divisions, guess tables) matters
 * there more than branches. */

#define ALWAYS_INLINE static inline __attribute__((always_inline))

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_FAST 1
#define FAST_TARGET __attribute__((target("popcnt,bmi,bmi2")))
#include <immintrin.h>
/* Inlined only into FAST_TARGET code; the baseline variants never call it. */
FAST_TARGET static inline int select64_bmi2(uint64_t x, int c)
{
    return __builtin_ctzll(_pdep_u64(1ull << c, x));
}
FAST_TARGET static inline uint64_t pdep64_bmi2(uint64_t x, uint64_t mask)
{
    return _pdep_u64(x, mask);
}
#else
#define HAVE_FAST 0
#define FAST_TARGET
#endif

/* Index of the c-th (0-based) set bit of x, which has more than c bits. */
ALWAYS_INLINE int select64(uint64_t x, int c, const bool fast)
{
#if HAVE_FAST
    if (fast)
        return select64_bmi2(x, c);
#endif
    (void)fast;
    int base = 0;
    for (int w = 32; w >= 1; w >>= 1) {
        const int n = __builtin_popcountll(x & ((1ull << w) - 1));
        if (c >= n) {
            c -= n;
            x >>= w;
            base += w;
        }
    }
    return base;
}

ALWAYS_INLINE int select_t(dtb_bb x, int c, const bool wide, const bool fast)
{
    const uint64_t lo = (uint64_t)x;
    if (!wide)
        return select64(lo, c, fast);
    const int n = __builtin_popcountll(lo);
    return c < n ? select64(lo, c, fast) : 64 + select64((uint64_t)(x >> 64), c - n, fast);
}

ALWAYS_INLINE int count_t(dtb_bb x, const bool wide)
{
    return wide ? dtb_bb_count(x) : __builtin_popcountll((uint64_t)x);
}

/* Removes the lowest square of *s (not empty) and returns it. */
ALWAYS_INLINE int pop_t(dtb_bb *s, const bool wide)
{
    if (wide)
        return dtb_bb_pop(s);
    const uint64_t x = (uint64_t)*s;
    *s = x & (x - 1);
    return __builtin_ctzll(x);
}

ALWAYS_INLINE dtb_bb bit_t(int sq, const bool wide)
{
    return wide ? dtb_bb_bit(sq) : (dtb_bb)(1ull << sq);
}

/* Number of squares of x below square sq. */
ALWAYS_INLINE int below_t(dtb_bb x, int sq, const bool wide)
{
    if (wide)
        return dtb_bb_count(x & (dtb_bb_bit(sq) - 1));
    return __builtin_popcountll((uint64_t)x & ((1ull << sq) - 1));
}

/* C(n, k) for n < 64 and k <= NARROW_KMAX, computed by the compiler (each step of
 * C(n, k) = C(n, k - 1) (n - k + 1) / k is exact; below k a zero stays zero), for ranking on
 * boards of up to 64 squares. One table for every index rather than a row of each index's own
 * table: a probe ranks sets of many materials, and their tables' rows took many cache lines. */
#define NARROW_KMAX DTB_INDEX_KMAX64
#define NB0(n) (0u * (n) + 1ull)
#define NB1(n) ((uint64_t)(n))
#define NB2(n) (NB1(n) * ((n) - 1u) / 2u)
#define NB3(n) (NB2(n) * ((n) - 2u) / 3u)
#define NB4(n) (NB3(n) * ((n) - 3u) / 4u)
#define NB5(n) (NB4(n) * ((n) - 4u) / 5u)
#define NB6(n) (NB5(n) * ((n) - 5u) / 6u)
#define NB7(n) (NB6(n) * ((n) - 6u) / 7u)
#define NB8(n) (NB7(n) * ((n) - 7u) / 8u)
#define NB9(n) (NB8(n) * ((n) - 8u) / 9u)
#define NB10(n) (NB9(n) * ((n) - 9u) / 10u)
#define NB11(n) (NB10(n) * ((n) - 10u) / 11u)
#define NB12(n) (NB11(n) * ((n) - 11u) / 12u)
#define NB13(n) (NB12(n) * ((n) - 12u) / 13u)
#define NB14(n) (NB13(n) * ((n) - 13u) / 14u)
#define NB15(n) (NB14(n) * ((n) - 14u) / 15u)
#define NB16(n) (NB15(n) * ((n) - 15u) / 16u)
#define NB17(n) (NB16(n) * ((n) - 16u) / 17u)
#define NB18(n) (NB17(n) * ((n) - 17u) / 18u)
#define NB19(n) (NB18(n) * ((n) - 18u) / 19u)
#define NB20(n) (NB19(n) * ((n) - 19u) / 20u)
#define NB_ROW8(f, n) f(n), f(n + 1), f(n + 2), f(n + 3), f(n + 4), f(n + 5), f(n + 6), f(n + 7)
#define NB_ROW(f)                                                                              \
    {NB_ROW8(f, 0u), NB_ROW8(f, 8u), NB_ROW8(f, 16u), NB_ROW8(f, 24u), NB_ROW8(f, 32u),         \
     NB_ROW8(f, 40u), NB_ROW8(f, 48u), NB_ROW8(f, 56u)}
const uint64_t dtb_index_binom64[NARROW_KMAX + 1][64] = {
    NB_ROW(NB0), NB_ROW(NB1), NB_ROW(NB2), NB_ROW(NB3), NB_ROW(NB4), NB_ROW(NB5),
    NB_ROW(NB6), NB_ROW(NB7), NB_ROW(NB8), NB_ROW(NB9), NB_ROW(NB10), NB_ROW(NB11),
    NB_ROW(NB12), NB_ROW(NB13), NB_ROW(NB14), NB_ROW(NB15), NB_ROW(NB16), NB_ROW(NB17),
    NB_ROW(NB18), NB_ROW(NB19), NB_ROW(NB20)};

/* Rank of s, k squares of empty, among the k-subsets of empty. */
ALWAYS_INLINE uint64_t rank_set(const dtb_index *ix, dtb_bb s, int k, dtb_bb empty,
                                const bool wide)
{
    uint64_t r = 0;
    if (!wide) { /* counts below a square of at most 64 */
        assert(k <= NARROW_KMAX);
        const uint64_t *row = dtb_index_binom64[1];
        for (int i = 0; i < k; i++, row += 64)
            r += row[below_t(empty, pop_t(&s, wide), wide)];
        return r;
    }
    const uint64_t *row = ix->binom[1];
    for (int i = 0; i < k; i++, row += BINOM_COLS)
        r += row[below_t(empty, pop_t(&s, wide), wide)];
    return r;
}

/* The k-subset of rank r of the numbers 0, 1, ... as a set of numbers (bit c = number c), on
 * boards of up to 64 squares: the elements above the second from the top as in unrank_t, the
 * last two (all of them for the few pieces of a kind of an endgame) with one read of
 * small_set or pair_set, no branch. A pdep then puts bit c on the c-th square of a set, a
 * shift on square first + c: one step for all the elements. */
ALWAYS_INLINE uint64_t unrank_numbers(const dtb_index *ix, int k, uint64_t r)
{
    if (k < 2)
        return ix->small_set[k + (int)r];
    uint64_t c_set = 0;
    for (int i = k; i >= 3; i--) {
        const uint64_t *row = ix->binom[i];
        int c = ix->guess[i][r >> ix->gshift[i]];
        while (row[c + 1] <= r)
            c++;
        r -= row[c];
        c_set |= 1ull << c;
    }
    return c_set | ix->pair_set[r];
}

ALWAYS_INLINE uint64_t unrank_narrow(const dtb_index *ix, int k, uint64_t r, uint64_t empty,
                                     int first, const bool by_select, const bool fast)
{
    const uint64_t c_set = unrank_numbers(ix, k, r);
#if HAVE_FAST
    if (by_select && fast)
        return pdep64_bmi2(c_set, empty);
#endif
    assert(!by_select);
    (void)empty, (void)fast;
    return c_set << first;
}

/* The k-subset with rank r: of the squares of empty (by_select), or of first, first + 1, ...
 * From the top, each element is the largest c with C(c, i) <= r: the guess table gives a lower
 * bound, rarely more than one short; for i = 1, c = r. */
ALWAYS_INLINE dtb_bb unrank_t(const dtb_index *ix, int k, uint64_t r, dtb_bb empty, int first,
                              const bool by_select, const bool wide, const bool fast)
{
    if (!wide && (fast || !by_select))
        return unrank_narrow(ix, k, r, (uint64_t)empty, first, by_select, fast);
    dtb_bb s = 0;
    const uint64_t *row = ix->binom[k];
    const uint8_t *guess = ix->guess[k];
    const uint8_t *shift = &ix->gshift[k];
    for (int i = k; i >= 2; i--, row -= BINOM_COLS, guess -= GUESS_SIZE, shift--) {
        int c = guess[r >> *shift];
        while (row[c + 1] <= r)
            c++;
        r -= row[c];
        s |= bit_t(by_select ? select_t(empty, c, wide, fast) : first + c, wide);
    }
    if (k >= 1)
        s |= bit_t(by_select ? select_t(empty, (int)r, wide, fast) : first + (int)r, wide);
    return s;
}

ALWAYS_INLINE dtb_bb unrank_set(const dtb_index *ix, int k, uint64_t r, dtb_bb empty,
                                const bool wide, const bool fast)
{
    return unrank_t(ix, k, r, empty, 0, true, wide, fast);
}

ALWAYS_INLINE dtb_bb unrank_range(const dtb_index *ix, int k, uint64_t r, int first,
                                  const bool wide)
{
    return unrank_t(ix, k, r, 0, first, false, wide, false);
}

/* White men: group j (men on the bottom row) and their part of the block number. The middle
 * squares all come before the bottom row, so of the white men in increasing order the first
 * wm - j are middle men (ranked among the middle squares) and the last j bottom men (ranked
 * among the bottom row). wtab holds, per wm - j, per man and per square, that man's term of
 * (bottom rank x C(middle, wm - j) + middle rank) x black placements: one table read per man,
 * no branch on the position. */
ALWAYS_INLINE uint64_t white_part(const dtb_index *ix, dtb_bb white_men, int *group,
                                  const bool wide)
{
    const int j = count_t(white_men >> ix->bottom_first, wide);
    assert(j >= ix->jlo && j <= ix->jhi);
    const uint64_t *t = ix->wtab + (size_t)(ix->wm - j) * (size_t)ix->wm * DTB_MAX_SQUARES;
    uint64_t r = 0;
    for (int i = 0; i < ix->wm; i++, t += DTB_MAX_SQUARES)
        r += t[pop_t(&white_men, wide)];
    *group = j;
    return r;
}

/* Inverse of the white rank within group j: the j bottom men, then the middle ones. */
ALWAYS_INLINE dtb_bb white_unrank(const dtb_index *ix, int j, uint64_t white, const bool wide)
{
    const uint64_t q = divide(white, &ix->gmid[j]);
    return unrank_range(ix, j, q, ix->bottom_first, wide) |
           unrank_range(ix, ix->wm - j, white - q * ix->gmid[j].d, ix->middle_first, wide);
}

ALWAYS_INLINE uint64_t block_of_t(const dtb_index *ix, dtb_bb white_men, dtb_bb black_men,
                                  const bool wide)
{
    int j;
    const uint64_t white = white_part(ix, white_men, &j, wide);
    return ix->goff[j] + white + rank_set(ix, black_men, ix->bm, ix->black_men_sq & ~white_men, wide);
}

/* The branches on the material's piece counts below are the same on every call: they skip
 * empty stages at no misprediction cost. */
ALWAYS_INLINE void block_men_t(const dtb_index *ix, uint64_t blk, dtb_bb *white_men,
                               dtb_bb *black_men, const bool wide, const bool fast)
{
    assert(blk < ix->blocks);
    dtb_bb w = 0;
    uint64_t black = blk;
    if (ix->wm > 0) {
        int j = ix->jlo;
        for (int g = ix->jlo + 1; g <= ix->jhi; g++)
            j += blk >= ix->goff[g];
        const uint64_t t = blk - ix->goff[j];
        const uint64_t white = divide(t, &ix->gblack[j]);
        black = t - white * ix->gblack[j].d;
        w = white_unrank(ix, j, white, wide);
    }
    *white_men = w;
    *black_men = ix->bm > 0 ? unrank_set(ix, ix->bm, black, ix->black_men_sq & ~w, wide, fast) : 0;
}

ALWAYS_INLINE void kings_at_t(const dtb_index *ix, dtb_bb men, uint64_t kr, dtb_bb *white_kings,
                              dtb_bb *black_kings, const bool wide, const bool fast)
{
    assert(kr < ix->block_size.d);
    const dtb_bb empty = ix->all & ~men;
    dtb_bb wk = 0, bk = 0;
    if (ix->bk == 0) {
        wk = unrank_set(ix, ix->wk, kr, empty, wide, fast);
    } else if (ix->wk == 0) {
        bk = unrank_set(ix, ix->bk, kr, empty, wide, fast);
    } else {
        const uint64_t rw = divide(kr, &ix->nbk), rb = kr - rw * ix->nbk.d;
        wk = unrank_set(ix, ix->wk, rw, empty, wide, fast);
        bk = unrank_set(ix, ix->bk, rb, empty & ~wk, wide, fast);
    }
    *white_kings = wk;
    *black_kings = bk;
}

ALWAYS_INLINE uint64_t kings_of_t(const dtb_index *ix, dtb_bb men, dtb_bb white_kings,
                                  dtb_bb black_kings, const bool wide)
{
    const dtb_bb empty = ix->all & ~men;
    return rank_set(ix, white_kings, ix->wk, empty, wide) * ix->nbk_count +
           rank_set(ix, black_kings, ix->bk, empty & ~white_kings, wide);
}

/* C(c, k) from the table of this board width. */
ALWAYS_INLINE uint64_t binom_t(const dtb_index *ix, int k, int c, const bool wide)
{
    return wide ? ix->binom[k][c] : dtb_index_binom64[k][c];
}

/* kings_of_t of the placements (rest | square x[i], black_kings) for i < n: white placements
 * that differ in one king (the kings a retrograde king move leaves). The white rank is the sum,
 * over the white kings in square order, of C(c, j) (c: the king's number among the free
 * squares, j: its place in that order, from 1). Moving one king changes its own term and the
 * places of the kings above it, so the rest's terms are summed once: A[m] over places 1..m as
 * they are, B[m] over the places above m each moved up by one. Then a white rank is
 * A[m] + C(c_x, m + 1) + B[m], m the rest's kings below x: two popcounts and three loads
 * instead of a sum over every white king (the black kings are ranked as usual). */
ALWAYS_INLINE void kings_of_moved_t(const dtb_index *ix, dtb_bb men, dtb_bb rest,
                                    dtb_bb black_kings, int n, const int *x, uint64_t *out,
                                    const bool wide)
{
    const dtb_bb empty = ix->all & ~men;
    const int k = ix->wk - 1; /* kings in rest */
    assert(k >= 0 && count_t(rest, wide) == k);
    uint64_t a[KMAX + 1], b[KMAX + 1];
    int c[KMAX];
    dtb_bb s = rest;
    for (int j = 0; j < k; j++)
        c[j] = below_t(empty, pop_t(&s, wide), wide);
    a[0] = 0;
    for (int m = 1; m <= k; m++)
        a[m] = a[m - 1] + binom_t(ix, m, c[m - 1], wide);
    b[k] = 0;
    for (int m = k - 1; m >= 0; m--)
        b[m] = b[m + 1] + binom_t(ix, m + 2, c[m], wide);
    for (int i = 0; i < n; i++) {
        const dtb_bb below = bit_t(x[i], wide) - 1;
        const int m = count_t(rest & below, wide);
        const uint64_t rw = a[m] + binom_t(ix, m + 1, count_t(empty & below, wide), wide) + b[m];
        const uint64_t rb =
            ix->bk ? rank_set(ix, black_kings, ix->bk, empty & ~(rest | bit_t(x[i], wide)), wide) : 0;
        out[i] = rw * ix->nbk_count + rb;
    }
}

ALWAYS_INLINE uint64_t index_of_t(const dtb_index *ix, const dtb_pos *p, const bool wide)
{
    const dtb_bb wmen = p->men[DTB_WHITE], bmen = p->men[DTB_BLACK];
    return block_of_t(ix, wmen, bmen, wide) * ix->block_positions +
           kings_of_t(ix, wmen | bmen, p->kings[DTB_WHITE], p->kings[DTB_BLACK], wide);
}

#if HAVE_FAST
/* The numbers of the middle men of group g (unrank_numbers of g->kmid men), with the same
 * steps for every group of the material: a group of fewer middle men than the material's most
 * takes the top steps too, on rank 0 (c = e - 1, C(c, e) = 0: r is left as it is) and with the
 * number masked off. The group of a random index has no pattern to predict (with three white
 * men one index in three is outside group 0), and a loop over each group's own count was
 * mispredicted about that often. */
ALWAYS_INLINE uint64_t unrank_middle(const dtb_index *ix, const unindex_group *g, uint64_t r)
{
    uint64_t c_set = 0;
    for (int e = ix->wm - ix->jlo; e >= 3; e--) {
        const uint64_t keep = -(uint64_t)(e <= g->kmid), rk = r & keep;
        const uint64_t *row = ix->binom[e];
        int c = ix->guess[e][rk >> ix->gshift[e]];
        while (row[c + 1] <= rk)
            c++;
        r -= row[c];
        c_set |= (1ull << c) & keep;
    }
    return c_set | g->mid_set[r];
}

/* The men of index i (of block blk) on boards of up to 64 squares with BMI2 (plan_narrow): the
 * digits of index_pos_t, read with recip62 instead of divider, and with no branch on the
 * position but the rare corrections of the guesses. The group's constants are in one line; the
 * white men on the bottom row are one read of bottom_set; each colour's set is a pdep of its
 * numbers. Branches on the material are the same on every call. */
ALWAYS_INLINE void men_narrow(const dtb_index *ix, uint64_t i, uint64_t blk, uint64_t *white_men,
                              uint64_t *black_men)
{
    uint64_t w = 0, black = blk;
    if (ix->wm > 0) {
        /* group: first[] holds the groups' first indexes after the first group, then 2^64 - 1 */
        const uint64_t *first = ix->ufirst;
        int j = ix->jlo + (i >= first[0]) + (i >= first[1]) + (i >= first[2]);
        if (ix->jhi - ix->jlo > 3) /* four or more white men */
            j += (i >= first[3]) + (i >= first[4]);
        const unindex_group *g = &ix->ugroup[j];
        const uint64_t t2 = (i << 1) - g->first2;
        const uint64_t white = divide62(t2, g->white_m, g->white_s);
        const uint64_t rbot = divide62(t2, g->bot_m, g->bot_s);
        black = blk - g->goff - white * g->black_n;
        w = ix->bottom_set[g->bottom + rbot] |
            unrank_middle(ix, g, white - rbot * g->mid_n) << ix->middle_first;
    }
    *white_men = w;
    *black_men = pdep64_bmi2(unrank_numbers(ix, ix->bm, black), (uint64_t)ix->black_men_sq & ~w);
}

/* The kings of white rank rw and black rank rb among empty, as kings_at_t. */
ALWAYS_INLINE void kings_narrow(const dtb_index *ix, uint64_t empty, uint64_t rw, uint64_t rb,
                                uint64_t *white_kings, uint64_t *black_kings)
{
    const uint64_t wk = pdep64_bmi2(unrank_numbers(ix, ix->wk, rw), empty);
    *white_kings = wk;
    *black_kings = pdep64_bmi2(unrank_numbers(ix, ix->bk, rb), empty & ~wk);
}

FAST_TARGET static void index_pos_narrow(const dtb_index *ix, uint64_t i, dtb_pos *p)
{
    assert(i < ix->size);
    const uint64_t blk = divide62(i << 1, ix->block_r.m, ix->block_r.s); /* no kings: i */
    uint64_t w, b, wk = 0, bk = 0;
    men_narrow(ix, i, blk, &w, &b);
    if (ix->wk + ix->bk > 0) {
        /* i = (blk * C(free, wk) + rw) * nbk + rb; with no black king nbk = 1 */
        const uint64_t q = divide62(i << 1, ix->nbk_r.m, ix->nbk_r.s);
        kings_narrow(ix, (uint64_t)ix->all & ~(w | b), q - blk * ix->nwk, i - q * ix->nbk_count,
                     &wk, &bk);
    }
    p->men[DTB_WHITE] = w;
    p->men[DTB_BLACK] = b;
    p->kings[DTB_WHITE] = wk;
    p->kings[DTB_BLACK] = bk;
    p->side = DTB_WHITE;
}

/* block_men_t by men_narrow of the block's first index. */
FAST_TARGET static void block_men_narrow(const dtb_index *ix, uint64_t blk, dtb_bb *white_men,
                                         dtb_bb *black_men)
{
    assert(blk < ix->blocks);
    uint64_t w, b;
    men_narrow(ix, blk * ix->block_positions, blk, &w, &b);
    *white_men = w;
    *black_men = b;
}

FAST_TARGET static void kings_at_narrow(const dtb_index *ix, dtb_bb men, uint64_t kr,
                                        dtb_bb *white_kings, dtb_bb *black_kings)
{
    assert(kr < ix->block_positions);
    if (ix->wk + ix->bk == 0) {
        *white_kings = *black_kings = 0;
        return;
    }
    const uint64_t rw = divide62(kr << 1, ix->nbk_r.m, ix->nbk_r.s);
    uint64_t wk, bk;
    kings_narrow(ix, (uint64_t)(ix->all & ~men), rw, kr - rw * ix->nbk_count, &wk, &bk);
    *white_kings = wk;
    *black_kings = bk;
}
#endif

/* All the mixed-radix digits of i are found by divisions of i itself, side by side, rather
 * than one after the other (block, then group offset, then white rank...): the divisions are the
 * slowest steps, and this way only one of them stands before the unranking. */
ALWAYS_INLINE void index_pos_t(const dtb_index *ix, uint64_t i, dtb_pos *p, const bool wide,
                               const bool fast)
{
    assert(i < ix->size);
    const bool kings = ix->wk + ix->bk > 0;
    const uint64_t blk = !kings ? i : ix->blocks > 1 ? divide(i, &ix->block_size) : 0;
    dtb_bb w = 0;
    uint64_t black = blk;
    if (ix->wm > 0) {
        int j = ix->jlo;
        for (int g = ix->jlo + 1; g <= ix->jhi; g++)
            j += i >= ix->gfirst[g];
        const uint64_t t = i - ix->gfirst[j];
        const uint64_t white = divide(t, &ix->gwhite_i[j]), rbot = divide(t, &ix->gbot_i[j]);
        black = blk - ix->goff[j] - white * ix->gblack[j].d;
        w = unrank_range(ix, j, rbot, ix->bottom_first, wide) |
            unrank_range(ix, ix->wm - j, white - rbot * ix->gmid[j].d, ix->middle_first, wide);
    }
    const dtb_bb b = ix->bm > 0 ? unrank_set(ix, ix->bm, black, ix->black_men_sq & ~w, wide, fast)
                                : 0;
    p->men[DTB_WHITE] = w;
    p->men[DTB_BLACK] = b;
    dtb_bb wk = 0, bk = 0;
    if (kings) {
        const dtb_bb empty = ix->all & ~(w | b);
        if (ix->bk == 0) {
            wk = unrank_set(ix, ix->wk, i - blk * ix->block_size.d, empty, wide, fast);
        } else {
            /* i = (blk * C(free, wk) + rw) * nbk + rb */
            const uint64_t q = divide(i, &ix->nbk);
            const uint64_t rw = q - blk * ix->nwk, rb = i - q * ix->nbk.d;
            wk = unrank_set(ix, ix->wk, rw, empty, wide, fast);
            bk = unrank_set(ix, ix->bk, rb, empty & ~wk, wide, fast);
        }
    }
    p->kings[DTB_WHITE] = wk;
    p->kings[DTB_BLACK] = bk;
    p->side = DTB_WHITE;
}

struct index_impl {
    uint64_t (*block_of)(const dtb_index *, dtb_bb, dtb_bb);
    void (*block_men)(const dtb_index *, uint64_t, dtb_bb *, dtb_bb *);
    uint64_t (*kings_of)(const dtb_index *, dtb_bb, dtb_bb, dtb_bb);
    void (*kings_of_moved)(const dtb_index *, dtb_bb, dtb_bb, dtb_bb, int, const int *, uint64_t *);
    void (*kings_at)(const dtb_index *, dtb_bb, uint64_t, dtb_bb *, dtb_bb *);
    uint64_t (*index_of)(const dtb_index *, const dtb_pos *);
    void (*index_pos)(const dtb_index *, uint64_t, dtb_pos *);
};

#define INDEX_VARIANT(NAME, ATTR, WIDE, FAST)                                                    \
    ATTR static uint64_t NAME##_block_of(const dtb_index *ix, dtb_bb w, dtb_bb b)               \
    {                                                                                          \
        return block_of_t(ix, w, b, WIDE);                                                     \
    }                                                                                          \
    ATTR static void NAME##_block_men(const dtb_index *ix, uint64_t blk, dtb_bb *w, dtb_bb *b)  \
    {                                                                                          \
        block_men_t(ix, blk, w, b, WIDE, FAST);                                                \
    }                                                                                          \
    ATTR static uint64_t NAME##_kings_of(const dtb_index *ix, dtb_bb m, dtb_bb wk, dtb_bb bk)   \
    {                                                                                          \
        return kings_of_t(ix, m, wk, bk, WIDE);                                                \
    }                                                                                          \
    ATTR static void NAME##_kings_of_moved(const dtb_index *ix, dtb_bb m, dtb_bb rest,           \
                                           dtb_bb bk, int n, const int *x, uint64_t *out)      \
    {                                                                                          \
        kings_of_moved_t(ix, m, rest, bk, n, x, out, WIDE);                                    \
    }                                                                                          \
    ATTR static void NAME##_kings_at(const dtb_index *ix, dtb_bb m, uint64_t r, dtb_bb *wk,     \
                                     dtb_bb *bk)                                               \
    {                                                                                          \
        kings_at_t(ix, m, r, wk, bk, WIDE, FAST);                                              \
    }                                                                                          \
    ATTR static uint64_t NAME##_index_of(const dtb_index *ix, const dtb_pos *p)                 \
    {                                                                                          \
        return index_of_t(ix, p, WIDE);                                                        \
    }                                                                                          \
    ATTR static void NAME##_index_pos(const dtb_index *ix, uint64_t i, dtb_pos *p)              \
    {                                                                                          \
        index_pos_t(ix, i, p, WIDE, FAST);                                                     \
    }                                                                                          \
    static const index_impl NAME = {NAME##_block_of,       NAME##_block_men, NAME##_kings_of,  \
                                    NAME##_kings_of_moved, NAME##_kings_at,  NAME##_index_of,  \
                                    NAME##_index_pos};

INDEX_VARIANT(narrow_base, , false, false)
INDEX_VARIANT(wide_base, , true, false)
#if HAVE_FAST
INDEX_VARIANT(narrow_fast, FAST_TARGET, false, true)
INDEX_VARIANT(wide_fast, FAST_TARGET, true, true)
/* narrow_fast with the planned unranking (plan_narrow) */
static const index_impl narrow_planned = {
    narrow_fast_block_of, block_men_narrow,     narrow_fast_kings_of, narrow_fast_kings_of_moved,
    kings_at_narrow,      narrow_fast_index_of, index_pos_narrow};
#endif

/* The variant for this board on this CPU. DTB_INDEX_PORTABLE=1 in the environment forces the
 * baseline code (tests compare it with the fast code; also a way out if a CPU misreports). */
static const index_impl *pick_impl(int squares)
{
    const bool wide = squares > 64;
    const char *portable = getenv("DTB_INDEX_PORTABLE");
    if (portable && portable[0] == '1')
        return wide ? &wide_base : &narrow_base;
#if HAVE_FAST
    if (__builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi2"))
        return wide ? &wide_fast : &narrow_fast;
#endif
    return wide ? &wide_base : &narrow_base;
}

/* ---- construction */

/* a * b, or false on overflow. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }

static uint64_t binom_sat(const dtb_index *ix, int n, int k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    return ix->binom[k][n];
}

/* The constants of men_narrow (sizes already checked), and the planned variant for it. */
static void plan_narrow(dtb_index *ix)
{
    const int H = ix->b->half;
    /* bottom_set: group j's j-subsets from offset sum of C(H, j') over j' < j, in colex order */
    size_t off[NARROW_GROUPS + 1] = {0};
    for (int j = 0; j < H + 1; j++)
        off[j + 1] = off[j] + ix->binom[j][H];
    for (uint64_t set = 0; set < (1ull << H); set++) {
        uint64_t r = 0;
        int k = 0;
        for (uint64_t x = set; x; x &= x - 1)
            r += ix->binom[++k][__builtin_ctzll(x)];
        ix->bottom_set[off[k] + r] = set << ix->bottom_first;
    }
    ix->block_r = recip62_make(ix->block_size.d);
    ix->nbk_r = recip62_make(ix->nbk.d);
    for (int j = ix->jlo; j <= ix->jhi; j++) {
        unindex_group *g = &ix->ugroup[j];
        g->first2 = ix->gfirst[j] << 1;
        g->goff = ix->goff[j];
        const recip62 white = recip62_make(ix->gwhite_i[j].d);
        const recip62 bot = recip62_make(ix->gbot_i[j].d);
        g->white_m = white.m, g->white_s = (uint8_t)white.s;
        g->bot_m = bot.m, g->bot_s = (uint8_t)bot.s;
        g->black_n = ix->gblack[j].d;
        g->mid_n = ix->gmid[j].d;
        g->bottom = (uint16_t)off[j];
        g->kmid = (uint8_t)(ix->wm - j);
        g->mid_set = g->kmid >= 2 ? ix->pair_set : ix->small_set + g->kmid;
    }
    for (int g = 0; g < NARROW_GROUPS - 1; g++)
        ix->ufirst[g] = ix->jlo + 1 + g <= ix->jhi ? ix->gfirst[ix->jlo + 1 + g] : UINT64_MAX;
#if HAVE_FAST
    if (ix->impl == &narrow_fast)
        ix->impl = &narrow_planned;
#endif
}

dtb_status dtb_index_create(const dtb_board *b, dtb_material m, dtb_index **out)
{
    assert(b && out);
    *out = NULL;
    const int S = b->squares, H = b->half;
    const int wm = m.men[DTB_WHITE], bm = m.men[DTB_BLACK];
    const int wk = m.kings[DTB_WHITE], bk = m.kings[DTB_BLACK];
    const int limit = b->variant->start_rows * H;
    if (wm > KMAX || bm > KMAX || wk > KMAX || bk > KMAX || wm + wk > limit || bm + bk > limit ||
        wm > S - H || bm > S - H || wm + bm + wk + bk > S)
        return DTB_E_RANGE;
    /* Boards of up to 64 squares rank with dtb_index_binom64 (no variant starts with more men). */
    if (S <= 64 && (wm > NARROW_KMAX || bm > NARROW_KMAX || wk > NARROW_KMAX || bk > NARROW_KMAX))
        return DTB_E_RANGE;

    dtb_index *ix = aligned_alloc(64, (sizeof *ix + 63) / 64 * 64);
    if (ix)
        memset(ix, 0, sizeof *ix);
    if (ix == NULL)
        return DTB_E_NOMEM;
    ix->b = b;
    ix->m = m;
    ix->wm = wm, ix->bm = bm, ix->wk = wk, ix->bk = bk;

    for (int k = 0; k <= KMAX; k++)
        for (int n = 0; n < BINOM_COLS; n++) {
            uint64_t v;
            if (k == 0)
                v = 1;
            else if (n == 0)
                v = 0;
            else {
                /* Pascal; saturate at UINT64_MAX (only sizes that do not fit are rejected). */
                const uint64_t x = ix->binom[k - 1][n - 1], y = ix->binom[k][n - 1];
                v = (x > UINT64_MAX - y) ? UINT64_MAX : x + y;
            }
            ix->binom[k][n] = v;
        }

#ifndef NDEBUG
    for (int k = 0; k <= NARROW_KMAX; k++)
        for (int n = 0; n < 64; n++)
            assert(dtb_index_binom64[k][n] == ix->binom[k][n]);
#endif
    int kinds_max = wm > bm ? wm : bm;
    kinds_max = wk > kinds_max ? wk : kinds_max;
    kinds_max = bk > kinds_max ? bk : kinds_max;
    for (int i = 1; i <= kinds_max; i++) {
        const uint64_t top = ix->binom[i][S];
        const int bits = top ? 64 - __builtin_clzll(top) : 0;
        ix->gshift[i] = (uint8_t)(bits > GUESS_BITS ? bits - GUESS_BITS : 0);
        int c = 0;
        for (uint64_t t = 0; t < (1u << GUESS_BITS); t++) {
            const uint64_t r = t << ix->gshift[i];
            if ((r >> ix->gshift[i]) != t)
                break; /* beyond 64 bits: never looked up */
            while (c + 1 <= S && ix->binom[i][c + 1] <= r)
                c++;
            ix->guess[i][t] = (uint8_t)c;
        }
    }

    if (S <= 64) {
        for (int c = 0; c < 64; c++)
            ix->small_set[1 + c] = 1ull << c;
        /* colex order: {c1 < c2} has rank C(c2, 2) + c1 */
        size_t r = 0;
        for (int c2 = 1; c2 < S; c2++)
            for (int c1 = 0; c1 < c2; c1++)
                ix->pair_set[r++] = 1ull << c1 | 1ull << c2;
    }

    /* Rows are runs of H squares in the dense layout (bitboard.h). */
    ix->all = b->all;
    ix->black_men_sq = b->all & ~b->promotion[DTB_BLACK];
    ix->middle_first = H;
    ix->bottom_first = S - H;
    assert(b->promotion[DTB_BLACK] == (b->all & ~((DTB_BB_ONE << (S - H)) - 1)));
    ix->impl = pick_impl(S);

    dtb_status st = DTB_OK;
    const int mid = S - 2 * H;
    ix->jlo = wm > mid ? wm - mid : 0;
    ix->jhi = wm < H ? wm : H;
    uint64_t blocks = 0;
    for (int j = ix->jlo; j <= ix->jhi && st == DTB_OK; j++) {
        ix->goff[j] = blocks;
        ix->gmid[j] = divider_make(binom_sat(ix, mid, wm - j));
        ix->gblack[j] = divider_make(binom_sat(ix, S - H - (wm - j), bm));
        uint64_t white, n;
        if (!mul_ok(binom_sat(ix, H, j), ix->gmid[j].d, &white) ||
            !mul_ok(white, ix->gblack[j].d, &n) || __builtin_add_overflow(blocks, n, &blocks))
            st = DTB_E_RANGE;
    }
    ix->goff[ix->jhi + 1] = blocks;
    ix->blocks = blocks;
    const int nfree = S - wm - bm;
    ix->nbk = divider_make(binom_sat(ix, nfree - wk, bk));
    ix->nbk_count = ix->nbk.d;
    uint64_t block_size = 0;
    if (st == DTB_OK && (!mul_ok(binom_sat(ix, nfree, wk), ix->nbk.d, &block_size) ||
                         !mul_ok(ix->blocks, block_size, &ix->size)))
        st = DTB_E_RANGE;
    ix->block_size = divider_make(block_size);
    ix->block_positions = block_size;
    ix->nwk = binom_sat(ix, nfree, wk);
    for (int j = ix->jlo; j <= ix->jhi && st == DTB_OK; j++) {
        /* products below a group's size, which fits (checked above) */
        ix->gfirst[j] = ix->goff[j] * block_size;
        ix->gwhite_i[j] = divider_make(ix->gblack[j].d * block_size);
        ix->gbot_i[j] = divider_make(ix->gmid[j].d * ix->gblack[j].d * block_size);
    }
    if (st == DTB_OK && wm > 0) {
        ix->wtab = calloc((size_t)(wm + 1) * (size_t)wm * DTB_MAX_SQUARES, sizeof *ix->wtab);
        if (ix->wtab == NULL)
            st = DTB_E_NOMEM;
    }
    for (int j = ix->jlo; j <= ix->jhi && st == DTB_OK && wm > 0; j++) {
        const int nmid = wm - j;
        uint64_t *t = ix->wtab + (size_t)nmid * (size_t)wm * DTB_MAX_SQUARES;
        for (int i = 1; i <= wm; i++, t += DTB_MAX_SQUARES)
            for (int sq = H; sq < S; sq++) {
                /* Men i <= nmid are middle men, the others bottom men; the rest never occur. */
                if (sq < S - H && i <= nmid)
                    t[sq] = ix->binom[i][sq - H] * ix->gblack[j].d;
                else if (sq >= S - H && i > nmid)
                    t[sq] = ix->binom[i - nmid][sq - (S - H)] * ix->gmid[j].d * ix->gblack[j].d;
            }
    }
    if (st == DTB_OK && ix->size == 0)
        st = DTB_E_RANGE;
    if (st == DTB_OK && S <= 64 && H < NARROW_GROUPS && ix->size < (1ull << 62))
        plan_narrow(ix);
    if (st != DTB_OK) {
        dtb_index_free(ix);
        return st;
    }
    *out = ix;
    return DTB_OK;
}

void dtb_index_free(dtb_index *ix)
{
    if (ix)
        free(ix->wtab);
    free(ix);
}

uint64_t dtb_index_size(const dtb_index *ix) { return ix->size; }
uint64_t dtb_index_blocks(const dtb_index *ix) { return ix->blocks; }
uint64_t dtb_index_block_size(const dtb_index *ix) { return ix->block_size.d; }
dtb_material dtb_index_material(const dtb_index *ix) { return ix->m; }

/* ---- operations: dispatch to the variant picked at creation */

uint64_t dtb_index_block_of(const dtb_index *ix, dtb_bb white_men, dtb_bb black_men)
{
    return ix->impl->block_of(ix, white_men, black_men);
}

void dtb_index_block_men(const dtb_index *ix, uint64_t blk, dtb_bb *white_men, dtb_bb *black_men)
{
    ix->impl->block_men(ix, blk, white_men, black_men);
}

uint64_t dtb_index_kings_of(const dtb_index *ix, dtb_bb men, dtb_bb white_kings, dtb_bb black_kings)
{
    return ix->impl->kings_of(ix, men, white_kings, black_kings);
}

void dtb_index_kings_of_moved(const dtb_index *ix, dtb_bb men, dtb_bb rest, dtb_bb black_kings,
                              int n, const int *to, uint64_t *out)
{
    ix->impl->kings_of_moved(ix, men, rest, black_kings, n, to, out);
}

/* The k-subset of u after s in colex order (the order rank_set counts), or 0 after the last.
 * Within u's squares this is Gosper's step: the lowest run of s (consecutive squares of u) is
 * cleared, the square of u above it taken, and the rest of the run moved to the lowest squares
 * of u. Filling the squares outside u with ones lets the carry of one addition run through
 * them. */
static dtb_bb next_subset(dtb_bb s, dtb_bb u)
{
    const dtb_bb low = s & -s;
    const dtb_bb up = ((s | ~u) + low) & u; /* s without its lowest run, one square above it */
    if (!(up & ~s))
        return 0; /* the run reached the top of u */
    int rest = dtb_bb_count(s & ~up) - 1;
    dtb_bb out = up, free = u;
    for (; rest > 0; rest--) {
        out |= free & -free;
        free &= free - 1;
    }
    return out;
}

/* The lowest k squares of u. */
static dtb_bb first_subset(int k, dtb_bb u)
{
    dtb_bb out = 0;
    for (; k > 0; k--) {
        out |= u & -u;
        u &= u - 1;
    }
    return out;
}

bool dtb_index_kings_next(const dtb_index *ix, dtb_bb men, dtb_bb *white_kings, dtb_bb *black_kings)
{
    const dtb_bb empty = ix->all & ~men;
    if (ix->bk > 0) {
        const dtb_bb b = next_subset(*black_kings, empty & ~*white_kings);
        if (b) {
            *black_kings = b;
            return true;
        }
    }
    if (ix->wk == 0)
        return false;
    const dtb_bb w = next_subset(*white_kings, empty);
    if (!w)
        return false;
    *white_kings = w;
    *black_kings = first_subset(ix->bk, empty & ~w);
    return true;
}

void dtb_index_kings_at(const dtb_index *ix, dtb_bb men, uint64_t kings_rank, dtb_bb *white_kings,
                        dtb_bb *black_kings)
{
    ix->impl->kings_at(ix, men, kings_rank, white_kings, black_kings);
}

uint64_t dtb_index_of(const dtb_index *ix, const dtb_pos *p) { return ix->impl->index_of(ix, p); }

bool dtb_index_fast_get(const dtb_index *ix, dtb_index_fast *out)
{
    memset(out, 0, sizeof *out);
    if (ix->b->squares > 64 || ix->jhi + 1 >= DTB_INDEX_FAST_GROUPS)
        return false;
    out->wm = ix->wm, out->bm = ix->bm, out->wk = ix->wk, out->bk = ix->bk;
    out->bottom_first = ix->bottom_first;
    out->wtab = ix->wtab;
    out->block_positions = ix->block_positions;
    out->nbk_count = ix->nbk_count;
    out->all = (uint64_t)ix->all;
    out->black_men_sq = (uint64_t)ix->black_men_sq;
    for (int j = 0; j <= ix->jhi + 1; j++)
        out->goff[j] = ix->goff[j];
    const int S = ix->b->squares;
    for (int sq = 0; sq < S; sq++) {
        const uint64_t image = 1ull << (S - 1 - sq);
        if (((uint64_t)ix->black_men_sq >> sq) & 1)
            out->flip_black_men_sq |= image;
        if (sq >= ix->bottom_first)
            out->flip_bottom |= image;
    }
    out->flip_last = S - 1;
    return true;
}

void dtb_index_pos(const dtb_index *ix, uint64_t i, dtb_pos *p) { ix->impl->index_pos(ix, i, p); }
