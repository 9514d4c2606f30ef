/* The solved materials kept in memory while generating (docs/DESIGN.md §4): one value byte per
 * position (core/value.h), white to move, addressed by material. Exits of a material being
 * solved (captures, promotions, man moves) are read from here at memory speed. Distances the
 * byte cannot hold are escape bytes with the exact DTW in the table's long list (below). */
#ifndef DTB_SOLVED_H
#define DTB_SOLVED_H

#include "index.h"
#include "movegen.h"
#include "value.h"

/* Largest piece count per kind a registry can address. */
#define DTB_SOLVED_MAX_COUNT 8

typedef struct dtb_solved_table {
    dtb_material material;
    dtb_index *index;
    dtb_value *values;  /* index size bytes */
    uint64_t *captures; /* bit i set: the side to move has a capture at index i */
} dtb_solved_table;

typedef struct dtb_solved dtb_solved;

/* An empty registry for board b (which must outlive it). NULL when out of memory. */
dtb_solved *dtb_solved_create(const dtb_board *b);

/* Distances longer than byte_max plies (also those a byte could hold, 1 <= byte_max <= 254) are
 * stored as escapes with a long-list entry: the same values, more of them in the lists (tests
 * of the long lists use it on small materials). Default DTB_VALUE_BYTE_LOSS_MAX (254): only
 * what a byte cannot hold. Set it before any table is added. */
void dtb_solved_set_byte_max(dtb_solved *s, int byte_max);
int dtb_solved_byte_max(const dtb_solved *s);
/* The longest win (win) or loss a value byte holds without a long-list entry: 253 / 254, or
 * the lowered byte_max. */
int dtb_solved_byte_limit(const dtb_solved *s, bool win);

/* Frees the registry, every table's index and values; NULL is allowed. */
void dtb_solved_free(dtb_solved *s);

/* Adds material m with zeroed (draw) values, or returns the existing entry. NULL with a message
 * when out of memory (or work-file space) or m does not fit. Not thread-safe. */
dtb_solved_table *dtb_solved_add(dtb_solved *s, dtb_material m, dtb_error *e);

/* The table of material m, NULL when not added. Thread-safe with concurrent readers. */
const dtb_solved_table *dtb_solved_find(const dtb_solved *s, dtb_material m);

/* From now on, tables added to s keep their values and capture bits in work files in dir
 * (gen/workfile.h) instead of memory, and while s lives a monitor keeps the process's resident
 * memory under cap bytes (0: no cap) by releasing those files' pages. dir must exist and outlive
 * s. DTB_E_NOMEM when the monitor cannot start. Not thread-safe. */
dtb_status dtb_solved_use_work_files(dtb_solved *s, const char *dir, uint64_t cap, dtb_error *e);

/* Bytes of work files s holds now, the most it held so far, and how often the monitor released
 * their pages. */
void dtb_solved_work_stats(const dtb_solved *s, uint64_t *now, uint64_t *peak, uint64_t *releases);

/* dtb_solved_add for a pair solved in slices (gen/solve_sliced.c): its values and capture bits
 * are mapped without taking memory (or, with work files, disk) until a range is reserved and
 * written, and dtb_solved_release gives back ranges whose values are kept elsewhere; in_memory:
 * in memory even when s keeps tables in work files. An existing
 * entry is returned as it is. NULL with a message as dtb_solved_add. Not thread-safe. */
dtb_solved_table *dtb_solved_add_sliced(dtb_solved *s, dtb_material m, bool in_memory, dtb_error *e);

/* Takes the room of positions start..start+len-1 of a sliced table before they are written:
 * DTB_E_NOSPACE when its work file's disk cannot hold them (nothing to take in memory). */
dtb_status dtb_solved_reserve(const dtb_solved *s, const dtb_solved_table *t, uint64_t start,
                              uint64_t len, dtb_error *e);

/* Gives back the memory (and work-file disk) of the whole pages of values and capture bits that
 * lie inside positions start..start+len-1 of a sliced table; they read as zeros afterwards. */
void dtb_solved_release(const dtb_solved *s, const dtb_solved_table *t, uint64_t start,
                        uint64_t len);

/* Drops material m's values (to free memory once nothing depends on it). */
void dtb_solved_drop(dtb_solved *s, dtb_material m);

/* Value, for the side to move, of position p (either side to move; flipped as needed). A side
 * to move without pieces is a loss in 0. p's material (after the flip) must have been added. */
dtb_value dtb_solved_value(const dtb_solved *s, const dtb_pos *p);

/* Where that value is stored, so that a caller can prefetch it before it reads it (a lost
 * position without pieces points to a constant). A table read from its file has no stored
 * values: its value is then written to *slot and slot returned. */
const dtb_value *dtb_solved_value_at(const dtb_solved *s, const dtb_pos *p, dtb_value *slot);

