/* Table file writer. Blocks are filled (don't-care positions get a value chosen to compress well)
 * and compressed as independent zstd frames, a batch at a time: the batch's blocks in parallel
 * (each block by one thread with its own context, so the frame bytes do not depend on which
 * thread made them), then written in block order by one thread. Each frame is decompressed again
 * and compared before it is written, so a compressor bug cannot produce a silently wrong table.
 * The header and block table are written last, at the front, and the whole-file checksum is
 * computed by reading the file back from the page cache (the checksum runs over the file in
 * order, and the front is known only at the end). */
#define _POSIX_C_SOURCE 200809L

#include "tablewrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zdict.h>
#include <zstd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "atomicfile.h"
#include "checksum.h"
#include "material.h"
#include "tableformat.h"
#include "value.h"
#include "variant.h"

dtb_table_write_options dtb_table_write_defaults(void)
{
    return (dtb_table_write_options){
        .block_positions = DTB_TABLE_DEFAULT_BLOCK_POSITIONS,
        .zstd_level = DTB_TABLE_DEFAULT_ZSTD_LEVEL,
        .fill = DTB_FILL_GAP,
        .tile_columns = DTB_TILE_AUTO,
    };
}

static bool name_ok(const char *s, size_t max, const char *allowed)
{
    if (!s || !*s || strlen(s) >= max)
        return false;
    return strspn(s, allowed) == strlen(s);
}

static dtb_status check_options(const char *path, const dtb_table_write_options *o, uint64_t count,
                                dtb_error *e)
{
    const dtb_variant *v = o->variant ? dtb_variant_find(o->variant) : NULL;
    if (!v || !name_ok(o->variant, DTB_TF_VARIANT_LEN, "abcdefghijklmnopqrstuvwxyz"))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "unknown variant '%s'", o->variant ? o->variant : "");
    if (o->gametype != v->gametype)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "GameType %d is not %s's (%d)", o->gametype, v->name,
                    v->gametype);
    if (!o->material || strlen(o->material) >= DTB_TF_MATERIAL_LEN ||
        !dtb_tf_material_name_ok(o->material))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "bad material name '%s'",
                    o->material ? o->material : "");
    if (!dtb_metric_name(o->metric))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "unknown metric %d", (int)o->metric);
    for (int c = 0; c < DTB_TF_RULE_CLASSES && dtb_metric_is_rules(o->metric); c++) /* 0 after */
        if ((c == 0 || o->rule_limits[c]) &&
            (o->rule_limits[c] < 1 || o->rule_limits[c] > 127 || (c && !o->rule_limits[c - 1])))
            return dtb_tf_file_error(e, DTB_E_INVALID, path, "rule limit %d outside 1..127",
                                     o->rule_limits[c]);
    if (dtb_metric_is_rules(o->metric) &&
        (o->rule_late_limit < 0 || o->rule_late_limit > 127 || o->rule_late_after < 0 ||
         o->rule_late_after > DTB_TF_RULE_COUNT_MAX || !o->rule_late_limit != !o->rule_late_after ||
         (o->rule_layers > 1 && o->rule_layers != o->rule_late_after + 1) ||
         (o->rule_layers > 1 && count % (uint64_t)o->rule_layers)))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "bad rule count fields %d, %d, %d",
                                 o->rule_late_limit, o->rule_late_after, o->rule_layers);
    if (count == 0)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "no positions");
    if (o->block_positions == 0 || o->block_positions > DTB_TF_MAX_BLOCK_POSITIONS)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "block size %u outside 1..%u", o->block_positions,
                    DTB_TF_MAX_BLOCK_POSITIONS);
    if (o->zstd_level < 1 || o->zstd_level > ZSTD_maxCLevel())
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "zstd level %d outside 1..%d", o->zstd_level,
                    ZSTD_maxCLevel());
    if (o->dict_bytes > DTB_TF_MAX_DICT_SIZE)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "dictionary size %u above %u", o->dict_bytes,
                    DTB_TF_MAX_DICT_SIZE);
    if (o->value_bits != 0 && o->value_bits != 1 && o->value_bits != 2 && o->value_bits != 4 &&
        o->value_bits != 8)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "value width %u is not 1, 2, 4 or 8 bits",
                                 o->value_bits);
    if (o->flags & ~(uint32_t)DTB_TF_KNOWN_FLAGS || o->dontcare_kind & ~(uint32_t)DTB_TF_KNOWN_DONTCARE ||
        ((o->dontcare_kind & DTB_DONTCARE_DERIVED) && !(o->flags & DTB_TABLE_DERIVED)))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "flags 0x%x with don't-care kind 0x%x",
                                 o->flags, o->dontcare_kind);
    if (o->flags & DTB_TABLE_DERIVED) {
        dtb_material m;
        if (dtb_material_parse(o->material, &m, NULL) != DTB_OK) /* checked above: cannot fail */
            return dtb_tf_file_error(e, DTB_E_INVALID, path, "bad material name '%s'", o->material);
        const dtb_material f = dtb_material_flip(m);
        if (dtb_material_equal(&m, &f))
            return dtb_tf_file_error(e, DTB_E_INVALID, path, "%s is its own colour flip: it cannot be derived",
                                     o->material);
    }
    if ((unsigned)o->fill > DTB_FILL_GAP)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "unknown fill policy %d", (int)o->fill);
    return DTB_OK;
}

