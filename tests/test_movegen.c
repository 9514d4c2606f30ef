/* Move generation: every move list of the FMJD rule book (tests/data/rulebook-moves.txt) exactly,
 * positions worked out by hand for each rule that differs between variants (promotion in passing,
 * men capturing backwards, short and flying kings, majority vs free choice, no piece jumped twice,
 * merging of equal moves vs keeping moves that take different pieces), and cross-checks on small
 * move trees: the bulk count and the capture test agree with the generated list, every capture
 * route replays square by square, and make_move moves exactly the pieces a move names. */
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
#include "movegen.h"

static dtb_bb squares(const int *list) /* PDN squares, 0-terminated */
{
    dtb_bb s = 0;
    for (; *list; list++)
        s |= dtb_bb_bit(*list - 1);
    return s;
}

/* An expected move in PDN numbers; captured is a 0-terminated list, empty for a quiet move. */
typedef struct want {
    int from, to;
    int captured[12];
    bool promotes;
} want;

/* The generated list must equal the wanted moves exactly (each once, nothing more). */
static void expect_moves(const char *variant, const char *fen, const want *w, int n)
{
    const dtb_board b = board_of(variant);
    const dtb_pos p = pos_of(&b, fen);
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    if (list.count != n)
        fail_msg("%s %s: %d moves generated, %d expected", variant, fen, list.count, n);
    bool used[DTB_MAX_MOVES] = {false};
    for (int i = 0; i < n; i++) {
        const dtb_bb cap = squares(w[i].captured);
        int hit = -1;
        for (int j = 0; j < list.count && hit < 0; j++) {
            const dtb_move *m = &list.moves[j];
            if (!used[j] && m->from == w[i].from - 1 && m->to == w[i].to - 1 && m->captured == cap &&
                m->promotes == w[i].promotes)
                hit = j;
        }
        if (hit < 0)
            fail_msg("%s %s: move %d-%d (%d captured) missing", variant, fen, w[i].from, w[i].to,
                     dtb_bb_count(cap));
        used[hit] = true;
        assert_int_equal(list.moves[hit].ncaptured, dtb_bb_count(cap));
    }
}

/* ---- the rule book ---------------------------------------------------------------------- */

typedef struct pdn_move {
    int from, to;
    bool capture;
} pdn_move;

static int cmp_pdn(const void *a, const void *b)
{
    const pdn_move *x = a, *y = b;
    if (x->from != y->from)
        return x->from - y->from;
    if (x->to != y->to)
        return x->to - y->to;
    return (int)x->capture - (int)y->capture;
}

/* Each line: FEN | article | moves as "a-b" or "axb". The moves list is compared as a multiset of
 * (from, to, capture or not) with the generated moves. */
static void rulebook(void **state)
{
    (void)state;
    const dtb_board b = board_of("international");
    FILE *f = fopen(DTB_TEST_DATA "/rulebook-moves.txt", "r");
    assert_non_null(f);
    char line[1024];
    int positions = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || trim(line)[0] == '\0')
            continue;
        char *bar1 = strchr(line, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
        assert_non_null(bar2);
        *bar1 = *bar2 = '\0';
        const char *fen = trim(line);
        const dtb_pos p = pos_of(&b, fen);

        pdn_move want_list[DTB_MAX_MOVES];
        int nwant = 0;
        for (char *tok = strtok(bar2 + 1, " \n\r"); tok; tok = strtok(NULL, " \n\r")) {
            char *end;
            const long from = strtol(tok, &end, 10);
            assert_true(*end == '-' || *end == 'x');
            const bool capture = *end == 'x';
            const long to = strtol(end + 1, &end, 10);
            assert_true(*end == '\0');
            assert_true(nwant < DTB_MAX_MOVES);
            want_list[nwant++] = (pdn_move){(int)from, (int)to, capture};
        }
        assert_true(nwant > 0);

        dtb_movelist list;
        assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
        pdn_move got[DTB_MAX_MOVES];
        for (int i = 0; i < list.count; i++)
            got[i] = (pdn_move){list.moves[i].from + 1, list.moves[i].to + 1,
                                list.moves[i].ncaptured > 0};
        qsort(want_list, (size_t)nwant, sizeof *want_list, cmp_pdn);
        qsort(got, (size_t)list.count, sizeof *got, cmp_pdn);
        if (list.count != nwant)
            fail_msg("%s: %d moves generated, the rule book lists %d", fen, list.count, nwant);
        for (int i = 0; i < nwant; i++)
            if (cmp_pdn(&got[i], &want_list[i]) != 0)
                fail_msg("%s: generated %d%c%d where the rule book has %d%c%d", fen, got[i].from,
                         got[i].capture ? 'x' : '-', got[i].to, want_list[i].from,
                         want_list[i].capture ? 'x' : '-', want_list[i].to);
        positions++;
    }
    fclose(f);
    assert_true(positions >= 19);
}

