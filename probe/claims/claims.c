/* Textbook claims: reading claims files and evaluating claims on the tables (claims.h; the file
 * format is documented in tables/claims/README.md).
 *
 * Reading is two-step: the lines of one claim are collected as written, then checked together
 * when the claim ends (so its lines may come in any order, e.g. "variant" after "filter"), with
 * the board of the claim's variant at hand to read FENs and square sets.
 *
 * Evaluating a material claim walks every placement of the material: one group of pieces per
 * colour and kind, each chosen as a combination of squares from the group's allowed set (its
 * ON / OFF filters applied before the walk, men kept off their promotion row), each placement
 * taken with the side(s) to move the claim covers; the capture filters are tested per position
 * with core's capture test, and every position passing them is probed through dtb.h. */
#define _POSIX_C_SOURCE 200809L

#include "claims.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "fen.h"
#include "material.h"
#include "movegen.h"
#include "position.h"
#include "rules.h"
#include "square_name.h"

/* ---- named square sets (data) --------------------------------------------------------------- */

/* Named diagonals per board; squares listed along the diagonal, 0-terminated. tests/test_claims.c
 * checks that each is a whole diagonal of its board (neighbours, edge to edge). */
typedef struct named_set {
    const char *name;
    int squares[16];
} named_set;

static const named_set sets_10x10[] = {
    /* the long diagonal a1-j10 ("grote diagonaal") */
    {"main", {46, 41, 37, 32, 28, 23, 19, 14, 10, 5, 0}},
    /* the two double diagonals ("dubbele lijnen") b10-j2 and a9-i1 */
    {"double-1-45", {1, 7, 12, 18, 23, 29, 34, 40, 45, 0}},
    {"double-6-50", {6, 11, 17, 22, 28, 33, 39, 44, 50, 0}},
    /* the tric-trac diagonals h10-a3 and j8-c1 */
    {"trictrac-4-36", {4, 9, 13, 18, 22, 27, 31, 36, 0}},
    {"trictrac-15-47", {15, 20, 24, 29, 33, 38, 42, 47, 0}},
    {NULL, {0}},
};

static const named_set sets_8x8[] = {
    /* the main road a1-h8 (Russian "bolshak") */
    {"main", {29, 25, 22, 18, 15, 11, 8, 4, 0}},
    /* the double roads ("dvoinik") b8-h2 and a7-g1 */
    {"double-1-28", {1, 6, 10, 15, 19, 24, 28, 0}},
    {"double-5-32", {5, 9, 14, 18, 23, 27, 32, 0}},
    /* the triple roads a3-f8 and c1-h6 ("troinik", with the short a3-c1 and f8-h6) */
    {"triple-3-21", {21, 17, 14, 10, 7, 3, 0}},
    {"triple-12-30", {30, 26, 23, 19, 16, 12, 0}},
    {NULL, {0}},
};

static const named_set sets_12x12[] = {
    {"main", {67, 61, 56, 50, 45, 39, 34, 28, 23, 17, 12, 6, 0}},
    {NULL, {0}},
};

static const named_set *sets_of_size(int board_size)
{
    return board_size == 10 ? sets_10x10 : board_size == 8 ? sets_8x8 : board_size == 12 ? sets_12x12 : NULL;
}

const char *dtb_claims_named_set(const char *variant, int i, const int **squares)
{
    const dtb_variant *v = variant ? dtb_variant_find(variant) : NULL;
    const named_set *t = v ? sets_of_size(v->board_size) : NULL;
    if (!t || i < 0)
        return NULL;
    for (int k = 0; k <= i; k++)
        if (!t[k].name)
            return NULL;
    if (squares)
        *squares = t[i].squares;
    return t[i].name;
}

/* ---- the set ---------------------------------------------------------------------------------- */

/* A claim and the memory it owns. */
typedef struct claim_store {
    dtb_claim pub;
    char *strings[8]; /* id, file, variant, source, statement, fen, material */
    int nstrings;
    dtb_claim_filter *filters;
    char **excepts;
} claim_store;

struct dtb_claims {
    claim_store **claims;
    int n, cap;
};

static void claim_free(claim_store *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nstrings; i++)
        free(c->strings[i]);
    for (int i = 0; i < c->pub.nexcept; i++)
        free(c->excepts[i]);
    free(c->excepts);
    free(c->filters);
    free(c);
}

dtb_claims *dtb_claims_new(void) { return calloc(1, sizeof(dtb_claims)); }

void dtb_claims_free(dtb_claims *set)
{
    if (!set)
        return;
    for (int i = 0; i < set->n; i++)
        claim_free(set->claims[i]);
    free(set->claims);
    free(set);
}

int dtb_claims_count(const dtb_claims *set) { return set->n; }

const dtb_claim *dtb_claims_at(const dtb_claims *set, int i)
{
    return i >= 0 && i < set->n ? &set->claims[i]->pub : NULL;
}

/* ---- reading ----------------------------------------------------------------------------------- */

/* One line of text as written, kept until its claim is checked. */
typedef struct text_line {
    char *text;
    int line;
} text_line;

typedef struct line_list {
    text_line *v;
    int n, cap;
} line_list;

/* A claim's lines before checking. */
typedef struct pending {
    int line;
    text_line id, variant, source, position, material, side, assertion, clock;
    char *statement;
    line_list filters, excepts;
} pending;

/* A file's "set NAME ITEMS" definition. */
typedef struct file_set {
    char *name;
    char *items;
    int line;
} file_set;

typedef struct reader {
    const char *name;
    char *err;
    size_t size;
    char *default_variant;
    int default_variant_line;
    file_set *sets;
    int nsets, capsets;
    claim_store **out;
    int nout, capout;
    bool nomem;
} reader;

static dtb_status fail(reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static dtb_status fail(reader *r, int line, const char *fmt, ...)
{
    if (r->err && r->size > 0) {
        char msg[DTB_MESSAGE_SIZE];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(r->err, r->size, "%s:%d: %s", r->name, line, msg);
    }
    return DTB_E_INVALID;
}

static dtb_status no_memory(reader *r)
{
    if (r->err && r->size > 0)
        snprintf(r->err, r->size, "%s: out of memory", r->name);
    return DTB_E_NOMEM;
}

static void pending_free(pending *p)
{
    free(p->id.text);
    free(p->variant.text);
    free(p->source.text);
    free(p->position.text);
    free(p->material.text);
    free(p->side.text);
    free(p->assertion.text);
    free(p->clock.text);
    free(p->statement);
    for (int i = 0; i < p->filters.n; i++)
        free(p->filters.v[i].text);
    for (int i = 0; i < p->excepts.n; i++)
        free(p->excepts.v[i].text);
    free(p->filters.v);
    free(p->excepts.v);
    memset(p, 0, sizeof *p);
}

static bool list_push(line_list *l, char *text, int line)
{
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 8;
        text_line *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (text_line){text, line};
    return true;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Next whitespace-separated word of *s into w (size bytes); false at the end. */
static bool next_word(const char **s, char *w, size_t size)
{
    const char *p = *s;
    while (*p && is_space(*p))
        p++;
    if (!*p)
        return false;
    size_t n = 0;
    while (*p && !is_space(*p)) {
        if (n + 1 < size)
            w[n++] = *p;
        p++;
    }
    w[n] = '\0';
    *s = p;
    return true;
}

static bool ci_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        const char x = (char)(*a >= 'A' && *a <= 'Z' ? *a + 32 : *a);
        const char y = (char)(*b >= 'A' && *b <= 'Z' ? *b + 32 : *b);
        if (x != y)
            return false;
    }
    return *a == *b;
}

static bool word_is(const char *w, const char *a, const char *b)
{
    return ci_equal(w, a) || (b && ci_equal(w, b));
}

static bool valid_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return false;
    return true;
}

/* A square set in the making: bits and the squares in the order written (for reports). */
typedef struct square_set {
    dtb_bb bits;
    int order[DTB_MAX_SQUARES];
    int n;
} square_set;

static void set_add(square_set *s, int square)
{
    if (dtb_bb_has(s->bits, square - 1))
        return;
    s->bits |= dtb_bb_bit(square - 1);
    s->order[s->n++] = square;
}

static dtb_status parse_set(reader *r, const dtb_board *b, const char *items, int line, int depth,
                            square_set *out);

/* One item of a set: a square, an ascending range a-b, or a name (built-in for the board, or
 * a "set" of the file). */
