/* Values of positions (internal to libdtb): quiet positions are looked up in their material's
 * table through the block cache (black to move through the colour flip); capture positions,
 * which the tables do not store, are resolved by searching their captures (DESIGN.md §4, "Scan").
 *
 * Thread safety: every function but create/free may run in any number of threads at once.
 * Never prints: a block that fails its checks is reported through the log callback once per
 * table, and as a status with a message naming the file on every probe that needs it. */
#ifndef DTB_RESOLVE_H
#define DTB_RESOLVE_H

#include <stdint.h>

#include "blockcache.h"
#include "tableset.h"
#include "value.h"

/* Answer from memory only: DTB_E_NOTCACHED instead of reading a block or opening a file. */
#define DTB_RESOLVE_CACHE_ONLY 1u

typedef struct dtb_resolver dtb_resolver;

/* A resolver over ts (which must outlive it) with a block cache of cache_bytes. log may be NULL.
 * NULL when out of memory. */
dtb_resolver *dtb_resolver_create(dtb_tableset *ts, uint64_t cache_bytes, dtb_tableset_log log,
                                  void *user);

/* NULL is allowed. */
void dtb_resolver_free(dtb_resolver *r);

/* Win / draw / loss for the side to move of p, a valid position (dtb_pos_validate) whose side
 * not to move has a piece. Uses .wld tables (or .dtw where there is no .wld). A capture position
 * is decided as soon as one capture wins, even when the tables of other captures are missing,
 * not cached or damaged; otherwise the first such problem is the status (message in *e). */
dtb_status dtb_resolve_wdl(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_wdl *out,
                           dtb_error *e);

/* The exact value (core/value.h: result and DTW) of p, from .dtw tables. */
dtb_status dtb_resolve_value(dtb_resolver *r, const dtb_pos *p, unsigned flags, dtb_value *out,
                             dtb_error *e);

/* dtb_resolve_wdl and dtb_resolve_value for a board of up to 64 squares (the probes' fast path),
 * the position given as words: sets = white men, black men, white kings, black kings (the low
 * words of dtb_pos's sets; the high words are empty). Same contracts, same thread safety. */
dtb_status dtb_resolve_wdl64(dtb_resolver *r, const uint64_t sets[4], dtb_color side,
                             unsigned flags, dtb_wdl *out, dtb_error *e);
dtb_status dtb_resolve_value64(dtb_resolver *r, const uint64_t sets[4], dtb_color side,
                               unsigned flags, dtb_value *out, dtb_error *e);

/* Orders values for the side to move: a higher rank is better (wins by shorter DTW, then draws,
 * then losses by longer DTW). */
static inline int dtb_value_rank(dtb_value v)
{
    return dtb_value_is_win(v) ? 512 - dtb_value_dtw(v)
           : dtb_value_is_loss(v) ? -512 + dtb_value_dtw(v)
                                   : 0;
}

void dtb_resolver_cache_stats(dtb_resolver *r, dtb_blockcache_stats *st);

/* The cache, for tests that look at what it holds. */
dtb_blockcache *dtb_resolver_cache(dtb_resolver *r);

#endif
