/* Algebraic square names (square_name.h): the board's row and column, read bottom-up. */
#include "square_name.h"

#include <stdio.h>

void dtb_square_name(const dtb_board *b, int i, char out[DTB_SQUARE_NAME_MAX])
{
    const int col = dtb_board_col(b, i), rank = b->size - dtb_board_row(b, i);
    snprintf(out, DTB_SQUARE_NAME_MAX, "%c%d", 'a' + col, rank);
}

dtb_square_kind dtb_square_parse_name(const dtb_board *b, const char *s, int *square, int *len)
{
    *square = -1;
    *len = 0;
    if (s[0] < 'a' || s[0] > 'z' || s[1] < '0' || s[1] > '9')
        return DTB_SQUARE_NOT_A_NAME;
    int n = 1, rank = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 4) /* at most 3 digits are read as the rank */
        rank = rank * 10 + (s[n++] - '0');
    while (s[n] >= '0' && s[n] <= '9') /* and the rest taken with it, as off the board */
        n++, rank = 1000;
    *len = n;
    const int col = s[0] - 'a', row = b->size - rank;
    if (col >= b->size || rank < 1 || rank > b->size)
        return DTB_SQUARE_OFF_BOARD;
    *square = dtb_board_square(b, row, col);
    return *square >= 0 ? DTB_SQUARE_PLAYABLE : DTB_SQUARE_LIGHT;
}
