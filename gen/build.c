/* The build loop: a plan first (which pairs are complete on disk, which of those must be loaded
 * for the others, the run order, when each pair may leave memory, the peak that gives), then
 * for each pair in the plan's order: load it, or solve it and write its files (.dtw, then .wld,
 * then the stats record, each appearing atomically); after each step, drop the pairs no later
 * step reads. A pair counts as complete when all of its files open cleanly, so a run killed at
 * any point redoes at most the pair it was working on. */
#include "build.h"
#include "diskplan.h"

#include "atomicfile.h"

#include <assert.h>
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fen.h"
#include "movegen.h"
#include "slicestore.h"
#include "solve.h"
#include "tableformat.h"
#include "tablewrite.h"

void dtb_build_table_path(char *buf, size_t size, const char *dir, const dtb_variant *v,
                          const dtb_material *m, dtb_metric metric)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    snprintf(buf, size, "%s/%s/%s.%s", dir, v->name, name, dtb_metric_name(metric));
}

dtb_table_write_options dtb_build_write_options(const dtb_variant *v, const char *material,
                                                dtb_metric metric)
{
    dtb_table_write_options o = dtb_table_write_defaults();
    o.variant = v->name;
    o.gametype = v->gametype;
    o.material = material;
    o.metric = metric;
    o.index_version = DTB_INDEX_VERSION;
    o.value_encoding = dtb_encoding_of(metric);
    return o;
}

static void stats_path(char *buf, size_t size, const char *dir, const dtb_variant *v,
                       const dtb_material *m)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    snprintf(buf, size, "%s/%s/%s.stats", dir, v->name, name);
}

static bool is_self_flip(const dtb_material *m)
{
    const dtb_material f = dtb_material_flip(*m);
    return dtb_material_equal(m, &f);
}

/* Counts only: `to` (or its flip) is reachable from `from` when, per side, it has no more men
 * and no more pieces (captures remove pieces, promotions turn men into kings). */
bool dtb_build_depends(const dtb_material *from, const dtb_material *to)
{
    /* Captures remove pieces; promotions turn a man into a king; colours may have swapped. */
    for (int flip = 0; flip < 2; flip++) {
        const dtb_material f = flip ? dtb_material_flip(*to) : *to;
        bool ok = true;
        for (int c = 0; c < 2 && ok; c++)
            ok = f.men[c] <= from->men[c] &&
                 f.men[c] + f.kings[c] <= from->men[c] + from->kings[c];
        if (ok)
            return true;
    }
    return false;
}

/* One move changes, for the side to move, at most one man into a king (a promotion, also at the
 * end of or during a capture) and, for the other side, removes any of its pieces (a capture), and
 * hands the move over: the successor, stored white to move, is the flip of what is left. */
bool dtb_build_exits(const dtb_material *from, const dtb_material *to)
{
    const dtb_material fr = dtb_material_flip(*from), tf = dtb_material_flip(*to);
    if (dtb_material_equal(to, from) || dtb_material_equal(to, &fr))
        return false; /* the pair itself */
    const dtb_material *xs[2] = {from, &fr}, *ys[2] = {to, &tf};
    for (int a = 0; a < 2; a++) {
        const dtb_material *x = xs[a];
        for (int b = 0; b < 2; b++) {
            const dtb_material *y = ys[b]; /* the mover is white in both */
            const int promoted = y->kings[0] - x->kings[0];
            if ((promoted == 0 || promoted == 1) && x->men[0] - y->men[0] == promoted &&
                y->kings[1] <= x->kings[1] && y->men[1] <= x->men[1])
                return true;
        }
    }
    return false;
}

bool dtb_build_side_fits(const dtb_build_options *o, const dtb_material *m)
{
    return o->side_max <= 0 || (m->kings[DTB_WHITE] + m->men[DTB_WHITE] <= o->side_max &&
                                m->kings[DTB_BLACK] + m->men[DTB_BLACK] <= o->side_max);
}

static int build_list(const dtb_build_options *o, dtb_material **out)
{
    const int n = dtb_material_list(o->pieces, NULL, 0);
    dtb_material *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    if (!all)
        return -1;
    dtb_material_list(o->pieces, all, n);
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool need = !o->only && dtb_build_side_fits(o, &all[i]);
        for (int j = 0; j < o->nonly && !need; j++)
            need = dtb_build_depends(&o->only[j], &all[i]) && dtb_build_side_fits(o, &all[i]);
        if (need)
            all[k++] = all[i];
    }
    *out = all;
    return k;
}

static dtb_status make_dir(const char *path, dtb_error *e)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return DTB_OK;
    return dtb_error_set(e, DTB_E_IO, "cannot create directory %s: %s", path, strerror(errno));
}

/* Reads every block of a table file into t's values (and its long list into s). A rule-distance
 * table must have been solved with the limits of rules. A DTW table may store its losses only
 * (docs/FORMAT.md §8.7) when losses is not NULL: *losses says whether it does (its other
 * bytes are then filler). */
static dtb_status read_values(const char *path, const dtb_variant *v, const dtb_material *m,
                              dtb_metric metric, uint64_t size, dtb_value *values, dtb_solved *s,
                              dtb_solved_table *t, const dtb_rules *rules, bool *losses,
                              dtb_error *e)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    const dtb_tablefile_expect want = {
        .variant = v->name,
        .material = name,
        .metric = metric,
        .index_version = DTB_INDEX_VERSION,
        .value_encoding = dtb_encoding_of(metric),
        .positions = size,
    };
    dtb_tablefile *tf;
    dtb_status st = dtb_tablefile_open(path, &want, &tf, e);
    if (st != DTB_OK)
        return st;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    for (int c = 0; rules && dtb_metric_is_rules(metric) && c < rules->nclasses; c++)
        if (info->rule_limits[c] != rules->cls[c].limit) {
            const int got = info->rule_limits[c]; /* info goes with the file */
            dtb_tablefile_close(tf);
            return dtb_error_set(e, DTB_E_MISMATCH, "%s: solved with a %s limit of %d plies, "
                                 "this build's is %d", path, rules->cls[c].name, got,
                                 rules->cls[c].limit);
        }
    if (rules && dtb_metric_is_rules(metric) &&
        (info->rule_late_limit != dtb_rules_late_limit(rules) ||
         (info->rule_late_limit && info->rule_late_after != rules->late_after))) {
        const int got = info->rule_late_limit, after = info->rule_late_after;
        dtb_tablefile_close(tf);
        return dtb_error_set(e, DTB_E_MISMATCH, "%s: solved with a late limit of %d plies after "
                             "a count of %d, this build's is %d after %d", path, got, after,
                             dtb_rules_late_limit(rules), rules->late_after);
    }
    if (losses)
        *losses = info->flags == DTB_TABLE_LOSSES;
    if (info->flags && !(losses && *losses)) { /* derived, or threat positions without values */
        const bool derived = info->flags & DTB_TABLE_DERIVED;
        dtb_tablefile_close(tf);
        return dtb_error_set(e, DTB_E_MISMATCH,
                             "%s: a compact set's %s table; building and checking need the "
                             "full set it was made from",
                             path, derived ? "derived" : "stored");
    }
    dtb_status bad = DTB_OK;
#pragma omp parallel
    {
        dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
        dtb_error mine;
#pragma omp for schedule(dynamic, 4)
        for (uint64_t blk = 0; blk < info->blocks; blk++) {
            const uint64_t at = blk * info->block_positions;
            const dtb_status s2 = dtb_tablefile_read_block(tf, blk, values + at,
                                                           dtb_tablefile_block_len(tf, blk), ctx, &mine);
            if (s2 != DTB_OK) {
#pragma omp critical(dtb_read_error)
                if (bad == DTB_OK) {
                    bad = s2;
                    if (e)
                        *e = mine;
                }
            }
        }
        dtb_tablefile_ctx_free(ctx);
    }
    const uint64_t *lidx = dtb_tablefile_long_index(tf);
    const uint16_t *ldtw = dtb_tablefile_long_dtws(tf);
    for (uint64_t i = 0; bad == DTB_OK && i < info->long_count; i++) {
        const dtb_value at = values[lidx[i]];
        if (!dtb_value_is_escape(at))
            bad = dtb_error_set(e, DTB_E_CORRUPT, "%s: long list entry %llu is not an escape byte",
                                path, (unsigned long long)i);
        else if (!dtb_solved_store(s, t, lidx[i], at == DTB_VALUE_WIN_ESCAPE, ldtw[i]))
            bad = dtb_error_set(e, DTB_E_NOMEM, "out of memory for %s's long list", path);
    }
    dtb_tablefile_close(tf);
    return bad;
}

bool dtb_build_writes_dtw(const dtb_build_options *o, const dtb_material *m)
{
    return o->dtw_pieces == 0 || dtb_material_pieces(m) <= o->dtw_pieces;
}

static dtb_status load_metric(dtb_solved *s, const char *dir, dtb_material m, dtb_metric metric,
                              bool *losses, dtb_error *e);

