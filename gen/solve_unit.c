/* The unit's machinery that the solver's states share (gen/solve_unit.h): setting a unit up,
 * its exits and man moves, predecessors (retrograde king moves), capture positions' values,
 * stats and progress. */
#include "solve_unit.h"

bool dtb_unit_bucket_add(bucket *q, uint32_t id)
{
    if (q->n == q->cap) {
        const size_t cap = q->cap ? 2 * q->cap : 1024;
        uint32_t *ids = realloc(q->ids, cap * sizeof *ids);
        if (!ids)
            return false;
        q->ids = ids;
        q->cap = cap;
    }
    q->ids[q->n++] = id;
    return true;
}

void dtb_unit_push(lane *ln, int level, uint32_t id)
{
    if (level > DTB_MAX_DTW) {
        ln->overflow = true;
        return;
    }
    if (!dtb_unit_bucket_add(&ln->q[level], id)) {
        ln->nomem = true;
        return;
    }
    if (level > ln->top)
        ln->top = level;
}

/* The position of local id (white to move, in its half's orientation). */
void dtb_unit_local_pos(const unit *u, uint64_t id, dtb_pos *p)
{
    const half *hf = &u->h[half_of(u, id)];
    p->men[DTB_WHITE] = hf->wmen;
    p->men[DTB_BLACK] = hf->bmen;
    p->side = DTB_WHITE;
    dtb_index_kings_at(hf->t->index, hf->men, in_half(u, id), &p->kings[DTB_WHITE], &p->kings[DTB_BLACK]);
}

/* fold_exits when the best exit is an escape byte (key 126: every exit an opponent's win, the
 * longest at 253 plies or beyond; key 128: every winning exit a loss at 254 or beyond): the
 * exact distances of the escapes decide. Rare: out of line. */
void dtb_unit_fold_long(const dtb_solved *s, const dtb_value *const *at,
                                                int n, int best, int *wincand, int *lossmax)
{
    const dtb_value esc = best == 128 ? DTB_VALUE_LOSS_ESCAPE : DTB_VALUE_WIN_ESCAPE;
    int shortest = INT_MAX, longest = -1;
    for (int i = 0; i < n; i++)
        if (*at[i] == esc) {
            const int d = dtb_wvalue_dtw(dtb_solved_exact(s, at[i]));
            shortest = d < shortest ? d : shortest;
            longest = d > longest ? d : longest;
        }
    *wincand = best == 128 ? shortest + 1 : NO_WIN_YET;
    *lossmax = best == 128 ? -1 : longest;
}

/* Whether black has one piece in material m: then whichever capture white makes takes it, and
 * a capture position is a win in 1 without its list (the solver and the loader both use it). */
bool dtb_unit_black_is_lone(const dtb_material *m)
{
    return m->kings[DTB_BLACK] + m->men[DTB_BLACK] == 1;
}

/* The value of a position whose moves all leave its unit, from the values they reach (at[0..n);
 * none: lost in 0), as flush_batch and mark_resolved decide it: capture positions, and every
 * position of a kingless pair. Sets *overflow when the distance is beyond DTB_MAX_DTW. */
dtb_wvalue dtb_unit_exits_value(const dtb_solved *s, const dtb_value *const *at, int n, bool *overflow)
{
    int wincand, lossmax;
    bool drawexit;
    fold_exits(s, at, n, &wincand, &lossmax, &drawexit);
    if (wincand != NO_WIN_YET) {
        *overflow |= wincand > DTB_MAX_DTW;
        return dtb_wvalue_win(wincand);
    }
    if (drawexit)
        return DTB_WVALUE_DRAW;
    *overflow |= lossmax + 1 > DTB_MAX_DTW;
    return dtb_wvalue_loss(lossmax + 1);
}


/* p at the first position of block blk of t (white to move set by the caller); returns the
 * block's men, which block_step keeps. */
