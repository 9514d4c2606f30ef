/* A direct-mapped registry: the four piece counts address a slot, so a lookup in the solver's
 * hot loop costs one multiply-add, no search. */
#include "solved.h"

#include <assert.h>
#include <stdlib.h>

#define SLOTS (DTB_SOLVED_MAX_COUNT + 1)

/* A table and, on boards of up to 64 squares, what the inline index needs of its index. */
typedef struct entry {
    dtb_solved_table t; /* first: a dtb_solved_table * to it is an entry * */
    bool narrow;        /* fast is filled */
    dtb_index_fast fast;
} entry;

struct dtb_solved {
    const dtb_board *board;
    bool narrow;        /* at most 64 squares: positions fit in words */
    entry *slot[SLOTS * SLOTS * SLOTS * SLOTS];
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
    if (s) {
        s->board = b;
        s->narrow = b->squares <= 64;
    }
    return s;
}

static void table_free(entry *e)
{
    if (!e)
        return;
    dtb_index_free(e->t.index);
    free(e->t.values);
    free(e->t.captures);
    free(e);
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
    entry **slot = &s->slot[slot_of(m)];
    if (*slot)
        return &(*slot)->t;
    entry *en = calloc(1, sizeof *en);
    if (!en)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory"), NULL;
    dtb_solved_table *t = &en->t;
    t->material = m;
    const dtb_status st = dtb_index_create(s->board, m, &t->index);
    if (st != DTB_OK) {
        free(en);
        return dtb_error_set(e, st, "cannot index the material"), NULL;
    }
    en->narrow = s->narrow && dtb_index_fast_get(t->index, &en->fast);
    const uint64_t n = dtb_index_size(t->index);
    t->values = calloc(n ? n : 1, 1);
    t->captures = calloc(n / 64 + 1, sizeof *t->captures);
    if (!t->values || !t->captures) {
        table_free(en);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory for %llu positions",
                             (unsigned long long)n), NULL;
    }
    *slot = en;
    return t;
}

const dtb_solved_table *dtb_solved_find(const dtb_solved *s, dtb_material m)
{
    return fits(m) && s->slot[slot_of(m)] ? &s->slot[slot_of(m)]->t : NULL;
}

void dtb_solved_drop(dtb_solved *s, dtb_material m)
{
    if (!fits(m))
        return;
    table_free(s->slot[slot_of(m)]);
    s->slot[slot_of(m)] = NULL;
}

static const dtb_value lost = 128; /* dtb_value_loss(0) */

/* The narrow path: the four sets as words, flipped word-wise when black is to move, the slot
 * from four popcounts and the index inline (dtb_index_fast_of) when the table has it. */
static const dtb_value *value_at_narrow(const dtb_solved *s, const dtb_pos *p)
{
    uint64_t wm = (uint64_t)p->men[DTB_WHITE], bm = (uint64_t)p->men[DTB_BLACK];
    uint64_t wk = (uint64_t)p->kings[DTB_WHITE], bk = (uint64_t)p->kings[DTB_BLACK];
    if (p->side != DTB_WHITE) {
        const int sh = 64 - s->board->squares;
        const uint64_t t_m = wm, t_k = wk;
        wm = dtb_reverse64(bm) >> sh;
        bm = dtb_reverse64(t_m) >> sh;
        wk = dtb_reverse64(bk) >> sh;
        bk = dtb_reverse64(t_k) >> sh;
    }
    if (!(wm | wk))
        return &lost;
    const int cwk = __builtin_popcountll(wk), cwm = __builtin_popcountll(wm);
    const int cbk = __builtin_popcountll(bk), cbm = __builtin_popcountll(bm);
    const entry *en = cwk <= DTB_SOLVED_MAX_COUNT && cwm <= DTB_SOLVED_MAX_COUNT &&
                              cbk <= DTB_SOLVED_MAX_COUNT && cbm <= DTB_SOLVED_MAX_COUNT
                          ? s->slot[((cwk * SLOTS + cwm) * SLOTS + cbk) * SLOTS + cbm]
                          : NULL;
    assert(en && "exit into a material that is not solved");
    if (en->narrow)
        return &en->t.values[dtb_index_fast_of(&en->fast, wm, bm, wk, bk)];
    const dtb_pos w = {.men = {wm, bm}, .kings = {wk, bk}, .side = DTB_WHITE};
    return &en->t.values[dtb_index_of(en->t.index, &w)];
}

const dtb_value *dtb_solved_value_at(const dtb_solved *s, const dtb_pos *p)
{
    if (s->narrow)
        return value_at_narrow(s, p);
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
