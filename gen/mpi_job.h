/* What the files of dtbgen's MPI build share (gen/mpi_build.c: rank 0 and the other ranks;
 * gen/mpi_job.c: messages and waiting; gen/mpi_compressed.c: messages sent compressed;
 * gen/mpi_files.c: the ranks' copies of table files;
 * gen/mpi_levels.c: a level partitioned between the ranks). Internal to the MPI build; the
 * protocol is described in gen/mpi_build.c. Nothing here prints. */
#ifndef DTB_MPI_JOB_H
#define DTB_MPI_JOB_H

#include <mpi.h>

#include <stdbool.h>
#include <stdint.h>

#include "mpi_build.h"
#include "solve.h"

enum { TAG_CMD = 1, TAG_RESULT, TAG_STATS, TAG_REPLY, TAG_FILE, TAG_LEVEL, TAG_LEAN, TAG_WRITE,
       TAG_MOVE };

enum { OP_FILE = 1, OP_ATTACH, OP_DROP, OP_PAIR, OP_RUN, OP_END, OP_STOP, OP_START, OP_LEAN };

typedef struct cmd {
    int32_t op, level;
    int32_t material[4]; /* white kings, white men, black kings, black men */
    uint64_t b0, b1;
    uint64_t arg;
} cmd;

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

static inline cmd dtb_mpi_cmd_of(int op, dtb_material mt)
{
    return (cmd){.op = op, .material = {mt.kings[0], mt.men[0], mt.kings[1], mt.men[1]}};
}

static inline dtb_material dtb_mpi_material_of(const cmd *c)
{
    dtb_material mt = {0};
    mt.kings[0] = c->material[0];
    mt.men[0] = c->material[1];
    mt.kings[1] = c->material[2];
    mt.men[1] = c->material[3];
    return mt;
}

/* MPI counts are ints: whole tables go in pieces of at most this. */
#define MSG_MAX ((uint64_t)1 << 30)
/* Table files are hashed, sent and written in pieces of this many bytes. */
#define FILE_CHUNK ((size_t)1 << 22)
/* A level is cut into parts of at least PART_MIN and at most PART_MAX positions, about four
 * per rank in between, so that uneven parts even out; parts smaller than PART_MIN cost more
 * in messages than they save. */
#define PART_MIN ((uint64_t)1 << 16)
#define PART_MAX ((uint64_t)1 << 23)

/* ---- messages and waiting (gen/mpi_job.c) ---------------------------------------------------- */

double dtb_mpi_now(void);
/* A short sleep: a rank that waits leaves the core to others. */
void dtb_mpi_nap(void);
/* DTB_E_IO with "rank R: what: MPI's reason". */
dtb_status dtb_mpi_failed(dtb_error *e, int rank, int err, const char *what);
/* A command to rank `to`, or to every other rank (rank 0). */
dtb_status dtb_mpi_send_cmd(dtb_mpi *m, int to, const cmd *c, dtb_error *e);
dtb_status dtb_mpi_send_all(dtb_mpi *m, const cmd *c, dtb_error *e);
/* Waits for req (MPI_Test in a loop, napping after 10 ms); *late when allowed seconds (0: no
 * limit) passed first. An MPI error code. */
int dtb_mpi_wait(MPI_Request *req, double allowed, bool *late);
/* A message of any size, as pieces that MPI's int counts hold, sent or received in order under
 * one tag (a part of one large unit can pass 2^31 bytes); big_wait waits for every piece (none:
 * at once) and forgets them. */
typedef struct dtb_mpi_bigmsg {
    MPI_Request *req;
    int n;
} dtb_mpi_bigmsg;
int dtb_mpi_big_post(bool send, uint8_t *buf, uint64_t n, int peer, int tag, MPI_Comm comm,
                     dtb_mpi_bigmsg *b);
int dtb_mpi_big_wait(dtb_mpi_bigmsg *b);

/* A message sent compressed (gen/mpi_compressed.c): its zstd frame's size, then the frame,
 * under one tag. zsend compresses raw[0..n) (raw may be reused at once) and posts both sends;
 * zrecv posts the receive of the size of a message of n raw bytes, to be decompressed into raw
 * (post a peer's next message of the same tag only once this one is complete). ztest moves it
 * along without waiting (*done once complete, a receiver's bytes in raw); zwait waits (napping),
 * then frees it like zfree (which also drops a message given up on) but for its size. An MPI
 * error code, or DTB_MPI_ZCORRUPT: a frame that does not decompress to the raw size. zbytes:
 * bytes on the wire (for a receiver, once the size has come). */
