/* Compact table sets (gen/compact.c, the derived path of probe/resolve.c).
 *
 * The fixture builds a full international set with dtb_build (the generator's own files): every
 * material of 2 and 3 pieces (men on one side and on both, promotions into derived and into
 * stored tables), and the 4-piece materials that KKMvK and KKKvM lead to (three pairs and KKvKK:
 * kings only, and a derived table of each promotion kind); sanitizer builds take the kings-only
 * 4-piece materials only. Every 4-piece position was compared once by hand
 * (tests/compare_sets.c on a full 2..4 set: 83,942,400 probes, no difference). Then
 * dtb_compact makes the compact set of it, and the tests compare the two sets position by
 * position through libdtb (the full set's answers are checked against the generator by
 * tests/test_probe.c), look at the files, and feed the converter and the probe bad input. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dtb.h" /* before core's headers: its status and WDL definitions are the ones used */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "checksum.h"
#include "compact.h"
#include "fen.h"
#include "index.h"
#include "movegen.h"
#include "splitmix.h"
#include "tableformat.h"
#include "tablewrite.h"
#include "threat.h"
#include "public_position.h"

/* Sanitizer builds (about ten times slower): the kings-only 4-piece materials, every
 * THREE_STRIDE-th 3-piece position, and a smaller 4-piece sample. */
#ifdef DTB_SANITIZED_BUILD
#define THREE_STRIDE 13
#define FOUR_SAMPLE 8000
static const char *const four[] = {"KKKvK"};
#else
#define THREE_STRIDE 1
#define FOUR_SAMPLE 100000
static const char *const four[] = {"KKMvK", "KKKvM"};
#endif
#define NFOUR ((int)(sizeof four / sizeof four[0]))

static char root[64], fulldir[128], compactdir[128], threatdir[128];
static dtb_board board;
static dtb_material mats[64]; /* the fixture's materials, in dependency order */
static int nmats;

/* ---- helpers ------------------------------------------------------------------------------ */

/* Recomputes the header's meta_hash of file image b after a test edited its header, so that
 * the reader gets past the hash to the check under test. */
static void rehash_meta(unsigned char *b)
{
    const uint64_t data_offset = dtb_tf_get64(b + DTB_TF_OFF_DATA_OFFSET);
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    dtb_hash64_update(&hs, b, DTB_TF_OFF_META_HASH);
    dtb_hash64_update(&hs, b + DTB_TF_HEADER_SIZE, (size_t)(data_offset - DTB_TF_HEADER_SIZE));
    dtb_tf_put64(b + DTB_TF_OFF_META_HASH, dtb_hash64_digest(&hs));
}

static dtb_material material(const char *name)
{
    dtb_material m;
    dtb_error e;
    assert_int_equal(dtb_material_parse(name, &m, &e), DTB_OK);
    return m;
}

static void table_path(char *buf, size_t size, const char *dir, const dtb_material *m,
                       dtb_metric metric)
{
    dtb_build_table_path(buf, size, dir, board.variant, m, metric);
}

static dtb_db *open_db(const char *dir, uint64_t cache)
{
    const char *dirs[1] = {dir};
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = 1, .cache_bytes = cache};
    dtb_db *db = NULL;
    const dtb_status s = dtb_open(&o, &db);
    if (s != DTB_OK)
        fail_msg("dtb_open(%s): %s", dir, dtb_strerror(s));
    return db;
}

static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

/* The whole file in a fresh buffer (*size bytes). */
static unsigned char *slurp(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    *size = file_size(path);
    unsigned char *b = malloc((size_t)*size + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)*size, f), (size_t)*size);
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, long size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, (size_t)size, f), (size_t)size);
    assert_int_equal(fclose(f), 0);
}

static bool same_file(const char *a, const char *b)
{
    long na, nb;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    const bool same = na == nb && memcmp(x, y, (size_t)na) == 0;
    free(x);
    free(y);
    return same;
}

static int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_cmd(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* A copy of the full set's <variant> directory under root/name (returned: root/name). */
static const char *copy_set(const char *from, const char *name)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    assert_int_equal(run_cmd("cp -r '%s' '%s'", from, dir), 0);
    return dir;
}

/* The header info of a table file. */
static dtb_tablefile_info info_of(const char *path)
{
    dtb_tablefile *tf;
    dtb_error e;
    if (dtb_tablefile_open(path, NULL, &tf, &e) != DTB_OK)
        fail_msg("%s", e.msg);
    const dtb_tablefile_info in = *dtb_tablefile_get_info(tf);
    dtb_tablefile_close(tf);
    return in;
}

/* A position (white to move) of derived table m that the compact set does not store, at or
 * after index from. */
static dtb_pos derived_position(const char *name, dtb_metric metric, uint64_t from)
{
    const dtb_material m = material(name);
    char path[512];
    table_path(path, sizeof path, compactdir, &m, metric);
    const dtb_tablefile_info in = info_of(path);
    assert_true(in.flags & DTB_TABLE_DERIVED);
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&board, m, &ix), DTB_OK);
    for (uint64_t i = from; i < dtb_index_size(ix); i++) {
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        if (!dtb_has_capture(&board, &p)) {
            dtb_index_free(ix);
            return p;
        }
    }
    fail_msg("no derived position in %s", name);
    return (dtb_pos){0};
}

