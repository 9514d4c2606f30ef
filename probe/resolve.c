/* Lookups and capture search.
 *
 * A quiet position on a board of up to 64 squares (8x8, 10x10) takes the fast path
 * (dtb_resolve_wdl_fast): one function from the public position's words to the value, with no
 * message buffer and no call but the capture test's and index's inlined code: the checks on
 * words without a branch on the position, the colour flip of all four sets in one AVX2 vector
 * (chosen by a blend, the side to move being unpredictable), the capture test
 * (probe/capturetest.h), the table slot from four popcounts, the index inline
 * (dtb_index_fast_of), and the block cache's inline hit path. Measured on 10x10 with valgrind
 * (tests/bench_probe.c, 4096 positions): about 410 instructions per probe (745 before this path);
 * with a working set beyond the L2 cache the probe mostly waits for the value's cache line and
 * the cache slot's. Anything else (a capture, a position that fails a check, a table not found
 * yet, a read error) goes the general way below, which words the messages. On a miss the block
 * is read and decompressed outside every lock, with a decoding context borrowed from a small
 * pool (contexts are only needed on misses, so the pool's mutex is off the hot path), and then
 * handed to the cache.
 *
 * A capture position is searched: every capture is made and its result taken from the position
 * after it (itself a capture position or a quiet one; each capture removes a piece, so the
 * search is at most as deep as the piece count). WDL needs only one winning capture; the exact
 * value takes the best over all captures. Each depth of the search has its own move list, kept
 * off the stack (it is large, and engines may probe from threads with small stacks) and reused
 * from probe to probe (search_list). Successors are made, flipped, tested for a capture and
 * located on words (successor), as in the fast path.
 *
 * A compact set's derived tables store no quiet position (docs/FORMAT.md, "Compact sets"); such
 * a position is searched the same way over its quiet moves, one ply: each lands in the stored
 * partner table (one lookup, or a capture search when the opponent must capture) or, promoting,
 * in a material with a man fewer, whose table may be derived in its turn (each such step costs
 * a man, so the recursion ends); its moves are generated on words, kings first (quiet_moves64).
 * Measured with callgrind (tests/bench_probe.c, compact 2..5 WLD, 4096 positions): 12.5k
 * instructions per probe with a malloc per node and a position made, flipped and looked up per
 * successor through dtb_pos; 9.1k now (0.31-0.33 -> 0.40-0.44 M probes per CPU second). A
 * derived table is never in the fast path's table array, so only its positions pay for the
 * test; every other probe takes the same instructions as in a full set. Cost measured in
 * docs/FORMAT.md ("Compact sets").
 *
 * A DTW table that stores its losses only (docs/FORMAT.md §8.7, the generator's default) is
 * answered WLD first: a draw from the .wld table, a loss from its byte, and a win by the same
 * one-ply search over its moves, narrowed to wins (losses_value): only its successors lost for
 * the opponent read a DTW byte. The fast path answers draws and losses (fast_losses) and leaves
 * wins to the general path; WDL probes never look at these tables. */
#define _GNU_SOURCE /* the loaders: syscall (a thread's id), clock_gettime, condattr_setclock */
#include "resolve.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "capturetest.h"
#include "movegen.h"
#include "threat.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define KINDS (DTB_TABLESET_MAX_KIND + 1)
#define NMAT (KINDS * KINDS * KINDS * KINDS)
#define SPARE_BITS 4 /* 16 spare slots of search lists (search_lists) */

struct search_lists;
static void search_lists_free(struct search_lists *l);
struct loader;
static void loader_stop(struct loader *ld);

struct dtb_resolver {
    /* Tables already found, by material: [0] for WDL probes, [1] for DTW. A plain array and one
     * load on the hot path; the table set (behind a call and its own checks) on a first use. */
    _Atomic(const dtb_ptable *) found[2][NMAT];
    /* The tables kept off the fast path (derived ones, those with threat don't-cares), for the
     * general path: without it each of their lookups would ask the table set (a lock). */
    _Atomic(const dtb_ptable *) searched_tables[2][NMAT];
    dtb_tableset *ts;
    const dtb_board *board;
    bool narrow; /* at most 64 squares: every set in its low word */
    /* The fast path's check of a position (narrow boards): the board and promotion rows as
     * words, and the most pieces a side may have. */
    uint64_t all64, promotion64[2];
    int limit;
    dtb_capturetest ct; /* the capture test of the hot path, when usable for this board */
    dtb_blockcache *cache;
    uint64_t budget;   /* the cache's, for dtb_resolver_warm */
    struct loader *ld; /* NULL: no loader threads, cache-only misses are not scheduled */
    dtb_tableset_log log;
    void *user;
    pthread_mutex_t pool_lock;
    dtb_tablefile_ctx **pool;
    int npool, pool_cap;
    /* Search lists of finished probes for the next ones (search_list), a slot per cache line
     * (threads mostly keep to slots of their own). */
    struct {
        _Atomic(struct search_lists *) lists;
        char pad[64 - sizeof(_Atomic(struct search_lists *))];
    } spare[1 << SPARE_BITS];
};

static bool loader_start(dtb_resolver *r, int threads);

dtb_resolver *dtb_resolver_create(dtb_tableset *ts, uint64_t cache_bytes, int loaders,
                                  dtb_tableset_log log, void *user)
{
    dtb_resolver *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < NMAT; i++) {
            atomic_init(&r->found[k][i], NULL);
            atomic_init(&r->searched_tables[k][i], NULL);
        }
    for (int i = 0; i < 1 << SPARE_BITS; i++)
        atomic_init(&r->spare[i].lists, NULL);
    r->ts = ts;
    r->board = dtb_tableset_board(ts);
    r->narrow = r->board->squares <= 64;
    r->all64 = (uint64_t)r->board->all;
    r->promotion64[0] = (uint64_t)r->board->promotion[0];
    r->promotion64[1] = (uint64_t)r->board->promotion[1];
    r->limit = r->board->variant->start_rows * r->board->half;
    dtb_capturetest_init(&r->ct, r->board);
    r->log = log;
    r->user = user;
    pthread_mutex_init(&r->pool_lock, NULL);
    r->budget = cache_bytes;
    if (!(r->cache = dtb_blockcache_create(cache_bytes)) ||
        (loaders > 0 && !loader_start(r, loaders > DTB_RESOLVE_MAX_LOADERS ? DTB_RESOLVE_MAX_LOADERS
                                                                           : loaders))) {
        dtb_resolver_free(r);
        return NULL;
    }
    return r;
}

void dtb_resolver_free(dtb_resolver *r)
{
    if (!r)
        return;
    loader_stop(r->ld); /* first: its threads use everything below */
    for (int i = 0; i < r->npool; i++)
        dtb_tablefile_ctx_free(r->pool[i]);
    free(r->pool);
    for (int i = 0; i < 1 << SPARE_BITS; i++)
        search_lists_free(atomic_load(&r->spare[i].lists));
    dtb_blockcache_free(r->cache);
    pthread_mutex_destroy(&r->pool_lock);
    free(r);
}

void dtb_resolver_cache_stats(dtb_resolver *r, dtb_blockcache_stats *st)
{
    dtb_blockcache_get_stats(r->cache, st);
}

dtb_blockcache *dtb_resolver_cache(dtb_resolver *r) { return r->cache; }

static dtb_tablefile_ctx *ctx_get(dtb_resolver *r)
{
    dtb_tablefile_ctx *ctx = NULL;
    pthread_mutex_lock(&r->pool_lock);
    if (r->npool > 0)
        ctx = r->pool[--r->npool];
    pthread_mutex_unlock(&r->pool_lock);
    return ctx ? ctx : dtb_tablefile_ctx_create();
}

static void ctx_put(dtb_resolver *r, dtb_tablefile_ctx *ctx)
{
    pthread_mutex_lock(&r->pool_lock);
    if (r->npool == r->pool_cap) {
        const int cap = r->pool_cap ? 2 * r->pool_cap : 8;
        dtb_tablefile_ctx **bigger = realloc(r->pool, (size_t)cap * sizeof *bigger);
        if (bigger) {
            r->pool = bigger;
            r->pool_cap = cap;
        }
    }
    if (r->npool < r->pool_cap) {
        r->pool[r->npool++] = ctx;
        ctx = NULL;
    }
    pthread_mutex_unlock(&r->pool_lock);
    dtb_tablefile_ctx_free(ctx); /* NULL when pooled */
}

