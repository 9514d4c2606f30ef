/* The rule distance of a pair (gen/solve.h, dtb_solve_rules_pair; docs/FORMAT.md §8.6): for
 * each position P, how long its result under a move-count rule set (core/rules.h) holds, as the
 * rule byte gives it: P's limit L(P) less H(P), the largest clock at which P's result (with the
 * winner playing for the win and the loser for the draw) still holds.
 *
 * The equations, in clocks (the derivation dtb_check_rules_derive re-runs): a move that resets
 * the count reaches its target's result at clock 0, whatever P's clock, so it bounds nothing
 * (every clock: ALWAYS); a move that keeps it reaches the target Q at P's clock + 1, which holds
 * while that is at most H(Q), so it bounds P's clock by H(Q) - 1 (ALWAYS when Q holds at every
 * clock: Q has no legal move, or Q is in the class without a count). A won P holds up to
 * min(L(P) - 1, the largest bound of its moves into positions lost for the opponent); a lost P
 * up to min(L(P) - 1, the smallest bound of all its moves), every move reaching a position won
 * for the opponent; a bound below 0 holds at no clock. No legal move: lost at every clock.
 * In the class without a count (L = 0, FMJD-64's "none") every move into P resets, P's clock
 * is always 0, and P is decided at every clock or not at all.
 *
 * Why a pair is solved unit by unit (gen/solve_unit.h), and in what order. A move that keeps
 * the count either stays in the unit (a king's quiet move) or leads to something already
 * solved: a man's move to a unit of more advanced men (units go by decreasing advancement, so
 * its unit is done), a capture or promotion to a smaller or less advanced material (solved
 * before the pair), a move that raises FMJD-64's diagonal count to a higher layer (layers go
 * from late_after down; only a lone king against three pieces with a king counts, and there
 * the count after a move is one more exactly when the position after it is "main-road", and
 * never more than late_after). Every such move, and every move that resets, is an exit: a fixed
 * bound, read from the rule bytes solved before. So each unit of each layer is one retrograde
 * analysis, whatever the class: the classes where man moves keep the count (FMJD-64's 7.2.6 and
 * 7.2.4, FMJD's lone-king classes) need no passes over the pair.
 *
 * Within a unit: every position starts from its exits (its best winning bound, or its smallest
 * bound and its count of in-unit moves); then bounds are settled from the highest down, a
 * bucket per clock (ALWAYS first), as a shortest-path search: a position is final when taken
 * from its bucket, for every bound still to come is lower. A settled loss Q offers each
 * in-unit predecessor P that wins the bound min(L(P) - 1, H(Q) - 1), the first the largest; a
 * settled win Q counts down each predecessor that loses, which is settled when its last
 * in-unit move is, at the smallest of its bounds. In-unit moves keep the count except in the
 * class without one, where they reset: there everything is ALWAYS and the bucket is the plain
 * attractor of wins and losses (king moves cycle; what never settles is drawn). The limit may
 * differ inside a unit (a lone king stepping onto the main road): each position keeps its own,
 * and clocks, unlike distances, stay comparable across them.
 *
 * Draws (unlimited) are draws under any rule; wins and losses that hold at no clock (cursed
 * wins, blessed losses) get the draw byte. The same bytes whatever the thread count: units of
 * a level are independent, and within a unit the order is fixed. */
#include "solve_unit.h"

#include "rules.h"

/* A bound in a byte: a clock 0..DTB_RULE_LIMIT_MAX - 1 (a limited position holds at most up to
 * its limit - 1), ALWAYS every clock, NONE no bound (a win without a winning move known). */
enum { ALWAYS = DTB_RULE_LIMIT_MAX, NONE = 0xFF };
_Static_assert((int)ALWAYS < (int)NONE, "bounds and ALWAYS fit below NONE");

