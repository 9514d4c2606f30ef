/* A pair solved in slices (solve.h, docs/DESIGN.md §4): the levels of men advancement from the
 * top down, as dtb_solve_pair solves them, but the pair's values are never whole. A level's
 * units read, within the pair, only the level above (a man move advances by one), so once level
 * a is solved, level a + 1 is final and read by nobody: its values and capture bits go to the
 * slice store, compressed, and its pages are given back. Live at any time: the level being
 * solved, the one above, and the pages they share with blocks of other live or unsolved levels
 * (a page of small blocks can hold several levels: it is given back once all of them are
 * stored). */
#include "slicestore.h"
#include "solve.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

dtb_status dtb_sliced_reserve_level(const dtb_solved *s, const dtb_solved_table *t,
                                    const uint8_t *lv, int a, dtb_error *e)
{
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    dtb_status rc = DTB_OK;
    for (uint64_t b = 0; b < nblocks && rc == DTB_OK;) { /* a run of blocks of level a at once */
        if (lv[b] != a) {
            b++;
            continue;
        }
        const uint64_t first = b;
        while (b < nblocks && lv[b] == a)
            b++;
        rc = dtb_solved_reserve(s, t, first * K, (b - first) * K, e);
    }
    return rc;
}

/* Run by run; only runs with a block of level `stored` (the level just stored) are new. */
void dtb_sliced_release_level(const dtb_solved *s, const dtb_solved_table *t, const uint8_t *lv,
                              int stored)
{
    const uint64_t nblocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    for (uint64_t b = 0; b < nblocks;) {
        if (lv[b] < stored) {
            b++;
            continue;
        }
        const uint64_t first = b;
        bool fresh = false;
        for (; b < nblocks && lv[b] >= stored; b++)
            fresh |= lv[b] == stored;
        if (fresh)
            dtb_solved_release(s, t, first * K, (b - first) * K);
    }
}

struct dtb_sliced_pair {
    dtb_slicestore *store; /* NULL: a pair split between a team (dtb_sliced_pair_split) */
    const dtb_solved_table *t[2];
    int n;
    /* written by a team (starts[0] set): this process's range of each table, in the store or,
     * split, held in place in s (its pages given back when the pair is freed) */
    const dtb_solved *s;
    dtb_table_team team;
    uint64_t *starts[2];
};

dtb_status dtb_sliced_pair_create(const dtb_solved *s, const dtb_solved_table *const *t, int n,
                                  const char *scratch_dir, bool win_distances,
                                  dtb_sliced_pair **out, dtb_error *e)
{
    *out = NULL;
    dtb_sliced_pair *sp = calloc(1, sizeof *sp);
    if (!sp)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    *sp = (dtb_sliced_pair){.t = {t[0], n > 1 ? t[1] : NULL}, .n = n, .s = s};
    const dtb_status rc = dtb_slicestore_create(scratch_dir, t, n, win_distances, &sp->store, e);
    if (rc != DTB_OK) {
        free(sp);
        return rc;
    }
    *out = sp;
    return DTB_OK;
}

/* Gives back the pages of both tables that hold only stored levels, level a the last stored. */
static dtb_status release_level(const dtb_solved *s, dtb_sliced_pair *sp, int a)
{
    for (int k = 0; k < sp->n; k++)
        dtb_sliced_release_level(s, sp->t[k], dtb_slicestore_levels(sp->store, k), a);
    return DTB_OK;
}

/* Stores level a of both tables and gives back their pages that hold only stored levels. */
static dtb_status store_level(const dtb_solved *s, dtb_sliced_pair *sp, int a, dtb_error *e)
{
    const dtb_status rc = dtb_slicestore_put(sp->store, a, e);
    return rc == DTB_OK ? release_level(s, sp, a) : rc;
}

/* A part's blocks, table by table. */
typedef struct block_lists {
    uint64_t *list[2], n[2];
} block_lists;

static void collect(void *user, int k, uint64_t block)
{
    block_lists *bl = user;
    bl->list[k][bl->n[k]++] = block;
}

