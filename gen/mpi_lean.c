/* A kings-only pair split between the ranks of an MPI build (gen/mpi_job.h): its one unit solved
 * lean by every rank at once (dtb_solve_pair_lean_shared), each rank owning a range of whole
 * file blocks of each member's positions, which it keeps: the pair's tables are written by every
 * rank together, each compressing its own blocks (dtb_table_write_team through
 * dtb_build_write_pair), so rank 0 never holds the pair's values but its own range. A build
 * that needs the whole pair's values (MTC tables) has rank 0 take every range into its tables.
 *
 * The share's collectives are MPI's, made from the main thread (MPI_THREAD_FUNNELED: the lean
 * solve calls them from its master thread): the bytes of a level's resolved positions go from
 * every rank to every other one (their lengths by MPI_Allgather, the bytes by one compressed
 * message each way a pair of ranks), and the level's agreement is an MPI_Allreduce;
 * non-blocking, waited for with naps (a waiting rank leaves its core to the others). A rank that dies inside a collective
 * is the launcher's to report: the others wait in it until the job is ended. */
#include "mpi_job.h"

#include <stdlib.h>

typedef struct lean_ctx {
    dtb_mpi *m;
} lean_ctx;

static dtb_status lean_allgather(void *ctx, const uint8_t *mine, uint64_t len, uint8_t **theirs,
                                 uint64_t *lens, dtb_error *e)
{
    dtb_mpi *m = ((lean_ctx *)ctx)->m;
    const int N = m->size, me = m->rank;
    const double started = dtb_mpi_now();
    MPI_Request req;
    bool late = false; /* never: no deadline (a dead rank is the launcher's to report) */
    int err = MPI_Iallgather(&len, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, m->comm, &req);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_wait(&req, 0, &late);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, me, err, "gathering the lengths of a level's positions");
    lens[me] = 0;
    dtb_mpi_zmsg *msg = calloc((size_t)N * 2, sizeof *msg); /* compressed */
    if (!msg)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    dtb_status rc = DTB_OK;
    for (int q = 0; q < N && rc == DTB_OK; q++) {
        if (q == me)
            continue;
        err = MPI_SUCCESS;
        if (lens[q] && !(theirs[q] = malloc(lens[q]))) {
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
            break;
        }
        if (lens[q])
            err = dtb_mpi_zrecv(theirs[q], lens[q], q, TAG_LEAN, m->comm, &msg[q]);
        if (err == MPI_SUCCESS && len)
            err = dtb_mpi_zsend(mine, len, q, TAG_LEAN, m->comm, &msg[N + q]);
        if (err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, q, err, "exchanging a level's positions");
    }
    for (size_t x = 0; x < (size_t)N * 2; x++) {
        const int q = (int)(x % (size_t)N), werr = dtb_mpi_zwait(&msg[x]);
        if (rc == DTB_OK && werr != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, q, werr, "exchanging a level's positions");
        const bool sent = x >= (size_t)N;
        if (q != me && (sent ? len : lens[q]))
            dtb_mpi_count(m, q, sent, &msg[x]);
    }
    free(msg);
    m->traffic.exchange_seconds += me == 0 ? dtb_mpi_now() - started : 0;
    return rc;
}

static dtb_status lean_max(void *ctx, int64_t *v, int n, dtb_error *e)
{
    return dtb_mpi_allreduce(((lean_ctx *)ctx)->m, v, n, MPI_INT64_T, MPI_MAX,
                             "agreeing on a level", e);
}

/* The members of kings-only pair mt (1 or 2 tables: t[1] NULL for its own flip), added to s:
 * sliced on the other ranks (pages are taken only as their range is written), whole on rank 0. */
static dtb_status pair_tables(dtb_solved *s, dtb_material mt, bool sliced,
                              dtb_solved_table *t[2], dtb_error *e)
{
    const dtb_material ms[2] = {mt, dtb_material_flip(mt)};
    const bool self = dtb_material_equal(&ms[0], &ms[1]);
    t[1] = NULL;
    for (int k = 0; k < (self ? 1 : 2); k++) {
        t[k] = sliced ? dtb_solved_add_sliced(s, ms[k], false, e) : dtb_solved_add(s, ms[k], e);
        if (!t[k])
            return DTB_E_NOMEM;
    }
    return DTB_OK;
}

