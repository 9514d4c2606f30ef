/* A shared pair's blocks moved to the ranks that write them (gen/mpi_job.h). While the pair is
 * solved every rank keeps the parts it solves in a slice store of its own; each rank then
 * writes a range of whole file blocks of each table (dtb_table_write_team), so it needs every
 * block of the pair's tables that its range touches (a block of the index is one placement of
 * the men, K positions: a range's edges may cut one, which then goes to both ranks). Who solved
 * a block follows from the cuts of its level, the same on every rank, so every rank walks the
 * same list of transfers, in the same order: table by table, runs of consecutive blocks with
 * the same solver and the same writer (neighbouring blocks mostly have both: a level's parts
 * are cut in block order), each run in pieces of at most PIECE positions, each piece its values
 * then its capture bits, compressed. A message a block would be hundreds of thousands of tiny
 * messages for pairs with many men, which MPI buffers on arrival. Sends do not wait (at most
 * DEPTH of them in flight); a rank waits only for what it receives, which its sender reaches
 * before any transfer after it: so the walk cannot deadlock. */
#include "mpi_job.h"

#include <stdlib.h>
#include <string.h>

#define PIECE ((uint64_t)1 << 24)
/* Received blocks are stored together once they hold this many positions (or their table is
 * done): a store's chunk holds whole blocks, and one block a chunk would compress poorly. */
#define STORE_BATCH ((uint64_t)1 << 23)
enum { DEPTH = 4 };

/* Who solved each block of each table. */
typedef struct owners {
    int32_t *of[2];
    int32_t rank; /* of the part being walked */
} owners;

static void mark_owner(void *user, int k, uint64_t block)
{
    owners *o = user;
    o->of[k][block] = o->rank;
}

static dtb_status find_owners(const dtb_pair_solver *ps, int ranks, const uint64_t nb[2], int nt,
                              owners *o, dtb_error *e)
{
    for (int k = 0; k < nt; k++) {
        if (!(o->of[k] = malloc((nb[k] ? nb[k] : 1) * sizeof *o->of[k])))
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
        for (uint64_t b = 0; b < nb[k]; b++)
            o->of[k][b] = -1;
    }
    for (int a = dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP); a >= 0;
         a = dtb_pair_solver_next_level(ps, a)) {
        dtb_mpi_level lp;
        const dtb_status rc = dtb_mpi_cut_level(ps, a, ranks, &lp, e);
        if (rc != DTB_OK)
            return rc;
        for (uint64_t p = 0; p < lp.n; p++) {
            o->rank = dtb_mpi_owner(&lp, p, ranks);
            dtb_pair_solver_each_block(ps, a, lp.cuts[p], lp.cuts[p + 1], mark_owner, o);
        }
        free(lp.cuts);
    }
    for (int k = 0; k < nt; k++)
        for (uint64_t b = 0; b < nb[k]; b++)
            if (o->of[k][b] < 0)
                return dtb_error_set(e, DTB_E_INVALID,
                                     "internal error: block %llu of a shared pair has no rank",
                                     (unsigned long long)b);
    return DTB_OK;
}

/* Sets bits at..at+n-1 of dst to bits 0..n-1 of src (whole words; bits of src past n are 0). */
static void copy_bits(uint64_t *dst, uint64_t at, const uint64_t *src, uint64_t n)
{
    for (uint64_t i = 0; i < n; i += 64) {
        const uint64_t len = n - i < 64 ? n - i : 64;
        const uint64_t mask = len == 64 ? ~0ull : (1ull << len) - 1, w = src[i / 64] & mask;
        const uint64_t p = at + i, word = p / 64, shift = p % 64;
        dst[word] = (dst[word] & ~(mask << shift)) | w << shift;
        if (shift && len > 64 - shift)
            dst[word + 1] = (dst[word + 1] & ~(mask >> (64 - shift))) | w >> (64 - shift);
    }
}

/* The rank whose range of a table (starts, ranks + 1 entries) holds position x. */
static int range_owner(const uint64_t *starts, int ranks, uint64_t x)
{
    int r = 0;
    while (r + 1 < ranks && starts[r + 1] <= x)
        r++;
    return r;
}