dtb_status dtb_sliced_pair_put_part(dtb_sliced_pair *sp, const dtb_pair_solver *ps, int a,
                                    uint64_t b0, uint64_t b1, bool release, dtb_error *e)
{
    const uint64_t units = dtb_pair_solver_units(ps, a, b0, b1);
    block_lists bl = {{NULL, NULL}, {0, 0}};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < 2; k++)
        if (!(bl.list[k] = malloc((units ? units : 1) * 2 * sizeof *bl.list[k])))
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (rc == DTB_OK)
        dtb_pair_solver_each_block(ps, a, b0, b1, collect, &bl);
    for (int k = 0; k < sp->n && rc == DTB_OK; k++)
        rc = release ? dtb_sliced_pair_put_blocks(sp, k, bl.list[k], bl.n[k], e)
                     : dtb_slicestore_put_blocks(sp->store, k, bl.list[k], bl.n[k], e);
    free(bl.list[0]);
    free(bl.list[1]);
    return rc;
}

dtb_status dtb_sliced_pair_reserve_block(dtb_sliced_pair *sp, int k, uint64_t b, dtb_error *e)
{
    const uint64_t K = dtb_index_block_size(sp->t[k]->index);
    return dtb_solved_reserve(sp->s, sp->t[k], b * K, K, e);
}

dtb_status dtb_sliced_pair_put_blocks(dtb_sliced_pair *sp, int k, const uint64_t *list,
                                      uint64_t n, dtb_error *e)
{
    const dtb_status rc = dtb_slicestore_put_blocks(sp->store, k, list, n, e);
    /* Runs of consecutive blocks are given back whole: a page holds several small blocks, and
     * one released at a time would never free it. */
    const uint64_t K = dtb_index_block_size(sp->t[k]->index);
    for (uint64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && list[j] == list[j - 1] + 1; j++)
            ;
        dtb_solved_release(sp->s, sp->t[k], list[i] * K, (list[j - 1] + 1 - list[i]) * K);
    }
    return rc;
}

const dtb_solved_table *dtb_sliced_pair_table(const dtb_sliced_pair *sp, int k)
{
    return k < sp->n ? sp->t[k] : NULL;
}

/* The pair's part store (dtb_part_store) for the solvers of its levels: a part's blocks, table
 * by table, into the slice store. */
typedef struct part_sink {
    dtb_sliced_pair *sp;
    const dtb_pair_solver *ps;
} part_sink;

static dtb_status put_part(void *ctx, int a, uint64_t b0, uint64_t b1, bool release, dtb_error *e)
{
    part_sink *ks = ctx;
    return dtb_sliced_pair_put_part(ks->sp, ks->ps, a, b0, b1, release, e);
}