static inline bool is_dontcare(const dtb_table_dontcare *dc, const uint8_t *values, uint64_t i)
{
    return (dc->bits && (dc->bits[i / 64] >> (i % 64) & 1)) ||
           (dc->marker >= 0 && values[i] == dc->marker) || (dc->fn && dc->fn(dc->user, i));
}

/* Per-thread compression state. */
typedef struct worker {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    uint8_t *filled, *mask, *tmask, *raw, *packed, *check, *mapped;
} worker;

/* Index order to file order (dtb_tf_tile_pos): row by row, each row a stride-r scatter. */
static void tile_bytes(const uint8_t *in, size_t len, size_t c, uint8_t *out)
{
    const size_t r = len / c, full = r * c;
    for (size_t row = 0; row < r; row++) {
        const uint8_t *src = in + row * c;
        uint8_t *dst = out + row;
        for (size_t col = 0; col < c; col++)
            dst[col * r] = src[col];
    }
    memcpy(out + full, in + full, len - full);
}

/* The most frequent cared-for value of v (mask[i] set: don't care); 0 when there is none. */
static uint8_t majority(const uint8_t *v, const uint8_t *mask, size_t len)
{
    /* Four histograms, one per position mod 4: equal values in a row then update different
     * counters instead of waiting on one (WLD blocks hold two or three values). */
    uint32_t hist[4][256] = {{0}};
    size_t i = 0;
    for (; i + 4 <= len; i += 4)
        for (int k = 0; k < 4; k++)
            hist[k][v[i + k]] += !mask[i + k];
    for (; i < len; i++)
        hist[0][v[i]] += !mask[i];
    uint8_t with = 0;
    uint64_t best = 0;
    for (int x = 0; x < 256; x++) {
        const uint64_t c = (uint64_t)hist[0][x] + hist[1][x] + hist[2][x] + hist[3][x];
        if (c > best) {
            best = c;
            with = (uint8_t)x;
        }
    }
    return with;
}

/* spread8[x]: the eight bits of x as eight bytes of 0 or 1, lowest bit first. */
#define SP(x) {(x) & 1, (x) >> 1 & 1, (x) >> 2 & 1, (x) >> 3 & 1, (x) >> 4 & 1, (x) >> 5 & 1, \
               (x) >> 6 & 1, (x) >> 7 & 1}
#define SP4(x) SP(x), SP((x) + 1), SP((x) + 2), SP((x) + 3)
#define SP16(x) SP4(x), SP4((x) + 4), SP4((x) + 8), SP4((x) + 12)
#define SP64(x) SP16(x), SP16((x) + 16), SP16((x) + 32), SP16((x) + 48)
static const uint8_t spread8[256][8] = {SP64(0), SP64(64), SP64(128), SP64(192)};
#undef SP64
#undef SP16
#undef SP4
#undef SP

/* keep (0xFF or 0) ? kept : other, by masks: the fill loops select on the don't-care mask, which
 * has no pattern a predictor could learn, and gcc turned `?:` there into branches. */
static inline uint8_t mask_select(uint8_t keep, uint8_t kept, uint8_t other)
{
    return (uint8_t)((kept & keep) | (other & ~keep));
}

/* Copies block [start, start+len) of values to w->filled in file order (tiled by tile columns
 * when tile >= 2) with don't-care positions filled; returns how many positions were don't-care.
 * The mask loops are branch-free (a third to two thirds of the positions are don't-care in no
 * predictable pattern, and branching on them made this the writer's hottest function). Filling
 * happens in file order because runs in file order are what the compressor sees. */
static uint64_t fill_block(const uint8_t *values, uint64_t start, size_t len,
                           const dtb_table_dontcare *dc, dtb_table_fill fill, uint32_t tile,
                           const uint8_t *map, const worker *w)
{
    const uint8_t *v = values + start;
    uint8_t *mask = w->mask, *out = w->filled;
    if (map) {
        for (size_t i = 0; i < len; i++)
            w->mapped[i] = map[v[i]];
        v = w->mapped;
    }
    if (!dc->bits && !dc->fn && dc->marker < 0) {
        memset(mask, 0, len);
    } else if (!dc->fn && dc->marker < 0) {
        size_t i = 0;
        if (start % 8 == 0) /* a byte of the bitmap at a time (blocks start at such a multiple) */
            for (; i + 8 <= len; i += 8)
                memcpy(mask + i, spread8[dc->bits[(start + i) / 64] >> ((start + i) % 64) & 0xFF], 8);
        for (; i < len; i++)
            mask[i] = (uint8_t)(dc->bits[(start + i) / 64] >> ((start + i) % 64) & 1);
    } else {
        for (size_t i = 0; i < len; i++)
            mask[i] = is_dontcare(dc, values, start + i);
    }
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += mask[i];
    if (tile >= 2) {
        tile_bytes(v, len, tile, w->raw);
        tile_bytes(mask, len, tile, w->tmask);
        v = w->raw;
        mask = w->tmask;
    }
    if (n == 0 || fill == DTB_FILL_NONE) {
        memcpy(out, v, len);
        return n;
    }
    if (fill == DTB_FILL_PREVIOUS) {
        /* Before the first cared-for value, use that value: the run then starts at the block. */
        size_t first = 0;
        while (first < len && mask[first])
            first++;
        uint8_t prev = first < len ? v[first] : 0;
        for (size_t i = 0; i < len; i++) {
            prev = mask_select((uint8_t)(0u - mask[i]), prev, v[i]);
            out[i] = prev;
        }
        return n;
    }
    if (fill == DTB_FILL_GAP) {
        /* A gap takes the cared-for value on both its sides when they are equal, else the
         * block's majority (also at the block's ends). Measured on the 10 largest 5-piece WLD
         * tables: 37.2 positions/byte against 36.7 for the majority alone and 34.5 for the
         * previous value (docs/FORMAT.md). Without a branch per position (the mask has no
         * pattern a predictor could learn): out first holds, from the back, the next cared-for
         * value at or after each position, then the fill from the front. */
        const uint8_t mj = majority(v, mask, len);
        size_t f = 0, l = len; /* the first cared-for position and one past the last */
        while (f < len && mask[f])
            f++;
        while (l > f && mask[l - 1])
            l--;
        memset(out, mj, f);
        memset(out + l, mj, len - l);
        if (f == l)
            return n;
        uint8_t next = v[l - 1];
        for (size_t i = l; i-- > f;) {
            next = mask_select((uint8_t)(0u - mask[i]), next, v[i]);
            out[i] = next;
        }
        uint8_t before = v[f];
        for (size_t i = f; i < l; i++) {
            const uint8_t x = v[i], after = out[i], keep = (uint8_t)(0u - mask[i]);
            before = mask_select(keep, before, x);
            const uint8_t gap = mask_select((uint8_t)(0u - (before == after)), before, mj);
            out[i] = mask_select(keep, gap, x);
        }
        return n;
    }
    const uint8_t with = fill == DTB_FILL_MAJORITY ? majority(v, mask, len) : 0;
    for (size_t i = 0; i < len; i++)
        out[i] = mask[i] ? with : v[i];
    return n;
}

