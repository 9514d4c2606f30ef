/* Distances beyond the DTW byte: the long lists (core/value.h, docs/FORMAT.md §8.4).
 *
 * No table of up to 4 pieces needs one, so two stand-ins make them:
 *   - a build with a lowered byte limit (dtb_build_options.dtw_byte_max): every distance beyond
 *     it goes through the escapes and the long lists, in the solver, the writer, the reader,
 *     the loader of finished tables, the check and the probe; the values must be the plain
 *     build's, position by position and by manifest digest;
 *   - a synthetic table (tests/long_table.h) whose one listed distance is beyond 254 plies: the
 *     probe's answers must carry it exactly. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dtb.h"
#include "long_table.h"
#include "manifest.h"
#include "material.h"
#include "public_position.h"
#include "solved.h"
#include "tableformat.h"

static char root[64], plain[128], low[128], lowff[128], full[128], synth[128];
static dtb_board board;
enum { LOW = 5 }; /* the lowered byte limit: russian 2..3 has wins up to 29 plies */

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_longdtw_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(plain, sizeof plain, "%s/plain", root);
    snprintf(low, sizeof low, "%s/low", root);
    snprintf(lowff, sizeof lowff, "%s/lowff", root);
    snprintf(synth, sizeof synth, "%s/synth", root);
    snprintf(full, sizeof full, "%s/full", root);
    dtb_board_init(&board, dtb_variant_find("russian"));
    dtb_build_options bo = {.variant = board.variant, .pieces = 3, .out_dir = plain, .zstd_level = 1};
    dtb_error e;
    if (dtb_build(&bo, &e) != DTB_OK) {
        fprintf(stderr, "fixture: %s\n", e.msg);
        return -1;
    }
    bo.out_dir = low;
    bo.dtw_byte_max = LOW;
    if (dtb_build(&bo, &e) != DTB_OK) {
        fprintf(stderr, "fixture: %s\n", e.msg);
        return -1;
    }
    /* the same with finished tables read from their files (gen/solved.c's file lookups) */
    bo.out_dir = lowff;
    bo.read_finished = true;
    if (dtb_build(&bo, &e) != DTB_OK) {
        fprintf(stderr, "fixture: %s\n", e.msg);
        return -1;
    }
    /* every DTW value stored: the synthetic table's source (a losses-only one lists no win) */
    const dtb_build_options fo = {.variant = board.variant, .pieces = 3, .out_dir = full,
                                  .zstd_level = 1, .dtw_full = true};
    if (dtb_build(&fo, &e) != DTB_OK) {
        fprintf(stderr, "fixture: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static dtb_db *open_db(const char *dir)
{
    const char *dirs[1] = {dir};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1, o.variant = "russian";
    dtb_db *db = NULL;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    return db;
}

/* Every table of the lowered builds (in memory, and reading finished tables from their files)
 * means what the plain one does (manifest digests), most DTW tables hold long lists, and libdtb
 * answers every position of 2..3 pieces alike from both sets, both sides to move, moves ranked
 * alike. */
static void lowered_limit_means_the_same(void **state)
{
    (void)state;
    dtb_material list[64];
    const int n = dtb_material_list(3, list, 64);
    int listed = 0, dtw_tables = 0;
    for (int i = 0; i < n; i++)
        for (int metric = DTB_METRIC_WLD; metric <= DTB_METRIC_DTW; metric++) {
            char a[4096], b[4096], c[4096];
            dtb_build_table_path(a, sizeof a, plain, board.variant, &list[i], (dtb_metric)metric);
            dtb_build_table_path(b, sizeof b, low, board.variant, &list[i], (dtb_metric)metric);
            dtb_build_table_path(c, sizeof c, lowff, board.variant, &list[i], (dtb_metric)metric);
            uint64_t da, db, dc;
            dtb_error e;
            assert_int_equal(dtb_manifest_digest(a, 1, &da, &e), DTB_OK);
            assert_int_equal(dtb_manifest_digest(b, 1, &db, &e), DTB_OK);
            assert_int_equal(dtb_manifest_digest(c, 1, &dc, &e), DTB_OK);
            assert_true(da == db && da == dc);
            dtb_tablefile *tf;
            assert_int_equal(dtb_tablefile_open(b, NULL, &tf, &e), DTB_OK);
            if (metric == DTB_METRIC_DTW) {
                dtw_tables++;
                listed += dtb_tablefile_get_info(tf)->long_count > 0;
            } else {
                assert_int_equal(dtb_tablefile_get_info(tf)->long_count, 0);
            }
            dtb_tablefile_close(tf);
        }
    print_message("%d of %d DTW tables with a long list\n", listed, dtw_tables);
    assert_true(2 * listed > dtw_tables);

    dtb_db *pa = open_db(plain), *pb = open_db(low);
    uint64_t probed = 0, long_ones = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&board, list[i], &ix), DTB_OK);
        for (uint64_t k = 0; k < dtb_index_size(ix); k += 7) {
            dtb_pos p;
            dtb_index_pos(ix, k, &p);
            for (int side = 0; side < 2; side++, p.side = DTB_BLACK) {
                const dtb_position x = pub(&p);
                dtb_wdl wa, wb;
                int da = -1, dbb = -2;
                const dtb_status sa = dtb_probe_dtw(pa, &x, 0, &wa, &da);
                assert_int_equal(dtb_probe_dtw(pb, &x, 0, &wb, &dbb), sa);
                if (sa != DTB_OK)
                    continue;
                assert_int_equal(wa, wb);
                assert_int_equal(da, dbb);
                probed++;
                long_ones += da > LOW;
                dtb_status many;
                assert_int_equal(dtb_probe_dtw_many(pb, &x, 1, 0, &wb, &dbb, &many), DTB_OK);
                assert_int_equal(da, dbb);
                if (k % 91 == 0) {
                    dtb_ranked_move ma[64], mb[64];
                    int na, nb;
                    assert_int_equal(dtb_probe_moves(pa, &x, 0, ma, 64, &na), DTB_OK);
                    assert_int_equal(dtb_probe_moves(pb, &x, 0, mb, 64, &nb), DTB_OK);
                    assert_int_equal(na, nb);
                    assert_memory_equal(ma, mb, (size_t)na * sizeof ma[0]);
                }
            }
        }
        dtb_index_free(ix);
    }
    print_message("%llu positions probed alike, %llu beyond the lowered limit\n",
                  (unsigned long long)probed, (unsigned long long)long_ones);
    assert_true(probed > 10000 && long_ones > 1000);
    dtb_close(pa);
    dtb_close(pb);
}

