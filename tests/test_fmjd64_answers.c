/* dtb's answers under FMJD-64 (russian; the .fmjd64 tables dtbgen makes, read through libdtb's
 * dtb_probe_rules_at and dtb_probe_rule_moves_at) against the explicit-counter reference
 * (tests/rules_reference_fmjd64.h), with every limit lowered so that the rules bite on few
 * pieces: all of 2..3 pieces and of the main-road family of 4 KKKvK and its flip, both sides to
 * move, every clock up to one past the limit and diagonal counts around the threshold. The
 * moves of a sample: each move's clock and diagonal count after it are the reference's, and its
 * category is the reference's value of the position after it at those counters.
 * `test_fmjd64_answers all` adds KKMvK and KMMvK (man moves that keep the 30-move count, later
 * promotions that keep the main road's): a minute more on two cores, run by hand
 * (docs/MEASUREMENTS.md), as their rule solve is the slow part. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "dtb.h"
#include "fen.h"
#include "index.h"
#include "rules.h"
#include "rules_reference_fmjd64.h"

/* The lowered limits, in the reference's terms and in dtb's class order (15-move, 30-move,
 * 60-move, three-kings, main-road, 5-move, none) with the late limit after them. The late
 * limit only bites from a diagonal count of 10, which the tests give directly. */
#ifdef DTB_SANITIZED_BUILD /* lower still: the rule solve's passes run from the largest limit */
static const ref64_limits LIMITS = {.a = 3, .b_early = 4, .b_late = 2, .c = 4, .d45 = 4,
                                    .d67 = 4, .e = 4, .threshold = 10};
static const int DTB_LIMITS[DTB_RULE_CLASSES] = {4, 4, 4, 4, 4, 3, 1};
enum { LATE = 2 };
#else
static const ref64_limits LIMITS = {.a = 4, .b_early = 6, .b_late = 3, .c = 6, .d45 = 8,
                                    .d67 = 8, .e = 6, .threshold = 10};
static const int DTB_LIMITS[DTB_RULE_CLASSES] = {6, 8, 8, 6, 6, 4, 1};
enum { LATE = 3 };
#endif

static const char *const FAMILY[] = {"KKKvK", "KKMvK", "KMMvK"};
enum { NFAMILY = sizeof FAMILY / sizeof *FAMILY };
static int nfamily = 1; /* of FAMILY, tested: all with the argument "all" */
#ifdef DTB_SANITIZED_BUILD
enum { SPARSE = 16 }; /* the sanitizer build samples more sparsely */
#else
enum { SPARSE = 1 };
#endif
static const int COUNTS[] = {0, 1, 8, 9, 10, 12}; /* diagonal counts asked about */
enum { NCOUNTS = sizeof COUNTS / sizeof *COUNTS };

