/* Changing the form of a full set's DTW tables without solving anything (docs/FORMAT.md §8.7):
 * from full DTW tables (every value stored) to losses-only ones (wins and draws left to a
 * one-ply search), or back.
 *
 * Usage:
 *     dtb_convert_options o = {.from_dir = "tables", .out_dir = "small", .variant = v};
 *     dtb_convert_stats st;
 *     if (dtb_convert(&o, &st, &err) != DTB_OK) { report err.msg; }
 *
 * Every table file of from_dir/<variant>/ (of at most `pieces` pieces) appears in
 * out_dir/<variant>/: a DTW table in the chosen form, every other file (WLD, MTC, rule tables,
 * and a DTW table already in that form) hard-linked to its input, as tables are never changed
 * in place. A converted table is what a build writing that form would have written: the same
 * bytes, since the writer's output depends only on the values it keeps and their don't-care
 * positions. Input files are checked as they are read (frame checksums); a file appears whole
 * or not at all (.new, fsync, rename), and an output file that exists already is left alone when
 * it holds the bytes this run would write, an error otherwise (never overwritten). Never prints,
 * never exits: messages go to the log callback. Not thread-safe with respect to the same output
 * directory. */
#ifndef DTB_CONVERT_H
#define DTB_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "position.h"
#include "variant.h"

typedef enum dtb_convert_action {
    DTB_CONVERT_REWRITTEN, /* a DTW table written in the other form */
    DTB_CONVERT_LINKED,    /* hard-linked: not a DTW table, or one already in the form asked */
    DTB_CONVERT_UNCHANGED, /* the output held this run's bytes already */
} dtb_convert_action;

/* Called once per table file after it is done: its output path, what was done, its size in the
 * input and in the output. From one thread at a time. */
typedef void (*dtb_convert_log)(void *user, const char *path, dtb_convert_action action,
                                uint64_t bytes_in, uint64_t bytes_out);

typedef struct dtb_convert_options {
    const char *from_dir;       /* a full set: tables in from_dir/<variant>/ */
    const char *out_dir;        /* the converted set goes to out_dir/<variant>/ (made if absent);
                                   must be on from_dir's file system (hard links) */
    const dtb_variant *variant;
    int pieces;                 /* only materials of at most this many pieces; 0: all */
    bool dtw_full;              /* the form wanted: full (true) or losses only (false) */
    int threads;                /* 0: OpenMP's default */
    dtb_convert_log log;        /* may be NULL */
    void *user;
} dtb_convert_options;

typedef struct dtb_convert_stats {
    int files, rewritten;
    uint64_t dtw_positions, dtw_bytes_in, dtw_bytes_out; /* over every DTW table */
} dtb_convert_stats;

/* Converts as described above. DTB_E_INVALID for bad options or an output file with other
 * bytes, DTB_E_NOTFOUND when the input has no table, the reader's status for a damaged input,
 * DTB_E_IO / DTB_E_NOSPACE for a failed write (the message names the file). */
dtb_status dtb_convert(const dtb_convert_options *o, dtb_convert_stats *st, dtb_error *e);

#endif
