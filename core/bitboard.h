/* Square sets for boards of up to 72 playable squares (12x12 needs more than 64 bits).
 *
 * Layout ("dense"): bit i is square i+1 in PDN numbering, i.e. square s lives at bit s-1.
 * Row r (0 = top row) holds squares r*half+1 .. (r+1)*half where half = board_size/2.
 * The dense layout makes ranking squares for the perfect index a plain popcount; the price
 * is that a diagonal step is two shifts (one per row parity), see board.h.
 */
#ifndef DTB_BITBOARD_H
#define DTB_BITBOARD_H

#include <stdbool.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 dtb_bb;

#define DTB_BB_ONE ((dtb_bb)1)

static inline dtb_bb dtb_bb_bit(int i) { return DTB_BB_ONE << i; }

static inline bool dtb_bb_has(dtb_bb b, int i) { return (b >> i) & 1; }

static inline int dtb_bb_count(dtb_bb b)
{
    return __builtin_popcountll((uint64_t)b) + __builtin_popcountll((uint64_t)(b >> 64));
}

/* Index of the lowest set bit; b must not be empty. */
static inline int dtb_bb_lowest(dtb_bb b)
{
    const uint64_t lo = (uint64_t)b;
    return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(b >> 64));
}

/* Index of the highest set bit; b must not be empty. */
static inline int dtb_bb_highest(dtb_bb b)
{
    const uint64_t hi = (uint64_t)(b >> 64);
    return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)b);
}

/* Removes and returns the lowest set bit's index; *b must not be empty. */
static inline int dtb_bb_pop(dtb_bb *b)
{
    const int i = dtb_bb_lowest(*b);
    *b &= *b - 1;
    return i;
}

/* Shift towards higher bits for n > 0, lower bits for n < 0. */
static inline dtb_bb dtb_bb_shift(dtb_bb b, int n) { return n >= 0 ? b << n : b >> -n; }

#endif