typedef struct fixture {
    char dir[64];
    dtb_board b;
    dtb_rules rules;
    ref64 *ref;
    dtb_db *db;
    dtb_material family[NFAMILY];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/dtb_test_fmjd64_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    const dtb_variant *v = dtb_variant_find("russian");
    dtb_board_init(&f->b, v);
    f->rules = dtb_rules_with_limits(dtb_rules_find("fmjd64"), DTB_LIMITS, LATE);
    for (int i = 0; i < nfamily; i++)
        assert_int_equal(dtb_material_parse(FAMILY[i], &f->family[i], NULL), DTB_OK);
    dtb_build_options o = {.variant = v, .pieces = 3, .out_dir = f->dir, .rules = &f->rules};
    dtb_error e;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    o.pieces = 4;
    o.only = f->family;
    o.nonly = nfamily;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    f->ref = ref64_build_only(&f->b, 4, &LIMITS, f->family, nfamily);
    assert_non_null(f->ref);
    const char *paths[1] = {f->dir};
    dtb_options opt = DTB_OPTIONS_INIT;
    opt.paths = paths;
    opt.npaths = 1;
    opt.variant = "russian";
    opt.loader_threads = DTB_NO_LOADERS;
    opt.texts = DTB_TEXTS_NUMERIC;
    assert_int_equal(dtb_open(&opt, &f->db), DTB_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dtb_close(f->db);
    ref64_free(f->ref);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    const int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

static dtb_position public_of(const fixture *f, const dtb_pos *p)
{
    char fen[DTB_FEN_MAX];
    dtb_fen_write(&f->b, p, fen, sizeof fen);
    dtb_position pp;
    assert_int_equal(dtb_position_from_fen(f->db, fen, &pp, NULL, 0), DTB_OK);
    return pp;
}

static int sign_of(dtb_wdl w) { return w == DTB_WIN ? 1 : w == DTB_LOSS ? -1 : 0; }

/* The materials under test: 2..3 pieces and the family, by list order. */
static int materials(const fixture *f, dtb_material *list)
{
    const int n = dtb_material_list(4, NULL, 0);
    dtb_material *all = malloc((size_t)n * sizeof *all);
    dtb_material_list(4, all, n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool in = dtb_material_pieces(&all[i]) <= 3;
        for (int j = 0; j < nfamily && !in; j++) {
            const dtb_material x = dtb_material_flip(f->family[j]);
            in = dtb_material_equal(&all[i], &f->family[j]) || dtb_material_equal(&all[i], &x);
        }
        if (in)
            list[k++] = all[i];
    }
    free(all);
    return k;
}

/* The answer at every clock and the counts asked about against the reference; returns the
 * states compared, adds to *spoiled the (position, count) won at clock 0 and drawn later. */
static uint64_t compare_position(const fixture *f, const dtb_pos *p, uint64_t *spoiled)
{
    const dtb_material m = dtb_material_of(p);
    const bool family = ref64_family(&m);
    const dtb_position pp = public_of(f, p);
    uint64_t states = 0;
    for (int k = 0; k < (family ? NCOUNTS : 1); k++) {
        const int c = COUNTS[k];
        const int limit = ref64_limit_of(&f->b, &LIMITS, p, c);
        bool won = false, drawn_later = false;
        for (int h = 0; h <= (limit < 0 ? 2 : limit + 1); h++) {
            const dtb_rule_counters rc = {.clock = h, .diagonal = c};
            dtb_rule_answer a;
            assert_int_equal(dtb_probe_rules_at(f->db, &pp, &rc, 0, &a), DTB_OK);
            const int want = ref64_value(f->ref, p, h, c);
            if (sign_of(a.wdl) != want) {
                char fen[DTB_FEN_MAX];
                dtb_fen_write(&f->b, p, fen, sizeof fen);
                fail_msg("%s clock %d diagonal %d: dtb %s (plies %d, limit %d, %s), reference %d",
                         fen, h, c, dtb_rule_category_name(a.category), a.plies, a.limit, a.rule,
                         want);
            }
            assert_int_equal(a.limit, limit < 0 ? 0 : limit);
            assert_string_equal(a.rules, "fmjd64");
            won |= h == 0 && want == 1;
            drawn_later |= won && want == 0;
            states++;
        }
        *spoiled += drawn_later;
    }
    return states;
}

/* Every other position of 2..3 pieces, every 20th of the family (SPARSE times as far apart in
 * the sanitizer build), both sides to move. */
static void values_equal_reference(void **state)
{
    fixture *f = *state;
    dtb_material list[64];
    const int n = materials(f, list);
    uint64_t states = 0, spoiled = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&f->b, list[i], &ix), DTB_OK);
        const uint64_t step = SPARSE * (dtb_material_pieces(&list[i]) < 4 ? 2 : 20);
        for (uint64_t x = 0; x < dtb_index_size(ix); x += step) {
            dtb_pos p, q;
            dtb_index_pos(ix, x, &p);
            dtb_pos_flip(&f->b, &p, &q);
            states += compare_position(f, &p, &spoiled);
            states += compare_position(f, &q, &spoiled);
        }
        dtb_index_free(ix);
    }
    print_message("%d materials, %llu states compared, %llu wins a higher clock spoils\n", n,
                  (unsigned long long)states, (unsigned long long)spoiled);
    /* the lowered limits do bite */
    assert_true(states > 400000 / SPARSE && spoiled > 10000 / SPARSE);
}

