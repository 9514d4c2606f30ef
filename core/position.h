/* A position: four piece sets and the side to move. A plain value type (copy it freely). */
#ifndef DTB_POSITION_H
#define DTB_POSITION_H

#include <stdbool.h>
#include <stddef.h>

#include "bitboard.h"
#include "board.h"
#include "dtb_status.h"

typedef struct dtb_pos {
    dtb_bb men[2];   /* indexed by dtb_color */
    dtb_bb kings[2];
    dtb_color side;  /* side to move */
} dtb_pos;


/* One-line, human-readable description of a problem, filled by functions that can reject input. */
typedef struct dtb_error {
    char msg[160];
} dtb_error;

/* Fills *e (when not NULL) with a printf-style message and returns status s. */
dtb_status dtb_error_set(dtb_error *e, dtb_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline dtb_bb dtb_pos_pieces(const dtb_pos *p, dtb_color c) { return p->men[c] | p->kings[c]; }

static inline dtb_bb dtb_pos_occupied(const dtb_pos *p)
{
    return p->men[0] | p->men[1] | p->kings[0] | p->kings[1];
}

static inline bool dtb_pos_equal(const dtb_pos *a, const dtb_pos *b)
{
    return a->side == b->side && a->men[0] == b->men[0] && a->men[1] == b->men[1] &&
           a->kings[0] == b->kings[0] && a->kings[1] == b->kings[1];
}

/* The variant's start position (white to move). */
void dtb_pos_start(const dtb_board *b, dtb_pos *p);

/* Checks that p could occur in a game of b's variant: pieces on playable squares, no square
 * taken twice, no man on its own promotion row, no more pieces per side than the variant starts
 * with. Returns DTB_OK or DTB_E_INVALID with a message in *e. */
dtb_status dtb_pos_validate(const dtb_board *b, const dtb_pos *p, dtb_error *e);

static inline uint64_t dtb_reverse64(uint64_t x)
{
    x = __builtin_bswap64(x);
    x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
    x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((x & 0x0F0F0F0F0F0F0F0Full) << 4);
    return x;
}

/* Mirror image of set s under the flip's square map (i -> squares-1-i): all 128 bits reversed,
 * then slid back down to bit 0. Inline: the solver and the probe flip on every step. */
static inline dtb_bb dtb_bb_reverse(const dtb_board *b, dtb_bb s)
{
    if (b->squares <= 64) /* 8x8 and 10x10: the high word is empty */
        return (dtb_bb)(dtb_reverse64((uint64_t)s) >> (64 - b->squares));
    const dtb_bb r = ((dtb_bb)dtb_reverse64((uint64_t)s) << 64) | dtb_reverse64((uint64_t)(s >> 64));
    return r >> (128 - b->squares);
}

#if defined(__AVX2__)
#include <immintrin.h>
/* Each 64-bit lane of v mirrored under the flip's square map (bit i -> squares-1-i), on boards of
 * up to 64 squares: dtb_reverse64(x) >> (64 - squares) for four sets at once. Bytes are reversed
 * by a shuffle, the bits of each byte by two nibble lookups (one shuffle each), instead of a byte
 * swap and three mask-and-shift rounds per set: the probe flips every black-to-move position and
 * the solver every capture's result. */
static inline __m256i dtb_mirror4(__m256i v, int squares)
{
    const __m256i bswap = _mm256_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
                                          8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    /* a nibble's bits reversed, in the high nibble (rev_hi) or the low one (rev_lo) */
    const __m256i rev_hi = _mm256_set_epi8(
        (char)0xF0, 0x70, (char)0xB0, 0x30, (char)0xD0, 0x50, (char)0x90, 0x10, (char)0xE0, 0x60,
        (char)0xA0, 0x20, (char)0xC0, 0x40, (char)0x80, 0x00, (char)0xF0, 0x70, (char)0xB0, 0x30,
        (char)0xD0, 0x50, (char)0x90, 0x10, (char)0xE0, 0x60, (char)0xA0, 0x20, (char)0xC0, 0x40,
        (char)0x80, 0x00);
    const __m256i rev_lo = _mm256_set_epi8(15, 7, 11, 3, 13, 5, 9, 1, 14, 6, 10, 2, 12, 4, 8, 0,
                                           15, 7, 11, 3, 13, 5, 9, 1, 14, 6, 10, 2, 12, 4, 8, 0);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    v = _mm256_shuffle_epi8(v, bswap);
    v = _mm256_or_si256(_mm256_shuffle_epi8(rev_hi, _mm256_and_si256(v, low4)),
                        _mm256_shuffle_epi8(rev_lo, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4)));
    return _mm256_srl_epi64(v, _mm_cvtsi32_si128(64 - squares));
}
#endif

/* The colour flip: square i -> squares-1-i, colours swapped, side to move swapped. A position and
 * its flip have the same value; tables store white to move and answer black to move by the flip. */
static inline void dtb_pos_flip(const dtb_board *b, const dtb_pos *p, dtb_pos *out)
{
    const dtb_pos in = *p; /* out may alias p */
    out->men[DTB_WHITE] = dtb_bb_reverse(b, in.men[DTB_BLACK]);
    out->men[DTB_BLACK] = dtb_bb_reverse(b, in.men[DTB_WHITE]);
    out->kings[DTB_WHITE] = dtb_bb_reverse(b, in.kings[DTB_BLACK]);
    out->kings[DTB_BLACK] = dtb_bb_reverse(b, in.kings[DTB_WHITE]);
    out->side = in.side == DTB_WHITE ? DTB_BLACK : DTB_WHITE;
}

#endif
