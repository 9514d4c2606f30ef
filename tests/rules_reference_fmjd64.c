/* The reference solver of the FMJD-64 move-count draw rules (rules_reference_fmjd64.h).
 *
 * Every state (p, h, c) is computed from its definition, and each only after everything it
 * reads is final. The order: materials as dtb_material_list gives them (a capture or a promotion
 * lands in an earlier material), a material together with its colour flip (a move's result, the
 * opponent to move, is stored as the flip's white to move: the pair).
 *
 * A pair whose materials leave a side without a king is case N in every position: every move
 * into it resets the clock, so its values do not depend on h (one clock stored), and its king
 * moves make cycles. It is solved by a plain fixpoint: won when some move reaches a lost state,
 * lost when every move reaches a won one, again until nothing changes; the rest is drawn.
 *
 * Any other pair: men advancement levels from the most advanced down (a man's move adds a row of
 * advancement within the pair), within a level h from the largest limit down to 0, every count
 * c at each h. A state then reads only final states: a move that resets the clock leaves the
 * level (a capture or a promotion leaves the material, a man's move the level; a king's quiet
 * move never resets outside N), and one that does not reads h + 1 (in this level, one round
 * earlier, or elsewhere). The count only rises, but that order is not needed: every count of
 * h + 1 is final before h starts. None of this is trusted: each read checks that the state it
 * reads has been computed and stops the program otherwise.
 *
 * The moves of a level's positions are generated once and kept, with what the rules need of
 * each (its facts), since every round of h and c reads the same moves. */
#include "rules_reference_fmjd64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "material.h"

static void fail(const char *what)
{
    fprintf(stderr, "rules_reference_fmjd64: %s\n", what);
    abort();
}

/* ---- The rules ----------------------------------------------------------------------------- */

dtb_bb ref64_long_diagonal(const dtb_board *b)
{
    dtb_bb d = 0;
    int n = 0;
    for (int row = 0; row < b->size; row++) {
        const int s = dtb_board_square(b, row, b->size - 1 - row);
        if (s >= 0) {
            d |= dtb_bb_bit(s);
            n++;
        }
    }
    if (n != b->size)
        fail("the board has no playable diagonal of board->size squares");
    return d;
}

static bool lone_king(const dtb_material *m, int side)
{
    return m->kings[side] == 1 && m->men[side] == 0;
}

ref64_case ref64_case_of(const dtb_board *b, const dtb_pos *p)
{
    const dtb_material m = dtb_material_of(p);
    for (int s = 0; s < 2; s++) {
        const int o = s ^ 1, strong = m.kings[o] + m.men[o];
        if (!lone_king(&m, s) || m.kings[o] == 0)
            continue;
        if (strong <= 2)
            return REF64_A;
        /* the lone king on the long diagonal and no other piece there */
        if (strong == 3 && (dtb_pos_occupied(p) & ref64_long_diagonal(b)) == p->kings[s])
            return REF64_B;
        if (m.men[o] == 0)
            return REF64_C;
        break; /* lidraughts looks at the first lone king only (KvK is A either way) */
    }
    if (m.kings[0] > 0 && m.kings[1] > 0) {
        const int n = dtb_material_pieces(&m);
        return n == 4 || n == 5 ? REF64_D45 : n == 6 || n == 7 ? REF64_D67 : REF64_E;
    }
    return REF64_N;
}

int ref64_case_limit(const ref64_limits *l, ref64_case k, int c)
{
    switch (k) {
    case REF64_A:
        return l->a;
    case REF64_B:
        return c >= l->threshold ? l->b_late : l->b_early;
    case REF64_C:
        return l->c;
    case REF64_D45:
        return l->d45;
    case REF64_D67:
        return l->d67;
    case REF64_E:
        return l->e;
    case REF64_N:
        break;
    }
    return -1;
}

int ref64_limit_of(const dtb_board *b, const ref64_limits *l, const dtb_pos *p, int c)
{
    return ref64_case_limit(l, ref64_case_of(b, p), c);
}

bool ref64_family(const dtb_material *m)
{
    for (int s = 0; s < 2; s++) {
        const int o = s ^ 1;
        if (lone_king(m, s) && m->kings[o] >= 1 && m->kings[o] + m->men[o] == 3)
            return true;
    }
    return false;
}