dtb_status dtb_build_read_mtc(const char *dir, const dtb_variant *v, dtb_material m, uint64_t size,
                              dtb_value *mtc, dtb_error *e)
{
    char path[4096];
    dtb_build_table_path(path, sizeof path, dir, v, &m, DTB_METRIC_MTC);
    if (access(path, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table", path);
    /* MTC tables have no long list, the only part of read_values that needs a registry */
    dtb_solved_table t = {.material = m, .values = mtc};
    return read_values(path, v, &m, DTB_METRIC_MTC, size, t.values, NULL, &t, NULL, NULL, e);
}

/* Loads the .dtw tables of m's pair (the members not in s yet), then searches the wins of
 * those that store losses only: a win's distance is its shortest move to a lost position,
 * and those lie in its partner (and in promotion targets, loaded before), so both members'
 * losses and capture positions must be in place first. A failure leaves neither member it
 * added in s. */
dtb_status dtb_build_load(dtb_solved *s, const char *dir, dtb_material m, dtb_error *e)
{
    const dtb_material f = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &f);
    const dtb_material ms[2] = {m, f};
    bool added[2] = {false, false}, losses[2] = {false, false};
    dtb_status st = DTB_OK;
    for (int k = 0; k < (self ? 1 : 2) && st == DTB_OK; k++) {
        if (dtb_solved_find(s, ms[k]))
            continue;
        st = load_metric(s, dir, ms[k], DTB_METRIC_DTW, &losses[k], e);
        added[k] = st == DTB_OK;
    }
    for (int k = 0; k < (self ? 1 : 2) && st == DTB_OK; k++) {
        if (!losses[k]) /* a member at a time: the message names the table at fault */
            continue;
        const bool which[2] = {k == 0, k == 1};
        dtb_error sub;
        if ((st = dtb_solve_pair_wins(s, m, which, &sub)) != DTB_OK) {
            char path[4096];
            dtb_build_table_path(path, sizeof path, dir, dtb_solved_board(s)->variant, &ms[k],
                                 DTB_METRIC_DTW);
            dtb_error_set(e, st, "%s (its wins, searched from the losses): %s", path, sub.msg);
        }
    }
    for (int k = 0; k < 2 && st != DTB_OK; k++)
        if (added[k])
            dtb_solved_drop(s, ms[k]);
    return st;
}

dtb_status dtb_build_load_wld(dtb_solved *s, const char *dir, dtb_material m, dtb_error *e)
{
    return load_metric(s, dir, m, DTB_METRIC_WLD, NULL, e);
}

/* Gives the quiet positions of t (its losses-only DTW table's bytes read, capture positions
 * marked) their results from the material's WLD table at path: a draw is a draw, a win a
 * stand-in win (dtb_value_win(1), until dtb_solve_pair_wins searches it), a loss keeps its
 * DTW byte, which must be a loss. Capture positions (don't-care in both files) are left
 * alone. */
static dtb_status merge_wld(const char *path, const dtb_variant *v, dtb_solved_table *t,
                            dtb_error *e)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&t->material, name, sizeof name);
    const uint64_t n = dtb_index_size(t->index);
    const dtb_tablefile_expect want = {
        .variant = v->name,
        .material = name,
        .metric = DTB_METRIC_WLD,
        .index_version = DTB_INDEX_VERSION,
        .value_encoding = dtb_encoding_of(DTB_METRIC_WLD),
        .positions = n,
    };
    if (access(path, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table (a losses-only DTW table "
                             "takes its wins and draws from it)", path);
    dtb_tablefile *tf;
    dtb_status st = dtb_tablefile_open(path, &want, &tf, e);
    if (st != DTB_OK)
        return st;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    if (info->flags) {
        dtb_tablefile_close(tf);
        return dtb_error_set(e, DTB_E_MISMATCH, "%s: a compact set's table; building and "
                             "checking need the full set it was made from", path);
    }
    dtb_status bad = DTB_OK;
    uint64_t wrong = UINT64_MAX; /* the first quiet loss whose DTW byte is not a loss */
#pragma omp parallel reduction(min : wrong)
    {
        dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
        uint8_t *buf = malloc(info->block_positions);
        dtb_error mine;
        dtb_status my = ctx && buf ? DTB_OK : dtb_error_set(&mine, DTB_E_NOMEM, "out of memory");
#pragma omp for schedule(dynamic, 4)
        for (uint64_t blk = 0; blk < info->blocks; blk++) {
            if (my != DTB_OK)
                continue;
            const uint64_t at = blk * info->block_positions, len = dtb_tablefile_block_len(tf, blk);
            if ((my = dtb_tablefile_read_block(tf, blk, buf, len, ctx, &mine)) != DTB_OK)
                continue;
            for (uint64_t i = at; i < at + len; i++) {
                if (t->captures[i / 64] >> (i % 64) & 1)
                    continue;
                const uint8_t r = buf[i - at];
                if (r == 2 && !dtb_value_is_loss(t->values[i]))
                    wrong = i < wrong ? i : wrong;
                else if (r != 2)
                    t->values[i] = dtb_solved_wld_as_dtw(r);
            }
        }
        if (my != DTB_OK) {
#pragma omp critical(dtb_read_error)
            if (bad == DTB_OK) {
                bad = my;
                if (e)
                    *e = mine;
            }
        }
        free(buf);
        dtb_tablefile_ctx_free(ctx);
    }
    dtb_tablefile_close(tf);
    if (bad == DTB_OK && wrong != UINT64_MAX)
        bad = dtb_error_set(e, DTB_E_CORRUPT, "%s: position %llu is a loss there, its DTW "
                            "table's byte is not", path, (unsigned long long)wrong);
    return bad;
}

static dtb_status load_metric(dtb_solved *s, const char *dir, dtb_material m, dtb_metric metric,
                              bool *losses, dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    char path[4096];
    dtb_build_table_path(path, sizeof path, dir, b->variant, &m, metric);
    if (access(path, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table", path);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    if (!t)
        return DTB_E_NOMEM;
    const uint64_t n = dtb_index_size(t->index);
    dtb_status st = read_values(path, b->variant, &m, metric, n, t->values, s, t, NULL, losses, e);
    if (st != DTB_OK) {
        dtb_solved_drop(s, m);
        return st;
    }
    if (metric == DTB_METRIC_WLD) {
#pragma omp parallel for schedule(static)
        for (uint64_t i = 0; i < n; i++)
            t->values[i] = dtb_solved_wld_as_dtw(t->values[i]);
    }
    /* Capture positions are stored as don't-care: mark them, then derive their values from
     * their successors, which all lie in smaller materials (already exact in s), the way the
     * solver does. */
    memset(t->captures, 0, (n / 64 + 1) * sizeof *t->captures);
    const uint64_t blocks = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    const uint64_t chunk = K >= 4096 ? 1 : 4096 / K;
    bool ok = true;
#pragma omp parallel for schedule(dynamic, chunk) reduction(&& : ok)
    for (uint64_t blk = 0; blk < blocks; blk++)
        ok = dtb_solve_block_captures(s, t, blk) && ok;
    if (!ok) {
        dtb_solved_drop(s, m);
        return dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory for the long list of its capture "
                             "positions", path);
    }
    /* A losses-only table's quiet wins and draws are filler: the WLD table says which. */
    if (losses && *losses) {
        dtb_build_table_path(path, sizeof path, dir, b->variant, &m, DTB_METRIC_WLD);
        if ((st = merge_wld(path, b->variant, t, e)) != DTB_OK) {
            dtb_solved_drop(s, m);
            return st;
        }
    }
    return DTB_OK;
}

/* The path and write options of t's table of the metric in the build's directory (name: the
 * material's, which the options point to: the caller's buffer). */
static dtb_table_write_options table_options(const dtb_build_options *o, const dtb_solved_table *t,
                                             dtb_metric metric, char path[4096],
                                             char name[DTB_MATERIAL_NAME_MAX])
{
    dtb_build_table_path(path, 4096, o->out_dir, o->variant, &t->material, metric);
    dtb_material_name(&t->material, name, DTB_MATERIAL_NAME_MAX);
    dtb_table_write_options w = dtb_build_write_options(o->variant, name, metric);
    w.dontcare_kind = DTB_DONTCARE_CAPTURES;
    w.threads = o->threads;
    if (o->zstd_level > 0)
        w.zstd_level = o->zstd_level;
    return w;
}

/* Table k of a pair solved in slices, as the writer reads it. */
typedef struct sliced_source {
    const dtb_sliced_pair *sp;
    int k;
    bool losses; /* a losses-only DTW table: wins and draws don't-care too */
} sliced_source;

/* Marks the positions of values[0..len) that a losses-only DTW table leaves out (wins and
 * draws) as don't-care in dontcare (len/64 rounded up words). */
static void mark_not_losses(const uint8_t *values, size_t len, uint64_t *dontcare)
{
    for (size_t i = 0; i < len; i++)
        if (!dtb_value_is_loss((dtb_value)values[i]))
            dontcare[i / 64] |= 1ull << (i % 64);
}

static const char *read_sliced(void *user, void **state, uint64_t start, size_t len,
                               uint8_t *values, uint64_t *dontcare)
{
    const sliced_source *src = user;
    const char *err = dtb_sliced_pair_read(src->sp, src->k, state, start, len, values, dontcare);
    if (!err && src->losses)
        mark_not_losses(values, len, dontcare);
    return err;
}

/* dtb_table_dontcare's test of a losses-only DTW table written from arrays: a capture
 * position, or not lost. */
static bool not_stored(void *user, uint64_t idx)
{
    const dtb_solved_table *t = user;
    return (t->captures[idx / 64] >> (idx % 64) & 1) || !dtb_value_is_loss(t->values[idx]);
}

static void free_sliced_state(void *user, void *state)
{
    (void)user;
    dtb_sliced_pair_state_free(state);
}

/* Whether position idx of t is a capture position: its bit, or, solved in slices (sp not
 * NULL, t its table k), the store's. */
static bool is_capture(const dtb_solved_table *t, const dtb_sliced_pair *sp, int k, uint64_t idx,
                       void **state)
{
    if (!sp)
        return t->captures[idx / 64] >> (idx % 64) & 1;
    uint8_t v;
    uint64_t bit;
    return !dtb_sliced_pair_read(sp, k, state, idx, 1, &v, &bit) && (bit & 1);
}

/* Writes t's table of the metric from its DTW values (and its long list: the entries of
 * quiet positions; capture positions are don't-care). A DTW table stores losses only unless
 * o->dtw_full (docs/FORMAT.md §8.7: wins and draws don't-care, long entries of losses only).
 * Solved in slices (sp not NULL), t is the pair's table k and its values come from the slice
 * store. */
static dtb_status write_table(const dtb_build_options *o, const dtb_solved *s,
                              const dtb_solved_table *t, dtb_metric metric,
                              const dtb_sliced_pair *sp, int k, dtb_error *e);

/* write_table to path with the writer's options w (the name, metric and compression set). */
static dtb_status write_table_to(const char *path, dtb_table_write_options w, bool dtw_full,
                                 const dtb_solved *s, const dtb_solved_table *t, dtb_metric metric,
                                 const dtb_sliced_pair *sp, int k, dtb_error *e)
{
    uint8_t wld[256]; /* the WLD table is the DTW values mapped: 1 win, 2 loss, 0 draw */
    if (metric == DTB_METRIC_WLD) {
        for (int x = 0; x < 256; x++)
            wld[x] = dtb_value_is_win((dtb_value)x) ? 1 : dtb_value_is_loss((dtb_value)x) ? 2 : 0;
        w.value_map = wld;
    }
    const bool losses = metric == DTB_METRIC_DTW && !dtw_full;
    if (losses) {
        w.flags |= DTB_TABLE_LOSSES;
        w.dontcare_kind |= DTB_DONTCARE_NOT_LOSSES;
    }
    uint64_t *lidx = NULL, n = 0;
    uint16_t *ldtw = NULL;
    if (metric == DTB_METRIC_DTW && dtb_solved_long_count(s, t)) {
        if (!dtb_solved_long_list(s, t, &lidx, &ldtw, &n))
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory for %s's long list", path);
        uint64_t kept = 0;
        void *state = NULL;
        for (uint64_t i = 0; i < n; i++)
            if (!is_capture(t, sp, k, lidx[i], &state) && !(losses && ldtw[i] % 2)) {
                lidx[kept] = lidx[i];
                ldtw[kept++] = ldtw[i];
            }
        dtb_sliced_pair_state_free(state);
        w.long_index = lidx;
        w.long_dtw = ldtw;
        w.long_count = kept;
    }
    const uint64_t count = dtb_index_size(t->index);
    dtb_status st;
    if (sp) {
        sliced_source from = {sp, k, losses};
        const dtb_table_source src = {.read = read_sliced, .free_state = free_sliced_state,
                                      .user = &from};
        dtb_table_team team; /* split between ranks: every rank writes its blocks */
        st = dtb_sliced_pair_team(sp, k, &team)
                 ? dtb_table_write_team(path, &w, &src, count, -1, &team, NULL, e)
                 : dtb_table_write_source(path, &w, &src, count, -1, NULL, e);
    } else {
        const dtb_table_dontcare dc = losses ? (dtb_table_dontcare){.marker = -1,
                                                                      .fn = not_stored,
                                                                      .user = (void *)t}
                                             : (dtb_table_dontcare){.bits = t->captures,
                                                                    .marker = -1};
        st = dtb_table_write(path, &w, t->values, count, &dc, NULL, e);
    }
    free(lidx);
    free(ldtw);
    return st;
}

static dtb_status write_table(const dtb_build_options *o, const dtb_solved *s,
                              const dtb_solved_table *t, dtb_metric metric,
                              const dtb_sliced_pair *sp, int k, dtb_error *e)
{
    char path[4096], name[DTB_MATERIAL_NAME_MAX];
    const dtb_table_write_options w = table_options(o, t, metric, path, name);
    return write_table_to(path, w, o->dtw_full, s, t, metric, sp, k, e);
}

dtb_status dtb_build_write_dtw_full(const dtb_solved *s, const dtb_solved_table *t,
                                    const char *path, uint32_t block_positions, int zstd_level,
                                    int threads, dtb_error *e)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&t->material, name, sizeof name);
    dtb_table_write_options w =
        dtb_build_write_options(dtb_solved_board(s)->variant, name, DTB_METRIC_DTW);
    w.dontcare_kind = DTB_DONTCARE_CAPTURES;
    w.threads = threads;
    if (zstd_level > 0)
        w.zstd_level = zstd_level;
    if (block_positions > 0)
        w.block_positions = block_positions;
    return write_table_to(path, w, true, s, t, DTB_METRIC_DTW, NULL, 0, e);
}

