/* The disk a build's table files will take, projected from measured compression (a committed
 * table of positions per byte by variant, piece count and metric, docs/MEASUREMENTS.md "The
 * plan's disk"), so that `dtbgen --list` can say before a build whether it fits, even into an
 * empty directory. Never prints. */
#ifndef DTB_DISKPLAN_H
#define DTB_DISKPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "build.h"

/* Positions a byte of the table files of metric for materials of v with this many pieces (the
 * total over all materials of that piece count), DTW tables of the losses only (losses) or of
 * every value: measured, or beyond the largest measured piece count the smaller of the last two
 * measured ones (*measured false; also for losses-only DTW not measured, where the full form's
 * figure stands in). 0 when v has no measurement at all. */
double dtb_diskplan_positions_per_byte(const dtb_variant *v, int pieces, dtb_metric metric,
                                       bool losses, bool *measured);

/* The largest piece count measured for v (0: none). */
int dtb_diskplan_measured_pieces(const dtb_variant *v);

/* Projected bytes of the files a build of o writes: the tables it would solve (those complete in
 * o->out_dir left out, as dtb_build_to_solve), WLD for all, DTW (in o->dtw_full's form) for those
 * o->dtw_pieces keeps.
 * Returns false when out of memory or when v has no measurement. */
bool dtb_diskplan_tables(const dtb_build_options *o, uint64_t *wld_bytes, uint64_t *dtw_bytes);

#endif
