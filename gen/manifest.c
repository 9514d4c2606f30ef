/* Digests of what table files mean (manifest.h has the definition and why it is so). */
#include "manifest.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "capturetest.h"
#include "checksum.h"
#include "index.h"
#include "material.h"
#include "movegen.h"
#include "tablefile.h"
#include "threat.h"
#include "value.h"
#include "variant.h"

/* Positions decoded and hashed per round: the blocks of a round are read and classified in
 * parallel, then hashed in order (the hash is one sequential stream). 4M bytes a round keeps
 * both threads busy on every 5-piece table and the memory small. */
#define ROUND_POSITIONS (1u << 22)
/* Positions one thread classifies at a time: enough to pay for the index_pos that starts it. */
#define CHUNK 4096u

static const char TAG[] = "dtb-manifest-1";

static void put32(dtb_hash64_state *h, uint32_t x)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(x >> (8 * i));
    dtb_hash64_update(h, b, sizeof b);
}

static void put64(dtb_hash64_state *h, uint64_t x)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(x >> (8 * i));
    dtb_hash64_update(h, b, sizeof b);
}


/* Which values a digest hashes (manifest.h): as stored, or a DTW table's losses view. */
enum {
    VIEW_NONE,   /* every table but a full set's DTW tables: the stored values */
    VIEW_FULL,   /* a DTW table that stores every value: its quiet positions that are not
                    lost are masked too, known from their own bytes */
    VIEW_LOSSES, /* a DTW table that stores its losses only (docs/FORMAT.md §8.7): its
                    not-lost quiet positions are its don't-cares of that kind, known from the
                    WLD table beside it */
};

/* What one file's digest needs while its rounds run. */
typedef struct job {
    const char *path;
    const dtb_tablefile *tf;
    const dtb_tablefile_info *info;
    const dtb_board *board;
    const dtb_index *ix;
    dtb_capture_oracle ct; /* the writers' capture test (the solver's agrees: tests/test_probe.c) */
    bool own_flip;
    int view;                  /* VIEW_* */
    const dtb_tablefile *wld;  /* VIEW_LOSSES: the WLD table of the material */
    uint8_t *buf; /* one round of values, index order */
    uint8_t *wbuf; /* VIEW_LOSSES: the WLD values of the same positions */
} job;

/* What mask_chunk found besides the don't-cares of the header's kind. */
typedef struct masked {
    uint64_t not_lost; /* VIEW_FULL: quiet positions not lost, masked */
    uint64_t first_bad; /* VIEW_LOSSES: the first quiet position the WLD table calls lost whose
                           DTW byte is not a loss, or whose WLD value is invalid; UINT64_MAX */
} masked;

/* Whether position p (white to move) of the table is don't-care by its header's kind: the
 * writers' rules (gen/build.c: capture positions; gen/compact.c: all quiet positions of a
 * derived table, the threat positions the rule accepts). */
static bool is_dontcare(const job *j, const dtb_pos *p, dtb_movelist *const lists[4])
{
    const uint32_t kind = j->info->dontcare_kind;
    if (dtb_capture_oracle_has(&j->ct, p))
        return kind & DTB_DONTCARE_CAPTURES;
    if (kind & DTB_DONTCARE_DERIVED)
        return true;
    return (kind & DTB_DONTCARE_THREATS) &&
           dtb_threat_dontcare(j->board, p, j->own_flip, lists,
                               &(dtb_threat_ops){.has_capture = dtb_capture_oracle_has, .user = &j->ct});
}

/* Sets the don't-care positions of [start, start + len) to 0 in out (the values of those
 * positions, out[0] being start's; wld the WLD values of a VIEW_LOSSES job), and in a losses
 * view the quiet positions that are not lost; returns how many the header's kind makes
 * don't-care (a losses-only table's not-lost ones among them), the rest into *mk. Walks the
 * positions with dtb_index_pos_next, several times cheaper than dtb_index_pos for each. */
static uint64_t mask_chunk(const job *j, uint64_t start, size_t len, uint8_t *out,
                           const uint8_t *wld, dtb_movelist *const lists[4], masked *mk)
{
    uint64_t n = 0;
    dtb_pos p;
    dtb_index_pos(j->ix, start, &p);
    for (size_t k = 0; k < len; k++) {
        const uint64_t i = start + k;
        if (k > 0)
            dtb_index_pos_next(j->ix, i, &p);
        if (is_dontcare(j, &p, lists)) {
            out[k] = 0;
            n++;
        } else if (j->view == VIEW_FULL && !dtb_value_is_loss(out[k])) {
            out[k] = 0;
            mk->not_lost++;
        } else if (j->view == VIEW_LOSSES && wld[k] != 2) { /* 2: a loss */
            if (wld[k] > 2 && i < mk->first_bad)
                mk->first_bad = i;
            out[k] = 0;
            n++;
        } else if (j->view == VIEW_LOSSES && !dtb_value_is_loss(out[k]) && i < mk->first_bad) {
            mk->first_bad = i;
        }
    }
    return n;
}

