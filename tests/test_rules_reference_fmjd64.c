/* The reference solver of the FMJD-64 move-count draw rules (tests/rules_reference_fmjd64.c,
 * docs/RULES.md §2) tested on its own, so that dtb's fmjd64 tables and answers can be tested
 * against it: the cases, resets and counts of hand-checked positions; hand-checked values under
 * the real limits (2..3 pieces) and under lowered ones (4 pieces, the family whose count
 * matters); with limits that cannot bind, the ordinary tables' win / draw / loss (dtb's own
 * solver), and under the real limits what the distances to win imply; every state of a sample
 * against its definition through the public calls, and the monotonicity of clock and count.
 * Russian and brazilian (the same rules, different captures) both.
 *
 * The board (8x8, white moving up): rank 8 is 1-4 (b8 d8 f8 h8), rank 7 5-8 (a7 c7 e7 g7),
 * rank 6 9-12 (b6 d6 f6 h6), rank 5 13-16 (a5 c5 e5 g5), rank 4 17-20 (b4 d4 f4 h4), rank 3
 * 21-24 (a3 c3 e3 g3), rank 2 25-28 (b2 d2 f2 h2), rank 1 29-32 (a1 c1 e1 g1). The long
 * diagonal a1-h8 is 29 25 22 18 15 11 8 4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index.h"
#include "pdnmove.h"
#include "rules_reference_fmjd64.h"
#include "solve.h"
#include "solved.h"
#include "test_support.h"
#include "value.h"

static const ref64_limits fmjd64 = REF64_LIMITS_FMJD64;
/* limits no game of 2..3 pieces reaches: their longest win is 25 plies (checked below) */
#define NO_LIMIT 40
static const ref64_limits no_limit = {NO_LIMIT, NO_LIMIT, NO_LIMIT, NO_LIMIT,
                                      NO_LIMIT, NO_LIMIT, NO_LIMIT, 10};
/* 7.2.8 lowered to 2 plies: a 3-ply win of KKvK no longer fits a fresh clock */
static const ref64_limits short_a = {2, 30, 10, 30, 60, 120, 30, 10};
/* The family's solve, lowered so that it stays small and every case has its own limit: A 3,
 * B 5 then 2 from the count 2 on, C 4, D 6 (4-5 pieces). */
static const ref64_limits lowered = {3, 5, 2, 4, 6, 7, 4, 2};

/* The family's materials solved (with what they need): KKKvK and KKMvK in the sanitizer build
 * (its time budget), KMMvK too in the Release build; every DEFINITION_STRIDE-th of their
 * positions checked against its definition, every MONOTONE_STRIDE-th for monotonicity. */
#ifdef DTB_SANITIZED_BUILD
#define FAMILY_MATERIALS 2
#define DEFINITION_STRIDE 47
#define MONOTONE_STRIDE 13
#else
#define FAMILY_MATERIALS 3
#define DEFINITION_STRIDE 23
#define MONOTONE_STRIDE 7
#endif
static const char *const FAMILY[3] = {"KKKvK", "KKMvK", "KMMvK"};

enum { RUSSIAN, BRAZILIAN, BOARDS };
static const char *const VARIANT[BOARDS] = {"russian", "brazilian"};

/* The solutions the tests share, built once per board: 2..3 pieces under the real limits,
 * without limits and with 7.2.8 lowered; and 2..4 with only the family's 4-piece materials
 * under the lowered limits (russian). */
typedef struct solutions {
    dtb_board b[BOARDS];
    ref64 *real[BOARDS], *unlimited[BOARDS], *short_a[BOARDS];
    ref64 *family;
} solutions;

static int build_solutions(void **state)
{
    solutions *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    *state = x;
    bool ok = true;
    for (int k = 0; k < BOARDS; k++) {
        dtb_board_init(&x->b[k], dtb_variant_find(VARIANT[k]));
        ok = ok && (x->real[k] = ref64_build(&x->b[k], 3, &fmjd64)) != NULL;
        ok = ok && (x->unlimited[k] = ref64_build(&x->b[k], 3, &no_limit)) != NULL;
        ok = ok && (x->short_a[k] = ref64_build(&x->b[k], 3, &short_a)) != NULL;
    }
    dtb_material fam[3];
    for (int i = 0; i < FAMILY_MATERIALS; i++)
        ok = ok && dtb_material_parse(FAMILY[i], &fam[i], NULL) == DTB_OK;
    x->family = ok ? ref64_build_only(&x->b[RUSSIAN], 4, &lowered, fam, FAMILY_MATERIALS) : NULL;
    ok = ok && x->family;
    return ok ? 0 : -1;
}

