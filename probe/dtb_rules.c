/* Answers under the move-count draw rules (dtb.h, "Answers under the move-count draw rules").
 *
 * A position's rule byte (docs/FORMAT.md §8.6) holds its rule distance d: the plies to the
 * next reset of the count that keeps its result at a fresh count, measured against the
 * position's own limit L (its class's at its diagonal count, core/rules.h), so with the count
 * at clock the result holds exactly when d <= L - clock; a side without a legal move has lost
 * at any count, and a class without a count holds it at every clock. A move's value is its
 * position's at the counters after it: clock 0 when the move resets the count, else one more;
 * the diagonal count as dtb_rules_next_count gives it. */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "value.h"

const char *dtb_rule_category_name(dtb_rule_category c)
{
    switch (c) {
    case DTB_RULE_LOSS: return "loss";
    case DTB_RULE_BLESSED_LOSS: return "blessed-loss";
    case DTB_RULE_DRAW: return "draw";
    case DTB_RULE_CURSED_WIN: return "cursed-win";
    case DTB_RULE_WIN: return "win";
    }
    return "unknown";
}

static dtb_rule_category category_of(dtb_wdl under_rules, dtb_wdl unlimited)
{
    if (under_rules != DTB_DRAW)
        return under_rules == DTB_WIN ? DTB_RULE_WIN : DTB_RULE_LOSS;
    return unlimited == DTB_WIN    ? DTB_RULE_CURSED_WIN
           : unlimited == DTB_LOSS ? DTB_RULE_BLESSED_LOSS
                                   : DTB_RULE_DRAW;
}

/* The rules a rule table was solved with: rules with the table's limits (a test set may have
 * lowered them). */
static dtb_rules table_rules(const dtb_rules *rules, const dtb_tablefile_info *info)
{
    return dtb_rules_with_limits(rules, info->rule_limits, info->rule_late_limit);
}

/* The answer for core position p (its side to move has a piece) at clock and diagonal count. */
static dtb_status answer(dtb_db *db, const dtb_rules *rules, const dtb_pos *p, int clock,
                         int count, unsigned flags, dtb_rule_answer *out, dtb_error *e)
{
    memset(out, 0, sizeof *out);
    out->clock = clock;
    dtb_status s = dtb_resolve_wdl(db->r, p, flags, &out->unlimited, e);
    if (s != DTB_OK)
        return s;
    if (!rules) { /* unlimited play */
        snprintf(out->rules, sizeof out->rules, "none");
        out->wdl = out->unlimited;
        out->category = category_of(out->wdl, out->unlimited);
        out->plies = -1;
        return DTB_OK;
    }
    dtb_value raw;
    const dtb_tablefile_info *info;
    s = dtb_resolve_rule_byte(db->r, p, dtb_metric_of_rules(rules->id), count, flags, &raw,
                              &info, e);
    if (s != DTB_OK)
        return s;
    const dtb_rules solved = table_rules(rules, info);
    const int cls = dtb_rules_pos_class(&solved, db->board, p);
    snprintf(out->rules, sizeof out->rules, "%s", rules->name);
    snprintf(out->rule, sizeof out->rule, "%s", solved.cls[cls].name);
    out->limit = dtb_rules_pos_limit(&solved, db->board, p, count);
    const dtb_wdl w = dtb_value_wdl(raw);
    out->plies = w == DTB_DRAW ? -1 : dtb_mtc_plies(raw);
    /* No legal move (plies 0) loses whatever the count; no count (limit 0) holds it at every
     * clock; otherwise the count must leave time. */
    const bool holds = w != DTB_DRAW &&
                       (out->plies == 0 || !out->limit || out->plies <= out->limit - clock);
    out->wdl = holds ? w : DTB_DRAW;
    if (w != DTB_DRAW && w != out->unlimited)
        return dtb_error_set(e, DTB_E_CORRUPT, "a rule table says %s where the WDL tables say %s",
                             w == DTB_WIN ? "win" : "loss",
                             out->unlimited == DTB_WIN ? "win" : out->unlimited == DTB_LOSS ? "loss" : "draw");
    out->category = category_of(out->wdl, out->unlimited);
    return DTB_OK;
}

