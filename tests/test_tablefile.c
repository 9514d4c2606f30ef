/* Table files: the checksum against xxHash reference values, write/read round trips, identical
 * bytes for any thread count, and every kind of damage (truncation, bit flips, wrong version,
 * wrong table, missing file) reported as an error that names the file, never a wrong value. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>
#include <zstd.h>

#include "checksum.h"
#include "tableformat.h"
#include "tablefile.h"
#include "tablewrite.h"

static char tmpdir[64];

static void expect_error_names_file(dtb_status s, dtb_status want, const dtb_error *err,
                                    const char *path);

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* ---- checksum ---------------------------------------------------------------------------- */

/* Reference values from `xxhsum -H64` (xxHash 0.8) over bytes b[i] = (i*7+3) mod 256. */
static const struct {
    size_t len;
    uint64_t hash;
} xxh64_vectors[] = {
    {0, 0xef46db3751d8e999u},   {1, 0x1f25c8d0bc1f4bb6u},   {3, 0x31d2363f52e564c9u},
    {4, 0x9bb64b7d66ee9fdau},   {7, 0x9a7b149959ce60d8u},   {8, 0xdab99d95c6f90092u},
    {12, 0xd52e407833af5133u},  {31, 0xa2aa5f33cc4a6119u},  {32, 0x23c3c17ef790fd97u},
    {33, 0x50a7cfc7ba588784u},  {63, 0x5e3e54b431c7493cu},  {64, 0x0eb64b3ef6eeb01fu},
    {100, 0xa61f8d4c170fe531u}, {1000, 0x5f235fa033f1a3fbu},
};

static void test_hash_vectors(void **state)
{
    (void)state;
    unsigned char buf[1000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    for (size_t k = 0; k < sizeof xxh64_vectors / sizeof xxh64_vectors[0]; k++) {
        const size_t len = xxh64_vectors[k].len;
        assert_true(dtb_hash64(buf, len, 0) == xxh64_vectors[k].hash);
        /* The streaming form in uneven pieces gives the same value. */
        for (size_t piece = 1; piece <= 40; piece += 13) {
            dtb_hash64_state s;
            dtb_hash64_init(&s, 0);
            for (size_t off = 0; off < len; off += piece)
                dtb_hash64_update(&s, buf + off, len - off < piece ? len - off : piece);
            assert_true(dtb_hash64_digest(&s) == xxh64_vectors[k].hash);
        }
    }
    /* The seed matters (block checksums rely on it to catch frames in the wrong place). */
    assert_true(dtb_hash64(buf, 100, 1) != dtb_hash64(buf, 100, 0));
    dtb_hash64_state s;
    dtb_hash64_init(&s, 77);
    dtb_hash64_update(&s, buf, 50);
    dtb_hash64_update(&s, buf + 50, 950);
    assert_true(dtb_hash64_digest(&s) == dtb_hash64(buf, 1000, 77));
}

/* ---- synthetic tables ---------------------------------------------------------------------- */

/* Values with runs, a period and noise, like a real table's structure; don't-care positions in
 * clusters and scattered. Deterministic. */
static uint8_t pattern_value(uint64_t i)
{
    const uint64_t r = (i * 0x9E3779B97F4A7C15u) >> 58;
    if ((i / 500) % 7 == 3)
        return (uint8_t)(128 + (i / 40) % 30);
    if (r == 0)
        return (uint8_t)(i % 251);
    return (uint8_t)((i / 97) % 3);
}

static bool pattern_dontcare(uint64_t i)
{
    return (i % 613) < 40 || (i % 11) == 5;
}

static uint8_t *make_values(uint64_t n)
{
    uint8_t *v = malloc(n);
    assert_non_null(v);
    for (uint64_t i = 0; i < n; i++)
        v[i] = pattern_value(i);
    return v;
}

static uint64_t *make_bits(uint64_t n)
{
    uint64_t *bits = calloc((n + 63) / 64, sizeof *bits);
    assert_non_null(bits);
    for (uint64_t i = 0; i < n; i++)
        if (pattern_dontcare(i))
            bits[i / 64] |= (uint64_t)1 << (i % 64);
    return bits;
}

static bool dontcare_cb(void *user, uint64_t i)
{
    (void)user;
    return pattern_dontcare(i);
}

static dtb_table_write_options options(uint32_t block_positions, int level)
{
    dtb_table_write_options o = dtb_table_write_defaults();
    o.variant = "international";
    o.gametype = 20;
    o.material = "KKMvK";
    o.metric = DTB_METRIC_WLD;
    o.index_version = 1;
    o.value_encoding = 1;
    o.dontcare_kind = DTB_DONTCARE_CAPTURES;
    o.block_positions = block_positions;
    o.zstd_level = level;
    /* Most tests check the previous-value fill directly, in index order. */
    o.fill = DTB_FILL_PREVIOUS;
    o.tile_columns = DTB_TILE_NONE;
    return o;
}

static void write_ok(const char *path, const dtb_table_write_options *o, const uint8_t *v, uint64_t n,
                     const dtb_table_dontcare *dc, dtb_table_write_stats *st)
{
    dtb_error err = {{0}};
    const dtb_status s = dtb_table_write(path, o, v, n, dc, st, &err);
    if (s != DTB_OK)
        fail_msg("write %s: %s", path, err.msg);
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(*size ? *size : 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, *size, f), *size);
    fclose(f);
    return p;
}