static int free_solutions(void **state)
{
    solutions *x = *state;
    for (int k = 0; k < BOARDS; k++) {
        ref64_free(x->real[k]);
        ref64_free(x->unlimited[k]);
        ref64_free(x->short_a[k]);
    }
    ref64_free(x->family);
    free(x);
    return 0;
}

/* ---- Helpers -------------------------------------------------------------------------------- */

static dtb_move move_of(const dtb_board *b, const char *fen, const char *text)
{
    const dtb_pos p = pos_of(b, fen);
    dtb_move m;
    dtb_error e;
    if (dtb_move_read(b, &p, text, &m, &e) != DTB_OK)
        fail_msg("%s in %s: %s", text, fen, e.msg);
    return m;
}

static ref64_case case_of(const dtb_board *b, const char *fen)
{
    const dtb_pos p = pos_of(b, fen);
    return ref64_case_of(b, &p);
}

static bool resets(const dtb_board *b, const ref64_limits *l, const char *fen, const char *text,
                   int c)
{
    const dtb_pos p = pos_of(b, fen);
    const dtb_move m = move_of(b, fen, text);
    return ref64_resets(b, l, &p, &m, c);
}

static int next_count(const dtb_board *b, const ref64_limits *l, const char *fen,
                      const char *text, int c)
{
    const dtb_pos p = pos_of(b, fen);
    const dtb_move m = move_of(b, fen, text);
    return ref64_next_count(b, l, &p, &m, c);
}

/* The values of `fen` with the count c from h = 0 on, as a string of + = - ("+++=": won at
 * h 0..2, drawn at 3); the last one holds at every larger h too. */
static void expect_values(const ref64 *r, const dtb_board *b, const char *fen, int c,
                          const char *want)
{
    const dtb_pos p = pos_of(b, fen);
    char got[160];
    const int n = (int)strlen(want);
    assert_true(n < (int)sizeof got);
    for (int h = 0; h < n; h++)
        got[h] = "-=+"[ref64_value(r, &p, h, c) + 1];
    got[n] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("%s (%s, count %d): values %s, expected %s", fen, b->variant->name, c, got, want);
    assert_int_equal(ref64_value(r, &p, 1000, c), ref64_value(r, &p, n - 1, c));
}

/* want repeated n times, then the rest: "+" x 8 then "===" for runs("+", 8, "===") */
static const char *runs(const char *first, int n, const char *rest)
{
    static char buf[200];
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        strcat(buf, first);
    strcat(buf, rest);
    return buf;
}

/* Calls f(p) for every position (white to move) of the materials of 2..pieces pieces that
 * r solved, every stride-th of each. Black to move is the flip of a white-to-move position of
 * the flipped material, also visited. */
typedef void (*visit)(void *user, const dtb_pos *p, const dtb_material *m, uint64_t x);

static void each_position(const dtb_board *b, int pieces, const char *const *only, int nonly,
                          uint64_t stride, visit f, void *user)
{
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    for (int i = 0; i < n; i++) {
        bool in = dtb_material_pieces(&list[i]) < pieces || !only;
        for (int k = 0; !in && k < nonly; k++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(only[k], &m, NULL), DTB_OK);
            const dtb_material flip = dtb_material_flip(m);
            in = dtb_material_equal(&m, &list[i]) || dtb_material_equal(&flip, &list[i]);
        }
        if (!in)
            continue;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(b, list[i], &ix), DTB_OK);
        for (uint64_t x = 0; x < dtb_index_size(ix); x += stride) {
            dtb_pos p;
            dtb_index_pos(ix, x, &p);
            f(user, &p, &list[i], x);
        }
        dtb_index_free(ix);
    }
    free(list);
}

static void fail_at(const dtb_board *b, const dtb_pos *p, int h, int c, const char *what)
{
    char fen[DTB_FEN_MAX];
    dtb_fen_write(b, p, fen, sizeof fen);
    fail_msg("%s: %s at %s, h %d, count %d", b->variant->name, what, fen, h, c);
}

