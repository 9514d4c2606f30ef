/* Retrograde solver for one material and its colour flip (docs/DESIGN.md §4). */
#ifndef DTB_SOLVE_H
#define DTB_SOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "rule_layers.h"
#include "rules.h"
#include "solved.h"
#include "tablewrite.h"

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
 * Units beyond 32-bit local ids can only be solved so (the build's plan asks for it: lean
 * otherwise DTB_E_RANGE). DTB_E_RANGE also when a DTW would exceed DTB_MAX_DTW (the lean solve:
 * the byte's 254 plies, or the registry's byte limit), DTB_E_NOMEM when out of memory.
 * Distances beyond the byte limit go to the tables' long lists (dtb_solved_store). */
dtb_status dtb_solve_pair(dtb_solved *s, dtb_material m, bool lean, dtb_solve_stats stats[2],
                          dtb_solve_progress progress, void *user, dtb_error *e);

/* Whether material m's pair can be solved lean: no men (one unit, no exit but captures). */
bool dtb_solve_lean_applies(const dtb_material *m);

/* A kings-only pair solved lean by several processes at once (the ranks of an MPI build,
 * gen/mpi_lean.c): process `rank` of `ranks` owns positions lo..hi-1 of each member
 * (dtb_lean_share_range) and holds only their values, capture bits and counts. Both calls are
 * collective: every process makes them in the same order. allgather sends mine[0..len) to every
 * other process and gives back each one's bytes (theirs[q], lens[q], malloc'd: the caller frees
 * them; nothing for q == rank); max replaces v[0..n) by their maximum over the processes. */
typedef struct dtb_lean_share {
    void *ctx;
    int rank, ranks;
    uint64_t align; /* ranges start at multiples of this many positions (a multiple of 64; 0:
                       64): the MPI build's are whole file blocks, each written by its rank */
    dtb_status (*allgather)(void *ctx, const uint8_t *mine, uint64_t len, uint8_t **theirs,
                            uint64_t *lens, dtb_error *e);
    dtb_status (*max)(void *ctx, int64_t *v, int n, dtb_error *e);
} dtb_lean_share;

/* The positions of each member (of `positions` each) that process rank of ranks owns: lo..hi-1,
 * whole multiples of align positions (0: 64, a word of capture bits; the last process takes the
 * rest; a range may be empty). */
void dtb_lean_share_range(uint64_t positions, int rank, int ranks, uint64_t align, uint64_t *lo,
                          uint64_t *hi);

/* dtb_solve_pair of kings-only material m, lean, shared as sh says: the values and capture bits
 * of this process's positions are set in the members' tables in s (added when missing; the
 * caller may add them sliced and reserve its range), the rest is left alone. stats: of this
 * process's positions (merge the others' with dtb_solve_stats_merge). The values are those of
 * dtb_solve_pair, whatever the number of processes. The statuses of dtb_solve_pair (lean), those
 * of sh, DTB_E_CORRUPT when another process's bytes are not what this one sends, DTB_E_IO when
 * another process failed. */
dtb_status dtb_solve_pair_lean_shared(dtb_solved *s, dtb_material m, const dtb_lean_share *sh,
                                      dtb_solve_stats stats[2], dtb_solve_progress progress,
                                      void *user, dtb_error *e);

/* Bytes the lean solve allocates beyond the tables, for a pair of this many positions (both
 * members) solved by this many threads (for memory plans). */
uint64_t dtb_solve_lean_bytes(uint64_t positions, int threads);

/* Gives the capture positions of block blk of table t (white to move, the side to move must
 * capture) the values dtb_solve_pair gives them and marks them in t->captures: from the values
 * in s of the positions their captures reach (smaller materials, all present in s). For tables
 * read from files, which store capture positions as don't-care. Different blocks may be done by
 * different threads at the same time. false when a long-list entry could not be stored (out of
 * memory) or a distance exceeds DTB_MAX_DTW. */
