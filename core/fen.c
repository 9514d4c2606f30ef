/* PDN FEN reading and writing.
 *
 * The reader is a hand-written scanner over a NUL-terminated string: every step looks at the
 * current character before moving past it, so it never reads beyond the NUL, and numbers
 * saturate instead of overflowing, so any input (fuzzed, huge, binary) ends in DTB_OK or a
 * message. Duplicate squares are caught while parsing (to name the square and say "listed
 * twice"); the rules a finished position must obey (promotion row, piece count) are left to
 * dtb_pos_validate so there is one definition of a legal position.
 */
#include "fen.h"

#include "square_name.h"

#include "textbuf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A square number larger than any board, kept while reading digits so long numbers cannot
 * overflow; the text itself is quoted in messages. */
#define NUMBER_CAP 1000000

static const char *const colour_names[2] = {"white", "black"};

typedef struct reader {
    const char *text; /* start of the input, for column numbers */
    const char *s;    /* cursor */
    const dtb_board *b;
    dtb_error *e;
    dtb_pos pos;
    dtb_bb listed; /* every square named so far, either colour */
} reader;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_letter(char c) { return is_upper(c) || (c >= 'a' && c <= 'z'); }

static void skip_space(reader *r)
{
    while (is_space(*r->s))
        r->s++;
}

static int column(const reader *r, const char *at) { return (int)(at - r->text) + 1; }

/* Quotes one character for a message: 'x' when printable, else its byte value. */
static void quote_char(char c, char out[16])
{
    const unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f && c != '\'')
        snprintf(out, 16, "'%c'", c);
    else
        snprintf(out, 16, "byte 0x%02x", u);
}

static dtb_status stray(reader *r, const char *at)
{
    char q[16];
    if (*at == '\0')
        return dtb_error_set(r->e, DTB_E_INVALID, "FEN ends too early at column %d",
                             column(r, at));
    quote_char(*at, q);
    return dtb_error_set(r->e, DTB_E_INVALID, "stray character %s at column %d", q,
                         column(r, at));
}

/* A number as typed: its value (capped at NUMBER_CAP) and where its digits are. */
typedef struct number {
    int value;
    const char *at;
    int len;
} number;

static void read_number(reader *r, number *n)
{
    n->value = 0;
    n->at = r->s;
    while (is_digit(*r->s)) {
        if (n->value < NUMBER_CAP)
            n->value = n->value * 10 + (*r->s - '0');
        r->s++;
    }
    n->len = (int)(r->s - n->at);
}

static dtb_status out_of_range(reader *r, const number *n)
{
    /* Quote at most 20 digits so a megabyte of digits still gives a one-line message. */
    return dtb_error_set(r->e, DTB_E_INVALID, "square %.*s%s at column %d is out of range 1-%d",
                         n->len > 20 ? 20 : n->len, n->at, n->len > 20 ? "..." : "",
                         column(r, n->at), r->b->squares);
}

/* Puts a piece of colour c on square index sq, refusing a square named twice. */
static dtb_status place(reader *r, dtb_color c, bool king, int sq, const char *name)
{
    const dtb_bb bit = dtb_bb_bit(sq);
    if (r->listed & bit)
        return dtb_error_set(r->e, DTB_E_INVALID, "square %s listed twice", name);
    r->listed |= bit;
    if (king)
        r->pos.kings[c] |= bit;
    else
        r->pos.men[c] |= bit;
    return DTB_OK;
}

/* An algebraic square ("c3", after an optional K), in the variants whose players write them;
 * anywhere else, or off the board, or light, an error naming the token. */
static dtb_status read_named(reader *r, dtb_color c, bool king)
{
    int sq, len;
    const char *at = r->s;
    const dtb_square_kind kind = dtb_square_parse_name(r->b, at, &sq, &len);
    const int shown = len > 8 ? 8 : len;
    r->s += len;
    if (!r->b->variant->algebraic)
        return dtb_error_set(r->e, DTB_E_INVALID,
                             "'%.*s' at column %d: %s squares are numbers 1-%d, not names", shown,
                             at, column(r, at), r->b->variant->name, r->b->squares);
    if (kind == DTB_SQUARE_OFF_BOARD)
        return dtb_error_set(r->e, DTB_E_INVALID, "'%.*s' at column %d is not a square of the %dx%d board",
                             shown, at, column(r, at), r->b->size, r->b->size);
    if (kind == DTB_SQUARE_LIGHT)
        return dtb_error_set(r->e, DTB_E_INVALID,
                             "'%.*s' at column %d is a light square (pieces stand on dark ones)",
                             shown, at, column(r, at));
    skip_space(r);
    if (*r->s == '-')
        return dtb_error_set(r->e, DTB_E_INVALID,
                             "range at column %d: ranges are written with square numbers",
                             column(r, at));
    char name[DTB_SQUARE_NAME_MAX];
    dtb_square_name(r->b, sq, name);
    return place(r, c, king, sq, name);
}