/* ---- The rules on single positions ---------------------------------------------------------- */

static void long_diagonal(void **state)
{
    (void)state;
    static const int small[] = {29, 25, 22, 18, 15, 11, 8, 4};
    static const int large[] = {46, 41, 37, 32, 28, 23, 19, 14, 10, 5};
    for (int k = 0; k < BOARDS; k++) {
        const dtb_board b = board_of(VARIANT[k]);
        dtb_bb want = 0;
        for (int i = 0; i < 8; i++)
            want |= dtb_bb_bit(small[i] - 1);
        assert_true(ref64_long_diagonal(&b) == want);
    }
    /* a function of the board: international's main road */
    const dtb_board b = board_of("international");
    dtb_bb want = 0;
    for (int i = 0; i < 10; i++)
        want |= dtb_bb_bit(large[i] - 1);
    assert_true(ref64_long_diagonal(&b) == want);
}

static void cases(void **state)
{
    (void)state;
    for (int k = 0; k < BOARDS; k++) {
        const dtb_board b = board_of(VARIANT[k]);
        const dtb_board *bp = &b;
        /* 7.2.8: a lone king against at most 2 pieces with a king, on the diagonal or not */
        assert_int_equal(case_of(bp, "W:WK1:BK22"), REF64_A);
        assert_int_equal(case_of(bp, "W:WK1,K2:BK22"), REF64_A);
        assert_int_equal(case_of(bp, "B:WK1,5:BK23"), REF64_A);
        assert_int_equal(case_of(bp, "W:WK22:BK1,K2"), REF64_A); /* the lone king white */
        /* 7.2.7: 3 pieces with a king, the lone king alone on the long diagonal (c3) */
        assert_int_equal(case_of(bp, "W:WK1,K2,K3:BK22"), REF64_B);
        assert_int_equal(case_of(bp, "B:WK1,K2,5:BK22"), REF64_B);
        assert_int_equal(case_of(bp, "W:WK1,5,6:BK29"), REF64_B);  /* a1 */
        assert_int_equal(case_of(bp, "W:WK4:BK1,K2,K3"), REF64_B); /* h8, the lone king white */
        /* another piece on the diagonal (h8, e5, b2): not 7.2.7 */
        assert_int_equal(case_of(bp, "W:WK1,K2,K4:BK22"), REF64_C);
        assert_int_equal(case_of(bp, "W:WK1,K2,15:BK22"), REF64_D45);
        assert_int_equal(case_of(bp, "W:WK1,5,25:BK22"), REF64_D45);
        /* off the diagonal (a3): 3 kings 7.2.4, with men 7.2.6 */
        assert_int_equal(case_of(bp, "W:WK1,K2,K3:BK21"), REF64_C);
        assert_int_equal(case_of(bp, "W:WK1,K2,5:BK21"), REF64_D45);
        assert_int_equal(case_of(bp, "W:WK1,5,6:BK21"), REF64_D45);
        /* 4 or more kings against the lone king: 7.2.4 wherever it stands */
        assert_int_equal(case_of(bp, "W:WK1,K2,K3,K5:BK22"), REF64_C);
        assert_int_equal(case_of(bp, "W:WK1,K2,K3,5:BK22"), REF64_D45); /* 5 pieces, a man */
        /* kings on both sides, no lone king: by the number of pieces */
        assert_int_equal(case_of(bp, "W:WK1,K2:BK22,K23"), REF64_D45);
        assert_int_equal(case_of(bp, "W:WK1,5:BK22,27"), REF64_D45);
        assert_int_equal(case_of(bp, "W:WK1,K2,5:BK22,K23"), REF64_D45);
        assert_int_equal(case_of(bp, "W:WK1,K2,5:BK22,K23,27"), REF64_D67);
        assert_int_equal(case_of(bp, "W:WK1,K2,5,6:BK22,K23,27"), REF64_D67);
        assert_int_equal(case_of(bp, "W:WK1,K2,5,6:BK22,K23,27,28"), REF64_E);
        assert_int_equal(case_of(bp, "W:WK1,K2,5,6,7:BK22,K23,26,27,28"), REF64_E);
        /* a side without a king: no count */
        assert_int_equal(case_of(bp, "W:W5:BK22"), REF64_N);
        assert_int_equal(case_of(bp, "W:WK5:B22"), REF64_N);
        assert_int_equal(case_of(bp, "W:W5,6,7:BK22"), REF64_N); /* men only against a lone king */
        assert_int_equal(case_of(bp, "W:W5:B28"), REF64_N);
        assert_int_equal(case_of(bp, "W:WK1,K2,K3:B22,23"), REF64_N);
    }
    /* the limits of the cases, and B's by the count */
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_A, 0), 10);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_B, 9), 30);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_B, 10), 10);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_C, 10), 30);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_D45, 0), 60);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_D67, 0), 120);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_E, 0), 30);
    assert_int_equal(ref64_case_limit(&fmjd64, REF64_N, 0), -1);
    const dtb_board b = board_of("russian");
    const dtb_pos p = pos_of(&b, "W:WK1,K2,K3:BK22");
    assert_int_equal(ref64_limit_of(&b, &fmjd64, &p, 0), 30);
    assert_int_equal(ref64_limit_of(&b, &fmjd64, &p, 10), 10);
    assert_int_equal(ref64_limit_of(&b, &fmjd64, &p, 99), 10);
    dtb_material m;
    assert_int_equal(dtb_material_parse("KMMvK", &m, NULL), DTB_OK);
    assert_true(ref64_family(&m));
    assert_int_equal(dtb_material_parse("KvKKM", &m, NULL), DTB_OK);
    assert_true(ref64_family(&m));
    assert_int_equal(dtb_material_parse("MMMvK", &m, NULL), DTB_OK);
    assert_false(ref64_family(&m));
    assert_int_equal(dtb_material_parse("KKvK", &m, NULL), DTB_OK);
    assert_false(ref64_family(&m));
    assert_int_equal(dtb_material_parse("KKKKvK", &m, NULL), DTB_OK);
    assert_false(ref64_family(&m));
}

