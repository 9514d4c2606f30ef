/* Game values in one byte (docs/DESIGN.md §3): win / draw / loss for the side to move and the exact
 * distance to win (DTW, plies). A win always takes an odd number of plies, a loss an even
 * number (0: no legal move now), so both fit one byte up to DTB_MAX_DTW:
 *   0            draw
 *   1..127       win in 2v-1 plies (1..253)
 *   128..255     loss in 2(v-128) plies (0..254)
 * Thread-safe (pure functions). */
#ifndef DTB_VALUE_H
#define DTB_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtb_status.h" /* dtb_wdl, DTB_MAX_DTW */

typedef uint8_t dtb_value;

#define DTB_VALUE_DRAW ((dtb_value)0)
#define DTB_VALUE_LOST ((dtb_value)128) /* dtb_value_loss(0): no move left, e.g. no piece */

static inline dtb_value dtb_value_win(int dtw) { return (dtb_value)((dtw + 1) / 2); }
static inline dtb_value dtb_value_loss(int dtw) { return (dtb_value)(128 + dtw / 2); }
static inline bool dtb_value_is_win(dtb_value v) { return v >= 1 && v <= 127; }
static inline bool dtb_value_is_loss(dtb_value v) { return v >= 128; }

static inline dtb_wdl dtb_value_wdl(dtb_value v)
{
    return v == 0 ? DTB_DRAW : v < 128 ? DTB_WIN : DTB_LOSS;
}

/* DTW in plies of a win or loss; 0 for a draw (ask dtb_value_wdl first). */
static inline int dtb_value_dtw(dtb_value v)
{
    return v == 0 ? 0 : v < 128 ? 2 * v - 1 : 2 * (v - 128);
}

/* The value one ply earlier, for the side that moved into a position of value v. */
static inline dtb_value dtb_value_parent(dtb_value v)
{
    return v == 0 ? 0 : v < 128 ? dtb_value_loss(dtb_value_dtw(v) + 1) : dtb_value_win(dtb_value_dtw(v) + 1);
}

#endif
