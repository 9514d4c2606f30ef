/* The MTC solve (gen/solve_mtc.c) against a deliberately simple reference written from the
 * definition (docs/FORMAT.md §8.5), and the MTC check (gen/check.c) against a wrong MTC.
 *
 * The reference shares the move generator, the index (to number positions) and the win / draw /
 * loss of the solved tables with dtb, nothing of the MTC solve: no units, no predecessors, no
 * queues. It makes plain forward passes over every position of a pair: pass n decides exactly
 * the positions whose MTC is n, from their moves and the MTCs decided in earlier passes. */
#define _GNU_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "build.h"
#include "dtb.h"
#include "check.h"
#include "fen.h"
#include "movegen.h"
#include "solve.h"

#define UNDECIDED 0xFFFF

/* The reference MTCs of one pair: per member (white to move), per index, UNDECIDED or the MTC. */
typedef struct ref_pair {
    const dtb_solved *s;
    const dtb_board *b;
    const dtb_solved_table *t[2];
    uint16_t *mtc[2];
    int members;
} ref_pair;

static int member_of(const ref_pair *r, const dtb_material *m)
{
    for (int k = 0; k < r->members; k++)
        if (dtb_material_equal(m, &r->t[k]->material))
            return k;
    return -1;
}

/* What move mv of p costs the side to move on its way to a conversion that keeps its result:
 * -1 unknown yet (a king move into a position not decided), -2 a move that does not keep the
 * win (win: only moves into lost positions count). */
static int move_cost(const ref_pair *r, const dtb_pos *p, const dtb_move *mv, bool win)
{
    dtb_pos q;
    dtb_make_move(p, mv, &q); /* the opponent to move */
    const dtb_wdl w = dtb_value_wdl(dtb_solved_value(r->s, &q));
    if (win && w != DTB_LOSS)
        return -2;
    const bool king = (p->kings[p->side] >> mv->from & 1) && !mv->ncaptured;
    if (!king)
        return 1; /* a capture or a man move: a conversion */
    dtb_pos f;
    dtb_pos_flip(r->b, &q, &f);
    const dtb_material fm = dtb_material_of(&f);
    const int k = member_of(r, &fm);
    assert_true(k >= 0); /* a king move stays in the pair */
    const uint16_t m = r->mtc[k][dtb_index_of(r->t[k]->index, &f)];
    return m == UNDECIDED ? -1 : 1 + m;
}

/* Whether pass n decides position p (white to move, win or loss): a win when its cheapest
 * known move costs n, a loss when every move's cost is known and the dearest is n (no move: 0). */
static bool decides(const ref_pair *r, const dtb_pos *p, bool win, int n)
{
    dtb_movelist ml;
    assert_int_equal(dtb_generate(r->b, p, &ml), DTB_OK);
    if (ml.count == 0)
        return !win && n == 0;
    int best = -1;
    for (int i = 0; i < ml.count; i++) {
        const int c = move_cost(r, p, &ml.moves[i], win);
        if (win && c >= 0 && (best < 0 || c < best))
            best = c;
        if (!win && c == -1)
            return false;
        if (!win && c > best)
            best = c;
    }
    return best == n;
}

/* The positions not decided yet (draws never are). */
typedef struct pending {
    dtb_pos p;
    uint64_t idx;
    int k;
    bool win;
} pending;

static void ref_solve_pair(ref_pair *r)
{
    size_t np = 0, cap = 0;
    pending *list = NULL;
    for (int k = 0; k < r->members; k++) {
        const uint64_t size = dtb_index_size(r->t[k]->index);
        cap += size;
        list = realloc(list, cap * sizeof *list);
        for (uint64_t i = 0; i < size; i++) {
            dtb_pos p;
            dtb_index_pos(r->t[k]->index, i, &p);
            const dtb_wdl w = dtb_value_wdl(dtb_solved_value(r->s, &p));
            if (w != DTB_DRAW)
                list[np++] = (pending){.p = p, .idx = i, .k = k, .win = w == DTB_WIN};
        }
    }
    /* Pass n reads the MTCs of passes before it only: what it decides is applied after it. */
    uint16_t *newly = malloc((np ? np : 1) * sizeof *newly);
    for (int n = 0, quiet = 0; quiet < 2; n++) {
        for (size_t i = 0; i < np; i++)
            newly[i] = decides(r, &list[i].p, list[i].win, n) ? (uint16_t)n : UNDECIDED;
        size_t kept = 0;
        for (size_t i = 0; i < np; i++) {
            if (newly[i] != UNDECIDED)
                r->mtc[list[i].k][list[i].idx] = newly[i];
            else
                list[kept++] = list[i];
        }
        quiet = kept < np ? 0 : quiet + 1;
        np = kept;
    }
    free(newly);
    free(list);
}

/* Solves 2..pieces of a variant (DTW), then each pair's MTC by dtb and by the reference, and
 * compares every position. */
