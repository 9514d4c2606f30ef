/* Geometry from row/column arithmetic. Row r holds columns 2k+1 (r even) or 2k (r odd). */
#include "board.h"

#include <assert.h>
#include <string.h>

static const int dir_drow[DTB_DIRS] = {-1, -1, 1, 1};
static const int dir_dcol[DTB_DIRS] = {-1, 1, -1, 1};

int dtb_board_row(const dtb_board *b, int i) { return i / b->half; }

int dtb_board_col(const dtb_board *b, int i)
{
    const int r = i / b->half, k = i % b->half;
    return 2 * k + (r % 2 == 0 ? 1 : 0);
}

int dtb_board_square(const dtb_board *b, int row, int col)
{
    if (row < 0 || row >= b->size || col < 0 || col >= b->size)
        return -1;
    if ((col % 2 == 1) != (row % 2 == 0))
        return -1;
    return row * b->half + col / 2;
}

void dtb_board_init(dtb_board *b, const dtb_variant *v)
{
    assert(v && v->board_size * v->board_size / 2 <= DTB_MAX_SQUARES);
    memset(b, 0, sizeof *b);
    b->variant = v;
    b->size = v->board_size;
    b->half = v->board_size / 2;
    b->squares = b->size * b->half;
    for (int i = 0; i < b->squares; i++) {
        b->all |= dtb_bb_bit(i);
        const int r = dtb_board_row(b, i), c = dtb_board_col(b, i);
        if (r == 0)
            b->promotion[DTB_WHITE] |= dtb_bb_bit(i);
        if (r == b->size - 1)
            b->promotion[DTB_BLACK] |= dtb_bb_bit(i);
        for (int d = 0; d < DTB_DIRS; d++) {
            const int n = dtb_board_square(b, r + dir_drow[d], c + dir_dcol[d]);
            b->next[i][d] = (int8_t)n;
            if (n < 0)
                continue;
            /* The shift depends only on direction and row parity; record it once. */
            const int p = r % 2;
            b->step_shift[d][p] = n - i;
            b->step_from[d][p] |= dtb_bb_bit(i);
        }
    }
    for (int i = 0; i < b->squares; i++)
        for (int d = 0; d < DTB_DIRS; d++)
            for (int n = b->next[i][d]; n >= 0; n = b->next[n][d])
                b->ray[i][d] |= dtb_bb_bit(n);
}