/* ---- the fixture -------------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_compact_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(fulldir, sizeof fulldir, "%s/full", root);
    snprintf(compactdir, sizeof compactdir, "%s/compact", root);
    snprintf(threatdir, sizeof threatdir, "%s/threats", root);
    dtb_board_init(&board, dtb_variant_find("international"));
    dtb_material only[NFOUR];
    for (int i = 0; i < NFOUR; i++)
        dtb_material_parse(four[i], &only[i], NULL);
    dtb_error e;
    /* DTW tables that store every value: the set the compact sets are compared with through
     * libdtb (test_losses_only_input compacts the losses-only form of it) */
    const dtb_build_options all3 = {.variant = board.variant, .pieces = 3, .out_dir = fulldir,
                                    .zstd_level = 1, .dtw_full = true};
    const dtb_build_options some4 = {.variant = board.variant, .pieces = 4, .only = only,
                                     .nonly = NFOUR, .out_dir = fulldir, .zstd_level = 1,
                                     .dtw_full = true};
    if (dtb_build(&all3, &e) != DTB_OK || dtb_build(&some4, &e) != DTB_OK) {
        fprintf(stderr, "fixture: dtb_build: %s\n", e.msg);
        return -1;
    }
    dtb_material list[128];
    const int n = dtb_material_list(4, list, 128);
    for (int i = 0; i < n; i++) {
        char path[512];
        table_path(path, sizeof path, fulldir, &list[i], DTB_METRIC_WLD);
        if (access(path, F_OK) == 0)
            mats[nmats++] = list[i];
    }
    const dtb_compact_options co = {.from_dir = fulldir, .out_dir = compactdir,
                                    .variant = board.variant, .same_parameters = true};
    dtb_compact_options to = co;
    to.out_dir = threatdir;
    to.threats = true;
    if (dtb_compact(&co, NULL, &e) != DTB_OK || dtb_compact(&to, NULL, &e) != DTB_OK) {
        fprintf(stderr, "fixture: dtb_compact: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return run_cmd("rm -rf '%s'", root) == 0 ? 0 : -1;
}

/* ---- the files ---------------------------------------------------------------------------- */

/* The derived form of table m written here with the writer, independently of the converter:
 * every position don't-care, the converter's parameters for derived tables (the input's block
 * size and level, no tiling). Returns its path (one per metric, overwritten by the next call). */
static const char *derived_form(const dtb_material *m, dtb_metric metric)
{
    static char to[2][512];
    char full[512], name[DTB_MATERIAL_NAME_MAX];
    table_path(full, sizeof full, fulldir, m, metric);
    dtb_material_name(m, name, sizeof name);
    const dtb_tablefile_info in = info_of(full);
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&board, *m, &ix), DTB_OK);
    const uint64_t n = dtb_index_size(ix), words = (n + 63) / 64;
    uint8_t *v = calloc((size_t)n, 1);
    uint64_t *bits = malloc((size_t)words * sizeof *bits);
    assert_non_null(v);
    assert_non_null(bits);
    memset(bits, 0xff, (size_t)words * sizeof *bits);
    dtb_table_write_options o = dtb_build_write_options(board.variant, name, metric);
    assert_int_equal(o.value_encoding, in.value_encoding);
    o.dontcare_kind = DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED;
    o.flags = DTB_TABLE_DERIVED;
    o.block_positions = in.block_positions;
    o.zstd_level = in.zstd_level;
    o.threads = 1;
    o.tile_columns = DTB_TILE_NONE;
    const int k = metric == DTB_METRIC_DTW;
    snprintf(to[k], sizeof to[k], "%s/form.%s", root, dtb_metric_name(metric));
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    dtb_table_write_stats ws;
    dtb_error e;
    assert_int_equal(dtb_table_write(to[k], &o, v, n, &dc, &ws, &e), DTB_OK);
    free(v);
    free(bits);
    dtb_index_free(ix);
    return to[k];
}

static int mat_index(const dtb_material *m)
{
    for (int i = 0; i < nmats; i++)
        if (dtb_material_equal(&mats[i], m))
            return i;
    return -1;
}

/* The material a white promotion of m lands in (black to move in m with a white man made a
 * king, i.e. white to move in its flip). */
static dtb_material promotion_target(const dtb_material *m)
{
    dtb_material t = *m;
    t.men[DTB_WHITE]--;
    t.kings[DTB_WHITE]++;
    return dtb_material_flip(t);
}

/* Of every pair and metric the member with the larger full file (a tie: the name that sorts
 * last) is derived, the other copied byte for byte; a material that is its own flip is copied.
 * A derived file is exactly the all-don't-care file the writer makes of it. The fixture has
 * derived tables whose promotions land in a stored table and ones whose promotions land in a
 * derived table (which the probe derives in its turn: the sweeps below check the values). */
static void test_files(void **state)
{
    (void)state;
    int derived = 0, copies = 0, through_stored = 0, through_derived = 0;
    for (int k = 0; k < 2; k++) {
        const dtb_metric metric = k ? DTB_METRIC_DTW : DTB_METRIC_WLD;
        bool is_derived[64] = {false};
        for (int i = 0; i < nmats; i++) {
            const dtb_material m = mats[i], f = dtb_material_flip(m);
            char full[512], out[512], ffull[512], name[DTB_MATERIAL_NAME_MAX],
                fname[DTB_MATERIAL_NAME_MAX];
            table_path(full, sizeof full, fulldir, &m, metric);
            table_path(ffull, sizeof ffull, fulldir, &f, metric);
            table_path(out, sizeof out, compactdir, &m, metric);
            dtb_material_name(&m, name, sizeof name);
            dtb_material_name(&f, fname, sizeof fname);
            const dtb_tablefile_info in = info_of(out);
            const long mine = file_size(full), theirs = file_size(ffull);
            const bool want = !dtb_material_equal(&m, &f) &&
                              (mine > theirs || (mine == theirs && strcmp(name, fname) > 0));
            is_derived[i] = in.flags & DTB_TABLE_DERIVED;
            if (is_derived[i] != want)
                fail_msg("%s: %s, expected %s (full files %ld, its flip's %ld bytes)", out,
                         is_derived[i] ? "derived" : "stored", want ? "derived" : "stored", mine,
                         theirs);
            if (!want) {
                if (!same_file(full, out))
                    fail_msg("%s: a stored table, not a copy of the full set's", out);
                assert_int_equal(in.flags, 0);
                copies++;
                continue;
            }
            derived++;
            assert_int_equal(in.flags, DTB_TABLE_DERIVED);
            assert_true(in.dontcare_kind == (DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED));
            if (!same_file(derived_form(&m, metric), out))
                fail_msg("%s: not the all-don't-care file of its material", out);
        }
        for (int i = 0; i < nmats; i++) {
            if (!is_derived[i] || mats[i].men[DTB_WHITE] == 0)
                continue;
            const dtb_material t = promotion_target(&mats[i]);
            const int j = mat_index(&t);
            assert_true(j >= 0);
            through_derived += is_derived[j];
            through_stored += !is_derived[j];
        }
    }
    print_message("%d files copied, %d derived; derived tables with promotions into a stored "
                  "table %d, into a derived one %d\n",
                  copies, derived, through_stored, through_derived);
    assert_true(copies > derived);
    assert_true(through_stored > 0);
    assert_true(through_derived > 0);
}

/* ---- every position ----------------------------------------------------------------------- */

typedef struct sweep {
    dtb_db *full, *compact;
    uint64_t stride;        /* small_thread: every stride-th 3-piece position */
    int next;
    uint64_t probes, mismatches;
    char first[1024];
    pthread_mutex_t lock;
} sweep;