/* What is known of one position of the unit. */
typedef struct rnode {
    uint8_t h;     /* win: the largest bound known (NONE: none); loss: the smallest so far */
    uint8_t cnt;   /* loss: in-unit moves not yet settled */
    uint8_t flags;
    uint8_t limit; /* its limit at the layer's count (0: no count) */
} rnode;

enum {
    R_WIN = 1,
    R_LOSS = 2,
    R_DEAF = 4,  /* learns nothing from its successors: decided by its exits alone, or never */
    R_DONE = 8,
    R_STUCK = 16, /* no legal move: lost at every clock */
    R_ROAD = 32   /* a king move into it raises the diagonal count: those moves leave the layer */
};

/* One thread's state, kept for the pair. */
typedef struct rlane {
    rnode *n;
    bucket q[ALWAYS + 1];
    int top, low; /* the highest and lowest bucket pushed to in the unit (a unit of men only
                     has one or two positions: the buckets between are not looked at) */
    bool nomem;
} rlane;

/* The pair and the layer being solved. */
typedef struct rpair {
    const dtb_solved_table *main[2]; /* values and capture bits, by half slot */
    const dtb_rule_layers *rl;
    const dtb_rules *r;
    int c;         /* the layer's diagonal count (0 for a pair without one) */
    bool counting; /* positions differ in class (a lone king on the main road): moves are
                      classified one by one */
    int limit;     /* the pair's limit when they do not */
    bool none;     /* no count: every move into the pair resets (in-unit moves too) */
    bool man_kept; /* a man's move inside the pair keeps the count */
} rpair;

static void rpush(rlane *ln, int h, uint32_t id)
{
    assert(h >= 0 && h <= ALWAYS);
    if (!dtb_unit_bucket_add(&ln->q[h], id))
        ln->nomem = true;
    ln->top = h > ln->top ? h : ln->top;
    ln->low = h < ln->low ? h : ln->low;
}

static bool is_capture(const dtb_solved_table *t, uint64_t idx)
{
    return t->captures[idx / 64] >> (idx % 64) & 1;
}

static int cap_of(int limit) { return limit ? limit - 1 : ALWAYS; }

/* What a position's exits offer, folded: the best bound of a winning exit (-1: none), the
 * smallest of the losing ones (ALWAYS: none), and whether every exit so far loses with a bound
 * (else the position cannot be lost under the rules). */
typedef struct fold {
    int best, worst;
    bool losing;
} fold;

/* Folds an exit into f: its target's rule byte v, whether the move resets the count, and the
 * target's limit (0: no count). */
static void fold_exit(fold *f, dtb_value v, bool reset, int limit)
{
    if (v == DTB_VALUE_DRAW) {
        f->losing = false;
        return;
    }
    const int d = dtb_mtc_plies(v);
    const int bound = reset || d == 0 || !limit ? ALWAYS : limit - d - 1;
    if (dtb_value_is_loss(v)) { /* the opponent loses there */
        f->best = bound > f->best ? bound : f->best;
        f->losing = false;
    } else if (bound < 0) {
        f->losing = false;
    } else if (bound < f->worst) {
        f->worst = bound;
    }
}

/* Move mv of p (of the layer's count) as an exit, classified by the rules, into f. */
static void fold_move(const dtb_board *b, const rpair *rp, fold *f, const dtb_pos *p,
                      const dtb_move *mv)
{
    dtb_pos q;
    dtb_make_move(p, mv, &q);
    const dtb_rule_step st = dtb_rules_step(rp->r, b, p, mv, &q, rp->c);
    fold_exit(f, dtb_rule_layers_value(rp->rl, &q, st.count), st.reset, st.limit);
}

/* The exits of a quiet position of a pair whose class the material decides: its man moves
 * inside the pair (the unit's man exits, their targets in the pair's other table, of the
 * pair's class) and its promotions. Returns how many moves that was. */
