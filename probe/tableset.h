/* The table files of one variant found in a list of directories (docs/DESIGN.md §7, §9): scanned once
 * to learn the variant and which materials are there, then each file opened on first use and
 * kept open. Internal to libdtb.
 *
 * Thread safety: dtb_tableset_get* may be called from any number of threads at once (a
 * lock-free read of the table's slot; opening a file takes a mutex, once per file); open and
 * close are not concurrent with anything. Never prints: damaged files go to the log callback,
 * once per file. */
#ifndef DTB_TABLESET_H
#define DTB_TABLESET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "index.h"
#include "tablefile.h"

/* Most pieces of one kind (per colour) a table can have here. */
#define DTB_TABLESET_MAX_KIND 8

/* One open table file. */
typedef struct dtb_ptable {
    const dtb_tablefile *tf;
    const dtb_index *ix;
    uint64_t key_base;        /* table number << DTB_PTABLE_KEY_SHIFT: block cache keys */
    uint32_t block_positions;
    int block_shift;          /* log2(block_positions) when a power of two, else -1 */
    unsigned bits;            /* bits per stored value */
    bool fast;                /* ixf holds ix's inline form (boards of up to 64 squares) */
    dtb_index_fast ixf;
    dtb_metric metric;
    dtb_material material;
    bool derived;             /* the derived member of a pair (DTB_TABLE_DERIVED) */
    bool threats;             /* stored, its threat positions hold no value (DTB_TABLE_THREATS) */
    bool losses;              /* a DTW table that stores its losses only (DTB_TABLE_LOSSES): its
                                 wins and draws come from the material's .wld table, a win's
                                 distance from a one-ply search (docs/FORMAT.md §8.7) */
    bool own_flip;            /* its material is its own colour flip */
    char name[80];            /* "KKvK.wld", for messages */
    atomic_bool block_error_logged;
} dtb_ptable;

#define DTB_PTABLE_KEY_SHIFT 40

typedef void (*dtb_tableset_log)(void *user, const char *message);

typedef struct dtb_tableset dtb_tableset;

/* Scans paths (each holds <variant>/ subdirectories or table files directly) for the tables of
 * variant (NULL: the one variant found). Returns DTB_OK and *out; DTB_E_INVALID (no paths,
 * unknown variant, several variants found and none chosen), DTB_E_NOTFOUND (no path is a
 * readable directory; no variant chosen and no table found), DTB_E_NOMEM, with a message. */
dtb_status dtb_tableset_open(const char *const *paths, int npaths, const char *variant,
                             dtb_tableset_log log, void *user, dtb_tableset **out, dtb_error *e);

/* Closes every file; NULL is allowed. */
void dtb_tableset_close(dtb_tableset *ts);

/* The variant's board (lives as long as ts). */
const dtb_board *dtb_tableset_board(const dtb_tableset *ts);

/* The table of material m (white to move) and metric. may_open false: DTB_E_NOTCACHED when the
 * file has not been opened yet. A table that is missing or damaged stays so for the life of ts
 * (the status and message are remembered). DTB_E_NOTFOUND names the material and the file. */
dtb_status dtb_tableset_get(dtb_tableset *ts, dtb_material m, dtb_metric metric, bool may_open,
                            const dtb_ptable **out, dtb_error *e);

/* The table WDL probes use: the .wld file, or the .dtw file when there is no .wld. A .dtw file
 * that stores its losses only cannot stand in (it does not say which positions are wins or
 * draws): then DTB_E_NOTFOUND naming both files. */
dtb_status dtb_tableset_get_wdl(dtb_tableset *ts, dtb_material m, bool may_open,
                                const dtb_ptable **out, dtb_error *e);

/* Largest n such that every material of 2..n pieces was found at open (dtw: a .dtw file; else
 * either file); 1 when even a 2-piece material is missing. */
int dtb_tableset_max_pieces(const dtb_tableset *ts, bool dtw);

/* Whether a table for probes of material m (white to move) was found at open: a .dtw file (dtw),
 * else a .wld or a .dtw file. A read of a byte array that never changes after open: lock-free. */
bool dtb_tableset_present(const dtb_tableset *ts, dtb_material m, bool dtw);

/* Calls fn for every table file of the variant now in the directories (rescanned), in directory
 * order; stops when fn returns false. Returns DTB_OK or DTB_E_NOMEM. */
typedef bool (*dtb_tableset_file_fn)(void *user, const char *path, dtb_material m,
                                     dtb_metric metric);
dtb_status dtb_tableset_list(const dtb_tableset *ts, dtb_tableset_file_fn fn, void *user,
                             dtb_error *e);

/* What a file of this material and metric must say about itself (for dtb_tablefile_open). name
 * receives the material name (DTB_MATERIAL_NAME_MAX bytes); positions 0 leaves the count
 * unchecked. */
dtb_tablefile_expect dtb_tableset_expect(const dtb_tableset *ts, dtb_material m, dtb_metric metric,
                                         char *name, uint64_t positions);

#endif
