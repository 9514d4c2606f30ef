/* The solved materials kept in memory while generating (docs/DESIGN.md §4): one value byte per
 * position (core/value.h), white to move, addressed by material. Exits of a material being
 * solved (captures, promotions, man moves) are read from here at memory speed. */
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

/* Adds material m read on demand from its complete full-set DTW file at path, instead of its
 * values in memory: lookups decode the file's blocks into a cache of each OpenMP thread (up to
 * 256 blocks) and give capture positions (don't-care in files) the value of their best capture,
 * as loading would. For finished tables that a build still reads but cannot keep uncompressed.
 * Its dtb_solved_table has no values and no capture bits (dtb_solved_is_file). DTB_OK (also
 * when m is already there), or the status of a file that does not open as m's table. Not
 * thread-safe. */
dtb_status dtb_solved_add_file(dtb_solved *s, dtb_material m, const char *path, dtb_error *e);

/* Whether t was added by dtb_solved_add_file. */
bool dtb_solved_is_file(const dtb_solved_table *t);

/* DTB_OK, or the first failure to read a table file's block since s was made (with its message
 * in *e): lookups that fail read as draws, so a solve that read any is not to be kept. */
dtb_status dtb_solved_read_status(const dtb_solved *s, dtb_error *e);

/* Blocks of table files decoded so far, over all threads (for the stats). */
uint64_t dtb_solved_file_reads(const dtb_solved *s);

const dtb_board *dtb_solved_board(const dtb_solved *s);

#endif
