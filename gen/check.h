/* Independent re-derivation of stored values (the verifier of docs/DESIGN.md §8): every position's
 * value and DTW must follow from its successors' stored values by one ply of minimax. */
#ifndef DTB_CHECK_H
#define DTB_CHECK_H

#include <stdint.h>

#include "rule_layers.h"
#include "rules.h"
#include "solved.h"

/* Called for each mismatch, in index order, with the index, the stored and the re-derived
 * exact value. At most `limit` calls per table (counting goes on). Called from one thread at a time. */
typedef void (*dtb_check_report)(void *user, const dtb_solved_table *t, uint64_t index,
                                 dtb_wvalue stored, dtb_wvalue derived);

/* Checks every position of table t against its successors in s (t's own values included).
 * Returns the number of mismatches. Uses the OpenMP threads in force. */
uint64_t dtb_check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                         void *user, uint64_t limit);

/* dtb_check_table comparing results only (win, draw or loss), not distances: for a WLD-only
 * table (a build's --dtw-pieces), loaded with stand-in distances (dtb_build_load_wld). */
uint64_t dtb_check_table_results(const dtb_solved *s, const dtb_solved_table *t,
                                 dtb_check_report report, void *user, uint64_t limit);

/* The exact value of p (white to move) by one ply of minimax over the values in s (long lists
 * included). */
dtb_wvalue dtb_check_derive(const dtb_solved *s, const dtb_pos *p);

/* ---- MTC (docs/FORMAT.md §8.5) --------------------------------------------------------------- */

/* The MTC byte of quiet position p of table t (white to move) by one ply over its moves: the
 * win / draw / loss of every successor from s, and the MTC of each king move's successor from
 * mtc_f, the MTC bytes of t's colour flip ft (where a king move lands, white to move after the
 * flip; a capture position there is at 1 whatever its byte, files leave it don't-care). */
dtb_value dtb_check_mtc_derive(const dtb_solved *s, const dtb_pos *p, const dtb_solved_table *ft,
                               const dtb_value *mtc_f);

/* Called for each MTC mismatch as dtb_check_report is, with the stored and re-derived bytes. */
typedef void (*dtb_check_mtc_report)(void *user, const dtb_solved_table *t, uint64_t index,
                                     dtb_value stored, dtb_value derived);

/* Checks the MTC bytes mtc_t of every quiet position of t (capture positions are don't-care)
 * against its successors (mtc_f: those of t's flip, mtc_t itself for a material that is its
 * own flip). Returns the number of mismatches. Uses the OpenMP threads in force. */
uint64_t dtb_check_mtc_table(const dtb_solved *s, const dtb_solved_table *t, const dtb_value *mtc_t,
                             const dtb_value *mtc_f, dtb_check_mtc_report report, void *user,
                             uint64_t limit);

/* ---- rule distances (docs/FORMAT.md §8.6) ----------------------------------------------------- */

/* The rule byte of p (white to move) at diagonal count `count` (0 where p's material keeps none)
 * by one ply over its moves' rule bytes in rl (a table absent there, or a byte 0, reads as
 * undecided). In clocks: a move that resets the count reaches its target's result at clock 0
 * (whatever clock p has), one that keeps it reaches the target at p's clock + 1, which holds up
 * to the target's limit minus its distance; the win takes the move that holds from the largest
 * clock, the loss holds up to the smallest over every move (a move the opponent does not win:
 * no loss); both at most p's limit - 1. The byte is p's limit minus that clock (its rule
 * distance), 0 when it is below 0; with no count (limit 0: every move into p reset the
 * count, so its clock is 0) 1 for a result that holds at clock 0. p's limit (0: no count) into
 * *limit_out unless NULL. The rule solve's passes use it too (gen/solve_rules_passes.c). */
dtb_value dtb_check_rules_derive(const dtb_rule_layers *rl, const dtb_pos *p, int count,
                                 int *limit_out);

/* Checks the stored rule bytes of table rt (of rl, at diagonal count `count`; every position,
 * captures included) against its successors in rl. Reports as dtb_check_mtc_report. Returns
 * the number of mismatches. */
uint64_t dtb_check_rules_table(const dtb_rule_layers *rl, const dtb_solved_table *rt, int count,
                               dtb_check_mtc_report report, void *user, uint64_t limit);

#endif