/* The positions of table t that rank r of ranks owns: lo..hi-1. */
static void range_of(const dtb_solved_table *t, int r, int ranks, uint64_t *lo, uint64_t *hi)
{
    dtb_lean_share_range(dtb_index_size(t->index), r, ranks, DTB_MPI_TEAM_ALIGN, lo, hi);
}

static uint64_t capture_bytes(uint64_t lo, uint64_t hi) { return (hi - lo + 63) / 64 * 8; }

/* Receives rank r's range of table k (values, then capture bits; compressed) into its place in
 * k's table. */
static dtb_status receive_range(dtb_mpi *m, dtb_solved_table *t, int r, dtb_error *e)
{
    uint64_t lo, hi;
    range_of(t, r, m->size, &lo, &hi);
    uint8_t *const into[2] = {t->values + lo, (uint8_t *)(t->captures + lo / 64)};
    const uint64_t n[2] = {hi - lo, capture_bytes(lo, hi)};
    dtb_status rc = DTB_OK;
    for (int x = 0; x < 2 && rc == DTB_OK && hi > lo; x++) { /* in turn: same peer and tag */
        const int err = dtb_mpi_zreceive(m, into[x], n[x], r, TAG_RESULT);
        if (err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, r, err, "receiving a kings-only pair's range");
    }
    return rc;
}

/* Another rank's range of the tables t[0..nt) to rank 0 (which gathers the pair whole). */
static dtb_status send_ranges(dtb_mpi *m, dtb_solved_table *t[2], int nt, const uint64_t lo[2],
                              const uint64_t hi[2], dtb_error *e)
{
    dtb_status rc = DTB_OK;
    dtb_mpi_zmsg z[4] = {{0}}; /* compressed at once: the range's pages go back sooner */
    for (int k = 0; k < nt && rc == DTB_OK; k++) {
        if (hi[k] == lo[k])
            continue;
        int err = dtb_mpi_zsend(t[k]->values + lo[k], hi[k] - lo[k], 0, TAG_RESULT, m->comm,
                                &z[2 * k]);
        if (err == MPI_SUCCESS)
            err = dtb_mpi_zsend((uint8_t *)(t[k]->captures + lo[k] / 64),
                                capture_bytes(lo[k], hi[k]), 0, TAG_RESULT, m->comm,
                                &z[2 * k + 1]);
        if (err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, 0, err, "sending a kings-only pair's range");
    }
    for (int x = 0; x < 4; x++) {
        const int werr = dtb_mpi_zwait(&z[x]);
        if (rc == DTB_OK && werr != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, 0, werr, "sending a kings-only pair's range");
    }
    return rc;
}

/* The pair split between the ranks as this rank holds it (its range of each table in s). */
static dtb_status split_pair(dtb_mpi *m, const dtb_solved *s, dtb_solved_table *t[2], int nt,
                             dtb_sliced_pair **out, dtb_error *e)
{
    uint64_t *starts[2] = {NULL, NULL};
    dtb_status rc = DTB_OK;
    for (int k = 0; k < nt && rc == DTB_OK; k++)
        if (!(starts[k] = dtb_mpi_team_starts(m, dtb_index_size(t[k]->index))))
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    const dtb_table_team team = dtb_mpi_team(m);
    if (rc == DTB_OK)
        rc = dtb_sliced_pair_split(s, (const dtb_solved_table *const *)t, nt, &team,
                                   (const uint64_t *const *)starts, out, e);
    free(starts[0]);
    free(starts[1]);
    return rc;
}

