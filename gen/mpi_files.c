/* The ranks' copies of the finished table files (gen/mpi_job.h): every rank reads finished tables
 * from its own copy, which rank 0 sends when it is missing or differs (by size and XXH64). In a
 * directory shared with rank 0 the copy is rank 0's file and nothing is sent. */
#include "mpi_job.h"
#include "setfiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "checksum.h"

/* The size and XXH64 of the file at path, read a piece at a time: what a rank's copy must
 * match. */
dtb_status dtb_mpi_file_digest(const char *path, uint64_t *size, uint64_t *hash, dtb_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dtb_sys_error(e, errno, path, "open");
    uint8_t *buf = malloc(FILE_CHUNK);
    dtb_hash64_state h;
    dtb_hash64_init(&h, 0);
    size_t n;
    while (buf && (n = fread(buf, 1, FILE_CHUNK, f)) > 0)
        dtb_hash64_update(&h, buf, n);
    const int err = buf && ferror(f) ? errno : 0;
    fclose(f);
    free(buf);
    if (!buf)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (err)
        return dtb_sys_error(e, err, path, "read");
    *size = h.total;
    *hash = dtb_hash64_digest(&h);
    return DTB_OK;
}

/* Sends n bytes to rank r under tag, waited for with a deadline (a rank that died would hold a
 * blocking send forever). */
static dtb_status send_bytes(dtb_mpi *m, int r, const void *p, size_t n, int tag, dtb_error *e)
{
    MPI_Request req;
    int err = MPI_Isend(p, (int)n, MPI_BYTE, r, tag, m->comm, &req);
    bool late = false;
    if (err == MPI_SUCCESS)
        err = dtb_mpi_wait(&req, m->timeout + (double)n / 1e6, &late);
    if (late)
        return dtb_error_set(e, DTB_E_IO, "rank %d took no table file bytes for %.0f s: it "
                             "died or hangs; rerun the same command to resume", r, m->timeout);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, r, err, "sending a table file");
    m->traffic.bytes_sent += n;
    return DTB_OK;
}

/* Rank 0's complete table file of metric x of mt at path to every worker whose copy differs:
 * each says (TAG_REPLY) after the FILE command, then gets the bytes (TAG_FILE), a piece at a
 * time. */
dtb_status dtb_mpi_share_file(dtb_mpi *m, dtb_material mt, dtb_metric x, const char *path,
                              dtb_error *e)
{
    uint64_t size, hash;
    dtb_status rc = dtb_mpi_file_digest(path, &size, &hash, e);
    cmd c = dtb_mpi_cmd_of(OP_FILE, mt);
    c.level = (int32_t)x;
    c.arg = size;
    c.b0 = hash;
    if (rc == DTB_OK)
        rc = dtb_mpi_send_all(m, &c, e);
    bool *needs = calloc((size_t)m->size, sizeof *needs);
    if (rc == DTB_OK && !needs)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    int needing = 0;
    for (int r = 1; r < m->size && rc == DTB_OK; r++) {
        int32_t need = 0;
        MPI_Request req;
        int err = MPI_Irecv(&need, 1, MPI_INT32_T, r, TAG_REPLY, m->comm, &req);
        bool late = false;
        if (err == MPI_SUCCESS)
            err = dtb_mpi_wait(&req, m->timeout, &late);
        if (late)
            rc = dtb_error_set(e, DTB_E_IO, "rank %d did not say for %.0f s whether it has %s: "
                               "it died or hangs; rerun the same command to resume", r,
                               m->timeout, path);
        else if (err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, r, err, "receiving a reply");
        needs[r] = need != 0;
        needing += need != 0;
        m->traffic.bytes_received += sizeof need;
    }
    FILE *f = rc == DTB_OK && needing ? fopen(path, "rb") : NULL;
    if (rc == DTB_OK && needing && !f)
        rc = dtb_sys_error(e, errno, path, "open");
    uint8_t *buf = f ? malloc(FILE_CHUNK) : NULL;
    if (f && !buf)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (uint64_t at = 0; f && at < size && rc == DTB_OK;) {
        const size_t want = size - at < FILE_CHUNK ? (size_t)(size - at) : FILE_CHUNK;
        if (fread(buf, 1, want, f) != want) {
            rc = dtb_error_set(e, DTB_E_IO, "%s: changed while it was sent to the other ranks",
                               path);
            break;
        }
        for (int r = 1; r < m->size && rc == DTB_OK; r++)
            if (needs[r])
                rc = send_bytes(m, r, buf, want, TAG_FILE, e);
        at += want;
    }
    if (f)
        fclose(f);
    free(buf);
    free(needs);
    return rc;
}

