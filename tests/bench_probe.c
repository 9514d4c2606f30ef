/* Probe speed for scripts/bench.sh (a measurement, not a test).
 *
 * usage: dtb_bench_probe --tables DIR [--variant V] [--pieces N] [--positions K] [--rounds R]
 *                        [--threads T ...] [--cache MIB] [--dtw] [--uncached] [--batch B]
 *                        [--material NAME ...]
 *
 * Draws K random legal positions without a capture for the side to move (either side to move)
 * from the materials of exactly N pieces (default: the largest complete piece count), or from
 * the materials named by --material (of one piece count; their tables and those their captures
 * reach must exist: e.g. one 6-piece material while a 2..6 set is being made), probes
 * each once to fill the cache, then times R rounds of probing all K from each thread count given
 * (every thread probes all K, from its own starting offset). Prints one line per thread count:
 *   probe <wdl|dtw> <cached|uncached> pieces <N> threads <T> probes <P> seconds <S>
 *   per_second <P/S> per_thread_per_second <P/S/T> per_cpu_second <P/(CPU seconds of the threads)>
 *   positions <K> cache_bytes <B>
 * (on a machine shared with other work, per_cpu_second is the per-core speed; wall-clock figures
 * then understate it). cache_bytes is the memory of the blocks the K positions live in: the
 * probes' working set. K random positions touch K cache lines scattered over it, so with a large
 * K and a working set beyond the CPU caches the cached rate measures memory latency (and TLB
 * misses) more than the probe's code; a small K (a few thousand) measures the code.
 * --batch B probes B positions per call (dtb_probe_wdl_many / dtb_probe_dtw_many, 1..256).
 * --uncached opens a fresh handle with a cache too small to hold the tables, so nearly every
 * probe reads and decompresses a block. Exit 1 on any probe failure (the message is printed).
 *
 * --engine R: an engine's probe pattern instead. R roots, each one of the K random
 * positions in turn; from each root --descents D random descents (random legal moves, at most
 * --depth plies, to the end of the game at the latest), as a search visits nodes below a root.
 * The root is probed as an engine probes it (dtb_probe_wdl, may read), every node below it
 * cache-only (DTB_CACHE_ONLY, with DTB_QUIET_POSITION when the node has no capture: the engine
 * generated its moves and knows). --engine-threads T runs T such searches at once (thread t
 * takes roots t, t + T, ...). --defaults opens with dtb_open's defaults (cache size, loader
 * threads) instead of --cache and --loaders. --loaders L opens with L loader threads, --warm P calls
 * dtb_warm(db, P, 0) first. Prints, per --window roots, one line
 *   engine window <i> roots <r> probes <n> hits <h> hit_rate <h/n> ns_per_probe <t>
 * (ns_per_probe: the cache-only probes' time alone) and at the end
 *   engine summary threads <T> loaders <L> warm <P> warm_seconds <s> cache_mib <C> probes <n>
 *   hit_rate_first_window <x> hit_rate_after_warmup <y> evictions <e> loads <l> dropped <d>
 *   cache_bytes <b> hit_p50_ns <a> hit_p99_ns <b> miss_p50_ns <c> miss_p99_ns <d>
 *   misses_after_warmup <m> hit_mean_ns <a> miss_mean_ns <b> hit_p999_ns <c> miss_p999_ns <d>
 * where "after warm-up" is every window after the first tenth of the roots, and the latencies
 * (clock_gettime around each cache-only probe, so ~20 ns of clock reading included in both) are
 * those of the probes after warm-up that hit and that missed (-1: none). */
#define _POSIX_C_SOURCE 200809L

