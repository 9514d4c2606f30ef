/* libdtb's calls for engines: position builders that refuse a bad square at once,
 * coverage queries, the quiet-position probe, warming and sizing the cache, and cache-only probes
 * whose misses the loader threads read, each from several threads at once.
 *
 * The fixture: every international table of up to 3 pieces and the kings-only 4-piece pair
 * KKKvK / KvKKK (several blocks each, so that a table is partly cached), made by dtb_build. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dtb.h" /* before core's headers: its status and WDL definitions are the ones used */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <time.h>

#include "build.h"
#include "index.h"
#include "movegen.h"
#include "public_position.h"

static char root[64];
static dtb_board board;
/* Positions of the fixture's materials (every STRIDE-th index, both sides to move), as public
 * positions, with whether the side to move must capture. */
#ifdef DTB_SANITIZED_BUILD
#define STRIDE 97
#else
#define STRIDE 7
#endif
static dtb_position *positions;
static bool *captures;
static int npositions;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_engine_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    dtb_board_init(&board, dtb_variant_find("international"));
    dtb_material four[2];
    dtb_material_parse("KKKvK", &four[0], NULL);
    dtb_material_parse("KvKKK", &four[1], NULL);
    const dtb_build_options all3 = {.variant = board.variant, .pieces = 3, .out_dir = root,
                                    .zstd_level = 1};
    dtb_build_options kings4 = all3;
    kings4.pieces = 4, kings4.only = four, kings4.nonly = 2;
    dtb_error e;
    if (dtb_build(&all3, &e) != DTB_OK || dtb_build(&kings4, &e) != DTB_OK) {
        fprintf(stderr, "fixture: dtb_build: %s\n", e.msg);
        return -1;
    }
    /* every material of 2..3 pieces and the 4-piece pair */
    dtb_material mats[64];
    const int nmats = dtb_material_list(3, mats, 62);
    mats[nmats] = four[0], mats[nmats + 1] = four[1];
    int cap = 0;
    for (int k = 0; k < nmats + 2; k++) {
        const dtb_material m = mats[k];
        dtb_index *ix;
        if (dtb_index_create(&board, m, &ix) != DTB_OK)
            return -1;
        for (uint64_t i = k; i < dtb_index_size(ix); i += STRIDE) {
            if (npositions + 2 > cap) {
                cap = cap ? 2 * cap : 4096;
                positions = realloc(positions, (size_t)cap * sizeof *positions);
                captures = realloc(captures, (size_t)cap * sizeof *captures);
                if (!positions || !captures)
                    return -1;
            }
            dtb_pos p;
            dtb_index_pos(ix, i, &p);
            for (int flip = 0; flip < 2; flip++) {
                if (flip)
                    dtb_pos_flip(&board, &p, &p);
                captures[npositions] = dtb_has_capture(&board, &p);
                positions[npositions++] = pub(&p);
            }
        }
        dtb_index_free(ix);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(positions);
    free(captures);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* cache 0: the default size; loaders 0: none (the library's default is one) */
static dtb_db *open_db(uint64_t cache, int loaders)
{
    const char *dirs[1] = {root};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1, o.cache_bytes = cache;
    o.loader_threads = loaders ? loaders : DTB_NO_LOADERS;
    dtb_db *db = NULL;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    return db;
}

/* Runs fn(arg, thread number) on THREADS threads at once. */
#define THREADS 4
typedef struct run_arg {
    void (*fn)(void *, int);
    void *arg;
    int k;
} run_arg;

static void *run_one(void *p)
{
    run_arg *a = p;
    a->fn(a->arg, a->k);
    return NULL;
}

static void on_threads(void (*fn)(void *, int), void *arg)
{
    pthread_t tid[THREADS];
    run_arg a[THREADS];
    for (int k = 0; k < THREADS; k++) {
        a[k] = (run_arg){fn, arg, k};
        assert_int_equal(pthread_create(&tid[k], NULL, run_one, &a[k]), 0);
    }
    for (int k = 0; k < THREADS; k++)
        assert_int_equal(pthread_join(tid[k], NULL), 0);
}

/* ---- building positions ------------------------------------------------------------------- */

static _Atomic int builder_failures;

static void check(bool ok)
{
    if (!ok)
        builder_failures++;
}

static void builders(void *arg, int k)
{
    dtb_db *db = arg;
    for (int round = 0; round < 200; round++) {
        dtb_position p, q;
        char err[DTB_MESSAGE_SIZE];
        /* put: range, side, taken squares; nothing written on a refusal */
        dtb_position_clear(&p, DTB_SIDE_WHITE);
        check(dtb_position_put(&p, DTB_SIDE_WHITE, true, 46) == DTB_OK);
        q = p;
        check(dtb_position_put(&p, DTB_SIDE_BLACK, false, 46) == DTB_E_INVALID);
        check(dtb_position_put(&p, DTB_SIDE_BLACK, false, 0) == DTB_E_INVALID);
        check(dtb_position_put(&p, DTB_SIDE_BLACK, false, 129) == DTB_E_INVALID);
        check(dtb_position_put(&p, 2, false, 10) == DTB_E_INVALID);
        check(memcmp(&p, &q, sizeof p) == 0);
        /* set: the board as well */
        check(dtb_position_set(db, &p, DTB_SIDE_BLACK, true, 51) == DTB_E_INVALID);
        check(dtb_position_set(db, &p, DTB_SIDE_BLACK, true, 46) == DTB_E_INVALID);
        check(dtb_position_set(db, &p, DTB_SIDE_WHITE, false, 3) == DTB_E_INVALID); /* row 1 */
        check(dtb_position_set(db, &p, DTB_SIDE_BLACK, false, 48) == DTB_E_INVALID);
        check(dtb_position_set(db, &p, -1, true, 10) == DTB_E_INVALID);
        check(memcmp(&p, &q, sizeof p) == 0);
        check(dtb_position_set(db, &p, DTB_SIDE_WHITE, true, 3) == DTB_OK); /* a king may */
        check(dtb_position_set(db, &p, DTB_SIDE_BLACK, false, 3 + k) == (k ? DTB_OK : DTB_E_INVALID));
        /* from_squares: the FEN's position, and a reason naming the bad square */
        const int wm[] = {31, 32}, wk[] = {46}, bm[] = {19}, bk[] = {5};
        check(dtb_position_from_squares(db, DTB_SIDE_BLACK, wm, 2, wk, 1, bm, 1, bk, 1, &p, err,
                                        sizeof err) == DTB_OK && err[0] == 0);
        check(dtb_position_from_fen(db, "B:W31,32,K46:B19,K5", &q, NULL, 0) == DTB_OK);
        check(memcmp(&p, &q, sizeof p) == 0);
        const int dup[] = {19};
        q = p;
        check(dtb_position_from_squares(db, DTB_SIDE_BLACK, wm, 2, dup, 1, bm, 1, NULL, 0, &p, err,
                                        sizeof err) == DTB_E_INVALID);
        check(strstr(err, "19") && strstr(err, "taken") && memcmp(&p, &q, sizeof p) == 0);
        const int off[] = {55};
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, off, 1, NULL, 0, NULL, 0, bk, 1, &p,
                                        err, sizeof err) == DTB_E_INVALID && strstr(err, "55"));
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, NULL, 1, NULL, 0, NULL, 0, bk, 1, &p,
                                        err, sizeof err) == DTB_E_INVALID);
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, wm, -1, NULL, 0, NULL, 0, bk, 1, &p,
                                        NULL, 0) == DTB_E_INVALID);
        /* the side not to move without a piece; a man on its promotion row */
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, wm, 2, NULL, 0, NULL, 0, NULL, 0, &p,
                                        err, sizeof err) == DTB_E_INVALID);
        const int row[] = {2};
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, row, 1, NULL, 0, NULL, 0, bk, 1, &p,
                                        err, sizeof err) == DTB_E_INVALID && strstr(err, "2"));
        /* more men than a side may have (20 in international) */
        int many[21];
        for (int i = 0; i < 21; i++)
            many[i] = 6 + i;
        check(dtb_position_from_squares(db, DTB_SIDE_WHITE, many, 21, NULL, 0, NULL, 0, bk, 1, &p,
                                        err, sizeof err) == DTB_E_INVALID);
    }
}

