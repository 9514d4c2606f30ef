/* Manifest digests (gen/manifest.h): the same table encoded differently has one digest, a
 * different value or header field another.
 *
 * Synthetic tables (random WLD values on international KKvK, its capture positions
 * don't-care) are written with dtb_table_write under several encodings: zstd level, block size,
 * tiling, value_bits, fill and a dictionary; their bytes differ, their digests must not. Then a
 * real set: dtb_build's international 2..3 tables against a compact set that re-encodes the
 * stored tables with another block size and level (same digest), derives the others (another
 * digest, their flags differ) and, with threats, leaves threat positions to the probe: digesting
 * those recomputes the writer's don't-care positions and must count as many as the header. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"
#include "compact.h"
#include "index.h"
#include "manifest.h"
#include "material.h"
#include "movegen.h"
#include "splitmix.h"
#include "tablefile.h"
#include "tablewrite.h"
#include "variant.h"

static char root[64];

/* The synthetic table: KKvK on the international board. */
static dtb_board board;
static uint64_t n;
static uint8_t *values;
static uint64_t *captures;

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_manifest_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    dtb_board_init(&board, dtb_variant_find("international"));
    dtb_material m;
    dtb_index *ix;
    if (dtb_material_parse("KKvK", &m, NULL) != DTB_OK || dtb_index_create(&board, m, &ix) != DTB_OK)
        return -1;
    n = dtb_index_size(ix);
    values = malloc(n);
    captures = calloc(n / 64 + 1, sizeof *captures);
    if (!values || !captures)
        return -1;
    uint64_t seed = 24;
    for (uint64_t i = 0; i < n; i++) {
        /* long runs, as real tables have, so that fills and tilings store different bytes */
        values[i] = i % 97 < 60 ? 0 : (uint8_t)(dtb_splitmix64(&seed) % 3);
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        if (dtb_has_capture(&board, &p))
            captures[i / 64] |= 1ull << (i % 64);
    }
    dtb_index_free(ix);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(values);
    free(captures);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static bool is_capture(uint64_t i) { return captures[i / 64] >> (i % 64) & 1; }

static dtb_table_write_options kkvk(void)
{
    dtb_table_write_options o = dtb_table_write_defaults();
    o.variant = "international";
    o.gametype = board.variant->gametype;
    o.material = "KKvK";
    o.metric = DTB_METRIC_WLD;
    o.index_version = DTB_INDEX_VERSION;
    o.value_encoding = DTB_ENCODING_WLD;
    o.dontcare_kind = DTB_DONTCARE_CAPTURES;
    o.threads = 2;
    return o;
}

/* Writes vals as root/name with o (capture positions don't-care, plus `extra` when it is not
 * UINT64_MAX); returns the file's checksum. */
static uint64_t write_as(const char *name, const dtb_table_write_options *o, const uint8_t *vals,
                         uint64_t extra)
{
    uint64_t *bits = malloc((n / 64 + 1) * sizeof *bits);
    assert_non_null(bits);
    memcpy(bits, captures, (n / 64 + 1) * sizeof *bits);
    if (extra != UINT64_MAX)
        bits[extra / 64] |= 1ull << (extra % 64);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", root, name);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    dtb_table_write_stats st;
    dtb_error e;
    if (dtb_table_write(path, o, vals, n, &dc, &st, &e) != DTB_OK)
        fail_msg("writing %s: %s", name, e.msg);
    free(bits);
    return st.file_hash;
}

static uint64_t digest_of(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", root, name);
    uint64_t d = 0;
    dtb_error e;
    if (dtb_manifest_digest(path, 2, &d, &e) != DTB_OK)
        fail_msg("digest of %s: %s", name, e.msg);
    return d;
}

/* Value i of the file root/name as the reader returns it. */
static uint8_t stored_value(const char *name, uint64_t i)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", root, name);
    dtb_tablefile *tf;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, NULL), DTB_OK);
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    uint8_t *buf = malloc(info->block_positions);
    assert_non_null(buf);
    assert_int_equal(dtb_tablefile_read_block(tf, i / info->block_positions, buf,
                                              info->block_positions, NULL, NULL),
                     DTB_OK);
    const uint8_t x = buf[i % info->block_positions];
    free(buf);
    dtb_tablefile_close(tf);
    return x;
}

/* Five encodings of one table: different bytes, and different values at some don't-care
 * positions (the fill depends on the block and the tiling), one digest. */
