/* A direct-mapped registry: the four piece counts address a slot, so a lookup in the solver's
 * hot loop costs one multiply-add, no search. */
#define _GNU_SOURCE /* pthread_rwlock_t, MAP_NORESERVE */
#include "solved.h"

#include <assert.h>
#include <limits.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hugemem.h"
#include "tablefile.h"
#include "workfile.h"

#define SLOTS (DTB_SOLVED_MAX_COUNT + 1)

/* A table's long list while generating: open addressing, key index + 1 (0: empty), a power of
 * two of slots at most half full. */
typedef struct longmap {
    uint64_t *key;
    uint16_t *dtw;
    uint64_t cap, n;
} longmap;

/* A table and, on boards of up to 64 squares, what the inline index needs of its index. */
typedef struct entry {
    dtb_solved_table t; /* first: a dtb_solved_table * to it is an entry * */
    bool narrow;        /* fast is filled */
    dtb_index_fast fast;
    size_t mapped;      /* bytes of its work file (values, then capture bits); 0: in memory */
    bool sliced;        /* dtb_solved_add_sliced: sparse, released a range at a time */
    int fd;             /* a sliced table's work file, -1 when in memory */
    dtb_tablefile *file; /* a table read from its file (no values, no capture bits), or NULL */
    bool wld;           /* that file is a WLD table (dtb_solved_add_wld_file) */
    uint64_t serial;    /* of a file's entry: unique in the registry, names its cached blocks */
    /* A losses-only DTW file (docs/FORMAT.md §8.7): the material's WLD table beside it, which
     * says what its quiet positions are, and that file's serial. */
    dtb_tablefile *results;
    uint64_t results_serial;
    longmap longs;      /* the long list of a table with values (a file's is in the file) */
} entry;

/* Blocks of table files one thread keeps decoded: direct-mapped by (serial, block), allocated as
 * they are first used. A unit's exits land in a few blocks of each table they reach (one men
 * placement each), and neighbouring units in the same ones; but a promotion lands anywhere in
 * its target table, and a win read from a losses-only table searches its moves, so the blocks
 * in use at once are many more than the tables read (DTB_SOLVED_FILE_CACHE_BLOCKS). */
enum { FILE_CACHE_BITS = 10, FILE_CACHE_BLOCKS = 1 << FILE_CACHE_BITS, MAX_CACHES = 256 };
_Static_assert(FILE_CACHE_BLOCKS == DTB_SOLVED_FILE_CACHE_BLOCKS, "the header says the size");

typedef struct file_cache {
    uint64_t key[FILE_CACHE_BLOCKS]; /* serial << 32 | block, + 1; 0: empty */
    uint8_t *block[FILE_CACHE_BLOCKS];
    uint64_t cap[FILE_CACHE_BLOCKS]; /* bytes allocated for each */
    dtb_tablefile_ctx *ctx;
    uint64_t reads; /* blocks decoded */
} file_cache;

struct dtb_solved {
    const dtb_board *board;
    bool narrow;        /* at most 64 squares: positions fit in words */
    entry *slot[SLOTS * SLOTS * SLOTS * SLOTS];
    /* Work files: where, the monitor that releases their pages, and the lock that keeps it
     * from releasing a table being added or dropped. */
    const char *work_dir;
    dtb_work_monitor *monitor;
    pthread_mutex_t lock;
    uint64_t work_bytes, work_peak;
    /* Table files: one cache per OpenMP thread number (made on first use), the serial of the
     * next file, and the first read failure (the values read since are not to be trusted). */
    file_cache *cache[MAX_CACHES];
    uint64_t next_serial;
    int read_failed;
    dtb_status read_status;
    dtb_error read_error;
    /* Long lists: their lock (writers store long values, readers look up escapes), the byte
     * limit, the tables with values by address (an escape read through a pointer finds its
     * table), and the pool: the value of a table read from its file is returned as a pointer,
     * and a long one as &pool[win ? 0 : 1][dtw], whose byte is the escape. */
    pthread_rwlock_t long_lock;
    int byte_max;
    entry **by_addr;
    size_t naddr, addr_cap;
    dtb_value pool[2][DTB_MAX_DTW + 1];
};

static int slot_of(dtb_material m)
{
    return ((m.kings[0] * SLOTS + m.men[0]) * SLOTS + m.kings[1]) * SLOTS + m.men[1];
}

static bool fits(dtb_material m)
{
    return m.kings[0] <= DTB_SOLVED_MAX_COUNT && m.kings[1] <= DTB_SOLVED_MAX_COUNT &&
           m.men[0] <= DTB_SOLVED_MAX_COUNT && m.men[1] <= DTB_SOLVED_MAX_COUNT;
}

dtb_solved *dtb_solved_create(const dtb_board *b)
{
    dtb_solved *s = calloc(1, sizeof *s);
    if (s) {
        s->board = b;
        s->narrow = b->squares <= 64;
        pthread_mutex_init(&s->lock, NULL);
        pthread_rwlock_init(&s->long_lock, NULL);
        s->byte_max = DTB_VALUE_BYTE_LOSS_MAX;
        memset(s->pool[0], DTB_VALUE_WIN_ESCAPE, sizeof s->pool[0]);
        memset(s->pool[1], DTB_VALUE_LOSS_ESCAPE, sizeof s->pool[1]);
    }
    return s;
}

void dtb_solved_set_byte_max(dtb_solved *s, int byte_max)
{
    assert(byte_max >= 1 && byte_max <= DTB_VALUE_BYTE_LOSS_MAX);
    s->byte_max = byte_max;
}