/* Promotion details of rule-book positions the list file cannot express. */
static void rulebook_promotion(void **state)
{
    (void)state;
    /* A man reaching the far row with a quiet move is crowned. */
    expect_moves("international", "W:W8", (want[]){{8, 2, {0}, true}, {8, 3, {0}, true}}, 2);
    /* 4.15: passing over the far row mid-capture does not crown (15x4x13). */
    expect_moves("international", "W:W15:B9,10", (want[]){{15, 13, {10, 9, 0}, false}}, 1);
}

/* ---- rules that differ between variants (8x8 positions analysed by hand) ---------------- */

/* White man on 11 jumps 7 and lands on 2, the far row. Russian: it is a king at once and flies
 * on over 6 to 9 or 13. Brazilian: it goes on as a man (men capture backwards) to 9 and is not
 * crowned, since it does not end on the far row. English: reaching the far row ends the move. */
static void promotion_in_passing(void **state)
{
    (void)state;
    expect_moves("russian", "W:W11:B6,7",
                 (want[]){{11, 9, {6, 7, 0}, true}, {11, 13, {6, 7, 0}, true}}, 2);
    expect_moves("brazilian", "W:W11:B6,7", (want[]){{11, 9, {6, 7, 0}, false}}, 1);
    expect_moves("english", "W:W11:B6,7", (want[]){{11, 2, {7, 0}, true}}, 1);

    /* Only a king (flying, after crowning on 2) can take 9 across the empty 6. */
    expect_moves("russian", "W:W11:B7,9", (want[]){{11, 13, {7, 9, 0}, true}}, 1);
    expect_moves("brazilian", "W:W11:B7,9", (want[]){{11, 2, {7, 0}, true}}, 1);

    /* make_move of a promotion in passing leaves a king on 13 and no black piece. */
    const dtb_board b = board_of("russian");
    const dtb_pos p = pos_of(&b, "W:W11:B7,9");
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    dtb_pos q;
    dtb_make_move(&p, &list.moves[0], &q);
    assert_true(dtb_pos_equal(&q, &(dtb_pos){.kings = {dtb_bb_bit(12), 0}, .side = DTB_BLACK}));
}

/* A black man on 22 sits diagonally behind the white man on 18 with 25 free. */
static void men_capture_backwards(void **state)
{
    (void)state;
    expect_moves("english", "W:W18:B22", (want[]){{18, 14, {0}, false}, {18, 15, {0}, false}}, 2);
    expect_moves("russian", "W:W18:B22", (want[]){{18, 25, {22, 0}, false}}, 1);
    expect_moves("brazilian", "W:W18:B22", (want[]){{18, 25, {22, 0}, false}}, 1);
}

/* King on 11, black man on 22 three squares down the 11-29 diagonal. */
static void short_and_flying_kings(void **state)
{
    (void)state;
    /* English kings step one square and see nothing to capture. */
    expect_moves("english", "W:WK11:B22",
                 (want[]){{11, 7, {0}, false},
                          {11, 8, {0}, false},
                          {11, 15, {0}, false},
                          {11, 16, {0}, false}},
                 4);
    /* Flying kings take from a distance and may land on any free square behind. */
    expect_moves("russian", "W:WK11:B22",
                 (want[]){{11, 25, {22, 0}, false}, {11, 29, {22, 0}, false}}, 2);
    /* Short capture: only from next to the piece, landing right behind it. */
    expect_moves("english", "W:WK18:B22", (want[]){{18, 25, {22, 0}, false}}, 1);
    /* A flying king without a capture: the 1-28 diagonal, plus 5 on the other side. */
    expect_moves("russian", "W:WK1",
                 (want[]){{1, 5, {0}, false},
                          {1, 6, {0}, false},
                          {1, 10, {0}, false},
                          {1, 15, {0}, false},
                          {1, 19, {0}, false},
                          {1, 24, {0}, false},
                          {1, 28, {0}, false}},
                 7);
}

