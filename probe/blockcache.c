/* Sharded block cache with CLOCK eviction and lock-free hits.
 *
 * Tables. A key is hashed once; the top bits choose a shard, lower bits a slot of the shard's
 * open-addressing table (linear probing; deletion by backward shift, so there are no
 * tombstones). A slot holds the key and the block's data pointer side by side, so a hit costs
 * one slot line and then the value's byte: no load depends on another table. The slot's top key
 * bit is the CLOCK use bit (keys stay below it). Entries (key and size) sit in a dense array that
 * the CLOCK hand sweeps: the hand looks up each entry's slot, clears use bits and evicts the
 * first entry found without one. Removing entry i moves the last entry into i, so the array
 * stays dense.
 *
 * Writers (put, with its evictions and table growth) hold the shard's lock, a
 * test-and-test-and-set spinlock that yields the CPU after a short spin: the critical sections
 * are a few dozen instructions, where a sleeping mutex would cost more than the work, and
 * yielding keeps a machine with more threads than cores from spinning against a preempted
 * holder. Buffers of evicted blocks are released after the lock is. Each shard is cache-line
 * aligned, so threads on different shards share no line.
 *
 * Readers (dtb_blockcache_get, inline in blockcache.h) take no lock and store nothing shared in
 * the common case: with two cores probing one hot set, a lock word (or a shared hit counter)
 * written on every hit bounced between the cores and halved each core's rate. The protocol is a
 * seqlock per shard. A writer makes the shard's counter odd (relaxed store, then a release
 * fence) before it changes any slot, and even again after (release store). A reader
 *   1. loads the counter (acquire); odd: a writer is at work, try again;
 *   2. loads the mask, then the table (both acquire), and probes for the key (relaxed loads of
 *      the slots' atomic fields);
 *   3. acquire fence, reloads the counter; changed: try again. Now the key and data pointer it
 *      read were in one slot together, and the block's bytes (stored before its put, which
 *      released them with the counter) are visible;
 *   4. reads the value's byte (inside the buffer: the pair is right, and a key's block always
 *      has one size), acquire fence, reloads the counter; changed: the block may have been
 *      evicted and its buffer refilled meanwhile, try again;
 *   5. sets the use bit if it is clear (an atomic or, so a writer's concurrent store of a key is
 *      not undone; at worst the bit lands on an entry that moved into the slot, or is cleared
 *      again by the hand, which only bends CLOCK's choice), returns.
 * After four failed tries it takes the lock (dtb_blockcache_get_locked_). A miss is counted with
 * an atomic add on the shard: a miss costs a file read anyway.
 *
 * Why the reads of steps 2 and 4 are safe whatever a writer does meanwhile:
 * - Slot tables are not freed while the cache lives: an outgrown table is retired (kept with
 *   the shard, freed with the cache; the retired ones sum to less than the live one). A grown
 *   table is published before its mask and the reader loads the mask first, so its index stays
 *   inside the table it loads; its probe loop stops after one turn, in case a view torn by a
 *   writer shows no empty slot.
 * - Block memory is not returned to the system while the cache lives: buffers of evicted blocks
 *   go on a free list and are reused by later blocks, beyond a reserve with their pages handed
 *   back (MADV_DONTNEED leaves them mapped; they read as zeros). A reader that races an eviction
 *   reads a byte of mapped memory and drops it at step 4.
 * The one access outside the C11 memory model: in that race the buffer may be being refilled
 * with the plain stores of the thread that reused it (a decompressor cannot store atomically).
 * The byte read is never used; this is the seqlock idiom of the Linux kernel (and of its
 * SLAB_TYPESAFE_BY_RCU memory), sound on every cache-coherent machine. Closing the gap formally
 * would need per-reader epochs before a buffer is reused, that is stores on the hit path.
 *
 * Hits are not counted as such: lookups are, per CPU (its number from glibc's restartable-
 * sequence area, one load), each counter alone on 128 bytes (two lines: adjacent-line
 * prefetchers pair them), and hits are lookups less misses. A shared counter would be a line all
 * cores write on every hit. The atomic add stays within the core that owns the line; two threads
 * meet on one only after a migration or beyond MAX_CPULINES CPUs.
 *
 * Block memory comes from 2 MiB chunks that the kernel is asked to back with huge pages
 * (madvise MADV_HUGEPAGE), carved into slots by size class (the size rounded up to 64 bytes, or
 * to 4 KiB from 4 KiB up): a probe's value is a random byte of a large cache, and with 4 KiB
 * pages nearly every probe of a cache of hundreds of MiB also missed the TLB (measured: 5-piece
 * random probes about 30% faster with huge pages). Blocks above a quarter chunk get an
 * allocation of their own, in a class of their size. Freed slots go on their class's free list
 * and are reused by the next block of that size (a table's blocks all have one size but the
 * last); beyond a small reserve, a freed slot's pages are handed back to the kernel, so the
 * resident memory stays near the budget even when block sizes change. Everything is freed with
 * the cache. */
