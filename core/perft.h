/* perft: the number of leaf nodes of the legal move tree (docs/DESIGN.md §5 conventions: a whole
 * capture sequence is one ply, equal (from, to, captured) moves count once). */
#ifndef DTB_PERFT_H
#define DTB_PERFT_H

#include <stdint.h>

#include "movegen.h"

/* Leaf count at exactly `depth` plies below p (depth 0 gives 1). Thread-safe. */
uint64_t dtb_perft(const dtb_board *b, const dtb_pos *p, int depth);

#endif
