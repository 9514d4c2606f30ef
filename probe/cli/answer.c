/* One position's full answer and its JSON (answer.h). */
#include "answer.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"

_Static_assert(DTB_ANSWER_MAX_MOVES == DTB_MAX_MOVES, "room for every legal move");

const char *dtb_answer_wdl_name(dtb_wdl w)
{
    return w == DTB_WIN ? "win" : w == DTB_LOSS ? "loss" : "draw";
}

/* The texts of the ranked moves and of the line, in a->notation (libdtb wrote them in the
 * db's): the line's moves are written from the positions along it. */
static dtb_status retext(dtb_db *db, const dtb_position *p, dtb_answer *a)
{
    dtb_status s = DTB_OK;
    for (int i = 0; i < a->nmoves && s == DTB_OK; i++)
        s = dtb_move_to_text(db, p, &a->moves[i].move, a->notation, a->moves[i].move.text,
                             sizeof a->moves[i].move.text);
    dtb_position q = *p;
    for (int i = 0; i < a->nline && s == DTB_OK; i++) {
        dtb_pdn_move *m = &a->line[i];
        s = dtb_move_to_text(db, &q, m, a->notation, m->text, sizeof m->text);
        dtb_position next;
        if (s == DTB_OK && i + 1 < a->nline && (s = dtb_position_after(db, &q, m, &next)) == DTB_OK)
            q = next;
    }
    return s;
}

void dtb_answer_probe(dtb_db *db, const dtb_position *p, dtb_notation n, dtb_answer *a)
{
    a->nmoves = a->nline = 0;
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
            dtb_position after;
            if (dtb_position_after(db, p, &m->move, &after) == DTB_OK &&
                dtb_position_to_fen_in(db, &after, a->notation, fen, sizeof fen) == DTB_OK) {
                dtb_text_printf(t, ",\"fen\":");
                dtb_text_json_string(t, fen);
            }
            dtb_text_printf(t, "}");
        }
        dtb_text_printf(t, "],\"line\":[");
        for (int i = 0; i < a->nline; i++) {
            dtb_text_printf(t, "%s", i ? "," : "");
            dtb_text_json_string(t, a->line[i].text);
        }
        dtb_text_printf(t, "]");
    }
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