static dtb_status parse_item(reader *r, const dtb_board *b, const char *item, int line, int depth,
                             square_set *out)
{
    /* A square's name ("c3", on any board: files and ranks are geometry); a bad one is named. */
    int named, len;
    const dtb_square_kind kind = dtb_square_parse_name(b, item, &named, &len);
    if (kind != DTB_SQUARE_NOT_A_NAME && item[len] == '-')
        return fail(r, line, "'%s': ranges are of square numbers (list named squares one by one)", item);
    if (kind != DTB_SQUARE_NOT_A_NAME && item[len] == '\0') {
        if (kind == DTB_SQUARE_PLAYABLE) {
            set_add(out, named + 1);
            return DTB_OK;
        }
        return fail(r, line, "'%s' is %s", item,
                    kind == DTB_SQUARE_LIGHT ? "a light square, not a playable one"
                                             : "not a square of this board");
    }
    if (item[0] >= '0' && item[0] <= '9') {
        char *end;
        errno = 0;
        long lo = strtol(item, &end, 10), hi = lo;
        if (*end == '-') {
            const char *h = end + 1;
            hi = strtol(h, &end, 10);
            if (end == h)
                return fail(r, line, "'%s': a range is two squares, low-high", item);
        }
        if (*end != '\0' || errno)
            return fail(r, line, "'%s' is not a square, a range or a set name", item);
        if (lo < 1 || hi > b->squares || lo > hi)
            return fail(r, line, "'%s': squares of the %s board are 1..%d (ranges go upwards)", item,
                        b->variant->name, b->squares);
        for (long s = lo; s <= hi; s++)
            set_add(out, (int)s);
        return DTB_OK;
    }
    for (int i = r->nsets - 1; i >= 0; i--)
        if (strcmp(r->sets[i].name, item) == 0) {
            if (depth > 8)
                return fail(r, line, "set '%s' is defined in terms of itself", item);
            return parse_set(r, b, r->sets[i].items, r->sets[i].line, depth + 1, out);
        }
    const named_set *t = sets_of_size(b->size);
    for (int i = 0; t && t[i].name; i++)
        if (strcmp(t[i].name, item) == 0) {
            for (int k = 0; t[i].squares[k]; k++)
                set_add(out, t[i].squares[k]);
            return DTB_OK;
        }
    char known[160] = "";
    size_t n = 0;
    for (int i = 0; t && t[i].name && n < sizeof known; i++)
        n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", t[i].name);
    return fail(r, line, "unknown square set '%s' for %s (built in: %s; or define it with 'set')",
                item, b->variant->name, known);
}

/* Items separated by commas and/or spaces. */
static dtb_status parse_set(reader *r, const dtb_board *b, const char *items, int line, int depth,
                            square_set *out)
{
    const char *p = items;
    int count = 0;
    for (;;) {
        while (*p == ',' || is_space(*p))
            p++;
        if (!*p)
            break;
        char item[64];
        size_t n = 0;
        while (*p && *p != ',' && !is_space(*p)) {
            if (n + 1 < sizeof item)
                item[n++] = *p;
            p++;
        }
        item[n] = '\0';
        const dtb_status s = parse_item(r, b, item, line, depth, out);
        if (s != DTB_OK)
            return s;
        count++;
    }
    if (count == 0)
        return fail(r, line, "an empty square set");
    return DTB_OK;
}

static const char *outcome_names[] = {"win",        "draw",       "loss",        "white-wins",
                                      "black-wins", "cursed-win", "blessed-loss"};

const char *dtb_claim_outcome_name(dtb_claim_outcome o)
{
    return (unsigned)o < sizeof outcome_names / sizeof outcome_names[0] ? outcome_names[o] : "?";
}

static bool parse_outcome(const char *w, dtb_claim_outcome *o)
{
    if (word_is(w, "win", "wins"))
        *o = DTB_OUTCOME_WIN;
    else if (word_is(w, "draw", "draws"))
        *o = DTB_OUTCOME_DRAW;
    else if (word_is(w, "loss", "loses"))
        *o = DTB_OUTCOME_LOSS;
    else if (word_is(w, "white-wins", "white-win"))
        *o = DTB_OUTCOME_WHITE_WINS;
    else if (word_is(w, "black-wins", "black-win"))
        *o = DTB_OUTCOME_BLACK_WINS;
    else if (word_is(w, "cursed-win", "cursed-wins"))
        *o = DTB_OUTCOME_CURSED_WIN;
    else if (word_is(w, "blessed-loss", "blessed-losses"))
        *o = DTB_OUTCOME_BLESSED_LOSS;
    else
        return false;
    return true;
}

/* A bound "N moves" or "N plies" from *s into plies; text receives the normalised words. */
static dtb_status parse_bound(reader *r, int line, const char **s, bool moves_allowed, int *plies,
                              char *text, size_t size)
{
    char num[32], unit[32];
    if (!next_word(s, num, sizeof num) || !next_word(s, unit, sizeof unit))
        return fail(r, line, "a bound is 'N moves' or 'N plies'");
    char *end;
    const long n = strtol(num, &end, 10);
    if (*end || n < 0 || n > DTB_MAX_DTW)
        return fail(r, line, "'%s' is not a number of moves or plies (0..%d)", num, DTB_MAX_DTW);
    if (word_is(unit, "plies", "ply")) {
        *plies = (int)n;
        snprintf(text, size, "%ld plies", n);
    } else if (word_is(unit, "moves", "move")) {
        if (!moves_allowed)
            return fail(r, line, "an exact longest win is given in plies (a move count leaves the parity open)");
        if (2 * n > DTB_MAX_DTW)
            return fail(r, line, "%ld moves is more than any table holds", n);
        *plies = (int)(2 * n);
        snprintf(text, size, "%ld moves (%ld plies)", n, 2 * n);
    } else {
        return fail(r, line, "'%s': a bound is in 'moves' (of each side) or 'plies'", unit);
    }
    return DTB_OK;
}

static dtb_status parse_assertion(reader *r, const text_line *t, dtb_claim_kind kind,
                                  dtb_claim_assertion *a)
{
    const char *s = t->text;
    char w[64], bound[64] = "";
    *a = (dtb_claim_assertion){.bound_plies = -1};
    if (!next_word(&s, w, sizeof w))
        return fail(r, t->line, "assert needs a result");
    dtb_status st;
    if (kind == DTB_CLAIM_POSITION) {
        a->quant = DTB_QUANT_IS;
        if (!parse_outcome(w, &a->outcome))
            return fail(r, t->line,
                        "'%s': a position claim asserts win, draw, loss, white-wins or black-wins", w);
    } else if (word_is(w, "all", NULL) || word_is(w, "none", NULL)) {
        a->quant = word_is(w, "all", NULL) ? DTB_QUANT_ALL : DTB_QUANT_NONE;
        if (!next_word(&s, w, sizeof w) || !parse_outcome(w, &a->outcome))
            return fail(r, t->line, "'%s' needs a result: win, draw, loss, white-wins or black-wins",
                        a->quant == DTB_QUANT_ALL ? "all" : "none");
    } else if (word_is(w, "at-least", NULL) || word_is(w, "at-most", NULL)) {
        a->quant = word_is(w, "at-least", NULL) ? DTB_QUANT_AT_LEAST : DTB_QUANT_AT_MOST;
        char num[32];
        if (!next_word(&s, num, sizeof num))
            return fail(r, t->line, "%s needs a fraction (0.9 or 90%%)", w);
        char *end;
        double f = strtod(num, &end);
        if (*end == '%' && end[1] == '\0')
            f /= 100, end++;
        if (*end || end == num || !(f >= 0 && f <= 1))
            return fail(r, t->line, "'%s' is not a fraction between 0 and 1 (or 0%%..100%%)", num);
        a->fraction = f;
        if (!next_word(&s, w, sizeof w) || !parse_outcome(w, &a->outcome))
            return fail(r, t->line, "the fraction needs a result: win, draw, loss, white-wins or black-wins");
    } else if (word_is(w, "exactly", NULL)) {
        a->quant = DTB_QUANT_EXACTLY;
        char num[32];
        char *end;
        if (!next_word(&s, num, sizeof num) || (a->count = strtoull(num, &end, 10), *end) ||
            !(num[0] >= '0' && num[0] <= '9'))
            return fail(r, t->line, "'exactly' needs a number of positions");
        if (!next_word(&s, w, sizeof w) || !parse_outcome(w, &a->outcome))
            return fail(r, t->line, "the count needs a result: win, draw, loss, white-wins or black-wins");
    } else if (word_is(w, "longest-win", NULL)) {
        a->quant = DTB_QUANT_LONGEST_WIN;
        if (!next_word(&s, w, sizeof w) || !(word_is(w, "within", NULL) || word_is(w, "exactly", NULL)))
            return fail(r, t->line, "longest-win is followed by 'within N moves|plies' or 'exactly N plies'");
        a->exact = word_is(w, "exactly", NULL);
        if ((st = parse_bound(r, t->line, &s, !a->exact, &a->bound_plies, bound, sizeof bound)) != DTB_OK)
            return st;
    } else {
        return fail(r, t->line,
                    "'%s': a material claim asserts all, none, at-least, at-most, exactly or longest-win", w);
    }
    if (a->quant == DTB_QUANT_IS || a->quant == DTB_QUANT_ALL) {
        if (next_word(&s, w, sizeof w)) {
            if (!word_is(w, "within", NULL))
                return fail(r, t->line, "'%s': only 'within N moves|plies' may follow the result", w);
            if (a->outcome == DTB_OUTCOME_DRAW)
                return fail(r, t->line, "a draw has no distance to bound");
            if (a->outcome == DTB_OUTCOME_CURSED_WIN || a->outcome == DTB_OUTCOME_BLESSED_LOSS)
                return fail(r, t->line, "a %s has no distance under the rules to bound",
                            dtb_claim_outcome_name(a->outcome));
            if ((st = parse_bound(r, t->line, &s, true, &a->bound_plies, bound, sizeof bound)) != DTB_OK)
                return st;
        }
    }
    if (next_word(&s, w, sizeof w))
        return fail(r, t->line, "unexpected '%s' at the end of the assertion", w);

    const char *o = dtb_claim_outcome_name(a->outcome);
    switch (a->quant) {
    case DTB_QUANT_IS:
    case DTB_QUANT_ALL:
        snprintf(a->text, sizeof a->text, "%s%s%s%s", a->quant == DTB_QUANT_ALL ? "all " : "", o,
                 bound[0] ? " within " : "", bound);
        break;
    case DTB_QUANT_NONE: snprintf(a->text, sizeof a->text, "none %s", o); break;
    case DTB_QUANT_AT_LEAST:
    case DTB_QUANT_AT_MOST:
        snprintf(a->text, sizeof a->text, "%s %g%% %s",
                 a->quant == DTB_QUANT_AT_LEAST ? "at-least" : "at-most", 100 * a->fraction, o);
        break;
    case DTB_QUANT_LONGEST_WIN:
        snprintf(a->text, sizeof a->text, "longest-win %s %s", a->exact ? "exactly" : "within", bound);
        break;
    case DTB_QUANT_EXACTLY:
        snprintf(a->text, sizeof a->text, "exactly %llu %s", (unsigned long long)a->count, o);
        break;
    }
    return DTB_OK;
}

