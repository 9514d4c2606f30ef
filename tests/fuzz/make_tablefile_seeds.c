/* Writes the seed corpus of fuzz_tablefile (tests/fuzz/corpus_tablefile/) with the real writer
 * (gen/tablewrite.c), so the seeds are exactly what dtbgen would produce for these options: one
 * file per kind the reader distinguishes (WLD and DTW; 1, 2, 4 and 8 bits per value; index order
 * and tiled, with tile widths that take the 8x8 vector path and ones that do not; with and without
 * a dictionary; the compact-set flags; a short last block). The values are synthetic (periodic
 * with a little noise, so that tiling and the dictionary are chosen and pay) because the reader
 * never looks at what they mean; keeping them small (a few KB) keeps the fuzzer fast.
 *
 * Each seed starts with one mode byte for the harness (fuzz_tablefile.c: 3 = repair checksums
 * and layout), followed by the table file itself.
 *
 * usage: make_tablefile_seeds OUTDIR    (build: cmake -DDTB_FUZZ=ON, target make_tablefile_seeds) */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tablefile.h"
#include "tablewrite.h"

typedef struct seed {
    const char *name;     /* file name in OUTDIR */
    const char *material; /* a real international material (the reader checks the name only) */
    dtb_metric metric;
    unsigned bits;        /* value_bits */
    uint32_t tile;        /* DTB_TILE_NONE or a width >= 2 */
    uint32_t dict;        /* dict_bytes (0: none) */
    uint32_t flags;       /* DTB_TABLE_* */
    uint32_t dontcare_kind;
    uint64_t count;       /* positions */
    uint32_t block;       /* block_positions */
} seed;

static const seed seeds[] = {
    {"wld_b2_plain", "KvK", DTB_METRIC_WLD, 2, DTB_TILE_NONE, 0, 0, DTB_DONTCARE_CAPTURES, 3000, 512},
    {"wld_b1_tiled7", "KMvK", DTB_METRIC_WLD, 1, 7, 0, 0, DTB_DONTCARE_CAPTURES, 5000, 700},
    {"wld_b2_tiled10", "KKvK", DTB_METRIC_WLD, 2, 10, 0, 0, 0, 4100, 1000},
    {"wld_derived", "KKvK", DTB_METRIC_WLD, 2, DTB_TILE_NONE, 0, DTB_TABLE_DERIVED,
     DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED, 3000, 256},
    {"wld_threats", "KMvKM", DTB_METRIC_WLD, 2, 10, 0, DTB_TABLE_THREATS,
     DTB_DONTCARE_CAPTURES | DTB_DONTCARE_THREATS, 3000, 640},
    {"dtw_b8_plain", "KvK", DTB_METRIC_DTW, 8, DTB_TILE_NONE, 0, 0, DTB_DONTCARE_CAPTURES, 2000, 300},
    {"dtw_b4_tiled10", "KMvK", DTB_METRIC_DTW, 4, 10, 0, 0, DTB_DONTCARE_CAPTURES, 2600, 640},
    {"dtw_b8_tiled9", "KKvK", DTB_METRIC_DTW, 8, 9, 0, 0, 0, 1500, 729},
    {"dtw_b8_dict", "KvK", DTB_METRIC_DTW, 8, DTB_TILE_NONE, 256, 0, 0, 26000, 1024},
    {"wld_one_block", "MvM", DTB_METRIC_WLD, 2, DTB_TILE_NONE, 0, 0, 0, 100, 65536},
};

/* Value of position i: a period of the tile width (so the writer's tiling pays) with sparse
 * noise, kept below 2^bits; every 13th position is a don't-care when the seed has any. */
static uint8_t value_at(const seed *s, uint64_t i)
{
    const uint64_t c = s->tile >= 2 ? s->tile : 5;
    uint64_t v = (i % c) * 3 + (i / 97) % 2;
    if ((i * 2654435761u) % 31 == 0)
        v += i % 7;
    return (uint8_t)(v & ((1u << s->bits) - 1u));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    int failed = 0;
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        const seed *s = &seeds[k];
        uint8_t *values = malloc(s->count);
        uint64_t *dcbits = calloc((s->count + 63) / 64, sizeof *dcbits);
        if (!values || !dcbits)
            return 1;
        for (uint64_t i = 0; i < s->count; i++) {
            values[i] = value_at(s, i);
            if (s->dontcare_kind && i % 13 == 0)
                dcbits[i / 64] |= 1ull << (i % 64);
        }
        dtb_table_write_options o = dtb_table_write_defaults();
        o.variant = "international";
        o.gametype = 20;
        o.material = s->material;
        o.metric = s->metric;
        o.index_version = DTB_INDEX_VERSION;
        o.value_encoding = dtb_encoding_of(s->metric);
        o.dontcare_kind = s->dontcare_kind;
        o.flags = s->flags;
        o.block_positions = s->block;
        o.value_bits = s->bits;
        o.tile_columns = s->tile;
        o.dict_bytes = s->dict;
        o.threads = 1;
        const dtb_table_dontcare dc = {.bits = dcbits, .marker = -1};
        char tmp[4096], out[4096];
        snprintf(tmp, sizeof tmp, "%s/%s.table", argv[1], s->name);
        snprintf(out, sizeof out, "%s/%s", argv[1], s->name);
        dtb_table_write_stats st;
        dtb_error e;
        dtb_status rc = dtb_table_write(tmp, &o, values, s->count, s->dontcare_kind ? &dc : NULL,
                                        &st, &e);
        free(values);
        free(dcbits);
        if (rc != DTB_OK) {
            fprintf(stderr, "%s\n", e.msg);
            failed = 1;
            continue;
        }
        /* The seed: the harness's mode byte, then the file. */
        FILE *in = fopen(tmp, "rb"), *f = fopen(out, "wb");
        int ch;
        if (!in || !f || fputc(3, f) == EOF) {
            fprintf(stderr, "%s: cannot write\n", out);
            return 1;
        }
        while ((ch = fgetc(in)) != EOF)
            fputc(ch, f);
        fclose(in);
        if (fclose(f) != 0) {
            fprintf(stderr, "%s: cannot write\n", out);
            return 1;
        }
        remove(tmp);
        if (s->dict && !st.dict_size) {
            fprintf(stderr, "%s: the writer stored no dictionary\n", s->name);
            failed = 1;
        }
        if (s->tile >= 2 && st.tile_columns != s->tile) {
            fprintf(stderr, "%s: tile width %u, wanted %u\n", s->name, st.tile_columns, s->tile);
            failed = 1;
        }
        printf("%-16s %5llu bytes, %llu blocks, dict %llu, tile %u, %llu don't-cares\n", s->name,
               (unsigned long long)st.file_size + 1, (unsigned long long)st.blocks,
               (unsigned long long)st.dict_size, st.tile_columns,
               (unsigned long long)st.dontcare_count);
    }
    return failed;
}