int dtb_solved_byte_max(const dtb_solved *s) { return s->byte_max; }

/* Registers en's values by address (under s->lock), or removes it. */
static bool addr_insert(dtb_solved *s, entry *en)
{
    if (s->naddr == s->addr_cap) {
        const size_t cap = s->addr_cap ? 2 * s->addr_cap : 64;
        entry **grown = realloc(s->by_addr, cap * sizeof *grown);
        if (!grown)
            return false;
        s->by_addr = grown;
        s->addr_cap = cap;
    }
    size_t i = s->naddr;
    while (i > 0 && s->by_addr[i - 1]->t.values > en->t.values) {
        s->by_addr[i] = s->by_addr[i - 1];
        i--;
    }
    s->by_addr[i] = en;
    s->naddr++;
    return true;
}

static void addr_remove(dtb_solved *s, const entry *en)
{
    for (size_t i = 0; i < s->naddr; i++)
        if (s->by_addr[i] == en) {
            memmove(&s->by_addr[i], &s->by_addr[i + 1], (s->naddr - i - 1) * sizeof *s->by_addr);
            s->naddr--;
            return;
        }
}

/* The table whose values hold `at`, NULL if none. */
static const entry *addr_find(const dtb_solved *s, const dtb_value *at)
{
    size_t lo = 0, hi = s->naddr; /* the last entry that starts at or before at */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (s->by_addr[mid]->t.values <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const entry *en = s->by_addr[lo - 1];
    return (uint64_t)(at - en->t.values) < dtb_index_size(en->t.index) ? en : NULL;
}

static uint64_t long_slot(uint64_t idx, uint64_t cap)
{
    return ((idx + 1) * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

/* dtw of idx in m, -1 if not listed. Under the long lock. */
static int longmap_get(const longmap *m, uint64_t idx)
{
    if (!m->cap)
        return -1;
    for (uint64_t h = long_slot(idx, m->cap);; h = (h + 1) & (m->cap - 1)) {
        if (m->key[h] == idx + 1)
            return m->dtw[h];
        if (!m->key[h])
            return -1;
    }
}

static bool longmap_put(longmap *m, uint64_t idx, int dtw)
{
    if (2 * (m->n + 1) > m->cap) {
        longmap g = {.cap = m->cap ? 2 * m->cap : 1024};
        g.key = calloc(g.cap, sizeof *g.key);
        g.dtw = malloc(g.cap * sizeof *g.dtw);
        if (!g.key || !g.dtw) {
            free(g.key);
            free(g.dtw);
            return false;
        }
        for (uint64_t i = 0; i < m->cap; i++)
            if (m->key[i])
                longmap_put(&g, m->key[i] - 1, m->dtw[i]);
        free(m->key);
        free(m->dtw);
        *m = g;
    }
    uint64_t h = long_slot(idx, m->cap);
    while (m->key[h] && m->key[h] != idx + 1)
        h = (h + 1) & (m->cap - 1);
    m->n += !m->key[h];
    m->key[h] = idx + 1;
    m->dtw[h] = (uint16_t)dtw;
    return true;
}

int dtb_solved_byte_limit(const dtb_solved *s, bool win)
{
    return win && s->byte_max > DTB_VALUE_BYTE_WIN_MAX ? DTB_VALUE_BYTE_WIN_MAX : s->byte_max;
}

bool dtb_solved_store(const dtb_solved *cs, dtb_solved_table *t, uint64_t idx, bool win, int dtw)
{
    if (dtw <= dtb_solved_byte_limit(cs, win)) {
        t->values[idx] = win ? dtb_value_win(dtw) : dtb_value_loss(dtw);
        return true;
    }
    assert(dtw <= DTB_MAX_DTW);
    dtb_solved *s = (dtb_solved *)cs; /* the lists only */
    entry *en = (entry *)(void *)t;
    pthread_rwlock_wrlock(&s->long_lock);
    const bool ok = longmap_put(&en->longs, idx, dtw);
    pthread_rwlock_unlock(&s->long_lock);
    t->values[idx] = win ? DTB_VALUE_WIN_ESCAPE : DTB_VALUE_LOSS_ESCAPE;
    return ok;
}

bool dtb_solved_store_value(const dtb_solved *s, dtb_solved_table *t, uint64_t idx, dtb_wvalue v)
{
    if (v == DTB_WVALUE_DRAW) {
        t->values[idx] = DTB_VALUE_DRAW;
        return true;
    }
    return dtb_solved_store(s, t, idx, dtb_wvalue_is_win(v), dtb_wvalue_dtw(v));
}

/* The exact value of escape byte v at index idx of en. */
static dtb_wvalue escape_value(const dtb_solved *s, const entry *en, uint64_t idx, dtb_value v)
{
    const bool win = v == DTB_VALUE_WIN_ESCAPE;
    int dtw;
    if (en->file) {
        dtw = dtb_tablefile_long_dtw(en->file, idx);
    } else {
        pthread_rwlock_rdlock((pthread_rwlock_t *)&s->long_lock);
        dtw = longmap_get(&en->longs, idx);
        pthread_rwlock_unlock((pthread_rwlock_t *)&s->long_lock);
    }
    return dtw < 0 ? dtb_wvalue_of_byte(v) : dtb_wvalue_of(win, dtw);
}

dtb_wvalue dtb_solved_exact(const dtb_solved *s, const dtb_value *at)
{
    const dtb_value v = *at;
    if (!dtb_value_is_escape(v))
        return dtb_wvalue_of_byte(v);
    const dtb_value *pool = &s->pool[0][0];
    if (at >= pool && at < pool + 2 * (DTB_MAX_DTW + 1)) {
        const int off = (int)(at - pool);
        return off <= DTB_MAX_DTW ? dtb_wvalue_win(off) : dtb_wvalue_loss(off - (DTB_MAX_DTW + 1));
    }
    const entry *en = addr_find(s, at);
    return en ? escape_value(s, en, (uint64_t)(at - en->t.values), v) : dtb_wvalue_of_byte(v);
}

dtb_wvalue dtb_solved_exact_at(const dtb_solved *s, const dtb_solved_table *t, uint64_t idx)
{
    const dtb_value v = t->values[idx];
    return dtb_value_is_escape(v) ? escape_value(s, (const entry *)(const void *)t, idx, v)
                                  : dtb_wvalue_of_byte(v);
}

uint64_t dtb_solved_long_count(const dtb_solved *s, const dtb_solved_table *t)
{
    (void)s;
    return ((const entry *)(const void *)t)->longs.n;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

bool dtb_solved_long_list(const dtb_solved *s, const dtb_solved_table *t, uint64_t **idx,
                          uint16_t **dtw, uint64_t *n)
{
    (void)s;
    const longmap *m = &((const entry *)(const void *)t)->longs;
    *idx = NULL;
    *dtw = NULL;
    *n = 0;
    uint64_t k = 0;
    for (uint64_t i = 0; i < m->cap; i++) /* entries whose byte was stored over are stale */
        k += m->key[i] && dtb_value_is_escape(t->values[m->key[i] - 1]);
    if (!k)
        return true;
    uint64_t *ix = malloc(k * sizeof *ix);
    uint16_t *dt = malloc(k * sizeof *dt);
    if (!ix || !dt) {
        free(ix);
        free(dt);
        return false;
    }
    k = 0;
    for (uint64_t i = 0; i < m->cap; i++)
        if (m->key[i] && dtb_value_is_escape(t->values[m->key[i] - 1]))
            ix[k++] = m->key[i] - 1;
    qsort(ix, k, sizeof *ix, cmp_u64);
    for (uint64_t i = 0; i < k; i++)
        dt[i] = (uint16_t)longmap_get(m, ix[i]);
    *idx = ix;
    *dtw = dt;
    *n = k;
    return true;
}

static size_t captures_bytes(uint64_t n) { return (n / 64 + 1) * sizeof(uint64_t); }

/* Where a work file's capture bits start: after the values, aligned for the words. */
static size_t values_room(uint64_t n) { return (size_t)(n + 63) / 64 * 64; }

static void table_free(dtb_solved *s, entry *e)
{
    if (!e)
        return;
    const uint64_t n = e->t.index ? dtb_index_size(e->t.index) : 0;
    if (e->file) {
        dtb_tablefile_close(e->file);
        dtb_tablefile_close(e->results);
    } else if (e->sliced) {
        if (e->mapped) {
            dtb_work_unmap(e->t.values, e->mapped);
            close(e->fd);
        } else {
            if (e->t.values)
                munmap(e->t.values, values_room(n));
            if (e->t.captures)
                munmap(e->t.captures, captures_bytes(n));
        }
    } else if (e->mapped) {
        dtb_work_unmap(e->t.values, e->mapped);
        s->work_bytes -= e->mapped;
    } else {
        dtb_huge_free(e->t.values, n);
        dtb_huge_free(e->t.captures, captures_bytes(n));
    }
    dtb_index_free(e->t.index);
    free(e->longs.key);
    free(e->longs.dtw);
    free(e);
}

void dtb_solved_free(dtb_solved *s)
{
    if (!s)
        return;
    dtb_work_monitor_stop(s->monitor);
    for (size_t i = 0; i < sizeof s->slot / sizeof s->slot[0]; i++)
        table_free(s, s->slot[i]);
    for (int c = 0; c < MAX_CACHES; c++)
        if (s->cache[c]) {
            for (int k = 0; k < FILE_CACHE_BLOCKS; k++)
                free(s->cache[c]->block[k]);
            dtb_tablefile_ctx_free(s->cache[c]->ctx);
            free(s->cache[c]);
        }
    pthread_mutex_destroy(&s->lock);
    pthread_rwlock_destroy(&s->long_lock);
    free(s->by_addr);
    free(s);
}

/* The monitor's release: every work file's pages, under the lock (a table being dropped is not
 * touched after its unmapping). */
static void release_work(void *user)
{
    dtb_solved *s = user;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < sizeof s->slot / sizeof s->slot[0]; i++)
        if (s->slot[i] && s->slot[i]->mapped)
            dtb_work_release(s->slot[i]->t.values, s->slot[i]->mapped);
    pthread_mutex_unlock(&s->lock);
}

dtb_status dtb_solved_use_work_files(dtb_solved *s, const char *dir, uint64_t cap, dtb_error *e)
{
    s->work_dir = dir;
    if (cap && !s->monitor && !(s->monitor = dtb_work_monitor_start(cap, release_work, s)))
        return dtb_error_set(e, DTB_E_NOMEM, "cannot start the memory monitor");
    return DTB_OK;
}

void dtb_solved_work_stats(const dtb_solved *s, uint64_t *now, uint64_t *peak, uint64_t *releases)
{
    *now = s->work_bytes;
    *peak = s->work_peak;
    *releases = dtb_work_monitor_releases(s->monitor);
}

/* Sparse anonymous memory for a sliced table: reserved address space only (MAP_NORESERVE: the
 * system's overcommit check does not count it), pages taken when written. */
static void *sparse_memory(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Gives the new entry en of material m its values and capture bits: in memory, in a work file,
 * or (sliced) sparse in either. false with a message. */
static bool table_storage(dtb_solved *s, entry *en, dtb_material m, bool sliced, bool in_memory,
                          dtb_error *e)
{
    dtb_solved_table *t = &en->t;
    const uint64_t n = dtb_index_size(t->index);
    en->fd = -1;
    en->sliced = sliced;
    if (s->work_dir && !in_memory) {
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&m, name, sizeof name);
        const size_t len = values_room(n) + captures_bytes(n);
        dtb_status st;
        uint8_t *p = sliced ? dtb_work_map_sparse(s->work_dir, name, len, &en->fd, &st, e)
                            : dtb_work_map(s->work_dir, name, len, &st, e);
        if (!p)
            return false;
        t->values = p;
        t->captures = (uint64_t *)(void *)(p + values_room(n));
        en->mapped = len;
        return true;
    }
    if (sliced) {
        t->values = sparse_memory(values_room(n));
        t->captures = sparse_memory(captures_bytes(n));
    } else {
        t->values = dtb_huge_calloc(n);
        t->captures = dtb_huge_calloc(captures_bytes(n));
    }
    if (!t->values || !t->captures)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory for %llu positions",
                             (unsigned long long)n), false;
    return true;
}

static dtb_solved_table *add_table(dtb_solved *s, dtb_material m, bool sliced, bool in_memory,
                                   dtb_error *e)
{
    if (!fits(m))
        return dtb_error_set(e, DTB_E_RANGE, "material has more than %d pieces of one kind",
                             DTB_SOLVED_MAX_COUNT), NULL;
    entry **slot = &s->slot[slot_of(m)];
    if (*slot)
        return &(*slot)->t;
    entry *en = calloc(1, sizeof *en);
    if (!en)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory"), NULL;
    dtb_solved_table *t = &en->t;
    t->material = m;
    const dtb_status st = dtb_index_create(s->board, m, &t->index);
    if (st != DTB_OK) {
        free(en);
        return dtb_error_set(e, st, "cannot index the material"), NULL;
    }
    en->narrow = s->narrow && dtb_index_fast_get(t->index, &en->fast);
    if (!table_storage(s, en, m, sliced, in_memory, e)) {
        table_free(s, en);
        return NULL;
    }
    pthread_mutex_lock(&s->lock);
    if (!addr_insert(s, en)) {
        pthread_mutex_unlock(&s->lock);
        table_free(s, en);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory"), NULL;
    }
    *slot = en;
    if (!sliced) /* a sliced table's disk is counted as it is reserved, by its solve */
        s->work_bytes += en->mapped;
    if (s->work_bytes > s->work_peak)
        s->work_peak = s->work_bytes;
    pthread_mutex_unlock(&s->lock);
    return t;
}

dtb_solved_table *dtb_solved_add(dtb_solved *s, dtb_material m, dtb_error *e)
{
    return add_table(s, m, false, false, e);
}

dtb_solved_table *dtb_solved_add_sliced(dtb_solved *s, dtb_material m, bool in_memory, dtb_error *e)
{
    return add_table(s, m, true, in_memory, e);
}

dtb_status dtb_solved_reserve(const dtb_solved *s, const dtb_solved_table *t, uint64_t start,
                              uint64_t len, dtb_error *e)
{
    (void)s;
    const entry *en = (const entry *)(const void *)t;
    assert(en->sliced);
    if (!en->mapped || !len)
        return DTB_OK;
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&t->material, name, sizeof name);
    const uint64_t n = dtb_index_size(t->index), words = values_room(n);
    dtb_status st = dtb_work_reserve(en->fd, name, start, len, e);
    if (st == DTB_OK) /* the capture words of those positions */
        st = dtb_work_reserve(en->fd, name, words + start / 64 * 8, ((start + len - 1) / 64 - start / 64 + 1) * 8, e);
    return st;
}

void dtb_solved_release(const dtb_solved *s, const dtb_solved_table *t, uint64_t start,
                        uint64_t len)
{
    (void)s;
    const entry *en = (const entry *)(const void *)t;
    assert(en->sliced);
    if (!len)
        return;
    /* Capture bits: only the words wholly inside the range (a word shared with a live position
     * stays); the page rounding is done below. */
    const uint64_t w0 = (start + 63) / 64, w1 = (start + len) / 64;
    if (en->mapped) {
        const uint64_t words = values_room(dtb_index_size(t->index));
        dtb_work_punch(en->fd, t->values, start, len);
        if (w1 > w0)
            dtb_work_punch(en->fd, t->values, words + w0 * 8, (w1 - w0) * 8);
        return;
    }
    dtb_work_drop_pages(t->values, start, len);
    if (w1 > w0)
        dtb_work_drop_pages(t->captures, w0 * 8, (w1 - w0) * 8);
}

const dtb_solved_table *dtb_solved_find(const dtb_solved *s, dtb_material m)
{
    return fits(m) && s->slot[slot_of(m)] ? &s->slot[slot_of(m)]->t : NULL;
}

void dtb_solved_drop(dtb_solved *s, dtb_material m)
{
    if (!fits(m))
        return;
    pthread_mutex_lock(&s->lock);
    if (s->slot[slot_of(m)] && !s->slot[slot_of(m)]->file)
        addr_remove(s, s->slot[slot_of(m)]);
    table_free(s, s->slot[slot_of(m)]);
    s->slot[slot_of(m)] = NULL;
    pthread_mutex_unlock(&s->lock);
}

static const dtb_value lost = DTB_VALUE_LOST;

dtb_value dtb_solved_wld_as_dtw(unsigned wld)
{
    return wld == 1 ? dtb_value_win(1) : wld == 2 ? DTB_VALUE_LOST : DTB_VALUE_DRAW;
}

static dtb_status add_file(dtb_solved *s, dtb_material m, const char *path, dtb_metric metric,
                           dtb_error *e);

dtb_status dtb_solved_add_file(dtb_solved *s, dtb_material m, const char *path, dtb_error *e)
{
    return add_file(s, m, path, DTB_METRIC_DTW, e);
}

dtb_status dtb_solved_add_wld_file(dtb_solved *s, dtb_material m, const char *path, dtb_error *e)
{
    return add_file(s, m, path, DTB_METRIC_WLD, e);
}

static dtb_status add_file(dtb_solved *s, dtb_material m, const char *path, dtb_metric metric,
                           dtb_error *e)
{
    if (!fits(m))
        return dtb_error_set(e, DTB_E_RANGE, "material has more than %d pieces of one kind",
                             DTB_SOLVED_MAX_COUNT);
    entry **slot = &s->slot[slot_of(m)];
    if (*slot)
        return DTB_OK;
    entry *en = calloc(1, sizeof *en);
    if (!en)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    en->t.material = m;
    dtb_status st = dtb_index_create(s->board, m, &en->t.index);
    if (st != DTB_OK) {
        free(en);
        return dtb_error_set(e, st, "cannot index the material");
    }
    en->narrow = false; /* no values to index inline: every lookup takes lookup_slow */
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&m, name, sizeof name);
    const dtb_tablefile_expect want = {
        .variant = s->board->variant->name,
        .material = name,
        .metric = metric,
        .index_version = DTB_INDEX_VERSION,
        .value_encoding = dtb_encoding_of(metric),
        .positions = dtb_index_size(en->t.index),
    };
    en->wld = metric == DTB_METRIC_WLD;
    st = dtb_tablefile_open(path, &want, &en->file, e);
    const uint32_t flags = st == DTB_OK ? dtb_tablefile_get_info(en->file)->flags : 0;
    if (st == DTB_OK && flags && flags != DTB_TABLE_LOSSES) {
        st = dtb_error_set(e, DTB_E_MISMATCH, "%s: a compact set's table; building needs the full set", path);
    }
    /* A losses-only DTW table: its quiet positions' results come from the WLD table beside it,
     * <material>.wld. */
    char wpath[4096];
    const size_t len = strlen(path);
    if (st == DTB_OK && flags == DTB_TABLE_LOSSES) {
        if (len < 4 || len >= sizeof wpath || strcmp(path + len - 4, ".dtw") != 0) {
            st = dtb_error_set(e, DTB_E_INVALID, "%s: a losses-only DTW table not named .dtw: "
                               "where is its WLD table?", path);
        } else {
            memcpy(wpath, path, len - 3);
            memcpy(wpath + len - 3, "wld", 4);
            const dtb_tablefile_expect wwant = {
                .variant = want.variant,
                .material = name,
                .metric = DTB_METRIC_WLD,
                .index_version = DTB_INDEX_VERSION,
                .value_encoding = dtb_encoding_of(DTB_METRIC_WLD),
                .positions = want.positions,
            };
            st = access(wpath, F_OK) != 0
                     ? dtb_error_set(e, DTB_E_NOTFOUND, "%s: no such table (the losses-only %s "
                                     "takes its wins and draws from it)", wpath, path)
                     : dtb_tablefile_open(wpath, &wwant, &en->results, e);
            if (st == DTB_OK && dtb_tablefile_get_info(en->results)->flags)
                st = dtb_error_set(e, DTB_E_MISMATCH, "%s: a compact set's table; building needs "
                                   "the full set", wpath);
        }
    }
    if (st != DTB_OK) {
        table_free(s, en);
        return st;
    }
    pthread_mutex_lock(&s->lock);
    if (en->results)
        en->results_serial = ++s->next_serial;
    en->serial = ++s->next_serial;
    *slot = en;
    pthread_mutex_unlock(&s->lock);
    return DTB_OK;
}

