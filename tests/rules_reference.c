/* The reference solver of the move-count draw rules (rules_reference.h).
 *
 * Every state (P, h) is computed from its definition, and each only after everything it reads
 * is final. The order: materials as dtb_material_list gives them (a capture or a promotion
 * lands in an earlier material), a material together with its colour flip (a move's result,
 * the opponent to move, is stored as the flip's white to move); within such a pair, men
 * advancement levels from the most advanced down (a man move adds one row of advancement to
 * the same pair); within a level, h from the limit down to 0. What a state reads then is final:
 * a reset successor (a capture, a promotion or a man move: another material or a higher level)
 * at h = 0, and a successor without reset at h + 1 (a king move: the same level, one round
 * earlier; anything else: another material or a higher level). Each read checks that the state
 * it reads has been computed, so a wrong order cannot go unnoticed.
 *
 * The moves of a level's positions are generated once and kept, since every round of h reads
 * the same moves. */
#include "rules_reference.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "material.h"

/* A state's two bits. The value for the side to move is the code minus 2. */
enum { UNSET = 0, LOSS = 1, DRAW = 2, WIN = 3 };

/* One material, white to move (black to move is the colour flip's white to move): the value of
 * state (index i, h) for h = 0..limit in the 2 bits at position i * (limit + 1) + h of v. */
typedef struct ref_table {
    dtb_index *ix;
    int limit;
    uint8_t *v;
} ref_table;

struct ref_rules {
    const dtb_board *b;
    bool one_class; /* english: the WCDF's 40-move rule has no material cases */
    int max_pieces;
    int limits[3];
    int ntables;
    ref_table *t;
    int *table_of; /* by the material's four counts, each 0..max_pieces: its table, or -1 */
};

/* ---- The rules ----------------------------------------------------------------------------- */

static int class_of(const ref_rules *r, const dtb_material *m)
{
    if (r->one_class)
        return REF_RULES_G;
    for (int c = 0; c < 2; c++) {
        const int o = c ^ 1, other = m->kings[o] + m->men[o];
        if (m->kings[c] != 1 || m->men[c] != 0) /* c is not a lone king */
            continue;
        if (m->kings[o] == 0)
            return REF_RULES_G;
        return other <= 2 ? REF_RULES_F : other == 3 ? REF_RULES_S : REF_RULES_G;
    }
    return REF_RULES_G;
}

int ref_rules_class_limit(const ref_rules *r, const dtb_pos *p)
{
    const dtb_material m = dtb_material_of(p);
    return r->limits[class_of(r, &m)];
}

bool ref_rules_resets(const ref_rules *r, const dtb_pos *p, const dtb_move *m)
{
    dtb_pos q;
    dtb_make_move(p, m, &q);
    const dtb_material after = dtb_material_of(&q);
    const bool capture = m->ncaptured > 0;
    const int before = dtb_bb_count(dtb_pos_occupied(p));
    /* lidraughts' "first promotion": the mover's only king is the one this move makes */
    const bool first_promotion = m->promotes && after.kings[p->side] == 1;
    switch (class_of(r, &after)) {
    case REF_RULES_S:
        return first_promotion || (capture && before > 4);
    case REF_RULES_F:
        return first_promotion || (capture && before > 3);
    default: /* G: a capture, or a man moved (a promotion too) */
        return capture || dtb_bb_has(p->men[p->side], m->from);
    }
}

/* ---- States -------------------------------------------------------------------------------- */

static size_t state_at(const ref_table *t, uint64_t i, int h)
{
    return (size_t)i * (size_t)(t->limit + 1) + (size_t)h;
}

static int get_code(const ref_table *t, uint64_t i, int h)
{
    const size_t s = state_at(t, i, h);
    return t->v[s / 4] >> (2 * (s % 4)) & 3;
}

static void set_code(ref_table *t, uint64_t i, int h, int code)
{
    const size_t s = state_at(t, i, h);
    t->v[s / 4] = (uint8_t)((t->v[s / 4] & ~(3 << (2 * (s % 4)))) | code << (2 * (s % 4)));
}

static int table_of(const ref_rules *r, const dtb_material *m)
{
    const int n = r->max_pieces + 1;
    if (dtb_material_pieces(m) > r->max_pieces)
        return -1;
    return r->table_of[((m->kings[0] * n + m->kings[1]) * n + m->men[0]) * n + m->men[1]];
}

/* A state's value for its side to move, read where it is final: at h (the limit's value beyond
 * the limit) of table t's position i. A read of a state not computed yet stops the program. */
static int final_value(const ref_rules *r, int t, uint64_t i, int h)
{
    const ref_table *tt = &r->t[t];
    const int code = get_code(tt, i, h < tt->limit ? h : tt->limit);
    if (code == UNSET) {
        fprintf(stderr, "rules_reference: a state read before it was computed\n");
        abort();
    }
    return code - 2;
}