/* One item of a colour section: "31", "K31", "31-35" or "K31-35"; in russian and brazilian also
 * "c3" or "Kc3". */
static dtb_status read_item(reader *r, dtb_color c)
{
    bool king = false;
    if (*r->s == 'K') {
        king = true;
        r->s++;
        skip_space(r);
    }
    if (*r->s >= 'a' && *r->s <= 'z' && is_digit(r->s[1]))
        return read_named(r, c, king);
    if (!is_digit(*r->s)) {
        if (*r->s == ',' || *r->s == ':' || *r->s == '.' || *r->s == '\0')
            return dtb_error_set(r->e, DTB_E_INVALID, "missing square at column %d",
                                 column(r, r->s));
        return stray(r, r->s);
    }
    number lo, hi;
    read_number(r, &lo);
    hi = lo;
    const char *after = r->s;
    skip_space(r);
    if (*r->s == '-') {
        r->s++;
        skip_space(r);
        if (!is_digit(*r->s)) {
            if (*r->s == ',' || *r->s == ':' || *r->s == '.' || *r->s == '\0')
                return dtb_error_set(r->e, DTB_E_INVALID, "range at column %d has no end",
                                     column(r, lo.at));
            return stray(r, r->s);
        }
        read_number(r, &hi);
    } else {
        r->s = after;
    }
    if (lo.value < 1 || lo.value > r->b->squares)
        return out_of_range(r, &lo);
    if (hi.value < 1 || hi.value > r->b->squares)
        return out_of_range(r, &hi);
    if (hi.value < lo.value)
        return dtb_error_set(r->e, DTB_E_INVALID, "empty range %d-%d at column %d", lo.value,
                             hi.value, column(r, lo.at));
    for (int sq = lo.value; sq <= hi.value; sq++) {
        char name[16];
        snprintf(name, sizeof name, "%d", sq);
        const dtb_status st = place(r, c, king, sq - 1, name);
        if (st != DTB_OK)
            return st;
    }
    return DTB_OK;
}

/* A colour section after its letter: nothing (no pieces) or items separated by commas. */
static dtb_status read_section(reader *r, dtb_color c)
{
    skip_space(r);
    if (*r->s == ':' || *r->s == '.' || *r->s == '\0')
        return DTB_OK;
    for (;;) {
        const dtb_status st = read_item(r, c);
        if (st != DTB_OK)
            return st;
        skip_space(r);
        if (*r->s != ',')
            return DTB_OK;
        r->s++;
        skip_space(r);
    }
}

/* True at a '.' followed by nothing but white space: the optional trailing dot. */
static bool at_final_dot(const char *s)
{
    if (*s != '.')
        return false;
    for (s++; is_space(*s); s++)
        ;
    return *s == '\0';
}

/* An unknown field's value runs to the next ':' or the trailing dot. It looks like a piece list
 * (and so like a colour section with a wrong letter) when it has a comma, a range dash or a K
 * before a square. */
static bool skip_field_value(reader *r)
{
    bool pieces = false;
    for (; *r->s != '\0' && *r->s != ':' && !at_final_dot(r->s); r->s++) {
        if (*r->s == ',' || *r->s == '-')
            pieces = true;
        if (*r->s == 'K') {
            const char *t = r->s + 1;
            while (is_space(*t))
                t++;
            if (is_digit(*t))
                pieces = true;
        }
    }
    return pieces;
}

/* One field after a ':' (the cursor is on its first character). A colour may be left out
 * (it then has no pieces: "W:W28" is common in published positions) but not given twice. */
static dtb_status read_field(reader *r, bool seen[2])
{
    char q[16];
    const char *at = r->s;
    const char c = *at;
    if (c == 'W' || c == 'B') {
        const dtb_color col = c == 'W' ? DTB_WHITE : DTB_BLACK;
        if (seen[col])
            return dtb_error_set(r->e, DTB_E_INVALID, "second %s section at column %d",
                                 colour_names[col], column(r, at));
        seen[col] = true;
        r->s++;
        return read_section(r, col);
    }
    if (c == 'K' || is_digit(c))
        return dtb_error_set(r->e, DTB_E_INVALID,
                             "section at column %d has no colour letter (W or B)", column(r, at));
    if (c == 'w' || c == 'b') {
        quote_char(c, q);
        return dtb_error_set(r->e, DTB_E_INVALID,
                             "unknown colour letter %s at column %d (colours are W and B)", q,
                             column(r, at));
    }
    if (is_letter(c)) {
        r->s++;
        if (skip_field_value(r)) {
            quote_char(c, q);
            return dtb_error_set(r->e, DTB_E_INVALID,
                                 "unknown colour letter %s at column %d (colours are W and B)",
                                 q, column(r, at));
        }
        return DTB_OK;
    }
    if (c == ':' || c == '.' || c == '\0')
        return dtb_error_set(r->e, DTB_E_INVALID, "empty field at column %d", column(r, at));
    return stray(r, at);
}