bool dtb_solved_is_file(const dtb_solved_table *t) { return ((const entry *)(const void *)t)->file != NULL; }

dtb_status dtb_solved_read_status(const dtb_solved *s, dtb_error *e)
{
    if (!__atomic_load_n(&s->read_failed, __ATOMIC_ACQUIRE))
        return DTB_OK;
    if (e)
        *e = s->read_error;
    return s->read_status;
}

uint64_t dtb_solved_file_reads(const dtb_solved *s)
{
    uint64_t n = 0;
    for (int c = 0; c < MAX_CACHES; c++)
        if (s->cache[c])
            n += s->cache[c]->reads;
    return n;
}

/* Records the first failure to read a table file (dtb_solved_read_status). */
static void read_failed(const dtb_solved *cs, dtb_status st, const dtb_error *err)
{
    dtb_solved *s = (dtb_solved *)cs; /* the failure record only */
    pthread_mutex_lock(&s->lock);
    if (!s->read_failed) {
        s->read_error = *err;
        s->read_status = st;
        __atomic_store_n(&s->read_failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&s->lock);
}

/* The byte at index idx of table file tf (serial: its name in the caches; wld: mapped as
 * dtb_solved_wld_as_dtw): its block from this thread's cache, or decoded into it. A read
 * failure is recorded (dtb_solved_read_status) and reads as a draw. */
static dtb_value file_byte(const dtb_solved *cs, const dtb_tablefile *tf, uint64_t serial,
                           bool wld, uint64_t idx)
{
    dtb_solved *s = (dtb_solved *)cs; /* the caches and the failure record only */
    const int c = omp_get_thread_num();
    assert(c < MAX_CACHES);
    file_cache *fc = s->cache[c];
    if (!fc && !(fc = s->cache[c] = calloc(1, sizeof *fc)))
        goto fail_nomem;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    const uint64_t blk = idx / info->block_positions, key = (serial << 32 | blk) + 1;
    const int h = (int)((key * 0x9E3779B97F4A7C15ull) >> (64 - FILE_CACHE_BITS));
    if (fc->key[h] != key) {
        if (!fc->ctx && !(fc->ctx = dtb_tablefile_ctx_create()))
            goto fail_nomem;
        fc->key[h] = 0;
        const uint64_t len = dtb_tablefile_block_len(tf, blk);
        if (fc->cap[h] < len) {
            uint8_t *grown = realloc(fc->block[h], len);
            if (!grown)
                goto fail_nomem;
            fc->block[h] = grown;
            fc->cap[h] = len;
        }
        dtb_error err;
        const dtb_status st = dtb_tablefile_read_block(tf, blk, fc->block[h], len, fc->ctx, &err);
        if (st != DTB_OK) {
            read_failed(s, st, &err);
            return DTB_VALUE_DRAW;
        }
        if (wld) /* the cache holds value bytes: the results, with stand-in distances */
            for (uint64_t i = 0; i < len; i++)
                fc->block[h][i] = dtb_solved_wld_as_dtw(fc->block[h][i]);
        fc->key[h] = key;
        fc->reads++;
    }
    return fc->block[h][idx % info->block_positions];
fail_nomem:;
    dtb_error err;
    read_failed(s, dtb_error_set(&err, DTB_E_NOMEM, "out of memory for a table file's blocks"), &err);
    return DTB_VALUE_DRAW;
}

/* The value byte at index idx of a table read from its file (file_byte). */
static dtb_value file_read(const dtb_solved *s, const entry *en, uint64_t idx)
{
    return file_byte(s, en->file, en->serial, en->wld, idx);
}

static const dtb_value *value_after_slot(const dtb_solved *s, const dtb_pos *p, const dtb_move *m,
                                         dtb_value *slot);

/* How good exact value v (for the side to move) is for it: shorter wins, then draws, then longer
 * losses (the order of exits_value in gen/solve.c). */
static int goodness(dtb_wvalue v)
{
    return dtb_wvalue_is_win(v) ? 65536 - dtb_wvalue_dtw(v) : v == DTB_WVALUE_DRAW ? 0 : dtb_wvalue_dtw(v) - 65536;
}

/* Where exact value v is, for a table read from its file: in *slot when the registry's byte
 * holds it, else in the pool, as an escape: the solver orders exits by their bytes, and an
 * escape must lie beyond every byte of its kind (a lowered byte limit makes distances a byte
 * could hold escapes in the tables in memory). */
static const dtb_value *slot_or_pool(const dtb_solved *s, dtb_wvalue v, dtb_value *slot)
{
    const int dtw = dtb_wvalue_dtw(v);
    if (v == DTB_WVALUE_DRAW || dtw <= dtb_solved_byte_limit(s, dtb_wvalue_is_win(v))) {
        *slot = v == DTB_WVALUE_DRAW ? DTB_VALUE_DRAW : dtb_value_of(dtb_wvalue_is_win(v), dtw);
        return slot;
    }
    return &s->pool[dtb_wvalue_is_win(v) ? 0 : 1][dtw];
}

static const dtb_value *file_value(const dtb_solved *s, const entry *en, uint64_t idx,
                                   const dtb_pos *w, dtb_value *slot, bool shallow);
static inline const entry *entry_of(const dtb_solved *s, int cwk, int cwm, int cbk, int cbm);

/* The value slot of position q (either side to move) for a search of a losses-only table's
 * win (file_value): looked up as the solver does, but shallow (see file_value). */
static const dtb_value *search_lookup(const dtb_solved *s, const dtb_pos *q, dtb_value *slot)
{
    dtb_pos w;
    if (q->side == DTB_WHITE)
        w = *q;
    else
        dtb_pos_flip(s->board, q, &w);
    if (!(w.men[DTB_WHITE] | w.kings[DTB_WHITE]))
        return &lost;
    const entry *en = entry_of(s, dtb_bb_count(w.kings[DTB_WHITE]), dtb_bb_count(w.men[DTB_WHITE]),
                               dtb_bb_count(w.kings[DTB_BLACK]), dtb_bb_count(w.men[DTB_BLACK]));
    const uint64_t idx = dtb_index_of(en->t.index, &w);
    return en->file ? file_value(s, en, idx, &w, slot, true) : &en->t.values[idx];
}

/* A quiet position w (index idx) of a losses-only table read from its file (docs/FORMAT.md
 * §8.7): a draw or a loss as its WLD and DTW tables say; a win one ply more than its shortest
 * move to a lost position, unless shallow: then "a win" (a stand-in). A search for a win looks
 * its successors up shallow, since the opponent's wins, stand-ins or not, are never the move
 * it takes; searched in turn, two wins of a pair would search each other for ever. Capture
 * successors are resolved exactly, in smaller materials. Files that disagree with each other
 * or with the game are recorded (dtb_solved_read_status) and read as draws. */
static const dtb_value *losses_only_value(const dtb_solved *s, const entry *en, uint64_t idx,
                                          const dtb_pos *w, dtb_value *slot, bool shallow)
{
    const dtb_value r = file_byte(s, en->results, en->results_serial, false, idx);
    dtb_error err;
    *slot = DTB_VALUE_DRAW;
    if (r == 0)
        return slot;
    if (r == 2) {
        const dtb_value v = file_read(s, en, idx);
        if (dtb_value_is_loss(v)) {
            if (dtb_value_is_escape(v))
                return slot_or_pool(s, escape_value(s, en, idx, v), slot);
            *slot = v;
            return slot;
        }
    }
    if (r == 1 && shallow) {
        *slot = dtb_value_win(1);
        return slot;
    }
    int best = INT_MAX;
    if (r == 1) {
        dtb_movelist ml;
        const dtb_status st = dtb_generate(s->board, w, &ml);
        assert(st == DTB_OK);
        (void)st;
        for (int i = 0; i < ml.count; i++) {
            dtb_pos q;
            dtb_make_move(w, &ml.moves[i], &q);
            dtb_value tmp;
            const dtb_wvalue v = dtb_solved_exact(s, search_lookup(s, &q, &tmp));
            if (dtb_wvalue_is_loss(v) && dtb_wvalue_dtw(v) + 1 < best)
                best = dtb_wvalue_dtw(v) + 1;
        }
        if (best <= DTB_MAX_DTW)
            return slot_or_pool(s, dtb_wvalue_win(best), slot);
    }
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&en->t.material, name, sizeof name);
    read_failed(s, dtb_error_set(&err, DTB_E_CORRUPT, "%s: position %llu: %s", name,
                                 (unsigned long long)idx,
                                 r == 2   ? "a loss in its WLD table, not in its DTW table"
                                 : r == 1 ? "a win in its WLD table without a move to a lost position"
                                          : "an invalid WLD value"),
                &err);
    return slot;
}

