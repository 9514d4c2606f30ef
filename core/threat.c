/* The threat don't-care rule (threat.h). Two nested walks over lookups(): the outer one from
 * the position asked about (lists 2 and 3), the inner one from each threat position it meets
 * (lists 0 and 1); each stops at the first position that fails. */
#include "threat.h"

bool dtb_threat(const dtb_board *b, const dtb_pos *p)
{
    dtb_pos o = *p;
    o.side = p->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE;
    return dtb_has_capture(b, &o);
}

static bool lookups_pass(const dtb_board *b, const dtb_pos *p, bool own_flip, int depth,
                         dtb_movelist *const lists[4]);

/* Whether x (a position of lookups(), quiet) passes at this depth: it is not a threat position,
 * or, at depth 1, its own lookups pass at depth 0 (hold no threat position). */
static bool passes(const dtb_board *b, const dtb_pos *x, bool own_flip, int depth,
                   dtb_movelist *const lists[4])
{
    return !dtb_threat(b, x) || (depth > 0 && lookups_pass(b, x, own_flip, depth - 1, lists));
}

/* Whether every position of lookups(p) passes at depth; p quiet. */
static bool lookups_pass(const dtb_board *b, const dtb_pos *p, bool own_flip, int depth,
                         dtb_movelist *const lists[4])
{
    dtb_movelist *const mine = lists[2 * depth], *const next = lists[2 * depth + 1];
    if (dtb_generate(b, p, mine) != DTB_OK)
        return false;
    for (int i = 0; i < mine->count; i++) {
        if (mine->moves[i].promotes)
            continue;
        dtb_pos q;
        dtb_make_move(p, &mine->moves[i], &q);
        if (dtb_has_capture(b, &q))
            continue;
        if (own_flip) {
            if (!passes(b, &q, own_flip, depth, lists))
                return false;
            continue;
        }
        if (dtb_generate(b, &q, next) != DTB_OK)
            return false;
        for (int j = 0; j < next->count; j++) {
            if (next->moves[j].promotes)
                continue;
            dtb_pos x;
            dtb_make_move(&q, &next->moves[j], &x);
            if (!dtb_has_capture(b, &x) && !passes(b, &x, own_flip, depth, lists))
                return false;
        }
    }
    return true;
}

bool dtb_threat_dontcare(const dtb_board *b, const dtb_pos *p, bool own_flip,
                         dtb_movelist *const lists[4])
{
    return dtb_threat(b, p) && lookups_pass(b, p, own_flip, 1, lists);
}