static void resets_and_counts(void **state)
{
    (void)state;
    const ref64_limits *l = &fmjd64;
    for (int k = 0; k < BOARDS; k++) {
        const dtb_board b = board_of(VARIANT[k]);
        const dtb_board *bp = &b;
        /* 7.2.8: a first promotion resets (the man on a7 crowns on b8: K v K), a second
         * (K+M v K into 2K v K) does not, nor a man's move there */
        assert_true(resets(bp, l, "W:W5:BK32", "5-1", 0));
        assert_false(resets(bp, l, "W:W5,K32:BK28", "5-1", 0));
        assert_false(resets(bp, l, "W:W9,K32:BK28", "9-5", 0));
        assert_false(resets(bp, l, "W:WK31,K32:BK28", "31-26", 0)); /* a king's move */
        /* a capture from 3 to 2 pieces (the lone king c3 takes d4, landing e5) does not reset;
         * from 4 to 3 (out of 3K v K into 2K v K) it does */
        assert_false(resets(bp, l, "B:WK18,K32:BK22", "22x15", 0));
        assert_true(resets(bp, l, "B:WK18,K32,K1:BK22", "22x15", 0));
        /* 7.2.7 (the lone king on c3, alone on the diagonal): a second promotion does not reset
         * (KMMvK into KKMvK); the same with the king on g3, off the diagonal, 7.2.6, does */
        assert_false(resets(bp, l, "W:W5,6,K32:BK22", "5-1", 0));
        assert_true(resets(bp, l, "W:W5,6,K32:BK24", "5-1", 0));
        /* a first promotion into 7.2.7 resets (MMMvK, no count, into KMMvK) */
        assert_true(resets(bp, l, "W:W5,6,7:BK22", "5-1", 0));
        /* KKMvK into KKKvK: on the diagonal (7.2.7) no reset, off it (h4: 7.2.4) a reset */
        assert_false(resets(bp, l, "W:W5,K30,K32:BK22", "5-1", 0));
        assert_true(resets(bp, l, "W:W5,K30,K32:BK20", "5-1", 0));
        /* 7.2.6 (4 pieces) keeps the clock over a man's move, resets on a promotion */
        assert_false(resets(bp, l, "W:W9,K32:BK22,K28", "9-5", 0));
        assert_true(resets(bp, l, "W:W5,K32:BK22,K28", "5-1", 0));
        /* 7.2.5 (8 pieces) resets on a man's move, not on a king's */
        assert_true(resets(bp, l, "W:WK1,K2,9,10:BK22,K23,27,28", "9-5", 0));
        assert_false(resets(bp, l, "W:WK1,K2,9,10:BK22,K23,27,28", "2-7", 0));
        /* no count: every move resets, a king's too */
        assert_true(resets(bp, l, "W:WK18:B2", "18-14", 0));
        assert_true(resets(bp, l, "W:W10,11:BK32", "10-6", 0));

        /* The count. Every move ending in 7.2.7 adds one, the lone side's or the other's: the
         * king a1 going up the diagonal, a king f8 to e7 (off the diagonal); f8 to g7 puts a
         * king on the diagonal (7.2.4): kept. Clamped at the threshold. */
        assert_int_equal(next_count(bp, l, "B:WK1,K2,K3:BK29", "29-18", 0), 1);
        assert_int_equal(next_count(bp, l, "B:WK1,K2,K3:BK29", "29-4", 4), 5);
        assert_int_equal(next_count(bp, l, "W:WK1,K2,K3:BK29", "3-7", 0), 1);
        assert_int_equal(next_count(bp, l, "W:WK1,K2,K3:BK29", "3-8", 3), 3);
        assert_int_equal(next_count(bp, l, "W:WK1,K2,K3:BK29", "3-7", 10), 10);
        assert_false(resets(bp, l, "W:WK1,K2,K3:BK29", "3-7", 0));
        assert_false(resets(bp, l, "W:WK1,K2,K3:BK29", "3-7", 9)); /* the late limit from here */
        /* the lone king stepping off the diagonal (c3 to b4): 7.2.4, the count kept */
        assert_int_equal(next_count(bp, l, "B:WK1,K2,K3:BK22", "22-17", 6), 6);
        /* a promotion inside the family keeps the count, then adds the move's one */
        assert_int_equal(next_count(bp, l, "W:W5,6,K32:BK22", "5-1", 1), 2);
        assert_int_equal(next_count(bp, l, "W:W5,6,K32:BK24", "5-1", 1), 1);
        /* into the family from outside it (a capture from 5 pieces, e1 takes the man c3): the
         * count starts at 0, then the move's one; the clock resets (the limit is 30) */
        assert_int_equal(next_count(bp, l, "W:WK31,K1,K2:B22,K29", "31x17", 7), 1);
        assert_true(resets(bp, l, "W:WK31,K1,K2:B22,K29", "31x17", 7));
        /* out of the family: no count */
        assert_int_equal(next_count(bp, l, "B:WK18,K32,K1:BK22", "22x15", 5), 0);
    }
}