/* The moves of every 200th family position (every 20th of 2..3 pieces; SPARSE times as far apart
 * in the sanitizer build) at a few counters: each
 * move's counters after it and its category against the reference. */
static void moves_equal_reference(void **state)
{
    fixture *f = *state;
    dtb_material list[64];
    const int n = materials(f, list);
    uint64_t moves = 0, resets = 0, counted = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&f->b, list[i], &ix), DTB_OK);
        const uint64_t step = SPARSE * (dtb_material_pieces(&list[i]) < 4 ? 20 : 200);
        for (uint64_t x = 0; x < dtb_index_size(ix); x += step) {
            dtb_pos p;
            dtb_index_pos(ix, x, &p);
            const dtb_position pp = public_of(f, &p);
            dtb_movelist ml;
            assert_int_equal(dtb_generate(&f->b, &p, &ml), DTB_OK);
            const dtb_material m = dtb_material_of(&p);
            for (int k = 0; k < (ref64_family(&m) ? NCOUNTS : 1); k += 2)
                for (int h = 0; h < 3; h++) {
                    const int c = COUNTS[k];
                    const dtb_rule_counters rc = {.clock = h, .diagonal = c};
                    dtb_rule_move out[DTB_MAX_MOVES];
                    int count = 0;
                    assert_int_equal(dtb_probe_rule_moves_at(f->db, &pp, &rc, 0, out,
                                                             DTB_MAX_MOVES, &count), DTB_OK);
                    const int limit = ref64_limit_of(&f->b, &LIMITS, &p, c);
                    if (limit >= 0 && h >= limit) {
                        assert_int_equal(count, 0); /* drawn by the rules: no move */
                        continue;
                    }
                    assert_int_equal(count, ml.count);
                    for (int j = 0; j < count; j++) {
                        /* the core move of out[j] */
                        dtb_bb taken = 0;
                        for (int t = 0; t < out[j].move.ncaptured; t++)
                            taken |= dtb_bb_bit(out[j].move.captured[t] - 1);
                        int at = -1;
                        for (int t = 0; t < ml.count && at < 0; t++)
                            if (ml.moves[t].from + 1 == out[j].move.from &&
                                ml.moves[t].to + 1 == out[j].move.to &&
                                ml.moves[t].captured == taken)
                                at = t;
                        assert_true(at >= 0);
                        const dtb_move *mv = &ml.moves[at];
                        const int c2 = ref64_next_count(&f->b, &LIMITS, &p, mv, c);
                        const bool r = ref64_resets(&f->b, &LIMITS, &p, mv, c);
                        const int h2 = r ? 0 : h + 1;
                        assert_int_equal(out[j].clock, h2);
                        dtb_rule_counters after;
                        assert_int_equal(dtb_rule_counters_after(f->db, &pp, &rc, &out[j].move,
                                                                 &after), DTB_OK);
                        assert_int_equal(after.clock, h2);
                        assert_int_equal(after.diagonal < 10 ? after.diagonal : 10,
                                         c2 < 10 ? c2 : 10);
                        dtb_pos q;
                        dtb_make_move(&p, mv, &q);
                        const int want = -ref64_value(f->ref, &q, h2, c2);
                        const int got = out[j].category == DTB_RULE_WIN    ? 1
                                        : out[j].category == DTB_RULE_LOSS ? -1
                                                                           : 0;
                        assert_int_equal(got, want);
                        moves++;
                        resets += r;
                        counted += c2 > c;
                    }
                }
        }
        dtb_index_free(ix);
    }
    print_message("%llu moves, %llu resets, %llu that count\n", (unsigned long long)moves,
                  (unsigned long long)resets, (unsigned long long)counted);
    assert_true(moves > 40000 / SPARSE && resets > 8000 / SPARSE && counted > 500 / SPARSE);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "all") == 0)
        nfamily = NFAMILY;
    else if (argc > 1) {
        fprintf(stderr, "usage: test_fmjd64_answers [all]\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_equal_reference),
        cmocka_unit_test(moves_equal_reference),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
