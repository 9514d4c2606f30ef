/* gen/mpi_build.h for a dtbgen built without MPI (DTB_MPI off, or no MPI found): the process
 * always runs alone, so there is never a job to join, lead or serve. */
#include "mpi_build.h"

dtb_status dtb_mpi_open(int *argc, char ***argv, dtb_mpi **out, dtb_error *e)
{
    (void)argc, (void)argv, (void)e;
    *out = NULL;
    return DTB_OK;
}

int dtb_mpi_rank(const dtb_mpi *m) { return (void)m, 0; }
int dtb_mpi_size(const dtb_mpi *m) { return (void)m, 1; }

dtb_status dtb_mpi_lead(dtb_mpi *m, bool use_work_files, const dtb_build_peers **out, dtb_error *e)
{
    (void)m, (void)use_work_files, (void)e;
    *out = NULL;
    return DTB_OK;
}

dtb_status dtb_mpi_serve(dtb_mpi *m, const dtb_build_options *o, dtb_error *e)
{
    (void)m, (void)o;
    return dtb_error_set(e, DTB_E_INVALID, "not an MPI job");
}

void dtb_mpi_traffic_get(const dtb_mpi *m, dtb_mpi_traffic *t)
{
    (void)m;
    *t = (dtb_mpi_traffic){.ranks = 1};
}

void dtb_mpi_close(dtb_mpi *m, bool ok) { (void)m, (void)ok; }
