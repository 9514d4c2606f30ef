/* The probe's block cache (probe/blockcache.h): packed value reads, the byte budget, CLOCK
 * eviction keeping used blocks, duplicate puts, and threads hammering a small cache where every
 * answer must be the one its key's block holds (a block is filled from its key, so a mixed-up
 * entry or a read of an evicted block's recycled buffer shows). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* While stalls is set, every 8th lookup of a thread gives up its CPU inside the lock-free
 * lookup's race windows (blockcache.h), so that writers evict and refill blocks under it: a
 * missing sequence check after the byte read, or a writer that does not mark its changes, then
 * shows as wrong values (checked: either way test_stress fails every run). The check before the
 * byte read keeps the read inside the block's buffer; the value would be dropped anyway, so no
 * value check can see that one missing. */
static atomic_bool stalls;
static _Thread_local unsigned lookups;
static void race_hook(void)
{
    if (atomic_load_explicit(&stalls, memory_order_relaxed) && ++lookups % 8 == 0)
        sched_yield();
}
#define DTB_BLOCKCACHE_RACE_HOOK_() race_hook()

#include "blockcache.h"

/* Byte i of block key: a pattern no other key shares at most offsets. */
static uint8_t pattern(uint64_t key, size_t i)
{
    uint64_t x = key * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    return (uint8_t)x;
}

static uint8_t *make_block(dtb_blockcache *c, uint64_t key, size_t size)
{
    uint8_t *d = dtb_blockcache_alloc(c, size);
    assert_non_null(d);
    for (size_t i = 0; i < size; i++)
        d[i] = pattern(key, i);
    return d;
}

static void test_values(void **state)
{
    (void)state;
    dtb_blockcache *c = dtb_blockcache_create(1u << 20);
    assert_non_null(c);
    const size_t size = 1000;
    dtb_blockcache_put(c, 7, make_block(c, 7, size), size);
    unsigned v;
    for (unsigned bits = 1; bits <= 8; bits *= 2)
        for (uint64_t i = 0; i < size * 8 / bits; i += 3) {
            assert_true(dtb_blockcache_get(c, 7, i, bits, &v));
            /* Value i: bits bits from the low end of byte i*bits/8 up. */
            const unsigned want = (pattern(7, i * bits / 8) >> (i * bits % 8)) & ((1u << bits) - 1);
            assert_int_equal(v, want);
        }
    assert_false(dtb_blockcache_get(c, 8, 0, 8, &v));
    assert_true(dtb_blockcache_contains(c, 7));
    assert_false(dtb_blockcache_contains(c, 8));
    /* A second put of a held key is dropped (and freed: the sanitizers would see a leak). */
    dtb_blockcache_put(c, 7, make_block(c, 99, size), size);
    assert_true(dtb_blockcache_get(c, 7, 0, 8, &v));
    assert_int_equal(v, pattern(7, 0));
    dtb_blockcache_stats st;
    dtb_blockcache_get_stats(c, &st);
    assert_int_equal(st.blocks, 1);
    assert_int_equal(st.misses, 1);
    assert_true(st.hits > 100);
    assert_true(st.bytes >= size);
    dtb_blockcache_free(c);
    dtb_blockcache_free(NULL);
}

