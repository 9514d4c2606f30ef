/* One position's full answer and its JSON (answer.h). */
#include "answer.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"
#include "rules.h"

_Static_assert(DTB_ANSWER_MAX_MOVES == DTB_MAX_MOVES, "room for every legal move");

const char *dtb_answer_wdl_name(dtb_wdl w)
{
    return w == DTB_WIN ? "win" : w == DTB_LOSS ? "loss" : "draw";
}

/* The texts of the ranked moves and of the line, in a->notation (libdtb wrote them in the
 * db's): the line's moves are written from the positions along it. */
static dtb_status retext_line(dtb_db *db, const dtb_position *p, dtb_pdn_move *line, int n,
                              dtb_notation notation)
{
    dtb_status s = DTB_OK;
    dtb_position q = *p;
    for (int i = 0; i < n && s == DTB_OK; i++) {
        dtb_pdn_move *m = &line[i];
        s = dtb_move_to_text(db, &q, m, notation, m->text, sizeof m->text);
        dtb_position next;
        if (s == DTB_OK && i + 1 < n && (s = dtb_position_after(db, &q, m, &next)) == DTB_OK)
            q = next;
    }
    return s;
}

static dtb_status retext(dtb_db *db, const dtb_position *p, dtb_answer *a)
{
    dtb_status s = DTB_OK;
    for (int i = 0; i < a->nmoves && s == DTB_OK; i++)
        s = dtb_move_to_text(db, p, &a->moves[i].move, a->notation, a->moves[i].move.text,
                             sizeof a->moves[i].move.text);
    return s == DTB_OK ? retext_line(db, p, a->line, a->nline, a->notation) : s;
}

void dtb_answer_probe(dtb_db *db, const dtb_position *p, dtb_notation n, dtb_answer *a)
{
    a->nmoves = a->nline = 0;
    a->have_rules = false;
    a->notation = n;
    a->have_dtw = true;
    a->error[0] = 0;
    a->status = dtb_probe_dtw(db, p, 0, &a->wdl, &a->dtw);
    if (a->status == DTB_E_GAMEOVER) /* no piece to move: lost in 0, no move, no line */
        a->status = DTB_OK, a->wdl = DTB_LOSS, a->dtw = 0;
    if (a->status == DTB_OK)
        a->status = dtb_probe_moves(db, p, 0, a->moves, DTB_ANSWER_MAX_MOVES, &a->nmoves);
    if (a->status == DTB_OK)
        a->status = dtb_probe_line(db, p, 0, a->line, DTB_MAX_LINE, &a->nline);
    if (a->status == DTB_E_NOTFOUND) { /* a WLD-only set: the value, and moves ranked by WDL */
        a->have_dtw = false;
        a->nmoves = a->nline = 0;
        a->status = dtb_probe_wdl(db, p, 0, &a->wdl);
        if (a->status == DTB_E_GAMEOVER)
            a->status = DTB_OK, a->wdl = DTB_LOSS;
        a->dtw = 0;
        if (a->status == DTB_OK &&
            dtb_probe_moves(db, p, 0, a->moves, DTB_ANSWER_MAX_MOVES, &a->nmoves) != DTB_OK)
            a->nmoves = 0; /* a move's table missing too: the value alone */
    }
    /* MTC where the set has it: a missing .mtc is no error (sets are made without by
     * default), a damaged one is. */
    a->have_mtc = false;
    a->mtc = 0;
    if (a->status == DTB_OK) {
        dtb_wdl w;
        const dtb_status s = dtb_probe_mtc(db, p, 0, &w, &a->mtc);
        if (s == DTB_OK || s == DTB_E_GAMEOVER)
            a->have_mtc = true, a->mtc = s == DTB_OK ? a->mtc : 0;
        else if (s != DTB_E_NOTFOUND)
            a->status = s;
    }
    if (a->status != DTB_OK) {
        dtb_last_error(db, a->error, sizeof a->error);
        return;
    }
    /* The moves come from the probes of p itself: writing them cannot fail. */
    const dtb_status s = retext(db, p, a);
    assert(s == DTB_OK);
    (void)s;
}