#include "dtb.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index.h"
#include "material.h"
#include "movegen.h"
#include "public_position.h"
#include "splitmix.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    dtb_db *db;
    const dtb_position *pos;
    int n, rounds, start;
    int batch; /* > 0: dtb_probe_*_many over this many positions at a time */
    bool dtw;
    unsigned flags; /* DTB_QUIET_POSITION with --quiet: the positions are quiet */
    uint64_t sum;
    int failed;
    double cpu; /* this thread's CPU seconds: on a shared machine, a truer per-core figure */
} job;

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *run_job(void *arg)
{
    job *j = arg;
    const double c0 = thread_cpu();
    uint64_t sum = 0;
    if (j->batch > 0) {
        dtb_wdl w[256];
        int d[256];
        for (int r = 0; r < j->rounds; r++)
            for (int k = 0, at = j->start; k < j->n;) {
                int m = j->batch < j->n - k ? j->batch : j->n - k;
                if (m > j->n - at)
                    m = j->n - at; /* the batch is a run of the array; wrap at its end */
                const dtb_status s =
                    j->dtw ? dtb_probe_dtw_many(j->db, &j->pos[at], m, j->flags, w, d, NULL)
                           : dtb_probe_wdl_many(j->db, &j->pos[at], m, j->flags, w, NULL);
                if (s != DTB_OK) {
                    j->failed = 1;
                    return NULL;
                }
                for (int i = 0; i < m; i++)
                    sum += (uint64_t)(w[i] + 1) + (uint64_t)(j->dtw ? d[i] : 0);
                k += m;
                at = at + m == j->n ? 0 : at + m;
            }
        j->sum = sum;
        j->cpu = thread_cpu() - c0;
        return NULL;
    }
    for (int r = 0; r < j->rounds; r++)
        for (int k = 0, at = j->start; k < j->n; k++, at = at + 1 == j->n ? 0 : at + 1) {
            const dtb_position *p = &j->pos[at]; /* no division per probe: it is not the probe's */
            dtb_wdl w;
            int d = 0;
            const dtb_status s = j->dtw ? dtb_probe_dtw(j->db, p, j->flags, &w, &d)
                                        : dtb_probe_wdl(j->db, p, j->flags, &w);
            if (s != DTB_OK) {
                j->failed = 1;
                return NULL;
            }
            sum += (uint64_t)(w + 1) + (uint64_t)d;
        }
    j->sum = sum;
    j->cpu = thread_cpu() - c0;
    return NULL;
}

/* ---- the engine pattern -------------------------------------------------------------------- */

static dtb_position position_of(const dtb_pos *p)
{
    dtb_position q;
    dtb_position_clear(&q, p->side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK);
    for (int c = 0; c < 2; c++) {
        q.men[c][0] = (uint64_t)p->men[c], q.men[c][1] = (uint64_t)(p->men[c] >> 64);
        q.kings[c][0] = (uint64_t)p->kings[c], q.kings[c][1] = (uint64_t)(p->kings[c] >> 64);
    }
    return q;
}

/* Probe latencies in nanoseconds, one bucket a nanosecond up to LAT_MAX (the rest in the last). */
#define LAT_MAX 200000

typedef struct engine_counts {
    uint64_t probes, hits;
    double seconds;
    uint32_t *lat_hit, *lat_miss; /* NULL: not recorded (before warm-up) */
} engine_counts;

/* D descents from root: every node below it probed cache-only. Only the probes are timed. */
static int descend(dtb_db *db, const dtb_board *b, const dtb_position *root, int descents,
                   int depth, uint64_t *seed, dtb_movelist *list, engine_counts *c)
{
    dtb_wdl w;
    dtb_status s = dtb_probe_wdl(db, root, 0, &w);
    if (s != DTB_OK)
        return 1;
    for (int k = 0; k < descents; k++) {
        dtb_pos p = core_of(root);
        for (int ply = 0; ply < depth; ply++) {
            if (dtb_generate(b, &p, list) != DTB_OK || list->count == 0)
                break;
            dtb_make_move(&p, &list->moves[dtb_splitmix64(seed) % (uint64_t)list->count], &p);
            if (!dtb_pos_pieces(&p, p.side) || !dtb_pos_pieces(&p, p.side ^ 1))
                break;
            const bool quiet = !dtb_has_capture(b, &p); /* the engine's own move generation */
            const dtb_position q = position_of(&p);
            const double t0 = now();
            s = dtb_probe_wdl(db, &q, DTB_CACHE_ONLY | (quiet ? DTB_QUIET_POSITION : 0), &w);
            const double dt = now() - t0;
            c->seconds += dt;
            c->probes++;
            if (s == DTB_OK)
                c->hits++;
            else if (s != DTB_E_NOTCACHED)
                return 1;
            uint32_t *lat = s == DTB_OK ? c->lat_hit : c->lat_miss;
            if (lat) {
                const double ns = dt * 1e9;
                lat[ns >= LAT_MAX ? LAT_MAX : (int)ns]++;
            }
        }
    }
    return 0;
}