static dtb_bb block_first(const dtb_solved_table *t, uint64_t blk, dtb_pos *p)
{
    dtb_index_block_men(t->index, blk, &p->men[DTB_WHITE], &p->men[DTB_BLACK]);
    const dtb_bb men = p->men[DTB_WHITE] | p->men[DTB_BLACK];
    dtb_index_kings_at(t->index, men, 0, &p->kings[DTB_WHITE], &p->kings[DTB_BLACK]);
    return men;
}

/* p to the next position of its block (there is one: the caller counts the block's K). */
static void block_step(const dtb_solved_table *t, dtb_bb men, dtb_pos *p)
{
    const bool more = dtb_index_kings_next(t->index, men, &p->kings[DTB_WHITE], &p->kings[DTB_BLACK]);
    assert(more);
    (void)more;
}

/* Decides and stores the batch's capture positions; false when a value is beyond DTB_MAX_DTW or
 * its long-list entry could not be stored. */
bool dtb_unit_flush_captures(const dtb_solved *s, dtb_solved_table *t, capture_batch *cb)
{
    bool ok = true;
    for (int k = 0; k < cb->npos; k++) {
        bool overflow = false;
        const dtb_wvalue v = dtb_unit_exits_value(s, &cb->exit[cb->first[k]], cb->n[k], &overflow);
        ok &= !overflow && dtb_solved_store_value(s, t, cb->at[k], v);
    }
    cb->npos = cb->nexit = 0;
    return ok;
}

bool dtb_solve_block_captures(const dtb_solved *s, dtb_solved_table *t, uint64_t blk)
{
    bool ok = true;
    const dtb_board *b = dtb_solved_board(s);
    const uint64_t K = dtb_index_block_size(t->index), first = blk * K;
    const bool lone = dtb_unit_black_is_lone(&t->material);
    dtb_pos p = {.side = DTB_WHITE};
    const dtb_bb men = block_first(t, blk, &p);
    capture_batch cb;
    cb.npos = cb.nexit = 0;
    capture_bits bits = {NULL, 0};
    for (uint64_t r = 0; r < K; r++) {
        if (r > 0)
            block_step(t, men, &p);
        const uint64_t i = first + r;
        dtb_movelist ml;
        if (lone) {
            if (!dtb_has_capture(b, &p))
                continue;
            t->values[i] = dtb_value_win(1);
        } else {
            const dtb_status st = dtb_generate_captures(b, &p, &ml);
            assert(st == DTB_OK);
            (void)st;
            if (ml.count == 0)
                continue;
            if (cb.nexit + ml.count > EXITS_CAP)
                ok &= dtb_unit_flush_captures(s, t, &cb);
            cb.at[cb.npos] = i;
            cb.first[cb.npos] = (uint16_t)cb.nexit;
            cb.n[cb.npos] = (uint16_t)ml.count;
            for (int m = 0; m < ml.count; m++) {
                const dtb_value *v = dtb_solved_value_after(s, &p, &ml.moves[m], &cb.slot[cb.nexit]);
                __builtin_prefetch(v);
                cb.exit[cb.nexit++] = v;
            }
            if (++cb.npos == BATCH)
                ok &= dtb_unit_flush_captures(s, t, &cb);
        }
        capture_bits_set(&bits, t->captures, i);
    }
    ok &= dtb_unit_flush_captures(s, t, &cb);
    capture_bits_flush(&bits);
    return ok;
}

/* Whether a white man of the half may jump a black king on one of the squares of kings (a
 * subset of over_free): a white man before it, in a direction men capture in, and the square
 * beyond free (occ: every piece). */
bool dtb_unit_man_takes_king(const dtb_board *b, const half *hf, dtb_bb kings, dtb_bb occ)
{
    const bool backward = b->variant->men_capture_backward;
    while (kings) {
        const int s = dtb_bb_pop(&kings);
        for (int d = 0; d < DTB_DIRS; d++) {
            if (!backward && d != dtb_forward_dir(DTB_WHITE, 0) && d != dtb_forward_dir(DTB_WHITE, 1))
                continue;
            const int m = b->next[s][d ^ 3], l = b->next[s][d];
            if (m >= 0 && l >= 0 && dtb_bb_has(hf->wmen, m) && !dtb_bb_has(occ, l))
                return true;
        }
    }
    return false;
}