/* pwrite of all len bytes; 0 or an errno. */
static int write_full(int fd, const void *buf, size_t len, uint64_t off)
{
    const unsigned char *p = buf;
    while (len > 0) {
        const ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* One block of the current batch. */
typedef struct slot {
    uint8_t *frame;
    size_t size;           /* frame size, or 0 on failure */
    uint64_t dontcare;
    const char *failure;   /* set when compression or the round trip failed */
    bool too_wide;         /* a value does not fit value_bits: at position wide_at */
    uint64_t wide_at;
} slot;

/* Fills block [start, start+len) and packs it value_bits per value, from the low bits of each
 * byte up (unused bits zero). Returns the bytes to compress (w->filled or w->packed) and their
 * length in *plen, or NULL when a value does not fit value_bits (its position in *wide_at). */
static const uint8_t *prepare_block(const dtb_table_write_options *o, const uint8_t *values,
                                    uint64_t start, size_t len, const dtb_table_dontcare *dc,
                                    const worker *w, uint64_t *dontcare, size_t *plen,
                                    uint64_t *wide_at)
{
    const uint32_t tile = o->tile_columns >= 2 ? o->tile_columns : 0;
    *dontcare = fill_block(values, start, len, dc, o->fill, tile, o->value_map, w);
    const unsigned bits = o->value_bits;
    *plen = (size_t)dtb_tf_packed_len(len, bits);
    if (bits == 8)
        return w->filled;
    const uint8_t *f = w->filled;
    uint8_t all = 0;
    for (size_t i = 0; i < len; i++)
        all |= f[i];
    if (all >> bits) {
        size_t i = 0;
        while (!(f[i] >> bits))
            i++;
        const size_t r = tile ? len / tile : 0; /* file order back to index order */
        *wide_at = start + (i < r * tile ? i % r * tile + i / r : i);
        return NULL;
    }
    /* One loop per width with constant shifts (vectorisable); then the partial last byte. */
    uint8_t *p = w->packed;
    const size_t whole = len / (8 / bits);
    switch (bits) {
    case 1:
        for (size_t j = 0; j < whole; j++) {
            const uint8_t *q = f + 8 * j;
            p[j] = (uint8_t)(q[0] | q[1] << 1 | q[2] << 2 | q[3] << 3 | q[4] << 4 | q[5] << 5 |
                             q[6] << 6 | q[7] << 7);
        }
        break;
    case 2:
        for (size_t j = 0; j < whole; j++) {
            const uint8_t *q = f + 4 * j;
            p[j] = (uint8_t)(q[0] | q[1] << 2 | q[2] << 4 | q[3] << 6);
        }
        break;
    case 4:
        for (size_t j = 0; j < whole; j++)
            p[j] = (uint8_t)(f[2 * j] | f[2 * j + 1] << 4);
        break;
    }
    if (whole < *plen) {
        const unsigned per = 8 / bits;
        p[whole] = 0;
        for (size_t i = whole * per; i < len; i++)
            p[whole] |= (uint8_t)(f[i] << (i % per * bits));
    }
    return w->packed;
}

/* Trains a dictionary on evenly spaced blocks (a deterministic choice), filled and packed as
 * they will be stored; returns its size, 0 when the table is too small or training fails (the file
 * is then written without one). w provides scratch buffers. */
static size_t train_dict(const dtb_table_write_options *o, const uint8_t *values, uint64_t blocks,
                         const dtb_table_dontcare *dc, const worker *w, void *dict)
{
    enum { MIN_SAMPLES = 16 };
    const uint64_t bp = o->block_positions, plen = dtb_tf_packed_len(bp, o->value_bits);
    /* A table must be big enough to pay for the dictionary it stores: measured on 2..4-piece
     * tables, a dictionary saves 6-25% of the frames, so under ~100 times its size it costs more
     * than it saves. */
    if (blocks < MIN_SAMPLES + 1 || blocks * plen < (uint64_t)o->dict_bytes * 100)
        return 0;
    /* About 100 times the dictionary size in samples (zstd's advice), at most 64 MiB. */
    uint64_t want = ((uint64_t)o->dict_bytes * 100 + plen - 1) / plen;
    const uint64_t cap = ((uint64_t)64 << 20) / plen;
    if (want > cap)
        want = cap;
    if (want < MIN_SAMPLES)
        want = MIN_SAMPLES;
    if (want > blocks - 1)
        want = blocks - 1; /* whole blocks only: skip the last, shorter one */
    uint8_t *samples = malloc((size_t)(want * plen));
    size_t *sizes = malloc((size_t)want * sizeof *sizes);
    size_t got = 0;
    if (samples && sizes) {
        bool ok = true;
        for (uint64_t k = 0; k < want && ok; k++) {
            const uint64_t b = k * (blocks - 1) / want;
            uint64_t dontcare, wide_at;
            const uint8_t *src = prepare_block(o, values, b * bp, (size_t)bp, dc, w, &dontcare,
                                               &sizes[k], &wide_at);
            if ((ok = src != NULL))
                memcpy(samples + k * plen, src, sizes[k]);
        }
        const size_t r =
            ok ? ZDICT_trainFromBuffer(dict, o->dict_bytes, samples, sizes, (unsigned)want) : 0;
        got = ZDICT_isError(r) ? 0 : r;
    }
    free(samples);
    free(sizes);
    return got;
}

/* Fills and compresses block b into sl, then decompresses the frame and compares (round trip). */
static void compress_block(const worker *w, const dtb_table_write_options *o, const ZSTD_DDict *ddict,
                           const uint8_t *values, uint64_t count, const dtb_table_dontcare *dc,
                           uint64_t b, slot *sl, size_t cap)
{
    const uint64_t start = b * o->block_positions;
    const uint64_t left = count - start;
    const size_t len = (size_t)(left < o->block_positions ? left : o->block_positions);
    sl->size = 0;
    sl->failure = NULL;
    sl->too_wide = false;
    size_t plen;
    const uint8_t *src = prepare_block(o, values, start, len, dc, w, &sl->dontcare, &plen,
                                       &sl->wide_at);
    if (!src) {
        sl->too_wide = true;
        return;
    }
    const size_t r = ZSTD_compress2(w->cctx, sl->frame, cap, src, plen);
    if (ZSTD_isError(r)) {
        sl->failure = ZSTD_getErrorName(r);
        return;
    }
    const size_t back = ddict ? ZSTD_decompress_usingDDict(w->dctx, w->check, plen, sl->frame, r, ddict)
                              : ZSTD_decompressDCtx(w->dctx, w->check, plen, sl->frame, r);
    if (ZSTD_isError(back) || back != plen || memcmp(w->check, src, plen) != 0) {
        sl->failure = "compressed block does not decompress to its input";
        return;
    }
    sl->size = r;
}

/* zstd parameters the writer sets on top of a level's own (zstd's table for a block-sized
 * source). Measured on international 5- and 6-piece tables in 64K-position blocks
 * (docs/FORMAT.md, "zstd parameters"): at level 9, matches of at least 6 bytes searched 2^4
 * deep instead of zstd's 4 bytes and 2^5 give 0.3-1.2% (WLD) and 2.2-3.0% (DTW) fewer bytes for
 * 29-42% less compression time. Values are runs of a few symbols, so short matches cost more
 * than they find. */
static const struct {
    int level, min_match, search_log;
} level_tuning[] = {
    {9, 6, 4},
};

/* Sets the tuned parameters of level on cctx; false on a zstd error. */
static bool tune_level(ZSTD_CCtx *cctx, int level)
{
    for (size_t i = 0; i < sizeof level_tuning / sizeof level_tuning[0]; i++) {
        if (level_tuning[i].level != level)
            continue;
        const size_t a = ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, level_tuning[i].min_match);
        const size_t b = ZSTD_CCtx_setParameter(cctx, ZSTD_c_searchLog, level_tuning[i].search_log);
        return !ZSTD_isError(a) && !ZSTD_isError(b);
    }
    return true;
}

static bool worker_init(worker *w, const dtb_table_write_options *o)
{
    const size_t bp = o->block_positions;
    w->cctx = ZSTD_createCCtx();
    w->dctx = ZSTD_createDCtx();
    w->filled = malloc(bp);
    w->mask = malloc(bp);
    w->tmask = malloc(bp);
    w->raw = malloc(bp);
    w->check = malloc(bp);
    w->packed = malloc(bp);
    w->mapped = malloc(bp);
    if (!w->cctx || !w->dctx || !w->filled || !w->mask || !w->tmask || !w->raw || !w->check ||
        !w->packed || !w->mapped)
        return false;
    /* Frames carry their content size (the reader checks lengths anyway) but no zstd checksum
     * (the block table has ours) and no dictionary id (the file has at most one dictionary). */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, o->zstd_level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_dictIDFlag, 0)) ||
        !tune_level(w->cctx, o->zstd_level))
        return false;
    return true;
}

