/* One-ply minimax over stored successors. Win: the fastest move to a lost successor. Loss:
 * every move reaches a won successor (or there is no move), the slowest one. Else a draw.
 * MTC likewise, over the stored results and the MTC of king moves' successors. */
#include "check.h"

#include <assert.h>
#include <limits.h>

#include "movegen.h"

dtb_wvalue dtb_check_derive(const dtb_solved *s, const dtb_pos *p)
{
    const dtb_board *b = dtb_solved_board(s);
    dtb_movelist ml;
    const dtb_status st = dtb_generate(b, p, &ml);
    assert(st == DTB_OK);
    (void)st;
    int best_win = -1, longest_loss = -1;
    bool draw = false;
    for (int i = 0; i < ml.count; i++) {
        dtb_pos q;
        dtb_make_move(p, &ml.moves[i], &q);
        dtb_value slot;
        const dtb_wvalue v = dtb_solved_exact(s, dtb_solved_value_at(s, &q, &slot));
        const int d = dtb_wvalue_dtw(v);
        switch (dtb_wvalue_wdl(v)) {
        case DTB_LOSS: if (best_win < 0 || d + 1 < best_win) best_win = d + 1; break;
        case DTB_WIN: if (d + 1 > longest_loss) longest_loss = d + 1; break;
        case DTB_DRAW: draw = true; break;
        }
    }
    if (best_win >= 0)
        return best_win <= DTB_MAX_DTW ? dtb_wvalue_win(best_win) : DTB_WVALUE_DRAW;
    if (draw)
        return DTB_WVALUE_DRAW;
    return dtb_wvalue_loss(longest_loss < 0 ? 0 : longest_loss);
}

/* MTC: the win takes its cheapest move into a lost position, the loss its dearest move; a
 * conversion (a capture or a man move) costs 1, a king move 1 + the MTC it reaches. */
dtb_value dtb_check_mtc_derive(const dtb_solved *s, const dtb_pos *p, const dtb_solved_table *ft,
                               const dtb_value *mtc_f)
{
    const dtb_wdl r = dtb_value_wdl(dtb_solved_value(s, p));
    if (r == DTB_DRAW)
        return DTB_VALUE_DRAW;
    const dtb_board *b = dtb_solved_board(s);
    dtb_movelist ml;
    const dtb_status st = dtb_generate(b, p, &ml);
    assert(st == DTB_OK);
    (void)st;
    int best = r == DTB_WIN ? INT_MAX : 0;
    for (int i = 0; i < ml.count; i++) {
        const dtb_move *m = &ml.moves[i];
        dtb_pos q;
        dtb_make_move(p, m, &q);
        if (r == DTB_WIN && !dtb_value_is_loss(dtb_solved_value(s, &q)))
            continue; /* does not keep the win */
        int cost = 1;
        if (!m->ncaptured && dtb_bb_has(p->kings[p->side], m->from)) {
            dtb_pos f;
            dtb_pos_flip(b, &q, &f);
            const uint64_t idx = dtb_index_of(ft->index, &f);
            /* a capture position there converts at once (MTC 1) */
            cost = 1 + (ft->captures[idx / 64] >> (idx % 64) & 1 ? 1 : dtb_mtc_plies(mtc_f[idx]));
        }
        best = r == DTB_WIN ? (cost < best ? cost : best) : (cost > best ? cost : best);
    }
    assert(best != INT_MAX);
    return dtb_mtc_byte(r == DTB_WIN, best > DTB_MTC_BYTE_MAX ? DTB_MTC_BYTE_MAX : best);
}

#define CHUNK 65536

/* Whether the stored value disagrees with the derived one: exactly, or in its result only
 * (stand-in distances: the derived distance follows from them, not from the game). */
static inline bool differs(dtb_wvalue derived, dtb_wvalue stored, bool results)
{
    return results ? dtb_wvalue_wdl(derived) != dtb_wvalue_wdl(stored) : derived != stored;
}

/* What a check compares at one index: whether the stored value differs from the derived one,
 * both given back (as their own encodings) when it does. */