bool dtb_solve_block_captures(const dtb_solved *s, dtb_solved_table *t, uint64_t blk);

/* Gives the quiet wins of block blk of table t (capture bits set: dtb_solve_block_captures; a
 * quiet position whose byte is a win holds a stand-in, as a losses-only DTW table's wins do,
 * docs/FORMAT.md §8.7) their exact value: one ply more than the shortest DTW of a successor
 * lost for the opponent, as dtb_solve_pair gives it. Needs exact losses and capture positions
 * in every table a move reaches (t's partner, promotion targets); a successor won by the
 * opponent is never chosen, so the partner's stand-in wins do. A win without a move to a lost
 * position lowers *bad to its index (UINT64_MAX: none; the tables disagree with the game).
 * DTB_OK, DTB_E_RANGE beyond DTB_MAX_DTW, DTB_E_NOMEM for a long-list entry. Different blocks
 * may be done by different threads, as long as none writes what another reads (see
 * dtb_solve_pair_wins). */
dtb_status dtb_solve_block_wins(const dtb_solved *s, dtb_solved_table *t, uint64_t blk,
                                uint64_t *bad);

/* dtb_solve_block_wins over every block of the members of material m's pair that which[]
 * names (which[0]: m, which[1]: its flip, unused when m is its own flip), in s with values in
 * memory; both members must be in s with their losses and capture positions exact. Uses the
 * OpenMP threads in force: a member's blocks in parallel (it reads only its partner), one after
 * the other; a material that is its own flip a level of men advancement at a time. DTB_OK, or
 * DTB_E_CORRUPT (a stored win without a winning move, the message naming the material and the
 * index), DTB_E_RANGE, DTB_E_NOMEM. */
dtb_status dtb_solve_pair_wins(const dtb_solved *s, dtb_material m, const bool which[2],
                               dtb_error *e);

/* Bytes dtb_solve_pair allocates to order the units of a material of this many blocks of
 * block_size positions (for memory plans). */
uint64_t dtb_solve_unit_list_bytes(uint64_t blocks, uint64_t block_size);

/* Bytes dtb_solve_pair may allocate per thread, beyond the units' state and level queues, when
 * its threads share units of block_size positions: the buffers of facts gathered for
 * predecessors (see solve_unit_shared). 0 when such units are never shared. For memory plans. */
uint64_t dtb_solve_shared_bytes(uint64_t block_size, int threads);

/* Merges stats of disjoint parts of one table into *into (the longest win, ties to the smallest
 * index): the same whatever the order of the parts. */
void dtb_solve_stats_merge(dtb_solve_stats *into, const dtb_solve_stats *from);

/* A pair solved a part at a time: the units (docs/DESIGN.md §3) of one advancement level, the
 * level, are independent of each other and read only exits (other materials, and the levels
 * above, which man moves reach); so a level may be solved in parts, by several calls or by
 * several processes that each hold the same solved data, and the values and merged stats are
 * those of dtb_solve_pair. Levels run from the top down: dtb_pair_solver_next_level(ps,
 * DTB_SOLVE_LEVEL_TOP) is the first, then next_level(ps, a) after a, -1 after the last. A part
 * of level a is given as blocks b0..b1-1 of the pair's first material: the units of level a
 * among them. Not thread-safe: one caller at a time (each call uses the OpenMP threads). */
typedef struct dtb_pair_solver dtb_pair_solver;
#define DTB_SOLVE_LEVEL_TOP 255

/* Adds material m and its flip to s (every material an exit reaches must be in s) and prepares
 * the pair's levels. Tables get their values as parts are solved (or unpacked). */
dtb_status dtb_pair_solver_create(dtb_solved *s, dtb_material m, dtb_pair_solver **out,
                                  dtb_error *e);