/* Reads blocks [b0, b1) into j->buf and masks their don't-care positions; adds the number of
 * those to *count, and what the view masks besides to *mk. Every thread reads blocks with a
 * context of its own (and a losses view the WLD blocks of the same positions), then classifies
 * chunks. */
static dtb_status run_round(const job *j, uint64_t b0, uint64_t b1, int threads, uint64_t *count,
                            masked *mk, dtb_error *e)
{
    const uint64_t bp = j->info->block_positions, first = b0 * bp;
    uint64_t last = first;
    for (uint64_t b = b0; b < b1; b++)
        last += dtb_tablefile_block_len(j->tf, b);
    const uint32_t kind = j->info->dontcare_kind;
    /* No kind: nothing to mask (but a losses view's not-lost positions). Captures and derived:
     * every position (counted, not walked). */
    const bool none = kind == 0 && j->view == VIEW_NONE;
    const bool all = (kind & DTB_DONTCARE_CAPTURES) && (kind & DTB_DONTCARE_DERIVED);
    dtb_status bad = DTB_OK;
    dtb_error first_error = {{0}};
    uint64_t n = 0, not_lost = 0, first_bad = UINT64_MAX;
    /* a losses view: the WLD blocks that hold positions first..last-1 */
    const uint64_t wbp = j->wld ? dtb_tablefile_get_info(j->wld)->block_positions : 1;
    const uint64_t w0 = first / wbp, w1 = j->wld ? (last - 1) / wbp + 1 : w0;
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads()) \
    reduction(+ : n, not_lost) reduction(min : first_bad)
    {
        dtb_status mine = DTB_OK;
        dtb_error my_error;
        dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
        dtb_movelist *lists[4] = {NULL};
        uint8_t *wblock = j->wld ? malloc(wbp) : NULL;
        if (!ctx || (j->wld && !wblock))
            mine = dtb_error_set(&my_error, DTB_E_NOMEM, "%s: out of memory", j->path);
        for (int k = 0; k < 4 && mine == DTB_OK && (kind & DTB_DONTCARE_THREATS) && !all; k++)
            if (!(lists[k] = malloc(sizeof *lists[k])))
                mine = dtb_error_set(&my_error, DTB_E_NOMEM, "%s: out of memory", j->path);
#pragma omp for schedule(dynamic, 1)
        for (uint64_t b = b0; b < b1; b++) {
            if (mine != DTB_OK)
                continue;
            const uint64_t at = (b - b0) * bp;
            mine = dtb_tablefile_read_block(j->tf, b, j->buf + at, (size_t)(last - first - at),
                                            ctx, &my_error);
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t w = w0; w < w1; w++) {
            if (mine != DTB_OK)
                continue;
            const uint64_t wfirst = w * wbp, wlen = dtb_tablefile_block_len(j->wld, w);
            mine = dtb_tablefile_read_block(j->wld, w, wblock, wlen, ctx, &my_error);
            const uint64_t from = wfirst > first ? wfirst : first;
            const uint64_t to = wfirst + wlen < last ? wfirst + wlen : last;
            if (mine == DTB_OK && from < to)
                memcpy(j->wbuf + (from - first), wblock + (from - wfirst), (size_t)(to - from));
        }
        /* the blocks are all read (the for's barrier) before any chunk is classified */
        if (!none && !all) {
#pragma omp for schedule(dynamic, 1)
            for (uint64_t c = first; c < last; c += CHUNK) {
                if (mine != DTB_OK)
                    continue;
                const size_t len = (size_t)(last - c < CHUNK ? last - c : CHUNK);
                masked mk1 = {0, UINT64_MAX};
                n += mask_chunk(j, c, len, j->buf + (c - first),
                                j->wbuf ? j->wbuf + (c - first) : NULL, lists, &mk1);
                not_lost += mk1.not_lost;
                first_bad = mk1.first_bad < first_bad ? mk1.first_bad : first_bad;
            }
        }
        if (mine != DTB_OK) {
#pragma omp critical(dtb_manifest_error)
            if (bad == DTB_OK) {
                bad = mine;
                first_error = my_error;
            }
        }
        for (int k = 0; k < 4; k++)
            free(lists[k]);
        free(wblock);
        dtb_tablefile_ctx_free(ctx);
    }
    if (bad != DTB_OK) {
        if (e)
            *e = first_error;
        return bad;
    }
    if (all) {
        memset(j->buf, 0, (size_t)(last - first));
        n = last - first;
    }
    *count += n;
    mk->not_lost += not_lost;
    mk->first_bad = first_bad < mk->first_bad ? first_bad : mk->first_bad;
    return DTB_OK;
}

