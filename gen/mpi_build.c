/* The MPI build (gen/mpi_build.h). Rank 0 is the coordinator, the others are workers.
 *
 * Protocol: rank 0 sends commands (struct cmd, tag TAG_CMD) and each worker obeys them in order:
 *   FILE m x            rank 0's table file of metric x of m is complete (its size and XXH64
 *                       come along): a worker whose copy differs answers so (TAG_REPLY) and is
 *                       sent the bytes (TAG_FILE), which it writes in its table directory;
 *   ATTACH m x          the worker reads m from its copy of that file from now on;
 *   DROP m              the worker drops it;
 *   PAIR m kept         a pair to share: both sides make a dtb_pair_solver of it; kept: every
 *                       rank keeps the parts it solves in a slice store of its own;
 *   RUN a               level a: every rank (rank 0 too) solves its own parts of it (the same
 *                       cuts everywhere, a contiguous run of parts a rank) and sends rank 0,
 *                       for each part, a note of it (kept) or its values and capture bits
 *                       (TAG_RESULT, dtb_pair_solver_pack's layout), then the ranks exchange the
 *                       units of level a that the others' parts of the level below read by man
 *                       moves (TAG_LEVEL, dtb_pair_solver_reach), one message each way a pair of
 *                       ranks;
 *   END                 the pair is done: the worker sends its stats (TAG_STATS); kept: every
 *                       rank gets the blocks its range of the files touches (TAG_MOVE,
 *                       gen/mpi_moves.c) and the ranks write the pair's tables together, each
 *                       compressing its range (TAG_WRITE, gen/mpi_team.c);
 *   LEAN m kept         a kings-only pair split between the ranks (gen/mpi_lean.c); kept:
 *                       each rank keeps its range and the ranks write the tables together;
 *   STOP                the build is over.
 * Values, capture bits and resolved positions travel compressed (dtb_mpi_zsend: a frame's size,
 * then the frame).
 * A rank that fails reports why, naming itself, and ends the job (dtb_mpi_close).
 *
 * Memory: no rank holds a finished table's values. Each reads finished tables from its copy of
 * their files (decoded on demand, as a build with --from-files does): in a directory shared with
 * rank 0 the copy is rank 0's file itself and nothing is sent; on a node's own disk rank 0 sends
 * the compressed file once, when the copy is missing or differs. Of the pair being shared a rank
 * holds its own parts of the level being solved, its parts of the level above and the units of
 * the level above that its parts read (the tables are sliced: pages are taken as they are
 * written and given back as each level ends), and its parts of every level in its slice store;
 * the tables are written by every rank from its store, each its range. So a rank's share of a
 * level falls as ranks are added. (A build that needs the whole pair on rank 0, MTC tables or
 * --slices never, has the workers send their values instead, and rank 0 write alone.)
 *
 * Why the levels' values are exchanged and not passed through files: the levels of a pair depend
 * on one another, so the values a level reads must reach its ranks before it starts; files
 * would rely on the cluster file system showing them to every node at once.
 *
 * Faults: MPI errors are returned (MPI_ERRORS_RETURN on the job's communicator) and reported
 * naming the rank; a part whose result does not come within its deadline (a rank that died
 * without the launcher ending the job, or hangs) stops the build with a message naming it. */
#include "mpi_build.h"

#include <omp.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_job.h"
#include "setfiles.h"

/* Values whose distance is in a long list (beyond 254 plies) travel as escape bytes alone. */
#define LONG_REFUSED "a distance to win beyond 254 plies: MPI ranks do not share long lists " \
                     "yet; build this pair in one process"

/* Pairs under DTB_BUILD_SHARE_MIN_POSITIONS are solved by rank 0 alone. So are kingless pairs:
 * their units are single positions, and finding, packing and unpacking them one by one cost as
 * much as solving them (MMMvMM, 2.5e7 positions, 2 ranks of one thread: 30.3 s shared against
 * 14.9 s for one process of two threads; docs/MEASUREMENTS.md, "MPI"). */
#define SHARE_MIN_POSITIONS DTB_BUILD_SHARE_MIN_POSITIONS
/* Results a rank has on their way to rank 0 at once: it solves its next part while they go. */
enum { DEPTH = 2 };

