/* Values of positions (internal to libdtb): quiet positions are looked up in their material's
 * table through the block cache (black to move through the colour flip); capture positions,
 * which the tables do not store, are resolved by searching their captures (docs/DESIGN.md §4, "Scan").
 *
 * Thread safety: every function but create/free may run in any number of threads at once.
 * Never prints: a block that fails its checks is reported through the log callback once per
 * table, and as a status with a message naming the file on every probe that needs it. */
#ifndef DTB_RESOLVE_H
#define DTB_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "blockcache.h"
#include "tableset.h"
#include "value.h"

/* Answer from memory only: DTB_E_NOTCACHED instead of reading a block or opening a file (and,
 * with loader threads, the block or table missed is scheduled for them to read). */
#define DTB_RESOLVE_CACHE_ONLY 1u
/* The caller promises that the side to move has no capture: the position is looked up without
 * the capture test (a broken promise gives the value stored for a capture position: whatever
 * the writer filled in, or DTB_E_CORRUPT where that is no value). */
#define DTB_RESOLVE_QUIET 2u

/* The most loader threads a resolver runs. */
#define DTB_RESOLVE_MAX_LOADERS 8

typedef struct dtb_resolver dtb_resolver;

/* A resolver over ts (which must outlive it) with a block cache of cache_bytes and loaders
 * (0..DTB_RESOLVE_MAX_LOADERS) background threads that read what cache-only probes missed.
 * log may be NULL. NULL when out of memory or a thread cannot be started. */
dtb_resolver *dtb_resolver_create(dtb_tableset *ts, uint64_t cache_bytes, int loaders,
                                  dtb_tableset_log log, void *user);

/* Stops the loader threads (a read under way is finished first), then frees. NULL is allowed. */
void dtb_resolver_free(dtb_resolver *r);

/* The loaders' counters: requests queued, requests done (a block read or a table opened, or
 * found done already), requests dropped (the queue was full or busy; the next miss of the same
 * block asks again). Approximate while probes run. */
typedef struct dtb_resolver_load_stats {
    uint64_t scheduled, done, dropped;
} dtb_resolver_load_stats;
void dtb_resolver_get_load_stats(dtb_resolver *r, dtb_resolver_load_stats *st);

/* Reads into the cache, on the calling thread, every block of the tables for WDL (dtw false) or
 * DTW probes (a losses-only DTW table with its WLD table) of the materials of 2..max_pieces pieces, smallest materials first, each material
 * whole or not at all, while the blocks fit in 7/8 of the cache's budget (the rest is left to the
 * blocks a search brings in). *bytes: the budget the warm blocks take. A material without a table
 * is skipped; a read that fails is the status (the others are still read). */
dtb_status dtb_resolver_warm(dtb_resolver *r, int max_pieces, bool dtw, uint64_t *bytes,
                             dtb_error *e);

/* The budget the blocks of every table for WDL or DTW probes (as dtb_resolver_warm counts
 * them) of 2..pieces pieces take in the
 * cache (decompressed, with the cache's bookkeeping), from the tables' headers (opening them, no
 * block read). A missing table is DTB_E_NOTFOUND. */
dtb_status dtb_resolver_working_set(dtb_resolver *r, int pieces, bool dtw, uint64_t *bytes,
                                    dtb_error *e);

/* Win / draw / loss for the side to move of p, a valid position (dtb_pos_validate) whose side
 * not to move has a piece. Uses .wld tables (or .dtw where there is no .wld). A capture position
 * is decided as soon as one capture wins, even when the tables of other captures are missing,
 * not cached or damaged; otherwise the first such problem is the status (message in *e). */
dtb_status dtb_resolve_wdl(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wdl *out,
                           dtb_error *e);

/* The exact value (core/value.h: result and DTW, long lists included) of p, from .dtw tables;
 * where one stores its losses only (docs/FORMAT.md §8.7), the result from the .wld table and a
 * win's distance from a one-ply search. */
dtb_status dtb_resolve_value(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wvalue *out,
                             dtb_error *e);

