/* The rule sets (core/rules.h) and their classes. Sources and how lidraughts implements them:
 * docs/RULES.md. */
#include "rules.h"

#include <assert.h>
#include <string.h>

/* FMJD 6.3 and 6.4: one side a lone king, the other at most three
 * pieces with a king. lidraughts' drawingMoves: the lone king's opponent without a king is the
 * general class (a king against men), three pieces the 16-move class, fewer the 5-move class;
 * two lone kings are the 5-move class. */
static int fmjd_class(const dtb_material *m)
{
    for (int c = 0; c < 2; c++) {
        const int o = 1 - c;
        if (m->kings[c] != 1 || m->men[c] != 0 || m->kings[o] == 0)
            continue;
        const int strong = m->kings[o] + m->men[o];
        if (strong <= 2)
            return 2;
        if (strong == 3)
            return 1;
    }
    return 0;
}

static const dtb_rules FMJD = {
    .name = "fmjd",
    .id = 1,
    .nclasses = 3,
    .cls = {
        {.name = "25-move", .limit = 50, .man_move_resets = true, .capture_resets_above = 0,
         .first_promotion_resets = true},
        {.name = "16-move", .limit = 32, .man_move_resets = false, .capture_resets_above = 4,
         .first_promotion_resets = true},
        {.name = "5-move", .limit = 10, .man_move_resets = false, .capture_resets_above = 3,
         .first_promotion_resets = true},
    },
    .classify = fmjd_class,
};

/* The WCDF's rules know no material cases: every material is the one class. */
static int one_class(const dtb_material *m)
{
    (void)m;
    return 0;
}

static const dtb_rules WCDF = {
    .name = "wcdf",
    .id = 2,
    .nclasses = 1,
    .cls = {
        {.name = "40-move", .limit = 80, .man_move_resets = true, .capture_resets_above = 0,
         .first_promotion_resets = true},
    },
    .classify = one_class,
};

static const dtb_rules *const ALL[] = {&FMJD, &WCDF};

/* Which rule set each variant plays under, by variant name (none: no entry). Russian and
 * brazilian (FMJD-64, lidraughts' reading) need a class that depends on where the lone king
 * stands and a second counter (docs/RULES.md §2): not yet; canadian has no sourced rule. */
static const struct { const char *variant; const dtb_rules *rules; } DEFAULTS[] = {
    {"international", &FMJD},
    {"english", &WCDF},
};

const dtb_rules *dtb_rules_find(const char *name)
{
    for (size_t i = 0; i < sizeof ALL / sizeof *ALL; i++)
        if (strcmp(ALL[i]->name, name) == 0)
            return ALL[i];
    return NULL;
}

const dtb_rules *dtb_rules_by_id(int id)
{
    for (size_t i = 0; i < sizeof ALL / sizeof *ALL; i++)
        if (ALL[i]->id == id)
            return ALL[i];
    return NULL;
}

const dtb_rules *dtb_rules_of_variant(const dtb_variant *v)
{
    for (size_t i = 0; i < sizeof DEFAULTS / sizeof *DEFAULTS; i++)
        if (strcmp(DEFAULTS[i].variant, v->name) == 0)
            return DEFAULTS[i].rules;
    return NULL;
}

dtb_rules dtb_rules_with_limits(const dtb_rules *r, const int limits[DTB_RULE_CLASSES])
{
    dtb_rules out = *r;
    for (int c = 0; c < r->nclasses; c++) {
        assert(limits[c] >= 1 && limits[c] <= DTB_RULE_LIMIT_MAX);
        out.cls[c].limit = limits[c];
    }
    return out;
}

bool dtb_rules_standard(const dtb_rules *r)
{
    const dtb_rules *std = dtb_rules_find(r->name);
    if (!std)
        return false;
    for (int c = 0; c < r->nclasses; c++)
        if (r->cls[c].limit != std->cls[c].limit)
            return false;
    return true;
}

bool dtb_rules_resets(const dtb_rules *r, const dtb_pos *before, const dtb_move *mv,
                      const dtb_pos *after)
{
    const dtb_material ma = dtb_material_of(after);
    const dtb_rule_class *c = &r->cls[dtb_rules_class(r, &ma)];
    const dtb_color me = before->side;
    const bool man = (before->men[me] >> mv->from) & 1;
    if (mv->ncaptured) {
        const dtb_material mb = dtb_material_of(before);
        if (dtb_material_pieces(&mb) > c->capture_resets_above)
            return true;
    }
    if (man && c->man_move_resets)
        return true;
    return mv->promotes && c->first_promotion_resets && dtb_bb_count(after->kings[me]) == 1;
}
