/* The registries of rule bytes by diagonal count (rule_layers.h). */
#include "rule_layers.h"

#include <string.h>

dtb_status dtb_rule_layers_init(dtb_rule_layers *rl, const dtb_board *b, const dtb_rules *rules,
                                dtb_error *e)
{
    assert(rules->late_after <= DTB_RULE_COUNT_MAX);
    memset(rl, 0, sizeof *rl);
    rl->rules = rules;
    rl->n = rules->counts ? rules->late_after + 1 : 1;
    for (int c = 0; c < rl->n; c++)
        if (!(rl->at[c] = dtb_solved_create(b))) {
            dtb_rule_layers_free(rl);
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        }
    return DTB_OK;
}

void dtb_rule_layers_free(dtb_rule_layers *rl)
{
    for (int c = 0; c < DTB_RULE_COUNT_MAX + 1; c++) {
        dtb_solved_free(rl->at[c]);
        rl->at[c] = NULL;
    }
    rl->n = 0;
}

int dtb_rule_layers_of(const dtb_rule_layers *rl, const dtb_material *m)
{
    return dtb_rules_counts(rl->rules, m) ? rl->n : 1;
}

dtb_status dtb_rule_layers_add(dtb_rule_layers *rl, dtb_material m,
                               dtb_solved_table *t[DTB_RULE_COUNT_MAX + 1], dtb_error *e)
{
    const int layers = dtb_rule_layers_of(rl, &m);
    for (int c = 0; c < layers; c++)
        if (!(t[c] = dtb_solved_add(rl->at[c], m, e))) {
            for (int k = 0; k < c; k++)
                dtb_solved_drop(rl->at[k], m);
            return DTB_E_NOMEM;
        }
    return DTB_OK;
}

const dtb_solved_table *dtb_rule_layers_find(const dtb_rule_layers *rl, dtb_material m, int c)
{
    return dtb_solved_find(rl->at[dtb_rules_counts(rl->rules, &m) ? c : 0], m);
}

void dtb_rule_layers_drop(dtb_rule_layers *rl, dtb_material m)
{
    for (int c = 0; c < dtb_rule_layers_of(rl, &m); c++)
        dtb_solved_drop(rl->at[c], m);
}

dtb_value dtb_rule_layers_value(const dtb_rule_layers *rl, const dtb_pos *q, int c)
{
    if (!dtb_pos_pieces(q, q->side))
        return DTB_VALUE_LOST;
    const dtb_material m = dtb_material_of(q);
    const dtb_solved *s = rl->at[dtb_rules_counts(rl->rules, &m) ? c : 0];
    const dtb_material w = q->side == DTB_WHITE ? m : dtb_material_flip(m);
    return dtb_solved_find(s, w) ? dtb_solved_value(s, q) : DTB_VALUE_DRAW;
}