static void spill(const char *path, const unsigned char *p, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* Reads every block of path back; cared-for positions must equal v, don't-care ones must hold
 * the previous cared-for value of their block (the default fill), recomputed here directly. */
static void check_contents(const char *path, const uint8_t *v, uint64_t n, bool fill_previous)
{
    dtb_tablefile *tf;
    dtb_error err = {{0}};
    if (dtb_tablefile_open(path, NULL, &tf, &err) != DTB_OK)
        fail_msg("open %s: %s", path, err.msg);
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    assert_true(in->positions == n);
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    uint8_t *buf = malloc(in->block_positions);
    uint64_t dontcare = 0;
    for (uint64_t b = 0; b < in->blocks; b++) {
        const uint64_t start = b * in->block_positions;
        const uint64_t len = dtb_tablefile_block_len(tf, b);
        assert_true(len == (n - start < in->block_positions ? n - start : in->block_positions));
        /* Alternate a reused context and none. */
        if (dtb_tablefile_read_block(tf, b, buf, in->block_positions, b % 3 ? ctx : NULL, &err) !=
            DTB_OK)
            fail_msg("block %llu: %s", (unsigned long long)b, err.msg);
        int have_prev = 0;
        uint8_t prev = 0;
        uint64_t first = start;
        while (first < start + len && pattern_dontcare(first))
            first++;
        if (first < start + len)
            have_prev = 1, prev = v[first];
        for (uint64_t i = start; i < start + len; i++) {
            if (!pattern_dontcare(i)) {
                assert_int_equal(buf[i - start], v[i]);
                prev = v[i];
            } else {
                dontcare++;
                if (fill_previous)
                    assert_int_equal(buf[i - start], have_prev ? prev : 0);
            }
        }
    }
    assert_true(in->dontcare_count == dontcare);
    assert_true(in->dontcare_kind == DTB_DONTCARE_CAPTURES);
    /* Out of range requests are errors: a block that does not exist, a buffer too small. */
    assert_int_equal(dtb_tablefile_read_block(tf, in->blocks, buf, in->block_positions, ctx, &err),
                     DTB_E_RANGE);
    assert_int_equal(dtb_tablefile_read_block(tf, 0, buf, dtb_tablefile_block_len(tf, 0) - 1, ctx, &err),
                     DTB_E_OVERFLOW);
    assert_int_equal(dtb_tablefile_read_packed(tf, 0, buf, dtb_tablefile_packed_len(tf, 0) - 1, ctx, &err),
                     DTB_E_OVERFLOW);
    if (dtb_tablefile_verify(tf, true, NULL, NULL, &err) != DTB_OK)
        fail_msg("verify %s: %s", path, err.msg);
    free(buf);
    dtb_tablefile_ctx_free(ctx);
    dtb_tablefile_close(tf);
}

static void test_round_trip(void **state)
{
    (void)state;
    const uint64_t n = 1000003; /* the last block is partial */
    uint8_t *v = make_values(n);
    uint64_t *bits = make_bits(n);
    char path[128];
    path_in_tmp(path, sizeof path, "KKMvK.wld");
    dtb_table_write_options o = options(4096, 3);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    dtb_table_write_stats st;
    write_ok(path, &o, v, n, &dc, &st);
    assert_true(st.blocks == (n + 4095) / 4096);
    check_contents(path, v, n, true);

    /* The same don't-care set given by callback gives the same file. */
    size_t size1, size2;
    unsigned char *a = slurp(path, &size1);
    const dtb_table_dontcare bycb = {.fn = dontcare_cb, .marker = -1};
    write_ok(path, &o, v, n, &bycb, NULL);
    unsigned char *b = slurp(path, &size2);
    assert_int_equal(size1, size2);
    assert_memory_equal(a, b, size1);
    free(b);

    /* ... and so does a marker byte (values never use 255 here). */
    uint8_t *marked = malloc(n);
    for (uint64_t i = 0; i < n; i++)
        marked[i] = pattern_dontcare(i) ? 255 : v[i];
    const dtb_table_dontcare bymarker = {.marker = 255};
    write_ok(path, &o, marked, n, &bymarker, NULL);
    b = slurp(path, &size2);
    assert_int_equal(size1, size2);
    assert_memory_equal(a, b, size1);
    free(b);
    free(marked);
    free(a);

    /* Other fills keep the cared-for values. */
    o.fill = DTB_FILL_MAJORITY;
    write_ok(path, &o, v, n, &dc, NULL);
    check_contents(path, v, n, false);
    o.fill = DTB_FILL_ZERO;
    write_ok(path, &o, v, n, &dc, NULL);
    check_contents(path, v, n, false);
    free(v);
    free(bits);
    /* No .tmp file is left behind. */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
}

static void test_dictionary(void **state)
{
    (void)state;
    const uint64_t n = 300000;
    uint8_t *v = make_values(n);
    uint64_t *bits = make_bits(n);
    char path[128];
    path_in_tmp(path, sizeof path, "dict.dtw");
    dtb_table_write_options o = options(1024, 5);
    o.metric = DTB_METRIC_DTW;
    o.dict_bytes = 2048;
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    dtb_table_write_stats st;
    write_ok(path, &o, v, n, &dc, &st);
    assert_true(st.dict_size > 0);
    check_contents(path, v, n, true);
    dtb_tablefile *tf;
    dtb_error err;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    assert_true(dtb_tablefile_get_info(tf)->dict_size == st.dict_size);
    assert_true(dtb_tablefile_get_info(tf)->file_hash == st.file_hash);
    dtb_tablefile_close(tf);
    /* A table under 100 times the dictionary size is written without one. */
    o.dict_bytes = 4000;
    write_ok(path, &o, v, n, &dc, &st);
    assert_true(st.dict_size == 0);
    check_contents(path, v, n, true);
    free(v);
    free(bits);
}

/* The thread count must not change a byte, at a plain zstd level and at the default one (whose
 * parameters the writer tunes). */
static void test_threads_identical(void **state)
{
    (void)state;
    const uint64_t n = 200000;
    uint8_t *v = make_values(n);
    uint64_t *bits = make_bits(n);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    char p1[128], p2[128];
    path_in_tmp(p1, sizeof p1, "t1.wld");
    path_in_tmp(p2, sizeof p2, "t3.wld");
    for (int k = 0; k < 4; k++) {
        const int dict = k % 2, level = k < 2 ? 4 : DTB_TABLE_DEFAULT_ZSTD_LEVEL;
        dtb_table_write_options o = options(2048, level);
        o.dict_bytes = dict ? 1024 : 0;
        o.threads = 1;
        dtb_table_write_stats st;
        write_ok(p1, &o, v, n, &dc, &st);
        assert_true((st.dict_size > 0) == (dict == 1));
        o.threads = 3;
        write_ok(p2, &o, v, n, &dc, NULL);
        size_t s1, s2;
        unsigned char *a = slurp(p1, &s1), *b = slurp(p2, &s2);
        assert_int_equal(s1, s2);
        assert_memory_equal(a, b, s1);
        check_contents(p1, v, n, true);
        free(a);
        free(b);
    }
    free(v);
    free(bits);
}

/* Packed widths: WLD-like values get 2 bits by default; each width reads back exactly, packed or
 * spread; a value wider than asked is refused. */
static void test_value_bits(void **state)
{
    (void)state;
    const uint64_t n = 100003;
    uint8_t *v = malloc(n);
    for (uint64_t i = 0; i < n; i++)
        v[i] = (uint8_t)((i / 13 + i / 1000) % 3);
    uint64_t *bits = make_bits(n);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    char path[128];
    path_in_tmp(path, sizeof path, "bits.wld");
    dtb_error err;
    const unsigned widths[] = {0, 2, 4, 8};
    for (int k = 0; k < 4; k++) {
        dtb_table_write_options o = options(1000, 3);
        o.value_bits = widths[k];
        write_ok(path, &o, v, n, &dc, NULL);
        check_contents(path, v, n, true);
        dtb_tablefile *tf;
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
        const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
        assert_int_equal(in->value_bits, widths[k] ? widths[k] : 2);
        uint8_t packed[1000], spread[1000];
        const uint64_t b = in->blocks - 1; /* the short one */
        const uint64_t len = dtb_tablefile_block_len(tf, b);
        assert_true(len == n % 1000);
        assert_true(dtb_tablefile_packed_len(tf, b) == (len * in->value_bits + 7) / 8);
        assert_int_equal(dtb_tablefile_read_packed(tf, b, packed, sizeof packed, NULL, &err), DTB_OK);
        assert_int_equal(dtb_tablefile_read_block(tf, b, spread, sizeof spread, NULL, &err), DTB_OK);
        for (uint64_t i = 0; i < len; i++)
            assert_int_equal(dtb_tablefile_packed_get(packed, in->value_bits, i), spread[i]);
        dtb_tablefile_close(tf);
    }
    /* Values 0/1 only (don't-cares may hold 2): one bit. */
    for (uint64_t i = 0; i < n; i++)
        v[i] = pattern_dontcare(i) ? 2 : (uint8_t)(i / 7 % 2);
    dtb_table_write_options o = options(1000, 3);
    write_ok(path, &o, v, n, &dc, NULL);
    check_contents(path, v, n, true);
    dtb_tablefile *tf;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    assert_int_equal(dtb_tablefile_get_info(tf)->value_bits, 1);
    dtb_tablefile_close(tf);
    /* Too wide for the asked width: refused, naming the position of a cared-for value. */
    v[5000] = 2;
    assert_false(pattern_dontcare(5000));
    o.value_bits = 1;
    expect_error_names_file(dtb_table_write(path, &o, v, n, &dc, NULL, &err), DTB_E_INVALID, &err,
                            path);
    assert_non_null(strstr(err.msg, "5000"));
    o.value_bits = 3;
    assert_int_equal(dtb_table_write(path, &o, v, n, &dc, NULL, &err), DTB_E_INVALID);
    free(v);
    free(bits);
}

/* A value map stores map[x] for each value byte x: the file is the one written from the mapped
 * values, whatever the threads. The automatic width follows the mapped cared-for values, also
 * when the only one that needs the width lies in the last of many chunks. */
static void test_value_map(void **state)
{
    (void)state;
    const uint64_t n = 300007, last = n - 5; /* over four of the width scan's 65536 chunks */
    uint8_t map[256];
    for (int x = 0; x < 256; x++) /* DTW bytes to WLD: draw 0, win 1, loss 2 */
        map[x] = (uint8_t)(x == 0 ? 0 : x < 128 ? 1 : 2);
    uint8_t *raw = malloc(n), *mapped = malloc(n);
    assert_non_null(raw);
    assert_non_null(mapped);
    uint64_t *bits = make_bits(n);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    assert_false(pattern_dontcare(last));
    char p1[128], p2[128];
    path_in_tmp(p1, sizeof p1, "map1.wld");
    path_in_tmp(p2, sizeof p2, "map2.wld");
    for (int loss = 0; loss < 2; loss++) {
        /* wins and draws; losses only where nobody cares, and (loss) one cared-for at `last` */
        for (uint64_t i = 0; i < n; i++) {
            raw[i] = pattern_dontcare(i) && i % 3 == 0 ? (uint8_t)(128 + i % 100)
                                                       : (uint8_t)(i / 11 % 2 ? 1 + i % 90 : 0);
            if (loss && i == last)
                raw[i] = 200;
            mapped[i] = map[raw[i]];
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            dtb_table_write_options o = options(4096, 3);
            o.fill = DTB_FILL_GAP;
            o.threads = threads;
            write_ok(p1, &o, mapped, n, &dc, NULL);
            o.value_map = map;
            write_ok(p2, &o, raw, n, &dc, NULL);
            size_t s1, s2;
            unsigned char *a = slurp(p1, &s1), *b = slurp(p2, &s2);
            assert_int_equal(s1, s2);
            assert_memory_equal(a, b, s1);
            free(a);
            free(b);
            dtb_tablefile *tf;
            dtb_error err;
            assert_int_equal(dtb_tablefile_open(p2, NULL, &tf, &err), DTB_OK);
            assert_int_equal(dtb_tablefile_get_info(tf)->value_bits, loss ? 2 : 1);
            dtb_tablefile_close(tf);
        }
    }
    free(raw);
    free(mapped);
    free(bits);
}

/* Several threads reading one open file at once (each with its own context, or none) get what one
 * thread reads. */
static void test_concurrent_reads(void **state)
{
    (void)state;
    const uint64_t n = 300000;
    uint8_t *v = make_values(n);
    char path[128];
    path_in_tmp(path, sizeof path, "conc.dtw");
    dtb_table_write_options o = options(1000, 3);
    write_ok(path, &o, v, n, NULL, NULL);
    dtb_tablefile *tf;
    dtb_error err;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    const uint64_t blocks = dtb_tablefile_get_info(tf)->blocks;
    int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
    {
        dtb_tablefile_ctx *ctx = omp_get_thread_num() % 2 ? dtb_tablefile_ctx_create() : NULL;
        uint8_t buf[1000];
        dtb_error terr;
        for (uint64_t k = 0; k < 3 * blocks; k++) {
            const uint64_t b = (k * 7 + (uint64_t)omp_get_thread_num() * 31) % blocks;
            if (dtb_tablefile_read_block(tf, b, buf, sizeof buf, ctx, &terr) != DTB_OK ||
                memcmp(buf, v + b * 1000, (size_t)dtb_tablefile_block_len(tf, b)) != 0)
                bad++;
        }
        dtb_tablefile_ctx_free(ctx);
    }
    assert_int_equal(bad, 0);
    dtb_tablefile_close(tf);
    free(v);
}

/* A single-block table and a one-position table. */
static void test_small_tables(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "KvK.wld");
    const uint8_t one = 7;
    dtb_table_write_options o = options(65536, 19);
    write_ok(path, &o, &one, 1, NULL, NULL);
    dtb_tablefile *tf;
    dtb_error err;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    uint8_t got = 0;
    assert_int_equal(dtb_tablefile_read_block(tf, 0, &got, 1, NULL, &err), DTB_OK);
    assert_int_equal(got, 7);
    assert_true(dtb_tablefile_get_info(tf)->dontcare_count == 0);
    assert_true(dtb_tablefile_get_info(tf)->dontcare_kind == 0);
    dtb_tablefile_close(tf);
    /* Every position don't-care: still a valid file. */
    uint64_t bits = 0xff;
    const uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const dtb_table_dontcare dc = {.bits = &bits, .marker = -1};
    write_ok(path, &o, eight, 8, &dc, NULL);
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    assert_true(dtb_tablefile_get_info(tf)->dontcare_count == 8);
    assert_int_equal(dtb_tablefile_verify(tf, true, NULL, NULL, &err), DTB_OK);
    dtb_tablefile_close(tf);
}