typedef bool (*mismatch_at)(const void *ctx, uint64_t i, unsigned *stored, unsigned *derived);
/* Reports one mismatch to the caller's callback. */
typedef void (*report_at)(const void *ctx, uint64_t i, unsigned stored, unsigned derived);

/* Checks indexes 0..n-1: chunks in parallel, reports (at most limit, report may be NULL) in
 * index order, chunk by chunk (ordered). Returns the number of mismatches. */
static uint64_t check_chunks(uint64_t n, mismatch_at bad_at, report_at report, const void *ctx,
                             uint64_t limit)
{
    const uint64_t nchunks = (n + CHUNK - 1) / CHUNK;
    uint64_t bad = 0, reported = 0;
#pragma omp parallel for schedule(dynamic, 1) ordered reduction(+ : bad)
    for (uint64_t c = 0; c < nchunks; c++) {
        uint64_t first_bad = UINT64_MAX, chunk_bad = 0;
        const uint64_t end = (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n;
        unsigned stored, derived;
        for (uint64_t i = c * CHUNK; i < end; i++)
            if (bad_at(ctx, i, &stored, &derived)) {
                if (!chunk_bad)
                    first_bad = i;
                chunk_bad++;
            }
        bad += chunk_bad;
#pragma omp ordered
        if (chunk_bad && report) {
            /* Re-walk the chunk serially to report each mismatch in order. */
            for (uint64_t i = first_bad; i < end && reported < limit; i++)
                if (bad_at(ctx, i, &stored, &derived)) {
                    report(ctx, i, stored, derived);
                    reported++;
                }
        }
    }
    return bad;
}

typedef struct value_check {
    const dtb_solved *s;
    const dtb_solved_table *t;
    bool results; /* compare results only (see differs) */
    dtb_check_report report;
    void *user;
} value_check;

static bool value_mismatch(const void *ctx, uint64_t i, unsigned *stored, unsigned *derived)
{
    const value_check *vc = ctx;
    dtb_pos p;
    dtb_index_pos(vc->t->index, i, &p);
    const dtb_wvalue d = dtb_check_derive(vc->s, &p), st = dtb_solved_exact_at(vc->s, vc->t, i);
    *stored = st, *derived = d;
    return differs(d, st, vc->results);
}

static void value_report(const void *ctx, uint64_t i, unsigned stored, unsigned derived)
{
    const value_check *vc = ctx;
    vc->report(vc->user, vc->t, i, (dtb_wvalue)stored, (dtb_wvalue)derived);
}

static uint64_t check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                            void *user, uint64_t limit, bool results)
{
    const value_check vc = {s, t, results, report, user};
    return check_chunks(dtb_index_size(t->index), value_mismatch, report ? value_report : NULL, &vc,
                        limit);
}

uint64_t dtb_check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                         void *user, uint64_t limit)
{
    return check_table(s, t, report, user, limit, false);
}

uint64_t dtb_check_table_results(const dtb_solved *s, const dtb_solved_table *t,
                                 dtb_check_report report, void *user, uint64_t limit)
{
    return check_table(s, t, report, user, limit, true);
}

typedef struct mtc_check {
    const dtb_solved *s;
    const dtb_solved_table *t, *ft;
    const dtb_value *mtc_t, *mtc_f;
    dtb_check_mtc_report report;
    void *user;
} mtc_check;

static bool mtc_mismatch(const void *ctx, uint64_t i, unsigned *stored, unsigned *derived)
{
    const mtc_check *mc = ctx;
    if (mc->t->captures[i / 64] >> (i % 64) & 1) /* capture positions hold no MTC */
        return false;
    dtb_pos p;
    dtb_index_pos(mc->t->index, i, &p);
    *derived = dtb_check_mtc_derive(mc->s, &p, mc->ft, mc->mtc_f);
    *stored = mc->mtc_t[i];
    return *derived != *stored;
}

static void mtc_report(const void *ctx, uint64_t i, unsigned stored, unsigned derived)
{
    const mtc_check *mc = ctx;
    mc->report(mc->user, mc->t, i, (dtb_value)stored, (dtb_value)derived);
}