static void test_encoding_ignored(void **state)
{
    (void)state;
    dtb_table_write_options a = kkvk();
    dtb_table_write_options b = kkvk();
    b.zstd_level = 1;
    b.block_positions = 1000;
    b.tile_columns = DTB_TILE_NONE;
    b.value_bits = 8;
    b.fill = DTB_FILL_MAJORITY;
    dtb_table_write_options c = kkvk();
    c.zstd_level = 19;
    c.block_positions = 777;
    c.tile_columns = 7;
    c.fill = DTB_FILL_PREVIOUS;
    dtb_table_write_options d = kkvk();
    d.block_positions = 1u << 20; /* one block */
    d.value_bits = 4;
    d.fill = DTB_FILL_ZERO;
    dtb_table_write_options f = kkvk();
    f.dict_bytes = 256; /* the table is over 100 times that: a dictionary is trained */
    f.block_positions = 4096;
    const uint64_t ha = write_as("a.wld", &a, values, UINT64_MAX);
    const uint64_t hb = write_as("b.wld", &b, values, UINT64_MAX);
    const uint64_t hc = write_as("c.wld", &c, values, UINT64_MAX);
    const uint64_t hd = write_as("d.wld", &d, values, UINT64_MAX);
    const uint64_t hf = write_as("f.wld", &f, values, UINT64_MAX);
    assert_true(ha != hb && ha != hc && ha != hd && ha != hf && hb != hc);

    /* The reason don't-care positions are not hashed as stored: some of them differ. */
    uint64_t differ = 0;
    for (uint64_t i = 0; i < n && differ == 0; i += 13)
        if (is_capture(i) && stored_value("a.wld", i) != stored_value("c.wld", i))
            differ++;
    assert_true(differ > 0);

    const uint64_t da = digest_of("a.wld");
    assert_int_equal(digest_of("b.wld"), da);
    assert_int_equal(digest_of("c.wld"), da);
    assert_int_equal(digest_of("d.wld"), da);
    assert_int_equal(digest_of("f.wld"), da);
    /* and the thread count does not matter */
    char path[128];
    snprintf(path, sizeof path, "%s/c.wld", root);
    uint64_t one = 0;
    assert_int_equal(dtb_manifest_digest(path, 1, &one, NULL), DTB_OK);
    assert_int_equal(one, da);
}

/* One value changed, or the metric: another digest. A don't-care position's value changed: the
 * same (the writer does not store it). */
static void test_meaning_counts(void **state)
{
    (void)state;
    const dtb_table_write_options a = kkvk();
    write_as("base.wld", &a, values, UINT64_MAX);
    const uint64_t base = digest_of("base.wld");

    uint8_t *v = malloc(n);
    assert_non_null(v);
    uint64_t quiet = 0, capture = 0;
    while (is_capture(quiet))
        quiet++;
    while (!is_capture(capture))
        capture++;
    memcpy(v, values, n);
    v[quiet] = (uint8_t)((v[quiet] + 1) % 3);
    write_as("one.wld", &a, v, UINT64_MAX);
    assert_true(digest_of("one.wld") != base);

    memcpy(v, values, n);
    v[capture] = (uint8_t)((v[capture] + 1) % 3);
    write_as("dontcare.wld", &a, v, UINT64_MAX);
    assert_int_equal(digest_of("dontcare.wld"), base);
    free(v);

    dtb_table_write_options dtw = kkvk();
    dtw.metric = DTB_METRIC_DTW;
    dtw.value_encoding = DTB_ENCODING_DTW;
    write_as("base.dtw", &dtw, values, UINT64_MAX);
    assert_true(digest_of("base.dtw") != base);
}

/* A header whose don't-care count is not what its kind gives (one quiet position more marked):
 * refused, since the digest would not show what the other positions hold. */
static void test_dontcare_count_checked(void **state)
{
    (void)state;
    uint64_t quiet = 0;
    while (is_capture(quiet))
        quiet++;
    const dtb_table_write_options a = kkvk();
    write_as("extra.wld", &a, values, quiet);
    char path[128];
    snprintf(path, sizeof path, "%s/extra.wld", root);
    uint64_t d;
    dtb_error e;
    assert_int_equal(dtb_manifest_digest(path, 2, &d, &e), DTB_E_CORRUPT);
    assert_non_null(strstr(e.msg, "extra.wld"));
    assert_non_null(strstr(e.msg, "don't-care"));
    assert_null(strchr(e.msg, '\n'));

    snprintf(path, sizeof path, "%s/absent.wld", root);
    assert_int_equal(dtb_manifest_digest(path, 2, &d, &e), DTB_E_NOTFOUND);
}

typedef struct lines {
    char text[64][80];
    int n;
} lines;

static bool keep_line(void *user, uint64_t digest, const char *relpath)
{
    lines *l = user;
    if (l->n < 64)
        snprintf(l->text[l->n++], sizeof l->text[0], "%016llx  %s", (unsigned long long)digest,
                 relpath);
    return true;
}