dtb_status dtb_mpi_open(int *argc, char ***argv, dtb_mpi **out, dtb_error *e)
{
    *out = NULL;
    /* Launched by mpirun (Open MPI), by mpiexec of MPICH or by srun (PMI, PMIx): else no job. */
    static const char *const launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                           "MPI_LOCALNRANKS"};
    bool job = false;
    for (size_t i = 0; i < sizeof launched / sizeof launched[0]; i++)
        job |= getenv(launched[i]) != NULL;
    if (!job)
        return DTB_OK;
    int provided = 0;
    int err = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (err != MPI_SUCCESS)
        return dtb_error_set(e, DTB_E_IO, "MPI_Init_thread failed (error %d)", err);
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        return dtb_error_set(e, DTB_E_IO, "the MPI library gives no thread support (FUNNELED)");
    }
    dtb_mpi *m = calloc(1, sizeof *m);
    if (!m) {
        MPI_Finalize();
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (err != MPI_SUCCESS) {
        free(m);
        MPI_Finalize();
        return dtb_mpi_failed(e, 0, err, "MPI_Comm_dup");
    }
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    const char *t = getenv("DTB_MPI_TIMEOUT");
    m->timeout = t && atof(t) > 0 ? atof(t) : 600;
    if (m->size == 1) { /* a job of one: the process alone */
        MPI_Comm_free(&m->comm);
        free(m);
        MPI_Finalize();
        return DTB_OK;
    }
    *out = m;
    return DTB_OK;
}

int dtb_mpi_rank(const dtb_mpi *m) { return m ? m->rank : 0; }
int dtb_mpi_size(const dtb_mpi *m) { return m ? m->size : 1; }

void dtb_mpi_traffic_get(const dtb_mpi *m, dtb_mpi_traffic *t)
{
    *t = m ? m->traffic : (dtb_mpi_traffic){.ranks = 1};
    if (m)
        t->seconds = dtb_mpi_now() - m->started;
}

/* ---- rank 0 ------------------------------------------------------------------------------ */

/* Every worker reads mt from its copy of rank 0's file at path from now on (a losses-only DTW
 * table with the WLD file beside it, which goes along). */
static dtb_status lead_attached(void *ctx, dtb_material mt, const char *path, dtb_metric x,
                                dtb_error *e)
{
    dtb_mpi *m = ctx;
    dtb_status rc = dtb_mpi_share_file(m, mt, x, path, e);
    if (rc == DTB_OK && x == DTB_METRIC_DTW) {
        char wld[4096];
        snprintf(wld, sizeof wld, "%s", path);
        char *dot = strrchr(wld, '.');
        if (dot && strcmp(dot, ".dtw") == 0 && (size_t)(dot - wld) + 5 <= sizeof wld) {
            strcpy(dot, ".wld");
            if (access(wld, F_OK) == 0)
                rc = dtb_mpi_share_file(m, mt, DTB_METRIC_WLD, wld, e);
        }
    }
    cmd c = dtb_mpi_cmd_of(OP_ATTACH, mt);
    c.level = (int32_t)x;
    return rc == DTB_OK ? dtb_mpi_send_all(m, &c, e) : rc;
}

static dtb_status lead_dropped(void *ctx, dtb_material mt, dtb_error *e)
{
    dtb_mpi *m = ctx;
    const cmd c = dtb_mpi_cmd_of(OP_DROP, mt);
    return dtb_mpi_send_all(m, &c, e);
}

struct dispatch {
    dtb_mpi *m;
    bool shared;        /* the levels are shared out (else rank 0 solves them alone) */
    bool kept;          /* shared, and every rank keeps the parts it solves in a store of its
                           own (the workers send rank 0 a note of each, not its values) */
    const dtb_part_store *store; /* rank 0's, or NULL */
    dtb_pair_solver *ps;
    dtb_solve_progress progress;
    void *user;
    uint64_t done, total;
};

static uint64_t result_bytes(uint64_t positions) { return positions + (positions + 7) / 8; }

/* What a worker sends rank 0 of a part it solved: its values and capture bits, or, when it
 * keeps them, a note of its positions (rank 0 still counts the part and keeps its deadline). */
static uint64_t message_bytes(bool kept, uint64_t positions)
{
    return kept ? sizeof(uint64_t) : result_bytes(positions);
}