/* The man on 22 can take 17 (one piece) or 18 then 10 (two pieces). */
static void majority_vs_free_choice(void **state)
{
    (void)state;
    expect_moves("russian", "W:W22:B10,17,18",
                 (want[]){{22, 13, {17, 0}, false}, {22, 6, {18, 10, 0}, false}}, 2);
    expect_moves("brazilian", "W:W22:B10,17,18", (want[]){{22, 6, {18, 10, 0}, false}}, 1);
    /* 4.14 of the rule book, with the captured sets: a king counts as one piece, so taking the
     * king and a man (26x8) and two men (26x28) are equally long. */
    expect_moves("international", "W:W26:B12,K21,31,32",
                 (want[]){{26, 8, {21, 12, 0}, false}, {26, 28, {31, 32, 0}, false}}, 2);
}

/* Four black men around 10 (on 14, 15, 22, 23): a man on 10 takes all four, clockwise or
 * anticlockwise, and stands on 10 again; it cannot take 15 (or 14) a second time. Both routes
 * are one move. A flying king does the same round and may stop on 10, 7 or 3 (one way) or on
 * 10, 6 or 1 (the other): the two routes to 10 are again one move. On every intermediate
 * jump it must land where it can go on capturing. */
static void no_piece_twice_and_merging(void **state)
{
    (void)state;
    expect_moves("brazilian", "W:W10:B14,15,22,23", (want[]){{10, 10, {14, 15, 22, 23, 0}, false}},
                 1);
    expect_moves("russian", "W:WK10:B14,15,22,23",
                 (want[]){{10, 10, {14, 15, 22, 23, 0}, false},
                          {10, 7, {14, 15, 22, 23, 0}, false},
                          {10, 3, {14, 15, 22, 23, 0}, false},
                          {10, 6, {14, 15, 22, 23, 0}, false},
                          {10, 1, {14, 15, 22, 23, 0}, false}},
                 5);
    /* A move that ends where it started: the man stays on 10 and every black piece is gone. */
    const dtb_board b = board_of("brazilian");
    const dtb_pos p = pos_of(&b, "W:W10:B14,15,22,23");
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    dtb_pos q;
    dtb_make_move(&p, &list.moves[0], &q);
    assert_true(dtb_pos_equal(&q, &(dtb_pos){.men = {dtb_bb_bit(9), 0}, .side = DTB_BLACK}));
}

/* English men capture forward only, so the man on 26 reaches 10 over 23 and 15 or over 22 and
 * 14, and cannot continue: two moves with the same start and end that take different pieces. */
static void same_ends_different_pieces(void **state)
{
    (void)state;
    expect_moves("english", "W:W26:B14,15,22,23",
                 (want[]){{26, 10, {23, 15, 0}, false}, {26, 10, {22, 14, 0}, false}}, 2);

    /* Each has its own route: 26x19x10 and 26x17x10. */
    const dtb_board b = board_of("english");
    const dtb_pos p = pos_of(&b, "W:W26:B14,15,22,23");
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    for (int i = 0; i < list.count; i++) {
        uint8_t path[8];
        assert_int_equal(dtb_capture_route(&b, &p, &list.moves[i], path, 8), 2);
        assert_int_equal(path[1] + 1, 10);
        const int via = dtb_bb_has(list.moves[i].captured, 22) ? 19 : 17;
        assert_int_equal(path[0] + 1, via);
    }
    /* A capture no route realises, and a quiet move, have no route. */
    dtb_move m = list.moves[0];
    m.captured = dtb_bb_bit(13) | dtb_bb_bit(22); /* 14 and 23 */
    assert_int_equal(dtb_capture_route(&b, &p, &m, (uint8_t[8]){0}, 8), -1);
    const dtb_move quiet = {.from = 25, .to = 21};
    assert_int_equal(dtb_capture_route(&b, &p, &quiet, (uint8_t[8]){0}, 8), -1);
}