typedef struct engine_job {
    dtb_db *db;
    const dtb_board *b;
    const dtb_position *pos;
    int npos, roots, descents, depth, window, skip, tid, nthreads;
    engine_counts after; /* the roots after warm-up */
    double first_rate;
    uint64_t total;
    int failed;
} engine_job;

/* Thread tid takes roots tid, tid + nthreads, ...; one thread prints a line per window. */
static void *run_engine_job(void *arg)
{
    engine_job *j = arg;
    dtb_movelist *list = malloc(sizeof *list);
    if (!list) {
        j->failed = 1;
        return NULL;
    }
    uint64_t seed = 99 + 7919 * (uint64_t)j->tid;
    for (int r0 = 0, win = 0; r0 < j->roots; r0 += j->window, win++) {
        engine_counts c = {0};
        const bool after = r0 >= j->skip;
        if (after)
            c.lat_hit = j->after.lat_hit, c.lat_miss = j->after.lat_miss;
        for (int r = r0 + j->tid; r < r0 + j->window && r < j->roots; r += j->nthreads)
            if (descend(j->db, j->b, &j->pos[r % j->npos], j->descents, j->depth, &seed, list, &c)) {
                char msg[DTB_MESSAGE_SIZE];
                dtb_last_error(j->db, msg, sizeof msg);
                fprintf(stderr, "dtb_bench_probe: %s\n", msg);
                j->failed = 1;
                free(list);
                return NULL;
            }
        const double rate = c.probes ? (double)c.hits / (double)c.probes : 0;
        if (win == 0)
            j->first_rate = rate;
        if (after)
            j->after.probes += c.probes, j->after.hits += c.hits, j->after.seconds += c.seconds;
        j->total += c.probes;
        if (j->tid == 0)
            printf("engine window %d roots %d probes %" PRIu64 " hits %" PRIu64 " hit_rate %.4f "
                   "ns_per_probe %.0f\n",
                   win, r0 + j->window < j->roots ? j->window : j->roots - r0, c.probes, c.hits,
                   rate, c.probes ? 1e9 * c.seconds / (double)c.probes : 0);
    }
    free(list);
    return NULL;
}

/* The q-quantile (0..1) of a latency histogram, in ns; -1 when empty. */
static long quantile(const uint64_t *h, double q)
{
    uint64_t n = 0;
    for (int i = 0; i <= LAT_MAX; i++)
        n += h[i];
    if (n == 0)
        return -1;
    const uint64_t want = (uint64_t)(q * (double)(n - 1)) + 1;
    uint64_t seen = 0;
    for (int i = 0; i <= LAT_MAX; i++)
        if ((seen += h[i]) >= want)
            return i;
    return LAT_MAX;
}

/* The mean of a latency histogram, in ns (the last bucket counted at LAT_MAX); -1 when empty. */
static long mean(const uint64_t *h)
{
    double n = 0, sum = 0;
    for (int i = 0; i <= LAT_MAX; i++)
        n += (double)h[i], sum += (double)h[i] * i;
    return n > 0 ? (long)(sum / n + 0.5) : -1;
}