/* Whether p answers alike in both sets; else the first difference goes to sw->first. */
static bool same_answers(sweep *sw, const dtb_pos *p)
{
    const dtb_position x = pub(p);
    dtb_wdl w1 = DTB_DRAW, w2 = DTB_DRAW, v1 = DTB_DRAW, v2 = DTB_DRAW;
    int d1 = -1, d2 = -2;
    const dtb_status s1 = dtb_probe_wdl(sw->full, &x, 0, &w1);
    const dtb_status s2 = dtb_probe_wdl(sw->compact, &x, 0, &w2);
    const dtb_status s3 = dtb_probe_dtw(sw->full, &x, 0, &v1, &d1);
    const dtb_status s4 = dtb_probe_dtw(sw->compact, &x, 0, &v2, &d2);
    if (s1 == DTB_OK && s2 == DTB_OK && s3 == DTB_OK && s4 == DTB_OK && w1 == w2 && v1 == v2 &&
        d1 == d2 && w1 == v1)
        return true;
    char fen[DTB_FEN_MAX], msg[DTB_MESSAGE_SIZE];
    dtb_fen_write(&board, p, fen, sizeof fen);
    dtb_last_error(sw->compact, msg, sizeof msg);
    pthread_mutex_lock(&sw->lock);
    if (!sw->first[0])
        snprintf(sw->first, sizeof sw->first,
                 "%s: full WDL %d DTW %d in %d (%s, %s), compact WDL %d DTW %d in %d (%s, %s) %s", fen,
                 w1, v1, d1, dtb_strerror(s1), dtb_strerror(s3), w2, v2, d2, dtb_strerror(s2),
                 dtb_strerror(s4), msg);
    pthread_mutex_unlock(&sw->lock);
    return false;
}

/* Every THREE_STRIDE-th position of the 2- and 3-piece materials (every one in optimised
 * builds), white to move and colour-flipped, materials shared out between two threads. */
static void *small_thread(void *arg)
{
    sweep *sw = arg;
    uint64_t probes = 0, bad = 0;
    for (int i; (i = __atomic_fetch_add(&sw->next, 1, __ATOMIC_RELAXED)) < nmats;) {
        if (dtb_material_pieces(&mats[i]) > 3)
            continue;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&board, mats[i], &ix), DTB_OK);
        const uint64_t stride = dtb_material_pieces(&mats[i]) == 3 ? sw->stride : 1;
        for (uint64_t k = 0; k < dtb_index_size(ix); k += stride) {
            dtb_pos p, f;
            dtb_index_pos(ix, k, &p);
            dtb_pos_flip(&board, &p, &f);
            bad += !same_answers(sw, &p) + !same_answers(sw, &f);
            probes += 2;
        }
        dtb_index_free(ix);
    }
    __atomic_fetch_add(&sw->probes, probes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sw->mismatches, bad, __ATOMIC_RELAXED);
    return NULL;
}

/* FOUR_SAMPLE random 4-piece positions (a material, then an index, then a side to move), half
 * from each thread. */
static void *four_thread(void *arg)
{
    sweep *sw = arg;
    dtb_index *ix[64] = {0};
    int nfour = 0;
    for (int i = 0; i < nmats; i++)
        if (dtb_material_pieces(&mats[i]) == 4)
            assert_int_equal(dtb_index_create(&board, mats[i], &ix[nfour++]), DTB_OK);
    uint64_t seed = 77 + (uint64_t)__atomic_fetch_add(&sw->next, 1, __ATOMIC_RELAXED);
    uint64_t probes = 0, bad = 0;
    for (int k = 0; k < FOUR_SAMPLE / 2; k++) {
        const dtb_index *x = ix[dtb_splitmix64(&seed) % (uint64_t)nfour];
        dtb_pos p;
        dtb_index_pos(x, dtb_splitmix64(&seed) % dtb_index_size(x), &p);
        if (dtb_splitmix64(&seed) & 1)
            dtb_pos_flip(&board, &p, &p);
        bad += !same_answers(sw, &p);
        probes++;
    }
    for (int i = 0; i < nfour; i++)
        dtb_index_free(ix[i]);
    __atomic_fetch_add(&sw->probes, probes, __ATOMIC_RELAXED);
    __atomic_fetch_add(&sw->mismatches, bad, __ATOMIC_RELAXED);
    return NULL;
}

static void run_sweep(void *(*fn)(void *), const char *dir, uint64_t stride, const char *what)
{
    sweep sw = {.full = open_db(fulldir, 64u << 20), .compact = open_db(dir, 64u << 20),
                .stride = stride};
    pthread_mutex_init(&sw.lock, NULL);
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, fn, &sw), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&sw.lock);
    dtb_close(sw.full);
    dtb_close(sw.compact);
    if (sw.mismatches)
        fail_msg("%s: %llu of %llu positions answer differently; the first: %s", what,
                 (unsigned long long)sw.mismatches, (unsigned long long)sw.probes, sw.first);
    assert_true(sw.probes > 0);
    print_message("%s: %llu positions (WDL and DTW) alike in both sets\n", what,
                  (unsigned long long)sw.probes);
}

static void test_small_materials(void **state)
{
    (void)state;
    run_sweep(small_thread, compactdir, THREE_STRIDE, THREE_STRIDE == 1 ? "every 2- and 3-piece position"
                                              : "2- and 3-piece positions (a stride)");
}

static void test_four_pieces(void **state)
{
    (void)state;
    run_sweep(four_thread, compactdir, 1, "random 4-piece positions");
}

/* Rewrites the table file at path, whose header has flag had, as a full set's table would say
 * it is (no flag, capture positions the only don't-cares; checksums made to match): a reader
 * then takes every quiet position's stored value as its value. */
static void rewrite_as_full(const char *path, uint32_t had)
{
    long size;
    unsigned char *b = slurp(path, &size);
    assert_true(dtb_tf_get32(b + DTB_TF_OFF_FLAGS) & had);
    dtb_tf_put32(b + DTB_TF_OFF_FLAGS, 0);
    dtb_tf_put32(b + DTB_TF_OFF_DONTCARE_KIND, DTB_DONTCARE_CAPTURES);
    rehash_meta(b);
    dtb_tf_put64(b + size - DTB_TF_TRAILER_SIZE,
                 dtb_hash64(b, (size_t)(size - DTB_TF_TRAILER_SIZE), 0));
    spit(path, b, size);
    free(b);
}

/* Of material name and its colour flip, the one whose DTW table in dir is derived (derived) or
 * stored (else); its path in path. */
