/* The rule distances' unit solve (gen/solve_rules.c, dtb_solve_rules_pair: a retrograde per
 * unit, man moves that keep the count read as exits into units solved before) against the
 * pass solve (gen/solve_rules_passes.c: the one-ply derivation --check runs, iterated from the
 * largest clock down, pair by pair) and against the explicit-counter reference
 * (tests/rules_reference_fmjd64.c), under FMJD-64 in russian and brazilian.
 *
 * Against the passes, pair by pair: each pair of the set is solved by the passes, its bytes
 * (every count layer) set aside, then solved by units, reading the same exits (the rule bytes
 * of the pairs before it, solved by units), and the two compared byte for byte. Pair by pair
 * equality is equality of the whole set (by induction over the build order). The sets: every
 * material of 2..3 pieces under the real limits, and under lowered limits (which bite on few
 * pieces, and keep the passes short) with late_after lowered to 3 (four count layers) 2..3
 * and a 4-piece material with what it reaches (FOUR_PASSES). By hand,
 * `test_rules_units all` takes every material of 2..5 pieces of both variants under the
 * lowered limits (minutes: the passes are the slow part; docs/MEASUREMENTS.md).
 *
 * Against the reference: the unit solve's bytes read as answers at every clock up to one past
 * the limit and every count layer, for 2..3 and a 4-piece material with what it reaches
 * (FOUR_REFERENCE), under the lowered limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "build.h"
#include "fen.h"
#include "index.h"
#include "rule_layers.h"
#include "rules.h"
#include "rules_reference_fmjd64.h"
#include "solve.h"
#include "test_support.h"

static const char *const VARIANTS[] = {"russian", "brazilian"};
enum { NVARIANTS = sizeof VARIANTS / sizeof *VARIANTS };

/* Lowered limits in dtb's class order (15-move, 30-move, 60-move, three-kings, main-road,
 * 5-move, none), the main road's late limit, the lowered late_after, and the same in the
 * reference's terms. */
static const int LOW[DTB_RULE_CLASSES] = {4, 6, 6, 5, 5, 4, 1};
enum { LOW_LATE = 2, LOW_AFTER = 3 };
static const ref64_limits REF_LOW = {.a = 4, .b_early = 5, .b_late = 2, .c = 5, .d45 = 6,
                                     .d67 = 6, .e = 4, .threshold = 3};

/* The 4-piece materials checked by default (with all they reach), by variant: the main road's
 * count layers (KKKvK) and 7.2.6's men on both sides (KMvKM), each against the passes in one
 * variant and the reference in the other. KKMvK (man moves and a later promotion that keep the
 * main road's count) is left to `all` and to test_fmjd64_answers: its passes alone would take
 * longer than this whole test. */
static const char *const FOUR_PASSES[NVARIANTS] = {"KKKvK", "KMvKM"};
static const char *const FOUR_REFERENCE[NVARIANTS] = {"KMvKM", "KKKvK"};
/* The sanitizer build, several times slower, takes 2..3 only. */
#ifdef DTB_SANITIZED_BUILD
enum { NFOUR = 0 };
#else
enum { NFOUR = 1 };
#endif

static bool all_mode; /* `test_rules_units all`: every material of 2..5 */

static dtb_rules lowered(void)
{
    dtb_rules r = dtb_rules_with_limits(dtb_rules_find("fmjd64"), LOW, LOW_LATE);
    r.late_after = LOW_AFTER;
    return r;
}

/* The materials of 2..pieces in build order: all of fewer than `upto` pieces, and of more
 * those some material of sel[0..nsel) reaches (sel included); n into *count. */
static dtb_material *material_set(int pieces, int upto, const char *const *sel, int nsel,
                                  int *count)
{
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *all = malloc((size_t)n * sizeof *all), *out = malloc((size_t)n * sizeof *out);
    assert_non_null(all);
    assert_non_null(out);
    dtb_material_list(pieces, all, n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool in = dtb_material_pieces(&all[i]) < upto;
        for (int j = 0; j < nsel && !in; j++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(sel[j], &m, NULL), DTB_OK);
            in = dtb_material_pieces(&m) >= dtb_material_pieces(&all[i]) &&
                 dtb_build_depends(&m, &all[i]);
        }
        if (in)
            out[k++] = all[i];
    }
    free(all);
    *count = k;
    return out;
}

/* What a run compared: positions (every layer), those the rules decide otherwise than
 * unlimited play (the limits bite), those of count layers above 0, mismatches. */
