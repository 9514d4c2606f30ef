/* Full set -> compact set. First everything is opened and checked (bad input stops the run
 * before a byte is written); then the derived member of every pair is chosen, and table by
 * table the stored ones are copied (or re-encoded, when the output's parameters differ from the
 * input's) and the derived ones written with every position don't-care.
 *
 * Why a derived table keeps nothing: a quiet position of derived table M is answered by a
 * one-ply search whose successors are positions of M's stored partner, captures (resolved by
 * search) and, after a promoting move, positions of the promotion target's table, which may be
 * derived too; the probe then derives that position in the same way. The recursion ends, since
 * each step through a derived promotion target costs a white man. Keeping the values of the
 * promoting positions where the target is derived (an earlier form of compact sets) cut that
 * recursion but made the choice of derived members depend on each other; it cost 0.86 MB of the
 * 8.28 MB international 2..5 WLD set, which derives to 7.43 MB without. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "compact.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "build.h"
#include "capturetest.h"
#include "atomicfile.h"
#include "checksum.h"
#include "index.h"
#include "material.h"
#include "movegen.h"
#include "tableformat.h"
#include "setfiles.h"
#include "tablewrite.h"
#include "threat.h"

enum { MAX_PIECES = 8 }; /* dtbgen's limit */
/* Path buffers: a directory, a file in it, that file's .tmp / .new companion. */
enum { DIRPATH_MAX = 4096, FILEPATH_MAX = DIRPATH_MAX + 128, TMPPATH_MAX = FILEPATH_MAX + 16 };

typedef struct entry {
    dtb_material m;
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_index *ix;
    dtb_tablefile *tf[2]; /* [metric - 1]; NULL when the full set has no such file */
    char *path[2];
    int flip;             /* list index of the colour flip; -1: its own flip */
    bool reencode[2];     /* stored, it is re-encoded (the output parameters differ) */
    bool derived[2];      /* the chosen derived member of its pair */
    /* --threats: the pair's choice is made by writing both members (decide_pair) */
    bool decided[2];      /* the choice of its pair is made */
    bool pending[2];      /* its stored form waits in the output as <table>.new for convert */
    uint64_t pending_bytes[2], pending_threats[2];
    /* A losses-only DTW table (docs/FORMAT.md §8.7), which a compact set cannot hold: tf[1] and
     * path[1] are then its full form, re-encoded into the scratch directory (full_dtw). */
    bool losses;
    uint64_t input_bytes[2]; /* the input file's size */
} entry;

typedef struct run {
    const dtb_compact_options *o;
    dtb_board board;
    char from[DIRPATH_MAX], out[DIRPATH_MAX]; /* the <variant> directories */
    entry *list;
    int n;
    int threads;
    uint32_t block_positions; /* 0: each input's own (same_parameters) */
    int zstd_level;
    char scratch[DIRPATH_MAX + 32]; /* where losses-only DTW tables are re-encoded in full; "":
                                      none */
} run;

static const dtb_metric metrics[2] = {DTB_METRIC_WLD, DTB_METRIC_DTW};

static bool is_own_flip(const dtb_material *m)
{
    const dtb_material f = dtb_material_flip(*m);
    return dtb_material_equal(m, &f);
}

static entry *find_entry(const run *r, dtb_material m)
{
    for (int i = 0; i < r->n; i++)
        if (dtb_material_equal(&r->list[i].m, &m))
            return &r->list[i];
    return NULL;
}

