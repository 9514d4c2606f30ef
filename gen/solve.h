/* Retrograde solver for one material and its colour flip (docs/DESIGN.md §4). */
#ifndef DTB_SOLVE_H
#define DTB_SOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "solved.h"

/* What solving a material found, for the stats log. Deterministic whatever the thread count. */
typedef struct dtb_solve_stats {
    uint64_t positions, wins, draws, losses, captures;
    int longest_win;          /* plies; -1 when the material has no win */
    uint64_t longest_win_at;  /* smallest index with that DTW */
} dtb_solve_stats;

/* Called now and then from the solving thread with positions done so far and in all. */
typedef void (*dtb_solve_progress)(void *user, uint64_t done, uint64_t total);

/* Solves material m and its flip into s, which must already hold every material an exit can
 * reach (earlier in dependency order). Both tables are added to s and filled. stats[0] is
 * for m, stats[1] for the flip (unused when m is its own flip). Uses the OpenMP threads in
 * force. lean: a kings-only pair (dtb_solve_lean_applies) is solved with one byte of state a
 * position (dtb_solve_lean_bytes) instead of the node state, slower; the same values and stats.
 * Kings-only units beyond 32-bit local ids are always solved so. DTB_E_RANGE when a DTW would
 * exceed DTB_MAX_DTW, DTB_E_NOMEM when out of memory. */
dtb_status dtb_solve_pair(dtb_solved *s, dtb_material m, bool lean, dtb_solve_stats stats[2],
                          dtb_solve_progress progress, void *user, dtb_error *e);

/* Whether material m's pair can be solved lean: no men (one unit, no exit but captures). */
bool dtb_solve_lean_applies(const dtb_material *m);

/* Bytes the lean solve allocates beyond the tables, for a pair of this many positions (both
 * members) solved by this many threads (for memory plans). */
uint64_t dtb_solve_lean_bytes(uint64_t positions, int threads);

/* Gives the capture positions of block blk of table t (white to move, the side to move must
 * capture) the values dtb_solve_pair gives them and marks them in t->captures: from the values
 * in s of the positions their captures reach (smaller materials, all present in s). For tables
 * read from files, which store capture positions as don't-care. Different blocks may be done by
 * different threads at the same time. */
void dtb_solve_block_captures(const dtb_solved *s, dtb_solved_table *t, uint64_t blk);

/* Bytes dtb_solve_pair allocates to order the units of a material of this many blocks of
 * block_size positions (for memory plans). */
uint64_t dtb_solve_unit_list_bytes(uint64_t blocks, uint64_t block_size);

/* Bytes dtb_solve_pair may allocate per thread, beyond the units' state and level queues, when
 * its threads share units of block_size positions: the buffers of facts gathered for
 * predecessors (see solve_unit_shared). 0 when such units are never shared. For memory plans. */
uint64_t dtb_solve_shared_bytes(uint64_t block_size, int threads);

#endif