uint64_t dtb_check_mtc_table(const dtb_solved *s, const dtb_solved_table *t, const dtb_value *mtc_t,
                             const dtb_value *mtc_f, dtb_check_mtc_report report, void *user,
                             uint64_t limit)
{
    const dtb_solved_table *ft = dtb_solved_find(s, dtb_material_flip(t->material));
    assert(ft);
    const mtc_check mc = {s, t, ft, mtc_t, mtc_f, report, user};
    return check_chunks(dtb_index_size(t->index), mtc_mismatch, report ? mtc_report : NULL, &mc,
                        limit);
}

dtb_value dtb_check_rules_derive(const dtb_rule_layers *rl, const dtb_pos *p, int count,
                                 int *limit_out)
{
    const dtb_rules *rules = rl->rules;
    const dtb_board *b = dtb_solved_board(rl->at[0]);
    const int limit = dtb_rules_pos_limit(rules, b, p, count);
    if (limit_out)
        *limit_out = limit;
    dtb_movelist ml;
    const dtb_status st = dtb_generate(b, p, &ml);
    assert(st == DTB_OK);
    (void)st;
    if (ml.count == 0)
        return DTB_VALUE_LOST;
    /* Over the moves, in clocks: the largest clock the best win holds from (its move's H - 1,
     * or every clock after a reset), and the smallest the dearest loss holds from. */
    long win = -1, loss = LONG_MAX;
    for (int i = 0; i < ml.count; i++) {
        const dtb_move *mv = &ml.moves[i];
        dtb_pos q;
        dtb_make_move(p, mv, &q);
        const dtb_rule_step step = dtb_rules_step(rules, b, p, mv, &q, count);
        const dtb_value v = dtb_rule_layers_value(rl, &q, step.count);
        if (v == DTB_VALUE_DRAW) { /* drawn or undecided: no loss through every move */
            loss = -1;
            continue;
        }
        /* the target's H: its limit less its distance, every clock when it has no legal move
         * (no piece included) or no count */
        const int d = dtb_mtc_plies(v);
        const bool always = d == 0 || !step.limit;
        const long from = step.reset || always ? LONG_MAX : (long)(step.limit - d) - 1;
        if (dtb_value_is_loss(v)) { /* a move the opponent does not win: no loss either */
            win = from > win ? from : win;
            loss = -1;
        } else if (from < loss) {
            loss = from;
        }
    }
    if (!limit) /* no count: every move into p reset it, so p's clock is 0 */
        return win >= 0 ? dtb_mtc_byte(true, 1)
               : loss >= 0 ? dtb_mtc_byte(false, 1) : DTB_VALUE_DRAW;
    if (win > limit - 1)
        win = limit - 1;
    if (loss > limit - 1)
        loss = limit - 1;
    if (win >= 0)
        return dtb_mtc_byte(true, (int)(limit - win));
    return loss >= 0 ? dtb_mtc_byte(false, (int)(limit - loss)) : DTB_VALUE_DRAW;
}

typedef struct rules_check {
    const dtb_rule_layers *rl;
    const dtb_solved_table *rt;
    int count;
    dtb_check_mtc_report report;
    void *user;
} rules_check;

static bool rules_mismatch(const void *ctx, uint64_t i, unsigned *stored, unsigned *derived)
{
    const rules_check *rc = ctx;
    dtb_pos p;
    dtb_index_pos(rc->rt->index, i, &p);
    *derived = dtb_check_rules_derive(rc->rl, &p, rc->count, NULL);
    *stored = rc->rt->values[i];
    return *derived != *stored;
}

static void rules_report(const void *ctx, uint64_t i, unsigned stored, unsigned derived)
{
    const rules_check *rc = ctx;
    rc->report(rc->user, rc->rt, i, (dtb_value)stored, (dtb_value)derived);
}

uint64_t dtb_check_rules_table(const dtb_rule_layers *rl, const dtb_solved_table *rt, int count,
                               dtb_check_mtc_report report, void *user, uint64_t limit)
{
    const rules_check rc = {rl, rt, count, report, user};
    return check_chunks(dtb_index_size(rt->index), rules_mismatch, report ? rules_report : NULL,
                        &rc, limit);
}
