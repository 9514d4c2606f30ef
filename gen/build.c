/* The build loop: for each material pair in dependency order, load it when its files are
 * complete, else solve it and write its files (.dtw, then .wld, then the stats record, each
 * appearing atomically). A pair counts as complete when all of its files open cleanly, so a
 * run killed at any point redoes at most the pair it was working on. */
#include "build.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fen.h"
#include "movegen.h"
#include "solve.h"
#include "tablewrite.h"

void dtb_build_table_path(char *buf, size_t size, const char *dir, const dtb_variant *v,
                          const dtb_material *m, dtb_metric metric)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    snprintf(buf, size, "%s/%s/%s.%s", dir, v->name, name, dtb_metric_name(metric));
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

static int build_list(const dtb_build_options *o, dtb_material **out)
{
    const int n = dtb_material_list(o->pieces, NULL, 0);
    dtb_material *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    if (!all)
        return -1;
    dtb_material_list(o->pieces, all, n);
    if (!o->only) {
        *out = all;
        return n;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        bool need = false;
        for (int j = 0; j < o->nonly && !need; j++)
            need = dtb_build_depends(&o->only[j], &all[i]);
        if (need)
            all[k++] = all[i];
    }
    *out = all;
    return k;
}

uint64_t dtb_build_memory_needed(const dtb_build_options *o)
{
    dtb_board b;
    dtb_board_init(&b, o->variant);
    dtb_material *list;
    const int n = build_list(o, &list);
    if (n < 0)
        return UINT64_MAX;
    uint64_t bytes = 0, largest_block = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        if (dtb_index_create(&b, list[i], &ix) != DTB_OK)
            continue;
        const uint64_t size = dtb_index_size(ix);
        bytes += size + size / 8 + 64;
        if (dtb_index_block_size(ix) > largest_block)
            largest_block = dtb_index_block_size(ix);
        dtb_index_free(ix);
    }
    free(list);
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
    /* Solver scratch: four bytes of state per position of a two-block unit, per thread. */
    return bytes + (uint64_t)threads * 8 * largest_block;
}

static dtb_status make_dir(const char *path, dtb_error *e)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return DTB_OK;
    return dtb_error_set(e, DTB_E_IO, "cannot create directory %s: %s", path, strerror(errno));
}

/* Reads every block of a table file into values[]. */
static dtb_status read_values(const char *path, const dtb_variant *v, const dtb_material *m,
                              dtb_metric metric, uint64_t size, uint8_t *values, dtb_error *e)
{
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    const dtb_tablefile_expect want = {
        .variant = v->name,
        .material = name,
        .metric = metric,
        .index_version = DTB_INDEX_VERSION,
        .value_encoding = metric == DTB_METRIC_DTW ? DTB_ENCODING_DTW : DTB_ENCODING_WLD,
        .positions = size,
    };
    dtb_tablefile *tf;
    dtb_status st = dtb_tablefile_open(path, &want, &tf, e);
    if (st != DTB_OK)
        return st;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
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
    dtb_tablefile_close(tf);
    return bad;
}

dtb_status dtb_build_load(dtb_solved *s, const char *dir, dtb_material m, dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    char path[4096];
    dtb_build_table_path(path, sizeof path, dir, b->variant, &m, DTB_METRIC_DTW);
    if (access(path, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table", path);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    if (!t)
        return DTB_E_NOMEM;
    const uint64_t n = dtb_index_size(t->index);
    dtb_status st = read_values(path, b->variant, &m, DTB_METRIC_DTW, n, t->values, e);
    if (st != DTB_OK) {
        dtb_solved_drop(s, m);
        return st;
    }
    /* Capture positions are stored as don't-care: mark them, then derive their values from
     * their successors, which all lie in smaller materials (already exact in s). */
    memset(t->captures, 0, (n / 64 + 1) * sizeof *t->captures);
#pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t w = 0; w < n / 64 + 1; w++) {
        uint64_t bits = 0;
        for (uint64_t i = w * 64; i < n && i < (w + 1) * 64; i++) {
            dtb_pos p;
            dtb_index_pos(t->index, i, &p);
            if (dtb_has_capture(b, &p)) {
                bits |= 1ull << (i % 64);
                t->values[i] = dtb_check_derive(s, &p);
            }
        }
        t->captures[w] = bits;
    }
    return DTB_OK;
}

static void to_wld(const uint8_t *dtw, uint8_t *wld, uint64_t n)
{
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; i++)
        wld[i] = dtb_value_is_win(dtw[i]) ? 1 : dtb_value_is_loss(dtw[i]) ? 2 : 0;
}

