/* The MPI build (gen/mpi_build.h). Rank 0 is the coordinator, the others are workers.
 *
 * Protocol: rank 0 sends commands (struct cmd, tag TAG_CMD) and each worker obeys them in order:
 *   FILE m x            rank 0's table file of metric x of m is complete (its size and XXH64
 *                       come along): a worker whose copy differs answers so (TAG_REPLY) and is
 *                       sent the bytes (TAG_FILE), which it writes in its table directory;
 *   ATTACH m x          the worker reads m from its copy of that file from now on;
 *   DROP m              the worker drops it;
 *   PAIR m              a pair to share: both sides make a dtb_pair_solver of it;
 *   RUN a               level a: every rank (rank 0 too) solves its own parts of it (the same
 *                       cuts everywhere, a contiguous run of parts a rank) and sends each part's
 *                       values and capture bits to rank 0 (TAG_RESULT, dtb_pair_solver_pack's
 *                       layout), then the ranks exchange the units of level a that the others'
 *                       parts of the level below read by man moves (TAG_LEVEL,
 *                       dtb_pair_solver_reach), one message each way a pair of ranks;
 *   END                 the pair is done: the worker sends its stats (TAG_STATS);
 *   STOP                the build is over.
 * A rank that fails reports why, naming itself, and ends the job (dtb_mpi_close).
 *
 * Memory: no rank holds a finished table's values. Each reads finished tables from its copy of
 * their files (decoded on demand, as a build with --from-files does): in a directory shared with
 * rank 0 the copy is rank 0's file itself and nothing is sent; on a node's own disk rank 0 sends
 * the compressed file once, when the copy is missing or differs. Of the pair being shared a rank
 * holds its own parts of the level being solved, its parts of the level above and the units of
 * the level above that its parts read (the tables are sliced: pages are taken as they are
 * written and given back as each level ends). Rank 0 puts every part into the pair's slice
 * store as it comes and gives its pages back at once, unless it is its own; the tables are
 * written from the store. So a rank's share of a level falls as ranks are added.
 *
 * Why the levels' values are exchanged and not passed through files: the levels of a pair depend
 * on one another, so the values a level reads must reach its ranks before it starts; files
 * would rely on the cluster file system showing them to every node at once.
 *
 * Faults: MPI errors are returned (MPI_ERRORS_RETURN on the job's communicator) and reported
 * naming the rank; a part whose result does not come within its deadline (a rank that died
 * without the launcher ending the job, or hangs) stops the build with a message naming it. */
#include "mpi_build.h"

#include <mpi.h>

#include <omp.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomicfile.h"
#include "checksum.h"
#include "solve.h"

/* Values whose distance is in a long list (beyond 254 plies) travel as escape bytes alone. */
#define LONG_REFUSED "a distance to win beyond 254 plies: MPI ranks do not share long lists " \
                     "yet; build this pair in one process"

enum { TAG_CMD = 1, TAG_RESULT, TAG_STATS, TAG_REPLY, TAG_FILE, TAG_LEVEL };
enum { OP_FILE = 1, OP_ATTACH, OP_DROP, OP_PAIR, OP_RUN, OP_END, OP_STOP, OP_START };

typedef struct cmd {
    int32_t op, level;
    int32_t material[4]; /* white kings, white men, black kings, black men */
    uint64_t b0, b1;
    uint64_t arg;
} cmd;

/* Pairs under this many positions are solved by rank 0 alone and broadcast: a level of theirs
 * costs less than the messages that would share it. So are kingless pairs: their units are
 * single positions, and finding, packing and unpacking them one by one cost as much as solving
 * them (MMMvMM, 2.5e7 positions, 2 ranks of one thread: 30.3 s shared against 14.9 s for one
 * process of two threads; docs/MEASUREMENTS.md, "MPI"). */
#define SHARE_MIN_POSITIONS ((uint64_t)1 << 20)
/* A level is cut into parts of at least PART_MIN and at most PART_MAX positions, about four
 * per rank in between, so that uneven parts even out; parts smaller than PART_MIN cost more
 * in messages than they save. */