/* Digests of dir/international/ by file name: "name" -> digest. */
static uint64_t find_digest(const lines *l, const char *relpath)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->text[i] + 18, relpath) == 0)
            return strtoull(l->text[i], NULL, 16);
    fail_msg("%s not listed", relpath);
    return 0;
}

/* A real full set and its compact forms: re-encoded stored tables keep their digests, derived
 * and threat tables digest (their don't-care positions found as the writer found them). */
static void test_real_sets(void **state)
{
    (void)state;
    char full[96], compact[96], threats[96];
    snprintf(full, sizeof full, "%s/full", root);
    snprintf(compact, sizeof compact, "%s/compact", root);
    snprintf(threats, sizeof threats, "%s/threats", root);
    dtb_error e;
    const dtb_build_options bo = {.variant = board.variant, .pieces = 3, .out_dir = full,
                                  .threads = 2, .zstd_level = 1};
    if (dtb_build(&bo, &e) != DTB_OK)
        fail_msg("dtb_build: %s", e.msg);
    dtb_compact_options co = {.from_dir = full, .out_dir = compact, .variant = board.variant,
                              .threads = 2, .block_positions = 4096, .zstd_level = 3};
    dtb_compact_stats st;
    if (dtb_compact(&co, &st, &e) != DTB_OK)
        fail_msg("dtb_compact: %s", e.msg);
    assert_true(st.derived > 0 && st.reencoded > 0);
    co.out_dir = threats;
    co.threats = true;
    if (dtb_compact(&co, &st, &e) != DTB_OK)
        fail_msg("dtb_compact --threats: %s", e.msg);

    static lines lf, lc, lt;
    lf.n = lc.n = lt.n = 0;
    assert_int_equal(dtb_manifest_dir(full, "international", 2, keep_line, &lf, &e), DTB_OK);
    assert_int_equal(dtb_manifest_dir(compact, "international", 2, keep_line, &lc, &e), DTB_OK);
    if (dtb_manifest_dir(threats, "international", 2, keep_line, &lt, &e) != DTB_OK)
        fail_msg("threat set: %s", e.msg);
    assert_int_equal(lf.n, st.files);
    assert_int_equal(lc.n, lf.n);
    assert_int_equal(lt.n, lf.n);
    for (int i = 1; i < lf.n; i++) /* in byte order of the names */
        assert_true(strcmp(lf.text[i - 1] + 18, lf.text[i] + 18) < 0);

    /* Each compact file: stored (flags 0, re-encoded) keeps the full set's digest; derived not. */
    int same = 0, derived = 0, threat_tables = 0;
    for (int i = 0; i < lc.n; i++) {
        const char *rel = lc.text[i] + 18;
        char path[160];
        snprintf(path, sizeof path, "%s/%s", compact, rel);
        dtb_tablefile *tf;
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, NULL), DTB_OK);
        const bool is_derived = dtb_tablefile_get_info(tf)->flags & DTB_TABLE_DERIVED;
        assert_int_equal(dtb_tablefile_get_info(tf)->block_positions, 4096);
        dtb_tablefile_close(tf);
        const uint64_t dc = strtoull(lc.text[i], NULL, 16), df = find_digest(&lf, rel);
        if (is_derived) {
            assert_true(dc != df);
            derived++;
        } else {
            assert_int_equal(dc, df);
            same++;
        }
        snprintf(path, sizeof path, "%s/%s", threats, rel);
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, NULL), DTB_OK);
        threat_tables += (dtb_tablefile_get_info(tf)->dontcare_kind & DTB_DONTCARE_THREATS) != 0;
        dtb_tablefile_close(tf);
    }
    assert_true(same > 0 && derived > 0);
    assert_true(threat_tables > 0); /* the threat rule's positions were recomputed and counted */
}

static void test_dir_errors(void **state)
{
    (void)state;
    dtb_error e;
    lines l = {.n = 0};
    assert_int_equal(dtb_manifest_dir(root, "english", 2, keep_line, &l, &e), DTB_E_NOTFOUND);
    assert_non_null(strstr(e.msg, "english"));
    char empty[96];
    snprintf(empty, sizeof empty, "%s/empty/international", root);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", empty);
    assert_int_equal(system(cmd), 0);
    snprintf(empty, sizeof empty, "%s/empty", root);
    assert_int_equal(dtb_manifest_dir(empty, "international", 2, keep_line, &l, &e), DTB_E_NOTFOUND);
    assert_non_null(strstr(e.msg, "no table files"));
    assert_int_equal(l.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding_ignored),
        cmocka_unit_test(test_meaning_counts),
        cmocka_unit_test(test_dontcare_count_checked),
        cmocka_unit_test(test_real_sets),
        cmocka_unit_test(test_dir_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
