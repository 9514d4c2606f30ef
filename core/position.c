#include "position.h"

#include <stdarg.h>
#include <stdio.h>

#include "square_name.h"

dtb_status dtb_error_set(dtb_error *e, dtb_status s, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

void dtb_pos_start(const dtb_board *b, dtb_pos *p)
{
    const int n = b->variant->start_rows * b->half;
    *p = (dtb_pos){0};
    for (int i = 0; i < n; i++) {
        p->men[DTB_BLACK] |= dtb_bb_bit(i);
        p->men[DTB_WHITE] |= dtb_bb_bit(b->squares - 1 - i);
    }
    p->side = DTB_WHITE;
}

/* Square index i as the variant's players write it ("c3" in russian, "28" in international),
 * so that a message names squares as the FEN it is about did. */
static void square_text(const dtb_board *b, int i, char out[8])
{
    if (b->variant->algebraic)
        dtb_square_name(b, i, out);
    else
        snprintf(out, 8, "%d", i + 1);
}

dtb_status dtb_pos_validate(const dtb_board *b, const dtb_pos *p, dtb_error *e)
{
    char square[8];
    static const char *const names[2] = {"white", "black"};
    const dtb_bb sets[4] = {p->men[0], p->kings[0], p->men[1], p->kings[1]};
    dtb_bb seen = 0;
    for (int k = 0; k < 4; k++) {
        if (sets[k] & ~b->all)
            return dtb_error_set(e, DTB_E_INVALID, "a piece stands outside the %dx%d board",
                                 b->size, b->size);
        if (sets[k] & seen) {
            square_text(b, dtb_bb_lowest(sets[k] & seen), square);
            return dtb_error_set(e, DTB_E_INVALID, "square %s holds two pieces", square);
        }
        seen |= sets[k];
    }
    const int limit = b->variant->start_rows * b->half;
    for (int c = 0; c < 2; c++) {
        if (p->men[c] & b->promotion[c]) {
            square_text(b, dtb_bb_lowest(p->men[c] & b->promotion[c]), square);
            return dtb_error_set(e, DTB_E_INVALID, "%s man on its promotion row (square %s)",
                                 names[c], square);
        }
        const int n = dtb_bb_count(dtb_pos_pieces(p, (dtb_color)c));
        if (n > limit)
            return dtb_error_set(e, DTB_E_INVALID, "%s has %d pieces, more than the %d of the start",
                                 names[c], n, limit);
    }
    if (p->side != DTB_WHITE && p->side != DTB_BLACK)
        return dtb_error_set(e, DTB_E_INVALID, "no side to move");
    return DTB_OK;
}