#define PART_MIN ((uint64_t)1 << 16)
#define PART_MAX ((uint64_t)1 << 23)
/* Parts a worker holds at once: while it solves one, the next is already there. */
enum { DEPTH = 2 };
/* MPI counts are ints: whole tables go in pieces of at most this. */
#define MSG_MAX ((uint64_t)1 << 30)
/* Table files are hashed, sent and written in pieces of this many bytes. */
#define FILE_CHUNK ((size_t)1 << 22)

typedef struct dispatch dispatch;

struct dtb_mpi {
    MPI_Comm comm;
    int rank, size;
    dtb_build_peers peers;
    double started;
    double timeout;         /* seconds a part may take at least before its rank counts as lost */
    dtb_mpi_traffic traffic;
    dispatch *d;            /* rank 0: the pair whose levels are being solved */
};

static double now(void) { return MPI_Wtime(); }

static void nap(void)
{
    const struct timespec t = {0, 200000}; /* 0.2 ms: waiting ranks leave the cores to others */
    nanosleep(&t, NULL);
}

static dtb_status mpi_failed(dtb_error *e, int rank, int err, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    return dtb_error_set(e, DTB_E_IO, "rank %d: %s: %s", rank, what, text);
}

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
        return mpi_failed(e, 0, err, "MPI_Comm_dup");
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
        t->seconds = now() - m->started;
}

static cmd cmd_of(int op, dtb_material mt)
{
    return (cmd){.op = op, .material = {mt.kings[0], mt.men[0], mt.kings[1], mt.men[1]}};
}

static dtb_material material_of(const cmd *c)
{
    dtb_material mt = {0};
    mt.kings[0] = c->material[0];
    mt.men[0] = c->material[1];
    mt.kings[1] = c->material[2];
    mt.men[1] = c->material[3];
    return mt;
}

/* ---- rank 0 ------------------------------------------------------------------------------ */

static dtb_status send_cmd(dtb_mpi *m, int to, const cmd *c, dtb_error *e)
{
    const int err = MPI_Send(c, (int)sizeof *c, MPI_BYTE, to, TAG_CMD, m->comm);
    if (err != MPI_SUCCESS)
        return mpi_failed(e, to, err, "sending a command");
    m->traffic.bytes_sent += sizeof *c;
    return DTB_OK;
}

static dtb_status send_all(dtb_mpi *m, const cmd *c, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (int r = 1; r < m->size && rc == DTB_OK; r++)
        rc = send_cmd(m, r, c, e);
    return rc;
}

/* Waits for req: MPI_Test in a loop (MPI moves the data along only while it is called), with
 * naps once the first 10 ms have passed so that a long wait leaves the core to others. *late
 * when allowed seconds (0: no limit) passed first. */
