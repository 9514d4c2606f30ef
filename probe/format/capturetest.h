/* "Has the side to move a capture?" for the probe's hot path (internal to libdtb).
 *
 * The same question as core's dtb_has_capture, answered without a branch that depends on the
 * position, on a padded copy of the position's sets: each pair of rows gets one unused "ghost"
 * bit after it (square i goes to bit i + i / (2 * half)), which makes every diagonal step one
 * shift by the same amount for every square (half or half + 1 bits, up or down), and puts every
 * step off the left or right edge onto a ghost bit or off the word. A step of a whole set is then
 * one shift, where core's dense layout needs two masks, two shifts and an or (the step depends on
 * the row's parity). The copy is one pdep per set where the CPU has a fast one (BMI2), else a
 * few shifts per pair of rows. Flying kings are followed along each direction by an occluded
 * fill (Kogge-Stone: steps of 1, 2 and 4 squares) instead of a walk of one step per loop turn,
 * whose exits are hard to predict.
 *
 * Only boards whose padded form fits 64 bits and whose longest diagonal lets a king walk at most
 * 7 empty squares before a capture (8x8 and 10x10) are handled, and init checks every square and
 * direction of the board against the padded steps; for the others `usable` is false and the
 * caller asks dtb_has_capture. tests/test_probe.c compares the two on random positions of every
 * variant.
 *
 * Usage: fill a dtb_capturetest once per board with dtb_capturetest_init, then call
 * dtb_capturetest_has from any number of threads (it only reads). */
#ifndef DTB_CAPTURETEST_H
#define DTB_CAPTURETEST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "movegen.h"
#include "position.h"

#if defined(__AVX2__) || defined(__BMI2__)
#include <immintrin.h>
#endif
#if defined(__BMI2__) && !defined(__znver1__) && !defined(__znver2__)
#define DTB_CT_PDEP_ 1 /* pdep is one fast instruction here (Zen 1 and 2 microcode it) */
#else
#define DTB_CT_PDEP_ 0
#endif

typedef struct dtb_capturetest {
    bool usable;
    bool fly, men_back;
    int half;       /* squares per row when the steps below are the compiled-in ones, else 0 */
    int group;      /* squares per pair of rows (2 * half): each such run gets one ghost bit */
    uint64_t pad;   /* the padded squares (the bits of the board's squares in the padded copy) */
    /* One step in direction d moves a padded set left by l[d] bits or right by r[d] bits. */
    unsigned char l[DTB_DIRS], r[DTB_DIRS];
    /* The same steps as shift counts of the four directions side by side (AVX2: one vector
     * lane per direction), for 1, 2 and 4 steps forward ([k][0] left, [k][1] right), and the
     * lanes where men capture, by side to move (all lanes when men capture backward). */
    uint64_t vshift[3][2][DTB_DIRS];
    uint64_t vmen[2][DTB_DIRS];
} dtb_capturetest;

/* Padded bit of square sq when pairs of rows hold group squares. */
static inline int dtb_capturetest_bit_(int sq, int group) { return sq + sq / group; }

/* The step of direction d on the padded layout of a board with half squares per row: up (d 0,
 * 1) is towards bit 0, and the left neighbour (NW, SW) is one bit further than the right one. */
static inline int dtb_capturetest_step_(int half, int d)
{
    static const int step[DTB_DIRS][2] = {{-1, -1}, {-1, 0}, {1, 0}, {1, 1}};
    return step[d][0] * half + step[d][1];
}