/* Every round of the table: values read, masked and, when h is not NULL, hashed, with the
 * long list's entries that a byte holds hashed as that byte; the don't-cares of the header's
 * kind counted into *count, what the view masks besides into *mk. kept (when h is not NULL):
 * set for each long entry to hash after the values (beyond a byte, its position not masked). */
static dtb_status hash_rounds(const job *j, uint64_t round_blocks, int threads,
                              dtb_hash64_state *h, uint64_t *count, masked *mk, bool *kept,
                              dtb_error *e)
{
    const dtb_tablefile_info *info = j->info;
    const uint64_t bp = info->block_positions;
    const uint64_t nlong = info->long_count, *lidx = dtb_tablefile_long_index(j->tf);
    const uint16_t *ldtw = dtb_tablefile_long_dtws(j->tf);
    uint64_t next = 0; /* the long list's cursor */
    *count = 0;
    *mk = (masked){0, UINT64_MAX};
    dtb_status s = DTB_OK;
    for (uint64_t b0 = 0; b0 < info->blocks && s == DTB_OK; b0 += round_blocks) {
        const uint64_t b1 = b0 + round_blocks < info->blocks ? b0 + round_blocks : info->blocks;
        s = run_round(j, b0, b1, threads, count, mk, e);
        if (s != DTB_OK || !h)
            continue;
        const uint64_t len = (b1 - b0 - 1) * bp + dtb_tablefile_block_len(j->tf, b1 - 1);
        /* listed distances a byte holds hash as that byte (a table built with a lowered
         * --dtw-byte-max means what the plain one means); a masked position's entry drops out
         * (a full table's wins in a losses view) */
        for (; next < nlong && lidx[next] < b0 * bp + len; next++) {
            uint8_t *at = &j->buf[lidx[next] - b0 * bp];
            if (!dtb_value_is_escape(*at))
                continue;
            const bool win = *at == DTB_VALUE_WIN_ESCAPE;
            if (ldtw[next] <= (win ? DTB_VALUE_BYTE_WIN_MAX : DTB_VALUE_BYTE_LOSS_MAX))
                *at = dtb_value_of(win, ldtw[next]);
            else
                kept[next] = true;
        }
        dtb_hash64_update(h, j->buf, (size_t)len);
    }
    return s;
}

/* The WLD table beside losses-only DTW table path (.wld for .dtw), opened as the same
 * material's full-set WLD table into *out. */
static dtb_status open_results(const char *path, const dtb_tablefile_info *info,
                               dtb_tablefile **out, dtb_error *e)
{
    const size_t len = strlen(path);
    char wpath[4096];
    if (len < 4 || len >= sizeof wpath || strcmp(path + len - 4, ".dtw") != 0)
        return dtb_error_set(e, DTB_E_INVALID, "%s: a losses-only DTW table not named .dtw: its "
                             "digest needs its WLD table", path);
    memcpy(wpath, path, len - 3);
    memcpy(wpath + len - 3, "wld", 4);
    if (access(wpath, F_OK) != 0)
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table (the digest of the "
                             "losses-only %s reads which positions are lost there)", wpath, path);
    const dtb_tablefile_expect want = {
        .variant = info->variant,
        .material = info->material,
        .metric = DTB_METRIC_WLD,
        .index_version = info->index_version,
        .value_encoding = dtb_encoding_of(DTB_METRIC_WLD),
        .positions = info->positions,
    };
    dtb_status s = dtb_tablefile_open(wpath, &want, out, e);
    if (s == DTB_OK && dtb_tablefile_get_info(*out)->flags)
        s = dtb_error_set(e, DTB_E_MISMATCH, "%s: a compact set's table: the digest of %s needs "
                          "the full set's", wpath, path);
    return s;
}