typedef struct mover {
    dtb_mpi *m;
    dtb_sliced_pair *sp;
    void *state; /* reading this rank's store */
    uint8_t *values;
    uint64_t *bits;
    dtb_mpi_zmsg out[2 * DEPTH];
    int next;
    uint64_t *got, ngot, got_positions; /* received blocks of the table, not yet stored */
} mover;

/* The received blocks of table k into the store, their pages given back. */
static dtb_status store_got(mover *mv, int k, dtb_error *e)
{
    const dtb_status rc = mv->ngot ? dtb_sliced_pair_put_blocks(mv->sp, k, mv->got, mv->ngot, e)
                                   : DTB_OK;
    mv->ngot = mv->got_positions = 0;
    return rc;
}

/* Send i in flight waited for (none: nothing to do) and counted. */
static void finish_send(mover *mv, int i, dtb_error *e, dtb_status *rc)
{
    const bool posted = mv->out[i].stage != 0;
    const int peer = mv->out[i].peer;
    const int err = dtb_mpi_zwait(&mv->out[i]);
    if (posted && err == MPI_SUCCESS)
        dtb_mpi_count(mv->m, peer, true, &mv->out[i]);
    if (err != MPI_SUCCESS && *rc == DTB_OK)
        *rc = dtb_mpi_failed(e, peer, err, "sending a block of the pair");
}

/* The next slot of the sends in flight (a piece's two messages), once its last ones are done. */
static int send_slot(mover *mv, dtb_error *e, dtb_status *rc)
{
    const int x = mv->next;
    mv->next = (x + 2) % (2 * DEPTH);
    finish_send(mv, x, e, rc);
    finish_send(mv, x + 1, e, rc);
    return x;
}

/* Positions lo..lo+n-1 of table k (whole blocks) from this rank's store to rank q. */
static dtb_status send_run(mover *mv, int k, uint64_t lo, uint64_t n, int q, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (uint64_t off = 0; off < n && rc == DTB_OK; off += PIECE) {
        const uint64_t len = n - off < PIECE ? n - off : PIECE;
        memset(mv->bits, 0, (len + 63) / 64 * sizeof *mv->bits);
        const char *why = dtb_sliced_pair_read(mv->sp, k, &mv->state, lo + off, (size_t)len,
                                               mv->values, mv->bits);
        if (why)
            return dtb_error_set(e, DTB_E_IO, "reading a block of the pair's store: %s", why);
        const int x = send_slot(mv, e, &rc);
        int err = MPI_SUCCESS;
        if (rc == DTB_OK)
            err = dtb_mpi_zsend(mv->values, len, q, TAG_MOVE, mv->m->comm, &mv->out[x]);
        if (rc == DTB_OK && err == MPI_SUCCESS)
            err = dtb_mpi_zsend((uint8_t *)mv->bits, (len + 63) / 64 * 8, q, TAG_MOVE,
                                mv->m->comm, &mv->out[x + 1]);
        if (rc == DTB_OK && err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, q, err, "sending a block of the pair");
    }
    return rc;
}

static dtb_status receive_one(mover *mv, uint8_t *into, uint64_t n, int r, dtb_error *e)
{
    const int err = dtb_mpi_zreceive(mv->m, into, n, r, TAG_MOVE);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, r, err, "receiving a block of the pair");
}

