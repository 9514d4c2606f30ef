/* The lichess-shaped answer (lidraughts.h).
 *
 * lidraughts' client (ui/analyse/src/explorer: explorerCtrl.ts and explorerXhr.ts, with
 * interfaces.ts, explorerView.ts and explorerUtil.ts as in the lichess it forked) asks
 * <endpoint>/standard?fen=<its FEN, "W:W31,...:B1,...:H0:F1">, groups the moves by "wdl" (older lichess) or "category"
 * (newer), colours them by the sign of "wdl" or "dtz", shows "dtz" and "dtm" as distances,
 * "checkmate" as the end, "zeroing" with the SAN ('x': a capture, else a man move), and plays
 * a move by its "uci": lidraughts' draughts UCI, two digits a square, the start then the end, or
 * for a capture the start then every landing square ("3228", "281910"). Both generations'
 * fields are written. */
#include "lidraughts.h"

#include <stdio.h>
#include <string.h>

const char *dtb_lidraughts_variant(const char *key)
{
    static const char *const names[][2] = {
        {"standard", "international"}, {"fromPosition", "international"},
        {"russian", "russian"},        {"brazilian", "brazilian"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(key, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

/* lidraughts' UCI of legal move m of p: read back from the algebraic text, which lists every
 * landing square of a capture ("c5:e7:g5"). */
static dtb_status uci_of(dtb_db *db, const dtb_position *p, const dtb_pdn_move *m, char *uci,
                         size_t size)
{
    char text[DTB_MOVE_TEXT_SIZE];
    dtb_status s = dtb_move_to_text(db, p, m, DTB_NOTATION_ALGEBRAIC, text, sizeof text);
    size_t n = 0;
    uci[0] = 0;
    for (char *tok = strtok(text, "-:x"); tok && s == DTB_OK; tok = strtok(NULL, "-:x")) {
        int sq;
        if ((s = dtb_square_from_text(db, tok, &sq)) == DTB_OK && n + 3 <= size)
            n += (size_t)snprintf(uci + n, size - n, "%02d", sq);
    }
    return s;
}

/* The values of one position for its side to move, as the lichess fields take them. */
typedef struct lichess_values {
    dtb_rule_category category;
    bool have_dtz;
    int dtz;  /* signed: positive when the side to move wins */
    bool have_dtm;
    int dtm;  /* signed DTW (unlimited play) */
    bool checkmate; /* the side to move has lost: no piece or no legal move */
} lichess_values;

/* The values of q at counters c; under the rules when rules, else in unlimited play. */
static dtb_status values_of(dtb_db *db, const dtb_position *q, const dtb_rule_counters *c,
                            bool rules, lichess_values *v)
{
    memset(v, 0, sizeof *v);
    dtb_wdl w;
    int dtw;
    dtb_status s = dtb_probe_dtw(db, q, 0, &w, &dtw);
    if (s == DTB_E_GAMEOVER) { /* no piece: lost, at any count */
        v->category = DTB_RULE_LOSS;
        v->have_dtz = v->have_dtm = v->checkmate = true;
        return DTB_OK;
    }
    if (s == DTB_OK) {
        v->have_dtm = true;
        v->dtm = w == DTB_WIN ? dtw : w == DTB_LOSS ? -dtw : 0;
    } else if (s != DTB_E_NOTFOUND || (s = dtb_probe_wdl(db, q, 0, &w)) != DTB_OK) {
        return s;
    }
    v->checkmate = w == DTB_LOSS && v->have_dtm && dtw == 0;
    if (!rules) {
        v->category = w == DTB_WIN ? DTB_RULE_WIN : w == DTB_LOSS ? DTB_RULE_LOSS : DTB_RULE_DRAW;
        v->have_dtz = w == DTB_DRAW || v->checkmate;
        return DTB_OK;
    }
    dtb_rule_answer r;
    if ((s = dtb_probe_rules_at(db, q, c, 0, &r)) != DTB_OK)
        return s;
    v->category = r.category;
    v->checkmate = r.category == DTB_RULE_LOSS && r.plies == 0;
    v->have_dtz = r.category == DTB_RULE_DRAW || r.plies >= 0;
    v->dtz = r.category == DTB_RULE_DRAW ? 0 : r.category > 0 ? r.plies : -r.plies;
    return DTB_OK;
}

static void number_or_null(dtb_text *t, const char *key, bool have, int value)
{
    if (have)
        dtb_text_printf(t, ",\"%s\":%d", key, value);
    else
        dtb_text_printf(t, ",\"%s\":null", key);
}

static void values_json(dtb_text *t, const lichess_values *v)
{
    dtb_text_printf(t, "\"category\":\"%s\",\"wdl\":%d", dtb_rule_category_name(v->category),
                    (int)v->category);
    number_or_null(t, "dtz", v->have_dtz, v->dtz);
    number_or_null(t, "precise_dtz", v->have_dtz, v->dtz); /* exact: nothing is rounded */
    number_or_null(t, "dtm", v->have_dtm, v->dtm);
    dtb_text_printf(t, ",\"checkmate\":%s,\"stalemate\":false,\"variant_win\":false,"
                       "\"variant_loss\":false,\"insufficient_material\":false",
                    v->checkmate ? "true" : "false");
}

/* One move of p as a lichess move: the values of the position after it at counters c (its
 * counters after the move), and whether the move resets the count (zeroing). */
static dtb_status move_json(dtb_text *t, dtb_db *db, const dtb_position *p,
                            const dtb_pdn_move *m, const dtb_rule_counters *c, bool zeroing,
                            bool rules, bool first)
{
    dtb_position child;
    char uci[2 * DTB_MAX_CAPTURED + 8];
    lichess_values v;
    dtb_status s = dtb_position_after(db, p, m, &child);
    if (s == DTB_OK)
        s = uci_of(db, p, m, uci, sizeof uci);
    if (s == DTB_OK)
        s = values_of(db, &child, c, rules, &v);
    if (s != DTB_OK)
        return s;
    dtb_text_printf(t, "%s{\"uci\":\"%s\",\"san\":\"%d%c%d\",", first ? "" : ",", uci, m->from,
                    m->ncaptured ? 'x' : '-', m->to);
    values_json(t, &v);
    dtb_text_printf(t, ",\"zeroing\":%s}", zeroing ? "true" : "false");
    return DTB_OK;
}

dtb_status dtb_lidraughts_json(dtb_text *t, dtb_db *db, const dtb_position *p, int clock,
                               dtb_answer *a)
{
    const bool rules = a->have_rules;
    lichess_values v;
    const dtb_rule_counters here = {.clock = clock, .diagonal = a->counters.diagonal};
    dtb_status s = values_of(db, p, &here, rules, &v);
    if (s == DTB_OK) {
        dtb_text_printf(t, "{");
        values_json(t, &v);
        dtb_text_printf(t, ",\"rules\":\"%s\",\"moves\":[", rules ? a->rules.rules : "none");
    }
    if (rules)
        for (int i = 0; i < a->nrule_moves && s == DTB_OK; i++) {
            const dtb_rule_counters after = {.clock = a->rule_moves[i].clock,
                                             .diagonal = a->rule_move_diagonal[i]};
            s = move_json(t, db, p, &a->rule_moves[i].move, &after, after.clock == 0, true,
                          i == 0);
        }
    else /* unlimited play: no count; a capture or a man move still zeroes it */
        for (int i = 0; i < a->nmoves && s == DTB_OK; i++) {
            const dtb_pdn_move *m = &a->moves[i].move;
            const int w = (m->from - 1) / 64, bit = (m->from - 1) % 64;
            const bool man = p->men[p->side][w] >> bit & 1;
            const dtb_rule_counters none = {0};
            s = move_json(t, db, p, m, &none, man || m->ncaptured, false, i == 0);
        }
    if (s != DTB_OK) {
        dtb_last_error(db, a->error, sizeof a->error);
        return s;
    }
    dtb_text_printf(t, "]}");
    return DTB_OK;
}