/* predecessors in words, for halves with an inline index (f: the predecessor half's). The ranks
 * of the placements one white king's retrograde moves reach are computed from terms summed once
 * per king, as dtb_index_kings_of_moved does for the white kings (core/index.c); the black
 * kings likewise: the white king's square x counts below black king i (the i-th from the bottom,
 * d_i free squares below it with x empty) exactly when x is below it, so its term is
 * C(d_i, i + 1) for black kings under x and C(d_i - 1, i + 1) above: two sums split at the
 * number of black kings under x. */
static int predecessors_narrow(const unit *u, const dtb_index_fast *f, int h, int ph, uint64_t id,
                               uint64_t pids[DTB_MAX_MOVES])
{
    const dtb_board *b = u->b;
    const half *hf = &u->h[h];
    dtb_bb wkb, bkb;
    dtb_index_kings_at(hf->t->index, hf->men, in_half(u, id), &wkb, &bkb);
    /* black to move after the flip, in the predecessor's orientation: its white kings moved */
    const int shift = 64 - b->squares;
    const uint64_t fwk = dtb_reverse64((uint64_t)bkb) >> shift;
    const uint64_t fbk = dtb_reverse64((uint64_t)wkb) >> shift;
    const uint64_t men = (uint64_t)u->h[ph].men, empty = f->all & ~men, occ = men | fwk | fbk;
    const uint64_t land = u->h[ph].land_men;
    const bool fly = b->variant->kings_fly;
    const uint64_t (*const binom)[64] = dtb_index_binom64;
    const uint64_t base = (uint64_t)ph * u->K, nbk = f->nbk_count;
    const int nw = f->wk - 1, nb = f->bk; /* white kings besides the moving one; black kings */
    int np = 0;
    for (uint64_t kings = fwk; kings; kings &= kings - 1) {
        const int y = __builtin_ctzll(kings);
        const uint64_t rest = fwk ^ (1ull << y);
        /* A white man's jump over a black man whose landing square no other king holds is a
         * capture in every predecessor but the one whose king stands on that square: the rest
         * are capture positions, which learn nothing. (Half of all facts go to capture
         * positions; this spares the 7-13% that a man's jump makes so, at the cost of a mask.) */
        const uint64_t open = land & ~(rest | fbk);
        if (open & (open - 1))
            continue;
        uint64_t to = king_reach64(b, y, occ, fly);
        if (open)
            to &= open;
        if (!to)
            continue;
        /* white: a[m] the terms of rest's m lowest kings in place, c[m] those above, each one
         * place up (the moved king is under them) */
        uint64_t a[DTB_INDEX_KMAX64 + 1], c[DTB_INDEX_KMAX64 + 1];
        {
            int cnt[DTB_INDEX_KMAX64];
            uint64_t s = rest;
            for (int j = 0; j < nw; j++, s &= s - 1)
                cnt[j] = __builtin_popcountll(empty & ((s & -s) - 1));
            a[0] = 0;
            for (int m = 1; m <= nw; m++)
                a[m] = a[m - 1] + binom[m][cnt[m - 1]];
            c[nw] = 0;
            for (int m = nw - 1; m >= 0; m--)
                c[m] = c[m + 1] + binom[m + 2][cnt[m]];
        }
        /* black: p[m] the terms of the m lowest black kings (x above them), q[m] of the others
         * (x below them: one free square fewer) */
        uint64_t pb[DTB_INDEX_KMAX64 + 1], qb[DTB_INDEX_KMAX64 + 1];
        {
            const uint64_t free = empty & ~rest;
            int cnt[DTB_INDEX_KMAX64];
            uint64_t s = fbk;
            for (int i = 0; i < nb; i++, s &= s - 1)
                cnt[i] = __builtin_popcountll(free & ((s & -s) - 1));
            pb[0] = 0;
            for (int i = 0; i < nb; i++)
                pb[i + 1] = pb[i] + binom[i + 1][cnt[i]];
            qb[nb] = 0;
            for (int i = nb - 1; i >= 0; i--)
                qb[i] = qb[i + 1] + binom[i + 1][cnt[i] > 0 ? cnt[i] - 1 : 0];
        }
        for (; to; to &= to - 1) {
            const uint64_t below = (to & -to) - 1;
            const int m = __builtin_popcountll(rest & below), mb = __builtin_popcountll(fbk & below);
            const uint64_t rw = a[m] + binom[m + 1][__builtin_popcountll(empty & below)] + c[m];
            assert(np < DTB_MAX_MOVES);
            pids[np++] = base + rw * nbk + pb[mb] + qb[mb];
        }
    }
    return np;
}

