/* The probe's block cache: decompressed table blocks (values still packed as in the file) kept
 * in memory under a fixed byte budget, shared by every thread of a dtb_db.
 *
 * Usage: on a probe, dtb_blockcache_get(key, offset) answers from memory or says "miss"; after a
 * miss the caller takes a buffer from dtb_blockcache_alloc, reads the block into it (outside any
 * lock) and hands it over with dtb_blockcache_put. A key names one block of one table (the
 * caller's numbering), below 2^63.
 *
 * Thread safety: every function may be called from any number of threads at once, except
 * create/free. The cache is split into shards by key, each with its own small lock held only
 * for a table lookup and one value read, so threads rarely meet. Nothing here prints or exits. */
#ifndef DTB_BLOCKCACHE_H
#define DTB_BLOCKCACHE_H

#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dtb_blockcache dtb_blockcache;

/* A cache holding about budget bytes of blocks (each block also costs a small fixed overhead,
 * counted in the budget); a shard may exceed its share by one block, so that any block fits.
 * NULL when out of memory. */
dtb_blockcache *dtb_blockcache_create(uint64_t budget);

/* Frees every block; NULL is allowed. */
void dtb_blockcache_free(dtb_blockcache *c);

/* On a hit: stores value number offset of block key (bits per value: 1, 2, 4 or 8, packed from
 * the low bits of each byte up) in *value, marks the block recently used, and returns true.
 * Returns false on a miss (counted). Inline (below): it is most of a cached probe's lookup. */
static inline bool dtb_blockcache_get(dtb_blockcache *c, uint64_t key, uint64_t offset,
                                      unsigned bits, unsigned *value);

/* True when block key is held (no counting, no use mark): for tests. */
bool dtb_blockcache_contains(dtb_blockcache *c, uint64_t key);

/* A buffer for a block of size bytes (from the cache's huge-page chunks when it can), for
 * dtb_blockcache_put or dtb_blockcache_release with the same size; NULL when out of memory. */
uint8_t *dtb_blockcache_alloc(dtb_blockcache *c, size_t size);

/* Gives back a buffer of dtb_blockcache_alloc that was not put (NULL is allowed). */
void dtb_blockcache_release(dtb_blockcache *c, uint8_t *data, size_t size);

/* Hands block key (size bytes at data, from dtb_blockcache_alloc(c, size)) to the cache, which
 * releases it eventually; if another thread put the same key first, data is released at once.
 * May evict other blocks (least recently used ones, by the CLOCK approximation). */
void dtb_blockcache_put(dtb_blockcache *c, uint64_t key, uint8_t *data, size_t size);

typedef struct dtb_blockcache_stats {
    uint64_t hits, misses, bytes, blocks;
} dtb_blockcache_stats;

void dtb_blockcache_get_stats(dtb_blockcache *c, dtb_blockcache_stats *st);

/* ---- internals for the inline lookup (blockcache.c describes them) ------------------------ */

#define DTB_BLOCKCACHE_USED_ (1ull << 63) /* the CLOCK use bit, kept in a slot's key */

typedef struct dtb_blockcache_slot_ {
    uint64_t key;  /* | DTB_BLOCKCACHE_USED_ once hit since the hand last passed */
    uint8_t *data; /* NULL: empty slot */
} dtb_blockcache_slot_;

typedef struct dtb_blockcache_shard_ {
    alignas(64) atomic_int lock;
    struct dtb_blockcache_entry_ *entries;
    uint32_t n, cap;
    dtb_blockcache_slot_ *slots;
    uint32_t mask; /* slots - 1 (a power of two minus one) */
    uint32_t hand;
    uint64_t bytes, budget;
    uint64_t hits, misses;
} dtb_blockcache_shard_;

/* The first member of struct dtb_blockcache. */
typedef struct dtb_blockcache_head_ {
    dtb_blockcache_shard_ *shards;
    int nshards;     /* a power of two, at most 64 */
    uint64_t shard_mask; /* nshards - 1: shard = (hash >> 58) & shard_mask (the hash's top bits) */
} dtb_blockcache_head_;

/* One multiply and one xor-shift. Keys hold the table number from bit 40 and the block number
 * below; the product's bit k depends on key bits 0..k, so the top bits (the shard) depend on the
 * whole key, and the shift brings the table number's bits (40 and up in the product) down into
 * the slot bits (20 and up) as well. */
static inline uint64_t dtb_blockcache_hash_(uint64_t key)
{
    const uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static inline void dtb_blockcache_lock_(dtb_blockcache_shard_ *s)
{
    for (;;) {
        if (!atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
            return;
        for (int spins = 0; atomic_load_explicit(&s->lock, memory_order_relaxed); spins++) {
            if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield();
                spins = 0;
            }
        }
    }
}

static inline void dtb_blockcache_unlock_(dtb_blockcache_shard_ *s)
{
    atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static inline dtb_blockcache_shard_ *dtb_blockcache_shard_of_(const dtb_blockcache_head_ *c,
                                                              uint64_t h)
{
    return &c->shards[(h >> 58) & c->shard_mask];
}

/* Slot index where key lives, or the empty slot where it would go. */
static inline uint32_t dtb_blockcache_find_slot_(const dtb_blockcache_shard_ *s, uint64_t key,
                                                 uint64_t h)
{
    uint32_t i = (uint32_t)(h >> 20) & s->mask;
    while (s->slots[i].data && (s->slots[i].key & ~DTB_BLOCKCACHE_USED_) != key)
        i = (i + 1) & s->mask;
    return i;
}

static inline bool dtb_blockcache_get(dtb_blockcache *c, uint64_t key, uint64_t offset,
                                      unsigned bits, unsigned *value)
{
    const uint64_t h = dtb_blockcache_hash_(key);
    dtb_blockcache_shard_ *s = dtb_blockcache_shard_of_((const dtb_blockcache_head_ *)(void *)c, h);
    /* bits is 1, 2, 4 or 8: shifts instead of the divisions of dtb_tablefile_packed_get. */
    const unsigned lb = (unsigned)__builtin_ctz(bits), per_shift = 3 - lb;
    dtb_blockcache_lock_(s);
    dtb_blockcache_slot_ *sl = &s->slots[dtb_blockcache_find_slot_(s, key, h)];
    if (!sl->data) {
        s->misses++;
        dtb_blockcache_unlock_(s);
        return false;
    }
    if (!(sl->key & DTB_BLOCKCACHE_USED_)) /* no store when already set: keeps the line clean */
        sl->key |= DTB_BLOCKCACHE_USED_;
    s->hits++;
    const unsigned byte = sl->data[offset >> per_shift];
    *value = (byte >> ((offset & ((1u << per_shift) - 1)) << lb)) & ((1u << bits) - 1);
    dtb_blockcache_unlock_(s);
    return true;
}

#endif