static void report(dispatch *d, uint64_t positions, uint64_t units, bool here)
{
    d->done += positions;
    d->m->traffic.positions += positions;
    d->m->traffic.units += units;
    if (here)
        d->m->traffic.positions_rank0 += positions;
    if (d->progress)
        d->progress(d->user, d->done, d->total);
}

/* ---- a level partitioned between the ranks (every rank, rank 0 included) ----------------- */

/* Rank 0's receipt of the workers' parts of a level (or their notes), a part of each worker at a
 * time. */
typedef struct inbox {
    dispatch *d;
    const dtb_part_store *store;
    const dtb_mpi_level *lp;
    uint64_t *next;     /* per rank: its next part to come (lp->n when none is left) */
    uint8_t **buf;
    dtb_mpi_zmsg *msg;  /* compressed (dtb_mpi_zsend) */
    double *since;      /* when the rank's last part came (or the level began) */
    int waiting;        /* ranks with a part to come */
} inbox;

/* Rank r's next part after part k (lp->n: none). */
static uint64_t next_of(const dtb_mpi_level *lp, int r, int ranks, uint64_t k)
{
    for (; k < lp->n && dtb_mpi_owner(lp, k, ranks) != r; k++)
        ;
    return k;
}

static dtb_status post_next(inbox *in, int r, dtb_error *e)
{
    dtb_mpi *m = in->d->m;
    const uint64_t k = in->next[r];
    if (k >= in->lp->n) {
        in->waiting--;
        return DTB_OK;
    }
    const uint64_t n = dtb_pair_solver_positions(in->d->ps, in->lp->a, in->lp->cuts[k],
                                                 in->lp->cuts[k + 1]);
    const uint64_t bytes = message_bytes(in->d->kept, n);
    in->buf[r] = malloc(bytes ? bytes : 1);
    if (!in->buf[r])
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    const int err = dtb_mpi_zrecv(in->buf[r], bytes, r, TAG_RESULT, m->comm, &in->msg[r]);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, r, err, "receiving a result");
}

/* Takes in every part that has come: its values and capture bits into rank 0's tables, then
 * into the store (its pages given back: another rank holds what the next level reads of it). */
static dtb_status take_in(inbox *in, int *got, dtb_error *e)
{
    dispatch *d = in->d;
    dtb_mpi *m = d->m;
    const dtb_mpi_level *lp = in->lp;
    dtb_status rc = DTB_OK;
    for (int r = 1; r < m->size && rc == DTB_OK; r++) {
        const uint64_t k = in->next[r];
        if (k >= lp->n)
            continue;
        const uint64_t b0 = lp->cuts[k], b1 = lp->cuts[k + 1];
        const uint64_t n = dtb_pair_solver_positions(d->ps, lp->a, b0, b1);
        bool flag = false;
        const int err = dtb_mpi_ztest(&in->msg[r], &flag);
        if (err != MPI_SUCCESS)
            return dtb_mpi_failed(e, r, err, "receiving a result");
        if (!flag) {
            if (dtb_mpi_now() - in->since[r] > m->timeout + (double)n / 2e4)
                return dtb_error_set(e, DTB_E_IO,
                                     "rank %d gave no result for %.0f s (a part of %llu "
                                     "positions): it died or hangs; rerun the same command to "
                                     "resume", r, dtb_mpi_now() - in->since[r],
                                     (unsigned long long)n);
            continue;
        }
        (*got)++;
        uint64_t noted = n;
        if (d->kept)
            memcpy(&noted, in->buf[r], sizeof noted);
        else
            dtb_pair_solver_unpack(d->ps, lp->a, b0, b1, in->buf[r], in->buf[r] + n);
        free(in->buf[r]);
        in->buf[r] = NULL;
        m->traffic.bytes_received += dtb_mpi_zbytes(&in->msg[r]);
        dtb_mpi_zfree(&in->msg[r]);
        report(d, n, dtb_pair_solver_units(d->ps, lp->a, b0, b1), false);
        if (noted != n)
            rc = dtb_error_set(e, DTB_E_IO, "rank %d solved a part of %llu positions, not %llu",
                               r, (unsigned long long)noted, (unsigned long long)n);
        else if (in->store && !d->kept)
            rc = in->store->put(in->store->ctx, lp->a, b0, b1, true, e);
        in->since[r] = dtb_mpi_now();
        in->next[r] = next_of(lp, r, m->size, k + 1);
        if (rc == DTB_OK)
            rc = post_next(in, r, e);
    }
    return rc;
}