/* ---- Values under the real limits, 2..3 pieces ---------------------------------------------- */

static void values_three_pieces(void **state)
{
    const solutions *x = *state;
    for (int k = 0; k < BOARDS; k++) {
        const dtb_board *b = &x->b[k];
        const ref64 *r = x->real[k], *u = x->unlimited[k];
        /* White's e1 takes the lone king on c3 (over d2 empty: e1-d2-c3-b4): won while the clock
         * is below 10, drawn at 10 (7.2.8). */
        expect_values(r, b, "W:WK31,K1:BK22", 0, runs("+", 10, "="));
        /* 3 plies: b8-d6 offers the king, a3 must take it (a3-b4-c5-d6-e7: the king f8 leaves
         * only e7 to land on), f8 takes e7. Black's capture leaves K v K from 3 pieces: no reset.
         * White's capture comes at h + 2, below 10 for h <= 7. Without limits (40 plies): won
         * while h + 2 < 40. */
        expect_values(r, b, "W:WK1,K3:BK21", 0, runs("+", 8, "==="));
        expect_values(u, b, "W:WK1,K3:BK21", 0, runs("+", NO_LIMIT - 2, "==="));
        /* With 7.2.8 lowered to 2 plies that win needs more than the limit from a fresh clock:
         * drawn at h = 0 (and on; the immediate capture above still wins at 0 and 1). */
        expect_values(x->short_a[k], b, "W:WK1,K3:BK21", 0, "===");
        expect_values(x->short_a[k], b, "W:WK31,K1:BK22", 0, "++=");
        /* K+M v K in 9 plies (dtb's distance): a7 crowns on b8 on the way, a second king, no
         * reset; so won only for h <= 1 (9 <= 10 - h). */
        expect_values(r, b, "W:WK2,5:BK32", 0, runs("+", 2, "=========="));
        /* No legal move (Black's a1 behind the man b2, c3 occupied): lost at every clock, the
         * limit's too. */
        expect_values(r, b, "B:WK22,25:BK29", 0, runs("-", 15, ""));
        /* No count (K v M): every move resets, the clock never draws. The king wins in 7 plies
         * (dtb's distance) at any clock given. */
        expect_values(r, b, "W:WK18:B2", 0, runs("+", 60, ""));
        const dtb_pos p = pos_of(b, "W:WK18:B2");
        assert_int_equal(ref64_value(r, &p, 10000, 10), 1);
        /* the count is nothing outside the family */
        const dtb_pos q = pos_of(b, "W:WK1,K3:BK21");
        assert_int_equal(ref64_value(r, &q, 7, 10), 1);
        assert_int_equal(ref64_value(r, &q, 8, 0), 0);
    }
}

