/* Helpers shared by the test programs (include after <cmocka.h>): a board by variant name, a
 * position from FEN that fails the test on bad input, and whitespace trimming for data files. */
#ifndef DTB_TEST_SUPPORT_H
#define DTB_TEST_SUPPORT_H

#include <stdarg.h>
#include <string.h>

#include "fen.h"

/* The board of a variant given by name; fails the test for an unknown name. */
static inline dtb_board board_of(const char *variant)
{
    const dtb_variant *v = dtb_variant_find(variant);
    assert_non_null(v);
    dtb_board b;
    dtb_board_init(&b, v);
    return b;
}

/* The position of a FEN the test knows to be good; fails the test with the reader's message. */
static inline dtb_pos pos_of(const dtb_board *b, const char *fen)
{
    dtb_pos p;
    dtb_error e = {{0}};
    if (dtb_fen_read(b, fen, &p, &e) != DTB_OK)
        fail_msg("bad FEN \"%s\": %s", fen, e.msg);
    return p;
}

/* s without leading spaces and trailing spaces or line ends (edits s in place). */
static inline char *trim(char *s)
{
    while (*s == ' ')
        s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* Checks that a rejection message is one non-empty line containing every word of the
 * NULL-terminated list ap; text is the rejected input, named in a failure. */
static inline void expect_message(const char *text, const dtb_error *e, va_list ap)
{
    assert_true(strlen(e->msg) > 0);
    assert_null(strchr(e->msg, '\n'));
    for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *))
        if (!strstr(e->msg, w))
            fail_msg("\"%s\": message \"%s\" lacks \"%s\"", text ? text : "(null)", e->msg, w);
}

#endif