/* The tables of the lowered build loaded back (long lists and all) pass the check, and a long
 * entry one move off fails it (mutation). */
static void check_finds_a_wrong_long_entry(void **state)
{
    (void)state;
    dtb_solved *s = dtb_solved_create(&board);
    assert_non_null(s);
    dtb_solved_set_byte_max(s, LOW);
    dtb_material list[64];
    const int n = dtb_material_list(3, list, 64);
    dtb_error e;
    dtb_solved_table *target = NULL;
    for (int i = 0; i < n; i++) /* a table's check reads its flip too */
        assert_int_equal(dtb_build_load(s, low, list[i], &e), DTB_OK);
    for (int i = 0; i < n; i++) {
        dtb_solved_table *t = (dtb_solved_table *)dtb_solved_find(s, list[i]);
        assert_int_equal(dtb_check_table(s, t, NULL, NULL, 0), 0);
        if (!target && dtb_material_pieces(&list[i]) == 3 && dtb_solved_long_count(s, t) > 100)
            target = t;
    }
    assert_non_null(target);
    uint64_t *idx, m;
    uint16_t *dtw;
    assert_true(dtb_solved_long_list(s, target, &idx, &dtw, &m));
    /* a quiet listed position (capture positions hold values only for their predecessors) */
    uint64_t k = 0;
    while (k < m && (target->captures[idx[k] / 64] >> (idx[k] % 64) & 1))
        k++;
    assert_true(k < m);
    const bool win = target->values[idx[k]] == DTB_VALUE_WIN_ESCAPE;
    assert_true(dtb_solved_store(s, target, idx[k], win, dtw[k] + 2));
    assert_true(dtb_solved_exact_at(s, target, idx[k]) == dtb_wvalue_of(win, dtw[k] + 2));
    assert_true(dtb_check_table(s, target, NULL, NULL, 0) >= 1);
    assert_true(dtb_solved_store(s, target, idx[k], win, dtw[k]));
    assert_int_equal(dtb_check_table(s, target, NULL, NULL, 0), 0);
    free(idx);
    free(dtw);
    dtb_solved_free(s);
}