dtb_status dtb_solve_pair_sliced(dtb_solved *s, dtb_material m, bool in_memory, const char *scratch_dir,
                                 bool win_distances, const dtb_level_solvers *with,
                                 dtb_solve_stats stats[2], dtb_sliced_pair **out,
                                 dtb_solve_progress progress, void *user, dtb_error *e)
{
    *out = NULL;
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    /* Sliced first: the pair solver then finds the tables in s and keeps them. */
    dtb_status rc = DTB_OK;
    const dtb_material ms[2] = {m, fm};
    const dtb_solved_table *t[2] = {NULL, NULL};
    for (int k = 0; k < (self ? 1 : 2) && rc == DTB_OK; k++)
        if (!(t[k] = dtb_solved_add_sliced(s, ms[k], in_memory, e)))
            rc = DTB_E_NOMEM;
    dtb_pair_solver *ps = NULL;
    if (rc == DTB_OK)
        rc = dtb_pair_solver_create(s, m, &ps, e);
    if (rc == DTB_OK && dtb_pair_solver_kingless(ps))
        rc = dtb_error_set(e, DTB_E_INVALID, "a pair without kings is not solved in slices");
    dtb_sliced_pair *sp = NULL;
    if (rc == DTB_OK)
        rc = dtb_sliced_pair_create(s, t, self ? 1 : 2, scratch_dir, win_distances, &sp, e);
    if (rc == DTB_OK)
        dtb_pair_solver_levels(ps, dtb_slicestore_levels(sp->store, 0),
                               self ? NULL : dtb_slicestore_levels(sp->store, 1));
    part_sink sink = {.sp = sp, .ps = ps};
    const dtb_part_store store = {&sink, put_part, sp};
    if (rc == DTB_OK && with)
        rc = with->begin(with->ctx, ps, &store, progress, user, e);
    int above = -1; /* the level solved before the one being solved */
    for (int a = rc == DTB_OK ? dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP) : -1;
         a >= 0 && rc == DTB_OK; a = dtb_pair_solver_next_level(ps, a)) {
        for (int k = 0; k < sp->n && rc == DTB_OK; k++)
            rc = dtb_sliced_reserve_level(s, sp->t[k], dtb_slicestore_levels(sp->store, k), a, e);
        if (rc == DTB_OK)
            rc = with ? with->level(with->ctx, ps, a, &store, e)
                      : dtb_pair_solver_solve(ps, a, 0, dtb_pair_solver_blocks(ps), progress, user, e);
        /* The solvers put the level's parts as they came: only its pages are left to give back
         * once the level below no longer reads it. */
        if (rc == DTB_OK && above >= 0)
            rc = with ? release_level(s, sp, above) : store_level(s, sp, above, e);
        above = a;
    }
    if (rc == DTB_OK && above >= 0)
        rc = with ? release_level(s, sp, above) : store_level(s, sp, above, e);
    if (rc == DTB_OK && with)
        rc = with->end(with->ctx, ps, stats, e);
    else if (rc == DTB_OK)
        dtb_pair_solver_stats(ps, stats);
    dtb_pair_solver_free(ps);
    if (rc != DTB_OK) {
        dtb_sliced_pair_free(sp);
        return rc;
    }
    *out = sp;
    return DTB_OK;
}

dtb_status dtb_sliced_pair_set_team(dtb_sliced_pair *sp, const dtb_table_team *team,
                                    const uint64_t *const *starts, dtb_error *e)
{
    assert(!sp->starts[0] && "a team once");
    sp->team = *team;
    for (int k = 0; k < sp->n; k++) {
        const size_t bytes = ((size_t)team->ranks + 1) * sizeof *starts[k];
        if (!(sp->starts[k] = malloc(bytes)))
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        memcpy(sp->starts[k], starts[k], bytes);
    }
    return DTB_OK;
}

dtb_status dtb_sliced_pair_split(const dtb_solved *s, const dtb_solved_table *const *t, int n,
                                 const dtb_table_team *team, const uint64_t *const *starts,
                                 dtb_sliced_pair **out, dtb_error *e)
{
    *out = NULL;
    dtb_sliced_pair *sp = calloc(1, sizeof *sp);
    if (!sp)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    *sp = (dtb_sliced_pair){.t = {t[0], n > 1 ? t[1] : NULL}, .n = n, .s = s};
    const dtb_status rc = dtb_sliced_pair_set_team(sp, team, starts, e);
    if (rc != DTB_OK) {
        dtb_sliced_pair_free(sp);
        return rc;
    }
    *out = sp;
    return DTB_OK;
}

bool dtb_sliced_pair_team(const dtb_sliced_pair *sp, int k, dtb_table_team *out)
{
    if (!sp->starts[0])
        return false;
    *out = sp->team;
    out->starts = sp->starts[k];
    return true;
}

/* Positions start..start+len-1 of a split pair's table k, which must be this process's. */
static const char *read_split(const dtb_sliced_pair *sp, int k, uint64_t start, size_t len,
                              uint8_t *values, uint64_t *captures)
{
    const int r = sp->team.rank;
    if (start < sp->starts[k][r] || start + len > sp->starts[k][r + 1] || start % 64)
        return "positions held by another rank";
    const dtb_solved_table *t = sp->t[k];
    memcpy(values, t->values + start, len);
    const size_t words = (len + 63) / 64;
    memcpy(captures, t->captures + start / 64, words * sizeof *captures);
    if (len % 64) /* the bits of positions beyond the range are not asked for */
        captures[words - 1] &= (1ull << (len % 64)) - 1;
    return NULL;
}

