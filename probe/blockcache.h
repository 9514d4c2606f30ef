/* The probe's block cache: decompressed table blocks (values still packed as in the file) kept
 * in memory under a fixed byte budget, shared by every thread of a dtb_db.
 *
 * Usage: on a probe, dtb_blockcache_get(key, offset) answers from memory or says "miss"; after a
 * miss the caller takes a buffer from dtb_blockcache_alloc, reads the block into it (outside any
 * lock) and hands it over with dtb_blockcache_put. A key names one block of one table (the
 * caller's numbering), below 2^63; a key always names a block of the same size.
 *
 * Thread safety: every function may be called from any number of threads at once, except
 * create/free. The cache is split into shards by key. A hit takes no lock and writes no shared
 * memory (it validates what it read against the shard's sequence counter, and counts itself on
 * a line of the CPU it runs on); puts, misses and statistics take the shard's small lock, so
 * threads rarely meet. Nothing here prints or exits. */
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

/* Frees every block; NULL is allowed. No other call on c may be running or follow. */
void dtb_blockcache_free(dtb_blockcache *c);

/* On a hit: stores value number offset of block key (bits per value: 1, 2, 4 or 8, packed from
 * the low bits of each byte up) in *value, marks the block recently used, and returns true.
 * Returns false on a miss (counted). Inline (below): it is most of a cached probe's lookup. */
static inline bool dtb_blockcache_get(dtb_blockcache *c, uint64_t key, uint64_t offset,
                                      unsigned bits, unsigned *value);

/* True when block key is held (no counting, no use mark): for tests. */
bool dtb_blockcache_contains(dtb_blockcache *c, uint64_t key);

/* A buffer for a block of size bytes (from memory the cache keeps until it is freed), for
 * dtb_blockcache_put or dtb_blockcache_release with the same size; NULL when out of memory. */
uint8_t *dtb_blockcache_alloc(dtb_blockcache *c, size_t size);

/* Gives back a buffer of dtb_blockcache_alloc that was not put (NULL is allowed). */
void dtb_blockcache_release(dtb_blockcache *c, uint8_t *data, size_t size);

/* Hands block key (size bytes at data, from dtb_blockcache_alloc(c, size)) to the cache, which
 * releases it eventually; if another thread put the same key first, data is released at once.
 * May evict other blocks (least recently used ones, by the CLOCK approximation). */
void dtb_blockcache_put(dtb_blockcache *c, uint64_t key, uint8_t *data, size_t size);

/* hits and misses: lookups by dtb_blockcache_get so far that found their block and that did
 * not (exact: hits are all lookups, counted per CPU, less the misses; taken while other threads
 * probe, a snapshot where a lookup still under way may count as a hit). bytes and blocks: held
 * now. evictions: blocks put out to make room so far. */
typedef struct dtb_blockcache_stats {
    uint64_t hits, misses, bytes, blocks, evictions;
} dtb_blockcache_stats;

/* The bytes a block of size bytes is charged in the budget (its slot and its bookkeeping): what
 * a cache must hold for a set of blocks to fit (dtb_working_set). */
uint64_t dtb_blockcache_cost(size_t size);

void dtb_blockcache_get_stats(dtb_blockcache *c, dtb_blockcache_stats *st);

/* Counters of the cache's user (the probes' outcomes, dtb.c), kept on the same per-CPU lines as
 * the lookups, so that counting writes no line another core reads: numbers 0..COUNTERS-1. */
#define DTB_BLOCKCACHE_COUNTERS 6

/* Adds one to counter i (inline, below). */
static inline void dtb_blockcache_count(dtb_blockcache *c, unsigned i);

/* The counters' sums over the CPUs into n[0..DTB_BLOCKCACHE_COUNTERS) (approximate while others
 * count). */
void dtb_blockcache_get_counters(dtb_blockcache *c, uint64_t n[DTB_BLOCKCACHE_COUNTERS]);

/* ---- internals for the inline lookup (blockcache.c describes the algorithm) ---------------- */

#define DTB_BLOCKCACHE_USED_ (1ull << 63) /* the CLOCK use bit, kept in a slot's key */

