/* Answers under the move-count draw rules (gen/solve_rules.c, probe/dtb_rules.c) against a
 * deliberately simple reference that carries the clock explicitly (tests/rules_reference.c:
 * value iteration over (position, clock), sharing with dtb only the move generator and the
 * index), and the rule check (gen/check.c) against a wrong rule byte.
 *
 * Two groups: international under FMJD and english under the WCDF's 40-move rule, each with its
 * limits lowered (so that the rules bite on few pieces; CONFIGS): every other position of 2..3
 * pieces and a sample of 4, white and black to move, at every clock from 0 to one past the
 * limit; the moves of a sample, ranked under the rules; best lines that must never let a rule
 * draw a win. All of international 2..4 takes the reference half a minute: by hand,
 * `test_rules all4`. */
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
#include "check.h"
#include "dtb.h"
#include "fen.h"
#include "movegen.h"
#include "rules_reference.h"

/* One variant's rule set under test: its limits lowered so that the rules bite on few pieces,
 * the pieces of its sets, and of the largest piece count the materials tested (none listed:
 * all of them). */
typedef struct config {
    const char *variant, *rules;
    int limits[DTB_RULE_CLASSES];
    int pieces;
    const char *const *four;
    int nfour;
    /* what the tests must reach (more than): positions compared, wins at clock 0 that a higher
     * clock spoils (the lowered limits bite), moves checked, lines played out */
    uint64_t min_compared, min_spoiled, min_moves, min_lines;
} config;

/* The largest sets: of international 2..3 pieces, and of 4 (in the Release build; the sanitizer
 * build is several times slower) two materials of the 16-move class with their flips, whose man
 * moves and later promotions keep the count (KKMvK promotes into KKKvK without a reset); of
 * english (one class, the WCDF's 40-move rule) all of 2..4 pieces, 2..3 in the sanitizer build. */
static const char *const FOUR[] = {"KKKvK", "KKMvK"};
#ifdef DTB_SANITIZED_BUILD
static const config CONFIGS[] = {
    {"international", "fmjd", {8, 6, 4}, 3, FOUR, 2, 8000, 2000, 4000, 80},
    {"english", "wcdf", {8}, 3, NULL, 0, 190000, 30000, 10000, 200},
};
#else
static const config CONFIGS[] = {
    {"international", "fmjd", {8, 6, 4}, 4, FOUR, 2, 300000, 100000, 10000, 100},
    {"english", "wcdf", {8}, 4, NULL, 0, 600000, 100000, 30000, 500},
};
#endif
static const config *cfg; /* the group running */
static bool all_four;

typedef struct fixture {
    char dir[64];
    const dtb_variant *v;
    dtb_board b;
    dtb_rules rules;
    ref_rules *ref;
    dtb_db *db;
} fixture;