/* The in-unit predecessors of id into pids: a predecessor un-moves one white king of the
 * flipped position along an empty ray; it counts only when it has no capture (learn_win and
 * learn_loss skip capture positions: there the king move was not legal). Returns how many. */
int dtb_unit_predecessors(const unit *u, uint64_t id, uint64_t pids[DTB_MAX_MOVES])
{
    const int h = half_of(u, id), ph = other(u, h);
    if (u->h[ph].t->material.kings[DTB_WHITE] == 0) /* no king moved: no need to unrank id */
        return 0;
    if (u->fx[ph] && u->fx[ph]->wk <= DTB_INDEX_KMAX64 && u->fx[ph]->bk <= DTB_INDEX_KMAX64)
        return predecessors_narrow(u, u->fx[ph], h, ph, id, pids);
    const dtb_board *b = u->b;
    dtb_pos q, qb;
    dtb_unit_local_pos(u, id, &q);
    dtb_pos_flip(b, &q, &qb); /* black to move, in the predecessor's orientation */
    const dtb_bb occ = dtb_pos_occupied(&qb);
    const bool fly = b->variant->kings_fly;
    /* Per white king, every square it can have come from, then all their ranks in one call. */
    const dtb_index *ix = u->h[ph].t->index;
    const uint64_t base = (uint64_t)ph * u->K;
    int np = 0;
    const dtb_bb land = u->h[ph].land_men;
    dtb_bb kings = qb.kings[DTB_WHITE];
    while (kings) {
        const int y = dtb_bb_pop(&kings);
        const dtb_bb rest = qb.kings[DTB_WHITE] ^ dtb_bb_bit(y);
        /* capture positions learn nothing: as in predecessors_narrow */
        const dtb_bb open = land & ~(rest | qb.kings[DTB_BLACK]);
        if (open & (open - 1))
            continue;
        int to[DTB_MAX_MOVES], nt = 0;
        for (int dir = 0; dir < DTB_DIRS; dir++)
            for (int x = b->next[y][dir]; x >= 0 && !dtb_bb_has(occ, x); x = fly ? b->next[x][dir] : -1) {
                assert(np + nt < DTB_MAX_MOVES);
                if (!open || dtb_bb_has(open, x))
                    to[nt++] = x;
            }
        if (!nt)
            continue;
        uint64_t rank[DTB_MAX_MOVES];
        dtb_index_kings_of_moved(ix, u->h[ph].men, rest, qb.kings[DTB_BLACK], nt, to, rank);
        for (int i = 0; i < nt; i++)
            pids[np++] = base + rank[i];
    }
    return np;
}

/* Counts a decided exact value v at index idx of its table: wins, losses and the longest win
 * (the smallest index among equals, so the stats do not depend on the order of the calls). */