dtb_status dtb_manifest_digest(const char *path, int threads, uint64_t *digest, dtb_error *e)
{
    dtb_tablefile *tf = NULL, *wld = NULL;
    dtb_status s = dtb_tablefile_open(path, NULL, &tf, e);
    if (s != DTB_OK)
        return s;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    const dtb_variant *v = dtb_variant_find(info->variant);
    dtb_material m;
    dtb_error me;
    dtb_index *ix = NULL;
    dtb_board board;
    job j = {.path = path, .tf = tf, .info = info, .board = &board};
    bool *kept = NULL;
    if (!v) {
        s = dtb_error_set(e, DTB_E_INVALID, "%s: variant '%s' is unknown to this build", path,
                          info->variant);
    } else if (info->index_version != DTB_INDEX_VERSION) {
        /* the don't-care positions are found through the index: another order, other ones */
        s = dtb_error_set(e, DTB_E_VERSION, "%s: index version %u, this build numbers version %u",
                          path, info->index_version, DTB_INDEX_VERSION);
    } else if (dtb_material_parse(info->material, &m, &me) != DTB_OK) {
        s = dtb_error_set(e, DTB_E_INVALID, "%s: material '%s': %s", path, info->material, me.msg);
    } else {
        dtb_board_init(&board, v);
        s = dtb_index_create(&board, m, &ix);
        if (s == DTB_E_NOMEM)
            dtb_error_set(e, s, "%s: out of memory", path);
        else if (s != DTB_OK)
            s = dtb_error_set(e, DTB_E_INVALID, "%s: material %s does not fit the %s board", path,
                              info->material, v->name);
        else if (dtb_index_size(ix) != info->positions)
            s = dtb_error_set(e, DTB_E_CORRUPT, "%s: %llu positions, the index of %s has %llu",
                              path, (unsigned long long)info->positions, info->material,
                              (unsigned long long)dtb_index_size(ix));
    }
    /* A full set's DTW table is hashed as its losses view, whichever form stores it; a compact
     * set's tables as they are. */
    if (info->metric == DTB_METRIC_DTW && !(info->flags & (DTB_TABLE_DERIVED | DTB_TABLE_THREATS)))
        j.view = info->flags & DTB_TABLE_LOSSES ? VIEW_LOSSES : VIEW_FULL;
    if (s == DTB_OK && j.view == VIEW_LOSSES && (s = open_results(path, info, &wld, e)) == DTB_OK)
        j.wld = wld;
    const uint64_t bp = info->block_positions;
    const uint64_t round_blocks = bp >= ROUND_POSITIONS ? 1 : ROUND_POSITIONS / bp;
    if (s == DTB_OK && (!(j.buf = malloc((size_t)(round_blocks * bp))) ||
                        (j.wld && !(j.wbuf = malloc((size_t)(round_blocks * bp)))) ||
                        !(kept = calloc(info->long_count + 1, sizeof *kept))))
        s = dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory", path);
    if (s == DTB_OK) {
        const dtb_material f = dtb_material_flip(m);
        j.ix = ix;
        j.ct.board = &board;
        dtb_capturetest_init(&j.ct.ct, &board);
        j.own_flip = dtb_material_equal(&m, &f);

        /* The header fields: a losses view's as a losses-only file of the table has them. Of a
         * full file the not-lost positions are counted first, by a pass of their own: the
         * count comes before the values in the stream. */
        uint64_t count = 0, hcount = info->dontcare_count;
        uint32_t hkind = info->dontcare_kind, hflags = info->flags;
        masked mk;
        if (j.view == VIEW_FULL) {
            s = hash_rounds(&j, round_blocks, threads, NULL, &count, &mk, NULL, e);
            hcount = count + mk.not_lost;
        }
        if (j.view != VIEW_NONE) {
            hflags = DTB_TABLE_LOSSES;
            hkind = hcount ? DTB_DONTCARE_CAPTURES | DTB_DONTCARE_NOT_LOSSES : 0;
        }
        dtb_hash64_state h;
        dtb_hash64_init(&h, 0);
        dtb_hash64_update(&h, TAG, sizeof TAG); /* with its NUL */
        dtb_hash64_update(&h, info->variant, strlen(info->variant) + 1);
        dtb_hash64_update(&h, info->material, strlen(info->material) + 1);
        put32(&h, (uint32_t)info->metric);
        put32(&h, info->index_version);
        /* a long list is a way of storing DTW bytes: the same meaning as encoding 1 */
        put32(&h, info->value_encoding == DTB_ENCODING_DTW_LONG ? DTB_ENCODING_DTW : info->value_encoding);
        put32(&h, hkind);
        put32(&h, hflags);
        put64(&h, info->positions);
        put64(&h, hcount);
        if (dtb_metric_is_rules(info->metric)) { /* what its distances are measured against */
            put32(&h, (uint32_t)info->rules_id);
            for (int c = 0; c < 3; c++) /* FMJD's and WCDF's: three classes at most */
                put32(&h, (uint32_t)info->rule_limits[c]);
            if (info->rule_limits[3] || info->rule_late_limit) { /* FMJD-64's, as they differ */
                for (int c = 3; c < DTB_TF_RULE_CLASSES; c++)
                    put32(&h, (uint32_t)info->rule_limits[c]);
                put32(&h, (uint32_t)info->rule_late_limit);
                put32(&h, (uint32_t)info->rule_late_after);
                put32(&h, (uint32_t)info->rule_layers);
            }
        }
        if (s == DTB_OK)
            s = hash_rounds(&j, round_blocks, threads, &h, &count, &mk, kept, e);
        const uint64_t nlong = info->long_count, *lidx = dtb_tablefile_long_index(tf);
        const uint16_t *ldtw = dtb_tablefile_long_dtws(tf);
        uint64_t beyond = 0;
        for (uint64_t i = 0; i < nlong; i++)
            beyond += kept[i];
        if (s == DTB_OK && beyond) { /* then the distances beyond a byte, by index */
            dtb_hash64_update(&h, "long", 5);
            put64(&h, beyond);
            for (uint64_t i = 0; i < nlong; i++)
                if (kept[i]) {
                    put64(&h, lidx[i]);
                    put32(&h, ldtw[i]);
                }
        }
        if (s == DTB_OK && count != info->dontcare_count)
            s = dtb_error_set(e, DTB_E_CORRUPT,
                              "%s: the header counts %llu don't-care positions, its kind %u gives %llu",
                              path, (unsigned long long)info->dontcare_count, info->dontcare_kind,
                              (unsigned long long)count);
        if (s == DTB_OK && mk.first_bad != UINT64_MAX)
            s = dtb_error_set(e, DTB_E_CORRUPT, "%s: position %llu is lost in %s, not in the DTW "
                              "table (or its WLD value is invalid)", path,
                              (unsigned long long)mk.first_bad, dtb_tablefile_path(wld));
        if (s == DTB_OK)
            *digest = dtb_hash64_digest(&h);
    }
    free(kept);
    free(j.buf);
    free(j.wbuf);
    dtb_index_free(ix);
    dtb_tablefile_close(wld);
    dtb_tablefile_close(tf);
    return s;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<stem>.<ext>" with ext a metric's name (dtb_metric_named). */
static bool is_table_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && dot != name && dtb_metric_named(dot + 1);
}

