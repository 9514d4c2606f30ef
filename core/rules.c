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

/* ---- FMJD-64 (russian, brazilian) ------------------------------------------------------------
 * lidraughts' drawingMoves, in its order: a lone king against pieces with a king first (7.2.8,
 * 7.2.7, 7.2.4, else on), then both sides with a king by the pieces in all (7.2.6, 7.2.5), and
 * no count without a king on each side. */
enum { F64_KINGS_ONLY = 0, F64_30 = 1, F64_60 = 2, F64_THREE_KINGS = 3, F64_MAIN_ROAD = 4,
       F64_5 = 5, F64_NONE = 6 };

/* The side that is a lone king facing a side with a king, -1 when neither is. */
static int lone_king_side(const dtb_material *m)
{
    for (int c = 0; c < 2; c++)
        if (m->kings[c] == 1 && m->men[c] == 0 && m->kings[1 - c] > 0)
            return c;
    return -1;
}

/* The class when the lone king is not alone on the long diagonal (so 7.2.7 does not apply). */
static int fmjd64_off_road(const dtb_material *m)
{
    const int lone = lone_king_side(m);
    if (lone >= 0) {
        const int o = 1 - lone, strong = m->kings[o] + m->men[o];
        if (strong <= 2)
            return F64_5;
        if (m->men[o] == 0)
            return F64_THREE_KINGS;
    }
    if (m->kings[0] && m->kings[1]) {
        const int n = dtb_material_pieces(m);
        return n == 4 || n == 5 ? F64_30 : n == 6 || n == 7 ? F64_60 : F64_KINGS_ONLY;
    }
    return F64_NONE;
}

/* A lone king against three pieces with a king: where the lone king stands decides. */
static bool fmjd64_counts(const dtb_material *m)
{
    const int lone = lone_king_side(m);
    return lone >= 0 && m->kings[1 - lone] + m->men[1 - lone] == 3;
}

static int fmjd64_class(const dtb_material *m)
{
    return fmjd64_counts(m) ? -1 : fmjd64_off_road(m);
}

/* The long diagonal ("main road", a1 to the opposite corner): lidraughts' onLongDiagonal. */
static dtb_bb long_diagonal(const dtb_board *b)
{
    const int a1 = dtb_board_square(b, b->size - 1, 0);
    return dtb_bb_bit(a1) | b->ray[a1][DTB_NE];
}

static int fmjd64_pos_class(const dtb_board *b, const dtb_pos *p)
{
    const dtb_material m = dtb_material_of(p);
    if (fmjd64_counts(&m)) {
        const int lone = lone_king_side(&m);
        const dtb_bb road = long_diagonal(b) & dtb_pos_occupied(p);
        if (road == p->kings[lone]) /* the lone king is on it, and nothing else */
            return F64_MAIN_ROAD;
    }
    return fmjd64_off_road(&m);
}