/* Writes the .mtc table of t from its MTC bytes (capture positions don't-care, as in .wld). */
static dtb_status write_mtc_table(const dtb_build_options *o, const dtb_solved_table *t,
                                  const dtb_value *mtc, dtb_error *e)
{
    char path[4096], name[DTB_MATERIAL_NAME_MAX];
    dtb_table_write_options w = table_options(o, t, DTB_METRIC_MTC, path, name);
    const dtb_table_dontcare dc = {.bits = t->captures, .marker = -1};
    return dtb_table_write(path, &w, mtc, dtb_index_size(t->index), &dc, NULL, e);
}

/* The MTC of a solved pair (gen/solve_mtc.c), written as its .mtc tables; stats and the time
 * it took into mst and *seconds. */
static dtb_status solve_and_write_mtc(const dtb_build_options *o, const dtb_solved *s,
                                      const dtb_material *m, dtb_mtc_stats mst[2], double *seconds,
                                      dtb_error *e)
{
    const double t0 = omp_get_wtime();
    const dtb_material f = dtb_material_flip(*m);
    const bool self = is_self_flip(m);
    const dtb_solved_table *t[2] = {dtb_solved_find(s, *m), dtb_solved_find(s, f)};
    dtb_value *mtc[2] = {NULL, NULL};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < (self ? 1 : 2) && rc == DTB_OK; k++)
        if (!(mtc[k] = malloc(dtb_index_size(t[k]->index))))
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory for the MTC of a pair");
    if (rc == DTB_OK)
        rc = dtb_solve_mtc_pair(s, *m, mtc, mst, e);
    for (int k = 0; k < (self ? 1 : 2) && rc == DTB_OK; k++)
        rc = write_mtc_table(o, t[k], mtc[k], e);
    free(mtc[0]);
    free(mtc[1]);
    *seconds = omp_get_wtime() - t0;
    return rc;
}

/* The stats record's MTC fields (empty without MTC): the longest MTC of the wins and of the
 * losses, each with a position that has it. */
static void mtc_json(char *buf, size_t size, const dtb_solved *s, const dtb_solved_table *t,
                     const dtb_mtc_stats *st, double seconds)
{
    const dtb_board *b = dtb_solved_board(s);
    char fen[2][DTB_FEN_MAX] = {"", ""};
    const int d[2] = {st->longest_win, st->longest_loss};
    const uint64_t at[2] = {st->longest_win_at, st->longest_loss_at};
    for (int k = 0; k < 2; k++)
        if (d[k] >= 0) {
            dtb_pos p;
            dtb_index_pos(t->index, at[k], &p);
            dtb_fen_write(b, &p, fen[k], sizeof fen[k]);
        }
    snprintf(buf, size,
             ",\"longest_mtc_win\":%d,\"longest_mtc_win_fen\":\"%s\",\"longest_mtc_loss\":%d,"
             "\"longest_mtc_loss_fen\":\"%s\",\"mtc_seconds\":%.3f",
             d[0], fen[0], d[1], fen[1], seconds);
}

/* What the rules make of one table's wins and losses at counter 0 (STATS): those they keep, the
 * wins they turn into draws (cursed) and the losses (blessed), and the longest rule distance of
 * a kept win. */
typedef struct rule_stats {
    uint64_t wins, losses, cursed, blessed;
    int longest;
    uint64_t longest_at;
} rule_stats;

static rule_stats count_rules(const dtb_solved_table *t, const dtb_solved_table *rt)
{
    const uint64_t n = dtb_index_size(t->index);
    uint64_t wins = 0, losses = 0, cursed = 0, blessed = 0;
#pragma omp parallel for schedule(static) reduction(+ : wins, losses, cursed, blessed)
    for (uint64_t i = 0; i < n; i++) {
        const dtb_wdl r = dtb_value_wdl(t->values[i]), k = dtb_value_wdl(rt->values[i]);
        wins += k == DTB_WIN;
        losses += k == DTB_LOSS;
        cursed += r == DTB_WIN && k == DTB_DRAW;
        blessed += r == DTB_LOSS && k == DTB_DRAW;
    }
    rule_stats st = {wins, losses, cursed, blessed, -1, 0};
    for (uint64_t i = 0; i < n; i++) /* the first index with the longest: deterministic */
        if (dtb_value_is_win(rt->values[i]) && (int)rt->values[i] > st.longest) {
            st.longest = rt->values[i];
            st.longest_at = i;
        }
    return st;
}

/* The header fields of material m's rule table under rules (layers: its count layers). */
static void rule_fields(dtb_table_write_options *w, const dtb_rules *rules, int layers)
{
    for (int c = 0; c < rules->nclasses; c++)
        w->rule_limits[c] = rules->cls[c].limit;
    w->rule_late_limit = dtb_rules_late_limit(rules);
    w->rule_late_after = w->rule_late_limit ? rules->late_after : 0;
    w->rule_layers = layers;
}

/* The rule distances of a solved pair (gen/solve_rules.c) into rl, written as its tables (a
 * material with count layers: each layer's bytes in turn, count 0 first); stats of count 0 and
 * the time it took into rst and *seconds. */
static dtb_status solve_and_write_rules(const dtb_build_options *o, const dtb_solved *s,
                                        dtb_rule_layers *rl, const dtb_material *m,
                                        rule_stats rst[2], double *seconds, dtb_error *e)
{
    const double t0 = omp_get_wtime();
    const dtb_material ms[2] = {*m, dtb_material_flip(*m)};
    dtb_status rc = dtb_solve_rules_pair(s, rl, *m, e);
    for (int k = 0; k < (is_self_flip(m) ? 1 : 2) && rc == DTB_OK; k++) {
        const dtb_solved_table *rt = dtb_rule_layers_find(rl, ms[k], 0);
        rst[k] = count_rules(dtb_solved_find(s, ms[k]), rt);
        const int layers = dtb_rule_layers_of(rl, &ms[k]);
        const uint64_t n = dtb_index_size(rt->index);
        dtb_value *all = rt->values;
        if (layers > 1 && !(all = malloc(n * (uint64_t)layers))) {
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
            break;
        }
        for (int c = 1; c < layers; c++)
            memcpy(all + c * n, dtb_rule_layers_find(rl, ms[k], c)->values, n);
        if (layers > 1)
            memcpy(all, rt->values, n);
        char path[4096], name[DTB_MATERIAL_NAME_MAX];
        dtb_table_write_options w =
            table_options(o, rt, dtb_metric_of_rules(o->rules->id), path, name);
        w.dontcare_kind = 0; /* every position holds its byte: answers need no search */
        rule_fields(&w, o->rules, layers);
        rc = dtb_table_write(path, &w, all, n * (uint64_t)layers, NULL, NULL, e);
        if (all != rt->values)
            free(all);
    }
    *seconds = omp_get_wtime() - t0;
    return rc;
}

/* The stats record's rule fields (empty without rules). */
static void rules_json(char *buf, size_t size, const dtb_rule_layers *rl,
                       const dtb_build_options *o, const dtb_material *m, const rule_stats *st,
                       double seconds)
{
    const size_t used = strlen(buf);
    char fen[DTB_FEN_MAX] = "";
    if (st->longest >= 0) {
        dtb_pos p;
        dtb_index_pos(dtb_rule_layers_find(rl, *m, 0)->index, st->longest_at, &p);
        dtb_fen_write(dtb_solved_board(rl->at[0]), &p, fen, sizeof fen);
    }
    snprintf(buf + used, size - used,
             ",\"rules\":\"%s\",\"rule_limit\":%d,\"rule_wins\":%llu,\"rule_losses\":%llu,"
             "\"cursed_wins\":%llu,\"blessed_losses\":%llu,\"longest_rule_win\":%d,"
             "\"longest_rule_win_fen\":\"%s\",\"rules_seconds\":%.3f",
             o->rules->name, dtb_rules_top_limit(o->rules, m), (unsigned long long)st->wins,
             (unsigned long long)st->losses, (unsigned long long)st->cursed,
             (unsigned long long)st->blessed, st->longest, fen, seconds);
}

