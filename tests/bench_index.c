/* Speed of the perfect index (not a test): index, kings-only rank and unindex operations per
 * second on international materials of 5 and 6 pieces, for scripts/bench.sh.
 *
 * Usage: dtb_bench_index [seconds-per-measurement]   (default 0.1; each is run three times)
 * Output: one "# material ..." line per material, then the totals, one per line:
 *   index_ops_per_s      dtb_index_of on random positions
 *   kings_ops_per_s      dtb_index_kings_of (a king move inside a block)
 *   unindex_ops_per_s    dtb_index_pos on random indexes
 *   unindex_seq_ops_per_s  dtb_index_pos on runs of 64 consecutive indexes
 *   kings_at_ops_per_s   dtb_index_kings_at (the king placement of a rank in a known block)
 * The positions and indexes are prepared beforehand in a small array (fits in L2), so the
 * figures are the computation itself, as in the generator's inner loop. Time is the thread's CPU
 * time, so the figures hold on a shared machine. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "index.h"
#include "splitmix.h"

#define BATCH 4096

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dtb_pos pos[BATCH];
static uint64_t idx[BATCH], seq[BATCH], krank[BATCH];

enum { INDEX, KINGS_OF, UNINDEX, UNINDEX_SEQ, KINGS_AT, NWHAT };
static const char *const what_name[NWHAT] = {"index", "kings", "unindex", "unindex_seq",
                                             "kings_at"};

/* One pass of operation `what` over the batch; returns a value that depends on every result. */
static uint64_t pass(const dtb_index *ix, int what)
{
    uint64_t sink = 0;
    switch (what) {
    case INDEX:
        for (int k = 0; k < BATCH; k++)
            sink += dtb_index_of(ix, &pos[k]);
        break;
    case KINGS_OF:
        for (int k = 0; k < BATCH; k++)
            sink += dtb_index_kings_of(ix, pos[k].men[0] | pos[k].men[1], pos[k].kings[0],
                                       pos[k].kings[1]);
        break;
    case UNINDEX:
    case UNINDEX_SEQ:
        for (int k = 0; k < BATCH; k++) {
            dtb_pos p;
            dtb_index_pos(ix, what == UNINDEX ? idx[k] : seq[k], &p);
            sink += (uint64_t)(p.kings[0] ^ p.men[1]);
        }
        break;
    default:
        for (int k = 0; k < BATCH; k++) {
            dtb_bb w, b;
            dtb_index_kings_at(ix, pos[k].men[0] | pos[k].men[1], krank[k], &w, &b);
            sink += (uint64_t)(w ^ b);
        }
        break;
    }
    return sink;
}

int main(int argc, char **argv)
{
    const double budget = argc > 1 ? atof(argv[1]) : 0.1;
    if (budget <= 0) {
        fprintf(stderr, "usage: dtb_bench_index [seconds-per-measurement]\n");
        return 2;
    }
    static const char *const names[] = {"KKKvKK", "KKMvKM", "KMMvMM", "MMMvMM",
                                        "KKKvKKK", "KKMvKMM", "MMMvMMM"};
    enum { NMAT = sizeof names / sizeof names[0] };
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("international"));
    double ns_sum[NWHAT] = {0};
    uint64_t sink = 0, seed = 12345;
    for (int n = 0; n < NMAT; n++) {
        dtb_material m;
        dtb_index *ix;
        if (dtb_material_parse(names[n], &m, NULL) != DTB_OK ||
            dtb_index_create(&b, m, &ix) != DTB_OK) {
            fprintf(stderr, "dtb_bench_index: cannot index %s\n", names[n]);
            return 1;
        }
        const uint64_t size = dtb_index_size(ix);
        for (int k = 0; k < BATCH; k++) {
            idx[k] = dtb_splitmix64(&seed) % size;
            /* runs of 64 consecutive indexes, as a solver walking a block reads them */
            seq[k] = k % 64 ? seq[k - 1] + 1 : dtb_splitmix64(&seed) % size;
            if (seq[k] >= size)
                seq[k] = 0;
            dtb_index_pos(ix, dtb_splitmix64(&seed) % size, &pos[k]);
            krank[k] = dtb_splitmix64(&seed) % dtb_index_block_size(ix);
        }
        printf("# %-8s %12llu positions:", names[n], (unsigned long long)size);
        for (int what = 0; what < NWHAT; what++) {
            /* Best of three timed runs: on a shared machine the slowest runs measure the
             * neighbours, not the code. */
            double best = 0;
            for (int run = 0; run < 3; run++) {
                uint64_t done = 0;
                const double t0 = now();
                double t;
                do {
                    for (int rep = 0; rep < 8; rep++)
                        sink += pass(ix, what);
                    done += 8 * BATCH;
                    t = now() - t0;
                } while (t < budget);
                if ((double)done / t > best)
                    best = (double)done / t;
            }
            ns_sum[what] += 1e9 / best;
            printf("  %s %.1f M/s", what_name[what], best / 1e6);
        }
        printf("\n");
        dtb_index_free(ix);
    }
    /* Totals: operations per second at the mean time per operation over the materials. */
    for (int what = 0; what < NWHAT; what++)
        printf("%s_ops_per_s %.0f\n", what_name[what], 1e9 * NMAT / ns_sum[what]);
    fprintf(stderr, "(checksum %llu)\n", (unsigned long long)(sink & 0xffff));
    return 0;
}