/* A listed distance beyond 254 plies comes back exactly through the probes, and its position's
 * best line is as long; an escape byte without an entry means 253. */
static void beyond_a_byte(void **state)
{
    (void)state;
    char dir[160], fen[DTB_FEN_MAX];
    snprintf(dir, sizeof dir, "%s/russian", synth);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s'/russian/*.dtw '%s'", dir, full, dir);
    assert_int_equal(system(cmd), 0);
    dtb_error e;
    assert_int_equal(write_long_table(plain, synth, "russian", "KKvK", 301, fen, sizeof fen, &e),
                     DTB_E_MISMATCH); /* losses only: no win to list */
    assert_int_equal(write_long_table(full, synth, "russian", "KKvK", 301, fen, sizeof fen, &e), DTB_OK);
    dtb_db *db = open_db(synth);
    dtb_position x;
    assert_int_equal(dtb_position_from_fen(db, fen, &x, NULL, 0), DTB_OK);
    dtb_wdl w;
    int d = 0;
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_OK);
    assert_int_equal(w, DTB_WIN);
    assert_int_equal(d, 301);
    dtb_status st;
    d = 0;
    assert_int_equal(dtb_probe_dtw_many(db, &x, 1, 0, &w, &d, &st), DTB_OK);
    assert_int_equal(d, 301);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK); /* no .wld: from the .dtw */
    assert_int_equal(w, DTB_WIN);
    /* black to move one ply before: a predecessor of it loses in 302 at most through it */
    dtb_ranked_move mv[64];
    int nm;
    assert_int_equal(dtb_probe_moves(db, &x, 0, mv, 64, &nm), DTB_OK);
    assert_true(nm > 0 && mv[0].wdl == DTB_WIN);
    dtb_close(db);

    /* The reader's checks: a long list in a version-2 file, and a version it does not know. */
    char path[4096];
    dtb_material m;
    assert_int_equal(dtb_material_parse("KKvK", &m, NULL), DTB_OK);
    dtb_build_table_path(path, sizeof path, synth, board.variant, &m, DTB_METRIC_DTW);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    const uint32_t versions[2] = {DTB_TF_VERSION, DTB_TF_VERSION_RULES + 1};
    const dtb_status want[2] = {DTB_E_CORRUPT, DTB_E_VERSION};
    for (int k = 0; k < 2; k++) {
        unsigned char b[4] = {(unsigned char)versions[k], 0, 0, 0};
        assert_int_equal(fseek(f, DTB_TF_OFF_VERSION, SEEK_SET), 0);
        assert_int_equal(fwrite(b, 1, 4, f), 4);
        assert_int_equal(fflush(f), 0);
        dtb_tablefile *tf;
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &e), want[k]);
    }
    fclose(f);
}

/* The writer refuses a long list it could not stand behind. */
static void writer_refuses_bad_lists(void **state)
{
    (void)state;
    uint8_t values[8] = {DTB_VALUE_WIN_ESCAPE, 3, DTB_VALUE_LOSS_ESCAPE, 0, 0, 0, 0, 0};
    dtb_table_write_options o = dtb_build_write_options(board.variant, "KvK", DTB_METRIC_DTW);
    const uint64_t idx[3][2] = {{0, 1}, {2, 0}, {0, 2}};
    const uint16_t dtw[3][2] = {{301, 302}, {302, 301}, {301, 0}};
    char path[256];
    snprintf(path, sizeof path, "%s/bad.dtw", root);
    for (int k = 0; k < 3; k++) { /* not an escape byte; not increasing; a distance of 0 */
        o.long_index = idx[k];
        o.long_dtw = dtw[k];
        o.long_count = 2;
        dtb_error e;
        assert_int_equal(dtb_table_write(path, &o, values, 8, NULL, NULL, &e), DTB_E_INVALID);
        assert_non_null(strstr(e.msg, "long list"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lowered_limit_means_the_same),
        cmocka_unit_test(check_finds_a_wrong_long_entry),
        cmocka_unit_test(beyond_a_byte),
        cmocka_unit_test(writer_refuses_bad_lists),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