dtb_status dtb_build_load_rules(dtb_rule_layers *rl, const char *dir, dtb_material m,
                                dtb_error *e)
{
    const dtb_rules *rules = rl->rules;
    const dtb_variant *v = dtb_solved_board(rl->at[0])->variant;
    const dtb_metric metric = dtb_metric_of_rules(rules->id);
    char path[4096];
    dtb_build_table_path(path, sizeof path, dir, v, &m, metric);
    if (access(path, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table", path);
    dtb_solved_table *t[DTB_RULE_COUNT_MAX + 1];
    dtb_status st = dtb_rule_layers_add(rl, m, t, e);
    if (st != DTB_OK)
        return st;
    const int layers = dtb_rule_layers_of(rl, &m);
    const uint64_t n = dtb_index_size(t[0]->index);
    dtb_value *all = layers > 1 ? malloc(n * (uint64_t)layers) : t[0]->values;
    st = all ? read_values(path, v, &m, metric, n * (uint64_t)layers, all, NULL, t[0], rules, NULL, e)
             : dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int c = 0; st == DTB_OK && layers > 1 && c < layers; c++)
        memcpy(t[c]->values, all + c * n, n);
    if (all != t[0]->values)
        free(all);
    if (st != DTB_OK)
        dtb_rule_layers_drop(rl, m);
    return st;
}

/* Reads the rule-distance tables of pair p into rl (a pair loaded rather than solved). */
static dtb_status load_rules_pair(const dtb_build_options *o, dtb_rule_layers *rl,
                                  const dtb_material *m, bool self, dtb_error *e)
{
    const dtb_material ms[2] = {*m, dtb_material_flip(*m)};
    dtb_status st = DTB_OK;
    for (int k = 0; k < (self ? 1 : 2) && st == DTB_OK; k++)
        st = dtb_build_load_rules(rl, o->out_dir, ms[k], e);
    return st;
}

/* The process's peak resident memory so far (bytes). */
static uint64_t peak_resident(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? (uint64_t)u.ru_maxrss * 1024 : 0;
}

static void stats_json(char *buf, size_t size, const dtb_solved *s, const dtb_solved_table *t,
                       const dtb_solve_stats *st, double seconds, const char *more)
{
    const dtb_board *b = dtb_solved_board(s);
    uint64_t work_now, work_peak, releases;
    dtb_solved_work_stats(s, &work_now, &work_peak, &releases);
    char name[DTB_MATERIAL_NAME_MAX], fen[DTB_FEN_MAX] = "";
    dtb_material_name(&t->material, name, sizeof name);
    if (st->longest_win >= 0) {
        dtb_pos p;
        dtb_index_pos(t->index, st->longest_win_at, &p);
        dtb_fen_write(b, &p, fen, sizeof fen);
    }
    snprintf(buf, size,
             "{\"variant\":\"%s\",\"material\":\"%s\",\"positions\":%llu,\"wins\":%llu,"
             "\"draws\":%llu,\"losses\":%llu,\"captures\":%llu,\"longest_win\":%d,"
             "\"longest_win_fen\":\"%s\",\"seconds\":%.3f,\"positions_per_second\":%.0f,"
             "\"peak_resident_bytes\":%llu,\"work_file_bytes\":%llu%s}\n",
             b->variant->name, name, (unsigned long long)st->positions,
             (unsigned long long)st->wins, (unsigned long long)st->draws,
             (unsigned long long)st->losses, (unsigned long long)st->captures, st->longest_win,
             fen, seconds, seconds > 0 ? (double)st->positions / seconds : 0.0,
             (unsigned long long)peak_resident(), (unsigned long long)work_peak, more);
}

/* A pair is complete when each member's .dtw (unless --dtw-pieces leaves it out), .wld (.mtc
 * and the rule-distance table when asked for) and .stats exist. The stats record is written last, so its presence says the
 * tables before it were renamed into place; the tables are looked for too, so a table deleted by
 * hand is rebuilt rather than reported missing. */
static bool pair_complete(const dtb_build_options *o, const dtb_material *m)
{
    const dtb_material f = dtb_material_flip(*m);
    const dtb_material *ms[2] = {m, &f};
    for (int k = 0; k < (is_self_flip(m) ? 1 : 2); k++) {
        char path[4096];
        stats_path(path, sizeof path, o->out_dir, o->variant, ms[k]);
        if (access(path, F_OK) != 0)
            return false;
        const dtb_metric metrics[4] = {DTB_METRIC_DTW, DTB_METRIC_WLD, DTB_METRIC_MTC,
                                       o->rules ? dtb_metric_of_rules(o->rules->id) : DTB_METRIC_WLD};
        for (int metric = dtb_build_writes_dtw(o, ms[k]) ? 0 : 1; metric < 4; metric++) {
            if ((metric == 2 && !o->mtc) || (metric == 3 && !o->rules))
                continue;
            dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, ms[k], metrics[metric]);
            if (access(path, F_OK) != 0)
                return false;
        }
    }
    return true;
}

/* Regenerates out_dir/<variant>/STATS from every per-material record in the directory, in
 * dependency order: a build of a few materials (--material) keeps the lines of earlier builds.
 * Records are looked for among all materials of up to 8 pieces (dtbgen's limit) or o->pieces. */
static dtb_status write_stats_log(const dtb_build_options *o, dtb_error *e)
{
    const int pieces = o->pieces > 8 ? o->pieces : 8;
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)(n ? n : 1) * sizeof *list);
    size_t cap = 4096, len = 0;
    char *all = malloc(cap);
    if (!all || !list) {
        free(all);
        free(list);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    dtb_material_list(pieces, list, n);
    all[0] = 0;
    for (int i = 0; i < n; i++) {
        char path[4096], line[2048];
        stats_path(path, sizeof path, o->out_dir, o->variant, &list[i]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof line, f)) {
            const size_t l = strlen(line);
            if (len + l + 1 > cap) {
                char *bigger = realloc(all, cap *= 2);
                if (!bigger) {
                    fclose(f);
                    free(all);
                    free(list);
                    return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
                }
                all = bigger;
            }
            memcpy(all + len, line, l + 1);
            len += l;
        }
        fclose(f);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/STATS", o->out_dir, o->variant->name);
    const dtb_status st = dtb_atomic_write_file(path, all, strlen(all), e);
    free(all);
    free(list);
    return st;
}

typedef struct progress_ctx {
    const dtb_build_options *o;
    const char *name;
} progress_ctx;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    const progress_ctx *pc = user;
    if (pc->o->log)
        pc->o->log(pc->o->user, DTB_BUILD_PROGRESS, pc->name, done, total, NULL);
}

/* The directory of the build's work files and scratch files. */
const char *dtb_build_work_dir(const dtb_build_options *o, char dir[4096])
{
    if (o->work_dir)
        return o->work_dir;
    snprintf(dir, 4096, "%s/%s", o->out_dir, o->variant->name);
    return dir;
}

dtb_status dtb_build_write_pair(const dtb_build_options *o, const dtb_solved *s, dtb_material m,
                                const dtb_sliced_pair *sp, dtb_error *e)
{
    const dtb_material f = dtb_material_flip(m);
    const dtb_material *ms[2] = {&m, &f};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < (is_self_flip(&m) ? 1 : 2) && rc == DTB_OK; k++) {
        const dtb_solved_table *t = dtb_solved_find(s, *ms[k]);
        rc = dtb_build_writes_dtw(o, ms[k]) ? write_table(o, s, t, DTB_METRIC_DTW, sp, k, e) : DTB_OK;
        if (rc == DTB_OK)
            rc = write_table(o, s, t, DTB_METRIC_WLD, sp, k, e);
    }
    return rc;
}

static dtb_status solve_and_write(const dtb_build_options *o, dtb_solved *s,
                                  dtb_rule_layers *rl, const dtb_material *m, bool lean,
                                  bool sliced, bool in_memory, dtb_error *e)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    const bool self = is_self_flip(m);
    const dtb_material f = dtb_material_flip(*m);
    if (o->log)
        o->log(o->user, DTB_BUILD_START, name, 0, 0, NULL);
    const double t0 = omp_get_wtime();
    dtb_solve_stats st[2];
    progress_ctx pc = {o, name};
    dtb_sliced_pair *sp = NULL;
    char scratch[4096];
    dtb_status rc =
        sliced   ? dtb_solve_pair_sliced(s, *m, in_memory, dtb_build_work_dir(o, scratch),
                                   o->dtw_full && dtb_build_writes_dtw(o, m),
                                   o->peers ? &o->peers->levels : NULL, st, &sp, on_progress,
                                   &pc, e)
        : o->peers ? o->peers->solve_pair(o->peers->ctx, s, *m, lean, o->mtc ? NULL : &sp, st,
                                          on_progress, &pc, e)
                 : dtb_solve_pair(s, *m, lean, st, on_progress, &pc, e);
    if (rc == DTB_OK) /* a solve that read a damaged block of a table file is not written */
        rc = dtb_solved_read_status(s, e);
    if (rc != DTB_OK)
        return rc;
    const double seconds = omp_get_wtime() - t0;
    const uint64_t slice_bytes = sp ? dtb_sliced_pair_bytes(sp) : 0;
    const dtb_material *ms[2] = {m, &f};
    rc = dtb_build_write_pair(o, s, *m, sp, e);
    dtb_sliced_pair_free(sp);
    if (rc != DTB_OK)
        return rc;
    dtb_mtc_stats mst[2];
    double mtc_seconds = 0;
    if (o->mtc && (rc = solve_and_write_mtc(o, s, m, mst, &mtc_seconds, e)) != DTB_OK)
        return rc;
    rule_stats rst[2];
    double rules_seconds = 0;
    if (o->rules && (rc = solve_and_write_rules(o, s, rl, m, rst, &rules_seconds, e)) != DTB_OK)
        return rc;
    for (int k = 0; k < (self ? 1 : 2); k++) {
        const dtb_solved_table *t = dtb_solved_find(s, *ms[k]);
        char json[3072], path[4096], mname[DTB_MATERIAL_NAME_MAX], more[1024] = "";
        if (o->mtc)
            mtc_json(more, sizeof more, s, t, &mst[k], self ? mtc_seconds : mtc_seconds / 2);
        if (o->rules)
            rules_json(more, sizeof more, rl, o, ms[k], &rst[k],
                       self ? rules_seconds : rules_seconds / 2);
        if (slice_bytes) {
            const size_t at = strlen(more);
            snprintf(more + at, sizeof more - at, ",\"slice_store_bytes\":%llu",
                     (unsigned long long)slice_bytes);
        }
        /* Time is shared by the pair; each member gets its share by size. */
        stats_json(json, sizeof json, s, t, &st[k], self ? seconds : seconds / 2, more);
        stats_path(path, sizeof path, o->out_dir, o->variant, ms[k]);
        rc = dtb_atomic_write_file(path, json, strlen(json), e);
        if (rc != DTB_OK)
            return rc;
        dtb_material_name(ms[k], mname, sizeof mname);
        if (o->log)
            o->log(o->user, DTB_BUILD_DONE, mname, st[k].positions, st[k].positions, json);
    }
    return DTB_OK;
}

/* ---- the plan: which pairs run in which order, and how long each stays in memory -------- */

/* PAIR_CHECK: load, then hand to dtb_build_walk's caller with everything its moves reach. */
enum { PAIR_SKIP, PAIR_LOAD, PAIR_SOLVE, PAIR_CHECK };

typedef struct plan_pair {
    dtb_material m;               /* the member first in list order */
    bool self;                    /* m is its own flip */
    int action;                   /* PAIR_SKIP (complete, not needed), PAIR_LOAD, ... */
    uint64_t positions;           /* of one member */
    uint64_t blocks, block_size;  /* of m's index */
    int step;                     /* its place in the run order; -1 when skipped */
    int last;                     /* the step after which no step needs its values */
    bool lean;                    /* solved with the lean state (dtb_solve_pair) */
    int share;                    /* lean, split between this many MPI ranks (1: alone) */
    bool kept;                    /* split, each rank keeps its range and compresses its blocks
                                     of the tables (never whole: but for MTC tables, solved
                                     from the pair) */
    uint64_t level_units;         /* the most units in one level of men advancement */
    uint64_t live;                /* positions live at once if solved in slices; 0: it cannot be
                                     (no men or no kings) */
    bool sliced;                  /* solved in slices (dtb_solve_pair_sliced) */
    bool sliced_in_memory;        /* its live levels in memory, not in work files (they fit) */
    bool losses;                  /* a member's DTW table stores its losses only (on disk, or
                                     as this build writes it): loading it, or reading it from
                                     its file, searches its wins through every exit */
} plan_pair;