bool dtb_answer_rules_known(const char *name)
{
    return dtb_rules_find(name) || strcmp(name, "none") == 0;
}

static void rules_failed(dtb_answer *a, dtb_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void rules_failed(dtb_answer *a, dtb_status s, const char *fmt, ...)
{
    a->status = s;
    a->have_rules = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
}

/* The line under the rules from p at counters c: the first ranked move every ply, until the
 * game ends (no move, or the count at its limit); moves is scratch room for every legal move. */
static dtb_status rule_line(dtb_db *db, const dtb_position *p, dtb_rule_counters c,
                            dtb_rule_move *moves, dtb_answer *a)
{
    dtb_position q = *p;
    a->nrule_line = 0;
    while (a->nrule_line < DTB_MAX_LINE) {
        int n = 0;
        dtb_status s = dtb_probe_rule_moves_at(db, &q, &c, 0, moves, DTB_ANSWER_MAX_MOVES, &n);
        if (s != DTB_OK || n == 0)
            return s;
        dtb_position next;
        dtb_rule_counters after;
        if ((s = dtb_position_after(db, &q, &moves[0].move, &next)) != DTB_OK ||
            (s = dtb_rule_counters_after(db, &q, &c, &moves[0].move, &after)) != DTB_OK)
            return s;
        a->rule_line[a->nrule_line++] = moves[0].move;
        c = after;
        q = next;
    }
    return DTB_OK;
}

void dtb_answer_rules(dtb_db *db, const dtb_position *p, const char *rules,
                      const dtb_rule_counters *c, dtb_answer *a)
{
    const int clock = c->clock;
    a->have_rules = false;
    a->counters = *c;
    a->nrule_moves = a->nrule_line = 0;
    if (a->status != DTB_OK || (rules && strcmp(rules, "none") == 0))
        return;
    if (rules && !dtb_answer_rules_known(rules))
        return rules_failed(a, DTB_E_INVALID, "rules '%.40s': dtb knows fmjd, wcdf, fmjd64 and "
                            "none", rules);
    dtb_rule_answer *r = &a->rules;
    const dtb_status s = dtb_probe_rules_at(db, p, c, 0, r);
    if (s == DTB_E_GAMEOVER) { /* no piece to move: lost at any count, no move, no line */
        if (!rules)
            return;
        memset(r, 0, sizeof *r);
        snprintf(r->rules, sizeof r->rules, "%s", rules);
        r->category = DTB_RULE_LOSS;
        r->wdl = r->unlimited = DTB_LOSS;
        r->clock = clock;
        a->have_rules = true;
        return;
    }
    if (s == DTB_E_NOTFOUND && !rules)
        return; /* a set made without rule tables: unlimited play, as before */
    if (s != DTB_OK) {
        char why[DTB_MESSAGE_SIZE];
        dtb_last_error(db, why, sizeof why);
        if (s == DTB_E_NOTFOUND)
            return rules_failed(a, s, "no rule tables for this position (%.200s): make them "
                                "with dtbgen --metrics wld,dtw,rules, or ask for rules none",
                                why);
        return rules_failed(a, s, "%.400s", why);
    }
    if (strcmp(r->rules, "none") == 0) { /* a variant without rules in dtb */
        if (rules)
            return rules_failed(a, DTB_E_INVALID, "the %s tables are answered under no "
                                "move-count rules (none), not under %.40s", dtb_db_variant(db),
                                rules);
        return;
    }
    if (rules && strcmp(r->rules, rules) != 0) /* another variant's rules */
        return rules_failed(a, DTB_E_INVALID, "the %s tables are answered under %s (or none), "
                            "not under %.40s", dtb_db_variant(db), r->rules, rules);
    a->have_rules = true;
    dtb_status st = dtb_probe_rule_moves_at(db, p, c, 0, a->rule_moves, DTB_ANSWER_MAX_MOVES,
                                            &a->nrule_moves);
    for (int i = 0; i < a->nrule_moves && st == DTB_OK; i++) {
        dtb_rule_counters after;
        st = dtb_rule_counters_after(db, p, c, &a->rule_moves[i].move, &after);
        a->rule_move_diagonal[i] = after.diagonal;
    }
    if (st == DTB_OK && r->category != DTB_RULE_DRAW) {
        dtb_rule_move *scratch = malloc(DTB_ANSWER_MAX_MOVES * sizeof *scratch);
        st = scratch ? rule_line(db, p, *c, scratch, a) : DTB_E_NOMEM;
        free(scratch);
    }
    for (int i = 0; i < a->nrule_moves && st == DTB_OK; i++) {
        dtb_pdn_move *m = &a->rule_moves[i].move;
        st = dtb_move_to_text(db, p, m, a->notation, m->text, sizeof m->text);
    }
    if (st == DTB_OK)
        st = retext_line(db, p, a->rule_line, a->nrule_line, a->notation);
    if (st != DTB_OK) {
        a->status = st;
        a->have_rules = false;
        if (st == DTB_E_NOMEM)
            snprintf(a->error, sizeof a->error, "out of memory");
        else
            dtb_last_error(db, a->error, sizeof a->error);
    }
}

void dtb_answer_fen(dtb_db *db, const dtb_position *p, dtb_notation n, const char *fallback,
                    char *buf, size_t size)
{
    if (dtb_position_to_fen_in(db, p, n, buf, size) != DTB_OK)
        snprintf(buf, size, "%s", fallback);
}

void dtb_text_free(dtb_text *t)
{
    free(t->s);
    *t = (dtb_text){0};
}

static bool reserve(dtb_text *t, size_t more)
{
    if (t->failed)
        return false;
    if (t->len + more + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
        t->failed = true;
        return false;
    }
    t->s = s;
    t->cap = cap;
    return true;
}

void dtb_text_printf(dtb_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(t, (size_t)n))
        return;
    if ((size_t)n < sizeof small) {
        memcpy(t->s + t->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}

/* Quotes, backslashes and control characters are escaped; other bytes pass (FENs, PDN moves and
 * messages are ASCII, a hostile FEN echoed back may not be: it is still valid JSON text only if
 * it is valid UTF-8, so bytes >= 0x80 are escaped as \u00XX to keep the output valid). */
void dtb_text_json_string(dtb_text *t, const char *s)
{
    if (!reserve(t, 6 * strlen(s) + 2))
        return;
    char *o = t->s + t->len;
    *o++ = '"';
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            o += sprintf(o, "\\u%04x", c);
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '"';
    *o = 0;
    t->len = (size_t)(o - t->s);
}

static void dtw_json(dtb_text *t, dtb_wdl wdl, int dtw)
{
    if (wdl == DTB_DRAW || dtw == DTB_DTW_UNKNOWN)
        dtb_text_printf(t, "null");
    else
        dtb_text_printf(t, "%d", dtw);
}

/* ,"fen":<the position after legal move m of p> (nothing if it cannot be written) */
static void fen_after_json(dtb_text *t, dtb_db *db, const dtb_position *p, const dtb_pdn_move *m,
                           dtb_notation n)
{
    char fen[DTB_ANSWER_FEN_SIZE];
    dtb_position after;
    if (dtb_position_after(db, p, m, &after) == DTB_OK &&
        dtb_position_to_fen_in(db, &after, n, fen, sizeof fen) == DTB_OK) {
        dtb_text_printf(t, ",\"fen\":");
        dtb_text_json_string(t, fen);
    }
}

/* [move texts] */
static void line_json(dtb_text *t, const dtb_pdn_move *line, int n)
{
    dtb_text_printf(t, "[");
    for (int i = 0; i < n; i++) {
        dtb_text_printf(t, "%s", i ? "," : "");
        dtb_text_json_string(t, line[i].text);
    }
    dtb_text_printf(t, "]");
}

/* A rule distance: null where dtb.h says -1. */
static void plies_json(dtb_text *t, int plies)
{
    if (plies < 0)
        dtb_text_printf(t, "null");
    else
        dtb_text_printf(t, "%d", plies);
}

/* ,"rules":{...} (answer.h) */
static void rules_json(dtb_text *t, dtb_db *db, const dtb_position *p, const dtb_answer *a)
{
    const dtb_rule_answer *r = &a->rules;
    dtb_text_printf(t, ",\"rules\":{\"name\":");
    dtb_text_json_string(t, r->rules);
    dtb_text_printf(t, ",\"rule\":");
    if (r->rule[0])
        dtb_text_json_string(t, r->rule);
    else
        dtb_text_printf(t, "null");
    dtb_text_printf(t, ",\"category\":\"%s\",\"wdl\":\"%s\",\"unlimited\":\"%s\",\"plies\":",
                    dtb_rule_category_name(r->category), dtb_answer_wdl_name(r->wdl),
                    dtb_answer_wdl_name(r->unlimited));
    plies_json(t, r->plies);
    dtb_text_printf(t, ",\"limit\":");
    if (r->limit > 0)
        dtb_text_printf(t, "%d", r->limit);
    else
        dtb_text_printf(t, "null");
    dtb_text_printf(t, ",\"clock\":%d,\"diagonal\":%d,\"moves\":[", r->clock,
                    a->counters.diagonal);
    for (int i = 0; i < a->nrule_moves; i++) {
        const dtb_rule_move *m = &a->rule_moves[i];
        dtb_text_printf(t, "%s{\"move\":", i ? "," : "");
        dtb_text_json_string(t, m->move.text);
        dtb_text_printf(t, ",\"category\":\"%s\",\"plies\":", dtb_rule_category_name(m->category));
        plies_json(t, m->plies);
        dtb_text_printf(t, ",\"clock\":%d,\"diagonal\":%d", m->clock,
                        a->rule_move_diagonal[i]);
        fen_after_json(t, db, p, &m->move, a->notation);
        dtb_text_printf(t, "}");
    }
    dtb_text_printf(t, "],\"line\":");
    line_json(t, a->rule_line, a->nrule_line);
    dtb_text_printf(t, "}");
}

void dtb_answer_json(dtb_text *t, dtb_db *db, const dtb_position *p, const dtb_answer *a)
{
    char fen[DTB_ANSWER_FEN_SIZE];
    dtb_answer_fen(db, p, a->notation, "", fen, sizeof fen);
    dtb_text_printf(t, "{\"fen\":");
    dtb_text_json_string(t, fen);
    dtb_text_printf(t, ",\"variant\":\"%s\",\"side\":\"%s\",\"wdl\":\"%s\",\"dtw\":",
                    dtb_db_variant(db), p->side == DTB_SIDE_WHITE ? "white" : "black",
                    dtb_answer_wdl_name(a->wdl));
    if (a->have_dtw)
        dtw_json(t, a->wdl, a->dtw);
    else
        dtb_text_printf(t, "null");
    dtb_text_printf(t, ",\"mtc\":");
    if (a->have_mtc && a->wdl != DTB_DRAW)
        dtb_text_printf(t, "%d", a->mtc);
    else
        dtb_text_printf(t, "null");
    {
        dtb_text_printf(t, ",\"moves\":[");
        for (int i = 0; i < a->nmoves; i++) {
            const dtb_ranked_move *m = &a->moves[i];
            dtb_text_printf(t, "%s{\"move\":", i ? "," : "");
            dtb_text_json_string(t, m->move.text);
            dtb_text_printf(t, ",\"wdl\":\"%s\",\"dtw\":", dtb_answer_wdl_name(m->wdl));
            dtw_json(t, m->wdl, m->dtw);
            fen_after_json(t, db, p, &m->move, a->notation);
            dtb_text_printf(t, "}");
        }
        dtb_text_printf(t, "],\"line\":");
        line_json(t, a->line, a->nline);
    }
    if (a->have_rules)
        rules_json(t, db, p, a);
    dtb_text_printf(t, "}");
}

void dtb_answer_error_json(dtb_text *t, const char *fen, const char *message)
{
    dtb_text_printf(t, "{\"fen\":");
    dtb_text_json_string(t, fen);
    dtb_text_printf(t, ",\"error\":");
    dtb_text_json_string(t, message);
    dtb_text_printf(t, "}");
}