/* What the rules need of a move: the case after it, and the move's own properties. */
typedef struct facts {
    uint8_t after; /* a ref64_case (a byte: a level keeps the facts of every move) */
    bool capture, promotes, man_moved;
    bool first_promotion; /* promotes, and the mover has exactly one king after it */
    bool family_before, family_after;
    uint8_t pieces_before, pieces_after;
} facts;

static facts facts_of(const dtb_board *b, const dtb_pos *p, const dtb_move *mv)
{
    dtb_pos q;
    dtb_make_move(p, mv, &q);
    const dtb_material mp = dtb_material_of(p), mq = dtb_material_of(&q);
    const facts f = {
        .after = (uint8_t)ref64_case_of(b, &q),
        .capture = mv->ncaptured > 0,
        .promotes = mv->promotes,
        .man_moved = dtb_bb_has(p->men[p->side], mv->from),
        .first_promotion = mv->promotes && mq.kings[p->side] == 1,
        .family_before = ref64_family(&mp),
        .family_after = ref64_family(&mq),
        .pieces_before = (uint8_t)dtb_material_pieces(&mp),
        .pieces_after = (uint8_t)dtb_material_pieces(&mq),
    };
    return f;
}

static int clamp_count(const ref64_limits *l, int c)
{
    if (c < 0)
        fail("a negative count");
    return c < l->threshold ? c : l->threshold;
}

/* The count after a move with facts f from a count c. */
static int count_after(const ref64_limits *l, const facts *f, int c)
{
    if (!f->family_after)
        return 0;
    return clamp_count(l, (f->family_before ? c : 0) + (f->after == REF64_B));
}

/* Whether a move with facts f resets the clock, the count after it being c_after. */
static bool resets_after(const ref64_limits *l, const facts *f, int c_after)
{
    switch ((ref64_case)f->after) {
    case REF64_N:
        return true;
    case REF64_C:
        return f->capture || f->promotes;
    case REF64_E:
        return f->capture || f->promotes || f->man_moved;
    case REF64_D45:
    case REF64_D67:
        return f->capture || f->promotes;
    case REF64_B:
        if (c_after < l->threshold) /* limit 30: as C, but only a first promotion */
            return f->capture || f->first_promotion;
        break; /* limit 10: as A */
    case REF64_A:
        break;
    }
    return f->first_promotion || (f->capture && f->pieces_before > 3 && f->pieces_after <= 3);
}

int ref64_next_count(const dtb_board *b, const ref64_limits *l, const dtb_pos *p,
                     const dtb_move *mv, int c)
{
    const facts f = facts_of(b, p, mv);
    return count_after(l, &f, clamp_count(l, c));
}

bool ref64_resets(const dtb_board *b, const ref64_limits *l, const dtb_pos *p, const dtb_move *mv,
                  int c)
{
    const facts f = facts_of(b, p, mv);
    return resets_after(l, &f, count_after(l, &f, clamp_count(l, c)));
}

/* ---- States -------------------------------------------------------------------------------- */

/* A state's byte. The value for the side to move is the code minus 2. PENDING: not decided yet
 * by the fixpoint of the pair being solved. */
enum { UNSET = 0, LOSS = 1, DRAW = 2, WIN = 3, PENDING = 4 };

/* One material, white to move (black to move is the colour flip's white to move). */
typedef struct table {
    dtb_material m;
    dtb_index *ix;
    bool no_count; /* a side without a king: case N everywhere */
    int hmax;      /* clocks 0..hmax stored: the largest limit of its positions (0 in N) */
    int counts;    /* counts 0..counts-1 stored: threshold + 1 in the family, else 1 */
    uint8_t *v;    /* state (i, h, c) at (i * (hmax + 1) + h) * counts + c; NULL: not solved */
    bool solving;  /* its pair's fixpoint runs: PENDING may be read */
} table;

struct ref64 {
    const dtb_board *b;
    ref64_limits l;
    int max_pieces;
    int ntables;
    table *t;
    int *table_of; /* by the material's four counts, each 0..max_pieces: its table, or -1 */
};

static size_t state_at(const table *t, uint64_t i, int h, int c)
{
    return ((size_t)i * (size_t)(t->hmax + 1) + (size_t)h) * (size_t)t->counts + (size_t)c;
}

static int table_of(const ref64 *r, const dtb_material *m)
{
    const int n = r->max_pieces + 1;
    if (dtb_material_pieces(m) > r->max_pieces)
        return -1;
    return r->table_of[((m->kings[0] * n + m->kings[1]) * n + m->men[0]) * n + m->men[1]];
}