const char *dtb_sliced_pair_read(const dtb_sliced_pair *sp, int k, void **state, uint64_t start,
                                 size_t len, uint8_t *values, uint64_t *captures)
{
    return sp->store ? dtb_slicestore_read(sp->store, k, state, start, len, values, captures)
                     : read_split(sp, k, start, len, values, captures);
}

void dtb_sliced_pair_state_free(void *state) { dtb_slicestore_state_free(state); }

uint64_t dtb_sliced_pair_bytes(const dtb_sliced_pair *sp)
{
    return sp->store ? dtb_slicestore_bytes(sp->store) : 0;
}

void dtb_sliced_pair_free(dtb_sliced_pair *sp)
{
    if (!sp)
        return;
    for (int k = 0; k < sp->n; k++) {
        if (sp->starts[k] && !sp->store) { /* split: the range held in place */
            const uint64_t lo = sp->starts[k][sp->team.rank], hi = sp->starts[k][sp->team.rank + 1];
            dtb_solved_release(sp->s, sp->t[k], lo, hi - lo);
        }
        free(sp->starts[k]);
    }
    dtb_slicestore_free(sp->store);
    free(sp);
}

/* Men placements by advancement, counted square by square: cnt[w][k][a] placements of w white
 * and k black men (on squares where men may stand) with advancement a. The largest sum of two
 * adjacent levels' counts. */
/* The blocks of material m in its most populous level (one level: *one; two adjacent: the
 * return value), counted by advancement over the squares; UINT64_MAX when out of memory. */
static uint64_t level_blocks(const dtb_board *b, dtb_material m, uint64_t *one)
{
    const int W = m.men[0], B = m.men[1], A = (W + B) * b->size + 1;
    const size_t n = (size_t)(W + 1) * (size_t)(B + 1) * (size_t)A;
    double *cnt = calloc(n, sizeof *cnt), *next = calloc(n, sizeof *next);
    if (!cnt || !next) {
        free(cnt);
        free(next);
        *one = UINT64_MAX;
        return UINT64_MAX;
    }
#define AT(w, k, a) (((size_t)(w) * (size_t)(B + 1) + (size_t)(k)) * (size_t)A + (size_t)(a))
    cnt[AT(0, 0, 0)] = 1;
    for (int sq = 0; sq < b->squares; sq++) {
        const int row = dtb_board_row(b, sq);
        const bool white = !dtb_bb_has(b->promotion[DTB_WHITE], sq);
        const bool black = !dtb_bb_has(b->promotion[DTB_BLACK], sq);
        memcpy(next, cnt, n * sizeof *cnt); /* the square empty */
        for (int w = 0; w <= W; w++)
            for (int k = 0; k <= B; k++)
                for (int a = 0; a < A; a++) {
                    const double c = cnt[AT(w, k, a)];
                    if (c == 0)
                        continue;
                    const int aw = a + b->size - 1 - row, ab = a + row;
                    if (white && w < W && aw < A)
                        next[AT(w + 1, k, aw)] += c;
                    if (black && k < B && ab < A)
                        next[AT(w, k + 1, ab)] += c;
                }
        double *swap = cnt;
        cnt = next;
        next = swap;
    }
    double most = 0, single = 0;
    for (int a = 0; a < A; a++) {
        const double two = cnt[AT(W, B, a)] + (a + 1 < A ? cnt[AT(W, B, a + 1)] : 0);
        most = two > most ? two : most;
        single = cnt[AT(W, B, a)] > single ? cnt[AT(W, B, a)] : single;
    }
#undef AT
    free(cnt);
    free(next);
    *one = (uint64_t)single;
    return (uint64_t)most;
}

uint64_t dtb_solve_sliced_live_blocks(const dtb_board *b, dtb_material m)
{
    uint64_t one;
    return level_blocks(b, m, &one);
}

uint64_t dtb_solve_level_blocks_max(const dtb_board *b, dtb_material m)
{
    uint64_t one = UINT64_MAX;
    level_blocks(b, m, &one);
    return one;
}
