/* Game values (docs/DESIGN.md §3): win / draw / loss for the side to move and the exact distance
 * to win (DTW, plies). A win always takes an odd number of plies, a loss an even number (0: no
 * legal move now), so both fit one byte up to 253 / 254 plies:
 *   0            draw
 *   1..127       win in 2v-1 plies (1..253)
 *   128..255     loss in 2(v-128) plies (0..254)
 * Longer distances (up to DTB_MAX_DTW) are stored as an escape: the byte's last win (127) or
 * last loss (255), with the exact DTW in a list beside the bytes (the long list: in a table file
 * docs/FORMAT.md §8.4, while generating gen/solved.h). An escape byte without an entry in the
 * list means its own distance (253 / 254), so tables whose distances fit a byte have no list
 * and the same bytes as before. Where a value is computed rather than stored (the probe's
 * search) it is a dtb_wvalue, which holds every DTW exactly.
 * Thread-safe (pure functions). */
#ifndef DTB_VALUE_H
#define DTB_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtb_status.h" /* dtb_wdl, DTB_MAX_DTW */

typedef uint8_t dtb_value;

#define DTB_VALUE_DRAW ((dtb_value)0)
#define DTB_VALUE_LOST ((dtb_value)128) /* dtb_value_loss(0): no move left, e.g. no piece */
#define DTB_VALUE_WIN_ESCAPE ((dtb_value)127)  /* win in 253 plies, or longer: see the long list */
#define DTB_VALUE_LOSS_ESCAPE ((dtb_value)255) /* loss in 254 plies, or longer: likewise */
#define DTB_VALUE_BYTE_WIN_MAX 253  /* the longest win and loss a byte holds without a list entry */
#define DTB_VALUE_BYTE_LOSS_MAX 254

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

/* Whether v is an escape byte (its distance may be in a long list). */
static inline bool dtb_value_is_escape(dtb_value v) { return (v & 127) == 127; }

/* The value byte of a win or loss in dtw plies, and whether it holds that distance itself
 * (dtw within the byte and, when the byte is an escape, not beyond limit: a table with a lowered
 * limit lists distances a byte could hold). */
static inline dtb_value dtb_value_of(bool win, int dtw)
{
    return win ? (dtw > DTB_VALUE_BYTE_WIN_MAX ? DTB_VALUE_WIN_ESCAPE : dtb_value_win(dtw))
               : (dtw > DTB_VALUE_BYTE_LOSS_MAX ? DTB_VALUE_LOSS_ESCAPE : dtb_value_loss(dtw));
}

/* Exact values in 16 bits, for values computed from others (the probe's search, the solver's
 * capture positions): the byte's layout scaled up.
 *   0              draw
 *   1..32767       win in 2v-1 plies
 *   32768..65535   loss in 2(v-32768) plies */
typedef uint16_t dtb_wvalue;

#define DTB_WVALUE_DRAW ((dtb_wvalue)0)
#define DTB_WVALUE_LOST ((dtb_wvalue)32768)

static inline dtb_wvalue dtb_wvalue_win(int dtw) { return (dtb_wvalue)((dtw + 1) / 2); }
static inline dtb_wvalue dtb_wvalue_loss(int dtw) { return (dtb_wvalue)(32768 + dtw / 2); }
static inline bool dtb_wvalue_is_win(dtb_wvalue v) { return v >= 1 && v <= 32767; }
static inline bool dtb_wvalue_is_loss(dtb_wvalue v) { return v >= 32768; }
static inline dtb_wdl dtb_wvalue_wdl(dtb_wvalue v)
{
    return v == 0 ? DTB_DRAW : v < 32768 ? DTB_WIN : DTB_LOSS;
}
static inline int dtb_wvalue_dtw(dtb_wvalue v)
{
    return v == 0 ? 0 : v < 32768 ? 2 * v - 1 : 2 * (v - 32768);
}
static inline dtb_wvalue dtb_wvalue_parent(dtb_wvalue v)
{
    return v == 0 ? 0 : v < 32768 ? dtb_wvalue_loss(dtb_wvalue_dtw(v) + 1) : dtb_wvalue_win(dtb_wvalue_dtw(v) + 1);
}
/* The exact value of byte v, whose distance the byte holds (an escape means 253 / 254). */
static inline dtb_wvalue dtb_wvalue_of_byte(dtb_value v)
{
    return v < 128 ? (dtb_wvalue)v : (dtb_wvalue)(v - 128 + 32768);
}
/* The exact value of a win (or loss) in dtw plies. */
static inline dtb_wvalue dtb_wvalue_of(bool win, int dtw) { return win ? dtb_wvalue_win(dtw) : dtb_wvalue_loss(dtw); }

/* The MTC byte (docs/FORMAT.md §8.5): plies to the next conversion that keeps the win (a
 * capture or a man move), the winner taking the shortest way and the loser the longest. Its
 * parity says nothing, so its layout is its own (not the DTW byte's halves):
 *   0            draw (no MTC)
 *   1..127       win, the conversion in v plies
 *   128..255     loss, the conversion in v-128 plies (0: no legal move now)
 * dtb_value_wdl reads it as it reads a DTW byte. */
#define DTB_MTC_BYTE_MAX 127 /* the longest MTC a byte holds, for either result */

static inline dtb_value dtb_mtc_byte(bool win, int mtc) { return (dtb_value)(win ? mtc : 128 + mtc); }
/* MTC in plies of a win or loss byte; 0 for a draw (ask dtb_value_wdl first). */
static inline int dtb_mtc_plies(dtb_value v) { return v < 128 ? v : v - 128; }

#endif