static void test_builders(void **state)
{
    (void)state;
    dtb_db *db = open_db(0, 0);
    builder_failures = 0;
    builders(db, 1);
    assert_int_equal(builder_failures, 0);
    on_threads(builders, db);
    assert_int_equal(builder_failures, 0);
    dtb_close(db);
}

/* ---- coverage ----------------------------------------------------------------------------- */

static _Atomic int cover_failures;

static void covers(void *arg, int k)
{
    (void)k;
    dtb_db *db = arg;
    for (int round = 0; round < 2000; round++)
        for (int dtw = 0; dtw < 2; dtw++) {
            /* counts of the side to move first */
            if (!dtb_covers_material(db, 0, 1, 0, 1, dtw) || !dtb_covers_material(db, 2, 0, 1, 0, dtw) ||
                !dtb_covers_material(db, 0, 3, 0, 1, dtw) || !dtb_covers_material(db, 0, 1, 0, 3, dtw) ||
                dtb_covers_material(db, 1, 2, 0, 1, dtw) || dtb_covers_material(db, 0, 2, 0, 2, dtw) ||
                dtb_covers_material(db, -1, 1, 0, 1, dtw) || dtb_covers_material(db, 0, 1, 0, 0, dtw) ||
                dtb_covers_material(db, 9, 0, 0, 1, dtw) ||
                dtb_covers_material(db, 0, 0, 0, 1, dtw)) /* the game is over: not covered */
                cover_failures++;
            for (int i = round % 50; i < npositions; i += 997)
                if (!dtb_covers(db, &positions[i], dtw))
                    cover_failures++;
        }
}