static bool parse_who(const char *w, dtb_claim_who *who)
{
    if (word_is(w, "white", NULL))
        *who = DTB_WHO_WHITE;
    else if (word_is(w, "black", NULL))
        *who = DTB_WHO_BLACK;
    else if (word_is(w, "mover", NULL))
        *who = DTB_WHO_MOVER;
    else if (word_is(w, "other", NULL))
        *who = DTB_WHO_OTHER;
    else
        return false;
    return true;
}

static const char *who_name(dtb_claim_who w)
{
    return w == DTB_WHO_WHITE ? "white" : w == DTB_WHO_BLACK ? "black" : w == DTB_WHO_MOVER ? "mover" : "other";
}

/* Appends s to the text in buf (size bytes), cut where the room ends (texts for reading). */
static void append(char *buf, size_t size, const char *s)
{
    const size_t n = strlen(buf);
    size_t k = strlen(s);
    if (n + k >= size)
        k = size - 1 - n;
    memcpy(buf + n, s, k);
    buf[n + k] = '\0';
}

/* "filter <colour> <kind> on|off <set>" or "filter <who> has [a] capture | has no capture". */
static dtb_status parse_filter(reader *r, const dtb_board *b, const text_line *t, dtb_claim_filter *f)
{
    const char *s = t->text;
    char w1[32], w2[32], w3[32], w4[32];
    *f = (dtb_claim_filter){0};
    bool some = false;
    if (next_word(&s, w1, sizeof w1) && word_is(w1, "some", NULL))
        some = true;
    else
        s = t->text;
    if (!next_word(&s, w1, sizeof w1) || !parse_who(w1, &f->who) || !next_word(&s, w2, sizeof w2))
        return fail(r, t->line,
                    "a filter starts with white, black, mover or other: 'black king on main', 'white has no capture'");
    if (word_is(w2, "has", NULL) && !some) {
        if (!next_word(&s, w3, sizeof w3))
            return fail(r, t->line, "'has' is followed by 'a capture' or 'no capture'");
        bool no = false;
        if (word_is(w3, "no", NULL))
            no = true;
        else if (!word_is(w3, "a", NULL))
            s -= strlen(w3); /* "has capture": w3 is the noun */
        if (!next_word(&s, w4, sizeof w4) || !word_is(w4, "capture", "captures") || next_word(&s, w3, sizeof w3))
            return fail(r, t->line, "write '%s has no capture' or '%s has a capture'", w1, w1);
        f->kind = no ? DTB_FILTER_NO_CAPTURE : DTB_FILTER_CAPTURE;
        snprintf(f->text, sizeof f->text, "%s has %s capture", who_name(f->who), no ? "no" : "a");
        for (int n = 0; n < 2; n++)
            snprintf(f->text_in[n], sizeof f->text_in[n], "%s", f->text);
        return DTB_OK;
    }
    if (f->who != DTB_WHO_WHITE && f->who != DTB_WHO_BLACK)
        return fail(r, t->line, "square filters name a colour, white or black (not '%s')", w1);
    if (word_is(w2, "king", "kings"))
        f->pieces = DTB_PIECE_KINGS;
    else if (word_is(w2, "man", "men"))
        f->pieces = DTB_PIECE_MEN;
    else if (word_is(w2, "piece", "pieces"))
        f->pieces = DTB_PIECE_ALL;
    else
        return fail(r, t->line, "'%s': say which pieces: king(s), man/men or piece(s)", w2);
    if (!next_word(&s, w3, sizeof w3) || !(word_is(w3, "on", NULL) || word_is(w3, "off", NULL)))
        return fail(r, t->line, "'%s %s' is followed by 'on SET' or 'off SET'", w1, w2);
    f->kind = word_is(w3, "on", NULL) ? DTB_FILTER_ON : DTB_FILTER_OFF;
    if (some && f->kind == DTB_FILTER_OFF)
        return fail(r, t->line, "'some ... off' says nothing: write 'some %s %s on SET' or '%s %s off SET'",
                    w1, w2, w1, w2);
    if (some)
        f->kind = DTB_FILTER_SOME;
    while (*s && is_space(*s))
        s++;
    square_set set = {0};
    const dtb_status st = parse_set(r, b, s, t->line, 0, &set);
    if (st != DTB_OK)
        return st;
    f->squares[0] = (uint64_t)set.bits;
    f->squares[1] = (uint64_t)(set.bits >> 64);
    const char *kind = f->pieces == DTB_PIECE_KINGS ? "kings" : f->pieces == DTB_PIECE_MEN ? "men" : "pieces";
    bool has_name = false; /* a set name among the items (not a square, a range or a name) */
    for (const char *p = s; *p && !has_name;) {
        while (*p == ',' || is_space(*p))
            p++;
        int sq, len;
        has_name = *p && !(*p >= '0' && *p <= '9') &&
                   dtb_square_parse_name(b, p, &sq, &len) == DTB_SQUARE_NOT_A_NAME;
        while (*p && *p != ',' && !is_space(*p))
            p++;
    }
    for (int n = 0; n < 2; n++) {
        /* the squares in the notation: after a set name as a spelling-out, else the set itself */
        char list[160];
        size_t k = 0;
        for (int i = 0; i < set.n && k < sizeof list; i++) {
            char name[DTB_SQUARE_NAME_MAX];
            if (n == DTB_NOTATION_ALGEBRAIC)
                dtb_square_name(b, set.order[i] - 1, name);
            else
                snprintf(name, sizeof name, "%d", set.order[i]);
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", i ? "," : "", name);
        }
        const bool fits = k < sizeof list;
        char *out = f->text_in[n];
        const size_t room = sizeof f->text_in[n];
        snprintf(out, room, "%s%s %s %s ", some ? "some " : "", who_name(f->who),
                 some ? kind[0] == 'k' ? "king" : kind[0] == 'm' ? "man" : "piece" : kind,
                 f->kind == DTB_FILTER_OFF ? "off" : "on");
        const char *parts[4] = {has_name || !fits ? s : "", has_name && fits ? " (" : "",
                                fits ? list : "", has_name && fits ? ")" : ""};
        for (int i = 0; i < 4; i++)
            append(out, room, parts[i]);
    }
    snprintf(f->text, sizeof f->text, "%s", f->text_in[DTB_NOTATION_NUMERIC]);
    return DTB_OK;
}

