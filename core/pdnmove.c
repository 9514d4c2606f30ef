/* PDN move text.
 *
 * Writing needs the legal move list only to decide whether "from x to" is enough; the landing
 * squares of the long form come from dtb_capture_route.
 *
 * Reading parses the squares, then matches them against dtb_generate's list. A landing list
 * (three or more squares) is not matched against one route found by the generator -- a move can
 * have many routes and the text may name any of them -- but replayed on the board: each leg must
 * run along a diagonal and jump exactly one opponent piece not yet taken, the way the mover may
 * jump (men and short kings one square beyond the piece, men forward only where the variant
 * says so, a man crowned in passing flying on). The replay yields the captured set and whether
 * the man is crowned, which name at most one legal move.
 */
#include "pdnmove.h"

#include "square_name.h"
#include "textbuf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* More squares than any capture has landings (30 pieces) plus its start. */
#define MAX_TEXT_SQUARES 40
/* A square number larger than any board: keeps long digit strings from overflowing. */
#define NUMBER_CAP 1000000

static bool same_move(const dtb_move *a, const dtb_move *b)
{
    return a->from == b->from && a->to == b->to && a->captured == b->captured &&
           a->promotes == b->promotes;
}

/* How squares and captures are written: numbers and 'x' (PDN), or names and ':' (the
 * algebraic notation of russian and brazilian players, "c3:e5"). */
typedef struct style {
    const dtb_board *b;
    dtb_notation notation;
} style;

static void put_square(dtb_textbuf *w, const style *st, const char *sep, int index)
{
    char t[16], name[DTB_SQUARE_NAME_MAX];
    if (st->notation == DTB_NOTATION_ALGEBRAIC) {
        dtb_square_name(st->b, index, name);
        snprintf(t, sizeof t, "%s%s", strcmp(sep, "x") == 0 ? ":" : sep, name);
    } else {
        snprintf(t, sizeof t, "%s%d", sep, index + 1);
    }
    dtb_textbuf_put(w, t);
}

/* Writes m as "from-to", "fromxto" or, when long, "fromxl1x...xto" (every landing square). */
static dtb_status write_move(const dtb_board *b, const dtb_pos *p, const dtb_move *m, bool long_form,
                             const style *st, dtb_textbuf *w)
{
    put_square(w, st, "", m->from);
    if (m->ncaptured == 0 || !long_form) {
        put_square(w, st, m->ncaptured == 0 ? "-" : "x", m->to);
        return DTB_OK;
    }
    uint8_t path[DTB_MAX_SQUARES];
    const int n = dtb_capture_route(b, p, m, path, DTB_MAX_SQUARES);
    if (n < 1 || n > DTB_MAX_SQUARES)
        return DTB_E_INVALID;
    for (int i = 0; i < n; i++)
        put_square(w, st, "x", path[i]);
    return DTB_OK;
}

/* True when another legal capture shares m's start and end, so "fromxto" would not name m. */
static bool needs_landings(const dtb_movelist *list, const dtb_move *m)
{
    for (int i = 0; i < list->count; i++) {
        const dtb_move *o = &list->moves[i];
        if (o->from == m->from && o->to == m->to && !same_move(o, m))
            return true;
    }
    return false;
}

dtb_status dtb_move_write(const dtb_board *b, const dtb_pos *p, const dtb_move *m, char *buf,
                          size_t size)
{
    return dtb_move_write_in(b, p, m, DTB_NOTATION_NUMERIC, buf, size);
}

dtb_status dtb_move_write_in(const dtb_board *b, const dtb_pos *p, const dtb_move *m,
                             dtb_notation notation, char *buf, size_t size)
{
    const style st = {b, notation};
    dtb_textbuf w = dtb_textbuf_make(buf, size);
    dtb_movelist list;
    if (dtb_generate(b, p, &list) != DTB_OK)
        return DTB_E_OVERFLOW;
    bool legal = false;
    for (int i = 0; i < list.count && !legal; i++)
        legal = same_move(&list.moves[i], m);
    if (!legal)
        return DTB_E_INVALID;
    /* Players who write squares by name write a capture's every landing (c5:e7:g5); in numbers
     * "fromxto" is the rule and the landings only tell two captures apart. */
    const bool long_form = notation == DTB_NOTATION_ALGEBRAIC || needs_landings(&list, m);
    const dtb_status rc = write_move(b, p, m, long_form, &st, &w);
    if (rc != DTB_OK)
        return rc;
    return w.overflow ? DTB_E_OVERFLOW : DTB_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_capture_sep(char c) { return c == 'x' || c == 'X' || c == ':'; }

/* Squares of the text (0-based indexes) and whether it is a capture. */
typedef struct parsed {
    int sq[MAX_TEXT_SQUARES];
    int n;
    bool capture;
    bool named; /* some square was written as a name: messages echo names */
} parsed;

static void quote_char(char c, char out[16])
{
    const unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f && c != '\'')
        snprintf(out, 16, "'%c'", c);
    else
        snprintf(out, 16, "byte 0x%02x", u);
}