static dtb_material pair_member(const char *dir, const char *name, bool derived, char path[512])
{
    dtb_material m = material(name);
    table_path(path, 512, dir, &m, DTB_METRIC_DTW);
    if ((bool)(info_of(path).flags & DTB_TABLE_DERIVED) != derived) {
        m = dtb_material_flip(m);
        table_path(path, 512, dir, &m, DTB_METRIC_DTW);
    }
    return m;
}

/* Whether p's value and DTW in other differ from those in full (both must answer). */
static bool dtw_differs(dtb_db *full, dtb_db *other, const dtb_pos *p)
{
    const dtb_position x = pub(p);
    dtb_wdl w1, w2;
    int d1, d2;
    assert_int_equal(dtb_probe_dtw(full, &x, 0, &w1, &d1), DTB_OK);
    assert_int_equal(dtb_probe_dtw(other, &x, 0, &w2, &d2), DTB_OK);
    return w1 != w2 || d1 != d2;
}

/* In a copy (named copy) of set, the DTW table of material name or its flip, the one with
 * header flag (derived, or with threat don't-cares), rewritten as a full table: how many of its
 * answers differ from the full set's, over every stride-th position (of a threats table, those
 * the threat rule accepts only); how many were compared in *n. */
static uint64_t wrong_when_full(const char *set, const char *copy, const char *name, uint32_t flag,
                                uint64_t stride, uint64_t *n)
{
    const char *dir = copy_set(set, copy);
    char path[512];
    const dtb_material m = pair_member(dir, name, flag == DTB_TABLE_DERIVED, path);
    rewrite_as_full(path, flag);
    const bool threats_only = flag == DTB_TABLE_THREATS;
    dtb_db *full = open_db(fulldir, 8u << 20), *bad = open_db(dir, 8u << 20);
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&board, m, &ix), DTB_OK);
    dtb_movelist *lists[4];
    for (int k = 0; k < 4; k++)
        assert_non_null(lists[k] = malloc(sizeof *lists[k]));
    uint64_t differ = 0;
    *n = 0;
    for (uint64_t k = 0; k < dtb_index_size(ix); k += stride) {
        dtb_pos p;
        dtb_index_pos(ix, k, &p);
        if (threats_only && (dtb_has_capture(&board, &p) ||
                             !dtb_threat_dontcare(&board, &p, false, lists, NULL)))
            continue;
        differ += dtw_differs(full, bad, &p);
        ++*n;
    }
    for (int k = 0; k < 4; k++)
        free(lists[k]);
    dtb_index_free(ix);
    dtb_close(full);
    dtb_close(bad);
    char table[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&m, table, sizeof table);
    print_message("%s.dtw read as a full table: %llu of %llu positions wrong\n", table,
                  (unsigned long long)differ, (unsigned long long)*n);
    return differ;
}

/* The compact set with its derivation switched off is wrong: the derived positions hold fill
 * values, not the positions' values (so the comparisons above can fail, and do check the
 * derivation). A derived table rewritten as if it were stored (flags and don't-care kind of a
 * full set, checksums made to match) gives answers that differ from the full set's. */
static void test_without_derivation(void **state)
{
    (void)state;
    /* Of MvKM (mostly losses) and KMvM (mostly wins), at many distances, the derived one. */
    uint64_t n;
    assert_true(wrong_when_full(compactdir, "underived", "MvKM", DTB_TABLE_DERIVED, 7, &n) > n / 4);
}

/* ---- threat positions left to the probe -------------------------------------------------- */

/* The set made with threats: one member of every pair derived (the all-don't-care file of its
 * material, as in the compact set); every stored table flagged, holding no value for its
 * capture positions and, of its quiet positions, for some of its threat positions and never
 * for more than there are. */
static void test_threat_files(void **state)
{
    (void)state;
    uint64_t left = 0, threat_positions = 0;
    for (int k = 0; k < 2; k++) {
        const dtb_metric metric = k ? DTB_METRIC_DTW : DTB_METRIC_WLD;
        for (int i = 0; i < nmats; i++) {
            char out[512];
            table_path(out, sizeof out, threatdir, &mats[i], metric);
            const dtb_tablefile_info b = info_of(out);
            const dtb_material f = dtb_material_flip(mats[i]);
            char flip[512];
            table_path(flip, sizeof flip, threatdir, &f, metric);
            const bool derived = b.flags & DTB_TABLE_DERIVED;
            if (!dtb_material_equal(&f, &mats[i]) &&
                derived == (bool)(info_of(flip).flags & DTB_TABLE_DERIVED))
                fail_msg("%s and %s: not one of them derived", out, flip);
            if (derived) {
                if (!same_file(derived_form(&mats[i], metric), out))
                    fail_msg("%s: not the all-don't-care file of its material", out);
                continue;
            }
            assert_int_equal(b.flags, DTB_TABLE_THREATS);
            assert_int_equal(b.dontcare_kind, DTB_DONTCARE_CAPTURES | DTB_DONTCARE_THREATS);
            /* the threat positions themselves, counted on the position (not by the rule) */
            dtb_index *ix;
            assert_int_equal(dtb_index_create(&board, mats[i], &ix), DTB_OK);
            uint64_t threats = 0, captures = 0;
            for (uint64_t j = 0; j < dtb_index_size(ix); j++) {
                dtb_pos p, o;
                dtb_index_pos(ix, j, &p);
                o = p;
                o.side = DTB_BLACK;
                const bool capture = dtb_has_capture(&board, &p);
                captures += capture;
                threats += !capture && dtb_has_capture(&board, &o);
            }
            dtb_index_free(ix);
            assert_true(b.dontcare_count >= captures);
            assert_true(b.dontcare_count - captures <= threats);
            left += b.dontcare_count - captures;
            threat_positions += threats;
        }
    }
    print_message("stored tables: %llu of %llu threat positions hold no value\n",
                  (unsigned long long)left, (unsigned long long)threat_positions);
    assert_true(left > 0);
    assert_true(left < threat_positions); /* the rule refuses some */
}

static void test_threat_small_materials(void **state)
{
    (void)state;
    run_sweep(small_thread, threatdir, THREE_STRIDE, "threats: 2- and 3-piece positions");
}

static void test_threat_four_pieces(void **state)
{
    (void)state;
    run_sweep(four_thread, threatdir, 1, "threats: random 4-piece positions");
}

/* Without their search the threat positions are wrong: a stored table of the set rewritten as
 * if it had no threat don't-cares (flag and kind of a full set's table, checksums made to
 * match) answers some of the positions the rule accepts differently from the full set (the
 * writer's gap fill guesses most of them right: that is why they compress), so the sweeps
 * above, which see every such 2- and 3-piece position, do check the search. */
