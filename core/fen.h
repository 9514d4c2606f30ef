/* PDN FEN (docs/DESIGN.md §9): "W:W31,32,K33:B1,2,K3".
 * Read: side to move W/B, then colour sections in either order, squares separated by commas,
 * K marks a king, ranges "31-50" (also "K1-3"), an optional trailing dot, unknown ":X..." fields
 * skipped. Written canonically: side, white section, black section, squares ascending, no ranges,
 * no dot. A side without pieces has a bare section: "W:W31:B". Thread-safe.
 *
 * Fields: after the side letter each ':' starts a field named by its first character. "W" and
 * "B" are the colour sections, each at most once; a colour left out has no pieces ("W:W28").
 * Any other letter names an unknown field (":H0", ":Z3", ":FEN..."), skipped up to the next ':'
 * or the trailing dot -- unless its value has the shape of a piece list (a comma, a range dash, or K before a
 * square: ":R1,2", ":XK5"), which makes it a colour section with an unknown colour letter, an
 * error. Lower-case "w"/"b" are always unknown colour letters, and a field starting with a
 * digit or K lacks its colour letter; both are errors. White space between tokens is allowed.
 * In the variants whose players write squares algebraically (russian, brazilian) a square may
 * also be a name: "W:Wc3,Ke1:Bf6,h8" (core/square_name.h); a name elsewhere, off the board or on
 * a light square is an error naming the token. */
#ifndef DTB_FEN_H
#define DTB_FEN_H

#include <stdbool.h>
#include <stddef.h>

#include "position.h"

/* Longest canonical FEN of any variant, with its terminating NUL. */
#define DTB_FEN_MAX 400

/* Parses text into *p and validates it (dtb_pos_validate). On error returns DTB_E_INVALID and a
 * one-line message in *e naming the problem (empty text, bad side letter, unknown colour,
 * square out of range, square listed twice, man on its promotion row, too many pieces, stray
 * characters); *p is then unspecified. */
dtb_status dtb_fen_read(const dtb_board *b, const char *text, dtb_pos *p, dtb_error *e);

/* The halfmove clock of text's "H" field (lidraughts' FEN: "W:W31,K32:B1:H12:F5", the plies
 * since the move-count rules' counter was last reset): *clock gets its value and *present true,
 * or 0 and false when text has no H field. The H field is read wherever it stands among the
 * fields; nothing else of text is checked (dtb_fen_read does that). On a malformed H (no digits,
 * anything but digits, a sign, more than 1000000, a second H) returns DTB_E_INVALID with a
 * one-line message in *e naming it. */
dtb_status dtb_fen_read_clock(const char *text, int *clock, bool *present, dtb_error *e);

/* Writes p canonically with square numbers into buf (size bytes, DTB_FEN_MAX is always
 * enough). Returns DTB_OK or DTB_E_OVERFLOW (buf then holds a truncated, NUL-terminated
 * string). */
dtb_status dtb_fen_write(const dtb_board *b, const dtb_pos *p, char *buf, size_t size);

/* The notation the players of b's variant write (dtb_variant.algebraic). */
dtb_notation dtb_notation_of(const dtb_board *b);

/* dtb_fen_write in notation n: "W:WKc1:BKh8" for W:WK30:BK4 on 8x8; squares in the order of
 * their numbers either way. */
dtb_status dtb_fen_write_in(const dtb_board *b, const dtb_pos *p, dtb_notation n, char *buf,
                            size_t size);

#endif