/* Reads block blk of t into the cache and returns value off of it. */
static dtb_status read_block(dtb_resolver *r, const dtb_ptable *t, uint64_t blk, uint64_t off,
                             unsigned *raw, dtb_error *e)
{
    const size_t len = (size_t)dtb_tablefile_packed_len(t->tf, blk);
    uint8_t *buf = dtb_blockcache_alloc(r->cache, len);
    dtb_tablefile_ctx *ctx = ctx_get(r);
    if (!buf || !ctx) {
        dtb_blockcache_release(r->cache, buf, len);
        dtb_tablefile_ctx_free(ctx);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory reading %s", t->name);
    }
    dtb_error err;
    const dtb_status s = dtb_tablefile_read_packed(t->tf, blk, buf, len, ctx, &err);
    ctx_put(r, ctx);
    if (s != DTB_OK) {
        dtb_blockcache_release(r->cache, buf, len);
        bool expected = false;
        if (r->log && atomic_compare_exchange_strong(&((dtb_ptable *)t)->block_error_logged,
                                                     &expected, true))
            r->log(r->user, err.msg);
        return dtb_error_set(e, s, "%s", err.msg);
    }
    *raw = dtb_tablefile_packed_get(buf, t->bits, off);
    dtb_blockcache_put(r->cache, t->key_base | blk, buf, len);
    return DTB_OK;
}

/* The block of index i of table t and i's offset in it: a shift and a mask when blocks hold a
 * power of two positions (the default), else a division. */
ALWAYS_INLINE void split_index(const dtb_ptable *t, uint64_t i, uint64_t *blk, uint64_t *off)
{
    if (t->block_shift >= 0) {
        *blk = i >> t->block_shift;
        *off = i & (t->block_positions - 1);
    } else {
        *blk = i / t->block_positions;
        *off = i % t->block_positions;
    }
}

/* Whether the block of index i of table t is cached; if so *raw is i's stored value. Sets the
 * block and i's offset in it for a read on a miss. */
ALWAYS_INLINE bool cached_value(dtb_resolver *r, const dtb_ptable *t, uint64_t i, unsigned *raw,
                                uint64_t *blk, uint64_t *off)
{
    split_index(t, i, blk, off);
    return dtb_blockcache_get(r->cache, t->key_base | *blk, *off, t->bits, raw);
}

static void schedule_block(dtb_resolver *r, const dtb_ptable *t, uint64_t blk);
static void schedule_table(dtb_resolver *r, dtb_material m, bool dtw, int slot);

/* The stored value of index i of table t. */
ALWAYS_INLINE dtb_status lookup_index(dtb_resolver *r, const dtb_ptable *t, uint64_t i,
                                     unsigned flags, unsigned *raw, dtb_error *e)
{
    uint64_t blk, off;
    if (cached_value(r, t, i, raw, &blk, &off))
        return DTB_OK;
    if (flags & DTB_RESOLVE_CACHE_ONLY) {
        if (r->ld)
            schedule_block(r, t, blk);
        return DTB_E_NOTCACHED;
    }
    return read_block(r, t, blk, off, raw, e);
}

/* The index of w (white to move) in table t: inline on boards of up to 64 squares (derived
 * positions make a dozen of these lookups each). */
ALWAYS_INLINE uint64_t index_in(const dtb_ptable *t, const dtb_pos *w)
{
#if defined(__POPCNT__)
    if (t->fast)
        return dtb_index_fast_of(&t->ixf, (uint64_t)w->men[DTB_WHITE], (uint64_t)w->men[DTB_BLACK],
                                 (uint64_t)w->kings[DTB_WHITE], (uint64_t)w->kings[DTB_BLACK]);
#endif
    return dtb_index_of(t->ix, w);
}

/* The stored value of w (white to move, no capture) in table t. */
ALWAYS_INLINE dtb_status lookup(dtb_resolver *r, const dtb_ptable *t, const dtb_pos *w,
                               unsigned flags, unsigned *raw, dtb_error *e)
{
    return lookup_index(r, t, index_in(t, w), flags, raw, e);
}

/* Whether stored value raw of DTW table t may stand for a distance in its long list. */
ALWAYS_INLINE bool listed_escape(const dtb_ptable *t, unsigned raw)
{
    return __builtin_expect((raw & 127) == 127, 0) && dtb_tablefile_get_info(t->tf)->long_count;
}

/* The exact value of stored value raw at index i of DTW table t: the byte, or for an escape the
 * distance the long list gives (docs/FORMAT.md §8.4). */
static dtb_wvalue value_of_raw(const dtb_ptable *t, uint64_t i, unsigned raw)
{
    if (listed_escape(t, raw)) {
        const int d = dtb_tablefile_long_dtw(t->tf, i);
        if (d >= 0)
            return dtb_wvalue_of(raw == DTB_VALUE_WIN_ESCAPE, d);
    }
    return dtb_wvalue_of_byte((dtb_value)raw);
}

static dtb_status wld_of_losses(dtb_resolver *r, const dtb_ptable *t, unsigned flags,
                                dtb_error *e);

/* The table for WDL (dtw false) or DTW probes of material m. A DTW table that stores its losses
 * only is given once the material's WLD table is found too (wld_of_losses). */
ALWAYS_INLINE dtb_status find_table(dtb_resolver *r, dtb_material m, bool dtw, unsigned flags,
                                    const dtb_ptable **t, dtb_error *e)
{
    const bool fits = m.kings[0] < KINDS && m.kings[1] < KINDS && m.men[0] < KINDS && m.men[1] < KINDS;
    const int slot = ((m.kings[0] * KINDS + m.men[0]) * KINDS + m.kings[1]) * KINDS + m.men[1];
    if (fits && ((*t = atomic_load_explicit(&r->found[dtw][slot], memory_order_acquire)) ||
                 (*t = atomic_load_explicit(&r->searched_tables[dtw][slot], memory_order_acquire))))
        return DTB_OK;
    const bool may_open = !(flags & DTB_RESOLVE_CACHE_ONLY);
    dtb_status s = dtw ? dtb_tableset_get(r->ts, m, DTB_METRIC_DTW, may_open, t, e)
                       : dtb_tableset_get_wdl(r->ts, m, may_open, t, e);
    if (s == DTB_OK && dtw && (*t)->losses)
        s = wld_of_losses(r, *t, flags, e);
    /* A derived table, or one with threat don't-cares, is never published in found, only in
     * searched_tables: the fast path then finds no table for its positions and leaves them to
     * this general path, which searches those that hold no value, while the fast path of full
     * tables stays as it was (no test added). A losses-only DTW table is published in found
     * (after its WLD table): the fast path of DTW probes reads the WLD first (fast_losses). */
    if (s == DTB_OK && fits)
        atomic_store_explicit((*t)->derived || (*t)->threats ? &r->searched_tables[dtw][slot]
                                                             : &r->found[dtw][slot],
                              *t, memory_order_release);
    if (s == DTB_E_NOTCACHED && fits && r->ld)
        schedule_table(r, m, dtw, slot);
    return s;
}

/* Before a losses-only DTW table t is used: the WLD table of its material, which says which of
 * its quiet positions are wins and draws (found, so published for the fast path too). Without
 * it the table answers nothing: the status names both files. Not inline: a table's first use. */
static __attribute__((noinline)) dtb_status wld_of_losses(dtb_resolver *r, const dtb_ptable *t,
                                                         unsigned flags, dtb_error *e)
{
    const dtb_ptable *wt;
    dtb_error inner;
    const dtb_status s = find_table(r, t->material, false, flags, &wt, &inner);
    if (s == DTB_OK || s == DTB_E_NOTCACHED)
        return s;
    if (s == DTB_E_NOTFOUND) /* dtb_tableset_get_wdl's message names both files */
        return dtb_error_set(e, s, "%s", inner.msg);
    return dtb_error_set(e, s, "%s stores its losses only and needs the WLD table: %s", t->name,
                         inner.msg);
}

#if defined(__AVX2__)
/* dtb_pos_flip for boards of up to 64 squares (high words empty), the four sets in one vector:
 * bytes reversed by a shuffle, the bits of each byte by two nibble lookups (one shuffle each),
 * instead of a byte swap and three mask-and-shift rounds per set. */
static inline void flip_narrow(int squares, const dtb_pos *p, dtb_pos *out)
{
    const __m256i men = _mm256_loadu_si256((const __m256i *)(const void *)p->men);
    const __m256i kings = _mm256_loadu_si256((const __m256i *)(const void *)p->kings);
    /* white men, white kings, black men, black kings */
    __m256i v = dtb_mirror4(_mm256_unpacklo_epi64(men, kings), squares);
    v = _mm256_permute4x64_epi64(v, 0x4E); /* colours swapped: black's sets become white's */
    const __m256i zero = _mm256_setzero_si256();
    _mm256_storeu_si256((__m256i *)(void *)out->men, _mm256_unpacklo_epi64(v, zero));
    _mm256_storeu_si256((__m256i *)(void *)out->kings, _mm256_unpackhi_epi64(v, zero));
    out->side = p->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE;
}
#endif

/* p with white to move: p itself or its flip in *buf. */
static inline const dtb_pos *white_to_move(const dtb_resolver *r, const dtb_pos *p, dtb_pos *buf)
{
    if (p->side == DTB_WHITE)
        return p;
#if defined(__AVX2__)
    if (r->narrow) {
        flip_narrow(r->board->squares, p, buf);
        return buf;
    }
#endif
    dtb_pos_flip(r->board, p, buf);
    return buf;
}

/* Whether the side to move of p must capture. */
static inline bool must_capture(const dtb_resolver *r, const dtb_pos *p)
{
    return dtb_capturetest_or_core(&r->ct, r->board, p);
}