static void worker_free(worker *w)
{
    ZSTD_freeCCtx(w->cctx);
    ZSTD_freeDCtx(w->dctx);
    free(w->filled);
    free(w->mask);
    free(w->tmask);
    free(w->raw);
    free(w->check);
    free(w->packed);
    free(w->mapped);
}

/* The long list as its file section: one zstd frame of the indexes (u64) then the distances
 * (u16), little-endian. *out malloc'd; its size, or 0 with *out NULL when out of memory or zstd
 * fails. */
static size_t compress_long_list(const dtb_table_write_options *o, unsigned char **out)
{
    const size_t n = (size_t)o->long_count, raw_len = n * 10;
    unsigned char *raw = malloc(raw_len);
    const size_t cap = ZSTD_compressBound(raw_len);
    unsigned char *frame = malloc(cap);
    *out = NULL;
    if (!raw || !frame) {
        free(raw);
        free(frame);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        dtb_tf_put64(raw + 8 * i, o->long_index[i]);
        raw[8 * n + 2 * i] = (unsigned char)(o->long_dtw[i] & 255);
        raw[8 * n + 2 * i + 1] = (unsigned char)(o->long_dtw[i] >> 8);
    }
    const size_t r = ZSTD_compress(frame, cap, raw, raw_len, o->zstd_level);
    free(raw);
    if (ZSTD_isError(r)) {
        free(frame);
        return 0;
    }
    *out = frame;
    return r;
}