static void compare_variant(const char *name, int pieces)
{
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(name));
    dtb_solved *s = dtb_solved_create(&b);
    assert_non_null(s);
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    size_t compared = 0;
    for (int i = 0; i < n; i++) {
        if (dtb_solved_find(s, list[i]))
            continue;
        dtb_solve_stats st[2];
        dtb_error e;
        if (dtb_solve_pair(s, list[i], false, st, NULL, NULL, &e) != DTB_OK)
            fail_msg("solve: %s", e.msg);
        const dtb_material f = dtb_material_flip(list[i]);
        ref_pair r = {.s = s, .b = &b, .members = dtb_material_equal(&f, &list[i]) ? 1 : 2};
        r.t[0] = dtb_solved_find(s, list[i]);
        r.t[1] = dtb_solved_find(s, f);
        dtb_value *mtc[2] = {NULL, NULL};
        for (int k = 0; k < r.members; k++) {
            const uint64_t size = dtb_index_size(r.t[k]->index);
            r.mtc[k] = malloc(size * sizeof *r.mtc[k]);
            memset(r.mtc[k], 0xFF, size * sizeof *r.mtc[k]);
            mtc[k] = malloc(size);
        }
        dtb_mtc_stats ms[2];
        if (dtb_solve_mtc_pair(s, list[i], mtc, ms, &e) != DTB_OK)
            fail_msg("mtc: %s", e.msg);
        ref_solve_pair(&r);
        size_t bad = 0;
        for (int k = 0; k < r.members; k++) {
            const uint64_t size = dtb_index_size(r.t[k]->index);
            int longest_win = -1;
            for (uint64_t x = 0; x < size; x++) {
                dtb_pos p;
                dtb_index_pos(r.t[k]->index, x, &p);
                const dtb_wdl w = dtb_value_wdl(dtb_solved_value(s, &p));
                const uint16_t m = r.mtc[k][x];
                assert_true((w == DTB_DRAW) == (m == UNDECIDED)); /* every result has its MTC */
                const dtb_value want = w == DTB_DRAW ? DTB_VALUE_DRAW : dtb_mtc_byte(w == DTB_WIN, m);
                if (w == DTB_WIN && m > longest_win)
                    longest_win = m;
                compared++;
                if (mtc[k][x] != want && bad++ < 5) {
                    char fen[DTB_FEN_MAX];
                    dtb_fen_write(&b, &p, fen, sizeof fen);
                    print_message("%s %s: reference %d, dtb byte %d\n", name, fen, want, mtc[k][x]);
                }
            }
            assert_int_equal(ms[k].longest_win, longest_win);
        }
        assert_int_equal(bad, 0);
        for (int k = 0; k < r.members; k++) {
            free(r.mtc[k]);
            free(mtc[k]);
        }
    }
    assert_true(compared > 0);
    free(list);
    dtb_solved_free(s);
}

/* 4 pieces on 8x8 (at most 0.9 M positions a pair; 3 in the sanitizer build); international
 * and canadian boards make 4-piece pairs of millions of positions, many passes each: 3 pieces
 * there (international 4 by hand: `test_mtc international4`). */
#ifdef DTB_SANITIZED_BUILD
#define SMALL_BOARD_PIECES 3
#else
#define SMALL_BOARD_PIECES 4
#endif
static void reference_english(void **state) { (void)state; compare_variant("english", SMALL_BOARD_PIECES); }
/* russian and brazilian share english's board and the unit machinery, which english tests at 4
 * pieces: 3 keep the suite's time. */
static void reference_russian(void **state) { (void)state; compare_variant("russian", 3); }
static void reference_brazilian(void **state) { (void)state; compare_variant("brazilian", 3); }
static void reference_international(void **state) { (void)state; compare_variant("international", 3); }
static void reference_canadian(void **state) { (void)state; compare_variant("canadian", SMALL_BOARD_PIECES == 4 ? 3 : 2); }
/* International 2..4 (minutes): run by hand, `test_mtc international4`. */
static void reference_international4(void **state) { (void)state; compare_variant("international", 4); }

/* ---- dtbgen --check's MTC re-derivation ---------------------------------------------------- */

typedef struct walk {
    const char *dir;
    const dtb_variant *v;
    uint64_t checked, bad, mutated_bad;
    bool mutated;
} walk;

/* Checks each table's MTC as dtbgen --check does: as written, then with one byte made wrong
 * (a won position's MTC one longer, then a lost one's one shorter), which must be caught. */
