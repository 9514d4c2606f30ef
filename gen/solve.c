/* Retrograde analysis with successor counters, one unit at a time.
 *
 * A unit is a block of material m (one men placement, white to move) together with the block
 * of the flipped material that holds the same placement with colours swapped: a white king
 * move from one half lands, after the flip, in the other half, so king moves never leave the
 * unit. Every other move (man move, promotion, capture) is an exit into data solved earlier:
 * a man move advances the men, so units are solved in decreasing order of men advancement and
 * units of equal advancement are independent (solved in parallel, each by one thread, so the
 * result does not depend on the thread count).
 *
 * Inside a unit, positions are resolved level by level (level = DTW in plies), like a
 * breadth-first search from the ends of the game:
 *   - win at d: some successor is a loss at d-1 (the first such level is the DTW);
 *   - loss at d: every successor is a win, the longest at d-1;
 *   - whatever is never resolved is a draw.
 * Exits are known from the start; in-unit successors report back when they resolve, through
 * predecessor generation (un-moving a king) and a counter of unresolved successors.
 *
 * Kingless pairs skip the units: a block is one position with no in-unit move, so its value is
 * the best of its exits' (solve_kingless).
 */
#include "solve.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "hugemem.h"
#include "movegen.h"

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
    factbuf fx;   /* what this lane's resolved positions tell predecessors (shared units) */
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
} unit;

static int other(const unit *u, int h) { return u->nhalves == 1 ? h : 1 - h; }

/* The half of local id and its rank there: ids run over at most two halves of K, so a compare
 * does what a division by K would (a 64-bit division several times per position). */
static inline int half_of(const unit *u, uint64_t id) { return id >= u->K; }
static inline uint64_t in_half(const unit *u, uint64_t id) { return id >= u->K ? id - u->K : id; }

static void push(lane *ln, int level, uint32_t id)
{
    if (level > DTB_MAX_DTW) {
        ln->overflow = true;
        return;
    }
    bucket *q = &ln->q[level];
    if (q->n == q->cap) {
        const size_t cap = q->cap ? 2 * q->cap : 1024;
        uint32_t *ids = realloc(q->ids, cap * sizeof *ids);
        if (!ids) {
            ln->nomem = true;
            return;
        }
        q->ids = ids;
        q->cap = cap;
    }
    q->ids[q->n++] = id;
    if (level > ln->top)
        ln->top = level;
}

/* The position of local id (white to move, in its half's orientation). */
static void local_pos(const unit *u, uint64_t id, dtb_pos *p)
{
    const half *hf = &u->h[half_of(u, id)];
    p->men[DTB_WHITE] = hf->wmen;
    p->men[DTB_BLACK] = hf->bmen;
    p->side = DTB_WHITE;
    dtb_index_kings_at(hf->t->index, hf->men, in_half(u, id), &p->kings[DTB_WHITE], &p->kings[DTB_BLACK]);
}

/* How good a successor's value v (for the opponent, to move there) is for the side moving
 * there, as one number: exits the opponent loses above the draw (127), the shorter the win the
 * higher (128..255); exits it wins below, the longer the loss the higher (0..126). */
static inline int exit_key(dtb_value v)
{
    const int x = v;
    return x >= 128 ? 383 - x : (x + 127) & 127;
}

/* fold_exits when the best exit is an escape byte (key 126: every exit an opponent's win, the
 * longest at 253 plies or beyond; key 128: every winning exit a loss at 254 or beyond): the
 * exact distances of the escapes decide. Rare: out of line. */
static __attribute__((noinline)) void fold_long(const dtb_solved *s, const dtb_value *const *at,
                                                int n, int best, int *wincand, int *lossmax)
{
    const dtb_value esc = best == 128 ? DTB_VALUE_LOSS_ESCAPE : DTB_VALUE_WIN_ESCAPE;
    int shortest = INT_MAX, longest = -1;
    for (int i = 0; i < n; i++)
        if (*at[i] == esc) {
            const int d = dtb_wvalue_dtw(dtb_solved_exact(s, at[i]));
            shortest = d < shortest ? d : shortest;
            longest = d > longest ? d : longest;
        }
    *wincand = best == 128 ? shortest + 1 : NO_WIN_YET;
    *lossmax = best == 128 ? -1 : longest;
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
        fold_long(s, at, n, best, wincand, lossmax);
        return;
    }
    *wincand = best >= 128 ? 511 - 2 * best : NO_WIN_YET; /* dtw(loss 383 - best) + 1 */
    *lossmax = best <= 126 ? 2 * best + 1 : -1; /* dtw(win best + 1); -1 stays -1 */
}

/* Whether black has one piece in material m: then whichever capture white makes takes it, and
 * a capture position is a win in 1 without its list (the solver and the loader both use it). */
static bool black_is_lone(const dtb_material *m)
{
    return m->kings[DTB_BLACK] + m->men[DTB_BLACK] == 1;
}

static void capture_bits_flush(capture_bits *cb)
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

/* The value of a position whose moves all leave its unit, from the values they reach (at[0..n);
 * none: lost in 0), as flush_batch and mark_resolved decide it: capture positions, and every
 * position of a kingless pair. Sets *overflow when the distance is beyond DTB_MAX_DTW. */