/* The header, block table, dictionary and long list: the first data_offset bytes of the file. */
static void build_meta(unsigned char *m, const dtb_table_write_options *o, uint64_t count,
                       uint64_t blocks, uint64_t dontcare, const void *dict, size_t dict_size,
                       const void *longs, size_t long_size, uint64_t file_size)
{
    const uint64_t dict_offset = DTB_TF_HEADER_SIZE + blocks * DTB_TF_ENTRY_SIZE;
    memset(m, 0, DTB_TF_HEADER_SIZE);
    memcpy(m + DTB_TF_OFF_MAGIC, DTB_TF_MAGIC, DTB_TF_MAGIC_LEN);
    dtb_tf_put32(m + DTB_TF_OFF_VERSION, o->metric == DTB_METRIC_MTC ? DTB_TF_VERSION_MTC
                                         : dtb_metric_is_rules(o->metric) ? DTB_TF_VERSION_RULES
                                         : long_size                 ? DTB_TF_VERSION_LONG
                                                                     : DTB_TF_VERSION);
    if (dtb_metric_is_rules(o->metric)) {
        m[DTB_TF_OFF_RULES] = (unsigned char)dtb_metric_rules_id(o->metric);
        for (int c = 0; c < DTB_TF_RULE_CLASSES; c++)
            m[DTB_TF_OFF_RULES + 1 + c] = (unsigned char)o->rule_limits[c];
        unsigned char *late = m + DTB_TF_OFF_RULES + 1 + DTB_TF_RULE_CLASSES;
        late[0] = (unsigned char)o->rule_late_limit;
        late[1] = (unsigned char)o->rule_late_after;
        late[2] = (unsigned char)(o->rule_layers > 1 ? o->rule_layers : 0);
    }
    dtb_tf_put32(m + DTB_TF_OFF_HEADER_SIZE, DTB_TF_HEADER_SIZE);
    memcpy(m + DTB_TF_OFF_VARIANT, o->variant, strlen(o->variant));
    dtb_tf_put32(m + DTB_TF_OFF_GAMETYPE, (uint32_t)o->gametype);
    dtb_tf_put32(m + DTB_TF_OFF_METRIC, (uint32_t)o->metric);
    memcpy(m + DTB_TF_OFF_MATERIAL, o->material, strlen(o->material));
    dtb_tf_put32(m + DTB_TF_OFF_INDEX_VERSION, o->index_version);
    dtb_tf_put32(m + DTB_TF_OFF_VALUE_ENCODING, o->value_encoding);
    dtb_tf_put64(m + DTB_TF_OFF_POSITIONS, count);
    dtb_tf_put32(m + DTB_TF_OFF_BLOCK_POSITIONS, o->block_positions);
    dtb_tf_put32(m + DTB_TF_OFF_ZSTD_LEVEL, (uint32_t)o->zstd_level);
    dtb_tf_put64(m + DTB_TF_OFF_BLOCKS, blocks);
    dtb_tf_put32(m + DTB_TF_OFF_DONTCARE_KIND, dontcare ? o->dontcare_kind : 0);
    dtb_tf_put32(m + DTB_TF_OFF_FLAGS, o->flags);
    dtb_tf_put64(m + DTB_TF_OFF_DONTCARE_COUNT, dontcare);
    dtb_tf_put64(m + DTB_TF_OFF_TABLE_OFFSET, DTB_TF_HEADER_SIZE);
    dtb_tf_put64(m + DTB_TF_OFF_DICT_OFFSET, dict_offset);
    dtb_tf_put64(m + DTB_TF_OFF_DICT_SIZE, dict_size);
    dtb_tf_put64(m + DTB_TF_OFF_DATA_OFFSET, dict_offset + dict_size + long_size);
    dtb_tf_put64(m + DTB_TF_OFF_FILE_SIZE, file_size);
    dtb_tf_put64(m + DTB_TF_OFF_LONG_SIZE, long_size);
    dtb_tf_put64(m + DTB_TF_OFF_LONG_COUNT, long_size ? o->long_count : 0);
    dtb_tf_put32(m + DTB_TF_OFF_VALUE_BITS, o->value_bits);
    dtb_tf_put32(m + DTB_TF_OFF_TILE_COLUMNS, o->tile_columns >= 2 ? o->tile_columns : 0);
    if (dict_size)
        memcpy(m + dict_offset, dict, dict_size);
    if (long_size)
        memcpy(m + dict_offset + dict_size, longs, long_size);
    /* The block table is already in place (m + header); the meta hash covers all but itself. */
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    dtb_hash64_update(&hs, m, DTB_TF_OFF_META_HASH);
    dtb_hash64_update(&hs, m + DTB_TF_HEADER_SIZE,
                      (size_t)(dict_offset + dict_size + long_size - DTB_TF_HEADER_SIZE));
    dtb_tf_put64(m + DTB_TF_OFF_META_HASH, dtb_hash64_digest(&hs));
}