/* The code of state (i, h, c) of table k, h and c beyond what is stored read where their value
 * is the same (the limits are at most hmax, the count is clamped). Stops the program on a state
 * not computed yet. */
static int code_of(const ref64 *r, int k, uint64_t i, int h, int c)
{
    const table *t = &r->t[k];
    if (!t->v)
        fail("a state of a material not solved");
    if (h < 0 || c < 0)
        fail("a negative clock or count");
    const int hs = h < t->hmax ? h : t->hmax, cs = c < t->counts ? c : t->counts - 1;
    const int code = t->v[state_at(t, i, hs, cs)];
    if (code == UNSET || (code == PENDING && !t->solving))
        fail("a state read before it was computed");
    return code;
}

int ref64_value(const ref64 *r, const dtb_pos *p, int h, int c)
{
    dtb_pos w = *p;
    if (w.side == DTB_BLACK)
        dtb_pos_flip(r->b, p, &w);
    const dtb_material m = dtb_material_of(&w);
    if (m.kings[0] + m.men[0] == 0)
        return -1; /* no piece, no legal move */
    const int k = table_of(r, &m);
    if (k < 0)
        fail("ref64_value: no table for this position");
    const int code = code_of(r, k, dtb_index_of(r->t[k].ix, &w), h, clamp_count(&r->l, c));
    if (code == PENDING)
        fail("ref64_value: a state not decided");
    return code - 2;
}

const ref64_limits *ref64_limits_of(const ref64 *r)
{
    return &r->l;
}

/* ---- A set of positions with their moves ---------------------------------------------------- */

/* A move's successor: its table (-1 when the move took the opponent's last piece: lost for it)
 * and index, as white to move, and the move's facts. */
typedef struct succ {
    int32_t table;
    facts f;
    uint64_t index;
} succ;

/* Positions (white to move) and their moves: those of position j in s[first[j] .. first[j + 1]). */
typedef struct moves {
    size_t npos;
    int *table;
    uint64_t *index;
    ref64_case *kase; /* the position's own case */
    size_t *first;
    succ *s;
    size_t nsucc, cap;
} moves;

static void moves_free(moves *l)
{
    free(l->table);
    free(l->index);
    free(l->kase);
    free(l->first);
    free(l->s);
}

/* Adds position j (p, white to move, of table k, index i) with its moves. */
static bool add_position(const ref64 *r, moves *l, size_t j, int k, uint64_t i, const dtb_pos *p,
                         dtb_movelist *ml)
{
    if (dtb_generate(r->b, p, ml) != DTB_OK)
        return false;
    if (l->nsucc + (size_t)ml->count > l->cap) {
        const size_t cap = 2 * l->cap + (size_t)ml->count + 1024;
        succ *s = realloc(l->s, cap * sizeof *s);
        if (!s)
            return false;
        l->s = s;
        l->cap = cap;
    }
    l->table[j] = k;
    l->index[j] = i;
    l->kase[j] = ref64_case_of(r->b, p);
    l->first[j] = l->nsucc;
    for (int x = 0; x < ml->count; x++) {
        dtb_pos q;
        dtb_make_move(p, &ml->moves[x], &q);
        dtb_pos_flip(r->b, &q, &q); /* the opponent to move, as white */
        const dtb_material m = dtb_material_of(&q);
        succ *s = &l->s[l->nsucc++];
        s->f = facts_of(r->b, p, &ml->moves[x]);
        s->table = -1;
        s->index = 0;
        if (m.kings[0] + m.men[0] > 0) {
            s->table = table_of(r, &m);
            if (s->table < 0)
                fail("a move into a material beyond max_pieces");
            s->index = dtb_index_of(r->t[s->table].ix, &q);
        }
    }
    return true;
}

/* How far the men of a block have come: rows from their own side, summed over both colours.
 * A man's move adds one; the colour flip keeps it. */
static int advancement(const dtb_board *b, dtb_bb white_men, dtb_bb black_men)
{
    int a = 0;
    while (white_men)
        a += b->size - 1 - dtb_board_row(b, dtb_bb_pop(&white_men));
    while (black_men)
        a += dtb_board_row(b, dtb_bb_pop(&black_men));
    return a;
}

/* Fills l with the positions of the pair's members whose blocks have advancement a (a < 0:
 * every position) and their moves. */