static dtb_wvalue exits_value(const dtb_solved *s, const dtb_value *const *at, int n, bool *overflow)
{
    int wincand, lossmax;
    bool drawexit;
    fold_exits(s, at, n, &wincand, &lossmax, &drawexit);
    if (wincand != NO_WIN_YET) {
        *overflow |= wincand > DTB_MAX_DTW;
        return dtb_wvalue_win(wincand);
    }
    if (drawexit)
        return DTB_WVALUE_DRAW;
    *overflow |= lossmax + 1 > DTB_MAX_DTW;
    return dtb_wvalue_loss(lossmax + 1);
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

/* Decides and stores the batch's capture positions; false when a value is beyond DTB_MAX_DTW or
 * its long-list entry could not be stored. */
static bool flush_captures(const dtb_solved *s, dtb_solved_table *t, capture_batch *cb)
{
    bool ok = true;
    for (int k = 0; k < cb->npos; k++) {
        bool overflow = false;
        const dtb_wvalue v = exits_value(s, &cb->exit[cb->first[k]], cb->n[k], &overflow);
        ok &= !overflow && dtb_solved_store_value(s, t, cb->at[k], v);
    }
    cb->npos = cb->nexit = 0;
    return ok;
}

bool dtb_solve_block_captures(const dtb_solved *s, dtb_solved_table *t, uint64_t blk)
{
    bool ok = true;
    const dtb_board *b = dtb_solved_board(s);
    const uint64_t K = dtb_index_block_size(t->index), first = blk * K;
    const bool lone = black_is_lone(&t->material);
    dtb_pos p = {.side = DTB_WHITE};
    dtb_index_block_men(t->index, blk, &p.men[DTB_WHITE], &p.men[DTB_BLACK]);
    const dtb_bb men = p.men[DTB_WHITE] | p.men[DTB_BLACK];
    dtb_index_kings_at(t->index, men, 0, &p.kings[DTB_WHITE], &p.kings[DTB_BLACK]);
    capture_batch cb;
    cb.npos = cb.nexit = 0;
    capture_bits bits = {NULL, 0};
    for (uint64_t r = 0; r < K; r++) {
        if (r > 0) {
            const bool more = dtb_index_kings_next(t->index, men, &p.kings[DTB_WHITE], &p.kings[DTB_BLACK]);
            assert(more);
            (void)more;
        }
        const uint64_t i = first + r;
        dtb_movelist ml;
        if (lone) {
            if (!dtb_has_capture(b, &p))
                continue;
            t->values[i] = dtb_value_win(1);
        } else {
            const dtb_status st = dtb_generate_captures(b, &p, &ml);
            assert(st == DTB_OK);
            (void)st;
            if (ml.count == 0)
                continue;
            if (cb.nexit + ml.count > EXITS_CAP)
                ok &= flush_captures(s, t, &cb);
            cb.at[cb.npos] = i;
            cb.first[cb.npos] = (uint16_t)cb.nexit;
            cb.n[cb.npos] = (uint16_t)ml.count;
            for (int m = 0; m < ml.count; m++) {
                const dtb_value *v = dtb_solved_value_after(s, &p, &ml.moves[m], &cb.slot[cb.nexit]);
                __builtin_prefetch(v);
                cb.exit[cb.nexit++] = v;
            }
            if (++cb.npos == BATCH)
                ok &= flush_captures(s, t, &cb);
        }
        capture_bits_set(&bits, t->captures, i);
    }
    ok &= flush_captures(s, t, &cb);
    capture_bits_flush(&bits);
    return ok;
}

static void add_exit(batch *bt, const dtb_value *v)
{
    __builtin_prefetch(v);
    bt->exit[bt->nexit++] = v;
}

/* Records what the gathered positions' moves tell: folds exit values into wincand / lossmax /
 * draw flag, and queues a position when it is already decided. Writes only the nodes of the
 * batch's positions, so positions can be initialised in parallel. */
static void flush_batch(const unit *u, lane *ln, batch *bt)
{
    for (int k = 0; k < bt->npos; k++) {
        const uint32_t id = bt->pos[k].id;
        const bool capture = bt->pos[k].capture;
        const int cnt = bt->pos[k].cnt;
        int wincand, lossmax;
        bool drawexit;
        fold_exits(u->s, &bt->exit[bt->pos[k].first], bt->pos[k].n, &wincand, &lossmax, &drawexit);
        if (wincand != NO_WIN_YET && wincand > DTB_MAX_DTW)
            ln->overflow = true;
        u->n[id] = (node){.cnt = (unsigned)cnt,
                          .wincand = (unsigned)(wincand > DTB_MAX_DTW ? NO_WIN : wincand),
                          .lossmax = (unsigned)(lossmax + 1),
                          .flags = (unsigned)((capture ? F_CAPTURE : 0) | (drawexit ? F_DRAWEXIT : 0))};
        if (capture) {
            const int h = half_of(u, id);
            capture_bits_set(&ln->capbits, u->h[h].t->captures, u->h[h].base + in_half(u, id));
        }
        if (wincand != NO_WIN_YET)
            push(ln, wincand, id);
        else if (cnt == 0 && !drawexit)
            push(ln, lossmax + 1, id);
    }
    bt->npos = bt->nexit = 0;
}

/* One diagonal step of a set in words (boards of up to 64 squares; dtb_board_step): NW and NE
 * steps go to lower squares, SW and SE to higher ones. */
static inline uint64_t step64(const dtb_board *b, uint64_t s, int d)
{
    const uint64_t m0 = (uint64_t)b->step_from[d][0], m1 = (uint64_t)b->step_from[d][1];
    if (d < DTB_SW)
        return (s & m0) >> -b->step_shift[d][0] | (s & m1) >> -b->step_shift[d][1];
    return (s & m0) << b->step_shift[d][0] | (s & m1) << b->step_shift[d][1];
}

/* Whether a white man of the half may jump a black king on one of the squares of kings (a
 * subset of over_free): a white man before it, in a direction men capture in, and the square
 * beyond free (occ: every piece). */
static bool man_takes_king(const dtb_board *b, const half *hf, dtb_bb kings, dtb_bb occ)
{
    const bool backward = b->variant->men_capture_backward;
    while (kings) {
        const int s = dtb_bb_pop(&kings);
        for (int d = 0; d < DTB_DIRS; d++) {
            if (!backward && d != dtb_forward_dir(DTB_WHITE, 0) && d != dtb_forward_dir(DTB_WHITE, 1))
                continue;
            const int m = b->next[s][d ^ 3], l = b->next[s][d];
            if (m >= 0 && l >= 0 && dtb_bb_has(hf->wmen, m) && !dtb_bb_has(occ, l))
                return true;
        }
    }
    return false;
}

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
    const bool mc = ((uint64_t)hf->land_men & ~kings) || (over && man_takes_king(b, hf, over, occ));
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
    const bool mc = (hf->land_men & ~kings) || (over && man_takes_king(b, hf, over, occ));
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

/* Gathers what the moves of p (local id) lead to: counts in-unit successors (quiet king moves)
 * and lists where the exits' values are. Quiet positions (the most) skip the move list: king
 * moves are only counted, man moves made directly. */
static void init_position(const unit *u, lane *ln, batch *bt, uint32_t id, const dtb_pos *restrict p)
{
    const dtb_board *b = u->b;
    int cnt = 0;
    dtb_movelist ml;
    const half *hf = &u->h[half_of(u, id)];
    dtb_status st = DTB_OK;
    bool king_takes_lone = false; /* a king can capture black's only piece: no list needed */
    ml.count = 0;
    if (u->quick_capture) {
        dtb_bb men;
        const bool kc = b->squares > 64
                            ? may_capture_wide(b, hf, p->kings[DTB_WHITE], p->kings[DTB_BLACK], &men)
                            : may_capture(b, hf, (uint64_t)p->kings[DTB_WHITE], (uint64_t)p->kings[DTB_BLACK], &men);
        king_takes_lone = kc && hf->lone;
        if (!king_takes_lone)
            st = dtb_generate_captures_by(b, p, men, kc, &ml);
    } else {
        st = dtb_generate_captures(b, p, &ml);
    }
    assert(st == DTB_OK);
    (void)st;
    const bool capture = king_takes_lone || ml.count > 0;
    int first;
    if (capture) {
        if (bt->nexit + ml.count > EXITS_CAP)
            flush_batch(u, ln, bt);
        first = bt->nexit;
        if (hf->lone) { /* every capture takes black's last piece: a win in 1, whichever */
            static const dtb_value no_piece_left = DTB_VALUE_LOST;
            add_exit(bt, &no_piece_left);
        } else {
            for (int i = 0; i < ml.count; i++)
                add_exit(bt, dtb_solved_value_after(u->s, p, &ml.moves[i], &bt->slot[bt->nexit]));
        }
    } else {
        if (bt->nexit + QUIET_EXITS_MAX > EXITS_CAP)
            flush_batch(u, ln, bt);
        first = bt->nexit;
        const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
        if (u->quick_capture && b->squares <= 64) { /* words, inline: a king's reach is a few masked rays */
            const uint64_t occ = (uint64_t)b->all & ~(uint64_t)empty;
            for (uint64_t k = (uint64_t)p->kings[DTB_WHITE]; k; k &= k - 1)
                cnt += __builtin_popcountll(king_reach64(b, __builtin_ctzll(k), occ, true));
        } else {
            cnt = dtb_count_king_steps(b, p->kings[DTB_WHITE], empty);
        }
        if (hf->nex && hf->exf) { /* in words: the kings as the flipped target blocks see them */
            const dtb_index_fast *f = hf->exf;
            const int shift = 64 - b->squares;
            const uint64_t fwk = dtb_reverse64((uint64_t)p->kings[DTB_BLACK]) >> shift;
            const uint64_t fbk = dtb_reverse64((uint64_t)p->kings[DTB_WHITE]) >> shift;
            const uint64_t empty64 = (uint64_t)empty;
            for (int i = 0; i < hf->nex; i++) {
                const man_exit *x = &hf->ex[i];
                if (!((uint64_t)x->to & empty64))
                    continue;
                const uint64_t r = dtb_index_rank64_(fwk, f->wk, x->free) * f->nbk_count +
                                   dtb_index_rank64_(fbk, f->bk, x->free & ~fwk);
                add_exit(bt, &x->values[x->base + r]);
            }
        } else if (hf->nex) { /* kings as the flipped target blocks see them */
            const dtb_bb fwk = dtb_bb_reverse(b, p->kings[DTB_BLACK]);
            const dtb_bb fbk = dtb_bb_reverse(b, p->kings[DTB_WHITE]);
            for (int i = 0; i < hf->nex; i++) {
                const man_exit *x = &hf->ex[i];
                if (!(x->to & empty))
                    continue;
                const uint64_t r = dtb_index_kings_of(x->ix, x->men, fwk, fbk);
                add_exit(bt, &x->values[x->base + r]);
            }
        }
        for (int k = 0; k < 2; k++) {
            const int d = dtb_forward_dir(DTB_WHITE, k);
            dtb_bb to = hf->promo_to[k] & empty;
            while (to) { /* a promotion (only promoting men step here) */
                const int t = dtb_bb_pop(&to);
                assert(dtb_bb_has(b->promotion[DTB_WHITE], t));
                const dtb_move mv = {.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                     .promotes = true};
                add_exit(bt, dtb_solved_value_after(u->s, p, &mv, &bt->slot[bt->nexit]));
            }
        }
        assert(bt->nexit - first <= QUIET_EXITS_MAX);
    }
    assert(cnt <= 255);
    bt->pos[bt->npos].id = id;
    bt->pos[bt->npos].first = (uint16_t)first;
    bt->pos[bt->npos].n = (uint16_t)(bt->nexit - first);
    bt->pos[bt->npos].cnt = (uint8_t)cnt;
    bt->pos[bt->npos].capture = capture;
    if (++bt->npos == BATCH)
        flush_batch(u, ln, bt);
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

/* Initialises positions from..to-1 of the unit. */
static void init_range(const unit *u, lane *ln, uint32_t from, uint32_t to)
{
    dtb_pos p;
    for (uint32_t id = from; id < to; id++) {
        /* The kings step to the next rank, except at the start and where a half begins. */
        if (id == from || id == 0 || id == u->K) {
            local_pos(u, id, &p);
        } else {
            next_kings(u, half_of(u, id), &p);
        }
        init_position(u, ln, &ln->bt, id, &p);
    }
    flush_batch(u, ln, &ln->bt);
    capture_bits_flush(&ln->capbits);
}

/* Stores a win or loss at d for local id; false when its long-list entry could not be stored. */
static bool set_value(const unit *u, uint64_t id, bool win, int d)
{
    const int h = half_of(u, id);
    return dtb_solved_store(u->s, u->h[h].t, u->h[h].base + in_half(u, id), win, d);
}

/* A successor of the node resolved as a win (for its side) at level d: one move fewer to hear
 * from, and the longest such win so far. Returns the level to queue the node at (a loss), -1 if
 * none. Branch-free up to that rare queueing: half or more of these facts reach nodes that do
 * not listen (capture positions and resolved ones) in no predictable pattern, so a branch on
 * it would often be mispredicted. */
static inline int learn_win(node *nd, int d)
{
    const node o = *nd;
    const unsigned live = !(o.flags & F_DEAF), all = 0u - live;
    assert(!live || o.cnt > 0);
    const unsigned lm = o.lossmax;
    const unsigned longer = (unsigned)d + 1 > lm ? (unsigned)d + 1 : lm;
    node w = o; /* o itself when the node does not listen: selects by mask, not by branch */
    w.cnt = (o.cnt - live) & 255u;
    w.lossmax = (lm + ((longer - lm) & all)) & 1023u;
    *nd = w;
    /* a loss now: listening, no move left unheard, no win known, no drawing exit */
    const bool lost = (w.cnt | (w.flags & (F_DEAF | F_DRAWEXIT)) | (w.wincand ^ NO_WIN)) == 0;
    return lost ? (int)w.lossmax : -1; /* lossmax is biased by one */
}

/* A successor resolved as a loss at level d: a win at d+1 unless one as short is known.
 * Returns the level to queue the node at, -1 if none. */
static inline int learn_loss(node *nd, int d)
{
    if ((nd->flags & F_DEAF) || d + 1 >= (int)nd->wincand)
        return -1;
    nd->wincand = (unsigned)(d + 1 > DTB_MAX_DTW ? NO_WIN : d + 1);
    return d + 1;
}

/* What a successor resolved at level d (a win for its side when is_win) tells the node. */
static inline int learn(node *nd, int d, bool is_win)
{
    return is_win ? learn_win(nd, d) : learn_loss(nd, d);
}

/* predecessors in words, for halves with an inline index (f: the predecessor half's). The ranks
 * of the placements one white king's retrograde moves reach are computed from terms summed once
 * per king, as dtb_index_kings_of_moved does for the white kings (core/index.c); the black
 * kings likewise: the white king's square x counts below black king i (the i-th from the bottom,
 * d_i free squares below it with x empty) exactly when x is below it, so its term is
 * C(d_i, i + 1) for black kings under x and C(d_i - 1, i + 1) above: two sums split at the
 * number of black kings under x. */
static int predecessors_narrow(const unit *u, const dtb_index_fast *f, int h, int ph, uint64_t id,
                               uint64_t pids[DTB_MAX_MOVES])
{
    const dtb_board *b = u->b;
    const half *hf = &u->h[h];
    dtb_bb wkb, bkb;
    dtb_index_kings_at(hf->t->index, hf->men, in_half(u, id), &wkb, &bkb);
    /* black to move after the flip, in the predecessor's orientation: its white kings moved */
    const int shift = 64 - b->squares;
    const uint64_t fwk = dtb_reverse64((uint64_t)bkb) >> shift;
    const uint64_t fbk = dtb_reverse64((uint64_t)wkb) >> shift;
    const uint64_t men = (uint64_t)u->h[ph].men, empty = f->all & ~men, occ = men | fwk | fbk;
    const uint64_t land = u->h[ph].land_men;
    const bool fly = b->variant->kings_fly;
    const uint64_t (*const binom)[64] = dtb_index_binom64;
    const uint64_t base = (uint64_t)ph * u->K, nbk = f->nbk_count;
    const int nw = f->wk - 1, nb = f->bk; /* white kings besides the moving one; black kings */
    int np = 0;
    for (uint64_t kings = fwk; kings; kings &= kings - 1) {
        const int y = __builtin_ctzll(kings);
        const uint64_t rest = fwk ^ (1ull << y);
        /* A white man's jump over a black man whose landing square no other king holds is a
         * capture in every predecessor but the one whose king stands on that square: the rest
         * are capture positions, which learn nothing. (Half of all facts go to capture
         * positions; this spares the 7-13% that a man's jump makes so, at the cost of a mask.) */
        const uint64_t open = land & ~(rest | fbk);
        if (open & (open - 1))
            continue;
        uint64_t to = king_reach64(b, y, occ, fly);
        if (open)
            to &= open;
        if (!to)
            continue;
        /* white: a[m] the terms of rest's m lowest kings in place, c[m] those above, each one
         * place up (the moved king is under them) */
        uint64_t a[DTB_INDEX_KMAX64 + 1], c[DTB_INDEX_KMAX64 + 1];
        {
            int cnt[DTB_INDEX_KMAX64];
            uint64_t s = rest;
            for (int j = 0; j < nw; j++, s &= s - 1)
                cnt[j] = __builtin_popcountll(empty & ((s & -s) - 1));
            a[0] = 0;
            for (int m = 1; m <= nw; m++)
                a[m] = a[m - 1] + binom[m][cnt[m - 1]];
            c[nw] = 0;
            for (int m = nw - 1; m >= 0; m--)
                c[m] = c[m + 1] + binom[m + 2][cnt[m]];
        }
        /* black: p[m] the terms of the m lowest black kings (x above them), q[m] of the others
         * (x below them: one free square fewer) */
        uint64_t pb[DTB_INDEX_KMAX64 + 1], qb[DTB_INDEX_KMAX64 + 1];
        {
            const uint64_t free = empty & ~rest;
            int cnt[DTB_INDEX_KMAX64];
            uint64_t s = fbk;
            for (int i = 0; i < nb; i++, s &= s - 1)
                cnt[i] = __builtin_popcountll(free & ((s & -s) - 1));
            pb[0] = 0;
            for (int i = 0; i < nb; i++)
                pb[i + 1] = pb[i] + binom[i + 1][cnt[i]];
            qb[nb] = 0;
            for (int i = nb - 1; i >= 0; i--)
                qb[i] = qb[i + 1] + binom[i + 1][cnt[i] > 0 ? cnt[i] - 1 : 0];
        }
        for (; to; to &= to - 1) {
            const uint64_t below = (to & -to) - 1;
            const int m = __builtin_popcountll(rest & below), mb = __builtin_popcountll(fbk & below);
            const uint64_t rw = a[m] + binom[m + 1][__builtin_popcountll(empty & below)] + c[m];
            assert(np < DTB_MAX_MOVES);
            pids[np++] = base + rw * nbk + pb[mb] + qb[mb];
        }
    }
    return np;
}

/* The in-unit predecessors of id into pids: a predecessor un-moves one white king of the
 * flipped position along an empty ray; it counts only when it has no capture (learn_win and
 * learn_loss skip capture positions: there the king move was not legal). Returns how many. */
static int predecessors(const unit *u, uint64_t id, uint64_t pids[DTB_MAX_MOVES])
{
    const int h = half_of(u, id), ph = other(u, h);
    if (u->h[ph].t->material.kings[DTB_WHITE] == 0) /* no king moved: no need to unrank id */
        return 0;
    if (u->fx[ph] && u->fx[ph]->wk <= DTB_INDEX_KMAX64 && u->fx[ph]->bk <= DTB_INDEX_KMAX64)
        return predecessors_narrow(u, u->fx[ph], h, ph, id, pids);
    const dtb_board *b = u->b;
    dtb_pos q, qb;
    local_pos(u, id, &q);
    dtb_pos_flip(b, &q, &qb); /* black to move, in the predecessor's orientation */
    const dtb_bb occ = dtb_pos_occupied(&qb);
    const bool fly = b->variant->kings_fly;
    /* Per white king, every square it can have come from, then all their ranks in one call. */
    const dtb_index *ix = u->h[ph].t->index;
    const uint64_t base = (uint64_t)ph * u->K;
    int np = 0;
    const dtb_bb land = u->h[ph].land_men;
    dtb_bb kings = qb.kings[DTB_WHITE];
    while (kings) {
        const int y = dtb_bb_pop(&kings);
        const dtb_bb rest = qb.kings[DTB_WHITE] ^ dtb_bb_bit(y);
        /* capture positions learn nothing: as in predecessors_narrow */
        const dtb_bb open = land & ~(rest | qb.kings[DTB_BLACK]);
        if (open & (open - 1))
            continue;
        int to[DTB_MAX_MOVES], nt = 0;
        for (int dir = 0; dir < DTB_DIRS; dir++)
            for (int x = b->next[y][dir]; x >= 0 && !dtb_bb_has(occ, x); x = fly ? b->next[x][dir] : -1) {
                assert(np + nt < DTB_MAX_MOVES);
                if (!open || dtb_bb_has(open, x))
                    to[nt++] = x;
            }
        if (!nt)
            continue;
        uint64_t rank[DTB_MAX_MOVES];
        dtb_index_kings_of_moved(ix, u->h[ph].men, rest, qb.kings[DTB_BLACK], nt, to, rank);
        for (int i = 0; i < nt; i++)
            pids[np++] = base + rank[i];
    }
    return np;
}

/* Tells the in-unit predecessors pids[0..np) of a position resolved at level d (win or loss)
 * about it, at once (their nodes prefetched by the caller). The result does not depend on the
 * order in which resolved positions are propagated: a node's fate depends only on the set of
 * facts it learns, and every fact of level d is learnt before level d+1 starts. */
static void propagate(const unit *u, lane *ln, const uint64_t *pids, int np, int d, bool is_win)
{
    node *const n = u->n;
    for (int i = 0; i < np; i++) {
        const int level = learn(&n[pids[i]], d, is_win);
        if (level >= 0)
            push(ln, level, (uint32_t)pids[i]);
    }
}

/* Counts a decided exact value v at index idx of its table: wins, losses and the longest win
 * (the smallest index among equals, so the stats do not depend on the order of the calls). */
static void count_result(dtb_solve_stats *st, uint64_t idx, dtb_wvalue v)
{
    if (dtb_wvalue_is_win(v)) {
        st->wins++;
        const int d = dtb_wvalue_dtw(v);
        if (d > st->longest_win || (d == st->longest_win && idx < st->longest_win_at)) {
            st->longest_win = d;
            st->longest_win_at = idx;
        }
    } else if (dtb_wvalue_is_loss(v)) {
        st->losses++;
    }
}

static void note_result(const unit *u, lane *ln, uint32_t id, dtb_wvalue v)
{
    const int h = half_of(u, id);
    count_result(&ln->st[u->h[h].slot], u->h[h].base + in_half(u, id), v);
}

/* Marks a queued id resolved at level d and sets its value; *win tells how. A node can be
 * queued twice (as a loss, then as an earlier win); only the first visit counts: false on the
 * second. */
static bool mark_resolved(const unit *u, lane *ln, uint32_t id, int d, bool *win)
{
    node *nd = &u->n[id], old;
    if (u->shared) { /* other threads may take the same id from their queue */
        node nw;
        __atomic_load(nd, &old, __ATOMIC_RELAXED);
        do {
            if (old.flags & F_RESOLVED)
                return false;
            nw = old;
            nw.flags |= F_RESOLVED;
        } while (!__atomic_compare_exchange(nd, &old, &nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    } else {
        old = *nd;
        if (old.flags & F_RESOLVED)
            return false;
        nd->flags |= F_RESOLVED;
    }
    *win = (int)old.wincand == d;
    assert(*win || old.cnt == 0 || (old.flags & F_CAPTURE));
    if (!set_value(u, id, *win, d))
        ln->nomem = true;
    note_result(u, ln, id, dtb_wvalue_of(*win, d));
    return true;
}

/* Fetches what mark_resolved will touch for id: its node and its value byte (in a unit's
 * queue order both are far apart). */
static inline void prefetch_resolved(const unit *u, uint32_t id)
{
    const half *hf = &u->h[half_of(u, id)];
    __builtin_prefetch(&u->n[id], 1);
    __builtin_prefetch(&hf->t->values[hf->base + in_half(u, id)], 1);
}

/* Resolves the queue's entries from..to-1 (level d) and propagates them, one entry behind: the
 * predecessors of an entry are found and their nodes prefetched before the previous entry's
 * are updated, so the nodes (far apart in a large unit) arrive while there is work to do. */
static void resolve_bucket(const unit *u, lane *ln, const bucket *q, size_t from, size_t to, int d)
{
    uint64_t pids[2][DTB_MAX_MOVES];
    int np[2] = {0, 0}, cur = 0;
    bool win[2] = {false, false};
    for (size_t i = from; i < to; i++) {
        if (i + 16 < to) /* the queue is in no useful order: fetch ahead */
            prefetch_resolved(u, q->ids[i + 16]);
        const int nx = cur ^ 1;
        np[nx] = 0;
        if (mark_resolved(u, ln, q->ids[i], d, &win[nx])) {
            np[nx] = predecessors(u, q->ids[i], pids[nx]);
            for (int k = 0; k < np[nx]; k++)
                __builtin_prefetch(&u->n[pids[nx][k]], 1);
        }
        propagate(u, ln, pids[cur], np[cur], d, win[cur]);
        cur = nx;
    }
    propagate(u, ln, pids[cur], np[cur], d, win[cur]);
}

/* Counts positions, captures and draws once the unit is solved. */
static void count_unit(const unit *u, lane *ln, uint32_t from, uint32_t to)
{
    for (uint32_t id = from; id < to; id++) {
        dtb_solve_stats *st = &ln->st[u->h[half_of(u, id)].slot];
        st->positions++;
        if (u->n[id].flags & F_CAPTURE)
            st->captures++;
        if (!(u->n[id].flags & F_RESOLVED))
            st->draws++;
    }
}

static void clear_values(const unit *u)
{
    for (int h = 0; h < u->nhalves; h++)
        memset(u->h[h].t->values + u->h[h].base, DTB_VALUE_DRAW, u->K);
}

/* One thread solves the whole unit. */
static void solve_unit(const unit *u, lane *ln)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    clear_values(u);
    ln->top = -1;
    init_range(u, ln, 0, n);
    for (int d = 0; d <= ln->top && !ln->nomem; d++) {
        bucket *q = &ln->q[d];
        /* q grows only at later levels meanwhile */
        resolve_bucket(u, ln, q, 0, q->n, d);
        q->n = 0;
    }
    count_unit(u, ln, 0, n);
}

/* The highest level any lane has queued, and whether one ran out of memory. */
static void survey(const lane *lanes, int nlanes, int *top, bool *nomem)
{
    for (int l = 0; l < nlanes; l++) {
        *top = *top > lanes[l].top ? *top : lanes[l].top;
        *nomem |= lanes[l].nomem;
    }
}

enum { CHUNK = 4096 }; /* positions or queue entries a thread takes at a time in a shared unit */

static size_t chunks(size_t n) { return (n + CHUNK - 1) / CHUNK; }
static size_t chunk_end(size_t c, size_t n) { return n < (c + 1) * CHUNK ? n : (c + 1) * CHUNK; }

/* Predecessor facts of a shared unit are applied bucket by bucket: 2^16 nodes (256 KB, an L2's
 * worth) per bucket. Resolved positions per round, over all threads: bounds the fact buffers
 * (a resolved position has at most a few dozen predecessors). */
enum { BUCKET_SHIFT = 16, ROUND = 1 << 17 };

/* Queue entries a thread takes at a time while a shared unit resolves a level: levels can be
 * small, and a share much larger than this left one thread waiting for the other. */
enum { GRAIN = 512 };

/* Grain g of the level-d queues of all lanes taken one after the other: *q and its entries
 * from..to-1. */
static void level_grain(const lane *lanes, int d, size_t g, const bucket **q, size_t *from,
                        size_t *to)
{
    for (int l = 0;; l++) {
        const size_t n = lanes[l].q[d].n, ng = (n + GRAIN - 1) / GRAIN;
        if (g < ng) {
            *q = &lanes[l].q[d];
            *from = g * GRAIN;
            *to = n < *from + GRAIN ? n : *from + GRAIN;
            return;
        }
        g -= ng;
    }
}

/* A fact: local id << FACT_SHIFT | level << 1 | win (levels up to DTB_MAX_DTW take 10 bits). */
enum { FACT_SHIFT = 11 };
static uint64_t fact(uint64_t pid, int d, bool win) { return (uint64_t)pid << FACT_SHIFT | (uint64_t)d << 1 | win; }

/* resolve_bucket for a shared unit: resolved positions' predecessor facts go to the lane's fact
 * buffer instead of the nodes. */
static void gather_bucket(const unit *u, lane *ln, const bucket *q, size_t from, size_t to, int d)
{
    factbuf *fx = &ln->fx;
    for (size_t i = from; i < to && !ln->nomem; i++) {
        if (i + 16 < to)
            prefetch_resolved(u, q->ids[i + 16]);
        bool win;
        if (!mark_resolved(u, ln, q->ids[i], d, &win))
            continue;
        if (fx->cap - fx->n < DTB_MAX_MOVES) {
            const size_t cap = fx->cap ? 2 * fx->cap : 1 << 16;
            uint64_t *v = realloc(fx->v, cap * sizeof *v);
            if (!v) {
                ln->nomem = true;
                return;
            }
            fx->v = v;
            fx->cap = cap;
        }
        uint64_t pids[DTB_MAX_MOVES];
        const int np = predecessors(u, q->ids[i], pids);
        for (int k = 0; k < np; k++)
            fx->v[fx->n++] = fact(pids[k], d, win);
    }
}

/* Sorts the lane's facts by bucket (a counting sort: two sequential passes). */
static void sort_facts(lane *ln, size_t nbuckets)
{
    factbuf *fx = &ln->fx;
    if (fx->nbegin < nbuckets + 1) {
        size_t *begin = realloc(fx->begin, (nbuckets + 1) * sizeof *begin);
        if (!begin) { /* no facts from this lane then (apply_bucket skips it); the solve fails */
            free(fx->begin);
            fx->begin = NULL;
            fx->nbegin = 0;
            ln->nomem = true;
            fx->n = 0;
            return;
        }
        fx->begin = begin;
        fx->nbegin = nbuckets + 1;
    }
    if (fx->sorted_cap < fx->cap) {
        uint64_t *sorted = realloc(fx->sorted, fx->cap * sizeof *sorted);
        if (!sorted) {
            ln->nomem = true;
            fx->n = 0;
        } else {
            fx->sorted = sorted;
            fx->sorted_cap = fx->cap;
        }
    }
    size_t *begin = fx->begin;
    memset(begin, 0, (nbuckets + 1) * sizeof *begin);
    for (size_t i = 0; i < fx->n; i++)
        begin[(fx->v[i] >> FACT_SHIFT >> BUCKET_SHIFT) + 1]++;
    for (size_t b = 1; b <= nbuckets; b++)
        begin[b] += begin[b - 1];
    for (size_t i = 0; i < fx->n; i++) /* begin[b] moves to the end of bucket b */
        fx->sorted[begin[fx->v[i] >> FACT_SHIFT >> BUCKET_SHIFT]++] = fx->v[i];
    for (size_t b = nbuckets; b > 0; b--) /* and back to its start */
        begin[b] = begin[b - 1];
    begin[0] = 0;
}

/* Applies every lane's facts for bucket b. Only this thread touches the bucket's nodes now. */
static void apply_bucket(const unit *u, lane *me, const lane *lanes, int nlanes, size_t b)
{
    for (int l = 0; l < nlanes; l++) {
        const factbuf *fx = &lanes[l].fx;
        if (!fx->begin)
            continue;
        const size_t end = fx->begin[b + 1];
        for (size_t i = fx->begin[b]; i < end; i++) {
            if (i + 32 < end) /* a bucket's facts come in no order: fetch ahead */
                __builtin_prefetch(&u->n[fx->sorted[i + 32] >> FACT_SHIFT], 1);
            const uint64_t f = fx->sorted[i];
            const uint32_t pid = (uint32_t)(f >> FACT_SHIFT);
            const int level = learn(&u->n[pid], (int)(f >> 1 & 1023), f & 1);
            if (level >= 0)
                push(me, level, pid);
        }
    }
}

/* All threads solve one (large) unit together, each through its own lane.
 *
 * Such a unit's nodes lie far beyond the CPU caches, and a resolved position's predecessors are
 * spread all over them: updating them at once waited on memory for most of the time. So each
 * level goes in rounds: the threads resolve up to ROUND queued positions and write their
 * predecessors' facts to their own buffers, sort those by bucket (a range of nodes that fits an
 * L2 cache), then apply them bucket by bucket, each bucket by one thread from every buffer: no
 * atomic update, and each bucket's nodes stay in cache while its facts are applied. A level's
 * facts are all applied before the next level starts, which is all the result depends on. */
static void solve_unit_shared(const unit *u, lane *lanes, int nlanes)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    const size_t nbuckets = ((size_t)n >> BUCKET_SHIFT) + 1;
    int top = -1;
    bool nomem = false;
    clear_values(u);
#pragma omp parallel num_threads(nlanes)
    {
        lane *me = &lanes[omp_get_thread_num()];
        me->top = -1;
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < chunks(n); c++)
            init_range(u, me, (uint32_t)(c * CHUNK), (uint32_t)chunk_end(c, n));
#pragma omp single
        survey(lanes, nlanes, &top, &nomem);
        for (int d = 0; d <= top && !nomem; d++) {
            /* Every lane's level-d queue, as one list of grains, in rounds; pushes meanwhile go
             * to later levels. A small level is resolved by one thread directly: barriers and
             * uneven shares would cost more than the work. */
            size_t grains = 0;
            for (int l = 0; l < nlanes; l++)
                grains += (lanes[l].q[d].n + GRAIN - 1) / GRAIN;
            if (grains <= 2) {
#pragma omp single nowait
                for (int l = 0; l < nlanes; l++)
                    resolve_bucket(u, me, &lanes[l].q[d], 0, lanes[l].q[d].n, d);
            } else {
                for (size_t g0 = 0; g0 < grains; g0 += ROUND / GRAIN) {
                    const size_t g1 = grains - g0 < ROUND / GRAIN ? grains : g0 + ROUND / GRAIN;
#pragma omp for schedule(dynamic, 1)
                    for (size_t g = g0; g < g1; g++) {
                        const bucket *q;
                        size_t from, to;
                        level_grain(lanes, d, g, &q, &from, &to);
                        gather_bucket(u, me, q, from, to, d);
                    }
                    sort_facts(me, nbuckets);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
                    for (size_t b = 0; b < nbuckets; b++)
                        apply_bucket(u, me, lanes, nlanes, b);
                    me->fx.n = 0; /* after the loop's barrier: nobody reads it any more */
                }
            }
#pragma omp barrier
#pragma omp single
            {
                for (int l = 0; l < nlanes; l++)
                    lanes[l].q[d].n = 0;
                survey(lanes, nlanes, &top, &nomem);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < chunks(n); c++)
            count_unit(u, me, (uint32_t)(c * CHUNK), (uint32_t)chunk_end(c, n));
    }
}

/* Lists the non-promoting white man moves of a half (over the men alone; a king on the target
 * square is checked per position) with their target blocks in the flipped material `to`;
 * `flipped` is the unit's other half, whose men are this half's reversed. */
static void man_exits(const dtb_board *b, half *hf, const half *flipped, const dtb_solved_table *to)
{
    hf->nex = 0;
    hf->promo_to[0] = hf->promo_to[1] = 0;
    const dtb_bb empty = b->all & ~hf->men;
    /* may_capture's masks: every first jump of a white man that the men allow (predecessors'
     * too) */
    hf->land_men = hf->over_free = 0;
    const bool backward = b->variant->men_capture_backward;
    for (dtb_bb wm = hf->wmen; wm;) {
        const int m = dtb_bb_pop(&wm);
        for (int d = 0; d < DTB_DIRS; d++) {
            if (!backward && d != dtb_forward_dir(DTB_WHITE, 0) && d != dtb_forward_dir(DTB_WHITE, 1))
                continue;
            const int o = b->next[m][d], l = o >= 0 ? b->next[o][d] : -1;
            if (l < 0 || dtb_bb_has(hf->men, l))
                continue;
            if (dtb_bb_has(hf->bmen, o))
                hf->land_men |= dtb_bb_bit(l);
            else if (!dtb_bb_has(hf->wmen, o))
                hf->over_free |= dtb_bb_bit(o);
        }
    }
    /* After the flip the black men (reversed: the other half's white men) are white, the moved
     * white men black: a man moving from x to y changes the reversed white men (the other
     * half's black men) at squares-1-x and squares-1-y. */
    const dtb_bb fw = flipped->wmen, rwmen = flipped->bmen;
    assert(fw == dtb_bb_reverse(b, hf->bmen) && rwmen == dtb_bb_reverse(b, hf->wmen));
    const int last = b->squares - 1;
    const uint64_t K = dtb_index_block_size(to->index);
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(DTB_WHITE, k);
        dtb_bb dest = dtb_board_step(b, hf->wmen, d) & empty;
        while (dest) {
            const int sq = dtb_bb_pop(&dest);
            const int from = b->next[sq][d ^ 3];
            if (dtb_bb_has(b->promotion[DTB_WHITE], sq)) {
                hf->promo_to[k] |= dtb_bb_bit(sq);
                continue;
            }
            assert(hf->nex < MAX_MAN_EXITS);
            const dtb_bb fb = rwmen ^ dtb_bb_bit(last - from) ^ dtb_bb_bit(last - sq);
            assert(fb == dtb_bb_reverse(b, hf->wmen ^ dtb_bb_bit(from) ^ dtb_bb_bit(sq)));
            man_exit *x = &hf->ex[hf->nex++];
            x->to = dtb_bb_bit(sq);
            x->ix = to->index;
            x->values = to->values;
            x->men = fw | fb;
            x->base = dtb_index_block_of(to->index, fw, fb) * K;
            x->free = (uint64_t)(b->all & ~x->men);
        }
    }
}

/* Total advancement of the men: a man move adds one, the flip keeps it. */
static int advancement(const dtb_board *b, dtb_bb wmen, dtb_bb bmen)
{
    int a = 0;
    while (wmen)
        a += b->size - 1 - dtb_board_row(b, dtb_bb_pop(&wmen));
    while (bmen)
        a += dtb_board_row(b, dtb_bb_pop(&bmen));
    return a;
}

/* A unit this large is shared by all threads when its level has too few units to keep every
 * thread busy: kings-only materials are a single unit. Smaller ones cost more in barriers.
 * From SHARED_UNIT_BIG positions a half on, units are always shared: their nodes (8 MiB and
 * more) lie beyond the caches, and solve_unit_shared's bucketed updates beat one thread's
 * scattered ones even with the barriers (solve of the KKKMvKK pair, 1.9e7 positions a half:
 * 202.9 -> 179.2 s; KKMvKKM, 1.2e6: 183.9 -> 179.0 s). */
enum { SHARED_UNIT_MIN = 1 << 15, SHARED_UNIT_BIG = 1 << 20 };

typedef struct work {
    uint64_t block;  /* block of m */
    uint64_t fblock; /* the flipped block in the flipped material */
    int adv;
} work;

/* Halves of work item wk's unit: 1 when a self-flip material's block is its own flip. */
static int unit_halves(const work *wk, bool self)
{
    return self && wk->fblock == wk->block ? 1 : 2;
}

/* The flipped block in ft of the block of t whose men are wm, bm. */
static uint64_t flipped_block(const dtb_board *b, const dtb_solved_table *ft, dtb_bb wm, dtb_bb bm)
{
    return dtb_index_block_of(ft->index, dtb_bb_reverse(b, bm), dtb_bb_reverse(b, wm));
}

/* The unit of block blk of t: its flipped block in ft and its advancement. */
static work work_of(const dtb_board *b, const dtb_solved_table *t, const dtb_solved_table *ft,
                    uint64_t blk)
{
    dtb_bb wm, bm;
    dtb_index_block_men(t->index, blk, &wm, &bm);
    return (work){blk, flipped_block(b, ft, wm, bm), advancement(b, wm, bm)};
}

/* A block's advancement in one byte (at most 16 men of 11 rows: 176), or this for a block of a
 * self-flip material whose unit is listed from its other block. */
enum { NOT_A_UNIT = DTB_SOLVE_LEVEL_TOP };

/* Units are listed (work items, 24 bytes) only where they are large enough to be shared by the
 * threads; smaller ones are found level by level in the byte of advancement per block: men-only
 * materials have a block per position, 1.2e7 at 5 pieces, and a list of them was the largest
 * working memory of a 2..5 build. */
static bool units_listed(uint64_t block_size) { return block_size >= SHARED_UNIT_MIN; }

uint64_t dtb_solve_unit_list_bytes(uint64_t blocks, uint64_t block_size)
{
    return (units_listed(block_size) ? 1 + sizeof(work) : 1) * blocks;
}

static void merge_stats(dtb_solve_stats *into, const dtb_solve_stats *from)
{
    into->positions += from->positions;
    into->wins += from->wins;
    into->draws += from->draws;
    into->losses += from->losses;
    into->captures += from->captures;
    if (from->longest_win > into->longest_win ||
        (from->longest_win == into->longest_win && from->longest_win >= 0 &&
         from->longest_win_at < into->longest_win_at)) {
        into->longest_win = from->longest_win;
        into->longest_win_at = from->longest_win_at;
    }
}

static void stats_reset(dtb_solve_stats *st)
{
    *st = (dtb_solve_stats){0};
    st->longest_win = -1;
}

/* Sets up the unit of work item wk: its two halves, their men and man-move exits. */
static void unit_setup(unit *u, const work *wk, dtb_solved_table *t, dtb_solved_table *ft, bool self)
{
    const uint64_t K = u->K;
    u->nhalves = unit_halves(wk, self);
    /* Field by field: a compound literal would clear the exit array (3.5 KB) every time, and
     * men-only materials have a unit per position. */
    u->h[0].t = t;
    u->h[0].base = wk->block * K;
    u->h[0].slot = 0;
    dtb_index_block_men(t->index, wk->block, &u->h[0].wmen, &u->h[0].bmen);
    /* In a self-flip material both halves are m itself. The flipped block holds the men of
     * block 0 with colours swapped (that is how fblock was found). */
    u->h[1].t = ft;
    u->h[1].base = wk->fblock * K;
    u->h[1].slot = self ? 0 : 1;
    u->h[1].wmen = dtb_bb_reverse(u->b, u->h[0].bmen);
    u->h[1].bmen = dtb_bb_reverse(u->b, u->h[0].wmen);
    for (int h = 0; h < 2; h++) {
        u->h[h].men = u->h[h].wmen | u->h[h].bmen;
        u->h[h].lone = black_is_lone(&u->h[h].t->material);
        man_exits(u->b, &u->h[h], &u->h[1 - h], h == 0 ? ft : t);
        u->h[h].exf = u->fx[1 - h]; /* the exits of half 0 land in ft, of half 1 in t */
    }
}

/* Adds a thread's solved positions to the pair's count and reports it (from any thread). */
enum { PROGRESS_STEP = 1 << 20 };
static void report_progress(dtb_solve_progress progress, void *user, uint64_t *done,
                            uint64_t *pending, uint64_t total)
{
#pragma omp critical(dtb_progress)
    {
        *done += *pending;
        progress(user, *done, total);
    }
    *pending = 0;
}

static bool lanes_failed(const lane *lanes, int n)
{
    bool failed = false;
    for (int l = 0; l < n; l++)
        failed |= lanes[l].nomem || lanes[l].overflow;
    return failed;
}

/* Kingless pairs (men only, both colours): nothing moves inside a unit, so every position's
 * value is the best of its moves' values, all solved before it (a man move adds advancement;
 * captures and promotions reach other materials). Solved a position at a time, without the
 * unit's setup and level queues, which cost these materials most of their time (3-5 M
 * positions/s against 10-15 for the others). The same values and stats as solve_unit's. */
typedef struct kingless_batch {
    struct {
        dtb_solved_table *t;
        uint64_t idx;      /* the position's index in t */
        int slot;          /* which stats it counts into */
        uint16_t first, n; /* its moves' values in exit[] */
        bool capture;
    } pos[BATCH];
    int npos, nexit;
    const dtb_value *exit[EXITS_CAP];
    dtb_value slot[EXITS_CAP]; /* as in batch */
} kingless_batch;

/* Decides and stores the batch's positions (their exit values prefetched meanwhile). */
static void kingless_flush(const dtb_solved *s, lane *ln, kingless_batch *kb)
{
    for (int k = 0; k < kb->npos; k++) {
        const dtb_wvalue v = exits_value(s, &kb->exit[kb->pos[k].first], kb->pos[k].n, &ln->overflow);
        const uint64_t idx = kb->pos[k].idx;
        dtb_solved_table *t = kb->pos[k].t;
        if (!ln->overflow && !dtb_solved_store_value(s, t, idx, v))
            ln->nomem = true;
        dtb_solve_stats *st = &ln->st[kb->pos[k].slot];
        st->positions++;
        st->draws += v == DTB_WVALUE_DRAW;
        count_result(st, idx, v);
        if (kb->pos[k].capture) {
            st->captures++;
            capture_bits_set(&ln->capbits, t->captures, idx);
        }
    }
    kb->npos = kb->nexit = 0;
}

/* Gathers the moves of the position with men wmen, bmen (white to move) at index idx of t. */
static void kingless_add(const dtb_solved *s, lane *ln, kingless_batch *kb, dtb_movelist *ml,
                         dtb_solved_table *t, uint64_t idx, int slot, dtb_bb wmen, dtb_bb bmen)
{
    const dtb_pos p = {.men = {wmen, bmen}, .side = DTB_WHITE};
    const dtb_status st = dtb_generate(dtb_solved_board(s), &p, ml);
    assert(st == DTB_OK);
    (void)st;
    if (kb->nexit + ml->count > EXITS_CAP)
        kingless_flush(s, ln, kb);
    assert(ml->count <= EXITS_CAP);
    kb->pos[kb->npos].t = t;
    kb->pos[kb->npos].idx = idx;
    kb->pos[kb->npos].slot = slot;
    kb->pos[kb->npos].first = (uint16_t)kb->nexit;
    kb->pos[kb->npos].n = (uint16_t)ml->count;
    kb->pos[kb->npos].capture = ml->count > 0 && ml->moves[0].ncaptured > 0;
    for (int i = 0; i < ml->count; i++) {
        const dtb_value *v = dtb_solved_value_after(s, &p, &ml->moves[i], &kb->slot[kb->nexit]);
        __builtin_prefetch(v);
        kb->exit[kb->nexit++] = v;
    }
    if (++kb->npos == BATCH)
        kingless_flush(s, ln, kb);
}

/* Solves the units of advancement a (adv[blk] == a, about count of them) among blocks b0..b1-1
 * of a kingless pair, in parallel; returns how many positions that was. */
static uint64_t solve_kingless(const dtb_solved *s, const uint8_t *adv, uint64_t b0, uint64_t b1,
                               int a, uint64_t count, dtb_solved_table *t, dtb_solved_table *ft,
                               bool self, lane *lanes)
{
    const dtb_board *b = dtb_solved_board(s);
    uint64_t solved = 0;
#pragma omp parallel if (count >= 4096) reduction(+ : solved)
    {
        lane *me = &lanes[omp_get_thread_num()];
        kingless_batch *kb = malloc(sizeof *kb);
        dtb_movelist *ml = malloc(sizeof *ml);
        if (!kb || !ml)
            me->nomem = true;
        else
            kb->npos = kb->nexit = 0;
#pragma omp for schedule(dynamic, 1024) nowait
        for (uint64_t blk = b0; blk < b1; blk++) {
            if (me->nomem || adv[blk] != a)
                continue;
            dtb_bb wm, bm; /* the men once: the unit's flipped block and its positions */
            dtb_index_block_men(t->index, blk, &wm, &bm);
            const work wk = {blk, flipped_block(b, ft, wm, bm), a};
            kingless_add(s, me, kb, ml, t, blk, 0, wm, bm);
            const int halves = unit_halves(&wk, self);
            if (halves == 2) /* the flipped position, as in unit_setup */
                kingless_add(s, me, kb, ml, ft, wk.fblock, self ? 0 : 1, dtb_bb_reverse(b, bm),
                             dtb_bb_reverse(b, wm));
            solved += (uint64_t)halves;
        }
        if (kb && ml)
            kingless_flush(s, me, kb);
        capture_bits_flush(&me->capbits);
        free(kb);
        free(ml);
    }
    return solved;
}


/* ---- the lean solve of a kings-only pair -------------------------------------------------
 *
 * A kings-only pair is one unit of every position of both materials (3.5e9 a half for
 * KKKKvKKK), and the node state above (4 bytes, 2 more allowed for the queues) of that unit is
 * far beyond a workstation. Without men, a position that has no capture has no exit either: its
 * moves are king moves inside the unit, so all the state a quiet position needs is the count of
 * its successors not yet known to be wins (one byte, cnt). Capture positions take their value
 * from their exits at the start, as every other solve does; and which level a resolved position
 * belongs to is its value byte itself (wins at odd DTW, losses at even), so the level queues
 * become a scan of the value bytes per level. One byte a position beyond the values and the
 * capture bits, against 6: the price is that scan (sequential, a few seconds a level) and a
 * compare-and-swap per predecessor fact.
 *
 * cnt is 0 for a position that listens no more: a capture position, or one resolved. Facts of
 * level d (positions whose value is at d):
 *   - a loss at d: each quiet predecessor still listening wins at d+1 (cnt set to 0);
 *   - a win at d: one successor fewer to hear from; the last one makes the predecessor a loss
 *     at d+1 (every successor a win, the longest at d).
 * Exactly one fact resolves a position (the compare-and-swap that sets its cnt to 0), so its
 * value byte has one writer. A position with a lost successor never reaches 0 through wins,
 * so the order of a level's facts changes nothing; and every fact of level d is applied before
 * level d+1 is scanned: the values are those of the node solve, whatever the thread count. */

/* Positions a thread takes at a time while the lean solve initialises or scans. */
enum { LEAN_CHUNK = 1 << 16 };

/* The value byte of the level-d positions. The levels are told apart by their bytes, so the lean
 * solve holds distances up to the byte limit only (lean_max): no escape, no long list. */
static dtb_value level_value(int d) { return d & 1 ? dtb_value_win(d) : dtb_value_loss(d); }

/* The longest distance the lean solve holds: byte-sized and within the registry's byte limit. */
static int lean_max(const dtb_solved *s)
{
    const int m = dtb_solved_byte_max(s);
    return m < DTB_VALUE_BYTE_WIN_MAX ? m : DTB_VALUE_BYTE_WIN_MAX + 1;
}

/* Initialises positions from..to-1 of half h (ranks in its table): capture positions get their
 * value from their exits and cnt 0, quiet ones cnt = their king moves (none: lost at once).
 * Returns the highest level set. */
static int lean_init_range(const unit *u, uint8_t *cnt, int h, uint64_t from, uint64_t to,
                           capture_batch *cb, capture_bits *bits, bool *ok)
{
    const dtb_board *b = u->b;
    const half *hf = &u->h[h];
    dtb_solved_table *t = hf->t;
    int top = -1;
    dtb_pos p;
    local_pos(u, (uint64_t)h * u->K + from, &p);
    cb->npos = cb->nexit = 0;
    for (uint64_t r = from; r < to; r++) {
        if (r > from)
            next_kings(u, h, &p);
        const uint64_t i = hf->base + r;
        dtb_movelist ml;
        ml.count = 0;
        bool capture;
        if (u->quick_capture) {
            dtb_bb men; /* kings-only pairs: none */
            const bool kc = b->squares > 64
                                ? may_capture_wide(b, hf, p.kings[DTB_WHITE], p.kings[DTB_BLACK], &men)
                                : may_capture(b, hf, (uint64_t)p.kings[DTB_WHITE], (uint64_t)p.kings[DTB_BLACK], &men);
            capture = kc && hf->lone;
            if (kc && !hf->lone) {
                const dtb_status st = dtb_generate_captures_by(b, &p, 0, true, &ml);
                assert(st == DTB_OK);
                (void)st;
                capture = ml.count > 0;
            }
        } else {
            const dtb_status st = dtb_generate_captures(b, &p, &ml);
            assert(st == DTB_OK);
            (void)st;
            capture = ml.count > 0;
        }
        if (capture) {
            cnt[r] = 0;
            capture_bits_set(bits, t->captures, i);
            if (hf->lone) { /* every capture takes black's last piece */
                t->values[i] = dtb_value_win(1);
                continue;
            }
            if (cb->nexit + ml.count > EXITS_CAP)
                *ok &= flush_captures(u->s, t, cb);
            cb->at[cb->npos] = i;
            cb->first[cb->npos] = (uint16_t)cb->nexit;
            cb->n[cb->npos] = (uint16_t)ml.count;
            for (int m = 0; m < ml.count; m++) {
                const dtb_value *v = dtb_solved_value_after(u->s, &p, &ml.moves[m], &cb->slot[cb->nexit]);
                __builtin_prefetch(v);
                cb->exit[cb->nexit++] = v;
            }
            if (++cb->npos == BATCH)
                *ok &= flush_captures(u->s, t, cb);
            continue;
        }
        int c = 0;
        if (u->quick_capture && b->squares <= 64) {
            const uint64_t occ = (uint64_t)(p.kings[DTB_WHITE] | p.kings[DTB_BLACK]);
            for (uint64_t k = (uint64_t)p.kings[DTB_WHITE]; k; k &= k - 1)
                c += __builtin_popcountll(king_reach64(b, __builtin_ctzll(k), occ, true));
        } else {
            c = dtb_count_king_steps(b, p.kings[DTB_WHITE], b->all & ~dtb_pos_occupied(&p));
        }
        assert(c <= 255);
        cnt[r] = (uint8_t)c;
        if (c == 0) /* no move at all */
            t->values[i] = dtb_value_loss(0);
    }
    *ok &= flush_captures(u->s, t, cb);
    /* the highest level set (captures' values lie anywhere) */
    for (uint64_t r = from; r < to; r++) {
        const dtb_wvalue v = dtb_solved_exact_at(u->s, t, hf->base + r);
        if (v != DTB_WVALUE_DRAW) {
            const int d = dtb_wvalue_dtw(v);
            top = top > d ? top : d;
        }
    }
    return top;
}

/* Applies one fact to predecessor pid (local id): its successor resolved at level d, a win for
 * its side when is_win. Returns true when it resolves pid (at d+1). */
static inline bool lean_learn(const unit *u, uint8_t *cnt, uint64_t pid, int d, bool is_win)
{
    uint8_t c = __atomic_load_n(&cnt[pid], __ATOMIC_RELAXED), nc;
    do {
        if (c == 0)
            return false;
        nc = is_win ? (uint8_t)(c - 1) : 0;
    } while (!__atomic_compare_exchange_n(&cnt[pid], &c, nc, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    if (nc != 0)
        return false;
    const half *hf = &u->h[half_of(u, pid)];
    __atomic_store_n(&hf->t->values[hf->base + in_half(u, pid)],
                     is_win ? dtb_value_loss(d + 1) : dtb_value_win(d + 1), __ATOMIC_RELAXED);
    return true;
}

/* Resolved positions whose predecessors are gathered (and their counts prefetched) before any
 * fact is applied: the counts lie all over the unit. */
enum { LEAN_BATCH = 512 };

/* Propagates the level-d positions among ranks from..to-1 of half h; returns how many
 * positions that resolved (at d+1). */
static uint64_t lean_scan_range(const unit *u, uint8_t *cnt, int h, uint64_t from, uint64_t to, int d)
{
    const half *hf = &u->h[h];
    const dtb_value *vals = hf->t->values + hf->base;
    const dtb_value want = level_value(d);
    const bool is_win = d & 1;
    /* a word of the value bytes holds `want` somewhere: the classic zero-byte test */
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t pattern = ones * want;
    uint64_t pids[LEAN_BATCH + DTB_MAX_MOVES];
    int np = 0;
    uint64_t resolved = 0;
    uint64_t r = from;
    while (r < to) {
        /* other threads store bytes of level d+1 meanwhile: read the values by relaxed atomic
         * loads, a word at a time where aligned */
        if (((uintptr_t)(vals + r) & 7) == 0 && r + 8 <= to) {
            const uint64_t w = __atomic_load_n((const uint64_t *)(vals + r), __ATOMIC_RELAXED) ^ pattern;
            if (!((w - ones) & ~w & highs)) {
                r += 8;
                continue;
            }
        }
        const uint64_t end = r + 8 < to ? r + 8 : to;
        for (; r < end; r++) {
            if (__atomic_load_n(&vals[r], __ATOMIC_RELAXED) != want)
                continue;
            const int n = predecessors(u, (uint64_t)h * u->K + r, pids + np);
            for (int k = 0; k < n; k++)
                __builtin_prefetch(&cnt[pids[np + k]], 1);
            np += n;
            if (np >= LEAN_BATCH) {
                for (int k = 0; k < np; k++)
                    resolved += lean_learn(u, cnt, pids[k], d, is_win);
                np = 0;
            }
        }
    }
    for (int k = 0; k < np; k++)
        resolved += lean_learn(u, cnt, pids[k], d, is_win);
    return resolved;
}

/* Counts positions, captures, draws and the results of half h's ranks from..to-1. */
static void lean_count_range(const unit *u, lane *ln, int h, uint64_t from, uint64_t to)
{
    const half *hf = &u->h[h];
    dtb_solve_stats *st = &ln->st[hf->slot];
    for (uint64_t r = from; r < to; r++) {
        const uint64_t i = hf->base + r;
        const dtb_value v = hf->t->values[i];
        st->positions++;
        st->captures += hf->t->captures[i / 64] >> (i % 64) & 1;
        st->draws += v == DTB_VALUE_DRAW;
        count_result(st, i, dtb_wvalue_of_byte(v)); /* lean levels are byte-sized */
    }
}

uint64_t dtb_solve_lean_bytes(uint64_t positions, int threads)
{
    return positions + (uint64_t)threads * sizeof(capture_batch);
}

/* Solves the one unit of the kings-only pair u (set up, halves of u->K positions) the lean way.
 * lanes: one per thread, for their stats. */
static void solve_lean(const unit *u, lane *lanes, int nlanes, dtb_solve_progress progress, void *user)
{
    const uint64_t K = u->K, n = (uint64_t)u->nhalves * K;
    const uint64_t per_half = (K + LEAN_CHUNK - 1) / LEAN_CHUNK, nchunks = per_half * (uint64_t)u->nhalves;
    uint8_t *cnt = dtb_huge_calloc(n ? n : 1);
    if (!cnt) {
        lanes[0].nomem = true;
        return;
    }
    clear_values(u);
    int top = -1;
    uint64_t done = 0, level_resolved = 0;
    const uint64_t total = 2 * n; /* progress: initialising counts for n, resolving for n */
#pragma omp parallel num_threads(nlanes)
    {
        lane *me = &lanes[omp_get_thread_num()];
        capture_batch *cb = malloc(sizeof *cb);
        if (!cb)
            me->nomem = true;
        int mytop = -1;
        uint64_t pending = 0;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < nchunks; c++) {
            if (!cb)
                continue;
            const int h = (int)(c / per_half);
            const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
            capture_bits bits = {NULL, 0};
            bool ok = true;
            const int t = lean_init_range(u, cnt + (uint64_t)h * K, h, from, to, cb, &bits, &ok);
            capture_bits_flush(&bits);
            if (!ok || t > lean_max(u->s))
                me->overflow = true;
            mytop = mytop > t ? mytop : t;
            pending += to - from;
            if (progress && pending >= PROGRESS_STEP)
                report_progress(progress, user, &done, &pending, total);
        }
        free(cb);
        if (progress && pending)
            report_progress(progress, user, &done, &pending, total);
#pragma omp critical(dtb_lean_top)
        top = top > mytop ? top : mytop;
#pragma omp barrier
        /* Level by level. The capture positions' levels are known from the start; beyond them, a
         * level with no position ends the solve. */
        for (int d = 0; d <= top && !lanes_failed(lanes, nlanes); d++) {
            uint64_t mine = 0;
#pragma omp for schedule(dynamic, 1)
            for (uint64_t c = 0; c < nchunks; c++) {
                const int h = (int)(c / per_half);
                const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
                mine += lean_scan_range(u, cnt, h, from, to, d);
            }
#pragma omp atomic
            level_resolved += mine;
#pragma omp barrier
#pragma omp single
            { /* every fact of level d is in */
                if (level_resolved && d + 1 > top) {
                    if (d + 1 > lean_max(u->s))
                        me->overflow = true;
                    else
                        top = d + 1;
                }
                if (progress) {
                    uint64_t step = level_resolved;
                    report_progress(progress, user, &done, &step, total);
                }
                level_resolved = 0;
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < nchunks; c++) {
            const int h = (int)(c / per_half);
            const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
            lean_count_range(u, me, h, from, to);
        }
    }
    if (progress && done < total) {
        uint64_t rest = total - done;
        report_progress(progress, user, &done, &rest, total);
    }
    dtb_huge_free(cnt, n ? n : 1);
}

/* A lane's two fact arrays (gathered and sorted, 8 bytes a fact) grow to hold the facts of the
 * positions it resolves in one round: 32 a position allowed (about 20 measured on king-only
 * units, and doubling growth), ROUND positions at worst. */
uint64_t dtb_solve_shared_bytes(uint64_t block_size, int threads)
{
    if (threads < 2 || block_size < SHARED_UNIT_MIN)
        return 0;
    return 2 * sizeof(uint64_t) * 32 * (uint64_t)ROUND;
}

/* A pair being solved: its tables, each block's advancement, the listed units and the threads'
 * lanes, kept from one call to the next so that a pair can be solved a level, or a part of a
 * level, at a time (dtb_solve_pair solves every level at once; gen/mpi_build.c hands out parts
 * of levels to other processes). */
struct dtb_pair_solver {
    dtb_solved *s;
    const dtb_board *b;
    dtb_solved_table *t, *ft;
    bool self, listed, quick;
    uint64_t nblocks, K;
    uint8_t *adv; /* per block: its advancement, NOT_A_UNIT when listed from its other block */
    uint64_t level_units[NOT_A_UNIT + 1];
    uint64_t level_first[NOT_A_UNIT + 1]; /* listed: where level a starts in w */
    work *w;      /* listed units: by decreasing advancement, blocks in increasing order */
    dtb_index_fast fxt, fxft;
    const dtb_index_fast *fx0, *fx1; /* the inline index of both tables, NULL when wide */
    int nthreads;
    lane *lanes;
    uint64_t done, total; /* positions solved by this process, positions of the pair */
};

dtb_status dtb_pair_solver_create(dtb_solved *s, dtb_material m, dtb_pair_solver **out,
                                  dtb_error *e)
{
    *out = NULL;
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    if (!t)
        return DTB_E_NOMEM;
    dtb_solved_table *ft = self ? t : dtb_solved_add(s, fm, e);
    if (!ft)
        return DTB_E_NOMEM;
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    if (2 * K > UINT32_MAX) /* beyond 32-bit local ids: only the lean solve takes it */
        return dtb_error_set(e, DTB_E_RANGE, "a block of %llu positions is too large for the "
                             "node state (a kings-only pair: solve it lean)", (unsigned long long)K);
    dtb_pair_solver *ps = calloc(1, sizeof *ps);
    if (!ps)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    *ps = (dtb_pair_solver){.s = s, .b = b, .t = t, .ft = ft, .self = self, .nblocks = nblocks,
                            .K = K, .listed = units_listed(K),
                            .quick = b->variant->kings_fly,
                            .nthreads = omp_get_max_threads()};
    ps->total = (self ? 1 : 2) * dtb_index_size(t->index);
    /* Each block's advancement, in parallel: men-only materials have a block per position. */
    ps->adv = malloc(nblocks ? nblocks : 1);
    ps->lanes = calloc((size_t)ps->nthreads, sizeof *ps->lanes);
    if (ps->listed)
        ps->w = malloc((nblocks ? nblocks : 1) * sizeof *ps->w);
    if (!ps->adv || !ps->lanes || (ps->listed && !ps->w)) {
        dtb_pair_solver_free(ps);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    uint8_t *adv = ps->adv;
#pragma omp parallel for schedule(static)
    for (uint64_t blk = 0; blk < nblocks; blk++) {
        const work wk = work_of(b, t, ft, blk);
        assert(wk.adv < NOT_A_UNIT);
        /* A self-flip material's unit is listed from the smaller of its two blocks. */
        adv[blk] = self && wk.fblock < blk ? NOT_A_UNIT : (uint8_t)wk.adv;
    }
    for (uint64_t blk = 0; blk < nblocks; blk++)
        ps->level_units[adv[blk]]++;
    /* Large units: listed by decreasing advancement, blocks in increasing order within one, so
     * that a level's few units can be shared out (their materials have few blocks). */
    uint64_t nw = 0;
    for (int a = NOT_A_UNIT - 1; ps->listed && a >= 0; a--) {
        ps->level_first[a] = nw;
        for (uint64_t blk = 0; ps->level_units[a] && blk < nblocks; blk++)
            if (adv[blk] == a)
                ps->w[nw++] = work_of(b, t, ft, blk);
    }
    if (dtb_index_fast_get(t->index, &ps->fxt) && dtb_index_fast_get(ft->index, &ps->fxft)) {
        ps->fx0 = &ps->fxt;
        ps->fx1 = &ps->fxft;
    }
    for (int l = 0; l < ps->nthreads; l++) {
        stats_reset(&ps->lanes[l].st[0]);
        stats_reset(&ps->lanes[l].st[1]);
    }
    *out = ps;
    return DTB_OK;
}

void dtb_pair_solver_free(dtb_pair_solver *ps)
{
    if (!ps)
        return;
    for (int l = 0; ps->lanes && l < ps->nthreads; l++) {
        for (int d = 0; d < DTB_MAX_DTW + 2; d++)
            free(ps->lanes[l].q[d].ids);
        free(ps->lanes[l].fx.v);
        free(ps->lanes[l].fx.sorted);
        free(ps->lanes[l].fx.begin);
        dtb_huge_free(ps->lanes[l].nodes, 2 * ps->K * sizeof *ps->lanes[l].nodes);
    }
    free(ps->lanes);
    free(ps->w);
    free(ps->adv);
    free(ps);
}

int dtb_pair_solver_next_level(const dtb_pair_solver *ps, int a)
{
    for (a = (a > NOT_A_UNIT ? NOT_A_UNIT : a) - 1; a >= 0; a--)
        if (ps->level_units[a])
            return a;
    return -1;
}

uint64_t dtb_pair_solver_blocks(const dtb_pair_solver *ps) { return ps->nblocks; }

bool dtb_pair_solver_kingless(const dtb_pair_solver *ps) { return ps->K == 1; }

/* The units of level a among blocks b0..b1-1, in block order: calls f for each with its block,
 * its flipped block and its halves; returns how many there were. */
typedef void (*unit_visit)(const dtb_pair_solver *ps, void *user, uint64_t blk, uint64_t fblk,
                           int halves);
static uint64_t level_units_in(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                               unit_visit f, void *user)
{
    uint64_t n = 0;
    for (uint64_t blk = b0; blk < b1; blk++) {
        if (ps->adv[blk] != a)
            continue;
        n++;
        if (!f)
            continue;
        dtb_bb wm, bm;
        dtb_index_block_men(ps->t->index, blk, &wm, &bm);
        const work wk = {blk, flipped_block(ps->b, ps->ft, wm, bm), a};
        f(ps, user, blk, wk.fblock, unit_halves(&wk, ps->self));
    }
    return n;
}

uint64_t dtb_pair_solver_units(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1)
{
    return level_units_in(ps, a, b0, b1, NULL, NULL);
}

static void count_positions(const dtb_pair_solver *ps, void *user, uint64_t blk, uint64_t fblk,
                            int halves)
{
    (void)blk, (void)fblk;
    *(uint64_t *)user += (uint64_t)halves * ps->K;
}

uint64_t dtb_pair_solver_positions(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1)
{
    uint64_t n = 0;
    if (ps->self)
        level_units_in(ps, a, b0, b1, count_positions, &n);
    else /* every unit has two halves */
        n = 2 * ps->K * level_units_in(ps, a, b0, b1, NULL, NULL);
    return n;
}

uint64_t dtb_pair_solver_cut(const dtb_pair_solver *ps, int a, uint64_t positions, uint64_t *cuts)
{
    uint64_t n = 0, filled = 0;
    const uint64_t unit = (ps->self ? 1 : 2) * ps->K; /* a self-flip unit may be one half */
    if (cuts)
        cuts[0] = 0;
    for (uint64_t blk = 0; blk < ps->nblocks; blk++) {
        if (ps->adv[blk] != a)
            continue;
        filled += unit;
        if (filled >= positions) {
            n++;
            if (cuts)
                cuts[n] = blk + 1;
            filled = 0;
        }
    }
    if (filled || n == 0) {
        n++;
        if (cuts)
            cuts[n] = ps->nblocks;
    }
    return n;
}

/* Packing the values and capture bits of units, in the order level_units_in visits them. */
typedef struct pack_ctx {
    uint8_t *values;       /* pack: into; unpack: from */
    uint8_t *captures;     /* one bit a position, NULL: leave the capture bits alone */
    uint64_t at;           /* positions so far */
    bool unpack;
} pack_ctx;

static void pack_half(const dtb_pair_solver *ps, pack_ctx *pc, dtb_solved_table *t, uint64_t blk)
{
    const uint64_t K = ps->K, base = blk * K;
    if (pc->unpack)
        memcpy(t->values + base, pc->values + pc->at, K);
    else
        memcpy(pc->values + pc->at, t->values + base, K);
    for (uint64_t i = 0; pc->captures && i < K; i++) {
        const uint64_t x = base + i, y = pc->at + i;
        if (pc->unpack) {
            if (pc->captures[y / 8] >> (y % 8) & 1)
                t->captures[x / 64] |= 1ull << (x % 64);
        } else if (t->captures[x / 64] >> (x % 64) & 1) {
            pc->captures[y / 8] |= (uint8_t)(1u << (y % 8));
        }
    }
    pc->at += K;
}

static void pack_unit(const dtb_pair_solver *ps, void *user, uint64_t blk, uint64_t fblk, int halves)
{
    pack_half(ps, user, ps->t, blk);
    if (halves == 2)
        pack_half(ps, user, ps->ft, fblk);
}

uint64_t dtb_pair_solver_pack(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                              uint8_t *values, uint8_t *captures)
{
    pack_ctx pc = {.values = values, .captures = captures};
    if (captures)
        memset(captures, 0, (dtb_pair_solver_positions(ps, a, b0, b1) + 7) / 8);
    level_units_in(ps, a, b0, b1, pack_unit, &pc);
    return pc.at;
}

uint64_t dtb_pair_solver_unpack(dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                const uint8_t *values, const uint8_t *captures)
{
    pack_ctx pc = {.values = (uint8_t *)values, .captures = (uint8_t *)captures, .unpack = true};
    level_units_in(ps, a, b0, b1, pack_unit, &pc);
    return pc.at;
}

/* The first listed unit of level a at or after block blk. */
static uint64_t listed_at(const dtb_pair_solver *ps, int a, uint64_t blk)
{
    uint64_t lo = ps->level_first[a], hi = lo + ps->level_units[a];
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (ps->w[mid].block < blk)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pair's positions solved by its lanes so far, and the first failure. */
static dtb_status lanes_status(const dtb_pair_solver *ps, dtb_error *e)
{
    bool overflow = false, nomem = false;
    for (int l = 0; l < ps->nthreads; l++) {
        overflow |= ps->lanes[l].overflow;
        nomem |= ps->lanes[l].nomem;
    }
    if (overflow)
        return dtb_error_set(e, DTB_E_RANGE, "a distance to win exceeds %d plies", DTB_MAX_DTW);
    if (nomem)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving");
    return DTB_OK;
}

dtb_status dtb_pair_solver_solve(dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                 dtb_solve_progress progress, void *user, dtb_error *e)
{
    assert(a >= 0 && a < NOT_A_UNIT && b0 <= b1 && b1 <= ps->nblocks);
    const dtb_solved *s = ps->s;
    dtb_solved_table *t = ps->t, *ft = ps->ft;
    const bool self = ps->self, listed = ps->listed, quick = ps->quick;
    const uint64_t K = ps->K, total = ps->total;
    const int nthreads = ps->nthreads;
    lane *lanes = ps->lanes;
    const dtb_index_fast *fx0 = ps->fx0, *fx1 = ps->fx1;
    const uint8_t *adv = ps->adv;
    uint64_t *done = &ps->done;
    const bool whole = b0 == 0 && b1 == ps->nblocks;
    /* Units of the level in the range (the whole level needs no count). */
    const uint64_t count = !ps->level_units[a] ? 0
                           : whole             ? ps->level_units[a]
                                               : level_units_in(ps, a, b0, b1, NULL, NULL);
    if (!count)
        return lanes_status(ps, e);
    if (K == 1) { /* no kings: a block is one position (see solve_kingless) */
        uint64_t solved = solve_kingless(s, adv, b0, b1, a, count, t, ft, self, lanes);
        if (progress)
            report_progress(progress, user, done, &solved, total);
        else
            *done += solved;
        return lanes_status(ps, e);
    }
    /* Listed units of the range are w[lo..hi); the others are the blocks with adv[blk] == a. */
    const uint64_t lo = listed ? listed_at(ps, a, b0) : 0, hi = listed ? listed_at(ps, a, b1) : 0;
    /* A level of few large units: whole units to each thread as long as every thread gets
     * one (no barrier inside a unit then), the rest shared by all threads. Big units are
     * all shared (SHARED_UNIT_BIG). */
    const bool big = nthreads > 1 && K >= SHARED_UNIT_BIG;
    const bool few = nthreads > 1 && listed && hi - lo < 4 * (uint64_t)nthreads;
    uint64_t mid = hi; /* units lo..mid-1 one per thread, mid..hi-1 shared */
    if (big)
        mid = lo;
    else if (few)
        mid = lo + (hi - lo) / (uint64_t)nthreads * (uint64_t)nthreads;
    /* The units one per thread: w[first..last), or the blocks first..last-1 of this level. */
    const uint64_t first = listed ? lo : b0, last = listed ? mid : b1;
    const uint64_t per_thread = listed ? mid - lo : count;
    const work *w = ps->w;
    /* Tiny levels (a few small units) cost more to share out than to solve. */
#pragma omp parallel if (per_thread * K >= 65536)
    if (per_thread > 0) {
        lane *me = &lanes[omp_get_thread_num()];
        if (!me->nodes && !(me->nodes = dtb_huge_calloc(2 * K * sizeof *me->nodes)))
            me->nomem = true;
        unit u = {.b = ps->b, .s = s, .K = K, .n = me->nodes, .fx = {fx0, fx1},
                  .quick_capture = quick};
        /* Reported in steps of PROGRESS_STEP positions: men-only materials have a unit
         * of two positions, and a lock per unit cost 4% of their time. */
        uint64_t pending = 0;
#pragma omp for schedule(dynamic, listed ? 1 : 64) nowait
        for (uint64_t i = first; i < last; i++) {
            if (me->nomem || me->overflow || (!listed && adv[i] != a))
                continue;
            /* A found unit's advancement is the level's: only its flipped block is new. */
            work wk = listed ? w[i] : (work){i, 0, a};
            if (!listed) {
                dtb_bb wm, bm;
                dtb_index_block_men(t->index, i, &wm, &bm);
                wk.fblock = flipped_block(ps->b, ft, wm, bm);
            }
            unit_setup(&u, &wk, t, ft, self);
            solve_unit(&u, me);
            pending += (uint64_t)u.nhalves * K;
            if (progress && pending >= PROGRESS_STEP)
                report_progress(progress, user, done, &pending, total);
        }
        if (progress && pending)
            report_progress(progress, user, done, &pending, total);
        else if (pending) {
#pragma omp atomic
            *done += pending;
        }
    }
    bool stop = lanes_failed(lanes, nthreads);
    if (mid < hi && !stop) {
        /* the first lane's room, as the plan counts it (dtb_build_plan: a unit per thread) */
        if (!lanes[0].nodes && !(lanes[0].nodes = dtb_huge_calloc(2 * K * sizeof *lanes[0].nodes)))
            lanes[0].nomem = stop = true;
        node *const shared_nodes = lanes[0].nodes;
        for (uint64_t i = mid; i < hi && !stop; i++) {
            unit u = {.b = ps->b, .s = s, .K = K, .n = shared_nodes, .shared = true,
                      .fx = {fx0, fx1}, .quick_capture = quick};
            unit_setup(&u, &w[i], t, ft, self);
            solve_unit_shared(&u, lanes, nthreads);
            stop = lanes_failed(lanes, nthreads);
            uint64_t solved = (uint64_t)u.nhalves * K;
            if (progress)
                report_progress(progress, user, done, &solved, total);
            else
                *done += solved;
        }
    }
    return lanes_status(ps, e);
}

bool dtb_pair_solver_has_long(const dtb_pair_solver *ps)
{
    return dtb_solved_long_count(ps->s, ps->t) + dtb_solved_long_count(ps->s, ps->ft) > 0;
}

void dtb_pair_solver_stats(const dtb_pair_solver *ps, dtb_solve_stats stats[2])
{
    stats_reset(&stats[0]);
    stats_reset(&stats[1]);
    for (int l = 0; l < ps->nthreads; l++) {
        merge_stats(&stats[0], &ps->lanes[l].st[0]);
        merge_stats(&stats[1], &ps->lanes[l].st[1]);
    }
}

void dtb_solve_stats_merge(dtb_solve_stats *into, const dtb_solve_stats *from)
{
    merge_stats(into, from);
}

bool dtb_solve_lean_applies(const dtb_material *m)
{
    return m->men[DTB_WHITE] + m->men[DTB_BLACK] == 0 && m->kings[DTB_WHITE] + m->kings[DTB_BLACK] > 0;
}

/* dtb_solve_pair of a kings-only pair, lean: its single unit (block 0 of both members). */
static dtb_status solve_pair_lean(dtb_solved *s, dtb_material m, dtb_solve_stats stats[2],
                                  dtb_solve_progress progress, void *user, dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    dtb_solved_table *ft = t && !self ? dtb_solved_add(s, fm, e) : t;
    if (!t || !ft)
        return DTB_E_NOMEM;
    dtb_index_fast fxt, fxft;
    const bool narrow = dtb_index_fast_get(t->index, &fxt) && dtb_index_fast_get(ft->index, &fxft);
    const int nthreads = omp_get_max_threads();
    lane *lanes = calloc((size_t)nthreads, sizeof *lanes);
    if (!lanes)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int l = 0; l < nthreads; l++) {
        stats_reset(&lanes[l].st[0]);
        stats_reset(&lanes[l].st[1]);
    }
    unit u = {.b = b, .s = s, .K = dtb_index_block_size(t->index), .shared = true,
              .fx = {narrow ? &fxt : NULL, narrow ? &fxft : NULL},
              .quick_capture = b->variant->kings_fly};
    const work wk = work_of(b, t, ft, 0);
    unit_setup(&u, &wk, t, ft, self);
    solve_lean(&u, lanes, nthreads, progress, user);
    bool overflow = false, nomem = false;
    stats_reset(&stats[0]);
    stats_reset(&stats[1]);
    for (int l = 0; l < nthreads; l++) {
        overflow |= lanes[l].overflow;
        nomem |= lanes[l].nomem;
        merge_stats(&stats[0], &lanes[l].st[0]);
        merge_stats(&stats[1], &lanes[l].st[1]);
    }
    free(lanes);
    if (overflow)
        return dtb_error_set(e, DTB_E_RANGE, "a distance to win exceeds the %d plies the lean "
                             "solve of a kings-only pair holds", lean_max(s));
    if (nomem)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving");
    return DTB_OK;
}

dtb_status dtb_solve_pair(dtb_solved *s, dtb_material m, bool lean, dtb_solve_stats stats[2],
                          dtb_solve_progress progress, void *user, dtb_error *e)
{
    if (lean && dtb_solve_lean_applies(&m))
        return solve_pair_lean(s, m, stats, progress, user, e);
    dtb_pair_solver *ps;
    dtb_status rc = dtb_pair_solver_create(s, m, &ps, e);
    /* Levels of equal advancement, most advanced first; units within a level in parallel. */
    for (int a = rc == DTB_OK ? dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP) : -1;
         a >= 0 && rc == DTB_OK; a = dtb_pair_solver_next_level(ps, a))
        rc = dtb_pair_solver_solve(ps, a, 0, ps->nblocks, progress, user, e);
    if (rc == DTB_OK)
        dtb_pair_solver_stats(ps, stats);
    dtb_pair_solver_free(ps);
    return rc;
}