/* 4.8 of the rule book: captured pieces stay until the move ends. The black king on 25 takes
 * 39, 42, 27 and 28 (25x48x31x22x33) and must stop on 33: 38 would be next, but the square
 * behind it, 42, still holds a taken piece. After the move only the taken pieces are gone. */
static void pieces_removed_after_move(void **state)
{
    (void)state;
    expect_moves("international", "B:W27,28,38,39,42:BK25",
                 (want[]){{25, 33, {27, 28, 39, 42, 0}, false}}, 1);
    const dtb_board b = board_of("international");
    const dtb_pos p = pos_of(&b, "B:W27,28,38,39,42:BK25");
    dtb_movelist list;
    assert_int_equal(dtb_generate(&b, &p, &list), DTB_OK);
    dtb_pos q;
    dtb_make_move(&p, &list.moves[0], &q);
    const dtb_pos want_pos = {.men = {dtb_bb_bit(37), 0}, .kings = {0, dtb_bb_bit(32)},
                              .side = DTB_WHITE};
    assert_true(dtb_pos_equal(&q, &want_pos));
}

/* ---- cross-checks over small move trees ------------------------------------------------- */

/* Replays a route: each leg runs straight along one diagonal and passes exactly one piece to
 * be taken (not taken before), over empty squares otherwise. */
static void check_route(const dtb_board *b, const dtb_pos *p, const dtb_move *m)
{
    uint8_t path[64];
    const int n = dtb_capture_route(b, p, m, path, 64);
    assert_int_equal(n, m->ncaptured);
    const dtb_bb occupied = dtb_pos_occupied(p) & ~dtb_bb_bit(m->from);
    dtb_bb taken = 0;
    int at = m->from;
    for (int i = 0; i < n; i++) {
        bool done = false;
        for (int d = 0; d < DTB_DIRS && !done; d++) {
            int over = -1, s = b->next[at][d];
            for (; s >= 0 && s != path[i]; s = b->next[s][d])
                if (dtb_bb_has(occupied, s)) {
                    if (over >= 0)
                        break;
                    over = s;
                }
            if (s == path[i] && over >= 0) {
                assert_true(dtb_bb_has(m->captured, over));
                assert_false(dtb_bb_has(taken, over));
                taken |= dtb_bb_bit(over);
                done = true;
            }
        }
        assert_true(done);
        at = path[i];
    }
    assert_int_equal(at, m->to);
    assert_true(taken == m->captured);
}

static void check_tree(const dtb_board *b, const dtb_pos *p, int depth, long *captures)
{
    dtb_movelist list;
    assert_int_equal(dtb_generate(b, p, &list), DTB_OK);
    assert_int_equal(dtb_count_moves(b, p), list.count);
    const bool capture = list.count > 0 && list.moves[0].ncaptured > 0;
    assert_int_equal(dtb_has_capture(b, p), capture);
    /* dtb_generate_captures_by told exactly the pieces that capture (from the full list): the
     * same list; told none: no capture. */
    dtb_bb men = 0;
    bool king_can = false;
    for (int i = 0; capture && i < list.count; i++) {
        if (dtb_bb_has(p->kings[p->side], list.moves[i].from))
            king_can = true;
        else
            men |= dtb_bb_bit(list.moves[i].from);
    }
    dtb_movelist by;
    assert_int_equal(dtb_generate_captures_by(b, p, men, king_can, &by), DTB_OK);
    assert_int_equal(by.count, capture ? list.count : 0);
    for (int i = 0; i < by.count; i++) {
        const dtb_move *x = &by.moves[i], *y = &list.moves[i];
        assert_true(x->captured == y->captured && x->from == y->from && x->to == y->to &&
                    x->ncaptured == y->ncaptured && x->promotes == y->promotes);
    }
    for (int i = 0; i < list.count; i++) {
        const dtb_move *m = &list.moves[i];
        assert_int_equal(m->ncaptured > 0, capture);
        for (int j = 0; j < i; j++) /* (from, to, captured, promotes) never repeats */
            assert_false(list.moves[j].from == m->from && list.moves[j].to == m->to &&
                         list.moves[j].captured == m->captured &&
                         list.moves[j].promotes == m->promotes);
        if (capture) {
            check_route(b, p, m);
            ++*captures;
        }
        dtb_pos q;
        dtb_make_move(p, m, &q);
        /* Only the mover moved, only the captured pieces went, the side changed. */
        const dtb_color s = p->side, o = (dtb_color)(s ^ 1);
        assert_int_equal(q.side, o);
        assert_true(q.men[o] == (p->men[o] & ~m->captured));
        assert_true(q.kings[o] == (p->kings[o] & ~m->captured));
        assert_true((dtb_pos_pieces(&q, s) ^ dtb_pos_pieces(p, s)) ==
                    (m->from == m->to ? 0 : dtb_bb_bit(m->from) | dtb_bb_bit(m->to)));
        assert_int_equal(dtb_pos_validate(b, &q, NULL), DTB_OK);
        if (depth > 1)
            check_tree(b, &q, depth - 1, captures);
    }
}