typedef struct build_plan {
    plan_pair *pair;
    int npairs;
    bool *use;    /* use[i * npairs + j]: running pair i reads pair j's values */
    int *order;   /* pair numbers in run order */
    int nsteps;
    uint64_t peak;    /* bytes at the fullest step, everything in memory */
    uint64_t tables;  /* the most bytes of solved values held at once (work files' disk peak) */
    uint64_t solving; /* the most bytes of one pair being solved (the same when finished tables
                         are read from their files) */
    bool files;       /* finished tables are read from their files (set before plan_finish) */
    uint64_t room;    /* the disk a pair's work files may take beside the build's table files
                         (set before plan_finish; UINT64_MAX: no limit) */
    uint64_t working; /* the most bytes one step works with beyond them, BASE_BYTES included */
    uint64_t file_cache; /* the caches of table files read on demand, when they are */
} build_plan;

static void plan_free(build_plan *pl)
{
    free(pl->pair);
    free(pl->use);
    free(pl->order);
    *pl = (build_plan){0};
}

/* Bytes a pair takes in a dtb_solved registry: a value byte and a capture bit per position. */
static uint64_t resident_bytes(const plan_pair *p)
{
    return (p->self ? 1 : 2) * (p->positions + (p->positions / 64 + 1) * 8 + 1024);
}

static uint64_t file_cache_bytes(int threads, uint64_t positions);

/* Bytes a pair solved in slices holds at once: the values and capture bits of its two largest
 * adjacent levels, and a page a block-run boundary (counted as an eighth more). */
static uint64_t live_bytes(const plan_pair *p)
{
    return p->live + p->live / 8 + p->live / 64 * 8 + 1024;
}

/* Bytes of a pair in memory or work files while it is solved and read. */
static uint64_t pair_bytes(const plan_pair *p)
{
    /* split: a rank's range of both members while it is solved and written */
    return p->sliced ? live_bytes(p)
           : p->kept ? (resident_bytes(p) + (uint64_t)p->share - 1) / (uint64_t)p->share
                       : resident_bytes(p);
}

/* Disk of a pair's slice store (gen/slicestore.c): its values compressed by zstd's fastest
 * level, projected from the stores measured (gen/diskplan.c). Wins keep their distances there
 * only when a DTW table of the pair stores them. */
static uint64_t slice_store_bytes(const dtb_build_options *o, const plan_pair *p)
{
    const uint64_t all = dtb_diskplan_store_bytes(o->variant, dtb_material_pieces(&p->m),
                                                  (p->self ? 1 : 2) * p->positions,
                                                  o->dtw_full && dtb_build_writes_dtw(o, &p->m));
    /* Shared between ranks, a rank's store holds the parts it solved and the blocks of its
     * range of the files: about two shares. */
    const bool shared = o->ranks > 1 && p->sliced &&
                        (p->self ? 1 : 2) * p->positions >= DTB_BUILD_SHARE_MIN_POSITIONS;
    return shared && o->ranks > 2 ? all / (uint64_t)o->ranks * 2 : all;
}

/* Working memory of dtb_solve_pair (gen/solve.c), estimated from what it allocates: what orders
 * its units (dtb_solve_unit_list_bytes), for each thread that
 * gets a unit, 4 bytes of state per position of a unit (two blocks) and the level queues (4 bytes
 * per queued position: under one byte per position of the unit measured on king-only pairs, 2
 * allowed) with their first 1024 entries per level, and the fact buffers of shared units. The
 * solver gives each thread a unit of its own only where a level has one for every thread; a
 * level of fewer units is shared by all of them (one unit's state). */
static uint64_t solver_bytes(const plan_pair *p, int threads)
{
    if (p->lean) /* split between ranks: a share of the counts, and the others' runs of a level */
        return p->share > 1 ? dtb_solve_lean_bytes((p->self ? 1 : 2) * p->positions / (uint64_t)p->share, threads) +
                                  (p->self ? 1 : 2) * p->positions / 8
                            : dtb_solve_lean_bytes((p->self ? 1 : 2) * p->positions, threads);
    const uint64_t busy = p->level_units >= (uint64_t)threads ? (uint64_t)threads : 1;
    return dtb_solve_unit_list_bytes(p->blocks, p->block_size) +
           busy * (2 * p->block_size * (4 + 2) + (DTB_MAX_DTW + 2) * 4096ull) +
           (uint64_t)threads * dtb_solve_shared_bytes(p->block_size, threads);
}

static uint64_t slice_store_bytes(const dtb_build_options *o, const plan_pair *p);

/* Working memory of writing a pair's tables (gen/tablewrite.c): up to 256 MiB of frame buffers
 * and 64 MiB of dictionary samples, compression contexts per thread. WLD tables are mapped from
 * the DTW values block by block, without a copy; a pair solved in slices is read from its store
 * through a cache of decoded chunks per thread. A rank of a pair written by every rank keeps
 * the frames of its blocks of a table until rank 0 takes them: counted as its share of the
 * values compressed as a slice store would (zstd's fastest level: more than the tables' level
 * makes). */
static uint64_t writer_bytes(const dtb_build_options *o, const plan_pair *p, int threads)
{
    const uint64_t cap = (uint64_t)320 << 20;
    const uint64_t per_thread =
        (8u << 20) + (p->sliced ? dtb_slicestore_reader_bytes(p->block_size, p->positions) : 0);
    return (2 * p->positions < cap ? 2 * p->positions : cap) + (uint64_t)threads * per_thread +
           (p->kept ? slice_store_bytes(o, p) / (uint64_t)p->share
            : p->sliced && o->ranks > 1 ? slice_store_bytes(o, p) / 2 : 0);
}

/* Code, libraries, thread stacks, the registry: what a build holds before any table. */
#define BASE_BYTES ((uint64_t)16 << 20)

static uint64_t step_bytes(const dtb_build_options *o, const plan_pair *p, int threads)
{
    if (p->action != PAIR_SOLVE)
        return (uint64_t)threads * (1u << 20); /* a decompression context each */
    const uint64_t s = solver_bytes(p, threads), w = writer_bytes(o, p, threads);
    return s > w ? s : w;
}

/* Whether running pair p reads pair q's values: solving (and checking) reads every exit,
 * loading re-derives capture positions, whose successors have fewer pieces, and searches a
 * losses-only table's wins, whose moves reach promotion targets too. */
static bool plan_uses(const plan_pair *p, const plan_pair *q)
{
    if (p->action == PAIR_SKIP || !dtb_build_exits(&p->m, &q->m))
        return false;
    return p->action != PAIR_LOAD || p->losses ||
           dtb_material_pieces(&q->m) < dtb_material_pieces(&p->m);
}

/* Whether the DTW table at path stores its losses only (docs/FORMAT.md §8.7), from its
 * header's metric and flags alone: plans ask before anything is loaded, and loading checks the
 * whole file. false without such a file, or when the header does not say. */
static bool losses_only_file(const char *path)
{
    unsigned char h[DTB_TF_OFF_FLAGS + 4];
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    const bool got = fread(h, 1, sizeof h, f) == sizeof h;
    fclose(f);
    return got && memcmp(h, DTB_TF_MAGIC, DTB_TF_MAGIC_LEN) == 0 &&
           dtb_tf_get32(h + DTB_TF_OFF_METRIC) == DTB_METRIC_DTW &&
           (dtb_tf_get32(h + DTB_TF_OFF_FLAGS) & DTB_TABLE_LOSSES);
}

/* Whether either member of the pair of m has a losses-only DTW table in o->out_dir. */
static bool pair_losses_on_disk(const dtb_build_options *o, const dtb_material *m)
{
    const dtb_material ms[2] = {*m, dtb_material_flip(*m)};
    for (int k = 0; k < 2; k++) {
        char path[4096];
        dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &ms[k], DTB_METRIC_DTW);
        if (losses_only_file(path))
            return true;
    }
    return false;
}

/* The run order. A pair may run once every pair it depends on (dtb_build_depends: a superset of
 * what its values are derived from, so the order stays a dependency order) has run; among those,
 * the one after which the fewest bytes stay in memory runs next, ties to the first in list order.
 * This finishes a chain of promotions (whose last member frees the rest) before starting
 * another, and solves a large pair only when what it frees is worth it. Deterministic. */
