/* "Has the side to move a capture?" for the probe's hot path (internal to libdtb).
 *
 * The same question as core's dtb_has_capture, answered without a branch that depends on the
 * position: flying kings are followed along each direction by an occluded fill (Kogge-Stone:
 * steps of 1, 2 and 4 squares) instead of a walk of one step per loop turn, whose exits are
 * hard to predict. Only boards of at most 64 squares whose longest diagonal lets a king walk
 * at most 7 empty squares before a capture (8x8 and 10x10) are handled; for the others `usable`
 * is false and the caller asks dtb_has_capture. tests/test_probe.c compares the two on random
 * positions of every variant.
 *
 * Usage: fill a dtb_capturetest once per board with dtb_capturetest_init, then call
 * dtb_capturetest_has from any number of threads (it only reads). */
#ifndef DTB_CAPTURETEST_H
#define DTB_CAPTURETEST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "position.h"

typedef struct dtb_capturetest {
    bool usable;
    bool fly, men_back;
    uint64_t all;
    /* One step in direction d: squares of parity p in m1[d][p] move left by l1 then right by r1
     * (one of the two is 0). Two and four steps along one direction move every square by the
     * same amount (one step of each row parity per two steps). */
    uint64_t m1[DTB_DIRS][2];
    unsigned char l1[DTB_DIRS][2], r1[DTB_DIRS][2];
    uint64_t m2[DTB_DIRS], m4[DTB_DIRS];
    unsigned char l2[DTB_DIRS], r2[DTB_DIRS], l4[DTB_DIRS], r4[DTB_DIRS];
} dtb_capturetest;

/* Square k steps from sq in direction d, or -1. */
static inline int dtb_capturetest_walk_(const dtb_board *b, int sq, int d, int k)
{
    for (; k > 0 && sq >= 0; k--)
        sq = b->next[sq][d];
    return sq;
}

static inline void dtb_capturetest_init(dtb_capturetest *t, const dtb_board *b)
{
    memset(t, 0, sizeof *t);
    if (b->squares > 64)
        return;
    t->fly = b->variant->kings_fly;
    t->men_back = b->variant->men_capture_backward;
    t->all = (uint64_t)b->all;
    for (int d = 0; d < DTB_DIRS; d++) {
        for (int p = 0; p < 2; p++) {
            t->m1[d][p] = (uint64_t)b->step_from[d][p];
            const int s = b->step_shift[d][p];
            t->l1[d][p] = (unsigned char)(s > 0 ? s : 0);
            t->r1[d][p] = (unsigned char)(s < 0 ? -s : 0);
        }
        int shift2 = 0, shift4 = 0;
        bool set2 = false, set4 = false;
        for (int sq = 0; sq < b->squares; sq++) {
            const int to2 = dtb_capturetest_walk_(b, sq, d, 2), to4 = dtb_capturetest_walk_(b, sq, d, 4);
            if (to2 >= 0) {
                if (set2 && to2 - sq != shift2)
                    return; /* not a uniform shift: not this layout */
                shift2 = to2 - sq, set2 = true;
                t->m2[d] |= 1ull << sq;
            }
            if (to4 >= 0) {
                if (set4 && to4 - sq != shift4)
                    return;
                shift4 = to4 - sq, set4 = true;
                t->m4[d] |= 1ull << sq;
            }
            /* The fill reaches 7 squares: enough when no diagonal holds more than 10 squares
             * (king, 7 empty squares, the piece taken, the landing square). */
            if (dtb_capturetest_walk_(b, sq, d, 10) >= 0)
                return;
        }
        t->l2[d] = (unsigned char)(shift2 > 0 ? shift2 : 0);
        t->r2[d] = (unsigned char)(shift2 < 0 ? -shift2 : 0);
        t->l4[d] = (unsigned char)(shift4 > 0 ? shift4 : 0);
        t->r4[d] = (unsigned char)(shift4 < 0 ? -shift4 : 0);
    }
    t->usable = true;
}

static inline uint64_t dtb_capturetest_step_(const dtb_capturetest *t, uint64_t x, int d)
{
    return (((x & t->m1[d][0]) << t->l1[d][0]) >> t->r1[d][0]) |
           (((x & t->m1[d][1]) << t->l1[d][1]) >> t->r1[d][1]);
}

/* Whether the side to move of p (a valid position) has a capture; t must be usable. */
static inline bool dtb_capturetest_has(const dtb_capturetest *t, const dtb_pos *p)
{
    const int side = p->side;
    const uint64_t men = (uint64_t)p->men[side], kings = (uint64_t)p->kings[side];
    const uint64_t opp = (uint64_t)(p->men[side ^ 1] | p->kings[side ^ 1]);
    const uint64_t empty = t->all & ~(men | kings | opp);
    uint64_t hit = 0;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        const int back = d ^ 3;
        /* Squares from which a jump in direction d is possible: an opponent piece one step
         * ahead, an empty square two steps ahead. */
        const uint64_t starts =
            dtb_capturetest_step_(t, dtb_capturetest_step_(t, empty, back) & opp, back);
        if (t->men_back || (d >> 1) == side)
            hit |= men & starts;
        uint64_t g = kings;
        if (t->fly) {
            uint64_t pro = empty;
            g |= pro & dtb_capturetest_step_(t, g, d);
            pro &= dtb_capturetest_step_(t, pro, d);
            g |= pro & (((g & t->m2[d]) << t->l2[d]) >> t->r2[d]);
            pro &= ((pro & t->m2[d]) << t->l2[d]) >> t->r2[d];
            g |= pro & (((g & t->m4[d]) << t->l4[d]) >> t->r4[d]);
        }
        hit |= g & starts;
    }
    return hit != 0;
}

#endif
