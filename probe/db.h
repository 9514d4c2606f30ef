/* The parts of a dtb_db handle that the files of the public interface share (dtb.c,
 * dtb_rules.c): the handle itself, error keeping, probe counting, positions and moves between
 * the public types and core's. Internal to probe/. */
#ifndef DTB_DB_H
#define DTB_DB_H

#include "dtb.h"

#include "blockcache.h"
#include "movegen.h"
#include "resolve.h"
#include "tableset.h"

/* The per-position probe counters (dtb_cache_stats.probe_*), counted on the cache's per-CPU
 * lines: one relaxed add on a line of the CPU the thread runs on, no shared line written. */
enum { PROBE_HIT, PROBE_NOTCACHED, PROBE_NOTFOUND, PROBE_INVALID, PROBE_FAILED };
_Static_assert(PROBE_FAILED < DTB_BLOCKCACHE_COUNTERS, "probe counters");

struct dtb_db {
    dtb_tableset *ts;
    dtb_resolver *r;
    dtb_blockcache *cache; /* r's, for the probe counters */
    uint64_t budget;       /* the cache's (dtb_cache_budget) */
    const dtb_board *board;
    dtb_notation texts; /* of dtb_position_to_fen and dtb_pdn_move.text (dtb_options.texts) */
    dtb_log_fn log;
    void *log_user;
    uint64_t serial; /* this handle's number among all opened by the process (error slots) */
};

/* Counts a probe's answer s (dtb_cache_stats.probe_*) and returns it. */
static inline dtb_status dtb_db_counted(const dtb_db *db, dtb_status s)
{
    static const unsigned char kind[] = {
        [DTB_OK] = PROBE_HIT,           [DTB_E_NOTCACHED] = PROBE_NOTCACHED,
        [DTB_E_NOTFOUND] = PROBE_NOTFOUND, [DTB_E_INVALID] = PROBE_INVALID,
        [DTB_E_GAMEOVER] = PROBE_INVALID,  [DTB_E_RANGE] = PROBE_FAILED,
        [DTB_E_OVERFLOW] = PROBE_FAILED,   [DTB_E_IO] = PROBE_FAILED,
        [DTB_E_NOSPACE] = PROBE_FAILED,    [DTB_E_CORRUPT] = PROBE_FAILED,
        [DTB_E_VERSION] = PROBE_FAILED,    [DTB_E_MISMATCH] = PROBE_FAILED,
        [DTB_E_NOMEM] = PROBE_FAILED,      [DTB_E_ABORTED] = PROBE_FAILED,
        [DTB_E_NOROOM] = PROBE_FAILED};
    dtb_blockcache_count(db->cache, (unsigned)s < sizeof kind ? kind[s] : PROBE_FAILED);
    return s;
}

/* Keeps the message of a failed call for dtb_last_error (in the calling thread); returns s. */
dtb_status dtb_db_record(dtb_db *db, dtb_status s, const dtb_error *e);

/* The core position of a public one, checked: legal for the board, and a side not to move
 * with a piece (otherwise the game ended before this move). */
dtb_status dtb_db_to_pos(const dtb_db *db, const dtb_position *in, dtb_pos *p, dtb_error *e);

/* The public form of legal move m of p. */
void dtb_db_pdn_move(const dtb_db *db, const dtb_pos *p, const dtb_move *m, dtb_pdn_move *out);

/* The legal moves of p in a fresh list (free it), or NULL with *s and *e set. */
dtb_movelist *dtb_db_moves(const dtb_db *db, const dtb_pos *p, dtb_status *s, dtb_error *e);

/* The legal move of q that public move m names (by start, end and captured set) into *out:
 * DTB_OK, DTB_E_INVALID (no such move), DTB_E_NOMEM. */
dtb_status dtb_db_find_move(const dtb_db *db, const dtb_pos *q, const dtb_pdn_move *m,
                            dtb_move *out);

#endif
