/* Messages and waiting for the MPI build (gen/mpi_job.h). */
#include "mpi_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double dtb_mpi_now(void) { return MPI_Wtime(); }

void dtb_mpi_nap(void)
{
    const struct timespec t = {0, 200000}; /* 0.2 ms: waiting ranks leave the cores to others */
    nanosleep(&t, NULL);
}

dtb_status dtb_mpi_failed(dtb_error *e, int rank, int err, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (err == DTB_MPI_ZCORRUPT)
        snprintf(text, sizeof text, "a compressed message does not decompress to its size");
    else if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    return dtb_error_set(e, DTB_E_IO, "rank %d: %s: %s", rank, what, text);
}

dtb_status dtb_mpi_send_cmd(dtb_mpi *m, int to, const cmd *c, dtb_error *e)
{
    const int err = MPI_Send(c, (int)sizeof *c, MPI_BYTE, to, TAG_CMD, m->comm);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, to, err, "sending a command");
    m->traffic.bytes_sent += sizeof *c;
    return DTB_OK;
}

dtb_status dtb_mpi_send_all(dtb_mpi *m, const cmd *c, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (int r = 1; r < m->size && rc == DTB_OK; r++)
        rc = dtb_mpi_send_cmd(m, r, c, e);
    return rc;
}

/* Waits for req: MPI_Test in a loop (MPI moves the data along only while it is called), with
 * naps once the first 10 ms have passed so that a long wait leaves the core to others. *late
 * when allowed seconds (0: no limit) passed first. */
int dtb_mpi_wait(MPI_Request *req, double allowed, bool *late)
{
    const double t0 = dtb_mpi_now();
    int err, flag = 0;
    while ((err = MPI_Test(req, &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !flag) {
        const double waited = dtb_mpi_now() - t0;
        if (allowed > 0 && waited > allowed) {
            *late = true;
            return MPI_SUCCESS;
        }
        if (waited > 0.01)
            dtb_mpi_nap();
    }
    return err;
}

int dtb_mpi_big_post(bool send, uint8_t *buf, uint64_t n, int peer, int tag, MPI_Comm comm,
                     dtb_mpi_bigmsg *b)
{
    b->n = n ? (int)((n + MSG_MAX - 1) / MSG_MAX) : 1;
    b->req = malloc((size_t)b->n * sizeof *b->req);
    if (!b->req) {
        b->n = 0;
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < b->n; i++) {
        const uint64_t at = (uint64_t)i * MSG_MAX, len = n - at < MSG_MAX ? n - at : MSG_MAX;
        const int err = send ? MPI_Isend(buf + at, (int)len, MPI_BYTE, peer, tag, comm, &b->req[i])
                             : MPI_Irecv(buf + at, (int)len, MPI_BYTE, peer, tag, comm, &b->req[i]);
        if (err != MPI_SUCCESS) {
            b->n = i;
            return err;
        }
    }
    return MPI_SUCCESS;
}

/* Waits for every piece of b (none: at once) and forgets them. */
int dtb_mpi_big_wait(dtb_mpi_bigmsg *b)
{
    int err = MPI_SUCCESS;
    bool late = false;
    for (int i = 0; i < b->n && err == MPI_SUCCESS; i++) /* napping: a waiting rank leaves the core */
        err = dtb_mpi_wait(&b->req[i], 0, &late);
    free(b->req);
    *b = (dtb_mpi_bigmsg){0};
    return err;
}

dtb_status dtb_mpi_gather_stats(dtb_mpi *m, dtb_solve_stats stats[2], dtb_error *e)
{
    for (int r = 1; r < m->size; r++) {
        int64_t w[15];
        MPI_Request req;
        int err = MPI_Irecv(w, 15, MPI_INT64_T, r, TAG_STATS, m->comm, &req);
        bool late = false;
        if (err == MPI_SUCCESS)
            err = dtb_mpi_wait(&req, m->timeout, &late);
        if (late)
            return dtb_error_set(e, DTB_E_IO, "rank %d sent no stats for %.0f s: it died or "
                                 "hangs; rerun the same command to resume", r, m->timeout);
        if (err != MPI_SUCCESS)
            return dtb_mpi_failed(e, r, err, "receiving stats");
        m->traffic.bytes_received += sizeof w;
        m->traffic.bytes_between += (uint64_t)w[14];
        for (int k = 0; k < 2; k++) {
            const int64_t *x = w + 7 * k;
            const dtb_solve_stats st = {
                .positions = (uint64_t)x[0], .wins = (uint64_t)x[1], .draws = (uint64_t)x[2],
                .losses = (uint64_t)x[3], .captures = (uint64_t)x[4], .longest_win = (int)x[5],
                .longest_win_at = (uint64_t)x[6]};
            dtb_solve_stats_merge(&stats[k], &st);
        }
    }
    return DTB_OK;
}

dtb_status dtb_mpi_send_stats(dtb_mpi *m, const dtb_solve_stats st[2], dtb_error *e)
{
    int64_t w[15];
    w[14] = (int64_t)m->traffic.bytes_between; /* since the last pair's stats */
    m->traffic.bytes_between = 0;
    for (int k = 0; k < 2; k++) {
        int64_t *x = w + 7 * k;
        x[0] = (int64_t)st[k].positions, x[1] = (int64_t)st[k].wins, x[2] = (int64_t)st[k].draws;
        x[3] = (int64_t)st[k].losses, x[4] = (int64_t)st[k].captures, x[5] = st[k].longest_win;
        x[6] = (int64_t)st[k].longest_win_at;
    }
    const int err = MPI_Send(w, 15, MPI_INT64_T, 0, TAG_STATS, m->comm);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, 0, err, "sending stats");
}

dtb_status dtb_mpi_allreduce(dtb_mpi *m, void *v, int n, MPI_Datatype type, MPI_Op op,
                             const char *what, dtb_error *e)
{
    MPI_Request req;
    bool late = false; /* never: no deadline (a dead rank is the launcher's to report) */
    int err = MPI_Iallreduce(MPI_IN_PLACE, v, n, type, op, m->comm, &req);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_wait(&req, 0, &late);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, m->rank, err, what);
}