/* Rank 0's own part k is solved: into the store, its pages kept (the next level may read it). */
static dtb_status own_done(void *ctx, const dtb_mpi_level *lp, uint64_t k, dtb_error *e)
{
    inbox *in = ctx;
    const uint64_t b0 = lp->cuts[k], b1 = lp->cuts[k + 1];
    report(in->d, dtb_pair_solver_positions(in->d->ps, lp->a, b0, b1),
           dtb_pair_solver_units(in->d->ps, lp->a, b0, b1), true);
    dtb_status rc = in->store ? in->store->put(in->store->ctx, lp->a, b0, b1, false, e) : DTB_OK;
    int got = 0;
    return rc == DTB_OK ? take_in(in, &got, e) : rc; /* the workers' parts between rank 0's own */
}

/* Level a of the shared pair, by every rank: each solves its parts, the workers send theirs to
 * rank 0, which puts every part into the store as it comes; then the units the level below
 * reads are exchanged between the ranks. */
static dtb_status lead_level(dispatch *d, int a, const dtb_part_store *store, dtb_error *e)
{
    dtb_mpi *m = d->m;
    const int N = m->size;
    m->traffic.levels++;
    const cmd c = {.op = OP_RUN, .level = a};
    dtb_status rc = dtb_mpi_send_all(m, &c, e);
    dtb_mpi_level la = {0}, lb = {0};
    if (rc == DTB_OK)
        rc = dtb_mpi_cut_level(d->ps, a, N, &la, e);
    inbox in = {.d = d, .store = store, .lp = &la,
                .next = calloc((size_t)N, sizeof *in.next),
                .buf = calloc((size_t)N, sizeof *in.buf),
                .msg = calloc((size_t)N, sizeof *in.msg),
                .since = calloc((size_t)N, sizeof *in.since)};
    if (rc == DTB_OK && (!in.next || !in.buf || !in.msg || !in.since))
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int r = 1; r < N && rc == DTB_OK; r++) {
        in.next[r] = next_of(&la, r, N, 0);
        in.since[r] = dtb_mpi_now();
        in.waiting++;
        rc = post_next(&in, r, e);
    }
    if (rc == DTB_OK)
        rc = dtb_mpi_solve_own(m, d->ps, &la, own_done, &in, e);
    while (rc == DTB_OK && in.waiting > 0) {
        int got = 0;
        rc = take_in(&in, &got, e);
        if (rc == DTB_OK && !got)
            dtb_mpi_nap();
    }
    const int b = dtb_pair_solver_next_level(d->ps, a);
    if (rc == DTB_OK && b == a - 1 && (rc = dtb_mpi_cut_level(d->ps, b, N, &lb, e)) == DTB_OK)
        rc = dtb_mpi_exchange(m, d->ps, &la, &lb, e);
    /* After a failure the job is aborted (dtb_mpi_close): outstanding receives stay. */
    for (int r = 0; in.buf && r < N; r++)
        free(in.buf[r]);
    for (int r = 0; in.msg && r < N; r++)
        dtb_mpi_zfree(&in.msg[r]);
    free(in.next), free(in.buf), free(in.msg), free(in.since);
    free(la.cuts);
    free(lb.cuts);
    return rc;
}

/* The pair's stats: rank 0's own, merged with every worker's. */
static dtb_status gather_stats(dtb_mpi *m, dtb_pair_solver *ps, dtb_solve_stats stats[2],
                               dtb_error *e)
{
    dtb_pair_solver_stats(ps, stats);
    return dtb_mpi_gather_stats(m, stats, e);
}

/* The pair of ps begins (dtb_level_solvers): shared out when it is large enough and has kings,
 * else solved by rank 0 alone (the workers read it from its files, if a later pair does). */