/* The value of white-to-move position w of a table read from its file, at index idx: stored,
 * or for a capture position (don't-care in files) the best of its captures, as loading would
 * derive it; a losses-only table's quiet position as losses_only_value says (shallow: there). */
static __attribute__((noinline)) const dtb_value *file_value(const dtb_solved *s, const entry *en,
                                                            uint64_t idx, const dtb_pos *w,
                                                            dtb_value *slot, bool shallow)
{
    assert(slot && "a table read from its file is read through a slot");
    dtb_movelist ml;
    const dtb_status st = dtb_generate_captures(s->board, w, &ml);
    assert(st == DTB_OK);
    (void)st;
    if (ml.count == 0 && en->results)
        return losses_only_value(s, en, idx, w, slot, shallow);
    if (ml.count == 0) {
        const dtb_value v = file_read(s, en, idx);
        if (dtb_value_is_escape(v))
            return slot_or_pool(s, escape_value(s, en, idx, v), slot);
        *slot = v;
        return slot;
    }
    int best = INT32_MIN;
    dtb_wvalue bestv = DTB_WVALUE_DRAW;
    for (int i = 0; i < ml.count; i++) {
        dtb_value tmp;
        const dtb_wvalue v = dtb_wvalue_parent(dtb_solved_exact(s, value_after_slot(s, w, &ml.moves[i], &tmp)));
        if (goodness(v) > best) {
            best = goodness(v);
            bestv = v;
        }
    }
    return slot_or_pool(s, bestv, slot);
}