/* dtb_solved_value_at of the position after move m of p (a legal move, either side to move),
 * without building that position: the solver looks up every capture of every capture position. */
const dtb_value *dtb_solved_value_after(const dtb_solved *s, const dtb_pos *p, const dtb_move *m,
                                        dtb_value *slot);

/* ---- long lists: the exact DTW of positions stored as escape bytes ---------------------------- */

/* Stores a win (win) or loss in dtw plies at index idx of t: its value byte, and a long-list
 * entry when the distance is beyond the byte limit (dtb_solved_set_byte_max). Thread-safe
 * with other stores and with lookups (a lock is taken only for a long entry). false when out of
 * memory for the list (the byte is then an escape without its entry: fail the solve). */
bool dtb_solved_store(const dtb_solved *s, dtb_solved_table *t, uint64_t idx, bool win, int dtw);

/* Stores exact value v (draws and byte-sized distances directly) as dtb_solved_store. */
bool dtb_solved_store_value(const dtb_solved *s, dtb_solved_table *t, uint64_t idx, dtb_wvalue v);

/* The exact value of the byte at `at`, a pointer this registry gave (dtb_solved_value_at,
 * dtb_solved_value_after) or into a table's values: the byte itself, or for an escape the
 * distance in its table's long list. Thread-safe with stores of other positions. */
dtb_wvalue dtb_solved_exact(const dtb_solved *s, const dtb_value *at);

/* The exact value at index idx of t (as dtb_solved_exact). */
dtb_wvalue dtb_solved_exact_at(const dtb_solved *s, const dtb_solved_table *t, uint64_t idx);

/* The long list of t: its n entries sorted by index (idx[i], dtw[i]; *idx and *dtw malloc'd,
 * NULL when n is 0; free both). Not thread-safe with stores. false when out of memory. */
bool dtb_solved_long_list(const dtb_solved *s, const dtb_solved_table *t, uint64_t **idx,
                          uint16_t **dtw, uint64_t *n);

/* Entries in t's long list. */
uint64_t dtb_solved_long_count(const dtb_solved *s, const dtb_solved_table *t);

/* Blocks of table files each thread keeps decoded for tables read from their files (below), for
 * memory plans: at most this many table blocks a thread. */
#define DTB_SOLVED_FILE_CACHE_BLOCKS 1024

/* Adds material m read on demand from its complete full-set DTW file at path, instead of its
 * values in memory: lookups decode the file's blocks into a cache of each OpenMP thread (up to
 * DTB_SOLVED_FILE_CACHE_BLOCKS blocks) and give capture positions (don't-care in files) the
 * value of their best capture, as loading would. A DTW file that stores its losses only (docs/FORMAT.md §8.7) is read with
 * the WLD file beside it (path with .wld for .dtw), which says which quiet positions are wins,
 * draws and losses; a win's value is then searched from its moves (the shortest to a lost
 * position), so its partner and the tables its promotions and captures reach must be in s too.
 * Lookups stay exact everywhere. For finished tables that a build still reads but cannot keep
 * uncompressed. Its dtb_solved_table has no values and no capture bits (dtb_solved_is_file).
 * DTB_OK (also when m is already there), or the status of a file that does not open as m's
 * table (DTB_E_NOTFOUND: a losses-only table's WLD file is missing). Not thread-safe. */
dtb_status dtb_solved_add_file(dtb_solved *s, dtb_material m, const char *path, dtb_error *e);

/* The WLD value byte a WLD-only table's win, draw and loss read as (dtb_solved_add_wld_file,
 * gen/build.c): a win in 1 ply, a draw, a loss in 0 plies. The distances are not the table's;
 * the results are, and results are all a table solved from them keeps (DESIGN.md §4: a build
 * with --dtw-pieces writes only WLD files above that many pieces). */
dtb_value dtb_solved_wld_as_dtw(unsigned wld);

/* dtb_solved_add_file of a WLD-only table: its .wld file at path, each value read as
 * dtb_solved_wld_as_dtw gives. Same statuses. Not thread-safe. */
dtb_status dtb_solved_add_wld_file(dtb_solved *s, dtb_material m, const char *path, dtb_error *e);

/* Whether t was added by dtb_solved_add_file. */
bool dtb_solved_is_file(const dtb_solved_table *t);

/* DTB_OK, or the first failure to read a table file's block since s was made (with its message
 * in *e; DTB_E_CORRUPT also for a losses-only table whose files disagree with each other or
 * with the game): lookups that fail read as draws, so a solve that read any is not to be kept. */
dtb_status dtb_solved_read_status(const dtb_solved *s, dtb_error *e);

/* Blocks of table files decoded so far, over all threads (for the stats). */
uint64_t dtb_solved_file_reads(const dtb_solved *s);

const dtb_board *dtb_solved_board(const dtb_solved *s);

#endif