/* Blocks b0..b1-1 of table k (K positions each) from rank r, into the tables, then the store. */
static dtb_status receive_run(mover *mv, int k, uint64_t b0, uint64_t b1, uint64_t K, int r,
                              dtb_error *e)
{
    const dtb_solved_table *t = dtb_sliced_pair_table(mv->sp, k);
    dtb_status rc = DTB_OK;
    for (uint64_t b = b0; b < b1 && rc == DTB_OK; b++)
        rc = dtb_sliced_pair_reserve_block(mv->sp, k, b, e);
    const uint64_t n = (b1 - b0) * K;
    for (uint64_t off = 0; off < n && rc == DTB_OK; off += PIECE) {
        const uint64_t len = n - off < PIECE ? n - off : PIECE, at = b0 * K + off;
        rc = receive_one(mv, (uint8_t *)(t->values + at), len, r, e);
        if (rc == DTB_OK)
            rc = receive_one(mv, (uint8_t *)mv->bits, (len + 63) / 64 * 8, r, e);
        if (rc == DTB_OK)
            copy_bits(t->captures, at, mv->bits, len);
    }
    if (rc != DTB_OK)
        return rc;
    for (uint64_t b = b0; b < b1; b++)
        mv->got[mv->ngot++] = b;
    mv->got_positions += n;
    return mv->got_positions >= STORE_BATCH ? store_got(mv, k, e) : DTB_OK;
}

dtb_status dtb_mpi_move_blocks(dtb_mpi *m, const dtb_pair_solver *ps, dtb_sliced_pair *sp,
                               dtb_error *e)
{
    const int N = m->size, me = m->rank;
    const double started = dtb_mpi_now();
    const int nt = dtb_sliced_pair_table(sp, 1) ? 2 : 1;
    uint64_t nb[2] = {0, 0}, K[2] = {0, 0}, *starts[2] = {NULL, NULL};
    owners own = {{NULL, NULL}, 0};
    mover mv = {.m = m, .sp = sp, .values = malloc(PIECE), .bits = malloc(PIECE / 8)};
    dtb_status rc = mv.values && mv.bits ? DTB_OK : dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int k = 0; k < nt && rc == DTB_OK; k++) {
        const dtb_solved_table *t = dtb_sliced_pair_table(sp, k);
        const uint64_t count = dtb_index_size(t->index);
        K[k] = dtb_index_block_size(t->index);
        nb[k] = dtb_index_blocks(t->index);
        if (!(starts[k] = dtb_mpi_team_starts(m, count)))
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    if (rc == DTB_OK)
        rc = find_owners(ps, N, nb, nt, &own, e);
    for (int k = 0; k < nt && rc == DTB_OK; k++) {
        free(mv.got);
        if (!(mv.got = malloc((nb[k] ? nb[k] : 1) * sizeof *mv.got))) {
            rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
            break;
        }
        for (uint64_t b = 0, b1; b < nb[k] && rc == DTB_OK; b = b1) {
            const int o = own.of[k][b];
            const uint64_t lo = b * K[k];
            const int q0 = range_owner(starts[k], N, lo),
                      q1 = range_owner(starts[k], N, lo + K[k] - 1);
            /* the run: the blocks after b with the same solver, wholly in the same range */
            b1 = b + 1;
            while (q0 == q1 && b1 < nb[k] && own.of[k][b1] == o && (b1 + 1 - b) * K[k] <= PIECE &&
                   range_owner(starts[k], N, (b1 + 1) * K[k] - 1) == q0)
                b1++;
            for (int q = q0; q <= q1 && rc == DTB_OK; q++) {
                if (q == o || (me != o && me != q))
                    continue;
                rc = me == o ? send_run(&mv, k, lo, (b1 - b) * K[k], q, e)
                             : receive_run(&mv, k, b, b1, K[k], o, e);
            }
        }
        if (rc == DTB_OK)
            rc = store_got(&mv, k, e);
    }
    for (int i = 0; i < 2 * DEPTH; i++) /* the sends still in flight */
        finish_send(&mv, i, e, &rc);
    if (rc == DTB_OK) {
        const dtb_table_team team = dtb_mpi_team(m);
        rc = dtb_sliced_pair_set_team(sp, &team, (const uint64_t *const *)starts, e);
    }
    dtb_sliced_pair_state_free(mv.state);
    free(mv.values), free(mv.bits), free(mv.got);
    free(own.of[0]), free(own.of[1]);
    free(starts[0]), free(starts[1]);
    m->traffic.exchange_seconds += me == 0 ? dtb_mpi_now() - started : 0;
    return rc;
}
