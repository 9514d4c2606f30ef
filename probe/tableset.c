/* Table files found in directories, opened lazily.
 *
 * Materials address slots directly (four counts of 0..DTB_TABLESET_MAX_KIND, like gen/solved.c),
 * so finding a table in a probe is an array index and one atomic load. A slot is published once,
 * fully built, with a release store (double-checked under the open mutex), and never changes
 * afterwards: readers need no lock. Missing and damaged tables get a slot too, holding the status
 * and message, so a probe of a missing table does not touch the file system again. */
#define _POSIX_C_SOURCE 200809L

#include "tableset.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules.h"

#define KINDS (DTB_TABLESET_MAX_KIND + 1)
#define NMAT (KINDS * KINDS * KINDS * KINDS)
#define NO_TABLE_COUNT 4 /* metrics: wld, dtw, mtc, the rule distances of the variant's rules */

typedef struct tslot {
    dtb_status status;
    dtb_ptable *table; /* when status is DTB_OK */
    char msg[sizeof(((dtb_error *)0)->msg)];
} tslot;

struct dtb_tableset {
    dtb_board board;
    const dtb_variant *variant;
    char **paths;
    int npaths;
    dtb_tableset_log log;
    void *user;
    pthread_mutex_t open_lock;      /* opening files, creating indexes, numbering tables */
    _Atomic(tslot *) slots[NMAT * NO_TABLE_COUNT];
    dtb_index *index[NMAT];         /* shared by a material's .wld and .dtw; under open_lock */
    unsigned char present[NMAT];    /* found at open: 1 = .wld, 2 = .dtw */
    int max_pieces[2];              /* [dtw] */
    uint32_t ntables;
};

static bool fits(dtb_material m)
{
    return m.kings[0] < KINDS && m.kings[1] < KINDS && m.men[0] < KINDS && m.men[1] < KINDS;
}

static int mat_slot(dtb_material m)
{
    return ((m.kings[0] * KINDS + m.men[0]) * KINDS + m.kings[1]) * KINDS + m.men[1];
}

static int metric_slot(dtb_metric metric)
{
    return dtb_metric_is_rules(metric) ? 3 : metric == DTB_METRIC_MTC ? 2 : metric == DTB_METRIC_DTW ? 1 : 0;
}

static void logf_(const dtb_tableset *ts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const dtb_tableset *ts, const char *fmt, ...)
{
    if (!ts->log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ts->log(ts->user, msg);
}

/* "<material>.<ext>" with a valid material: the material and metric. */
static bool table_file_name(const char *name, dtb_material *m, dtb_metric *metric)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name || (size_t)(dot - name) >= DTB_MATERIAL_NAME_MAX)
        return false;
    if (!(*metric = dtb_metric_named(dot + 1)))
        return false;
    char stem[DTB_MATERIAL_NAME_MAX];
    memcpy(stem, name, (size_t)(dot - name));
    stem[dot - name] = 0;
    return dtb_material_parse(stem, m, NULL) == DTB_OK;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of directory path, sorted (so that walks are deterministic). NULL with
 * *n = -1 when it cannot be read, NULL with *n = -2 when out of memory. */
static char **read_dir(const char *path, int *n)
{
    DIR *d = opendir(path);
    if (!d) {
        *n = -1;
        return NULL;
    }
    char **names = NULL;
    int count = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        if (ent->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            char **bigger = realloc(names, (size_t)cap * sizeof *names);
            if (!bigger)
                goto nomem;
            names = bigger;
        }
        if (!(names[count] = strdup(ent->d_name)))
            goto nomem;
        count++;
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof *names, cmp_names);
    *n = count;
    return names;
nomem:
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
    closedir(d);
    *n = -2;
    return NULL;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Calls fn(user, file path, variant of its subdirectory or NULL for a file directly in a path,
 * material, metric) for every table file: in <path>/<variant>/ for the given variant (every
 * variant when NULL) and directly in <path>. Returns false when out of memory. */
typedef bool (*walk_fn)(void *user, const char *path, const dtb_variant *sub, dtb_material m,
                        dtb_metric metric);