static dtb_status plan_order(build_plan *pl, dtb_error *e)
{
    const int np = pl->npairs;
    int *remaining = calloc((size_t)np + 1, sizeof *remaining); /* users not yet run */
    int *waiting = calloc((size_t)np + 1, sizeof *waiting);     /* dependencies not yet run */
    bool *dep = calloc((size_t)np * (size_t)np + 1, 1), *done = calloc((size_t)np + 1, 1);
    pl->order = malloc(((size_t)np + 1) * sizeof *pl->order);
    if (!remaining || !waiting || !dep || !done || !pl->order) {
        free(remaining), free(waiting), free(dep), free(done);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    int active = 0;
    for (int i = 0; i < np; i++) {
        if (pl->pair[i].action == PAIR_SKIP)
            continue;
        active++;
        for (int j = 0; j < np; j++) {
            if (j == i || pl->pair[j].action == PAIR_SKIP)
                continue;
            remaining[j] += pl->use[(size_t)i * np + j];
            if (dtb_build_depends(&pl->pair[i].m, &pl->pair[j].m)) {
                dep[(size_t)i * np + j] = true;
                waiting[i]++;
            }
        }
    }
    uint64_t live = 0;
    for (int s = 0; s < active; s++) {
        int best = -1;
        uint64_t best_after = 0;
        for (int c = 0; c < np; c++) {
            const plan_pair *p = &pl->pair[c];
            if (p->action == PAIR_SKIP || done[c] || waiting[c])
                continue;
            uint64_t after = live + (remaining[c] ? resident_bytes(p) : 0);
            for (int j = 0; j < np; j++)
                if (pl->use[(size_t)c * np + j] && remaining[j] == 1)
                    after -= resident_bytes(&pl->pair[j]);
            if (best < 0 || after < best_after) {
                best = c;
                best_after = after;
            }
        }
        assert(best >= 0 && "the dependency relation has a cycle");
        done[best] = true;
        pl->order[s] = best;
        pl->pair[best].step = s;
        if (remaining[best])
            live += resident_bytes(&pl->pair[best]);
        for (int j = 0; j < np; j++) {
            if (pl->use[(size_t)best * np + j] && --remaining[j] == 0)
                live -= resident_bytes(&pl->pair[j]);
            if (dep[(size_t)j * np + best])
                waiting[j]--;
        }
    }
    pl->nsteps = active;
    free(remaining), free(waiting), free(dep), free(done);
    return DTB_OK;
}

/* The pairs of the options' list, in list order, with their sizes; every action PAIR_SKIP. */
static dtb_status plan_list(const dtb_build_options *o, build_plan *pl, dtb_error *e)
{
    *pl = (build_plan){.room = UINT64_MAX};
    dtb_board b;
    dtb_board_init(&b, o->variant);
    dtb_material *list;
    const int n = build_list(o, &list);
    if (n < 0)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    pl->pair = calloc((size_t)n + 1, sizeof *pl->pair);
    if (!pl->pair) {
        free(list);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        const dtb_material f = dtb_material_flip(list[i]);
        bool listed = false;
        for (int k = 0; k < pl->npairs && !listed; k++)
            listed = dtb_material_equal(&pl->pair[k].m, &f);
        if (listed)
            continue;
        plan_pair *p = &pl->pair[pl->npairs++];
        *p = (plan_pair){.m = list[i], .self = is_self_flip(&list[i]), .step = -1, .last = -1};
        dtb_index *ix;
        if (dtb_index_create(&b, list[i], &ix) == DTB_OK) { /* else solving reports it */
            p->positions = dtb_index_size(ix);
            p->blocks = dtb_index_blocks(ix);
            p->block_size = dtb_index_block_size(ix);
            dtb_index_free(ix);
            const uint64_t live = p->blocks > 1 && p->block_size > 1 /* men and kings: levels */
                                      ? dtb_solve_sliced_live_blocks(&b, list[i])
                                      : 0;
            p->live = live == UINT64_MAX ? UINT64_MAX : live * p->block_size * (p->self ? 1 : 2);
            const uint64_t level = p->blocks > 1 && p->block_size > 1
                                       ? dtb_solve_level_blocks_max(&b, list[i])
                                       : p->blocks;
            p->level_units = level == UINT64_MAX ? p->blocks : p->self ? (level + 1) / 2 : level;
        }
    }
    free(list);
    return DTB_OK;
}

/* The rest of a plan whose pairs to solve or check are set: which other pairs must be loaded for
 * them, the run order, when each pair's values may go, and the peak of memory that gives. keep:
 * list order and nothing dropped (the build as it was before dropping). Frees pl on failure. */
static dtb_status plan_finish(const dtb_build_options *o, bool keep, build_plan *pl, dtb_error *e)
{
    const int np = pl->npairs;
    pl->use = calloc((size_t)np * (size_t)np + 1, 1);
    if (!pl->use) {
        plan_free(pl);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    /* Complete pairs that a pair to run reads are loaded, and what loading them reads in turn. */
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = np - 1; i >= 0; i--)
            for (int j = 0; j < np; j++) {
                if (j == i || pl->use[(size_t)i * np + j] || !plan_uses(&pl->pair[i], &pl->pair[j]))
                    continue;
                assert(dtb_build_depends(&pl->pair[i].m, &pl->pair[j].m));
                pl->use[(size_t)i * np + j] = true;
                if (pl->pair[j].action == PAIR_SKIP) {
                    pl->pair[j].action = PAIR_LOAD;
                    changed = true;
                }
            }
    }
    /* Tables read from their files resolve their capture positions when read: whoever reads
     * one reads what its captures reach too (fewer pieces), as loading it would have, and of a
     * losses-only table, whose wins are searched, everything its moves reach. */
    for (bool changed = pl->files; changed;) {
        changed = false;
        for (int i = 0; i < np; i++)
            for (int j = 0; j < np; j++) {
                if (!pl->use[(size_t)i * np + j])
                    continue;
                for (int k = 0; k < np; k++) {
                    if (k == i || pl->use[(size_t)i * np + k] ||
                        (!pl->pair[j].losses &&
                         dtb_material_pieces(&pl->pair[k].m) >= dtb_material_pieces(&pl->pair[j].m)) ||
                        !dtb_build_exits(&pl->pair[j].m, &pl->pair[k].m))
                        continue;
                    pl->use[(size_t)i * np + k] = true;
                    if (pl->pair[k].action == PAIR_SKIP)
                        pl->pair[k].action = PAIR_LOAD;
                    changed = true;
                }
            }
    }
    dtb_status rc = DTB_OK;
    if (keep) {
        pl->order = malloc(((size_t)np + 1) * sizeof *pl->order);
        if (!pl->order)
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        for (int i = 0; i < np && rc == DTB_OK; i++)
            if (pl->pair[i].action != PAIR_SKIP) {
                pl->pair[i].step = pl->nsteps;
                pl->order[pl->nsteps++] = i;
            }
    } else {
        rc = plan_order(pl, e);
    }
    if (rc != DTB_OK) {
        plan_free(pl);
        return rc;
    }
    for (int i = 0; i < np; i++) {
        plan_pair *p = &pl->pair[i];
        if (p->action == PAIR_SKIP)
            continue;
        p->last = keep ? pl->nsteps - 1 : p->step;
        for (int k = 0; k < np; k++)
            if (pl->use[(size_t)k * np + i] && pl->pair[k].step > p->last)
                p->last = pl->pair[k].step;
    }
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    /* Kings-only pairs are solved lean where the node state alone (with the pair's values) would
     * not fit the budget, and where their unit is beyond 32-bit ids: slower, but a byte a
     * position instead of six (gen/solve.c). */
    for (int i = 0; i < np; i++) {
        plan_pair *p = &pl->pair[i];
        p->lean = false;
        p->share = 1;
        p->kept = false;
        if (p->action != PAIR_SOLVE || !dtb_solve_lean_applies(&p->m))
            continue;
        const uint64_t nodes = BASE_BYTES + resident_bytes(p) + solver_bytes(p, threads);
        /* Under MPI every rank's memory is the build's limit, and such a pair is one unit
         * that the ranks split (each a range of its positions; small ones rank 0 solves alone):
         * lean, unless a lowered byte limit asks for long lists, which only the node state
         * keeps. */
        p->lean = 2 * p->block_size > UINT32_MAX || (o->ranks > 1 && !o->dtw_byte_max) ||
                  (o->memory_budget && nodes > o->memory_budget);
        p->share = p->lean && o->ranks > 1 &&
                   (p->self ? 1 : 2) * p->positions >= DTB_BUILD_SHARE_MIN_POSITIONS ? o->ranks : 1;
        p->kept = p->share > 1 && !o->mtc;
    }
    uint64_t positions = 0;
    for (int i = 0; i < np; i++)
        positions += (pl->pair[i].self ? 1 : 2) * pl->pair[i].positions;
    pl->file_cache = file_cache_bytes(threads, positions);
    /* Pairs with men and kings whose values would not fit the budget are solved in slices;
     * under MPI every such pair (each rank stores the parts it solves, then the blocks it
     * writes, and never holds the pair), but for MTC tables, which are solved from the whole
     * pair's values. */
    for (int i = 0; i < np; i++) {
        plan_pair *p = &pl->pair[i];
        const uint64_t whole = BASE_BYTES + resident_bytes(p) + solver_bytes(p, threads);
        p->sliced = p->action == PAIR_SOLVE && p->live && p->live != UINT64_MAX &&
                    (o->slices == DTB_SLICES_ALWAYS ||
                     (o->slices == DTB_SLICES_AUTO &&
                      ((o->ranks > 1 && !o->mtc) ||
                       (o->memory_budget && whole > o->memory_budget) ||
                       resident_bytes(p) > pl->room)));
        /* Its live levels stay in memory when they fit beside the solver and the file caches
         * (work files only on --work): the scratch store alone is on disk. */
        const uint64_t live = BASE_BYTES + live_bytes(p) + solver_bytes(p, threads) +
                              pl->file_cache;
        p->sliced_in_memory = p->sliced && !o->work_dir && (!o->memory_budget || live <= o->memory_budget);
    }
    uint64_t live = 0;
    pl->peak = pl->working = BASE_BYTES;
    pl->tables = pl->solving = 0;
    for (int s = 0; s < pl->nsteps; s++) {
        const plan_pair *p = &pl->pair[pl->order[s]];
        /* Read from their files, finished tables hold no memory (the file caches are the
         * working memory's): a pair's values live for its own step alone. */
        live += pair_bytes(p);
        /* On disk while it is solved: its values (live levels, or all) in work files, and a
         * sliced pair's store. */
        const uint64_t solving = (p->sliced_in_memory ? 0 : pair_bytes(p)) +
                                 (p->sliced ? slice_store_bytes(o, p) : 0);
        if (p->action == PAIR_SOLVE && solving > pl->solving)
            pl->solving = solving;
        const uint64_t work = BASE_BYTES + step_bytes(o, p, threads);
        const uint64_t now = live + work;
        if (now > pl->peak)
            pl->peak = now;
        if (live > pl->tables)
            pl->tables = live;
        if (work > pl->working)
            pl->working = work;
        for (int j = 0; j < np; j++)
            if (pl->files ? pl->order[s] == j : pl->pair[j].last == s)
                live -= pair_bytes(&pl->pair[j]);
    }
    return DTB_OK;
}

/* The plan of a build: the pairs complete on disk (when on_disk) are skipped or loaded, the
 * others solved. */
static dtb_status plan_make(const dtb_build_options *o, bool on_disk, bool keep, bool files,
                            uint64_t room, build_plan *pl, dtb_error *e)
{
    dtb_status rc = plan_list(o, pl, e);
    if (rc != DTB_OK)
        return rc;
    pl->files = files;
    pl->room = room;
    for (int i = 0; i < pl->npairs; i++) {
        plan_pair *p = &pl->pair[i];
        p->action = on_disk && pair_complete(o, &p->m) ? PAIR_SKIP : PAIR_SOLVE;
        p->losses = p->action == PAIR_SOLVE ? !o->dtw_full && dtb_build_writes_dtw(o, &p->m)
                                            : pair_losses_on_disk(o, &p->m);
    }
    return plan_finish(o, keep, pl, e);
}

uint64_t dtb_build_memory_needed(const dtb_build_options *o)
{
    build_plan pl;
    if (plan_make(o, o->out_dir != NULL, o->keep_solved, false, UINT64_MAX, &pl, NULL) != DTB_OK)
        return UINT64_MAX;
    const uint64_t peak = pl.peak;
    plan_free(&pl);
    return peak;
}

/* Memory the budget must leave above the monitor's cap: what resident memory can grow by
 * between two of its looks (5 ms), plus what it does not see (the kernel's page tables). */
#define BUDGET_SLACK ((uint64_t)32 << 20)

static uint64_t disk_free(const char *dir);

/* The resident memory the work files' monitor keeps the build under (0: no monitor). */
static uint64_t monitor_cap(const dtb_build_options *o)
{
    return o->memory_budget > BUDGET_SLACK ? o->memory_budget - BUDGET_SLACK : 0;
}

/* Bytes of the caches of table files read on demand (gen/solved.c), when the tables read hold
 * this many positions in all: a thread's cache never holds more than them. */
static uint64_t file_cache_bytes(int threads, uint64_t positions)
{
    const uint64_t most = (uint64_t)DTB_SOLVED_FILE_CACHE_BLOCKS * DTB_TABLE_DEFAULT_BLOCK_POSITIONS;
    return (uint64_t)threads * (positions < most ? positions : most);
}