static int run_engine(dtb_db *db, const dtb_position *pos, int npos, int roots, int descents,
                      int depth, int window, int nthreads, const char *loaders, int warm,
                      double warm_seconds, long cache_mib)
{
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(dtb_db_variant(db)));
    engine_job jobs[8];
    pthread_t tid[8];
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (engine_job){.db = db, .b = &b, .pos = pos, .npos = npos, .roots = roots,
                               .descents = descents, .depth = depth, .window = window,
                               .skip = roots / 10, .tid = t, .nthreads = nthreads};
        jobs[t].after.lat_hit = calloc(LAT_MAX + 1, sizeof(uint32_t));
        jobs[t].after.lat_miss = calloc(LAT_MAX + 1, sizeof(uint32_t));
        if (!jobs[t].after.lat_hit || !jobs[t].after.lat_miss)
            return 1;
    }
    for (int t = 0; t < nthreads; t++)
        pthread_create(&tid[t], NULL, run_engine_job, &jobs[t]);
    uint64_t after_probes = 0, after_hits = 0, total = 0;
    double first_rate = 0;
    int failed = 0;
    uint64_t *hit = calloc(LAT_MAX + 1, sizeof *hit), *miss = calloc(LAT_MAX + 1, sizeof *miss);
    if (!hit || !miss)
        return 1;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tid[t], NULL);
        failed |= jobs[t].failed;
        after_probes += jobs[t].after.probes, after_hits += jobs[t].after.hits;
        total += jobs[t].total;
        first_rate += jobs[t].first_rate / nthreads;
        for (int i = 0; i <= LAT_MAX; i++)
            hit[i] += jobs[t].after.lat_hit[i], miss[i] += jobs[t].after.lat_miss[i];
        free(jobs[t].after.lat_hit);
        free(jobs[t].after.lat_miss);
    }
    if (failed)
        return 1;
    dtb_cache_stats cs = {0};
    cs.struct_size = sizeof cs;
    dtb_get_cache_stats(db, &cs);
    printf("engine summary threads %d loaders %s warm %d warm_seconds %.2f cache_mib %ld probes %" PRIu64
           " hit_rate_first_window %.4f hit_rate_after_warmup %.4f evictions %" PRIu64
           " loads %" PRIu64 " dropped %" PRIu64 " cache_bytes %" PRIu64
           " hit_p50_ns %ld hit_p99_ns %ld miss_p50_ns %ld miss_p99_ns %ld misses_after_warmup %" PRIu64
           " hit_mean_ns %ld miss_mean_ns %ld hit_p999_ns %ld miss_p999_ns %ld\n",
           nthreads, loaders, warm, warm_seconds, cache_mib, total, first_rate,
           after_probes ? (double)after_hits / (double)after_probes : 0, cs.evictions,
           cs.loads_done, cs.loads_dropped, cs.bytes, quantile(hit, 0.5), quantile(hit, 0.99),
           quantile(miss, 0.5), quantile(miss, 0.99), after_probes - after_hits, mean(hit),
           mean(miss), quantile(hit, 0.999), quantile(miss, 0.999));
    free(hit);
    free(miss);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: dtb_bench_probe --tables DIR [--variant V] [--pieces N] [--positions K] "
                    "[--rounds R] [--threads T ...] [--cache MIB] [--dtw] [--uncached] [--batch B] "
                    "[--material NAME ...] [--quiet] [--engine ROOTS [--descents D] [--depth N] "
                    "[--window W] [--loaders L] [--warm P] [--engine-threads T] [--defaults]]\n");
    exit(2);
}

