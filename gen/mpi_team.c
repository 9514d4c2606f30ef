/* The ranks of an MPI build as a team writing a table together (gen/tablewrite.h's
 * dtb_table_team): sums and maxima by MPI_Allreduce, frames to rank 0 under TAG_WRITE, in the
 * order each rank sends them (MPI keeps the order of one sender's messages of one tag). Calls
 * come from the main thread (MPI_THREAD_FUNNELED); waits nap, leaving the core to the others. A
 * rank that dies is the launcher's to report, as in the lean solve's collectives. */
#include "mpi_job.h"

static dtb_status team_reduce(void *ctx, uint64_t *v, int n, bool max, dtb_error *e)
{
    dtb_mpi *m = ctx;
    MPI_Request req;
    bool late = false;
    int err = MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, max ? MPI_MAX : MPI_SUM, m->comm,
                             &req);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_wait(&req, 0, &late);
    return err == MPI_SUCCESS ? DTB_OK
                              : dtb_mpi_failed(e, m->rank, err, "agreeing on a table's choices");
}

static dtb_status team_send(void *ctx, const uint8_t *buf, uint64_t len, dtb_error *e)
{
    dtb_mpi *m = ctx;
    dtb_mpi_bigmsg b;
    int err = dtb_mpi_big_post(true, (uint8_t *)buf, len, 0, TAG_WRITE, m->comm, &b);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_big_wait(&b);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, 0, err, "sending a table's frames");
}

static dtb_status team_recv(void *ctx, int from, uint8_t *buf, uint64_t len, dtb_error *e)
{
    dtb_mpi *m = ctx;
    dtb_mpi_bigmsg b;
    int err = dtb_mpi_big_post(false, buf, len, from, TAG_WRITE, m->comm, &b);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_big_wait(&b);
    if (err == MPI_SUCCESS) {
        m->traffic.bytes_received += len;
        m->traffic.frame_bytes += len;
    }
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, from, err, "receiving a table's frames");
}

dtb_table_team dtb_mpi_team(dtb_mpi *m)
{
    return (dtb_table_team){.rank = m->rank, .ranks = m->size, .reduce = team_reduce,
                            .send = team_send, .recv = team_recv, .ctx = m};
}