void dtb_unit_count_result(dtb_solve_stats *st, uint64_t idx, dtb_wvalue v)
{
    if (dtb_wvalue_is_win(v)) {
        st->wins++;
        const int d = dtb_wvalue_dtw(v);
        if (d > st->longest_win || (d == st->longest_win && idx < st->longest_win_at)) {
            st->longest_win = d;
            st->longest_win_at = idx;
        }
    } else if (dtb_wvalue_is_loss(v)) {
        st->losses++;
    }
}

void dtb_unit_clear_values(const unit *u)
{
    for (int h = 0; h < u->nhalves; h++)
        memset(u->h[h].t->values + u->h[h].base, DTB_VALUE_DRAW, u->K);
}

/* Lists the non-promoting white man moves of a half (over the men alone; a king on the target
 * square is checked per position) with their target blocks in the flipped material `to`;
 * `flipped` is the unit's other half, whose men are this half's reversed. */
static void man_exits(const dtb_board *b, half *hf, const half *flipped, const dtb_solved_table *to)
{
    hf->nex = 0;
    hf->promo_to[0] = hf->promo_to[1] = 0;
    const dtb_bb empty = b->all & ~hf->men;
    /* may_capture's masks: every first jump of a white man that the men allow (predecessors'
     * too) */
    hf->land_men = hf->over_free = 0;
    const bool backward = b->variant->men_capture_backward;
    for (dtb_bb wm = hf->wmen; wm;) {
        const int m = dtb_bb_pop(&wm);
        for (int d = 0; d < DTB_DIRS; d++) {
            if (!backward && d != dtb_forward_dir(DTB_WHITE, 0) && d != dtb_forward_dir(DTB_WHITE, 1))
                continue;
            const int o = b->next[m][d], l = o >= 0 ? b->next[o][d] : -1;
            if (l < 0 || dtb_bb_has(hf->men, l))
                continue;
            if (dtb_bb_has(hf->bmen, o))
                hf->land_men |= dtb_bb_bit(l);
            else if (!dtb_bb_has(hf->wmen, o))
                hf->over_free |= dtb_bb_bit(o);
        }
    }
    /* After the flip the black men (reversed: the other half's white men) are white, the moved
     * white men black: a man moving from x to y changes the reversed white men (the other
     * half's black men) at squares-1-x and squares-1-y. */
    const dtb_bb fw = flipped->wmen, rwmen = flipped->bmen;
    assert(fw == dtb_bb_reverse(b, hf->bmen) && rwmen == dtb_bb_reverse(b, hf->wmen));
    const int last = b->squares - 1;
    const uint64_t K = dtb_index_block_size(to->index);
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(DTB_WHITE, k);
        dtb_bb dest = dtb_board_step(b, hf->wmen, d) & empty;
        while (dest) {
            const int sq = dtb_bb_pop(&dest);
            const int from = b->next[sq][d ^ 3];
            if (dtb_bb_has(b->promotion[DTB_WHITE], sq)) {
                hf->promo_to[k] |= dtb_bb_bit(sq);
                continue;
            }
            assert(hf->nex < MAX_MAN_EXITS);
            const dtb_bb fb = rwmen ^ dtb_bb_bit(last - from) ^ dtb_bb_bit(last - sq);
            assert(fb == dtb_bb_reverse(b, hf->wmen ^ dtb_bb_bit(from) ^ dtb_bb_bit(sq)));
            man_exit *x = &hf->ex[hf->nex++];
            x->to = dtb_bb_bit(sq);
            x->ix = to->index;
            x->values = to->values;
            x->men = fw | fb;
            x->base = dtb_index_block_of(to->index, fw, fb) * K;
            x->free = (uint64_t)(b->all & ~x->men);
        }
    }
}

/* Total advancement of the men: a man move adds one, the flip keeps it. */
static int advancement(const dtb_board *b, dtb_bb wmen, dtb_bb bmen)
{
    int a = 0;
    while (wmen)
        a += b->size - 1 - dtb_board_row(b, dtb_bb_pop(&wmen));
    while (bmen)
        a += dtb_board_row(b, dtb_bb_pop(&bmen));
    return a;
}

