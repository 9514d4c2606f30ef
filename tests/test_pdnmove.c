/* PDN move text: every move list of the FMJD rule-book positions written and read back exactly,
 * quiet moves of every start position, captures that need their landing squares (a king and an
 * english man with two captures between the same squares), one move with two routes, promotion
 * in passing, and one test per kind of bad text. Expected texts come from tests/data or were
 * worked out by hand on the board (and checked with an independent brute-force search). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

#include "fen.h"
#include "pdnmove.h"

/* Square set from a list of PDN squares ending in 0. */
static dtb_bb squares(int first, ...)
{
    dtb_bb s = 0;
    va_list ap;
    va_start(ap, first);
    for (int q = first; q != 0; q = va_arg(ap, int))
        s |= dtb_bb_bit(q - 1);
    va_end(ap);
    return s;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes every legal move of fen and compares the sorted texts with the space-separated list
 * `want`; then reads every text back and checks it names the move it was written from. */
static void expect_move_texts(const char *variant, const char *fen, const char *want)
{
    const dtb_board b = board_of(variant);
    const dtb_pos p = pos_of(&b, fen);
    static dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);

    static char written[DTB_MAX_MOVES][DTB_MOVE_TEXT_MAX];
    static const char *got[DTB_MAX_MOVES];
    for (int i = 0; i < list.count; i++) {
        assert_int_equal(dtb_move_write(&b, &p, &list.moves[i], written[i], DTB_MOVE_TEXT_MAX),
                         DTB_OK);
        got[i] = written[i];
        dtb_move m;
        dtb_error e = {{0}};
        if (dtb_move_read(&b, &p, written[i], &m, &e) != DTB_OK)
            fail_msg("%s: reading back \"%s\": %s", fen, written[i], e.msg);
        assert_true(m.from == list.moves[i].from && m.to == list.moves[i].to &&
                    m.captured == list.moves[i].captured &&
                    m.promotes == list.moves[i].promotes);
    }
    qsort(got, (size_t)list.count, sizeof got[0], compare_strings);

    char buf[4096];
    snprintf(buf, sizeof buf, "%s", want);
    const char *expected[DTB_MAX_MOVES];
    int n = 0;
    for (char *tok = strtok(buf, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
        expected[n++] = tok;
    qsort(expected, (size_t)n, sizeof expected[0], compare_strings);

    if (n != list.count)
        fail_msg("%s: %d moves written, %d expected", fen, list.count, n);
    for (int i = 0; i < n; i++)
        if (strcmp(expected[i], got[i]) != 0)
            fail_msg("%s: wrote \"%s\", expected \"%s\"", fen, got[i], expected[i]);
}

/* Reads text on fen; expects the move (from, to, captured set, promotion). */
static void expect_read(const char *variant, const char *fen, const char *text, int from, int to,
                        dtb_bb captured, bool promotes)
{
    const dtb_board b = board_of(variant);
    const dtb_pos p = pos_of(&b, fen);
    dtb_move m;
    dtb_error e = {{0}};
    if (dtb_move_read(&b, &p, text, &m, &e) != DTB_OK)
        fail_msg("%s: \"%s\" rejected: %s", fen, text, e.msg);
    assert_int_equal(m.from, from - 1);
    assert_int_equal(m.to, to - 1);
    assert_true(m.captured == captured);
    assert_int_equal(m.ncaptured, dtb_bb_count(captured));
    assert_int_equal(m.promotes, promotes);
}

/* Reads text on fen; expects DTB_E_INVALID and a one-line message containing every word given. */
static void expect_error(const char *variant, const char *fen, const char *text, ...)
{
    const dtb_board b = board_of(variant);
    const dtb_pos p = pos_of(&b, fen);
    dtb_move m;
    dtb_error e = {{0}};
    const dtb_status st = dtb_move_read(&b, &p, text, &m, &e);
    if (st != DTB_E_INVALID)
        fail_msg("%s: \"%s\" accepted (status %d)", fen, text ? text : "(null)", (int)st);
    va_list ap;
    va_start(ap, text);
    expect_message(text, &e, ap);
    va_end(ap);
}

/* ---- writing and reading legal moves ------------------------------------------------------ */

static void test_rulebook_positions(void **state)
{
    (void)state;
    FILE *f = fopen(DTB_TEST_DATA "/rulebook-moves.txt", "r");
    assert_non_null(f);
    char line[1024];
    int positions = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *bar1 = strchr(line, '|');
        char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
        assert_non_null(bar2);
        *bar1 = '\0';
        expect_move_texts("international", line, bar2 + 1);
        positions++;
    }
    fclose(f);
    assert_int_equal(positions, 19);
}

static void test_start_positions(void **state)
{
    (void)state;
    /* worked out on the board: the front row's men step to the squares in front of them */
    expect_move_texts("international", "W:W31-50:B1-20",
                      "31-26 31-27 32-27 32-28 33-28 33-29 34-29 34-30 35-30");
    expect_move_texts("international", "B:W31-50:B1-20",
                      "16-21 17-21 17-22 18-22 18-23 19-23 19-24 20-24 20-25");
    expect_move_texts("russian", "W:W21-32:B1-12", "21-17 22-17 22-18 23-18 23-19 24-19 24-20");
    expect_move_texts("brazilian", "B:W21-32:B1-12", "9-13 9-14 10-14 10-15 11-15 11-16 12-16");
    expect_move_texts("english", "B:W21-32:B1-12", "9-13 9-14 10-14 10-15 11-15 11-16 12-16");
    expect_move_texts("canadian", "W:W43-72:B1-30",
                      "43-37 44-37 44-38 45-38 45-39 46-39 46-40 47-40 47-41 48-41 48-42");
}

static void test_ambiguous_king_capture(void **state)
{
    (void)state;
    /* White king 11 takes 17, then either 27 (landing 22) and 42 (landing 31), or 32 (landing
     * 28) and 42 (landing 37): two moves 11x48 with different captured sets. */
    const char *fen = "W:WK11:B2,17,27,32,42";
    expect_move_texts("international", fen, "11x22x31x48 11x28x37x48");
    expect_read("international", fen, "11x22x31x48", 11, 48, squares(17, 27, 42, 0), false);
    expect_read("international", fen, "11x28x37x48", 11, 48, squares(17, 32, 42, 0), false);
    expect_read("international", fen, "11:28:37:48", 11, 48, squares(17, 32, 42, 0), false);
    expect_read("international", fen, " 11 X 22 x 31 : 48 ", 11, 48, squares(17, 27, 42, 0),
                false);
    expect_error("international", fen, "11x48", "ambiguous", "11x22x31x48", "11x28x37x48",
                 NULL);
    expect_error("international", fen, "11:48", "ambiguous", NULL);
    /* a route that is not one: 33 is beyond 17 but no piece can be taken from there */
    expect_error("international", fen, "11x33x48", "no legal move 11x33x48", NULL);
    /* a real route that stops short of the majority */
    expect_error("international", fen, "11x22x31", "no legal move 11x22x31", NULL);
}

static void test_ambiguous_man_capture(void **state)
{
    (void)state;
    /* English white man 30 takes 25 and 17 (landing 21) or 26 and 18 (landing 23), both ending
     * on 14; men capture forward only, so the diamond cannot close. */
    const char *fen = "W:W30:B17,18,25,26";
    expect_move_texts("english", fen, "30x21x14 30x23x14");
    expect_read("english", fen, "30x21x14", 30, 14, squares(17, 25, 0), false);
    expect_read("english", fen, "30x23x14", 30, 14, squares(18, 26, 0), false);
    expect_error("english", fen, "30x14", "ambiguous", "30x21x14 or 30x23x14", NULL);
    /* in russian the man captures backwards too, and the diamond closes into one move 30x30 */
    expect_move_texts("russian", fen, "30x30");
}

static void test_two_routes_one_move(void **state)
{
    (void)state;
    /* International man 32 goes round the diamond 27-17-18-28 either way and comes home: one
     * move (same start, end and captured set), written short, read by either route. */
    const char *fen = "W:W32:B17,18,27,28";
    const dtb_bb all4 = squares(17, 18, 27, 28, 0);
    expect_move_texts("international", fen, "32x32");
    expect_read("international", fen, "32x32", 32, 32, all4, false);
    expect_read("international", fen, "32x21x12x23x32", 32, 32, all4, false);
    expect_read("international", fen, "32x23x12x21x32", 32, 32, all4, false);
    /* a man does not fly: 32 to 12 over 27 and 17 in one leg is no route */
    expect_error("international", fen, "32x12x23x32", "no legal move", NULL);
}

static void test_promotion_in_passing(void **state)
{
    (void)state;
    /* Man 11 takes 7 landing on 2 (the far row). Russian: crowned at once, it flies on over 9 to
     * 13. Brazilian: still a man, it cannot take 9 and the move ends on 2, crowned. */
    const char *fen = "W:W11:B7,9";
    expect_move_texts("russian", fen, "11x13");
    expect_read("russian", fen, "11x2x13", 11, 13, squares(7, 9, 0), true);
    expect_read("russian", fen, "11x13", 11, 13, squares(7, 9, 0), true);
    expect_move_texts("brazilian", fen, "11x2");
    expect_read("brazilian", fen, "11x2", 11, 2, squares(7, 0), true);
    expect_error("brazilian", fen, "11x2x13", "no legal move 11x2x13", NULL);
}

/* Russian and brazilian moves in their players' notation (PDN GameType 25/26: squares named
 * from white's left and white's side, captures with ':'): written on request, read alongside
 * numbers. 11 = f6, 7 = e7, 2 = d8, 13 = a5, 22 = c3, 18 = d4, 17 = b4 on 8x8. */
static void test_algebraic_moves(void **state)
{
    (void)state;
    const dtb_board b = board_of("russian");
    const dtb_pos p = pos_of(&b, "W:W11:B7,9");
    dtb_move m;
    dtb_error e = {{0}};
    assert_int_equal(dtb_move_read(&b, &p, "11x13", &m, &e), DTB_OK);
    char text[DTB_MOVE_TEXT_MAX];
    assert_int_equal(dtb_move_write_in(&b, &p, &m, DTB_NOTATION_ALGEBRAIC, text, sizeof text), DTB_OK);
    assert_string_equal(text, "f6:d8:a5"); /* every landing, as russian players write it */
    assert_int_equal(dtb_move_write_in(&b, &p, &m, DTB_NOTATION_NUMERIC, text, sizeof text), DTB_OK);
    assert_string_equal(text, "11x13");
    expect_read("russian", "W:W11:B7,9", "f6:a5", 11, 13, squares(7, 9, 0), true);
    expect_read("russian", "W:W11:B7,9", "f6:d8:a5", 11, 13, squares(7, 9, 0), true);
    expect_read("russian", "W:W11:B7,9", "f6xa5", 11, 13, squares(7, 9, 0), true);
    expect_read("russian", "W:W11:B7,9", "f6:2:a5", 11, 13, squares(7, 9, 0), true); /* mixed */
    expect_read("russian", "W:W22:B4", "c3-d4", 22, 18, 0, false);
    expect_read("brazilian", "W:W22:B4", "c3-b4", 22, 17, 0, false);
    const dtb_pos q = pos_of(&b, "W:W22:B4");
    assert_int_equal(dtb_move_read(&b, &q, "22-18", &m, &e), DTB_OK);
    assert_int_equal(dtb_move_write_in(&b, &q, &m, DTB_NOTATION_ALGEBRAIC, text, sizeof text), DTB_OK);
    assert_string_equal(text, "c3-d4");
    /* A name that is no square, on a light square, or in a variant of numbers: named. */
    expect_error("russian", "W:W22:B4", "i9-d4", "'i9'", "not a square", NULL);
    expect_error("russian", "W:W22:B4", "c3-a8", "'a8'", "light square", NULL);
    expect_error("brazilian", "W:W22:B4", "c3-d5", "'d5'", "light square", NULL);
    expect_error("international", "W:W32:B4", "c3-d4", "'c3'", "international squares are numbers", NULL);
    expect_error("english", "W:W22:B4", "c3-d4", "'c3'", "english squares are numbers", NULL);
    /* A move that is not legal is echoed in the notation it was typed in. */
    expect_error("russian", "W:W11:B7,9", "f6:b4", "no legal move f6:b4", NULL);
}

static void test_black_to_move_and_kings(void **state)
{
    (void)state;
    /* from the rule book: a king blocked by the pieces it takes */
    expect_read("international", "B:W27,28,38,39,42:BK25", "25x33", 25, 33,
                squares(27, 28, 39, 42, 0), false);
    expect_read("international", "B:W27,28,38,39,42:BK25", "25x48x31x22x33", 25, 33,
                squares(27, 28, 39, 42, 0), false);
    /* 38 is in the way of the last leg only once taken pieces stay on the board */
    expect_error("international", "B:W27,28,38,39,42:BK25", "25x43x32x23", "no legal move",
                 NULL);
    expect_read("international", "W:WK28", "28-50", 28, 50, 0, false);
    expect_read("international", "B:BK1:W50", "1-45", 1, 45, 0, false);
    expect_read("international", "W:W7:B40", "7-1", 7, 1, 0, true);
}

static void test_write_errors(void **state)
{
    (void)state;
    const dtb_board b = board_of("international");
    const dtb_pos p = pos_of(&b, "W:WK11:B2,17,27,32,42");
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    char buf[DTB_MOVE_TEXT_MAX];
    /* "11x22x31x48" or "11x28x37x48": 11 characters need 12 bytes */
    assert_int_equal(dtb_move_write(&b, &p, &list.moves[0], buf, 12), DTB_OK);
    assert_int_equal(strlen(buf), 11);
    assert_int_equal(dtb_move_write(&b, &p, &list.moves[0], buf, 11), DTB_E_OVERFLOW);
    assert_int_equal(strlen(buf), 10);
    assert_int_equal(dtb_move_write(&b, &p, &list.moves[0], buf, 0), DTB_E_OVERFLOW);
    /* not a legal move of p: a quiet king move while a capture is compulsory, a wrong set */
    dtb_move quiet = {.from = 10, .to = 5};
    assert_int_equal(dtb_move_write(&b, &p, &quiet, buf, sizeof buf), DTB_E_INVALID);
    dtb_move wrong = list.moves[0];
    wrong.captured |= dtb_bb_bit(1);
    assert_int_equal(dtb_move_write(&b, &p, &wrong, buf, sizeof buf), DTB_E_INVALID);
}

/* ---- bad text ------------------------------------------------------------------------------ */

static void test_malformed(void **state)
{
    (void)state;
    const char *start = "W:W31-50:B1-20";
    expect_error("international", start, "", "empty", NULL);
    expect_error("international", start, "   ", "empty", NULL);
    expect_error("international", start, NULL, "empty", NULL);
    expect_error("international", start, "32", "start and an end", NULL);
    expect_error("international", start, "32-", "ends without a square", NULL);
    expect_error("international", start, "-28", "stray", "'-'", "column 1", NULL);
    expect_error("international", start, "32--28", "stray", "'-'", "column 4", NULL);
    expect_error("international", start, "32-28-23", "only captures", NULL);
    expect_error("international", start, "28x19-8", "mixes", NULL);
    expect_error("international", start, "32-28x", "mixes", NULL);
    expect_error("international", start, "32 28", "stray", "'2'", "column 4", NULL);
    expect_error("international", start, "32-28!", "stray", "'!'", "column 6", NULL);
    expect_error("international", start, "a-b", "stray", "'a'", NULL);
    expect_error("international", start, "32\x01-28", "stray", "0x01", NULL);
    expect_error("international", start, "0-5", "square 0", "1-50", NULL);
    expect_error("international", start, "32-51", "square 51", "1-50", NULL);
    expect_error("english", "B:W21-32:B1-12", "9-33", "square 33", "1-32", NULL);
    expect_error("international", start, "99999999999999999999999999-1", "square 9999", "...",
                 NULL);
    expect_error("international", start, "1x2x3x4x5x6x7x8x9x10x11x12x13x14x15x16x17x18x19x20x21x"
                 "22x23x24x25x26x27x28x29x30x31x32x33x34x35x36x37x38x39x40x41x42",
                 "more than", NULL);
}

static void test_no_such_move(void **state)
{
    (void)state;
    const char *start = "W:W31-50:B1-20";
    expect_error("international", start, "36-31", "no legal move 36-31", NULL);
    expect_error("international", start, "32-26", "no legal move 32-26", NULL);
    expect_error("international", start, "32x28", "no legal move 32x28", "no capture", NULL);
    expect_error("international", start, "17-21", "no legal move 17-21", NULL); /* black's man */
    /* a capture is compulsory */
    expect_error("international", "W:W28,32:B23", "32-27", "no legal move 32-27", "compulsory",
                 NULL);
    expect_error("international", "W:W28,32:B23", "28-22", "compulsory", NULL);
    /* the majority rule: taking one piece when two can be taken */
    expect_error("international", "W:W26:B12,K21,31,32", "26x17", "no legal move 26x17", NULL);
    /* ':' is read like 'x' and echoed as 'x' */
    expect_error("international", "W:W28,32:B23", "28:17", "no legal move 28x17", NULL);
    expect_read("international", "W:W28,32:B23", "28:19", 28, 19, squares(23, 0), false);
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* The texts of legal moves with random edits (fixed seed), on a position with ambiguous captures
 * and on one without captures: every outcome is OK (and then the move writes to a text that
 * reads back to the same move) or DTB_E_INVALID with a message. */
static void test_fuzz(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789x-: X1234\x80";
    const dtb_board b = board_of("international");
    const dtb_pos ps[2] = {pos_of(&b, "W:WK11:B2,17,27,32,42"), pos_of(&b, "W:W31-50:B1-20")};
    static const char *const seeds[2][3] = {{"11x22x31x48", "11x28x37x48", "11x48"},
                                            {"31-26", "35-30", "33-29"}};
    uint64_t x = 0x243F6A8885A308D3ull;
    int accepted = 0, rejected = 0;
    for (int n = 0; n < 20000; n++) {
        char text[32];
        snprintf(text, sizeof text, "%s", seeds[n % 2][xorshift(&x) % 3]);
        for (int edits = (int)(xorshift(&x) % 3); edits > 0; edits--) {
            const size_t len = strlen(text);
            const size_t at = xorshift(&x) % (len + 1);
            const char c = alphabet[xorshift(&x) % (sizeof alphabet - 1)];
            switch (xorshift(&x) % 3) {
            case 0:
                if (at < len)
                    text[at] = c;
                break;
            case 1:
                if (len + 2 < sizeof text) {
                    memmove(text + at + 1, text + at, len - at + 1);
                    text[at] = c;
                }
                break;
            default:
                if (at < len)
                    memmove(text + at, text + at + 1, len - at);
            }
        }
        const dtb_pos *p = &ps[n % 2];
        dtb_move m, m2;
        dtb_error e = {{0}};
        const dtb_status st = dtb_move_read(&b, p, text, &m, &e);
        if (st != DTB_OK) {
            assert_int_equal(st, DTB_E_INVALID);
            assert_true(strlen(e.msg) > 0);
            rejected++;
            continue;
        }
        accepted++;
        char out[DTB_MOVE_TEXT_MAX];
        assert_int_equal(dtb_move_write(&b, p, &m, out, sizeof out), DTB_OK);
        assert_int_equal(dtb_move_read(&b, p, out, &m2, &e), DTB_OK);
        assert_true(m.from == m2.from && m.to == m2.to && m.captured == m2.captured &&
                    m.promotes == m2.promotes);
    }
    assert_true(accepted > 1000);
    assert_true(rejected > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rulebook_positions),
        cmocka_unit_test(test_start_positions),
        cmocka_unit_test(test_ambiguous_king_capture),
        cmocka_unit_test(test_ambiguous_man_capture),
        cmocka_unit_test(test_two_routes_one_move),
        cmocka_unit_test(test_promotion_in_passing),
        cmocka_unit_test(test_algebraic_moves),
        cmocka_unit_test(test_black_to_move_and_kings),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_no_such_move),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
