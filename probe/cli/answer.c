/* One position's full answer and its JSON (answer.h). */
#include "answer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"
#include "square_name.h"

_Static_assert(DTB_ANSWER_MAX_MOVES == DTB_MAX_MOVES, "room for every legal move");

const char *dtb_answer_wdl_name(dtb_wdl w)
{
    return w == DTB_WIN ? "win" : w == DTB_LOSS ? "loss" : "draw";
}

void dtb_answer_probe(dtb_db *db, const dtb_position *p, dtb_answer *a)
{
    a->nmoves = a->nline = 0;
    a->have_dtw = true;
    a->error[0] = 0;
    a->status = dtb_probe_dtw(db, p, 0, &a->wdl, &a->dtw);
    if (a->status == DTB_OK)
        a->status = dtb_probe_moves(db, p, 0, a->moves, DTB_ANSWER_MAX_MOVES, &a->nmoves);
    if (a->status == DTB_OK)
        a->status = dtb_probe_line(db, p, 0, a->line, DTB_MAX_LINE, &a->nline);
    if (a->status == DTB_E_NOTFOUND) {
        a->have_dtw = false;
        a->nmoves = a->nline = 0;
        a->status = dtb_probe_wdl(db, p, 0, &a->wdl);
        a->dtw = 0;
    }
    if (a->status != DTB_OK)
        dtb_last_error(db, a->error, sizeof a->error);
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
    if (wdl == DTB_DRAW)
        dtb_text_printf(t, "null");
    else
        dtb_text_printf(t, "%d", dtw);
}

void dtb_answer_named(const dtb_board *b, const char *text, char *out, size_t size)
{
    size_t n = 0;
    for (const char *s = text; *s && n + DTB_SQUARE_NAME_MAX < size;) {
        if (*s >= '0' && *s <= '9') {
            int v = 0;
            for (; *s >= '0' && *s <= '9'; s++)
                if (v < 1000) /* longer numbers are no square: kept from overflowing */
                    v = v * 10 + (*s - '0');
            if (v >= 1 && v <= b->squares) {
                char name[DTB_SQUARE_NAME_MAX];
                dtb_square_name(b, v - 1, name);
                n += (size_t)snprintf(out + n, size - n, "%s", name);
            } else {
                n += (size_t)snprintf(out + n, size - n, "?");
            }
        } else {
            out[n++] = *s == 'x' ? ':' : *s;
            s++;
        }
    }
    out[n < size ? n : size - 1] = 0;
}

/* s as a JSON string, in names when names is not NULL. */
static void json_text(dtb_text *t, const char *s, const dtb_board *names)
{
    if (!names) {
        dtb_text_json_string(t, s);
        return;
    }
    char named[1024];
    dtb_answer_named(names, s, named, sizeof named);
    dtb_text_json_string(t, named);
}

void dtb_answer_json(dtb_text *t, dtb_db *db, const char *fen, const dtb_position *p,
                     const dtb_answer *a, const dtb_board *names)
{
    dtb_text_printf(t, "{\"fen\":");
    json_text(t, fen, names);
    dtb_text_printf(t, ",\"variant\":\"%s\",\"side\":\"%s\",\"wdl\":\"%s\",\"dtw\":",
                    dtb_db_variant(db), p->side == DTB_SIDE_WHITE ? "white" : "black",
                    dtb_answer_wdl_name(a->wdl));
    if (a->have_dtw)
        dtw_json(t, a->wdl, a->dtw);
    else
        dtb_text_printf(t, "null");
    if (a->have_dtw) {
        dtb_text_printf(t, ",\"moves\":[");
        for (int i = 0; i < a->nmoves; i++) {
            const dtb_ranked_move *m = &a->moves[i];
            dtb_text_printf(t, "%s{\"move\":", i ? "," : "");
            json_text(t, m->move.text, names);
            dtb_text_printf(t, ",\"wdl\":\"%s\",\"dtw\":", dtb_answer_wdl_name(m->wdl));
            dtw_json(t, m->wdl, m->dtw);
            dtb_position after;
            char after_fen[512];
            if (dtb_position_after(db, p, &m->move, &after) == DTB_OK &&
                dtb_position_to_fen(db, &after, after_fen, sizeof after_fen) == DTB_OK) {
                dtb_text_printf(t, ",\"fen\":");
                json_text(t, after_fen, names);
            }
            dtb_text_printf(t, "}");
        }
        dtb_text_printf(t, "],\"line\":[");
        for (int i = 0; i < a->nline; i++) {
            dtb_text_printf(t, "%s", i ? "," : "");
            json_text(t, a->line[i].text, names);
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