/* ---- damage --------------------------------------------------------------------------------- */

static void expect_error_names_file(dtb_status s, dtb_status want, const dtb_error *err,
                                    const char *path)
{
    if (s != want)
        fail_msg("%s: status %d, wanted %d (%s)", path, (int)s, (int)want, err->msg);
    const char *base = strrchr(path, '/') + 1;
    if (!strstr(err->msg, base))
        fail_msg("message does not name the file: %s", err->msg);
}

static void test_missing_and_foreign(void **state)
{
    (void)state;
    char path[128];
    dtb_tablefile *tf = (dtb_tablefile *)1;
    dtb_error err;
    path_in_tmp(path, sizeof path, "KKKvK.wld");
    expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_NOTFOUND, &err, path);
    assert_null(tf);
    path_in_tmp(path, sizeof path, "text.wld");
    char text[600];
    memset(text, 'x', sizeof text);
    spill(path, (const unsigned char *)text, sizeof text);
    expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_CORRUPT, &err, path);
    assert_non_null(strstr(err.msg, "magic"));
    spill(path, (const unsigned char *)text, 0);
    expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_CORRUPT, &err, path);
    expect_error_names_file(dtb_tablefile_open(tmpdir, NULL, &tf, &err), DTB_E_IO, &err, tmpdir);
}