static bool walk_files(char *const *paths, int npaths, const dtb_variant *variant, walk_fn fn,
                       void *user)
{
    for (int p = 0; p < npaths; p++) {
        int n;
        char **names = read_dir(paths[p], &n);
        if (n == -2)
            return false;
        bool go_on = true;
        for (int i = 0; i < n && go_on; i++) {
            char full[4096];
            snprintf(full, sizeof full, "%s/%s", paths[p], names[i]);
            dtb_material m;
            dtb_metric metric;
            const dtb_variant *v = dtb_variant_find(names[i]);
            if (v && (!variant || v == variant) && is_dir(full)) {
                int k;
                char **files = read_dir(full, &k);
                if (k == -2) {
                    free_names(names, n);
                    return false;
                }
                for (int j = 0; j < k && go_on; j++) {
                    char file[4200];
                    snprintf(file, sizeof file, "%s/%s", full, files[j]);
                    if (table_file_name(files[j], &m, &metric))
                        go_on = fn(user, file, v, m, metric);
                }
                free_names(files, k);
            } else if (table_file_name(names[i], &m, &metric)) {
                go_on = fn(user, full, NULL, m, metric);
            }
        }
        free_names(names, n);
        if (!go_on)
            break;
    }
    return true;
}

/* Variant detection: a bit per variant index that has tables. */
typedef struct detect {
    const dtb_tableset *ts;
    unsigned seen;
} detect;

static bool detect_file(void *user, const char *path, const dtb_variant *sub, dtb_material m,
                        dtb_metric metric)
{
    (void)m, (void)metric;
    detect *d = user;
    const dtb_variant *v = sub;
    if (!v) { /* a file directly in a path: its header says */
        dtb_tablefile *tf;
        dtb_error err;
        if (dtb_tablefile_open(path, NULL, &tf, &err) != DTB_OK) {
            logf_(d->ts, "%s", err.msg);
            return true;
        }
        v = dtb_variant_find(dtb_tablefile_get_info(tf)->variant);
        dtb_tablefile_close(tf);
    }
    for (int i = 0; i < dtb_variant_count(); i++)
        if (dtb_variant_at(i) == v)
            d->seen |= 1u << i;
    return true;
}

static bool record_file(void *user, const char *path, const dtb_variant *sub, dtb_material m,
                        dtb_metric metric)
{
    (void)path, (void)sub;
    dtb_tableset *ts = user;
    if (fits(m) && (metric == DTB_METRIC_WLD || metric == DTB_METRIC_DTW)) /* what WDL and DTW probes reach */
        ts->present[mat_slot(m)] |= (unsigned char)(metric == DTB_METRIC_DTW ? 2 : 1);
    return true;
}