static void test_budget_and_clock(void **state)
{
    (void)state;
    const uint64_t budget = 100000; /* one shard; six 16 KB blocks fit */
    const size_t size = 16384;
    dtb_blockcache *c = dtb_blockcache_create(budget);
    assert_non_null(c);
    unsigned v;
    dtb_blockcache_put(c, 0, make_block(c, 0, size), size);
    for (uint64_t k = 1; k < 40; k++) {
        assert_true(dtb_blockcache_get(c, 0, 5, 8, &v)); /* block 0 is used all the time */
        assert_int_equal(v, pattern(0, 5));
        dtb_blockcache_put(c, k, make_block(c, k, size), size);
        dtb_blockcache_stats st;
        dtb_blockcache_get_stats(c, &st);
        assert_true(st.bytes <= budget + size + 64);
        assert_true(st.blocks <= 7);
    }
    assert_true(dtb_blockcache_contains(c, 0));
    assert_true(dtb_blockcache_contains(c, 39)); /* the newest */
    assert_false(dtb_blockcache_contains(c, 1)); /* long unused */
    /* Whatever is still held reads back its own data. */
    for (uint64_t k = 0; k < 40; k++)
        if (dtb_blockcache_get(c, k, 100, 8, &v))
            assert_int_equal(v, pattern(k, 100));
    /* A block larger than the whole budget still goes in (alone). */
    dtb_blockcache_put(c, 1000, make_block(c, 1000, 300000), 300000);
    assert_true(dtb_blockcache_get(c, 1000, 299999, 8, &v));
    assert_int_equal(v, pattern(1000, 299999));
    dtb_blockcache_free(c);
}

/* Many small blocks in one shard, with constant eviction: exercises slot deletion (backward
 * shifts) and table growth. Every key is either missing or right. */
static void test_churn(void **state)
{
    (void)state;
    dtb_blockcache *c = dtb_blockcache_create(20000);
    assert_non_null(c);
    uint64_t seed = 1;
    unsigned v;
    for (int round = 0; round < 20000; round++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t key = (seed >> 40) % 500 | (seed >> 62) << 40; /* two "tables" */
        if (dtb_blockcache_get(c, key, 3, 8, &v))
            assert_int_equal(v, pattern(key, 3));
        else
            dtb_blockcache_put(c, key, make_block(c, key, 40), 40);
    }
    for (uint64_t t = 0; t < 4; t++)
        for (uint64_t k = 0; k < 500; k++) {
            const uint64_t key = k | t << 40;
            if (dtb_blockcache_get(c, key, 39, 8, &v))
                assert_int_equal(v, pattern(key, 39));
        }
    dtb_blockcache_stats st;
    dtb_blockcache_get_stats(c, &st);
    assert_true(st.bytes <= 20000 + 40 + 64);
    dtb_blockcache_free(c);
}

/* Block memory is reused across sizes and after its pages were handed back: blocks of one size
 * fill the cache, blocks of another size push them all out (their slots go on a free list, most
 * beyond the reserve with their pages returned), then the first size comes back into those
 * slots. Every block held reads back its own bytes. */
static void test_reuse(void **state)
{
    (void)state;
    const uint64_t budget = 4u << 20; /* one shard; a reserve of 1 MiB */
    dtb_blockcache *c = dtb_blockcache_create(budget);
    assert_non_null(c);
    const size_t sizes[3] = {16384, 20000, 16384};
    unsigned v;
    uint64_t key = 0;
    for (int phase = 0; phase < 3; phase++)
        for (int i = 0; i < 400; i++, key++) {
            dtb_blockcache_put(c, key, make_block(c, key, sizes[phase]), sizes[phase]);
            assert_true(dtb_blockcache_get(c, key, sizes[phase] - 1, 8, &v));
            assert_int_equal(v, pattern(key, sizes[phase] - 1));
        }
    int held = 0;
    for (uint64_t k = 0; k < key; k++) {
        const size_t size = sizes[k / 400];
        for (size_t off = 0; off < size; off += 997)
            if (dtb_blockcache_get(c, k, off, 8, &v)) {
                assert_int_equal(v, pattern(k, off));
                held++;
            }
    }
    assert_true(held > 0);
    dtb_blockcache_stats st;
    dtb_blockcache_get_stats(c, &st);
    assert_true(st.bytes <= budget);
    /* A buffer taken and given back unused. */
    dtb_blockcache_release(c, dtb_blockcache_alloc(c, 5000), 5000);
    dtb_blockcache_release(c, NULL, 5000);
    dtb_blockcache_free(c);
}