static inline void dtb_capturetest_init(dtb_capturetest *t, const dtb_board *b)
{
    memset(t, 0, sizeof *t);
    const int group = 2 * b->half;
    if (b->squares > 64 || dtb_capturetest_bit_(b->squares - 1, group) > 63)
        return;
    t->fly = b->variant->kings_fly;
    t->men_back = b->variant->men_capture_backward;
    t->group = group;
    for (int sq = 0; sq < b->squares; sq++)
        t->pad |= 1ull << dtb_capturetest_bit_(sq, group);
    /* Every step of every square, checked: a neighbour is the padded bit one step away, and a
     * step off the board lands on no square's bit. */
    for (int d = 0; d < DTB_DIRS; d++) {
        const int s = dtb_capturetest_step_(b->half, d);
        for (int sq = 0; sq < b->squares; sq++) {
            const int to = dtb_capturetest_bit_(sq, group) + s, n = b->next[sq][d];
            if (n >= 0 ? to != dtb_capturetest_bit_(n, group)
                       : to >= 0 && to < 64 && (t->pad >> to & 1))
                return;
            /* The fill reaches 7 squares: enough when no diagonal holds more than 10 squares
             * (king, 7 empty squares, the piece taken, the landing square). */
            int far = sq;
            for (int k = 0; k < 10 && far >= 0; k++)
                far = b->next[far][d];
            if (far >= 0)
                return;
        }
        t->l[d] = (unsigned char)(s > 0 ? s : 0);
        t->r[d] = (unsigned char)(s < 0 ? -s : 0);
        for (int k = 0; k < 3; k++) {
            t->vshift[k][0][d] = (uint64_t)t->l[d] << k;
            t->vshift[k][1][d] = (uint64_t)t->r[d] << k;
        }
        for (int side = 0; side < 2; side++)
            t->vmen[side][d] = (d >> 1) == side || t->men_back ? ~0ull : 0;
    }
    t->usable = true;
    t->half = b->half == 4 || b->half == 5 ? b->half : 0;
}

/* Dense set x (the board's squares) in the padded layout. */
static inline __attribute__((always_inline)) uint64_t dtb_capturetest_pad_(const dtb_capturetest *t,
                                                                            uint64_t x, int half)
{
#if DTB_CT_PDEP_
    (void)half;
    return _pdep_u64(x, t->pad);
#else
    const int group = half ? 2 * half : t->group;
    const uint64_t low = (1ull << group) - 1;
    uint64_t y = 0;
    for (int k = 0; k * (group + 1) < 64; k++)
        y |= ((x >> (k * group)) & low) << (k * (group + 1) & 63);
    return y & t->pad;
#endif
}

/* x moved n bits left (n > 0) or right; n is a constant wherever the compiler can see it. */
#define DTB_CT_SHIFT_(x, n) ((n) >= 0 ? (x) << ((n) & 63) : (x) >> (-(n) & 63))

/* The body of the test. half > 0: the compiled-in steps of that row length, as constant shifts;
 * half == 0: the shifts read from t. Always inlined into a caller that passes a constant. */
static inline __attribute__((always_inline)) bool dtb_capturetest_body_(const dtb_capturetest *t,
                                                                         uint64_t men_, uint64_t kings_,
                                                                         uint64_t opp_, int side, int half)
{
/* k steps in direction d */
#define STEP(x, d, k)                                                                              \
    (half ? DTB_CT_SHIFT_((x), (k) * dtb_capturetest_step_(half, d))                               \
          : (x) << ((k) * t->l[d]) >> ((k) * t->r[d]))
    const uint64_t men = dtb_capturetest_pad_(t, men_, half);
    const uint64_t kings = dtb_capturetest_pad_(t, kings_, half);
    const uint64_t opp = dtb_capturetest_pad_(t, opp_, half);
    const uint64_t empty = t->pad & ~(men | kings | opp);
    /* Men that may capture in a direction: all of them, or only those moving forward. */
    const uint64_t men_back = t->men_back ? men : 0;
    uint64_t hit = 0;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        const int back = d ^ 3;
        /* Squares from which a jump in direction d is possible: an opponent piece one step
         * ahead, an empty square two steps ahead. */
        const uint64_t starts = STEP(STEP(empty, back, 1) & opp, back, 1);
        uint64_t g = kings;
        if (t->fly) {
            /* Kings slide over empty squares: 1, then 2, then 4 more steps. */
            uint64_t pro = empty;
            g |= pro & STEP(g, d, 1);
            pro &= STEP(pro, d, 1);
            g |= pro & STEP(g, d, 2);
            pro &= STEP(pro, d, 2);
            g |= pro & STEP(g, d, 4);
        }
        hit |= (g | ((d >> 1) == side ? men : men_back)) & starts;
    }
    return hit != 0;
#undef STEP
}

#if defined(__AVX2__)
/* The four directions at once, one per 64-bit lane of a vector: the same sets and steps as
 * dtb_capturetest_body_, with the shift counts of each lane read from t. */
