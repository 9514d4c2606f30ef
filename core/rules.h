/* Move-count draw rules as data (docs/RULES.md): how many plies a game may go on without a
 * counter reset before it is drawn, and which moves reset the counter.
 *
 * A rule set sorts every material into classes; each class has its own limit and its own
 * resets. FMJD article 6 (international draughts), as lidraughts applies it:
 *   - general (6.2): 50 plies; every capture and every man move resets;
 *   - a lone king against three pieces with a king (6.3): 32 plies, counted from the capture or
 *     first promotion that makes the material; man moves and later promotions do not reset;
 *   - a lone king against at most two pieces with a king (6.4): 10 plies, likewise.
 * The WCDF's 40-move rule (english checkers): one class, 80 plies, every capture and every man
 * move resets; a claimed draw, which the side it saves claims (docs/RULES.md §4).
 * The class of the position after a move decides whether that move resets, as lidraughts'
 * updatePositionHashes does. A side without a legal move has lost, whatever the counter: the
 * draw applies only to a side that can move (lidraughts checks the end of the game first).
 * Thread-safe (static data and pure functions). */
#ifndef DTB_RULES_H
#define DTB_RULES_H

#include <stdbool.h>

#include "material.h"
#include "movegen.h"
#include "variant.h"

enum { DTB_RULE_CLASSES = 3, DTB_RULE_LIMIT_MAX = 127 };

/* How one class counts: its limit in plies and the moves into it that reset the counter. */
typedef struct dtb_rule_class {
    const char *name;         /* "25-move", ... as the docs and answers name it */
    int limit;                /* plies; a side that can move at this count is drawn */
    bool man_move_resets;     /* any man move (promotions included) */
    int capture_resets_above; /* a capture resets when the position before it had more pieces
                                 than this (0: every capture) */
    bool first_promotion_resets; /* a promotion after which the mover has exactly one king */
} dtb_rule_class;

typedef struct dtb_rules {
    const char *name; /* "fmjd": as options, answers and table files name it */
    int id;           /* its number in table headers */
    int nclasses;     /* 1..DTB_RULE_CLASSES: cls[0..nclasses-1] are used */
    dtb_rule_class cls[DTB_RULE_CLASSES];
    int (*classify)(const dtb_material *m); /* the class of a material */
} dtb_rules;

/* The rule set named name ("fmjd", "wcdf"), NULL when there is none by that name. */
const dtb_rules *dtb_rules_find(const char *name);

/* The rule set v's games are played under, NULL when dtb knows none for it. */
const dtb_rules *dtb_rules_of_variant(const dtb_variant *v);

/* The rule set with id id (a table header's), NULL when unknown. */
const dtb_rules *dtb_rules_by_id(int id);

/* A copy of r with its limits replaced by limits[class] (each 1..DTB_RULE_LIMIT_MAX, for its
 * nclasses classes): tests lower them to keep explicit searches small. */
dtb_rules dtb_rules_with_limits(const dtb_rules *r, const int limits[DTB_RULE_CLASSES]);

/* Whether r's limits are those of the rule set of its name (not lowered). */
bool dtb_rules_standard(const dtb_rules *r);

/* The class of material m under r (0: general). */
static inline int dtb_rules_class(const dtb_rules *r, const dtb_material *m)
{
    return r->classify(m);
}

/* The limit in plies of positions of material m. */
static inline int dtb_rules_limit(const dtb_rules *r, const dtb_material *m)
{
    return r->cls[dtb_rules_class(r, m)].limit;
}

/* Whether move mv of position before (which leads to after) resets the counter. */
bool dtb_rules_resets(const dtb_rules *r, const dtb_pos *before, const dtb_move *mv,
                      const dtb_pos *after);

#endif
