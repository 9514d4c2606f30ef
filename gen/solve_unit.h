/* What the solver's three states share (gen/solve.h is the interface; docs/DESIGN.md §6).
 *
 * A unit is a block of material m (one men placement, white to move) together with the block
 * of the flipped material that holds the same placement with colours swapped: a white king
 * move from one half lands, after the flip, in the other half, so king moves never leave the
 * unit. Every other move (man move, promotion, capture) is an exit into data solved earlier:
 * a man move advances the men, so units are solved in decreasing order of men advancement and
 * units of equal advancement are independent.
 *
 * The states that solve a unit, each in its own file:
 *   - the node solve (solve_node.c): four bytes of state a position, level queues; every pair
 *     with men and kings, and kings-only pairs whose node state fits;
 *   - the lean solve (solve_lean.c): one byte a position, levels read back from the values;
 *     kings-only pairs beyond the node state;
 *   - the kingless solve (solve_kingless.c): men only, a position's value is its best exit's.
 * This header holds the unit, the lanes (one thread's share), the capture tests and the exits
 * they all read, inline where the solvers' inner loops call them; solve_unit.c the rest.
 * Internal to gen/: nothing outside the solver includes it. */
#ifndef DTB_SOLVE_UNIT_H
#define DTB_SOLVE_UNIT_H

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "hugemem.h"
#include "movegen.h"
#include "solve.h"

#define NO_WIN 1023 /* a node's wincand when no winning move is known (all its bits) */
/* The same while exit values are folded into an int: a win beyond DTB_MAX_DTW is out of range
 * and must be refused, not taken for NO_WIN. */
#define NO_WIN_YET INT_MAX

enum { F_CAPTURE = 1, F_DRAWEXIT = 2, F_RESOLVED = 4 };
/* Nodes that learn nothing from their successors: capture positions (their king moves are not
 * legal) and positions already resolved. */
enum { F_DEAF = F_CAPTURE | F_RESOLVED };

/* What is known of one position while its unit is solved: four bytes, one cache access, and
 * one compare-and-swap when several threads share the unit. Distances take 10 bits each, so
 * DTB_MAX_DTW is 1022 (lossmax is biased by one, NO_WIN is all ones). */
typedef struct node {
    uint32_t cnt : 8;      /* unresolved in-unit successors */
    uint32_t flags : 3;
    uint32_t wincand : 10; /* best known win DTW, NO_WIN if none */
    uint32_t lossmax : 10; /* longest known successor win DTW + 1 (0: none) */
} node;
_Static_assert(sizeof(node) == 4, "a node is one 32-bit word");
_Static_assert(DTB_MAX_DTW < NO_WIN, "a node's distances hold DTB_MAX_DTW (lossmax up to it + 1)");

/* A white man move that stays in the material (no promotion): it leads, after the flip, to one
 * fixed block of the flipped material, so only the kings' rank there varies by position. */
typedef struct man_exit {
    dtb_bb to;                /* the square the man moves to (must be free of kings) */
    const dtb_index *ix;      /* of the flipped material */
    const dtb_value *values;
    dtb_bb men;               /* all men of the target block */
    uint64_t base;            /* its first index */
    uint64_t free;            /* squares free of men in the target block (boards of <= 64) */
} man_exit;

/* White men a side can have, so white man moves: at most two each. */
#define MAX_MAN_EXITS 64

typedef struct half {
    dtb_solved_table *t;
    dtb_bb wmen, bmen, men;
    uint64_t base; /* index of the block's first position */
    man_exit ex[MAX_MAN_EXITS];
    int nex;
    const dtb_index_fast *exf; /* inline index of the exits' table (flipped material), or NULL */
    /* The white men's first jumps as far as the men alone decide them (see may_capture): the
     * landing squares of jumps over black men, and the men-free squares a man could jump over
     * (a black king there may be taken). */
    dtb_bb land_men, over_free;
    /* Where white men one step from promotion promote, by forward direction (when the square is
     * free of kings); those moves take the generic path, not ex[]. */
    dtb_bb promo_to[2];
    bool lone;        /* black has one piece: any capture takes it and wins at once */
    int slot;         /* which of the pair's stats this half counts into */
} half;

