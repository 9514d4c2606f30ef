/* A direct-mapped registry: the four piece counts address a slot, so a lookup in the solver's
 * hot loop costs one multiply-add, no search. */
#include "solved.h"

#include <assert.h>
#include <stdlib.h>

#define SLOTS (DTB_SOLVED_MAX_COUNT + 1)

struct dtb_solved {
    const dtb_board *board;
    dtb_solved_table *slot[SLOTS * SLOTS * SLOTS * SLOTS];
};

static int slot_of(dtb_material m)
{
    return ((m.kings[0] * SLOTS + m.men[0]) * SLOTS + m.kings[1]) * SLOTS + m.men[1];
}

static bool fits(dtb_material m)
{
    return m.kings[0] <= DTB_SOLVED_MAX_COUNT && m.kings[1] <= DTB_SOLVED_MAX_COUNT &&
           m.men[0] <= DTB_SOLVED_MAX_COUNT && m.men[1] <= DTB_SOLVED_MAX_COUNT;
}

dtb_solved *dtb_solved_create(const dtb_board *b)
{
    dtb_solved *s = calloc(1, sizeof *s);
    if (s)
        s->board = b;
    return s;
}

static void table_free(dtb_solved_table *t)
{
    if (!t)
        return;
    dtb_index_free(t->index);
    free(t->values);
    free(t->captures);
    free(t);
}

void dtb_solved_free(dtb_solved *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < sizeof s->slot / sizeof s->slot[0]; i++)
        table_free(s->slot[i]);
    free(s);
}

dtb_solved_table *dtb_solved_add(dtb_solved *s, dtb_material m, dtb_error *e)
{
    if (!fits(m))
        return dtb_error_set(e, DTB_E_RANGE, "material has more than %d pieces of one kind",
                             DTB_SOLVED_MAX_COUNT), NULL;
    dtb_solved_table **slot = &s->slot[slot_of(m)];
    if (*slot)
        return *slot;
    dtb_solved_table *t = calloc(1, sizeof *t);
    if (!t)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory"), NULL;
    t->material = m;
    const dtb_status st = dtb_index_create(s->board, m, &t->index);
    if (st != DTB_OK) {
        free(t);
        return dtb_error_set(e, st, "cannot index the material"), NULL;
    }
    const uint64_t n = dtb_index_size(t->index);
    t->values = calloc(n ? n : 1, 1);
    t->captures = calloc(n / 64 + 1, sizeof *t->captures);
    if (!t->values || !t->captures) {
        table_free(t);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory for %llu positions",
                             (unsigned long long)n), NULL;
    }
    *slot = t;
    return t;
}

const dtb_solved_table *dtb_solved_find(const dtb_solved *s, dtb_material m)
{
    return fits(m) ? s->slot[slot_of(m)] : NULL;
}

void dtb_solved_drop(dtb_solved *s, dtb_material m)
{
    if (!fits(m))
        return;
    table_free(s->slot[slot_of(m)]);
    s->slot[slot_of(m)] = NULL;
}

const dtb_value *dtb_solved_value_at(const dtb_solved *s, const dtb_pos *p)
{
    static const dtb_value lost = 128; /* dtb_value_loss(0) */
    dtb_pos w = *p;
    if (w.side != DTB_WHITE)
        dtb_pos_flip(s->board, p, &w);
    if (!dtb_pos_pieces(&w, DTB_WHITE))
        return &lost;
    const dtb_solved_table *t = dtb_solved_find(s, dtb_material_of(&w));
    assert(t && "exit into a material that is not solved");
    return &t->values[dtb_index_of(t->index, &w)];
}

dtb_value dtb_solved_value(const dtb_solved *s, const dtb_pos *p) { return *dtb_solved_value_at(s, p); }

const dtb_board *dtb_solved_board(const dtb_solved *s) { return s->board; }
