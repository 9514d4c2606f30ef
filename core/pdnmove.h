/* PDN move text: "32-28" for a quiet move, "28x19" for a capture, "28x19x8" (every landing
 * square) when two legal moves share start and end; in algebraic notation every capture with
 * its landings ("c5:e7:g5"). Read also accepts ':' as the capture
 * separator and the full landing list for any capture. Thread-safe. */
#ifndef DTB_PDNMOVE_H
#define DTB_PDNMOVE_H

#include <stddef.h>

#include "fen.h" /* dtb_notation */
#include "movegen.h"

/* Longest move text with its NUL. */
#define DTB_MOVE_TEXT_MAX 128

/* Writes legal move m of p into buf. Returns DTB_OK, DTB_E_OVERFLOW, or DTB_E_INVALID when m is
 * not a legal move of p. */
dtb_status dtb_move_write(const dtb_board *b, const dtb_pos *p, const dtb_move *m, char *buf,
                          size_t size);

/* dtb_move_write in notation n: with algebraic squares and ':' for captures, every landing
 * square written as russian and brazilian players do ("c3-d4", "c3:e5", "c5:e7:g5") where n is
 * DTB_NOTATION_ALGEBRAIC. */
dtb_status dtb_move_write_in(const dtb_board *b, const dtb_pos *p, const dtb_move *m,
                             dtb_notation n, char *buf, size_t size);

/* Finds the legal move of p that text names (squares as numbers, or in the variants whose
 * players write them so, as names: "c3-d4", "c3:e5"). DTB_E_INVALID with a message when the text is
 * malformed, names no legal move, or is ambiguous (the message lists the candidates). */
dtb_status dtb_move_read(const dtb_board *b, const dtb_pos *p, const char *text, dtb_move *m,
                         dtb_error *e);

#endif
