/* core/rules.c's FMJD-64 rule set (russian and brazilian, lidraughts' reading: docs/RULES.md
 * §2.2) on hand-checked positions: the class of a position (the main road: the lone king alone
 * on the long diagonal a1-h8, squares 4, 8, 11, 15, 18, 22, 25 and 29), its limit by the
 * diagonal count, the count after a move, and which moves reset the clock. Each expectation is
 * worked out from lidraughts' drawingMoves and updatePositionHashes, not from dtb's code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "rules.h"

static const char *const VARIANTS[] = {"russian", "brazilian"};

static dtb_board board_of(const char *variant)
{
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(variant));
    return b;
}

static dtb_pos pos_of(const dtb_board *b, const char *fen)
{
    dtb_pos p;
    dtb_error e;
    if (dtb_fen_read(b, fen, &p, &e) != DTB_OK)
        fail_msg("%s: %s", fen, e.msg);
    return p;
}

static const char *class_name(const dtb_rules *r, const dtb_board *b, const char *fen)
{
    const dtb_pos p = pos_of(b, fen);
    return r->cls[dtb_rules_pos_class(r, b, &p)].name;
}

/* The legal move of p from square `from` to square `to` (PDN numbers). */
static dtb_move move_of(const dtb_board *b, const dtb_pos *p, int from, int to)
{
    dtb_movelist ml;
    assert_int_equal(dtb_generate(b, p, &ml), DTB_OK);
    for (int i = 0; i < ml.count; i++)
        if (ml.moves[i].from == from - 1 && ml.moves[i].to == to - 1)
            return ml.moves[i];
    fail_msg("no move %d-%d", from, to);
    return ml.moves[0];
}

/* Move from-to of fen: the position before it (*p), the move (*mv) and the position after (*q). */
typedef struct played {
    dtb_pos p, q;
    dtb_move mv;
} played;

static played play(const dtb_board *b, const char *fen, int from, int to)
{
    played x;
    x.p = pos_of(b, fen);
    x.mv = move_of(b, &x.p, from, to);
    dtb_make_move(&x.p, &x.mv, &x.q);
    return x;
}

/* Whether move from-to of fen resets the clock, the diagonal count before it being count. */
static bool resets(const dtb_rules *r, const dtb_board *b, const char *fen, int from, int to,
                   int count)
{
    const played x = play(b, fen, from, to);
    return dtb_rules_resets(r, b, &x.p, &x.mv, &x.q, dtb_rules_next_count(r, b, &x.p, &x.q, count));
}

/* Whether move from-to of fen resets the clock when the diagonal count after it is count. */
static bool resets_at(const dtb_rules *r, const dtb_board *b, const char *fen, int from, int to,
                      int count)
{
    const played x = play(b, fen, from, to);
    return dtb_rules_resets(r, b, &x.p, &x.mv, &x.q, count);
}

/* The diagonal count after move from-to of fen, count before it. */
static int next_count(const dtb_rules *r, const dtb_board *b, const char *fen, int from, int to,
                      int count)
{
    const played x = play(b, fen, from, to);
    return dtb_rules_next_count(r, b, &x.p, &x.q, count);
}

static void classes(void **state)
{
    (void)state;
    const dtb_rules *r = dtb_rules_find("fmjd64");
    assert_non_null(r);
    for (size_t v = 0; v < sizeof VARIANTS / sizeof *VARIANTS; v++) {
        const dtb_board b = board_of(VARIANTS[v]);
        /* three kings against a lone king: on the main road alone 7.2.7, else 7.2.4 */
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K3:BK29"), "main-road");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K3:BK15"), "main-road");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K4:BK29"), "three-kings");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K3:BK30"), "three-kings");
        /* two kings and a man: on the main road 7.2.7, else both sides have a king, 4 pieces */
        assert_string_equal(class_name(r, &b, "W:WK1,K2,21:BK29"), "main-road");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,21:BK30"), "30-move");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,22:BK29"), "30-move");
        /* the lone king may be either colour */
        assert_string_equal(class_name(r, &b, "B:WK4:BK1,K2,12"), "main-road");
        /* at most two pieces with a king against a lone king: 7.2.8, on the road or not */
        assert_string_equal(class_name(r, &b, "W:WK1,K2:BK29"), "5-move");
        assert_string_equal(class_name(r, &b, "W:WK1,21:BK30"), "5-move");
        assert_string_equal(class_name(r, &b, "W:WK1:BK30"), "5-move");
        /* four kings: 7.2.4; three kings and a man: 7.2.6 by the five pieces */
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K3,K6:BK29"), "three-kings");
        assert_string_equal(class_name(r, &b, "W:WK1,K2,K3,21:BK29"), "30-move");
        /* both sides with a king: 4-5 pieces 7.2.6 (30 moves), 6-7 (60 moves), 8 7.2.5 */
        assert_string_equal(class_name(r, &b, "W:WK1,21:BK32,12"), "30-move");
        assert_string_equal(class_name(r, &b, "W:WK1,21,22:BK32,12,13"), "60-move");
        assert_string_equal(class_name(r, &b, "W:WK1,21,22,23:BK32,12,13,14"), "15-move");
        /* a side without a king: no count */
        assert_string_equal(class_name(r, &b, "W:WK1,21:B12"), "none");
        assert_string_equal(class_name(r, &b, "W:W21:BK30"), "none");
        assert_string_equal(class_name(r, &b, "W:W21:B12"), "none");
    }
}

