/* The kingless solve (gen/solve_unit.h): pairs of men only. */
#include "solve_unit.h"

/* Kingless pairs (men only, both colours): nothing moves inside a unit, so every position's
 * value is the best of its moves' values, all solved before it (a man move adds advancement;
 * captures and promotions reach other materials). Solved a position at a time, without the
 * unit's setup and level queues, which cost these materials most of their time (3-5 M
 * positions/s against 10-15 for the others). The same values and stats as solve_unit's. */
typedef struct kingless_batch {
    struct {
        dtb_solved_table *t;
        uint64_t idx;      /* the position's index in t */
        int slot;          /* which stats it counts into */
        uint16_t first, n; /* its moves' values in exit[] */
        bool capture;
    } pos[BATCH];
    int npos, nexit;
    const dtb_value *exit[EXITS_CAP];
    dtb_value slot[EXITS_CAP]; /* as in batch */
} kingless_batch;

/* Decides and stores the batch's positions (their exit values prefetched meanwhile). */
static void kingless_flush(const dtb_solved *s, lane *ln, kingless_batch *kb)
{
    for (int k = 0; k < kb->npos; k++) {
        const dtb_wvalue v = dtb_unit_exits_value(s, &kb->exit[kb->pos[k].first], kb->pos[k].n, &ln->overflow);
        const uint64_t idx = kb->pos[k].idx;
        dtb_solved_table *t = kb->pos[k].t;
        if (!ln->overflow && !dtb_solved_store_value(s, t, idx, v))
            ln->nomem = true;
        dtb_solve_stats *st = &ln->st[kb->pos[k].slot];
        st->positions++;
        st->draws += v == DTB_WVALUE_DRAW;
        dtb_unit_count_result(st, idx, v);
        if (kb->pos[k].capture) {
            st->captures++;
            capture_bits_set(&ln->capbits, t->captures, idx);
        }
    }
    kb->npos = kb->nexit = 0;
}

/* Gathers the moves of the position with men wmen, bmen (white to move) at index idx of t. */
static void kingless_add(const dtb_solved *s, lane *ln, kingless_batch *kb, dtb_movelist *ml,
                         dtb_solved_table *t, uint64_t idx, int slot, dtb_bb wmen, dtb_bb bmen)
{
    const dtb_pos p = {.men = {wmen, bmen}, .side = DTB_WHITE};
    const dtb_status st = dtb_generate(dtb_solved_board(s), &p, ml);
    assert(st == DTB_OK);
    (void)st;
    if (kb->nexit + ml->count > EXITS_CAP)
        kingless_flush(s, ln, kb);
    assert(ml->count <= EXITS_CAP);
    kb->pos[kb->npos].t = t;
    kb->pos[kb->npos].idx = idx;
    kb->pos[kb->npos].slot = slot;
    kb->pos[kb->npos].first = (uint16_t)kb->nexit;
    kb->pos[kb->npos].n = (uint16_t)ml->count;
    kb->pos[kb->npos].capture = ml->count > 0 && ml->moves[0].ncaptured > 0;
    for (int i = 0; i < ml->count; i++) {
        const dtb_value *v = dtb_solved_value_after(s, &p, &ml->moves[i], &kb->slot[kb->nexit]);
        __builtin_prefetch(v);
        kb->exit[kb->nexit++] = v;
    }
    if (++kb->npos == BATCH)
        kingless_flush(s, ln, kb);
}

/* Solves the units of advancement a (adv[blk] == a, about count of them) among blocks b0..b1-1
 * of a kingless pair, in parallel; returns how many positions that was. */
uint64_t dtb_kingless_solve(const dtb_solved *s, const uint8_t *adv, uint64_t b0, uint64_t b1,
                               int a, uint64_t count, dtb_solved_table *t, dtb_solved_table *ft,
                               bool self, lane *lanes)
{
    const dtb_board *b = dtb_solved_board(s);
    uint64_t solved = 0;
#pragma omp parallel if (count >= 4096) reduction(+ : solved)
    {
        lane *me = &lanes[omp_get_thread_num()];
        kingless_batch *kb = malloc(sizeof *kb);
        dtb_movelist *ml = malloc(sizeof *ml);
        if (!kb || !ml)
            me->nomem = true;
        else
            kb->npos = kb->nexit = 0;
#pragma omp for schedule(dynamic, 1024) nowait
        for (uint64_t blk = b0; blk < b1; blk++) {
            if (me->nomem || adv[blk] != a)
                continue;
            dtb_bb wm, bm; /* the men once: the unit's flipped block and its positions */
            dtb_index_block_men(t->index, blk, &wm, &bm);
            const work wk = {blk, dtb_unit_flipped_block(b, ft, wm, bm), a};
            kingless_add(s, me, kb, ml, t, blk, 0, wm, bm);
            const int halves = dtb_unit_halves(&wk, self);
            if (halves == 2) /* the flipped position, as in unit_setup */
                kingless_add(s, me, kb, ml, ft, wk.fblock, self ? 0 : 1, dtb_bb_reverse(b, bm),
                             dtb_bb_reverse(b, wm));
            solved += (uint64_t)halves;
        }
        if (kb && ml)
            kingless_flush(s, me, kb);
        capture_bits_flush(&me->capbits);
        free(kb);
        free(ml);
    }
    return solved;
}