/* The core position of p, checked, and the counters, which cannot be negative. */
static dtb_status to_pos_at(const dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                            dtb_pos *q, dtb_error *e)
{
    const dtb_status s = dtb_db_to_pos(db, p, q, e);
    if (s == DTB_OK && c->clock < 0)
        return dtb_error_set(e, DTB_E_INVALID, "clock %d: the plies since the count was reset "
                             "cannot be negative", c->clock);
    if (s == DTB_OK && c->diagonal < 0)
        return dtb_error_set(e, DTB_E_INVALID, "diagonal count %d: the plies the lone king "
                             "held the main road cannot be negative", c->diagonal);
    return s;
}

dtb_status dtb_probe_rules_at(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                              unsigned flags, dtb_rule_answer *out)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = to_pos_at(db, p, c, &q, &e);
    if (s == DTB_OK && !dtb_pos_pieces(&q, q.side))
        return dtb_db_counted(db, DTB_E_GAMEOVER); /* dtb.h, "The game is over" */
    if (s == DTB_OK)
        s = answer(db, dtb_rules_of_variant(db->board->variant), &q, c->clock, c->diagonal,
                   flags, out, &e);
    return dtb_db_counted(db, s == DTB_OK ? s : dtb_db_record(db, s, &e));
}

dtb_status dtb_probe_rules(dtb_db *db, const dtb_position *p, int clock, unsigned flags,
                           dtb_rule_answer *out)
{
    const dtb_rule_counters c = {.clock = clock};
    return dtb_probe_rules_at(db, p, &c, flags, out);
}

/* A move's place in the ranking (higher is better). */
static int move_rank(const dtb_rule_move *m)
{
    enum { FAR = 1 << 20 }; /* beyond any count of plies */
    switch (m->category) {
    case DTB_RULE_WIN: return 4 * FAR - m->plies;
    case DTB_RULE_CURSED_WIN: return 3 * FAR;
    case DTB_RULE_DRAW: return 2 * FAR;
    case DTB_RULE_BLESSED_LOSS: return FAR;
    case DTB_RULE_LOSS: return m->plies;
    }
    return 0;
}

/* The counters after move mv of p (leading to child) under rules (NULL: none, the clock 0). */
static dtb_rule_counters counters_after(const dtb_db *db, const dtb_rules *rules, const dtb_pos *p,
                                        const dtb_move *mv, const dtb_pos *child,
                                        const dtb_rule_counters *c)
{
    if (!rules)
        return (dtb_rule_counters){0};
    const dtb_rule_step step = dtb_rules_step(rules, db->board, p, mv, child, c->diagonal);
    return (dtb_rule_counters){.clock = step.reset ? 0 : c->clock + 1, .diagonal = step.count};
}

/* The value of move mv of p at counters c for p's side to move. */
static dtb_status move_value(dtb_db *db, const dtb_rules *rules, const dtb_pos *p,
                             const dtb_move *mv, const dtb_rule_counters *c, unsigned flags,
                             dtb_rule_move *out, dtb_error *e)
{
    dtb_pos child;
    dtb_make_move(p, mv, &child);
    const dtb_rule_counters after = counters_after(db, rules, p, mv, &child, c);
    const bool reset = after.clock == 0;
    out->clock = after.clock;
    if (!dtb_pos_pieces(&child, child.side)) { /* the last piece taken: won now */
        out->category = DTB_RULE_WIN;
        out->plies = 1;
        return DTB_OK;
    }
    dtb_rule_answer a;
    const dtb_status s = answer(db, rules, &child, after.clock, after.diagonal,
                                flags & ~DTB_QUIET_POSITION, &a, e);
    if (s != DTB_OK)
        return s;
    out->category = (dtb_rule_category)-a.category;
    const bool decided = out->category == DTB_RULE_WIN || out->category == DTB_RULE_LOSS;
    out->plies = !decided ? -1 : reset ? 1 : 1 + a.plies;
    return DTB_OK;
}