/* A sound file that is not what the caller asked for. */
static void test_mismatch(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "KKMvK.wld");
    const uint64_t n = 5000;
    uint8_t *v = make_values(n);
    dtb_table_write_options o = options(1000, 3);
    write_ok(path, &o, v, n, NULL, NULL);
    dtb_tablefile *tf;
    dtb_error err;
    const dtb_tablefile_expect right = {.variant = "international", .material = "KKMvK",
                                        .metric = DTB_METRIC_WLD, .index_version = 1,
                                        .value_encoding = 1, .positions = n};
    assert_int_equal(dtb_tablefile_open(path, &right, &tf, &err), DTB_OK);
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    assert_string_equal(in->variant, "international");
    assert_string_equal(in->material, "KKMvK");
    assert_int_equal(in->gametype, 20);
    assert_int_equal(in->metric, DTB_METRIC_WLD);
    assert_true(in->blocks == 5 && in->block_positions == 1000 && in->zstd_level == 3);
    dtb_tablefile_close(tf);
    dtb_tablefile_expect x = right;
    x.variant = "brazilian";
    expect_error_names_file(dtb_tablefile_open(path, &x, &tf, &err), DTB_E_MISMATCH, &err, path);
    x = right;
    x.material = "KKvK";
    expect_error_names_file(dtb_tablefile_open(path, &x, &tf, &err), DTB_E_MISMATCH, &err, path);
    x = right;
    x.metric = DTB_METRIC_DTW;
    expect_error_names_file(dtb_tablefile_open(path, &x, &tf, &err), DTB_E_MISMATCH, &err, path);
    x = right;
    x.index_version = 2;
    expect_error_names_file(dtb_tablefile_open(path, &x, &tf, &err), DTB_E_MISMATCH, &err, path);
    x = right;
    x.positions = n + 1;
    expect_error_names_file(dtb_tablefile_open(path, &x, &tf, &err), DTB_E_MISMATCH, &err, path);
    /* A brazilian file asked for as international. */
    o.variant = "brazilian";
    o.gametype = 26;
    write_ok(path, &o, v, n, NULL, NULL);
    expect_error_names_file(dtb_tablefile_open(path, &right, &tf, &err), DTB_E_MISMATCH, &err, path);
    free(v);
}

/* The file at path (damaged) must fail to open, or open and then fail verification, and every
 * block must read either as an error or as the right values. Returns whether open failed. */
static bool check_damaged(const char *path, const uint8_t *good, uint64_t n)
{
    dtb_tablefile *tf;
    dtb_error err = {{0}};
    const dtb_status s = dtb_tablefile_open(path, NULL, &tf, &err);
    if (s != DTB_OK) {
        assert_null(tf);
        expect_error_names_file(s, s, &err, path);
        return true;
    }
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    uint8_t *buf = malloc(in->block_positions);
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    assert_true(in->positions == n);
    for (uint64_t b = 0; b < in->blocks; b++) {
        const dtb_status r = dtb_tablefile_read_block(tf, b, buf, in->block_positions, ctx, &err);
        if (r == DTB_OK)
            assert_memory_equal(buf, good + b * in->block_positions, dtb_tablefile_block_len(tf, b));
        else
            expect_error_names_file(r, DTB_E_CORRUPT, &err, path);
    }
    const dtb_status v = dtb_tablefile_verify(tf, true, NULL, NULL, &err);
    expect_error_names_file(v, DTB_E_CORRUPT, &err, path);
    free(buf);
    dtb_tablefile_ctx_free(ctx);
    dtb_tablefile_close(tf);
    return false;
}

static void damage_all(bool dict, bool narrow, uint32_t tile)
{
    char path[128], bad[128];
    path_in_tmp(path, sizeof path, dict ? "dmgd.dtw" : "dmg.wld");
    path_in_tmp(bad, sizeof bad, dict ? "bad_d.dtw" : "bad.wld");
    const uint64_t n = dict ? 40000 : 9000;
    uint8_t *v = make_values(n);
    if (narrow)
        for (uint64_t i = 0; i < n; i++)
            v[i] %= 3;
    dtb_table_write_options o = options(dict ? 1000 : 1500, 3);
    o.dict_bytes = dict ? 384 : 0;
    o.tile_columns = tile;
    dtb_table_write_stats st;
    write_ok(path, &o, v, n, NULL, &st); /* no don't-cares: every byte is checkable */
    assert_true((st.dict_size > 0) == dict);
    assert_true(st.tile_columns == (tile >= 2 ? tile : 0));
    size_t size;
    unsigned char *file = slurp(path, &size);
    {
        dtb_tablefile *tf;
        dtb_error err;
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
        assert_int_equal(dtb_tablefile_verify(tf, true, NULL, NULL, &err), DTB_OK);
        dtb_tablefile_close(tf);
    }

    /* Every truncation (every length for small files, else a sample plus the edges). */
    const size_t step = size <= 4096 ? 1 : size / 2000 + 1;
    for (size_t len = 0; len < size; len += (len + 40 > size ? 1 : step)) {
        spill(bad, file, len);
        assert_true(check_damaged(bad, v, n));
    }
    /* A bit flip at every offset in the header, block table, dictionary and trailer, and across
     * the frames. */
    const size_t data_offset = (size_t)dtb_tf_get64(file + DTB_TF_OFF_DATA_OFFSET);
    for (size_t off = 0; off < size; off += (off < data_offset || off + 16 >= size) ? 1 : 7) {
        file[off] ^= (unsigned char)(1u << (off % 8));
        spill(bad, file, size);
        check_damaged(bad, v, n);
        file[off] ^= (unsigned char)(1u << (off % 8));
    }
    /* Extra bytes after the end. */
    unsigned char *longer = malloc(size + 3);
    memcpy(longer, file, size);
    memset(longer + size, 0, 3);
    spill(bad, longer, size + 3);
    assert_true(check_damaged(bad, v, n));
    free(longer);
    free(file);
    free(v);
}

static void test_damage(void **state)
{
    (void)state;
    damage_all(false, false, DTB_TILE_NONE);
    damage_all(true, false, DTB_TILE_NONE);
    damage_all(false, true, DTB_TILE_NONE);
    damage_all(false, true, 7);
    damage_all(true, false, 13);
}

/* The tile width field, rewritten with the meta checksum made right: 1 and widths beyond any
 * block are refused at open, naming the file and the field. */
static void test_tile_field(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "tilef.wld");
    const uint64_t n = 5000;
    uint8_t *v = make_values(n);
    dtb_table_write_options o = options(1000, 3);
    o.tile_columns = 10;
    write_ok(path, &o, v, n, NULL, NULL);
    size_t size;
    unsigned char *f = slurp(path, &size);
    assert_int_equal(dtb_tf_get32(f + DTB_TF_OFF_TILE_COLUMNS), 10);
    const uint32_t bad[] = {1, DTB_TF_MAX_BLOCK_POSITIONS + 1, 0xffffffffu};
    for (int k = 0; k < 3; k++) {
        dtb_tf_put32(f + DTB_TF_OFF_TILE_COLUMNS, bad[k]);
        const size_t d = (size_t)dtb_tf_get64(f + DTB_TF_OFF_DATA_OFFSET);
        dtb_hash64_state hs;
        dtb_hash64_init(&hs, 0);
        dtb_hash64_update(&hs, f, DTB_TF_OFF_META_HASH);
        dtb_hash64_update(&hs, f + DTB_TF_HEADER_SIZE, d - DTB_TF_HEADER_SIZE);
        dtb_tf_put64(f + DTB_TF_OFF_META_HASH, dtb_hash64_digest(&hs));
        spill(path, f, size);
        dtb_tablefile *tf;
        dtb_error err;
        expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_CORRUPT, &err, path);
        assert_non_null(strstr(err.msg, "tile"));
    }
    free(f);
    free(v);
}

/* A block table entry pair swapped, with the meta checksum recomputed: only the seeded block
 * checksums can notice. */