dtb_status dtb_mpi_lean_lead(dtb_mpi *m, dtb_solved *s, dtb_material mt,
                             dtb_sliced_pair **out, dtb_solve_stats stats[2],
                             dtb_solve_progress progress, void *user, dtb_error *e)
{
    dtb_solved_table *t[2];
    dtb_status rc = pair_tables(s, mt, out != NULL, t, e);
    const int nt = t[1] ? 2 : 1;
    for (int k = 0; k < nt && rc == DTB_OK && out; k++) {
        uint64_t lo, hi;
        range_of(t[k], 0, m->size, &lo, &hi);
        rc = dtb_solved_reserve(s, t[k], lo, hi - lo, e);
    }
    cmd c = dtb_mpi_cmd_of(OP_LEAN, mt);
    c.arg = out != NULL; /* the ranks keep their ranges and write the tables together */
    if (rc == DTB_OK)
        rc = dtb_mpi_send_all(m, &c, e);
    lean_ctx lc = {.m = m};
    const dtb_lean_share sh = {.ctx = &lc, .rank = 0, .ranks = m->size, .align = DTB_MPI_TEAM_ALIGN,
                               .allgather = lean_allgather, .max = lean_max};
    if (rc == DTB_OK)
        rc = dtb_solve_pair_lean_shared(s, mt, &sh, stats, progress, user, e);
    for (int r = 1; r < m->size && rc == DTB_OK && !out; r++) /* gathered whole */
        for (int k = 0; k < nt && rc == DTB_OK; k++)
            rc = receive_range(m, t[k], r, e);
    if (rc == DTB_OK)
        rc = dtb_mpi_gather_stats(m, stats, e);
    if (rc == DTB_OK && out)
        rc = split_pair(m, s, t, nt, out, e);
    if (rc == DTB_OK) {
        uint64_t n = 0, lo, hi;
        for (int k = 0; k < nt; k++) {
            n += dtb_index_size(t[k]->index);
            range_of(t[k], 0, m->size, &lo, &hi);
            m->traffic.positions_rank0 += hi - lo;
        }
        m->traffic.positions += n;
        m->traffic.units++;
        m->traffic.split_units++;
        m->traffic.team_pairs += out != NULL;
    }
    return rc;
}

dtb_status dtb_mpi_lean_serve(dtb_mpi *m, const dtb_build_options *o, dtb_solved *s,
                              const cmd *c, dtb_error *e)
{
    const dtb_material mt = dtb_mpi_material_of(c);
    dtb_solved_table *t[2];
    dtb_status rc = pair_tables(s, mt, true, t, e);
    const int nt = t[1] ? 2 : 1;
    uint64_t lo[2] = {0}, hi[2] = {0};
    for (int k = 0; k < nt && rc == DTB_OK; k++) {
        range_of(t[k], m->rank, m->size, &lo[k], &hi[k]);
        rc = dtb_solved_reserve(s, t[k], lo[k], hi[k] - lo[k], e);
    }
    lean_ctx lc = {.m = m};
    const dtb_lean_share sh = {.ctx = &lc, .rank = m->rank, .ranks = m->size, .align = DTB_MPI_TEAM_ALIGN,
                               .allgather = lean_allgather, .max = lean_max};
    dtb_solve_stats st[2];
    if (rc == DTB_OK)
        rc = dtb_solve_pair_lean_shared(s, mt, &sh, st, NULL, NULL, e);
    if (rc == DTB_OK && !c->arg)
        rc = send_ranges(m, t, nt, lo, hi, e);
    if (rc == DTB_OK)
        rc = dtb_mpi_send_stats(m, st, e);
    dtb_sliced_pair *sp = NULL;
    if (rc == DTB_OK && c->arg && (rc = split_pair(m, s, t, nt, &sp, e)) == DTB_OK)
        rc = dtb_build_write_pair(o, s, mt, sp, e);
    if (sp) /* gives the range's pages back */
        dtb_sliced_pair_free(sp);
    else /* the tables stay in the registry, without values, until rank 0 attaches or drops them */
        for (int k = 0; k < nt && t[k]; k++)
            dtb_solved_release(s, t[k], lo[k], hi[k] - lo[k]);
    return rc;
}
