/* The measured compression of full sets and the projection built on it.
 *
 * Why per piece count and not per material: a build's plan is made before any table exists, and
 * the figures of whole piece counts are what the measurement runs record (scripts/stats_summary.py
 * over a finished set). A subset of one piece count (--material) can compress differently from
 * the whole; docs/MEASUREMENTS.md ("The plan's disk") compares projections with finished sets.
 * Beyond the measured piece counts the ratio is extrapolated as the smaller of the last two (the
 * more bytes: a plan had better promise too much disk than too little). Checked by leaving the
 * last measured count out, it lands within 15% of the table bytes of international 6 and of
 * english, russian and brazilian 7 pieces; the geometric mean of the two, tried first, was 18%
 * short for international 6. Canadian 5 from 2..4 is 17% short either way. */
#include "diskplan.h"

#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "material.h"

/* One measured piece count of one variant: its positions and the bytes of its full set's files
 * (the writer's defaults: 65,536-position blocks, zstd level 9); dtw_bytes of DTW tables that
 * store every value, losses_bytes of those that store their losses only (docs/FORMAT.md §8.7,
 * the default), 0 where not measured. */
typedef struct measured {
    const char *variant;
    int pieces;
    uint64_t positions, wld_bytes, dtw_bytes, losses_bytes;
} measured;

/* From docs/MEASUREMENTS.md: international 2..5 and 2..6 (2026-12-01, the 6-piece row the
 * difference of the two sets), english, russian and brazilian 2..7 and canadian 2..5
 * (2026-12-03). Losses-only DTW: international 2..5 and english 2..4 as dtbgen writes them
 * (2026-12-05), english 5 the "lossesonly" re-encoding of its full set (MEASUREMENTS.md, "DTW
 * encodings"). In piece order within a variant. */
static const measured table[] = {
    {"international", 2, 8845, 1568, 2274, 1677},
    {"international", 3, 806300, 19298, 57325, 25369},
    {"international", 4, 41971200, 857075, 2477180, 859220},
    {"international", 5, 1570600750, 26378606, 135014710, 51633679},
    {"international", 6, 46198758750, 800999347, 4261426416, 1681402237},
    {"english", 2, 3488, 1537, 1864, 1482},
    {"english", 3, 196032, 4681, 48807, 25803},
    {"english", 4, 6209316, 159675, 1021103, 474972},
    {"english", 5, 139450808, 1422433, 39866245, 19446949},
    {"english", 6, 2426085676, 41422154, 516375216, 0},
    {"english", 7, 34243113624, 426705415, 9532523172, 0},
    {"russian", 2, 3488, 1414, 1735, 0},
    {"russian", 3, 196032, 9642, 20199, 0},
    {"russian", 4, 6209316, 195235, 853809, 0},
    {"russian", 5, 139450808, 3307225, 18894587, 0},
    {"russian", 6, 2426085676, 55430780, 322993573, 0},
    {"russian", 7, 34243113624, 671171110, 4096185320, 0},
    {"brazilian", 2, 3488, 1414, 1735, 0},
    {"brazilian", 3, 196032, 9642, 20199, 0},
    {"brazilian", 4, 6209316, 195156, 853731, 0},
    {"brazilian", 5, 139450808, 3316878, 18907799, 0},
    {"brazilian", 6, 2426085676, 55306025, 322532744, 0},
    {"brazilian", 7, 34243113624, 669162506, 4082060378, 0},
    {"canadian", 2, 18780, 1817, 3056, 0},
    {"canadian", 3, 2518980, 38448, 146713, 0},
    {"canadian", 4, 194246505, 2952731, 9493746, 0},
    {"canadian", 5, 10843904820, 147909862, 808957301, 0},
};
enum { ROWS = sizeof table / sizeof table[0] };

/* The smallest factor by which storing losses only shrank v's measured DTW files (1 when none
 * was measured): what a piece count without its own measurement is assumed to gain, the more
 * bytes as below. */
static double losses_gain(const char *variant)
{
    double least = 0;
    for (int i = 0; i < ROWS; i++)
        if (!strcmp(table[i].variant, variant) && table[i].losses_bytes) {
            const double g = (double)table[i].dtw_bytes / (double)table[i].losses_bytes;
            least = least == 0 || g < least ? g : least;
        }
    return least > 1 ? least : 1;
}

/* Positions a byte of m's files of metric (DTB_METRIC_LOSSES_ONLY: losses-only DTW). */
static double ratio(const measured *m, int metric)
{
    if (metric == DTB_METRIC_LOSSES_ONLY)
        return (double)m->positions / (m->losses_bytes ? (double)m->losses_bytes
                                                       : (double)m->dtw_bytes / losses_gain(m->variant));
    return (double)m->positions / (double)(metric == DTB_METRIC_WLD ? m->wld_bytes : m->dtw_bytes);
}

int dtb_diskplan_measured_pieces(const dtb_variant *v)
{
    int most = 0;
    for (int i = 0; i < ROWS; i++)
        if (!strcmp(table[i].variant, v->name) && table[i].pieces > most)
            most = table[i].pieces;
    return most;
}

double dtb_diskplan_positions_per_byte(const dtb_variant *v, int pieces, int metric,
                                       bool *measured)
{
    const struct measured *last = NULL, *before = NULL;
    *measured = false;
    for (int i = 0; i < ROWS; i++) {
        if (strcmp(table[i].variant, v->name) != 0)
            continue;
        if (table[i].pieces == pieces) {
            *measured = true;
            return ratio(&table[i], metric);
        }
        before = last;
        last = &table[i];
    }
    if (!last)
        return 0;
    if (!before || pieces < last->pieces) /* below the table: nothing to say better */
        return ratio(last, metric);
    const double a = ratio(last, metric), b = ratio(before, metric);
    return a < b ? a : b;
}

bool dtb_diskplan_tables(const dtb_build_options *o, uint64_t *wld_bytes, uint64_t *dtw_bytes)
{
    *wld_bytes = *dtw_bytes = 0;
    if (dtb_diskplan_measured_pieces(o->variant) == 0)
        return false;
    dtb_material *list;
    const int n = dtb_build_to_solve(o, &list);
    if (n < 0)
        return false;
    dtb_board b;
    dtb_board_init(&b, o->variant);
    double wld = 0, dtw = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        if (dtb_index_create(&b, list[i], &ix) != DTB_OK)
            continue; /* more pieces a side than the variant starts with: never built */
        const double size = (double)dtb_index_size(ix);
        dtb_index_free(ix);
        const int pieces = dtb_material_pieces(&list[i]);
        bool measured;
        wld += size / dtb_diskplan_positions_per_byte(o->variant, pieces, DTB_METRIC_WLD, &measured);
        if (dtb_build_writes_dtw(o, &list[i]))
            dtw += size / dtb_diskplan_positions_per_byte(
                              o->variant, pieces, o->dtw_full ? DTB_METRIC_DTW : DTB_METRIC_LOSSES_ONLY,
                              &measured);
    }
    free(list);
    *wld_bytes = (uint64_t)wld;
    *dtw_bytes = (uint64_t)dtw;
    return true;
}