/* Every field that a lock-free reader loads is atomic (loaded relaxed, validated by the shard's
 * sequence counter), so a reader racing a writer is no data race in the C11 sense. */
typedef struct dtb_blockcache_slot_ {
    _Atomic uint64_t key;     /* | DTB_BLOCKCACHE_USED_ once hit since the hand last passed */
    _Atomic(uint8_t *) data;  /* NULL: empty slot */
} dtb_blockcache_slot_;

typedef struct dtb_blockcache_shard_ {
    /* Read by every lookup; written only under lock, so the line stays shared between cores
     * while nothing is put. */
    alignas(64) _Atomic uint64_t seq; /* odd while a writer changes the slots (a seqlock) */
    _Atomic uint32_t mask;            /* slots - 1 (a power of two minus one); only grows */
    _Atomic(dtb_blockcache_slot_ *) slots;
    atomic_int lock;
    /* The rest: only under lock (misses: atomically, also without it, by the lookup). */
    uint32_t n, cap, hand, nretired;
    struct dtb_blockcache_entry_ *entries;
    uint64_t bytes, budget;
    uint64_t evictions;
    _Atomic uint64_t misses;
    dtb_blockcache_slot_ *retired[32]; /* outgrown slot tables: a reader may still be in one */
} dtb_blockcache_shard_;

/* One CPU's counters, alone on their (pair of) cache lines. */
typedef struct dtb_blockcache_cpuline_ {
    alignas(128) _Atomic uint64_t lookups;
    _Atomic uint64_t user[DTB_BLOCKCACHE_COUNTERS];
} dtb_blockcache_cpuline_;

/* The first member of struct dtb_blockcache; read-only after create. */
typedef struct dtb_blockcache_head_ {
    dtb_blockcache_shard_ *shards;
    uint64_t shard_mask; /* nshards - 1: shard = (hash >> 58) & shard_mask (the hash's top bits) */
    dtb_blockcache_cpuline_ *cpulines;
    unsigned cpu_mask; /* cpulines - 1: a CPU counts on cpulines[cpu & cpu_mask] */
    int nshards;       /* a power of two, at most 64 */
} dtb_blockcache_head_;

/* The out-of-line parts: the locked lookup (after the lock-free one kept meeting writers) and
 * the CPU number where restartable sequences do not provide it. */
bool dtb_blockcache_get_locked_(dtb_blockcache_shard_ *s, uint64_t key, uint64_t h,
                                uint64_t offset, unsigned bits, unsigned *value);
unsigned dtb_blockcache_cpu_slow_(void);

/* One multiply and one xor-shift. Keys hold the table number from bit 40 and the block number
 * below; the product's bit k depends on key bits 0..k, so the top bits (the shard) depend on the
 * whole key, and the shift brings the table number's bits (40 and up in the product) down into
 * the slot bits (20 and up) as well. */
