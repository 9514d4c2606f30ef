/* The public contract of libdtb (probe/dtb.h) that engines rely on beyond the values: the
 * version query, structs that grow by struct_size, each thread's own error message, and the
 * status each failure promises (DTB_E_NOMEM when memory runs out while a table is opened,
 * DTB_E_OVERFLOW for buffers that are too small).
 *
 * Memory exhaustion is simulated: this program is linked with --wrap for the allocation
 * functions (tests/CMakeLists.txt), so the library's calls to malloc, calloc, realloc and
 * aligned_alloc go through the wrappers below, which fail while fail_allocations is set. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "build.h"
#include "dtb.h"

/* ---- allocation failures ---------------------------------------------------------------- */

static _Atomic int fail_allocations; /* nonzero: every wrapped allocation fails */
static _Atomic long failed_allocations;
static _Atomic long fail_countdown;  /* > 0: allocations left before exactly one fails */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

static int refuse(void)
{
    if (fail_countdown > 0 && --fail_countdown == 0) {
        failed_allocations++;
        return 1;
    }
    if (!fail_allocations)
        return 0;
    failed_allocations++;
    return 1;
}

void *__wrap_malloc(size_t n) { return refuse() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return refuse() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return refuse() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return refuse() ? NULL : __real_aligned_alloc(align, n);
}

/* ---- fixture: international 2..3 tables ---------------------------------------------------- */

static char root[64];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_api_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    const dtb_build_options bo = {.variant = dtb_variant_find("international"), .pieces = 3,
                                  .out_dir = root, .zstd_level = 1};
    dtb_error e;
    if (dtb_build(&bo, &e) != DTB_OK) {
        fprintf(stderr, "build: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static dtb_db *open_dir(const char *dir);

/* Russian 2-piece tables, apart (a directory of two variants needs a variant chosen). */
static char root_ru[80];

static dtb_db *open_russian(void)
{
    if (!root_ru[0]) {
        snprintf(root_ru, sizeof root_ru, "%s/ru", root);
        const dtb_build_options bo = {.variant = dtb_variant_find("russian"), .pieces = 2,
                                      .out_dir = root_ru, .zstd_level = 1};
        dtb_error e;
        if (dtb_build(&bo, &e) != DTB_OK)
            fail_msg("russian build: %s", e.msg);
    }
    return open_dir(root_ru);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* The tables in dir, with the default options but texts. */
static dtb_db *open_dir_texts(const char *dir, int texts)
{
    const char *dirs[] = {dir};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs;
    o.npaths = 1;
    o.texts = texts;
    dtb_db *db = NULL;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    return db;
}

static dtb_db *open_dir(const char *dir) { return open_dir_texts(dir, DTB_TEXTS_VARIANT); }

static dtb_db *open_tables(void) { return open_dir(root); }

static dtb_position position(dtb_db *db, const char *fen)
{
    dtb_position p;
    char why[DTB_MESSAGE_SIZE];
    if (dtb_position_from_fen(db, fen, &p, why, sizeof why) != DTB_OK)
        fail_msg("%s: %s", fen, why);
    return p;
}

/* ---- version ------------------------------------------------------------------------------- */

static void test_version(void **state)
{
    (void)state;
    const char *text = NULL;
    assert_int_equal(dtb_version(&text), DTB_VERSION_NUMBER);
    assert_int_equal(dtb_version(NULL), DTB_VERSION_NUMBER);
    assert_string_equal(text, DTB_VERSION_STRING);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", DTB_VERSION_MAJOR, DTB_VERSION_MINOR,
             DTB_VERSION_PATCH);
    assert_string_equal(text, expect);
    assert_int_equal(DTB_VERSION_NUMBER,
                     DTB_VERSION_MAJOR * 10000 + DTB_VERSION_MINOR * 100 + DTB_VERSION_PATCH);
}

/* ---- struct_size ----------------------------------------------------------------------------- */

typedef struct logged {
    char text[DTB_MESSAGE_SIZE];
} logged;

static void keep_log(void *user, const char *msg)
{
    snprintf(((logged *)user)->text, sizeof ((logged *)user)->text, "%s", msg);
}

static void test_options_size(void **state)
{
    (void)state;
    const char *dirs[] = {root};
    dtb_db *db = (dtb_db *)&db; /* not NULL: dtb_open must reset it */
    /* Not set: refused, with the reason in the log. */
    logged log = {""};
    dtb_options o = {.paths = dirs, .npaths = 1, .log = keep_log, .log_user = &log};
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    assert_null(db);
    /* (struct_size 0 is below log's offset: the callback cannot be trusted to be there.) */
    assert_int_equal(dtb_open(NULL, &db), DTB_E_INVALID);
    assert_null(db);
    /* From a newer header: larger than this library's struct. */
    o.struct_size = sizeof o + 8;
    assert_int_equal(dtb_open(&o, &db), DTB_E_VERSION);
    assert_null(db);
    /* From an older header that ended before cache_bytes: the rest reads as defaults. */
    o.struct_size = offsetof(dtb_options, cache_bytes);
    o.cache_bytes = 1; /* beyond the struct the caller declared: must not be read */
    o.texts = 99;      /* likewise */
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    dtb_position p = position(db, "W:WK46:BK5,10");
    dtb_wdl wdl;
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &wdl), DTB_OK);
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_true(cs.bytes > 64); /* the default cache, not one byte: a block was kept */
    dtb_close(db);
    /* The initializer's version, and the log callback reached once struct_size covers it. */
    o.struct_size = 0;
    o.npaths = 0;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    o.struct_size = sizeof o;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID); /* texts 99 */
    assert_non_null(strstr(log.text, "texts"));
    o.texts = DTB_TEXTS_VARIANT;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID); /* no directory */
    assert_non_null(strstr(log.text, "director"));
    const dtb_options init = DTB_OPTIONS_INIT;
    assert_int_equal(init.struct_size, sizeof(dtb_options));
    assert_null(init.paths);
}