/* The WDL of stored value raw of table t. */
static inline dtb_status wdl_of_raw(const dtb_ptable *t, unsigned raw, dtb_wdl *out, dtb_error *e)
{
    if (t->metric == DTB_METRIC_DTW) {
        *out = dtb_value_wdl((dtb_value)raw);
        return DTB_OK;
    }
    /* A table instead of a switch: the three values come in no predictable order. */
    static const signed char wld[3] = {DTB_DRAW, DTB_WIN, DTB_LOSS};
    if (raw > 2)
        return dtb_error_set(e, DTB_E_CORRUPT, "%s: stored value %u is not a WLD value", t->name, raw);
    *out = (dtb_wdl)wld[raw];
    return DTB_OK;
}

/* ---- the search: capture positions and derived ones --------------------------------------- */

#if defined(__AVX2__)
/* The four sets (white men, white kings, black men, black kings) of a position on a board of up
 * to 64 squares, with white to move: the flip of the sets when black is to move (side 1),
 * chosen without a branch (the side to move of successive probes is not predictable), as in
 * flip_narrow. */
static inline __m256i white_sets(int squares, __m256i v, int side)
{
    const __m256i f = _mm256_permute4x64_epi64(dtb_mirror4(v, squares), 0x4E);
    return _mm256_blendv_epi8(v, f, _mm256_set1_epi64x(-(long long)side));
}
#endif

/* The sets of a position on a board of up to 64 squares with white to move in w (white men,
 * white kings, black men, black kings); whether it is quiet. */
ALWAYS_INLINE void white_sets64(const dtb_resolver *r, const uint64_t sets[4], dtb_color side,
                                uint64_t w[4])
{
#if defined(__AVX2__)
    const __m256i v = _mm256_set_epi64x((long long)sets[3], (long long)sets[1], (long long)sets[2],
                                        (long long)sets[0]);
    _mm256_storeu_si256((__m256i *)(void *)w, white_sets(r->board->squares, v, (int)side));
#else
    if (side == DTB_WHITE) {
        w[0] = sets[0], w[1] = sets[2], w[2] = sets[1], w[3] = sets[3];
    } else {
        const int down = 64 - r->board->squares;
        w[0] = dtb_reverse64(sets[1]) >> down, w[1] = dtb_reverse64(sets[3]) >> down;
        w[2] = dtb_reverse64(sets[0]) >> down, w[3] = dtb_reverse64(sets[2]) >> down;
    }
#endif
}

/* white_sets64, and whether the position is quiet. */
ALWAYS_INLINE bool quiet_sets64(const dtb_resolver *r, const uint64_t sets[4], dtb_color side,
                               uint64_t w[4])
{
    white_sets64(r, sets, side, w);
    if (r->ct.usable)
        return !dtb_capturetest_has_sets(&r->ct, w[0], w[1], w[2] | w[3], DTB_WHITE);
    const dtb_pos q = {{w[0], w[2]}, {w[1], w[3]}, DTB_WHITE};
    return !dtb_has_capture(r->board, &q);
}

/* The table already found (stored, never derived) of the quiet position w (white to move, its
 * sets as quiet_sets64 gives them) and w's index in it; false when find_table must say. */
ALWAYS_INLINE bool locate_sets(dtb_resolver *r, const uint64_t w[4], bool dtw,
                               const dtb_ptable **tp, uint64_t *index)
{
    const unsigned wm = (unsigned)__builtin_popcountll(w[0]);
    const unsigned wk = (unsigned)__builtin_popcountll(w[1]);
    const unsigned bm = (unsigned)__builtin_popcountll(w[2]);
    const unsigned bk = (unsigned)__builtin_popcountll(w[3]);
    /* find_table's slot, with one test that every count fits (at most 7; else find_table) */
    const unsigned slot = ((wk * KINDS + wm) * KINDS + bk) * KINDS + bm;
    const dtb_ptable *t;
    if ((wm | wk | bm | bk) >= 8 ||
        !(t = atomic_load_explicit(&r->found[dtw][slot], memory_order_acquire)))
        return false;
    *tp = t;
    uint64_t i;
#if defined(__POPCNT__)
    if (t->fast) /* inline, with this file's popcount instruction */
        i = dtb_index_fast_of(&t->ixf, w[0], w[2], w[1], w[3]);
    else
#endif
    {
        const dtb_pos q = {{w[0], w[2]}, {w[1], w[3]}, DTB_WHITE};
        i = dtb_index_of(t->ix, &q);
    }
    *index = i;
    return true;
}

/* The move lists of one probe's search, one per depth (a node's list lives while it tries its
 * moves). A list is large (DTB_MAX_MOVES moves) and engines may probe from threads with small
 * stacks, so lists are never on the stack; and a malloc and free of one per searched node cost
 * an eighth of a derived probe, so the lists of a finished probe are kept in the resolver's
 * spare slots for the next one (most probes then allocate nothing). */
typedef struct search_lists {
    dtb_movelist **level;
    int n, cap;
} search_lists;

static void search_lists_free(search_lists *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        free(l->level[i]);
    free(l->level);
    free(l);
}

/* One probe's search: the resolver, the probe's flags, its lists (NULL until a node needs one)
 * and the depth of the node being searched. */
typedef struct search {
    dtb_resolver *r;
    unsigned flags;
    search_lists *lists;
    unsigned spare; /* the spare slot the lists came from and go back to */
    int depth;
} search;

/* The spare slot of the calling thread: its stack's address hashed, so that threads mostly use
 * slots of their own (a thread that finds its slot empty allocates, and frees what it cannot put
 * back: two threads on one slot cost their allocations, never an error). */
static unsigned spare_slot(void)
{
    const char here = 0;
    const uint64_t a = (uint64_t)(uintptr_t)&here >> 12;
    return (unsigned)((a * 0x9E3779B97F4A7C15ull) >> (64 - SPARE_BITS));
}

static void search_begin(search *sc, dtb_resolver *r, unsigned flags)
{
    sc->r = r;
    sc->flags = flags;
    sc->lists = NULL;
    sc->depth = 0;
}

/* The lists back to the spare slot (or freed when it holds some already). */
static void search_end(search *sc)
{
    if (!sc->lists)
        return;
    search_lists *expected = NULL;
    if (!atomic_compare_exchange_strong(&sc->r->spare[sc->spare].lists, &expected, sc->lists))
        search_lists_free(sc->lists);
}

/* The list of the node at sc->depth, taken from the spare slot or allocated; NULL when out of
 * memory. */
static dtb_movelist *search_list(search *sc)
{
    if (!sc->lists) {
        sc->spare = spare_slot();
        sc->lists = atomic_exchange(&sc->r->spare[sc->spare].lists, NULL);
        if (!sc->lists && !(sc->lists = calloc(1, sizeof *sc->lists)))
            return NULL;
    }
    search_lists *l = sc->lists;
    if (sc->depth < l->n)
        return l->level[sc->depth];
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 8;
        dtb_movelist **bigger = realloc(l->level, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        l->level = bigger;
        l->cap = cap;
    }
    /* depth grows one node at a time: the missing level is the next one */
    dtb_movelist *list = malloc(sizeof *list);
    if (list)
        l->level[l->n++] = list;
    return list;
}

/* dtb_bb_shift on a word. */
static inline uint64_t shift64(uint64_t x, int n) { return n >= 0 ? x << n : x >> -n; }

/* The moves of quiet position p (its side to move has no capture: a derived one) on a board of
 * up to 64 squares, on words: dtb_generate's moves, with the kings' moves first. A WDL search
 * stops at its first win, and in these endgames the kings' moves win most often: kings first
 * took 3.5% fewer instructions per probe of the compact 2..5 set than dtb_generate's order (men
 * first). */
static dtb_status quiet_moves64(const dtb_resolver *r, const dtb_pos *p, dtb_movelist *out)
{
    const dtb_board *b = r->board;
    const dtb_color side = p->side;
    const bool fly = b->variant->kings_fly;
    const uint64_t empty = r->all64 & ~(uint64_t)dtb_pos_occupied(p);
    int n = 0;
    for (uint64_t kings = (uint64_t)p->kings[side]; kings; kings &= kings - 1) {
        const int from = __builtin_ctzll(kings);
        for (int d = 0; d < DTB_DIRS; d++)
            for (int t = b->next[from][d]; t >= 0 && (empty >> t & 1);
                 t = fly ? b->next[t][d] : -1) {
                if (n == DTB_MAX_MOVES)
                    return DTB_E_OVERFLOW;
                out->moves[n++] = (dtb_move){.from = (uint8_t)from, .to = (uint8_t)t};
            }
    }
    const uint64_t men = (uint64_t)p->men[side];
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(side, k);
        uint64_t to = (shift64(men & (uint64_t)b->step_from[d][0], b->step_shift[d][0]) |
                       shift64(men & (uint64_t)b->step_from[d][1], b->step_shift[d][1])) &
                      empty;
        for (; to; to &= to - 1) {
            const int t = __builtin_ctzll(to);
            if (n == DTB_MAX_MOVES)
                return DTB_E_OVERFLOW;
            out->moves[n++] = (dtb_move){.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                         .promotes = r->promotion64[side] >> t & 1};
        }
    }
    out->count = n;
    return DTB_OK;
}