#define _GNU_SOURCE /* madvise, sched_getcpu */

#include "blockcache.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Bytes charged per block besides its data: entry, slots, allocator overhead. */
#define ENTRY_OVERHEAD 64u
/* Smallest share of the budget per shard, and the most shards. */
#define MIN_SHARD_BUDGET (512u << 10)
#define MAX_SHARDS 64
_Static_assert(MAX_SHARDS <= 64, "the shard is picked from the hash's top six bits");
/* Evicted buffers freed after unlocking, per put; more wait for the next round. */
#define MAX_VICTIMS 16
/* The most per-CPU lookup counters (CPUs beyond share them). */
#define MAX_CPULINES 256

#define CHUNK_BYTES ((size_t)2 << 20)
#define SLAB_MAX (CHUNK_BYTES / 4) /* larger blocks: an allocation each */
#define PAGE_BYTES ((size_t)4096)
/* Under AddressSanitizer the slots are poisoned except the bytes of a block in use, so overruns
 * and uses after release are still caught (the lock-free reader's one byte read is exempt). */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* One size class: slots of `size` bytes; `free` has room for every slot ever carved. */
typedef struct sclass {
    size_t size;
    uint8_t **free; /* low bit set: a slot whose pages were handed back */
    uint32_t nfree, carved, cap;
} sclass;

/* An allocation: a 2 MiB chunk, or a large block's own. */
typedef struct region {
    uint8_t *p;
    size_t bytes;
} region;

struct dtb_blockcache_slab_ {
    pthread_mutex_t lock;
    region *regions; /* all of them, freed with the cache */
    uint32_t nregions, region_cap;
    uint8_t *bump; /* the unused rest of the newest chunk */
    size_t bump_left;
    sclass *cls;
    uint32_t ncls, cls_cap;
    uint64_t free_bytes, reserve; /* resident bytes on free lists, and the most kept resident */
};
typedef struct dtb_blockcache_slab_ slab;

struct dtb_blockcache {
    dtb_blockcache_head_ head; /* first: the inline lookup of blockcache.h reads it */
    slab mem;
};

struct dtb_blockcache_entry_ {
    uint64_t key;
    uint64_t size;
};
typedef struct dtb_blockcache_entry_ entry;
typedef dtb_blockcache_shard_ shard;
typedef dtb_blockcache_slot_ slot;
#define USED_BIT DTB_BLOCKCACHE_USED_
#define hash_key dtb_blockcache_hash_

/* ---- block memory ------------------------------------------------------------------------- */

/* The bytes a block of size bytes takes: its slot size. */
static size_t slot_size(size_t size)
{
    if (size == 0)
        size = 1;
    const size_t unit = size >= PAGE_BYTES ? PAGE_BYTES : 64;
    return (size + unit - 1) / unit * unit;
}

