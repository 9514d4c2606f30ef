/* Depth-first walk of the move tree. The last ply is not walked: dtb_count_moves counts the
 * leaves of a node at once ("bulk counting"). */
#include "perft.h"

#include <assert.h>

uint64_t dtb_perft(const dtb_board *b, const dtb_pos *p, int depth)
{
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return (uint64_t)dtb_count_moves(b, p);
    dtb_movelist list;
    const dtb_status st = dtb_generate(b, p, &list);
    assert(st == DTB_OK);
    (void)st;
    uint64_t nodes = 0;
    for (int i = 0; i < list.count; i++) {
        dtb_pos q;
        dtb_make_move(p, &list.moves[i], &q);
        nodes += dtb_perft(b, &q, depth - 1);
    }
    return nodes;
}