static inline uint64_t dtb_blockcache_hash_(uint64_t key)
{
    const uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static inline void dtb_blockcache_pause_(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline void dtb_blockcache_lock_(dtb_blockcache_shard_ *s)
{
    for (;;) {
        if (!atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
            return;
        for (int spins = 0; atomic_load_explicit(&s->lock, memory_order_relaxed); spins++) {
            if (spins < 64) {
                dtb_blockcache_pause_();
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

/* Value number offset of a block whose byte offset >> (3 - log2 bits) is byte. bits is 1, 2, 4
 * or 8: shifts instead of the divisions of dtb_tablefile_packed_get. */
static inline unsigned dtb_blockcache_unpack_(unsigned byte, uint64_t offset, unsigned bits)
{
    const unsigned lb = (unsigned)__builtin_ctz(bits), per_shift = 3 - lb;
    return (byte >> ((offset & ((1u << per_shift) - 1)) << lb)) & ((1u << bits) - 1);
}

/* The number of the CPU this thread runs on, or of one it ran on a moment ago (it only spreads
 * counters). glibc keeps it in the thread's restartable-sequence area, one load away from the
 * thread pointer (cpu_id_start: always a valid number, 0 if rseq could not be registered);
 * elsewhere sched_getcpu, out of line. */
#if defined(__GLIBC__) && defined(__has_include) && defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_builtin(__builtin_thread_pointer)
#include <sys/rseq.h>
#define DTB_BLOCKCACHE_RSEQ_ 1
#endif
#endif
static inline unsigned dtb_blockcache_cpu_(void)
{
#ifdef DTB_BLOCKCACHE_RSEQ_
    const volatile struct rseq *r =
        (const volatile struct rseq *)(void *)((char *)__builtin_thread_pointer() + __rseq_offset);
    return r->cpu_id_start;
#else
    return dtb_blockcache_cpu_slow_();
#endif
}

/* Counts a lookup on this CPU's line. An atomic add, not a load and a store: the line is this
 * CPU's alone, so the add stays in the core, but a thread preempted (or moved) between a load
 * and a store would overwrite every lookup counted on that CPU meanwhile (measured: a fifth of
 * them with eight threads on two cores under TSan). */
static inline void dtb_blockcache_count_lookup_(const dtb_blockcache_head_ *c)
{
    atomic_fetch_add_explicit(&c->cpulines[dtb_blockcache_cpu_() & c->cpu_mask].lookups, 1,
                              memory_order_relaxed);
}

static inline void dtb_blockcache_count(dtb_blockcache *c, unsigned i)
{
    const dtb_blockcache_head_ *head = (const dtb_blockcache_head_ *)(void *)c;
    atomic_fetch_add_explicit(&head->cpulines[dtb_blockcache_cpu_() & head->cpu_mask].user[i], 1,
                              memory_order_relaxed);
}

/* A byte of a block that a writer may be evicting right now (see blockcache.c: the memory stays
 * mapped, and the caller discards the byte unless the sequence counter shows no writer came).
 * The sanitizers are told not to look: ASan would see a released (poisoned) buffer, TSan the
 * plain stores of the thread refilling a recycled one (TSan still watches atomics in an exempt
 * function, so there the load is a volatile one). */
#if defined(__SANITIZE_THREAD__)
#define DTB_BLOCKCACHE_TSAN_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DTB_BLOCKCACHE_TSAN_ 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(DTB_BLOCKCACHE_TSAN_)
#define DTB_BLOCKCACHE_NO_SANITIZE_ __attribute__((no_sanitize("address", "thread")))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DTB_BLOCKCACHE_NO_SANITIZE_ __attribute__((no_sanitize("address", "thread")))
#endif
#endif
#ifndef DTB_BLOCKCACHE_NO_SANITIZE_
#define DTB_BLOCKCACHE_NO_SANITIZE_
#endif
DTB_BLOCKCACHE_NO_SANITIZE_ static inline unsigned dtb_blockcache_peek_(const uint8_t *p)
{
#ifdef DTB_BLOCKCACHE_TSAN_
    return *(const volatile uint8_t *)p;
#else
    return atomic_load_explicit((const _Atomic uint8_t *)(const void *)p, memory_order_relaxed);
#endif
}

/* A test that includes this header may define this (before) to stall its own lookups where a
 * writer's interference must be caught by the sequence checks: between a slot's data and key
 * loads, and between the checked slot read and the byte read. Nothing in the library. */
#ifndef DTB_BLOCKCACHE_RACE_HOOK_
#define DTB_BLOCKCACHE_RACE_HOOK_() ((void)0)
#endif

/* The lock-free lookup (the protocol is described in blockcache.c): a few optimistic tries,
 * then the locked lookup, which always succeeds. The lookup is counted first, not after the
 * byte read: a locked add waits for the loads before it, and there the byte's cache miss would
 * be one of them (measured: hits about 10% faster this way). A miss is counted where it is found
 * (release: a statistics reader that sees it also sees the lookup). */
static inline bool dtb_blockcache_get(dtb_blockcache *c, uint64_t key, uint64_t offset,
                                      unsigned bits, unsigned *value)
{
    const dtb_blockcache_head_ *head = (const dtb_blockcache_head_ *)(void *)c;
    const uint64_t h = dtb_blockcache_hash_(key);
    dtb_blockcache_shard_ *s = dtb_blockcache_shard_of_(head, h);
    const unsigned per_shift = 3 - (unsigned)__builtin_ctz(bits);
    dtb_blockcache_count_lookup_(head);
    for (int tries = 0; tries < 4; tries++) {
        const uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq & 1) { /* a writer is at work */
            dtb_blockcache_pause_();
            continue;
        }
        /* mask before slots: the writer publishes a grown table before its mask, so the mask
         * read never exceeds the table read. */
        const uint32_t mask = atomic_load_explicit(&s->mask, memory_order_acquire);
        dtb_blockcache_slot_ *const slots = atomic_load_explicit(&s->slots, memory_order_acquire);
        uint32_t i = (uint32_t)(h >> 20) & mask;
        uint64_t k = 0;
        uint8_t *d = NULL;
        /* At most one turn: a view torn by a writer could otherwise show no empty slot. */
        for (uint32_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
            d = atomic_load_explicit(&slots[i].data, memory_order_relaxed);
            if (!d)
                break;
            DTB_BLOCKCACHE_RACE_HOOK_();
            k = atomic_load_explicit(&slots[i].key, memory_order_relaxed);
            if ((k & ~DTB_BLOCKCACHE_USED_) == key)
                break;
            d = NULL;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
            continue; /* the slots changed while read */
        if (!d) {
            atomic_fetch_add_explicit(&s->misses, 1, memory_order_release);
            return false;
        }
        /* d was key's block when the counter was read: the byte is inside it. */
        DTB_BLOCKCACHE_RACE_HOOK_();
        const unsigned byte = dtb_blockcache_peek_(d + (offset >> per_shift));
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
            continue; /* evicted meanwhile: the byte may be another block's */
        if (!(k & DTB_BLOCKCACHE_USED_)) /* no store when set already: the line stays shared */
            atomic_fetch_or_explicit(&slots[i].key, DTB_BLOCKCACHE_USED_, memory_order_relaxed);
        *value = dtb_blockcache_unpack_(byte, offset, bits);
        return true;
    }
    return dtb_blockcache_get_locked_(s, key, h, offset, bits, value);
}

/* The slot table of key's shard, its mask and key's home slot i (where its probe run starts). */
static inline dtb_blockcache_slot_ *dtb_blockcache_home_(dtb_blockcache *c, uint64_t key,
                                                         uint32_t *mask, uint32_t *i)
{
    const uint64_t h = dtb_blockcache_hash_(key);
    dtb_blockcache_shard_ *s = dtb_blockcache_shard_of_((const dtb_blockcache_head_ *)(void *)c, h);
    *mask = atomic_load_explicit(&s->mask, memory_order_acquire);
    *i = (uint32_t)(h >> 20) & *mask;
    return atomic_load_explicit(&s->slots, memory_order_acquire);
}

/* Hints for a batch of lookups (dtb_probe_wdl_many): start fetching, without waiting, the slot
 * line where key's block would be found, and (once that line is there) the line of the value
 * at offset. Nothing is checked or changed: a racing writer can only make a hint useless, the
 * lookup that follows (dtb_blockcache_get) is the one that counts. Thread-safe. */
static inline void dtb_blockcache_prefetch_slot(dtb_blockcache *c, uint64_t key)
{
    uint32_t mask, i;
    const dtb_blockcache_slot_ *slots = dtb_blockcache_home_(c, key, &mask, &i);
    __builtin_prefetch(&slots[i]);
}

static inline void dtb_blockcache_prefetch_value(dtb_blockcache *c, uint64_t key, uint64_t offset,
                                                 unsigned bits)
{
    uint32_t mask, i;
    dtb_blockcache_slot_ *slots = dtb_blockcache_home_(c, key, &mask, &i);
    /* The first few slots of the run only: a hint need not find every block. */
    for (int probes = 0; probes < 4; probes++, i = (i + 1) & mask) {
        uint8_t *d = atomic_load_explicit(&slots[i].data, memory_order_relaxed);
        if (!d)
            return;
        if ((atomic_load_explicit(&slots[i].key, memory_order_relaxed) & ~DTB_BLOCKCACHE_USED_) == key) {
            __builtin_prefetch(d + (offset >> (3 - (unsigned)__builtin_ctz(bits))));
            return;
        }
    }
}

#endif
