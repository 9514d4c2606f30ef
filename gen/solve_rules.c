/* The rule distance of a pair (gen/solve.h, dtb_solve_rules_pair; docs/FORMAT.md §8.6): for
 * each position, the plies to the next counter reset that keeps the result under a move-count
 * rule set (core/rules.h), the winner taking the shortest way and the loser the longest, when
 * that fits the limit of the position's class.
 *
 * Why it answers the rules exactly: along moves that do not reset the counter, the class (so
 * the limit L) never changes (a capture or promotion into another class always resets, under
 * FMJD), so a position P with the counter at h is won under the rules exactly when its win
 * reaches a reset into a position won at counter 0 (or a position without a legal move) within
 * L - h plies, against every defence: when its rule distance d <= L - h. Likewise a loss. The
 * targets' own results at counter 0 are their rule bytes, solved before: captures and
 * promotions land in earlier materials, man moves in units of more advanced men.
 *
 * Two solves, by class:
 *   - the general class (every man move and capture resets): only king moves keep the count,
 *     and they stay in a unit (gen/solve_unit.h), so a retrograde analysis per unit as the MTC
 *     solve's, levels up to L, units in decreasing order of advancement (a man move's target
 *     unit is solved before the unit it leaves);
 *   - every other class (a lone king against at most three pieces with a king, where man moves
 *     and later promotions keep the count and leave the unit; every FMJD-64 class below 8
 *     pieces): passes over the pair (gen/solve_rules_passes.c).
 * Draws (unlimited) are draws under any rule; wins and losses the limit cuts off (cursed wins,
 * blessed losses) get the draw byte. The bytes go into the rule registry's tables of the pair,
 * whatever the thread count the same. */
#include "solve_unit.h"

#include "rules.h"

/* What is known of one position of the unit. */
typedef struct rnode {
    uint8_t lev;  /* win: best level known (R_NONE: none); loss: longest so far */
    uint8_t cnt;  /* loss: king moves not yet resolved */
    uint8_t flags;
} rnode;

enum { R_WIN = 1, R_LOSS = 2, R_DEAF = 4 /* decided at its init, or never by the rules */,
       R_DONE = 8 };
#define R_NONE 0xFF

/* One thread's state, kept for the pair. */
typedef struct rlane {
    rnode *n;
    bucket q[DTB_RULE_LIMIT_MAX + 1];
    int top, limit;
    bool nomem;
} rlane;

/* The main registry's pair (results, capture bits) beside the rule registry's (the bytes). */
typedef struct rpair {
    const dtb_solved_table *main[2]; /* by half slot */
    const dtb_rules *r;
    int limit;
} rpair;

static void rpush(rlane *ln, int level, uint32_t id)
{
    if (level > ln->limit) /* beyond the limit: not decided by the rules at any count */
        return;
    if (!dtb_unit_bucket_add(&ln->q[level], id)) {
        ln->nomem = true;
        return;
    }
    if (level > ln->top)
        ln->top = level;
}

static bool is_capture(const dtb_solved_table *t, uint64_t idx)
{
    return t->captures[idx / 64] >> (idx % 64) & 1;
}

/* The result at counter 0 of the position after mv (for the opponent, to move there). */
static dtb_wdl after(const dtb_solved *sr, const dtb_pos *p, const dtb_move *mv)
{
    dtb_value slot;
    return dtb_value_wdl(*dtb_solved_value_after(sr, p, mv, &slot));
}

/* Sets up the node of local id (position p) and queues it when its distance is known already.
 * Every move but a king's resets the count in this class: captures, man moves, promotions. */