static const dtb_rules FMJD64 = {
    .name = "fmjd64",
    .id = 3,
    .nclasses = 7,
    .cls = {
        [F64_KINGS_ONLY] = {.name = "15-move", .limit = 30, .man_move_resets = true,
                            .promotion_resets = true},
        [F64_30] = {.name = "30-move", .limit = 60, .promotion_resets = true},
        [F64_60] = {.name = "60-move", .limit = 120, .promotion_resets = true},
        [F64_THREE_KINGS] = {.name = "three-kings", .limit = 30, .promotion_resets = true},
        [F64_MAIN_ROAD] = {.name = "main-road", .limit = 30, .late_limit = 10,
                           .first_promotion_resets = true},
        [F64_5] = {.name = "5-move", .limit = 10, .capture_resets_above = 3,
                   .first_promotion_resets = true},
        [F64_NONE] = {.name = "none", .limit = 0},
    },
    .classify = fmjd64_class,
    .classify_pos = fmjd64_pos_class,
    .other_class = fmjd64_off_road,
    .counts = fmjd64_counts,
    .late_after = 10,
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

static const dtb_rules *const ALL[] = {&FMJD, &WCDF, &FMJD64};

/* Which rule set each variant plays under, by variant name (none: no entry; canadian has no
 * sourced rule, docs/RULES.md §5). */
static const struct { const char *variant; const dtb_rules *rules; } DEFAULTS[] = {
    {"international", &FMJD},
    {"english", &WCDF},
    {"russian", &FMJD64},
    {"brazilian", &FMJD64},
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

dtb_rules dtb_rules_with_limits(const dtb_rules *r, const int limits[DTB_RULE_CLASSES], int late)
{
    assert(late >= 0 && late <= DTB_RULE_LIMIT_MAX);
    dtb_rules out = *r;
    for (int c = 0; c < r->nclasses; c++) {
        if (r->cls[c].limit) { /* a class without a count keeps none */
            assert(limits[c] >= 1 && limits[c] <= DTB_RULE_LIMIT_MAX);
            out.cls[c].limit = limits[c];
        }
        if (r->cls[c].late_limit && late)
            out.cls[c].late_limit = late;
    }
    return out;
}

bool dtb_rules_standard(const dtb_rules *r)
{
    const dtb_rules *std = dtb_rules_find(r->name);
    if (!std)
        return false;
    for (int c = 0; c < r->nclasses; c++)
        if (r->cls[c].limit != std->cls[c].limit || r->cls[c].late_limit != std->cls[c].late_limit)
            return false;
    return true;
}

int dtb_rules_top_limit(const dtb_rules *r, const dtb_material *m)
{
    const int c = dtb_rules_class(r, m);
    if (c >= 0)
        return r->cls[c].limit;
    int top = r->cls[r->other_class(m)].limit;
    for (int k = 0; k < r->nclasses; k++)
        if (r->cls[k].late_limit && r->cls[k].limit > top)
            top = r->cls[k].limit;
    return top;
}

int dtb_rules_late_limit(const dtb_rules *r)
{
    for (int k = 0; r->counts && k < r->nclasses; k++)
        if (r->cls[k].late_limit)
            return r->cls[k].late_limit;
    return 0;
}

int dtb_rules_pos_class(const dtb_rules *r, const dtb_board *b, const dtb_pos *p)
{
    const dtb_material m = dtb_material_of(p);
    const int c = r->classify(&m);
    return c >= 0 ? c : r->classify_pos(b, p);
}

bool dtb_rules_counts(const dtb_rules *r, const dtb_material *m)
{
    return r->counts && r->counts(m);
}

/* The limit of class cls at diagonal count count. */
static int class_limit(const dtb_rules *r, int cls, int count)
{
    const dtb_rule_class *c = &r->cls[cls];
    return c->late_limit && count >= r->late_after ? c->late_limit : c->limit;
}

int dtb_rules_pos_limit(const dtb_rules *r, const dtb_board *b, const dtb_pos *p, int count)
{
    return class_limit(r, dtb_rules_pos_class(r, b, p), count);
}

/* dtb_rules_next_count with the class of after known (cls). */
static int next_count_in(const dtb_rules *r, int cls, const dtb_pos *before, const dtb_pos *after,
                         int count)
{
    const dtb_material ma = dtb_material_of(after), mb = dtb_material_of(before);
    if (!dtb_rules_counts(r, &ma))
        return 0;
    if (!dtb_rules_counts(r, &mb)) /* a capture into the counting material starts the count */
        count = 0;
    count += r->cls[cls].late_limit > 0;
    return count < r->late_after ? count : r->late_after;
}

int dtb_rules_next_count(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                         const dtb_pos *after, int count)
{
    return next_count_in(r, dtb_rules_pos_class(r, b, after), before, after, count);
}

/* dtb_rules_resets with the class of after known (cls). */
static bool resets_in(const dtb_rules *r, int cls, const dtb_pos *before, const dtb_move *mv,
                      const dtb_pos *after, int count_after)
{
    const dtb_rule_class *c = &r->cls[cls];
    if (!c->limit) /* no count: lidraughts keeps no history there */
        return true;
    const dtb_color me = before->side;
    const bool man = (before->men[me] >> mv->from) & 1;
    /* At a late limit (lidraughts' "10 plies" case) only a capture down to at most 3 pieces
     * resets, and the counting class has 4. */
    const bool late = c->late_limit && count_after >= r->late_after;
    if (mv->ncaptured && !late) {
        const dtb_material mb = dtb_material_of(before);
        if (dtb_material_pieces(&mb) > c->capture_resets_above)
            return true;
    }
    if (man && c->man_move_resets)
        return true;
    if (mv->promotes && c->promotion_resets)
        return true;
    return mv->promotes && c->first_promotion_resets && dtb_bb_count(after->kings[me]) == 1;
}

bool dtb_rules_resets(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                      const dtb_move *mv, const dtb_pos *after, int count_after)
{
    return resets_in(r, dtb_rules_pos_class(r, b, after), before, mv, after, count_after);
}

dtb_rule_step dtb_rules_step(const dtb_rules *r, const dtb_board *b, const dtb_pos *before,
                             const dtb_move *mv, const dtb_pos *after, int count)
{
    const int cls = dtb_rules_pos_class(r, b, after);
    const int c = next_count_in(r, cls, before, after, count);
    return (dtb_rule_step){.count = c, .reset = resets_in(r, cls, before, mv, after, c),
                           .limit = class_limit(r, cls, c)};
}