/* The disk the build may take of free_bytes free: all of it, or o->disk_budget when less. */
static uint64_t disk_allowed(const dtb_build_options *o, uint64_t free_bytes)
{
    return o->disk_budget && o->disk_budget < free_bytes ? o->disk_budget : free_bytes;
}

/* The directory where o's work files would go: --work, the tables' directory, or the nearest
 * existing directory above it (a build creates them); the bytes the build may take there
 * (disk_allowed of its free bytes). */
static uint64_t work_disk_free(const dtb_build_options *o)
{
    char dir[4096];
    if (o->work_dir)
        snprintf(dir, sizeof dir, "%s", o->work_dir);
    else if (o->out_dir)
        snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->variant->name);
    else
        snprintf(dir, sizeof dir, ".");
    uint64_t free_bytes = disk_free(dir);
    while (free_bytes == UINT64_MAX && strrchr(dir, '/')) {
        *strrchr(dir, '/') = 0;
        free_bytes = disk_free(*dir ? dir : "/");
    }
    return disk_allowed(o, free_bytes == UINT64_MAX ? disk_free(".") : free_bytes);
}

/* What a budget of o->memory_budget bytes makes of the plan pl (see dtb_build_budget), with
 * free_bytes free where the work files would go and table_bytes of them for the table files
 * the build writes. Finished tables are read from their files when asked, or when keeping them
 * in work files would not fit beside the table files: slower exits (a block decoded per cache
 * miss, captures searched) for a disk of the largest pair. */
static dtb_build_budget budget_of(const dtb_build_options *o, const build_plan *pl,
                                  uint64_t free_bytes, uint64_t table_bytes)
{
    dtb_build_budget b = {
        .in_memory = pl->peak,
        .working = pl->working,
        .minimum = pl->working + BUDGET_SLACK,
        .work_files = 0,
        .disk_free = free_bytes,
        .monitor_cap = monitor_cap(o),
    };
    for (int i = 0; i < pl->npairs; i++) {
        const plan_pair *p = &pl->pair[i];
        if (p->lean) {
            b.lean_pairs++;
            b.lean_positions += (p->self ? 1 : 2) * p->positions;
        }
        if (p->sliced) {
            b.sliced_pairs++;
            b.sliced_positions += (p->self ? 1 : 2) * p->positions;
            const uint64_t store = slice_store_bytes(o, p);
            if (store > b.slice_bytes)
                b.slice_bytes = store;
        }
    }
    b.use_work_files = o->work_dir || (o->memory_budget && pl->peak > o->memory_budget);
    if (b.use_work_files)
        b.work_files = pl->tables;
    /* A pair solved in slices is never whole in memory: later pairs read it from its files. */
    b.read_finished = o->read_finished || b.sliced_pairs || o->ranks > 1 ||
                      (b.use_work_files && free_bytes < pl->tables + table_bytes);
    if (b.read_finished) {
        /* Asked for, or for the disk's sake: the pair being solved in work files too. Under
         * MPI, where every rank reads finished tables from files, only when over budget. */
        b.use_work_files |= o->ranks <= 1;
        b.work_files = b.use_work_files ? pl->solving : 0;
        b.working += pl->file_cache;
        b.minimum += pl->file_cache;
    }
    return b;
}

/* The plan of a build of o with work files of a pair limited to room bytes, and what its budget
 * makes of it: when finished tables are to be read from their files, the plan made for that. */
static dtb_status plan_roomed(const dtb_build_options *o, bool on_disk, uint64_t room,
                              uint64_t free_bytes, uint64_t table_bytes, build_plan *pl,
                              dtb_build_budget *out, dtb_error *e)
{
    dtb_status rc = plan_make(o, on_disk, o->keep_solved, o->read_finished, room, pl, e);
    if (rc != DTB_OK)
        return rc;
    *out = budget_of(o, pl, free_bytes, table_bytes);
    if (out->read_finished && !pl->files) {
        plan_free(pl);
        dtb_build_options files = *o;
        files.read_finished = true;
        rc = plan_make(&files, on_disk, o->keep_solved, true, room, pl, e);
        if (rc != DTB_OK)
            return rc;
        *out = budget_of(&files, pl, free_bytes, table_bytes);
    }
    return DTB_OK;
}

/* The plan of a build of o and what its budget makes of it. When its work files and the table
 * files it writes (projected, gen/diskplan.c) would not fit the disk, the pairs whose values
 * alone would not fit beside the table files are solved in slices (their store is a fraction
 * of their values), where slicing is the builder's to choose (--slices auto) and the build can
 * slice (not under MPI, not with MTC or rule tables), if that takes less disk. */
static dtb_status plan_budgeted(const dtb_build_options *o, bool on_disk, build_plan *pl,
                                dtb_build_budget *out, dtb_error *e)
{
    const uint64_t free_bytes = work_disk_free(o);
    uint64_t wld, dtw;
    const uint64_t tables = dtb_diskplan_tables(o, &wld, &dtw) ? wld + dtw : 0;
    dtb_status rc = plan_roomed(o, on_disk, UINT64_MAX, free_bytes, tables, pl, out, e);
    if (rc != DTB_OK || !out->use_work_files || o->slices != DTB_SLICES_AUTO ||
        o->mtc || o->rules || free_bytes == UINT64_MAX || out->work_files + tables <= free_bytes)
        return rc;
    const uint64_t room = free_bytes > tables ? free_bytes - tables : 0;
    build_plan roomed;
    dtb_build_budget b;
    rc = plan_roomed(o, on_disk, room, free_bytes, tables, &roomed, &b, e);
    if (rc != DTB_OK) {
        plan_free(pl);
        return rc;
    }
    if (b.work_files < out->work_files) {
        plan_free(pl);
        *pl = roomed;
        *out = b;
    } else {
        plan_free(&roomed);
    }
    return DTB_OK;
}

dtb_status dtb_build_plan_budget(const dtb_build_options *o, dtb_build_budget *out, dtb_error *e)
{
    build_plan pl;
    const dtb_status rc = plan_budgeted(o, o->out_dir != NULL, &pl, out, e);
    if (rc == DTB_OK)
        plan_free(&pl);
    return rc;
}

int dtb_build_to_solve(const dtb_build_options *o, dtb_material **out)
{
    *out = NULL;
    build_plan pl;
    if (plan_make(o, o->out_dir != NULL, false, false, UINT64_MAX, &pl, NULL) != DTB_OK)
        return -1;
    dtb_material *list = malloc(2 * ((size_t)pl.npairs + 1) * sizeof *list);
    int n = 0;
    for (int i = 0; i < pl.npairs && list; i++)
        if (pl.pair[i].action == PAIR_SOLVE) {
            list[n++] = pl.pair[i].m;
            if (!pl.pair[i].self)
                list[n++] = dtb_material_flip(pl.pair[i].m);
        }
    plan_free(&pl);
    if (!list)
        return -1;
    *out = list;
    return n;
}

/* Bytes free for an unprivileged writer in dir's file system; UINT64_MAX when unknown. */
static uint64_t disk_free(const char *dir)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0)
        return UINT64_MAX;
    return (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
}

/* "1.5 GiB", "35.2 MiB", "800 bytes": a size in the largest unit that keeps it >= 1, so a small
 * budget does not read as "0.0 GiB". */
static void size_text(uint64_t bytes, char *buf, size_t size)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    double x = (double)bytes / 1024;
    int u = 0;
    while (x >= 1024 && u < 3) {
        x /= 1024;
        u++;
    }
    snprintf(buf, size, "%.1f %s", x, unit[u]);
}

/* Drops both members of pair p from the registry (and the peers' registries). */
static dtb_status drop_pair(const dtb_build_options *o, dtb_solved *s, const plan_pair *p,
                            dtb_error *e)
{
    const dtb_material ms[2] = {p->m, dtb_material_flip(p->m)};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < (p->self ? 1 : 2); k++) {
        dtb_solved_drop(s, ms[k]);
        if (rc == DTB_OK && o->peers)
            rc = o->peers->dropped(o->peers->ctx, ms[k], e);
    }
    return rc;
}

/* Every pair that running pair i reads is in memory: a plan that dropped it too early fails
 * here with a message rather than reading a freed table. */
static dtb_status check_resident(const build_plan *pl, const dtb_solved *s, int i, dtb_error *e)
{
    for (int j = 0; j < pl->npairs; j++) {
        if (!pl->use[(size_t)i * pl->npairs + j])
            continue;
        const dtb_material f = dtb_material_flip(pl->pair[j].m);
        if (!dtb_solved_find(s, pl->pair[j].m) || !dtb_solved_find(s, f)) {
            char a[DTB_MATERIAL_NAME_MAX], b[DTB_MATERIAL_NAME_MAX];
            dtb_material_name(&pl->pair[i].m, a, sizeof a);
            dtb_material_name(&pl->pair[j].m, b, sizeof b);
            return dtb_error_set(e, DTB_E_INVALID, "internal error: %s needs %s, not in memory",
                                 a, b);
        }
    }
    return DTB_OK;
}

/* Whether m's .dtw table is in the build's directory: a table is read from it when it is, else
 * from its .wld (a WLD-only table of --dtw-pieces, with stand-in distances). */
static bool has_dtw(const dtb_build_options *o, const dtb_material *m)
{
    char path[4096];
    dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, m, DTB_METRIC_DTW);
    return access(path, F_OK) == 0;
}

/* Loads both members of pair p from the build's directory (the peers get their values). */
static dtb_status load_pair(const dtb_build_options *o, dtb_solved *s, const plan_pair *p,
                            dtb_error *e)
{
    const dtb_material ms[2] = {p->m, dtb_material_flip(p->m)};
    dtb_status rc = DTB_OK;
    if (has_dtw(o, &p->m)) /* both members: a losses-only table's wins need its partner */
        rc = dtb_build_load(s, o->out_dir, p->m, e);
    for (int k = 0; k < (p->self ? 1 : 2) && rc == DTB_OK && !has_dtw(o, &p->m); k++)
        rc = dtb_build_load_wld(s, o->out_dir, ms[k], e);
    return rc;
}

/* The pair's tables read from their files from now on (their values, if any, dropped), here
 * and by the peers. */
static dtb_status attach_pair(const dtb_build_options *o, dtb_solved *s, const plan_pair *p,
                              dtb_error *e)
{
    const dtb_material ms[2] = {p->m, dtb_material_flip(p->m)};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < (p->self ? 1 : 2) && rc == DTB_OK; k++) {
        dtb_solved_drop(s, ms[k]);
        char path[4096];
        const bool dtw = has_dtw(o, &ms[k]);
        dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &ms[k],
                             dtw ? DTB_METRIC_DTW : DTB_METRIC_WLD);
        rc = dtw ? dtb_solved_add_file(s, ms[k], path, e)
                 : dtb_solved_add_wld_file(s, ms[k], path, e);
        if (rc == DTB_OK && o->peers)
            rc = o->peers->attached(o->peers->ctx, ms[k], path,
                                    dtw ? DTB_METRIC_DTW : DTB_METRIC_WLD, e);
    }
    return rc;
}