int ref_rules_value(const ref_rules *r, const dtb_pos *p, int h)
{
    dtb_pos w = *p;
    if (w.side == DTB_BLACK)
        dtb_pos_flip(r->b, p, &w);
    const dtb_material m = dtb_material_of(&w);
    if (m.kings[0] + m.men[0] == 0)
        return -1; /* no piece, no legal move */
    const int k = table_of(r, &m);
    if (k < 0 || h < 0) {
        fprintf(stderr, "ref_rules_value: no table for this position, or h %d < 0\n", h);
        abort();
    }
    return final_value(r, k, dtb_index_of(r->t[k].ix, &w), h);
}

/* ---- One level's moves --------------------------------------------------------------------- */

/* A successor by a move that does not reset the clock: its table and its index. */
#define SUCC_INDEX_BITS 40

/* What every round of h reads of a level's positions. A move that resets the clock leads to a
 * state (P', 0) that is final before the level starts and the same for every h: each position
 * keeps only the best of those, for its side to move. */
typedef struct level {
    size_t npos;
    int *table;         /* per position: its table */
    uint64_t *index;    /* per position: its index */
    int8_t *reset_best; /* per position: the best of its resetting moves, NO_RESET without one */
    size_t *first;      /* per position j: its other moves lead to succ[first[j] .. first[j + 1]) */
    uint64_t *succ;
    size_t nsucc, cap;
} level;

#define NO_RESET (-2)

static void level_free(level *l)
{
    free(l->table);
    free(l->index);
    free(l->reset_best);
    free(l->first);
    free(l->succ);
}

/* Fills the level's position j (p, white to move) with its moves. */
static bool add_moves(const ref_rules *r, level *l, size_t j, const dtb_pos *p, dtb_movelist *ml)
{
    if (dtb_generate(r->b, p, ml) != DTB_OK)
        return false;
    if (l->nsucc + (size_t)ml->count > l->cap) {
        const size_t cap = 2 * l->cap + (size_t)ml->count + 1024;
        uint64_t *s = realloc(l->succ, cap * sizeof *s);
        if (!s)
            return false;
        l->succ = s;
        l->cap = cap;
    }
    l->first[j] = l->nsucc;
    int best = NO_RESET;
    for (int i = 0; i < ml->count; i++) {
        dtb_pos q;
        dtb_make_move(p, &ml->moves[i], &q);
        dtb_pos_flip(r->b, &q, &q); /* the opponent to move, as white */
        const dtb_material m = dtb_material_of(&q);
        if (m.kings[0] + m.men[0] == 0) { /* its last piece taken: no legal move, lost */
            best = 1;
            continue;
        }
        const int k = table_of(r, &m);
        const uint64_t x = dtb_index_of(r->t[k].ix, &q);
        if (ref_rules_resets(r, p, &ml->moves[i])) {
            const int v = -final_value(r, k, x, 0);
            best = v > best ? v : best;
        } else {
            l->succ[l->nsucc++] = x | (uint64_t)k << SUCC_INDEX_BITS;
        }
    }
    l->reset_best[j] = (int8_t)best;
    return true;
}

static int state_code(const ref_rules *r, const level *l, size_t j, int h)
{
    if (l->reset_best[j] == NO_RESET && l->first[j] == l->first[j + 1])
        return LOSS; /* no legal move: lost before any draw rule */
    if (h >= r->t[l->table[j]].limit)
        return DRAW;
    int best = l->reset_best[j];
    for (size_t i = l->first[j]; i < l->first[j + 1] && best < 1; i++) {
        const uint64_t s = l->succ[i];
        const uint64_t x = s & (((uint64_t)1 << SUCC_INDEX_BITS) - 1);
        const int v = -final_value(r, (int)(s >> SUCC_INDEX_BITS), x, h + 1);
        best = v > best ? v : best;
    }
    return best + 2;
}

/* How far the men of a block have come: rows from their own side, summed over both colours.
 * A man move adds one; the colour flip keeps it. */
static int advancement(const dtb_board *b, dtb_bb white_men, dtb_bb black_men)
{
    int a = 0;
    while (white_men)
        a += b->size - 1 - dtb_board_row(b, dtb_bb_pop(&white_men));
    while (black_men)
        a += dtb_board_row(b, dtb_bb_pop(&black_men));
    return a;
}

/* Fills l with the positions of the pair's blocks whose advancement is `a` and their moves. */
static bool level_fill(const ref_rules *r, const int pair[2], int members, uint8_t *const adv[2],
                       int a, level *l)
{
    for (int k = 0; k < members; k++) {
        const dtb_index *ix = r->t[pair[k]].ix;
        for (uint64_t blk = 0; blk < dtb_index_blocks(ix); blk++)
            l->npos += adv[k][blk] == a ? dtb_index_block_size(ix) : 0;
    }
    l->table = malloc((l->npos + 1) * sizeof *l->table);
    l->index = malloc((l->npos + 1) * sizeof *l->index);
    l->reset_best = malloc((l->npos + 1) * sizeof *l->reset_best);
    l->first = malloc((l->npos + 1) * sizeof *l->first);
    dtb_movelist *ml = malloc(sizeof *ml);
    bool ok = l->table && l->index && l->reset_best && l->first && ml;
    size_t j = 0;
    for (int k = 0; ok && k < members; k++) {
        const dtb_index *ix = r->t[pair[k]].ix;
        const uint64_t bs = dtb_index_block_size(ix);
        for (uint64_t blk = 0; ok && blk < dtb_index_blocks(ix); blk++) {
            for (uint64_t i = blk * bs; adv[k][blk] == a && ok && i < (blk + 1) * bs; i++, j++) {
                dtb_pos p;
                dtb_index_pos(ix, i, &p);
                l->table[j] = pair[k];
                l->index[j] = i;
                ok = add_moves(r, l, j, &p, ml);
            }
        }
    }
    if (ok)
        l->first[l->npos] = l->nsucc;
    free(ml);
    return ok;
}