static void test_cache_stats_size(void **state)
{
    (void)state;
    dtb_db *db = open_tables();
    dtb_position p = position(db, "W:WK46:BK5,10");
    dtb_wdl wdl;
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &wdl), DTB_OK);
    dtb_cache_stats full = {.struct_size = sizeof full};
    assert_int_equal(dtb_get_cache_stats(db, &full), DTB_OK);
    assert_int_equal(full.struct_size, sizeof full);
    assert_true(full.misses >= 1 && full.blocks >= 1);
    /* Too small for the first version: refused, nothing written. */
    dtb_cache_stats small = {.struct_size = offsetof(dtb_cache_stats, blocks), .blocks = 12345};
    assert_int_equal(dtb_get_cache_stats(db, &small), DTB_E_INVALID);
    assert_int_equal(small.blocks, 12345);
    char why[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, why, sizeof why), DTB_E_INVALID);
    assert_non_null(strstr(why, "struct_size"));
    /* Not set at all. */
    dtb_cache_stats none = {0};
    assert_int_equal(dtb_get_cache_stats(db, &none), DTB_E_INVALID);
    /* Larger (a newer header): the fields this library knows are filled, the rest untouched. */
    struct {
        dtb_cache_stats st;
        uint64_t later;
    } grown = {.st = {.struct_size = sizeof grown}, .later = 777};
    assert_int_equal(dtb_get_cache_stats(db, &grown.st), DTB_OK);
    assert_int_equal(grown.later, 777);
    assert_int_equal(grown.st.struct_size, sizeof grown);
    assert_true(grown.st.misses == full.misses && grown.st.blocks == full.blocks);
    dtb_close(db);
}

/* ---- each thread's own message ------------------------------------------------------------- */

typedef struct worker {
    dtb_db *db;
    const char *fen; /* a position whose probe fails, each worker's for a different reason */
    dtb_status want;
    int wrong;       /* rounds where dtb_last_error gave another thread's message */
    char first[DTB_MESSAGE_SIZE];
} worker;