/* Whether material m is in the tested sets. */
static bool tested(const dtb_material *m)
{
    if (all_four || !cfg->nfour || dtb_material_pieces(m) < cfg->pieces)
        return true;
    const dtb_material f = dtb_material_flip(*m);
    for (int i = 0; i < cfg->nfour; i++) {
        dtb_material x;
        assert_int_equal(dtb_material_parse(cfg->four[i], &x, NULL), DTB_OK);
        if (dtb_material_equal(&x, m) || dtb_material_equal(&x, &f))
            return true;
    }
    return false;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/dtb_test_rules_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->v = dtb_variant_find(cfg->variant);
    dtb_board_init(&f->b, f->v);
    f->rules = dtb_rules_with_limits(dtb_rules_of_variant(f->v), cfg->limits, 0);
    dtb_material four[2];
    for (int i = 0; i < cfg->nfour; i++)
        assert_int_equal(dtb_material_parse(cfg->four[i], &four[i], NULL), DTB_OK);
    const int nfour = all_four || cfg->pieces < 4 ? 0 : cfg->nfour;
    /* all of 2..3 pieces, then the 4-piece materials asked for (what they need is there) */
    dtb_build_options o = {.variant = f->v, .pieces = 3, .out_dir = f->dir,
                           .rules = &f->rules};
    dtb_error e;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    o.pieces = cfg->pieces;
    o.only = nfour ? four : NULL;
    o.nonly = nfour;
    if (cfg->pieces == 4 && dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);

    f->ref = ref_rules_build_only(&f->b, cfg->pieces, cfg->limits, nfour ? four : NULL, nfour);
    assert_non_null(f->ref);
    const char *paths[1] = {f->dir};
    dtb_options opt = DTB_OPTIONS_INIT;
    opt.paths = paths;
    opt.npaths = 1;
    opt.variant = f->v->name;
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
    ref_rules_free(f->ref);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
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

/* The answer at every clock against the reference; returns the positions compared, adds to
 * *cursed the cursed wins at clock 0 and to *spoiled the wins at clock 0 drawn at a higher one. */
static uint64_t compare_position(const fixture *f, const dtb_pos *p, uint64_t *cursed,
                                 uint64_t *spoiled)
{
    const int limit = ref_rules_class_limit(f->ref, p);
    const dtb_position pp = public_of(f, p);
    bool won = false, drawn_later = false;
    for (int h = 0; h <= limit + 1; h++) {
        dtb_rule_answer a;
        assert_int_equal(dtb_probe_rules(f->db, &pp, h, 0, &a), DTB_OK);
        const int want = ref_rules_value(f->ref, p, h > limit ? limit : h);
        if (sign_of(a.wdl) != want) {
            char fen[DTB_FEN_MAX];
            dtb_fen_write(&f->b, p, fen, sizeof fen);
            fail_msg("%s clock %d: dtb %s (plies %d, limit %d), reference %d", fen, h,
                     dtb_rule_category_name(a.category), a.plies, a.limit, want);
        }
        assert_int_equal(a.limit, limit);
        assert_string_equal(a.rules, cfg->rules);
        *cursed += h == 0 && a.category == DTB_RULE_CURSED_WIN;
        won |= h == 0 && want == 1;
        drawn_later |= won && want == 0;
    }
    *spoiled += drawn_later;
    return 1;
}

/* Every other position of 2..3 pieces, every 50th of 4, both sides to move, every clock. */
static void values_equal_reference(void **state)
{
    fixture *f = *state;
    const int n = dtb_material_list(cfg->pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(cfg->pieces, list, n);
    uint64_t compared = 0, cursed = 0, spoiled = 0;
    for (int i = 0; i < n; i++) {
        if (!tested(&list[i]))
            continue;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&f->b, list[i], &ix), DTB_OK);
        const uint64_t step = dtb_material_pieces(&list[i]) < 4 ? 2 : cfg->nfour ? 50 : 25;
        for (uint64_t x = 0; x < dtb_index_size(ix); x += step) {
            dtb_pos p, q;
            dtb_index_pos(ix, x, &p);
            dtb_pos_flip(&f->b, &p, &q);
            compared += compare_position(f, &p, &cursed, &spoiled);
            compared += compare_position(f, &q, &cursed, &spoiled);
        }
        dtb_index_free(ix);
    }
    free(list);
    print_message("compared %llu positions at every clock, %llu cursed wins at clock 0, %llu wins "
                  "spoiled by a higher clock\n", (unsigned long long)compared,
                  (unsigned long long)cursed, (unsigned long long)spoiled);
    /* the lowered limits do bite */
    assert_true(compared > cfg->min_compared && spoiled > cfg->min_spoiled);
}

/* The moves of a sample under the rules: each move's value is the reference's value of the
 * position after it at the clock after it, which is 0 exactly when the reference resets; and
 * following the first move from a win under the rules ends the game within the rules. */