dtb_status dtb_build(const dtb_build_options *o, dtb_error *e)
{
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    build_plan pl;
    dtb_build_budget budget;
    dtb_status rc = plan_budgeted(o, true, &pl, &budget, e);
    if (rc != DTB_OK)
        return rc;
    if (budget.use_work_files && o->memory_budget && o->memory_budget < budget.minimum) {
        char needed[32], allowed[32];
        size_text(budget.minimum, needed, sizeof needed);
        size_text(o->memory_budget, allowed, sizeof allowed);
        rc = dtb_error_set(e, DTB_E_NOMEM,
                           "this build needs at least %s of memory (%llu bytes: its largest "
                           "step's working memory), more than the %s allowed (--memory)",
                           needed, (unsigned long long)budget.minimum, allowed);
        plan_free(&pl);
        return rc;
    }
    if (budget.sliced_pairs && (o->mtc || o->rules)) {
        rc = dtb_error_set(e, DTB_E_INVALID,
                           "%d pairs are to be solved in slices (their values do not fit --memory), "
                           "which %s does not do yet: give more memory, or build without it",
                           budget.sliced_pairs,
                           o->mtc ? "a build with MTC tables" : "a build with rule tables");
        plan_free(&pl);
        return rc;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->variant->name);
    rc = make_dir(o->out_dir, e);
    if (rc == DTB_OK)
        rc = make_dir(dir, e);
    char work_buf[4096];
    const char *work = dtb_build_work_dir(o, work_buf);
    if (rc == DTB_OK && budget.use_work_files && o->work_dir)
        rc = make_dir(o->work_dir, e);
    if (rc == DTB_OK && budget.use_work_files &&
        disk_allowed(o, disk_free(work)) < budget.work_files) {
        char needed[32], free_text[32];
        size_text(budget.work_files, needed, sizeof needed);
        size_text(disk_allowed(o, disk_free(work)), free_text, sizeof free_text);
        rc = dtb_error_set(e, DTB_E_NOSPACE,
                           "the work files of this build need %s of disk in %s, which has %s "
                           "%s (--work DIR puts them elsewhere)",
                           needed, work, free_text,
                           o->disk_budget && o->disk_budget < disk_free(work) ? "allowed (--disk)"
                                                                              : "free");
    }
    dtb_board b;
    dtb_board_init(&b, o->variant);
    dtb_solved *s = rc == DTB_OK ? dtb_solved_create(&b) : NULL;
    if (rc == DTB_OK && !s)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (s && o->dtw_byte_max)
        dtb_solved_set_byte_max(s, o->dtw_byte_max);
    /* Over budget in memory: every table's values in work files, their resident pages released
     * whenever the process passes the budget less the slack. */
    if (rc == DTB_OK && budget.use_work_files)
        rc = dtb_solved_use_work_files(s, work, monitor_cap(o), e);
    /* The rule distances of the build: registries of rule bytes, one per diagonal count. */
    dtb_rule_layers rl = {0}, *rlp = NULL;
    if (rc == DTB_OK && o->rules && o->peers)
        rc = dtb_error_set(e, DTB_E_INVALID, "rule-distance tables are not made under MPI yet: "
                           "build them in one process");
    else if (rc == DTB_OK && o->rules && (rc = dtb_rule_layers_init(&rl, &b, o->rules, e)) == DTB_OK)
        rlp = &rl;
    /* Complete pairs are reported first, in list order, whether they are loaded later or not. */
    for (int i = 0; i < pl.npairs && rc == DTB_OK && o->log; i++) {
        const plan_pair *p = &pl.pair[i];
        if (p->action == PAIR_SOLVE)
            continue;
        const dtb_material f = dtb_material_flip(p->m);
        for (int k = 0; k < (p->self ? 1 : 2); k++) {
            char name[DTB_MATERIAL_NAME_MAX];
            dtb_material_name(k ? &f : &p->m, name, sizeof name);
            o->log(o->user, DTB_BUILD_SKIP, name, 0, 0, NULL);
        }
    }
    /* The plan's steps; after each, the pairs no later step reads leave memory (their files
     * are written). */
    for (int step = 0; step < pl.nsteps && rc == DTB_OK; step++) {
        const int i = pl.order[step];
        const plan_pair *p = &pl.pair[i];
        rc = check_resident(&pl, s, i, e);
        if (rc == DTB_OK && p->action == PAIR_SOLVE) {
            rc = solve_and_write(o, s, rlp, &p->m, p->lean, p->sliced, p->sliced_in_memory, e);
            if (rc == DTB_OK && budget.read_finished && p->last > step)
                rc = attach_pair(o, s, p, e);
        } else if (rc == DTB_OK) {
            assert((budget.read_finished || !o->peers) && "the peers read tables from files");
            rc = budget.read_finished ? attach_pair(o, s, p, e) : load_pair(o, s, p, e);
            if (rc == DTB_OK && rlp)
                rc = load_rules_pair(o, rlp, &p->m, p->self, e);
        }
        for (int j = 0; j < pl.npairs && rc == DTB_OK; j++)
            if (pl.pair[j].last == step) {
                rc = drop_pair(o, s, &pl.pair[j], e);
                const dtb_material f = dtb_material_flip(pl.pair[j].m);
                if (rlp) {
                    dtb_rule_layers_drop(rlp, pl.pair[j].m);
                    dtb_rule_layers_drop(rlp, f);
                }
            }
    }
    if (rc == DTB_OK)
        rc = write_stats_log(o, e);
    dtb_rule_layers_free(&rl);
    dtb_solved_free(s);
    plan_free(&pl);
    return rc;
}

/* Presence decides it all: a pair can be loaded when both members' .dtw (or, WLD-only, .wld)
 * are there and every pair its captures reach (a losses-only pair: its moves) can be loaded;
 * checked when besides every pair its moves reach can be loaded. In list order, so what a pair
 * reaches is decided before it. */
dtb_status dtb_build_walk(const dtb_build_options *o, dtb_build_visit visit, void *user,
                          dtb_error *e)
{
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    build_plan pl;
    dtb_status rc = plan_list(o, &pl, e);
    if (rc != DTB_OK)
        return rc;
    const int np = pl.npairs;
    dtb_material *missing = calloc((size_t)np + 1, sizeof *missing);
    bool *present = calloc(2 * (size_t)np + 1, 1), *loadable = calloc((size_t)np + 1, 1);
    bool *wld_only = calloc((size_t)np + 1, 1);
    if (!missing || !present || !loadable || !wld_only) {
        free(missing), free(present), free(loadable), free(wld_only);
        plan_free(&pl);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < np; i++) {
        plan_pair *p = &pl.pair[i];
        const dtb_material ms[2] = {p->m, dtb_material_flip(p->m)};
        bool whole = true, reach = true; /* loadable; its moves reach only loadable pairs */
        /* Its tables are DTW when a member has a .dtw (then each must), else WLD only (a
         * --dtw-pieces set: checked by their results), which only WLD-only pairs may read:
         * their distances are stand-ins. */
        bool has[2][2] = {{false, false}, {false, false}}; /* [member][0 dtw, 1 wld] */
        for (int k = 0; k < (p->self ? 1 : 2); k++)
            for (int x = 0; x < 2; x++) {
                char path[4096];
                dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &ms[k],
                                     x ? DTB_METRIC_WLD : DTB_METRIC_DTW);
                has[k][x] = access(path, F_OK) == 0;
            }
        wld_only[i] = !has[0][0] && !has[1][0];
        p->losses = !wld_only[i] && pair_losses_on_disk(o, &p->m);
        for (int k = 0; k < (p->self ? 1 : 2); k++) {
            /* a losses-only table is whole with its .wld (a build writes it second) */
            char path[4096];
            dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &ms[k], DTB_METRIC_DTW);
            present[2 * i + k] = wld_only[i] ? has[k][1]
                                              : has[k][0] && (has[k][1] || !losses_only_file(path));
            if (!present[2 * i + k] && whole) {
                whole = false;
                missing[i] = ms[k];
            }
        }
        /* Captures reach fewer pieces, listed first: one missing there and loading fails; so
         * does a promotion target of a losses-only pair (a man fewer, listed first too). */
        for (int j = 0; j < i && whole; j++) {
            const bool usable = loadable[j] && (wld_only[i] || !wld_only[j]);
            if (usable || !dtb_build_exits(&p->m, &pl.pair[j].m))
                continue;
            if (reach) /* what is absent, not what it stops */
                missing[i] = loadable[j] ? pl.pair[j].m : missing[j];
            reach = false;
            if (p->losses || dtb_material_pieces(&pl.pair[j].m) < dtb_material_pieces(&p->m))
                whole = false;
        }
        loadable[i] = whole;
        p->action = whole && reach ? PAIR_CHECK : PAIR_SKIP;
    }
    rc = plan_finish(o, false, &pl, e);
    dtb_solved *s = NULL;
    dtb_board b;
    dtb_board_init(&b, o->variant);
    if (rc == DTB_OK && !(s = dtb_solved_create(&b)))
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    /* Within the budget as a build is: the tables in work files when they do not fit. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->variant->name);
    dtb_build_options walking = *o; /* checking loads whole tables: never from their files */
    walking.read_finished = false;
    const dtb_build_budget budget = rc == DTB_OK ? budget_of(&walking, &pl, UINT64_MAX, 0) : (dtb_build_budget){0};
    if (rc == DTB_OK && budget.use_work_files) {
        if (o->memory_budget && o->memory_budget < budget.minimum)
            rc = dtb_error_set(e, DTB_E_NOMEM, "checking needs at least %llu bytes of memory",
                               (unsigned long long)budget.minimum);
        else
            rc = dtb_solved_use_work_files(s, o->work_dir ? o->work_dir : dir, monitor_cap(o), e);
    }
    /* Present tables that cannot be checked first, in list order. */
    for (int i = 0; i < np && rc == DTB_OK; i++) {
        const plan_pair *p = &pl.pair[i];
        const dtb_material ms[2] = {p->m, dtb_material_flip(p->m)};
        for (int k = 0; k < (p->self ? 1 : 2) && p->action != PAIR_CHECK; k++)
            if (present[2 * i + k])
                visit(user, NULL, ms[k], &missing[i]);
    }
    for (int step = 0; rc == DTB_OK && step < pl.nsteps; step++) {
        const plan_pair *p = &pl.pair[pl.order[step]];
        rc = check_resident(&pl, s, pl.order[step], e);
        if (rc == DTB_OK)
            rc = load_pair(o, s, p, e);
        if (rc == DTB_OK && p->action == PAIR_CHECK) {
            const dtb_material f = dtb_material_flip(p->m);
            visit(user, s, p->m, NULL);
            if (!p->self)
                visit(user, s, f, NULL);
        }
        for (int j = 0; j < np && rc == DTB_OK; j++)
            if (pl.pair[j].last == step)
                rc = drop_pair(o, s, &pl.pair[j], e);
    }
    dtb_solved_free(s);
    free(missing), free(present), free(loadable), free(wld_only);
    plan_free(&pl);
    return rc;
}