/* Grammar: square (sep square)+ with sep '-' for a quiet move (exactly two squares) or 'x', 'X',
 * ':' for a capture (any mix of the three); white space allowed around squares. */
static dtb_status parse(const dtb_board *b, const char *text, parsed *out, dtb_error *e)
{
    char q[16];
    const char *s = text;
    bool quiet = false;
    out->n = 0;
    out->capture = false;
    out->named = false;
    while (is_space(*s))
        s++;
    if (*s == '\0')
        return dtb_error_set(e, DTB_E_INVALID, "empty move text");
    for (;;) {
        if (*s >= 'a' && *s <= 'z' && is_digit(s[1])) { /* an algebraic square: "c3" */
            int sq, len;
            const dtb_square_kind kind = dtb_square_parse_name(b, s, &sq, &len);
            const int shown = len > 8 ? 8 : len;
            if (!b->variant->algebraic)
                return dtb_error_set(e, DTB_E_INVALID,
                                     "move text: '%.*s': %s squares are numbers 1-%d, not names",
                                     shown, s, b->variant->name, b->squares);
            if (kind != DTB_SQUARE_PLAYABLE)
                return dtb_error_set(e, DTB_E_INVALID, "move text: '%.*s' is %s", shown, s,
                                     kind == DTB_SQUARE_LIGHT ? "a light square"
                                                              : "not a square of the board");
            if (out->n == MAX_TEXT_SQUARES)
                return dtb_error_set(e, DTB_E_INVALID, "move text names more than %d squares",
                                     MAX_TEXT_SQUARES);
            out->sq[out->n++] = sq;
            out->named = true;
            s += len;
            goto separator;
        }
        if (!is_digit(*s)) {
            if (*s == '\0')
                return dtb_error_set(e, DTB_E_INVALID, "move \"%.40s\" ends without a square",
                                     text);
            quote_char(*s, q);
            return dtb_error_set(e, DTB_E_INVALID, "move text: stray character %s at column %d",
                                 q, (int)(s - text) + 1);
        }
        const char *at = s;
        int v = 0;
        while (is_digit(*s)) {
            if (v < NUMBER_CAP)
                v = v * 10 + (*s - '0');
            s++;
        }
        if (v < 1 || v > b->squares) {
            const int len = (int)(s - at);
            return dtb_error_set(e, DTB_E_INVALID, "move text: square %.*s%s is out of range 1-%d",
                                 len > 20 ? 20 : len, at, len > 20 ? "..." : "", b->squares);
        }
        if (out->n == MAX_TEXT_SQUARES)
            return dtb_error_set(e, DTB_E_INVALID, "move text names more than %d squares",
                                 MAX_TEXT_SQUARES);
        out->sq[out->n++] = v - 1;
    separator:
        while (is_space(*s))
            s++;
        if (*s == '\0')
            break;
        if (*s == '-')
            quiet = true;
        else if (is_capture_sep(*s))
            out->capture = true;
        else {
            quote_char(*s, q);
            return dtb_error_set(e, DTB_E_INVALID, "move text: stray character %s at column %d",
                                 q, (int)(s - text) + 1);
        }
        if (quiet && out->capture)
            return dtb_error_set(e, DTB_E_INVALID,
                                 "move \"%.40s\" mixes '-' (a move) and 'x' (a capture)", text);
        s++;
        while (is_space(*s))
            s++;
    }
    if (out->n < 2)
        return dtb_error_set(e, DTB_E_INVALID, "move \"%.40s\" needs a start and an end square",
                             text);
    if (quiet && out->n > 2)
        return dtb_error_set(e, DTB_E_INVALID,
                             "move \"%.40s\": only captures list landing squares (use 'x')", text);
    return DTB_OK;
}

/* Direction and distance from a to c along a diagonal; false when they share none. */
static bool diagonal(const dtb_board *b, int a, int c, int *dir, int *dist)
{
    for (int d = 0; d < DTB_DIRS; d++) {
        int k = 0;
        for (int t = b->next[a][d]; t >= 0; t = b->next[t][d]) {
            k++;
            if (t == c) {
                *dir = d;
                *dist = k;
                return true;
            }
        }
    }
    return false;
}

/* Replays the landing list of t on p (see the top of the file). On success *captured and
 * *promotes describe the move the route makes. */
