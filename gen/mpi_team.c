/* The ranks of an MPI build as a team writing a table together (gen/tablewrite.h's
 * dtb_table_team): sums and maxima by MPI_Allreduce, frames to rank 0 under TAG_WRITE, in the
 * order each rank sends them (MPI keeps the order of one sender's messages of one tag). Calls
 * come from the main thread (MPI_THREAD_FUNNELED); waits nap, leaving the core to the others. A
 * rank that dies is the launcher's to report, as in the lean solve's collectives. */
#include "mpi_job.h"

#include <stdlib.h>

static dtb_status team_reduce(void *ctx, uint64_t *v, int n, bool max, dtb_error *e)
{
    return dtb_mpi_allreduce(ctx, v, n, MPI_UINT64_T, max ? MPI_MAX : MPI_SUM,
                             "agreeing on a table's choices", e);
}

/* Frames (already compressed) to or from rank 0, waited for. */
static int frames(dtb_mpi *m, bool send, uint8_t *buf, uint64_t len, int peer)
{
    dtb_mpi_bigmsg b;
    const int err = dtb_mpi_big_post(send, buf, len, peer, TAG_WRITE, m->comm, &b);
    return err == MPI_SUCCESS ? dtb_mpi_big_wait(&b) : err;
}

static dtb_status team_send(void *ctx, const uint8_t *buf, uint64_t len, dtb_error *e)
{
    const int err = frames(ctx, true, (uint8_t *)buf, len, 0); /* MPI does not write it */
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, 0, err, "sending a table's frames");
}

static dtb_status team_recv(void *ctx, int from, uint8_t *buf, uint64_t len, dtb_error *e)
{
    dtb_mpi *m = ctx;
    const int err = frames(m, false, buf, len, from);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, from, err, "receiving a table's frames");
    m->traffic.bytes_received += len;
    m->traffic.frame_bytes += len;
    return DTB_OK;
}

uint64_t *dtb_mpi_team_starts(const dtb_mpi *m, uint64_t count)
{
    uint64_t *starts = malloc(((size_t)m->size + 1) * sizeof *starts), hi;
    for (int r = 0; starts && r < m->size; r++)
        dtb_lean_share_range(count, r, m->size, DTB_MPI_TEAM_ALIGN, &starts[r], &hi);
    if (starts)
        starts[m->size] = count;
    return starts;
}

dtb_table_team dtb_mpi_team(dtb_mpi *m)
{
    return (dtb_table_team){.rank = m->rank, .ranks = m->size, .reduce = team_reduce,
                            .send = team_send, .recv = team_recv, .ctx = m};
}