/* Halves of work item wk's unit: 1 when a self-flip material's block is its own flip. */
int dtb_unit_halves(const work *wk, bool self)
{
    return self && wk->fblock == wk->block ? 1 : 2;
}

/* The flipped block in ft of the block of t whose men are wm, bm. */
uint64_t dtb_unit_flipped_block(const dtb_board *b, const dtb_solved_table *ft, dtb_bb wm, dtb_bb bm)
{
    return dtb_index_block_of(ft->index, dtb_bb_reverse(b, bm), dtb_bb_reverse(b, wm));
}

/* The unit of block blk of t: its flipped block in ft and its advancement. */
work dtb_unit_work_of(const dtb_board *b, const dtb_solved_table *t, const dtb_solved_table *ft,
                    uint64_t blk)
{
    dtb_bb wm, bm;
    dtb_index_block_men(t->index, blk, &wm, &bm);
    return (work){blk, dtb_unit_flipped_block(b, ft, wm, bm), advancement(b, wm, bm)};
}

uint64_t dtb_solve_unit_list_bytes(uint64_t blocks, uint64_t block_size)
{
    return (units_listed(block_size) ? 1 + sizeof(work) : 1) * blocks;
}

void dtb_unit_merge_stats(dtb_solve_stats *into, const dtb_solve_stats *from)
{
    into->positions += from->positions;
    into->wins += from->wins;
    into->draws += from->draws;
    into->losses += from->losses;
    into->captures += from->captures;
    if (from->longest_win > into->longest_win ||
        (from->longest_win == into->longest_win && from->longest_win >= 0 &&
         from->longest_win_at < into->longest_win_at)) {
        into->longest_win = from->longest_win;
        into->longest_win_at = from->longest_win_at;
    }
}

void dtb_unit_stats_reset(dtb_solve_stats *st)
{
    *st = (dtb_solve_stats){0};
    st->longest_win = -1;
}

/* Sets up the unit of work item wk: its two halves, their men and man-move exits. */
void dtb_unit_setup(unit *u, const work *wk, dtb_solved_table *t, dtb_solved_table *ft, bool self)
{
    const uint64_t K = u->K;
    u->nhalves = dtb_unit_halves(wk, self);
    u->byte_limit[0] = dtb_solved_byte_limit(u->s, false);
    u->byte_limit[1] = dtb_solved_byte_limit(u->s, true);
    /* Field by field: a compound literal would clear the exit array (3.5 KB) every time, and
     * men-only materials have a unit per position. */
    u->h[0].t = t;
    u->h[0].base = wk->block * K;
    u->h[0].slot = 0;
    dtb_index_block_men(t->index, wk->block, &u->h[0].wmen, &u->h[0].bmen);
    /* In a self-flip material both halves are m itself. The flipped block holds the men of
     * block 0 with colours swapped (that is how fblock was found). */
    u->h[1].t = ft;
    u->h[1].base = wk->fblock * K;
    u->h[1].slot = self ? 0 : 1;
    u->h[1].wmen = dtb_bb_reverse(u->b, u->h[0].bmen);
    u->h[1].bmen = dtb_bb_reverse(u->b, u->h[0].wmen);
    for (int h = 0; h < 2; h++) {
        u->h[h].men = u->h[h].wmen | u->h[h].bmen;
        u->h[h].lone = dtb_unit_black_is_lone(&u->h[h].t->material);
        man_exits(u->b, &u->h[h], &u->h[1 - h], h == 0 ? ft : t);
        u->h[h].exf = u->fx[1 - h]; /* the exits of half 0 land in ft, of half 1 in t */
    }
}

void dtb_unit_report_progress(dtb_solve_progress progress, void *user, uint64_t *done,
                            uint64_t *pending, uint64_t total)
{
#pragma omp critical(dtb_progress)
    {
        *done += *pending;
        progress(user, *done, total);
    }
    *pending = 0;
}