static void free_run(run *r)
{
    for (int i = 0; i < r->n; i++) {
        for (int k = 0; k < 2; k++) {
            dtb_tablefile_close(r->list[i].tf[k]);
            free(r->list[i].path[k]);
        }
        dtb_index_free(r->list[i].ix);
    }
    free(r->list);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Copies from to to (.tmp, fsync, rename, directory fsync). When info is not NULL the copy is a
 * table: the whole-file checksum of the bytes copied and the end marker are checked against it
 * (a file changed or damaged since it was opened is not copied). */
static dtb_status copy_new(const char *from, const char *to, const dtb_tablefile_info *info,
                           dtb_error *e)
{
    enum { CHUNK = 1 << 20 };
    const int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return dtb_sys_error(e, errno, from, "cannot open");
    dtb_atomic_file out;
    const dtb_status so = dtb_atomic_begin(&out, to, "tmp", e);
    if (so != DTB_OK) {
        close(in);
        return so;
    }
    unsigned char *buf = malloc(CHUNK);
    dtb_status s = buf ? DTB_OK : dtb_error_set(e, DTB_E_NOMEM, "out of memory copying %s", from);
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    unsigned char tail[DTB_TF_TRAILER_SIZE];
    uint64_t done = 0;
    const uint64_t hashed = info ? info->file_size - DTB_TF_TRAILER_SIZE : 0;
    while (s == DTB_OK) {
        const ssize_t n = read(in, buf, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            s = dtb_sys_error(e, errno, from, "cannot read");
            break;
        }
        if (n == 0)
            break;
        if (info) {
            if (done < hashed)
                dtb_hash64_update(&hs, buf, (size_t)(hashed - done < (uint64_t)n ? hashed - done : (uint64_t)n));
            for (ssize_t i = 0; i < n; i++) /* the last 16 bytes seen */
                if (done + (uint64_t)i >= hashed && done + (uint64_t)i < info->file_size)
                    tail[done + (uint64_t)i - hashed] = buf[i];
        }
        s = dtb_atomic_write(&out, buf, (size_t)n, e);
        done += (uint64_t)n;
    }
    free(buf);
    close(in);
    if (s == DTB_OK && info &&
        (done != info->file_size || dtb_hash64_digest(&hs) != info->file_hash ||
         dtb_tf_get64(tail) != info->file_hash || memcmp(tail + 8, DTB_TF_END_MAGIC, 8) != 0))
        s = dtb_error_set(e, DTB_E_CORRUPT, "%s: whole-file checksum mismatch while copying", from);
    if (s != DTB_OK) {
        dtb_atomic_abort(&out);
        return s;
    }
    return dtb_atomic_commit(&out, e);
}

/* Copies from to to, or leaves an identical to alone (*unchanged). */
static dtb_status copy_file(const char *from, const char *to, const dtb_tablefile_info *info,
                            bool *unchanged, dtb_error *e)
{
    *unchanged = access(to, F_OK) == 0;
    if (!*unchanged)
        return copy_new(from, to, info, e);
    /* The existing file must be what a copy would give: the source, whose checksum is then
     * checked as a copy would check it. */
    char tmp[TMPPATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.new", to);
    dtb_status s = copy_new(from, tmp, info, e);
    if (s == DTB_OK)
        s = dtb_setfiles_existing_same(to, tmp, e);
    unlink(tmp);
    return s;
}

/* ---- writing a table ---------------------------------------------------------------------- */

/* The threads to work on a table of n positions with: one for small tables, whose work is
 * shorter than what waking a team costs (and its threads spinning after it, which doubled the
 * CPU time of a set of 2- to 4-piece tables). */
static int threads_for(const run *r, uint64_t n)
{
    return n < (1u << 20) ? 1 : r->threads;
}

/* Reads every block of t (checked against its frame checksums) into values. */
static dtb_status read_all(const run *r, const dtb_tablefile *tf, uint8_t *values, dtb_error *e)
{
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    dtb_status bad = DTB_OK;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_for(r, info->positions))
#endif
    {
        dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
        dtb_error mine;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (uint64_t b = 0; b < info->blocks; b++) {
            const dtb_status s =
                ctx ? dtb_tablefile_read_block(tf, b, values + b * info->block_positions,
                                               (size_t)dtb_tablefile_block_len(tf, b), ctx, &mine)
                    : dtb_error_set(&mine, DTB_E_NOMEM, "out of memory reading %s",
                                    dtb_tablefile_path(tf));
            if (s != DTB_OK) {
#ifdef _OPENMP
#pragma omp critical(dtb_compact_error)
#endif
                if (bad == DTB_OK) {
                    bad = s;
                    if (e)
                        *e = mine;
                }
            }
        }
        dtb_tablefile_ctx_free(ctx);
    }
    (void)r;
    return bad;
}


/* The don't-care positions of stored table x as bits (bit i % 64 of word i / 64): its capture
 * positions, as the full set has them, and, when the set leaves threat positions to the probe,
 * the threat positions probe/format/threat.h's rule accepts (their number in *threats). Each thread
 * works in move lists of its own. */
static dtb_status dontcare_bits(const run *r, const entry *x, uint64_t *dc, uint64_t *threats,
                                dtb_error *e)
{
    const uint64_t n = dtb_index_size(x->ix), words = (n + 63) / 64;
    const bool own_flip = is_own_flip(&x->m), with_threats = r->o->threats;
    dtb_capture_oracle tr = {.board = &r->board};
    dtb_capturetest_init(&tr.ct, &r->board);
    const dtb_threat_ops ops = {.has_capture = dtb_capture_oracle_has, .user = &tr};
    uint64_t count = 0;
    bool nomem = false;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads_for(r, n)) reduction(+ : count) reduction(|| : nomem)
#endif
    {
        dtb_movelist *lists[4] = {NULL};
        for (int k = 0; k < 4 && with_threats; k++)
            nomem |= !(lists[k] = malloc(sizeof *lists[k]));
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 256)
#endif
        for (uint64_t w = 0; w < words; w++) {
            uint64_t c = 0;
            for (uint64_t i = w * 64; i < n && i < (w + 1) * 64 && !nomem; i++) {
                dtb_pos p;
                dtb_index_pos(x->ix, i, &p);
                bool dontcare = dtb_capture_oracle_has(&tr, &p);
                if (!dontcare && with_threats &&
                    dtb_threat_dontcare(&r->board, &p, own_flip, lists, &ops)) {
                    dontcare = true;
                    count++;
                }
                c |= (uint64_t)dontcare << (i % 64);
            }
            dc[w] = c;
        }
        for (int k = 0; k < 4; k++)
            free(lists[k]);
    }
    *threats = count;
    return nomem ? dtb_error_set(e, DTB_E_NOMEM, "out of memory classifying %s", x->name) : DTB_OK;
}

