/* A deliberately simple reference for the FMJD-64 move-count draw rules of russian and brazilian
 * draughts as lidraughts implements them (docs/RULES.md §2; strategygames' Russian.scala
 * `drawingMoves`, `updatePositionHashes`, `finalizeBoardWithRemainingCaptures`), to test dtb's
 * generator and answers under the `fmjd64` rule set against.
 *
 * It solves the states (position p, halfmove clock h, diagonal count c) from their definition,
 * carrying both counters explicitly. It shares with dtb only the move generator, positions,
 * materials and the index (to number positions), nothing of gen/ and nothing of dtb's rule code
 * (core/rules.c): the rules below are written out here a second time, on purpose.
 *
 * The rules. A position's case (ref64_case_of), in this order:
 *   1. one side a lone king (one piece, a king), the other (the strong side) with a king:
 *      - the strong side with at most 2 pieces: A (7.2.8), limit 10 plies;
 *      - with exactly 3, and the lone king on the long diagonal (a1-h8, the board's one diagonal
 *        of board->size squares) as the only piece on it: B (7.2.7), limit 30 while the count c
 *        is below 10, then 10;
 *      - with 3 or more, all kings: C (7.2.4), limit 30;
 *      - otherwise on to 2.
 *   2. both sides with a king: 4-5 pieces D (7.2.6), limit 60; 6-7 pieces D too, limit 120;
 *      any other count E (7.2.5), limit 30.
 *   3. otherwise (a side without a king): N, no limit.
 * The clock after a move (ref64_resets), decided with the case of the position after it (and,
 * for B, the count after it): N resets on every move; C on a capture or a promotion; E on a
 * capture, a promotion or a man's move; B while its limit is 30 on a capture or a first
 * promotion (the move promotes and the mover then has exactly one king); D on a capture or a
 * promotion; A, and B once its limit is 10, on a first promotion or on a capture from more than
 * 3 pieces to at most 3. Anything else adds one.
 * The count after a move (ref64_next_count): lidraughts' "king moves" counter of the lone
 * king's side, one more after every move (either side's) that ends in a B position, never
 * cleared. It matters only in the family of four-piece materials a lone king against 3 pieces
 * with a king (KKKvK, KKMvK, KMMvK and their flips): moving into the family from outside it, it
 * starts at 0 before that move's one; inside the family it is kept (promotions too); outside it
 * is 0. Only c < threshold or not matters, so it is kept clamped at the threshold.
 * A state (p, h, c) is lost for the side to move when it has no legal move, whatever h and c;
 * else drawn when p's case has a limit L (for B: by c) and h >= L; else the best, for the side
 * to move, of -V(p', h', c') over its moves m to p', with h' and c' as above.
 *
 * Two details of lidraughts' code this reading smooths over, both outside 4 pieces with the
 * real threshold: Move.finalizeAfter decides the reset with the board before
 * finalizeBoardWithRemainingCaptures adds the move's one to the count (here: after; they differ
 * only for a capture into B whose one reaches the threshold, impossible when the threshold is
 * above 1), and finalizeBoardWithRemainingCaptures counts the captured pieces, still on its
 * board as ghosts, so the capture that makes the family from 5 pieces may not add its one
 * there (here: it does).
 *
 * Not thread-safe while building; the built solution is read-only. */
#ifndef DTB_TEST_RULES_REFERENCE_FMJD64_H
#define DTB_TEST_RULES_REFERENCE_FMJD64_H

#include <stdbool.h>

#include "material.h"
#include "movegen.h"

/* The cases, named by lidraughts' reading of the FMJD-64 articles. */
typedef enum {
    REF64_A,   /* 7.2.8: a lone king against at most 2 pieces with a king */
    REF64_B,   /* 7.2.7: against 3 with a king, alone on the long diagonal */
    REF64_C,   /* 7.2.4: against 3 or more kings */
    REF64_D45, /* 7.2.6: kings on both sides, 4-5 pieces */
    REF64_D67, /* 7.2.6: kings on both sides, 6-7 pieces */
    REF64_E,   /* 7.2.5: kings on both sides, any other count */
    REF64_N    /* no count */
} ref64_case;

/* The limits in plies (each >= 1), lowerable for tests, and the count from which B's limit is
 * b_late (>= 1). */
typedef struct ref64_limits {
    int a, b_early, b_late, c, d45, d67, e;
    int threshold;
} ref64_limits;

/* lidraughts' values. */
#define REF64_LIMITS_FMJD64 {10, 30, 10, 30, 60, 120, 30, 10}

typedef struct ref64 ref64;

/* ---- The rules, on single positions (no solution needed) ------------------------------------ */

/* The case of p (a position of b, 8x8 or any other board; any number of pieces). */
ref64_case ref64_case_of(const dtb_board *b, const dtb_pos *p);

/* The squares of b's long diagonal (a1-h8 on 8x8: row + column = size - 1, board->size of
 * them), the one case B looks at. */
dtb_bb ref64_long_diagonal(const dtb_board *b);

/* The limit of case k with the count c, in plies; -1 for N (no limit). */
int ref64_case_limit(const ref64_limits *l, ref64_case k, int c);

/* The limit of p's case with the count c (ref64_case_limit of ref64_case_of). */
int ref64_limit_of(const dtb_board *b, const ref64_limits *l, const dtb_pos *p, int c);

/* Whether material m is in the family whose count matters (a lone king against exactly 3
 * pieces with a king). */
bool ref64_family(const dtb_material *m);

/* The count after legal move mv of p, p's count being c (0..l->threshold): clamped at the
 * threshold, 0 outside the family. */
int ref64_next_count(const dtb_board *b, const ref64_limits *l, const dtb_pos *p,
                     const dtb_move *mv, int c);

/* Whether legal move mv of p, p's count being c, sets the clock to 0 (rather than adding one),
 * decided with the case of the position after it and its count (ref64_next_count). */
bool ref64_resets(const dtb_board *b, const ref64_limits *l, const dtb_pos *p, const dtb_move *mv,
                  int c);

/* ---- The solution --------------------------------------------------------------------------- */

/* Solves every state of every material of 2..max_pieces pieces of board b (both sides to move)
 * under limits *l. Memory: a byte per state (positions x clocks up to the largest limit of the
 * material's cases x counts, threshold + 1 of them in the family, else one), and the moves of
 * one men advancement level (or of a whole no-count pair) at a time. NULL when out of memory.
 * b must outlive the result. */
ref64 *ref64_build(const dtb_board *b, int max_pieces, const ref64_limits *l);

/* ref64_build of the materials of fewer than max_pieces pieces and, of max_pieces, only those
 * in only[0..nonly) and their flips (they must hold what they promote into: a state of an
 * unsolved material is never read, the reference aborts first). */
ref64 *ref64_build_only(const dtb_board *b, int max_pieces, const ref64_limits *l,
                        const dtb_material *only, int nonly);

/* The value of state (p, h, c) for p's side to move (either side, 2..max_pieces pieces of a
 * solved material, or a side to move without pieces): +1 win, 0 draw, -1 loss. h >= 0 (every h
 * at or beyond the limit has the limit's value; in N every h has one value), c >= 0 (counted
 * only in the family; beyond the threshold as at it). */
int ref64_value(const ref64 *r, const dtb_pos *p, int h, int c);

/* The limits r was built with. */
const ref64_limits *ref64_limits_of(const ref64 *r);

/* Frees r; NULL is allowed. */
void ref64_free(ref64 *r);

#endif