static dtb_status write_table(const dtb_build_options *o, const dtb_solved_table *t,
                              dtb_metric metric, const uint8_t *values, dtb_error *e)
{
    char path[4096], name[DTB_MATERIAL_NAME_MAX];
    dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &t->material, metric);
    dtb_material_name(&t->material, name, sizeof name);
    dtb_table_write_options w = dtb_table_write_defaults();
    w.variant = o->variant->name;
    w.gametype = o->variant->gametype;
    w.material = name;
    w.metric = metric;
    w.index_version = DTB_INDEX_VERSION;
    w.value_encoding = metric == DTB_METRIC_DTW ? DTB_ENCODING_DTW : DTB_ENCODING_WLD;
    w.dontcare_kind = DTB_DONTCARE_CAPTURES;
    w.threads = o->threads;
    if (o->zstd_level > 0)
        w.zstd_level = o->zstd_level;
    const dtb_table_dontcare dc = {.bits = t->captures, .marker = -1};
    return dtb_table_write(path, &w, values, dtb_index_size(t->index), &dc, NULL, e);
}

/* Writes text to path atomically (tmp, fsync, rename). */
static dtb_status write_small_file(const char *path, const char *text, dtb_error *e)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return dtb_error_set(e, DTB_E_IO, "cannot write %s: %s", tmp, strerror(errno));
    int err = fputs(text, f) >= 0 && fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : errno;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        remove(tmp);
        return dtb_error_set(e, err == ENOSPC || err == EDQUOT ? DTB_E_NOSPACE : DTB_E_IO,
                             "cannot write %s: %s", path, strerror(err));
    }
    return DTB_OK;
}

static void stats_json(char *buf, size_t size, const dtb_board *b, const dtb_solved_table *t,
                       const dtb_solve_stats *st, double seconds)
{
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
             "\"longest_win_fen\":\"%s\",\"seconds\":%.3f,\"positions_per_second\":%.0f}\n",
             b->variant->name, name, (unsigned long long)st->positions,
             (unsigned long long)st->wins, (unsigned long long)st->draws,
             (unsigned long long)st->losses, (unsigned long long)st->captures, st->longest_win,
             fen, seconds, seconds > 0 ? (double)st->positions / seconds : 0.0);
}

/* A pair is complete when each member's .dtw, .wld and .stats exist. The stats record is
 * written last, so its presence says the tables before it were renamed into place; the tables
 * are looked for too, so a table deleted by hand is rebuilt rather than reported missing. */