static bool moves_fill(const ref64 *r, const int *pair, int members, uint8_t *const adv[2], int a,
                       moves *l)
{
    for (int x = 0; x < members; x++) {
        const dtb_index *ix = r->t[pair[x]].ix;
        for (uint64_t blk = 0; blk < dtb_index_blocks(ix); blk++)
            l->npos += a < 0 || adv[x][blk] == a ? dtb_index_block_size(ix) : 0;
    }
    l->table = malloc((l->npos + 1) * sizeof *l->table);
    l->index = malloc((l->npos + 1) * sizeof *l->index);
    l->kase = malloc((l->npos + 1) * sizeof *l->kase);
    l->first = malloc((l->npos + 1) * sizeof *l->first);
    dtb_movelist *ml = malloc(sizeof *ml);
    bool ok = l->table && l->index && l->kase && l->first && ml;
    size_t j = 0;
    for (int x = 0; ok && x < members; x++) {
        const dtb_index *ix = r->t[pair[x]].ix;
        const uint64_t bs = dtb_index_block_size(ix);
        for (uint64_t blk = 0; ok && blk < dtb_index_blocks(ix); blk++) {
            if (a >= 0 && adv[x][blk] != a)
                continue;
            for (uint64_t i = blk * bs; ok && i < (blk + 1) * bs; i++, j++) {
                dtb_pos p;
                dtb_index_pos(ix, i, &p);
                ok = add_position(r, l, j, pair[x], i, &p, ml);
            }
        }
    }
    if (ok)
        l->first[l->npos] = l->nsucc;
    free(ml);
    return ok;
}

/* ---- Solving -------------------------------------------------------------------------------- */

/* The value of state (position j of l, h, c) from its definition. */
static int state_code(const ref64 *r, const moves *l, size_t j, int h, int c)
{
    if (l->first[j] == l->first[j + 1])
        return LOSS; /* no legal move: lost before any draw rule */
    const int limit = ref64_case_limit(&r->l, l->kase[j], c);
    if (limit >= 0 && h >= limit)
        return DRAW;
    int best = -1;
    for (size_t x = l->first[j]; x < l->first[j + 1] && best < 1; x++) {
        const succ *s = &l->s[x];
        int v = 1; /* the opponent's last piece taken */
        if (s->table >= 0) {
            const int c2 = count_after(&r->l, &s->f, c);
            const int h2 = resets_after(&r->l, &s->f, c2) ? 0 : h + 1;
            const int code = code_of(r, s->table, s->index, h2, c2);
            if (code == PENDING)
                fail("a state of the pair read during its own solve");
            v = -(code - 2);
        }
        best = v > best ? v : best;
    }
    return best + 2;
}

/* A pair with case N everywhere (no_count): every move resets, values do not depend on h. One
 * round of the fixpoint for position j: WIN, LOSS or still PENDING. */
static int fixpoint_code(const ref64 *r, const moves *l, size_t j)
{
    if (l->first[j] == l->first[j + 1])
        return LOSS;
    bool all_won = true;
    for (size_t x = l->first[j]; x < l->first[j + 1]; x++) {
        const succ *s = &l->s[x];
        if (s->table < 0)
            return WIN;
        const int c2 = count_after(&r->l, &s->f, 0);
        if (!resets_after(&r->l, &s->f, c2))
            fail("a move from a no-count position that keeps the clock");
        const int code = code_of(r, s->table, s->index, 0, c2);
        if (code == LOSS)
            return WIN;
        all_won = all_won && code == WIN;
    }
    return all_won ? LOSS : PENDING;
}

static bool solve_no_count(ref64 *r, const int *pair, int members)
{
    moves l = {0};
    bool ok = moves_fill(r, pair, members, NULL, -1, &l);
    for (int x = 0; x < members; x++)
        r->t[pair[x]].solving = true;
    for (size_t j = 0; ok && j < l.npos; j++)
        r->t[l.table[j]].v[state_at(&r->t[l.table[j]], l.index[j], 0, 0)] = PENDING;
    for (bool changed = ok; changed;) {
        changed = false;
        for (size_t j = 0; j < l.npos; j++) {
            uint8_t *v = &r->t[l.table[j]].v[state_at(&r->t[l.table[j]], l.index[j], 0, 0)];
            if (*v == PENDING && (*v = (uint8_t)fixpoint_code(r, &l, j)) != PENDING)
                changed = true;
        }
    }
    for (size_t j = 0; ok && j < l.npos; j++) {
        uint8_t *v = &r->t[l.table[j]].v[state_at(&r->t[l.table[j]], l.index[j], 0, 0)];
        *v = *v == PENDING ? DRAW : *v;
    }
    for (int x = 0; x < members; x++)
        r->t[pair[x]].solving = false;
    moves_free(&l);
    return ok;
}