/* ---- Values in the family, lowered limits ---------------------------------------------------- */

static void values_family(void **state)
{
    const solutions *x = *state;
    const dtb_board *b = &x->b[RUSSIAN];
    const ref64 *r = x->family;
    /* d2 takes the lone king c3 (d2-c3-b4). Alone on the diagonal: 7.2.7, limit 5 while the
     * count is below 2, then 2. */
    expect_values(r, b, "W:WK26,K1,K2:BK22", 0, "+++++=");
    expect_values(r, b, "W:WK26,K1,K2:BK22", 1, "+++++=");
    expect_values(r, b, "W:WK26,K1,K2:BK22", 2, "++=");
    expect_values(r, b, "W:WK26,K1,K2:BK22", 7, "++=");
    /* a white king on h8 shares the diagonal: 7.2.4, limit 4 at any count */
    expect_values(r, b, "W:WK26,K1,K4:BK22", 0, "++++=");
    expect_values(r, b, "W:WK26,K1,K4:BK22", 2, "++++=");
    /* a white man on e5 shares it: 7.2.6, limit 6 */
    expect_values(r, b, "W:WK26,K1,15:BK22", 0, "++++++=");
    expect_values(r, b, "W:WK26,K1,15:BK22", 2, "++++++=");
    /* 3 plies (dtb's distance, no capture now): d6-b8 (7.2.7 still: one more on the count), e5
     * must take f4 and land on g3 (h2 is White's), h2 takes g3. Black's capture makes 2K v K
     * from 4 pieces: a reset. So won when h is below the limit of the count c and h + 1 below
     * the limit of c + 1: with c = 0, h <= 3 (the limit 5 at c = 1); with c = 1, h = 0 only
     * (h + 1 < 2 at c = 2). At the limit, drawn. */
    const dtb_pos p = pos_of(b, "W:WK10,K19,K28:BK15");
    assert_int_equal(ref64_case_of(b, &p), REF64_B);
    for (int h = 0; h <= 3; h++)
        assert_int_equal(ref64_value(r, &p, h, 0), 1);
    assert_int_equal(ref64_value(r, &p, 5, 0), 0);
    assert_int_equal(ref64_value(r, &p, 0, 1), 1);
    assert_int_equal(ref64_value(r, &p, 5, 1), 0);
    assert_int_equal(ref64_value(r, &p, 0, 2), 1);
    assert_int_equal(ref64_value(r, &p, 2, 2), 0);
    /* Black's lone king with no move (a1 behind the man b2, c3 occupied): lost at any clock
     * and count, the limit's too (7.2.7's: the king on the diagonal, b2 and c3 too: 7.2.6). */
    expect_values(r, b, "B:WK22,25,K1:BK29", 0, runs("-", 10, ""));
    expect_values(r, b, "B:WK22,25,K1:BK29", 2, runs("-", 10, ""));
}

/* ---- Without limits: the ordinary tables; under the real ones: what distances imply ---------- */