static void limits_and_counts(void **state)
{
    (void)state;
    const dtb_rules *r = dtb_rules_find("fmjd64");
    const dtb_board b = board_of("russian");
    const dtb_pos road = pos_of(&b, "W:WK1,K2,K3:BK29"), off = pos_of(&b, "W:WK1,K2,K3:BK30");
    assert_int_equal(dtb_rules_pos_limit(r, &b, &road, 0), 30);
    assert_int_equal(dtb_rules_pos_limit(r, &b, &road, 9), 30);
    assert_int_equal(dtb_rules_pos_limit(r, &b, &road, 10), 10);
    assert_int_equal(dtb_rules_pos_limit(r, &b, &off, 10), 30);
    const dtb_pos d6 = pos_of(&b, "W:WK1,21,22:BK32,12,13"), none = pos_of(&b, "W:W21:B12");
    assert_int_equal(dtb_rules_pos_limit(r, &b, &d6, 0), 120);
    assert_int_equal(dtb_rules_pos_limit(r, &b, &none, 0), 0);
    const dtb_material fam = dtb_material_of(&road), five = dtb_material_of(&d6);
    assert_true(dtb_rules_counts(r, &fam));
    assert_false(dtb_rules_counts(r, &five));
    /* black's lone king steps onto the road (30-25): the count goes up; off it (22-17): not */
    assert_int_equal(next_count(r, &b, "B:WK1,K2,K3:BK30", 30, 25, 4), 5);
    assert_int_equal(next_count(r, &b, "B:WK1,K2,K3:BK22", 22, 17, 4), 4);
    /* white's king moves too count while the lone king stays alone on the road */
    assert_int_equal(next_count(r, &b, "W:WK1,K2,K3:BK29", 1, 5, 4), 5);
    /* a white king stepping onto the road takes it: no count */
    assert_int_equal(next_count(r, &b, "W:WK1,K2,K3:BK29", 3, 8, 4), 4);
    /* it stops at late_after (10): beyond it the count answers the same */
    assert_int_equal(next_count(r, &b, "W:WK1,K2,K3:BK29", 1, 5, 10), 10);
    /* a capture into the material starts the count afresh: white's king on 5 takes the man
     * on 9 and lands on 13 (off the road), the lone king on 29 alone on the road: 1 */
    assert_int_equal(next_count(r, &b, "W:WK5,K2,K3:BK29,9", 5, 14, 7), 1);
    /* a capture out of the material (a lone king takes a king, three pieces left): none */
    assert_int_equal(next_count(r, &b, "B:WK18,K2,K3:BK29", 29, 15, 6), 0);
}

static void resets_by_class(void **state)
{
    (void)state;
    const dtb_rules *r = dtb_rules_find("fmjd64");
    const dtb_board b = board_of("russian");
    /* main road: a promotion that is not the first keeps the count (lidraughts'
     * allowPromotion); into three kings off the road it resets (7.2.4) */
    assert_false(resets(r, &b, "W:WK2,K3,6:BK29", 6, 1, 0));
    assert_true(resets(r, &b, "W:WK2,K3,6:BK30", 6, 1, 0));
    /* a first promotion resets in 7.2.8 (a man against a lone king becomes a king) */
    assert_true(resets(r, &b, "W:W6:BK29", 6, 1, 0));
    /* 7.2.8: a king move keeps the count; a capture from three pieces to two does not
     * reset, from four to three it does */
    assert_false(resets(r, &b, "W:WK1,K2:BK29", 1, 5, 0));
    assert_false(resets(r, &b, "B:WK18,K1:BK29", 29, 15, 0));
    assert_true(resets(r, &b, "B:WK18,K1,K3:BK29", 29, 15, 0));
    /* 7.2.6: a man move keeps the count, a promotion resets */
    assert_false(resets(r, &b, "W:WK1,21:BK32,12", 21, 17, 0));
    assert_true(resets(r, &b, "W:WK32,6:BK30,28", 6, 1, 0));
    /* 7.2.5 (eight pieces): a man move resets, a king move does not */
    assert_true(resets(r, &b, "W:WK1,21,22,23:BK32,12,13,14", 21, 17, 0));
    assert_false(resets(r, &b, "W:WK1,21,22,23:BK32,12,13,14", 1, 5, 0));
    /* no count: every move resets */
    assert_true(resets(r, &b, "W:WK1,21:B12", 1, 5, 0));
    /* the main road at its late limit: a capture does not reset (lidraughts resets a 10-ply
     * count only on a capture down to three pieces), early it does */
    assert_true(resets(r, &b, "W:WK5,K2,K3:BK29,9", 5, 14, 0));
    assert_false(resets_at(r, &b, "W:WK5,K2,K3:BK29,9", 5, 14, 10));
    assert_true(resets_at(r, &b, "W:WK5,K2,K3:BK29,9", 5, 14, 9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classes),
        cmocka_unit_test(limits_and_counts),
        cmocka_unit_test(resets_by_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
