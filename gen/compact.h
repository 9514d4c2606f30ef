/* Making a compact table set from a full one, without solving anything (docs/FORMAT.md,
 * "Compact sets").
 *
 * Of every material and its colour flip (a material that is its own flip excepted), per metric,
 * one table is stored and the other is rewritten as a derived table, which holds no value:
 * libdtb answers its quiet positions by a one-ply search, so it compresses to almost nothing.
 * Of each pair the member with the larger file is derived (with threats: the larger stored form,
 * both members written to find it). Stored tables are copied byte for
 * byte when the output's compression parameters are the input's, and re-encoded otherwise.
 * Probing the compact set gives the same values as the full set; probes of derived positions
 * cost a dozen lookups or more instead of one.
 *
 * Usage:
 *     dtb_compact_options o = {.from_dir = "tables", .out_dir = "compact", .variant = v};
 *     dtb_compact_stats st;
 *     if (dtb_compact(&o, &st, &err) != DTB_OK) { report err.msg; }
 *
 * A compact set cannot hold DTW tables that store their losses only (docs/FORMAT.md §8.7: a
 * derived table searched through a partner whose wins are searched again could go round), so
 * such inputs are first loaded pair by pair (their wins searched, as --check loads them) and
 * re-encoded in full in a scratch directory under the output, removed at the end: the compact
 * set is then the one made from the set built with --dtw-store full, byte for byte.
 *
 * Every input file is checked before anything is written (it opens cleanly, is a full set's
 * table, has its pair partner and the table its promotions reach); each file read is verified
 * against its checksums. Files appear whole or not at all (.tmp, fsync, rename); a written
 * table is made as <table>.new next to its final name, then renamed. An output file that
 * already exists is left alone when it has the bytes this run would write, and is an error otherwise (never overwritten). The same input and options
 * give the same bytes, whatever the thread count. Never prints, never exits: messages go to the
 * log callback. Not thread-safe with respect to the same output directory. */
#ifndef DTB_COMPACT_H
#define DTB_COMPACT_H

#include <stdbool.h>
#include <stdint.h>

#include "tablefile.h"
#include "variant.h"

typedef enum dtb_compact_action {
    DTB_COMPACT_DERIVE,    /* written as the derived member of its pair */
    DTB_COMPACT_COPY,      /* copied: the stored member of a pair, or its own flip */
    DTB_COMPACT_UNCHANGED, /* already in the output with the same bytes */
    DTB_COMPACT_REENCODE,  /* stored, re-encoded with the output's block size and level */
} dtb_compact_action;

/* The compact set's compression parameters unless told otherwise (docs/FORMAT.md, "Compact
 * sets": chosen from measurements on international 2..5). */
#define DTB_COMPACT_DEFAULT_BLOCK_POSITIONS (1u << 20)
#define DTB_COMPACT_DEFAULT_ZSTD_LEVEL 15

/* Called once per table file, in dependency order, after it is done: its output path, what was
 * done, its size in the full set and in the compact one. From one thread at a time. */
typedef void (*dtb_compact_log)(void *user, const char *path, dtb_compact_action action,
                                uint64_t bytes_in, uint64_t bytes_out);

typedef struct dtb_compact_options {
    const char *from_dir;       /* a full set: tables in from_dir/<variant>/ */
    const char *out_dir;        /* the compact set goes to out_dir/<variant>/ (made if absent) */
    const dtb_variant *variant;
    int pieces;                 /* only materials of at most this many pieces; 0: up to 8 */
    int threads;                /* 0: OpenMP's default */
    /* Compression of every output table. A stored table whose input has these parameters is
     * copied byte for byte, any other is re-encoded (its capture positions don't-care, as in
     * the full set); derived tables are written with them. */
    bool same_parameters;       /* each table keeps its input's block size and level (every
                                   stored table a copy); the two fields below are ignored */
    uint32_t block_positions;   /* positions per block, 1 .. 2^24; 0: the default above */
    int zstd_level;             /* 1 .. 22; 0: the default above */
    /* Stored tables also leave their threat positions that probe/format/threat.h's rule accepts to
     * the probe (docs/FORMAT.md, "Threat positions"): a smaller set whose probes of those
     * positions search up to four plies. Every stored table is then re-encoded. */
    bool threats;
    dtb_compact_log log;        /* may be NULL */
    void *user;
} dtb_compact_options;

typedef struct dtb_compact_stats {
    int files;                  /* table files in the set */
    int derived;                /* of which derived */
    int reencoded;              /* of which stored and re-encoded */
    uint64_t positions[2];      /* [metric - 1]: positions in the tables of that metric */
    uint64_t bytes_in[2];       /* [metric - 1]: bytes of the full set's files */
    uint64_t bytes_out[2];      /* [metric - 1]: bytes of the compact set's files */
    uint64_t derived_dontcare;  /* quiet positions of derived tables (all hold no value) */
    uint64_t threat_dontcare;   /* threat positions of stored tables that hold no value */
} dtb_compact_stats;

/* Converts the tables of o->variant in o->from_dir into a compact set in o->out_dir (with the
 * per-material .stats records and the STATS log, when the full set has them). st may be NULL.
 * Returns DTB_OK, or a status with a one-line message naming the file: DTB_E_INVALID (bad
 * options), DTB_E_NOTFOUND (no tables,
 * a pair partner or promotion target missing, or a table a losses-only table's loading needs), DTB_E_CORRUPT / DTB_E_VERSION / DTB_E_MISMATCH (a
 * damaged or unexpected input file, or one already derived), DTB_E_INVALID (an output file exists
 * with other bytes), DTB_E_IO, DTB_E_NOSPACE, DTB_E_NOMEM. */
dtb_status dtb_compact(const dtb_compact_options *o, dtb_compact_stats *st, dtb_error *e);

#endif