static char *dup_text(reader *r, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        r->nomem = true;
    return d;
}

static bool keep(reader *r, claim_store *c, char *s)
{
    if (!s)
        return false;
    if (c->nstrings >= (int)(sizeof c->strings / sizeof c->strings[0])) {
        free(s);
        r->nomem = true;
        return false;
    }
    c->strings[c->nstrings++] = s;
    return true;
}

/* The claim's "clock N" (pub->clock -1 without one), and the rule set it puts the claim under:
 * the variant's. Results only the rules have need a clock. */
static dtb_status parse_clock(reader *r, const pending *p, const dtb_variant *v, dtb_claim *pub)
{
    pub->clock = -1;
    pub->rules = NULL;
    const dtb_claim_outcome o = pub->assertion.outcome;
    const bool rule_outcome = pub->assertion.quant != DTB_QUANT_LONGEST_WIN &&
                              (o == DTB_OUTCOME_CURSED_WIN || o == DTB_OUTCOME_BLESSED_LOSS);
    if (!p->clock.text) {
        if (rule_outcome)
            return fail(r, p->assertion.line,
                        "claim %s: '%s' is a result under the move-count rules: give the claim a "
                        "'clock N' line", p->id.text, dtb_claim_outcome_name(o));
        return DTB_OK;
    }
    const dtb_rules *rules = dtb_rules_of_variant(v);
    if (!rules)
        return fail(r, p->clock.line,
                    "claim %s: dtb has no move-count rules for %s (docs/RULES.md), so no clock",
                    p->id.text, v->name);
    char *end;
    errno = 0;
    const long n = strtol(p->clock.text, &end, 10);
    if (*end || end == p->clock.text || errno || n < 0 || n > DTB_CLAIM_CLOCK_MAX)
        return fail(r, p->clock.line,
                    "clock '%s': the plies since the count was reset, a number 0..%d",
                    p->clock.text, DTB_CLAIM_CLOCK_MAX);
    pub->clock = (int)n;
    pub->rules = rules->name;
    return DTB_OK;
}

/* Checks a finished claim and turns it into a claim_store appended to r->out. */
static dtb_status finish_claim(reader *r, pending *p)
{
    const int line = p->line;
    if (!p->id.text)
        return fail(r, line, "a claim without an id");
    const char *variant_name = p->variant.text ? p->variant.text : r->default_variant;
    if (!variant_name)
        return fail(r, line, "claim %s: no variant (give 'variant NAME' in the claim or at the top of the file)",
                    p->id.text);
    const dtb_variant *v = dtb_variant_find(variant_name);
    if (!v)
        return fail(r, p->variant.text ? p->variant.line : r->default_variant_line,
                    "unknown variant '%s'", variant_name);
    dtb_board board;
    dtb_board_init(&board, v);
    if (!p->source.text)
        return fail(r, line, "claim %s: no source (book, author or rule article)", p->id.text);
    if (!p->statement)
        return fail(r, line, "claim %s: no statement", p->id.text);
    if (!p->assertion.text)
        return fail(r, line, "claim %s: no assert line", p->id.text);
    if (!p->position.text == !p->material.text)
        return fail(r, line, "claim %s: give either a position or a material", p->id.text);

    claim_store *c = calloc(1, sizeof *c);
    if (!c)
        return no_memory(r);
    dtb_claim *pub = &c->pub;
    pub->line = line;
    keep(r, c, dup_text(r, p->id.text));
    keep(r, c, dup_text(r, r->name));
    keep(r, c, dup_text(r, v->name));
    keep(r, c, dup_text(r, p->source.text));
    keep(r, c, dup_text(r, p->statement));
    if (r->nomem) {
        claim_free(c);
        return no_memory(r);
    }
    pub->id = c->strings[0];
    pub->file = c->strings[1];
    pub->variant = c->strings[2];
    pub->source = c->strings[3];
    pub->statement = c->strings[4];

    dtb_status st = DTB_OK;
    dtb_error e = {{0}};
    if (p->position.text) {
        pub->kind = DTB_CLAIM_POSITION;
        dtb_pos q;
        if (p->side.text || p->filters.n || p->excepts.n)
            st = fail(r, p->side.text ? p->side.line : p->filters.n ? p->filters.v[0].line : p->excepts.v[0].line,
                      "claim %s: side, filter and except belong to material claims", p->id.text);
        else if (dtb_fen_read(&board, p->position.text, &q, &e) != DTB_OK)
            st = fail(r, p->position.line, "bad FEN '%s': %s", p->position.text, e.msg);
        else if (!dtb_pos_pieces(&q, q.side == DTB_WHITE ? DTB_BLACK : DTB_WHITE))
            st = fail(r, p->position.line, "'%s': the side not to move has no piece", p->position.text);
        else if (keep(r, c, dup_text(r, p->position.text)))
            pub->fen = c->strings[c->nstrings - 1];
    } else {
        pub->kind = DTB_CLAIM_MATERIAL;
        dtb_material m;
        if (dtb_material_parse(p->material.text, &m, &e) != DTB_OK)
            st = fail(r, p->material.line, "%s", e.msg);
        else if (dtb_material_pieces(&m) > board.squares || m.men[0] > board.squares - board.half ||
                 m.men[1] > board.squares - board.half)
            st = fail(r, p->material.line, "%s does not fit the %s board", p->material.text, v->name);
        else if (keep(r, c, dup_text(r, p->material.text)))
            pub->material = c->strings[c->nstrings - 1];
        pub->side = DTB_CLAIM_SIDE_ANY;
        if (st == DTB_OK && p->side.text) {
            if (word_is(p->side.text, "white", NULL))
                pub->side = DTB_CLAIM_SIDE_WHITE;
            else if (word_is(p->side.text, "black", NULL))
                pub->side = DTB_CLAIM_SIDE_BLACK;
            else if (!word_is(p->side.text, "any", "either"))
                st = fail(r, p->side.line, "side is white, black or any (the side to move), not '%s'",
                          p->side.text);
        }
        if (st == DTB_OK && p->filters.n) {
            c->filters = calloc((size_t)p->filters.n, sizeof *c->filters);
            if (!c->filters)
                r->nomem = true;
            for (int i = 0; st == DTB_OK && c->filters && i < p->filters.n; i++)
                if ((st = parse_filter(r, &board, &p->filters.v[i], &c->filters[i])) == DTB_OK)
                    pub->nfilters = i + 1;
            pub->filters = c->filters;
        }
        if (st == DTB_OK && p->excepts.n) {
            c->excepts = calloc((size_t)p->excepts.n, sizeof *c->excepts);
            if (!c->excepts)
                r->nomem = true;
            for (int i = 0; st == DTB_OK && c->excepts && i < p->excepts.n; i++) {
                const text_line *t = &p->excepts.v[i];
                dtb_pos q;
                if (dtb_fen_read(&board, t->text, &q, &e) != DTB_OK) {
                    st = fail(r, t->line, "bad FEN '%s': %s", t->text, e.msg);
                    break;
                }
                const dtb_material qm = dtb_material_of(&q);
                if (!dtb_material_equal(&qm, &m)) {
                    st = fail(r, t->line, "exception '%s' is not of material %s", t->text, p->material.text);
                    break;
                }
                if (pub->side != DTB_CLAIM_SIDE_ANY && (int)q.side != (int)pub->side) {
                    st = fail(r, t->line, "exception '%s' has the other side to move", t->text);
                    break;
                }
                if (!(c->excepts[i] = dup_text(r, t->text)))
                    break;
                pub->nexcept = i + 1;
            }
            pub->except_fens = (const char *const *)c->excepts;
        }
    }
    if (st == DTB_OK && !r->nomem)
        st = parse_assertion(r, &p->assertion, pub->kind, &pub->assertion);
    if (st == DTB_OK && pub->nexcept &&
        pub->assertion.quant != DTB_QUANT_ALL && pub->assertion.quant != DTB_QUANT_NONE)
        st = fail(r, p->excepts.v[0].line, "exceptions go with 'assert all' or 'assert none'");
    if (st == DTB_OK)
        st = parse_clock(r, p, v, pub);
    if (st == DTB_OK && r->nomem)
        st = no_memory(r);
    for (int i = 0; st == DTB_OK && i < r->nout; i++)
        if (strcmp(r->out[i]->pub.id, pub->id) == 0)
            st = fail(r, line, "claim id '%s' used twice (line %d)", pub->id, r->out[i]->pub.line);
    if (st == DTB_OK && r->nout == r->capout) {
        const int cap = r->capout ? 2 * r->capout : 16;
        claim_store **o = realloc(r->out, (size_t)cap * sizeof *o);
        if (!o)
            st = no_memory(r);
        else
            r->out = o, r->capout = cap;
    }
    if (st != DTB_OK) {
        claim_free(c);
        return st;
    }
    r->out[r->nout++] = c;
    return DTB_OK;
}

