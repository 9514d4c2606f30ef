/* The MTC solve (gen/solve.h, dtb_solve_mtc_pair): moves to conversion, a retrograde analysis
 * per unit (gen/solve_unit.h) over the win / draw / loss the pair already has.
 *
 * Inside a unit only king moves happen; every man move, promotion and capture is a conversion
 * and ends the count. So, with the result of every position known:
 *   - a win converts at 1 when one of its conversions reaches a position lost for the
 *     opponent, else at 1 + the shortest MTC of its king moves into lost positions;
 *   - a loss with no move is at 0; else it takes the longest of 1 for any conversion and
 *     1 + the MTC of each king move (all reach won positions);
 *   - a capture position (every move a conversion) is at 1, a draw has none.
 * Levels are MTCs, resolved in increasing order as the node solve resolves DTWs: a win at the
 * first level a lost successor reports, a loss once every king move has reported. A unit never
 * reads another unit's MTC, so all units of the pair are independent (no advancement levels),
 * each solved by one thread into its own bytes: the result does not depend on the thread count.
 * A won position reads only its man moves' values (the unit's man exits, promotions), a lost one
 * counts its king moves; every resolved position generates its predecessors again, which makes
 * the pass about half a solve (docs/MEASUREMENTS.md, "MTC"). A kings-only pair is one unit and
 * one thread's work: sharing a unit between threads, as the node solve does, is not done here. */
#include "solve_unit.h"

/* What is known of one position of the unit: 4 bytes. */
typedef struct mnode {
    uint16_t lev;  /* win: best level known (M_NONE: none); loss: longest so far */
    uint8_t cnt;   /* loss: king moves not yet resolved */
    uint8_t flags;
} mnode;

enum { M_WIN = 1, M_LOSS = 2, M_DEAF = 4 /* learns nothing: a draw or a capture position */,
       M_DONE = 8 };
#define M_NONE 0xFFFF
/* Levels tracked before the solve gives up (an MTC beyond the byte: DTB_E_RANGE). */
#define M_LEVELS (DTB_MTC_BYTE_MAX + 1)

/* One thread's state, kept for the pair. */
typedef struct mlane {
    mnode *n;
    bucket q[M_LEVELS];
    int top;
    bool overflow, nomem;
    dtb_mtc_stats st[2];
} mlane;

static void mpush(mlane *ln, int level, uint32_t id)
{
    if (level >= M_LEVELS) {
        ln->overflow = true;
        return;
    }
    if (!dtb_unit_bucket_add(&ln->q[level], id)) {
        ln->nomem = true;
        return;
    }
    if (level > ln->top)
        ln->top = level;
}

static void stats_reset(dtb_mtc_stats *st)
{
    *st = (dtb_mtc_stats){.longest_win = -1, .longest_loss = -1};
}

/* The longest, ties to the smallest index: the same whatever the order of the calls. */
static void longest(int *d, uint64_t *at, int nd, uint64_t nat)
{
    if (nd > *d || (nd == *d && nd >= 0 && nat < *at)) {
        *d = nd;
        *at = nat;
    }
}

static void stats_merge(dtb_mtc_stats *into, const dtb_mtc_stats *from)
{
    longest(&into->longest_win, &into->longest_win_at, from->longest_win, from->longest_win_at);
    longest(&into->longest_loss, &into->longest_loss_at, from->longest_loss, from->longest_loss_at);
}

static bool is_capture(const dtb_solved_table *t, uint64_t idx)
{
    return t->captures[idx / 64] >> (idx % 64) & 1;
}

