/* The threat don't-care rule (threat.h). Two nested walks over lookups(): the outer one from
 * the position asked about (lists 2 and 3), the inner one from each threat position it meets
 * (lists 0 and 1); each stops at the first position that fails. */
#include "threat.h"

/* The rule's walk: the board, its questions (ops, or core's when NULL), the lists. */
typedef struct walk {
    const dtb_board *b;
    const dtb_threat_ops *ops;
    bool own_flip;
    dtb_movelist *const *lists;
} walk;

static inline bool has_capture(const walk *w, const dtb_pos *p)
{
    return w->ops && w->ops->has_capture ? w->ops->has_capture(w->ops->user, p)
                                         : dtb_has_capture(w->b, p);
}

static inline bool moves(const walk *w, const dtb_pos *p, dtb_movelist *out)
{
    return (w->ops && w->ops->quiet_moves ? w->ops->quiet_moves(w->ops->user, p, out)
                                          : dtb_generate(w->b, p, out)) == DTB_OK;
}

/* Whether quiet position x is a threat position. */
static inline bool threat(const walk *w, const dtb_pos *x)
{
    dtb_pos o = *x;
    o.side = x->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE;
    return has_capture(w, &o);
}

static bool lookups_pass(const walk *w, const dtb_pos *p, int depth);

/* Whether x (a position of lookups(), quiet) passes at this depth: it is not a threat position,
 * or, at depth 1, its own lookups pass at depth 0 (hold no threat position). */
static bool passes(const walk *w, const dtb_pos *x, int depth)
{
    return !threat(w, x) || (depth > 0 && lookups_pass(w, x, depth - 1));
}

/* Whether every position of lookups(p) passes at depth; p quiet. */
static bool lookups_pass(const walk *w, const dtb_pos *p, int depth)
{
    dtb_movelist *const mine = w->lists[2 * depth], *const next = w->lists[2 * depth + 1];
    if (!moves(w, p, mine))
        return false;
    for (int i = 0; i < mine->count; i++) {
        if (mine->moves[i].promotes)
            continue;
        dtb_pos q;
        dtb_make_move(p, &mine->moves[i], &q);
        if (has_capture(w, &q))
            continue;
        if (w->own_flip) {
            if (!passes(w, &q, depth))
                return false;
            continue;
        }
        if (!moves(w, &q, next))
            return false;
        for (int j = 0; j < next->count; j++) {
            if (next->moves[j].promotes)
                continue;
            dtb_pos x;
            dtb_make_move(&q, &next->moves[j], &x);
            if (!has_capture(w, &x) && !passes(w, &x, depth))
                return false;
        }
    }
    return true;
}

bool dtb_threat_dontcare(const dtb_board *b, const dtb_pos *p, bool own_flip,
                         dtb_movelist *const lists[4], const dtb_threat_ops *ops)
{
    const walk w = {.b = b, .ops = ops, .own_flip = own_flip, .lists = lists};
    return threat(&w, p) && lookups_pass(&w, p, 1);
}