static void test_threats_unsearched(void **state)
{
    (void)state;
    /* of KMvK and KvKM, the stored one */
    uint64_t n;
    assert_true(wrong_when_full(threatdir, "unsearched", "KMvK", DTB_TABLE_THREATS, 1, &n) > 0);
    assert_true(n > 0);
}

/* ---- moves, lines, cache-only, verify ----------------------------------------------------- */

static void test_moves_and_lines(void **state)
{
    (void)state;
    dtb_db *full = open_db(fulldir, 16u << 20), *compact = open_db(compactdir, 16u << 20);
    uint64_t seed = 5;
    int lines = 0;
    for (int trial = 0; trial < 300; trial++) {
        const dtb_material *m = &mats[dtb_splitmix64(&seed) % (uint64_t)nmats];
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&board, *m, &ix), DTB_OK);
        dtb_pos p;
        dtb_index_pos(ix, dtb_splitmix64(&seed) % dtb_index_size(ix), &p);
        dtb_index_free(ix);
        if (trial & 1)
            dtb_pos_flip(&board, &p, &p);
        const dtb_position x = pub(&p);
        dtb_ranked_move a[DTB_MAX_MOVES], b[DTB_MAX_MOVES];
        int na = -1, nb = -2;
        assert_int_equal(dtb_probe_moves(full, &x, 0, a, DTB_MAX_MOVES, &na), DTB_OK);
        assert_int_equal(dtb_probe_moves(compact, &x, 0, b, DTB_MAX_MOVES, &nb), DTB_OK);
        assert_int_equal(na, nb);
        for (int i = 0; i < na; i++) {
            assert_string_equal(a[i].move.text, b[i].move.text);
            assert_int_equal(a[i].wdl, b[i].wdl);
            assert_int_equal(a[i].dtw, b[i].dtw);
        }
        dtb_pdn_move la[DTB_MAX_LINE], lb[DTB_MAX_LINE];
        int len_a = -1, len_b = -2;
        assert_int_equal(dtb_probe_line(full, &x, 0, la, DTB_MAX_LINE, &len_a), DTB_OK);
        assert_int_equal(dtb_probe_line(compact, &x, 0, lb, DTB_MAX_LINE, &len_b), DTB_OK);
        assert_int_equal(len_a, len_b);
        for (int i = 0; i < len_a; i++)
            assert_string_equal(la[i].text, lb[i].text);
        lines += len_a > 0;
    }
    assert_true(lines > 20);
    dtb_close(full);
    dtb_close(compact);
}

static void test_cache_only(void **state)
{
    (void)state;
    dtb_db *db = open_db(compactdir, 16u << 20);
    const dtb_pos p = derived_position("KMvK", DTB_METRIC_WLD, 0);
    const dtb_position x = pub(&p);
    dtb_wdl w, again;
    int d, d2;
    /* Nothing opened or cached: cache-only answers "not cached" without touching the disk. */
    assert_int_equal(dtb_probe_wdl(db, &x, DTB_CACHE_ONLY, &w), DTB_E_NOTCACHED);
    assert_int_equal(dtb_probe_dtw(db, &x, DTB_CACHE_ONLY, &w, &d), DTB_E_NOTCACHED);
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_int_equal(cs.blocks, 0);
    /* After a real probe every successor is cached: the same answer from memory. */
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    assert_int_equal(dtb_probe_wdl(db, &x, DTB_CACHE_ONLY, &again), DTB_OK);
    assert_int_equal(again, w);
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_OK);
    assert_int_equal(dtb_probe_dtw(db, &x, DTB_CACHE_ONLY, &again, &d2), DTB_OK);
    assert_int_equal(again, w);
    assert_int_equal(d2, d);
    dtb_close(db);
}

static void test_verify(void **state)
{
    (void)state;
    dtb_db *db = open_db(compactdir, 1u << 20);
    int bad = -1;
    assert_int_equal(dtb_verify(db, DTB_VERIFY_DECODE, NULL, NULL, &bad), DTB_OK);
    assert_int_equal(bad, 0);
    assert_int_equal(dtb_max_pieces(db, false), 3);
    assert_int_equal(dtb_max_pieces(db, true), 3);
    dtb_close(db);
}

/* ---- damaged and inconsistent compact sets ------------------------------------------------- */

/* A probe of p in dir fails with status want and a message naming name. */
static void expect_probe_error(const char *dir, const dtb_pos *p, dtb_status want, const char *name)
{
    dtb_db *db = open_db(dir, 1u << 20);
    const dtb_position x = pub(p);
    dtb_wdl w;
    int d;
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), want);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), want);
    if (!strstr(msg, name))
        fail_msg("message \"%s\" does not name %s", msg, name);
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), want);
    dtb_close(db);
}