static void init_node(const unit *u, const rpair *rp, rlane *ln, uint32_t id, const dtb_pos *p)
{
    const half *hf = &u->h[half_of(u, id)];
    const uint64_t idx = hf->base + in_half(u, id);
    const dtb_solved_table *mt = rp->main[hf->slot];
    const dtb_wdl r = dtb_value_wdl(mt->values[idx]);
    rnode *nd = &ln->n[id];
    if (r == DTB_DRAW) {
        *nd = (rnode){.flags = R_DEAF};
        return;
    }
    const uint8_t res = r == DTB_WIN ? R_WIN : R_LOSS;
    if (is_capture(mt, idx)) { /* every move resets: the best capture decides at 1 */
        dtb_movelist ml;
        const dtb_status st = dtb_generate(u->b, p, &ml);
        assert(st == DTB_OK && ml.count > 0);
        (void)st;
        bool won = false, lost = true;
        for (int i = 0; i < ml.count; i++) {
            const dtb_wdl w = after(u->s, p, &ml.moves[i]);
            won |= w == DTB_LOSS;
            lost &= w == DTB_WIN;
        }
        const bool decided = res == R_WIN ? won : lost;
        *nd = (rnode){.lev = 1, .flags = (uint8_t)(res | R_DEAF)};
        if (decided)
            rpush(ln, 1, id);
        else
            nd->flags |= R_DONE; /* a cursed win or blessed loss: the draw byte */
        return;
    }
    /* The resets of a quiet position: its man moves that stay in the pair (the unit's man
     * exits, their targets in the pair's other table) and its promotions. */
    const dtb_board *b = u->b;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    bool resets = false, won = false, lost = true;
    for (int i = 0; i < hf->nex; i++) {
        const man_exit *x = &hf->ex[i];
        if (!(x->to & empty))
            continue;
        resets = true;
        const dtb_wdl w = dtb_value_wdl(dtb_unit_exit_value(b, hf, x, p));
        won |= w == DTB_LOSS;
        lost &= w == DTB_WIN;
    }
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(DTB_WHITE, k);
        for (dtb_bb to = hf->promo_to[k] & empty; to;) {
            const int t = dtb_bb_pop(&to);
            resets = true;
            const dtb_move mv = {.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                 .promotes = true};
            const dtb_wdl w = after(u->s, p, &mv);
            won |= w == DTB_LOSS;
            lost &= w == DTB_WIN;
        }
    }
    if (res == R_WIN) {
        *nd = (rnode){.lev = won ? 1 : R_NONE, .flags = R_WIN};
        if (won)
            rpush(ln, 1, id);
        return;
    }
    if (!lost) { /* a reset into a position the opponent does not win at 0: never lost */
        *nd = (rnode){.flags = R_DEAF | R_DONE};
        return;
    }
    const int kings = dtb_count_king_steps(b, p->kings[DTB_WHITE], empty);
    assert(kings <= 255);
    *nd = (rnode){.lev = resets ? 1 : 0, .cnt = (uint8_t)kings, .flags = R_LOSS};
    if (!kings)
        rpush(ln, nd->lev, id);
}

/* Resolves local id at level d: its byte and what its predecessors learn. */
static void resolve(const unit *u, rlane *ln, uint32_t id, int d)
{
    rnode *nd = &ln->n[id];
    if (nd->flags & R_DONE)
        return;
    nd->flags |= R_DONE;
    const bool win = nd->flags & R_WIN;
    const half *hf = &u->h[half_of(u, id)];
    hf->t->values[hf->base + in_half(u, id)] = dtb_mtc_byte(win, d);
    uint64_t pids[DTB_MAX_MOVES];
    const int np = dtb_unit_predecessors(u, id, pids);
    for (int k = 0; k < np; k++) {
        rnode *pn = &ln->n[pids[k]];
        if (pn->flags & (R_DEAF | R_DONE))
            continue;
        if (!win && (pn->flags & R_WIN)) { /* the first loss it hears of is the shortest */
            if (d + 1 < pn->lev) {
                pn->lev = (uint8_t)(d + 1);
                rpush(ln, d + 1, (uint32_t)pids[k]);
            }
        } else if (win && (pn->flags & R_LOSS)) {
            assert(pn->cnt > 0);
            if (d + 1 > pn->lev)
                pn->lev = (uint8_t)(d + 1);
            if (--pn->cnt == 0)
                rpush(ln, pn->lev, (uint32_t)pids[k]);
        }
    }
}

static void solve_unit_rules(const unit *u, const rpair *rp, rlane *ln)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    for (int h = 0; h < u->nhalves; h++)
        memset(u->h[h].t->values + u->h[h].base, DTB_VALUE_DRAW, u->K);
    ln->top = -1;
    dtb_pos p;
    for (uint32_t id = 0; id < n; id++) {
        if (id == 0 || id == u->K)
            dtb_unit_local_pos(u, id, &p);
        else
            next_kings(u, half_of(u, id), &p);
        init_node(u, rp, ln, id, &p);
    }
    for (int d = 0; d <= ln->top && !ln->nomem; d++) {
        bucket *q = &ln->q[d];
        for (size_t i = 0; i < q->n; i++) /* q grows only at later levels meanwhile */
            resolve(u, ln, q->ids[i], d);
        q->n = 0;
    }
    for (int d = 0; d <= DTB_RULE_LIMIT_MAX; d++)
        ln->q[d].n = 0;
}