/* Bucket queue of local ids by level. */
typedef struct bucket {
    uint32_t *ids;
    size_t n, cap;
} bucket;

/* Positions whose exits are gathered (and their values prefetched) before any is read: exit
 * values lie in other tables, usually far apart, and waiting for them one at a time was the
 * largest single cost of capture positions. */
enum { BATCH = 16, EXITS_CAP = 2048, QUIET_EXITS_MAX = MAX_MAN_EXITS + 64 };

typedef struct batch {
    struct {
        uint32_t id;
        uint16_t first, n; /* its exits in exit[] */
        uint8_t cnt;       /* in-unit successors */
        bool capture;
    } pos[BATCH];
    int npos, nexit;
    const dtb_value *exit[EXITS_CAP];
    dtb_value slot[EXITS_CAP]; /* exit[i]'s value when its table is read from its file */
} batch;

/* Facts for predecessors in a shared unit, gathered before any is applied (see
 * solve_unit_shared): fact = local id << 9 | level << 1 | win. sorted holds them by bucket
 * (bucket = local id >> BUCKET_SHIFT), begin[b] where bucket b starts. */
typedef struct factbuf {
    uint64_t *v, *sorted;
    size_t n, cap, sorted_cap;
    size_t *begin; /* nbuckets + 1 entries */
    size_t nbegin;
} factbuf;

/* Capture bits of positions visited in index order, gathered a word at a time: one atomic OR
 * per word of the bitmap instead of one per capture position (that OR was a quarter of
 * flush_batch's time). Words are shared only where blocks meet, so the OR stays atomic; every
 * gathered word must be flushed before the solve ends (capture_bits_flush). */
typedef struct capture_bits {
    uint64_t *word; /* the word being gathered, NULL if none */
    uint64_t bits;
} capture_bits;

/* One thread's share of the work: its level queues, flags and statistics. Queues are never
 * shared for writing, so pushing needs no lock; a level is read by all threads only after
 * every thread has stopped pushing to it (pushes always go to later levels). */
typedef struct lane {
    bucket q[DTB_MAX_DTW + 2]; /* allocated as levels are reached: most pairs end below 256 */
    int top;       /* highest level pushed to */
    bool overflow; /* a DTW beyond DTB_MAX_DTW */
    bool nomem;
    dtb_solve_stats st[2];
    batch bt;     /* positions being initialised */
    capture_bits capbits; /* their capture bits (flushed after each range) */
    factbuf fx;   /* what this lane's resolved positions tell dtb_unit_predecessors (shared units) */
    node *nodes;  /* room for one unit's nodes, kept for the whole pair (huge pages: a large
                   * unit's nodes are read at random) */
} lane;

typedef struct unit {
    const dtb_board *b;
    const dtb_solved *s;
    bool quick_capture; /* may_capture applies: flying kings (may_capture_wide beyond 64 squares) */
    half h[2];
    int nhalves;  /* 1 when the block is its own flip */
    uint64_t K;   /* positions per half */
    node *n;      /* per position of the unit, by local id */
    const dtb_index_fast *fx[2]; /* inline index of each half's table; NULL beyond 64 squares */
    bool shared;  /* several threads work on this unit: node updates are atomic */
    int byte_limit[2]; /* [win]: dtb_solved_byte_limit of s, for the stores of the solve */
} unit;

static inline int other(const unit *u, int h) { return u->nhalves == 1 ? h : 1 - h; }

/* The half of local id and its rank there: ids run over at most two halves of K, so a compare
 * does what a division by K would (a 64-bit division several times per position). */
static inline int half_of(const unit *u, uint64_t id) { return id >= u->K; }
static inline uint64_t in_half(const unit *u, uint64_t id) { return id >= u->K ? id - u->K : id; }

/* fold_exits when the best exit is an escape byte: the long lists decide. */
void dtb_unit_fold_long(const dtb_solved *s, const dtb_value *const *at, int n, int best,
                        int *wincand, int *lossmax);