static int fold_quiet(const unit *u, const half *hf, const rpair *rp, fold *f, const dtb_pos *p)
{
    const dtb_board *b = u->b;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    int n = 0;
    for (int i = 0; i < hf->nex; i++) {
        const man_exit *x = &hf->ex[i];
        if (!(x->to & empty))
            continue;
        n++;
        fold_exit(f, dtb_unit_exit_value(b, hf, x, p), !rp->man_kept, rp->limit);
    }
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(DTB_WHITE, k);
        for (dtb_bb to = hf->promo_to[k] & empty; to;) {
            const int t = dtb_bb_pop(&to);
            n++;
            const dtb_move mv = {.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                 .promotes = true};
            fold_move(b, rp, f, p, &mv);
        }
    }
    return n;
}

/* Every move of p one by one (capture positions, and pairs whose positions differ in class):
 * into f the exits; returns the moves in all, *kings those that stay in the layer's unit (a
 * king's quiet move that does not raise the diagonal count). */
static int fold_all(const dtb_board *b, const rpair *rp, fold *f, const dtb_pos *p, int *kings)
{
    dtb_movelist ml;
    const dtb_status st = dtb_generate(b, p, &ml);
    assert(st == DTB_OK);
    (void)st;
    *kings = 0;
    for (int i = 0; i < ml.count; i++) {
        const dtb_move *mv = &ml.moves[i];
        if (!mv->ncaptured && dtb_bb_has(p->kings[DTB_WHITE], mv->from)) {
            dtb_pos q;
            dtb_make_move(p, mv, &q);
            const dtb_rule_step s = dtb_rules_step(rp->r, b, p, mv, &q, rp->c);
            if (s.count == rp->c) {
                assert(!s.reset && !rp->none);
                ++*kings;
                continue;
            }
            fold_exit(f, dtb_rule_layers_value(rp->rl, &q, s.count), s.reset, s.limit);
            continue;
        }
        fold_move(b, rp, f, p, mv);
    }
    return ml.count;
}

/* Sets up the node of local id (position p) from its exits, and queues it when that decides
 * it. */
static void init_node(const unit *u, const rpair *rp, rlane *ln, uint32_t id, const dtb_pos *p)
{
    const half *hf = &u->h[half_of(u, id)];
    const uint64_t idx = hf->base + in_half(u, id);
    const dtb_solved_table *mt = rp->main[hf->slot];
    const dtb_wdl r = dtb_value_wdl(mt->values[idx]);
    rnode *nd = &ln->n[id];
    if (r == DTB_DRAW) {
        *nd = (rnode){.h = NONE, .flags = R_DEAF};
        return;
    }
    const dtb_board *b = u->b;
    const bool capture = is_capture(mt, idx);
    uint8_t flags = r == DTB_WIN ? R_WIN : R_LOSS;
    int limit = rp->limit;
    if (rp->counting) {
        const int cls = dtb_rules_pos_class(rp->r, b, p);
        limit = dtb_rules_pos_limit(rp->r, b, p, rp->c);
        if (rp->r->cls[cls].late_limit && rp->c < rp->r->late_after)
            flags |= R_ROAD;
    }
    fold f = {-1, ALWAYS, true};
    int kings = 0, moves;
    if (capture || rp->counting) {
        moves = fold_all(b, rp, &f, p, &kings);
        assert(!capture || kings == 0);
    } else {
        const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
        kings = dtb_count_king_steps(b, p->kings[DTB_WHITE], empty);
        moves = kings + fold_quiet(u, hf, rp, &f, p);
    }
    assert(kings <= 255);
    if (capture)
        flags |= R_DEAF;
    const int cap = cap_of(limit);
    if (moves == 0) { /* lost at every clock */
        assert(r == DTB_LOSS);
        *nd = (rnode){.h = ALWAYS, .flags = (uint8_t)(flags | R_STUCK | R_DEAF),
                      .limit = (uint8_t)limit};
        rpush(ln, ALWAYS, id);
        return;
    }
    if (r == DTB_WIN) {
        const int h = f.best < 0 ? NONE : f.best < cap ? f.best : cap;
        *nd = (rnode){.h = (uint8_t)h, .flags = flags, .limit = (uint8_t)limit};
        if (h != NONE)
            rpush(ln, h, id);
        return;
    }
    if (!f.losing) { /* an exit the opponent does not win in time: never lost */
        *nd = (rnode){.h = NONE, .flags = (uint8_t)(flags | R_DEAF | R_DONE)};
        return;
    }
    *nd = (rnode){.h = (uint8_t)f.worst, .cnt = (uint8_t)kings, .flags = flags,
                  .limit = (uint8_t)limit};
    if (!kings)
        rpush(ln, f.worst < cap ? f.worst : cap, id);
}

