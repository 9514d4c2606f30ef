/* The pair split of compact table sets (tables/FORMAT.md, "Compact sets"): which positions of a
 * derived table hold no value, shared by the writer (gen/compact.c) and the reader
 * (probe/resolve.c) so that the two cannot disagree. Internal; not public API.
 *
 * Of a material M and its colour flip (M not its own flip) a compact set stores one table in full
 * and "derives" the other: a quiet position w of the derived table (white to move, no capture)
 * is don't-care when each of its moves lands in a table that is stored: a king move or a man
 * move that does not promote leaves black to move in M, i.e. the flipped position is in the
 * partner (stored); a promoting move changes the material, and lands in a stored table exactly
 * when the file's DTB_TABLE_KEEP_PROMOTIONS flag is clear (the writer sets it when the promotion
 * target is itself derived). So with the flag set, the quiet positions that have a promoting
 * move keep their values; the others (and all of them with the flag clear) are derived by one
 * ply: the best over the moves of the successors' values, a capture of the successor resolved
 * by search as everywhere else. Thread-safe (pure functions). */
#ifndef DTB_PAIRSPLIT_H
#define DTB_PAIRSPLIT_H

#include <stdbool.h>

#include "board.h"
#include "position.h"

/* Whether white (to move in w, which has no capture) has a man move onto its promotion row. */
static inline bool dtb_pairsplit_promotes(const dtb_board *b, const dtb_pos *w)
{
    const dtb_bb empty = b->all & ~dtb_pos_occupied(w);
    const dtb_bb near = dtb_board_step(b, w->men[DTB_WHITE], dtb_forward_dir(DTB_WHITE, 0)) |
                        dtb_board_step(b, w->men[DTB_WHITE], dtb_forward_dir(DTB_WHITE, 1));
    return (near & empty & b->promotion[DTB_WHITE]) != 0;
}

/* Whether quiet position w (white to move, no capture) of a derived table holds no value;
 * keep_promotions is the file's DTB_TABLE_KEEP_PROMOTIONS flag. */
static inline bool dtb_pairsplit_dontcare(const dtb_board *b, bool keep_promotions,
                                          const dtb_pos *w)
{
    return !keep_promotions || !dtb_pairsplit_promotes(b, w);
}

#endif
