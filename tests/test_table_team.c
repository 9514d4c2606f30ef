/* dtb_table_write_team (gen/tablewrite.h): a table written by a team of ranks, each compressing
 * the blocks of its own range, has the same bytes as one process's dtb_table_write_source of the
 * same values; a frame damaged on its way to rank 0 and ranges that do not start at a file block
 * are refused. The ranks are threads here, their messages queues in memory (the MPI build's
 * team is tested under mpiexec by tests/mpi_test.sh). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tablewrite.h"

enum { RANKS_MAX = 6, BP = 4096 };

/* The table: DTW-like bytes in runs, every 7th position of some stretches don't-care; a rank
 * with only the last blocks would pick a narrower width alone. */
typedef struct table {
    uint8_t *v;
    uint64_t *dc;
    uint64_t n;
} table;

static table make_table(uint64_t n)
{
    table t = {malloc(n), calloc((n + 63) / 64, 8), n};
    uint64_t x = 88172645463325252ull;
    uint8_t cur = 3;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 29 == 0)
            cur = (uint8_t)(x >> 20) % 60;
        t.v[i] = i >= 30 * BP ? cur % 4 : cur; /* the last blocks fit 2 bits, the rest 8 */
        if ((i / 1000) % 3 == 1 && i % 7 == 0)
            t.dc[i / 64] |= 1ull << (i % 64);
    }
    return t;
}

/* A source over the table that fails when asked for a position outside [lo, hi): a rank's
 * source holds its range only. */
typedef struct ranged {
    const table *t;
    uint64_t lo, hi;
} ranged;

static const char *ranged_read(void *user, void **state, uint64_t start, size_t len,
                               uint8_t *values, uint64_t *dontcare)
{
    (void)state;
    const ranged *r = user;
    if (start < r->lo || start + len > r->hi)
        return "asked for another rank's positions";
    memcpy(values, r->t->v + start, len);
    for (size_t i = 0; i < len; i++)
        if (r->t->dc[(start + i) / 64] >> ((start + i) % 64) & 1)
            dontcare[i / 64] |= 1ull << (i % 64);
    return NULL;
}

/* The team's meeting place: a reduce by barrier, one queue of messages a rank to rank 0. */
typedef struct msg {
    uint8_t *bytes;
    uint64_t len;
    struct msg *next;
} msg;

typedef struct hub {
    int ranks;
    pthread_barrier_t barrier;
    pthread_mutex_t lock;
    pthread_cond_t posted;
    uint64_t slot[RANKS_MAX][8];
    msg *head[RANKS_MAX], *tail[RANKS_MAX];
    int damage_rank; /* this rank's second message has a byte flipped (0: none) */
    int sent[RANKS_MAX];
} hub;

typedef struct member {
    hub *h;
    int rank;
} member;

static dtb_status hub_reduce(void *ctx, uint64_t *v, int n, bool max, dtb_error *e)
{
    (void)e;
    member *m = ctx;
    hub *h = m->h;
    memcpy(h->slot[m->rank], v, (size_t)n * 8);
    pthread_barrier_wait(&h->barrier);
    for (int i = 0; i < n; i++) {
        uint64_t r = 0;
        for (int q = 0; q < h->ranks; q++)
            r = max ? (h->slot[q][i] > r ? h->slot[q][i] : r) : r + h->slot[q][i];
        v[i] = r;
    }
    pthread_barrier_wait(&h->barrier); /* every rank read the slots before they are reused */
    return DTB_OK;
}

static dtb_status hub_send(void *ctx, const uint8_t *buf, uint64_t len, dtb_error *e)
{
    member *m = ctx;
    hub *h = m->h;
    msg *x = malloc(sizeof *x);
    if (!x || !(x->bytes = malloc(len ? len : 1)))
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    memcpy(x->bytes, buf, len);
    x->len = len;
    x->next = NULL;
    pthread_mutex_lock(&h->lock);
    if (m->rank == h->damage_rank && ++h->sent[m->rank] == 2)
        x->bytes[len / 2] ^= 0x40;
    if (h->tail[m->rank])
        h->tail[m->rank]->next = x;
    else
        h->head[m->rank] = x;
    h->tail[m->rank] = x;
    pthread_cond_broadcast(&h->posted);
    pthread_mutex_unlock(&h->lock);
    return DTB_OK;
}

static dtb_status hub_recv(void *ctx, int from, uint8_t *buf, uint64_t len, dtb_error *e)
{
    hub *h = ((member *)ctx)->h;
    pthread_mutex_lock(&h->lock);
    while (!h->head[from])
        pthread_cond_wait(&h->posted, &h->lock);
    msg *x = h->head[from];
    h->head[from] = x->next;
    if (!h->head[from])
        h->tail[from] = NULL;
    pthread_mutex_unlock(&h->lock);
    const bool ok = x->len == len;
    if (ok)
        memcpy(buf, x->bytes, len);
    free(x->bytes);
    free(x);
    return ok ? DTB_OK : dtb_error_set(e, DTB_E_IO, "a message of the wrong length");
}

typedef struct run {
    member me;
    const table *t;
    const uint64_t *starts;
    const char *path;
    dtb_table_write_options o;
    dtb_status status;
    dtb_error err;
} run;