/* How good a successor's value v (for the opponent, to move there) is for the side moving
 * there, as one number: exits the opponent loses above the draw (127), the shorter the win the
 * higher (128..255); exits it wins below, the longer the loss the higher (0..126). */
static inline int exit_key(dtb_value v)
{
    const int x = v;
    return x >= 128 ? 383 - x : (x + 127) & 127;
}

/* What the exits at[0..n) tell the side to move: *wincand the shortest win through one of them
 * (NO_WIN_YET if none), else *drawexit whether one draws, else *lossmax the longest win the
 * opponent has there (-1: no exit). Only the best exit counts, so the loop is a maximum of keys
 * without a branch per exit (their values come in no predictable order); a lossmax hidden by a
 * win or a draw never decides anything (such a position is not lost). Escape bytes order
 * beyond every byte-sized distance of their kind, so only a best exit that is one needs the
 * long list (fold_long). */
static inline void fold_exits(const dtb_solved *s, const dtb_value *const *at, int n, int *wincand,
                              int *lossmax, bool *drawexit)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const int k = exit_key(*at[i]);
        best = k > best ? k : best;
    }
    *drawexit = best == 127;
    if (__builtin_expect(best == 126 || best == 128, 0)) {
        dtb_unit_fold_long(s, at, n, best, wincand, lossmax);
        return;
    }
    *wincand = best >= 128 ? 511 - 2 * best : NO_WIN_YET; /* dtw(loss 383 - best) + 1 */
    *lossmax = best <= 126 ? 2 * best + 1 : -1; /* dtw(win best + 1); -1 stays -1 */
}

static inline void capture_bits_flush(capture_bits *cb)
{
    if (cb->bits)
        __atomic_fetch_or(cb->word, cb->bits, __ATOMIC_RELAXED);
    cb->word = NULL;
    cb->bits = 0;
}

/* Marks position idx of the table with this capture bitmap. */
static inline void capture_bits_set(capture_bits *cb, uint64_t *bitmap, uint64_t idx)
{
    uint64_t *const w = &bitmap[idx / 64];
    if (w != cb->word) {
        capture_bits_flush(cb);
        cb->word = w;
    }
    cb->bits |= 1ull << (idx % 64);
}

/* Capture positions whose exits are located (and prefetched) before any is read, as in a batch:
 * the values lie in other tables, far apart, and reading them one position at a time waited
 * for memory once per position. */
typedef struct capture_batch {
    uint64_t at[BATCH];            /* index of each pending position */
    uint16_t first[BATCH], n[BATCH]; /* its exits in exit[] */
    int npos, nexit;
    const dtb_value *exit[EXITS_CAP];
    dtb_value slot[EXITS_CAP]; /* as in batch */
} capture_batch;

/* One diagonal step of a set in words (boards of up to 64 squares; dtb_board_step): NW and NE
 * steps go to lower squares, SW and SE to higher ones. */
static inline uint64_t step64(const dtb_board *b, uint64_t s, int d)
{
    const uint64_t m0 = (uint64_t)b->step_from[d][0], m1 = (uint64_t)b->step_from[d][1];
    if (d < DTB_SW)
        return (s & m0) >> -b->step_shift[d][0] | (s & m1) >> -b->step_shift[d][1];
    return (s & m0) << b->step_shift[d][0] | (s & m1) << b->step_shift[d][1];
}

/* Whether a white man of the half may jump a black king on one of the squares of kings. */
bool dtb_unit_man_takes_king(const dtb_board *b, const half *hf, dtb_bb kings, dtb_bb occ);

/* The capture test of dtb_generate_captures for a position of the half with kings wk, bk (words;
 * flying kings): *men gets the white men that may capture (all that have a jump the men allow:
 * a superset), the result says whether a white king can. The men are those of the block, so
 * their part is two masks: a jump over a black man needs its landing square free of kings, a
 * jump over a men-free square a black king there. A flying king takes the nearest piece of a
 * ray when it is black with a free square behind it. */