/* Four sets in words mirrored in place (dtb_reverse64(x) >> (64 - squares) each): one vector
 * where there is AVX2. */
static inline void mirror_words(int squares, uint64_t x[4])
{
#if defined(__AVX2__)
    _mm256_storeu_si256((__m256i *)(void *)x,
                        dtb_mirror4(_mm256_loadu_si256((const __m256i *)(const void *)x), squares));
#else
    for (int i = 0; i < 4; i++)
        x[i] = dtb_reverse64(x[i]) >> (64 - squares);
#endif
}

/* Out of line, rare: a table without the inline index, or read from its file. */
static __attribute__((noinline)) const dtb_value *lookup_slow(const dtb_solved *s, const entry *en,
                                                             uint64_t wm, uint64_t bm, uint64_t wk,
                                                             uint64_t bk, bool flipped, dtb_value *slot)
{
    uint64_t x[4] = {wm, bm, wk, bk};
    if (flipped)
        mirror_words(s->board->squares, x);
    const dtb_pos w = {.men = {x[0], x[1]}, .kings = {x[2], x[3]}, .side = DTB_WHITE};
    const uint64_t idx = dtb_index_of(en->t.index, &w);
    if (en->file)
        return file_value(s, en, idx, &w, slot, false);
    return &en->t.values[idx];
}