typedef struct compare {
    const dtb_board *b;
    const dtb_solved *s;
    const ref64 *real, *unlimited;
    uint64_t wins, losses, spoiled, checked;
    int longest;
} compare;

static void compare_one(void *user, const dtb_pos *p, const dtb_material *m, uint64_t x)
{
    compare *w = user;
    const dtb_solved_table *t = dtb_solved_find(w->s, *m);
    const dtb_value v = t->values[x];
    const int want = dtb_value_wdl(v) == DTB_WIN ? 1 : dtb_value_wdl(v) == DTB_LOSS ? -1 : 0;
    const int d = dtb_value_dtw(v);
    w->longest = d > w->longest ? d : w->longest;
    w->wins += want == 1;
    w->losses += want == -1;
    /* no limit reached: the limits only add draws, and none binds before the longest win ends */
    if (ref64_value(w->unlimited, p, 0, 0) != want)
        fail_at(w->b, p, 0, 0, "not the unlimited value");
    const ref64_case k = ref64_case_of(w->b, p);
    const int at0 = ref64_value(w->real, p, 0, 0);
    w->spoiled += at0 != want;
    if (k == REF64_N) {
        /* no count: one value whatever the clock */
        if (ref64_value(w->real, p, 37, 0) != at0 || ref64_value(w->real, p, 500, 0) != at0)
            fail_at(w->b, p, 37, 0, "a no-count value that depends on the clock");
        return;
    }
    /* 7.2.8 (the only case of 2..3 pieces besides N): the winner's shortest line ends within
     * 10 - h plies from the clock h, its clocks at most h + i < 10 (a reset only lowers them)
     * and its positions in 7.2.8 or N: the unlimited value stands. Beyond, only a draw may
     * replace it. */
    if (k != REF64_A)
        fail_at(w->b, p, 0, 0, "a 2..3-piece position neither in 7.2.8 nor without count");
    for (int h = 0; h <= 11; h++) {
        const int got = ref64_value(w->real, p, h, 0);
        if (h <= 10 - d ? got != want : got != want && got != 0)
            fail_at(w->b, p, h, 0, "not what the distance to win implies");
        w->checked++;
    }
}

static void unlimited_equals_tables(void **state)
{
    const solutions *x = *state;
    for (int k = 0; k < BOARDS; k++) {
        const dtb_board *b = &x->b[k];
        dtb_solved *s = dtb_solved_create(b);
        assert_non_null(s);
        const int n = dtb_material_list(3, NULL, 0);
        dtb_material *list = malloc((size_t)n * sizeof *list);
        dtb_material_list(3, list, n);
        for (int i = 0; i < n; i++) {
            if (dtb_solved_find(s, list[i]))
                continue;
            dtb_solve_stats st[2];
            dtb_error e;
            if (dtb_solve_pair(s, list[i], false, st, NULL, NULL, &e) != DTB_OK)
                fail_msg("solve: %s", e.msg);
        }
        free(list);
        compare w = {.b = b, .s = s, .real = x->real[k], .unlimited = x->unlimited[k]};
        each_position(b, 3, NULL, 0, 1, compare_one, &w);
        assert_true(w.longest < NO_LIMIT && w.longest > 20);
        assert_true(w.wins > 50000 && w.losses > 20000 && w.checked > 500000);
        /* measured, not derived: on 8x8 no win or loss of 2..3 pieces is lost at h = 0 under the
         * real limits (the longest 7.2.8 win, K+M v K, takes 9 plies) */
        assert_int_equal(w.spoiled, 0);
        dtb_solved_free(s);
    }
}

/* ---- Every state against its definition; the monotonicity of clock and count ---------------- */

typedef struct walk {
    const dtb_board *b;
    const ref64 *r;
    uint64_t states, wins, losses, draws_by_rule;
} walk;

/* V(p, h, c) from p's moves and the values of the states they lead to, by the public calls
 * alone: the solve's order and its kept moves are not trusted. */