static dtb_status lead_begin(void *ctx, dtb_pair_solver *ps, const dtb_part_store *store,
                             dtb_solve_progress progress, void *user, dtb_error *e)
{
    dtb_mpi *m = ctx;
    assert(!m->d && "one pair at a time");
    dispatch *d = calloc(1, sizeof *d);
    if (!d)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    uint64_t total = 0;
    for (int a = dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP); a >= 0;
         a = dtb_pair_solver_next_level(ps, a))
        total += dtb_pair_solver_positions(ps, a, 0, dtb_pair_solver_blocks(ps));
    *d = (dispatch){.m = m, .ps = ps, .progress = progress, .user = user, .total = total,
                    .shared = total >= SHARE_MIN_POSITIONS && !dtb_pair_solver_kingless(ps),
                    .store = store};
    d->kept = d->shared && store && store->pair;
    m->d = d;
    if (!d->shared)
        return DTB_OK;
    cmd c = dtb_mpi_cmd_of(OP_PAIR, dtb_pair_solver_material(ps));
    c.arg = d->kept;
    return dtb_mpi_send_all(m, &c, e);
}

static dtb_status lead_solve_level(void *ctx, dtb_pair_solver *ps, int a,
                                   const dtb_part_store *store, dtb_error *e)
{
    dtb_mpi *m = ctx;
    dispatch *d = m->d;
    if (d->shared)
        return lead_level(d, a, store, e);
    const uint64_t nblocks = dtb_pair_solver_blocks(ps);
    dtb_status rc = dtb_pair_solver_solve(ps, a, 0, nblocks, NULL, NULL, e);
    if (rc == DTB_OK)
        report(d, dtb_pair_solver_positions(ps, a, 0, nblocks),
               dtb_pair_solver_units(ps, a, 0, nblocks), true);
    if (rc == DTB_OK && store) /* kept: the level below reads it */
        rc = store->put(store->ctx, a, 0, nblocks, false, e);
    return rc;
}

static void dispatch_free(dtb_mpi *m)
{
    free(m->d);
    m->d = NULL;
}

/* The pair's stats, every worker's merged when it was shared. */
static dtb_status lead_end(void *ctx, dtb_pair_solver *ps, dtb_solve_stats stats[2], dtb_error *e)
{
    dtb_mpi *m = ctx;
    dtb_status rc = DTB_OK;
    if (m->d->shared) {
        const cmd c = {.op = OP_END};
        rc = dtb_mpi_send_all(m, &c, e);
        if (rc == DTB_OK)
            rc = gather_stats(m, ps, stats, e);
        /* kept: every rank gets the blocks it writes; the tables are written by all of them */
        if (rc == DTB_OK && m->d->kept)
            rc = dtb_mpi_move_blocks(m, ps, m->d->store->pair, e);
        m->traffic.team_pairs += rc == DTB_OK && m->d->kept;
    } else {
        dtb_pair_solver_stats(ps, stats);
    }
    dispatch_free(m);
    return rc;
}

static dtb_status lead_solve_pair(void *ctx, dtb_solved *s, dtb_material mt, bool lean,
                                  dtb_sliced_pair **out, dtb_solve_stats stats[2],
                                  dtb_solve_progress progress, void *user, dtb_error *e)
{
    dtb_mpi *m = ctx;
    const dtb_material fm = dtb_material_flip(mt);
    const bool self = dtb_material_equal(&mt, &fm);
    dtb_index *ix = NULL; /* its size, before the tables are added (whole, or sliced) */
    const dtb_status ist = dtb_index_create(dtb_solved_board(s), mt, &ix);
    if (ist != DTB_OK)
        return dtb_error_set(e, ist, "cannot index the material");
    const uint64_t positions = (self ? 1 : 2) * dtb_index_size(ix); /* a flip: as many */
    dtb_index_free(ix);
    /* A kings-only pair is one unit: split between the ranks (each a range of its positions)
     * when it is large enough, else solved alone (the workers read it from its files, if a
     * later pair does). */
    if (lean && m->size > 1 && positions >= SHARE_MIN_POSITIONS)
        return dtb_mpi_lean_lead(m, s, mt, out, stats, progress, user, e);
    if (!dtb_solved_add(s, mt, e) || !dtb_solved_add(s, fm, e))
        return DTB_E_NOMEM;
    if (lean) {
        const dtb_status rc = dtb_solve_pair(s, mt, true, stats, progress, user, e);
        m->traffic.positions += rc == DTB_OK ? positions : 0;
        m->traffic.positions_rank0 += rc == DTB_OK ? positions : 0;
        m->traffic.units += rc == DTB_OK;
        return rc;
    }
    dtb_pair_solver *ps = NULL;
    dtb_status rc = dtb_pair_solver_create(s, mt, &ps, e);
    if (rc == DTB_OK)
        rc = lead_begin(m, ps, NULL, progress, user, e);
    for (int a = rc == DTB_OK ? dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP) : -1;
         a >= 0 && rc == DTB_OK; a = dtb_pair_solver_next_level(ps, a))
        rc = lead_solve_level(m, ps, a, NULL, e); /* rank 0 keeps the whole pair */
    if (rc == DTB_OK)
        rc = lead_end(m, ps, stats, e);
    /* After a failure the job is aborted (dtb_mpi_close): outstanding receives stay. */
    dtb_pair_solver_free(ps);
    return rc;
}