/* dtb_count_king_steps against a walk of the neighbour table: random king sets among random
 * pieces on every board, flying and short kings as the variant says. */
static void king_step_count(void **state)
{
    (void)state;
    static const char *const variants[] = {"international", "russian", "brazilian", "english",
                                           "canadian"};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        const dtb_board b = board_of(variants[v]);
        for (int t = 0; t < 20000; t++) {
            dtb_bb kings = 0, pieces = 0;
            const int nk = 1 + t % 5, np = t % 7;
            for (int i = 0; i < nk + np; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                const int sq = (int)((x >> 33) % (uint64_t)b.squares);
                if (i < nk)
                    kings |= dtb_bb_bit(sq);
                else
                    pieces |= dtb_bb_bit(sq);
            }
            pieces &= ~kings;
            const dtb_bb empty = b.all & ~(kings | pieces);
            int expect = 0;
            for (int k = 0; k < b.squares; k++)
                if (dtb_bb_has(kings, k))
                    for (int d = 0; d < DTB_DIRS; d++)
                        for (int s = b.next[k][d]; s >= 0 && dtb_bb_has(empty, s);
                             s = b.variant->kings_fly ? b.next[s][d] : -1)
                            expect++;
            assert_int_equal(dtb_count_king_steps(&b, kings, empty), expect);
        }
    }
}

static void tree_consistency(void **state)
{
    (void)state;
    static const struct {
        const char *variant, *fen;
        int depth;
    } cases[] = {
        {"international", "W:W31-50:B1-20", 4},
        {"international", "B:BK17,K24:W6,9,10,11,20,21,22,23,30,K31,33,37,41,42,43,44,46", 3},
        {"international", "W:WK31-50:BK1-20", 2},
        {"brazilian", "W:W21-32:B1-12", 5},
        {"russian", "W:W21-32:B1-12", 5},
        {"english", "B:W21-32:B1-12", 5},
        {"canadian", "W:W43-72:B1-30", 3},
        {"russian", "W:WK10:B14,15,22,23", 3},
        {"russian", "W:W11,K29:B6,7,K4", 4},
        {"english", "W:WK11,18,K30:B6,7,22,K27", 4},
    };
    long captures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dtb_board b = board_of(cases[i].variant);
        const dtb_pos p = pos_of(&b, cases[i].fen);
        check_tree(&b, &p, cases[i].depth, &captures);
    }
    assert_true(captures > 1000); /* the trees do exercise captures */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rulebook),
        cmocka_unit_test(rulebook_promotion),
        cmocka_unit_test(promotion_in_passing),
        cmocka_unit_test(men_capture_backwards),
        cmocka_unit_test(short_and_flying_kings),
        cmocka_unit_test(majority_vs_free_choice),
        cmocka_unit_test(no_piece_twice_and_merging),
        cmocka_unit_test(same_ends_different_pieces),
        cmocka_unit_test(pieces_removed_after_move),
        cmocka_unit_test(tree_consistency),
        cmocka_unit_test(king_step_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