typedef struct dtb_mpi_zmsg {
    bool send;
    int stage;            /* 0 not posted, 1 size posted, 2 frame posted, 3 complete */
    uint64_t size;        /* the frame's bytes */
    MPI_Request head;
    dtb_mpi_bigmsg body;
    uint8_t *frame, *raw; /* raw: a receiver's n bytes */
    uint64_t n;
    int peer, tag;
    MPI_Comm comm;
} dtb_mpi_zmsg;
#define DTB_MPI_ZCORRUPT (-1)
int dtb_mpi_zsend(const uint8_t *raw, uint64_t n, int peer, int tag, MPI_Comm comm,
                  dtb_mpi_zmsg *z);
int dtb_mpi_zrecv(uint8_t *raw, uint64_t n, int peer, int tag, MPI_Comm comm, dtb_mpi_zmsg *z);
int dtb_mpi_ztest(dtb_mpi_zmsg *z, bool *done);
int dtb_mpi_zwait(dtb_mpi_zmsg *z);
void dtb_mpi_zfree(dtb_mpi_zmsg *z);
static inline uint64_t dtb_mpi_zbytes(const dtb_mpi_zmsg *z) { return 8 + z->size; }
/* A compressed message of n raw bytes from peer into raw, waited for and counted; an MPI error
 * code as zwait's. */
int dtb_mpi_zreceive(dtb_mpi *m, uint8_t *raw, uint64_t n, int peer, int tag);
/* v[0..n) of type replaced on every rank by their op over the job (MPI_Iallreduce, waited for
 * with naps); what names it in the error. */
dtb_status dtb_mpi_allreduce(dtb_mpi *m, void *v, int n, MPI_Datatype type, MPI_Op op,
                             const char *what, dtb_error *e);
/* Counts z's bytes in m's traffic once it is complete: sent to or received from rank q by
 * rank 0, or sent between two other ranks (reported with the pair's stats). */
void dtb_mpi_count(dtb_mpi *m, int q, bool sent, const dtb_mpi_zmsg *z);

/* A worker's stats of a pair (and the bytes it sent to ranks other than 0 since its last stats)
 * to rank 0; rank 0 merges every worker's into stats (which hold its own), each within the
 * job's timeout. */
dtb_status dtb_mpi_send_stats(dtb_mpi *m, const dtb_solve_stats st[2], dtb_error *e);
dtb_status dtb_mpi_gather_stats(dtb_mpi *m, dtb_solve_stats stats[2], dtb_error *e);

/* ---- the ranks' copies of table files (gen/mpi_files.c) -------------------------------------- */

/* The size and XXH64 of the file at path: what a rank's copy must match. */
dtb_status dtb_mpi_file_digest(const char *path, uint64_t *size, uint64_t *hash, dtb_error *e);
/* Rank 0: its complete table file of metric x of mt at path to every other rank whose copy
 * differs (a FILE command, each rank's answer, then the bytes). */
dtb_status dtb_mpi_share_file(dtb_mpi *m, dtb_material mt, dtb_metric x, const char *path,
                              dtb_error *e);
/* Another rank, on FILE: its copy in o's table directory kept when it has the same bytes, else
 * received from rank 0 and written whole or not at all. */
dtb_status dtb_mpi_receive_file(dtb_mpi *m, const dtb_build_options *o, const cmd *c,
                                dtb_error *e);
/* Another rank, on ATTACH: the material read from its copy of the file into s from now on. */
dtb_status dtb_mpi_attach(dtb_solved *s, const dtb_build_options *o, const cmd *c, dtb_error *e);

/* ---- a level partitioned between the ranks (gen/mpi_levels.c) -------------------------------- */

/* The parts of level a, as every rank cuts them: about four a rank, at least PART_MIN and at
 * most PART_MAX positions each. A rank owns a contiguous run of them (part k: rank k * ranks /
 * n), so that its units are neighbours in block order, whose men moves reach fewer units of
 * other ranks than parts dealt round-robin would (docs/MEASUREMENTS.md, "MPI"). */