/* XXH64 of the file's first len bytes, read back. 0 or an errno. */
static int hash_back(int fd, uint64_t len, uint64_t *out)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return ENOMEM;
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    int err = 0;
    for (uint64_t off = 0; off < len && !err;) {
        const size_t want = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
        const ssize_t n = pread(fd, buf, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        dtb_hash64_update(&hs, buf, (size_t)n);
        off += (uint64_t)n;
    }
    free(buf);
    *out = dtb_hash64_digest(&hs);
    return err;
}

static unsigned bits_for(unsigned max) { return max < 2 ? 1 : max < 4 ? 2 : max < 16 ? 4 : 8; }

/* The fewest bits (1, 2, 4 or 8) that hold every stored value; don't-care values are filled from
 * cared-for ones, so they do not count. Two passes: the largest of all values, a loop without a
 * branch, bounds the answer; then the cared-for values chunk by chunk only until one needs that
 * width (the first chunk of a DTW table, the first quiet loss of a WLD one). The branchy scan of
 * every position was 9% of a table's write time. The answer does not depend on the threads:
 * chunks are skipped only once some chunk has reached the bound. */
static unsigned auto_bits(const dtb_table_write_options *o, const uint8_t *values, uint64_t count,
                          const dtb_table_dontcare *dc)
{
    const uint8_t *map = o->value_map;
    unsigned all = 0;
#ifdef _OPENMP
    const int threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) reduction(max : all) num_threads(threads)
#endif
    for (uint64_t i = 0; i < count; i++) {
        const unsigned x = map ? map[values[i]] : values[i];
        all = x > all ? x : all;
    }
    const unsigned bound = bits_for(all);
    if (bound == 1 || o->fill == DTB_FILL_NONE) /* nothing narrower, or nothing filled */
        return bound;
    enum { CHUNK = 1 << 16 };
    const uint64_t chunks = (count + CHUNK - 1) / CHUNK;
    unsigned max = 0;
    bool reached = false;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) reduction(max : max) num_threads(threads)
#endif
    for (uint64_t c = 0; c < chunks; c++) {
        bool done;
#ifdef _OPENMP
#pragma omp atomic read
#endif
        done = reached;
        if (done)
            continue;
        const uint64_t end = count - c * CHUNK < CHUNK ? count : (c + 1) * CHUNK;
        unsigned m = 0;
        for (uint64_t i = c * CHUNK; i < end; i++) {
            const unsigned x = map ? map[values[i]] : values[i];
            if (x > m && !is_dontcare(dc, values, i))
                m = x;
        }
        max = m > max ? m : max;
        if (bits_for(m) == bound) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            reached = true;
        }
    }
    return reached ? bound : bits_for(max);
}

/* C(n, k), or UINT64_MAX when it does not fit (only compared against block sizes). */
static uint64_t binom_sat(int n, int k)
{
    if (k < 0 || k > n)
        return 0;
    uint64_t r = 1;
    for (int i = 1; i <= k; i++) {
        if (r > UINT64_MAX / (uint64_t)(n - k + i))
            return UINT64_MAX;
        r = r * (uint64_t)(n - k + i) / (uint64_t)i;
    }
    return r;
}

/* The tile widths worth trying: index order (1), then, for DTB_TILE_AUTO, the strides of the
 * index's king ranks (core/index.h, index version 1: index = men block x K + white kings rank x
 * NB + black kings rank, so NB = black king placements and K = all king placements per men
 * placement): tiling by NB puts positions with the same black kings side by side, tiling by K
 * those with the same kings. A wrong guess costs only compression, never correctness. */
static int tile_candidates(const dtb_table_write_options *o, uint32_t out[3])
{
    out[0] = DTB_TILE_NONE;
    if (o->tile_columns >= 2) {
        out[0] = o->tile_columns;
        return 1;
    }
    dtb_material m;
    dtb_error err;
    const dtb_variant *v = dtb_variant_find(o->variant);
    if (o->tile_columns != DTB_TILE_AUTO || !v || dtb_material_parse(o->material, &m, &err) != DTB_OK)
        return 1;
    const int free_squares = v->board_size * v->board_size / 2 - m.men[0] - m.men[1];
    const uint64_t nb = binom_sat(free_squares - m.kings[0], m.kings[1]);
    const uint64_t nw = binom_sat(free_squares, m.kings[0]);
    const uint64_t k = nw && nb > UINT64_MAX / nw ? UINT64_MAX : nw * nb;
    int n = 1;
    const uint64_t strides[2] = {nb, k};
    for (int i = 0; i < 2; i++)
        if (strides[i] >= 2 && strides[i] <= o->block_positions / 2 && strides[i] != out[n - 1])
            out[n++] = (uint32_t)strides[i];
    return n;
}