static void check_one(void *user, const dtb_solved *s, dtb_material m, const dtb_material *missing)
{
    walk *w = user;
    assert_null(missing);
    const dtb_solved_table *t = dtb_solved_find(s, m), *ft = dtb_solved_find(s, dtb_material_flip(m));
    const uint64_t n = dtb_index_size(t->index), fn = dtb_index_size(ft->index);
    dtb_value *mtc = malloc(n), *fmtc = malloc(fn);
    dtb_error e;
    assert_int_equal(dtb_build_read_mtc(w->dir, w->v, m, n, mtc, &e), DTB_OK);
    assert_int_equal(dtb_build_read_mtc(w->dir, w->v, ft->material, fn, fmtc, &e), DTB_OK);
    const dtb_value *other = ft == t ? mtc : fmtc;
    w->bad += dtb_check_mtc_table(s, t, mtc, other, NULL, NULL, 0);
    w->checked++;
    for (int kind = 0; kind < 2; kind++) { /* 0: a win made longer, 1: a loss made shorter */
        for (uint64_t i = 0; i < n; i++) {
            const dtb_value v = mtc[i];
            if ((t->captures[i / 64] >> (i % 64) & 1) || dtb_value_wdl(v) != (kind ? DTB_LOSS : DTB_WIN) ||
                (kind && dtb_mtc_plies(v) == 0))
                continue;
            mtc[i] = kind ? (dtb_value)(v - 1) : (dtb_value)(v + 1);
            const uint64_t bad = dtb_check_mtc_table(s, t, mtc, ft == t ? mtc : fmtc, NULL, NULL, 0);
            assert_true(bad >= 1);
            w->mutated_bad += bad;
            w->mutated = true;
            mtc[i] = v;
            break;
        }
    }
    free(mtc);
    free(fmtc);
}

/* dtb_probe_mtc of every 5th position of 2..3 pieces, white and black to move (a position and
 * its colour flip), against the MTC the solve gives them in memory: quiet positions from the
 * files, capture positions searched (at 1), black to move through the flip. */
static void probe_equals_tables(const char *dir, const dtb_variant *v)
{
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_solved *s = dtb_solved_create(&b);
    const char *paths[1] = {dir};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = paths;
    o.npaths = 1;
    o.variant = v->name;
    o.loader_threads = DTB_NO_LOADERS;
    o.texts = DTB_TEXTS_NUMERIC;
    dtb_db *db;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    const int n = dtb_material_list(3, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(3, list, n);
    uint64_t probed = 0, captures = 0;
    for (int i = 0; i < n; i++) {
        if (dtb_solved_find(s, list[i]))
            continue;
        dtb_solve_stats st[2];
        dtb_error e;
        assert_int_equal(dtb_solve_pair(s, list[i], false, st, NULL, NULL, &e), DTB_OK);
        const dtb_material f = dtb_material_flip(list[i]);
        const dtb_solved_table *t[2] = {dtb_solved_find(s, list[i]), dtb_solved_find(s, f)};
        const int members = t[0] == t[1] ? 1 : 2;
        dtb_value *mtc[2] = {NULL, NULL};
        for (int k = 0; k < members; k++)
            mtc[k] = malloc(dtb_index_size(t[k]->index));
        dtb_mtc_stats ms[2];
        assert_int_equal(dtb_solve_mtc_pair(s, list[i], mtc, ms, &e), DTB_OK);
        for (int k = 0; k < members; k++)
            for (uint64_t x = 0; x < dtb_index_size(t[k]->index); x += 5) {
                dtb_pos p, q;
                dtb_index_pos(t[k]->index, x, &p);
                dtb_pos_flip(&b, &p, &q); /* the same position with black to move */
                for (int side = 0; side < 2; side++) {
                    char fen[DTB_FEN_MAX];
                    dtb_fen_write(&b, side ? &q : &p, fen, sizeof fen);
                    dtb_position pp;
                    assert_int_equal(dtb_position_from_fen(db, fen, &pp, NULL, 0), DTB_OK);
                    dtb_wdl wdl;
                    int m = -1;
                    assert_int_equal(dtb_probe_mtc(db, &pp, 0, &wdl, &m), DTB_OK);
                    const dtb_value want = mtc[k][x];
                    assert_int_equal(wdl, dtb_value_wdl(want));
                    assert_int_equal(m, wdl == DTB_DRAW ? 0 : dtb_mtc_plies(want));
                    probed++;
                }
                captures += t[k]->captures[x / 64] >> (x % 64) & 1;
            }
        free(mtc[0]);
        free(mtc[1]);
    }
    assert_true(probed > 100000 && captures > 1000);
    free(list);
    dtb_close(db);
    dtb_solved_free(s);
}

/* Builds 2..3 with MTC, checks and mutates its tables (check_one), probes them. */
static void check_catches_wrong_mtc(void **state)
{
    (void)state;
    char dir[] = "/tmp/dtb_test_mtc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const dtb_variant *v = dtb_variant_find("international");
    const dtb_build_options o = {.variant = v, .pieces = 3, .out_dir = dir, .mtc = true};
    dtb_error e;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    walk w = {.dir = dir, .v = v};
    assert_int_equal(dtb_build_walk(&o, check_one, &w, &e), DTB_OK);
    assert_int_equal(w.checked, 16); /* every material of 2..3 pieces */
    assert_int_equal(w.bad, 0);
    assert_true(w.mutated);
    probe_equals_tables(dir, v);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "international4") == 0) {
        const struct CMUnitTest slow[] = {cmocka_unit_test(reference_international4)};
        return cmocka_run_group_tests(slow, NULL, NULL);
    }
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* e.g. "reference_english" */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_english),
        cmocka_unit_test(reference_russian),
        cmocka_unit_test(reference_brazilian),
        cmocka_unit_test(reference_international),
        cmocka_unit_test(reference_canadian),
        cmocka_unit_test(check_catches_wrong_mtc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
