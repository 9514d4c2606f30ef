/* PDN FEN reading and writing: canonical round trips, non-canonical forms with their canonical
 * text written by hand, the range limits of every board, one test per class of bad input (status
 * and the words of the message), and a fuzz loop that must end in OK or a message, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"
#include "square_name.h"

#include "fen.h"

/* Reads text on variant's board, expecting success, and checks the canonical text written. */
static void expect_canonical(const char *variant, const char *text, const char *canonical)
{
    const dtb_board b = board_of(variant);
    dtb_pos p;
    dtb_error e = {{0}};
    const dtb_status st = dtb_fen_read(&b, text, &p, &e);
    if (st != DTB_OK)
        fail_msg("%s: \"%s\" rejected: %s", variant, text, e.msg);
    char out[DTB_FEN_MAX];
    assert_int_equal(dtb_fen_write(&b, &p, out, sizeof out), DTB_OK);
    assert_string_equal(out, canonical);
    /* The canonical text reads back to the same position. */
    dtb_pos q;
    assert_int_equal(dtb_fen_read(&b, out, &q, &e), DTB_OK);
    assert_true(dtb_pos_equal(&p, &q));
}

/* Reads text expecting DTB_E_INVALID with a one-line message containing every word given. */
static void expect_error(const char *variant, const char *text, ...)
{
    const dtb_board b = board_of(variant);
    dtb_pos p;
    dtb_error e = {{0}};
    const dtb_status st = dtb_fen_read(&b, text, &p, &e);
    if (st != DTB_E_INVALID)
        fail_msg("%s: \"%s\" accepted (status %d)", variant, text ? text : "(null)", (int)st);
    va_list ap;
    va_start(ap, text);
    expect_message(text, &e, ap);
    va_end(ap);
}

/* "lo,lo+1,...,hi" with an optional K before each: the expected text of a run of squares. */
static void run_text(char *out, size_t size, int lo, int hi, const char *prefix)
{
    size_t n = 0;
    out[0] = '\0';
    for (int s = lo; s <= hi; s++)
        n += (size_t)snprintf(out + n, size - n, "%s%s%d", s > lo ? "," : "", prefix, s);
}

/* ---- round trips ------------------------------------------------------------------------- */

static void test_canonical_round_trip(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "W:W31,32,K33:B1,2,K3",
        "B:W31,32,K33:B1,2,K3",
        "W:WK46:B23",
        "B:W27,28,38,39,42:BK25",
        "W:W31:B",
        "B:W:BK1",
        "W:W:B",
        "W:W6,K7,45,K50:BK1,5,43,K44",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        expect_canonical("international", texts[i], texts[i]);
}

static void test_non_canonical_forms(void **state)
{
    (void)state;
    /* ranges, kings in ranges, black section first, trailing dot */
    expect_canonical("international", "W:B1-3,K5:W31-33.", "W:W31,32,33:B1,2,3,K5");
    expect_canonical("international", "W:WK1-3:B10", "W:WK1,K2,K3:B10");
    expect_canonical("international", "B:W40,31,35-36:B20,K2", "B:W31,35,36,40:BK2,20");
    /* a one-square range */
    expect_canonical("international", "W:W31-31:B1", "W:W31:B1");
    /* white space around every token */
    expect_canonical("international", "  B : W 31 , K 32 : B K1 - 3 .  ", "B:W31,K32:BK1,K2,K3");
    expect_canonical("international", "W\t:W31\n:B1\r\n", "W:W31:B1");
    /* unknown fields, before, between and after the colour sections, with the dot after them */
    expect_canonical("international", "W:H0:W31:Z3:B1:FEN something", "W:W31:B1");
    expect_canonical("international", "B:W31:B1:H12.", "B:W31:B1");
    /* leading zeros */
    expect_canonical("international", "W:W031:B01", "W:W31:B1");
    /* empty sections in any order */
    expect_canonical("international", "W:B:W", "W:W:B");
    expect_canonical("international", "B:BK3:W.", "B:W:BK3");
    /* a colour left out has no pieces (tests/data/rulebook-moves.txt writes "W:W28") */
    expect_canonical("international", "W:W31", "W:W31:B");
    expect_canonical("international", "B:BK1.", "B:W:BK1");
    expect_canonical("international", "W:H0:WK28", "W:WK28:B");
    expect_canonical("international", "W", "W:W:B");
    expect_canonical("international", "B.", "B:W:B");
}

