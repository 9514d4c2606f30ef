/* Speed of the perfect index (not a test): index, kings-only rank and unindex operations per
 * second on a few international materials of 5 and 6 pieces, for scripts/bench.sh.
 *
 * Usage: dtb_bench_index [seconds-per-measurement]   (default 0.2)
 * Output: one "# material ..." line per material, then the totals
 *   index_ops_per_s N / kings_ops_per_s N / unindex_ops_per_s N
 * The positions and indexes are prepared beforehand in a small array (fits in L2), so the
 * figures are the computation itself, as in the generator's inner loop. Time is the thread's CPU
 * time, so the figures hold on a shared machine. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "index.h"

#define BATCH 4096

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static dtb_pos pos[BATCH];
static uint64_t idx[BATCH];

int main(int argc, char **argv)
{
    const double budget = argc > 1 ? atof(argv[1]) : 0.2;
    if (budget <= 0) {
        fprintf(stderr, "usage: dtb_bench_index [seconds-per-measurement]\n");
        return 2;
    }
    static const char *const names[] = {"KKKvKK", "KKMvKM", "KMMvMM", "MMMvMM",
                                        "KKKvKKK", "KKMvKMM", "MMMvMMM"};
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("international"));
    double ops[3] = {0, 0, 0}, secs[3] = {0, 0, 0};
    uint64_t sink = 0, seed = 12345;
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        dtb_material m;
        dtb_index *ix;
        if (dtb_material_parse(names[n], &m, NULL) != DTB_OK ||
            dtb_index_create(&b, m, &ix) != DTB_OK) {
            fprintf(stderr, "dtb_bench_index: cannot index %s\n", names[n]);
            return 1;
        }
        for (int k = 0; k < BATCH; k++) {
            idx[k] = splitmix(&seed) % dtb_index_size(ix);
            dtb_index_pos(ix, splitmix(&seed) % dtb_index_size(ix), &pos[k]);
        }
        double rate[3];
        for (int what = 0; what < 3; what++) {
            uint64_t done = 0;
            const double t0 = now();
            double t;
            do {
                for (int rep = 0; rep < 16; rep++) {
                    if (what == 0)
                        for (int k = 0; k < BATCH; k++)
                            sink += dtb_index_of(ix, &pos[k]);
                    else if (what == 1)
                        for (int k = 0; k < BATCH; k++)
                            sink += dtb_index_kings_of(ix, pos[k].men[0] | pos[k].men[1],
                                                       pos[k].kings[0], pos[k].kings[1]);
                    else
                        for (int k = 0; k < BATCH; k++) {
                            dtb_pos p;
                            dtb_index_pos(ix, idx[k], &p);
                            sink += (uint64_t)(p.kings[0] ^ p.men[1]);
                        }
                    done += BATCH;
                }
                t = now() - t0;
            } while (t < budget);
            ops[what] += (double)done;
            secs[what] += t;
            rate[what] = (double)done / t;
        }
        printf("# %-8s size %llu  index %.1f M/s  kings %.1f M/s  unindex %.1f M/s\n", names[n],
               (unsigned long long)dtb_index_size(ix), rate[0] / 1e6, rate[1] / 1e6, rate[2] / 1e6);
        dtb_index_free(ix);
    }
    printf("index_ops_per_s %.0f\n", ops[0] / secs[0]);
    printf("kings_ops_per_s %.0f\n", ops[1] / secs[1]);
    printf("unindex_ops_per_s %.0f\n", ops[2] / secs[2]);
    fprintf(stderr, "(checksum %llu)\n", (unsigned long long)(sink & 0xffff));
    return 0;
}