static sclass *class_of(slab *m, size_t size)
{
    for (uint32_t i = 0; i < m->ncls; i++)
        if (m->cls[i].size == size)
            return &m->cls[i];
    if (m->ncls == m->cls_cap) {
        const uint32_t cap = m->cls_cap ? 2 * m->cls_cap : 8;
        sclass *bigger = realloc(m->cls, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        m->cls = bigger;
        m->cls_cap = cap;
    }
    m->cls[m->ncls] = (sclass){.size = size};
    return &m->cls[m->ncls++];
}

/* A new poisoned allocation of bytes (a chunk, or a large block's own), remembered for
 * dtb_blockcache_free; NULL when out of memory. */
static uint8_t *new_region(slab *m, size_t align, size_t bytes)
{
    if (m->nregions == m->region_cap) {
        const uint32_t cap = m->region_cap ? 2 * m->region_cap : 16;
        region *bigger = realloc(m->regions, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        m->regions = bigger;
        m->region_cap = cap;
    }
    uint8_t *p = aligned_alloc(align, bytes);
    if (!p)
        return NULL;
    POISON(p, bytes);
    m->regions[m->nregions++] = (region){p, bytes};
    return p;
}

/* A fresh slot of class k (under the slab lock), or NULL when out of memory. */
static uint8_t *carve(slab *m, sclass *k)
{
    /* Room on the free list for this slot once it is freed: freeing then never fails. */
    if (k->carved == k->cap) {
        const uint32_t cap = k->cap ? 2 * k->cap : 8;
        uint8_t **bigger = realloc(k->free, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        k->free = bigger;
        k->cap = cap;
    }
    uint8_t *p;
    if (k->size > SLAB_MAX) { /* a multiple of pages */
        if (!(p = new_region(m, PAGE_BYTES, k->size)))
            return NULL;
    } else {
        if (m->bump_left < k->size) {
            uint8_t *chunk = new_region(m, CHUNK_BYTES, CHUNK_BYTES);
            if (!chunk)
                return NULL;
#ifdef MADV_HUGEPAGE
            madvise(chunk, CHUNK_BYTES, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
            /* The old chunk's tail (less than one slot) is left unused. */
            m->bump = chunk;
            m->bump_left = CHUNK_BYTES;
        }
        p = m->bump;
        m->bump += k->size;
        m->bump_left -= k->size;
    }
    k->carved++;
    return p;
}

uint8_t *dtb_blockcache_alloc(dtb_blockcache *c, size_t size)
{
    const size_t ss = slot_size(size);
    slab *m = &c->mem;
    uint8_t *p = NULL;
    pthread_mutex_lock(&m->lock);
    sclass *k = class_of(m, ss);
    if (k && k->nfree > 0) {
        p = k->free[--k->nfree];
        if ((uintptr_t)p & 1)
            p = (uint8_t *)((uintptr_t)p & ~(uintptr_t)1);
        else
            m->free_bytes -= ss;
    } else if (k) {
        p = carve(m, k);
    }
    pthread_mutex_unlock(&m->lock);
    if (p)
        UNPOISON(p, size ? size : 1);
    return p;
}

void dtb_blockcache_release(dtb_blockcache *c, uint8_t *data, size_t size)
{
    if (!data)
        return;
    const size_t ss = slot_size(size);
    slab *m = &c->mem;
    POISON(data, ss);
    pthread_mutex_lock(&m->lock);
    sclass *k = class_of(m, ss); /* exists: data was carved from it */
    assert(k && k->nfree < k->carved);
    if (m->free_bytes + ss > m->reserve && ss % PAGE_BYTES == 0) {
        /* Hands the pages back; they come back as zeros when the slot is reused. Under the lock,
         * before the slot is on the list: afterwards another thread could take it and fill it. */
        madvise(data, ss, MADV_DONTNEED);
        k->free[k->nfree++] = (uint8_t *)((uintptr_t)data | 1);
    } else {
        k->free[k->nfree++] = data;
        m->free_bytes += ss;
    }
    pthread_mutex_unlock(&m->lock);
}

uint64_t dtb_blockcache_cost(size_t size) { return slot_size(size) + ENTRY_OVERHEAD; }

/* ---- create, free, statistics ------------------------------------------------------------- */

dtb_blockcache *dtb_blockcache_create(uint64_t budget)
{
    dtb_blockcache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mem.lock, NULL);
    c->mem.reserve = budget / 8 > (1u << 20) ? budget / 8 : (1u << 20); /* a tiny cache churns */
    int n = 1;
    while (n < MAX_SHARDS && budget / (uint64_t)(2 * n) >= MIN_SHARD_BUDGET)
        n *= 2;
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    unsigned lines = 1;
    while (lines < MAX_CPULINES && (long)lines < cpus)
        lines *= 2;
    c->head.cpu_mask = lines - 1;
    c->head.cpulines = aligned_alloc(alignof(dtb_blockcache_cpuline_),
                                     sizeof(dtb_blockcache_cpuline_) * lines);
    c->head.shards = aligned_alloc(64, sizeof(shard) * (size_t)n);
    if (!c->head.shards || !c->head.cpulines) {
        free(c->head.shards);
        free(c->head.cpulines);
        pthread_mutex_destroy(&c->mem.lock);
        free(c);
        return NULL;
    }
    for (unsigned i = 0; i < lines; i++) {
        atomic_init(&c->head.cpulines[i].lookups, 0);
        for (int k = 0; k < DTB_BLOCKCACHE_COUNTERS; k++)
            atomic_init(&c->head.cpulines[i].user[k], 0);
    }
    memset(c->head.shards, 0, sizeof(shard) * (size_t)n);
    c->head.nshards = n;
    c->head.shard_mask = (uint64_t)n - 1;
    for (int i = 0; i < n; i++) {
        shard *s = &c->head.shards[i];
        atomic_init(&s->lock, 0);
        atomic_init(&s->seq, 0);
        atomic_init(&s->misses, 0);
        s->budget = budget / (uint64_t)n;
        slot *slots = calloc(16, sizeof *slots);
        atomic_init(&s->slots, slots);
        atomic_init(&s->mask, 15);
        if (!slots) {
            dtb_blockcache_free(c);
            return NULL;
        }
    }
    return c;
}

void dtb_blockcache_free(dtb_blockcache *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->head.nshards; i++) {
        shard *s = &c->head.shards[i];
        free(s->entries);
        free(atomic_load_explicit(&s->slots, memory_order_relaxed));
        for (uint32_t k = 0; k < s->nretired; k++)
            free(s->retired[k]);
    }
    free(c->head.shards);
    free(c->head.cpulines);
    slab *m = &c->mem; /* every block lives in one of the regions */
    for (uint32_t i = 0; i < m->nregions; i++) {
        UNPOISON(m->regions[i].p, m->regions[i].bytes);
        free(m->regions[i].p);
    }
    free(m->regions);
    for (uint32_t i = 0; i < m->ncls; i++)
        free(m->cls[i].free);
    free(m->cls);
    pthread_mutex_destroy(&m->lock);
    free(c);
}

void dtb_blockcache_get_stats(dtb_blockcache *c, dtb_blockcache_stats *st)
{
    *st = (dtb_blockcache_stats){0};
    /* Misses first (acquire), lookups after: each miss seen comes with its lookup, so the
     * difference is never below the hits. */
    for (int i = 0; i < c->head.nshards; i++) {
        shard *s = &c->head.shards[i];
        dtb_blockcache_lock_(s);
        st->misses += atomic_load_explicit(&s->misses, memory_order_acquire);
        st->bytes += s->bytes;
        st->blocks += s->n;
        st->evictions += s->evictions;
        dtb_blockcache_unlock_(s);
    }
    uint64_t lookups = 0;
    for (unsigned i = 0; i <= c->head.cpu_mask; i++)
        lookups += atomic_load_explicit(&c->head.cpulines[i].lookups, memory_order_relaxed);
    st->hits = lookups - st->misses;
}

void dtb_blockcache_get_counters(dtb_blockcache *c, uint64_t n[DTB_BLOCKCACHE_COUNTERS])
{
    for (int k = 0; k < DTB_BLOCKCACHE_COUNTERS; k++) {
        n[k] = 0;
        for (unsigned i = 0; i <= c->head.cpu_mask; i++)
            n[k] += atomic_load_explicit(&c->head.cpulines[i].user[k], memory_order_relaxed);
    }
}

unsigned dtb_blockcache_cpu_slow_(void)
{
#ifdef __linux__
    const int cpu = sched_getcpu();
    return cpu > 0 ? (unsigned)cpu : 0;
#else
    return 0;
#endif
}

/* ---- the slot table (writers hold the shard's lock) --------------------------------------- */

static uint64_t key_at(const slot *t, uint32_t i)
{
    return atomic_load_explicit(&t[i].key, memory_order_relaxed);
}

static uint8_t *data_at(const slot *t, uint32_t i)
{
    return atomic_load_explicit(&t[i].data, memory_order_relaxed);
}

static void set_slot(slot *t, uint32_t i, uint64_t key, uint8_t *data)
{
    atomic_store_explicit(&t[i].key, key, memory_order_relaxed);
    atomic_store_explicit(&t[i].data, data, memory_order_relaxed);
}

static slot *table_of(const shard *s)
{
    return atomic_load_explicit(&s->slots, memory_order_relaxed);
}

static uint32_t mask_of(const shard *s)
{
    return atomic_load_explicit(&s->mask, memory_order_relaxed);
}

/* Slot index where key lives in table t, or the empty slot where it would go. */
static uint32_t probe(const slot *t, uint32_t mask, uint64_t key, uint64_t h)
{
    uint32_t i = (uint32_t)(h >> 20) & mask;
    while (data_at(t, i) && (key_at(t, i) & ~USED_BIT) != key)
        i = (i + 1) & mask;
    return i;
}

static uint32_t find_slot(const shard *s, uint64_t key, uint64_t h)
{
    return probe(table_of(s), mask_of(s), key, h);
}

/* Readers see the slots change only between these two (see the top of the file). */
static void write_begin(shard *s)
{
    const uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    assert(!(q & 1));
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(shard *s)
{
    const uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_release);
}

/* Empties slot i and closes the gap (backward-shift deletion for linear probing). */
static void slot_delete(shard *s, uint32_t i)
{
    slot *t = table_of(s);
    const uint32_t mask = mask_of(s);
    uint32_t j = i;
    for (;;) {
        set_slot(t, i, 0, NULL);
        for (;;) {
            j = (j + 1) & mask;
            if (!data_at(t, j))
                return;
            const uint32_t home = (uint32_t)(hash_key(key_at(t, j) & ~USED_BIT) >> 20) & mask;
            /* Entry at j may move to i when i lies cyclically in [home, j). */
            if (((j - home) & mask) >= ((j - i) & mask))
                break;
        }
        set_slot(t, i, key_at(t, j), data_at(t, j));
        i = j;
    }
}

/* Removes entry number k, whose slot is i (the data pointer is the caller's to release). */
static void entry_remove(shard *s, uint32_t k, uint32_t i)
{
    slot_delete(s, i);
    s->bytes -= slot_size(s->entries[k].size) + ENTRY_OVERHEAD;
    const uint32_t last = --s->n;
    if (k != last)
        s->entries[k] = s->entries[last];
}

/* Doubles the slot table. The old one is retired, not freed: a reader may still be in it. */
static bool grow_slots(shard *s)
{
    const uint32_t old_size = mask_of(s) + 1, size = old_size * 2;
    if (s->nretired == sizeof s->retired / sizeof s->retired[0] || size == 0)
        return false;
    slot *slots = calloc(size, sizeof *slots), *old = table_of(s);
    if (!slots)
        return false;
    for (uint32_t k = 0; k < old_size; k++)
        if (data_at(old, k)) {
            const uint64_t key = key_at(old, k) & ~USED_BIT;
            set_slot(slots, probe(slots, size - 1, key, hash_key(key)), key_at(old, k),
                     data_at(old, k));
        }
    /* The table before its mask: a reader loads them the other way round. */
    atomic_store_explicit(&s->slots, slots, memory_order_release);
    atomic_store_explicit(&s->mask, size - 1, memory_order_release);
    s->retired[s->nretired++] = old;
    return true;
}

/* ---- lookups and puts --------------------------------------------------------------------- */

bool dtb_blockcache_get_locked_(dtb_blockcache_shard_ *s, uint64_t key, uint64_t h,
                                uint64_t offset, unsigned bits, unsigned *value)
{
    dtb_blockcache_lock_(s);
    slot *t = table_of(s);
    const uint32_t i = find_slot(s, key, h);
    const uint8_t *d = data_at(t, i);
    if (!d) { /* the lookup was counted by dtb_blockcache_get */
        atomic_fetch_add_explicit(&s->misses, 1, memory_order_release);
        dtb_blockcache_unlock_(s);
        return false;
    }
    if (!(key_at(t, i) & USED_BIT))
        atomic_fetch_or_explicit(&t[i].key, USED_BIT, memory_order_relaxed);
    /* Held while the lock is: no writer can evict it. */
    const unsigned byte = d[offset >> (3 - (unsigned)__builtin_ctz(bits))];
    dtb_blockcache_unlock_(s);
    *value = dtb_blockcache_unpack_(byte, offset, bits);
    return true;
}

bool dtb_blockcache_contains(dtb_blockcache *c, uint64_t key)
{
    const uint64_t h = hash_key(key);
    shard *s = dtb_blockcache_shard_of_(&c->head, h);
    dtb_blockcache_lock_(s);
    const bool found = data_at(table_of(s), find_slot(s, key, h)) != NULL;
    dtb_blockcache_unlock_(s);
    return found;
}

void dtb_blockcache_put(dtb_blockcache *c, uint64_t key, uint8_t *data, size_t size)
{
    const uint64_t h = hash_key(key);
    shard *s = dtb_blockcache_shard_of_(&c->head, h);
    uint8_t *victims[MAX_VICTIMS];
    size_t victim_size[MAX_VICTIMS];
    int nvictims = 0;
    assert(!(key & USED_BIT) && data);
    dtb_blockcache_lock_(s);
    if (data_at(table_of(s), find_slot(s, key, h))) { /* another thread was first */
        dtb_blockcache_unlock_(s);
        dtb_blockcache_release(c, data, size);
        return;
    }
    write_begin(s);
    const uint64_t cost = slot_size(size) + ENTRY_OVERHEAD;
    /* CLOCK: sweep until the block fits or nothing is left (then it goes in over budget). Two
     * full turns always find a victim: the first clears every use bit. */
    while (s->n > 0 && s->bytes + cost > s->budget && nvictims < MAX_VICTIMS) {
        if (s->hand >= s->n)
            s->hand = 0;
        const uint64_t k = s->entries[s->hand].key;
        const uint32_t at = find_slot(s, k, hash_key(k));
        slot *t = table_of(s);
        if (key_at(t, at) & USED_BIT) {
            /* A reader's use mark racing this store may be lost: CLOCK is approximate anyway. */
            atomic_store_explicit(&t[at].key, k, memory_order_relaxed);
            s->hand++;
            continue;
        }
        victim_size[nvictims] = s->entries[s->hand].size;
        victims[nvictims++] = data_at(t, at);
        entry_remove(s, s->hand, at); /* the last entry moves to the hand: examined next */
        s->evictions++;
    }
    bool ok = true;
    if (s->n == s->cap) {
        const uint32_t cap = s->cap ? s->cap * 2 : 16;
        entry *grown = realloc(s->entries, cap * sizeof *grown);
        if (grown) {
            s->entries = grown;
            s->cap = cap;
        } else {
            ok = false;
        }
    }
    if (ok && (uint64_t)(s->n + 1) * 2 > (uint64_t)mask_of(s) + 1)
        ok = grow_slots(s);
    if (ok) {
        /* Enters unused: a block read once and never again goes first (the probe that read it
         * took its value from the buffer), and a sweep over blocks that are all in use does not
         * clear everything and evict in plain FIFO order. */
        s->entries[s->n++] = (entry){.key = key, .size = size};
        set_slot(table_of(s), find_slot(s, key, h), key, data); /* slots may have moved */
        s->bytes += cost;
    }
    write_end(s);
    dtb_blockcache_unlock_(s);
    if (!ok)
        dtb_blockcache_release(c, data, size); /* out of memory: the block is simply not kept */
    for (int k = 0; k < nvictims; k++)
        dtb_blockcache_release(c, victims[k], victim_size[k]);
}
