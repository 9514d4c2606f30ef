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
    int half; /* squares per row when the steps are core's dense-layout shifts (compiled in), else 0 */
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

/* The dense layout's one-step shift for direction d and row parity p (as in core/movegen.c). */
static inline int dtb_capturetest_shift_(int half, int d, int p)
{
    static const int base[DTB_DIRS][2] = {{0, -1}, {1, 0}, {0, -1}, {1, 0}};
    return (d < 2 ? -half : half) + base[d][p];
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
    t->half = b->half;
    for (int d = 0; d < DTB_DIRS; d++)
        for (int p = 0; p < 2; p++)
            if (b->step_shift[d][p] != dtb_capturetest_shift_(b->half, d, p))
                t->half = 0;
}

/* x shifted by n bits (n < 0: towards bit 0); n is a constant wherever the compiler can see it. */
#define DTB_CT_SHIFT_(x, n) ((n) >= 0 ? (x) << ((n) & 63) : (x) >> (-(n) & 63))

/* The body of the test. half > 0: the steps of core's dense layout with that row length, as
 * constant shifts; half == 0: the shifts read from t. Always inlined into a caller that passes a
 * constant. */
static inline __attribute__((always_inline)) bool dtb_capturetest_body_(const dtb_capturetest *t,
                                                                         const dtb_pos *p, int half)
{
#define STEP1(x, d)                                                                             \
    (half ? DTB_CT_SHIFT_((x) & t->m1[d][0], dtb_capturetest_shift_(half, d, 0)) |               \
                DTB_CT_SHIFT_((x) & t->m1[d][1], dtb_capturetest_shift_(half, d, 1))             \
          : ((((x) & t->m1[d][0]) << t->l1[d][0]) >> t->r1[d][0]) |                               \
                ((((x) & t->m1[d][1]) << t->l1[d][1]) >> t->r1[d][1]))
/* 2 * pairs steps along d: each pair is one step from each row parity, the same shift for all */
#define STEPK(x, d, m, l, r, pairs)                                                              \
    (half ? DTB_CT_SHIFT_((x) & t->m[d], (pairs) * (dtb_capturetest_shift_(half, d, 0) +         \
                                                   dtb_capturetest_shift_(half, d, 1)))          \
          : ((((x) & t->m[d]) << t->l[d]) >> t->r[d]))
    const int side = p->side;
    const uint64_t men = (uint64_t)p->men[side], kings = (uint64_t)p->kings[side];
    const uint64_t opp = (uint64_t)(p->men[side ^ 1] | p->kings[side ^ 1]);
    const uint64_t empty = t->all & ~(men | kings | opp);
    /* Men that may capture in a direction: all of them, or only those moving forward. */
    const uint64_t men_fwd = men, men_back = t->men_back ? men : 0;
    uint64_t hit = 0;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        const int back = d ^ 3;
        /* Squares from which a jump in direction d is possible: an opponent piece one step
         * ahead, an empty square two steps ahead. */
        const uint64_t starts = STEP1(STEP1(empty, back) & opp, back);
        uint64_t g = kings | ((d >> 1) == side ? men_fwd : men_back);
        if (t->fly) {
            /* Kings (men may join the fill: they stand on their own square, which they keep)
             * slide over empty squares: 1, then 2, then 4 more steps. */
            uint64_t pro = empty;
            g |= pro & STEP1(g & kings, d);
            pro &= STEP1(pro, d);
            g |= pro & STEPK(g & ~men, d, m2, l2, r2, 1);
            pro &= STEPK(pro, d, m2, l2, r2, 1);
            g |= pro & STEPK(g & ~men, d, m4, l4, r4, 2);
        }
        hit |= g & starts;
    }
    return hit != 0;
#undef STEP1
#undef STEPK
}

/* Whether the side to move of p (a valid position) has a capture; t must be usable. */
static inline bool dtb_capturetest_has(const dtb_capturetest *t, const dtb_pos *p)
{
    switch (t->half) {
    case 5: return dtb_capturetest_body_(t, p, 5);
    case 4: return dtb_capturetest_body_(t, p, 4);
    default: return dtb_capturetest_body_(t, p, 0);
    }
}

#endif