/* Settles local id at bound h: its byte, and what its in-unit predecessors learn. */
static void settle(const unit *u, const rpair *rp, rlane *ln, uint32_t id, int h)
{
    rnode *nd = &ln->n[id];
    if (nd->flags & R_DONE)
        return;
    nd->flags |= R_DONE;
    const bool win = nd->flags & R_WIN;
    const half *hf = &u->h[half_of(u, id)];
    hf->t->values[hf->base + in_half(u, id)] =
        nd->flags & R_STUCK ? DTB_VALUE_LOST : dtb_mtc_byte(win, nd->limit ? nd->limit - h : 1);
    if (nd->flags & R_ROAD) /* its predecessors reach it at the next count, solved before */
        return;
    /* the bound a king move into it gives: one clock less, or none in the class without a
     * count (the move resets) */
    const int bound = rp->none || h == ALWAYS ? ALWAYS : h - 1;
    uint64_t pids[DTB_MAX_MOVES];
    const int np = dtb_unit_predecessors(u, id, pids);
    for (int k = 0; k < np; k++) {
        rnode *pn = &ln->n[pids[k]];
        if (pn->flags & (R_DEAF | R_DONE))
            continue;
        const int cap = cap_of(pn->limit), at = bound < cap ? bound : cap;
        if (!win && (pn->flags & R_WIN)) { /* the first such bound is the largest */
            if (bound >= 0 && (pn->h == NONE || at > pn->h)) {
                assert(at < h || h == ALWAYS);
                pn->h = (uint8_t)at;
                rpush(ln, at, (uint32_t)pids[k]);
            }
        } else if (win && (pn->flags & R_LOSS)) {
            assert(pn->cnt > 0);
            if (bound < 0) { /* holds at no clock through this move: never lost */
                pn->flags |= R_DEAF | R_DONE;
                continue;
            }
            if (at < pn->h)
                pn->h = (uint8_t)at;
            if (--pn->cnt == 0)
                rpush(ln, pn->h, (uint32_t)pids[k]);
        }
    }
}

static void solve_unit_rules(const unit *u, const rpair *rp, rlane *ln)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    for (int h = 0; h < u->nhalves; h++)
        memset(u->h[h].t->values + u->h[h].base, DTB_VALUE_DRAW, u->K);
    ln->top = -1;
    ln->low = ALWAYS + 1;
    dtb_pos p;
    for (uint32_t id = 0; id < n; id++) {
        if (id == 0 || id == u->K)
            dtb_unit_local_pos(u, id, &p);
        else
            next_kings(u, half_of(u, id), &p);
        init_node(u, rp, ln, id, &p);
    }
    /* From the top down: settling at h pushes only below h, except ALWAYS itself in the class
     * without a count (its bucket grows while it is read). */
    for (int h = ln->top; h >= ln->low; h--) {
        bucket *q = &ln->q[h];
        for (size_t i = 0; i < q->n && !ln->nomem; i++)
            settle(u, rp, ln, q->ids[i], h);
        q->n = 0;
    }
}

