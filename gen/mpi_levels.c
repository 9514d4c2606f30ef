/* A level of a pair partitioned between the ranks of an MPI build (gen/mpi_job.h): the parts
 * every rank cuts alike, who owns each, and the exchange of the units the next level reads. */
#include "mpi_job.h"

#include <stdlib.h>

dtb_status dtb_mpi_cut_level(const dtb_pair_solver *ps, int a, int ranks, dtb_mpi_level *lp,
                             dtb_error *e)
{
    const uint64_t positions = dtb_pair_solver_positions(ps, a, 0, dtb_pair_solver_blocks(ps));
    uint64_t target = positions / (4 * (uint64_t)ranks);
    target = target < PART_MIN ? PART_MIN : target > PART_MAX ? PART_MAX : target;
    lp->a = a;
    lp->n = dtb_pair_solver_cut(ps, a, target, NULL);
    lp->cuts = malloc((lp->n + 1) * sizeof *lp->cuts);
    if (!lp->cuts)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    dtb_pair_solver_cut(ps, a, target, lp->cuts);
    return DTB_OK;
}

int dtb_mpi_owner(const dtb_mpi_level *lp, uint64_t k, int ranks)
{
    return (int)(k * (uint64_t)ranks / lp->n);
}

/* Calls run(user, y0, y1) for every maximal run of blocks y0..y1-1 marked in need among the
 * parts of lp that rank r owns. */
static void each_run(const dtb_mpi_level *lp, int r, int ranks, const uint8_t *need,
                     void (*run)(void *user, uint64_t y0, uint64_t y1), void *user)
{
    for (uint64_t k = 0; k < lp->n; k++) {
        if (dtb_mpi_owner(lp, k, ranks) != r)
            continue;
        for (uint64_t y = lp->cuts[k]; y < lp->cuts[k + 1];) {
            if (!need[y]) {
                y++;
                continue;
            }
            const uint64_t y0 = y;
            while (y < lp->cuts[k + 1] && need[y])
                y++;
            run(user, y0, y);
        }
    }
}

/* A message of packed values of runs of level a's units. */
typedef struct runs_msg {
    dtb_pair_solver *ps;
    int a;
    uint8_t *buf;
    uint64_t at;
    bool unpack, count;
} runs_msg;

static void on_run(void *user, uint64_t y0, uint64_t y1)
{
    runs_msg *r = user;
    const uint64_t n = dtb_pair_solver_positions(r->ps, r->a, y0, y1);
    if (r->unpack)
        dtb_pair_solver_unpack(r->ps, r->a, y0, y1, r->buf + r->at, NULL);
    else if (!r->count)
        dtb_pair_solver_pack(r->ps, r->a, y0, y1, r->buf + r->at, NULL);
    r->at += n;
}

/* After level la, before level lb below it: every rank sends each other rank the values of its
 * own units of level la that the other's parts of lb read by man moves (dtb_pair_solver_reach),
 * and receives those it reads of theirs, in one message each way a pair of ranks (none when
 * empty). Every rank works out every message's runs and size from the cuts alone. */
dtb_status dtb_mpi_exchange(dtb_mpi *m, dtb_pair_solver *ps, const dtb_mpi_level *la,
                            const dtb_mpi_level *lb, dtb_error *e)
{
    const int N = m->size, me = m->rank;
    const double started = dtb_mpi_now();
    const uint64_t nb = dtb_pair_solver_blocks(ps);
    uint8_t *need = calloc((size_t)N * nb, 1);
    uint8_t **buf = calloc((size_t)N * 2, sizeof *buf);
    dtb_mpi_zmsg *msg = calloc((size_t)N * 2, sizeof *msg); /* compressed */
    uint64_t *len = calloc((size_t)N * 2, sizeof *len);
    if (!need || !buf || !msg || !len) {
        free(need), free(buf), free(msg), free(len);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    for (uint64_t k = 0; k < lb->n; k++)
        dtb_pair_solver_reach(ps, lb->a, lb->cuts[k], lb->cuts[k + 1],
                              need + (size_t)dtb_mpi_owner(lb, k, N) * nb);
    dtb_status rc = DTB_OK;
    int err = MPI_SUCCESS;
    for (int q = 0; q < N && rc == DTB_OK; q++) {
        if (q == me)
            continue;
        /* [q]: from q (q's units that my parts read); [N + q]: to q (mine that q's read) */
        for (int way = 0; way < 2 && rc == DTB_OK; way++) {
            const size_t x = (size_t)way * N + q;
            runs_msg c = {.ps = ps, .a = la->a, .count = true};
            each_run(la, way ? me : q, N, need + (size_t)(way ? q : me) * nb, on_run, &c);
            len[x] = c.at;
            if (!len[x])
                continue;
            if (!(buf[x] = malloc(len[x]))) {
                rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
                break;
            }
            if (way) {
                runs_msg p = {.ps = ps, .a = la->a, .buf = buf[x]};
                each_run(la, me, N, need + (size_t)q * nb, on_run, &p);
            }
            err = way ? dtb_mpi_zsend(buf[x], len[x], q, TAG_LEVEL, m->comm, &msg[x])
                      : dtb_mpi_zrecv(buf[x], len[x], q, TAG_LEVEL, m->comm, &msg[x]);
            if (err != MPI_SUCCESS)
                rc = dtb_mpi_failed(e, q, err, way ? "sending a level's units"
                                                   : "receiving a level's units");
        }
    }
    /* Every message is waited for (a rank that died: the launcher ends the job, or rank 0's
     * deadlines on its next receive); then the received runs are unpacked. */
    for (size_t x = 0; x < (size_t)N * 2; x++) {
        const int q = (int)(x % (size_t)N), werr = dtb_mpi_zwait(&msg[x]);
        if (rc == DTB_OK && werr != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, q, werr, "exchanging a level's units");
        if (len[x])
            dtb_mpi_count(m, q, x >= (size_t)N, &msg[x]);
    }
    for (int q = 0; q < N && rc == DTB_OK; q++)
        if (q != me && len[q]) {
            runs_msg u = {.ps = ps, .a = la->a, .buf = buf[q], .unpack = true};
            each_run(la, q, N, need + (size_t)me * nb, on_run, &u);
        }
    for (size_t x = 0; x < (size_t)N * 2; x++)
        free(buf[x]);
    free(need), free(buf), free(msg), free(len);
    m->traffic.exchange_seconds += dtb_mpi_now() - started;
    return rc;
}

dtb_status dtb_mpi_solve_own(dtb_mpi *m, dtb_pair_solver *ps, const dtb_mpi_level *lp,
                             dtb_mpi_part_done done, void *ctx, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (uint64_t k = 0; k < lp->n && rc == DTB_OK; k++) {
        if (dtb_mpi_owner(lp, k, m->size) != m->rank)
            continue;
        rc = dtb_pair_solver_solve(ps, lp->a, lp->cuts[k], lp->cuts[k + 1], NULL, NULL, e);
        if (rc == DTB_OK)
            rc = done(ctx, lp, k, e);
    }
    return rc;
}