dtb_status dtb_manifest_dir(const char *dir, const char *variant, int threads,
                            dtb_manifest_line line, void *user, dtb_error *e)
{
    const size_t dlen = strlen(dir) + strlen(variant) + 2;
    char *vdir = malloc(dlen);
    if (!vdir)
        return dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory", dir);
    snprintf(vdir, dlen, "%s/%s", dir, variant);
    DIR *d = opendir(vdir);
    if (!d) {
        const int err = errno;
        const dtb_status s =
            err == ENOENT || err == ENOTDIR
                ? dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such directory", vdir)
                : dtb_error_set(e, DTB_E_IO, "%s: cannot read the directory: %s", vdir, strerror(err));
        free(vdir);
        return s;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    dtb_status s = DTB_OK;
    for (struct dirent *de; s == DTB_OK && (errno = 0, de = readdir(d)) != NULL;) {
        if (!is_table_name(de->d_name))
            continue; /* .tmp leftovers, .stats, STATS */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                s = dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory", vdir);
                break;
            }
            names = grown;
        }
        const size_t len = strlen(de->d_name) + 1;
        if ((names[n] = malloc(len)) != NULL)
            memcpy(names[n], de->d_name, len);
        if (!names[n])
            s = dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory", vdir);
        else
            n++;
    }
    if (s == DTB_OK && errno != 0)
        s = dtb_error_set(e, DTB_E_IO, "%s: cannot read the directory: %s", vdir, strerror(errno));
    closedir(d);
    if (s == DTB_OK && n == 0)
        s = dtb_error_set(e, DTB_E_NOTFOUND, "%s holds no table files", vdir);
    if (s == DTB_OK)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && s == DTB_OK; i++) {
        const size_t plen = dlen + strlen(names[i]) + 1;
        char *path = malloc(plen);
        if (!path) {
            s = dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory", vdir);
            break;
        }
        snprintf(path, plen, "%s/%s", vdir, names[i]);
        uint64_t digest = 0;
        s = dtb_manifest_digest(path, threads, &digest, e);
        /* the name relative to dir: what follows "dir/" */
        if (s == DTB_OK && !line(user, digest, path + strlen(dir) + 1))
            s = dtb_error_set(e, DTB_E_ABORTED, "%s: stopped", vdir);
        free(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(vdir);
    return s;
}