static void test_damaged_compact_set(void **state)
{
    (void)state;
    /* KMvK is derived (from KvKM) in both metrics in this fixture. */
    const dtb_pos p = derived_position("KMvK", DTB_METRIC_WLD, 0);
    (void)derived_position("KMvK", DTB_METRIC_DTW, 0);
    const dtb_material m = material("KMvK"), f = material("KvKM");
    char path[512];

    /* The derived file truncated: its positions are answered from its partner, but the file
     * itself is opened and checked first. */
    const char *dir = copy_set(compactdir, "truncated");
    for (int k = 0; k < 2; k++) {
        table_path(path, sizeof path, dir, &m, k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
        assert_int_equal(truncate(path, file_size(path) - 1), 0);
    }
    expect_probe_error(dir, &p, DTB_E_CORRUPT, "KMvK.wld");

    /* The partner truncated: the derivation reads it. */
    dir = copy_set(compactdir, "partner");
    for (int k = 0; k < 2; k++) {
        table_path(path, sizeof path, dir, &f, k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
        assert_int_equal(truncate(path, file_size(path) / 2), 0);
    }
    expect_probe_error(dir, &p, DTB_E_CORRUPT, "KvKM.wld");

    /* The partner missing: the message names the derived table and the missing one. */
    dir = copy_set(compactdir, "missing");
    for (int k = 0; k < 2; k++) {
        table_path(path, sizeof path, dir, &f, k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
        assert_int_equal(unlink(path), 0);
    }
    expect_probe_error(dir, &p, DTB_E_NOTFOUND, "KvKM");

    /* Both members derived (a set mixed from two compact sets of different choices): refused,
     * not searched round in a circle. The partner rewritten as derived from the full set's
     * values, every quiet position made don't-care. */
    dir = copy_set(compactdir, "both");
    for (int k = 0; k < 2; k++) {
        const dtb_metric metric = k ? DTB_METRIC_DTW : DTB_METRIC_WLD;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&board, f, &ix), DTB_OK);
        const uint64_t n = dtb_index_size(ix);
        uint8_t *v = calloc((size_t)n, 1);
        assert_non_null(v);
        dtb_index_free(ix);
        dtb_table_write_options o = dtb_build_write_options(board.variant, "KvKM", metric);
        o.dontcare_kind = DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED;
        o.flags = DTB_TABLE_DERIVED;
        const dtb_table_dontcare dc = {.marker = 0};
        table_path(path, sizeof path, dir, &f, metric);
        dtb_error e;
        assert_int_equal(dtb_table_write(path, &o, v, n, &dc, NULL, &e), DTB_OK);
        free(v);
    }
    expect_probe_error(dir, &p, DTB_E_CORRUPT, "both derived");

    /* dtb_verify names a damaged derived file. */
    dir = copy_set(compactdir, "verify");
    table_path(path, sizeof path, dir, &m, DTB_METRIC_WLD);
    long size;
    unsigned char *b = slurp(path, &size);
    b[size - DTB_TF_TRAILER_SIZE - 3] ^= 0x40; /* inside the last frame */
    spit(path, b, size);
    free(b);
    dtb_db *db = open_db(dir, 1u << 20);
    int bad = -1;
    assert_int_equal(dtb_verify(db, 0, NULL, NULL, &bad), DTB_E_CORRUPT);
    assert_int_equal(bad, 1);
    char msg[DTB_MESSAGE_SIZE];
    dtb_last_error(db, msg, sizeof msg);
    assert_non_null(strstr(msg, "KMvK.wld"));
    dtb_close(db);
}

/* The reader refuses what no writer makes: a derived table that is its own flip, unknown flags
 * (among them bit 1, which early compact sets set: such sets must be made again). */
static void test_bad_flags(void **state)
{
    (void)state;
    const dtb_material own = material("KvK"), m = material("KMvK");
    char from[512], to[512];
    table_path(from, sizeof from, compactdir, &own, DTB_METRIC_WLD);
    snprintf(to, sizeof to, "%s/bad.wld", root);
    static const struct {
        const char *table;
        uint32_t flags;
        const char *words;
    } cases[] = {
        {"KvK", DTB_TABLE_DERIVED, "own colour flip"},
        {"KMvK", DTB_TABLE_DERIVED | 2u, "early compact set"},
        {"KMvK", 16, "unknown flags"},
        {"KvK", DTB_TABLE_THREATS, "disagree"}, /* the flag without the don't-care kind */
        {"KMvK", DTB_TABLE_DERIVED | DTB_TABLE_THREATS, "disagree"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const dtb_material x = strcmp(cases[c].table, "KvK") == 0 ? own : m;
        table_path(from, sizeof from, compactdir, &x, DTB_METRIC_WLD);
        long size;
        unsigned char *b = slurp(from, &size);
        dtb_tf_put32(b + DTB_TF_OFF_FLAGS, cases[c].flags);
        rehash_meta(b);
        spit(to, b, size);
        free(b);
        dtb_tablefile *tf;
        dtb_error e;
        assert_int_equal(dtb_tablefile_open(to, NULL, &tf, &e),
                         cases[c].flags == (DTB_TABLE_DERIVED | 2u) ? DTB_E_VERSION : DTB_E_CORRUPT);
        if (!strstr(e.msg, cases[c].words) || !strstr(e.msg, "bad.wld"))
            fail_msg("%s with flags %u: \"%s\"", cases[c].table, cases[c].flags, e.msg);
    }
    unlink(to);
}

/* ---- the converter's input and output ------------------------------------------------------ */

static int logged[4];
static void count_actions(void *user, const char *path, dtb_compact_action a, uint64_t in,
                          uint64_t out)
{
    (void)user, (void)path, (void)in, (void)out;
    logged[a]++;
}

/* dtb_compact of from into out fails with want and a one-line message naming every word. */
static void expect_compact_error(const char *from, const char *out, dtb_status want, ...)
{
    const dtb_compact_options o = {.from_dir = from, .out_dir = out, .variant = board.variant,
                                   .pieces = 3, .same_parameters = true};
    dtb_error e = {{0}};
    assert_int_equal(dtb_compact(&o, NULL, &e), want);
    assert_null(strchr(e.msg, '\n'));
    va_list ap;
    va_start(ap, want);
    for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *))
        if (!strstr(e.msg, w))
            fail_msg("message \"%s\" lacks \"%s\"", e.msg, w);
    va_end(ap);
}