dtb_status dtb_mpi_lead(dtb_mpi *m, bool use_work_files, const dtb_build_peers **out, dtb_error *e)
{
    *out = NULL;
    if (!m || m->rank != 0)
        return DTB_OK;
    m->started = dtb_mpi_now();
    m->traffic.ranks = m->size;
    m->peers = (dtb_build_peers){
        .ctx = m, .solve_pair = lead_solve_pair, .attached = lead_attached,
        .dropped = lead_dropped,
        .levels = {.ctx = m, .begin = lead_begin, .level = lead_solve_level, .end = lead_end}};
    cmd c = {.op = OP_START, .arg = use_work_files};
    const dtb_status rc = dtb_mpi_send_all(m, &c, e);
    if (rc == DTB_OK)
        *out = &m->peers;
    return rc;
}

void dtb_mpi_close(dtb_mpi *m, bool ok)
{
    if (!m)
        return;
    if (!ok)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (m->rank == 0 && m->peers.ctx) { /* the workers serve: stop them */
        const cmd c = {.op = OP_STOP};
        dtb_error e;
        if (dtb_mpi_send_all(m, &c, &e) != DTB_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    dispatch_free(m);
    MPI_Comm_free(&m->comm);
    free(m);
    MPI_Finalize();
}

/* ---- the other ranks --------------------------------------------------------------------- */

/* The next command from rank 0, waited for without holding a core. */
static dtb_status next_cmd(dtb_mpi *m, cmd *c, dtb_error *e)
{
    int flag = 0, err;
    while ((err = MPI_Iprobe(0, TAG_CMD, m->comm, &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS &&
           !flag)
        dtb_mpi_nap();
    if (err == MPI_SUCCESS)
        err = MPI_Recv(c, (int)sizeof *c, MPI_BYTE, 0, TAG_CMD, m->comm, MPI_STATUS_IGNORE);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, 0, err, "receiving a command");
}

/* A worker's sends of results (compressed: each frame stays until its send completes). */
typedef struct outbox {
    dtb_mpi_zmsg msg[DEPTH];
    int next;
} outbox;

/* A part solved here to rank 0: its values and capture bits, or (kept) a note of it. */
static dtb_status send_result(dtb_mpi *m, outbox *ob, dtb_pair_solver *ps, bool kept, int a,
                              uint64_t b0, uint64_t b1, dtb_error *e)
{
    const int k = ob->next;
    ob->next = (k + 1) % DEPTH;
    int err = dtb_mpi_zwait(&ob->msg[k]);
    if (err != MPI_SUCCESS)
        return dtb_mpi_failed(e, 0, err, "sending a result");
    const uint64_t n = dtb_pair_solver_positions(ps, a, b0, b1), bytes = message_bytes(kept, n);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (dtb_pair_solver_has_long(ps)) {
        free(buf);
        return dtb_error_set(e, DTB_E_RANGE, LONG_REFUSED);
    }
    if (kept)
        memcpy(buf, &n, sizeof n);
    else
        dtb_pair_solver_pack(ps, a, b0, b1, buf, buf + n);
    err = dtb_mpi_zsend(buf, bytes, 0, TAG_RESULT, m->comm, &ob->msg[k]);
    free(buf);
    return err == MPI_SUCCESS ? DTB_OK : dtb_mpi_failed(e, 0, err, "sending a result");
}

static dtb_status send_stats(dtb_mpi *m, const dtb_pair_solver *ps, dtb_error *e)
{
    dtb_solve_stats st[2];
    dtb_pair_solver_stats(ps, st);
    return dtb_mpi_send_stats(m, st, e);
}

/* A worker's state: its registry, and the pair being shared with its levels' bookkeeping. */
typedef struct worker {
    dtb_mpi *m;
    const dtb_build_options *o;
    dtb_solved *s;
    dtb_pair_solver *ps;         /* the pair being shared; NULL between pairs */
    const dtb_solved_table *t[2]; /* its tables (t[1] NULL for a material that is its own flip) */
    uint8_t *lv[2];              /* the level of each of their blocks */
    int reserved;                /* the level whose room is taken (INT32_MAX: none yet) */
    int above;                   /* the level complete before the last one (-1: none) */
    dtb_sliced_pair *kept;       /* the parts solved here, when this rank keeps them */
    outbox ob;
    char work[4096];
} worker;

/* The pair's tables get the room of level a, once, before it is written (solved or received). */
static dtb_status reserve(worker *w, int a, dtb_error *e)
{
    if (a == w->reserved)
        return DTB_OK;
    assert(a < w->reserved && "levels run from the top down");
    w->reserved = a;
    dtb_status rc = DTB_OK;
    for (int k = 0; k < 2 && w->t[k] && rc == DTB_OK; k++)
        rc = dtb_sliced_reserve_level(w->s, w->t[k], w->lv[k], a, e);
    return rc;
}

/* A worker's part k of a level is solved (unless a table file did not read): to rank 0, or
 * into the store it keeps and a note of it to rank 0. */
static dtb_status worker_done(void *ctx, const dtb_mpi_level *lp, uint64_t k, dtb_error *e)
{
    worker *w = ctx;
    const uint64_t b0 = lp->cuts[k], b1 = lp->cuts[k + 1];
    dtb_status rc = dtb_solved_read_status(w->s, e);
    if (rc == DTB_OK && w->kept) /* its pages stay: the level below may read it */
        rc = dtb_sliced_pair_put_part(w->kept, w->ps, lp->a, b0, b1, false, e);
    return rc == DTB_OK ? send_result(w->m, &w->ob, w->ps, w->kept != NULL, lp->a, b0, b1, e) : rc;
}

/* OP_RUN a: this rank's parts of level a solved and sent, the units the level below reads
 * exchanged; then the level before a is read by nobody here: its pages go back. */
static dtb_status worker_level(worker *w, int a, dtb_error *e)
{
    dtb_pair_solver *ps = w->ps;
    dtb_mpi_level la = {0}, lb = {0};
    dtb_status rc = reserve(w, a, e);
    if (rc == DTB_OK)
        rc = dtb_mpi_cut_level(ps, a, w->m->size, &la, e);
    if (rc == DTB_OK)
        rc = dtb_mpi_solve_own(w->m, ps, &la, worker_done, w, e);
    const int b = dtb_pair_solver_next_level(ps, a);
    if (rc == DTB_OK && b == a - 1 && (rc = dtb_mpi_cut_level(ps, b, w->m->size, &lb, e)) == DTB_OK)
        rc = dtb_mpi_exchange(w->m, ps, &la, &lb, e);
    free(la.cuts);
    free(lb.cuts);
    for (int k = 0; k < 2 && w->t[k] && rc == DTB_OK && w->above >= 0; k++)
        dtb_sliced_release_level(w->s, w->t[k], w->lv[k], w->above);
    w->above = a;
    return rc;
}

/* The pair of OP_PAIR: its tables added sliced (pages taken only as levels are written), then
 * its solver; kept: the store of the parts this rank solves, beside its work files. */
static dtb_status begin_pair(worker *w, dtb_material mt, bool kept, dtb_error *e)
{
    const dtb_material ms[2] = {mt, dtb_material_flip(mt)};
    const bool self = dtb_material_equal(&ms[0], &ms[1]);
    for (int k = 0; k < (self ? 1 : 2); k++) {
        w->t[k] = dtb_solved_add_sliced(w->s, ms[k], false, e);
        if (!w->t[k])
            return DTB_E_NOMEM;
        w->lv[k] = malloc(dtb_index_blocks(w->t[k]->index));
        if (!w->lv[k])
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    dtb_status rc = dtb_pair_solver_create(w->s, mt, &w->ps, e);
    if (rc == DTB_OK)
        dtb_pair_solver_levels(w->ps, w->lv[0], w->lv[1]);
    char dir[4096];
    const char *scratch = kept ? dtb_build_work_dir(w->o, dir) : NULL;
    if (rc == DTB_OK && kept && (rc = dtb_setfiles_make_dir(scratch, e)) == DTB_OK)
        rc = dtb_sliced_pair_create(w->s, w->t, self ? 1 : 2, scratch,
                                    w->o->dtw_full && dtb_build_writes_dtw(w->o, &mt), &w->kept, e);
    w->reserved = INT32_MAX;
    w->above = -1;
    return rc;
}

/* The pair is done here: its solver and bookkeeping go (its tables stay in the registry until
 * rank 0 attaches their files or drops them). */
static void end_pair(worker *w)
{
    dtb_pair_solver_free(w->ps);
    w->ps = NULL;
    dtb_sliced_pair_free(w->kept);
    w->kept = NULL;
    for (int k = 0; k < 2; k++) {
        free(w->lv[k]);
        w->lv[k] = NULL;
        w->t[k] = NULL;
    }
}

/* Carries out one command. *stop when it was the last. */
static dtb_status obey(worker *w, const cmd *c, bool *stop, dtb_error *e)
{
    const dtb_build_options *o = w->o;
    switch (c->op) {
    case OP_START: {
        if (!c->arg)
            return DTB_OK;
        /* Work files as rank 0 has them, within this node's budget: --work, or next to where
         * the tables would go. */
        dtb_build_budget budget;
        dtb_status rc = dtb_build_plan_budget(o, &budget, e);
        if (rc == DTB_OK && o->work_dir) {
            snprintf(w->work, sizeof w->work, "%s", o->work_dir);
        } else if (rc == DTB_OK) {
            rc = dtb_setfiles_make_dir(o->out_dir, e);
            snprintf(w->work, sizeof w->work, "%s/%s", o->out_dir, o->variant->name);
        }
        if (rc == DTB_OK)
            rc = dtb_setfiles_make_dir(w->work, e);
        return rc == DTB_OK ? dtb_solved_use_work_files(w->s, w->work, budget.monitor_cap, e) : rc;
    }
    case OP_FILE:
        return dtb_mpi_receive_file(w->m, w->o, c, e);
    case OP_ATTACH:
        return dtb_mpi_attach(w->s, w->o, c, e);
    case OP_DROP:
        dtb_solved_drop(w->s, dtb_mpi_material_of(c));
        return DTB_OK;
    case OP_PAIR:
        return begin_pair(w, dtb_mpi_material_of(c), c->arg != 0, e);
    case OP_LEAN:
        return dtb_mpi_lean_serve(w->m, w->o, w->s, c, e);
    case OP_RUN:
        return w->ps ? worker_level(w, c->level, e)
                     : dtb_error_set(e, DTB_E_INVALID, "internal error: a level without its pair");
    case OP_END: { /* kept: the blocks this rank writes come, then every rank writes */
        dtb_status rc = w->ps ? send_stats(w->m, w->ps, e) : DTB_OK;
        if (rc == DTB_OK && w->ps && w->kept)
            rc = dtb_mpi_move_blocks(w->m, w->ps, w->kept, e);
        if (rc == DTB_OK && w->ps && w->kept)
            rc = dtb_build_write_pair(o, w->s, dtb_pair_solver_material(w->ps), w->kept, e);
        end_pair(w);
        return rc;
    }
    case OP_STOP:
        *stop = true;
        return DTB_OK;
    }
    return dtb_error_set(e, DTB_E_INVALID, "internal error: unknown command %d", c->op);
}

dtb_status dtb_mpi_serve(dtb_mpi *m, const dtb_build_options *o, dtb_error *e)
{
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    dtb_board b;
    dtb_board_init(&b, o->variant);
    worker w = {.m = m, .o = o, .s = dtb_solved_create(&b)};
    if (!w.s)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (o->dtw_byte_max)
        dtb_solved_set_byte_max(w.s, o->dtw_byte_max);
    dtb_status rc = DTB_OK;
    for (bool stop = false; !stop && rc == DTB_OK;) {
        cmd c;
        rc = next_cmd(m, &c, e);
        if (rc == DTB_OK)
            rc = obey(&w, &c, &stop, e);
    }
    for (int k = 0; k < DEPTH; k++) {
        const int err = dtb_mpi_zwait(&w.ob.msg[k]);
        if (rc == DTB_OK && err != MPI_SUCCESS)
            rc = dtb_mpi_failed(e, 0, err, "sending a result");
    }
    end_pair(&w);
    dtb_solved_free(w.s);
    return rc;
}
