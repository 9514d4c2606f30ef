/* Changing the form of a set's DTW tables (convert.h). */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "convert.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "build.h"
#include "capturetest.h"
#include "index.h"
#include "material.h"
#include "setfiles.h"
#include "tablefile.h"
#include "tablewrite.h"
#include "value.h"

/* A full DTW table read as the writer's source of a losses-only one. */
typedef struct losses_source {
    dtb_tablefile *tf;
    const dtb_tablefile_info *info;
    const dtb_index *ix;
    dtb_capture_oracle ct;
} losses_source;

/* One thread's reading state: a decoding context and the input block it holds. */
typedef struct losses_state {
    dtb_tablefile_ctx *ctx;
    uint8_t *block;
    uint64_t held; /* the block number held, + 1 (0: none) */
} losses_state;

static void free_losses_state(void *user, void *state)
{
    (void)user;
    losses_state *st = state;
    if (st) {
        dtb_tablefile_ctx_free(st->ctx);
        free(st->block);
        free(st);
    }
}

/* The values of positions start..start+len-1 from the input's blocks, and as don't-care every
 * capture position (walked in index order, dtb_index_pos_next) and every position that is not
 * lost, exactly the mask gen/build.c's writer uses. */
static const char *read_losses(void *user, void **state, uint64_t start, size_t len,
                               uint8_t *values, uint64_t *dontcare)
{
    const losses_source *src = user;
    losses_state *st = *state;
    if (!st) {
        if (!(st = calloc(1, sizeof *st)))
            return "out of memory";
        *state = st;
        st->ctx = dtb_tablefile_ctx_create();
        st->block = malloc(src->info->block_positions);
        if (!st->ctx || !st->block)
            return "out of memory";
    }
    const uint64_t bp = src->info->block_positions;
    for (size_t k = 0; k < len;) {
        const uint64_t i = start + k, blk = i / bp;
        if (st->held != blk + 1) {
            dtb_error err;
            st->held = 0;
            if (dtb_tablefile_read_block(src->tf, blk, st->block, dtb_tablefile_block_len(src->tf, blk),
                                         st->ctx, &err) != DTB_OK)
                return "a block of the full table does not read back (damaged)";
            st->held = blk + 1;
        }
        const uint64_t end = (blk + 1) * bp < start + len ? (blk + 1) * bp : start + len;
        memcpy(values + k, st->block + (i - blk * bp), (size_t)(end - i));
        k += (size_t)(end - i);
    }
    dtb_pos p;
    dtb_index_pos(src->ix, start, &p);
    for (size_t k = 0; k < len; k++) {
        if (k > 0)
            dtb_index_pos_next(src->ix, start + k, &p);
        if (!dtb_value_is_loss(values[k]) || dtb_capture_oracle_has(&src->ct, &p))
            dontcare[k / 64] |= 1ull << (k % 64);
    }
    return NULL;
}

/* Writes the losses-only form of full DTW table tf (material m) to path. */
static dtb_status write_losses(const dtb_convert_options *o, dtb_tablefile *tf, dtb_material m,
                               const char *path, uint64_t *bytes, dtb_error *e)
{
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    dtb_board board;
    dtb_board_init(&board, o->variant);
    dtb_index *ix;
    dtb_status s = dtb_index_create(&board, m, &ix);
    if (s != DTB_OK)
        return dtb_error_set(e, s, "%s: cannot index %s", path, info->material);
    losses_source src = {.tf = tf, .info = info, .ix = ix, .ct = {.board = &board}};
    dtb_capturetest_init(&src.ct.ct, &board);
    /* the long list keeps its losses (even distances); wins are searched */
    const uint64_t *lidx = dtb_tablefile_long_index(tf);
    const uint16_t *ldtw = dtb_tablefile_long_dtws(tf);
    uint64_t *kidx = info->long_count ? malloc(info->long_count * sizeof *kidx) : NULL;
    uint16_t *kdtw = info->long_count ? malloc(info->long_count * sizeof *kdtw) : NULL;
    uint64_t kept = 0;
    if (info->long_count && (!kidx || !kdtw)) {
        s = dtb_error_set(e, DTB_E_NOMEM, "out of memory for %s's long list", path);
    } else {
        for (uint64_t i = 0; i < info->long_count; i++)
            if (ldtw[i] % 2 == 0) {
                kidx[kept] = lidx[i];
                kdtw[kept++] = ldtw[i];
            }
        dtb_table_write_options w = dtb_build_write_options(o->variant, info->material, DTB_METRIC_DTW);
        w.flags = DTB_TABLE_LOSSES;
        w.dontcare_kind = DTB_DONTCARE_CAPTURES | DTB_DONTCARE_NOT_LOSSES;
        w.zstd_level = info->zstd_level;
        w.threads = o->threads;
        w.long_index = kidx;
        w.long_dtw = kdtw;
        w.long_count = kept;
        const dtb_table_source ts = {.read = read_losses, .free_state = free_losses_state, .user = &src};
        dtb_table_write_stats ws;
        s = dtb_table_write_source(path, &w, &ts, info->positions, -1, &ws, e);
        if (s == DTB_OK)
            *bytes = ws.file_size;
    }
    free(kidx);
    free(kdtw);
    dtb_index_free(ix);
    return s;
}

/* The material a table file's name gives (<material>.<metric extension>), or false for a file
 * that is not a table (STATS, a build's records). */
