/* Algebraic names of squares (PDN GameType 25/26, as russian and brazilian players write them):
 * files a, b, c, ... from white's left, ranks 1, 2, ... from white's side, so on 8x8 square 1 is
 * b8, 4 is h8, 5 is a7 and 29 is a1. Defined for every board (files and ranks are geometry);
 * which variants write them by default is dtb_variant.algebraic. Thread-safe (pure functions). */
#ifndef DTB_SQUARE_NAME_H
#define DTB_SQUARE_NAME_H

#include <stddef.h>

#include "board.h"

/* Longest name with its NUL ("l12" on 12x12). */
#define DTB_SQUARE_NAME_MAX 4

/* The name of square index i (0-based) into out. */
void dtb_square_name(const dtb_board *b, int i, char out[DTB_SQUARE_NAME_MAX]);

/* What a name at s is: its square index, and in *len the characters it takes. */
typedef enum dtb_square_kind {
    DTB_SQUARE_PLAYABLE,  /* *square is the index */
    DTB_SQUARE_LIGHT,     /* a square of the board nobody plays on ("a8" on 8x8) */
    DTB_SQUARE_OFF_BOARD, /* a file or rank the board does not have ("i9" on 8x8) */
    DTB_SQUARE_NOT_A_NAME /* s does not start with a lower-case letter and a digit */
} dtb_square_kind;

dtb_square_kind dtb_square_parse_name(const dtb_board *b, const char *s, int *square, int *len);

#endif
