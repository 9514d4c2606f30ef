/* Perfect index of the positions of one material with white to move (docs/DESIGN.md §3).
 *
 * index = block * block_size + kings_rank. A block is one placement of the men of both colours
 * (no man on its own promotion row); kings_rank ranks the white kings, then the black kings, over
 * the squares the men leave free, so every block has the same size. Sizes count exactly the
 * legal placements: no gaps. Thread-safe after creation (read-only). */
#ifndef DTB_INDEX_H
#define DTB_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "material.h"

typedef struct dtb_index dtb_index;

/* Builds the index of material m on board b into *out (NULL on failure). DTB_E_RANGE when the
 * material does not fit the board, DTB_E_NOMEM when out of memory. The board must outlive the
 * index. */
dtb_status dtb_index_create(const dtb_board *b, dtb_material m, dtb_index **out);

/* Frees ix; NULL is allowed. */
void dtb_index_free(dtb_index *ix);

uint64_t dtb_index_size(const dtb_index *ix);       /* positions in all */
uint64_t dtb_index_blocks(const dtb_index *ix);     /* number of men placements */
uint64_t dtb_index_block_size(const dtb_index *ix); /* king placements per block */
dtb_material dtb_index_material(const dtb_index *ix);

/* Index of p, which must have ix's material (white to move is assumed; p->side is ignored). */
uint64_t dtb_index_of(const dtb_index *ix, const dtb_pos *p);

/* The position with index i < size (white to move). */
void dtb_index_pos(const dtb_index *ix, uint64_t i, dtb_pos *p);

/* Block number of a men placement (white men, black men). */
uint64_t dtb_index_block_of(const dtb_index *ix, dtb_bb white_men, dtb_bb black_men);

/* Men placement of block number blk. */
void dtb_index_block_men(const dtb_index *ix, uint64_t blk, dtb_bb *white_men, dtb_bb *black_men);

/* Rank of a king placement within its block, given all the men (both colours). */
uint64_t dtb_index_kings_of(const dtb_index *ix, dtb_bb men, dtb_bb white_kings, dtb_bb black_kings);

/* dtb_index_kings_of for the n placements whose white kings are rest plus one king on square
 * to[i] (free of men and of rest) and whose black kings are black_kings: out[i] = rank of
 * (rest | to[i], black_kings). rest holds one white king fewer than the material. These are the
 * placements a retrograde move of one white king reaches; the rest's share of the white rank is
 * computed once for all of them. */
void dtb_index_kings_of_moved(const dtb_index *ix, dtb_bb men, dtb_bb rest, dtb_bb black_kings,
                              int n, const int *to, uint64_t *out);

/* Steps a king placement over the same men to the one of the next rank (dtb_index_kings_of + 1):
 * returns false, leaving it unchanged, when it was the block's last. Walks a block in index order
 * for much less than dtb_index_kings_at per position. */
bool dtb_index_kings_next(const dtb_index *ix, dtb_bb men, dtb_bb *white_kings, dtb_bb *black_kings);

/* Moves p, position i - 1 of the index (i > 0), to position i: a step of its kings inside a
 * block, dtb_index_pos at a block's first position. Walks a range in index order for much less
 * than dtb_index_pos per position (the manifest's and the converter's classification). */
static inline void dtb_index_pos_next(const dtb_index *ix, uint64_t i, dtb_pos *p)
{
    if (i % dtb_index_block_size(ix) == 0) {
        dtb_index_pos(ix, i, p);
    } else {
        const dtb_bb men = p->men[0] | p->men[1];
        dtb_index_kings_next(ix, men, &p->kings[0], &p->kings[1]);
    }
}

/* Inverse of dtb_index_kings_of: the king placement with rank kings_rank < block size among the
 * squares the men leave free. With dtb_index_block_men, walks a block without a division per
 * position. */
void dtb_index_kings_at(const dtb_index *ix, dtb_bb men, uint64_t kings_rank, dtb_bb *white_kings,
                        dtb_bb *black_kings);

/* ---- An inline dtb_index_of for boards of up to 64 squares (a probe's hot path) ----------- */

#define DTB_INDEX_KMAX64 20      /* most pieces of a kind on such a board (10x10: 20 men) */
#define DTB_INDEX_FAST_GROUPS 8  /* room for goff[0 .. white men on the bottom row + 1] */

/* C(n, k) as dtb_index_binom64[k][n], n < 64 (read-only, computed by the compiler). */
extern const uint64_t dtb_index_binom64[DTB_INDEX_KMAX64 + 1][64];

/* What dtb_index_fast_of needs of an index: a copy, so that a caller can keep it next to its
 * own data (it points into the index for wtab: valid while the index lives). */
typedef struct dtb_index_fast {
    int wm, bm, wk, bk;
    int bottom_first;
    const uint64_t *wtab;
    uint64_t block_positions, nbk_count;
    uint64_t all, black_men_sq;
    uint64_t goff[DTB_INDEX_FAST_GROUPS];
    /* for dtb_index_fast_of_flipped: black_men_sq and the bottom row under the flip's square
     * map, and the last square (squares - 1) */
    uint64_t flip_black_men_sq, flip_bottom;
    int flip_last;
} dtb_index_fast;

/* Fills *out for ix and returns true when ix is on a board of up to 64 squares (else false: use
 * dtb_index_of). Thread-safe (reads ix). */
bool dtb_index_fast_get(const dtb_index *ix, dtb_index_fast *out);