/* The table of the white-to-move material with these piece counts. */
static inline const entry *entry_of(const dtb_solved *s, int cwk, int cwm, int cbk, int cbm)
{
    const entry *en = cwk <= DTB_SOLVED_MAX_COUNT && cwm <= DTB_SOLVED_MAX_COUNT &&
                              cbk <= DTB_SOLVED_MAX_COUNT && cbm <= DTB_SOLVED_MAX_COUNT
                          ? s->slot[((cwk * SLOTS + cwm) * SLOTS + cbk) * SLOTS + cbm]
                          : NULL;
    assert(en && "exit into a material that is not solved");
    return en;
}

/* The value slot of the white-to-move position with these sets (words, boards of up to 64
 * squares), or, when `flipped`, of their mirror image (a black-to-move position with its colours
 * swapped: the mirror is left to dtb_index_fast_of_flipped). The slot from four popcounts (the
 * mirror keeps them), the index inline when the table has it. Tables read from their files
 * answer in *slot. */
static inline __attribute__((always_inline)) const dtb_value *
lookup_narrow(const dtb_solved *s, uint64_t wm, uint64_t bm, uint64_t wk, uint64_t bk, bool flipped,
              dtb_value *slot)
{
    if (!(wm | wk))
        return &lost;
    const entry *en = entry_of(s, __builtin_popcountll(wk), __builtin_popcountll(wm),
                               __builtin_popcountll(bk), __builtin_popcountll(bm));
    if (!en->narrow) /* also every table read from its file */
        return lookup_slow(s, en, wm, bm, wk, bk, flipped, slot);
    return &en->t.values[flipped ? dtb_index_fast_of_flipped(&en->fast, wm, bm, wk, bk)
                                 : dtb_index_fast_of(&en->fast, wm, bm, wk, bk)];
}

