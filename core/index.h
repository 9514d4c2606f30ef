/* Perfect index of the positions of one material with white to move (DESIGN.md §3).
 *
 * index = block * block_size + kings_rank. A block is one placement of the men of both colours
 * (no man on its own promotion row); kings_rank ranks the white kings, then the black kings, over
 * the squares the men leave free, so every block has the same size. Sizes count exactly the
 * legal placements: no gaps. Thread-safe after creation (read-only). */
#ifndef DTB_INDEX_H
#define DTB_INDEX_H

#include <stdint.h>

#include "material.h"

typedef struct dtb_index dtb_index;

/* Builds the index of material m on board b into *out (NULL on failure). DTB_E_RANGE when the
 * material does not fit the board. The board must outlive the index. */
dtb_status dtb_index_create(const dtb_board *b, dtb_material m, dtb_index **out);

/* Frees ix; NULL is allowed. */
void dtb_index_free(dtb_index *ix);

uint64_t dtb_index_size(const dtb_index *ix);       /* positions in all */
uint64_t dtb_index_blocks(const dtb_index *ix);     /* number of men placements */
uint64_t dtb_index_block_size(const dtb_index *ix); /* king placements per block */
dtb_material dtb_index_material(const dtb_index *ix);

/* Index of p, which must have ix's material (white to move is assumed; p->side is ignored). */
uint64_t dtb_index_of(const dtb_index *ix, const dtb_pos *p);

/* The position with index i < size (white to move). */
void dtb_index_pos(const dtb_index *ix, uint64_t i, dtb_pos *p);

/* Block number of a men placement (white men, black men). */
uint64_t dtb_index_block_of(const dtb_index *ix, dtb_bb white_men, dtb_bb black_men);

/* Men placement of block number blk. */
void dtb_index_block_men(const dtb_index *ix, uint64_t blk, dtb_bb *white_men, dtb_bb *black_men);

/* Rank of a king placement within its block, given all the men (both colours). */
uint64_t dtb_index_kings_of(const dtb_index *ix, dtb_bb men, dtb_bb white_kings, dtb_bb black_kings);

/* dtb_index_kings_of for n placements over the same men: out[i] = rank of (white_kings[i],
 * black_kings[i]). One call for a whole list (the solver ranks every predecessor of a position
 * at once), so the per-call dispatch is paid once. */
void dtb_index_kings_of_many(const dtb_index *ix, dtb_bb men, int n, const dtb_bb *white_kings,
                             const dtb_bb *black_kings, uint64_t *out);

/* Inverse of dtb_index_kings_of: the king placement with rank kings_rank < block size among the
 * squares the men leave free. With dtb_index_block_men, walks a block without a division per
 * position. */
void dtb_index_kings_at(const dtb_index *ix, dtb_bb men, uint64_t kings_rank, dtb_bb *white_kings,
                        dtb_bb *black_kings);

#endif