static void test_swapped_blocks(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "swap.wld");
    const uint64_t n = 4000;
    uint8_t *v = malloc(n);
    for (uint64_t i = 0; i < n; i++)
        v[i] = (uint8_t)(i < 2000 ? 1 : 2);
    dtb_table_write_options o = options(1000, 3);
    write_ok(path, &o, v, n, NULL, NULL);
    size_t size;
    unsigned char *f = slurp(path, &size);
    /* Blocks 0,1 (all 1) and 2,3 (all 2) compress to frames of equal size; swap frames 1 and 2
     * along with their entries. */
    const size_t t = DTB_TF_HEADER_SIZE, d = (size_t)dtb_tf_get64(f + DTB_TF_OFF_DATA_OFFSET);
    const uint32_t s0 = dtb_tf_get32(f + t), s1 = dtb_tf_get32(f + t + 8), s2 = dtb_tf_get32(f + t + 16);
    assert_int_equal(s1, s2);
    unsigned char tmp[64];
    assert_true(s1 <= sizeof tmp);
    memcpy(tmp, f + d + s0, s1);
    memcpy(f + d + s0, f + d + s0 + s1, s1);
    memcpy(f + d + s0 + s1, tmp, s1);
    unsigned char ent[8];
    memcpy(ent, f + t + 8, 8);
    memcpy(f + t + 8, f + t + 16, 8);
    memcpy(f + t + 16, ent, 8);
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    dtb_hash64_update(&hs, f, DTB_TF_OFF_META_HASH);
    dtb_hash64_update(&hs, f + t, d - t);
    dtb_tf_put64(f + DTB_TF_OFF_META_HASH, dtb_hash64_digest(&hs));
    spill(path, f, size);
    dtb_tablefile *tf;
    dtb_error err;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    uint8_t buf[1000];
    expect_error_names_file(dtb_tablefile_read_block(tf, 1, buf, sizeof buf, NULL, &err),
                            DTB_E_CORRUPT, &err, path);
    assert_non_null(strstr(err.msg, "block 1"));
    dtb_tablefile_close(tf);
    free(f);
    free(v);
}

/* ---- tiling and fill ----------------------------------------------------------------------- */

/* dtb_tf_tile_pos against a layout written out by hand: a block of 10 in rows of 3 is stored as
 * indexes 0 3 6 1 4 7 2 5 8 (columns), then 9 (the partial row). */
static void check_tile_pos_by_hand(void)
{
    const uint64_t file_order[10] = {0, 3, 6, 1, 4, 7, 2, 5, 8, 9};
    for (uint64_t j = 0; j < 10; j++)
        assert_true(dtb_tf_tile_pos(file_order[j], 10, 3) == j);
    for (uint64_t i = 0; i < 5; i++) /* rows wider than the block: index order */
        assert_true(dtb_tf_tile_pos(i, 5, 6) == i);
}

/* Reads path's every block both ways (spread and packed) and compares the cared-for values. */
static void check_cared(const char *path, const uint8_t *v, uint64_t n, uint32_t want_tile)
{
    dtb_tablefile *tf;
    dtb_error err = {{0}};
    if (dtb_tablefile_open(path, NULL, &tf, &err) != DTB_OK)
        fail_msg("open %s: %s", path, err.msg);
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    assert_true(in->positions == n);
    assert_int_equal(in->tile_columns, want_tile);
    uint8_t *buf = malloc(in->block_positions), *packed = malloc(in->block_positions);
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    for (uint64_t b = 0; b < in->blocks; b++) {
        const uint64_t start = b * in->block_positions, len = dtb_tablefile_block_len(tf, b);
        assert_int_equal(dtb_tablefile_read_block(tf, b, buf, in->block_positions, b % 2 ? ctx : NULL, &err),
                         DTB_OK);
        assert_int_equal(dtb_tablefile_read_packed(tf, b, packed, in->block_positions, b % 3 ? ctx : NULL, &err),
                         DTB_OK);
        for (uint64_t i = 0; i < len; i++) {
            assert_int_equal(dtb_tablefile_packed_get(packed, in->value_bits, i), buf[i]);
            if (!pattern_dontcare(start + i))
                assert_int_equal(buf[i], v[start + i]);
        }
    }
    assert_int_equal(dtb_tablefile_verify(tf, true, NULL, NULL, &err), DTB_OK);
    free(buf);
    free(packed);
    dtb_tablefile_ctx_free(ctx);
    dtb_tablefile_close(tf);
}

static void test_tiling(void **state)
{
    (void)state;
    check_tile_pos_by_hand();
    const uint64_t n = 100003;
    uint8_t *v = make_values(n), *narrow = malloc(n);
    for (uint64_t i = 0; i < n; i++)
        narrow[i] = v[i] % 3;
    uint64_t *bits = make_bits(n);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    char path[128];
    path_in_tmp(path, sizeof path, "tile.wld");
    const uint32_t widths[] = {2, 47, 999, 1000, 1500};
    for (int k = 0; k < 5; k++)
        for (int w = 0; w < 2; w++) {
            dtb_table_write_options o = options(1000, 3);
            o.tile_columns = widths[k];
            o.fill = DTB_FILL_GAP;
            write_ok(path, &o, w ? narrow : v, n, &dc, NULL);
            check_cared(path, w ? narrow : v, n, widths[k]);
        }

    /* The stored frame really is column-major: block 0 decompressed by hand. */
    dtb_table_write_options o = options(1000, 1);
    o.tile_columns = 47;
    o.fill = DTB_FILL_NONE;
    write_ok(path, &o, v, n, NULL, NULL);
    size_t size;
    unsigned char *f = slurp(path, &size);
    const size_t d = (size_t)dtb_tf_get64(f + DTB_TF_OFF_DATA_OFFSET);
    uint8_t raw[1000];
    assert_int_equal(ZSTD_decompress(raw, sizeof raw, f + d, dtb_tf_get32(f + DTB_TF_HEADER_SIZE)), 1000);
    const uint64_t rows = 1000 / 47;
    for (uint64_t i = 0; i < 1000; i++)
        assert_int_equal(raw[i < rows * 47 ? (i % 47) * rows + i / 47 : i], v[i]);
    free(f);

    /* Automatic choice: with no more blocks than the sample (48), the file is exactly the smaller
     * of index order and the material's stride (KvK on 10x10: black king among 49 squares), and
     * the same for any thread count. */
    const uint64_t m = 48 * 1024 - 5;
    uint8_t *p = malloc(m);
    for (uint64_t i = 0; i < m; i++)
        p[i] = (uint8_t)((i % 49) < 20 ? 1 : (i / 49) % 5 == 0 ? 2 : 0);
    dtb_table_write_stats none, tiled, autost, auto1;
    o = options(1024, 3);
    o.material = "KvK";
    o.fill = DTB_FILL_GAP;
    write_ok(path, &o, p, m, &dc, &none);
    o.tile_columns = 49;
    write_ok(path, &o, p, m, &dc, &tiled);
    o.tile_columns = DTB_TILE_AUTO;
    o.threads = 1;
    write_ok(path, &o, p, m, &dc, &auto1);
    o.threads = 2;
    write_ok(path, &o, p, m, &dc, &autost);
    const uint64_t best = tiled.file_size < none.file_size ? tiled.file_size : none.file_size;
    assert_true(autost.file_size == best);
    assert_true(autost.tile_columns == (tiled.file_size < none.file_size ? 49 : 0));
    assert_true(auto1.file_hash == autost.file_hash);
    check_cared(path, p, m, autost.tile_columns);
    free(p);
    free(v);
    free(narrow);
    free(bits);
}

/* The gap fill, recomputed independently: a run of don't-cares between two equal cared-for
 * values of its block takes that value; any other run the block's most frequent cared-for value
 * (the smallest on a tie). */