typedef struct tally {
    uint64_t positions, spoiled, layered, differ;
} tally;

/* The pair of m in s and rl solved: its values, then (check) its rule bytes by the passes,
 * set aside, then by units; the two compared into *t. */
static void solve_pair_both(dtb_solved *s, dtb_rule_layers *rl, dtb_material m, bool check,
                            tally *t)
{
    dtb_error e;
    dtb_solve_stats st[2];
    if (dtb_solve_pair(s, m, false, st, NULL, NULL, &e) != DTB_OK)
        fail_msg("values: %s", e.msg);
    const dtb_material ms[2] = {m, dtb_material_flip(m)};
    const int members = dtb_material_equal(&ms[0], &ms[1]) ? 1 : 2;
    const int layers = dtb_rule_layers_of(rl, &m);
    const uint64_t n = dtb_index_size(dtb_solved_find(s, m)->index);
    uint8_t *passes = NULL;
    if (check) {
        if (dtb_solve_rules_passes(s, rl, m, &e) != DTB_OK)
            fail_msg("passes: %s", e.msg);
        passes = malloc((size_t)(members * layers) * n);
        assert_non_null(passes);
        for (int k = 0; k < members; k++)
            for (int c = 0; c < layers; c++)
                memcpy(passes + (size_t)(k * layers + c) * n,
                       dtb_rule_layers_find(rl, ms[k], c)->values, n);
        for (int k = 0; k < members; k++)
            dtb_rule_layers_drop(rl, ms[k]);
    }
    if (dtb_solve_rules_pair(s, rl, m, &e) != DTB_OK)
        fail_msg("units: %s", e.msg);
    for (int k = 0; check && k < members; k++) {
        const dtb_solved_table *vt = dtb_solved_find(s, ms[k]);
        for (int c = 0; c < layers; c++) {
            const dtb_solved_table *rt = dtb_rule_layers_find(rl, ms[k], c);
            const uint8_t *want = passes + (size_t)(k * layers + c) * n;
            for (uint64_t i = 0; i < n; i++) {
                t->positions++;
                t->layered += c > 0;
                t->spoiled += dtb_value_wdl(rt->values[i]) != dtb_value_wdl(vt->values[i]);
                if (rt->values[i] == want[i])
                    continue;
                if (t->differ++ < 5) {
                    dtb_pos p;
                    char fen[DTB_FEN_MAX];
                    dtb_index_pos(rt->index, i, &p);
                    dtb_fen_write(dtb_solved_board(s), &p, fen, sizeof fen);
                    print_error("%s count %d: units %d, passes %d\n", fen, c, rt->values[i],
                                want[i]);
                }
            }
        }
    }
    free(passes);
}

/* Solves the set list[0..n) of board b under rules, every pair checked against the passes. */
static tally run_set(const dtb_board *b, const dtb_rules *rules, const dtb_material *list, int n)
{
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    dtb_rule_layers rl;
    dtb_error e;
    assert_int_equal(dtb_rule_layers_init(&rl, b, rules, &e), DTB_OK);
    tally t = {0};
    for (int i = 0; i < n; i++)
        if (!dtb_solved_find(s, list[i]))
            solve_pair_both(s, &rl, list[i], true, &t);
    dtb_rule_layers_free(&rl);
    dtb_solved_free(s);
    return t;
}

static void report(const char *what, const char *variant, const tally *t)
{
    print_message("%s %s: %llu compared (%llu above count 0), %llu the rules decide, "
                  "%llu differ\n", variant, what, (unsigned long long)t->positions,
                  (unsigned long long)t->layered, (unsigned long long)t->spoiled,
                  (unsigned long long)t->differ);
}

/* Every material of 2..3 under the real FMJD-64 limits. */
static void units_equal_passes_real(void **state)
{
    (void)state;
    for (int v = 0; v < NVARIANTS; v++) {
        const dtb_board b = board_of(VARIANTS[v]);
        int n;
        dtb_material *list = material_set(3, 4, NULL, 0, &n);
        const tally t = run_set(&b, dtb_rules_find("fmjd64"), list, n);
        free(list);
        report("2..3, real limits", VARIANTS[v], &t);
        assert_int_equal(t.differ, 0);
        assert_true(t.positions > 100000);
    }
}