static void test_covers(void **state)
{
    (void)state;
    dtb_db *db = open_db(0, 0);
    dtb_position p;
    /* black to move with three kings against one: KKKvK seen from black's side, covered */
    assert_int_equal(dtb_position_from_fen(db, "B:WK46:BK1,K2,K3", &p, NULL, 0), DTB_OK);
    assert_true(dtb_covers(db, &p, false) && dtb_covers(db, &p, true));
    assert_int_equal(dtb_position_from_fen(db, "W:WK46,K47:BK1,K2", &p, NULL, 0), DTB_OK);
    assert_false(dtb_covers(db, &p, false)); /* KKvKK: not in the fixture */
    p.side = 7;
    assert_false(dtb_covers(db, &p, false));
    cover_failures = 0;
    on_threads(covers, db);
    assert_int_equal(cover_failures, 0);
    dtb_close(db);
}

/* ---- the quiet-position probe ------------------------------------------------------------- */

typedef struct quiet_job {
    dtb_db *db;
    _Atomic int wrong, bad_status;
    _Atomic int quiet, broken; /* positions probed of each kind */
} quiet_job;

static void quiet_probes(void *arg, int k)
{
    quiet_job *j = arg;
    for (int i = k; i < npositions; i += THREADS) {
        dtb_wdl w0 = 0, w1 = 0, w2 = 0;
        int d0 = 0, d1 = 0;
        const dtb_position *p = &positions[i];
        const dtb_status s0 = dtb_probe_dtw(j->db, p, 0, &w0, &d0);
        dtb_wdl wr = 0; /* reads the WDL table's block for the cache-only probe below */
        if (dtb_probe_wdl(j->db, p, 0, &wr) != DTB_OK || wr != w0)
            j->bad_status++;
        const dtb_status s1 = dtb_probe_dtw(j->db, p, DTB_QUIET_POSITION, &w1, &d1);
        const dtb_status s2 = dtb_probe_wdl(j->db, p, DTB_QUIET_POSITION | DTB_CACHE_ONLY, &w2);
        dtb_status s3;
        dtb_wdl w3[1] = {0};
        int d3[1] = {0};
        const dtb_status many = dtb_probe_dtw_many(j->db, p, 1, DTB_QUIET_POSITION, w3, d3, &s3);
        if (s0 != DTB_OK)
            j->bad_status++;
        if (!captures[i]) {
            j->quiet++;
            if (s1 != DTB_OK || s2 != DTB_OK || many != DTB_OK || w1 != w0 || d1 != d0 ||
                w2 != w0 || w3[0] != w0 || d3[0] != d0)
                j->wrong++;
        } else {
            /* a broken promise: any value, or DTB_E_CORRUPT, but a sound one */
            j->broken++;
            if ((s1 != DTB_OK && s1 != DTB_E_CORRUPT) || (s1 == DTB_OK && (w1 < DTB_LOSS || w1 > DTB_WIN ||
                                                                          d1 < 0 || d1 > DTB_MAX_DTW)))
                j->bad_status++;
        }
    }
}

