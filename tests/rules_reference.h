/* A deliberately simple reference for the FMJD move-count draw rules of international draughts,
 * as lidraughts implements them (docs/RULES.md), and for the WCDF's 40-move rule of english
 * checkers (§4), to test dtb's answers under the rules against.
 *
 * It solves the states (position, halfmove clock h) by their definition, with the clock carried
 * explicitly: one value per position and per h. It shares only the move generator, positions
 * and the index (to number positions) with dtb, nothing of gen/ or of dtb's rule code.
 *
 * The rules (docs/RULES.md §1.2). A material's class: when one side is a lone king (one piece, a
 * king), the other side without a king makes class G, with at most 2 pieces (a king among them)
 * class F, with 3 pieces (a king among them) class S; every other material is class G. On an
 * english board every material is class G (the 40-move rule, 80 plies by the rules). A state is
 * lost for the side to move when it has no legal move, whatever h; else drawn when h >= the
 * limit of its class (limits[REF_RULES_G / _S / _F]: 50, 32 and 10 plies by the rules); else
 * the best, for the side to move, of its moves m to P': -V(P', 0) when m resets the clock
 * (ref_rules_resets), -V(P', h + 1) when it does not.
 *
 * Not thread-safe while building; the built solution is read-only. */
#ifndef DTB_TEST_RULES_REFERENCE_H
#define DTB_TEST_RULES_REFERENCE_H

#include <stdbool.h>

#include "material.h"
#include "movegen.h"

/* The classes, as indexes of the limits. */
enum { REF_RULES_G = 0, REF_RULES_S = 1, REF_RULES_F = 2 };

typedef struct ref_rules ref_rules;

/* Solves every state of every material of 2..max_pieces pieces of board b (both sides to move)
 * under the given limits in plies (G, S, F; each >= 1). Memory: a quarter byte per state, and
 * the moves of one men advancement level at a time. NULL when out of memory. b must outlive the
 * result. */
ref_rules *ref_rules_build(const dtb_board *b, int max_pieces, const int limits[3]);

/* ref_rules_build of the materials of fewer than max_pieces pieces and, of max_pieces, only
 * those in only[0..nonly) and their flips (they must hold what they promote into: a state of an
 * unsolved material is never read, the reference aborts first). */
ref_rules *ref_rules_build_only(const dtb_board *b, int max_pieces, const int limits[3],
                                const dtb_material *only, int nonly);

/* The value of position p (either side to move, 2..max_pieces pieces, or a side to move without
 * pieces) with halfmove clock h >= 0 for its side to move: +1 win, 0 draw, -1 loss. Every h at or
 * beyond the class's limit has the value of the limit. */
int ref_rules_value(const ref_rules *r, const dtb_pos *p, int h);

/* The limit of p's class, in plies. */
int ref_rules_class_limit(const ref_rules *r, const dtb_pos *p);

/* Whether legal move m of p sets the clock to 0 (rather than adding one), decided with the class
 * of the position after m. */
bool ref_rules_resets(const ref_rules *r, const dtb_pos *p, const dtb_move *m);

/* Frees r; NULL is allowed. */
void ref_rules_free(ref_rules *r);

#endif