void dtb_pair_solver_free(dtb_pair_solver *ps); /* the tables stay in s; NULL allowed */
int dtb_pair_solver_next_level(const dtb_pair_solver *ps, int a);
/* The pair's first material (m of dtb_pair_solver_create). */
dtb_material dtb_pair_solver_material(const dtb_pair_solver *ps);
/* Blocks of the pair's first material. */
uint64_t dtb_pair_solver_blocks(const dtb_pair_solver *ps);
/* Whether the pair has no kings (a unit is one position, or two). */
bool dtb_pair_solver_kingless(const dtb_pair_solver *ps);
/* Positions (both materials) of level a's units among blocks b0..b1-1. */
uint64_t dtb_pair_solver_positions(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1);
/* Units of level a among blocks b0..b1-1. */
uint64_t dtb_pair_solver_units(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1);
/* Cuts level a into parts of whole units of at least `positions` each (the last may be
 * smaller): part k is blocks cuts[k]..cuts[k+1]-1. Returns the number of parts n; cuts (n + 1
 * entries) may be NULL to count them. The same cuts for the same arguments in every process. */
uint64_t dtb_pair_solver_cut(const dtb_pair_solver *ps, int a, uint64_t positions, uint64_t *cuts);
/* Solves level a's units among blocks b0..b1-1 (progress as dtb_solve_pair's, may be NULL).
 * DTB_E_RANGE / DTB_E_NOMEM as dtb_solve_pair. */
dtb_status dtb_pair_solver_solve(dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                 dtb_solve_progress progress, void *user, dtb_error *e);
/* Copies the values of level a's units among blocks b0..b1-1 into values (one byte a position,
 * dtb_pair_solver_positions of them), and their capture bits into captures (one bit a position,
 * rounded up to bytes) unless it is NULL; unpack stores them back (captures NULL: bits left
 * alone), in another process's pair solver of the same pair. Return the positions copied. */
uint64_t dtb_pair_solver_pack(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                              uint8_t *values, uint8_t *captures);
uint64_t dtb_pair_solver_unpack(dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                const uint8_t *values, const uint8_t *captures);
/* Marks need[y] (one byte a block of the pair's first material) for every unit y of level
 * a + 1 that the units of level a among blocks b0..b1-1 reach by a man's move: a superset, every
 * step of a man forward to a square no man holds that does not crown it, as if no king stood in
 * the way and no capture were due. A unit is marked at the block it is listed from, as parts
 * name them (dtb_pair_solver_cut). For a process that solves some parts of level a and needs only
 * the values of level a + 1 those parts read. */
void dtb_pair_solver_reach(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1, uint8_t *need);
/* The level of every block of the pair's first material into levels, and of its flip into
 * flevels (unused for a material that is its own flip). For a pair solved in slices. */
void dtb_pair_solver_levels(const dtb_pair_solver *ps, uint8_t *levels, uint8_t *flevels);

/* Calls each(user, k, block) for every block of level a's units among blocks b0..b1-1: k 0 for a
 * block of the pair's first material, 1 for one of its flip (0 for both blocks of a unit of a
 * material that is its own flip). */
void dtb_pair_solver_each_block(const dtb_pair_solver *ps, int a, uint64_t b0, uint64_t b1,
                                void (*each)(void *user, int k, uint64_t block), void *user);

/* Whether the pair's tables have long-list entries (distances beyond the byte limit), which
 * dtb_pair_solver_pack does not carry. */
bool dtb_pair_solver_has_long(const dtb_pair_solver *ps);

/* The stats of the units this solver solved itself (merge those of the other parts' solvers
 * with dtb_solve_stats_merge). */
void dtb_pair_solver_stats(const dtb_pair_solver *ps, dtb_solve_stats stats[2]);

/* ---- a pair solved in slices (gen/solve_sliced.c) ------------------------------------------- */

typedef struct dtb_sliced_pair dtb_sliced_pair;