/* The moves of p into the list of the node at sc->depth (NULL after setting *s); quiet: p has no
 * capture. */
static dtb_movelist *moves_of(search *sc, const dtb_pos *p, bool quiet, dtb_status *s,
                              dtb_error *e)
{
    dtb_movelist *list = search_list(sc);
    if (!list) {
        *s = dtb_error_set(e, DTB_E_NOMEM, "out of memory for a search");
        return NULL;
    }
    *s = quiet && sc->r->narrow ? quiet_moves64(sc->r, p, list)
                                : dtb_generate(sc->r->board, p, list);
    if (*s != DTB_OK) {
        *s = dtb_error_set(e, *s, "too many moves to list");
        return NULL;
    }
    return list;
}

/* What a search node learns of the successor q of p by move m before its value: the opponent
 * has no piece (SUCC_NONE: q's value is a loss in 0), a capture position (searched in the
 * second pass; q is not made), a quiet position of a stored table already found whose byte is
 * its value (*t and *index; q is not made; never a losses-only DTW table's), or anything else
 * (q made: quiet_wdl / quiet_value say). On boards of up to 64 squares all on words (ps: p's
 * sets, white men, black men, white kings, black kings): the move made on four words, then the
 * fast path's one flip, capture test and slot, instead of dtb_make_move on 128-bit sets,
 * must_capture, white_to_move and find_table. */
enum { SUCC_NONE, SUCC_CAPTURE, SUCC_STORED, SUCC_GENERAL };
ALWAYS_INLINE int successor(dtb_resolver *r, const dtb_pos *p, const uint64_t ps[4],
                            const dtb_move *m, bool dtw, dtb_pos *q, const dtb_ptable **t,
                            uint64_t *index)
{
    if (r->narrow) {
        const int side = (int)p->side, opp = side ^ 1;
        uint64_t qs[4] = {ps[0], ps[1], ps[2], ps[3]};
        dtb_make_move64(m, &qs[side], &qs[2 + side], &qs[opp], &qs[2 + opp]);
        if (!(qs[opp] | qs[2 + opp]))
            return SUCC_NONE;
        uint64_t w[4];
        if (!quiet_sets64(r, qs, (dtb_color)opp, w))
            return SUCC_CAPTURE;
        /* a losses-only DTW table's byte is read only after its WLD (quiet_value) */
        if (locate_sets(r, w, dtw, t, index) && !(dtw && (*t)->losses))
            return SUCC_STORED;
        *q = (dtb_pos){{qs[0], qs[1]}, {qs[2], qs[3]}, (dtb_color)opp};
        return SUCC_GENERAL;
    }
    dtb_make_move(p, m, q);
    if (!dtb_pos_pieces(q, q->side))
        return SUCC_NONE;
    return must_capture(r, q) ? SUCC_CAPTURE : SUCC_GENERAL;
}

/* p's sets as successor takes them (white men, black men, white kings, black kings). */
ALWAYS_INLINE void sets_of_pos(const dtb_pos *p, uint64_t ps[4])
{
    ps[0] = (uint64_t)p->men[DTB_WHITE], ps[1] = (uint64_t)p->men[DTB_BLACK];
    ps[2] = (uint64_t)p->kings[DTB_WHITE], ps[3] = (uint64_t)p->kings[DTB_BLACK];
}

static dtb_status quiet_wdl(search *sc, const dtb_pos *p, int alpha, int beta, dtb_wdl *out,
                            dtb_error *e);
static dtb_status quiet_value(search *sc, const dtb_pos *p, int alpha, int beta, dtb_wvalue *out,
                              dtb_error *e);

/* The WDL of p as the best over its legal moves of the negated successor values (a loss when it
 * has none): for a capture position (its moves are its captures) and a derived one. An
 * alpha-beta search on the three values: only an answer strictly between alpha and beta is
 * exact; one at or below alpha says the value is at most that, one at or above beta at least
 * that (fail-soft). The caller of a position wants its exact value (alpha -2, beta 2); inside
 * the search a successor only has to tell whether it beats what is in hand, which ends most
 * capture searches after their first capture. Moves whose successor is quiet (one lookup) come
 * first, those that need the opponent's capture search after them, with a narrower window.
 * Decided as soon as a move reaches beta (a win, at the top), even when the tables of other
 * moves fail; otherwise the first failure is the status. */
static dtb_status search_wdl(search *sc, const dtb_pos *p, bool quiet, int alpha, int beta,
                             dtb_wdl *out, dtb_error *e)
{
    dtb_resolver *const r = sc->r;
    dtb_status s;
    dtb_movelist *list = moves_of(sc, p, quiet, &s, e);
    if (!list)
        return s;
    uint64_t ps[4];
    sets_of_pos(p, ps);
    sc->depth++;
    int best = DTB_LOSS;
    dtb_status failed = DTB_OK;
    dtb_error later;
    uint64_t capture[DTB_MAX_MOVES / 64] = {0}; /* the successors left for the second pass */
    for (int pass = 0; pass < 2 && best < beta && best < DTB_WIN; pass++)
        for (int i = 0; i < list->count && best < beta && best < DTB_WIN; i++) {
            if (pass == 1 && !(capture[i / 64] >> (i % 64) & 1))
                continue;
            dtb_pos q;
            const int a = alpha > best ? alpha : best;
            dtb_wdl v = DTB_LOSS; /* the opponent has no piece left */
            dtb_error *const err = failed == DTB_OK ? e : &later;
            s = DTB_OK;
            if (pass == 1) {
                dtb_make_move(p, &list->moves[i], &q);
                s = search_wdl(sc, &q, false, -beta, -a, &v, err);
            } else {
                const dtb_ptable *t;
                uint64_t index;
                const int kind = successor(r, p, ps, &list->moves[i], false, &q, &t, &index);
                if (kind == SUCC_CAPTURE) {
                    capture[i / 64] |= 1ull << (i % 64);
                    continue;
                }
                if (kind == SUCC_STORED) {
                    unsigned raw;
                    s = lookup_index(r, t, index, sc->flags, &raw, err);
                    if (s == DTB_OK)
                        s = wdl_of_raw(t, raw, &v, err);
                } else if (kind == SUCC_GENERAL) {
                    s = quiet_wdl(sc, &q, -beta, -a, &v, err);
                }
            }
            if (s != DTB_OK) {
                if (failed == DTB_OK)
                    failed = s;
                continue;
            }
            if (-(int)v > best)
                best = -(int)v;
        }
    sc->depth--;
    if (failed != DTB_OK && best < beta && best < DTB_WIN)
        return failed;
    *out = (dtb_wdl)best;
    return DTB_OK;
}

/* The value of rank k (dtb_wvalue_rank: wins above draws above losses, the shorter win and the
 * longer loss the higher), k a rank of a value or the lowest one (a loss in 0). */
static inline dtb_wvalue value_of_rank(int k)
{
    return k > 0 ? dtb_wvalue_win(DTB_RANK_TOP - k) : k < 0 ? dtb_wvalue_loss(k + DTB_RANK_TOP) : DTB_WVALUE_DRAW;
}

/* The rank k of a successor's value seen from the side that moved into it is rank(parent(value))
 * = -k + sign(k), a strictly decreasing map; its inverse is -k - sign(k). */
static inline int rank_back(int k) { return -k - (k > 0) + (k < 0); }

/* The exact value of p as the best over its legal moves (the generator's rule: the shortest win,
 * else a draw, else the longest loss; a loss in 0 when it has no move): search_wdl's alpha-beta
 * search on ranks (dtb_wvalue_rank) instead of three values, the window passed to a successor
 * through the parent map's inverse. The caller of a position passes -DTB_RANK_WINDOW, DTB_RANK_WINDOW for the exact
 * value. Any failure is the status. */
static dtb_status search_value(search *sc, const dtb_pos *p, bool quiet, int alpha, int beta,
                               dtb_wvalue *out, dtb_error *e)
{
    dtb_resolver *const r = sc->r;
    dtb_status s;
    dtb_movelist *list = moves_of(sc, p, quiet, &s, e);
    if (!list)
        return s;
    uint64_t ps[4];
    sets_of_pos(p, ps);
    sc->depth++;
    int best = dtb_wvalue_rank(DTB_WVALUE_LOST); /* the lowest rank */
    uint64_t capture[DTB_MAX_MOVES / 64] = {0}; /* the successors left for the second pass */
    s = DTB_OK;
    for (int pass = 0; pass < 2 && best < beta && s == DTB_OK; pass++)
        for (int i = 0; i < list->count && best < beta && s == DTB_OK; i++) {
            if (pass == 1 && !(capture[i / 64] >> (i % 64) & 1))
                continue;
            dtb_pos q;
            const int a = alpha > best ? alpha : best;
            dtb_wvalue v = DTB_WVALUE_LOST; /* the opponent has no piece left */
            if (pass == 1) {
                dtb_make_move(p, &list->moves[i], &q);
                s = search_value(sc, &q, false, rank_back(beta), rank_back(a), &v, e);
            } else {
                const dtb_ptable *t;
                uint64_t index;
                const int kind = successor(r, p, ps, &list->moves[i], true, &q, &t, &index);
                if (kind == SUCC_CAPTURE) {
                    capture[i / 64] |= 1ull << (i % 64);
                    continue;
                }
                if (kind == SUCC_STORED) {
                    unsigned raw;
                    s = lookup_index(r, t, index, sc->flags, &raw, e);
                    v = value_of_raw(t, index, raw);
                } else if (kind == SUCC_GENERAL) {
                    s = quiet_value(sc, &q, rank_back(beta), rank_back(a), &v, e);
                }
            }
            const int mine = dtb_wvalue_rank(dtb_wvalue_parent(v));
            if (s == DTB_OK && mine > best)
                best = mine;
        }
    sc->depth--;
    if (s == DTB_OK)
        *out = value_of_rank(best);
    return s;
}