/* Writes x's table of metric k with the output's parameters to path: derived (every position
 * don't-care, nothing read) or stored and re-encoded (the full set's values, the capture
 * positions don't-care, and the threat positions the rule accepts when the set leaves them to
 * the probe: *threats of them). *bytes is the file's size. */
static dtb_status write_table(const run *r, const entry *x, int k, const char *path,
                              uint64_t *bytes, uint64_t *threats, dtb_error *e)
{
    const dtb_tablefile_info *info = dtb_tablefile_get_info(x->tf[k]);
    const bool derived = x->derived[k];
    const uint64_t n = info->positions, words = (n + 63) / 64;
    uint8_t *values = derived ? calloc((size_t)n, 1) : malloc((size_t)n);
    uint64_t *dc_bits = malloc((size_t)words * sizeof *dc_bits);
    dtb_status s = DTB_OK;
    if (!values || !dc_bits)
        s = dtb_error_set(e, DTB_E_NOMEM, "out of memory for %s (%llu positions)", x->name,
                          (unsigned long long)n);
    if (s == DTB_OK && derived)
        memset(dc_bits, 0xff, (size_t)words * sizeof *dc_bits);
    *threats = 0;
    if (s == DTB_OK && !derived && (s = dontcare_bits(r, x, dc_bits, threats, e)) == DTB_OK)
        s = read_all(r, x->tf[k], values, e);
    const bool with_threats = !derived && r->o->threats;
    if (s == DTB_OK) {
        dtb_table_write_options w = dtb_table_write_defaults();
        w.variant = info->variant;
        w.gametype = info->gametype;
        w.material = info->material;
        w.metric = info->metric;
        w.index_version = info->index_version;
        w.value_encoding = info->value_encoding;
        w.dontcare_kind = derived        ? DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED
                          : with_threats ? DTB_DONTCARE_CAPTURES | DTB_DONTCARE_THREATS
                                         : info->dontcare_kind;
        w.flags = derived ? DTB_TABLE_DERIVED : with_threats ? DTB_TABLE_THREATS : 0u;
        w.block_positions = r->block_positions ? r->block_positions : info->block_positions;
        w.zstd_level = r->zstd_level ? r->zstd_level : info->zstd_level;
        w.threads = threads_for(r, n);
        if (derived) /* every position don't-care: no order compresses better */
            w.tile_columns = DTB_TILE_NONE;
        const dtb_table_dontcare dc = {.bits = dc_bits, .marker = -1};
        dtb_table_write_stats ws;
        if ((s = dtb_table_write(path, &w, values, n, &dc, &ws, e)) == DTB_OK)
            *bytes = ws.file_size;
    }
    free(values);
    free(dc_bits);
    return s;
}

/* ---- the run ------------------------------------------------------------------------------ */

