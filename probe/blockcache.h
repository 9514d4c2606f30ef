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
 * Returns false on a miss (counted). */
bool dtb_blockcache_get(dtb_blockcache *c, uint64_t key, uint64_t offset, unsigned bits,
                        unsigned *value);

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

#endif