bool dtb_unit_lanes_failed(const lane *lanes, int n)
{
    bool failed = false;
    for (int l = 0; l < n; l++)
        failed |= lanes[l].nomem || lanes[l].overflow;
    return failed;
}

void dtb_solve_stats_merge(dtb_solve_stats *into, const dtb_solve_stats *from)
{
    dtb_unit_merge_stats(into, from);
}

/* ---- the wins of a losses-only table (docs/FORMAT.md §8.7) ---------------------------------- */

/* Decides and stores the batch's quiet wins: each must have a move to a lost position (else
 * *bad, the smallest such index so far, is lowered to it). DTB_E_RANGE beyond DTB_MAX_DTW,
 * DTB_E_NOMEM for a long-list entry. Empties the batch. */
static dtb_status flush_wins(const dtb_solved *s, dtb_solved_table *t, capture_batch *cb,
                             uint64_t *bad)
{
    dtb_status st = DTB_OK;
    for (int k = 0; k < cb->npos; k++) {
        bool overflow = false;
        const dtb_wvalue v = dtb_unit_exits_value(s, &cb->exit[cb->first[k]], cb->n[k], &overflow);
        if (!dtb_wvalue_is_win(v)) {
            if (cb->at[k] < *bad)
                *bad = cb->at[k];
        } else if (overflow) {
            st = DTB_E_RANGE;
        } else if (!dtb_solved_store_value(s, t, cb->at[k], v) && st == DTB_OK) {
            st = DTB_E_NOMEM;
        }
    }
    cb->npos = cb->nexit = 0;
    return st;
}

dtb_status dtb_solve_block_wins(const dtb_solved *s, dtb_solved_table *t, uint64_t blk,
                                uint64_t *bad)
{
    dtb_status st = DTB_OK;
    const dtb_board *b = dtb_solved_board(s);
    const uint64_t K = dtb_index_block_size(t->index), first = blk * K;
    dtb_pos p = {.side = DTB_WHITE};
    const dtb_bb men = block_first(t, blk, &p);
    capture_batch cb;
    cb.npos = cb.nexit = 0;
    for (uint64_t r = 0; r < K; r++) {
        if (r > 0)
            block_step(t, men, &p);
        const uint64_t i = first + r;
        if ((t->captures[i / 64] >> (i % 64) & 1) || !dtb_value_is_win(t->values[i]))
            continue;
        dtb_movelist ml;
        const dtb_status gs = dtb_generate(b, &p, &ml);
        assert(gs == DTB_OK);
        (void)gs;
        if (cb.nexit + ml.count > EXITS_CAP) {
            const dtb_status fs = flush_wins(s, t, &cb, bad);
            st = st == DTB_OK ? fs : st;
        }
        cb.at[cb.npos] = i;
        cb.first[cb.npos] = (uint16_t)cb.nexit;
        cb.n[cb.npos] = (uint16_t)ml.count;
        for (int m = 0; m < ml.count; m++) {
            const dtb_value *v = dtb_solved_value_after(s, &p, &ml.moves[m], &cb.slot[cb.nexit]);
            __builtin_prefetch(v);
            cb.exit[cb.nexit++] = v;
        }
        if (++cb.npos == BATCH) {
            const dtb_status fs = flush_wins(s, t, &cb, bad);
            st = st == DTB_OK ? fs : st;
        }
    }
    const dtb_status fs = flush_wins(s, t, &cb, bad);
    return st == DTB_OK ? fs : st;
}

/* The blocks of t in parallel (the captures pass's chunks), their first failure and the
 * smallest bad index into *bad. */