static bool solve_levels(ref64 *r, const int *pair, int members)
{
    uint8_t *adv[2] = {NULL, NULL};
    int top = 0, hmax = 0;
    bool ok = true;
    for (int x = 0; ok && x < members; x++) {
        const table *t = &r->t[pair[x]];
        hmax = t->hmax > hmax ? t->hmax : hmax;
        ok = (adv[x] = malloc(dtb_index_blocks(t->ix))) != NULL;
        for (uint64_t blk = 0; ok && blk < dtb_index_blocks(t->ix); blk++) {
            dtb_bb wm, bm;
            dtb_index_block_men(t->ix, blk, &wm, &bm);
            adv[x][blk] = (uint8_t)advancement(r->b, wm, bm);
            top = adv[x][blk] > top ? adv[x][blk] : top;
        }
    }
    for (int a = top; ok && a >= 0; a--) {
        moves l = {0};
        ok = moves_fill(r, pair, members, adv, a, &l);
        for (int h = hmax; ok && h >= 0; h--) {
            for (size_t j = 0; j < l.npos; j++) {
                table *t = &r->t[l.table[j]];
                for (int c = 0; h <= t->hmax && c < t->counts; c++)
                    t->v[state_at(t, l.index[j], h, c)] = (uint8_t)state_code(r, &l, j, h, c);
            }
        }
        moves_free(&l);
    }
    free(adv[0]);
    free(adv[1]);
    return ok;
}

/* ---- Building ------------------------------------------------------------------------------- */

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

/* Sets t's shape from its positions (hmax: the largest limit any of them has with any count)
 * and allocates its states. */
static bool table_shape(const ref64 *r, table *t)
{
    t->no_count = t->m.kings[0] == 0 || t->m.kings[1] == 0;
    t->counts = ref64_family(&t->m) ? r->l.threshold + 1 : 1;
    t->hmax = 0;
    for (uint64_t i = 0; i < dtb_index_size(t->ix); i++) {
        dtb_pos p;
        dtb_index_pos(t->ix, i, &p);
        const ref64_case k = ref64_case_of(r->b, &p);
        if ((k == REF64_N) != t->no_count)
            fail("a material's positions not all of case N, or not all of another case");
        for (int c = 0; c < t->counts; c++) {
            const int limit = ref64_case_limit(&r->l, k, c);
            t->hmax = limit > t->hmax ? limit : t->hmax;
        }
    }
    t->v = calloc(state_at(t, dtb_index_size(t->ix), 0, 0), 1);
    return t->v != NULL;
}

ref64 *ref64_build(const dtb_board *b, int max_pieces, const ref64_limits *l)
{
    return ref64_build_only(b, max_pieces, l, NULL, 0);
}

ref64 *ref64_build_only(const dtb_board *b, int max_pieces, const ref64_limits *l,
                        const dtb_material *only, int nonly)
{
    const int lim[] = {l->a, l->b_early, l->b_late, l->c, l->d45, l->d67, l->e, l->threshold};
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i] < 1 || lim[i] > 250)
            fail("a limit or the threshold out of 1..250");
    ref64 *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->b = b;
    r->l = *l;
    r->max_pieces = max_pieces;
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
        table *t = &r->t[i];
        const dtb_material *m = &list[i];
        t->m = *m;
        r->table_of[((m->kings[0] * side + m->kings[1]) * side + m->men[0]) * side + m->men[1]] = i;
        ok = dtb_index_create(b, *m, &t->ix) == DTB_OK &&
             (!wanted(m, max_pieces, only, nonly) || table_shape(r, t));
    }
    for (int i = 0; ok && i < n; i++) {
        if (solved[i] || !wanted(&list[i], max_pieces, only, nonly))
            continue;
        const dtb_material f = dtb_material_flip(list[i]);
        const int pair[2] = {i, table_of(r, &f)};
        if (pair[1] < 0)
            fail("a material's flip not in the list");
        const int members = pair[1] == pair[0] ? 1 : 2;
        solved[pair[0]] = solved[pair[1]] = true;
        ok = r->t[i].no_count ? solve_no_count(r, pair, members) : solve_levels(r, pair, members);
    }
    free(list);
    free(solved);
    if (!ok) {
        ref64_free(r);
        return NULL;
    }
    return r;
}

void ref64_free(ref64 *r)
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