/* Sets a single-valued field of the claim, refusing a second one. */
static dtb_status set_field(reader *r, text_line *f, const char *key, const char *value, int line)
{
    if (f->text)
        return fail(r, line, "a second '%s' in one claim (first on line %d)", key, f->line);
    if (!*value)
        return fail(r, line, "'%s' needs a value", key);
    if (!(f->text = strdup(value)))
        return no_memory(r);
    f->line = line;
    return DTB_OK;
}

static dtb_status read_line(reader *r, pending *p, bool *in_claim, const char *key, const char *value,
                            int line)
{
    if (ci_equal(key, "claim")) {
        if (*in_claim) {
            const dtb_status s = finish_claim(r, p);
            pending_free(p);
            if (s != DTB_OK)
                return s;
        }
        *in_claim = true;
        p->line = line;
        if (!valid_name(value))
            return fail(r, line, "claim id '%s': letters, digits, '-', '_' and '.' only", value);
        return set_field(r, &p->id, "claim", value, line);
    }
    if (!*in_claim) {
        if (ci_equal(key, "variant")) {
            if (r->default_variant)
                return fail(r, line, "a second file-wide variant");
            if (!(r->default_variant = strdup(value)))
                return no_memory(r);
            r->default_variant_line = line;
            return DTB_OK;
        }
        if (ci_equal(key, "set")) {
            char name[64];
            const char *s = value;
            if (!next_word(&s, name, sizeof name) || !valid_name(name) || (name[0] >= '0' && name[0] <= '9'))
                return fail(r, line, "'set NAME SQUARES': a name starting with a letter");
            while (*s && is_space(*s))
                s++;
            if (!*s)
                return fail(r, line, "set %s has no squares", name);
            if (r->nsets == r->capsets) {
                const int cap = r->capsets ? 2 * r->capsets : 8;
                file_set *v = realloc(r->sets, (size_t)cap * sizeof *v);
                if (!v)
                    return no_memory(r);
                r->sets = v;
                r->capsets = cap;
            }
            file_set *fs = &r->sets[r->nsets];
            fs->name = strdup(name);
            fs->items = strdup(s);
            fs->line = line;
            r->nsets++;
            if (!fs->name || !fs->items)
                return no_memory(r);
            return DTB_OK;
        }
        return fail(r, line, "'%s' before the first 'claim' (only 'variant' and 'set' may come first)", key);
    }
    if (ci_equal(key, "variant"))
        return set_field(r, &p->variant, key, value, line);
    if (ci_equal(key, "position"))
        return set_field(r, &p->position, key, value, line);
    if (ci_equal(key, "material"))
        return set_field(r, &p->material, key, value, line);
    if (ci_equal(key, "side"))
        return set_field(r, &p->side, key, value, line);
    if (ci_equal(key, "assert"))
        return set_field(r, &p->assertion, key, value, line);
    if (ci_equal(key, "clock"))
        return set_field(r, &p->clock, key, value, line);
    if (ci_equal(key, "statement") || ci_equal(key, "source")) {
        /* several lines join with a space */
        char **text = ci_equal(key, "statement") ? &p->statement : &p->source.text;
        if (!*value)
            return fail(r, line, "an empty %s", key);
        const size_t old = *text ? strlen(*text) : 0;
        char *s = realloc(*text, old + strlen(value) + 2);
        if (!s)
            return no_memory(r);
        if (old)
            s[old] = ' ';
        strcpy(s + (old ? old + 1 : 0), value);
        *text = s;
        return DTB_OK;
    }
    if (ci_equal(key, "filter") || ci_equal(key, "except")) {
        if (!*value)
            return fail(r, line, "'%s' needs a value", key);
        char *t = strdup(value);
        if (!t || !list_push(ci_equal(key, "filter") ? &p->filters : &p->excepts, t, line)) {
            free(t);
            return no_memory(r);
        }
        return DTB_OK;
    }
    if (ci_equal(key, "set"))
        return fail(r, line, "'set' goes before the first claim");
    return fail(r, line,
                "unknown keyword '%s' (claim, variant, source, statement, position, material, side, "
                "filter, except, clock, assert)",
                key);
}

