/* Move-count draw rules as data (docs/RULES.md): how many plies a game may go on without a
 * counter reset before it is drawn, and which moves reset the counter.
 *
 * A rule set sorts every position into classes; each class has its own limit and its own
 * resets. FMJD article 6 (international draughts), as lidraughts applies it, by material:
 *   - general (6.2): 50 plies; every capture and every man move resets;
 *   - a lone king against three pieces with a king (6.3): 32 plies, counted from the capture or
 *     first promotion that makes the material; man moves and later promotions do not reset;
 *   - a lone king against at most two pieces with a king (6.4): 10 plies, likewise.
 * The WCDF's 40-move rule (english checkers): one class, 80 plies, every capture and every man
 * move resets; a claimed draw, which the side it saves claims (docs/RULES.md §4).
 * FMJD-64 (russian and brazilian, lidraughts' reading, docs/RULES.md §2.2): seven classes, one
 * of which depends on where the lone king stands (7.2.7: alone on the long diagonal) and has a
 * second counter, the lone side's diagonal count: the plies that ended in that class; its
 * limit falls from 30 to 10 plies once the count reaches the rule set's late_after. One class
 * has no count at all (a side without a king): every move into it resets and no clock draws.
 * The class of the position after a move decides whether that move resets, as lidraughts'
 * updatePositionHashes does. A side without a legal move has lost, whatever the counter: the
 * draw applies only to a side that can move (lidraughts checks the end of the game first).
 * Thread-safe (static data and pure functions). */
#ifndef DTB_RULES_H
#define DTB_RULES_H

#include <assert.h>
#include <stdbool.h>

#include "board.h"
#include "material.h"
#include "movegen.h"
#include "variant.h"

/* Classes of a rule set; the longest limit; the largest late_after (a diagonal count beyond it
 * answers as it does). */
enum { DTB_RULE_CLASSES = 7, DTB_RULE_LIMIT_MAX = 127, DTB_RULE_COUNT_MAX = 10 };

/* How one class counts: its limit in plies and the moves into it that reset the counter. */
typedef struct dtb_rule_class {
    const char *name;         /* "25-move", ... as the docs and answers name it */
    int limit;                /* plies; a side that can move at this count is drawn; 0: no
                                 count (every move into the class resets, no clock draws) */
    int late_limit;           /* the limit once the diagonal count reaches the rule set's
                                 late_after (0: the class does not count; FMJD-64 7.2.7) */
    bool man_move_resets;     /* any man move (promotions included) */
    bool promotion_resets;    /* any promotion */
    int capture_resets_above; /* a capture resets when the position before it had more pieces
                                 than this (0: every capture; at the late limit none does) */
    bool first_promotion_resets; /* a promotion after which the mover has exactly one king */
} dtb_rule_class;

typedef struct dtb_rules {
    const char *name; /* "fmjd": as options, answers and table files name it */
    int id;           /* its number in table headers */
    int nclasses;     /* 1..DTB_RULE_CLASSES: cls[0..nclasses-1] are used */
    dtb_rule_class cls[DTB_RULE_CLASSES];
    /* The class of a material, -1 when it depends on the position (then classify_pos). */
    int (*classify)(const dtb_material *m);
    /* The class of a position; NULL when the material decides it (classify). */
    int (*classify_pos)(const dtb_board *b, const dtb_pos *p);
    /* Of a material whose positions differ: the class of those not in a counting class. */
    int (*other_class)(const dtb_material *m);
    /* Whether a material keeps the diagonal count; NULL when the rule set has none. */
    bool (*counts)(const dtb_material *m);
    int late_after;   /* the diagonal count at which a counting class's late limit applies */
} dtb_rules;

/* The rule set named name ("fmjd", "wcdf"), NULL when there is none by that name. */
const dtb_rules *dtb_rules_find(const char *name);

/* The rule set v's games are played under, NULL when dtb knows none for it. */
const dtb_rules *dtb_rules_of_variant(const dtb_variant *v);

/* The rule set with id id (a table header's), NULL when unknown. */
const dtb_rules *dtb_rules_by_id(int id);

/* A copy of r with its limits replaced by limits[class] (each 1..DTB_RULE_LIMIT_MAX, for its
 * nclasses classes; ignored for a class without a count) and the late limit of its counting
 * class (if any) by late (1..127; 0 keeps r's): tests lower them to keep explicit searches
 * small, and a table's header records those it was solved with. */
dtb_rules dtb_rules_with_limits(const dtb_rules *r, const int limits[DTB_RULE_CLASSES], int late);

/* Whether r's limits are those of the rule set of its name (not lowered). */
bool dtb_rules_standard(const dtb_rules *r);

/* The class of material m under r (0: general), -1 when the position decides it
 * (dtb_rules_pos_class). */
static inline int dtb_rules_class(const dtb_rules *r, const dtb_material *m)
{
    return r->classify(m);
}

/* The limit in plies of positions of material m; m's class must not depend on the position. */
static inline int dtb_rules_limit(const dtb_rules *r, const dtb_material *m)
{
    const int c = dtb_rules_class(r, m);
    assert(c >= 0);
    return r->cls[c].limit;
}

/* The largest limit a position of material m can have: its class's, or for a material whose
 * positions differ (dtb_rules_class -1) the larger of its counting class's and other_class's. */
int dtb_rules_top_limit(const dtb_rules *r, const dtb_material *m);

/* The late limit of r's counting class, 0 when r keeps no diagonal count. */
int dtb_rules_late_limit(const dtb_rules *r);

/* The class of position p of board b. */
int dtb_rules_pos_class(const dtb_rules *r, const dtb_board *b, const dtb_pos *p);

/* Whether material m has a diagonal count (positions of a counting class, or moves into
 * them without a capture; FMJD-64: a lone king against three pieces with a king). */
bool dtb_rules_counts(const dtb_rules *r, const dtb_material *m);

/* The limit of position p when its lone side's diagonal count is count (0 where the material
 * does not count): its class's limit, or its late limit once count >= r->late_after. 0: no
 * count, no clock draws. */
int dtb_rules_pos_limit(const dtb_rules *r, const dtb_board *b, const dtb_pos *p, int count);

/* The diagonal count after move mv of position before (which leads to after), count being
 * before's: 0 where after's material does not count or before's did not (a capture into the
 * counting material starts it); else one more when after's class counts, kept at most
 * r->late_after (beyond it every count answers the same). */
int dtb_rules_next_count(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                         const dtb_pos *after, int count);

/* Whether move mv of position before (which leads to after) resets the counter; count_after is
 * the diagonal count after the move (dtb_rules_next_count; 0 where none is kept). */
bool dtb_rules_resets(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                      const dtb_move *mv, const dtb_pos *after, int count_after);

/* What move mv of position before (which leads to after) does to the counters when the
 * diagonal count before it is count: the count after it (dtb_rules_next_count), whether it
 * resets the clock (dtb_rules_resets) and the limit of after at that count
 * (dtb_rules_pos_limit), with after's class found once. */
typedef struct dtb_rule_step {
    int count;
    bool reset;
    int limit;
} dtb_rule_step;
dtb_rule_step dtb_rules_step(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                             const dtb_move *mv, const dtb_pos *after, int count);

#endif