static dtb_status wins_of_blocks(const dtb_solved *s, dtb_solved_table *t, uint64_t *bad)
{
    const uint64_t blocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    const uint64_t chunk = K >= 4096 ? 1 : 4096 / K;
    int worst = DTB_OK;
    uint64_t low = UINT64_MAX;
#pragma omp parallel for schedule(dynamic, chunk) reduction(min : low) reduction(max : worst)
    for (uint64_t blk = 0; blk < blocks; blk++) {
        uint64_t mine = UINT64_MAX;
        const dtb_status st = dtb_solve_block_wins(s, t, blk, &mine);
        low = mine < low ? mine : low;
        worst = (int)st > worst ? (int)st : worst; /* any failure */
    }
    *bad = low;
    return (dtb_status)worst;
}

/* A material that is its own flip reads its own table: a level of men advancement at a time,
 * each unit (a block and its flipped block, which king moves join) by one thread, so that no
 * position is rewritten while another thread reads it (man moves reach the level above,
 * finished or not yet started). */
static dtb_status wins_of_levels(const dtb_solved *s, dtb_solved_table *t, uint64_t *bad)
{
    const dtb_board *b = dtb_solved_board(s);
    const uint64_t blocks = dtb_index_blocks(t->index);
    uint8_t *adv = malloc(blocks ? blocks : 1);
    if (!adv)
        return DTB_E_NOMEM;
    int top = 0;
#pragma omp parallel for schedule(static) reduction(max : top)
    for (uint64_t blk = 0; blk < blocks; blk++) {
        const work wk = dtb_unit_work_of(b, t, t, blk);
        assert(wk.adv < NOT_A_UNIT);
        adv[blk] = (uint8_t)wk.adv;
        top = wk.adv > top ? wk.adv : top;
    }
    int worst = DTB_OK;
    uint64_t low = UINT64_MAX;
    for (int a = top; a >= 0; a--) {
#pragma omp parallel for schedule(dynamic, 64) reduction(min : low) reduction(max : worst)
        for (uint64_t blk = 0; blk < blocks; blk++) {
            if (adv[blk] != a)
                continue;
            const uint64_t fblk = dtb_unit_work_of(b, t, t, blk).fblock;
            if (fblk < blk) /* done with its other block */
                continue;
            uint64_t mine = UINT64_MAX;
            dtb_status st = dtb_solve_block_wins(s, t, blk, &mine);
            if (fblk != blk) {
                const dtb_status st2 = dtb_solve_block_wins(s, t, fblk, &mine);
                st = st == DTB_OK ? st2 : st;
            }
            low = mine < low ? mine : low;
            worst = (int)st > worst ? (int)st : worst; /* any failure */
        }
    }
    free(adv);
    *bad = low;
    return (dtb_status)worst;
}

dtb_status dtb_solve_pair_wins(const dtb_solved *s, dtb_material m, const bool which[2],
                               dtb_error *e)
{
    const dtb_material f = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &f);
    const dtb_material ms[2] = {m, f};
    for (int k = 0; k < (self ? 1 : 2); k++) {
        if (!which[k])
            continue;
        dtb_solved_table *t = (dtb_solved_table *)dtb_solved_find(s, ms[k]);
        assert(t && dtb_solved_find(s, ms[1 - k]) && !dtb_solved_is_file(t));
        uint64_t bad = UINT64_MAX;
        /* The wins of t read its partner alone (after a move the opponent is to move, stored
         * as the flip) and other materials: nothing the pass writes. */
        const dtb_status st = self ? wins_of_levels(s, t, &bad) : wins_of_blocks(s, t, &bad);
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&ms[k], name, sizeof name);
        if (st == DTB_E_NOMEM)
            return dtb_error_set(e, st, "%s: out of memory for the long list of its wins", name);
        if (st != DTB_OK)
            return dtb_error_set(e, st, "%s: a distance to win exceeds %d plies", name, DTB_MAX_DTW);
        if (bad != UINT64_MAX)
            return dtb_error_set(e, DTB_E_CORRUPT, "%s: position %llu is a win in its WLD table, "
                                 "but no move reaches a position lost for the opponent", name,
                                 (unsigned long long)bad);
    }
    return DTB_OK;
}