/* Before searching a position of t that holds no value: t's partner (the colour flip of its
 * material, where every non-promoting move lands) must be there; stored when t is derived, else
 * the derivation would go round between the two; derived when t is a stored table with threat
 * don't-cares, whose rule (probe/format/threat.h) bounds the search only when the partner's positions
 * are searched in turn. Moves into smaller materials (captures, promotions) always end. */
static dtb_status check_partner(dtb_resolver *r, const dtb_ptable *t, bool dtw, unsigned flags,
                                dtb_error *e)
{
    const dtb_ptable *pt;
    dtb_error inner;
    const dtb_status s = find_table(r, dtb_material_flip(t->material), dtw, flags, &pt, &inner);
    if (s == DTB_E_NOTCACHED)
        return s;
    if (s != DTB_OK)
        return dtb_error_set(e, s, "%s %s its pair: %s", t->name,
                             t->derived ? "is derived from" : "searches threat positions through",
                             inner.msg);
    if (t->derived && pt->derived)
        return dtb_error_set(e, DTB_E_CORRUPT,
                             "%s and %s are both derived (a compact set stores one of each pair)",
                             t->name, pt->name);
    /* A losses-only partner searches its wins' moves, which land back in t, searched in turn:
     * the two searches could go round. */
    if (t->derived && pt->losses)
        return dtb_error_set(e, DTB_E_CORRUPT,
                             "%s is derived from %s, which stores its losses only (a compact set "
                             "needs its stored DTW tables in full: dtbgen --dtw-store full)",
                             t->name, pt->name);
    if (!t->derived && !pt->derived)
        return dtb_error_set(e, DTB_E_CORRUPT,
                             "%s leaves threat positions to a search through %s, which is not "
                             "derived (a compact set derives one of each pair)",
                             t->name, pt->name);
    return DTB_OK;
}

/* The threat rule's questions answered as the search answers them: the capture test of the
 * fast path and, on boards of up to 64 squares, the move lists on words (quiet_moves64). */
static bool rule_has_capture(const void *user, const dtb_pos *p)
{
    return must_capture(user, p);
}

static dtb_status rule_quiet_moves(const void *user, const dtb_pos *p, dtb_movelist *out)
{
    const dtb_resolver *r = user;
    return r->narrow ? quiet_moves64(r, p, out) : dtb_generate(r->board, p, out);
}

/* Whether quiet position w (white to move) of table t holds no value and is to be searched:
 * t is derived, or leaves threat positions to the probe and probe/format/threat.h's rule accepts w (its
 * partner checked as check_partner says). The rule walks up to four plies in the move lists of
 * the next four search depths, which the search of w reuses after it. */
static dtb_status searched(search *sc, const dtb_ptable *t, const dtb_pos *w, bool dtw,
                           bool *search_it, dtb_error *e)
{
    *search_it = t->derived;
    if (t->threats) {
        dtb_movelist *lists[4];
        const int depth = sc->depth;
        for (int k = 0; k < 4; k++, sc->depth++)
            if (!(lists[k] = search_list(sc))) {
                sc->depth = depth;
                return dtb_error_set(e, DTB_E_NOMEM, "out of memory for a search");
            }
        sc->depth = depth;
        const dtb_threat_ops ops = {.has_capture = rule_has_capture,
                                    .quiet_moves = rule_quiet_moves,
                                    .user = sc->r};
        *search_it = dtb_threat_dontcare(sc->r->board, w, t->own_flip, lists, &ops);
    }
    if (!*search_it || t->own_flip)
        return DTB_OK;
    return check_partner(sc->r, t, dtw, sc->flags, e);
}

/* The value of quiet position p (either side to move) from the table for WDL (dtw false) or DTW
 * probes of its material: its stored value, or, for a position that holds none (searched), the
 * best over its moves, each of which lands in the partner table, in a capture or in a
 * promotion's material. */
static dtb_status quiet_wdl(search *sc, const dtb_pos *p, int alpha, int beta, dtb_wdl *out,
                            dtb_error *e)
{
    dtb_resolver *const r = sc->r;
    dtb_pos buf;
    const dtb_pos *w = white_to_move(r, p, &buf);
    const dtb_ptable *t;
    bool search_it;
    dtb_status s = find_table(r, dtb_material_of(w), false, sc->flags, &t, e);
    if (s == DTB_OK)
        s = searched(sc, t, w, false, &search_it, e);
    if (s != DTB_OK)
        return s;
    if (search_it)
        return search_wdl(sc, w, true, alpha, beta, out, e);
    unsigned raw;
    s = lookup(r, t, w, sc->flags, &raw, e);
    return s == DTB_OK ? wdl_of_raw(t, raw, out, e) : s;
}

/* The value of quiet position w (white to move) of losses-only DTW table t (docs/FORMAT.md §8.7),
 * inside the window (alpha, beta) as search_value answers: the result from the material's WLD
 * table (the WDL search's way: stored, derived or searched), a loss's distance from its byte (and
 * the long list), and a win's as 1 + the shortest DTW of a successor lost for the opponent: the
 * search of its moves with alpha raised to the draw's rank, since it is known to be a win. The
 * successors that are the opponent's wins and draws then fail high on their WLD alone (below:
 * a window whose beta a win reaches anyway), and only the lost ones read a DTW byte; so the
 * search of a win never searches a second win, and the positions it meets are one ply away,
 * captures aside. */
static dtb_status losses_value(search *sc, const dtb_ptable *t, const dtb_pos *w, int alpha,
                               int beta, dtb_wvalue *out, dtb_error *e)
{
    dtb_wdl wdl;
    dtb_status s = quiet_wdl(sc, w, DTB_LOSS - 1, DTB_WIN + 1, &wdl, e);
    if (s != DTB_OK)
        return s;
    if (wdl == DTB_DRAW) {
        *out = DTB_WVALUE_DRAW;
        return DTB_OK;
    }
    if (wdl == DTB_LOSS) {
        unsigned raw;
        const uint64_t i = index_in(t, w);
        if ((s = lookup_index(sc->r, t, i, sc->flags, &raw, e)) != DTB_OK)
            return s;
        if (!dtb_value_is_loss((dtb_value)raw))
            return dtb_error_set(e, DTB_E_CORRUPT,
                                 "%s: stored value %u at index %llu, a loss by its WLD table, is "
                                 "not a loss", t->name, raw, (unsigned long long)i);
        *out = value_of_raw(t, i, raw);
        return DTB_OK;
    }
    /* A win is at least as good as the longest one: when that reaches beta, it is the answer
     * (fail-soft: "at least"), with no search. */
    const dtb_wvalue longest = dtb_wvalue_win(DTB_MAX_DTW);
    if (beta <= dtb_wvalue_rank(longest)) {
        *out = longest;
        return DTB_OK;
    }
    if ((s = search_value(sc, w, true, alpha > 0 ? alpha : 0, beta, out, e)) != DTB_OK)
        return s;
    /* The search's answer is never below the true value, so a win gives a win whatever the
     * window: anything else means the WLD and DTW tables disagree. */
    if (!dtb_wvalue_is_win(*out))
        return dtb_error_set(e, DTB_E_CORRUPT,
                             "%s: a position its WLD table calls a win has no move into a "
                             "position lost for the opponent", t->name);
    return DTB_OK;
}

static dtb_status quiet_value(search *sc, const dtb_pos *p, int alpha, int beta, dtb_wvalue *out,
                              dtb_error *e)
{
    dtb_resolver *const r = sc->r;
    dtb_pos buf;
    const dtb_pos *w = white_to_move(r, p, &buf);
    const dtb_ptable *t;
    bool search_it;
    dtb_status s = find_table(r, dtb_material_of(w), true, sc->flags, &t, e);
    if (s == DTB_OK)
        s = searched(sc, t, w, true, &search_it, e);
    if (s != DTB_OK)
        return s;
    if (search_it)
        return search_value(sc, w, true, alpha, beta, out, e);
    if (t->losses)
        return losses_value(sc, t, w, alpha, beta, out, e);
    unsigned raw;
    const uint64_t i = index_in(t, w);
    s = lookup_index(r, t, i, sc->flags, &raw, e);
    if (s == DTB_OK)
        *out = value_of_raw(t, i, raw);
    return s;
}

