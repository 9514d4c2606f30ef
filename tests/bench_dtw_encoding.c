/* DTW file encodings side by side, for issue #42's choice; a measurement, not a test.
 * Reads a finished full set (every <material>.wld and .dtw of 2..N pieces), re-encodes each DTW
 * table under each candidate with the writer's defaults (same block size, zstd level, tiling and
 * fill), and prints the bytes per candidate and per piece count:
 *
 *   byte     the DTW byte as today (value encoding 1), captures don't-care
 *   drawdc   the DTW byte, draws don't-care too (the WLD file says draw)
 *   dist     the distance only (win d -> (d+1)/2, loss d -> d/2), draws kept as 0
 *   distdc   the distance only, draws don't-care
 *   rank     distdc with the distances renumbered by frequency in each table
 *   winsonly   distdc with the losses don't-care too (a loss is 1 + the longest win after it: a
 *              one-ply search of stored wins)
 *   lossesonly distdc with the wins don't-care too (a win is 1 + the shortest loss after it)
 *   byte256k, byte1m    the DTW byte in file blocks of 2^18 and 2^20 positions (default 2^16)
 *   lossonly1m          lossesonly in blocks of 2^20
 *   pair     distdc, and of each colour-flip pair only the smaller file (the other derived)
 *
 *   dtb_bench_dtw_encoding --set DIR --variant V [--pieces N] [--dir TMP]
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capturetest.h"
#include "index.h"
#include "material.h"
#include "tablefile.h"
#include "tablewrite.h"
#include "value.h"
#include "variant.h"

enum { CANDS = 10, MAXP = 9 };
static const char *names[CANDS] = {"byte", "drawdc", "dist", "distdc", "rank", "winsonly",
                                   "lossesonly", "byte256k", "byte1m", "lossonly1m"};

static int read_all(const char *path, const dtb_tablefile_expect *want, uint8_t *v, uint32_t *bits)
{
    dtb_tablefile *tf;
    dtb_error e;
    if (dtb_tablefile_open(path, want, &tf, &e) != DTB_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    for (uint64_t b = 0; b < info->blocks; b++)
        if (dtb_tablefile_read_block(tf, b, v + b * info->block_positions,
                                     (size_t)dtb_tablefile_block_len(tf, b), ctx, &e) != DTB_OK) {
            fprintf(stderr, "%s\n", e.msg);
            return -1;
        }
    if (bits)
        *bits = info->value_bits;
    dtb_tablefile_ctx_free(ctx);
    dtb_tablefile_close(tf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *set = NULL, *variant = "international", *tmp = "/tmp/dtb_bench_dtw_encoding";
    int pieces = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--set")) set = argv[i + 1];
        else if (!strcmp(argv[i], "--variant")) variant = argv[i + 1];
        else if (!strcmp(argv[i], "--pieces")) pieces = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir")) tmp = argv[i + 1];
    }
    const dtb_variant *var = set ? dtb_variant_find(variant) : NULL;
    if (!var) {
        fprintf(stderr, "usage: dtb_bench_dtw_encoding --set DIR --variant V [--pieces N]\n");
        return 2;
    }
    dtb_board board;
    dtb_board_init(&board, var);
    dtb_capture_oracle oracle = {.board = &board};
    dtb_capturetest_init(&oracle.ct, &board);
    const int count = dtb_material_list(pieces, NULL, 0);
    dtb_material *mats = malloc((size_t)count * sizeof *mats);
    dtb_material_list(pieces, mats, count);
    uint64_t *sizes = calloc((size_t)count * CANDS, sizeof *sizes);
    uint64_t pos[MAXP] = {0}, draws[MAXP] = {0}, caps[MAXP] = {0};
    char name[DTB_MATERIAL_NAME_MAX], path[4096], out[4096];
    for (int m = 0; m < count; m++) {
        dtb_material_name(&mats[m], name, sizeof name);
        dtb_index *ix;
        if (dtb_index_create(&board, mats[m], &ix) != DTB_OK)
            continue;
        const uint64_t n = dtb_index_size(ix), words = (n + 63) / 64;
        const int pc = dtb_material_pieces(&mats[m]);
        uint8_t *dtw = malloc(n), *wld = malloc(n), *v = malloc(n);
        uint64_t *cap = calloc(words, 8), *dc = calloc(words, 8), *dcw = calloc(words, 8),
                 *dcl = calloc(words, 8);
        dtb_tablefile_expect want = {.variant = variant, .material = name,
                                     .metric = DTB_METRIC_DTW};
        snprintf(path, sizeof path, "%s/%s/%s.dtw", set, variant, name);
        if (read_all(path, &want, dtw, NULL) != 0)
            return 1;
        want.metric = DTB_METRIC_WLD;
        snprintf(path, sizeof path, "%s/%s/%s.wld", set, variant, name);
        if (read_all(path, &want, wld, NULL) != 0)
            return 1;
        uint64_t ncap = 0, ndraw = 0;
        for (uint64_t i = 0; i < n; i++) {
            dtb_pos p;
            dtb_index_pos(ix, i, &p);
            const bool c = dtb_capture_oracle_has(&oracle, &p);
            ncap += c;
            ndraw += !c && dtw[i] == 0;
            cap[i / 64] |= (uint64_t)c << (i % 64);
            dc[i / 64] |= (uint64_t)(c || dtw[i] == 0) << (i % 64);
            dcw[i / 64] |= (uint64_t)(c || dtw[i] == 0 || dtw[i] >= 128) << (i % 64);
            dcl[i / 64] |= (uint64_t)(c || dtw[i] < 128) << (i % 64);
        }
        pos[pc] += n, draws[pc] += ndraw, caps[pc] += ncap;
        for (int k = 0; k < CANDS; k++) {
            const bool distance = k >= 2 && k != 7 && k != 8, drawdc = k == 1 || k == 3 || k == 4;
            for (uint64_t i = 0; i < n; i++)
                v[i] = !distance ? dtw[i] : dtw[i] >= 128 ? (uint8_t)(dtw[i] - 128) : dtw[i];
            if (k == 4) { /* most frequent distance first */
                uint64_t hist[256] = {0};
                for (uint64_t i = 0; i < n; i++)
                    hist[v[i]] += !(dc[i / 64] >> (i % 64) & 1);
                uint8_t map[256], order[256];
                for (int x = 0; x < 256; x++)
                    order[x] = (uint8_t)x;
                for (int a = 1; a < 256; a++) /* insertion sort by count, stable */
                    for (int b = a; b > 0 && hist[order[b]] > hist[order[b - 1]]; b--) {
                        const uint8_t t = order[b];
                        order[b] = order[b - 1], order[b - 1] = t;
                    }
                for (int x = 0; x < 256; x++)
                    map[order[x]] = (uint8_t)x;
                for (uint64_t i = 0; i < n; i++)
                    v[i] = map[v[i]];
            }
            dtb_table_write_options o = dtb_table_write_defaults();
            o.variant = variant, o.gametype = var->gametype, o.material = name;
            o.metric = DTB_METRIC_DTW, o.index_version = DTB_INDEX_VERSION;
            o.value_encoding = DTB_ENCODING_DTW, o.dontcare_kind = DTB_DONTCARE_CAPTURES;
            o.threads = 1;
            o.block_positions = k == 7 ? 1u << 18 : k >= 8 ? 1u << 20 : o.block_positions;
            const dtb_table_dontcare d = {.bits = k == 5 ? dcw : k == 6 || k == 9 ? dcl : drawdc ? dc : cap, .marker = -1};
            snprintf(out, sizeof out, "%s/%s.%s.dtw", tmp, name, names[k]);
            dtb_table_write_stats st;
            dtb_error e;
            if (dtb_table_write(out, &o, v, n, &d, &st, &e) != DTB_OK) {
                fprintf(stderr, "%s\n", e.msg);
                return 1;
            }
            sizes[m * CANDS + k] = st.file_size;
            unlink(out);
        }
        free(dtw), free(wld), free(v), free(cap), free(dc), free(dcw), free(dcl);
        dtb_index_free(ix);
    }
    printf("%s pieces positions draws(quiet) captures", variant);
    for (int k = 0; k < CANDS; k++)
        printf(" %s", names[k]);
    printf(" pair\n");
    for (int pc = 2; pc <= pieces; pc++) {
        uint64_t tot[CANDS + 1] = {0};
        for (int m = 0; m < count; m++) {
            if (dtb_material_pieces(&mats[m]) != pc)
                continue;
            for (int k = 0; k < CANDS; k++)
                tot[k] += sizes[m * CANDS + k];
            const dtb_material f = dtb_material_flip(mats[m]);
            int fm = -1;
            for (int j = 0; j < count; j++)
                if (dtb_material_equal(&mats[j], &f))
                    fm = j;
            const uint64_t a = sizes[m * CANDS + 3], b = sizes[fm * CANDS + 3];
            /* the smaller of the pair stored, the other a header-only derived file (~300 bytes) */
            tot[CANDS] += fm == m ? a : a < b || (a == b && m < fm) ? a : 300;
        }
        printf("%d %d %llu %llu %llu", pc, pc, (unsigned long long)pos[pc],
               (unsigned long long)draws[pc], (unsigned long long)caps[pc]);
        for (int k = 0; k <= CANDS; k++)
            printf(" %llu", (unsigned long long)tot[k]);
        printf("\n");
    }
    free(sizes), free(mats);
    return 0;
}