/* Chooses o->tile_columns among tile_candidates by compressing a sample of evenly spaced blocks
 * with each (about 5% of a large table's compression time per candidate); the smallest sum
 * wins, ties going to the earlier candidate. Depends only on the data, not on threads. */
static bool choose_tiling(dtb_table_write_options *o, const uint8_t *values, uint64_t count,
                          uint64_t blocks, const dtb_table_dontcare *dc, const worker *workers,
                          int nthreads)
{
    uint32_t cand[3];
    const int ncand = tile_candidates(o, cand);
    o->tile_columns = cand[0];
    if (ncand == 1)
        return true;
    const uint64_t samples = blocks < 48 ? blocks : 48;
    const size_t cap = ZSTD_compressBound((size_t)dtb_tf_packed_len(o->block_positions, o->value_bits));
    uint64_t best = UINT64_MAX;
    bool ok = true;
    for (int c = 0; c < ncand; c++) {
        dtb_table_write_options t = *o;
        t.tile_columns = cand[c];
        uint64_t total = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads) reduction(+ : total)
#endif
        {
#ifdef _OPENMP
            const worker *w = &workers[omp_get_thread_num()];
#else
            const worker *w = &workers[0];
#endif
            uint8_t *frame = malloc(cap);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
            for (uint64_t k = 0; k < samples; k++) {
                const uint64_t b = k * blocks / samples, start = b * t.block_positions;
                const size_t len = (size_t)(count - start < t.block_positions ? count - start
                                                                             : t.block_positions);
                uint64_t dontcare, wide_at;
                size_t plen;
                const uint8_t *src =
                    frame ? prepare_block(&t, values, start, len, dc, w, &dontcare, &plen, &wide_at)
                          : NULL;
                const size_t r = src ? ZSTD_compress2(w->cctx, frame, cap, src, plen) : 0;
                if (!src || ZSTD_isError(r)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                    ok = false;
                } else {
                    total += r;
                }
            }
            free(frame);
        }
        if (!ok)
            return false; /* the full pass reports the reason */
        if (total < best) {
            best = total;
            o->tile_columns = cand[c];
        }
    }
    return true;
}

dtb_status dtb_table_write(const char *path, const dtb_table_write_options *opt_in,
                           const uint8_t *values, uint64_t count, const dtb_table_dontcare *dc_in,
                           dtb_table_write_stats *stats, dtb_error *e)
{
    dtb_status s = check_options(path, opt_in, count, e);
    if (s != DTB_OK)
        return s;
    const dtb_table_dontcare none = {.marker = -1};
    const dtb_table_dontcare *dc = dc_in ? dc_in : &none;
    if (dc->marker > 255)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "don't-care marker %d is not a byte", dc->marker);
    dtb_table_write_options o = *opt_in;
    const dtb_table_write_options *opt = &o;
    unsigned char *longs = NULL;
    size_t long_size = 0;
    if (o.long_count) {
        if (o.metric != DTB_METRIC_DTW || !o.long_index || !o.long_dtw)
            return dtb_tf_file_error(e, DTB_E_INVALID, path, "a long list needs a DTW table and its entries");
        for (uint64_t i = 0; i < o.long_count; i++)
            if (o.long_index[i] >= count || (i && o.long_index[i] <= o.long_index[i - 1]) ||
                !dtb_value_is_escape(values[o.long_index[i]]) || o.long_dtw[i] == 0 ||
                o.long_dtw[i] > DTB_MAX_DTW)
                return dtb_tf_file_error(e, DTB_E_INVALID, path, "bad long list entry %llu",
                                         (unsigned long long)i);
        o.value_encoding = DTB_ENCODING_DTW_LONG;
        if (!(long_size = compress_long_list(&o, &longs)))
            return dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot compress the long list");
    }
    if (!o.value_bits)
        o.value_bits = auto_bits(&o, values, count, dc);
    const uint64_t bp = opt->block_positions;
    const uint64_t blocks = (count - 1) / bp + 1;
    const size_t cap = ZSTD_compressBound((size_t)dtb_tf_packed_len(bp, opt->value_bits));
#ifdef _OPENMP
    int nthreads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
#else
    int nthreads = 1;