static void definition_one(void *user, const dtb_pos *p, const dtb_material *m, uint64_t x)
{
    (void)x;
    walk *w = user;
    const ref64_limits *l = ref64_limits_of(w->r);
    dtb_movelist ml;
    assert_int_equal(dtb_generate(w->b, p, &ml), DTB_OK);
    const ref64_case k = ref64_case_of(w->b, p);
    const int counts = ref64_family(m) ? l->threshold + 1 : 1;
    for (int c = 0; c < counts; c++) {
        const int limit = ref64_case_limit(l, k, c);
        for (int h = 0; h <= (limit < 0 ? 3 : limit); h++) {
            int want = -1;
            if (ml.count > 0 && limit >= 0 && h >= limit)
                want = 0;
            else
                for (int i = 0; i < ml.count; i++) {
                    dtb_pos q;
                    dtb_make_move(p, &ml.moves[i], &q);
                    const int c2 = ref64_next_count(w->b, l, p, &ml.moves[i], c);
                    const int h2 = ref64_resets(w->b, l, p, &ml.moves[i], c) ? 0 : h + 1;
                    const int v = -ref64_value(w->r, &q, h2, c2);
                    want = v > want ? v : want;
                }
            if (ref64_value(w->r, p, h, c) != want)
                fail_at(w->b, p, h, c, "not the value its moves give");
            w->states++;
            w->wins += want == 1;
            w->losses += want == -1;
        }
    }
}

/* A larger clock or count only brings a draw nearer (B's late limit is below its early one,
 * and inside 4 pieces the resets do not depend on the count): where the larger one is won or
 * lost, the smaller is the same. */
static void monotone_one(void *user, const dtb_pos *p, const dtb_material *m, uint64_t x)
{
    (void)x;
    walk *w = user;
    const ref64_limits *l = ref64_limits_of(w->r);
    const int counts = ref64_family(m) ? l->threshold + 1 : 1;
    const ref64_case k = ref64_case_of(w->b, p);
    for (int c = 0; c < counts; c++) {
        const int limit = ref64_case_limit(l, k, c);
        const int top = limit < 0 ? 3 : limit;
        for (int h = 0; h <= top; h++) {
            const int v = ref64_value(w->r, p, h, c);
            const int later = ref64_value(w->r, p, h + 1, c);
            if (later != 0 && v != later)
                fail_at(w->b, p, h, c, "the clock's monotonicity broken");
            if (c + 1 < counts) {
                const int more = ref64_value(w->r, p, h, c + 1);
                if (more != 0 && v != more)
                    fail_at(w->b, p, h, c, "the count's monotonicity broken");
            }
            w->draws_by_rule += v != 0 && later == 0;
            w->states++;
        }
        if (limit >= 0 && ref64_value(w->r, p, limit, c) == 1)
            fail_at(w->b, p, limit, c, "won at the limit");
    }
}

static void definition_three_pieces(void **state)
{
    const solutions *x = *state;
    for (int k = 0; k < BOARDS; k++) {
        walk w = {.b = &x->b[k], .r = x->real[k]};
        each_position(&x->b[k], 3, NULL, 0, 7, definition_one, &w);
        assert_true(w.wins > 10000 && w.losses > 3000);
        walk m = {.b = &x->b[k], .r = x->real[k]};
        each_position(&x->b[k], 3, NULL, 0, 1, monotone_one, &m);
        assert_true(m.draws_by_rule > 10000); /* wins and losses a larger clock spoils */
    }
}

static void definition_family(void **state)
{
    const solutions *x = *state;
    walk w = {.b = &x->b[RUSSIAN], .r = x->family};
    each_position(&x->b[RUSSIAN], 4, FAMILY, FAMILY_MATERIALS, DEFINITION_STRIDE, definition_one,
                  &w);
    assert_true(w.wins > 10000 && w.losses > 1000);
    walk m = {.b = &x->b[RUSSIAN], .r = x->family};
    each_position(&x->b[RUSSIAN], 4, FAMILY, FAMILY_MATERIALS, MONOTONE_STRIDE, monotone_one, &m);
    assert_true(m.draws_by_rule > 10000);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_diagonal),
        cmocka_unit_test(cases),
        cmocka_unit_test(resets_and_counts),
        cmocka_unit_test(values_three_pieces),
        cmocka_unit_test(values_family),
        cmocka_unit_test(unlimited_equals_tables),
        cmocka_unit_test(definition_three_pieces),
        cmocka_unit_test(definition_family),
    };
    return cmocka_run_group_tests(tests, build_solutions, free_solutions);
}
