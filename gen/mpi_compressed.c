/* Messages sent compressed (gen/mpi_job.h, dtb_mpi_zmsg): the sender compresses the raw bytes
 * into one zstd frame and sends its size (8 bytes), then the frame (as a big message), under one
 * tag; the receiver, who knows the raw size, takes the size, posts the frame's receive, and
 * decompresses it into its buffer. Values and capture bits compress many times over (runs of
 * draws, of one distance), so what a rank sends, rank 0's results above all, shrinks by that.
 *
 * Order: MPI matches a peer's messages of one tag in the order they were posted, so a
 * receiver must not post the next message's receive from the same peer and tag before this
 * one's size has come (its frame's receive is posted then, ahead of any later one). */
#include "mpi_job.h"

#include <stdlib.h>
#include <zstd.h>

enum { ZLEVEL = 1 }; /* zstd's fastest: the values are compressed for the wire, once */

int dtb_mpi_zsend(const uint8_t *raw, uint64_t n, int peer, int tag, MPI_Comm comm,
                  dtb_mpi_zmsg *z)
{
    *z = (dtb_mpi_zmsg){.send = true};
    const size_t bound = ZSTD_compressBound((size_t)n);
    if (!(z->frame = malloc(bound ? bound : 1)))
        return MPI_ERR_NO_MEM;
    const size_t r = ZSTD_compress(z->frame, bound, raw, (size_t)n, ZLEVEL);
    if (ZSTD_isError(r))
        return MPI_ERR_NO_MEM; /* the only way it fails with a bound-sized buffer */
    z->size = r;
    int err = MPI_Isend(&z->size, 1, MPI_UINT64_T, peer, tag, comm, &z->head);
    if (err == MPI_SUCCESS)
        z->stage = 1, err = dtb_mpi_big_post(true, z->frame, z->size, peer, tag, comm, &z->body);
    if (err == MPI_SUCCESS)
        z->stage = 2;
    return err;
}

int dtb_mpi_zrecv(uint8_t *raw, uint64_t n, int peer, int tag, MPI_Comm comm, dtb_mpi_zmsg *z)
{
    *z = (dtb_mpi_zmsg){.raw = raw, .n = n, .peer = peer, .tag = tag, .comm = comm};
    const int err = MPI_Irecv(&z->size, 1, MPI_UINT64_T, peer, tag, comm, &z->head);
    if (err == MPI_SUCCESS)
        z->stage = 1;
    return err;
}

int dtb_mpi_ztest(dtb_mpi_zmsg *z, bool *done)
{
    *done = false;
    int flag = 0, err = MPI_SUCCESS;
    if (z->stage == 1 && !z->send) { /* the size: then the frame's receive */
        if ((err = MPI_Test(&z->head, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS || !flag)
            return err;
        if (z->size > ZSTD_compressBound((size_t)z->n) + 64)
            return DTB_MPI_ZCORRUPT;
        if (!(z->frame = malloc(z->size ? z->size : 1)))
            return MPI_ERR_NO_MEM;
        if ((err = dtb_mpi_big_post(false, z->frame, z->size, z->peer, z->tag, z->comm,
                                    &z->body)) != MPI_SUCCESS)
            return err;
        z->stage = 2;
    }
    if (z->stage != 2)
        return z->stage == 3 ? (*done = true, MPI_SUCCESS) : MPI_ERR_REQUEST;
    if (z->send) {
        if ((err = MPI_Test(&z->head, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS || !flag)
            return err;
    }
    if ((err = MPI_Testall(z->body.n, z->body.req, &flag, MPI_STATUSES_IGNORE)) != MPI_SUCCESS ||
        !flag)
        return err;
    dtb_mpi_big_wait(&z->body); /* complete: forgets its requests */
    if (!z->send) {
        const size_t d = ZSTD_decompress(z->raw, (size_t)z->n, z->frame, (size_t)z->size);
        if (ZSTD_isError(d) || d != z->n)
            return DTB_MPI_ZCORRUPT;
    }
    free(z->frame);
    z->frame = NULL;
    z->stage = 3;
    *done = true;
    return MPI_SUCCESS;
}

int dtb_mpi_zwait(dtb_mpi_zmsg *z)
{
    if (z->stage == 0) /* never posted (or already waited for) */
        return MPI_SUCCESS;
    const double t0 = dtb_mpi_now();
    bool done = false;
    int err;
    while ((err = dtb_mpi_ztest(z, &done)) == MPI_SUCCESS && !done)
        if (dtb_mpi_now() - t0 > 0.01)
            dtb_mpi_nap();
    const uint64_t size = z->size;
    dtb_mpi_zfree(z);
    z->size = size; /* for dtb_mpi_zbytes */
    return err;
}

void dtb_mpi_zfree(dtb_mpi_zmsg *z)
{
    free(z->frame);
    free(z->body.req);
    *z = (dtb_mpi_zmsg){0};
}

int dtb_mpi_zreceive(dtb_mpi *m, uint8_t *raw, uint64_t n, int peer, int tag)
{
    dtb_mpi_zmsg z;
    int err = dtb_mpi_zrecv(raw, n, peer, tag, m->comm, &z);
    if (err == MPI_SUCCESS && (err = dtb_mpi_zwait(&z)) == MPI_SUCCESS)
        dtb_mpi_count(m, peer, false, &z);
    dtb_mpi_zfree(&z);
    return err;
}

void dtb_mpi_count(dtb_mpi *m, int q, bool sent, const dtb_mpi_zmsg *z)
{
    if (m->rank == 0)
        *(sent ? &m->traffic.bytes_sent : &m->traffic.bytes_received) += dtb_mpi_zbytes(z);
    else if (sent && q != 0)
        m->traffic.bytes_between += dtb_mpi_zbytes(z);
}