dtb_status dtb_resolve_wdl(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wdl *out,
                           dtb_error *e)
{
    if (!dtb_pos_pieces(p, p->side)) {
        *out = DTB_LOSS;
        return DTB_OK;
    }
    search sc;
    search_begin(&sc, r, flags);
    const dtb_status s = !(flags & DTB_RESOLVE_QUIET) && must_capture(r, p)
                             ? search_wdl(&sc, p, false, DTB_LOSS - 1, DTB_WIN + 1, out, e)
                             : quiet_wdl(&sc, p, DTB_LOSS - 1, DTB_WIN + 1, out, e);
    search_end(&sc);
    return s;
}

dtb_status dtb_resolve_value(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wvalue *out,
                             dtb_error *e)
{
    if (!dtb_pos_pieces(p, p->side)) {
        *out = DTB_WVALUE_LOST;
        return DTB_OK;
    }
    search sc;
    search_begin(&sc, r, flags);
    const dtb_status s = !(flags & DTB_RESOLVE_QUIET) && must_capture(r, p)
                             ? search_value(&sc, p, false, -DTB_RANK_WINDOW, DTB_RANK_WINDOW, out, e)
                             : quiet_value(&sc, p, -DTB_RANK_WINDOW, DTB_RANK_WINDOW, out, e);
    search_end(&sc);
    return s;
}

dtb_status dtb_resolve_mtc(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wdl *wdl,
                           int *mtc, dtb_error *e)
{
    if (!dtb_pos_pieces(p, p->side)) {
        *wdl = DTB_LOSS;
        *mtc = 0;
        return DTB_OK;
    }
    /* The material's .mtc table is asked for even where its byte is not read (a capture
     * position): a set made without MTC answers no position's MTC. */
    dtb_pos buf;
    const dtb_pos *w = white_to_move(r, p, &buf);
    const dtb_ptable *t;
    dtb_status s = dtb_tableset_get(r->ts, dtb_material_of(w), DTB_METRIC_MTC,
                                    !(flags & DTB_RESOLVE_CACHE_ONLY), &t, e);
    if (s != DTB_OK)
        return s;
    /* Every move of a capture position converts: the MTC of a win or loss is 1, and the
     * capture search's result decides which (docs/FORMAT.md §8.5). */
    if (!(flags & DTB_RESOLVE_QUIET) && must_capture(r, p)) {
        s = dtb_resolve_wdl(r, p, flags, wdl, e);
        if (s == DTB_OK)
            *mtc = *wdl == DTB_DRAW ? 0 : 1;
        return s;
    }
    if (t->derived || t->threats) /* no writer makes them: compact sets leave MTC out */
        return dtb_error_set(e, DTB_E_CORRUPT, "%s: an MTC table of a compact set", t->name);
    unsigned raw;
    if ((s = lookup(r, t, w, flags, &raw, e)) != DTB_OK)
        return s;
    *wdl = dtb_value_wdl((dtb_value)raw);
    *mtc = *wdl == DTB_DRAW ? 0 : dtb_mtc_plies((dtb_value)raw);
    return DTB_OK;
}

dtb_status dtb_resolve_rule_byte(dtb_resolver *r, const dtb_pos *p, dtb_metric metric, int count,
                                 unsigned flags, dtb_value *raw, const dtb_tablefile_info **info,
                                 dtb_error *e)
{
    dtb_pos buf;
    const dtb_pos *w = white_to_move(r, p, &buf);
    const dtb_ptable *t;
    dtb_status s = dtb_tableset_get(r->ts, dtb_material_of(w), metric,
                                    !(flags & DTB_RESOLVE_CACHE_ONLY), &t, e);
    if (s != DTB_OK)
        return s;
    if (t->derived || t->threats) /* no writer makes them: compact sets leave rules out */
        return dtb_error_set(e, DTB_E_CORRUPT, "%s: a rule table of a compact set", t->name);
    *info = dtb_tablefile_get_info(t->tf);
    /* count layers one after another, count 0 first (docs/FORMAT.md §8.6) */
    const int layer = count < (*info)->rule_layers ? count : (*info)->rule_layers - 1;
    unsigned v;
    s = lookup_index(r, t, index_in(t, w) + (uint64_t)layer * dtb_index_size(t->ix), flags, &v, e);
    if (s != DTB_OK)
        return s;
    *raw = (dtb_value)v;
    return DTB_OK;
}

/* ---- boards of up to 64 squares: the quiet probe on words ----------------------------------- */

/* A block read on a miss of the fast path: the value, or a status (the general path, taken after
 * a failure, words the message). Not inline: the message buffer stays off the hot path. */
static __attribute__((noinline)) dtb_status read_block_fast(dtb_resolver *r, const dtb_ptable *t,
                                                           uint64_t blk, uint64_t off,
                                                           unsigned *raw)
{
    dtb_error e;
    return read_block(r, t, blk, off, raw, &e);
}

/* The public position's words checked as to_pos (dtb.c) checks them, on single words and without
 * a branch on the position: true when valid, with its sets in sets (white men, black men, white
 * kings, black kings). */
ALWAYS_INLINE bool sets_of_words(const dtb_resolver *r, const uint64_t men[2][2],
                                const uint64_t kings[2][2], int side, uint64_t sets[4])
{
    const uint64_t wm = men[0][0], bm = men[1][0], wk = kings[0][0], bk = kings[1][0];
    const uint64_t high = men[0][1] | men[1][1] | kings[0][1] | kings[1][1];
    const uint64_t white = wm | wk, black = bm | bk;
    const uint64_t other = side ? white : black; /* the side not to move has a piece */
    const bool ok = ((unsigned)side <= 1) &
                    !(high | ((white | black) & ~r->all64) | (wm & wk) | (bm & bk) |
                      (white & black) | (wm & r->promotion64[0]) | (bm & r->promotion64[1])) &
                    (__builtin_popcountll(white) <= r->limit) &
                    (__builtin_popcountll(black) <= r->limit) & (other != 0);
    sets[0] = wm, sets[1] = bm, sets[2] = wk, sets[3] = bk;
    return ok;
}

/* The table and index of a quiet position found without a table to open or a capture: false
 * when the general path must take it. With DTB_RESOLVE_QUIET the capture test is skipped (the
 * caller has made it). */
ALWAYS_INLINE bool fast_locate(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                               int side, bool dtw, unsigned flags, const dtb_ptable **tp,
                               uint64_t *index)
{
    uint64_t sets[4], w[4];
    if (!r->narrow || !sets_of_words(r, men, kings, side, sets) || !(sets[side] | sets[2 + side]))
        return false;
    if (flags & DTB_RESOLVE_QUIET)
        white_sets64(r, sets, (dtb_color)side, w);
    else if (!quiet_sets64(r, sets, (dtb_color)side, w))
        return false;
    return locate_sets(r, w, dtw, tp, index);
}

/* The stored value at offset off of block blk of table t through the cache, or a block read; or
 * DTB_RESOLVE_SLOW. */
ALWAYS_INLINE int fast_value_at(dtb_resolver *r, const dtb_ptable *t, uint64_t blk, uint64_t off,
                                unsigned flags, unsigned *raw)
{
    if (dtb_blockcache_get(r->cache, t->key_base | blk, off, t->bits, raw))
        return DTB_OK;
    if (flags & DTB_RESOLVE_CACHE_ONLY) {
        if (r->ld)
            schedule_block(r, t, blk);
        return DTB_E_NOTCACHED;
    }
    return read_block_fast(r, t, blk, off, raw) == DTB_OK ? DTB_OK : DTB_RESOLVE_SLOW;
}

/* The stored value of a quiet position found without a table to open, an error or a capture; or
 * DTB_RESOLVE_SLOW. */
ALWAYS_INLINE int fast_raw(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                          int side, bool dtw, unsigned flags, const dtb_ptable **tp,
                          unsigned *raw)
{
    uint64_t i, blk, off;
    if (!fast_locate(r, men, kings, side, dtw, flags, tp, &i))
        return DTB_RESOLVE_SLOW;
    split_index(*tp, i, &blk, &off);
    return fast_value_at(r, *tp, blk, off, flags, raw);
}

int dtb_resolve_fast_locate(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                            int side, bool dtw, unsigned flags, dtb_resolve_ticket *tk)
{
    const dtb_ptable *t;
    uint64_t i;
    if (!fast_locate(r, men, kings, side, dtw, flags, &t, &i))
        return tk->status = DTB_RESOLVE_SLOW;
    tk->table = t;
    split_index(t, i, &tk->block, &tk->offset);
    dtb_blockcache_prefetch_slot(r->cache, t->key_base | tk->block);
    return tk->status = DTB_OK;
}

void dtb_resolve_fast_prefetch(dtb_resolver *r, const dtb_resolve_ticket *tk)
{
    if (tk->status == DTB_OK)
        dtb_blockcache_prefetch_value(r->cache, tk->table->key_base | tk->block, tk->offset,
                                      tk->table->bits);
}