static void test_quiet(void **state)
{
    (void)state;
    quiet_job j = {.db = open_db(256u << 20, 0)};
    on_threads(quiet_probes, &j);
    print_message("%d quiet positions, %d with a capture (a broken promise)\n", j.quiet, j.broken);
    assert_true(j.quiet > 1000 && j.broken > 100);
    assert_int_equal(j.wrong, 0);
    assert_int_equal(j.bad_status, 0);
    /* dtb_probe_moves ignores the flag: its positions after a move are not the caller's */
    dtb_position p;
    assert_int_equal(dtb_position_from_fen(j.db, "W:WK46:BK5,10", &p, NULL, 0), DTB_OK);
    dtb_ranked_move a[64], b[64];
    int na, nb;
    assert_int_equal(dtb_probe_moves(j.db, &p, 0, a, 64, &na), DTB_OK);
    assert_int_equal(dtb_probe_moves(j.db, &p, DTB_QUIET_POSITION, b, 64, &nb), DTB_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, (size_t)na * sizeof a[0]);
    dtb_close(j.db);
}

/* ---- warming and sizing ------------------------------------------------------------------- */

typedef struct warm_job {
    dtb_db *db;
    uint64_t ws3, warm_bytes[THREADS];
    _Atomic int failures;
} warm_job;

static void warm_and_size(void *arg, int k)
{
    warm_job *j = arg;
    uint64_t b = 0;
    if (dtb_working_set(j->db, 3, false, &b) != DTB_OK || b != j->ws3)
        j->failures++;
    if (dtb_warm(j->db, 4, 0, &j->warm_bytes[k]) != DTB_OK)
        j->failures++;
}

