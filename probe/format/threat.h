/* Threat positions that a compact set's stored tables may leave to the probe (docs/FORMAT.md,
 * "Threat positions").
 *
 * A threat position is a quiet position (its side to move has no capture) where the opponent
 * would have a capture if it were to move. In a table made with threat don't-cares, a threat
 * position that dtb_threat_dontcare accepts stores no value: the probe searches its moves as it
 * does a derived table's. The rule is a function of the position and of whether its material is
 * its own colour flip, nothing else, so the writer (gen/compact.c) and the probe
 * (probe/resolve.c) cannot disagree on which positions hold no value. It bounds the probe's
 * search: a position the rule accepts is answered by at most two nested one-ply searches inside
 * its pair of tables (below); everything else it reaches is a stored value, a capture search or
 * a promotion into a material with a man fewer.
 *
 * lookups(p): the positions of p's pair of tables whose stored values a one-ply search of p
 * reads, captures and promotions aside. For each non-promoting move of p that leaves the
 * opponent without a capture, the position q after it: when p's material is its own flip, q
 * itself (its value is stored, as its flip); otherwise q lies in the derived partner and is
 * searched in turn, and lookups(p) holds, for each non-promoting move of q that leaves p's side
 * without a capture, the position after it.
 *
 * The rule: p is a threat position, and every position x of lookups(p) is not a threat
 * position, or is one whose own lookups(x) holds no threat position.
 *
 * Thread-safe: no shared state; the caller gives the scratch move lists. */
#ifndef DTB_THREAT_H
#define DTB_THREAT_H

#include <stdbool.h>

#include "movegen.h"
#include "position.h"

/* The two questions the rule asks of positions, for a caller with faster answers than core's
 * (the probe's capture test and move lists on words): has_capture must answer as
 * dtb_has_capture, quiet_moves list the moves of a position without a capture as dtb_generate
 * does (in any order: the rule's answer does not depend on it). A NULL member: core's. */
typedef struct dtb_threat_ops {
    bool (*has_capture)(const void *user, const dtb_pos *p);
    dtb_status (*quiet_moves)(const void *user, const dtb_pos *p, dtb_movelist *out);
    const void *user;
} dtb_threat_ops;

/* Whether quiet position p holds no value in a table with threat don't-cares (the rule above).
 * own_flip: p's material is its own colour flip. lists: four move lists to work in (their
 * contents are overwritten). ops: NULL for core's move generator and capture test. A position
 * whose moves do not fit a list is refused (false), the same way for the writer and the probe. */
bool dtb_threat_dontcare(const dtb_board *b, const dtb_pos *p, bool own_flip,
                         dtb_movelist *const lists[4], const dtb_threat_ops *ops);

#endif