/* The general class: units by decreasing advancement, those of one advancement in parallel. */
static dtb_status solve_general(const dtb_solved *sr, const rpair *rp, dtb_solved_table *t,
                                dtb_solved_table *ft, bool self, dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(sr);
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    if (2 * K > UINT32_MAX)
        return dtb_error_set(e, DTB_E_RANGE, "a block of %llu positions is too large for the "
                             "rule solve's 32-bit local ids", (unsigned long long)K);
    /* Blocks by decreasing advancement (a counting sort); a self-flip material's unit once. */
    uint64_t *order = malloc((nblocks ? nblocks : 1) * sizeof *order);
    uint8_t *adv = malloc(nblocks ? nblocks : 1);
    uint64_t first[257] = {0};
    if (!order || !adv) {
        free(order);
        free(adv);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
#pragma omp parallel for schedule(static)
    for (uint64_t blk = 0; blk < nblocks; blk++) {
        const work wk = dtb_unit_work_of(b, t, ft, blk);
        adv[blk] = self && wk.fblock < blk ? NOT_A_UNIT : (uint8_t)wk.adv;
    }
    for (uint64_t blk = 0; blk < nblocks; blk++)
        first[255 - adv[blk] + 1]++;
    for (int a = 1; a <= 256; a++)
        first[a] += first[a - 1];
    uint64_t fill[256];
    memcpy(fill, first, sizeof fill);
    for (uint64_t blk = 0; blk < nblocks; blk++)
        order[fill[255 - adv[blk]]++] = blk;
    dtb_index_fast fxt, fxft;
    const bool fast = dtb_index_fast_get(t->index, &fxt) && dtb_index_fast_get(ft->index, &fxft);
    const int nthreads = omp_get_max_threads();
    rlane *lanes = calloc((size_t)nthreads, sizeof *lanes);
    if (!lanes) {
        free(order);
        free(adv);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    for (int l = 0; l < nthreads; l++)
        lanes[l].limit = rp->limit;
    /* Levels from the most advanced men down; NOT_A_UNIT (255 - 255 = 0 first) is skipped. */
    for (int a = 1; a < 256; a++) {
        const uint64_t lo = first[a], hi = first[a + 1];
        if (lo == hi)
            continue;
#pragma omp parallel num_threads(nthreads)
        {
            rlane *me = &lanes[omp_get_thread_num()];
            unit u = {.b = b, .s = sr, .K = K, .fx = {fast ? &fxt : NULL, fast ? &fxft : NULL},
                      .quick_capture = b->variant->kings_fly};
#pragma omp for schedule(dynamic, 1)
            for (uint64_t i = lo; i < hi; i++) {
                if (me->nomem)
                    continue;
                if (!me->n && !(me->n = malloc(2 * K * sizeof *me->n))) {
                    me->nomem = true;
                    continue;
                }
                const work wk = dtb_unit_work_of(b, t, ft, order[i]);
                dtb_unit_setup(&u, &wk, t, ft, self);
                solve_unit_rules(&u, rp, me);
            }
        }
    }
    bool nomem = false;
    for (int l = 0; l < nthreads; l++) {
        nomem |= lanes[l].nomem;
        for (int d = 0; d <= DTB_RULE_LIMIT_MAX; d++)
            free(lanes[l].q[d].ids);
        free(lanes[l].n);
    }
    free(lanes);
    free(order);
    free(adv);
    return nomem ? dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving the rule distances")
                 : DTB_OK;
}

dtb_status dtb_solve_rules_pair(const dtb_solved *s, dtb_rule_layers *rl, dtb_material m,
                                dtb_error *e)
{
    const dtb_rules *rules = rl->rules;
    const int cls = dtb_rules_class(rules, &m);
    if (cls < 0 || !rules->cls[cls].limit || !rules->cls[cls].man_move_resets)
        return dtb_solve_rules_passes(s, rl, m, e);
    dtb_solved *sr = rl->at[0];
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    const dtb_solved_table *t = dtb_solved_find(s, m), *ft = self ? t : dtb_solved_find(s, fm);
    if (!t || !ft || !t->values || !ft->values || !t->captures || !ft->captures)
        return dtb_error_set(e, DTB_E_INVALID, "the rule distances need the pair's values in memory");
    dtb_solved_table *rt = dtb_solved_add(sr, m, e);
    dtb_solved_table *rft = rt && !self ? dtb_solved_add(sr, fm, e) : rt;
    if (!rt || !rft)
        return DTB_E_NOMEM;
    assert(cls == dtb_rules_class(rules, &fm));
    const rpair rp = {.main = {t, ft}, .r = rules, .limit = rules->cls[cls].limit};
    return solve_general(sr, &rp, rt, rft, self, e);
}