static void test_warm(void **state)
{
    (void)state;
    dtb_db *db = open_db(64u << 20, 0);
    uint64_t ws2 = 0, ws3 = 0, ws3d = 0, ws4 = 77;
    assert_int_equal(dtb_working_set(db, 2, false, &ws2), DTB_OK);
    assert_int_equal(dtb_working_set(db, 3, false, &ws3), DTB_OK);
    assert_int_equal(dtb_working_set(db, 3, true, &ws3d), DTB_OK);
    print_message("working sets: 2 pieces %llu, 3 pieces %llu (DTW %llu) bytes\n",
                  (unsigned long long)ws2, (unsigned long long)ws3, (unsigned long long)ws3d);
    assert_true(ws2 > 0 && ws2 < ws3 && ws3 < ws3d); /* DTW values take more bits */
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_working_set(db, 4, false, &ws4), DTB_E_NOTFOUND);
    assert_int_equal(ws4, 77);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "v")); /* a material's name */
    assert_int_equal(dtb_working_set(db, 1, false, &ws4), DTB_E_INVALID);
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_int_equal(cs.blocks, 0); /* sizing reads no block */
    /* Warmed from several threads at once while nothing else runs: every probe of the fixture
     * is then answered cache-only (capture positions too: their tables are warm). */
    warm_job j = {.db = db, .ws3 = ws3};
    on_threads(warm_and_size, &j);
    assert_int_equal(j.failures, 0);
    for (int k = 0; k < THREADS; k++)
        assert_true(j.warm_bytes[k] > ws3 && j.warm_bytes[k] == j.warm_bytes[0]);
    uint64_t again;
    assert_int_equal(dtb_warm(db, 4, 0, &again), DTB_OK);
    assert_int_equal(again, j.warm_bytes[0]);
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_true(cs.bytes == again && cs.evictions == 0);
    for (int i = 0; i < npositions; i++) {
        dtb_wdl w;
        assert_int_equal(dtb_probe_wdl(db, &positions[i], DTB_CACHE_ONLY, &w), DTB_OK);
    }
    dtb_wdl w;
    int d;
    /* DTW blocks are not warm yet: a decisive position's distance is not cached (a draw is
     * answered from its WLD block alone, the DTW files storing losses only) */
    int uncached = 0;
    for (int i = 0; i < npositions; i++) {
        const dtb_status st = dtb_probe_dtw(db, &positions[i], DTB_CACHE_ONLY, &w, &d);
        assert_true(st == DTB_OK || st == DTB_E_NOTCACHED);
        uncached += st == DTB_E_NOTCACHED;
    }
    assert_true(uncached > 0);
    assert_int_equal(dtb_warm(db, 3, DTB_WARM_DTW, NULL), DTB_OK);
    assert_int_equal(dtb_probe_dtw(db, &positions[0], DTB_CACHE_ONLY, &w, &d), DTB_OK);
    int still = 0; /* a win's search may reach a table of more pieces than those warmed */
    for (int i = 0; i < npositions; i++)
        still += dtb_probe_dtw(db, &positions[i], DTB_CACHE_ONLY, &w, &d) == DTB_E_NOTCACHED;
    assert_true(still < uncached);
    assert_int_equal(dtb_warm(db, 1, 0, &again), DTB_OK);
    assert_int_equal(again, 0);
    dtb_close(db);
    /* A cache too small for 2..3: the materials that fit in 7/8 of it, nothing evicted, and a
     * status that says the rest did not fit. */
    db = open_db(ws3 / 2, 0);
    assert_int_equal(dtb_warm(db, 4, 0, &again), DTB_E_NOROOM);
    assert_true(again > 0 && again <= ws3 / 2 / 8 * 7);
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_int_equal(cs.evictions, 0);
    dtb_close(db);
}

/* ---- cache-only probes and the loader threads --------------------------------------------- */

typedef struct loader_job {
    dtb_db *db;
    const int (*want)[3]; /* status, wdl, dtw of a probe that may read */
    _Atomic int wrong;
    _Atomic long misses;  /* DTB_E_NOTCACHED answers in the last round */
} loader_job;

static void probe_cache_only(void *arg, int k)
{
    loader_job *j = arg;
    for (int i = k; i < npositions; i += THREADS) {
        dtb_wdl w = 0;
        int d = 0;
        const dtb_status s = i % 3 == 0 ? dtb_probe_dtw(j->db, &positions[i], DTB_CACHE_ONLY, &w, &d)
                                        : dtb_probe_wdl(j->db, &positions[i], DTB_CACHE_ONLY, &w);
        if (s == DTB_E_NOTCACHED)
            j->misses++;
        else if ((int)s != j->want[i][0] || w != j->want[i][1] || (i % 3 == 0 && d != j->want[i][2]))
            j->wrong++;
    }
}