/* Opens every table of the full set (up to the piece limit) and checks it. */
static dtb_status open_all(run *r, dtb_error *e)
{
    const int pieces = r->o->pieces ? r->o->pieces : MAX_PIECES;
    const int count = dtb_material_list(pieces, NULL, 0);
    dtb_material *mats = malloc((size_t)count * sizeof *mats);
    r->list = calloc((size_t)count, sizeof *r->list);
    if (!mats || !r->list) {
        free(mats);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    dtb_material_list(pieces, mats, count);
    dtb_status s = DTB_OK;
    for (int i = 0; i < count && s == DTB_OK; i++) {
        entry *x = &r->list[r->n];
        x->m = mats[i];
        dtb_material_name(&x->m, x->name, sizeof x->name);
        for (int k = 0; k < 2 && s == DTB_OK; k++) {
            char path[FILEPATH_MAX];
            snprintf(path, sizeof path, "%s/%s.%s", r->from, x->name, dtb_metric_name(metrics[k]));
            if (access(path, F_OK) != 0)
                continue;
            if (!x->ix && dtb_index_create(&r->board, x->m, &x->ix) != DTB_OK) {
                s = dtb_error_set(e, DTB_E_MISMATCH, "%s: material does not fit the %s board", path,
                                  r->o->variant->name);
                break;
            }
            const dtb_tablefile_expect want = {
                .variant = r->o->variant->name,
                .material = x->name,
                .metric = metrics[k],
                .index_version = DTB_INDEX_VERSION,
                .value_encoding = dtb_encoding_of(metrics[k]),
                .positions = dtb_index_size(x->ix),
            };
            if (!(x->path[k] = strdup(path))) {
                s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
                break;
            }
            if ((s = dtb_tablefile_open(path, &want, &x->tf[k], e)) != DTB_OK)
                break;
            x->input_bytes[k] = dtb_tablefile_get_info(x->tf[k])->file_size;
            /* re-encoded in full before anything else (full_dtw), and checked then */
            x->losses = metrics[k] == DTB_METRIC_DTW &&
                        dtb_tablefile_get_info(x->tf[k])->flags == DTB_TABLE_LOSSES;
            if (x->losses)
                continue;
            if (dtb_tablefile_get_info(x->tf[k])->flags != 0)
                s = dtb_error_set(e, DTB_E_MISMATCH,
                                  "%s: a compact set's derived table; the input must be a full set",
                                  path);
            else if (dtb_tablefile_get_info(x->tf[k])->long_count)
                s = dtb_error_set(e, DTB_E_RANGE,
                                  "%s: distances beyond 254 plies (a long list): compact sets do "
                                  "not take such tables yet", path);
        }
        if (x->ix || x->path[0] || x->path[1])
            r->n++;
    }
    free(mats);
    if (s == DTB_OK && r->n == 0)
        s = dtb_error_set(e, DTB_E_NOTFOUND, "no %s tables of up to %d pieces in %s",
                          r->o->variant->name, pieces, r->from);
    return s;
}

/* dtb_build_walk's visitor of full_dtw: writes each visited losses-only table in full into
 * the scratch directory, with its input's block size and zstd level (so the file is the one
 * `dtbgen --dtw-store full` would have written); the first failure, and a table that cannot be
 * loaded (*missing), are kept in the walk's state. */
typedef struct full_walk {
    run *r;
    dtb_status st;
    dtb_error *e;
} full_walk;

static void full_scratch_path(const run *r, const entry *x, char path[FILEPATH_MAX + 64])
{
    snprintf(path, FILEPATH_MAX + 64, "%s/%s.dtw", r->scratch, x->name);
}

static void write_full(void *user, const dtb_solved *s, dtb_material m, const dtb_material *missing)
{
    full_walk *fw = user;
    entry *x = find_entry(fw->r, m);
    if (fw->st != DTB_OK || !x || !x->losses)
        return;
    if (missing) {
        char need[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(missing, need, sizeof need);
        fw->st = dtb_error_set(fw->e, DTB_E_NOTFOUND, /* short: the path comes first */
                               "%s: losses-only, needs the missing %s to be made full (dtbgen "
                               "--dtw-store full)", x->path[1], need);
        return;
    }
    char path[FILEPATH_MAX + 64];
    full_scratch_path(fw->r, x, path);
    const dtb_tablefile_info *in = dtb_tablefile_get_info(x->tf[1]);
    fw->st = dtb_build_write_dtw_full(s, dtb_solved_find(s, m), path, in->block_positions,
                                      in->zstd_level, fw->r->threads, fw->e);
}

/* A compact set's readers refuse losses-only DTW tables (a derived table searched through a
 * partner whose wins are searched again could go round), so such inputs are re-encoded in full
 * first: the set loaded pair by pair as --check loads it (gen/build.c: wins searched from the
 * losses), each losses-only table written in full into a scratch directory under the output,
 * which then stands in for the input (the choice of derived members, copies, re-encodings: as
 * from a set built with --dtw-store full). Memory: what --check of the set takes. */
static dtb_status full_dtw(run *r, dtb_error *e)
{
    bool any = false;
    for (int i = 0; i < r->n; i++)
        any |= r->list[i].losses;
    if (!any)
        return DTB_OK;
    snprintf(r->scratch, sizeof r->scratch, "%s/dtw-full.tmp", r->out);
    dtb_status s = dtb_setfiles_make_dir(r->scratch, e);
    const dtb_build_options bo = {
        .variant = r->o->variant,
        .pieces = r->o->pieces ? r->o->pieces : MAX_PIECES,
        .out_dir = r->o->from_dir,
        .threads = r->o->threads,
    };
    full_walk fw = {r, DTB_OK, e};
    if (s == DTB_OK)
        s = dtb_build_walk(&bo, write_full, &fw, e);
    if (s == DTB_OK)
        s = fw.st;
    for (int i = 0; i < r->n && s == DTB_OK; i++) {
        entry *x = &r->list[i];
        if (!x->losses)
            continue;
        char path[FILEPATH_MAX + 64];
        full_scratch_path(r, x, path);
        dtb_tablefile_close(x->tf[1]);
        x->tf[1] = NULL;
        free(x->path[1]);
        if (!(x->path[1] = strdup(path))) {
            s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
            break;
        }
        const dtb_tablefile_expect want = {
            .variant = r->o->variant->name,
            .material = x->name,
            .metric = DTB_METRIC_DTW,
            .index_version = DTB_INDEX_VERSION,
            .value_encoding = dtb_encoding_of(DTB_METRIC_DTW),
            .positions = dtb_index_size(x->ix),
        };
        if ((s = dtb_tablefile_open(path, &want, &x->tf[1], e)) == DTB_OK &&
            dtb_tablefile_get_info(x->tf[1])->long_count)
            s = dtb_error_set(e, DTB_E_RANGE,
                              "%s: distances beyond 254 plies (a long list): compact sets do "
                              "not take such tables yet", path);
    }
    return s;
}

/* Removes the scratch directory of full_dtw and what it holds. */
static void remove_scratch(const run *r)
{
    if (!r->scratch[0])
        return;
    for (int i = 0; i < r->n; i++)
        if (r->list[i].losses) {
            char path[FILEPATH_MAX + 64];
            full_scratch_path(r, &r->list[i], path);
            unlink(path);
        }
    rmdir(r->scratch);
}

static int entry_at(const run *r, dtb_material m)
{
    const entry *x = find_entry(r, m);
    return x ? (int)(x - r->list) : -1;
}

/* Links every table to its pair partner; checks that it and the table its white promotions
 * reach (which a derived table's probes read) are there; decides which stored tables are
 * re-encoded. */
static dtb_status link_pairs(run *r, dtb_error *e)
{
    for (int i = 0; i < r->n; i++) {
        entry *x = &r->list[i];
        x->flip = -1;
        for (int k = 0; k < 2; k++)
            if (x->tf[k]) {
                const dtb_tablefile_info *in = dtb_tablefile_get_info(x->tf[k]);
                x->reencode[k] = r->o->threats ||
                                 (r->block_positions &&
                                  (r->block_positions != in->block_positions ||
                                   r->zstd_level != in->zstd_level));
                if (x->reencode[k] && in->dontcare_kind != DTB_DONTCARE_CAPTURES &&
                    !(k == 1 && x->losses)) /* re-encoded in full first: captures only then */
                    return dtb_error_set(e, DTB_E_MISMATCH,
                                         "%s: don't-care kind %u, not captures only: cannot be "
                                         "re-encoded", x->path[k], in->dontcare_kind);
            }
        if (is_own_flip(&x->m))
            continue;
        const dtb_material fm = dtb_material_flip(x->m);
        x->flip = entry_at(r, fm);
        for (int k = 0; k < 2; k++) {
            if (!x->tf[k])
                continue;
            if (x->flip < 0 || !r->list[x->flip].tf[k]) {
                char name[DTB_MATERIAL_NAME_MAX];
                dtb_material_name(&fm, name, sizeof name);
                return dtb_error_set(e, DTB_E_NOTFOUND,
                                     "%s: its colour flip's table %s.%s is missing (a compact "
                                     "set derives one of each pair from the other)",
                                     x->path[k], name, dtb_metric_name(metrics[k]));
            }
        }
    }
    for (int i = 0; i < r->n; i++) {
        entry *x = &r->list[i];
        if (x->m.men[DTB_WHITE] == 0 || x->flip < 0)
            continue;
        dtb_material t = x->m; /* where a promotion lands: black to move in t, i.e. its flip */
        t.men[DTB_WHITE]--;
        t.kings[DTB_WHITE]++;
        const dtb_material ft = dtb_material_flip(t);
        const int y = entry_at(r, ft);
        for (int k = 0; k < 2; k++) {
            if (!x->tf[k])
                continue;
            if (y < 0 || !r->list[y].tf[k]) {
                char name[DTB_MATERIAL_NAME_MAX];
                dtb_material_name(&ft, name, sizeof name);
                return dtb_error_set(e, DTB_E_NOTFOUND,
                                     "%s: the table its promotions reach, %s.%s, is missing",
                                     x->path[k], name, dtb_metric_name(metrics[k]));
            }
        }
    }
    return DTB_OK;
}

/* Chooses the derived member of every pair of metric k: the one whose stored file is larger (a
 * tie derives the name that sorts last). A derived file holds no value, and a table and its
 * flip have as many positions and names as long, so the two derived files have the same size:
 * the smaller stored file makes the smaller set. The stored size is the input file's, also
 * when it is re-encoded: re-encoding both members of every pair to measure them would double
 * the conversion's longest part for a choice that moves by a few KB. With threat don't-cares
 * that is no longer so, and decide_pair makes the choice again. */
static void choose(run *r, int k)
{
    for (int i = 0; i < r->n; i++) {
        entry *x = &r->list[i];
        if (!x->tf[k] || x->flip < 0)
            continue;
        const entry *f = &r->list[x->flip];
        const uint64_t mine = dtb_tablefile_get_info(x->tf[k])->file_size,
                       theirs = dtb_tablefile_get_info(f->tf[k])->file_size;
        x->derived[k] = mine > theirs || (mine == theirs && strcmp(x->name, f->name) > 0);
    }
}

/* The output path of x's table of metric k, and the path of its candidate file (.new). */
static void out_paths(const run *r, const entry *x, int k, char to[FILEPATH_MAX],
                      char cand[TMPPATH_MAX])
{
    snprintf(to, FILEPATH_MAX, "%s/%s.%s", r->out, x->name, dtb_metric_name(metrics[k]));
    snprintf(cand, TMPPATH_MAX, "%s.new", to);
}

/* With threat don't-cares the full files no longer tell which member of a pair is the smaller
 * stored: a table whose threat positions carry most of its entropy shrinks most (international
 * 2..5: KKKKvK.wld 30,742 -> 588 bytes, its flip KvKKKK.wld 10,723 -> 6,851; choosing by the
 * full files cost 2.4% of the WLD set). So both members of x's pair are written in their stored
 * form as <table>.new, the larger is derived (a tie derives the name that sorts last) and its
 * file removed; the smaller one's waits for convert. Costs a second classification and
 * compression of every pair. */
static dtb_status decide_pair(run *r, entry *x, int k, dtb_error *e)
{
    entry *const two[2] = {x, &r->list[x->flip]};
    char to[FILEPATH_MAX], cand[2][TMPPATH_MAX];
    dtb_status s = DTB_OK;
    for (int j = 0; j < 2 && s == DTB_OK; j++) {
        out_paths(r, two[j], k, to, cand[j]);
        two[j]->derived[k] = false;
        two[j]->decided[k] = true;
        s = write_table(r, two[j], k, cand[j], &two[j]->pending_bytes[k],
                        &two[j]->pending_threats[k], e);
        two[j]->pending[k] = s == DTB_OK;
    }
    const uint64_t a = two[0]->pending_bytes[k], b = two[1]->pending_bytes[k];
    const int loser = a > b || (a == b && strcmp(two[0]->name, two[1]->name) > 0) ? 0 : 1;
    for (int j = 0; j < 2; j++)
        if (two[j]->pending[k] && (s != DTB_OK || j == loser)) {
            unlink(cand[j]);
            two[j]->pending[k] = false;
        }
    if (s == DTB_OK)
        two[loser]->derived[k] = true;
    return s;
}

/* Puts table x of metric k into the output in its chosen form: a copy of the input, or a file
 * written as <name>.new next to its final name and renamed into place. */
static dtb_status convert(run *r, entry *x, int k, dtb_compact_stats *st, dtb_error *e)
{
    char to[FILEPATH_MAX], cand[TMPPATH_MAX];
    out_paths(r, x, k, to, cand);
    const dtb_tablefile_info *info = dtb_tablefile_get_info(x->tf[k]);
    const bool copy = !x->derived[k] && !x->reencode[k];
    dtb_status s;
    bool unchanged;
    uint64_t bytes = info->file_size, threats = 0;
    if (copy) {
        s = copy_file(x->path[k], to, info, &unchanged, e);
    } else if (x->pending[k]) { /* written by decide_pair */
        bytes = x->pending_bytes[k];
        threats = x->pending_threats[k];
        x->pending[k] = false;
        s = dtb_setfiles_place(cand, to, &unchanged, e);
        if (s != DTB_OK)
            unlink(cand);
    } else {
        s = write_table(r, x, k, cand, &bytes, &threats, e);
        if (s == DTB_OK)
            s = dtb_setfiles_place(cand, to, &unchanged, e);
        if (s != DTB_OK)
            unlink(cand);
    }
    if (s != DTB_OK)
        return s;
    st->files++;
    st->derived += x->derived[k];
    st->reencoded += !x->derived[k] && x->reencode[k];
    if (x->derived[k])
        st->derived_dontcare += info->positions - info->dontcare_count; /* its quiet positions */
    st->threat_dontcare += threats;
    st->positions[k] += info->positions;
    st->bytes_in[k] += x->input_bytes[k];
    st->bytes_out[k] += bytes;
    if (r->o->log)
        r->o->log(r->o->user, to,
                  unchanged        ? DTB_COMPACT_UNCHANGED
                  : x->derived[k]  ? DTB_COMPACT_DERIVE
                  : x->reencode[k] ? DTB_COMPACT_REENCODE
                                   : DTB_COMPACT_COPY,
                  x->input_bytes[k], bytes);
    return DTB_OK;
}

/* Small text file text to path (atomically), or an identical one left alone. */
static dtb_status write_text(const char *path, const char *text, size_t len, dtb_error *e)
{
    if (access(path, F_OK) != 0)
        return dtb_atomic_write_file(path, text, len, e);
    /* It exists: written beside it, compared, removed. */
    dtb_atomic_file af;
    dtb_status s = dtb_atomic_begin(&af, path, "new", e);
    if (s != DTB_OK)
        return s;
    if ((s = dtb_atomic_write(&af, text, len, e)) != DTB_OK) {
        dtb_atomic_abort(&af);
        return s;
    }
    if ((s = dtb_atomic_finish(&af, e)) != DTB_OK)
        return s;
    s = dtb_setfiles_existing_same(path, af.tmp, e);
    dtb_atomic_abort(&af);
    return s;
}

/* The per-material .stats records of the materials converted, and the STATS log made of them in
 * dependency order (as dtbgen writes it), when the full set has them. */
static dtb_status copy_stats(const run *r, dtb_error *e)
{
    size_t len = 0, cap = 4096;
    char *all = malloc(cap);
    if (!all)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    dtb_status s = DTB_OK;
    int records = 0;
    for (int i = 0; i < r->n && s == DTB_OK; i++) {
        char from[FILEPATH_MAX], to[FILEPATH_MAX];
        snprintf(from, sizeof from, "%s/%s.stats", r->from, r->list[i].name);
        snprintf(to, sizeof to, "%s/%s.stats", r->out, r->list[i].name);
        FILE *f = fopen(from, "rb");
        if (!f)
            continue;
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
            if (len + n + 1 > cap) {
                while (len + n + 1 > cap)
                    cap *= 2;
                char *bigger = realloc(all, cap);
                if (!bigger) {
                    s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
                    break;
                }
                all = bigger;
            }
            memcpy(all + len, buf, n);
            len += n;
        }
        if (ferror(f) && s == DTB_OK)
            s = dtb_error_set(e, DTB_E_IO, "%s: cannot read", from);
        fclose(f);
        bool unchanged;
        if (s == DTB_OK)
            s = copy_file(from, to, NULL, &unchanged, e);
        records++;
    }
    if (s == DTB_OK && records > 0) {
        char path[FILEPATH_MAX];
        snprintf(path, sizeof path, "%s/STATS", r->out);
        s = write_text(path, all, len, e);
    }
    free(all);
    return s;
}

dtb_status dtb_compact(const dtb_compact_options *o, dtb_compact_stats *st_out, dtb_error *e)
{
    dtb_compact_stats st = {0};
    if (!o->from_dir || !o->out_dir || !o->variant)
        return dtb_error_set(e, DTB_E_INVALID, "a full set's directory, an output directory and a variant are needed");
    if (o->pieces != 0 && (o->pieces < 2 || o->pieces > MAX_PIECES))
        return dtb_error_set(e, DTB_E_INVALID, "pieces %d outside 2..%d", o->pieces, MAX_PIECES);
    if (!o->same_parameters &&
        (o->block_positions > (1u << 24) || o->zstd_level < 0 || o->zstd_level > 22))
        return dtb_error_set(e, DTB_E_INVALID,
                             "block positions %u or zstd level %d out of range (1..2^24, 1..22)",
                             o->block_positions, o->zstd_level);
    if (strlen(o->from_dir) + 32 > DIRPATH_MAX || strlen(o->out_dir) + 32 > DIRPATH_MAX)
        return dtb_error_set(e, DTB_E_INVALID, "directory name too long");
    run r = {.o = o};
    if (!o->same_parameters) {
        r.block_positions = o->block_positions ? o->block_positions : DTB_COMPACT_DEFAULT_BLOCK_POSITIONS;
        r.zstd_level = o->zstd_level ? o->zstd_level : DTB_COMPACT_DEFAULT_ZSTD_LEVEL;
    }
    dtb_board_init(&r.board, o->variant);
    snprintf(r.from, sizeof r.from, "%s/%s", o->from_dir, o->variant->name);
    snprintf(r.out, sizeof r.out, "%s/%s", o->out_dir, o->variant->name);
#ifdef _OPENMP
    r.threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#else
    r.threads = 1;
#endif
    if (!is_dir(r.from))
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such directory", r.from);
    char a[PATH_MAX], b[PATH_MAX];
    if (is_dir(r.out) && realpath(r.from, a) && realpath(r.out, b) && strcmp(a, b) == 0)
        return dtb_error_set(e, DTB_E_INVALID, "%s: the output directory is the full set's", r.out);
    dtb_status s = open_all(&r, e);
    if (s == DTB_OK)
        s = link_pairs(&r, e);
    /* Every input file checked whole before anything is written: a copy is checked again as
     * it is made, the frames of the others as they are read. */
    for (int i = 0; i < r.n && s == DTB_OK; i++)
        for (int k = 0; k < 2 && s == DTB_OK; k++)
            if (r.list[i].tf[k])
                s = dtb_tablefile_verify(r.list[i].tf[k], false, NULL, NULL, e);
    if (s == DTB_OK && (s = dtb_setfiles_make_dir(o->out_dir, e)) == DTB_OK)
        s = dtb_setfiles_make_dir(r.out, e);
    if (s == DTB_OK)
        s = full_dtw(&r, e);
    if (s == DTB_OK)
        for (int k = 0; k < 2; k++)
            choose(&r, k);
    for (int i = 0; i < r.n && s == DTB_OK; i++)
        for (int k = 0; k < 2 && s == DTB_OK; k++) {
            entry *x = &r.list[i];
            if (!x->tf[k])
                continue;
            if (o->threats && x->flip >= 0 && !x->decided[k])
                s = decide_pair(&r, x, k, e);
            if (s == DTB_OK)
                s = convert(&r, x, k, &st, e);
        }
    for (int i = 0; i < r.n; i++) /* after a failure: the candidates that wait */
        for (int k = 0; k < 2; k++)
            if (r.list[i].pending[k]) {
                char to[FILEPATH_MAX], cand[TMPPATH_MAX];
                out_paths(&r, &r.list[i], k, to, cand);
                unlink(cand);
            }
    if (s == DTB_OK)
        s = copy_stats(&r, e);
    remove_scratch(&r);
    free_run(&r);
    if (st_out)
        *st_out = st;
    return s;
}