/* Sets up the node of local id (position p) and queues it when its MTC is known already. */
static void init_node(const unit *u, mlane *ln, uint32_t id, const dtb_pos *p)
{
    const half *hf = &u->h[half_of(u, id)];
    const uint64_t idx = hf->base + in_half(u, id);
    const dtb_wdl r = dtb_value_wdl(hf->t->values[idx]);
    mnode *nd = &ln->n[id];
    if (r == DTB_DRAW) {
        *nd = (mnode){.flags = M_DEAF};
        return;
    }
    const uint8_t res = r == DTB_WIN ? M_WIN : M_LOSS;
    if (is_capture(hf->t, idx)) { /* every move converts */
        *nd = (mnode){.lev = 1, .flags = res | M_DEAF};
        mpush(ln, 1, id);
        return;
    }
    /* A quiet position's conversions are its man moves: those that stay in the pair (the
     * unit's man exits, their targets in the pair's other table) and promotions. */
    const dtb_board *b = u->b;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    bool converts = false, keeps = false; /* a conversion; one into a lost position */
    for (int i = 0; i < hf->nex && !keeps; i++) {
        const man_exit *x = &hf->ex[i];
        if (!(x->to & empty))
            continue;
        converts = true;
        if (res != M_WIN)
            continue;
        keeps = dtb_value_is_loss(dtb_unit_exit_value(b, hf, x, p));
    }
    for (int k = 0; k < 2 && !keeps; k++) {
        const int d = dtb_forward_dir(DTB_WHITE, k);
        for (dtb_bb to = hf->promo_to[k] & empty; to && !keeps;) {
            const int t = dtb_bb_pop(&to);
            converts = true;
            if (res == M_WIN) {
                const dtb_move mv = {.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                     .promotes = true};
                dtb_value slot;
                keeps = dtb_value_is_loss(*dtb_solved_value_after(u->s, p, &mv, &slot));
            }
        }
    }
    const int kings = res == M_WIN ? 0 : dtb_count_king_steps(b, p->kings[DTB_WHITE], empty);
    if (res == M_WIN) {
        *nd = (mnode){.lev = keeps ? 1 : M_NONE, .flags = M_WIN};
        if (keeps)
            mpush(ln, 1, id);
        return;
    }
    assert(kings <= 255);
    *nd = (mnode){.lev = converts ? 1 : 0, .cnt = (uint8_t)kings, .flags = M_LOSS};
    if (!kings)
        mpush(ln, nd->lev, id);
}

/* Resolves local id at level d: its byte, its stats, and what its predecessors learn. */
static void resolve(const unit *u, mlane *ln, dtb_value *const out[2], uint32_t id, int d)
{
    mnode *nd = &ln->n[id];
    if (nd->flags & M_DONE)
        return;
    nd->flags |= M_DONE;
    const bool win = nd->flags & M_WIN;
    const half *hf = &u->h[half_of(u, id)];
    const uint64_t idx = hf->base + in_half(u, id);
    out[hf->slot][idx] = dtb_mtc_byte(win, d);
    dtb_mtc_stats *st = &ln->st[hf->slot];
    if (win)
        longest(&st->longest_win, &st->longest_win_at, d, idx);
    else
        longest(&st->longest_loss, &st->longest_loss_at, d, idx);
    uint64_t pids[DTB_MAX_MOVES];
    const int np = dtb_unit_predecessors(u, id, pids);
    for (int k = 0; k < np; k++) {
        mnode *pn = &ln->n[pids[k]];
        if (pn->flags & (M_DEAF | M_DONE))
            continue;
        if (!win && (pn->flags & M_WIN)) { /* the first loss it hears of is the shortest */
            if (d + 1 < pn->lev) {
                pn->lev = (uint16_t)(d + 1);
                mpush(ln, d + 1, (uint32_t)pids[k]);
            }
        } else if (win && (pn->flags & M_LOSS)) {
            assert(pn->cnt > 0);
            if (d + 1 > pn->lev)
                pn->lev = (uint16_t)(d + 1);
            if (--pn->cnt == 0)
                mpush(ln, pn->lev, (uint32_t)pids[k]);
        }
    }
}