static void sleep_ms(int ms)
{
    const struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static void test_loader(void **state)
{
    (void)state;
    int (*want)[3] = calloc((size_t)npositions, sizeof *want);
    assert_non_null(want);
    dtb_db *ref = open_db(256u << 20, 0);
    for (int i = 0; i < npositions; i++) {
        dtb_wdl w = 0;
        int d = 0;
        want[i][0] = i % 3 == 0 ? dtb_probe_dtw(ref, &positions[i], 0, &w, &d)
                                : dtb_probe_wdl(ref, &positions[i], 0, &w);
        want[i][1] = w, want[i][2] = i % 3 == 0 ? d : 0;
    }
    dtb_close(ref);
    /* Without loader threads a cache-only miss stays a miss (some positions need no table: a
     * capture that takes the last piece wins). */
    dtb_db *db = open_db(64u << 20, 0);
    loader_job j = {.db = db, .want = (const int (*)[3])want};
    long first = 0;
    for (int round = 0; round < 3; round++) {
        j.misses = 0;
        on_threads(probe_cache_only, &j);
        if (round == 0)
            first = j.misses;
        assert_int_equal(j.misses, first);
    }
    assert_true(first > npositions / 2);
    assert_int_equal(j.wrong, 0);
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_true(cs.blocks == 0 && cs.loads_scheduled == 0);
    dtb_close(db);
    /* With them, the tables open and the blocks arrive while the threads keep probing
     * cache-only, until every probe hits; the answers are the reading probes' all along. */
    for (int loaders = 1; loaders <= 2; loaders++) {
        j.db = db = open_db(64u << 20, loaders);
        int rounds = 0;
        do {
            j.misses = 0;
            on_threads(probe_cache_only, &j);
            rounds++;
            if (j.misses)
                sleep_ms(2);
        } while (j.misses && rounds < 5000);
        assert_int_equal(j.wrong, 0);
        assert_int_equal(j.misses, 0);
        assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
        print_message("%d loader thread(s): all hits after %d rounds; %llu loads scheduled, %llu "
                      "done, %llu dropped\n",
                      loaders, rounds, (unsigned long long)cs.loads_scheduled,
                      (unsigned long long)cs.loads_done, (unsigned long long)cs.loads_dropped);
        assert_true(rounds > 1 && cs.loads_scheduled > 0 && cs.loads_done > 0);
        assert_true(cs.loads_done <= cs.loads_scheduled);
        dtb_close(db);
    }
    /* A cache far too small: blocks come and go (evictions counted), the queue overflows, and
     * dtb_close stops loaders in the middle of their work. */
    j.db = db = open_db(256u << 10, 2);
    for (int round = 0; round < 20; round++)
        on_threads(probe_cache_only, &j);
    assert_int_equal(j.wrong, 0);
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    print_message("small cache: %llu evictions, %llu loads scheduled, %llu dropped\n",
                  (unsigned long long)cs.evictions, (unsigned long long)cs.loads_scheduled,
                  (unsigned long long)cs.loads_dropped);
    assert_true(cs.evictions > 0 && cs.loads_scheduled > 0);
    dtb_close(db);
    /* Out of range. */
    const char *dirs[1] = {root};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1, o.loader_threads = 9;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    o.loader_threads = -2;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    /* The default (0) is one loader: a cache-only miss is read in the background. */
    o.loader_threads = 0;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    dtb_position quiet; /* no capture: its value needs a block of KKvK */
    assert_int_equal(dtb_position_from_fen(db, "W:WK46,K47:BK5", &quiet, NULL, 0), DTB_OK);
    dtb_wdl w;
    dtb_status s = DTB_E_NOTCACHED;
    for (int tries = 0; tries < 2000 && s == DTB_E_NOTCACHED; tries++) {
        s = dtb_probe_wdl(db, &quiet, DTB_CACHE_ONLY, &w);
        if (s == DTB_E_NOTCACHED) {
            const struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    assert_int_equal(s, DTB_OK);
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_true(cs.loads_done > 0);
    dtb_close(db);
    free(want);
}

/* ---- root moves from WLD tables alone, and matching an engine's move ---------------------- */

/* A set of the fixture's .wld files alone (symbolic links), in a directory of its own. */
static void wld_only_set(char *dir, size_t size)
{
    snprintf(dir, size, "%s/wld-only", root);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -sf '%s'/international/*.wld '%s'/", dir, root,
             dir);
    assert_int_equal(system(cmd), 0);
}

static void test_wld_only_moves(void **state)
{
    (void)state;
    char dir[128];
    wld_only_set(dir, sizeof dir);
    const char *dirs[1] = {dir};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1, o.loader_threads = DTB_NO_LOADERS;
    dtb_db *wld = NULL, *full = open_db(0, 0);
    assert_int_equal(dtb_open(&o, &wld), DTB_OK);
    assert_int_equal(dtb_max_pieces(wld, true), 1); /* no .dtw at all */
    int wins = 0, draws = 0, losses = 0, unknown = 0;
    for (int i = 0; i < npositions; i += 13) {
        dtb_ranked_move a[64], b[64];
        int na = -1, nb = -1;
        assert_int_equal(dtb_probe_moves(wld, &positions[i], 0, a, 64, &na), DTB_OK);
        assert_int_equal(dtb_probe_moves(full, &positions[i], 0, b, 64, &nb), DTB_OK);
        assert_int_equal(na, nb);
        for (int k = 0; k < na; k++) {
            /* the same WDL as the full set gives the same move; DTW unknown but for draws */
            bool same = false;
            int j;
            for (j = 0; j < nb; j++) {
                int cap[DTB_MAX_CAPTURED];
                for (int c = 0; c < a[k].move.ncaptured; c++)
                    cap[c] = a[k].move.captured[a[k].move.ncaptured - 1 - c]; /* reversed */
                if (dtb_move_matches(&b[j].move, a[k].move.from, a[k].move.to, cap,
                                     a[k].move.ncaptured)) {
                    same = true;
                    break;
                }
            }
            assert_true(same);
            assert_int_equal(a[k].wdl, b[j].wdl);
            assert_string_equal(a[k].move.text, b[j].move.text);
            /* unknown, but where no table is needed (a capture of the last piece): exact */
            if (a[k].dtw != b[j].dtw)
                assert_int_equal(a[k].dtw, DTB_DTW_UNKNOWN);
            unknown += a[k].dtw == DTB_DTW_UNKNOWN;
            /* best first: results never rise along the ranking */
            if (k > 0)
                assert_true(a[k].wdl <= a[k - 1].wdl);
            wins += a[k].wdl == DTB_WIN, draws += a[k].wdl == DTB_DRAW, losses += a[k].wdl == DTB_LOSS;
        }
    }
    assert_true(wins > 0 && draws > 0 && losses > 0 && unknown > 0);
    /* a line needs DTW */
    dtb_pdn_move line[DTB_MAX_LINE];
    int n;
    dtb_position p;
    assert_int_equal(dtb_position_from_fen(wld, "W:WK46,K47:BK5", &p, NULL, 0), DTB_OK);
    assert_int_equal(dtb_probe_line(wld, &p, 0, line, DTB_MAX_LINE, &n), DTB_E_NOTFOUND);
    dtb_close(wld);
    dtb_close(full);
}

/* dtb_find_move and dtb_move_matches over random crowded positions (no table needed): every
 * legal move is found from its start, end and captured squares in reverse order; a wrong
 * captured set is refused; start and end alone find it exactly when no other move shares
 * them. The positions must include captures, promotions and moves that differ only by their
 * captured set (ambiguous capture paths), or the test fails. */
static void test_find_move(void **state)
{
    (void)state;
    dtb_db *db = open_db(0, 0);
    dtb_movelist *list = malloc(sizeof *list);
    assert_non_null(list);
    uint64_t seed = 38;
    int captures_seen = 0, promotions_seen = 0, ambiguous_seen = 0;
    for (int trial = 0; trial < 20000; trial++) {
        dtb_position p;
        dtb_position_clear(&p, (int)(trial & 1));
        /* a king or two and men of each side, on random squares */
        const int counts[2][2] = {{1 + trial % 2, 3}, {trial % 3 == 0, 6}};
        for (int side = 0; side < 2; side++)
            for (int king = 0; king < 2; king++)
                for (int k = 0; k < counts[side][king]; k++)
                    for (int tries = 0; tries < 20; tries++) {
                        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                        if (dtb_position_set(db, &p, side, king, 1 + (int)(seed >> 33) % 50) == DTB_OK)
                            break;
                    }
        const dtb_pos q = core_of(&p);
        if (dtb_generate(&board, &q, list) != DTB_OK || list->count == 0)
            continue;
        for (int i = 0; i < list->count; i++) {
            const dtb_move *mv = &list->moves[i];
            int cap[DTB_MAX_CAPTURED], n = 0;
            for (dtb_bb c = mv->captured; c;)
                cap[n++] = dtb_bb_pop(&c) + 1;
            for (int a = 0, b = n - 1; a < b; a++, b--) { /* in reverse order */
                const int t = cap[a];
                cap[a] = cap[b], cap[b] = t;
            }
            dtb_pdn_move found;
            assert_int_equal(dtb_find_move(db, &p, mv->from + 1, mv->to + 1, cap, n, &found),
                             DTB_OK);
            assert_int_equal(found.from, mv->from + 1);
            assert_int_equal(found.to, mv->to + 1);
            assert_int_equal(found.ncaptured, n);
            assert_int_equal(found.promotes, mv->promotes);
            assert_true(dtb_move_matches(&found, mv->from + 1, mv->to + 1, cap, n));
            int shared = 0;
            for (int j = 0; j < list->count; j++)
                shared += list->moves[j].from == mv->from && list->moves[j].to == mv->to;
            assert_int_equal(dtb_find_move(db, &p, mv->from + 1, mv->to + 1, NULL, -1, &found),
                             shared == 1 ? DTB_OK : DTB_E_INVALID);
            if (n > 0) {
                /* one captured square wrong, or one left out: no such move */
                int wrong[DTB_MAX_CAPTURED];
                memcpy(wrong, cap, sizeof wrong);
                wrong[0] = wrong[0] == 50 ? 49 : wrong[0] + 1;
                dtb_bb wrong_set = 0;
                for (int c = 0; c < n; c++)
                    wrong_set |= dtb_bb_bit(wrong[c] - 1);
                bool other = false; /* another move may capture exactly that set */
                for (int j = 0; j < list->count; j++)
                    other |= list->moves[j].from == mv->from && list->moves[j].to == mv->to &&
                             list->moves[j].captured == wrong_set;
                if (!other && !(mv->captured & dtb_bb_bit(wrong[0] - 1)))
                    assert_int_equal(dtb_find_move(db, &p, mv->from + 1, mv->to + 1, wrong, n,
                                                   &found),
                                     DTB_E_INVALID);
                if (n > 1 && shared == 1)
                    assert_int_equal(dtb_find_move(db, &p, mv->from + 1, mv->to + 1, cap, n - 1,
                                                   &found),
                                     DTB_E_INVALID);
            }
            captures_seen += n > 0;
            promotions_seen += mv->promotes;
            ambiguous_seen += shared > 1;
        }
    }
    print_message("find_move: %d capture moves, %d promotions, %d moves sharing start and end\n",
                  captures_seen, promotions_seen, ambiguous_seen);
    assert_true(captures_seen > 0 && promotions_seen > 0 && ambiguous_seen > 0);
    /* not a legal position; no move there */
    dtb_position p;
    dtb_position_clear(&p, DTB_SIDE_WHITE);
    dtb_pdn_move found;
    assert_int_equal(dtb_find_move(db, &p, 1, 2, NULL, 0, &found), DTB_E_INVALID);
    assert_int_equal(dtb_position_from_fen(db, "W:WK46,K47:BK5", &p, NULL, 0), DTB_OK);
    assert_int_equal(dtb_find_move(db, &p, 46, 5, NULL, 0, &found), DTB_E_INVALID);
    assert_int_equal(dtb_find_move(db, &p, 46, 41, NULL, 0, &found), DTB_OK);
    assert_string_equal(found.text, "46-41");
    /* dtb_move_matches on its own: a set, not a list; repeats are not a set */
    const dtb_pdn_move m = {.from = 1, .to = 23, .ncaptured = 2, .captured = {7, 18}};
    assert_true(dtb_move_matches(&m, 1, 23, (const int[]){18, 7}, 2));
    assert_true(dtb_move_matches(&m, 1, 23, NULL, -1));
    assert_false(dtb_move_matches(&m, 1, 23, (const int[]){18, 18}, 2));
    assert_false(dtb_move_matches(&m, 1, 23, (const int[]){7}, 1));
    assert_false(dtb_move_matches(&m, 1, 23, NULL, 2));
    assert_false(dtb_move_matches(&m, 1, 24, (const int[]){18, 7}, 2));
    free(list);
    dtb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builders), cmocka_unit_test(test_covers),
        cmocka_unit_test(test_quiet),    cmocka_unit_test(test_warm),
        cmocka_unit_test(test_loader),   cmocka_unit_test(test_wld_only_moves),
        cmocka_unit_test(test_find_move),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