static bool pair_complete(const dtb_build_options *o, const dtb_material *m)
{
    const dtb_material f = dtb_material_flip(*m);
    const dtb_material *ms[2] = {m, &f};
    for (int k = 0; k < (is_self_flip(m) ? 1 : 2); k++) {
        char path[4096];
        stats_path(path, sizeof path, o->out_dir, o->variant, ms[k]);
        if (access(path, F_OK) != 0)
            return false;
        for (int metric = 0; metric < 2; metric++) {
            dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, ms[k],
                                 metric ? DTB_METRIC_WLD : DTB_METRIC_DTW);
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
    const dtb_status st = write_small_file(path, all, e);
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

static dtb_status solve_and_write(const dtb_build_options *o, dtb_solved *s, const dtb_material *m,
                                  dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(m, name, sizeof name);
    const bool self = is_self_flip(m);
    const dtb_material f = dtb_material_flip(*m);
    if (o->log)
        o->log(o->user, DTB_BUILD_START, name, 0, 0, NULL);
    const double t0 = omp_get_wtime();
    dtb_solve_stats st[2];
    progress_ctx pc = {o, name};
    dtb_status rc = dtb_solve_pair(s, *m, st, on_progress, &pc, e);
    if (rc != DTB_OK)
        return rc;
    const double seconds = omp_get_wtime() - t0;
    const dtb_material *ms[2] = {m, &f};
    for (int k = 0; k < (self ? 1 : 2); k++) {
        const dtb_solved_table *t = dtb_solved_find(s, *ms[k]);
        const uint64_t n = dtb_index_size(t->index);
        uint8_t *wld = malloc(n ? n : 1);
        if (!wld)
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        to_wld(t->values, wld, n);
        rc = write_table(o, t, DTB_METRIC_DTW, t->values, e);
        if (rc == DTB_OK)
            rc = write_table(o, t, DTB_METRIC_WLD, wld, e);
        free(wld);
        if (rc != DTB_OK)
            return rc;
    }
    for (int k = 0; k < (self ? 1 : 2); k++) {
        const dtb_solved_table *t = dtb_solved_find(s, *ms[k]);
        char json[2048], path[4096], mname[DTB_MATERIAL_NAME_MAX];
        /* Time is shared by the pair; each member gets its share by size. */
        stats_json(json, sizeof json, b, t, &st[k], self ? seconds : seconds / 2);
        stats_path(path, sizeof path, o->out_dir, o->variant, ms[k]);
        rc = write_small_file(path, json, e);
        if (rc != DTB_OK)
            return rc;
        dtb_material_name(ms[k], mname, sizeof mname);
        if (o->log)
            o->log(o->user, DTB_BUILD_DONE, mname, st[k].positions, st[k].positions, json);
    }
    return DTB_OK;
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

dtb_status dtb_build(const dtb_build_options *o, dtb_error *e)
{
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    if (o->memory_budget) {
        const uint64_t need = dtb_build_memory_needed(o);
        if (need > o->memory_budget) {
            char needed[32], allowed[32];
            size_text(need, needed, sizeof needed);
            size_text(o->memory_budget, allowed, sizeof allowed);
            return dtb_error_set(e, DTB_E_NOMEM,
                                 "this build needs %s of memory (%llu bytes), more than the %s "
                                 "allowed (--memory)",
                                 needed, (unsigned long long)need, allowed);
        }
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->variant->name);
    dtb_status rc = make_dir(o->out_dir, e);
    if (rc == DTB_OK)
        rc = make_dir(dir, e);
    if (rc != DTB_OK)
        return rc;

    dtb_board b;
    dtb_board_init(&b, o->variant);
    dtb_material *list;
    const int n = build_list(o, &list);
    if (n < 0)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    dtb_solved *s = dtb_solved_create(&b);
    if (!s) {
        free(list);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    /* Pairs to solve, and the complete materials they need in memory: their exits, and what
     * loading those needs in turn (capture positions are re-derived from smaller materials).
     * A rerun over a complete directory loads nothing. */
    bool *todo = calloc((size_t)n + 1, sizeof *todo), *need = calloc((size_t)n + 1, sizeof *need);
    if (!todo || !need)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int i = 0; i < n && rc == DTB_OK; i++)
        todo[i] = !pair_complete(o, &list[i]);
    for (int i = n - 1; i >= 0 && rc == DTB_OK; i--) {
        if (!todo[i] && !need[i])
            continue;
        for (int j = 0; j < i; j++)
            if (dtb_build_depends(&list[i], &list[j]) &&
                (todo[i] || dtb_material_pieces(&list[j]) < dtb_material_pieces(&list[i])))
                need[j] = true;
    }
    for (int i = 0; i < n && rc == DTB_OK; i++) {
        const dtb_material f = dtb_material_flip(list[i]);
        if (dtb_solved_find(s, list[i]))
            continue; /* solved or loaded with its flip */
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&list[i], name, sizeof name);
        if (todo[i]) {
            rc = solve_and_write(o, s, &list[i], e);
            continue;
        }
        /* The flip sits next to list[i]: either entry's need loads the pair. */
        bool needed = need[i];
        for (int j = 0; j < n; j++)
            if (need[j] && dtb_material_equal(&list[j], &f))
                needed = true;
        if (needed) {
            rc = dtb_build_load(s, o->out_dir, list[i], e);
            if (rc == DTB_OK && !is_self_flip(&list[i]))
                rc = dtb_build_load(s, o->out_dir, f, e);
        }
        if (rc == DTB_OK && o->log)
            o->log(o->user, DTB_BUILD_SKIP, name, 0, 0, NULL);
    }
    free(todo);
    free(need);
    if (rc == DTB_OK)
        rc = write_stats_log(o, e);
    dtb_solved_free(s);
    free(list);
    return rc;
}
