/* Board geometry for one variant: square numbering, diagonal neighbours, promotion rows.
 *
 * Squares are 0-based internally (index i is PDN square i+1). Row 0 is the top row; white men
 * move up (towards square 1), black men down. In every variant the top row's first playable
 * square is in the second column, so the bottom-left corner (a1) is playable.
 */
#ifndef DTB_BOARD_H
#define DTB_BOARD_H

#include <stdint.h>

#include "bitboard.h"
#include "variant.h"

#define DTB_MAX_SQUARES 72

typedef enum { DTB_WHITE = 0, DTB_BLACK = 1 } dtb_color;

/* Diagonal directions. Up is towards row 0. dir ^ 3 is the opposite direction. */
enum { DTB_NW = 0, DTB_NE = 1, DTB_SW = 2, DTB_SE = 3, DTB_DIRS = 4 };

typedef struct dtb_board {
    const dtb_variant *variant;
    int size;                           /* rows = columns */
    int half;                           /* playable squares per row */
    int squares;                        /* playable squares in all */
    int8_t next[DTB_MAX_SQUARES][DTB_DIRS]; /* neighbour in a direction, -1 off the board */
    /* Every square beyond i in direction d, to the edge. NW and NE rays run towards lower
     * indexes, SW and SE towards higher: the nearest square of a subset is its highest or
     * lowest bit (dtb_board_nearest). */
    dtb_bb ray[DTB_MAX_SQUARES][DTB_DIRS];
    dtb_bb all;                         /* every playable square */
    dtb_bb promotion[2];                /* the row where a man of that colour is crowned */
    /* One diagonal step of a whole set: for direction d the squares in step_from[d][p] move
     * by step_shift[d][p] bits (p = 0, 1: the two row parities). */
    dtb_bb step_from[DTB_DIRS][2];
    int step_shift[DTB_DIRS][2];
} dtb_board;

/* Fills *b for variant v (not NULL). Cheap; the result is read-only and may be shared. */
void dtb_board_init(dtb_board *b, const dtb_variant *v);

/* Row (0 = top) and column (0 = left) of square index i. */
int dtb_board_row(const dtb_board *b, int i);
int dtb_board_col(const dtb_board *b, int i);

/* Square index at row, column; -1 when not a playable square of the board. */
int dtb_board_square(const dtb_board *b, int row, int col);

/* Every square of set s moved one step in direction d (squares leaving the board vanish). */
static inline dtb_bb dtb_board_step(const dtb_board *b, dtb_bb s, int d)
{
    return dtb_bb_shift(s & b->step_from[d][0], b->step_shift[d][0]) |
           dtb_bb_shift(s & b->step_from[d][1], b->step_shift[d][1]);
}

/* The square of s nearest to the ray's start when s lies on one ray of direction d; -1 when s
 * is empty. */
static inline int dtb_board_nearest(dtb_bb s, int d)
{
    if (!s)
        return -1;
    return d < DTB_SW ? dtb_bb_highest(s) : dtb_bb_lowest(s);
}

/* The squares at which colour c's men move forward: NW/NE for white, SW/SE for black. */
static inline int dtb_forward_dir(dtb_color c, int k) { return c == DTB_WHITE ? k : 2 + k; }

#endif