static int wait_for(MPI_Request *req, double allowed, bool *late)
{
    const double t0 = now();
    int err, flag = 0;
    while ((err = MPI_Test(req, &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !flag) {
        const double waited = now() - t0;
        if (allowed > 0 && waited > allowed) {
            *late = true;
            return MPI_SUCCESS;
        }
        if (waited > 0.01)
            nap();
    }
    return err;
}

/* The size and XXH64 of the file at path, read a piece at a time: what a rank's copy must
 * match. */
static dtb_status file_digest(const char *path, uint64_t *size, uint64_t *hash, dtb_error *e)
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
        err = wait_for(&req, m->timeout + (double)n / 1e6, &late);
    if (late)
        return dtb_error_set(e, DTB_E_IO, "rank %d took no table file bytes for %.0f s: it "
                             "died or hangs; rerun the same command to resume", r, m->timeout);
    if (err != MPI_SUCCESS)
        return mpi_failed(e, r, err, "sending a table file");
    m->traffic.bytes_sent += n;
    return DTB_OK;
}

/* Rank 0's complete table file of metric x of mt at path to every worker whose copy differs:
 * each says (TAG_REPLY) after the FILE command, then gets the bytes (TAG_FILE), a piece at a
 * time. */
static dtb_status share_file(dtb_mpi *m, dtb_material mt, dtb_metric x, const char *path,
                             dtb_error *e)
{
    uint64_t size, hash;
    dtb_status rc = file_digest(path, &size, &hash, e);
    cmd c = cmd_of(OP_FILE, mt);
    c.level = (int32_t)x;
    c.arg = size;
    c.b0 = hash;
    if (rc == DTB_OK)
        rc = send_all(m, &c, e);
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
            err = wait_for(&req, m->timeout, &late);
        if (late)
            rc = dtb_error_set(e, DTB_E_IO, "rank %d did not say for %.0f s whether it has %s: "
                               "it died or hangs; rerun the same command to resume", r,
                               m->timeout, path);
        else if (err != MPI_SUCCESS)
            rc = mpi_failed(e, r, err, "receiving a reply");
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

/* Every worker reads mt from its copy of rank 0's file at path from now on (a losses-only DTW
 * table with the WLD file beside it, which goes along). */
static dtb_status lead_attached(void *ctx, dtb_material mt, const char *path, dtb_metric x,
                                dtb_error *e)
{
    dtb_mpi *m = ctx;
    dtb_status rc = share_file(m, mt, x, path, e);
    if (rc == DTB_OK && x == DTB_METRIC_DTW) {
        char wld[4096];
        snprintf(wld, sizeof wld, "%s", path);
        char *dot = strrchr(wld, '.');
        if (dot && strcmp(dot, ".dtw") == 0 && (size_t)(dot - wld) + 5 <= sizeof wld) {
            strcpy(dot, ".wld");
            if (access(wld, F_OK) == 0)
                rc = share_file(m, mt, DTB_METRIC_WLD, wld, e);
        }
    }
    cmd c = cmd_of(OP_ATTACH, mt);
    c.level = (int32_t)x;
    return rc == DTB_OK ? send_all(m, &c, e) : rc;
}

static dtb_status lead_dropped(void *ctx, dtb_material mt, dtb_error *e)
{
    dtb_mpi *m = ctx;
    const cmd c = cmd_of(OP_DROP, mt);
    return send_all(m, &c, e);
}

/* A message of any size, as pieces that MPI's int counts hold, sent and received in order under
 * one tag (a part of one large unit can pass 2^31 bytes). */
typedef struct bigmsg {
    MPI_Request *req;
    int n;
} bigmsg;

static int big_post(bool send, uint8_t *buf, uint64_t n, int peer, int tag, MPI_Comm comm,
                    bigmsg *b)
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
static int big_wait(bigmsg *b)
{
    const int err = b->n ? MPI_Waitall(b->n, b->req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    free(b->req);
    *b = (bigmsg){0};
    return err;
}

struct dispatch {
    dtb_mpi *m;
    bool shared;        /* the levels are shared out (else rank 0 solves them alone) */
    dtb_pair_solver *ps;
    dtb_solve_progress progress;
    void *user;
    uint64_t done, total;
};

static uint64_t result_bytes(uint64_t positions) { return positions + (positions + 7) / 8; }

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

/* The parts of level a, as every rank cuts them: about four a rank, at least PART_MIN and at
 * most PART_MAX positions each. A rank owns a contiguous run of them (part k: rank k * ranks /
 * n), so that its units are neighbours in block order, whose men moves reach fewer units of
 * other ranks than parts dealt round-robin would (KKMvKM, 4 ranks: a rank's share of level a
 * and the units of level a + 1 it reads are 0.31 of two whole levels, against 0.42). */
typedef struct level_parts {
    int a;
    uint64_t n;
    uint64_t *cuts; /* n + 1 */
} level_parts;

static dtb_status cut_level(const dtb_pair_solver *ps, int a, int ranks, level_parts *lp,
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

static int owner(const level_parts *lp, uint64_t k, int ranks)
{
    return (int)(k * (uint64_t)ranks / lp->n);
}

/* Calls run(user, y0, y1) for every maximal run of blocks y0..y1-1 marked in need among the
 * parts of lp that rank r owns. */
static void each_run(const level_parts *lp, int r, int ranks, const uint8_t *need,
                     void (*run)(void *user, uint64_t y0, uint64_t y1), void *user)
{
    for (uint64_t k = 0; k < lp->n; k++) {
        if (owner(lp, k, ranks) != r)
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
    if (r->count)
        ;
    else if (r->unpack)
        dtb_pair_solver_unpack(r->ps, r->a, y0, y1, r->buf + r->at, NULL);
    else
        dtb_pair_solver_pack(r->ps, r->a, y0, y1, r->buf + r->at, NULL);
    r->at += n;
}

/* After level la, before level lb below it: every rank sends each other rank the values of its
 * own units of level la that the other's parts of lb read by man moves (dtb_pair_solver_reach),
 * and receives those it reads of theirs, in one message each way a pair of ranks (none when
 * empty). Every rank works out every message's runs and size from the cuts alone. */
static dtb_status exchange(dtb_mpi *m, dtb_pair_solver *ps, const level_parts *la,
                           const level_parts *lb, dtb_error *e)
{
    const int N = m->size, me = m->rank;
    const double started = now();
    const uint64_t nb = dtb_pair_solver_blocks(ps);
    uint8_t *need = calloc((size_t)N * nb, 1);
    uint8_t **buf = calloc((size_t)N * 2, sizeof *buf);
    bigmsg *msg = calloc((size_t)N * 2, sizeof *msg);
    uint64_t *len = calloc((size_t)N * 2, sizeof *len);
    if (!need || !buf || !msg || !len) {
        free(need), free(buf), free(msg), free(len);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    }
    for (uint64_t k = 0; k < lb->n; k++)
        dtb_pair_solver_reach(ps, lb->a, lb->cuts[k], lb->cuts[k + 1],
                              need + (size_t)owner(lb, k, N) * nb);
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
            err = big_post(way == 1, buf[x], len[x], q, TAG_LEVEL, m->comm, &msg[x]);
            if (err != MPI_SUCCESS)
                rc = mpi_failed(e, q, err, way ? "sending a level's units" : "receiving a level's units");
            else if (me == 0)
                *(way ? &m->traffic.bytes_sent : &m->traffic.bytes_received) += len[x];
            else if (way && q != 0)
                m->traffic.bytes_between += len[x]; /* reported with the pair's stats */
        }
    }
    /* Every message is waited for (a rank that died: the launcher ends the job, or rank 0's
     * deadlines on its next receive); then the received runs are unpacked. */
    for (size_t x = 0; x < (size_t)N * 2; x++) {
        const int werr = big_wait(&msg[x]);
        if (rc == DTB_OK && werr != MPI_SUCCESS)
            rc = mpi_failed(e, (int)(x % (size_t)N), werr, "exchanging a level's units");
    }
    for (int q = 0; q < N && rc == DTB_OK; q++)
        if (q != me && len[q]) {
            runs_msg u = {.ps = ps, .a = la->a, .buf = buf[q], .unpack = true};
            each_run(la, q, N, need + (size_t)me * nb, on_run, &u);
        }
    for (size_t x = 0; x < (size_t)N * 2; x++)
        free(buf[x]);
    free(need), free(buf), free(msg), free(len);
    m->traffic.exchange_seconds += now() - started;
    return rc;
}

/* Solves this rank's parts of level a: each part's values go to rank 0 through send (workers), or
 * to the store (rank 0: store not NULL), as they are solved. */
typedef dtb_status (*part_done)(void *ctx, const level_parts *lp, uint64_t k, dtb_error *e);

static dtb_status solve_own(dtb_mpi *m, dtb_pair_solver *ps, const level_parts *lp, part_done done,
                            void *ctx, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (uint64_t k = 0; k < lp->n && rc == DTB_OK; k++) {
        if (owner(lp, k, m->size) != m->rank)
            continue;
        rc = dtb_pair_solver_solve(ps, lp->a, lp->cuts[k], lp->cuts[k + 1], NULL, NULL, e);
        if (rc == DTB_OK)
            rc = done(ctx, lp, k, e);
    }
    return rc;
}

/* Rank 0's receipt of the workers' parts of a level, a part of each worker at a time. */
typedef struct inbox {
    dispatch *d;
    const dtb_part_store *store;
    const level_parts *lp;
    uint64_t *next;     /* per rank: its next part to come (lp->n when none is left) */
    uint8_t **buf;
    bigmsg *msg;
    double *since;      /* when the rank's last part came (or the level began) */
    int waiting;        /* ranks with a part to come */
} inbox;

/* Rank r's next part after part k (lp->n: none). */
static uint64_t next_of(const level_parts *lp, int r, int ranks, uint64_t k)
{
    for (; k < lp->n && owner(lp, k, ranks) != r; k++)
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
    in->buf[r] = malloc(result_bytes(n) ? result_bytes(n) : 1);
    if (!in->buf[r])
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    const int err = big_post(false, in->buf[r], result_bytes(n), r, TAG_RESULT, m->comm, &in->msg[r]);
    return err == MPI_SUCCESS ? DTB_OK : mpi_failed(e, r, err, "receiving a result");
}

/* Takes in every part that has come: its values and capture bits into rank 0's tables, then
 * into the store (its pages given back: another rank holds what the next level reads of it). */
static dtb_status take_in(inbox *in, int *got, dtb_error *e)
{
    dispatch *d = in->d;
    dtb_mpi *m = d->m;
    const level_parts *lp = in->lp;
    dtb_status rc = DTB_OK;
    for (int r = 1; r < m->size && rc == DTB_OK; r++) {
        const uint64_t k = in->next[r];
        if (k >= lp->n)
            continue;
        const uint64_t b0 = lp->cuts[k], b1 = lp->cuts[k + 1];
        const uint64_t n = dtb_pair_solver_positions(d->ps, lp->a, b0, b1);
        int flag = 0;
        const int err = MPI_Testall(in->msg[r].n, in->msg[r].req, &flag, MPI_STATUSES_IGNORE);
        if (err != MPI_SUCCESS)
            return mpi_failed(e, r, err, "receiving a result");
        if (!flag) {
            if (now() - in->since[r] > m->timeout + (double)n / 2e4)
                return dtb_error_set(e, DTB_E_IO,
                                     "rank %d gave no result for %.0f s (a part of %llu "
                                     "positions): it died or hangs; rerun the same command to "
                                     "resume", r, now() - in->since[r], (unsigned long long)n);
            continue;
        }
        big_wait(&in->msg[r]);
        (*got)++;
        dtb_pair_solver_unpack(d->ps, lp->a, b0, b1, in->buf[r], in->buf[r] + n);
        free(in->buf[r]);
        in->buf[r] = NULL;
        m->traffic.bytes_received += result_bytes(n);
        report(d, n, dtb_pair_solver_units(d->ps, lp->a, b0, b1), false);
        if (in->store)
            rc = in->store->put(in->store->ctx, lp->a, b0, b1, true, e);
        in->since[r] = now();
        in->next[r] = next_of(lp, r, m->size, k + 1);
        if (rc == DTB_OK)
            rc = post_next(in, r, e);
    }
    return rc;
}

/* Rank 0's own part k is solved: into the store, its pages kept (the next level may read it). */
static dtb_status own_done(void *ctx, const level_parts *lp, uint64_t k, dtb_error *e)
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
    dtb_status rc = send_all(m, &c, e);
    level_parts la = {0}, lb = {0};
    if (rc == DTB_OK)
        rc = cut_level(d->ps, a, N, &la, e);
    inbox in = {.d = d, .store = store, .lp = &la,
                .next = calloc((size_t)N, sizeof *in.next), .buf = calloc((size_t)N, sizeof *in.buf),
                .msg = calloc((size_t)N, sizeof *in.msg), .since = calloc((size_t)N, sizeof *in.since)};
    if (rc == DTB_OK && (!in.next || !in.buf || !in.msg || !in.since))
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int r = 1; r < N && rc == DTB_OK; r++) {
        in.next[r] = next_of(&la, r, N, 0);
        in.since[r] = now();
        in.waiting++;
        rc = post_next(&in, r, e);
    }
    if (rc == DTB_OK)
        rc = solve_own(m, d->ps, &la, own_done, &in, e);
    while (rc == DTB_OK && in.waiting > 0) {
        int got = 0;
        rc = take_in(&in, &got, e);
        if (rc == DTB_OK && !got)
            nap();
    }
    const int b = dtb_pair_solver_next_level(d->ps, a);
    if (rc == DTB_OK && b == a - 1 && (rc = cut_level(d->ps, b, N, &lb, e)) == DTB_OK)
        rc = exchange(m, d->ps, &la, &lb, e);
    /* After a failure the job is aborted (dtb_mpi_close): outstanding receives stay. */
    for (int r = 0; in.buf && r < N; r++)
        free(in.buf[r]);
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
    for (int r = 1; r < m->size; r++) {
        int64_t w[15];
        MPI_Request req;
        int err = MPI_Irecv(w, 15, MPI_INT64_T, r, TAG_STATS, m->comm, &req);
        bool late = false;
        if (err == MPI_SUCCESS)
            err = wait_for(&req, m->timeout, &late);
        if (late)
            return dtb_error_set(e, DTB_E_IO, "rank %d sent no stats for %.0f s: it died or "
                                 "hangs; rerun the same command to resume", r, m->timeout);
        if (err != MPI_SUCCESS)
            return mpi_failed(e, r, err, "receiving stats");
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

/* The pair of ps begins (dtb_level_solvers): shared out when it is large enough and has kings,
 * else solved by rank 0 alone (the workers read it from its files, if a later pair does). */
static dtb_status lead_begin(void *ctx, dtb_pair_solver *ps, dtb_solve_progress progress,
                             void *user, dtb_error *e)
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
                    .shared = total >= SHARE_MIN_POSITIONS && !dtb_pair_solver_kingless(ps)};
    m->d = d;
    if (!d->shared)
        return DTB_OK;
    const cmd c = cmd_of(OP_PAIR, dtb_pair_solver_material(ps));
    return send_all(m, &c, e);
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
        rc = send_all(m, &c, e);
        if (rc == DTB_OK)
            rc = gather_stats(m, ps, stats, e);
    } else {
        dtb_pair_solver_stats(ps, stats);
    }
    dispatch_free(m);
    return rc;
}