static void test_gap_fill(void **state)
{
    (void)state;
    const uint64_t n = 50011;
    uint8_t *v = make_values(n);
    uint64_t *bits = make_bits(n);
    const dtb_table_dontcare dc = {.bits = bits, .marker = -1};
    char path[128];
    path_in_tmp(path, sizeof path, "gap.dtw");
    dtb_table_write_options o = options(1000, 3);
    o.fill = DTB_FILL_GAP;
    write_ok(path, &o, v, n, &dc, NULL);
    dtb_tablefile *tf;
    dtb_error err;
    assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &err), DTB_OK);
    uint8_t buf[1000];
    for (uint64_t b = 0; b * 1000 < n; b++) {
        const uint64_t start = b * 1000, end = start + 1000 < n ? start + 1000 : n;
        assert_int_equal(dtb_tablefile_read_block(tf, b, buf, sizeof buf, NULL, &err), DTB_OK);
        uint64_t count[256] = {0};
        for (uint64_t i = start; i < end; i++)
            count[v[i]] += !pattern_dontcare(i);
        int mode = 0;
        for (int x = 0; x < 256; x++)
            if (count[x] > count[mode])
                mode = x;
        for (uint64_t i = start; i < end; i++) {
            if (!pattern_dontcare(i)) {
                assert_int_equal(buf[i - start], v[i]);
                continue;
            }
            uint64_t l = i, r = i;
            while (l > start && pattern_dontcare(l))
                l--;
            while (r < end && pattern_dontcare(r))
                r++;
            const bool same = !pattern_dontcare(l) && r < end && v[l] == v[r];
            assert_int_equal(buf[i - start], same ? v[l] : mode);
        }
    }
    dtb_tablefile_close(tf);
    free(v);
    free(bits);
}

/* A newer format version is refused as such, even with its checksum made right. */
static void test_version(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "ver.wld");
    const uint8_t v[10] = {0};
    dtb_table_write_options o = options(4, 3);
    write_ok(path, &o, v, 10, NULL, NULL);
    size_t size;
    unsigned char *f = slurp(path, &size);
    dtb_tablefile *tf;
    dtb_error err;
    /* A newer one, and version 1 (no tiling field: its files must be regenerated). */
    const uint32_t versions[] = {DTB_TF_VERSION_RULES + 1, 1};
    for (int k = 0; k < 2; k++) {
        dtb_tf_put32(f + DTB_TF_OFF_VERSION, versions[k]);
        spill(path, f, size);
        expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_VERSION, &err, path);
        assert_non_null(strstr(err.msg, "version"));
    }
    free(f);
}

/* An MTC table (docs/FORMAT.md §8.5) is version 4 with metric 3 and encoding 4, all three or
 * none: a version 4 WLD table, or an MTC table under version 2 or 3, is corrupt. */
static void test_mtc_version(void **state)
{
    (void)state;
    char path[128];
    path_in_tmp(path, sizeof path, "KKMvK.mtc");
    const uint8_t v[10] = {0, 1, 2, 129, 128, 0, 3, 127, 255, 5};
    dtb_table_write_options o = options(4, 3);
    o.metric = DTB_METRIC_MTC;
    o.value_encoding = DTB_ENCODING_MTC;
    write_ok(path, &o, v, 10, NULL, NULL);
    size_t size;
    unsigned char *f = slurp(path, &size);
    assert_int_equal(dtb_tf_get32(f + DTB_TF_OFF_VERSION), DTB_TF_VERSION_MTC);
    dtb_tablefile *tf;
    dtb_error err;
    const dtb_tablefile_expect want = {.metric = DTB_METRIC_MTC, .value_encoding = DTB_ENCODING_MTC};
    assert_int_equal(dtb_tablefile_open(path, &want, &tf, &err), DTB_OK);
    assert_int_equal(dtb_tablefile_get_info(tf)->metric, DTB_METRIC_MTC);
    uint8_t got[10];
    assert_int_equal(dtb_tablefile_read_block(tf, 1, got, sizeof got, NULL, &err), DTB_OK);
    assert_memory_equal(got, v + 4, 4);
    dtb_tablefile_close(tf);
    for (uint32_t version = DTB_TF_VERSION; version <= DTB_TF_VERSION_LONG; version++) {
        dtb_tf_put32(f + DTB_TF_OFF_VERSION, version);
        spill(path, f, size);
        expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_CORRUPT, &err, path);
    }
    free(f);
    o.metric = DTB_METRIC_WLD; /* a version 4 table of another metric */
    o.value_encoding = DTB_ENCODING_WLD;
    write_ok(path, &o, v, 3, NULL, NULL);
    f = slurp(path, &size);
    dtb_tf_put32(f + DTB_TF_OFF_VERSION, DTB_TF_VERSION_MTC);
    spill(path, f, size);
    expect_error_names_file(dtb_tablefile_open(path, NULL, &tf, &err), DTB_E_CORRUPT, &err, path);
    free(f);
}

/* ---- writer errors ---------------------------------------------------------------------------- */