typedef struct worker {
    dtb_blockcache *c;
    uint64_t seed;
    int wrong;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    unsigned v;
    for (int i = 0; i < 40000; i++) {
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t key = (w->seed >> 33) % 3000;
        const uint64_t off = (w->seed >> 20) % 2048;
        if (dtb_blockcache_get(w->c, key, off, 8, &v)) {
            if (v != pattern(key, off))
                w->wrong++;
        } else {
            dtb_blockcache_put(w->c, key, make_block(w->c, key, 2048), 2048);
        }
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        /* A small cache (one shard, constant eviction), then a large one (many shards). */
        dtb_blockcache *c = dtb_blockcache_create(pass == 0 ? 200000 : 64u << 20);
        assert_non_null(c);
        enum { N = 8 };
        worker w[N];
        pthread_t t[N];
        for (int i = 0; i < N; i++) {
            w[i] = (worker){c, (uint64_t)i * 7919 + 1, 0};
            assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
        }
        for (int i = 0; i < N; i++) {
            assert_int_equal(pthread_join(t[i], NULL), 0);
            assert_int_equal(w[i].wrong, 0);
        }
        dtb_blockcache_stats st;
        dtb_blockcache_get_stats(c, &st);
        assert_int_equal(st.hits + st.misses, (uint64_t)N * 40000);
        if (pass == 0)
            assert_true(st.bytes <= 200000 + 2048 + 64);
        dtb_blockcache_free(c);
    }
}

/* The lock-free hit path against constant eviction: a cache of a few dozen blocks of mixed
 * sizes (several size classes, and now and then a block above the chunk allocator's limit),
 * about twice as many keys in use, so that nearly every miss evicts a block other threads are
 * reading and its buffer is soon refilled with another key's bytes. Values of every width are
 * checked against the key's pattern: a hit that read a torn slot or a recycled buffer fails. */
typedef struct stress {
    dtb_blockcache *c;
    uint64_t seed;
    int ops, wrong;
    uint64_t hits;
} stress;

enum { STRESS_KEYS = 48, STRESS_BIG = 1000 };

static size_t stress_size(uint64_t key)
{
    static const size_t sizes[] = {64, 900, 4096, 6000, 2500, 12000};
    return key == STRESS_BIG ? 600000 : sizes[key % 6];
}

static void *stress_work(void *arg)
{
    stress *w = arg;
    unsigned v;
    for (int i = 0; i < w->ops; i++) {
        w->seed = w->seed * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t r = w->seed >> 16;
        const uint64_t key = r % 4096 == 0 ? STRESS_BIG : r % STRESS_KEYS;
        const size_t size = stress_size(key);
        const unsigned bits = 1u << (r >> 12) % 4;
        const uint64_t off = (r >> 16) % (size * 8 / bits);
        if (dtb_blockcache_get(w->c, key, off, bits, &v)) {
            w->hits++;
            const unsigned byte = pattern(key, off * bits / 8);
            const unsigned want = (byte >> (off * bits % 8)) & ((1u << bits) - 1);
            if (v != want)
                w->wrong++;
        } else {
            dtb_blockcache_put(w->c, key, make_block(w->c, key, size), size);
        }
    }
    return NULL;
}

static void test_stress(void **state)
{
    (void)state;
    const uint64_t budget = 64u << 10; /* one shard */
    dtb_blockcache *c = dtb_blockcache_create(budget);
    assert_non_null(c);
    enum { N = 4, OPS = 30000 };
    stress w[N];
    pthread_t t[N];
    atomic_store(&stalls, true);
    for (int i = 0; i < N; i++) {
        w[i] = (stress){c, (uint64_t)i * 104729 + 17, OPS, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, stress_work, &w[i]), 0);
    }
    uint64_t hits = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].wrong, 0);
        hits += w[i].hits;
    }
    atomic_store(&stalls, false);
    dtb_blockcache_stats st;
    dtb_blockcache_get_stats(c, &st);
    assert_true(hits > (uint64_t)N * OPS / 4); /* the test did read from the cache */
    assert_int_equal(st.hits, hits);
    assert_int_equal(st.misses, (uint64_t)N * OPS - hits);
    assert_true(st.bytes <= budget + 600000 + 64);
    dtb_blockcache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_budget_and_clock),
        cmocka_unit_test(test_churn),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