dtb_status dtb_probe_rule_moves_at(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                                   unsigned flags, dtb_rule_move *out, int cap, int *count)
{
    dtb_error e = {{0}};
    dtb_pos q;
    *count = 0;
    const int clock = c->clock;
    dtb_status s = to_pos_at(db, p, c, &q, &e);
    if (s != DTB_OK)
        return dtb_db_record(db, s, &e);
    const dtb_rules *rules = dtb_rules_of_variant(db->board->variant);
    dtb_rule_answer here;
    if (!dtb_pos_pieces(&q, q.side))
        return DTB_OK; /* the game is over: no move */
    if ((s = answer(db, rules, &q, clock, c->diagonal, flags, &here, &e)) != DTB_OK)
        return dtb_db_record(db, s, &e);
    if (rules && here.limit && clock >= here.limit)
        return DTB_OK; /* drawn by the rules (or lost without a move): the game is over */
    dtb_movelist *list = dtb_db_moves(db, &q, &s, &e);
    if (!list)
        return dtb_db_record(db, s, &e);
    dtb_rule_move *rk = malloc((size_t)(list->count ? list->count : 1) * sizeof *rk);
    int *rank = malloc((size_t)(list->count ? list->count : 1) * sizeof *rank);
    if (!rk || !rank)
        s = dtb_error_set(&e, DTB_E_NOMEM, "out of memory ranking moves");
    for (int i = 0; i < list->count && s == DTB_OK; i++) {
        if ((s = move_value(db, rules, &q, &list->moves[i], c, flags, &rk[i], &e)) != DTB_OK)
            break;
        dtb_db_pdn_move(db, &q, &list->moves[i], &rk[i].move);
        rank[i] = move_rank(&rk[i]);
        for (int j = i; j > 0 && rank[j - 1] < rank[j]; j--) { /* insertion: stable */
            const dtb_rule_move t = rk[j - 1];
            rk[j - 1] = rk[j];
            rk[j] = t;
            const int r = rank[j - 1];
            rank[j - 1] = rank[j];
            rank[j] = r;
        }
    }
    if (s == DTB_OK) {
        for (int i = 0; i < list->count && i < cap; i++)
            out[i] = rk[i];
        *count = list->count;
        if (list->count > cap)
            s = dtb_error_set(&e, DTB_E_OVERFLOW, "%d legal moves, room for %d", list->count, cap);
    }
    free(list);
    free(rk);
    free(rank);
    return s == DTB_OK ? DTB_OK : dtb_db_record(db, s, &e);
}

dtb_status dtb_probe_rule_moves(dtb_db *db, const dtb_position *p, int clock, unsigned flags,
                                dtb_rule_move *out, int cap, int *count)
{
    const dtb_rule_counters c = {.clock = clock};
    return dtb_probe_rule_moves_at(db, p, &c, flags, out, cap, count);
}

dtb_status dtb_rule_counters_after(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                                   const dtb_pdn_move *m, dtb_rule_counters *out)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = to_pos_at(db, p, c, &q, &e);
    if (s != DTB_OK)
        return dtb_db_record(db, s, &e);
    dtb_move mv;
    if ((s = dtb_db_find_move(db, &q, m, &mv)) != DTB_OK) {
        dtb_error_set(&e, s, s == DTB_E_INVALID ? "the move is not legal in the position"
                                                : "out of memory listing the moves");
        return dtb_db_record(db, s, &e);
    }
    dtb_pos child;
    dtb_make_move(&q, &mv, &child);
    *out = counters_after(db, dtb_rules_of_variant(db->board->variant), &q, &mv, &child, c);
    return DTB_OK;
}
