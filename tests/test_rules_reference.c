/* The reference solver of the move-count draw rules (tests/rules_reference.c) tested on its own,
 * so that dtb's rule-aware answers can be tested against it: with limits that cannot bind it
 * gives the ordinary tables' win / draw / loss; hand-checked positions under the real limits
 * (docs/RULES.md); every state against its definition through the public calls; and the
 * monotonicity of the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index.h"
#include "pdnmove.h"
#include "rules_reference.h"
#include "solve.h"
#include "test_support.h"

static const int fmjd_limits[3] = {50, 32, 10}; /* plies: 25-, 16- and 5-move rules */
static const int lowered_limits[3] = {8, 6, 4};
static const int wcdf_limits[3] = {80, 80, 80}; /* english: the 40-move rule's one class */

/* 2..4 pieces on 8x8 (brazilian: the FMJD rules on the small board) in the Release build, 3 in
 * the sanitizer build (its time budget). */
#ifdef DTB_SANITIZED_BUILD
#define SMALL_BOARD_PIECES 3
#else
#define SMALL_BOARD_PIECES 4
#endif

/* The solutions the tests share, built once: international 2..3 under the FMJD limits, and
 * brazilian 2..SMALL_BOARD_PIECES under the lowered ones. */
typedef struct solutions {
    dtb_board international, brazilian, english;
    ref_rules *fmjd, *lowered, *wcdf;
} solutions;

static int build_solutions(void **state)
{
    solutions *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    dtb_board_init(&x->international, dtb_variant_find("international"));
    dtb_board_init(&x->brazilian, dtb_variant_find("brazilian"));
    x->fmjd = ref_rules_build(&x->international, 3, fmjd_limits);
    x->lowered = ref_rules_build(&x->brazilian, SMALL_BOARD_PIECES, lowered_limits);
    dtb_board_init(&x->english, dtb_variant_find("english"));
    x->wcdf = ref_rules_build(&x->english, 3, wcdf_limits);
    *state = x;
    return x->fmjd && x->lowered && x->wcdf ? 0 : -1;
}

static int free_solutions(void **state)
{
    solutions *x = *state;
    ref_rules_free(x->fmjd);
    ref_rules_free(x->lowered);
    ref_rules_free(x->wcdf);
    free(x);
    return 0;
}

/* ---- Walking every position ---------------------------------------------------------------- */

/* Calls f(p) for every position of 2..pieces pieces of b, white to move (black to move is the
 * colour flip of a white-to-move position of the flipped material, which the walk also visits),
 * every `stride`-th of each material. */
static void each_position(const dtb_board *b, int pieces, uint64_t stride, void (*f)(void *, const dtb_pos *),
                          void *user)
{
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        assert_int_equal(dtb_index_create(b, list[i], &ix), DTB_OK);
        for (uint64_t x = 0; x < dtb_index_size(ix); x += stride) {
            dtb_pos p;
            dtb_index_pos(ix, x, &p);
            f(user, &p);
        }
        dtb_index_free(ix);
    }
    free(list);
}

static void fail_at(const dtb_board *b, const dtb_pos *p, int h, const char *what)
{
    char fen[DTB_FEN_MAX];
    dtb_fen_write(b, p, fen, sizeof fen);
    fail_msg("%s at %s, h %d", what, fen, h);
}

/* ---- With limits that cannot bind: the ordinary tables ------------------------------------- */

typedef struct unlimited {
    const dtb_board *b;
    const dtb_solved *s;
    const ref_rules *r;
    int limit;
    uint64_t wins, losses;
} unlimited;

/* A win in d plies (a loss: the winner's d) keeps its value from every h up to limit - d: the
 * winner ends the game within d plies and the clock never reaches the limit before the last
 * position, where "no legal move" comes before the draw. Beyond that, only a draw can replace
 * it, and a draw stays a draw: the rules never make a win. */
static void unlimited_one(void *user, const dtb_pos *p)
{
    unlimited *u = user;
    const dtb_value v = dtb_solved_value(u->s, p);
    const int want = dtb_value_wdl(v) == DTB_WIN ? 1 : dtb_value_wdl(v) == DTB_LOSS ? -1 : 0;
    const int d = dtb_value_dtw(v);
    for (int h = 0; h <= u->limit; h++) {
        const int got = ref_rules_value(u->r, p, h);
        if (h <= u->limit - d ? got != want : got != want && got != 0)
            fail_at(u->b, p, h, "not the unlimited value");
    }
    u->wins += want == 1;
    u->losses += want == -1;
}