static bool table_material(const char *name, dtb_material *m, dtb_metric *metric)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name || (size_t)(dot - name) >= DTB_MATERIAL_NAME_MAX)
        return false;
    *metric = dtb_metric_named(dot + 1);
    char mat[DTB_MATERIAL_NAME_MAX];
    memcpy(mat, name, (size_t)(dot - name));
    mat[dot - name] = '\0';
    return *metric && dtb_material_parse(mat, m, NULL) == DTB_OK;
}

/* Converts or links file `name` of the input into the output. */
static dtb_status convert_file(const dtb_convert_options *o, const char *in_dir, const char *out_dir,
                               const char *name, dtb_convert_stats *st, dtb_error *e)
{
    char from[4200], to[4200], cand[4300];
    snprintf(from, sizeof from, "%s/%s", in_dir, name);
    snprintf(to, sizeof to, "%s/%s", out_dir, name);
    dtb_material m;
    dtb_metric metric;
    const bool table = table_material(name, &m, &metric);
    if (table && o->pieces && dtb_material_pieces(&m) > o->pieces)
        return DTB_OK;
    if (!table && o->pieces)
        return DTB_OK; /* a part of a set: its records stay with the whole */
    struct stat sb;
    if (stat(from, &sb) != 0)
        return dtb_sys_error(e, errno, from, "cannot read");
    uint64_t in_bytes = (uint64_t)sb.st_size, out_bytes = in_bytes;
    dtb_convert_action action = DTB_CONVERT_LINKED;
    dtb_tablefile *tf = NULL;
    dtb_status s = DTB_OK;
    bool rewrite = false;
    if (table && metric == DTB_METRIC_DTW) {
        s = dtb_tablefile_open(from, NULL, &tf, e);
        if (s != DTB_OK)
            return s;
        const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
        if (info->flags & ~(uint32_t)DTB_TABLE_LOSSES)
            s = dtb_error_set(e, DTB_E_INVALID, "%s: a compact set's table; convert the full set",
                              from);
        const bool losses = info->flags & DTB_TABLE_LOSSES;
        rewrite = losses == o->dtw_full;
        if (s == DTB_OK && rewrite && losses)
            s = dtb_error_set(e, DTB_E_INVALID,
                              "%s stores losses only: rebuilding its wins into a full table is "
                              "what a build with --dtw-store full does", from);
        st->dtw_positions += info->positions;
    }
    if (s == DTB_OK && rewrite) {
        snprintf(cand, sizeof cand, "%s.new", to);
        s = write_losses(o, tf, m, cand, &out_bytes, e);
        if (s == DTB_OK) {
            bool unchanged;
            s = dtb_setfiles_place(cand, to, &unchanged, e);
            action = unchanged ? DTB_CONVERT_UNCHANGED : DTB_CONVERT_REWRITTEN;
        }
        unlink(cand);
    } else if (s == DTB_OK) {
        bool unchanged;
        s = dtb_setfiles_link(from, to, &unchanged, e);
        if (unchanged)
            action = DTB_CONVERT_UNCHANGED;
    }
    dtb_tablefile_close(tf);
    if (s != DTB_OK)
        return s;
    st->files++;
    st->rewritten += action == DTB_CONVERT_REWRITTEN;
    if (table && metric == DTB_METRIC_DTW) {
        st->dtw_bytes_in += in_bytes;
        st->dtw_bytes_out += out_bytes;
    }
    if (o->log)
        o->log(o->user, to, action, in_bytes, out_bytes);
    return DTB_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

dtb_status dtb_convert(const dtb_convert_options *o, dtb_convert_stats *st, dtb_error *e)
{
    memset(st, 0, sizeof *st);
    if (!o->from_dir || !o->out_dir || !o->variant)
        return dtb_error_set(e, DTB_E_INVALID, "convert: an input, an output and a variant are needed");
    char in_dir[4096], out_dir[4096];
    snprintf(in_dir, sizeof in_dir, "%s/%s", o->from_dir, o->variant->name);
    snprintf(out_dir, sizeof out_dir, "%s/%s", o->out_dir, o->variant->name);
    DIR *d = opendir(in_dir);
    if (!d)
        return dtb_sys_error(e, errno, in_dir, "cannot open the set");
    /* by name, so that a run's log (and a failure) comes in the same order every time */
    char **names = NULL;
    size_t n = 0, cap = 0;
    dtb_status s = DTB_OK;
    for (struct dirent *de; s == DTB_OK && (de = readdir(d));) {
        const size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || (len > 4 && (strcmp(de->d_name + len - 4, ".tmp") == 0 ||
                                                 strcmp(de->d_name + len - 4, ".new") == 0)))
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!grown) {
                s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(de->d_name)))
            s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        else
            n++;
    }
    closedir(d);
    if (s == DTB_OK && n == 0)
        s = dtb_error_set(e, DTB_E_NOTFOUND, "%s holds no table", in_dir);
    if (s == DTB_OK)
        qsort(names, n, sizeof *names, by_name);
    if (s == DTB_OK)
        s = dtb_setfiles_make_dir(o->out_dir, e);
    if (s == DTB_OK)
        s = dtb_setfiles_make_dir(out_dir, e);
    for (size_t i = 0; i < n && s == DTB_OK; i++)
        s = convert_file(o, in_dir, out_dir, names[i], st, e);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return s;
}