static void moves_and_lines(void **state)
{
    fixture *f = *state;
    const int n = dtb_material_list(cfg->pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(cfg->pieces, list, n);
    uint64_t moves = 0, lines = 0;
    for (int i = 0; i < n; i++) {
        if (!tested(&list[i]))
            continue;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&f->b, list[i], &ix), DTB_OK);
        const uint64_t step = dtb_index_size(ix) / 60 + 1;
        for (uint64_t x = 0; x < dtb_index_size(ix); x += step) {
            dtb_pos p;
            dtb_index_pos(ix, x, &p);
            const int limit = ref_rules_class_limit(f->ref, &p);
            for (int h = 0; h < limit; h += 2) {
                const dtb_position pp = public_of(f, &p);
                dtb_rule_move rm[DTB_MAX_MOVES];
                int count;
                assert_int_equal(dtb_probe_rule_moves(f->db, &pp, h, 0, rm, DTB_MAX_MOVES, &count), DTB_OK);
                dtb_movelist ml;
                assert_int_equal(dtb_generate(&f->b, &p, &ml), DTB_OK);
                assert_int_equal(count, ml.count);
                int best = -2;
                for (int k = 0; k < ml.count; k++) {
                    const dtb_move *mv = &ml.moves[k];
                    dtb_pos c;
                    dtb_make_move(&p, mv, &c);
                    const bool reset = ref_rules_resets(f->ref, &p, mv);
                    const int hc = reset ? 0 : h + 1;
                    const int want = dtb_pos_pieces(&c, c.side) ? -ref_rules_value(f->ref, &c, hc) : 1;
                    best = want > best ? want : best;
                    int found = -1;
                    for (int j = 0; j < count; j++) {
                        int caps[DTB_MAX_CAPTURED], nc = 0;
                        for (dtb_bb cb = mv->captured; cb;)
                            caps[nc++] = dtb_bb_pop(&cb) + 1;
                        if (dtb_move_matches(&rm[j].move, mv->from + 1, mv->to + 1, caps, nc))
                            found = j;
                    }
                    assert_true(found >= 0);
                    assert_int_equal(rm[found].clock, hc);
                    const int got = rm[found].category >= DTB_RULE_WIN ? 1 : rm[found].category <= DTB_RULE_LOSS ? -1 : 0;
                    assert_int_equal(got, want);
                    moves++;
                }
                if (count) { /* the first move is one of the best */
                    const int first = rm[0].category >= DTB_RULE_WIN ? 1 : rm[0].category <= DTB_RULE_LOSS ? -1 : 0;
                    assert_int_equal(first, best);
                }
            }
            /* a win under the rules at clock 0, played out by first moves */
            if (ref_rules_value(f->ref, &p, 0) != 1)
                continue;
            dtb_pos cur = p;
            int h = 0, ply = 0;
            for (;; ply++) {
                assert_true(ply < 200);
                if (!dtb_pos_pieces(&cur, cur.side))
                    break;
                dtb_movelist ml;
                assert_int_equal(dtb_generate(&f->b, &cur, &ml), DTB_OK);
                if (ml.count == 0)
                    break;
                /* the side that won at the root never loses its win on the way */
                assert_int_equal(ref_rules_value(f->ref, &cur, h), ply % 2 ? -1 : 1);
                const dtb_position cp = public_of(f, &cur);
                dtb_rule_move rm[DTB_MAX_MOVES];
                int count;
                assert_int_equal(dtb_probe_rule_moves(f->db, &cp, h, 0, rm, DTB_MAX_MOVES, &count), DTB_OK);
                dtb_pdn_move m0 = rm[0].move;
                dtb_move mv = {0};
                bool ok = false;
                for (int k = 0; k < ml.count && !ok; k++) {
                    int caps[DTB_MAX_CAPTURED], nc = 0;
                    for (dtb_bb cb = ml.moves[k].captured; cb;)
                        caps[nc++] = dtb_bb_pop(&cb) + 1;
                    if (dtb_move_matches(&m0, ml.moves[k].from + 1, ml.moves[k].to + 1, caps, nc)) {
                        mv = ml.moves[k];
                        ok = true;
                    }
                }
                assert_true(ok);
                h = rm[0].clock;
                dtb_pos next;
                dtb_make_move(&cur, &mv, &next);
                cur = next;
            }
            assert_int_equal(ply % 2, 1); /* the winner made the last move */
            lines++;
        }
        dtb_index_free(ix);
    }
    free(list);
    print_message("%llu moves, %llu lines\n", (unsigned long long)moves, (unsigned long long)lines);
    assert_true(moves > cfg->min_moves && lines > cfg->min_lines);
}