static inline bool dtb_capturetest_avx2_(const dtb_capturetest *t, uint64_t men_, uint64_t kings_,
                                         uint64_t opp_, int side)
{
#define LOADV(a) _mm256_loadu_si256((const __m256i *)(const void *)(a))
/* k = 0, 1, 2: 1, 2, 4 steps forward; fwd = 0: one step back */
#define FWD(x, k) _mm256_srlv_epi64(_mm256_sllv_epi64((x), lk[k]), rk[k])
#define BACK(x) _mm256_sllv_epi64(_mm256_srlv_epi64((x), lk[0]), rk[0])
    const uint64_t men = dtb_capturetest_pad_(t, men_, 0);
    const uint64_t kings = dtb_capturetest_pad_(t, kings_, 0);
    const uint64_t opp = dtb_capturetest_pad_(t, opp_, 0);
    const uint64_t empty = t->pad & ~(men | kings | opp);
    const __m256i lk[3] = {LOADV(t->vshift[0][0]), LOADV(t->vshift[1][0]), LOADV(t->vshift[2][0])};
    const __m256i rk[3] = {LOADV(t->vshift[0][1]), LOADV(t->vshift[1][1]), LOADV(t->vshift[2][1])};
    const __m256i e = _mm256_set1_epi64x((long long)empty);
    /* Squares from which a jump is possible: an opponent piece one step ahead, an empty square
     * two steps ahead. */
    const __m256i starts = BACK(_mm256_and_si256(BACK(e), _mm256_set1_epi64x((long long)opp)));
    __m256i g = _mm256_set1_epi64x((long long)kings);
    if (t->fly) {
        __m256i pro = e;
        g = _mm256_or_si256(g, _mm256_and_si256(pro, FWD(g, 0)));
        pro = _mm256_and_si256(pro, FWD(pro, 0));
        g = _mm256_or_si256(g, _mm256_and_si256(pro, FWD(g, 1)));
        pro = _mm256_and_si256(pro, FWD(pro, 1));
        g = _mm256_or_si256(g, _mm256_and_si256(pro, FWD(g, 2)));
    }
    g = _mm256_or_si256(g, _mm256_and_si256(_mm256_set1_epi64x((long long)men), LOADV(t->vmen[side])));
    return !_mm256_testz_si256(g, starts);
#undef LOADV
#undef FWD
#undef BACK
}
#endif

/* Whether side (0 white, 1 black), to move with men and kings against the pieces opp, has a
 * capture: the sets of a valid position, dense (as dtb_pos's low words); t must be usable. */
static inline bool dtb_capturetest_has_sets(const dtb_capturetest *t, uint64_t men, uint64_t kings,
                                            uint64_t opp, int side)
{
#if defined(__AVX2__)
    return dtb_capturetest_avx2_(t, men, kings, opp, side);
#else
    switch (t->half) {
    case 5: return dtb_capturetest_body_(t, men, kings, opp, side, 5);
    case 4: return dtb_capturetest_body_(t, men, kings, opp, side, 4);
    default: return dtb_capturetest_body_(t, men, kings, opp, side, 0);
    }
#endif
}

/* Whether the side to move of p (a valid position) has a capture; t must be usable. */
static inline bool dtb_capturetest_has(const dtb_capturetest *t, const dtb_pos *p)
{
    const int side = p->side;
    return dtb_capturetest_has_sets(t, (uint64_t)p->men[side], (uint64_t)p->kings[side],
                                    (uint64_t)(p->men[side ^ 1] | p->kings[side ^ 1]), side);
}

/* dtb_capturetest_has where t is usable, else core's dtb_has_capture on board b (t's board). */
static inline bool dtb_capturetest_or_core(const dtb_capturetest *t, const dtb_board *b,
                                           const dtb_pos *p)
{
    return t->usable ? dtb_capturetest_has(t, p) : dtb_has_capture(b, p);
}

/* A board and its capture test, for callbacks that take (user, position) such as the threat
 * rule's (probe/format/threat.h): fill board, then dtb_capturetest_init(&ct, board). */
typedef struct dtb_capture_oracle {
    const dtb_board *board;
    dtb_capturetest ct;
} dtb_capture_oracle;

/* dtb_capturetest_or_core of the dtb_capture_oracle at user. */
static inline bool dtb_capture_oracle_has(const void *user, const dtb_pos *p)
{
    const dtb_capture_oracle *o = user;
    return dtb_capturetest_or_core(&o->ct, o->board, p);
}

#endif
