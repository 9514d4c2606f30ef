/* Messages sent compressed between the ranks of an MPI build (gen/mpi_compressed.c), run under
 * `mpirun -np 2`: rank 1 sends, rank 0 receives and checks. Bytes of every shape arrive intact
 * (nothing, a run, noise, a table's values), a run goes in far fewer bytes than it has, and a
 * frame that lies about its size, is not zstd or holds another size is refused
 * (DTB_MPI_ZCORRUPT), never written past the receiver's buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpi_job.h"

enum { TAG_EMPTY = 100, TAG_RUN, TAG_NOISE, TAG_TWO, TAG_LIAR, TAG_GARBAGE, TAG_SHORT, TAG_LONG };
#define RUN_BYTES ((uint64_t)3 << 20)
#define NOISE_BYTES 100000u

/* The bytes of each message, made alike on both ranks. */
static uint8_t *noise(uint64_t n, unsigned seed)
{
    uint8_t *b = malloc(n);
    for (uint64_t i = 0; b && i < n; i++)
        b[i] = (uint8_t)(rand_r(&seed) >> 7);
    return b;
}

static uint8_t *run(uint64_t n)
{
    uint8_t *b = malloc(n);
    for (uint64_t i = 0; b && i < n; i++)
        b[i] = (uint8_t)(i / 4096 % 3); /* long runs: draws, wins, losses */
    return b;
}

/* Receives n bytes of tag from rank 1 into a buffer with guard bytes after it; the status. */
static int receive(int tag, uint64_t n, uint8_t **out, uint64_t *wire)
{
    uint8_t *buf = malloc(n + 16);
    assert_non_null(buf);
    memset(buf, 0x5a, n + 16);
    dtb_mpi_zmsg z;
    int err = dtb_mpi_zrecv(buf, n, 1, tag, MPI_COMM_WORLD, &z);
    if (err == MPI_SUCCESS)
        err = dtb_mpi_zwait(&z);
    for (int i = 0; i < 16; i++)
        assert_int_equal(buf[n + i], 0x5a); /* nothing written past the buffer */
    if (wire)
        *wire = dtb_mpi_zbytes(&z);
    dtb_mpi_zfree(&z);
    *out = buf;
    return err;
}

static void arrive_intact(void **state)
{
    (void)state;
    uint8_t *got;
    uint64_t wire;
    assert_int_equal(receive(TAG_EMPTY, 0, &got, NULL), MPI_SUCCESS);
    free(got);
    uint8_t *want = run(RUN_BYTES);
    assert_int_equal(receive(TAG_RUN, RUN_BYTES, &got, &wire), MPI_SUCCESS);
    assert_memory_equal(got, want, RUN_BYTES);
    assert_true(wire < RUN_BYTES / 100); /* runs compress: under 1% of the bytes cross */
    free(got), free(want);
    want = noise(NOISE_BYTES, 1);
    assert_int_equal(receive(TAG_NOISE, NOISE_BYTES, &got, &wire), MPI_SUCCESS);
    assert_memory_equal(got, want, NOISE_BYTES);
    assert_true(wire >= NOISE_BYTES / 2); /* noise hardly does, and still arrives */
    free(got), free(want);
    /* two messages of one tag, one after the other: each matched to its own receive */
    for (unsigned k = 0; k < 2; k++) {
        want = noise(1000 + k, 2 + k);
        assert_int_equal(receive(TAG_TWO, 1000 + k, &got, NULL), MPI_SUCCESS);
        assert_memory_equal(got, want, 1000 + k);
        free(got), free(want);
    }
}

static void bad_frames_refused(void **state)
{
    (void)state;
    uint8_t *got;
    /* a size larger than any frame of 1000 bytes: refused before its frame is received */
    assert_int_equal(receive(TAG_LIAR, 1000, &got, NULL), DTB_MPI_ZCORRUPT);
    free(got);
    assert_int_equal(receive(TAG_GARBAGE, 1000, &got, NULL), DTB_MPI_ZCORRUPT);
    free(got);
    /* a frame of 500 bytes where 1000 are awaited, and of 2000 */
    assert_int_equal(receive(TAG_SHORT, 1000, &got, NULL), DTB_MPI_ZCORRUPT);
    free(got);
    assert_int_equal(receive(TAG_LONG, 1000, &got, NULL), DTB_MPI_ZCORRUPT);
    free(got);
}

/* Rank 1: every message, in the order rank 0 takes them. */
static int send_all(void)
{
    dtb_mpi_zmsg z[8];
    int nz = 0, err = MPI_SUCCESS;
    uint8_t *r = run(RUN_BYTES), *nb = noise(NOISE_BYTES, 1), *two[2] = {noise(1000, 2), noise(1001, 3)};
    uint8_t *half = noise(500, 4), *twice = run(2000); /* a small frame: its size passes */
    err |= dtb_mpi_zsend(NULL, 0, 0, TAG_EMPTY, MPI_COMM_WORLD, &z[nz++]);
    err |= dtb_mpi_zsend(r, RUN_BYTES, 0, TAG_RUN, MPI_COMM_WORLD, &z[nz++]);
    err |= dtb_mpi_zsend(nb, NOISE_BYTES, 0, TAG_NOISE, MPI_COMM_WORLD, &z[nz++]);
    for (int k = 0; k < 2; k++)
        err |= dtb_mpi_zsend(two[k], 1000 + (uint64_t)k, 0, TAG_TWO, MPI_COMM_WORLD, &z[nz++]);
    const uint64_t liar = (uint64_t)1 << 40;
    err |= MPI_Send(&liar, 1, MPI_UINT64_T, 0, TAG_LIAR, MPI_COMM_WORLD);
    uint8_t garbage[100];
    memset(garbage, 0xab, sizeof garbage);
    const uint64_t gsize = sizeof garbage;
    err |= MPI_Send(&gsize, 1, MPI_UINT64_T, 0, TAG_GARBAGE, MPI_COMM_WORLD);
    err |= MPI_Send(garbage, (int)gsize, MPI_BYTE, 0, TAG_GARBAGE, MPI_COMM_WORLD);
    err |= dtb_mpi_zsend(half, 500, 0, TAG_SHORT, MPI_COMM_WORLD, &z[nz++]);
    err |= dtb_mpi_zsend(twice, 2000, 0, TAG_LONG, MPI_COMM_WORLD, &z[nz++]);
    for (int i = 0; i < nz; i++)
        err |= dtb_mpi_zwait(&z[i]);
    free(r), free(nb), free(two[0]), free(two[1]), free(half), free(twice);
    return err == MPI_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 1;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "test_mpi_messages: run it under mpirun -np 2 (%d ranks)\n", size);
    } else if (rank == 1) {
        rc = send_all();
    } else {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(arrive_intact),
            cmocka_unit_test(bad_frames_refused),
        };
        rc = cmocka_run_group_tests(tests, NULL, NULL);
    }
    MPI_Finalize();
    return rc;
}