static void *fail_repeatedly(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 2000; i++) {
        dtb_position p;
        dtb_wdl wdl;
        dtb_status s;
        if (w->fen[0] == 'X') { /* a piece off the board */
            dtb_position_clear(&p, DTB_SIDE_WHITE);
            p.kings[0][0] = 1;
            p.kings[0][1] = (uint64_t)1 << 40;
            p.kings[1][0] = 2;
            s = dtb_probe_wdl(w->db, &p, 0, &wdl);
        } else {
            p = position(w->db, w->fen);
            s = dtb_probe_wdl(w->db, &p, 0, &wdl); /* a material with no table */
        }
        assert_int_equal(s, w->want);
        char msg[DTB_MESSAGE_SIZE];
        const dtb_status last = dtb_last_error(w->db, msg, sizeof msg);
        if (i == 0)
            snprintf(w->first, sizeof w->first, "%s", msg);
        if (last != w->want || strcmp(msg, w->first) != 0)
            w->wrong++;
    }
    return NULL;
}

static void test_last_error_per_thread(void **state)
{
    (void)state;
    dtb_db *db = open_tables();
    char msg[DTB_MESSAGE_SIZE] = "x";
    /* Nothing failed in this thread yet. */
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_OK);
    assert_string_equal(msg, "");
    worker w[2] = {{db, "W:WK46,K47,K48:BK5", DTB_E_NOTFOUND, 0, ""},
                   {db, "X", DTB_E_INVALID, 0, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, fail_repeatedly, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(w[i].wrong, 0);
    assert_non_null(strstr(w[0].first, "KKKvK"));
    assert_string_not_equal(w[0].first, w[1].first);
    /* The workers' failures are theirs: this thread still has none. */
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_OK);
    assert_string_equal(msg, "");
    /* A handle opened later (possibly at the same address) starts clean. */
    dtb_position p = position(db, "W:WK46,K47,K48:BK5");
    dtb_wdl wdl;
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &wdl), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    dtb_close(db);
    db = open_tables();
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_OK);
    dtb_close(db);
}

/* ---- statuses of failures -------------------------------------------------------------------- */

/* Running out of memory while a table is first opened is DTB_E_NOMEM, not a missing table, and is
 * not remembered: once memory is back the same probe answers. */
static void test_nomem_opening_a_table(void **state)
{
    (void)state;
    dtb_db *db = open_tables();
    const dtb_position p = position(db, "W:WK46,K47:BK5"); /* KKvK: not opened yet */
    dtb_wdl wdl;
    int dtw;
    fail_allocations = 1;
    const long before = failed_allocations;
    const dtb_status s = dtb_probe_dtw(db, &p, 0, &wdl, &dtw);
    fail_allocations = 0;
    assert_true(failed_allocations > before); /* the test did take memory away */
    assert_int_equal(s, DTB_E_NOMEM);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOMEM);
    assert_non_null(strstr(msg, "memory"));
    assert_int_equal(dtb_probe_dtw(db, &p, 0, &wdl, &dtw), DTB_OK);
    assert_int_equal(wdl, DTB_WIN);
    dtb_close(db);
}

/* The same for each allocation of a first probe in turn (a table opened, its index built, a block
 * read and cached): whichever one fails, the probe answers or says DTB_E_NOMEM, never another
 * status, and the next probe answers right. */
static void test_nomem_at_each_allocation(void **state)
{
    (void)state;
    const char *const fens[] = {"W:WK46,K47:BK5", "W:W28:BK5", "B:W28,K46:BK5"};
    for (int f = 0; f < 3; f++) {
        int k = 1;
        for (;; k++) {
            dtb_db *db = open_tables();
            const dtb_position p = position(db, fens[f]);
            dtb_wdl wdl, again;
            int dtw, dtw_again;
            const long before = failed_allocations;
            fail_countdown = k;
            const dtb_status s = dtb_probe_dtw(db, &p, 0, &wdl, &dtw);
            const bool failed_one = failed_allocations > before;
            fail_countdown = 0;
            if (s != DTB_OK && s != DTB_E_NOMEM)
                fail_msg("%s, allocation %d failed: %s", fens[f], k, dtb_strerror(s));
            assert_int_equal(dtb_probe_dtw(db, &p, 0, &again, &dtw_again), DTB_OK);
            if (s == DTB_OK)
                assert_true(wdl == again && dtw == dtw_again);
            dtb_close(db);
            if (!failed_one)
                break; /* the probe made fewer than k allocations: all were tried */
        }
        assert_true(k > 3); /* the path does allocate: the test reached it */
    }
}