/* Win / draw / loss and MTC (plies to the next conversion that keeps the result, core/value.h;
 * 0 for a draw) of p, from .mtc tables; a capture position is at 1 (or a draw), its result
 * from the capture search (.wld or .dtw tables). */
dtb_status dtb_resolve_mtc(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wdl *wdl,
                           int *mtc, dtb_error *e);

/* The stored rule byte of p (core/value.h's MTC layout; docs/FORMAT.md §8.6) at diagonal count
 * `count` (the table's layer for it, when it has layers: counts beyond the last read it) from
 * its table of the rule-distance metric, capture positions included (such tables store every
 * position), and that table's header (*info: the limits it was solved with). p's side to move
 * has a piece. */
dtb_status dtb_resolve_rule_byte(dtb_resolver *r, const dtb_pos *p, dtb_metric metric, int count,
                                 unsigned flags, dtb_value *raw, const dtb_tablefile_info **info,
                                 dtb_error *e);

/* The probes' fast path: dtb_resolve_wdl and dtb_resolve_value of a position given as the
 * public position's words (men[color][word], kings[color][word], side 0 white, 1 black), on
 * boards of up to 64 squares. Returns DTB_OK or DTB_E_NOTCACHED (DTB_RESOLVE_CACHE_ONLY) with the
 * same answer as the general functions, or DTB_RESOLVE_SLOW: take the general path (the position
 * fails a check, has a capture or no pieces to move, its table has not been found yet, a read
 * failed: the general path words any message). Same thread safety. */
#define DTB_RESOLVE_SLOW (-1)
int dtb_resolve_wdl_fast(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                         int side, unsigned flags, dtb_wdl *out);
int dtb_resolve_value_fast(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                           int side, unsigned flags, dtb_wvalue *out);

/* The fast path in three steps, for a batch of probes whose memory latencies should overlap
 * (dtb_probe_wdl_many): locate every position (its table and index; the cache slot of its block
 * starts to be fetched), then prefetch every value, then finish each: the same answers as
 * dtb_resolve_wdl_fast / dtb_resolve_value_fast (a ticket from a DTB_RESOLVE_SLOW locate
 * finishes as DTB_RESOLVE_SLOW). The steps only fetch memory early; the lookups themselves are
 * the fast path's. A ticket is used by one thread; otherwise the same thread safety. */
typedef struct dtb_resolve_ticket {
    const dtb_ptable *table;
    uint64_t block, offset; /* where the position's value lies in the table */
    int status;             /* DTB_OK or DTB_RESOLVE_SLOW */
} dtb_resolve_ticket;
int dtb_resolve_fast_locate(dtb_resolver *r, const uint64_t men[2][2], const uint64_t kings[2][2],
                            int side, bool dtw, unsigned flags, dtb_resolve_ticket *tk);
void dtb_resolve_fast_prefetch(dtb_resolver *r, const dtb_resolve_ticket *tk);
int dtb_resolve_fast_finish_wdl(dtb_resolver *r, const dtb_resolve_ticket *tk, unsigned flags,
                                dtb_wdl *out);
int dtb_resolve_fast_finish_value(dtb_resolver *r, const dtb_resolve_ticket *tk, unsigned flags,
                                  dtb_wvalue *out);

/* Orders values for the side to move: a higher rank is better (wins by shorter DTW, then draws,
 * then losses by longer DTW). Ranks lie within +-DTB_RANK_TOP, inside +-DTB_RANK_WINDOW. */
#define DTB_RANK_TOP (DTB_MAX_DTW + 2)
#define DTB_RANK_WINDOW (2 * DTB_RANK_TOP)
static inline int dtb_wvalue_rank(dtb_wvalue v)
{
    return dtb_wvalue_is_win(v) ? DTB_RANK_TOP - dtb_wvalue_dtw(v)
           : dtb_wvalue_is_loss(v) ? -DTB_RANK_TOP + dtb_wvalue_dtw(v)
                                   : 0;
}

void dtb_resolver_cache_stats(dtb_resolver *r, dtb_blockcache_stats *st);

/* The cache, for tests that look at what it holds. */
dtb_blockcache *dtb_resolver_cache(dtb_resolver *r);

#endif