/* The resets and limits of core/rules.c against the reference's, on every move of a sample. */
static void resets_equal_reference(void **state)
{
    fixture *f = *state;
    const int n = dtb_material_list(cfg->pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(cfg->pieces, list, n);
    uint64_t checked = 0, resets = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&f->b, list[i], &ix), DTB_OK);
        for (uint64_t x = 0; x < dtb_index_size(ix); x += dtb_index_size(ix) / 500 + 1) {
            dtb_pos p;
            dtb_index_pos(ix, x, &p);
            assert_int_equal(dtb_rules_limit(&f->rules, &list[i]), ref_rules_class_limit(f->ref, &p));
            dtb_movelist ml;
            assert_int_equal(dtb_generate(&f->b, &p, &ml), DTB_OK);
            for (int k = 0; k < ml.count; k++) {
                dtb_pos c;
                dtb_make_move(&p, &ml.moves[k], &c);
                const bool r = dtb_rules_resets(&f->rules, &f->b, &p, &ml.moves[k], &c, 0);
                assert_int_equal(r, ref_rules_resets(f->ref, &p, &ml.moves[k]));
                resets += r;
                checked++;
            }
        }
        dtb_index_free(ix);
    }
    free(list);
    assert_true(checked > 10000 && resets > 1000 && resets < checked);
}

typedef struct walk {
    fixture *f;
    dtb_rule_layers rl;
    int checked, mutated;
    uint64_t bad;
} walk;

/* Every rule table re-derived from its successors (no mismatch), then one byte of each kind
 * made wrong: a win one ply longer, a loss one shorter, a draw made a win. */