typedef struct dtb_mpi_level {
    int a;
    uint64_t n;
    uint64_t *cuts; /* n + 1 */
} dtb_mpi_level;

/* Level a's parts, cut for this many ranks: the same on every rank. */
dtb_status dtb_mpi_cut_level(const dtb_pair_solver *ps, int a, int ranks, dtb_mpi_level *lp,
                             dtb_error *e);
/* The rank that owns part k. */
int dtb_mpi_owner(const dtb_mpi_level *lp, uint64_t k, int ranks);
/* After level la, before the level lb below it: every rank sends each other rank the values of
 * its own units of la that the other's parts of lb read by man moves, and receives those its
 * parts read, one message each way a pair of ranks (every rank calls it). */
dtb_status dtb_mpi_exchange(dtb_mpi *m, dtb_pair_solver *ps, const dtb_mpi_level *la,
                            const dtb_mpi_level *lb, dtb_error *e);
/* Solves this rank's parts of level a: each part's values go to rank 0 through send (workers), or
 * to the store (rank 0: store not NULL), as they are solved. */
typedef dtb_status (*dtb_mpi_part_done)(void *ctx, const dtb_mpi_level *lp, uint64_t k,
                                        dtb_error *e);

dtb_status dtb_mpi_solve_own(dtb_mpi *m, dtb_pair_solver *ps, const dtb_mpi_level *lp,
                             dtb_mpi_part_done done, void *ctx, dtb_error *e);

/* ---- tables written by every rank (gen/mpi_team.c) ------------------------------------------- */

/* A rank's range of a table a team writes starts at a file block of the build's tables (the
 * default block size). */
#define DTB_MPI_TEAM_ALIGN ((uint64_t)DTB_TABLE_DEFAULT_BLOCK_POSITIONS)
/* The job's ranks as a team writing a table together (dtb_table_write_team; starts unset). */
dtb_table_team dtb_mpi_team(dtb_mpi *m);
/* Where each rank's range of a table of count positions starts (m->size + 1 entries, malloc'd;
 * NULL when out of memory): whole file blocks of the build's tables, the cut of a split
 * kings-only pair (dtb_lean_share_range), so every rank writes what it holds. */
uint64_t *dtb_mpi_team_starts(const dtb_mpi *m, uint64_t count);

/* ---- a shared pair's blocks moved to the ranks that write them (gen/mpi_moves.c) ------------- */

/* Every rank, after a shared pair whose parts each rank kept in its store sp (every rank's
 * parts of every level put there): each rank gets from the others the blocks of the pair's
 * tables that its range of whole file blocks touches (put into sp), and sp's team is set, so
 * that dtb_build_write_pair has every rank write its range. */
dtb_status dtb_mpi_move_blocks(dtb_mpi *m, const dtb_pair_solver *ps, dtb_sliced_pair *sp,
                               dtb_error *e);

/* ---- a kings-only pair split between the ranks (gen/mpi_lean.c) ----------------------------- */

/* Rank 0: kings-only pair mt solved lean by every rank (LEAN), each a range of whole file blocks
 * of its positions, stats merged over every rank. With out not NULL the tables are sliced in s,
 * each rank keeps its range, and *out is the pair split between them (dtb_sliced_pair_split):
 * every rank writes its blocks of each table (dtb_build_write_pair). Else the others' ranges
 * come into rank 0's tables in s, whole. */
dtb_status dtb_mpi_lean_lead(dtb_mpi *m, dtb_solved *s, dtb_material mt,
                             dtb_sliced_pair **out, dtb_solve_stats stats[2],
                             dtb_solve_progress progress, void *user, dtb_error *e);
/* Another rank, on LEAN: its range solved with the others, its stats to rank 0, then its blocks
 * of the pair's tables written with the others (o's tables), or (rank 0 gathers the pair) its
 * range sent to rank 0 first; its pages are given back (the tables stay in s until rank 0
 * attaches or drops them). */
dtb_status dtb_mpi_lean_serve(dtb_mpi *m, const dtb_build_options *o, dtb_solved *s,
                              const cmd *c, dtb_error *e);

#endif
