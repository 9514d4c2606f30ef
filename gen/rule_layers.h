/* The rule bytes of a build (docs/FORMAT.md §8.6): one registry of rule bytes per diagonal
 * count. Registry 0 holds every material's table; a material that keeps the count
 * (dtb_rules_counts: FMJD-64's lone king against three pieces with a king) has a table in each
 * registry c = 0 .. late_after, its bytes when the count is c. Rule sets without a count have
 * registry 0 alone. Lookups are thread-safe; adding and dropping are not. */
#ifndef DTB_RULE_LAYERS_H
#define DTB_RULE_LAYERS_H

#include "rules.h"
#include "solved.h"

typedef struct dtb_rule_layers {
    const dtb_rules *rules;
    int n; /* registries: 1, or rules->late_after + 1 */
    dtb_solved *at[DTB_RULE_COUNT_MAX + 1];
} dtb_rule_layers;

/* Empty registries for board b (which must outlive them) under rules. DTB_E_NOMEM. */
dtb_status dtb_rule_layers_init(dtb_rule_layers *rl, const dtb_board *b, const dtb_rules *rules,
                                dtb_error *e);

/* Frees every registry; an rl that failed to init or was freed is allowed. */
void dtb_rule_layers_free(dtb_rule_layers *rl);

/* The count layers material m has: n when it keeps the count, else 1. */
int dtb_rule_layers_of(const dtb_rule_layers *rl, const dtb_material *m);

/* Adds material m to each of its layers (draw bytes), its tables into t[0 .. layers). NULL
 * entries and the status on failure (DTB_E_NOMEM, DTB_E_RANGE). */
dtb_status dtb_rule_layers_add(dtb_rule_layers *rl, dtb_material m,
                               dtb_solved_table *t[DTB_RULE_COUNT_MAX + 1], dtb_error *e);

/* Material m's table at count c (0 for a material without a count), NULL when absent. */
const dtb_solved_table *dtb_rule_layers_find(const dtb_rule_layers *rl, dtb_material m, int c);

/* Drops material m from every layer. */
void dtb_rule_layers_drop(dtb_rule_layers *rl, dtb_material m);

/* The rule byte of position q (either side to move) at diagonal count c (ignored where q's
 * material keeps none): DTB_VALUE_LOST when its side to move has no piece, DTB_VALUE_DRAW
 * (undecided) when q's material is absent. */
dtb_value dtb_rule_layers_value(const dtb_rule_layers *rl, const dtb_pos *q, int c);

#endif