static void test_write_errors(void **state)
{
    (void)state;
    const uint8_t v[100] = {0};
    dtb_error err;
    char path[160];
    dtb_table_write_options o = options(16, 3);
    snprintf(path, sizeof path, "%s/no/such/dir/KvK.wld", tmpdir);
    expect_error_names_file(dtb_table_write(path, &o, v, 100, NULL, NULL, &err), DTB_E_IO, &err, path);

    path_in_tmp(path, sizeof path, "opts.wld");
    dtb_table_write_options x = o;
    x.variant = "chess";
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x = o;
    x.gametype = 21;
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x = o;
    x.material = "KK";
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x.material = "KvvK";
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x.material = "MKvK"; /* kings come first */
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x = o;
    x.block_positions = 0;
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    x = o;
    x.zstd_level = 99;
    assert_int_equal(dtb_table_write(path, &x, v, 100, NULL, NULL, &err), DTB_E_INVALID);
    assert_int_equal(dtb_table_write(path, &o, v, 0, NULL, NULL, &err), DTB_E_INVALID);
    assert_int_equal(access(path, F_OK), -1);

    /* A write that fails half way (file size limit: EFBIG) leaves neither the file nor a .tmp,
     * and an older file at path survives. */
    write_ok(path, &o, v, 100, NULL, NULL);
    size_t size_before;
    free(slurp(path, &size_before));
    const uint64_t n = 2000000;
    uint8_t *big = malloc(n);
    for (uint64_t i = 0; i < n; i++)
        big[i] = (uint8_t)((i * 0x9E3779B97F4A7C15u) >> 56); /* incompressible */
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 100000;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    x = options(65536, 1);
    const dtb_status s = dtb_table_write(path, &x, big, n, NULL, NULL, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    expect_error_names_file(s, DTB_E_IO, &err, path);
    char tmp[170];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    size_t size_after;
    free(slurp(path, &size_after));
    assert_int_equal(size_before, size_after);
    free(big);
}

/* ---- writing from a source ------------------------------------------------------------------ */

/* A source over arrays, as dtb_table_write_source's callers will have over a compressed store.
 * Each thread's state counts its calls; the source checks what the writer asks for (a start on
 * a word of bits, a range inside the table, bits zeroed) and remembers any breach, since a read
 * runs on the writer's threads, where a cmocka assertion must not jump. */
typedef struct array_source {
    const uint8_t *v;
    const uint64_t *bits; /* or NULL */
    uint64_t n;
    uint64_t fail_at;     /* the read of the block holding this position fails; UINT64_MAX: none */
    uint64_t shift;       /* 0; a wrong offset to see the comparisons fail */
    int breaches;         /* set from the readers (any nonzero value will do) */
    int states, freed;    /* made by reads (counted at free_state) and freed */
    uint64_t calls;       /* summed from the states at free_state */
} array_source;

typedef struct array_state {
    uint64_t calls;
    char msg[64];
} array_state;

static const char *array_read(void *user, void **state, uint64_t start, size_t len, uint8_t *values,
                              uint64_t *dontcare)
{
    array_source *a = user;
    if (!*state && !(*state = calloc(1, sizeof(array_state))))
        return "out of memory";
    array_state *st = *state;
    st->calls++;
    bool zeroed = true;
    for (size_t k = 0; k < (len + 63) / 64; k++)
        zeroed &= dontcare[k] == 0;
    if (start % 64 || len == 0 || start + len > a->n || !zeroed)
        a->breaches = 1;
    if (start <= a->fail_at && a->fail_at < start + len) {
        /* The text lives in the state, as a real source's might. */
        snprintf(st->msg, sizeof st->msg, "the store lost position %llu",
                 (unsigned long long)a->fail_at);
        return st->msg;
    }
    const uint64_t from = start + a->shift < a->n - len ? start + a->shift : a->n - len;
    memcpy(values, a->v + from, len);
    for (size_t i = 0; a->bits && i < len; i++)
        dontcare[i / 64] |= (a->bits[(from + i) / 64] >> ((from + i) % 64) & 1) << (i % 64);
    return NULL;
}

static void array_free_state(void *user, void *state)
{
    array_source *a = user;
    a->states++;
    a->freed++;
    a->calls += ((array_state *)state)->calls;
    free(state);
}

static void write_source_ok(const char *path, const dtb_table_write_options *o, array_source *a,
                            int marker, dtb_table_write_stats *st)
{
    const dtb_table_source src = {.read = array_read, .free_state = array_free_state, .user = a};
    dtb_error err = {{0}};
    const dtb_status s = dtb_table_write_source(path, o, &src, a->n, marker, st, &err);
    if (s != DTB_OK)
        fail_msg("write from a source %s: %s", path, err.msg);
    assert_int_equal(a->breaches, 0);
}

/* Writes v (with bits, or the marker) from the arrays and from a source over them: the same
 * bytes and stats. Also checks the source's states: one per thread at most, all freed, and every
 * block read at least once (exactly once when nothing is chosen from samples). */
static void expect_same_from_source(const dtb_table_write_options *o, const uint8_t *v,
                                    const uint64_t *bits, uint64_t n, int marker)
{
    char p1[128], p2[128];
    path_in_tmp(p1, sizeof p1, "array.dtw");
    path_in_tmp(p2, sizeof p2, "source.dtw");
    const dtb_table_dontcare dc = {.bits = bits, .marker = marker};
    dtb_table_write_stats s1, s2;
    write_ok(p1, o, v, n, &dc, &s1);
    array_source a = {.v = v, .bits = bits, .n = n, .fail_at = UINT64_MAX};
    write_source_ok(p2, o, &a, marker, &s2);
    size_t n1, n2;
    unsigned char *f1 = slurp(p1, &n1), *f2 = slurp(p2, &n2);
    if (n1 != n2 || memcmp(f1, f2, n1) != 0)
        fail_msg("n %llu, blocks of %u, tiling %u, bits %u, dict %u, map %d, marker %d, "
                 "threads %d: %zu bytes from the arrays, %zu from the source, not the same",
                 (unsigned long long)n, o->block_positions, o->tile_columns, o->value_bits,
                 o->dict_bytes, o->value_map != NULL, marker, o->threads, n1, n2);
    assert_true(s1.file_size == s2.file_size && s1.data_size == s2.data_size &&
                s1.dict_size == s2.dict_size && s1.blocks == s2.blocks &&
                s1.dontcare_count == s2.dontcare_count && s1.tile_columns == s2.tile_columns &&
                s1.file_hash == s2.file_hash);
    free(f1);
    free(f2);
    const uint64_t blocks = (n - 1) / o->block_positions + 1;
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    assert_true(a.states >= 1 && a.states <= threads);
    assert_int_equal(a.freed, a.states);
    assert_true(a.calls >= blocks);
    if (o->value_bits && o->tile_columns != DTB_TILE_AUTO && !o->dict_bytes)
        assert_true(a.calls == blocks);
}

/* WLD-like values 0..2 in runs of 64 in file order when 4096-position blocks are stored in rows
 * of 47 (KKMvK's black king squares), which automatic tiling then picks. */
static uint8_t wld_tiled(uint64_t i)
{
    const uint64_t j = i % 4096, full = 4096 / 47 * 47;
    const uint64_t file = i - j + (j < full ? j % 47 * (4096 / 47) + j / 47 : j);
    return (uint8_t)(((file / 64) * 0x9E3779B97F4A7C15u >> 60) % 3);
}

/* WLD-like (0..2, runs) and DTW-like (make_values: runs, a period, noise) values with clustered
 * and scattered don't-cares, written from arrays and from a source: identical files for a short
 * single block, a count off the block size and one on it, with tiling automatic, none and fixed,
 * automatic and fixed widths, a value map, a marker, a dictionary, a long list, every fill, and
 * several threads. */
static void test_source_identical(void **state)
{
    (void)state;
    const uint64_t max_n = 300007;
    uint8_t *dtw = make_values(max_n), *wld = malloc(max_n), *marked = malloc(max_n);
    assert_non_null(wld);
    assert_non_null(marked);
    for (uint64_t i = 0; i < max_n; i++) {
        wld[i] = wld_tiled(i);
        marked[i] = pattern_dontcare(i) ? 255 : dtw[i];
    }
    uint64_t *bits = make_bits(max_n);
    uint8_t map[256];
    for (int x = 0; x < 256; x++) /* DTW bytes to WLD: draw 0, win 1, loss 2 */
        map[x] = (uint8_t)(x == 0 ? 0 : x < 128 ? 1 : 2);
    const uint64_t counts[] = {1000, 5 * 4096 + 77, 8 * 4096, 60 * 4096 + 1};
    const uint32_t tiles[] = {DTB_TILE_AUTO, DTB_TILE_NONE, 47};
    for (int c = 0; c < 4; c++)
        for (int t = 0; t < 3; t++)
            for (int k = 0; k < 6; k++) {
                dtb_table_write_options o = options(4096, 3);
                o.fill = DTB_FILL_GAP;
                o.tile_columns = tiles[t];
                o.threads = 1 + (c + k) % 3;
                const uint8_t *v = k % 2 ? dtw : wld;
                if (k % 2)
                    o.metric = DTB_METRIC_DTW;
                o.value_bits = k < 2 ? 0 : k % 2 ? 8 : 2;
                if (k == 4) { /* a value map, automatic width */
                    o.metric = DTB_METRIC_WLD;
                    o.value_map = map;
                    o.value_bits = 0;
                    v = dtw;
                }
                if (k == 5) /* a marker with no bits */
                    expect_same_from_source(&o, marked, NULL, counts[c], 255);
                else
                    expect_same_from_source(&o, v, bits, counts[c], -1);
            }
    /* Every fill, and a marker beside the bits. */
    for (int f = 0; f <= DTB_FILL_GAP; f++) {
        dtb_table_write_options o = options(1024, 3);
        o.fill = (dtb_table_fill)f;
        o.threads = 2;
        expect_same_from_source(&o, dtw, bits, 50000, 200);
    }
    /* A dictionary (trained on blocks read through the source), automatic width and tiling. */
    dtb_table_write_options o = options(1024, 5);
    o.metric = DTB_METRIC_DTW;
    o.fill = DTB_FILL_GAP;
    o.tile_columns = DTB_TILE_AUTO;
    o.dict_bytes = 2048;
    o.threads = 2;
    expect_same_from_source(&o, dtw, bits, max_n, -1);
    o.value_bits = 0;
    o.value_map = map;
    o.dict_bytes = 512;
    expect_same_from_source(&o, dtw, bits, max_n, -1);
    dtb_table_write_stats st;
    char path[128];
    path_in_tmp(path, sizeof path, "array.dtw"); /* the last one written from the arrays */
    write_ok(path, &o, dtw, max_n, &(dtb_table_dontcare){.bits = bits, .marker = -1}, &st);
    assert_true(st.dict_size > 0);
    /* A long list (its entries are not read back from a source). */
    uint8_t *longv = malloc(max_n);
    assert_non_null(longv);
    memcpy(longv, dtw, max_n);
    uint64_t idx[3] = {0};
    uint16_t dist[3] = {300, 700, DTB_MAX_DTW};
    for (int j = 0, i = 17; j < 3; i += 40000) /* cared-for positions */
        if (!pattern_dontcare((uint64_t)i))
            longv[idx[j++] = (uint64_t)i] = 127;
    o = options(4096, 3);
    o.metric = DTB_METRIC_DTW;
    o.long_index = idx;
    o.long_dtw = dist;
    o.long_count = 3;
    expect_same_from_source(&o, longv, bits, max_n, -1);
    free(longv);

    /* A value too wide for the asked width: refused, naming its absolute position, both ways. */
    o = options(4096, 3);
    o.value_bits = 1;
    o.tile_columns = 47;
    assert_false(pattern_dontcare(5 * 4096 + 2));
    dtb_error err;
    array_source a = {.v = wld, .bits = bits, .n = 8 * 4096, .fail_at = UINT64_MAX};
    const dtb_table_source src = {.read = array_read, .free_state = array_free_state, .user = &a};
    for (uint64_t i = 0; i < a.n; i++) /* 0/1 everywhere but one cared-for 2 in block 5 */
        wld[i] = i == 5 * 4096 + 2 ? 2 : pattern_dontcare(i) ? 2 : (uint8_t)(i / 5 % 2);
    expect_error_names_file(dtb_table_write_source(path, &o, &src, a.n, -1, NULL, &err),
                            DTB_E_INVALID, &err, path);
    assert_non_null(strstr(err.msg, "position 20482 "));
    assert_int_equal(a.freed, a.states);
    o.value_bits = 0; /* the automatic width counts it, not the don't-care 2s */
    expect_same_from_source(&o, wld, bits, 8 * 4096, -1);
    free(dtw);
    free(wld);
    free(marked);
    free(bits);
}

/* A source whose read fails: DTB_E_IO with a message naming the file and quoting the source,
 * no file and no .tmp left, every state freed; whether the failure comes in a sample read (the
 * width or the tiling) or in the full pass, in the first block or a later one. */
static void test_source_failure(void **state)
{
    (void)state;
    const uint64_t n = 20 * 4096 + 5;
    uint8_t *v = make_values(n);
    uint64_t *bits = make_bits(n);
    char path[128], tmp[140];
    path_in_tmp(path, sizeof path, "failing.dtw");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    const uint64_t fail_at[] = {0, 7 * 4096 + 3, n - 1};
    for (int k = 0; k < 3; k++)
        for (int sampled = 0; sampled < 2; sampled++) {
            dtb_table_write_options o = options(4096, 3);
            o.metric = DTB_METRIC_DTW;
            o.value_bits = sampled ? 0 : 8;
            o.tile_columns = sampled ? DTB_TILE_AUTO : DTB_TILE_NONE;
            o.threads = 2;
            array_source a = {.v = v, .bits = bits, .n = n, .fail_at = fail_at[k]};
            const dtb_table_source src = {.read = array_read, .free_state = array_free_state,
                                          .user = &a};
            dtb_error err;
            expect_error_names_file(dtb_table_write_source(path, &o, &src, n, -1, NULL, &err),
                                    DTB_E_IO, &err, path);
            char want[64];
            snprintf(want, sizeof want, "the store lost position %llu",
                     (unsigned long long)fail_at[k]);
            if (!strstr(err.msg, want))
                fail_msg("message without the source's: %s", err.msg);
            assert_int_equal(access(path, F_OK), -1);
            assert_int_equal(access(tmp, F_OK), -1);
            assert_true(a.states >= 1);
            assert_int_equal(a.freed, a.states);
        }
    free(v);
    free(bits);
}

/* What a source write refuses: blocks that do not start on a word of don't-care bits (which an
 * array write accepts), no source, a source without a read function. */
static void test_source_refused(void **state)
{
    (void)state;
    const uint64_t n = 1000;
    uint8_t *v = make_values(n);
    char path[128];
    path_in_tmp(path, sizeof path, "refused.dtw");
    array_source a = {.v = v, .n = n, .fail_at = UINT64_MAX};
    const dtb_table_source src = {.read = array_read, .free_state = array_free_state, .user = &a};
    dtb_table_write_options o = options(100, 3);
    dtb_error err;
    expect_error_names_file(dtb_table_write_source(path, &o, &src, n, -1, NULL, &err),
                            DTB_E_INVALID, &err, path);
    assert_non_null(strstr(err.msg, "multiple of 64"));
    assert_int_equal(a.calls, 0);
    assert_int_equal(access(path, F_OK), -1);
    write_ok(path, &o, v, n, NULL, NULL); /* the same options from an array */
    o.block_positions = 96;
    assert_int_equal(dtb_table_write_source(path, &o, &src, n, -1, NULL, &err), DTB_E_INVALID);
    o.block_positions = 128;
    assert_int_equal(dtb_table_write_source(path, &o, NULL, n, -1, NULL, &err), DTB_E_INVALID);
    const dtb_table_source no_read = {.user = &a};
    assert_int_equal(dtb_table_write_source(path, &o, &no_read, n, -1, NULL, &err), DTB_E_INVALID);
    assert_int_equal(dtb_table_write_source(path, &o, &src, n, 256, NULL, &err), DTB_E_INVALID);
    assert_int_equal(a.calls, 0);
    free(v);
}

static int setup(void **state)
{
    (void)state;
    /* Thousands of small damaged files: a memory file system keeps that fast when there is one. */
    snprintf(tmpdir, sizeof tmpdir, "/dev/shm/dtb_test_tablefile_XXXXXX");
    if (mkdtemp(tmpdir))
        return 0;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dtb_test_tablefile_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vectors),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_dictionary),
        cmocka_unit_test(test_threads_identical),
        cmocka_unit_test(test_small_tables),
        cmocka_unit_test(test_value_bits),
        cmocka_unit_test(test_value_map),
        cmocka_unit_test(test_concurrent_reads),
        cmocka_unit_test(test_missing_and_foreign),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_swapped_blocks),
        cmocka_unit_test(test_tile_field),
        cmocka_unit_test(test_tiling),
        cmocka_unit_test(test_gap_fill),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_mtc_version),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_source_identical),
        cmocka_unit_test(test_source_failure),
        cmocka_unit_test(test_source_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