/* Rank of s (k squares of empty) among the k-subsets of empty, as index.c's rank_set. */
static inline uint64_t dtb_index_rank64_(uint64_t s, int k, uint64_t empty)
{
    (void)k; /* s holds k squares: the loop runs on s, one test per turn */
    uint64_t r = 0;
    for (const uint64_t *row = dtb_index_binom64[1]; s; s &= s - 1, row += 64)
        r += row[__builtin_popcountll(empty & ((1ull << __builtin_ctzll(s)) - 1))];
    return r;
}

/* dtb_index_rank64_ of the mirror image of s (k squares of empty) among the mirror image of empty
 * (bit i -> bit squares-1-i), on the sets as they stand: the mirror image's j-th lowest square
 * is the k+1-j-th lowest here, and the squares of empty below it there are those above it here. */
static inline uint64_t dtb_index_rank64_flipped_(uint64_t s, int k, uint64_t empty)
{
    uint64_t r = 0;
    /* row - 1: popcount(empty >> x) counts x itself, which empty holds */
    for (const uint64_t *row = dtb_index_binom64[k]; s; s &= s - 1, row -= 64)
        r += (row - 1)[__builtin_popcountll(empty >> __builtin_ctzll(s))];
    return r;
}

/* The k-subset of u after s in colex order, 0 after the last: index.c's next_subset in words
 * (squares outside u are filled with ones so that the carry runs through them). */
static inline uint64_t dtb_index_next_subset64_(uint64_t s, uint64_t u)
{
    const uint64_t up = ((s | ~u) + (s & -s)) & u;
    if (!(up & ~s))
        return 0;
    uint64_t out = up, avail = u;
    for (int rest = __builtin_popcountll(s & ~up) - 1; rest > 0; rest--) {
        out |= avail & -avail;
        avail &= avail - 1;
    }
    return out;
}

/* The lowest k squares of u. */
static inline uint64_t dtb_index_first_subset64_(int k, uint64_t u)
{
    uint64_t out = 0;
    for (; k > 0; k--) {
        out |= u & -u;
        u &= u - 1;
    }
    return out;
}

/* dtb_index_kings_next in words for f = dtb_index_fast_get(ix): inline, for the solver's walk
 * over every position of a block. */
static inline bool dtb_index_fast_kings_next(const dtb_index_fast *f, uint64_t men,
                                             uint64_t *white_kings, uint64_t *black_kings)
{
    const uint64_t empty = f->all & ~men;
    if (f->bk > 0) {
        const uint64_t b = dtb_index_next_subset64_(*black_kings, empty & ~*white_kings);
        if (b) {
            *black_kings = b;
            return true;
        }
    }
    if (f->wk == 0)
        return false;
    const uint64_t w = dtb_index_next_subset64_(*white_kings, empty);
    if (!w)
        return false;
    *white_kings = w;
    *black_kings = dtb_index_first_subset64_(f->bk, empty & ~w);
    return true;
}

/* dtb_index_of(ix, p) for f = dtb_index_fast_get(ix) and p's sets as words (white to move).
 * Same value; inline, for code compiled with a popcount instruction. */
static inline uint64_t dtb_index_fast_of(const dtb_index_fast *f, uint64_t white_men,
                                         uint64_t black_men, uint64_t white_kings,
                                         uint64_t black_kings)
{
    /* white men: their group j (men on the bottom row) and one table term per man */
    const int j = __builtin_popcountll(white_men >> f->bottom_first);
    uint64_t white = 0;
    if (f->wm > 0) {
        const uint64_t *t = f->wtab + (size_t)(f->wm - j) * (size_t)f->wm * DTB_MAX_SQUARES;
        for (uint64_t w = white_men; w; w &= w - 1, t += DTB_MAX_SQUARES)
            white += t[__builtin_ctzll(w)];
    }
    const uint64_t block = f->goff[j] + white +
                           dtb_index_rank64_(black_men, f->bm, f->black_men_sq & ~white_men);
    const uint64_t empty = f->all & ~(white_men | black_men);
    return block * f->block_positions +
           dtb_index_rank64_(white_kings, f->wk, empty) * f->nbk_count +
           dtb_index_rank64_(black_kings, f->bk, empty & ~white_kings);
}

/* dtb_index_fast_of of the mirror image (bit i -> bit squares-1-i) of the position with these
 * sets: dtb_index_fast_of(f, M(white_men), M(black_men), M(white_kings), M(black_kings)) without
 * mirroring the sets, for a black-to-move position whose colours are already swapped (white_men
 * are the men of the side to move). Saves the mirror where positions are flipped to white to move. */
static inline uint64_t dtb_index_fast_of_flipped(const dtb_index_fast *f, uint64_t white_men,
                                                 uint64_t black_men, uint64_t white_kings,
                                                 uint64_t black_kings)
{
    const int j = __builtin_popcountll(white_men & f->flip_bottom);
    uint64_t white = 0;
    if (f->wm > 0) {
        /* the mirror image's i-th lowest man is the wm-i-th lowest here, on square last - x */
        const uint64_t *t = f->wtab + (size_t)(f->wm - j) * (size_t)f->wm * DTB_MAX_SQUARES +
                            (size_t)(f->wm - 1) * DTB_MAX_SQUARES + f->flip_last;
        for (uint64_t w = white_men; w; w &= w - 1, t -= DTB_MAX_SQUARES)
            white += *(t - (unsigned)__builtin_ctzll(w));
    }
    const uint64_t block = f->goff[j] + white +
                           dtb_index_rank64_flipped_(black_men, f->bm,
                                                     f->flip_black_men_sq & ~white_men);
    const uint64_t empty = f->all & ~(white_men | black_men);
    return block * f->block_positions +
           dtb_index_rank64_flipped_(white_kings, f->wk, empty) * f->nbk_count +
           dtb_index_rank64_flipped_(black_kings, f->bk, empty & ~white_kings);
}

#endif