/* The narrow path: the four sets as words (the side to move's men, its opponent's, then the
 * kings likewise), flipped when black is to move. */
static const dtb_value *value_at_narrow(const dtb_solved *s, const dtb_pos *p, dtb_value *slot)
{
    const int own = p->side, opp = own ^ 1;
    const uint64_t om = (uint64_t)p->men[own], xm = (uint64_t)p->men[opp];
    const uint64_t ok = (uint64_t)p->kings[own], xk = (uint64_t)p->kings[opp];
    if (own != DTB_WHITE)
        return lookup_narrow(s, om, xm, ok, xk, true, slot);
    return lookup_narrow(s, om, xm, ok, xk, false, slot);
}

/* dtb_make_move in words, then the lookup. After the move the opponent of p's side is to move:
 * its sets are the white ones of the stored position, flipped when it is black. */
static const dtb_value *value_after_narrow(const dtb_solved *s, const dtb_pos *p, const dtb_move *m,
                                           dtb_value *slot)
{
    const dtb_color side = p->side, opp = (dtb_color)(side ^ 1);
    uint64_t own_m = (uint64_t)p->men[side], own_k = (uint64_t)p->kings[side];
    uint64_t opp_m = (uint64_t)p->men[opp], opp_k = (uint64_t)p->kings[opp];
    dtb_make_move64(m, &own_m, &own_k, &opp_m, &opp_k);
    if (side == DTB_WHITE) /* black to move */
        return lookup_narrow(s, opp_m, own_m, opp_k, own_k, true, slot);
    return lookup_narrow(s, opp_m, own_m, opp_k, own_k, false, slot);
}