static inline bool may_capture(const dtb_board *b, const half *hf, uint64_t wk, uint64_t bk,
                               dtb_bb *men)
{
    const uint64_t kings = wk | bk, occ = (uint64_t)hf->men | kings;
    const uint64_t over = bk & (uint64_t)hf->over_free;
    const bool mc = ((uint64_t)hf->land_men & ~kings) || (over && dtb_unit_man_takes_king(b, hf, over, occ));
    *men = mc ? hf->wmen : 0;
    if (!wk)
        return false;
    /* As core/movegen.c's flying king test: jumpable[d], the black pieces with a free square
     * behind them in direction d; along a ray the nearest piece must be one of them (the
     * highest square of the ray's pieces towards NW and NE, the lowest towards SW and SE). */
    const uint64_t opp = (uint64_t)hf->bmen | bk, empty = (uint64_t)b->all & ~occ;
    uint64_t j[DTB_DIRS];
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++)
        j[d] = opp & step64(b, empty, d ^ 3);
    for (uint64_t k = wk; k; k &= k - 1) {
        const int sq = __builtin_ctzll(k);
        const uint64_t m0 = (uint64_t)b->ray[sq][DTB_NW] & occ, m1 = (uint64_t)b->ray[sq][DTB_NE] & occ;
        const uint64_t m2 = (uint64_t)b->ray[sq][DTB_SW] & occ, m3 = (uint64_t)b->ray[sq][DTB_SE] & occ;
        if (((m0 & j[DTB_NW]) > (m0 & ~j[DTB_NW])) | ((m1 & j[DTB_NE]) > (m1 & ~j[DTB_NE])) |
            ((m2 & -m2 & j[DTB_SW]) != 0) | ((m3 & -m3 & j[DTB_SE]) != 0))
            return true;
    }
    return false;
}

/* may_capture in two words, for boards of more than 64 squares (12x12): the same masks and
 * the same ray test, which replace stepping every piece of the position in every direction. */
static inline bool may_capture_wide(const dtb_board *b, const half *hf, dtb_bb wk, dtb_bb bk,
                                    dtb_bb *men)
{
    const dtb_bb kings = wk | bk, occ = hf->men | kings, over = bk & hf->over_free;
    const bool mc = (hf->land_men & ~kings) || (over && dtb_unit_man_takes_king(b, hf, over, occ));
    *men = mc ? hf->wmen : 0;
    if (!wk)
        return false;
    const dtb_bb opp = hf->bmen | bk, empty = b->all & ~occ;
    dtb_bb j[DTB_DIRS];
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++)
        j[d] = opp & dtb_board_step(b, empty, d ^ 3);
    while (wk) {
        const int sq = dtb_bb_pop(&wk);
        const dtb_bb m0 = b->ray[sq][DTB_NW] & occ, m1 = b->ray[sq][DTB_NE] & occ;
        const dtb_bb m2 = b->ray[sq][DTB_SW] & occ, m3 = b->ray[sq][DTB_SE] & occ;
        if (((m0 & j[DTB_NW]) > (m0 & ~j[DTB_NW])) | ((m1 & j[DTB_NE]) > (m1 & ~j[DTB_NE])) |
            ((m2 & -m2 & j[DTB_SW]) != 0) | ((m3 & -m3 & j[DTB_SE]) != 0))
            return true;
    }
    return false;
}

/* Squares a king on y reaches in one quiet move over the empty squares (occ: the occupied
 * ones), on boards of up to 64 squares: per direction the empty run up to the nearest piece,
 * cut from the ray mask as count_flying64 does (core/movegen.c); one step when kings do not fly. */
static inline uint64_t king_reach64(const dtb_board *b, int y, uint64_t occ, bool fly)
{
    uint64_t to = 0;
    if (!fly) {
        for (int d = 0; d < DTB_DIRS; d++)
            if (b->next[y][d] >= 0)
                to |= 1ull << b->next[y][d];
        return to & ~occ;
    }
    for (int d = DTB_NW; d <= DTB_NE; d++) { /* towards lower squares: the nearest is the highest */
        const uint64_t r = (uint64_t)b->ray[y][d], m = r & occ;
        to |= m ? r & ~((2ull << (63 - __builtin_clzll(m))) - 1) : r;
    }
    for (int d = DTB_SW; d <= DTB_SE; d++) { /* towards higher squares: the nearest is the lowest */
        const uint64_t r = (uint64_t)b->ray[y][d], m = r & occ;
        to |= r & ((m & -m) - 1);
    }
    return to;
}