static void compute_max_pieces(dtb_tableset *ts)
{
    enum { LIMIT = 4 * DTB_TABLESET_MAX_KIND };
    const int n = dtb_material_list(LIMIT, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    ts->max_pieces[0] = ts->max_pieces[1] = 1;
    if (!list)
        return;
    dtb_material_list(LIMIT, list, n);
    for (int dtw = 0; dtw < 2; dtw++) {
        const unsigned char need = dtw ? 2 : 3;
        int pieces = 2;
        for (; pieces <= LIMIT; pieces++) {
            bool all = true;
            for (int i = 0; i < n && all; i++)
                if (dtb_material_pieces(&list[i]) == pieces)
                    all = fits(list[i]) && (ts->present[mat_slot(list[i])] & need);
            if (!all)
                break;
        }
        ts->max_pieces[dtw] = pieces - 1;
    }
    free(list);
}

void dtb_tableset_close(dtb_tableset *ts)
{
    if (!ts)
        return;
    for (int i = 0; i < NMAT * NO_TABLE_COUNT; i++) {
        tslot *s = atomic_load_explicit(&ts->slots[i], memory_order_relaxed);
        if (s) {
            if (s->table)
                dtb_tablefile_close((dtb_tablefile *)s->table->tf);
            free(s->table);
            free(s);
        }
    }
    for (int i = 0; i < NMAT; i++)
        dtb_index_free(ts->index[i]);
    for (int i = 0; i < ts->npaths; i++)
        free(ts->paths[i]);
    free(ts->paths);
    pthread_mutex_destroy(&ts->open_lock);
    free(ts);
}

dtb_status dtb_tableset_open(const char *const *paths, int npaths, const char *variant,
                             dtb_tableset_log log, void *user, dtb_tableset **out, dtb_error *e)
{
    *out = NULL;
    if (!paths || npaths <= 0)
        return dtb_error_set(e, DTB_E_INVALID, "no table directory given");
    const dtb_variant *v = NULL;
    if (variant && !(v = dtb_variant_find(variant)))
        return dtb_error_set(e, DTB_E_INVALID, "unknown variant '%s'", variant);
    dtb_tableset *ts = calloc(1, sizeof *ts);
    if (!ts || !(ts->paths = calloc((size_t)npaths, sizeof *ts->paths))) {
        free(ts);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&ts->open_lock, NULL);
    ts->log = log;
    ts->user = user;
    for (int i = 0; i < NMAT * NO_TABLE_COUNT; i++)
        atomic_init(&ts->slots[i], NULL);
    int usable = 0;
    char first_problem[sizeof e->msg] = "";
    for (int i = 0; i < npaths; i++) {
        if (!(ts->paths[i] = strdup(paths[i] ? paths[i] : ""))) {
            dtb_tableset_close(ts);
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        }
        ts->npaths++;
        if (is_dir(ts->paths[i])) {
            usable++;
        } else {
            char msg[sizeof first_problem];
            snprintf(msg, sizeof msg, "table directory %s: %s", ts->paths[i],
                     errno == ENOENT || errno == 0 ? "no such directory" : strerror(errno));
            if (npaths > 1) /* one directory: the failure itself says it (dtb_open logs it) */
                logf_(ts, "%s", msg);
            if (!first_problem[0])
                memcpy(first_problem, msg, sizeof msg);
        }
    }
    if (!usable) {
        dtb_tableset_close(ts);
        if (npaths > 1)
            return dtb_error_set(e, DTB_E_NOTFOUND, "none of the %d table directories exists",
                                 npaths);
        return dtb_error_set(e, DTB_E_NOTFOUND, "%s", first_problem);
    }
    if (!v) {
        detect d = {ts, 0};
        if (!walk_files(ts->paths, ts->npaths, NULL, detect_file, &d)) {
            dtb_tableset_close(ts);
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        }
        if (d.seen == 0) {
            const dtb_status s = dtb_error_set(e, DTB_E_NOTFOUND, "no table files in %s%s",
                                               ts->paths[0], ts->npaths > 1 ? " and the other directories" : "");
            dtb_tableset_close(ts);
            return s;
        }
        if (d.seen & (d.seen - 1)) {
            char names[128] = "";
            for (int i = 0; i < dtb_variant_count(); i++)
                if (d.seen & (1u << i)) {
                    strncat(names, names[0] ? ", " : "", sizeof names - strlen(names) - 1);
                    strncat(names, dtb_variant_at(i)->name, sizeof names - strlen(names) - 1);
                }
            dtb_tableset_close(ts);
            return dtb_error_set(e, DTB_E_INVALID, "tables of several variants (%s): choose one",
                                 names);
        }
        v = dtb_variant_at(__builtin_ctz(d.seen));
    }
    ts->variant = v;
    dtb_board_init(&ts->board, v);
    if (!walk_files(ts->paths, ts->npaths, v, record_file, ts)) {
        dtb_tableset_close(ts);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    compute_max_pieces(ts);
    *out = ts;
    return DTB_OK;
}

const dtb_board *dtb_tableset_board(const dtb_tableset *ts) { return &ts->board; }

int dtb_tableset_max_pieces(const dtb_tableset *ts, bool dtw) { return ts->max_pieces[dtw ? 1 : 0]; }

bool dtb_tableset_present(const dtb_tableset *ts, dtb_material m, bool dtw)
{
    return fits(m) && (ts->present[mat_slot(m)] & (dtw ? 2 : 3));
}

dtb_tablefile_expect dtb_tableset_expect(const dtb_tableset *ts, dtb_material m, dtb_metric metric,
                                         char *name, uint64_t positions)
{
    dtb_material_name(&m, name, DTB_MATERIAL_NAME_MAX);
    /* a rule table of a material with a diagonal count holds a layer a count */
    const dtb_rules *rules = dtb_metric_is_rules(metric) ? dtb_rules_by_id(dtb_metric_rules_id(metric))
                                                         : NULL;
    if (rules && dtb_rules_counts(rules, &m))
        positions *= (uint64_t)rules->late_after + 1;
    return (dtb_tablefile_expect){
        .variant = ts->variant->name,
        .material = name,
        .metric = metric,
        .index_version = DTB_INDEX_VERSION,
        .value_encoding = dtb_encoding_of(metric),
        .positions = positions,
    };
}

/* A path for messages: long ones keep their tail. */
static const char *short_path(const char *p)
{
    const size_t n = strlen(p);
    return n > 60 ? p + n - 60 : p;
}

/* Builds the slot of (m, metric): finds the file, checks and opens it. Under open_lock. */
static tslot *make_slot(dtb_tableset *ts, dtb_material m, dtb_metric metric)
{
    tslot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    char name[DTB_MATERIAL_NAME_MAX], file[DTB_MATERIAL_NAME_MAX + 8], path[4200] = "";
    dtb_material_name(&m, name, sizeof name);
    snprintf(file, sizeof file, "%s.%s", name, dtb_metric_name(metric));
    bool found = false;
    for (int i = 0; i < ts->npaths && !found; i++) {
        snprintf(path, sizeof path, "%s/%s/%s", ts->paths[i], ts->variant->name, file);
        found = access(path, F_OK) == 0;
        if (!found) {
            snprintf(path, sizeof path, "%s/%s", ts->paths[i], file);
            found = access(path, F_OK) == 0;
        }
    }
    if (!found) {
        s->status = DTB_E_NOTFOUND;
        snprintf(s->msg, sizeof s->msg, "no table %s for %s in %s%s%s", file, ts->variant->name,
                 strlen(ts->paths[0]) > 60 ? "..." : "", short_path(ts->paths[0]),
                 ts->npaths > 1 ? " or the other directories" : "");
        return s;
    }
    dtb_index **ix = &ts->index[mat_slot(m)];
    if (!*ix) {
        const dtb_status st = dtb_index_create(&ts->board, m, ix);
        if (st == DTB_E_NOMEM) {
            s->status = DTB_E_NOMEM;
            snprintf(s->msg, sizeof s->msg, "out of memory for the index of %s", name);
            return s;
        } else if (st != DTB_OK) {
            s->status = DTB_E_NOTFOUND;
            snprintf(s->msg, sizeof s->msg, "material %s does not fit the %s board", name,
                     ts->variant->name);
            return s;
        }
    }
    dtb_tablefile_expect want = dtb_tableset_expect(ts, m, metric, name, dtb_index_size(*ix));
    dtb_tablefile *tf;
    dtb_error err;
    s->status = dtb_tablefile_open(path, &want, &tf, &err);
    if (s->status != DTB_OK) {
        memcpy(s->msg, err.msg, sizeof s->msg);
        logf_(ts, "%s", err.msg);
        return s;
    }
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    if (info->blocks >> DTB_PTABLE_KEY_SHIFT) {
        dtb_tablefile_close(tf);
        s->status = DTB_E_RANGE;
        snprintf(s->msg, sizeof s->msg, "%.100s: too many blocks", short_path(path));
        logf_(ts, "%s", s->msg);
        return s;
    }
    dtb_ptable *t = calloc(1, sizeof *t);
    if (!t) {
        dtb_tablefile_close(tf);
        s->status = DTB_E_NOMEM;
        snprintf(s->msg, sizeof s->msg, "out of memory opening %s", file);
        return s;
    }
    t->tf = tf;
    t->ix = *ix;
    t->key_base = (uint64_t)++ts->ntables << DTB_PTABLE_KEY_SHIFT;
    t->block_positions = info->block_positions;
    t->block_shift = (info->block_positions & (info->block_positions - 1)) == 0
                         ? __builtin_ctz(info->block_positions)
                         : -1;
    t->bits = info->value_bits;
    t->fast = dtb_index_fast_get(t->ix, &t->ixf);
    t->metric = metric;
    t->material = m;
    t->derived = info->flags & DTB_TABLE_DERIVED;
    t->threats = info->flags & DTB_TABLE_THREATS;
    t->losses = info->flags & DTB_TABLE_LOSSES;
    const dtb_material flip = dtb_material_flip(m);
    t->own_flip = dtb_material_equal(&flip, &m);
    snprintf(t->name, sizeof t->name, "%s", file);
    atomic_init(&t->block_error_logged, false);
    s->table = t;
    return s;
}

dtb_status dtb_tableset_get(dtb_tableset *ts, dtb_material m, dtb_metric metric, bool may_open,
                            const dtb_ptable **out, dtb_error *e)
{
    if (!fits(m)) {
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&m, name, sizeof name);
        return dtb_error_set(e, DTB_E_NOTFOUND, "no table for %s: more than %d pieces of a kind",
                             name, DTB_TABLESET_MAX_KIND);
    }
    _Atomic(tslot *) *where = &ts->slots[mat_slot(m) * NO_TABLE_COUNT + metric_slot(metric)];
    tslot *s = atomic_load_explicit(where, memory_order_acquire);
    if (!s) {
        if (!may_open)
            return DTB_E_NOTCACHED;
        pthread_mutex_lock(&ts->open_lock);
        s = atomic_load_explicit(where, memory_order_relaxed);
        const bool made = !s;
        if (made)
            s = make_slot(ts, m, metric);
        /* A table that is missing or damaged stays so; running out of memory is not remembered,
         * so that a later call, with memory freed, can open the table. */
        if (made && s && s->status == DTB_E_NOMEM) {
            const dtb_status st = dtb_error_set(e, DTB_E_NOMEM, "%s", s->msg);
            free(s);
            pthread_mutex_unlock(&ts->open_lock);
            return st;
        }
        if (made && s)
            atomic_store_explicit(where, s, memory_order_release);
        pthread_mutex_unlock(&ts->open_lock);
        if (!s)
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory opening a table");
    }
    if (s->status == DTB_OK) {
        *out = s->table;
        return DTB_OK;
    }
    return dtb_error_set(e, s->status, "%s", s->msg);
}

dtb_status dtb_tableset_get_wdl(dtb_tableset *ts, dtb_material m, bool may_open,
                                const dtb_ptable **out, dtb_error *e)
{
    const dtb_status s = dtb_tableset_get(ts, m, DTB_METRIC_WLD, may_open, out, e);
    if (s != DTB_E_NOTFOUND || !fits(m))
        return s;
    const dtb_status s2 = dtb_tableset_get(ts, m, DTB_METRIC_DTW, may_open, out, e);
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&m, name, sizeof name);
    if (s2 == DTB_OK && (*out)->losses) {
        *out = NULL;
        return dtb_error_set(e, DTB_E_NOTFOUND,
                             "no table %s.wld for %s in %s%s%s: %s.dtw stores its losses only and "
                             "needs it for wins and draws",
                             name, ts->variant->name, strlen(ts->paths[0]) > 60 ? "..." : "",
                             short_path(ts->paths[0]),
                             ts->npaths > 1 ? " or the other directories" : "", name);
    }
    if (s2 != DTB_E_NOTFOUND)
        return s2;
    return dtb_error_set(e, DTB_E_NOTFOUND, "no table for %s (%s.wld or %s.dtw) for %s in %s%s%s",
                         name, name, name, ts->variant->name,
                         strlen(ts->paths[0]) > 60 ? "..." : "", short_path(ts->paths[0]),
                         ts->npaths > 1 ? " or the other directories" : "");
}

typedef struct list_ctx {
    dtb_tableset_file_fn fn;
    void *user;
} list_ctx;

static bool list_file(void *user, const char *path, const dtb_variant *sub, dtb_material m,
                      dtb_metric metric)
{
    (void)sub;
    const list_ctx *c = user;
    return c->fn(c->user, path, m, metric);
}

dtb_status dtb_tableset_list(const dtb_tableset *ts, dtb_tableset_file_fn fn, void *user,
                             dtb_error *e)
{
    list_ctx c = {fn, user};
    if (!walk_files(ts->paths, ts->npaths, ts->variant, list_file, &c))
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory listing the table files");
    return DTB_OK;
}
