/* The disk a build's table files will take, projected from measured compression (a committed
 * table of positions per byte by variant, piece count and metric, docs/MEASUREMENTS.md "The
 * plan's disk"), so that `dtbgen --list` can say before a build whether it fits, even into an
 * empty directory. Never prints. */
#ifndef DTB_DISKPLAN_H
#define DTB_DISKPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "build.h"

/* The metric argument of dtb_diskplan_positions_per_byte for DTW tables that store their losses
 * only (docs/FORMAT.md §8.7, dtb_build_options.dtw_full false). */
#define DTB_METRIC_LOSSES_ONLY (-1)

/* Positions a byte of the table files of metric (a dtb_metric, or DTB_METRIC_LOSSES_ONLY) for
 * materials of v with this many pieces (the total over all materials of that piece count):
 * measured, or beyond the largest measured piece count the smaller of the last two measured
 * ones (*measured false). A piece count whose losses-only DTW files were not measured takes its
 * full DTW figure divided by the smallest gain losses-only files showed in v (none measured:
 * the full figure). 0 when v has no measurement at all. */
double dtb_diskplan_positions_per_byte(const dtb_variant *v, int pieces, int metric,
                                       bool *measured);

/* Projected bytes of the slice store (gen/slicestore.c) of a pair of this many pieces solved in
 * slices, holding positions values (both members): measured positions a store byte of v's
 * largest sliced pair of that piece count (beyond the measured counts the smaller of the last
 * two, as above), fewer when wins keep their distances (wins_dtw: a DTW table of the pair
 * stores every value). With no measurement for v, a byte a position (values uncompressed). */
uint64_t dtb_diskplan_store_bytes(const dtb_variant *v, int pieces, uint64_t positions,
                                  bool wins_dtw);

/* The largest piece count measured for v (0: none). */
int dtb_diskplan_measured_pieces(const dtb_variant *v);

/* Projected bytes of the files a build of o writes: the tables it would solve (those complete in
 * o->out_dir left out, as dtb_build_to_solve), WLD for all, DTW for those o->dtw_pieces keeps
 * (in the form o->dtw_full says).
 * Returns false when out of memory or when v has no measurement. */
bool dtb_diskplan_tables(const dtb_build_options *o, uint64_t *wld_bytes, uint64_t *dtw_bytes);

#endif
