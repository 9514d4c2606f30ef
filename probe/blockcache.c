/* Sharded block cache with CLOCK eviction.
 *
 * A key is hashed once; the top bits choose a shard, lower bits a slot of the shard's
 * open-addressing table (linear probing; deletion by backward shift, so there are no
 * tombstones). A slot holds the key and the block's data pointer side by side, so a hit costs
 * one slot line and then the value's byte: no load depends on another table. The slot's top key
 * bit is the CLOCK use bit (keys stay below it), set by a hit in the line it has just read.
 * Entries (key and size) sit in a dense array that the CLOCK hand sweeps: the hand looks up each
 * entry's slot, clears use bits and evicts the first entry found without one. Removing entry i
 * moves the last entry into i, so the array stays dense.
 *
 * Locks are test-and-test-and-set spinlocks that yield the CPU after a short spin: the critical
 * sections are a few dozen instructions (a lookup and one value read), where a sleeping mutex
 * would cost more than the work, and yielding keeps a machine with more threads than cores from
 * spinning against a preempted holder. Buffers of evicted blocks are freed after the lock is
 * released. Each shard is cache-line aligned, so threads on different shards share no line.
 *
 * Block memory comes from 2 MiB chunks that the kernel is asked to back with huge pages
 * (madvise MADV_HUGEPAGE), carved into slots by size class (the size rounded up to 64 bytes, or
 * to 4 KiB from 4 KiB up): a probe's value is a random byte of a large cache, and with 4 KiB
 * pages nearly every probe of a cache of hundreds of MiB also missed the TLB (measured: 5-piece
 * random probes about 30% faster with huge pages). Freed slots go on their class's free list and
 * are reused by the next block of that size (a table's blocks all have one size but the last);
 * beyond a small reserve, a freed slot's pages are handed back to the kernel (MADV_DONTNEED), so
 * the resident memory stays near the budget even when block sizes change. Chunks are freed with
 * the cache. Blocks above a quarter chunk, come from malloc. */
#define _DEFAULT_SOURCE /* madvise */

#include "blockcache.h"

#include <assert.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tablefile.h"

/* Bytes charged per block besides its data: entry, slots, allocator overhead. */
#define ENTRY_OVERHEAD 64u
/* Smallest share of the budget per shard, and the most shards. */
#define MIN_SHARD_BUDGET (512u << 10)
#define MAX_SHARDS 64
_Static_assert(MAX_SHARDS <= 64, "the shard is picked from the hash's top six bits");
/* Evicted buffers freed after unlocking, per put; more wait for the next round. */
#define MAX_VICTIMS 16

#define CHUNK_BYTES ((size_t)2 << 20)
#define SLAB_MAX (CHUNK_BYTES / 4) /* larger blocks: malloc */
#define PAGE_BYTES ((size_t)4096)
/* Under AddressSanitizer the slots are poisoned except the bytes of a block in use, so overruns
 * and uses after release are still caught. */
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