static void unlimited_equals_tables(void **state)
{
    (void)state;
    const dtb_board b = board_of("international");
    dtb_solved *s = dtb_solved_create(&b);
    assert_non_null(s);
    const int n = dtb_material_list(3, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(3, list, n);
    int longest = 0;
    for (int i = 0; i < n; i++) {
        if (!dtb_solved_find(s, list[i])) {
            dtb_solve_stats st[2];
            dtb_error e;
            if (dtb_solve_pair(s, list[i], false, st, NULL, NULL, &e) != DTB_OK)
                fail_msg("solve: %s", e.msg);
        }
        const dtb_solved_table *t = dtb_solved_find(s, list[i]);
        for (uint64_t x = 0; x < dtb_index_size(t->index); x++) {
            const int d = dtb_value_dtw(t->values[x]);
            longest = d > longest ? d : longest;
        }
    }
    free(list);
    /* one more than the longest DTW of 2..3 pieces (33 plies, MvMM): no limit binds at h = 0 */
    assert_true(longest > fmjd_limits[REF_RULES_F]);
    unlimited u = {.b = &b, .s = s, .limit = longest + 1};
    const int limits[3] = {u.limit, u.limit, u.limit};
    ref_rules *r = ref_rules_build(&b, 3, limits);
    assert_non_null(r);
    u.r = r;
    each_position(&b, 3, 1, unlimited_one, &u);
    assert_true(u.wins > 100000 && u.losses > 100000);
    ref_rules_free(r);
    dtb_solved_free(s);
}

/* ---- Hand-checked positions ---------------------------------------------------------------- */

/* Whether the move written `text` of the position `fen` resets the clock. */
static bool resets(const ref_rules *r, const dtb_board *b, const char *fen, const char *text)
{
    const dtb_pos p = pos_of(b, fen);
    dtb_move m;
    dtb_error e;
    if (dtb_move_read(b, &p, text, &m, &e) != DTB_OK)
        fail_msg("%s in %s: %s", text, fen, e.msg);
    return ref_rules_resets(r, &p, &m);
}

static int limit_of(const ref_rules *r, const dtb_board *b, const char *fen)
{
    const dtb_pos p = pos_of(b, fen);
    return ref_rules_class_limit(r, &p);
}

/* The values of `fen` from h = 0 up to its limit, as a string of + = - ("+++=" : won at h 0..2,
 * drawn at 3 and beyond). */
static void expect_values(const ref_rules *r, const dtb_board *b, const char *fen, const char *want)
{
    const dtb_pos p = pos_of(b, fen);
    const int limit = ref_rules_class_limit(r, &p);
    char got[128];
    assert_true(limit < (int)sizeof got - 1);
    for (int h = 0; h <= limit; h++)
        got[h] = "-=+"[ref_rules_value(r, &p, h) + 1];
    got[limit + 1] = '\0';
    if (strcmp(got, want) != 0)
        fail_msg("%s: values %s, expected %s", fen, got, want);
    assert_int_equal(ref_rules_value(r, &p, 1000), ref_rules_value(r, &p, limit));
}

static void hand_checked_international(void **state)
{
    const solutions *x = *state;
    const dtb_board b = x->international;
    const ref_rules *r = x->fmjd;

    /* The classes' limits: the 5-move rule (2K v K, K+M v K, K v K), the 25-move rule (no king
     * against the lone king, or no lone king). */
    assert_int_equal(limit_of(r, &b, "W:WK28,K33:BK22"), 10);
    assert_int_equal(limit_of(r, &b, "B:WK28,45:BK22"), 10);
    assert_int_equal(limit_of(r, &b, "W:WK28:BK22"), 10);
    assert_int_equal(limit_of(r, &b, "W:W40,45:BK22"), 50);
    assert_int_equal(limit_of(r, &b, "W:WK28:B22"), 50);
    assert_int_equal(limit_of(r, &b, "W:WK28,K33:B22"), 50);
    /* 4 and 5 pieces (the class needs no table): the 16-move rule, and beyond it the 25 */
    assert_int_equal(limit_of(r, &b, "W:WK1,K5,K46:BK22"), 32);
    assert_int_equal(limit_of(r, &b, "B:WK1,40,45:BK22"), 32);
    assert_int_equal(limit_of(r, &b, "W:W35,40,45:BK22"), 50);
    assert_int_equal(limit_of(r, &b, "W:WK1,K5:BK22,K45"), 50);
    assert_int_equal(limit_of(r, &b, "W:WK1,K5,K46,K50:BK22"), 50);

    /* White takes the lone king at once: won while the clock is below 10, drawn at 10. */
    expect_values(r, &b, "W:WK28,K33:BK22", "++++++++++=");
    /* 1-12 forces 26x8 (compulsory), then 3x takes the king: 3 plies. Black's capture leaves
     * K v K from 3 pieces, which does not reset: White's capture comes at h + 2, below 10
     * only for h <= 7. */
    expect_values(r, &b, "W:WK1,K3:BK26", "++++++++===");
    assert_false(resets(r, &b, "B:WK3,K12:BK26", "26x8"));
    /* The king takes the man: a win up to h = 49 under the 25-move rule. */
    expect_values(r, &b, "W:WK28:B22", "++++++++++++++++++++++++++++++++++++++++++++++++++=");
    /* No legal move (the man on 6 is blocked): lost at every h, the limit included. */
    expect_values(r, &b, "W:W6:BK1", "---------------------------------------------------");

    /* Resets, decided with the class after the move. */
    assert_true(resets(r, &b, "W:W6,15:BK46", "6-1"));     /* first promotion into K+M v K (F) */
    assert_false(resets(r, &b, "W:W6,K50:BK46", "6-1"));   /* a second king: the count runs on */
    assert_true(resets(r, &b, "W:W6,15:BK46", "15-10"));   /* a man move in class G */
    assert_false(resets(r, &b, "W:W15,K50:BK46", "15-10")); /* a man move in K+M v K (F) */
    assert_false(resets(r, &b, "W:WK50:B6", "50-44"));     /* a king move */
    assert_true(resets(r, &b, "W:WK28:B22", "28x17"));     /* a capture in class G */
    assert_false(resets(r, &b, "B:WK22,K1:BK17", "17x28")); /* 2K v K's lone king takes: 3 pieces before */
    /* 4 pieces: the rule needs no table (the 3-piece solution answers). */
    assert_true(resets(r, &b, "B:WK22,K1,K5:BK17", "17x28"));    /* 3K v K to 2K v K: 4 pieces before */
    assert_false(resets(r, &b, "W:W15,16,K50:BK46", "15-10"));    /* a man move in K+2M v K (S) */
    assert_true(resets(r, &b, "W:W6,15,16:BK46", "6-1"));        /* first promotion into K+2M v K */
    assert_false(resets(r, &b, "W:W6,15,K50:BK46", "6-1"));      /* 2K+M v K: not the first */
    assert_true(resets(r, &b, "W:WK1,K5,K28:BK22,K46", "28x17")); /* 5 pieces into 3K v K (S) */
}

/* On 8x8 with lowered limits: the 16-move rule's class S (4 pieces). */
static void hand_checked_four_pieces(void **state)
{
    if (SMALL_BOARD_PIECES < 4)
        skip();
    const solutions *x = *state;
    const dtb_board b = x->brazilian;
    const ref_rules *r = x->lowered;
    /* 3K v K, White takes the king at once: won below the lowered 16-move limit (6). */
    expect_values(r, &b, "W:WK1,K4,K23:BK19", "++++++=");
    /* the lone king takes: 2K v K from 4 pieces resets (the 5-move rule starts) */
    assert_true(resets(r, &b, "B:WK1,K4,K23:BK19", "19x26"));
    assert_int_equal(limit_of(r, &b, "W:WK1,K4:BK19,K30"), 8);
}

/* English under the WCDF's 40-move rule: one class of 80 plies, whatever the material; a man
 * move or a capture resets, a king move does not. */
static void hand_checked_english(void **state)
{
    const solutions *x = *state;
    const dtb_board b = x->english;
    const ref_rules *r = x->wcdf;
    assert_int_equal(limit_of(r, &b, "W:WK1:BK32"), 80);
    assert_int_equal(limit_of(r, &b, "W:WK1,K2:BK14"), 80);
    assert_int_equal(limit_of(r, &b, "W:W22:B1,5"), 80);
    assert_true(resets(r, &b, "W:W22:BK1", "22-17"));   /* a man move */
    assert_false(resets(r, &b, "W:WK22:B1", "22-17"));  /* a king move */
    assert_true(resets(r, &b, "W:W22:B18", "22x15"));   /* a capture */
    assert_true(resets(r, &b, "W:WK22:B18", "22x15"));  /* a king's capture */
    /* The king takes the last man: won while the clock is below 80, drawn at 80. */
    char want[82];
    memset(want, '+', 80);
    want[80] = '=';
    want[81] = '\0';
    expect_values(r, &b, "W:WK14:B10", want);
}

/* ---- Every state against its definition, and the clock's monotonicity ---------------------- */

typedef struct walk {
    const dtb_board *b;
    const ref_rules *r;
    uint64_t states, wins, losses, draws_by_rule;
} walk;

/* V(P, h) from the moves of P and the values of the states they lead to, by the public calls
 * alone: the solve's order and its kept moves are not trusted. */
static void definition_one(void *user, const dtb_pos *p)
{
    walk *w = user;
    dtb_movelist ml;
    assert_int_equal(dtb_generate(w->b, p, &ml), DTB_OK);
    const int limit = ref_rules_class_limit(w->r, p);
    for (int h = 0; h <= limit; h++) {
        int want = -1;
        if (ml.count > 0 && h >= limit)
            want = 0;
        for (int i = 0; ml.count > 0 && h < limit && i < ml.count; i++) {
            dtb_pos q;
            dtb_make_move(p, &ml.moves[i], &q);
            const int v = -ref_rules_value(w->r, &q, ref_rules_resets(w->r, p, &ml.moves[i]) ? 0 : h + 1);
            want = v > want ? v : want;
        }
        if (ref_rules_value(w->r, p, h) != want)
            fail_at(w->b, p, h, "not the value its moves give");
        w->states++;
        w->wins += want == 1;
        w->losses += want == -1;
    }
}

/* Won at h implies won at h - 1, lost at h implies lost at h - 1 (a smaller clock leaves the
 * winner more room); at the limit only a position without a legal move is not drawn. */
static void monotone_one(void *user, const dtb_pos *p)
{
    walk *w = user;
    const int limit = ref_rules_class_limit(w->r, p);
    int later = ref_rules_value(w->r, p, limit);
    if (later != 0 && later != -1)
        fail_at(w->b, p, limit, "won at the limit");
    if (later == -1 && dtb_count_moves(w->b, p) > 0)
        fail_at(w->b, p, limit, "lost at the limit with a legal move");
    for (int h = limit - 1; h >= 0; h--) {
        const int v = ref_rules_value(w->r, p, h);
        if (later != 0 && v != later)
            fail_at(w->b, p, h, "the clock's monotonicity broken");
        w->draws_by_rule += later == 0 && v != 0;
        later = v;
    }
    w->states++;
}

/* Every stride-th position against its definition, every position for monotonicity. */
static void check_walk(const dtb_board *b, const ref_rules *r, int pieces, uint64_t stride)
{
    walk w = {.b = b, .r = r};
    each_position(b, pieces, stride, definition_one, &w);
    assert_true(w.wins > 1000 && w.losses > 1000);
    walk m = {.b = b, .r = r};
    each_position(b, pieces, 1, monotone_one, &m);
    assert_true(m.draws_by_rule > 1000); /* positions whose win or loss the clock spoils */
}

static void definition_international(void **state)
{
    const solutions *x = *state;
    check_walk(&x->international, x->fmjd, 3, 13);
}

static void definition_lowered(void **state)
{
    const solutions *x = *state;
    check_walk(&x->brazilian, x->lowered, SMALL_BOARD_PIECES, 29);
}

static void definition_english(void **state)
{
    const solutions *x = *state;
    check_walk(&x->english, x->wcdf, 3, 7);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unlimited_equals_tables),
        cmocka_unit_test(hand_checked_international),
        cmocka_unit_test(hand_checked_four_pieces),
        cmocka_unit_test(hand_checked_english),
        cmocka_unit_test(definition_international),
        cmocka_unit_test(definition_lowered),
        cmocka_unit_test(definition_english),
    };
    return cmocka_run_group_tests(tests, build_solutions, free_solutions);
}