/* Where the solvers of a pair's levels put each part of a level as it is solved (the pair's
 * slice store, dtb_solve_pair_sliced): put stores the values and capture bits of level a's units
 * among blocks b0..b1-1 from the tables, and with release gives back their pages. Each unit is
 * put once. */
typedef struct dtb_part_store {
    void *ctx;
    dtb_status (*put)(void *ctx, int a, uint64_t b0, uint64_t b1, bool release, dtb_error *e);
    dtb_sliced_pair *pair; /* the pair whose store this is (solvers that keep their parts in
                              stores of their own move blocks into it and give it their team) */
} dtb_part_store;

/* Solvers of a pair's levels besides this process (the ranks of an MPI job, gen/mpi_build.c).
 * begin is called once the pair solver is made, with the store its levels will be given (or
 * NULL), level for each level from the top (when it returns, every unit of level a is solved:
 * by this process, into ps, or by others and, when store is not NULL, put there part by part or
 * kept by them; with store NULL they are in ps), end after the last level, with the stats merged
 * over every solver. Solvers that kept their parts have, by the end, moved into store->pair the
 * blocks this process writes and given the pair their team (dtb_sliced_pair_team): its tables
 * are then written by all of them together. */
typedef struct dtb_level_solvers {
    void *ctx;
    dtb_status (*begin)(void *ctx, dtb_pair_solver *ps, const dtb_part_store *store,
                        dtb_solve_progress progress, void *user, dtb_error *e);
    dtb_status (*level)(void *ctx, dtb_pair_solver *ps, int a, const dtb_part_store *store,
                        dtb_error *e);
    dtb_status (*end)(void *ctx, dtb_pair_solver *ps, dtb_solve_stats stats[2], dtb_error *e);
} dtb_level_solvers;

/* dtb_solve_pair for a pair with men and kings (not lean, not kingless) whose values are never
 * whole: its tables are added to s sliced (dtb_solved_add_sliced; in_memory: in memory even
 * when s keeps values in work files) and solved a level at a time
 * from the top; a level's values and capture bits go, compressed, to a slice store with its
 * scratch file in scratch_dir once the level below is solved, and its pages are given back. Same
 * values and stats as dtb_solve_pair, but for win_distances false: the store then keeps every
 * win as a win in 1 (what a losses-only DTW table and a WLD table are written from), which
 * compresses much better. The tables stay in s without their values: read them
 * through *out (dtb_sliced_pair_read), then free it. with: the levels are solved by those
 * solvers (NULL: by this process alone). DTB_E_INVALID for a pair without kings; the statuses of
 * dtb_solve_pair, those of the solvers, and DTB_E_NOSPACE / DTB_E_IO of the scratch file and of
 * the work files' room. */
dtb_status dtb_solve_pair_sliced(dtb_solved *s, dtb_material m, bool in_memory, const char *scratch_dir,
                                 bool win_distances, const dtb_level_solvers *with,
                                 dtb_solve_stats stats[2], dtb_sliced_pair **out,
                                 dtb_solve_progress progress, void *user, dtb_error *e);

/* Positions start..start+len-1 of the pair's table k (0: m, 1: its flip): values and capture
 * bits, as dtb_slicestore_read (gen/slicestore.h) gives them. Thread-safe with distinct states
 * (NULL at first, freed with dtb_sliced_pair_state_free). NULL or what failed. */
const char *dtb_sliced_pair_read(const dtb_sliced_pair *sp, int k, void **state, uint64_t start,
                                 size_t len, uint8_t *values, uint64_t *captures);
void dtb_sliced_pair_state_free(void *state);

/* An empty pair in a slice store for tables t[0..n) (the pair's, added to s sliced, outliving
 * it), its scratch file in scratch_dir, win_distances as dtb_solve_pair_sliced: for an MPI rank
 * that keeps the parts it solves (dtb_sliced_pair_put_part). Statuses of dtb_slicestore_create. */