/* The result of a stored value raw of table t as the fast path gives it. */
ALWAYS_INLINE int fast_wdl(const dtb_ptable *t, unsigned raw, dtb_wdl *out)
{
    if (t->metric == DTB_METRIC_DTW) {
        *out = dtb_value_wdl((dtb_value)raw);
        return DTB_OK;
    }
    /* A table instead of a switch: the three values come in no predictable order. */
    static const signed char wld[3] = {DTB_DRAW, DTB_WIN, DTB_LOSS};
    if (raw > 2)
        return DTB_RESOLVE_SLOW; /* the general path reports it */
    *out = (dtb_wdl)wld[raw];
    return DTB_OK;
}

int dtb_resolve_wdl_fast(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                         int side, unsigned flags, dtb_wdl *out)
{
    const dtb_ptable *t;
    unsigned raw;
    const int s = fast_raw(r, men, kings, side, false, flags, &t, &raw);
    return s != DTB_OK ? s : fast_wdl(t, raw, out);
}

/* The value of the quiet position at index i of losses-only DTW table t (docs/FORMAT.md §8.7) on
 * the fast path: its result from the material's WLD table when the fast path has that (a stored
 * table: find_table published it before t), then a loss's byte; a draw is a draw. A win's
 * distance needs a search, and anything the fast path cannot answer goes the general way. */
ALWAYS_INLINE int fast_losses(dtb_resolver *r, const dtb_ptable *t, uint64_t i, unsigned flags,
                              dtb_wvalue *out)
{
    const dtb_material m = t->material;
    const int slot = ((m.kings[0] * KINDS + m.men[0]) * KINDS + m.kings[1]) * KINDS + m.men[1];
    const dtb_ptable *wt = atomic_load_explicit(&r->found[0][slot], memory_order_acquire);
    if (!wt)
        return DTB_RESOLVE_SLOW;
    uint64_t blk, off;
    unsigned raw;
    split_index(wt, i, &blk, &off);
    int s = fast_value_at(r, wt, blk, off, flags, &raw);
    dtb_wdl wdl;
    if (s != DTB_OK || (s = fast_wdl(wt, raw, &wdl)) != DTB_OK)
        return s;
    if (wdl == DTB_WIN)
        return DTB_RESOLVE_SLOW;
    if (wdl == DTB_DRAW) {
        *out = DTB_WVALUE_DRAW;
        return DTB_OK;
    }
    split_index(t, i, &blk, &off);
    if ((s = fast_value_at(r, t, blk, off, flags, &raw)) != DTB_OK)
        return s;
    /* not a loss's byte (the general path reports it), or the long list's */
    if (!dtb_value_is_loss((dtb_value)raw) || listed_escape(t, raw))
        return DTB_RESOLVE_SLOW;
    *out = dtb_wvalue_of_byte((dtb_value)raw);
    return DTB_OK;
}

int dtb_resolve_value_fast(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                           int side, unsigned flags, dtb_wvalue *out)
{
    const dtb_ptable *t;
    uint64_t i, blk, off;
    unsigned raw;
    if (!fast_locate(r, men, kings, side, true, flags, &t, &i))
        return DTB_RESOLVE_SLOW;
    if (t->losses)
        return fast_losses(r, t, i, flags, out);
    split_index(t, i, &blk, &off);
    const int s = fast_value_at(r, t, blk, off, flags, &raw);
    if (s != DTB_OK)
        return s;
    if (listed_escape(t, raw)) /* the general path looks the long list up */
        return DTB_RESOLVE_SLOW;
    *out = dtb_wvalue_of_byte((dtb_value)raw);
    return DTB_OK;
}

/* The stored value of a located position (tk->status DTB_OK). */
ALWAYS_INLINE int finish_raw(dtb_resolver *r, const dtb_resolve_ticket *tk, unsigned flags,
                             unsigned *raw)
{
    return tk->status != DTB_OK ? tk->status
                                : fast_value_at(r, tk->table, tk->block, tk->offset, flags, raw);
}

int dtb_resolve_fast_finish_wdl(dtb_resolver *r, const dtb_resolve_ticket *tk, unsigned flags,
                                dtb_wdl *out)
{
    unsigned raw;
    const int s = finish_raw(r, tk, flags, &raw);
    return s != DTB_OK ? s : fast_wdl(tk->table, raw, out);
}

int dtb_resolve_fast_finish_value(dtb_resolver *r, const dtb_resolve_ticket *tk, unsigned flags,
                                  dtb_wvalue *out)
{
    /* A losses-only table reads its WLD table first (the ticket's prefetch of its byte serves
     * the losses); the index comes back from the ticket's block and offset. */
    if (tk->status == DTB_OK && tk->table->losses)
        return fast_losses(r, tk->table, tk->block * tk->table->block_positions + tk->offset,
                           flags, out);
    unsigned raw;
    const int s = finish_raw(r, tk, flags, &raw);
    if (s != DTB_OK)
        return s;
    if (listed_escape(tk->table, raw))
        return DTB_RESOLVE_SLOW;
    *out = dtb_wvalue_of_byte((dtb_value)raw);
    return DTB_OK;
}

/* ---- the background loader ---------------------------------------------------------------------
 *
 * An engine probes cache-only in its search, where a disk read would stall the search; before
 * this loader a block such a probe missed stayed missing for ever. Now the miss is handed to a
 * few threads of the resolver's own that read the block (or open the table) while the search
 * goes on, so the next probe of that block hits.
 *
 * The probing thread never waits and never enters the kernel: it checks a small filter of
 * requests still pending (one relaxed load; a block missed again and again while its read is
 * under way is asked for once), then takes the queue's mutex only if it is free (trylock: when a
 * loader or another prober holds it, the request is dropped and the next miss asks again). The
 * queue is bounded; when it is full the oldest request gives way, and loaders take the newest
 * first: an engine's recent misses are the ones its search is about to need again.
 *
 * No wake-up from the prober (issue #38): signalling a sleeping loader is a futex system call,
 * and the woken loader then preempts a search thread on a machine whose cores the search uses;
 * on two searching threads and two cores that made cache-only misses cost 1-16 us instead of
 * the 0.1 us of a hit. Instead an idle loader looks at the queue every LOADER_POLL_NS (a
 * request waits at most that long, against the fraction of a millisecond its read takes), and
 * every LOADER_IDLE_NS once nothing has come for a second. The loaders also run at a lower
 * priority (nice LOADER_NICE), so that their reads take the cores' spare time first. */

#define LOADER_POLL_NS 1000000L  /* 1 ms */
#define LOADER_IDLE_NS 20000000L /* 20 ms, after LOADER_IDLE_POLLS empty looks */
#define LOADER_IDLE_POLLS 1000
#define LOADER_NICE 10
#define LOADER_QUEUE 1024
#define LOADER_FILTER 4096 /* a power of two */
#define TABLE_REQUEST (1ull << 63) /* above every block key (DTB_PTABLE_KEY_SHIFT + table number) */

typedef struct load_request {
    uint64_t key;         /* the block's cache key, or TABLE_REQUEST | dtw << 20 | material slot */
    const dtb_ptable *t;  /* the block's table; NULL: open the table of m */
    uint64_t block;
    dtb_material m;
    bool dtw;
} load_request;

struct loader {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;                /* under lock */
    unsigned head, count;     /* the queue, oldest at head; under lock */
    load_request queue[LOADER_QUEUE];
    pthread_t threads[DTB_RESOLVE_MAX_LOADERS];
    int nthreads;
    /* Keys queued or being loaded, by hash: a slot holds one key (a collision replaces it, which
     * at worst lets a duplicate in; the loader finds the block there and skips it). */
    _Atomic uint64_t pending[LOADER_FILTER];
    _Atomic uint64_t scheduled, done, dropped;
};

static _Atomic uint64_t *pending_slot(struct loader *ld, uint64_t key)
{
    return &ld->pending[dtb_blockcache_hash_(key) >> 40 & (LOADER_FILTER - 1)];
}

/* Clears key's pending mark unless a later key took the slot. */
static void pending_clear(struct loader *ld, uint64_t key)
{
    uint64_t k = key;
    atomic_compare_exchange_strong_explicit(pending_slot(ld, key), &k, 0, memory_order_relaxed,
                                            memory_order_relaxed);
}