static void test_start_positions_all_variants(void **state)
{
    (void)state;
    static const struct {
        const char *variant, *fen;
        int white_lo, white_hi, black_hi;
    } cases[] = {
        {"international", "W:W31-50:B1-20", 31, 50, 20},
        {"brazilian", "W:W21-32:B1-12", 21, 32, 12},
        {"russian", "W:W21-32:B1-12", 21, 32, 12},
        {"english", "W:B1-12:W21-32", 21, 32, 12},
        {"canadian", "W:W43-72:B1-30", 43, 72, 30},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char w[200], bl[200], want[512];
        run_text(w, sizeof w, cases[i].white_lo, cases[i].white_hi, "");
        run_text(bl, sizeof bl, 1, cases[i].black_hi, "");
        snprintf(want, sizeof want, "W:W%s:B%s", w, bl);
        expect_canonical(cases[i].variant, cases[i].fen, want);
        /* ... and it is the variant's start position */
        const dtb_board b = board_of(cases[i].variant);
        dtb_pos p, start;
        dtb_error e;
        assert_int_equal(dtb_fen_read(&b, cases[i].fen, &p, &e), DTB_OK);
        dtb_pos_start(&b, &start);
        assert_true(dtb_pos_equal(&p, &start));
    }
}

static void test_range_limits(void **state)
{
    (void)state;
    static const struct {
        const char *variant;
        const char *last_ok, *canonical, *first_bad, *bad, *range;
    } cases[] = {
        {"english", "W:WK32:BK1", "W:WK32:BK1", "W:WK33:BK1", "33", "1-32"},
        {"russian", "W:WK32:BK1", "W:WK32:BK1", "W:WK33:BK1", "33", "1-32"},
        {"brazilian", "W:WK32:BK1", "W:WK32:BK1", "W:WK33:BK1", "33", "1-32"},
        {"international", "W:WK50:BK1", "W:WK50:BK1", "W:WK51:BK1", "51", "1-50"},
        {"canadian", "W:WK72:BK1", "W:WK72:BK1", "W:WK73:BK1", "73", "1-72"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_canonical(cases[i].variant, cases[i].last_ok, cases[i].canonical);
        expect_error(cases[i].variant, cases[i].first_bad, cases[i].bad, cases[i].range, NULL);
        expect_error(cases[i].variant, "W:WK0:BK1", "square 0", cases[i].range, NULL);
    }
    /* 12x12 squares above 64 live in the high word of the 128-bit set */
    expect_canonical("canadian", "B:W65-72:BK1,64", "B:W65,66,67,68,69,70,71,72:BK1,64");
}

static void test_longest_text_fits(void **state)
{
    (void)state;
    /* 30 kings a side on 12x12, on the two-digit squares: the longest canonical FEN there is. */
    const dtb_board b = board_of("canadian");
    dtb_pos p = {0};
    for (int i = 9; i < 39; i++)
        p.kings[DTB_WHITE] |= dtb_bb_bit(i);
    for (int i = 42; i < 72; i++)
        p.kings[DTB_BLACK] |= dtb_bb_bit(i);
    char w[200], bl[200], want[512], out[DTB_FEN_MAX];
    run_text(w, sizeof w, 10, 39, "K");
    run_text(bl, sizeof bl, 43, 72, "K");
    snprintf(want, sizeof want, "W:W%s:B%s", w, bl);
    assert_int_equal(dtb_fen_write(&b, &p, out, sizeof out), DTB_OK);
    assert_string_equal(out, want);
}

static void test_write_overflow(void **state)
{
    (void)state;
    const dtb_board b = board_of("international");
    dtb_pos p;
    dtb_error e;
    assert_int_equal(dtb_fen_read(&b, "W:W31,32:B1", &p, &e), DTB_OK);
    char out[16];
    /* "W:W31,32:B1" is 11 characters: 12 bytes fit, 11 do not. */
    assert_int_equal(dtb_fen_write(&b, &p, out, 12), DTB_OK);
    assert_string_equal(out, "W:W31,32:B1");
    memset(out, 'z', sizeof out);
    assert_int_equal(dtb_fen_write(&b, &p, out, 11), DTB_E_OVERFLOW);
    assert_string_equal(out, "W:W31,32:B");
    assert_int_equal(dtb_fen_write(&b, &p, out, 1), DTB_E_OVERFLOW);
    assert_string_equal(out, "");
    assert_int_equal(dtb_fen_write(&b, &p, out, 0), DTB_E_OVERFLOW);
}

/* ---- one test per class of bad input ----------------------------------------------------- */

static void test_empty(void **state)
{
    (void)state;
    expect_error("international", "", "empty", NULL);
    expect_error("international", "  \t ", "empty", NULL);
    expect_error("international", NULL, "empty", NULL);
}

static void test_bad_side(void **state)
{
    (void)state;
    expect_error("international", "X:W31:B1", "side to move", "'X'", NULL);
    expect_error("international", "w:W31:B1", "side to move", "'w'", NULL);
    expect_error("international", ":W31:B1", "side to move", "':'", NULL);
    expect_error("international", "3", "side to move", "'3'", NULL);
}

static void test_unknown_colour(void **state)
{
    (void)state;
    expect_error("international", "W:W31:R1,2", "colour", "'R'", "column 7", NULL);
    expect_error("international", "W:W31:XK5", "colour", "'X'", NULL);
    expect_error("international", "W:W31:Q1-3", "colour", "'Q'", NULL);
    expect_error("international", "W:w31:B1", "colour", "'w'", NULL);
    expect_error("international", "W:W31:b1", "colour", "'b'", NULL);
    /* no letter at all */
    expect_error("international", "W:31:B1", "no colour letter", "column 3", NULL);
    expect_error("international", "W:K31:B1", "no colour letter", NULL);
    /* an unknown field with a plain value is not a colour: it is skipped */
    expect_canonical("international", "W:W31:B1:R5", "W:W31:B1");
}

static void test_out_of_range(void **state)
{
    (void)state;
    expect_error("international", "W:W51:B1", "square 51", "1-50", NULL);
    expect_error("international", "W:W31:B1,K77", "square 77", "1-50", NULL);
    expect_error("international", "W:W45-51:B1", "square 51", "1-50", NULL);
    expect_error("international", "W:W0-3:B10", "square 0", NULL);
    /* numbers far beyond any integer: no overflow, the text is quoted (shortened) */
    expect_error("international", "W:W99999999999999999999999999999999999999:B1", "square 9999",
                 "...", "1-50", NULL);
    expect_error("international", "W:W18446744073709551647:B1", "18446744073709551647", "1-50",
                 NULL);
    expect_error("english", "W:W4294967297:B1", "4294967297", "1-32", NULL);
}

static void test_listed_twice(void **state)
{
    (void)state;
    expect_error("international", "W:W31,31:B1", "square 31", "twice", NULL);
    expect_error("international", "W:W31,K31:B1", "square 31", "twice", NULL);
    expect_error("international", "W:W31:B31", "square 31", "twice", NULL);
    expect_error("international", "W:B31:WK31", "square 31", "twice", NULL);
    expect_error("international", "W:W31-35,33:B1", "square 33", "twice", NULL);
    expect_error("international", "W:W31-35:B10,K35-40", "square 35", "twice", NULL);
}

static void test_man_on_promotion_row(void **state)
{
    (void)state;
    expect_error("international", "W:W3:B20", "white man", "promotion row", "3", NULL);
    expect_error("international", "W:W31:B48", "black man", "promotion row", "48", NULL);
    expect_error("english", "B:W30:B1,29", "black man", "promotion row", "29", NULL);
    expect_error("canadian", "W:W6:B20", "white man", "promotion row", "6", NULL);
    expect_error("canadian", "W:W31:B67", "black man", "promotion row", "67", NULL);
    /* kings may stand there */
    expect_canonical("international", "W:WK3:BK48", "W:WK3:BK48");
}

static void test_too_many_pieces(void **state)
{
    (void)state;
    expect_error("international", "W:W30-50:B1", "white", "21", "20", NULL);
    expect_error("international", "W:W50:BK1-21", "black", "21", "20", NULL);
    expect_error("english", "W:W20-32:B1", "white", "13", "12", NULL);
    expect_error("canadian", "W:WK1-31:B40", "white", "31", "30", NULL);
    /* exactly the start count is fine */
    expect_canonical("international", "W:WK1-20:B45", "W:WK1,K2,K3,K4,K5,K6,K7,K8,K9,K10,K11,K12,"
                     "K13,K14,K15,K16,K17,K18,K19,K20:B45");
}

static void test_stray_characters(void **state)
{
    (void)state;
    expect_error("international", "W:W31;32:B1", "stray", "';'", "column 6", NULL);
    expect_error("international", "W:W31:B1x", "stray", "'x'", "column 9", NULL);
    expect_error("international", "W31:B1", "stray", "'3'", "column 2", NULL);
    expect_error("international", "W:W31 32:B1", "stray", "'3'", "column 7", NULL);
    expect_error("international", "W:W31.:B1", "stray", "'.'", "column 6", NULL);
    expect_error("international", "W:W31:B1..", "stray", "'.'", "column 9", NULL);
    expect_error("international", "W:W31:B1. x", "stray", "column 9", NULL);
    expect_error("international", "W:W31:B1\x01", "stray", "0x01", "column 9", NULL);
    expect_error("international", "W:W31:B1\xff", "stray", "0xff", NULL);
    expect_error("international", "W:W31:B1-K3", "stray", "'K'", NULL);
    expect_error("international", "W:W31:BK1K2", "stray", "'K'", NULL);
    expect_error("international", "W:W+31:B1", "stray", "'+'", "column 4", NULL);
    expect_error("international", "W:W31:B1:?", "stray", "'?'", "column 10", NULL);
}

/* Algebraic squares (russian, brazilian: PDN GameType 25/26): files a-h from white's left, ranks
 * 1-8 from white's side. The fixed points come from the GameType definition, not from the code:
 * 1 = b8, 4 = h8, 5 = a7, 29 = a1, 32 = g1, 22 = c3. */
static void test_algebraic(void **state)
{
    (void)state;
    static const char *const v[2] = {"russian", "brazilian"};
    static const struct {
        int square;
        const char *name;
    } fixed[] = {{1, "b8"}, {4, "h8"}, {5, "a7"}, {29, "a1"}, {32, "g1"}, {22, "c3"}, {18, "d4"}};
    for (int k = 0; k < 2; k++) {
        const dtb_board b = board_of(v[k]);
        assert_int_equal(dtb_notation_of(&b), DTB_NOTATION_ALGEBRAIC);
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
            char name[DTB_SQUARE_NAME_MAX], numeric[32], named[32];
            dtb_square_name(&b, fixed[i].square - 1, name);
            assert_string_equal(name, fixed[i].name);
            /* The same position read both ways. */
            snprintf(numeric, sizeof numeric, "W:WK%d:BK%d", fixed[i].square, fixed[i].square == 4 ? 1 : 4);
            snprintf(named, sizeof named, "W:WK%s:BK%s", fixed[i].name, fixed[i].square == 4 ? "b8" : "h8");
            const dtb_pos p = pos_of(&b, numeric), q = pos_of(&b, named);
            assert_true(dtb_pos_equal(&p, &q));
        }
        /* Written in either notation; the algebraic text reads back to the same position. */
        const dtb_pos p = pos_of(&b, "W:W22,K30:B1-3,K12");
        char out[DTB_FEN_MAX];
        assert_int_equal(dtb_fen_write_in(&b, &p, DTB_NOTATION_ALGEBRAIC, out, sizeof out), DTB_OK);
        assert_string_equal(out, "W:Wc3,Kc1:Bb8,d8,f8,Kh6"); /* 12 = h6: the third row's last */
        const dtb_pos q = pos_of(&b, out);
        assert_true(dtb_pos_equal(&p, &q));
        assert_int_equal(dtb_fen_write_in(&b, &p, DTB_NOTATION_NUMERIC, out, sizeof out), DTB_OK);
        assert_string_equal(out, "W:W22,K30:B1,2,3,K12");
        /* Mixed forms in one FEN. */
        const dtb_pos m = pos_of(&b, "W:Wc3,K30:Bb8,2,f8,Kh6");
        assert_true(dtb_pos_equal(&p, &m));
        /* Every square: name -> index -> name. */
        for (int i = 0; i < b.squares; i++) {
            char name[DTB_SQUARE_NAME_MAX];
            int sq, len;
            dtb_square_name(&b, i, name);
            assert_int_equal(dtb_square_parse_name(&b, name, &sq, &len), DTB_SQUARE_PLAYABLE);
            assert_int_equal(sq, i);
            assert_int_equal(len, 2);
        }
        /* Bad names: one line naming the token. */
        expect_error(v[k], "W:WKc1:BKi9", "'i9'", "not a square of the 8x8 board", NULL);
        expect_error(v[k], "W:WKc1:BKa8", "'a8'", "light square", NULL);
        expect_error(v[k], "W:WKc1:BKj10", "'j10'", "not a square", NULL);
        expect_error(v[k], "W:WKc1:BKh0", "'h0'", "not a square", NULL);
        expect_error(v[k], "W:WKc1:BKa12345678901", "'a1234567'", "not a square", NULL);
        expect_error(v[k], "W:Wc3,c3:BKh8", "c3 listed twice", NULL);
        expect_error(v[k], "W:Wc3-e3:BKh8", "range", NULL);
        expect_error(v[k], "W:Wb8:BKh8", "promotion", NULL); /* a white man on the far row */
    }
    /* Elsewhere squares are numbers, and a name says so. */
    expect_error("international", "W:Wc3:B1", "'c3'", "international squares are numbers 1-50", NULL);
    expect_error("english", "W:WKc1:BKh8", "'c1'", "english squares are numbers 1-32", NULL);
    const dtb_board intl = board_of("international");
    assert_int_equal(dtb_notation_of(&intl), DTB_NOTATION_NUMERIC);
}

