/* A build across the processes of an MPI job (docs/CLUSTER.md, docs/DESIGN.md §4 "Beyond one
 * machine"). Rank 0 runs dtb_build as one process would, with these peers: it plans, writes the
 * table files, and hands out the parts of each pair's advancement levels (whole units) to the
 * other ranks, which solve them with their threads and send the values back. Every rank reads
 * the finished tables from its copy of their files: the table directory (the same path on every
 * node) may be shared with rank 0 or a node's own disk, to which rank 0 sends the files its
 * copy lacks. The tables are the bytes a single process writes, whatever the ranks, threads or
 * the order the parts come back in. *
 * Without MPI (the build option DTB_MPI off, or MPI not found), gen/mpi_build_single.c gives
 * the same functions for one process: dtb_mpi_open never joins a job. Nothing here prints. */
#ifndef DTB_MPI_BUILD_H
#define DTB_MPI_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "build.h"

typedef struct dtb_mpi dtb_mpi;

/* Joins the MPI job when an MPI launcher started the process (mpirun, mpiexec or srun: their
 * environment says so), with MPI_THREAD_FUNNELED (OpenMP threads inside, MPI calls from the main
 * thread only) and errors returned, not fatal. *out is NULL when the process runs alone: not
 * launched so, a job of one rank, or a build without MPI. DTB_E_IO when MPI fails to start. */
dtb_status dtb_mpi_open(int *argc, char ***argv, dtb_mpi **out, dtb_error *e);

/* This process's rank and the job's size (0 and 1 for NULL). */
int dtb_mpi_rank(const dtb_mpi *m);
int dtb_mpi_size(const dtb_mpi *m);

/* Rank 0, before dtb_build: starts the other ranks (use_work_files: they keep their solved
 * values in work files too, as the plan of rank 0 says, dtb_build_budget) and gives the peers
 * to put in the build's options. */
dtb_status dtb_mpi_lead(dtb_mpi *m, bool use_work_files, const dtb_build_peers **out, dtb_error *e);

/* Every other rank: serves rank 0 (o: the variant, --memory and --work; the same command line
 * as rank 0's) until rank 0 stops it. DTB_OK when stopped; a status when this rank failed (rank
 * 0 has been told). */
dtb_status dtb_mpi_serve(dtb_mpi *m, const dtb_build_options *o, dtb_error *e);

/* What the job did so far, as rank 0 sees it (for progress). */
typedef struct dtb_mpi_traffic {
    int ranks;
    uint64_t units;            /* units solved, by every rank */
    uint64_t positions;        /* positions solved, by every rank */
    uint64_t positions_rank0;  /* of them by rank 0 (parts it kept, pairs too small to share) */
    uint64_t bytes_sent;       /* by rank 0: commands, table files, its units others read */
    uint64_t bytes_received;   /* by rank 0: the parts' values and capture bits, the units its
                                  parts read, stats */
    uint64_t levels;           /* levels of the pairs shared out (each ends with a broadcast) */
    uint64_t bytes_between;    /* between the other ranks: the units their parts read of each
                                  other's (as each pair's stats report them) */
    uint64_t split_units;      /* kings-only pairs whose one unit the ranks shared */
    uint64_t team_pairs;       /* pairs whose tables every rank wrote its range of */
    uint64_t frame_bytes;      /* of bytes_received: the compressed blocks (and their block
                                  table entries) of those tables that other ranks made */
    double exchange_seconds;   /* rank 0's time exchanging the units levels read */
    double seconds;            /* since dtb_mpi_lead */
} dtb_mpi_traffic;
void dtb_mpi_traffic_get(const dtb_mpi *m, dtb_mpi_traffic *t);

/* Leaves the job. Rank 0 with ok: stops the other ranks, then MPI_Finalize. With !ok (a rank
 * failed, or died and the job cannot end cleanly): MPI_Abort, which ends every rank with exit
 * status 1 and does not return. NULL allowed. */
void dtb_mpi_close(dtb_mpi *m, bool ok);

#endif