/* OP_FILE: this rank's copy of rank 0's table file (its size and hash in c) is kept when it has
 * the same bytes, else rank 0 sends them and they replace it (written whole or not at all). */
dtb_status dtb_mpi_receive_file(dtb_mpi *m, const dtb_build_options *o, const cmd *c,
                                dtb_error *e)
{
    const dtb_material mt = dtb_mpi_material_of(c);
    char path[4096];
    dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &mt,
                         (dtb_metric)c->level);
    uint64_t size = 0, hash = 0;
    dtb_error ignored;
    const bool same = access(path, F_OK) == 0 &&
                      dtb_mpi_file_digest(path, &size, &hash, &ignored) == DTB_OK &&
                      size == c->arg &&
                      hash == c->b0;
    const int32_t need = !same;
    int err = MPI_Send(&need, 1, MPI_INT32_T, 0, TAG_REPLY, m->comm);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, m->rank, err, "replying to rank 0");
    if (same)
        return DTB_OK;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->out_dir, o->variant->name);
    dtb_status rc = dtb_setfiles_make_dir(o->out_dir, e);
    if (rc == DTB_OK)
        rc = dtb_setfiles_make_dir(dir, e);
    uint8_t *buf = malloc(FILE_CHUNK);
    if (rc == DTB_OK && !buf)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    /* The whole file comes whatever happens here, so that rank 0 is not left waiting; a failure
     * is reported once it has. */
    dtb_atomic_file af = {.fd = -1};
    char suffix[32];
    snprintf(suffix, sizeof suffix, "rank%d", m->rank);
    if (rc == DTB_OK)
        rc = dtb_atomic_begin(&af, path, suffix, e);
    dtb_hash64_state h;
    dtb_hash64_init(&h, 0);
    for (uint64_t at = 0; at < c->arg && err == MPI_SUCCESS;) {
        const size_t want = c->arg - at < FILE_CHUNK ? (size_t)(c->arg - at) : FILE_CHUNK;
        uint8_t sink[1];
        err = MPI_Recv(buf ? buf : sink, buf ? (int)want : 0, MPI_BYTE, 0, TAG_FILE, m->comm,
                       MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS && rc == DTB_OK) {
            dtb_hash64_update(&h, buf, want);
            rc = dtb_atomic_write(&af, buf, want, e);
        }
        at += want;
    }
    free(buf);
    if (err != MPI_SUCCESS && rc == DTB_OK)
        rc = dtb_mpi_failed(e, m->rank, err, "receiving a table file");
    if (rc == DTB_OK && dtb_hash64_digest(&h) != c->b0)
        rc = dtb_error_set(e, DTB_E_CORRUPT, "%s: the copy received from rank 0 differs from "
                           "rank 0's file", path);
    if (rc == DTB_OK)
        return dtb_atomic_commit(&af, e);
    dtb_atomic_abort(&af);
    return rc;
}

/* OP_ATTACH: m is read from this rank's copy of its file from now on. */
dtb_status dtb_mpi_attach(dtb_solved *s, const dtb_build_options *o, const cmd *c, dtb_error *e)
{
    const dtb_material mt = dtb_mpi_material_of(c);
    const dtb_metric x = (dtb_metric)c->level;
    char path[4096];
    dtb_build_table_path(path, sizeof path, o->out_dir, o->variant, &mt, x);
    dtb_solved_drop(s, mt);
    return x == DTB_METRIC_DTW ? dtb_solved_add_file(s, mt, path, e)
                               : dtb_solved_add_wld_file(s, mt, path, e);
}
