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
    /* The slice store of the piece count's largest pair with men and kings (the pair that sets
     * a build's disk peak), solved in slices (`dtbgen --slices always`, losses-only DTW: wins
     * kept as wins): its positions (both members) and its store's bytes; 0 where not measured.
     * Not the average over all pairs: the largest pairs compress better in some variants,
     * worse in others (docs/MEASUREMENTS.md, "Slice stores"). */
    uint64_t store_positions, store_bytes;
} measured;

/* The ratio() argument for slice stores. */
#define METRIC_STORE (-2)

/* How many times more bytes a slice store takes when its wins keep their distances (a full DTW
 * table is written): 1.20 to 1.22 measured on international 2..4 (docs/MEASUREMENTS.md, "Slice
 * stores"), the larger taken. */
#define STORE_WINS_DTW 1.22

/* From docs/MEASUREMENTS.md: international 2..5 and 2..6 (2026-12-01, the 6-piece row the
 * difference of the two sets), english, russian and brazilian 2..7 and canadian 2..5
 * (2026-12-03). Losses-only DTW: international 2..5 and english 2..4 as dtbgen writes them
 * (2026-12-05), english 5..7 its full 2..7 set converted (dtbgen --convert, 2026-12-06).
 * Slice stores: every variant's sets built with --slices always (2026-12-06). In piece order
 * within a variant. */
static const measured table[] = {
    {"international", 2, 8845, 1568, 2274, 1677, 4410, 1612},
    {"international", 3, 806300, 19298, 57325, 25369, 211680, 19954},
    {"international", 4, 41971200, 857075, 2477180, 859220, 4974480, 640322},
    {"international", 5, 1570600750, 26378606, 135014710, 51633679, 205995360, 18979200},
    {"international", 6, 46198758750, 800999347, 4261426416, 1681402237, 0, 0},
    {"english", 2, 3488, 1537, 1864, 1482, 1736, 964},
    {"english", 3, 196032, 4681, 48807, 25803, 52080, 11579},
    {"english", 4, 6209316, 159675, 1021103, 474972, 755160, 130846},
    {"english", 5, 139450808, 1422433, 39866245, 19242710, 18513600, 4507422},
    {"english", 6, 2426085676, 41422154, 516375216, 245635835, 0, 0},
    {"english", 7, 34243113624, 426705415, 9532523172, 4611056588, 0, 0},
    {"russian", 2, 3488, 1414, 1735, 0, 1736, 803},
    {"russian", 3, 196032, 9642, 20199, 0, 52080, 7789},
    {"russian", 4, 6209316, 195235, 853809, 0, 755160, 189504},
    {"russian", 5, 139450808, 3307225, 18894587, 0, 18513600, 3436358},
    {"russian", 6, 2426085676, 55430780, 322993573, 0, 0, 0},
    {"russian", 7, 34243113624, 671171110, 4096185320, 0, 0, 0},
    {"brazilian", 2, 3488, 1414, 1735, 0, 1736, 803},
    {"brazilian", 3, 196032, 9642, 20199, 0, 52080, 7789},
    {"brazilian", 4, 6209316, 195156, 853731, 0, 755160, 189504},
    {"brazilian", 5, 139450808, 3316878, 18907799, 0, 18513600, 3435589},
    {"brazilian", 6, 2426085676, 55306025, 322532744, 0, 0, 0},
    {"brazilian", 7, 34243113624, 669162506, 4082060378, 0, 0, 0},
    {"canadian", 2, 18780, 1817, 3056, 0, 9372, 2545},
    {"canadian", 3, 2518980, 38448, 146713, 0, 656040, 42730},
    {"canadian", 4, 194246505, 2952731, 9493746, 0, 22633380, 2239891},
    {"canadian", 5, 10843904820, 147909862, 808957301, 0, 0, 0},
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

/* Whether m has a figure for metric: every row has its files', not every row its stores'. */
static bool has(const measured *m, int metric)
{
    return metric != METRIC_STORE || m->store_bytes;
}

/* Positions a byte of m's files of metric (DTB_METRIC_LOSSES_ONLY: losses-only DTW;
 * METRIC_STORE: slice stores). */
static double ratio(const measured *m, int metric)
{
    if (metric == METRIC_STORE)
        return (double)m->store_positions / (double)m->store_bytes;
    if (metric == DTB_METRIC_LOSSES_ONLY)
        return (double)m->positions / (m->losses_bytes ? (double)m->losses_bytes
                                                       : (double)m->dtw_bytes / losses_gain(m->variant));
    return (double)m->positions / (double)(metric == DTB_METRIC_WLD ? m->wld_bytes : m->dtw_bytes);
}

uint64_t dtb_diskplan_store_bytes(const dtb_variant *v, int pieces, uint64_t positions,
                                  bool wins_dtw)
{
    bool measured;
    double per_byte = dtb_diskplan_positions_per_byte(v, pieces, METRIC_STORE, &measured);
    if (per_byte == 0)
        per_byte = 1;
    else if (wins_dtw)
        per_byte /= STORE_WINS_DTW;
    return (uint64_t)((double)positions / per_byte);
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
        if (strcmp(table[i].variant, v->name) != 0 || !has(&table[i], metric))
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