static void test_converter(void **state)
{
    (void)state;
    char out[256], again[256], path[512], other[512];
    dtb_error e;
    /* Run again into the same directory: nothing changes, every file is found in place. */
    memset(logged, 0, sizeof logged);
    dtb_compact_options o = {.from_dir = fulldir, .out_dir = compactdir, .variant = board.variant,
                             .same_parameters = true, .log = count_actions};
    dtb_compact_stats st;
    assert_int_equal(dtb_compact(&o, &st, &e), DTB_OK);
    assert_int_equal(logged[DTB_COMPACT_DERIVE] + logged[DTB_COMPACT_COPY], 0);
    assert_int_equal(logged[DTB_COMPACT_UNCHANGED], 2 * nmats);
    assert_int_equal(st.files, 2 * nmats);
    assert_true(st.bytes_out[0] < st.bytes_in[0] && st.bytes_out[1] < st.bytes_in[1]);
    /* The same input, another directory and one thread: the same bytes (2..3 pieces). */
    snprintf(out, sizeof out, "%s/again", root);
    o.out_dir = out;
    o.threads = 1;
    o.pieces = 3;
    memset(logged, 0, sizeof logged);
    assert_int_equal(dtb_compact(&o, &st, &e), DTB_OK);
    assert_true(logged[DTB_COMPACT_DERIVE] > 0 && logged[DTB_COMPACT_COPY] > 0);
    int compared = 0;
    for (int i = 0; i < nmats; i++)
        for (int k = 0; k < 2; k++) {
            if (dtb_material_pieces(&mats[i]) > 3)
                continue;
            table_path(path, sizeof path, out, &mats[i], k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
            table_path(other, sizeof other, compactdir, &mats[i], k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
            assert_true(same_file(path, other));
            compared++;
        }
    assert_int_equal(compared, st.files);
    snprintf(path, sizeof path, "%s/international/STATS", out);
    assert_true(file_size(path) > 0);
    snprintf(path, sizeof path, "%s/international/KvK.stats", out);
    assert_true(file_size(path) > 0);

    /* An output file with other bytes is an error and stays as it was. */
    const dtb_material m = material("KMvK");
    table_path(path, sizeof path, out, &m, DTB_METRIC_DTW);
    assert_int_equal(truncate(path, 1000), 0);
    expect_compact_error(fulldir, out, DTB_E_INVALID, "KMvK.dtw", "not overwritten", NULL);
    assert_int_equal(file_size(path), 1000);
    const dtb_material own = material("KvK");
    table_path(path, sizeof path, out, &own, DTB_METRIC_WLD);
    assert_int_equal(truncate(path, 100), 0);
    expect_compact_error(fulldir, out, DTB_E_INVALID, "KvK.wld", "not overwritten", NULL);
    assert_int_equal(file_size(path), 100);

    /* Bad input, found before anything is written. */
    snprintf(again, sizeof again, "%s/never", root);
    const char *bad = copy_set(fulldir, "bad_missing");
    const dtb_material f = material("KvKM");
    table_path(path, sizeof path, bad, &f, DTB_METRIC_WLD);
    assert_int_equal(unlink(path), 0);
    expect_compact_error(bad, again, DTB_E_NOTFOUND, "KMvK.wld", "KvKM.wld", "missing", NULL);
    bad = copy_set(fulldir, "bad_corrupt");
    table_path(path, sizeof path, bad, &f, DTB_METRIC_DTW);
    long size;
    unsigned char *b = slurp(path, &size);
    b[size - DTB_TF_TRAILER_SIZE - 7] ^= 0x08;
    spit(path, b, size);
    free(b);
    expect_compact_error(bad, again, DTB_E_CORRUPT, "KvKM.dtw", NULL);
    table_path(path, sizeof path, bad, &f, DTB_METRIC_DTW);
    assert_int_equal(truncate(path, size - 1), 0);
    expect_compact_error(bad, again, DTB_E_CORRUPT, "KvKM.dtw", "truncated", NULL);
    expect_compact_error(compactdir, again, DTB_E_MISMATCH, "derived", "full set", NULL);
    snprintf(path, sizeof path, "%s/nothing", root);
    expect_compact_error(path, again, DTB_E_NOTFOUND, "nothing/international", NULL);
    expect_compact_error(fulldir, fulldir, DTB_E_INVALID, "output directory", NULL);
    struct stat sb;
    assert_int_equal(stat(again, &sb), -1);
    assert_int_equal(errno, ENOENT);

    /* Building or checking from a compact set is refused: its derived tables hold no values. */
    dtb_solved *s = dtb_solved_create(&board);
    assert_non_null(s);
    const char *mix = copy_set(fulldir, "mix");
    table_path(path, sizeof path, mix, &m, DTB_METRIC_DTW);
    table_path(other, sizeof other, compactdir, &m, DTB_METRIC_DTW);
    assert_int_equal(run_cmd("cp '%s' '%s'", other, path), 0);
    static const char *const deps[] = {"KvK", "KvM", "MvK", "MvM", "KKvK", "KvKK"};
    for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++)
        assert_int_equal(dtb_build_load(s, mix, material(deps[i]), &e), DTB_OK);
    assert_int_equal(dtb_build_load(s, mix, m, &e), DTB_E_MISMATCH);
    assert_non_null(strstr(e.msg, "KMvK.dtw"));
    assert_non_null(strstr(e.msg, "derived"));
    /* and so are a --threats set's stored tables: their threat positions hold no values */
    const dtb_material kk = material("KvK");
    table_path(path, sizeof path, mix, &kk, DTB_METRIC_DTW);
    table_path(other, sizeof other, threatdir, &kk, DTB_METRIC_DTW);
    assert_true(info_of(other).flags & DTB_TABLE_THREATS);
    assert_int_equal(run_cmd("cp '%s' '%s'", other, path), 0);
    dtb_solved_free(s);
    assert_non_null(s = dtb_solved_create(&board));
    assert_int_equal(dtb_build_load(s, mix, kk, &e), DTB_E_MISMATCH);
    if (!strstr(e.msg, "KvK.dtw") || !strstr(e.msg, "stored table"))
        fail_msg("\"%s\"", e.msg);
    dtb_solved_free(s);
}

/* ---- re-encoded stored tables -------------------------------------------------------------- */

/* Every value of the table file at path (n positions), in a fresh buffer. */
static uint8_t *read_values(const char *path, uint64_t n)
{
    dtb_tablefile *tf;
    dtb_error e;
    if (dtb_tablefile_open(path, NULL, &tf, &e) != DTB_OK)
        fail_msg("%s", e.msg);
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    assert_int_equal(in->positions, n);
    uint8_t *v = malloc((size_t)n);
    assert_non_null(v);
    for (uint64_t b = 0; b < in->blocks; b++)
        assert_int_equal(dtb_tablefile_read_block(tf, b, v + b * in->block_positions,
                                                  (size_t)dtb_tablefile_block_len(tf, b), NULL, &e),
                         DTB_OK);
    dtb_tablefile_close(tf);
    return v;
}

/* The 2..3-piece set made compact with other parameters than the full set's (4096-position
 * blocks, level 3): every table has them; a stored table is re-encoded with the full set's value
 * at every quiet position; every 2- and 3-piece position answers as in the full set; one thread
 * gives the same bytes. Asking for the full set's own parameters copies. */
static void test_reencode(void **state)
{
    (void)state;
    char out[256], one[256], path[512], other[512];
    snprintf(out, sizeof out, "%s/reencoded", root);
    snprintf(one, sizeof one, "%s/reencoded1", root);
    dtb_compact_options o = {.from_dir = fulldir, .out_dir = out, .variant = board.variant,
                             .pieces = 3, .block_positions = 4096, .zstd_level = 3,
                             .log = count_actions};
    dtb_compact_stats st;
    dtb_error e;
    memset(logged, 0, sizeof logged);
    assert_int_equal(dtb_compact(&o, &st, &e), DTB_OK);
    assert_int_equal(logged[DTB_COMPACT_COPY], 0);
    assert_true(logged[DTB_COMPACT_REENCODE] > 0);
    assert_int_equal(st.reencoded, logged[DTB_COMPACT_REENCODE]);
    uint64_t compared = 0;
    int stored = 0;
    for (int i = 0; i < nmats; i++) {
        if (dtb_material_pieces(&mats[i]) > 3)
            continue;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(&board, mats[i], &ix), DTB_OK);
        const uint64_t n = dtb_index_size(ix);
        for (int k = 0; k < 2; k++) {
            const dtb_metric metric = k ? DTB_METRIC_DTW : DTB_METRIC_WLD;
            table_path(path, sizeof path, out, &mats[i], metric);
            table_path(other, sizeof other, fulldir, &mats[i], metric);
            const dtb_tablefile_info in = info_of(path);
            assert_int_equal(in.block_positions, 4096);
            assert_int_equal(in.zstd_level, 3);
            if (in.flags != 0)
                continue;
            stored++;
            assert_int_equal(in.dontcare_kind, DTB_DONTCARE_CAPTURES);
            uint8_t *a = read_values(other, n), *b = read_values(path, n);
            for (uint64_t x = 0; x < n; x++) {
                dtb_pos p;
                dtb_index_pos(ix, x, &p);
                if (dtb_has_capture(&board, &p))
                    continue;
                if (a[x] != b[x])
                    fail_msg("%s: position %llu holds %d, the full set's %d", path,
                             (unsigned long long)x, b[x], a[x]);
                compared++;
            }
            free(a);
            free(b);
        }
        dtb_index_free(ix);
    }
    assert_int_equal(stored, st.files - st.derived);
    print_message("%d stored tables re-encoded, %llu quiet values alike\n", stored,
                  (unsigned long long)compared);
    /* Through libdtb (the values were compared in full above): a 31st of the positions. */
    run_sweep(small_thread, out, 31 * THREE_STRIDE, "re-encoded set: 2- and 3-piece positions");
    /* One thread, the 2-piece tables (each file written costs a sync): the same bytes. */
    o.out_dir = one;
    o.threads = 1;
    o.pieces = 2;
    assert_int_equal(dtb_compact(&o, &st, &e), DTB_OK);
    for (int i = 0; i < nmats; i++)
        for (int k = 0; k < 2 && dtb_material_pieces(&mats[i]) <= 2; k++) {
            table_path(path, sizeof path, out, &mats[i], k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
            table_path(other, sizeof other, one, &mats[i], k ? DTB_METRIC_DTW : DTB_METRIC_WLD);
            assert_true(same_file(path, other));
        }
    /* The full set's own parameters (the fixture is built at level 1): copies. */
    snprintf(one, sizeof one, "%s/same_parameters", root);
    o.out_dir = one;
    o.block_positions = DTB_TABLE_DEFAULT_BLOCK_POSITIONS;
    o.zstd_level = 1;
    memset(logged, 0, sizeof logged);
    assert_int_equal(dtb_compact(&o, &st, &e), DTB_OK);
    assert_int_equal(logged[DTB_COMPACT_REENCODE], 0);
    assert_true(logged[DTB_COMPACT_COPY] > 0);
}

/* A full set whose DTW tables store their losses only (the build's default) gives the compact
 * set of the same set built with every value stored, byte for byte: its DTW tables are loaded
 * (wins searched), re-encoded in full and then treated alike; nothing of that is left in the
 * output. The input's byte counts are its own. A missing table the loading needs is named. */
static void test_losses_only_input(void **state)
{
    (void)state;
    char losses[256], out[256], path[512], other[512];
    snprintf(losses, sizeof losses, "%s/losses", root);
    dtb_material only[NFOUR];
    for (int i = 0; i < NFOUR; i++)
        only[i] = material(four[i]);
    dtb_error e;
    const dtb_build_options all3 = {.variant = board.variant, .pieces = 3, .out_dir = losses,
                                    .zstd_level = 1};
    const dtb_build_options some4 = {.variant = board.variant, .pieces = 4, .only = only,
                                     .nonly = NFOUR, .out_dir = losses, .zstd_level = 1};
    if (dtb_build(&all3, &e) != DTB_OK || dtb_build(&some4, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    const dtb_material kmvk = material("KMvK");
    table_path(path, sizeof path, losses, &kmvk, DTB_METRIC_DTW);
    assert_true(info_of(path).flags == DTB_TABLE_LOSSES);
    snprintf(out, sizeof out, "%s/from_losses", root);
    const dtb_compact_options o = {.from_dir = losses, .out_dir = out, .variant = board.variant,
                                   .same_parameters = true};
    dtb_compact_stats st;
    if (dtb_compact(&o, &st, &e) != DTB_OK)
        fail_msg("compact: %s", e.msg);
    uint64_t in = 0;
    for (int i = 0; i < nmats; i++)
        for (int k = 0; k < 2; k++) {
            const dtb_metric metric = k ? DTB_METRIC_DTW : DTB_METRIC_WLD;
            table_path(path, sizeof path, out, &mats[i], metric);
            table_path(other, sizeof other, compactdir, &mats[i], metric);
            if (!same_file(path, other))
                fail_msg("%s differs from %s", path, other);
            table_path(path, sizeof path, losses, &mats[i], metric);
            in += k ? (uint64_t)file_size(path) : 0;
        }
    assert_int_equal(st.bytes_in[1], in);
    snprintf(path, sizeof path, "%s/international/dtw-full.tmp", out);
    assert_int_equal(access(path, F_OK), -1);
    /* a table only captures reach gone (no partner or promotion target of another): the
     * pairs whose captures reach it cannot be loaded, so not re-encoded */
    const char *bad = copy_set(losses, "losses_missing");
    const dtb_material mvm = material("MvM");
    table_path(path, sizeof path, bad, &mvm, DTB_METRIC_DTW);
    assert_int_equal(unlink(path), 0);
    table_path(path, sizeof path, bad, &mvm, DTB_METRIC_WLD);
    assert_int_equal(unlink(path), 0);
    snprintf(other, sizeof other, "%s/never_losses", root);
    expect_compact_error(bad, other, DTB_E_NOTFOUND, "losses-only", "missing MvM",
                         "--dtw-store full", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_small_materials),
        cmocka_unit_test(test_four_pieces),
        cmocka_unit_test(test_without_derivation),
        cmocka_unit_test(test_threat_files),
        cmocka_unit_test(test_threat_small_materials),
        cmocka_unit_test(test_threat_four_pieces),
        cmocka_unit_test(test_threats_unsearched),
        cmocka_unit_test(test_moves_and_lines),
        cmocka_unit_test(test_cache_only),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_damaged_compact_set),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_converter),
        cmocka_unit_test(test_reencode),
        cmocka_unit_test(test_losses_only_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