/* 2..3 and the 4-piece families (all of 2..5 by hand) under the lowered limits. */
static void units_equal_passes_lowered(void **state)
{
    (void)state;
    const dtb_rules rules = lowered();
    tally sum = {0};
    for (int v = 0; v < NVARIANTS; v++) {
        const dtb_board b = board_of(VARIANTS[v]);
        int n;
        dtb_material *list = all_mode ? material_set(5, 6, NULL, 0, &n)
                                      : material_set(4, 4, &FOUR_PASSES[v], NFOUR, &n);
        const tally t = run_set(&b, &rules, list, n);
        free(list);
        report(all_mode ? "2..5, lowered limits" : "2..3 and a 4-piece material, lowered limits",
               VARIANTS[v], &t);
        sum.positions += t.positions;
        sum.spoiled += t.spoiled;
        sum.layered += t.layered;
        sum.differ += t.differ;
    }
    assert_int_equal(sum.differ, 0);
    /* the limits bite, and the count layers are there */
    if (NFOUR)
        assert_true(sum.positions > 3000000 && sum.spoiled > 300000 && sum.layered > 800000);
    else
        assert_true(sum.positions > 300000 && sum.spoiled > 1000);
}

/* The value of the rule byte v of p (its limit at count c: limit) at clock h: +1, 0, -1. */
static int answer(dtb_value v, int limit, int h)
{
    if (v == DTB_VALUE_LOST)
        return -1;
    if (v == DTB_VALUE_DRAW || (limit && (h >= limit || dtb_mtc_plies(v) > limit - h)))
        return 0;
    return dtb_value_is_loss(v) ? -1 : 1;
}

/* The unit solve's bytes of 2..3 and a few 4-piece materials, as answers at every clock and
 * count, against the reference. */
static void units_equal_reference(void **state)
{
    (void)state;
    const dtb_rules rules = lowered();
    tally sum = {0};
    for (int v = 0; v < NVARIANTS; v++) {
        const dtb_board b = board_of(VARIANTS[v]);
        int n;
        dtb_material *list = material_set(4, 4, &FOUR_REFERENCE[v], NFOUR, &n);
        ref64 *ref = ref64_build_only(&b, 4, &REF_LOW, list, n);
        assert_non_null(ref);
        dtb_solved *s = dtb_solved_create(&b);
        dtb_rule_layers rl;
        dtb_error e;
        assert_int_equal(dtb_rule_layers_init(&rl, &b, &rules, &e), DTB_OK);
        tally t = {0};
        for (int i = 0; i < n; i++) {
            if (!dtb_solved_find(s, list[i]))
                solve_pair_both(s, &rl, list[i], false, &t);
            const dtb_index *ix = dtb_solved_find(s, list[i])->index;
            for (int c = 0; c < dtb_rule_layers_of(&rl, &list[i]); c++) {
                const dtb_solved_table *rt = dtb_rule_layers_find(&rl, list[i], c);
                for (uint64_t x = 0; x < dtb_index_size(ix); x++) {
                    dtb_pos p;
                    dtb_index_pos(ix, x, &p);
                    const int limit = dtb_rules_pos_limit(&rules, &b, &p, c);
                    for (int h = 0; h <= limit + 1; h++) {
                        const int want = ref64_value(ref, &p, h, c);
                        const int got = answer(rt->values[x], limit, h);
                        t.positions++;
                        t.layered += c > 0;
                        t.spoiled += h > 0 && want == 0 && ref64_value(ref, &p, 0, c) != 0;
                        if (got == want)
                            continue;
                        if (t.differ++ < 5) {
                            char fen[DTB_FEN_MAX];
                            dtb_fen_write(&b, &p, fen, sizeof fen);
                            print_error("%s clock %d count %d: units %d (byte %d), reference %d\n",
                                        fen, h, c, got, rt->values[x], want);
                        }
                    }
                }
            }
        }
        report("units against the reference, states", VARIANTS[v], &t);
        sum.positions += t.positions;
        sum.spoiled += t.spoiled;
        sum.layered += t.layered;
        sum.differ += t.differ;
        dtb_rule_layers_free(&rl);
        dtb_solved_free(s);
        ref64_free(ref);
        free(list);
    }
    assert_int_equal(sum.differ, 0);
    if (NFOUR)
        assert_true(sum.positions > 10000000 && sum.spoiled > 500000 && sum.layered > 1000000);
    else
        assert_true(sum.positions > 1000000 && sum.spoiled > 50000);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "all") == 0)
        all_mode = true;
    else if (argc > 1) {
        fprintf(stderr, "usage: test_rules_units [all]\n");
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(units_equal_passes_real),
        cmocka_unit_test(units_equal_passes_lowered),
        cmocka_unit_test(units_equal_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