dtb_status dtb_fen_read(const dtb_board *b, const char *text, dtb_pos *p, dtb_error *e)
{
    if (text == NULL)
        return dtb_error_set(e, DTB_E_INVALID, "empty FEN");
    reader r = {.text = text, .s = text, .b = b, .e = e};
    skip_space(&r);
    if (*r.s == '\0')
        return dtb_error_set(e, DTB_E_INVALID, "empty FEN");
    char q[16];
    if (*r.s == 'W')
        r.pos.side = DTB_WHITE;
    else if (*r.s == 'B')
        r.pos.side = DTB_BLACK;
    else {
        quote_char(*r.s, q);
        return dtb_error_set(e, DTB_E_INVALID, "bad side to move %s at column %d (expected W or B)",
                             q, column(&r, r.s));
    }
    r.s++;
    bool seen[2] = {false, false};
    for (;;) {
        skip_space(&r);
        if (*r.s == '\0')
            break;
        if (at_final_dot(r.s)) {
            r.s++;
            break;
        }
        if (*r.s != ':')
            return stray(&r, r.s);
        r.s++;
        skip_space(&r);
        const dtb_status st = read_field(&r, seen);
        if (st != DTB_OK)
            return st;
    }
    const dtb_status st = dtb_pos_validate(b, &r.pos, e);
    if (st != DTB_OK)
        return st;
    *p = r.pos;
    return DTB_OK;
}

dtb_status dtb_fen_read_clock(const char *text, int *clock, bool *present, dtb_error *e)
{
    *clock = 0;
    *present = false;
    if (text == NULL)
        return DTB_OK;
    reader r = {.text = text, .s = text, .e = e};
    /* Fields start after each ':' (no field value holds one); the first is the side letter. */
    for (const char *c = strchr(text, ':'); c; c = strchr(c + 1, ':')) {
        r.s = c + 1;
        skip_space(&r);
        if (*r.s != 'H')
            continue;
        const char *at = r.s++;
        if (*present)
            return dtb_error_set(e, DTB_E_INVALID, "second H field (the clock) at column %d",
                                 column(&r, at));
        skip_space(&r);
        number n;
        read_number(&r, &n);
        skip_space(&r);
        const bool ends = *r.s == ':' || *r.s == '\0' || at_final_dot(r.s);
        if (n.len == 0 || !ends)
            return dtb_error_set(e, DTB_E_INVALID,
                                 "H field at column %d is not a clock (H and a count of plies: "
                                 "H0, H12)", column(&r, at));
        if (n.value > NUMBER_CAP)
            return dtb_error_set(e, DTB_E_INVALID, "H field at column %d: clock %.*s%s is beyond "
                                 "%d plies", column(&r, at), n.len > 20 ? 20 : n.len, n.at,
                                 n.len > 20 ? "..." : "", NUMBER_CAP);
        *clock = n.value;
        *present = true;
    }
    return DTB_OK;
}

dtb_notation dtb_notation_of(const dtb_board *b)
{
    return b->variant->algebraic ? DTB_NOTATION_ALGEBRAIC : DTB_NOTATION_NUMERIC;
}

dtb_status dtb_fen_write(const dtb_board *b, const dtb_pos *p, char *buf, size_t size)
{
    return dtb_fen_write_in(b, p, DTB_NOTATION_NUMERIC, buf, size);
}

dtb_status dtb_fen_write_in(const dtb_board *b, const dtb_pos *p, dtb_notation n, char *buf,
                            size_t size)
{
    dtb_textbuf w = dtb_textbuf_make(buf, size);
    dtb_textbuf_put(&w, p->side == DTB_WHITE ? "W" : "B");
    for (int c = 0; c < 2; c++) {
        dtb_textbuf_put(&w, c == DTB_WHITE ? ":W" : ":B");
        bool first = true;
        for (int i = 0; i < b->squares; i++) {
            const bool man = dtb_bb_has(p->men[c], i), king = dtb_bb_has(p->kings[c], i);
            if (!man && !king)
                continue;
            char item[24], square[16];
            if (n == DTB_NOTATION_ALGEBRAIC)
                dtb_square_name(b, i, square);
            else
                snprintf(square, sizeof square, "%d", i + 1);
            snprintf(item, sizeof item, "%s%s%s", first ? "" : ",", king ? "K" : "", square);
            dtb_textbuf_put(&w, item);
            first = false;
        }
    }
    return w.overflow ? DTB_E_OVERFLOW : DTB_OK;
}
