/* Table file compression and decoding measurements for choosing the writer's defaults; a
 * measurement, not a test (timings). Solves real materials in memory with the generator's solver,
 * then writes each as WLD and DTW tables under a grid of block sizes, zstd levels, dictionary sizes
 * and don't-care fills, and reports bytes, positions per byte and decoding cost.
 *
 *   dtb_bench_tablefile [--variant V] [--pieces N] [--min-pieces N] [--blocks 4096,65536]
 *                       [--levels 3,19] [--dict 0,16384] [--fill previous,majority,zero,none,gap]
 *                       [--threads T] [--dir DIR]
 * Prints one line per (metric, parameters) with totals over all materials of min..N pieces. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "material.h"
#include "solve.h"
#include "solved.h"
#include "tablefile.h"
#include "tablewrite.h"
#include "value.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_list(const char *s, long *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = strtol(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
    return n;
}

static const char *fill_names[] = {"previous", "majority", "zero", "none", "gap"}; /* enum order */

int main(int argc, char **argv)
{
    const char *variant = "international", *dir = "/tmp/dtb_bench_tablefile";
    int pieces = 4, min_pieces = 2, threads = 0;
    long blocks[16] = {65536}, levels[16] = {19}, dicts[16] = {0};
    int nb = 1, nl = 1, nd = 1, nf = 1;
    int fills[5] = {DTB_FILL_GAP};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--variant")) variant = v, i++;
        else if (!strcmp(a, "--pieces")) pieces = atoi(v), i++;
        else if (!strcmp(a, "--min-pieces")) min_pieces = atoi(v), i++;
        else if (!strcmp(a, "--threads")) threads = atoi(v), i++;
        else if (!strcmp(a, "--dir")) dir = v, i++;
        else if (!strcmp(a, "--blocks")) nb = parse_list(v, blocks, 16), i++;
        else if (!strcmp(a, "--levels")) nl = parse_list(v, levels, 16), i++;
        else if (!strcmp(a, "--dict")) nd = parse_list(v, dicts, 16), i++;
        else if (!strcmp(a, "--fill")) {
            nf = 0;
            for (int k = 0; k < 5; k++)
                if (strstr(v, fill_names[k]))
                    fills[nf++] = k;
            i++;
        } else {
            fprintf(stderr, "usage: see the comment at the top of bench_tablefile.c\n");
            return 2;
        }
    }
    if (threads > 0)
        omp_set_num_threads(threads);
    const dtb_variant *var = dtb_variant_find(variant);
    if (!var) {
        fprintf(stderr, "unknown variant %s\n", variant);
        return 2;
    }
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    dtb_board board;
    dtb_board_init(&board, var);
    dtb_solved *s = dtb_solved_create(&board);
    const int nm = dtb_material_list(pieces, NULL, 0);
    dtb_material *ms = malloc(sizeof *ms * (size_t)nm);
    dtb_material_list(pieces, ms, nm);
    dtb_error err;
    double t0 = now();
    for (int i = 0; i < nm; i++) {
        if (dtb_solved_find(s, ms[i]))
            continue;
        dtb_solve_stats st[2];
        if (dtb_solve_pair(s, ms[i], false, st, NULL, NULL, &err) != DTB_OK) {
            fprintf(stderr, "solve: %s\n", err.msg);
            return 1;
        }
    }
    uint64_t total = 0, captures = 0;
    for (int i = 0; i < nm; i++) {
        if (dtb_material_pieces(&ms[i]) < min_pieces)
            continue;
        const dtb_solved_table *t = dtb_solved_find(s, ms[i]);
        const uint64_t n = dtb_index_size(t->index);
        total += n;
        for (uint64_t w = 0; w < (n + 63) / 64; w++)
            captures += (uint64_t)__builtin_popcountll(t->captures[w]);
    }
    printf("# %s %d..%d pieces: %d materials, %llu positions, %.1f%% captures; solved in %.1f s\n",
           variant, min_pieces, pieces, nm, (unsigned long long)total, 100.0 * captures / total,
           now() - t0);
    printf("# metric block level dict fill | bytes pos/byte frames dict | write_s | decode_us/block "
           "MB/s | ctxless_us/block\n");
    for (int metric = DTB_METRIC_WLD; metric <= DTB_METRIC_DTW; metric++)
        for (int ib = 0; ib < nb; ib++)
            for (int il = 0; il < nl; il++)
                for (int id = 0; id < nd; id++)
                    for (int jf = 0; jf < nf; jf++) {
                        uint64_t bytes = 0, data = 0, dict = 0, nblocks = 0;
                        double wsec = 0, dsec = 0, csec = 0;
                        uint64_t dbytes = 0, nctxless = 0;
                        for (int i = 0; i < nm; i++) {
                            if (dtb_material_pieces(&ms[i]) < min_pieces)
                                continue;
                            const dtb_solved_table *t = dtb_solved_find(s, ms[i]);
                            const uint64_t n = dtb_index_size(t->index);
                            uint8_t *vals = malloc(n);
                            for (uint64_t k = 0; k < n; k++) {
                                const dtb_value v = t->values[k];
                                vals[k] = metric == DTB_METRIC_DTW ? v
                                          : dtb_value_is_win(v)    ? 1
                                          : dtb_value_is_loss(v)   ? 2
                                                                   : 0;
                            }
                            char name[DTB_MATERIAL_NAME_MAX], path[600];
                            dtb_material_name(&ms[i], name, sizeof name);
                            snprintf(path, sizeof path, "%s/%s.%s", dir, name,
                                     dtb_metric_name((dtb_metric)metric));
                            dtb_table_write_options o = dtb_table_write_defaults();
                            o.variant = var->name;
                            o.gametype = var->gametype;
                            o.material = name;
                            o.metric = (dtb_metric)metric;
                            o.index_version = 1;
                            o.value_encoding = metric;
                            o.dontcare_kind = DTB_DONTCARE_CAPTURES;
                            o.block_positions = (uint32_t)blocks[ib];
                            o.zstd_level = (int)levels[il];
                            o.dict_bytes = (uint32_t)dicts[id];
                            o.fill = (dtb_table_fill)fills[jf];
                            const dtb_table_dontcare dc = {.bits = t->captures, .marker = -1};
                            dtb_table_write_stats ws;
                            double w0 = now();
                            if (dtb_table_write(path, &o, vals, n, &dc, &ws, &err) != DTB_OK) {
                                fprintf(stderr, "%s\n", err.msg);
                                return 1;
                            }
                            wsec += now() - w0;
                            bytes += ws.file_size;
                            data += ws.data_size;
                            dict += ws.dict_size;
                            nblocks += ws.blocks;
                            dtb_tablefile *tf;
                            if (dtb_tablefile_open(path, NULL, &tf, &err) != DTB_OK) {
                                fprintf(stderr, "%s\n", err.msg);
                                return 1;
                            }
                            dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
                            uint8_t *buf = malloc(o.block_positions);
                            double d0 = now();
                            for (int rep = 0; rep < 3; rep++)
                                for (uint64_t b = 0; b < ws.blocks; b++) {
                                    dtb_tablefile_read_block(tf, b, buf, o.block_positions, ctx, &err);
                                    dbytes += dtb_tablefile_block_len(tf, b);
                                }
                            dsec += now() - d0;
                            d0 = now();
                            for (uint64_t b = 0; b < ws.blocks && b < 200; b++, nctxless++)
                                dtb_tablefile_read_block(tf, b, buf, o.block_positions, NULL, &err);
                            csec += now() - d0;
                            free(buf);
                            dtb_tablefile_ctx_free(ctx);
                            dtb_tablefile_close(tf);
                            unlink(path);
                            free(vals);
                        }
                        printf("%s %7ld %2ld %6ld %-8s | %10llu %8.1f %10llu %6llu | %7.2f | %8.2f "
                               "%7.0f | %8.2f\n",
                               dtb_metric_name((dtb_metric)metric), blocks[ib], levels[il],
                               dicts[id], fill_names[fills[jf]], (unsigned long long)bytes,
                               (double)total / bytes, (unsigned long long)data,
                               (unsigned long long)dict, wsec, 1e6 * dsec / (3.0 * nblocks),
                               dbytes / dsec / 1e6, 1e6 * csec / nctxless);
                        fflush(stdout);
                    }
    dtb_solved_free(s);
    free(ms);
    return 0;
}
