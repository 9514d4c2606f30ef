/* Legal move generation for every variant (docs/DESIGN.md §5), and making moves.
 *
 * A move is identified by (from, to, captured set): capture routes that differ only in the
 * order of the squares they pass are one move. Thread-safe: no shared state.
 */
#ifndef DTB_MOVEGEN_H
#define DTB_MOVEGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "position.h"

/* Enough for any position of up to 30 pieces a side; generation reports DTB_E_OVERFLOW rather
 * than write past it. */
#define DTB_MAX_MOVES 1024

typedef struct dtb_move {
    dtb_bb captured;  /* squares of the captured pieces (empty for a quiet move) */
    uint8_t from, to; /* square indexes (0-based) */
    uint8_t ncaptured;
    bool promotes;    /* a man that ends the move as a king */
} dtb_move;

typedef struct dtb_movelist {
    int count;
    dtb_move moves[DTB_MAX_MOVES];
} dtb_movelist;

/* All legal moves of p's side to move into *out. Captures are compulsory (and, where the variant
 * says so, only those taking the most pieces). Returns DTB_OK, or DTB_E_OVERFLOW if the list
 * would exceed DTB_MAX_MOVES. p must be valid (dtb_pos_validate). */
dtb_status dtb_generate(const dtb_board *b, const dtb_pos *p, dtb_movelist *out);

/* Number of legal moves of p, as dtb_generate would count them, but faster when p has no
 * capture (bulk counting for perft). */
int dtb_count_moves(const dtb_board *b, const dtb_pos *p);

/* Number of quiet moves the kings on `kings` have over the `empty` squares (flying or short as
 * the variant says), ignoring captures: the retrograde solver's count of in-block moves. */
int dtb_count_king_steps(const dtb_board *b, dtb_bb kings, dtb_bb empty);

/* True when p's side to move has a capture. */
bool dtb_has_capture(const dtb_board *b, const dtb_pos *p);

/* The captures of p into *out when its side to move has one, else out->count = 0 (quiet moves
 * are not listed): dtb_has_capture and dtb_generate in one pass, for callers that want the
 * moves of capture positions only. Returns as dtb_generate. */
dtb_status dtb_generate_captures(const dtb_board *b, const dtb_pos *p, dtb_movelist *out);

/* dtb_generate_captures for a caller that knows which pieces can capture: the captures of the
 * side to move's men in `men` and, when king_can, of its kings (out->count = 0 when there are
 * none). The same list as dtb_generate_captures when men (a superset is fine) and king_can
 * cover every piece that has a capture: the solver tells them from data kept per block. */
dtb_status dtb_generate_captures_by(const dtb_board *b, const dtb_pos *p, dtb_bb men,
                                    bool king_can, dtb_movelist *out);

/* The position after move m (a legal move of p). out may alias p. Inline: the solver makes every
 * capture of every capture position. */
static inline void dtb_make_move(const dtb_pos *p, const dtb_move *m, dtb_pos *out)
{
    /* Everything is read before anything is written: out may alias p. */
    const dtb_color side = p->side, opp = (dtb_color)(side ^ 1);
    const dtb_bb from = dtb_bb_bit(m->from), to = dtb_bb_bit(m->to);
    dtb_bb men = p->men[side], kings = p->kings[side];
    const dtb_bb opp_men = p->men[opp] & ~m->captured, opp_kings = p->kings[opp] & ~m->captured;
    if (kings & from) {
        kings = (kings & ~from) | to; /* from == to after a round trip */
    } else {
        men &= ~from;
        if (m->promotes)
            kings |= to;
        else
            men |= to;
    }
    out->men[side] = men;
    out->kings[side] = kings;
    out->men[opp] = opp_men;
    out->kings[opp] = opp_kings;
    out->side = opp;
}

/* dtb_make_move on boards of up to 64 squares, on words: the side to move's men and kings
 * (*men, *kings) and its opponent's (*opp_men, *opp_kings) after move m, in place. For the
 * solver's exit lookups and the probe's search, which keep positions as words. */
static inline void dtb_make_move64(const dtb_move *m, uint64_t *men, uint64_t *kings,
                                   uint64_t *opp_men, uint64_t *opp_kings)
{
    /* m legal: from holds a piece of the mover, to is empty (or from itself after a round trip,
     * when from ^ to is 0), so exclusive ors move the piece. */
    const uint64_t from = 1ull << m->from, to = 1ull << m->to, cap = (uint64_t)m->captured;
    const uint64_t om = *opp_men & ~cap, ok = *opp_kings & ~cap;
    uint64_t own_m = *men, own_k = *kings;
    if (own_k & from) {
        own_k ^= from ^ to;
    } else if (m->promotes) {
        own_m ^= from;
        own_k |= to;
    } else {
        own_m ^= from ^ to;
    }
    *men = own_m, *kings = own_k, *opp_men = om, *opp_kings = ok;
}

/* The landing squares of one capture route of m (from excluded, to included) into path[], up to
 * cap entries; returns the number of landings, or -1 if no route of p realises m. Used to write
 * a capture unambiguously (28x19x8). */
int dtb_capture_route(const dtb_board *b, const dtb_pos *p, const dtb_move *m, uint8_t *path, int cap);

#endif