/* The value byte man exit x of half hf reaches from position p: the kings ranked as the flipped
 * target block sees them (the node solve does the same in its loop, the flip hoisted). */
static inline dtb_value dtb_unit_exit_value(const dtb_board *b, const half *hf, const man_exit *x,
                                            const dtb_pos *p)
{
    uint64_t r;
    if (hf->exf) {
        const dtb_index_fast *f = hf->exf;
        const int shift = 64 - b->squares;
        const uint64_t fwk = dtb_reverse64((uint64_t)p->kings[DTB_BLACK]) >> shift;
        const uint64_t fbk = dtb_reverse64((uint64_t)p->kings[DTB_WHITE]) >> shift;
        r = dtb_index_rank64_(fwk, f->wk, x->free) * f->nbk_count +
            dtb_index_rank64_(fbk, f->bk, x->free & ~fwk);
    } else {
        r = dtb_index_kings_of(x->ix, x->men, dtb_bb_reverse(b, p->kings[DTB_BLACK]),
                               dtb_bb_reverse(b, p->kings[DTB_WHITE]));
    }
    return x->values[x->base + r];
}

/* Steps p (a position of half h) to the next placement of the kings in index order. */
static inline void next_kings(const unit *u, int h, dtb_pos *p)
{
    const half *hf = &u->h[h];
    const dtb_index_fast *f = u->fx[h];
    bool more;
    if (f) {
        uint64_t wk = (uint64_t)p->kings[DTB_WHITE], bk = (uint64_t)p->kings[DTB_BLACK];
        more = dtb_index_fast_kings_next(f, (uint64_t)hf->men, &wk, &bk);
        p->kings[DTB_WHITE] = wk;
        p->kings[DTB_BLACK] = bk;
    } else {
        more = dtb_index_kings_next(hf->t->index, hf->men, &p->kings[DTB_WHITE], &p->kings[DTB_BLACK]);
    }
    assert(more);
    (void)more;
}

/* A unit this large is shared by all threads when its level has too few units to keep every
 * thread busy: kings-only materials are a single unit. Smaller ones cost more in barriers.
 * Units of 2^20 positions and more were once always shared (their bucketed updates beat one
 * thread's scattered ones on international's short wins), but a shared unit waits at barriers
 * on each of its levels, and english 7- and 8-piece units have 250 and more: two threads
 * sharing them spent most of their time waiting (docs/MEASUREMENTS.md, "English 8 pieces").
 * Now every size is shared only in levels of few units. */
enum { SHARED_UNIT_MIN = 1 << 15 };

typedef struct work {
    uint64_t block;  /* block of m */
    uint64_t fblock; /* the flipped block in the flipped material */
    int adv;
} work;

/* A block's advancement in one byte (at most 16 men of 11 rows: 176), or this for a block of a
 * self-flip material whose unit is listed from its other block. */
enum { NOT_A_UNIT = DTB_SOLVE_LEVEL_TOP };

/* Units are listed (work items, 24 bytes) only where they are large enough to be shared by the
 * threads; smaller ones are found level by level in the byte of advancement per block: men-only
 * materials have a block per position, 1.2e7 at 5 pieces, and a list of them was the largest
 * working memory of a 2..5 build. */
static inline bool units_listed(uint64_t block_size) { return block_size >= SHARED_UNIT_MIN; }

/* Adds a thread's solved positions to the pair's count and reports it (from any thread). */
enum { PROGRESS_STEP = 1 << 20 };

/* ---- in solve_unit.c ---------------------------------------------------------------------- */

/* Appends id to q, growing it; false when out of memory. */
bool dtb_unit_bucket_add(bucket *q, uint32_t id);

