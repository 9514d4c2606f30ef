/* The public dtb_position (probe/dtb.h) of an internal dtb_pos (core/position.h) and back, for
 * the tests and benches that probe through libdtb positions they built with the core. */
#ifndef DTB_TEST_PUBLIC_POSITION_H
#define DTB_TEST_PUBLIC_POSITION_H

#include <stdint.h>

#include "dtb.h"
#include "position.h"

static inline dtb_position pub(const dtb_pos *p)
{
    dtb_position x;
    dtb_position_clear(&x, p->side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK);
    for (int c = 0; c < 2; c++) {
        x.men[c][0] = (uint64_t)p->men[c];
        x.men[c][1] = (uint64_t)(p->men[c] >> 64);
        x.kings[c][0] = (uint64_t)p->kings[c];
        x.kings[c][1] = (uint64_t)(p->kings[c] >> 64);
    }
    return x;
}

/* The core's position of a public one. */
static inline dtb_pos core_of(const dtb_position *q)
{
    dtb_pos p;
    for (int c = 0; c < 2; c++) {
        p.men[c] = (dtb_bb)q->men[c][1] << 64 | q->men[c][0];
        p.kings[c] = (dtb_bb)q->kings[c][1] << 64 | q->kings[c][0];
    }
    p.side = q->side == DTB_SIDE_WHITE ? DTB_WHITE : DTB_BLACK;
    return p;
}

#endif