static bool replay(const dtb_board *b, const dtb_pos *p, const parsed *t, dtb_bb *captured,
                   bool *promotes)
{
    const dtb_variant *v = b->variant;
    const dtb_color side = p->side;
    const int from = t->sq[0];
    if (!dtb_bb_has(dtb_pos_pieces(p, side), from))
        return false;
    const dtb_bb prey = dtb_pos_pieces(p, (dtb_color)(side ^ 1));
    const dtb_bb occupied = dtb_pos_occupied(p) & ~dtb_bb_bit(from);
    bool king = dtb_bb_has(p->kings[side], from), crowned = false;
    dtb_bb taken = 0;
    for (int i = 1; i < t->n; i++) {
        const int a = t->sq[i - 1], c = t->sq[i];
        int d, dist;
        if (!diagonal(b, a, c, &d, &dist) || dist < 2)
            return false;
        if (!king || !v->kings_fly) {
            if (dist != 2)
                return false;
            if (!king && !v->men_capture_backward && (d >> 1) != (int)side)
                return false;
        }
        int jumped = -1;
        for (int s = b->next[a][d]; s != c; s = b->next[s][d]) {
            if (!dtb_bb_has(occupied, s))
                continue;
            if (jumped >= 0 || !dtb_bb_has(prey, s) || dtb_bb_has(taken, s))
                return false;
            jumped = s;
        }
        if (jumped < 0 || dtb_bb_has(occupied, c))
            return false;
        taken |= dtb_bb_bit(jumped);
        if (!king && dtb_bb_has(b->promotion[side], c)) {
            if (v->promote_in_passing)
                king = crowned = true;
            else if (i + 1 < t->n && !v->men_capture_backward)
                return false; /* reaching the far row ends a forward-only man's move */
        }
    }
    *captured = taken;
    *promotes = crowned || (!dtb_bb_has(p->kings[side], from) &&
                            dtb_bb_has(b->promotion[side], t->sq[t->n - 1]));
    return true;
}

/* Writes the text of t's squares back normalised ("28x19x8"), in the notation it was typed in. */
static void echo(const dtb_board *b, const parsed *t, char *out, size_t size)
{
    const style st = {b, t->named ? DTB_NOTATION_ALGEBRAIC : DTB_NOTATION_NUMERIC};
    dtb_textbuf w = dtb_textbuf_make(out, size);
    for (int i = 0; i < t->n; i++)
        put_square(&w, &st, i == 0 ? "" : t->capture ? "x" : "-", t->sq[i]);
}

dtb_status dtb_move_read(const dtb_board *b, const dtb_pos *p, const char *text, dtb_move *m,
                         dtb_error *e)
{
    if (text == NULL)
        return dtb_error_set(e, DTB_E_INVALID, "empty move text");
    parsed t;
    dtb_status st = parse(b, text, &t, e);
    if (st != DTB_OK)
        return st;
    dtb_movelist list;
    if (dtb_generate(b, p, &list) != DTB_OK)
        return dtb_error_set(e, DTB_E_OVERFLOW, "too many legal moves to list");
    char said[DTB_MOVE_TEXT_MAX];
    echo(b, &t, said, sizeof said);
    const int from = t.sq[0], to = t.sq[t.n - 1];
    const bool any_capture = list.count > 0 && list.moves[0].ncaptured > 0;

    if (!t.capture) {
        for (int i = 0; i < list.count; i++)
            if (list.moves[i].ncaptured == 0 && list.moves[i].from == from &&
                list.moves[i].to == to) {
                *m = list.moves[i];
                return DTB_OK;
            }
        return dtb_error_set(e, DTB_E_INVALID, "no legal move %s%s", said,
                             any_capture ? " (a capture is compulsory)" : "");
    }

    dtb_bb captured = 0;
    bool promotes = false;
    const bool full = t.n > 2;
    if (full && !replay(b, p, &t, &captured, &promotes))
        return dtb_error_set(e, DTB_E_INVALID, "no legal move %s (no such capture route)", said);
    int found = 0, first = -1;
    for (int i = 0; i < list.count; i++) {
        const dtb_move *c = &list.moves[i];
        if (c->ncaptured == 0 || c->from != from || c->to != to)
            continue;
        if (full && (c->captured != captured || c->promotes != promotes))
            continue;
        if (found++ == 0)
            first = i;
    }
    if (found == 1) {
        *m = list.moves[first];
        return DTB_OK;
    }
    if (found == 0)
        return dtb_error_set(e, DTB_E_INVALID, "no legal move %s%s", said,
                             any_capture ? "" : " (there is no capture)");

    /* Ambiguous (only possible for "fromxto"): list every candidate by its landing squares. */
    char msg[sizeof e->msg];
    dtb_textbuf w = dtb_textbuf_make(msg, sizeof msg);
    dtb_textbuf_put(&w, "ambiguous move ");
    dtb_textbuf_put(&w, said);
    dtb_textbuf_put(&w, ": ");
    for (int i = first, k = 0; i < list.count; i++) {
        const dtb_move *c = &list.moves[i];
        if (c->ncaptured == 0 || c->from != from || c->to != to)
            continue;
        char one[DTB_MOVE_TEXT_MAX];
        dtb_textbuf w1 = dtb_textbuf_make(one, sizeof one);
        const style st = {b, t.named ? DTB_NOTATION_ALGEBRAIC : DTB_NOTATION_NUMERIC};
        write_move(b, p, c, true, &st, &w1);
        dtb_textbuf_put(&w, k++ == 0 ? "" : k == found ? " or " : ", ");
        dtb_textbuf_put(&w, one);
    }
    if (w.overflow && sizeof msg > 4)
        memcpy(msg + sizeof msg - 4, "...", 4);
    return dtb_error_set(e, DTB_E_INVALID, "%s", msg);
}
