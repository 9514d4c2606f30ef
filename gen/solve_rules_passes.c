/* The rule bytes of a pair by passes over its positions (gen/solve.h, dtb_solve_rules_passes):
 * the slow, simple solve of any class, kept as the reference the unit solve
 * (gen/solve_rules.c, what builds use) is tested against. Each pass derives the open
 * positions by one ply from what is decided (dtb_check_rules_derive, the derivation --check
 * re-runs), so the solve is that check run to its fixpoint in a fixed order.
 *
 * In clocks: a decided win or loss holds up to clock H = its limit minus its rule distance. A
 * win's H is the largest over its winning moves of the target's H - 1 (every clock after a
 * reset), a loss's the smallest over its moves, both capped by the position's own limit - 1;
 * along moves that keep the count the clock grows by one. So passes go from the highest H down:
 * pass t decides the positions whose H is t, reading only positions decided in passes before
 * (collected first, stored after), which are exactly those with a larger H. A diagonal count
 * never falls, so the count layers are solved from the highest (late_after, which moves keep)
 * down to 0, each reading its own and higher layers. A class without a count (every move into
 * it resets, FMJD-64's "none") is a plain game at clock 0 instead: passes until nothing
 * changes. Unlimited draws are drawn under any rule and are never derived. The same bytes
 * whatever the thread count. */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "check.h"
#include "solve.h"

/* One member of the pair at one count: its unlimited values and its rule bytes. */
typedef struct member {
    const dtb_solved_table *main;
    dtb_solved_table *rt;
} member;

/* One pass over the open positions of the members at count c: next[k][i] gets the derived byte
 * of those to decide now (the clock t's; at t = top, the material's largest limit, those
 * without a legal move, which hold at every clock; every decided one when t < 0: a class
 * without a count), DTB_VALUE_DRAW elsewhere. Returns how many. */
static uint64_t pass(const dtb_rule_layers *rl, const member *mb, int members, int c, int t,
                     int top, dtb_value *const next[2])
{
    uint64_t found = 0;
    for (int k = 0; k < members; k++) {
        const uint64_t n = dtb_index_size(mb[k].rt->index);
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : found)
        for (uint64_t i = 0; i < n; i++) {
            next[k][i] = DTB_VALUE_DRAW;
            if (mb[k].rt->values[i] != DTB_VALUE_DRAW ||
                dtb_value_wdl(mb[k].main->values[i]) == DTB_DRAW)
                continue;
            dtb_pos p;
            dtb_index_pos(mb[k].rt->index, i, &p);
            int limit;
            const dtb_value v = dtb_check_rules_derive(rl, &p, c, &limit);
            if (v == DTB_VALUE_DRAW)
                continue;
            const int d = dtb_mtc_plies(v);
            /* no legal move (d 0) holds at every clock: the first pass (t = top) decides it */
            const int h = d == 0 ? INT_MAX : limit - d;
            assert(t < 0 || t == top || h <= t);
            if (t < 0 || (t == top ? h >= t : h == t)) {
                next[k][i] = v;
                found++;
            }
        }
    }
    return found;
}

/* Stores what a pass decided. */
static void store(const member *mb, int members, dtb_value *const next[2])
{
    for (int k = 0; k < members; k++) {
        const uint64_t n = dtb_index_size(mb[k].rt->index);
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++)
            if (next[k][i] != DTB_VALUE_DRAW)
                mb[k].rt->values[i] = next[k][i];
    }
}

dtb_status dtb_solve_rules_passes(const dtb_solved *s, dtb_rule_layers *rl, dtb_material m,
                                  dtb_error *e)
{
    const dtb_rules *r = rl->rules;
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    const int members = self ? 1 : 2, layers = dtb_rule_layers_of(rl, &m);
    dtb_solved_table *rt[2][DTB_RULE_COUNT_MAX + 1];
    dtb_status rc = dtb_rule_layers_add(rl, m, rt[0], e);
    if (rc == DTB_OK && !self)
        rc = dtb_rule_layers_add(rl, fm, rt[1], e);
    if (rc != DTB_OK)
        return rc;
    const uint64_t n = dtb_index_size(rt[0][0]->index);
    dtb_value *next[2] = {malloc(n ? n : 1), malloc(n ? n : 1)};
    if (!next[0] || !next[1]) {
        free(next[0]);
        free(next[1]);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    const int top = dtb_rules_top_limit(r, &m);
    for (int c = layers - 1; c >= 0; c--) {
        member mb[2];
        for (int k = 0; k < members; k++) {
            mb[k] = (member){dtb_solved_find(s, k ? fm : m), rt[k][c]};
            memset(rt[k][c]->values, DTB_VALUE_DRAW, n);
        }
        if (!top) /* no count: a game at clock 0, until nothing changes */
            while (pass(rl, mb, members, c, -1, 0, next))
                store(mb, members, next);
        for (int t = top; t >= 0 && top; t--) {
            pass(rl, mb, members, c, t, top, next);
            store(mb, members, next);
        }
    }
    free(next[0]);
    free(next[1]);
    return DTB_OK;
}