static void test_overflow(void **state)
{
    (void)state;
    dtb_db *db = open_tables();
    const dtb_position p = position(db, "W:WK46,K47:BK5");
    char fen[8];
    assert_int_equal(dtb_position_to_fen(db, &p, fen, sizeof fen), DTB_E_OVERFLOW);
    assert_int_equal(strlen(fen), sizeof fen - 1); /* truncated, terminated */
    char big[400];
    assert_int_equal(dtb_position_to_fen(db, &p, big, sizeof big), DTB_OK);
    dtb_ranked_move moves[2];
    int count = 0;
    assert_int_equal(dtb_probe_moves(db, &p, 0, moves, 2, &count), DTB_E_OVERFLOW);
    assert_true(count > 2);
    assert_int_equal(dtb_probe_moves(db, &p, 0, NULL, 0, &count), DTB_E_OVERFLOW);
    dtb_pdn_move line[1];
    int plies = 0;
    assert_int_equal(dtb_probe_line(db, &p, 0, line, 1, &plies), DTB_E_OVERFLOW);
    assert_true(plies > 1);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_OVERFLOW);
    dtb_close(db);
}

/* Squares, FENs and moves in both notations (russian: 1 = b8, 4 = h8, 22 = c3, 29 = a1). */
static void test_notation(void **state)
{
    (void)state;
    dtb_db *ru = open_russian(), *intl = open_tables();
    assert_int_equal(dtb_db_notation(ru), DTB_NOTATION_ALGEBRAIC);
    assert_int_equal(dtb_db_notation(intl), DTB_NOTATION_NUMERIC);
    static const struct {
        int square;
        const char *name;
    } fixed[] = {{1, "b8"}, {4, "h8"}, {22, "c3"}, {29, "a1"}, {32, "g1"}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        char text[8];
        int sq = 0;
        assert_int_equal(dtb_square_to_text(ru, fixed[i].square, DTB_NOTATION_ALGEBRAIC, text,
                                            sizeof text), DTB_OK);
        assert_string_equal(text, fixed[i].name);
        assert_int_equal(dtb_square_from_text(ru, fixed[i].name, &sq), DTB_OK);
        assert_int_equal(sq, fixed[i].square);
        assert_int_equal(dtb_square_to_text(ru, fixed[i].square, DTB_NOTATION_NUMERIC, text,
                                            sizeof text), DTB_OK);
        assert_int_equal(dtb_square_from_text(ru, text, &sq), DTB_OK);
        assert_int_equal(sq, fixed[i].square);
    }
    int sq = 0;
    char small[2];
    assert_int_equal(dtb_square_from_text(ru, "i9", &sq), DTB_E_INVALID);
    assert_int_equal(dtb_square_from_text(ru, "a8", &sq), DTB_E_INVALID); /* light */
    assert_int_equal(dtb_square_from_text(ru, "33", &sq), DTB_E_INVALID);
    assert_int_equal(dtb_square_from_text(ru, "c3x", &sq), DTB_E_INVALID);
    assert_int_equal(dtb_square_from_text(ru, "", &sq), DTB_E_INVALID);
    assert_int_equal(dtb_square_to_text(ru, 33, DTB_NOTATION_NUMERIC, small, sizeof small),
                     DTB_E_INVALID);
    assert_int_equal(dtb_square_to_text(ru, 22, DTB_NOTATION_ALGEBRAIC, small, sizeof small),
                     DTB_E_OVERFLOW);
    /* A FEN read in names is the position read in numbers; written either way, by default in
     * the variant's names (and in numbers when the db's texts are numeric). */
    dtb_position a = position(ru, "W:WKc1:BKh8"), b = position(ru, "W:WK30:BK4");
    assert_memory_equal(&a, &b, sizeof a);
    dtb_db *ru_numeric = open_dir_texts(root_ru, DTB_TEXTS_NUMERIC);
    dtb_db *intl_named = open_dir_texts(root, DTB_TEXTS_ALGEBRAIC);
    char fen[64];
    assert_int_equal(dtb_position_to_fen_in(ru, &a, DTB_NOTATION_NUMERIC, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WK30:BK4");
    assert_int_equal(dtb_position_to_fen(ru, &a, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WKc1:BKh8");
    assert_int_equal(dtb_position_to_fen(ru_numeric, &a, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WK30:BK4");
    dtb_position i10 = position(intl, "W:WK46:BK5");
    assert_int_equal(dtb_position_to_fen(intl, &i10, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WK46:BK5");
    assert_int_equal(dtb_position_to_fen(intl_named, &i10, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WKa1:BKj10");
    /* Moves: the ranked move's text is in the db's notation; dtb_move_to_text writes either. */
    dtb_ranked_move moves[32], numbered[32];
    int count = 0, ncount = 0;
    assert_int_equal(dtb_probe_moves(ru, &a, 0, moves, 32, &count), DTB_OK);
    assert_int_equal(dtb_probe_moves(ru_numeric, &a, 0, numbered, 32, &ncount), DTB_OK);
    assert_true(count > 0);
    assert_int_equal(count, ncount);
    for (int i = 0; i < count; i++) {
        char text[DTB_MOVE_TEXT_SIZE], numbers[DTB_MOVE_TEXT_SIZE];
        assert_int_equal(dtb_move_to_text(ru, &a, &moves[i].move, DTB_NOTATION_ALGEBRAIC, text,
                                          sizeof text), DTB_OK);
        assert_int_equal(strncmp(text, "c1-", 3), 0);
        assert_string_equal(text, moves[i].move.text);
        assert_int_equal(dtb_move_to_text(ru, &a, &moves[i].move, DTB_NOTATION_NUMERIC, numbers,
                                          sizeof numbers), DTB_OK);
        assert_int_equal(strncmp(numbers, "30-", 3), 0);
        assert_string_equal(numbers, numbered[i].move.text);
    }
    dtb_pdn_move line[DTB_MAX_LINE];
    int plies = 0;
    dtb_position won = position(ru, "W:WKc1:BKe3"); /* c1 takes e3 at once (30x..) */
    assert_int_equal(dtb_probe_line(ru, &won, 0, line, DTB_MAX_LINE, &plies), DTB_OK);
    assert_int_equal(plies, 1);
    assert_int_equal(strncmp(line[0].text, "c1:", 3), 0);
    assert_int_equal(dtb_probe_line(ru_numeric, &won, 0, line, DTB_MAX_LINE, &plies), DTB_OK);
    assert_int_equal(strncmp(line[0].text, "30x", 3), 0);
    dtb_close(ru_numeric);
    dtb_close(intl_named);
    /* A caller of a dtb.h without texts (its struct ends at loader_threads) keeps numbers; a
     * texts value that is none of the three is refused. */
    const char *dirs[] = {root_ru};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs;
    o.npaths = 1;
    o.texts = DTB_TEXTS_ALGEBRAIC;
    o.struct_size = offsetof(dtb_options, loader_threads) + sizeof o.loader_threads;
    dtb_db *old = NULL;
    assert_int_equal(dtb_open(&o, &old), DTB_OK);
    assert_int_equal(dtb_position_to_fen(old, &a, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "W:WK30:BK4");
    dtb_close(old);
    o.struct_size = sizeof o;
    o.texts = 3;
    assert_int_equal(dtb_open(&o, &old), DTB_E_INVALID);
    assert_null(old);
    dtb_pdn_move bogus = moves[0].move;
    bogus.to = 1;
    char text[DTB_MOVE_TEXT_SIZE];
    assert_int_equal(dtb_move_to_text(ru, &a, &bogus, DTB_NOTATION_ALGEBRAIC, text, sizeof text),
                     DTB_E_INVALID);
    /* International has no names: a FEN with one is refused, naming it. */
    dtb_position p;
    char why[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_position_from_fen(intl, "W:Wc3:B1", &p, why, sizeof why), DTB_E_INVALID);
    assert_non_null(strstr(why, "'c3'"));
    dtb_close(ru);
    dtb_close(intl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_options_size),
        cmocka_unit_test(test_cache_stats_size),
        cmocka_unit_test(test_last_error_per_thread),
        cmocka_unit_test(test_nomem_opening_a_table),
        cmocka_unit_test(test_nomem_at_each_allocation),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_notation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