dtb_status dtb_sliced_pair_create(const dtb_solved *s, const dtb_solved_table *const *t, int n,
                                  const char *scratch_dir, bool win_distances,
                                  dtb_sliced_pair **out, dtb_error *e);
/* Stores level a's units among blocks b0..b1-1 of ps (the pair's solver) from the tables; with
 * release gives their pages back. Statuses of dtb_slicestore_put_blocks. */
dtb_status dtb_sliced_pair_put_part(dtb_sliced_pair *sp, const dtb_pair_solver *ps, int a,
                                    uint64_t b0, uint64_t b1, bool release, dtb_error *e);
/* Blocks another process solved, moved here: reserve takes the pages of block b of table k,
 * which the caller then fills (values and capture bits, through dtb_sliced_pair_table);
 * put_blocks stores blocks list[0..n) of table k (several at once: they share chunks) and gives
 * their pages back. Statuses of dtb_solved_reserve and dtb_slicestore_put_blocks. */
dtb_status dtb_sliced_pair_reserve_block(dtb_sliced_pair *sp, int k, uint64_t b, dtb_error *e);
dtb_status dtb_sliced_pair_put_blocks(dtb_sliced_pair *sp, int k, const uint64_t *list,
                                      uint64_t n, dtb_error *e);
/* Table k of the pair (NULL past its members). */
const dtb_solved_table *dtb_sliced_pair_table(const dtb_sliced_pair *sp, int k);
/* From now on the pair's tables are written by team (copied), this process writing positions
 * starts[k][rank] .. starts[k][rank + 1] - 1 of table k (copied): every block they are in must
 * be in its store. DTB_E_NOMEM. */
dtb_status dtb_sliced_pair_set_team(dtb_sliced_pair *sp, const dtb_table_team *team,
                                    const uint64_t *const *starts, dtb_error *e);

/* A pair split between the processes of a team (gen/tablewrite.h; a kings-only pair solved by
 * the ranks of an MPI build, gen/mpi_lean.c): this process holds positions starts[k][rank] ..
 * starts[k][rank + 1] - 1 of table t[k] in s (reserved, values and capture bits in place); reads
 * are of those positions only, and the tables are written by the team together
 * (dtb_table_write_team with dtb_sliced_pair_team's team). Freeing the pair gives the range's
 * pages back. team and starts are copied. DTB_E_NOMEM. */
dtb_status dtb_sliced_pair_split(const dtb_solved *s, const dtb_solved_table *const *t, int n,
                                 const dtb_table_team *team, const uint64_t *const *starts,
                                 dtb_sliced_pair **out, dtb_error *e);
/* The team that writes the pair's table k (its starts), or false: this process writes it. */
bool dtb_sliced_pair_team(const dtb_sliced_pair *sp, int k, dtb_table_team *out);

/* Bytes of the pair's slice store on disk (its compressed levels; 0 for a split pair). */
uint64_t dtb_sliced_pair_bytes(const dtb_sliced_pair *sp);

void dtb_sliced_pair_free(dtb_sliced_pair *sp); /* NULL allowed */

/* The level bookkeeping of a pair solved in slices, for a process that holds its levels while
 * others solve them with it (an MPI rank, gen/mpi_build.c) as for dtb_solve_pair_sliced. lv:
 * the level of each of table t's blocks (dtb_pair_solver_levels). reserve_level takes the room
 * of t's blocks of level a (dtb_solved_reserve) before they are written; release_level gives
 * back the pages of t that hold only blocks of levels `stored` and above, once no level being
 * solved reads them (the levels above `stored` given back before). */
dtb_status dtb_sliced_reserve_level(const dtb_solved *s, const dtb_solved_table *t,
                                    const uint8_t *lv, int a, dtb_error *e);
void dtb_sliced_release_level(const dtb_solved *s, const dtb_solved_table *t, const uint8_t *lv,
                              int stored);