static void solve_unit_mtc(const unit *u, mlane *ln, dtb_value *const out[2])
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    for (int h = 0; h < u->nhalves; h++)
        memset(out[u->h[h].slot] + u->h[h].base, DTB_VALUE_DRAW, u->K);
    ln->top = -1;
    dtb_pos p;
    for (uint32_t id = 0; id < n; id++) {
        if (id == 0 || id == u->K)
            dtb_unit_local_pos(u, id, &p);
        else
            next_kings(u, half_of(u, id), &p);
        init_node(u, ln, id, &p);
    }
    for (int d = 0; d <= ln->top && !ln->nomem && !ln->overflow; d++) {
        bucket *q = &ln->q[d];
        for (size_t i = 0; i < q->n; i++) /* q grows only at later levels meanwhile */
            resolve(u, ln, out, q->ids[i], d);
        q->n = 0;
    }
    for (int d = 0; d < M_LEVELS; d++)
        ln->q[d].n = 0;
    /* Every win and loss has an MTC no longer than its DTW, so all are resolved. */
    for (uint32_t id = 0; id < n && !ln->nomem && !ln->overflow; id++)
        assert((ln->n[id].flags & M_DONE) || (ln->n[id].flags & (M_WIN | M_LOSS)) == 0);
}

dtb_status dtb_solve_mtc_pair(const dtb_solved *s, dtb_material m, dtb_value *mtc[2],
                              dtb_mtc_stats stats[2], dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    /* The registry's tables are only read: the unit machinery takes them unqualified. */
    dtb_solved_table *t = (dtb_solved_table *)dtb_solved_find(s, m);
    dtb_solved_table *ft = self ? t : (dtb_solved_table *)dtb_solved_find(s, fm);
    if (!t || !ft || !t->values || !ft->values)
        return dtb_error_set(e, DTB_E_INVALID, "MTC needs the pair's values in memory");
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    if (2 * K > UINT32_MAX)
        return dtb_error_set(e, DTB_E_RANGE, "a block of %llu positions is too large for the MTC "
                             "solve's 32-bit local ids", (unsigned long long)K);
    dtb_index_fast fxt, fxft;
    const bool fast = dtb_index_fast_get(t->index, &fxt) && dtb_index_fast_get(ft->index, &fxft);
    dtb_value *const out[2] = {mtc[0], self ? mtc[0] : mtc[1]};
    const int nthreads = omp_get_max_threads();
    const uint64_t chunk = K >= 4096 ? 1 : 4096 / K; /* blocks a thread takes at a time */
    mlane *lanes = calloc((size_t)nthreads, sizeof *lanes);
    if (!lanes)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
#pragma omp parallel num_threads(nthreads)
    {
        mlane *me = &lanes[omp_get_thread_num()];
        stats_reset(&me->st[0]);
        stats_reset(&me->st[1]);
        unit u = {.b = b, .s = s, .K = K, .fx = {fast ? &fxt : NULL, fast ? &fxft : NULL},
                  .quick_capture = b->variant->kings_fly};
        /* Units of a few blocks' worth of positions are handed out one at a time: materials
         * with men have tens of them, and a kings-only pair is one (solved by one thread). */
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < (nblocks + chunk - 1) / chunk; c++)
        for (uint64_t blk = c * chunk; blk < nblocks && blk < (c + 1) * chunk; blk++) {
            if (me->nomem || me->overflow)
                continue;
            const work wk = dtb_unit_work_of(b, t, ft, blk);
            if (self && wk.fblock < blk) /* that unit is its other block's */
                continue;
            if (!me->n && !(me->n = malloc(2 * K * sizeof *me->n))) {
                me->nomem = true;
                continue;
            }
            dtb_unit_setup(&u, &wk, t, ft, self);
            solve_unit_mtc(&u, me, out);
        }
    }
    bool overflow = false, nomem = false;
    stats_reset(&stats[0]);
    stats_reset(&stats[1]);
    for (int l = 0; l < nthreads; l++) {
        overflow |= lanes[l].overflow;
        nomem |= lanes[l].nomem;
        stats_merge(&stats[0], &lanes[l].st[0]);
        stats_merge(&stats[1], &lanes[l].st[1]);
        for (int d = 0; d < M_LEVELS; d++)
            free(lanes[l].q[d].ids);
        free(lanes[l].n);
    }
    free(lanes);
    if (nomem)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving MTC");
    if (overflow)
        return dtb_error_set(e, DTB_E_RANGE, "an MTC exceeds %d plies, more than its byte holds",
                             DTB_MTC_BYTE_MAX);
    return DTB_OK;
}