static void check_one(void *user, const dtb_solved *s, dtb_material m, const dtb_material *missing)
{
    walk *w = user;
    (void)s;
    assert_null(missing);
    const dtb_material ms[2] = {m, dtb_material_flip(m)};
    dtb_error e;
    for (int k = 0; k < 2; k++)
        if (!dtb_rule_layers_find(&w->rl, ms[k], 0))
            assert_int_equal(dtb_build_load_rules(&w->rl, w->f->dir, ms[k], &e), DTB_OK);
    const int n = dtb_material_list(dtb_material_pieces(&m), NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(dtb_material_pieces(&m), list, n);
    for (int i = 0; i < n; i++)
        if (dtb_build_exits(&m, &list[i]))
            for (int k = 0; k < 2; k++) {
                const dtb_material x = k ? dtb_material_flip(list[i]) : list[i];
                if (!dtb_rule_layers_find(&w->rl, x, 0))
                    assert_int_equal(dtb_build_load_rules(&w->rl, w->f->dir, x, &e), DTB_OK);
            }
    free(list);
    dtb_solved_table *rt = (dtb_solved_table *)dtb_rule_layers_find(&w->rl, m, 0);
    w->bad += dtb_check_rules_table(&w->rl, rt, 0, NULL, NULL, 0);
    w->checked++;
    for (int kind = 0; kind < 3; kind++) {
        for (uint64_t i = 0; i < dtb_index_size(rt->index); i++) {
            const dtb_value v = rt->values[i];
            const dtb_wdl want = kind == 0 ? DTB_WIN : kind == 1 ? DTB_LOSS : DTB_DRAW;
            if (dtb_value_wdl(v) != want || (kind == 1 && dtb_mtc_plies(v) == 0))
                continue;
            rt->values[i] = kind == 0 ? (dtb_value)(v + 1) : kind == 1 ? (dtb_value)(v - 1) : 1;
            assert_true(dtb_check_rules_table(&w->rl, rt, 0, NULL, NULL, 0) >= 1);
            rt->values[i] = v;
            w->mutated++;
            break;
        }
    }
}

static void check_catches_wrong_byte(void **state)
{
    fixture *f = *state;
    walk w = {.f = f};
    dtb_error e;
    assert_int_equal(dtb_rule_layers_init(&w.rl, &f->b, &f->rules, &e), DTB_OK);
    const dtb_build_options o = {.variant = f->v, .pieces = 3, .out_dir = f->dir,
                                 .rules = &f->rules};
    assert_int_equal(dtb_build_walk(&o, check_one, &w, &e), DTB_OK);
    assert_int_equal(w.checked, 16); /* every material of 2..3 pieces */
    assert_int_equal(w.bad, 0);
    assert_true(w.mutated >= 30);
    dtb_rule_layers_free(&w.rl);
}

/* At the real limits no 2..3-piece win is cursed, so in the general class (where only king
 * moves keep the count, as only they are not conversions) the rule distance is the MTC: the
 * rule solve and the MTC solve (tested against its own reference, test_mtc) agree on every
 * quiet position. */
static void general_class_equals_mtc(void **state)
{
    fixture *f = *state;
    char dir[] = "/tmp/dtb_test_rules_mtc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const dtb_rules *std = dtb_rules_of_variant(f->v);
    const dtb_build_options o = {.variant = f->v, .pieces = 3, .out_dir = dir, .mtc = true,
                                 .rules = std};
    dtb_error e;
    assert_int_equal(dtb_build(&o, &e), DTB_OK);
    dtb_solved *s = dtb_solved_create(&f->b);
    dtb_rule_layers rl;
    assert_int_equal(dtb_rule_layers_init(&rl, &f->b, std, &e), DTB_OK);
    const int n = dtb_material_list(3, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(3, list, n);
    uint64_t same = 0;
    for (int i = 0; i < n; i++) {
        assert_int_equal(dtb_build_load(s, dir, list[i], &e), DTB_OK);
        assert_int_equal(dtb_build_load_rules(&rl, dir, list[i], &e), DTB_OK);
        if (dtb_rules_class(std, &list[i]) != 0)
            continue;
        const dtb_solved_table *t = dtb_solved_find(s, list[i]);
        const dtb_solved_table *rt = dtb_rule_layers_find(&rl, list[i], 0);
        const uint64_t size = dtb_index_size(t->index);
        dtb_value *mtc = malloc(size);
        assert_int_equal(dtb_build_read_mtc(dir, f->v, list[i], size, mtc, &e), DTB_OK);
        for (uint64_t x = 0; x < size; x++)
            if (!(t->captures[x / 64] >> (x % 64) & 1)) {
                assert_int_equal(rt->values[x], mtc[x]);
                same++;
            }
        free(mtc);
    }
    assert_true(same > 100000);
    free(list);
    dtb_solved_free(s);
    dtb_rule_layers_free(&rl);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A set solved with other limits is refused by a build, not mixed. */
static void other_limits_refused(void **state)
{
    fixture *f = *state;
    int other[DTB_RULE_CLASSES];
    memcpy(other, cfg->limits, sizeof other);
    other[0]++;
    const dtb_rules r = dtb_rules_with_limits(dtb_rules_of_variant(f->v), other, 0);
    dtb_rule_layers rl;
    dtb_error e;
    assert_int_equal(dtb_rule_layers_init(&rl, &f->b, &r, &e), DTB_OK);
    dtb_material m;
    assert_int_equal(dtb_material_parse("KKvK", &m, NULL), DTB_OK);
    assert_int_equal(dtb_build_load_rules(&rl, f->dir, m, &e), DTB_E_MISMATCH);
    assert_non_null(strstr(e.msg, "limit"));
    dtb_rule_layers_free(&rl);
}

int main(int argc, char **argv)
{
    all_four = argc > 1 && strcmp(argv[1], "all4") == 0;
    if (argc > 1 && !all_four)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_equal_reference),
        cmocka_unit_test(moves_and_lines),
        cmocka_unit_test(resets_equal_reference),
        cmocka_unit_test(check_catches_wrong_byte),
        cmocka_unit_test(general_class_equals_mtc),
        cmocka_unit_test(other_limits_refused),
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof CONFIGS / sizeof *CONFIGS; i++) {
        cfg = &CONFIGS[i];
        failed += _cmocka_run_group_tests(cfg->variant, tests, sizeof tests / sizeof *tests,
                                          setup, teardown);
    }
    return failed;
}