#endif
    if ((uint64_t)nthreads > blocks)
        nthreads = (int)blocks;
    /* Blocks per batch: enough to keep every thread busy, at most ~256 MiB of frame buffers. */
    uint64_t batch = ((uint64_t)256 << 20) / cap;
    if (batch > 1024)
        batch = 1024;
    if (batch < (uint64_t)nthreads)
        batch = (uint64_t)nthreads;
    if (batch > blocks)
        batch = blocks;

    void *dict = opt->dict_bytes ? malloc(opt->dict_bytes) : NULL;
    slot *slots = calloc((size_t)batch, sizeof *slots);
    worker *workers = calloc((size_t)nthreads, sizeof *workers);
    unsigned char *meta = NULL;
    ZSTD_CDict *cdict = NULL;
    ZSTD_DDict *ddict = NULL;
    dtb_atomic_file af = {.fd = -1};
    if ((opt->dict_bytes && !dict) || !slots || !workers) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
        goto done;
    }

    for (int t = 0; t < nthreads; t++)
        if (!worker_init(&workers[t], opt)) {
            s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot set up zstd compression");
            goto done;
        }

    if (!choose_tiling(&o, values, count, blocks, dc, workers, nthreads))
        o.tile_columns = DTB_TILE_NONE;
    size_t dict_size = dict ? train_dict(opt, values, blocks, dc, &workers[0], dict) : 0;
    if (dict_size) {
        cdict = ZSTD_createCDict(dict, dict_size, opt->zstd_level);
        ddict = ZSTD_createDDict(dict, dict_size);
        if (!cdict || !ddict) {
            s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot load the trained dictionary");
            goto done;
        }
        for (int t = 0; t < nthreads; t++)
            if (ZSTD_isError(ZSTD_CCtx_refCDict(workers[t].cctx, cdict))) {
                s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot load the trained dictionary");
                goto done;
            }
    }
    const uint64_t data_offset = DTB_TF_HEADER_SIZE + blocks * DTB_TF_ENTRY_SIZE + dict_size + long_size;
    meta = malloc((size_t)data_offset);
    if (!meta) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory for the block table");
        goto done;
    }
    for (uint64_t k = 0; k < batch; k++)
        if (!(slots[k].frame = malloc(cap))) {
            s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory for frame buffers");
            goto done;
        }
    if ((s = dtb_atomic_begin(&af, path, "tmp", e)) != DTB_OK)
        goto done;
    const int fd = af.fd;
    const char *const tmp = af.tmp;

    uint64_t off = data_offset, dontcare = 0;
    for (uint64_t first = 0; first < blocks; first += batch) {
        const int64_t n = (int64_t)(blocks - first < batch ? blocks - first : batch);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(n < nthreads ? (int)n : nthreads)
#endif
        for (int64_t k = 0; k < n; k++) {
#ifdef _OPENMP
            const worker *w = &workers[omp_get_thread_num()];
#else
            const worker *w = &workers[0];
#endif
            compress_block(w, opt, ddict, values, count, dc, first + (uint64_t)k, &slots[k], cap);
        }
        for (int64_t k = 0; k < n; k++) {
            const uint64_t b = first + (uint64_t)k;
            const slot *sl = &slots[k];
            if (sl->too_wide) {
                s = dtb_tf_file_error(e, DTB_E_INVALID, path,
                                      "a value at position %llu does not fit %u bits",
                                      (unsigned long long)sl->wide_at,
                                      opt->value_bits);
                goto done;
            }
            if (sl->failure) {
                s = dtb_tf_file_error(e, DTB_E_IO, path, "zstd failed on block %llu: %s",
                         (unsigned long long)b, sl->failure);
                goto done;
            }
            if (sl->size > UINT32_MAX) {
                s = dtb_tf_file_error(e, DTB_E_INVALID, path, "block %llu compresses to over 4 GiB",
                         (unsigned long long)b);
                goto done;
            }
            unsigned char *ent = meta + DTB_TF_HEADER_SIZE + b * DTB_TF_ENTRY_SIZE;
            dtb_tf_put32(ent, (uint32_t)sl->size);
            dtb_tf_put32(ent + 4, (uint32_t)dtb_hash64(sl->frame, sl->size, b));
            const int err = write_full(fd, sl->frame, sl->size, off);
            if (err) {
                s = dtb_sys_error(e, err, tmp, "cannot write");
                goto done;
            }
            off += sl->size;
            dontcare += sl->dontcare;
        }
    }
    const uint64_t file_size = off + DTB_TF_TRAILER_SIZE;
    build_meta(meta, opt, count, blocks, dontcare, dict, dict_size, longs, long_size, file_size);
    int err = write_full(fd, meta, (size_t)data_offset, 0);
    if (err) {
        s = dtb_sys_error(e, err, tmp, "cannot write");
        goto done;
    }
    uint64_t file_hash;
    if ((err = hash_back(fd, off, &file_hash)) != 0) {
        s = dtb_sys_error(e, err, tmp, "cannot read back");
        goto done;
    }
    unsigned char trailer[DTB_TF_TRAILER_SIZE];
    dtb_tf_put64(trailer, file_hash);
    memcpy(trailer + 8, DTB_TF_END_MAGIC, 8);
    if ((err = write_full(fd, trailer, sizeof trailer, off)) != 0) {
        s = dtb_sys_error(e, err, tmp, "cannot write");
        goto done;
    }
    if ((s = dtb_atomic_commit(&af, e)) != DTB_OK)
        goto done;
    if (stats)
        *stats = (dtb_table_write_stats){
            .file_size = file_size,
            .data_size = off - data_offset,
            .dict_size = dict_size,
            .blocks = blocks,
            .dontcare_count = dontcare,
            .tile_columns = opt->tile_columns >= 2 ? opt->tile_columns : 0,
            .file_hash = file_hash,
        };
done:
    dtb_atomic_abort(&af); /* nothing left to do after a commit */
    if (workers)
        for (int t = 0; t < nthreads; t++)
            worker_free(&workers[t]);
    if (slots)
        for (uint64_t k = 0; k < batch; k++)
            free(slots[k].frame);
    free(workers);
    free(slots);
    free(meta);
    free(dict);
    free(longs);
    ZSTD_freeCDict(cdict);
    ZSTD_freeDDict(ddict);
    return s;
}
