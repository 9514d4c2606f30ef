/* The solver's interface (gen/solve.h): a pair's levels of units, handed to the state that
 * solves them (gen/solve_unit.h: node, lean, kingless), in parts when several processes share
 * a pair; packing and unpacking parts' values for them. */
#include "solve_unit.h"

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
        const work wk = dtb_unit_work_of(b, t, ft, blk);
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
                ps->w[nw++] = dtb_unit_work_of(b, t, ft, blk);
    }
    if (dtb_index_fast_get(t->index, &ps->fxt) && dtb_index_fast_get(ft->index, &ps->fxft)) {
        ps->fx0 = &ps->fxt;
        ps->fx1 = &ps->fxft;
    }
    for (int l = 0; l < ps->nthreads; l++) {
        dtb_unit_stats_reset(&ps->lanes[l].st[0]);
        dtb_unit_stats_reset(&ps->lanes[l].st[1]);
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

/* In the pair's first material's terms a unit is one placement of the men with either side to
 * move (its flip block holds the other side's turn), so the men it reaches by a step are those
 * of a white step and of a black step from its own placement. */
void dtb_pair_solver_reach(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1, uint8_t *need)
{
    const dtb_board *b = ps->b;
    const dtb_index *ix = ps->t->index;
    for (uint64_t blk = b0; blk < b1 && blk < ps->nblocks; blk++) {
        if (ps->adv[blk] != a)
            continue;
        dtb_bb men[2];
        dtb_index_block_men(ix, blk, &men[DTB_WHITE], &men[DTB_BLACK]);
        const dtb_bb all = men[0] | men[1];
        for (int c = 0; c < 2; c++)
            for (dtb_bb rest = men[c]; rest;) {
                const int from = dtb_bb_pop(&rest);
                for (int k = 0; k < 2; k++) {
                    const int to = b->next[from][dtb_forward_dir((dtb_color)c, k)];
                    if (to < 0 || dtb_bb_has(all, to) || dtb_bb_has(b->promotion[c], to))
                        continue;
                    dtb_bb moved[2] = {men[0], men[1]};
                    moved[c] = (moved[c] & ~dtb_bb_bit(from)) | dtb_bb_bit(to);
                    uint64_t y = dtb_index_block_of(ix, moved[DTB_WHITE], moved[DTB_BLACK]);
                    if (ps->adv[y] == NOT_A_UNIT) /* listed from its other block */
                        y = dtb_unit_work_of(b, ps->t, ps->ft, y).fblock;
                    assert(ps->adv[y] == a + 1 && "a man's step advances by one");
                    need[y] = 1;
                }
            }
    }
}

int dtb_pair_solver_next_level(const dtb_pair_solver *ps, int a)
{
    for (a = (a > NOT_A_UNIT ? NOT_A_UNIT : a) - 1; a >= 0; a--)
        if (ps->level_units[a])
            return a;
    return -1;
}

dtb_material dtb_pair_solver_material(const dtb_pair_solver *ps) { return ps->t->material; }

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
        const work wk = {blk, dtb_unit_flipped_block(ps->b, ps->ft, wm, bm), a};
        f(ps, user, blk, wk.fblock, dtb_unit_halves(&wk, ps->self));
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

typedef struct each_ctx {
    void (*each)(void *user, int k, uint64_t block);
    void *user;
} each_ctx;

static void each_unit(const dtb_pair_solver *ps, void *user, uint64_t blk, uint64_t fblk, int halves)
{
    const each_ctx *c = user;
    c->each(c->user, 0, blk);
    if (halves == 2)
        c->each(c->user, ps->self ? 0 : 1, fblk);
}

void dtb_pair_solver_each_block(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                void (*each)(void *user, int k, uint64_t block), void *user)
{
    each_ctx c = {each, user};
    level_units_in(ps, a, b0, b1, each_unit, &c);
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
        uint64_t solved = dtb_kingless_solve(s, adv, b0, b1, a, count, t, ft, self, lanes);
        if (progress)
            dtb_unit_report_progress(progress, user, done, &solved, total);
        else
            *done += solved;
        return lanes_status(ps, e);
    }
    /* Listed units of the range are w[lo..hi); the others are the blocks with adv[blk] == a. */
    const uint64_t lo = listed ? listed_at(ps, a, b0) : 0, hi = listed ? listed_at(ps, a, b1) : 0;
    /* A level of few large units: whole units to each thread as long as every thread gets
     * one (no barrier inside a unit then), the rest shared by all threads. Large units
     * too: a shared unit pays barriers at each of its levels, hundreds where wins are long. */
    const bool few = nthreads > 1 && listed && hi - lo < 4 * (uint64_t)nthreads;
    uint64_t mid = hi; /* units lo..mid-1 one per thread, mid..hi-1 shared */
    if (few)
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
                wk.fblock = dtb_unit_flipped_block(ps->b, ft, wm, bm);
            }
            dtb_unit_setup(&u, &wk, t, ft, self);
            dtb_node_solve_unit(&u, me);
            pending += (uint64_t)u.nhalves * K;
            if (progress && pending >= PROGRESS_STEP)
                dtb_unit_report_progress(progress, user, done, &pending, total);
        }
        if (progress && pending)
            dtb_unit_report_progress(progress, user, done, &pending, total);
        else if (pending) {
#pragma omp atomic
            *done += pending;
        }
    }
    bool stop = dtb_unit_lanes_failed(lanes, nthreads);
    if (mid < hi && !stop) {
        /* the first lane's room, as the plan counts it (dtb_build_plan: a unit per thread) */
        if (!lanes[0].nodes && !(lanes[0].nodes = dtb_huge_calloc(2 * K * sizeof *lanes[0].nodes)))
            lanes[0].nomem = stop = true;
        node *const shared_nodes = lanes[0].nodes;
        for (uint64_t i = mid; i < hi && !stop; i++) {
            unit u = {.b = ps->b, .s = s, .K = K, .n = shared_nodes, .shared = true,
                      .fx = {fx0, fx1}, .quick_capture = quick};
            dtb_unit_setup(&u, &w[i], t, ft, self);
            dtb_node_solve_unit_shared(&u, lanes, nthreads);
            stop = dtb_unit_lanes_failed(lanes, nthreads);
            uint64_t solved = (uint64_t)u.nhalves * K;
            if (progress)
                dtb_unit_report_progress(progress, user, done, &solved, total);
            else
                *done += solved;
        }
    }
    return lanes_status(ps, e);
}