static void test_empty_range(void **state)
{
    (void)state;
    expect_error("international", "W:W50-31:B1", "empty range 50-31", NULL);
    expect_error("international", "W:W31:BK3-1", "empty range 3-1", NULL);
}

static void test_other_malformed(void **state)
{
    (void)state;
    expect_error("international", "W:W31,,32:B1", "missing square", "column 7", NULL);
    expect_error("international", "W:W31,:B1", "missing square", NULL);
    expect_error("international", "W:WK:B1", "missing square", NULL);
    expect_error("international", "W:W31-:B1", "range", "no end", NULL);
    expect_error("international", "W:W31:W32:B1", "second white section", NULL);
    expect_error("international", "W::W31:B1", "empty field", "column 3", NULL);
    expect_error("international", "W:W31:B1:", "empty field", NULL);
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* Valid FENs with a few random edits (replace, insert, delete), and every prefix of one, must
 * end in OK or a message -- and whatever is accepted must write and read back to the same
 * position. Fixed seed: the same strings every run. */
static void test_fuzz(void **state)
{
    (void)state;
    static const char alphabet[] = "WBKwbHZx0123456789:,-. \t.,:-K5\x80";
    static const char *const seeds[] = {
        "W:W31-50:B1-20",
        "B:W31,32,K33:B1,2,K3.",
        "W:B12,13,K14:W40-45:H0",
        "B:WK10:BK1-3,40",
        "W:W43-72:B1-30",
    };
    const dtb_board boards[3] = {board_of("international"), board_of("english"),
                                 board_of("canadian")};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int accepted = 0, rejected = 0;
    for (int n = 0; n < 30000; n++) {
        char text[64];
        snprintf(text, sizeof text, "%s", seeds[xorshift(&x) % 5]);
        for (int edits = 1 + (int)(xorshift(&x) % 3); edits > 0; edits--) {
            const size_t len = strlen(text);
            const size_t at = xorshift(&x) % (len + 1);
            const char c = alphabet[xorshift(&x) % (sizeof alphabet - 1)];
            switch (xorshift(&x) % 3) {
            case 0: /* replace */
                if (at < len)
                    text[at] = c;
                break;
            case 1: /* insert */
                if (len + 2 < sizeof text) {
                    memmove(text + at + 1, text + at, len - at + 1);
                    text[at] = c;
                }
                break;
            default: /* delete */
                if (at < len)
                    memmove(text + at, text + at + 1, len - at);
            }
        }
        const dtb_board *b = &boards[n % 3];
        dtb_pos p, q;
        dtb_error e = {{0}};
        const dtb_status st = dtb_fen_read(b, text, &p, &e);
        if (st != DTB_OK) {
            assert_int_equal(st, DTB_E_INVALID);
            assert_true(strlen(e.msg) > 0);
            rejected++;
            continue;
        }
        accepted++;
        char out[DTB_FEN_MAX];
        assert_int_equal(dtb_fen_write(b, &p, out, sizeof out), DTB_OK);
        assert_int_equal(dtb_fen_read(b, out, &q, &e), DTB_OK);
        assert_true(dtb_pos_equal(&p, &q));
    }
    /* both paths must be exercised, or the loop tests little */
    assert_true(accepted > 1000);
    assert_true(rejected > 1000);

    const char *full = "B:W31-35,K40,K48 : BK1 , 12-14,19:H0:Z3.";
    const dtb_board b = board_of("international");
    for (size_t len = 0; len <= strlen(full); len++) {
        char text[64];
        memcpy(text, full, len);
        text[len] = '\0';
        dtb_pos p;
        dtb_error e = {{0}};
        const dtb_status st = dtb_fen_read(&b, text, &p, &e);
        assert_true(st == DTB_OK || (st == DTB_E_INVALID && strlen(e.msg) > 0));
    }
}

/* ---- the clock (the H field) ------------------------------------------------------------ */

/* Reads text's clock expecting success with the given value and presence. */
static void expect_clock(const char *text, int clock, bool present)
{
    int c = -7;
    bool here = !present;
    dtb_error e = {{0}};
    const dtb_status st = dtb_fen_read_clock(text, &c, &here, &e);
    if (st != DTB_OK)
        fail_msg("\"%s\": clock rejected: %s", text ? text : "(null)", e.msg);
    assert_int_equal(c, clock);
    assert_int_equal(here, present);
}

/* Reads text's clock expecting DTB_E_INVALID with a one-line message holding every word. */
static void expect_clock_error(const char *text, ...)
{
    int c;
    bool here;
    dtb_error e = {{0}};
    if (dtb_fen_read_clock(text, &c, &here, &e) != DTB_E_INVALID)
        fail_msg("\"%s\": clock accepted", text);
    va_list ap;
    va_start(ap, text);
    expect_message(text, &e, ap);
    va_end(ap);
}

static void test_clock(void **state)
{
    (void)state;
    expect_clock("W:W31,K32:B1:H12", 12, true);
    expect_clock("W:W31,K32:B1:H12:F5", 12, true);          /* lidraughts' own order */
    expect_clock("B:H0:W31:B1", 0, true);                   /* anywhere among the fields */
    expect_clock("W:W31:B1: H 7 .", 7, true);               /* spaces and the trailing dot */
    expect_clock("W:W31:B1:H1000000", 1000000, true);
    expect_clock("W:W31:B1", 0, false);
    expect_clock("W:W31:B1:F12:Z3", 0, false);              /* other fields are not the clock */
    expect_clock("W", 0, false);
    expect_clock(NULL, 0, false);
    expect_clock_error("W:W31:B1:H", "H field", "column 10", "not a clock", NULL);
    expect_clock_error("W:W31:B1:Hx", "H field", "not a clock", NULL);
    expect_clock_error("W:W31:B1:H-1", "H field", "not a clock", NULL);
    expect_clock_error("W:W31:B1:H12a", "not a clock", NULL);
    expect_clock_error("W:W31:B1:H1000001", "beyond", "1000000", NULL);
    expect_clock_error("W:W31:B1:H99999999999999999999999999", "beyond", "...", NULL);
    expect_clock_error("W:H1:W31:B1:H2", "second H field", "column 13", NULL);
    /* the position reader still skips the H field as an unknown one */
    expect_canonical("international", "W:W31,K32:B1:H12:F5", "W:W31,K32:B1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_round_trip),
        cmocka_unit_test(test_non_canonical_forms),
        cmocka_unit_test(test_start_positions_all_variants),
        cmocka_unit_test(test_range_limits),
        cmocka_unit_test(test_longest_text_fits),
        cmocka_unit_test(test_write_overflow),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_bad_side),
        cmocka_unit_test(test_unknown_colour),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_listed_twice),
        cmocka_unit_test(test_man_on_promotion_row),
        cmocka_unit_test(test_too_many_pieces),
        cmocka_unit_test(test_stray_characters),
        cmocka_unit_test(test_algebraic),
        cmocka_unit_test(test_empty_range),
        cmocka_unit_test(test_other_malformed),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