static dtb_status lead_solve_pair(void *ctx, dtb_solved *s, dtb_material mt, bool lean,
                                  dtb_solve_stats stats[2], dtb_solve_progress progress,
                                  void *user, dtb_error *e)
{
    dtb_mpi *m = ctx;
    /* A kings-only pair is one unit: solved alone (the workers read it from its files, if a
     * later pair does). */
    if (lean) {
        const dtb_status rc = dtb_solve_pair(s, mt, true, stats, progress, user, e);
        const dtb_material fm = dtb_material_flip(mt);
        const uint64_t n = stats[0].positions +
                           (dtb_material_equal(&mt, &fm) ? 0 : stats[1].positions);
        m->traffic.positions += rc == DTB_OK ? n : 0;
        m->traffic.positions_rank0 += rc == DTB_OK ? n : 0;
        m->traffic.units += rc == DTB_OK;
        return rc;
    }
    dtb_pair_solver *ps = NULL;
    dtb_status rc = dtb_pair_solver_create(s, mt, &ps, e);
    if (rc == DTB_OK)
        rc = lead_begin(m, ps, progress, user, e);
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
    m->started = now();
    m->traffic.ranks = m->size;
    m->peers = (dtb_build_peers){
        .ctx = m, .solve_pair = lead_solve_pair, .attached = lead_attached,
        .dropped = lead_dropped,
        .levels = {.ctx = m, .begin = lead_begin, .level = lead_solve_level, .end = lead_end}};
    cmd c = {.op = OP_START, .arg = use_work_files};
    const dtb_status rc = send_all(m, &c, e);
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
        if (send_all(m, &c, &e) != DTB_OK)
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
    while ((err = MPI_Iprobe(0, TAG_CMD, m->comm, &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !flag)
        nap();
    if (err == MPI_SUCCESS)
        err = MPI_Recv(c, (int)sizeof *c, MPI_BYTE, 0, TAG_CMD, m->comm, MPI_STATUS_IGNORE);
    return err == MPI_SUCCESS ? DTB_OK : mpi_failed(e, 0, err, "receiving a command");
}

/* A worker's sends of results: the buffer of each stays until its send completes. */
typedef struct outbox {
    uint8_t *buf[DEPTH];
    bigmsg msg[DEPTH];
    int next;
} outbox;

static dtb_status send_result(dtb_mpi *m, outbox *ob, dtb_pair_solver *ps, int a, uint64_t b0,
                              uint64_t b1, dtb_error *e)
{
    const int k = ob->next;
    ob->next = (k + 1) % DEPTH;
    int err = big_wait(&ob->msg[k]);
    if (err != MPI_SUCCESS)
        return mpi_failed(e, 0, err, "sending a result");
    free(ob->buf[k]);
    const uint64_t n = dtb_pair_solver_positions(ps, a, b0, b1);
    ob->buf[k] = malloc(result_bytes(n) ? result_bytes(n) : 1);
    if (!ob->buf[k])
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (dtb_pair_solver_has_long(ps))
        return dtb_error_set(e, DTB_E_RANGE, LONG_REFUSED);
    dtb_pair_solver_pack(ps, a, b0, b1, ob->buf[k], ob->buf[k] + n);
    err = big_post(true, ob->buf[k], result_bytes(n), 0, TAG_RESULT, m->comm, &ob->msg[k]);
    return err == MPI_SUCCESS ? DTB_OK : mpi_failed(e, 0, err, "sending a result");
}

static dtb_status send_stats(dtb_mpi *m, const dtb_pair_solver *ps, dtb_error *e)
{
    dtb_solve_stats st[2];
    dtb_pair_solver_stats(ps, st);
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
    return err == MPI_SUCCESS ? DTB_OK : mpi_failed(e, 0, err, "sending stats");
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

/* A worker's part k of a level is solved: to rank 0 (unless a table file did not read). */
static dtb_status worker_done(void *ctx, const level_parts *lp, uint64_t k, dtb_error *e)
{
    worker *w = ctx;
    const dtb_status rc = dtb_solved_read_status(w->s, e);
    return rc == DTB_OK ? send_result(w->m, &w->ob, w->ps, lp->a, lp->cuts[k], lp->cuts[k + 1], e)
                        : rc;
}

/* OP_RUN a: this rank's parts of level a solved and sent, the units the level below reads
 * exchanged; then the level before a is read by nobody here: its pages go back. */
static dtb_status worker_level(worker *w, int a, dtb_error *e)
{
    dtb_pair_solver *ps = w->ps;
    level_parts la = {0}, lb = {0};
    dtb_status rc = reserve(w, a, e);
    if (rc == DTB_OK)
        rc = cut_level(ps, a, w->m->size, &la, e);
    if (rc == DTB_OK)
        rc = solve_own(w->m, ps, &la, worker_done, w, e);
    const int b = dtb_pair_solver_next_level(ps, a);
    if (rc == DTB_OK && b == a - 1 && (rc = cut_level(ps, b, w->m->size, &lb, e)) == DTB_OK)
        rc = exchange(w->m, ps, &la, &lb, e);
    free(la.cuts);
    free(lb.cuts);
    for (int k = 0; k < 2 && w->t[k] && rc == DTB_OK && w->above >= 0; k++)
        dtb_sliced_release_level(w->s, w->t[k], w->lv[k], w->above);
    w->above = a;
    return rc;
}

static dtb_status make_dir(const char *path, dtb_error *e)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return DTB_OK;
    return dtb_error_set(e, DTB_E_IO, "cannot create directory %s: %s", path, strerror(errno));
}

/* The pair of OP_PAIR: its tables added sliced (pages taken only as levels are written), then
 * its solver. */
static dtb_status begin_pair(worker *w, dtb_material mt, dtb_error *e)
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
    const dtb_status rc = dtb_pair_solver_create(w->s, mt, &w->ps, e);
    if (rc == DTB_OK)
        dtb_pair_solver_levels(w->ps, w->lv[0], w->lv[1]);
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
    for (int k = 0; k < 2; k++) {
        free(w->lv[k]);
        w->lv[k] = NULL;
        w->t[k] = NULL;
    }
}

/* OP_FILE: this rank's copy of rank 0's table file (its size and hash in c) is kept when it has
 * the same bytes, else rank 0 sends them and they replace it (written whole or not at all). */
static dtb_status receive_file(worker *w, const cmd *c, dtb_error *e)
{
    const dtb_material mt = material_of(c);
    char path[4096];
    dtb_build_table_path(path, sizeof path, w->o->out_dir, w->o->variant, &mt,
                         (dtb_metric)c->level);
    uint64_t size = 0, hash = 0;
    dtb_error ignored;
    const bool same = access(path, F_OK) == 0 &&
                      file_digest(path, &size, &hash, &ignored) == DTB_OK && size == c->arg &&
                      hash == c->b0;
    const int32_t need = !same;
    int err = MPI_Send(&need, 1, MPI_INT32_T, 0, TAG_REPLY, w->m->comm);
    if (err != MPI_SUCCESS)
        return mpi_failed(e, w->m->rank, err, "replying to rank 0");
    if (same)
        return DTB_OK;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", w->o->out_dir, w->o->variant->name);
    dtb_status rc = make_dir(w->o->out_dir, e);
    if (rc == DTB_OK)
        rc = make_dir(dir, e);
    uint8_t *buf = malloc(FILE_CHUNK);
    if (rc == DTB_OK && !buf)
        rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    /* The whole file comes whatever happens here, so that rank 0 is not left waiting; a failure
     * is reported once it has. */
    dtb_atomic_file af = {.fd = -1};
    char suffix[32];
    snprintf(suffix, sizeof suffix, "rank%d", w->m->rank);
    if (rc == DTB_OK)
        rc = dtb_atomic_begin(&af, path, suffix, e);
    dtb_hash64_state h;
    dtb_hash64_init(&h, 0);
    for (uint64_t at = 0; at < c->arg && err == MPI_SUCCESS;) {
        const size_t want = c->arg - at < FILE_CHUNK ? (size_t)(c->arg - at) : FILE_CHUNK;
        uint8_t sink[1];
        err = MPI_Recv(buf ? buf : sink, buf ? (int)want : 0, MPI_BYTE, 0, TAG_FILE, w->m->comm,
                       MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS && rc == DTB_OK) {
            dtb_hash64_update(&h, buf, want);
            rc = dtb_atomic_write(&af, buf, want, e);
        }
        at += want;
    }
    free(buf);
    if (err != MPI_SUCCESS && rc == DTB_OK)
        rc = mpi_failed(e, w->m->rank, err, "receiving a table file");
    if (rc == DTB_OK && dtb_hash64_digest(&h) != c->b0)
        rc = dtb_error_set(e, DTB_E_CORRUPT, "%s: the copy received from rank 0 differs from "
                           "rank 0's file", path);
    if (rc == DTB_OK)
        return dtb_atomic_commit(&af, e);
    dtb_atomic_abort(&af);
    return rc;
}

/* OP_ATTACH: m is read from this rank's copy of its file from now on. */
static dtb_status attach(worker *w, const cmd *c, dtb_error *e)
{
    const dtb_material mt = material_of(c);
    const dtb_metric x = (dtb_metric)c->level;
    char path[4096];
    dtb_build_table_path(path, sizeof path, w->o->out_dir, w->o->variant, &mt, x);
    dtb_solved_drop(w->s, mt);
    return x == DTB_METRIC_DTW ? dtb_solved_add_file(w->s, mt, path, e)
                               : dtb_solved_add_wld_file(w->s, mt, path, e);
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
            rc = make_dir(o->out_dir, e);
            snprintf(w->work, sizeof w->work, "%s/%s", o->out_dir, o->variant->name);
        }
        if (rc == DTB_OK)
            rc = make_dir(w->work, e);
        return rc == DTB_OK ? dtb_solved_use_work_files(w->s, w->work, budget.monitor_cap, e) : rc;
    }
    case OP_FILE:
        return receive_file(w, c, e);
    case OP_ATTACH:
        return attach(w, c, e);
    case OP_DROP:
        dtb_solved_drop(w->s, material_of(c));
        return DTB_OK;
    case OP_PAIR:
        return begin_pair(w, material_of(c), e);
    case OP_RUN:
        return w->ps ? worker_level(w, c->level, e)
                     : dtb_error_set(e, DTB_E_INVALID, "internal error: a level without its pair");
    case OP_END: {
        const dtb_status rc = w->ps ? send_stats(w->m, w->ps, e) : DTB_OK;
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
    for (int k = 0; k < DEPTH && rc == DTB_OK; k++) {
        big_wait(&w.ob.msg[k]);
        free(w.ob.buf[k]);
    }
    end_pair(&w);
    dtb_solved_free(w.s);
    return rc;
}