/* Not inline: only cache-only misses come here, and the hot path stays small. */
static __attribute__((noinline)) void schedule(dtb_resolver *r, const load_request *q)
{
    struct loader *ld = r->ld;
    _Atomic uint64_t *mark = pending_slot(ld, q->key);
    if (atomic_load_explicit(mark, memory_order_relaxed) == q->key)
        return; /* asked for already */
    /* Marked before the lock is tried: the other threads that miss the same block meanwhile
     * return above instead of meeting at the mutex. */
    if (atomic_exchange_explicit(mark, q->key, memory_order_relaxed) == q->key)
        return;
    if (pthread_mutex_trylock(&ld->lock) != 0) {
        pending_clear(ld, q->key);
        atomic_fetch_add_explicit(&ld->dropped, 1, memory_order_relaxed);
        return;
    }
    if (ld->count == LOADER_QUEUE) {
        const uint64_t oldest = ld->queue[ld->head].key;
        if (oldest != q->key)
            pending_clear(ld, oldest);
        ld->head = (ld->head + 1) % LOADER_QUEUE;
        ld->count--;
        atomic_fetch_add_explicit(&ld->dropped, 1, memory_order_relaxed);
    }
    ld->queue[(ld->head + ld->count) % LOADER_QUEUE] = *q;
    ld->count++;
    atomic_fetch_add_explicit(&ld->scheduled, 1, memory_order_relaxed);
    pthread_mutex_unlock(&ld->lock); /* no signal: the loaders poll (above) */
}

static void schedule_block(dtb_resolver *r, const dtb_ptable *t, uint64_t blk)
{
    const load_request q = {.key = t->key_base | blk, .t = t, .block = blk};
    schedule(r, &q);
}

static void schedule_table(dtb_resolver *r, dtb_material m, bool dtw, int slot)
{
    const load_request q = {.key = TABLE_REQUEST | (uint64_t)dtw << 20 | (uint64_t)slot, .m = m,
                            .dtw = dtw};
    schedule(r, &q);
}

static void load(dtb_resolver *r, const load_request *q)
{
    dtb_error e;
    if (q->t) {
        unsigned raw;
        if (!dtb_blockcache_contains(r->cache, q->key))
            read_block(r, q->t, q->block, 0, &raw, &e); /* a failure is logged once by read_block,
                                                          and the next probe reports it */
    } else {
        const dtb_ptable *t;
        find_table(r, q->m, q->dtw, 0, &t, &e); /* a missing or damaged table is remembered */
    }
}

static void *loader_main(void *arg)
{
    dtb_resolver *r = arg;
    struct loader *ld = r->ld;
#ifdef __linux__
    /* this thread only (a Linux thread has its own nice value); a failure leaves it as it is */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LOADER_NICE);
#endif
    int idle = 0;
    pthread_mutex_lock(&ld->lock);
    for (;;) {
        while (!ld->stop && ld->count == 0) {
            /* a timed wait: only dtb_close signals (the probers do not, see above) */
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            t.tv_nsec += idle < LOADER_IDLE_POLLS ? LOADER_POLL_NS : LOADER_IDLE_NS;
            t.tv_sec += t.tv_nsec / 1000000000L;
            t.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&ld->wake, &ld->lock, &t);
            if (idle < LOADER_IDLE_POLLS)
                idle++;
        }
        if (ld->stop)
            break;
        idle = 0;
        ld->count--;
        const load_request q = ld->queue[(ld->head + ld->count) % LOADER_QUEUE]; /* the newest */
        pthread_mutex_unlock(&ld->lock);
        load(r, &q);
        pending_clear(ld, q.key); /* after the put: a probe in between still sees it pending */
        atomic_fetch_add_explicit(&ld->done, 1, memory_order_relaxed);
        pthread_mutex_lock(&ld->lock);
    }
    pthread_mutex_unlock(&ld->lock);
    return NULL;
}

static void loader_stop(struct loader *ld)
{
    if (!ld)
        return;
    pthread_mutex_lock(&ld->lock);
    ld->stop = true;
    pthread_cond_broadcast(&ld->wake);
    pthread_mutex_unlock(&ld->lock);
    for (int i = 0; i < ld->nthreads; i++)
        pthread_join(ld->threads[i], NULL);
    pthread_cond_destroy(&ld->wake);
    pthread_mutex_destroy(&ld->lock);
    free(ld);
}

static bool loader_start(dtb_resolver *r, int threads)
{
    struct loader *ld = calloc(1, sizeof *ld);
    if (!ld)
        return false;
    pthread_mutex_init(&ld->lock, NULL);
    pthread_condattr_t ca; /* timed waits on the monotonic clock: a clock change cannot stall them */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ld->wake, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < LOADER_FILTER; i++)
        atomic_init(&ld->pending[i], 0);
    atomic_init(&ld->scheduled, 0);
    atomic_init(&ld->done, 0);
    atomic_init(&ld->dropped, 0);
    r->ld = ld; /* before the threads start: they read it */
    for (; ld->nthreads < threads; ld->nthreads++)
        if (pthread_create(&ld->threads[ld->nthreads], NULL, loader_main, r) != 0)
            return false; /* dtb_resolver_free stops the ones started */
    return true;
}

void dtb_resolver_get_load_stats(dtb_resolver *r, dtb_resolver_load_stats *st)
{
    *st = (dtb_resolver_load_stats){0};
    if (r->ld) {
        st->scheduled = atomic_load_explicit(&r->ld->scheduled, memory_order_relaxed);
        st->done = atomic_load_explicit(&r->ld->done, memory_order_relaxed);
        st->dropped = atomic_load_explicit(&r->ld->dropped, memory_order_relaxed);
    }
}

/* ---- warming and sizing ----------------------------------------------------------------------- */

/* The budget every block of t takes in the cache. */
static uint64_t table_cost(const dtb_ptable *t)
{
    const uint64_t blocks = dtb_tablefile_get_info(t->tf)->blocks;
    uint64_t sum = 0;
    for (uint64_t b = 0; b < blocks; b++)
        sum += dtb_blockcache_cost((size_t)dtb_tablefile_packed_len(t->tf, b));
    return sum;
}

/* The materials of 2..pieces pieces in a fresh array (*n of them), or NULL when out of memory. */
static dtb_material *materials_upto(int pieces, int *n)
{
    *n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *list);
    if (list)
        dtb_material_list(pieces, list, *n);
    return list;
}

/* The tables DTW (dtw) or WDL probes of material m read, into t[0..*n): its table, and for a
 * losses-only DTW table the WLD table its probes read first. */
static dtb_status probe_tables(dtb_resolver *r, dtb_material m, bool dtw, const dtb_ptable *t[2],
                               int *n, dtb_error *e)
{
    *n = 0;
    dtb_status s = find_table(r, m, dtw, 0, &t[0], e);
    if (s == DTB_OK && dtw && t[0]->losses)
        s = find_table(r, m, false, 0, &t[1], e); /* found already (wld_of_losses) */
    if (s == DTB_OK)
        *n = dtw && t[0]->losses ? 2 : 1;
    return s;
}

dtb_status dtb_resolver_working_set(dtb_resolver *r, int pieces, bool dtw, uint64_t *bytes,
                                    dtb_error *e)
{
    int n;
    dtb_material *list = materials_upto(pieces, &n);
    if (!list)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory listing materials");
    uint64_t sum = 0;
    dtb_status s = DTB_OK;
    for (int i = 0; i < n && s == DTB_OK; i++) {
        const dtb_ptable *t[2];
        int k;
        if ((s = probe_tables(r, list[i], dtw, t, &k, e)) == DTB_OK)
            for (int j = 0; j < k; j++)
                sum += table_cost(t[j]);
    }
    free(list);
    if (s == DTB_OK)
        *bytes = sum;
    return s;
}

dtb_status dtb_resolver_warm(dtb_resolver *r, int max_pieces, bool dtw, uint64_t *bytes,
                             dtb_error *e)
{
    int n;
    dtb_material *list = materials_upto(max_pieces, &n);
    if (!list)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory listing materials");
    const uint64_t limit = r->budget / 8 * 7;
    uint64_t used = 0, skipped = 0;
    int nskipped = 0;
    dtb_status first = DTB_OK;
    for (int i = 0; i < n; i++) {
        const dtb_ptable *t[2];
        int k;
        dtb_error err;
        dtb_status s = probe_tables(r, list[i], dtw, t, &k, &err);
        if (s == DTB_E_NOTFOUND)
            continue;
        uint64_t cost = 0;
        for (int j = 0; j < k; j++)
            cost += table_cost(t[j]);
        if (s == DTB_OK && used + cost > limit) {
            skipped += cost, nskipped++;
            continue; /* a smaller material further on may still fit */
        }
        for (int j = 0; j < k && s == DTB_OK; j++) {
            const uint64_t blocks = dtb_tablefile_get_info(t[j]->tf)->blocks;
            for (uint64_t b = 0; b < blocks && s == DTB_OK; b++) {
                unsigned raw;
                if (!dtb_blockcache_contains(r->cache, t[j]->key_base | b))
                    s = read_block(r, t[j], b, 0, &raw, &err);
            }
        }
        if (s == DTB_OK)
            used += cost;
        else if (first == DTB_OK)
            first = dtb_error_set(e, s, "%s", err.msg);
    }
    free(list);
    *bytes = used;
    if (first == DTB_OK && nskipped > 0)
        first = dtb_error_set(e, DTB_E_NOROOM,
                              "warmed %.1f MB; %d tables (%.1f MB) did not fit in 7/8 of the "
                              "cache budget of %.1f MB",
                              (double)used / 1e6, nskipped, (double)skipped / 1e6,
                              (double)r->budget / 1e6);
    return first;
}