/* The most blocks of material m (men placements) whose values its pair holds at once when it is
 * solved in slices: its two largest adjacent levels of men advancement (each block has as many
 * in the flip; pages shared with other levels aside). UINT64_MAX when out of memory. For memory
 * plans. */
uint64_t dtb_solve_sliced_live_blocks(const dtb_board *b, dtb_material m);

/* The most blocks of material m in one level of men advancement (a level's units: as many, or
 * half as many for a material that is its own flip). UINT64_MAX when out of memory. For memory
 * plans: the solver gives whole units to its threads only where a level has one for each. */
uint64_t dtb_solve_level_blocks_max(const dtb_board *b, dtb_material m);

/* ---- MTC: moves to conversion (gen/solve_mtc.c; docs/FORMAT.md §8.5) ------------------------ */

/* What an MTC solve found in one table, for the stats log: the longest MTC of its wins and of
 * its losses (plies, -1 when it has none), each at the smallest index that has it. The same
 * whatever the thread count. */
typedef struct dtb_mtc_stats {
    int longest_win, longest_loss;
    uint64_t longest_win_at, longest_loss_at;
} dtb_mtc_stats;

/* The MTC byte (core/value.h) of every position of material m and of its flip into mtc[0] and
 * mtc[1] (index size bytes each; mtc[1] unused when m is its own flip), from the win / draw /
 * loss of the pair's values in s (solved: dtb_solve_pair, or loaded) and of every table its
 * exits reach. Within a unit only king moves happen and every other move is a conversion, so
 * each unit is a retrograde analysis of its own, units in parallel (OpenMP threads in force).
 * Capture positions get their MTC (1, or a draw) though files leave them don't-care. stats[0]
 * for m, stats[1] for the flip. DTB_E_RANGE when an MTC exceeds DTB_MTC_BYTE_MAX (no long list
 * for MTC yet), DTB_E_NOMEM. */
dtb_status dtb_solve_mtc_pair(const dtb_solved *s, dtb_material m, dtb_value *mtc[2],
                              dtb_mtc_stats stats[2], dtb_error *e);

/* ---- rule distances: the move-count draw rules (gen/solve_rules.c; docs/FORMAT.md §8.6) ----- */

/* The rule byte (core/value.h's MTC layout: 0 none, 1..127 a win, 128 + d a loss) of every
 * position of material m and of its flip under rl's rules, into their tables in rl (the rule
 * bytes of the build by diagonal count, added here with m's pair, every count layer): the
 * position's limit less the largest clock at which its result holds (where the limit does
 * not change along kept moves, the plies to the next counter reset that keeps the result at
 * counter 0, winner shortest, loser longest), when that fits the limit; 0 for draws and for
 * the wins and losses the limit cuts off. Any class of any rule set, unit by unit. Needs the
 * pair's values and capture bits in s (solved or loaded) and in rl the rule bytes of every
 * table its exits reach. Allocates per thread 4 bytes a position of a unit (two blocks) and
 * its buckets (4 bytes a queued position). OpenMP threads in force; the same bytes whatever their count.
 * DTB_E_INVALID (values not in memory), DTB_E_RANGE (a unit beyond 32-bit local ids),
 * DTB_E_NOMEM. */
dtb_status dtb_solve_rules_pair(const dtb_solved *s, dtb_rule_layers *rl, dtb_material m,
                                dtb_error *e);

/* dtb_solve_rules_pair by passes over the pair (gen/solve_rules_passes.c): the one-ply
 * derivation of --check run to its fixpoint, O(limit) passes over the whole pair per count
 * layer (hours for FMJD-64 at 5 pieces). Builds do not use it: it is the reference the unit
 * solve is tested against (tests/test_rules_units.c). Same contract. */
dtb_status dtb_solve_rules_passes(const dtb_solved *s, dtb_rule_layers *rl, dtb_material m,
                                  dtb_error *e);


#endif