void dtb_pair_solver_levels(const dtb_pair_solver *ps, uint8_t *levels, uint8_t *flevels)
{
    const bool self = ps->self;
#pragma omp parallel for schedule(static)
    for (uint64_t blk = 0; blk < ps->nblocks; blk++) {
        const work wk = dtb_unit_work_of(ps->b, ps->t, ps->ft, blk);
        levels[blk] = (uint8_t)wk.adv;
        if (!self) /* the flip is a bijection of blocks that keeps the advancement */
            flevels[wk.fblock] = (uint8_t)wk.adv;
    }
}

bool dtb_pair_solver_has_long(const dtb_pair_solver *ps)
{
    return dtb_solved_long_count(ps->s, ps->t) + dtb_solved_long_count(ps->s, ps->ft) > 0;
}

void dtb_pair_solver_stats(const dtb_pair_solver *ps, dtb_solve_stats stats[2])
{
    dtb_unit_stats_reset(&stats[0]);
    dtb_unit_stats_reset(&stats[1]);
    for (int l = 0; l < ps->nthreads; l++) {
        dtb_unit_merge_stats(&stats[0], &ps->lanes[l].st[0]);
        dtb_unit_merge_stats(&stats[1], &ps->lanes[l].st[1]);
    }
}

dtb_status dtb_solve_pair(dtb_solved *s, dtb_material m, bool lean, dtb_solve_stats stats[2],
                          dtb_solve_progress progress, void *user, dtb_error *e)
{
    if (lean && dtb_solve_lean_applies(&m))
        return dtb_lean_solve_pair(s, m, stats, progress, user, e);
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
