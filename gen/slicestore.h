/* The finished levels of a pair solved in slices (docs/DESIGN.md §4, gen/solve_sliced.c): each
 * level's values and capture bits, compressed once no level still to solve reads them, in an
 * unlinked scratch file (it never outlives the process, a kill -9 included); read back a range
 * of positions at a time to write the pair's tables.
 *
 * Usage:
 *     dtb_slicestore *st;
 *     dtb_slicestore_create(dir, tables, 2, true, &st, &e);
 *     dtb_pair_solver_levels(ps, dtb_slicestore_levels(st, 0), dtb_slicestore_levels(st, 1));
 *     ... after each level a no longer read: dtb_slicestore_put(st, a, &e);
 *     void *state = NULL;
 *     dtb_slicestore_read(st, 0, &state, start, len, values, capture_bits);
 *     dtb_slicestore_state_free(state);
 *     dtb_slicestore_free(st);
 * Nothing here prints. */
#ifndef DTB_SLICESTORE_H
#define DTB_SLICESTORE_H

#include <stddef.h>
#include <stdint.h>

#include "solved.h"

typedef struct dtb_slicestore dtb_slicestore;

/* A store for tables t[0..n) (n is 1 for a material that is its own flip, else 2; the tables
 * must outlive the store); the scratch file goes in dir. win_distances false: every win is
 * stored as a win in 1 (no reader needs more when no DTW table keeps wins' distances).
 * DTB_E_NOMEM, or the scratch file's status (DTB_E_IO, DTB_E_NOSPACE). */
dtb_status dtb_slicestore_create(const char *dir, const dtb_solved_table *const *t, int n,
                                 bool win_distances, dtb_slicestore **out, dtb_error *e);

/* Table k's level of each block (one byte a block), for the caller to fill before the first
 * put (dtb_pair_solver_levels). */
uint8_t *dtb_slicestore_levels(dtb_slicestore *st, int k);

/* Frees the store and its scratch file; NULL is allowed. */
void dtb_slicestore_free(dtb_slicestore *st);

/* Compresses the values and capture bits of every block of level a of each table into the
 * store (the OpenMP threads in force). DTB_E_NOSPACE when the disk is full, DTB_E_IO, DTB_E_NOMEM.
 * Each level is put once. */
dtb_status dtb_slicestore_put(dtb_slicestore *st, int a, dtb_error *e);

/* dtb_slicestore_put of the count blocks list[] of table k alone (a part of a level, as it is
 * solved; any order). Each block is put once. */
dtb_status dtb_slicestore_put_blocks(dtb_slicestore *st, int k, const uint64_t *list,
                                     uint64_t count, dtb_error *e);

/* Bytes of the scratch file so far. */
uint64_t dtb_slicestore_bytes(const dtb_slicestore *st);

/* Positions start..start+len-1 of table k: their values into values[0..len) (a capture
 * position's is not kept: the tables leave it don't-care) and their capture bits into captures ((len + 63) / 64 words; bit i % 64 of word i / 64 is position start + i).
 * Every block they are in must have been put. state is the caller's (one per thread: NULL at
 * first, then freed with dtb_slicestore_state_free): calls with different states may run at
 * once. NULL on success, else what failed. */
const char *dtb_slicestore_read(const dtb_slicestore *st, int k, void **state, uint64_t start,
                                size_t len, uint8_t *values, uint64_t *captures);
void dtb_slicestore_state_free(void *state);

/* The most bytes a reading state holds (its decoded chunks) for a table of this block size and
 * positions, for memory plans. */
uint64_t dtb_slicestore_reader_bytes(uint64_t block_size, uint64_t positions);

#endif