dtb_status dtb_claims_add_text(dtb_claims *set, const char *name, const char *text, char *err,
                               size_t size)
{
    reader r = {.name = name ? name : "<text>", .err = err, .size = size};
    if (err && size > 0)
        err[0] = '\0';
    pending p = {0};
    bool in_claim = false;
    dtb_status st = DTB_OK;
    int line = 0;
    for (const char *s = text; st == DTB_OK && *s;) {
        line++;
        const char *eol = strchr(s, '\n');
        const size_t len = eol ? (size_t)(eol - s) : strlen(s);
        char *buf = malloc(len + 1);
        if (!buf) {
            st = no_memory(&r);
            break;
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + (eol ? 1 : 0);
        /* trim; whole-line comments start with '#' */
        char *b = buf;
        while (*b && is_space(*b))
            b++;
        size_t n = strlen(b);
        while (n > 0 && is_space(b[n - 1]))
            b[--n] = '\0';
        if (*b && *b != '#') {
            char *value = b;
            while (*value && !is_space(*value))
                value++;
            if (*value)
                *value++ = '\0';
            while (*value && is_space(*value))
                value++;
            st = read_line(&r, &p, &in_claim, b, value, line);
        }
        free(buf);
    }
    if (st == DTB_OK && in_claim)
        st = finish_claim(&r, &p);
    pending_free(&p);
    /* ids must be unique in the whole set */
    for (int i = 0; st == DTB_OK && i < r.nout; i++)
        for (int k = 0; k < set->n; k++)
            if (strcmp(set->claims[k]->pub.id, r.out[i]->pub.id) == 0) {
                st = fail(&r, r.out[i]->pub.line, "claim id '%s' already read from %s:%d",
                          r.out[i]->pub.id, set->claims[k]->pub.file, set->claims[k]->pub.line);
                break;
            }
    if (st == DTB_OK && set->n + r.nout > set->cap) {
        const int cap = set->n + r.nout + 16;
        claim_store **c = realloc(set->claims, (size_t)cap * sizeof *c);
        if (!c)
            st = no_memory(&r);
        else
            set->claims = c, set->cap = cap;
    }
    if (st == DTB_OK) {
        memcpy(set->claims + set->n, r.out, (size_t)r.nout * sizeof *r.out);
        set->n += r.nout;
    } else {
        for (int i = 0; i < r.nout; i++)
            claim_free(r.out[i]);
    }
    free(r.out);
    for (int i = 0; i < r.nsets; i++) {
        free(r.sets[i].name);
        free(r.sets[i].items);
    }
    free(r.sets);
    free(r.default_variant);
    return st;
}

dtb_status dtb_claims_add_file(dtb_claims *set, const char *path, char *err, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && size > 0)
            snprintf(err, size, "%s: %s", path, strerror(errno));
        return DTB_E_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    dtb_status st = DTB_OK;
    while (buf) {
        if (n + 1 >= cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        const size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (!buf) {
        st = DTB_E_NOMEM;
        if (err && size > 0)
            snprintf(err, size, "%s: out of memory", path);
    } else if (ferror(f)) {
        st = DTB_E_IO;
        if (err && size > 0)
            snprintf(err, size, "%s: read error", path);
    } else if (memchr(buf, '\0', n)) {
        st = DTB_E_INVALID;
        if (err && size > 0)
            snprintf(err, size, "%s: not a text file", path);
    }
    fclose(f);
    if (st == DTB_OK) {
        buf[n] = '\0';
        st = dtb_claims_add_text(set, path, buf, err, size);
    }
    free(buf);
    return st;
}

/* ---- evaluating ------------------------------------------------------------------------------- */

bool dtb_claim_outcome_has_rule(dtb_claim_outcome o, int side, dtb_rule_category c)
{
    switch (o) {
    case DTB_OUTCOME_WIN: return c == DTB_RULE_WIN;
    case DTB_OUTCOME_DRAW: return c != DTB_RULE_WIN && c != DTB_RULE_LOSS;
    case DTB_OUTCOME_LOSS: return c == DTB_RULE_LOSS;
    case DTB_OUTCOME_WHITE_WINS:
        return (side == DTB_SIDE_WHITE && c == DTB_RULE_WIN) || (side == DTB_SIDE_BLACK && c == DTB_RULE_LOSS);
    case DTB_OUTCOME_BLACK_WINS:
        return (side == DTB_SIDE_BLACK && c == DTB_RULE_WIN) || (side == DTB_SIDE_WHITE && c == DTB_RULE_LOSS);
    case DTB_OUTCOME_CURSED_WIN: return c == DTB_RULE_CURSED_WIN;
    case DTB_OUTCOME_BLESSED_LOSS: return c == DTB_RULE_BLESSED_LOSS;
    }
    return false;
}

/* An unlimited result as a category: a win or loss of unlimited play is one under no rules. */
static dtb_rule_category category_of_wdl(dtb_wdl w)
{
    return w == DTB_WIN ? DTB_RULE_WIN : w == DTB_LOSS ? DTB_RULE_LOSS : DTB_RULE_DRAW;
}

bool dtb_claim_outcome_has(dtb_claim_outcome o, int side, dtb_wdl wdl)
{
    return dtb_claim_outcome_has_rule(o, side, category_of_wdl(wdl));
}

static void position_free(dtb_claim_position *p)
{
    free(p->line);
    p->line = NULL;
}

void dtb_claim_result_free(dtb_claim_result *r)
{
    if (!r)
        return;
    position_free(&r->longest_pos);
    position_free(&r->subject);
    for (int i = 0; i < r->nexamples; i++)
        position_free(&r->examples[i]);
    for (int i = 0; i < r->nexceptions; i++)
        position_free(&r->exceptions[i]);
    free(r->examples);
    free(r->exceptions);
    r->examples = r->exceptions = NULL;
    r->nexamples = r->nexceptions = 0;
}

static dtb_position public_of(const dtb_pos *p)
{
    dtb_position q;
    for (int c = 0; c < 2; c++) {
        q.men[c][0] = (uint64_t)p->men[c];
        q.men[c][1] = (uint64_t)(p->men[c] >> 64);
        q.kings[c][0] = (uint64_t)p->kings[c];
        q.kings[c][1] = (uint64_t)(p->kings[c] >> 64);
    }
    q.side = p->side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK;
    return q;
}

/* A position's value as a claim reads it: in unlimited play, or for a claim with a clock under
 * the rules at that clock. */
typedef struct value {
    dtb_wdl wdl;           /* the result: unlimited, or under the rules (a cursed win a draw) */
    dtb_rule_category cat; /* the same with the rules' categories (unlimited: WIN, DRAW, LOSS) */
    int dist;              /* what bounds read, for a win or loss: the DTW, or the rule distance */
    dtb_rule_answer rule;  /* with a clock: the whole answer */
} value;

static dtb_status probe_value(dtb_db *db, const dtb_claim *c, const dtb_position *q, value *v)
{
    memset(v, 0, sizeof *v);
    if (c->clock < 0) {
        const dtb_status s = dtb_probe_dtw(db, q, 0, &v->wdl, &v->dist);
        v->cat = category_of_wdl(v->wdl);
        return s;
    }
    const dtb_status s = dtb_probe_rules(db, q, c->clock, 0, &v->rule);
    v->wdl = v->rule.wdl;
    v->cat = v->rule.category;
    v->dist = v->rule.plies;
    return s;
}

/* A position found during a walk, kept until the walk ends (then shown with FEN and line). */
typedef struct found {
    dtb_pos pos;
    value v;
    int key; /* ranking: higher is worse (kept first) */
} found;

typedef struct walk {
    dtb_db *db;
    const dtb_board *b;
    const dtb_claim *c;
    const dtb_claim_eval_options *o;
    dtb_claim_result *r;
    dtb_bb allowed[4]; /* groups: white kings, white men, black kings, black men */
    int count[4];
    dtb_pos except[64]; /* the claim's exceptions, for leaving them out of the assertion */
    value except_value[64];
    bool except_seen[64];
    int nexcept;
    bool rank_by_dtw;   /* keep the longest counterexamples rather than the first */
    found *ex;
    int nex;
    found longest;
    uint64_t placements, total;
    dtb_status status;
    char message[DTB_MESSAGE_SIZE];
} walk;

static bool passes_position_filters(const walk *w, const dtb_pos *p)
{
    for (int i = 0; i < w->c->nfilters; i++) {
        const dtb_claim_filter *f = &w->c->filters[i];
        if (f->kind == DTB_FILTER_SOME) {
            const int c = f->who == DTB_WHO_WHITE ? DTB_WHITE : DTB_BLACK;
            const dtb_bb mine = ((f->pieces & DTB_PIECE_KINGS) ? p->kings[c] : 0) |
                                ((f->pieces & DTB_PIECE_MEN) ? p->men[c] : 0);
            if (!(mine & ((dtb_bb)f->squares[1] << 64 | f->squares[0])))
                return false;
            continue;
        }
        if (f->kind != DTB_FILTER_CAPTURE && f->kind != DTB_FILTER_NO_CAPTURE)
            continue;
        dtb_pos q = *p;
        switch (f->who) {
        case DTB_WHO_WHITE: q.side = DTB_WHITE; break;
        case DTB_WHO_BLACK: q.side = DTB_BLACK; break;
        case DTB_WHO_MOVER: break;
        case DTB_WHO_OTHER: q.side = p->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE; break;
        }
        if (dtb_has_capture(w->b, &q) != (f->kind == DTB_FILTER_CAPTURE))
            return false;
    }
    return true;
}

/* Does value v (side to move `side`) contradict the claim's assertion? For bounds, *key ranks
 * it. */
static bool contradicts(const dtb_claim_assertion *a, int side, const value *v, int *key)
{
    const bool has = dtb_claim_outcome_has_rule(a->outcome, side, v->cat);
    const dtb_wdl wdl = v->wdl;
    const int dtw = v->dist;
    *key = 0;
    switch (a->quant) {
    case DTB_QUANT_IS:
    case DTB_QUANT_ALL:
        if (!has) {
            *key = INT_MAX;
            return true;
        }
        *key = dtw;
        return a->bound_plies >= 0 && dtw > a->bound_plies;
    case DTB_QUANT_NONE:
    case DTB_QUANT_AT_MOST:
    case DTB_QUANT_EXACTLY: return has;
    case DTB_QUANT_AT_LEAST: return !has;
    case DTB_QUANT_LONGEST_WIN:
        *key = dtw;
        return wdl != DTB_DRAW && dtw > a->bound_plies;
    }
    return false;
}

static void keep_example(walk *w, const dtb_pos *p, const value *v, int key)
{
    const int cap = w->o->max_examples;
    if (cap <= 0)
        return;
    if (w->nex == cap) {
        /* full: replace the least bad only when ranking by DTW and this one is worse */
        if (!w->rank_by_dtw || w->ex[cap - 1].key >= key)
            return;
        w->nex--;
    }
    int i = w->nex++;
    for (; i > 0 && w->rank_by_dtw && w->ex[i - 1].key < key; i--)
        w->ex[i] = w->ex[i - 1];
    w->ex[i] = (found){*p, *v, key};
}

/* One matching position: probe it, count it, check it. False to stop the walk. */
static bool visit(walk *w, const dtb_pos *p)
{
    if (!passes_position_filters(w, p))
        return true;
    const dtb_position q = public_of(p);
    value v;
    const dtb_status s = probe_value(w->db, w->c, &q, &v);
    if (s != DTB_OK) {
        w->status = s;
        dtb_last_error(w->db, w->message, sizeof w->message);
        return false;
    }
    dtb_claim_result *r = w->r;
    r->matched++;
    r->counts[q.side][v.wdl + 1]++;
    if (w->c->clock >= 0)
        r->categories[q.side][v.cat + 2]++;
    if (v.wdl != DTB_DRAW && v.dist > r->longest) {
        r->longest = v.dist;
        w->longest = (found){*p, v, v.dist};
    }
    for (int i = 0; i < w->nexcept; i++)
        if (dtb_pos_equal(&w->except[i], p)) {
            w->except_seen[i] = true;
            return true;
        }
    int key;
    if (contradicts(&w->c->assertion, q.side, &v, &key)) {
        r->ncounter++;
        keep_example(w, p, &v, key);
    }
    return true;
}

static bool placed(walk *w, dtb_pos *p)
{
    if (++w->placements % 65536 == 0 && w->o->progress &&
        !w->o->progress(w->o->user, w->placements, w->total)) {
        w->status = DTB_E_ABORTED;
        snprintf(w->message, sizeof w->message, "stopped");
        return false;
    }
    const dtb_claim_side side = w->c->side;
    if (side != DTB_CLAIM_SIDE_BLACK) {
        p->side = DTB_WHITE;
        if (!visit(w, p))
            return false;
    }
    if (side != DTB_CLAIM_SIDE_WHITE) {
        p->side = DTB_BLACK;
        if (!visit(w, p))
            return false;
    }
    return true;
}

static dtb_bb *group_set(dtb_pos *p, int g)
{
    return g == 0 ? &p->kings[DTB_WHITE] : g == 1 ? &p->men[DTB_WHITE] : g == 2 ? &p->kings[DTB_BLACK] : &p->men[DTB_BLACK];
}

/* Places the remaining `left` pieces of group g on squares of `from` (lowest first), then the
 * next groups. False when the walk stopped. */
static bool place(walk *w, dtb_pos *p, int g, int left, dtb_bb from)
{
    if (left == 0) {
        if (g == 3)
            return placed(w, p);
        const int n = g + 1;
        return place(w, p, n, w->count[n], w->allowed[n] & ~dtb_pos_occupied(p));
    }
    dtb_bb *set = group_set(p, g);
    while (dtb_bb_count(from) >= left) {
        const int sq = dtb_bb_pop(&from);
        if (dtb_pos_occupied(p) & dtb_bb_bit(sq))
            continue;
        *set |= dtb_bb_bit(sq);
        const bool go_on = place(w, p, g, left - 1, from);
        *set &= ~dtb_bb_bit(sq);
        if (!go_on)
            return false;
    }
    return true;
}

static uint64_t binomial(int n, int k)
{
    if (k < 0 || k > n)
        return 0;
    uint64_t r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    return r;
}

/* Fills out with position p of value v, probing its DTW too when v is under the rules. A table
 * missing for the DTW or the line is reported in *data (and msg) once. */
static dtb_status fill_position(dtb_db *db, const dtb_claim *c, const dtb_pos *p, const value *v,
                                bool lines, dtb_claim_position *out, dtb_status *data, char *msg,
                                size_t size)
{
    const dtb_position q = public_of(p);
    out->wdl = v->wdl;
    out->dtw = v->wdl == DTB_DRAW ? 0 : v->dist;
    out->line = NULL;
    out->ruled = c->clock >= 0;
    if (out->ruled) {
        out->rule = v->rule;
        const dtb_status s = dtb_probe_dtw(db, &q, 0, &out->wdl, &out->dtw);
        if (s != DTB_OK) {
            out->wdl = v->rule.unlimited;
            out->dtw = 0;
            if (*data == DTB_OK) {
                *data = s;
                dtb_last_error(db, msg, size);
            }
            lines = false;
        }
    }
    if (dtb_position_to_fen(db, &q, out->fen, sizeof out->fen) != DTB_OK)
        snprintf(out->fen, sizeof out->fen, "?");
    if (!lines)
        return DTB_OK;
    dtb_pdn_move *moves = malloc(DTB_MAX_LINE * sizeof *moves);
    if (!moves)
        return DTB_E_NOMEM;
    int n = 0;
    const dtb_status s = dtb_probe_line(db, &q, 0, moves, DTB_MAX_LINE, &n);
    if (s != DTB_OK) {
        /* the value is known; a line that cannot be followed (a table missing deeper down) is a
         * data problem for the report, not a reason to lose the position */
        if (*data == DTB_OK) {
            *data = s;
            dtb_last_error(db, msg, size);
        }
        n = 0;
    }
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(moves[i].text) + 1;
    out->line = malloc(len);
    if (!out->line) {
        free(moves);
        return DTB_E_NOMEM;
    }
    out->line[0] = '\0';
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)sprintf(out->line + k, "%s%s", i ? " " : "", moves[i].text);
    free(moves);
    return DTB_OK;
}

static void set_reason(dtb_claim_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_reason(dtb_claim_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

static uint64_t outcome_count(const dtb_claim *c, const dtb_claim_result *r, dtb_claim_outcome o)
{
    uint64_t n = 0;
    for (int side = 0; side < 2; side++) {
        if (c->clock >= 0) {
            for (int k = DTB_RULE_LOSS; k <= DTB_RULE_WIN; k++)
                if (dtb_claim_outcome_has_rule(o, side, (dtb_rule_category)k))
                    n += r->categories[side][k + 2];
            continue;
        }
        for (int v = -1; v <= 1; v++)
            if (dtb_claim_outcome_has(o, side, (dtb_wdl)v))
                n += r->counts[side][v + 1];
    }
    return n;
}

/* "a win", "a white win", ... for reasons. */
static const char *outcome_phrase(dtb_claim_outcome o)
{
    static const char *p[] = {"a win",       "a draw",       "a loss",         "a white win",
                              "a black win", "a cursed win", "a blessed loss"};
    return (unsigned)o < sizeof p / sizeof p[0] ? p[o] : "?";
}

static const char *wdl_word(dtb_wdl v) { return v == DTB_WIN ? "win" : v == DTB_LOSS ? "loss" : "draw"; }

static dtb_status evaluate_position(dtb_db *db, const dtb_claim *c, const dtb_claim_eval_options *o,
                                    dtb_claim_result *r)
{
    dtb_position q;
    char msg[DTB_MESSAGE_SIZE];
    if (dtb_position_from_fen(db, c->fen, &q, msg, sizeof msg) != DTB_OK) {
        r->verdict = DTB_CLAIM_FAILS;
        set_reason(r, "the position cannot be read: %s", msg);
        return DTB_OK;
    }
    value v;
    dtb_status s = probe_value(db, c, &q, &v);
    if (s != DTB_OK) {
        r->verdict = DTB_CLAIM_NODATA;
        r->status = s;
        dtb_last_error(db, r->reason, sizeof r->reason);
        return s == DTB_E_NOMEM ? s : DTB_OK;
    }
    const dtb_wdl wdl = v.wdl;
    const int dtw = v.dist;
    r->matched = 1;
    r->counts[q.side][wdl + 1] = 1;
    if (c->clock >= 0)
        r->categories[q.side][v.cat + 2] = 1;
    r->longest = wdl == DTB_DRAW ? -1 : dtw;
    int key;
    r->ncounter = contradicts(&c->assertion, q.side, &v, &key) ? 1 : 0;
    dtb_pos p;
    for (int k = 0; k < 2; k++) {
        p.men[k] = (dtb_bb)q.men[k][1] << 64 | q.men[k][0];
        p.kings[k] = (dtb_bb)q.kings[k][1] << 64 | q.kings[k][0];
    }
    p.side = q.side == DTB_SIDE_WHITE ? DTB_WHITE : DTB_BLACK;
    dtb_status data = DTB_OK;
    if ((s = fill_position(db, c, &p, &v, o->lines, &r->subject, &data, r->reason, sizeof r->reason)) != DTB_OK)
        return s;
    if (data != DTB_OK) {
        r->verdict = DTB_CLAIM_NODATA;
        r->status = data;
        return DTB_OK;
    }
    if (r->ncounter == 0) {
        r->verdict = DTB_CLAIM_HOLDS;
    } else {
        r->verdict = DTB_CLAIM_FAILS;
        const char *side = q.side == DTB_SIDE_WHITE ? "white" : "black";
        if (c->clock >= 0 && dtb_claim_outcome_has_rule(c->assertion.outcome, q.side, v.cat))
            set_reason(r, "it is a %s at a rule distance of %d plies, beyond %d", wdl_word(wdl), dtw,
                       c->assertion.bound_plies);
        else if (c->clock >= 0)
            set_reason(r, "it is a %s for %s (to move)", dtb_rule_category_name(v.cat), side);
        else if (dtb_claim_outcome_has(c->assertion.outcome, q.side, wdl))
            set_reason(r, "it is a %s in %d plies, beyond %d", wdl_word(wdl), dtw, c->assertion.bound_plies);
        else if (wdl == DTB_DRAW)
            set_reason(r, "it is a draw");
        else
            set_reason(r, "it is a %s for %s (to move) in %d plies", wdl_word(wdl), side, dtw);
    }
    return DTB_OK;
}

/* The verdict of a finished walk of a material claim. */
static void judge(const walk *w, const dtb_claim *c, dtb_claim_result *r)
{
    const dtb_claim_assertion *a = &c->assertion;
    const char *o = outcome_phrase(a->outcome);
    r->verdict = DTB_CLAIM_FAILS;
    if (r->matched == 0) {
        set_reason(r, "no position matches the filters");
        return;
    }
    for (int i = 0; i < r->nexceptions; i++) {
        const dtb_claim_position *x = &r->exceptions[i];
        if (!w->except_seen[i]) {
            set_reason(r, "exception %s does not match the filters", x->fen);
            return;
        }
        int key;
        const value *xv = &w->except_value[i];
        if (!contradicts(a, w->except[i].side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK, xv, &key)) {
            set_reason(r, "exception %s is no exception (a %s)", x->fen,
                       c->clock >= 0 ? dtb_rule_category_name(xv->cat) : wdl_word(x->wdl));
            return;
        }
    }
    const uint64_t has = outcome_count(c, r, a->outcome);
    const double frac = (double)has / (double)r->matched;
    switch (a->quant) {
    case DTB_QUANT_IS:
    case DTB_QUANT_ALL:
        if (r->ncounter) {
            if (a->bound_plies >= 0)
                set_reason(r, "%llu of %llu positions are not %s within %d plies",
                           (unsigned long long)r->ncounter, (unsigned long long)r->matched, o, a->bound_plies);
            else
                set_reason(r, "%llu of %llu positions are not %s", (unsigned long long)r->ncounter,
                           (unsigned long long)r->matched, o);
            return;
        }
        break;
    case DTB_QUANT_NONE:
        if (r->ncounter) {
            set_reason(r, "%llu of %llu positions are %s", (unsigned long long)r->ncounter,
                       (unsigned long long)r->matched, o);
            return;
        }
        break;
    case DTB_QUANT_AT_LEAST:
    case DTB_QUANT_AT_MOST:
        /* compare has/matched with the fraction without rounding surprises at equality */
        if (a->quant == DTB_QUANT_AT_LEAST ? (double)has < a->fraction * (double)r->matched * (1 - 1e-12)
                                           : (double)has > a->fraction * (double)r->matched * (1 + 1e-12)) {
            set_reason(r, "%.4f%% of %llu positions are %s (%llu), %s %g%%", 100 * frac,
                       (unsigned long long)r->matched, o, (unsigned long long)has,
                       a->quant == DTB_QUANT_AT_LEAST ? "below" : "above", 100 * a->fraction);
            return;
        }
        break;
    case DTB_QUANT_EXACTLY:
        if (r->ncounter != a->count) {
            set_reason(r, "%llu of %llu positions are %s, not %llu", (unsigned long long)r->ncounter,
                       (unsigned long long)r->matched, o, (unsigned long long)a->count);
            return;
        }
        break;
    case DTB_QUANT_LONGEST_WIN:
        if (a->exact ? r->longest != a->bound_plies : r->longest > a->bound_plies) {
            if (r->longest < 0)
                set_reason(r, "no position is won or lost");
            else
                set_reason(r, "the longest win takes %d plies, %s %d", r->longest,
                           r->longest > a->bound_plies ? "more than" : "not", a->bound_plies);
            return;
        }
        break;
    }
    r->verdict = DTB_CLAIM_HOLDS;
}

static dtb_status evaluate_material(dtb_db *db, const dtb_claim *c, const dtb_claim_eval_options *o,
                                    dtb_claim_result *r)
{
    const dtb_variant *v = dtb_variant_find(c->variant);
    dtb_board board;
    dtb_board_init(&board, v);
    dtb_material m;
    if (dtb_material_parse(c->material, &m, NULL) != DTB_OK)
        return DTB_E_INVALID;
    walk *w = calloc(1, sizeof *w);
    if (!w)
        return DTB_E_NOMEM;
    *w = (walk){.db = db, .b = &board, .c = c, .o = o, .r = r};
    w->count[0] = m.kings[DTB_WHITE];
    w->count[1] = m.men[DTB_WHITE];
    w->count[2] = m.kings[DTB_BLACK];
    w->count[3] = m.men[DTB_BLACK];
    for (int g = 0; g < 4; g++) {
        const int colour = g < 2 ? DTB_SIDE_WHITE : DTB_SIDE_BLACK;
        const int kind = g % 2 == 0 ? DTB_PIECE_KINGS : DTB_PIECE_MEN;
        dtb_bb a = board.all;
        if (kind == DTB_PIECE_MEN)
            a &= ~board.promotion[colour];
        for (int i = 0; i < c->nfilters; i++) {
            const dtb_claim_filter *f = &c->filters[i];
            if ((f->kind != DTB_FILTER_ON && f->kind != DTB_FILTER_OFF) || (int)f->who != colour ||
                !(f->pieces & kind))
                continue;
            const dtb_bb s = (dtb_bb)f->squares[1] << 64 | f->squares[0];
            a = f->kind == DTB_FILTER_ON ? a & s : a & ~s;
        }
        w->allowed[g] = a;
    }
    /* placements (an upper bound: groups may compete for squares), for progress reports */
    w->total = 1;
    for (int g = 0; g < 4; g++)
        w->total *= binomial(dtb_bb_count(w->allowed[g]), w->count[g]);
    w->rank_by_dtw = c->assertion.quant == DTB_QUANT_LONGEST_WIN ||
                     (c->assertion.quant == DTB_QUANT_ALL && c->assertion.bound_plies >= 0);
    r->longest = -1;
    dtb_status s = DTB_OK;
    if (o->max_examples > 0 && !(w->ex = calloc((size_t)o->max_examples, sizeof *w->ex)))
        s = DTB_E_NOMEM;
    /* exceptions: read now, so that the walk can leave them out of the assertion */
    if (s == DTB_OK && c->nexcept > 0) {
        if (c->nexcept > (int)(sizeof w->except / sizeof w->except[0]))
            s = DTB_E_RANGE;
        else if (!(r->exceptions = calloc((size_t)c->nexcept, sizeof *r->exceptions)))
            s = DTB_E_NOMEM;
        for (int i = 0; s == DTB_OK && i < c->nexcept; i++) {
            dtb_error e = {{0}};
            if (dtb_fen_read(&board, c->except_fens[i], &w->except[i], &e) != DTB_OK)
                s = DTB_E_INVALID; /* read at load time already */
            w->nexcept = i + 1;
        }
    }
    dtb_pos p = {{0}, {0}, DTB_WHITE};
    if (s == DTB_OK) {
        place(w, &p, 0, w->count[0], w->allowed[0]);
        if (w->status == DTB_E_ABORTED || w->status == DTB_E_NOMEM)
            s = w->status;
    }
    dtb_status data = w->status;
    char *msg = w->message;
    /* the positions to show: longest win, exceptions (probed here, whether or not they matched),
     * counterexamples */
    if (s == DTB_OK && data == DTB_OK && r->longest >= 0)
        s = fill_position(db, c, &w->longest.pos, &w->longest.v, o->lines, &r->longest_pos, &data,
                          msg, sizeof w->message);
    for (int i = 0; s == DTB_OK && data == DTB_OK && i < w->nexcept; i++) {
        const dtb_position q = public_of(&w->except[i]);
        if ((data = probe_value(db, c, &q, &w->except_value[i])) != DTB_OK) {
            dtb_last_error(db, msg, sizeof w->message);
            break;
        }
        s = fill_position(db, c, &w->except[i], &w->except_value[i], o->lines, &r->exceptions[i],
                          &data, msg, sizeof w->message);
        r->nexceptions = i + 1;
    }
    if (s == DTB_OK && data == DTB_OK && w->nex > 0) {
        if (!(r->examples = calloc((size_t)w->nex, sizeof *r->examples)))
            s = DTB_E_NOMEM;
        for (int i = 0; s == DTB_OK && data == DTB_OK && i < w->nex; i++) {
            s = fill_position(db, c, &w->ex[i].pos, &w->ex[i].v, o->lines, &r->examples[i], &data,
                              msg, sizeof w->message);
            r->nexamples = i + 1;
        }
    }
    if (s == DTB_OK) {
        if (data != DTB_OK) {
            r->verdict = DTB_CLAIM_NODATA;
            r->status = data;
            snprintf(r->reason, sizeof r->reason, "%s", msg[0] ? msg : dtb_strerror(data));
        } else {
            judge(w, c, r);
        }
    }
    free(w->ex);
    free(w);
    return s;
}

dtb_status dtb_claim_evaluate(dtb_db *db, const dtb_claim *c, const dtb_claim_eval_options *o,
                              dtb_claim_result *r)
{
    static const dtb_claim_eval_options defaults = {.max_examples = 5, .lines = true};
    memset(r, 0, sizeof *r);
    r->longest = -1;
    if (!o)
        o = &defaults;
    if (strcmp(dtb_db_variant(db), c->variant) != 0) {
        r->verdict = DTB_CLAIM_NODATA;
        r->status = DTB_E_MISMATCH;
        set_reason(r, "the tables are %s, the claim is about %s", dtb_db_variant(db), c->variant);
        return DTB_E_MISMATCH;
    }
    const dtb_status s = c->kind == DTB_CLAIM_POSITION ? evaluate_position(db, c, o, r)
                                                       : evaluate_material(db, c, o, r);
    if (r->verdict == DTB_CLAIM_FAILS && c->clock >= 0) {
        const size_t n = strlen(r->reason);
        snprintf(r->reason + n, sizeof r->reason - n, " (under %s, clock %d)", c->rules, c->clock);
    }
    return s;
}