static void report(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "dtb_bench_probe: %s\n", msg);
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *variant = NULL;
    int pieces = 0, npos = 1000000, rounds = 5, threads[8], nthreads = 0;
    long cache_mib = 1024;
    bool dtw = false, uncached = false;
    int batch = 0;
    dtb_material only[16];
    int nonly = 0;
    int engine = 0, descents = 64, depth = 12, window = 200, loaders = 0, warm = 0;
    int engine_threads = 1;
    bool quiet = false, defaults = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool has = i + 1 < argc;
        if (!strcmp(a, "--tables") && has) dir = argv[++i];
        else if (!strcmp(a, "--variant") && has) variant = argv[++i];
        else if (!strcmp(a, "--pieces") && has) pieces = atoi(argv[++i]);
        else if (!strcmp(a, "--positions") && has) npos = atoi(argv[++i]);
        else if (!strcmp(a, "--rounds") && has) rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--cache") && has) cache_mib = atol(argv[++i]);
        else if (!strcmp(a, "--threads") && has && nthreads < 8) threads[nthreads++] = atoi(argv[++i]);
        else if (!strcmp(a, "--batch") && has) batch = atoi(argv[++i]);
        else if (!strcmp(a, "--material") && has && nonly < 16) {
            dtb_error err;
            if (dtb_material_parse(argv[++i], &only[nonly++], &err) != DTB_OK) {
                fprintf(stderr, "dtb_bench_probe: %s\n", err.msg);
                return 2;
            }
        }
        else if (!strcmp(a, "--engine") && has) engine = atoi(argv[++i]);
        else if (!strcmp(a, "--descents") && has) descents = atoi(argv[++i]);
        else if (!strcmp(a, "--depth") && has) depth = atoi(argv[++i]);
        else if (!strcmp(a, "--window") && has) window = atoi(argv[++i]);
        else if (!strcmp(a, "--loaders") && has) loaders = atoi(argv[++i]);
        else if (!strcmp(a, "--engine-threads") && has) engine_threads = atoi(argv[++i]);
        else if (!strcmp(a, "--defaults")) defaults = true;
        else if (!strcmp(a, "--warm") && has) warm = atoi(argv[++i]);
        else if (!strcmp(a, "--quiet")) quiet = true;
        else if (!strcmp(a, "--dtw")) dtw = true;
        else if (!strcmp(a, "--uncached")) uncached = true;
        else usage();
    }
    if (!dir || npos < 1 || rounds < 1 || batch < 0 || batch > 256 || engine < 0 || window < 1 ||
        engine_threads < 1 || engine_threads > 8)
        usage();
    if (nthreads == 0) {
        threads[0] = 1;
        threads[1] = 2;
        nthreads = 2;
    }
    const char *dirs[1] = {dir};
    dtb_options o = DTB_OPTIONS_INIT;
    o.paths = dirs, o.npaths = 1, o.variant = variant, o.log = report;
    if (!defaults) /* --defaults: what dtb_open chooses (cache size, loader threads) */
        o.cache_bytes = (uint64_t)cache_mib << 20, o.loader_threads = loaders;
    dtb_db *db;
    if (dtb_open(&o, &db) != DTB_OK)
        return 1;
    for (int i = 1; i < nonly; i++)
        if (dtb_material_pieces(&only[i]) != dtb_material_pieces(&only[0])) {
            fprintf(stderr, "dtb_bench_probe: the --material names must have one piece count\n");
            return 2;
        }
    if (nonly > 0)
        pieces = dtb_material_pieces(&only[0]);
    if (pieces == 0)
        pieces = dtb_max_pieces(db, dtw);
    if (nonly == 0 && (pieces < 2 || pieces > dtb_max_pieces(db, dtw))) {
        fprintf(stderr, "dtb_bench_probe: no complete set of %d-piece tables in %s\n", pieces, dir);
        return 1;
    }

    /* Random quiet positions, materials weighted by size. */
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(dtb_db_variant(db)));
    const int nm = nonly > 0 ? nonly : dtb_material_list(pieces, NULL, 0);
    dtb_material *mats = malloc((size_t)nm * sizeof *mats);
    dtb_index **ix = calloc((size_t)nm, sizeof *ix);
    dtb_position *pos = malloc((size_t)npos * sizeof *pos);
    if (!mats || !ix || !pos)
        return 1;
    if (nonly > 0)
        memcpy(mats, only, (size_t)nm * sizeof *mats);
    else
        dtb_material_list(pieces, mats, nm);
    uint64_t total = 0;
    for (int i = 0; i < nm; i++)
        if (dtb_material_pieces(&mats[i]) == pieces && dtb_index_create(&b, mats[i], &ix[i]) == DTB_OK)
            total += dtb_index_size(ix[i]);
    uint64_t seed = 12345;
    for (int k = 0; k < npos;) {
        uint64_t r = dtb_splitmix64(&seed) % total;
        int i = 0;
        while (!ix[i] || r >= dtb_index_size(ix[i])) {
            r -= ix[i] ? dtb_index_size(ix[i]) : 0;
            i++;
        }
        dtb_pos p;
        dtb_index_pos(ix[i], r, &p);
        if (dtb_splitmix64(&seed) & 1)
            dtb_pos_flip(&b, &p, &p);
        if (dtb_has_capture(&b, &p))
            continue;
        dtb_position *q = &pos[k++];
        dtb_position_clear(q, p.side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK);
        for (int c = 0; c < 2; c++) {
            q->men[c][0] = (uint64_t)p.men[c];
            q->men[c][1] = (uint64_t)(p.men[c] >> 64);
            q->kings[c][0] = (uint64_t)p.kings[c];
            q->kings[c][1] = (uint64_t)(p.kings[c] >> 64);
        }
    }
    if (engine > 0) {
        double warm_seconds = 0;
        if (warm >= 2) {
            const double t0 = now();
            if (dtb_warm(db, warm, 0, NULL) != DTB_OK)
                return 1;
            warm_seconds = now() - t0;
        }
        char nloaders[16];
        snprintf(nloaders, sizeof nloaders, "%d", loaders);
        const int rc = run_engine(db, pos, npos, engine, descents, depth, window, engine_threads,
                                  defaults ? "default" : nloaders, warm, warm_seconds,
                                  defaults ? -1 : cache_mib);
        dtb_close(db);
        return rc;
    }
    if (uncached) {
        dtb_close(db);
        o.cache_bytes = 1; /* a block or so per shard: nearly every probe misses */
        if (dtb_open(&o, &db) != DTB_OK)
            return 1;
    } else {
        job warm = {.db = db, .pos = pos, .n = npos, .rounds = 1, .dtw = dtw};
        run_job(&warm);
        if (warm.failed) {
            char msg[DTB_MESSAGE_SIZE];
            dtb_last_error(db, msg, sizeof msg);
            fprintf(stderr, "dtb_bench_probe: %s\n", msg);
            return 1;
        }
    }
    for (int t = 0; t < nthreads; t++) {
        const int nt = threads[t] < 1 ? 1 : threads[t] > 64 ? 64 : threads[t];
        job jobs[64];
        pthread_t tid[64];
        const double t0 = now();
        for (int k = 0; k < nt; k++) {
            jobs[k] = (job){.db = db, .pos = pos, .n = npos, .rounds = rounds,
                            .start = (int)((int64_t)npos * k / nt), .batch = batch, .dtw = dtw,
                            .flags = quiet ? DTB_QUIET_POSITION : 0};
            pthread_create(&tid[k], NULL, run_job, &jobs[k]);
        }
        int failed = 0;
        double cpu = 0;
        for (int k = 0; k < nt; k++) {
            pthread_join(tid[k], NULL);
            failed |= jobs[k].failed;
            cpu += jobs[k].cpu;
        }
        const double sec = now() - t0;
        if (failed) {
            char msg[DTB_MESSAGE_SIZE];
            dtb_last_error(db, msg, sizeof msg);
            fprintf(stderr, "dtb_bench_probe: %s\n", msg);
            return 1;
        }
        const double probes = (double)npos * rounds * nt;
        dtb_cache_stats cs = {.struct_size = sizeof cs};
        dtb_get_cache_stats(db, &cs);
        printf("probe %s%s %s pieces %d threads %d probes %.0f seconds %.3f per_second %.0f "
               "per_thread_per_second %.0f per_cpu_second %.0f positions %d cache_bytes %" PRIu64 "\n",
               dtw ? "dtw" : "wdl", quiet ? "-quiet" : "", uncached ? "uncached" : "cached", pieces, nt, probes, sec,
               probes / sec, probes / sec / nt, probes / cpu, npos, cs.bytes);
        fflush(stdout);
    }
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    dtb_get_cache_stats(db, &cs);
    fprintf(stderr, "cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " blocks, %" PRIu64 " bytes\n",
            cs.hits, cs.misses, cs.blocks, cs.bytes);
    for (int i = 0; i < nm; i++)
        dtb_index_free(ix[i]);
    free(ix);
    free(mats);
    free(pos);
    dtb_close(db);
    return 0;
}