/* Queues local id at level (a DTW) in the lane; beyond DTB_MAX_DTW sets ln->overflow, out of
 * memory ln->nomem. */
void dtb_unit_push(lane *ln, int level, uint32_t id);

/* The position of local id (white to move, in its half's orientation). */
void dtb_unit_local_pos(const unit *u, uint64_t id, dtb_pos *p);

/* Whether black has one piece in material m: then whichever capture white makes takes it, and
 * a capture position is a win in 1 without its list. */
bool dtb_unit_black_is_lone(const dtb_material *m);

/* The exact value of a position whose moves all leave its unit, from the values they reach
 * (at[0..n); none: lost in 0): capture positions, and every position of a kingless pair. Sets
 * *overflow when the distance is beyond DTB_MAX_DTW. */
dtb_wvalue dtb_unit_exits_value(const dtb_solved *s, const dtb_value *const *at, int n, bool *overflow);

/* Decides and stores the batch's capture positions in t; false when a value is beyond
 * DTB_MAX_DTW or its long-list entry could not be stored. Empties the batch. */
bool dtb_unit_flush_captures(const dtb_solved *s, dtb_solved_table *t, capture_batch *cb);

/* The in-unit predecessors of local id into pids (quiet positions whose king move reaches it);
 * returns how many. */
int dtb_unit_predecessors(const unit *u, uint64_t id, uint64_t pids[DTB_MAX_MOVES]);

/* Counts decided exact value v at index idx into st (wins, losses, the longest win at its
 * smallest index: the same whatever the order of the calls). */
void dtb_unit_count_result(dtb_solve_stats *st, uint64_t idx, dtb_wvalue v);

/* Sets every value of the unit to a draw. */
void dtb_unit_clear_values(const unit *u);

/* Halves of unit wk (1 when its block is its own flip). */
int dtb_unit_halves(const work *wk, bool self);

/* The block of ft holding men wm, bm colour-flipped. */
uint64_t dtb_unit_flipped_block(const dtb_board *b, const dtb_solved_table *ft, dtb_bb wm, dtb_bb bm);

/* Unit of block blk of t (ft: the flipped material). */
work dtb_unit_work_of(const dtb_board *b, const dtb_solved_table *t, const dtb_solved_table *ft,
                      uint64_t blk);

void dtb_unit_merge_stats(dtb_solve_stats *into, const dtb_solve_stats *from);
void dtb_unit_stats_reset(dtb_solve_stats *st);

/* Prepares u (its board, registry, K, nodes and index set by the caller) for unit wk. */
void dtb_unit_setup(unit *u, const work *wk, dtb_solved_table *t, dtb_solved_table *ft, bool self);

/* Adds *pending positions to *done and reports them (one caller at a time). */
void dtb_unit_report_progress(dtb_solve_progress progress, void *user, uint64_t *done,
                              uint64_t *pending, uint64_t total);

/* Whether any lane ran out of memory or past DTB_MAX_DTW. */
bool dtb_unit_lanes_failed(const lane *lanes, int n);

/* ---- the states ----------------------------------------------------------------------------- */

/* The node solve of unit u by one thread (solve_node.c). */
void dtb_node_solve_unit(const unit *u, lane *ln);

/* The node solve of one large unit u by all nlanes threads together (solve_node.c). */
void dtb_node_solve_unit_shared(const unit *u, lane *lanes, int nlanes);

/* The kingless solve of the units of advancement a (adv[blk] == a, about count of them) among
 * blocks b0..b1-1 (solve_kingless.c); returns how many positions that was. */
uint64_t dtb_kingless_solve(const dtb_solved *s, const uint8_t *adv, uint64_t b0, uint64_t b1,
                            int a, uint64_t count, dtb_solved_table *t, dtb_solved_table *ft,
                            bool self, lane *lanes);

/* dtb_solve_pair of a kings-only pair, lean (solve_lean.c). */
dtb_status dtb_lean_solve_pair(dtb_solved *s, dtb_material m, dtb_solve_stats stats[2],
                               dtb_solve_progress progress, void *user, dtb_error *e);

#endif