dtb_status dtb_solve_rules_pair(const dtb_solved *s, dtb_rule_layers *rl, dtb_material m,
                                dtb_error *e)
{
    const dtb_rules *rules = rl->rules;
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    const dtb_solved_table *t = dtb_solved_find(s, m), *ft = self ? t : dtb_solved_find(s, fm);
    if (!t || !ft || !t->values || !ft->values || !t->captures || !ft->captures)
        return dtb_error_set(e, DTB_E_INVALID, "the rule distances need the pair's values in memory");
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    if (2 * K > UINT32_MAX)
        return dtb_error_set(e, DTB_E_RANGE, "a block of %llu positions is too large for the "
                             "rule solve's 32-bit local ids", (unsigned long long)K);
    dtb_solved_table *rt[2][DTB_RULE_COUNT_MAX + 1];
    dtb_status rc = dtb_rule_layers_add(rl, m, rt[0], e);
    if (rc == DTB_OK && !self && (rc = dtb_rule_layers_add(rl, fm, rt[1], e)) != DTB_OK)
        dtb_rule_layers_drop(rl, m);
    if (rc != DTB_OK)
        return rc;
    const int cls = dtb_rules_class(rules, &m), layers = dtb_rule_layers_of(rl, &m);
    assert(cls == dtb_rules_class(rules, &fm));
    const int limit = cls >= 0 ? rules->cls[cls].limit : 0;
    rpair rp = {.main = {t, ft}, .rl = rl, .r = rules, .counting = cls < 0, .limit = limit,
                .none = cls >= 0 && !limit,
                .man_kept = cls >= 0 && limit && !rules->cls[cls].man_move_resets};
    /* Blocks by decreasing advancement (a counting sort); a self-flip material's unit once. */
    uint64_t *order = malloc((nblocks ? nblocks : 1) * sizeof *order);
    uint8_t *adv = malloc(nblocks ? nblocks : 1);
    uint64_t first[257] = {0};
    const int nthreads = omp_get_max_threads();
    rlane *lanes = calloc((size_t)nthreads, sizeof *lanes);
    if (!order || !adv || !lanes) {
        free(order);
        free(adv);
        free(lanes);
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
    /* Layers from the highest count down (a count never falls), in each the levels from the
     * most advanced men down; NOT_A_UNIT (255 - 255 = 0 first) is skipped. */
    for (int c = layers - 1; c >= 0; c--) {
        rp.c = c;
        dtb_solved_table *lt = rt[0][c], *lft = rt[self ? 0 : 1][c];
        for (int a = 1; a < 256; a++) {
            const uint64_t lo = first[a], hi = first[a + 1];
            if (lo == hi)
                continue;
#pragma omp parallel num_threads(nthreads)
            {
                rlane *me = &lanes[omp_get_thread_num()];
                unit u = {.b = b, .s = rl->at[c], .K = K,
                          .fx = {fast ? &fxt : NULL, fast ? &fxft : NULL},
                          .quick_capture = b->variant->kings_fly};
#pragma omp for schedule(dynamic, 1)
                for (uint64_t i = lo; i < hi; i++) {
                    if (me->nomem)
                        continue;
                    if (!me->n && !(me->n = malloc(2 * K * sizeof *me->n))) {
                        me->nomem = true;
                        continue;
                    }
                    const work wk = dtb_unit_work_of(b, lt, lft, order[i]);
                    dtb_unit_setup(&u, &wk, lt, lft, self);
                    solve_unit_rules(&u, &rp, me);
                }
            }
        }
    }
    bool nomem = false;
    for (int l = 0; l < nthreads; l++) {
        nomem |= lanes[l].nomem;
        for (int h = 0; h <= ALWAYS; h++)
            free(lanes[l].q[h].ids);
        free(lanes[l].n);
    }
    free(lanes);
    free(order);
    free(adv);
    return nomem ? dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving the rule distances")
                 : DTB_OK;
}