static void *rank_main(void *arg)
{
    run *r = arg;
    ranged src_range = {r->t, r->starts[r->me.rank], r->starts[r->me.rank + 1]};
    const dtb_table_source src = {.read = ranged_read, .user = &src_range};
    const dtb_table_team team = {.rank = r->me.rank, .ranks = r->me.h->ranks,
                                 .starts = r->starts, .reduce = hub_reduce, .send = hub_send,
                                 .recv = hub_recv, .ctx = &r->me};
    r->status = dtb_table_write_team(r->path, &r->o, &src, r->t->n, -1, &team, NULL, &r->err);
    return NULL;
}

static dtb_table_write_options options(void)
{
    dtb_table_write_options o = dtb_table_write_defaults();
    o.variant = "international";
    o.gametype = 20;
    o.material = "KKvK"; /* tiling candidates: index order and 48 columns */
    o.metric = DTB_METRIC_DTW;
    o.index_version = 1;
    o.value_encoding = 1;
    o.dontcare_kind = DTB_DONTCARE_CAPTURES;
    o.block_positions = BP;
    o.zstd_level = 3;
    o.threads = 1;
    return o;
}

/* Rank 0's status; every rank's in st[]. */
static dtb_status team_write(const table *t, int ranks, const uint64_t *starts, const char *path,
                             int damage_rank, dtb_status st[RANKS_MAX])
{
    hub h = {.ranks = ranks, .damage_rank = damage_rank};
    pthread_barrier_init(&h.barrier, NULL, (unsigned)ranks);
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.posted, NULL);
    run r[RANKS_MAX];
    pthread_t th[RANKS_MAX];
    for (int q = 0; q < ranks; q++) {
        r[q] = (run){.me = {&h, q}, .t = t, .starts = starts, .path = path, .o = options()};
        assert_int_equal(pthread_create(&th[q], NULL, rank_main, &r[q]), 0);
    }
    for (int q = 0; q < ranks; q++) {
        pthread_join(th[q], NULL);
        st[q] = r[q].status;
    }
    for (int q = 0; q < ranks; q++)
        while (h.head[q]) {
            msg *x = h.head[q];
            h.head[q] = x->next;
            free(x->bytes);
            free(x);
        }
    pthread_barrier_destroy(&h.barrier);
    pthread_mutex_destroy(&h.lock);
    pthread_cond_destroy(&h.posted);
    if (st[0] != DTB_OK)
        print_message("rank 0: %s\n", r[0].err.msg);
    return st[0];
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*len ? *len : 1);
    if (b && fread(b, 1, *len, f) != *len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static char dir[] = "/tmp/dtb_team_XXXXXX";

static void same_bytes_any_team(void **state)
{
    (void)state;
    const uint64_t n = 37 * BP + 1000; /* a short last block */
    table t = make_table(n);
    char one[256], many[256];
    snprintf(one, sizeof one, "%s/one.dtw", dir);
    snprintf(many, sizeof many, "%s/many.dtw", dir);
    dtb_table_write_options o = options();
    ranged all = {&t, 0, n};
    const dtb_table_source src = {.read = ranged_read, .user = &all};
    dtb_error err;
    assert_int_equal(dtb_table_write_source(one, &o, &src, n, -1, NULL, &err), DTB_OK);
    size_t len1;
    uint8_t *want = slurp(one, &len1);
    assert_non_null(want);
    /* ranges: even, uneven, one empty, rank 0 empty, the last a short block alone */
    const struct {
        int ranks;
        uint64_t starts[RANKS_MAX + 1];
    } cases[] = {
        {1, {0, n}},
        {2, {0, 19 * BP, n}},
        {3, {0, 2 * BP, 30 * BP, n}},
        {4, {0, 10 * BP, 10 * BP, 11 * BP, n}},
        {3, {0, 0, 37 * BP, n}},
        {6, {0, BP, 5 * BP, 6 * BP, 20 * BP, 36 * BP, n}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dtb_status st[RANKS_MAX];
        unlink(many);
        assert_int_equal(team_write(&t, cases[c].ranks, cases[c].starts, many, 0, st), DTB_OK);
        for (int q = 0; q < cases[c].ranks; q++)
            assert_int_equal(st[q], DTB_OK);
        size_t len2;
        uint8_t *got = slurp(many, &len2);
        assert_non_null(got);
        assert_int_equal(len2, len1);
        assert_memory_equal(got, want, len1);
        free(got);
    }
    free(want);
    unlink(one);
    unlink(many);
    free(t.v);
    free(t.dc);
}

static void damaged_frame_refused(void **state)
{
    (void)state;
    const uint64_t n = 12 * BP;
    table t = make_table(n);
    char path[256];
    snprintf(path, sizeof path, "%s/bad.dtw", dir);
    const uint64_t starts[3] = {0, 4 * BP, n};
    dtb_status st[RANKS_MAX];
    assert_int_equal(team_write(&t, 2, starts, path, 1, st), DTB_E_IO);
    assert_int_equal(access(path, F_OK), -1); /* nothing written */
    free(t.v);
    free(t.dc);
}

static void ranges_off_blocks_refused(void **state)
{
    (void)state;
    const uint64_t n = 8 * BP;
    table t = make_table(n);
    char path[256];
    snprintf(path, sizeof path, "%s/off.dtw", dir);
    const uint64_t starts[3] = {0, 3 * BP + 64, n};
    dtb_status st[RANKS_MAX];
    assert_int_equal(team_write(&t, 2, starts, path, 0, st), DTB_E_INVALID);
    assert_int_equal(st[1], DTB_E_INVALID);
    assert_int_equal(access(path, F_OK), -1);
    free(t.v);
    free(t.dc);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_bytes_any_team),
        cmocka_unit_test(damaged_frame_refused),
        cmocka_unit_test(ranges_off_blocks_refused),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return failed;
}