/* lookup_narrow for boards of more than 64 squares, from the four sets by value: copying a
 * position just written in 8-byte halves with 16-byte loads stalled on every lookup. */
static const dtb_value *lookup_wide(const dtb_solved *s, dtb_bb wm, dtb_bb bm, dtb_bb wk, dtb_bb bk,
                                    bool flipped, dtb_value *slot)
{
    if (!(wm | wk))
        return &lost;
    if (flipped) {
        const dtb_board *b = s->board;
        wm = dtb_bb_reverse(b, wm), bm = dtb_bb_reverse(b, bm);
        wk = dtb_bb_reverse(b, wk), bk = dtb_bb_reverse(b, bk);
    }
    const entry *en = entry_of(s, dtb_bb_count(wk), dtb_bb_count(wm), dtb_bb_count(bk), dtb_bb_count(bm));
    const dtb_pos w = {.men = {wm, bm}, .kings = {wk, bk}, .side = DTB_WHITE};
    const uint64_t idx = dtb_index_of(en->t.index, &w);
    if (en->file)
        return file_value(s, en, idx, &w, slot, false);
    return &en->t.values[idx];
}

/* The side to move's sets first, flipped when black is to move, as value_at_narrow. Out of
 * line: inlined, its loads of the full sets were hoisted in front of the narrow path. */
static __attribute__((noinline)) const dtb_value *value_at_wide(const dtb_solved *s,
                                                               const dtb_pos *p, dtb_value *slot)
{
    const int own = p->side, opp = own ^ 1;
    return lookup_wide(s, p->men[own], p->men[opp], p->kings[own], p->kings[opp], own != DTB_WHITE,
                       slot);
}

/* value_after_narrow for boards of more than 64 squares. */
static __attribute__((noinline)) const dtb_value *value_after_wide(const dtb_solved *s,
                                                                  const dtb_pos *p,
                                                                  const dtb_move *m,
                                                                  dtb_value *slot)
{
    dtb_pos q; /* local, so its sets stay in registers */
    dtb_make_move(p, m, &q);
    const int own = q.side, opp = own ^ 1;
    return lookup_wide(s, q.men[own], q.men[opp], q.kings[own], q.kings[opp], own != DTB_WHITE, slot);
}

static const dtb_value *value_after_slot(const dtb_solved *s, const dtb_pos *p, const dtb_move *m,
                                         dtb_value *slot)
{
    if (s->narrow)
        return value_after_narrow(s, p, m, slot);
    return value_after_wide(s, p, m, slot);
}

const dtb_value *dtb_solved_value_after(const dtb_solved *s, const dtb_pos *p, const dtb_move *m,
                                        dtb_value *slot)
{
    return value_after_slot(s, p, m, slot);
}

static const dtb_value *value_at_slot(const dtb_solved *s, const dtb_pos *p, dtb_value *slot)
{
    if (s->narrow)
        return value_at_narrow(s, p, slot);
    return value_at_wide(s, p, slot);
}

const dtb_value *dtb_solved_value_at(const dtb_solved *s, const dtb_pos *p, dtb_value *slot)
{
    return value_at_slot(s, p, slot);
}

dtb_value dtb_solved_value(const dtb_solved *s, const dtb_pos *p)
{
    dtb_value slot;
    return *value_at_slot(s, p, &slot);
}

const dtb_board *dtb_solved_board(const dtb_solved *s) { return s->board; }