/* Solves a material and its colour flip (pair[0] == pair[1] when it is its own). */
static bool solve_pair(ref_rules *r, const int pair[2])
{
    const int members = pair[1] == pair[0] ? 1 : 2;
    uint8_t *adv[2] = {NULL, NULL};
    int top = 0;
    bool ok = true;
    for (int k = 0; ok && k < members; k++) {
        const dtb_index *ix = r->t[pair[k]].ix;
        ok = (adv[k] = malloc(dtb_index_blocks(ix))) != NULL;
        for (uint64_t blk = 0; ok && blk < dtb_index_blocks(ix); blk++) {
            dtb_bb wm, bm;
            dtb_index_block_men(ix, blk, &wm, &bm);
            adv[k][blk] = (uint8_t)advancement(r->b, wm, bm);
            top = adv[k][blk] > top ? adv[k][blk] : top;
        }
    }
    for (int a = top; ok && a >= 0; a--) {
        level l = {0};
        ok = level_fill(r, pair, members, adv, a, &l);
        for (int h = r->t[pair[0]].limit; ok && h >= 0; h--)
            for (size_t j = 0; j < l.npos; j++)
                set_code(&r->t[l.table[j]], l.index[j], h, state_code(r, &l, j, h));
        level_free(&l);
    }
    free(adv[0]);
    free(adv[1]);
    return ok;
}

/* Whether m (or its flip) is among the largest materials asked for (NULL: all of them). */
static bool wanted(const dtb_material *m, int max_pieces, const dtb_material *only, int nonly)
{
    if (!only || dtb_material_pieces(m) < max_pieces)
        return true;
    const dtb_material f = dtb_material_flip(*m);
    for (int i = 0; i < nonly; i++)
        if (dtb_material_equal(&only[i], m) || dtb_material_equal(&only[i], &f))
            return true;
    return false;
}

ref_rules *ref_rules_build(const dtb_board *b, int max_pieces, const int limits[3])
{
    return ref_rules_build_only(b, max_pieces, limits, NULL, 0);
}

ref_rules *ref_rules_build_only(const dtb_board *b, int max_pieces, const int limits[3],
                                const dtb_material *only, int nonly)
{
    ref_rules *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->b = b;
    r->one_class = strcmp(b->variant->name, "english") == 0;
    r->max_pieces = max_pieces;
    memcpy(r->limits, limits, sizeof r->limits);
    const int n = dtb_material_list(max_pieces, NULL, 0);
    const size_t side = (size_t)max_pieces + 1, lookup = side * side * side * side;
    dtb_material *list = malloc((size_t)n * sizeof *list);
    bool *solved = calloc((size_t)n, sizeof *solved);
    r->t = calloc((size_t)n, sizeof *r->t);
    r->table_of = malloc(lookup * sizeof *r->table_of);
    bool ok = list && solved && r->t && r->table_of;
    if (ok) {
        r->ntables = n;
        dtb_material_list(max_pieces, list, n);
        for (size_t i = 0; i < lookup; i++)
            r->table_of[i] = -1;
    }
    for (int i = 0; ok && i < n; i++) {
        ref_table *t = &r->t[i];
        const dtb_material *m = &list[i];
        t->limit = limits[class_of(r, m)];
        r->table_of[((m->kings[0] * side + m->kings[1]) * side + m->men[0]) * side + m->men[1]] = i;
        ok = dtb_index_create(b, *m, &t->ix) == DTB_OK &&
             (t->v = calloc(wanted(m, max_pieces, only, nonly)
                                ? state_at(t, dtb_index_size(t->ix), 0) / 4 + 1 : 1, 1)) != NULL;
    }
    for (int i = 0; ok && i < n; i++) {
        if (solved[i] || !wanted(&list[i], max_pieces, only, nonly))
            continue;
        const dtb_material f = dtb_material_flip(list[i]);
        const int pair[2] = {i, table_of(r, &f)};
        ok = pair[1] >= 0; /* always: the list holds every material's flip */
        if (ok) {
            solved[pair[0]] = solved[pair[1]] = true;
            ok = solve_pair(r, pair);
        }
    }
    free(list);
    free(solved);
    if (!ok) {
        ref_rules_free(r);
        return NULL;
    }
    return r;
}

void ref_rules_free(ref_rules *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->ntables; i++) {
        dtb_index_free(r->t[i].ix);
        free(r->t[i].v);
    }
    free(r->t);
    free(r->table_of);
    free(r);
}