struct dtb_blockcache_slab_ {
    pthread_mutex_t lock;
    uint8_t **chunks;
    uint32_t nchunks, chunk_cap;
    uint8_t *bump;    /* the unused rest of the newest chunk */
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
#define find_slot dtb_blockcache_find_slot_



/* The bytes a block of size bytes takes: its slot size, or its size when it is malloc'd. */
static size_t slot_size(size_t size)
{
    if (size == 0)
        size = 1;
    if (size > SLAB_MAX)
        return size;
    const size_t unit = size >= PAGE_BYTES ? PAGE_BYTES : 64;
    return (size + unit - 1) / unit * unit;
}

static bool in_slab(size_t size) { return size <= SLAB_MAX; }

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
    if (m->bump_left < k->size) {
        if (m->nchunks == m->chunk_cap) {
            const uint32_t cap = m->chunk_cap ? 2 * m->chunk_cap : 16;
            uint8_t **bigger = realloc(m->chunks, cap * sizeof *bigger);
            if (!bigger)
                return NULL;
            m->chunks = bigger;
            m->chunk_cap = cap;
        }
        uint8_t *chunk = aligned_alloc(CHUNK_BYTES, CHUNK_BYTES);
        if (!chunk)
            return NULL;
#ifdef MADV_HUGEPAGE
        madvise(chunk, CHUNK_BYTES, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
        POISON(chunk, CHUNK_BYTES);
        m->chunks[m->nchunks++] = chunk;
        /* The old chunk's tail (less than one slot) is left unused. */
        m->bump = chunk;
        m->bump_left = CHUNK_BYTES;
    }
    uint8_t *p = m->bump;
    m->bump += k->size;
    m->bump_left -= k->size;
    k->carved++;
    return p;
}

uint8_t *dtb_blockcache_alloc(dtb_blockcache *c, size_t size)
{
    const size_t ss = slot_size(size);
    if (!in_slab(ss))
        return malloc(ss);
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
    if (!in_slab(ss)) {
        free(data);
        return;
    }
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
    c->head.nshards = n;
    c->head.shard_mask = (uint64_t)n - 1;
    c->head.shards = aligned_alloc(64, sizeof(shard) * (size_t)n);
    if (!c->head.shards) {
        pthread_mutex_destroy(&c->mem.lock);
        free(c);
        return NULL;
    }
    memset(c->head.shards, 0, sizeof(shard) * (size_t)n);
    for (int i = 0; i < n; i++) {
        shard *s = &c->head.shards[i];
        atomic_init(&s->lock, 0);
        s->budget = budget / (uint64_t)n;
        s->mask = 15;
        s->slots = calloc(16, sizeof *s->slots);
        if (!s->slots) {
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
        for (uint32_t k = 0; k < s->n; k++) /* slab slots go with their chunks */
            if (!in_slab(slot_size(s->entries[k].size))) {
                const uint64_t key = s->entries[k].key;
                free(s->slots[find_slot(s, key, hash_key(key))].data);
            }
        free(s->entries);
        free(s->slots);
    }
    free(c->head.shards);
    slab *m = &c->mem;
    for (uint32_t i = 0; i < m->nchunks; i++) {
        UNPOISON(m->chunks[i], CHUNK_BYTES);
        free(m->chunks[i]);
    }
    free(m->chunks);
    for (uint32_t i = 0; i < m->ncls; i++)
        free(m->cls[i].free);
    free(m->cls);
    pthread_mutex_destroy(&m->lock);
    free(c);
}

bool dtb_blockcache_contains(dtb_blockcache *c, uint64_t key)
{
    const uint64_t h = hash_key(key);
    shard *s = dtb_blockcache_shard_of_(&c->head, h);
    dtb_blockcache_lock_(s);
    const bool found = s->slots[find_slot(s, key, h)].data != NULL;
    dtb_blockcache_unlock_(s);
    return found;
}

/* Empties slot i and closes the gap (backward-shift deletion for linear probing). */
static void slot_delete(shard *s, uint32_t i)
{
    uint32_t j = i;
    for (;;) {
        s->slots[i] = (slot){0, NULL};
        for (;;) {
            j = (j + 1) & s->mask;
            if (!s->slots[j].data)
                return;
            const uint32_t home = (uint32_t)(hash_key(s->slots[j].key & ~USED_BIT) >> 20) & s->mask;
            /* Entry at j may move to i when i lies cyclically in [home, j). */
            if (((j - home) & s->mask) >= ((j - i) & s->mask))
                break;
        }
        s->slots[i] = s->slots[j];
        i = j;
    }
}

/* Removes entry number k, whose slot is i (the data pointer is the caller's to free). */
static void entry_remove(shard *s, uint32_t k, uint32_t i)
{
    slot_delete(s, i);
    s->bytes -= slot_size(s->entries[k].size) + ENTRY_OVERHEAD;
    const uint32_t last = --s->n;
    if (k != last)
        s->entries[k] = s->entries[last];
}

static bool grow_slots(shard *s)
{
    const uint32_t size = (s->mask + 1) * 2;
    slot *slots = calloc(size, sizeof *slots), *old = s->slots;
    if (!slots)
        return false;
    const uint32_t old_size = s->mask + 1;
    s->slots = slots;
    s->mask = size - 1;
    for (uint32_t k = 0; k < old_size; k++)
        if (old[k].data) {
            const uint64_t key = old[k].key & ~USED_BIT;
            s->slots[find_slot(s, key, hash_key(key))] = old[k];
        }
    free(old);
    return true;
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
    uint32_t i = find_slot(s, key, h);
    if (s->slots[i].data) { /* another thread was first */
        dtb_blockcache_unlock_(s);
        dtb_blockcache_release(c, data, size);
        return;
    }
    const uint64_t cost = slot_size(size) + ENTRY_OVERHEAD;
    /* CLOCK: sweep until the block fits or nothing is left (then it goes in over budget). Two
     * full turns always find a victim: the first clears every use bit. */
    while (s->n > 0 && s->bytes + cost > s->budget && nvictims < MAX_VICTIMS) {
        if (s->hand >= s->n)
            s->hand = 0;
        const uint64_t k = s->entries[s->hand].key;
        const uint32_t at = find_slot(s, k, hash_key(k));
        if (s->slots[at].key & USED_BIT) {
            s->slots[at].key = k;
            s->hand++;
            continue;
        }
        victim_size[nvictims] = s->entries[s->hand].size;
        victims[nvictims++] = s->slots[at].data;
        entry_remove(s, s->hand, at); /* the last entry moves to the hand: examined next */
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
    if (ok && (uint64_t)(s->n + 1) * 2 > (uint64_t)s->mask + 1)
        ok = grow_slots(s);
    if (ok) {
        /* Enters unused: a block read once and never again goes first (the probe that read it
         * took its value from the buffer), and a sweep over blocks that are all in use does not
         * clear everything and evict in plain FIFO order. */
        i = find_slot(s, key, h); /* slots may have moved */
        s->entries[s->n++] = (entry){.key = key, .size = size};
        s->slots[i] = (slot){key, data};
        s->bytes += cost;
    }
    dtb_blockcache_unlock_(s);
    if (!ok)
        dtb_blockcache_release(c, data, size); /* out of memory: the block is simply not kept */
    for (int k = 0; k < nvictims; k++)
        dtb_blockcache_release(c, victims[k], victim_size[k]);
}

void dtb_blockcache_get_stats(dtb_blockcache *c, dtb_blockcache_stats *st)
{
    *st = (dtb_blockcache_stats){0};
    for (int i = 0; i < c->head.nshards; i++) {
        shard *s = &c->head.shards[i];
        dtb_blockcache_lock_(s);
        st->hits += s->hits;
        st->misses += s->misses;
        st->bytes += s->bytes;
        st->blocks += s->n;
        dtb_blockcache_unlock_(s);
    }
}
