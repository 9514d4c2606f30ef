/* Table file writer. Blocks are filled (don't-care positions get a value chosen to compress well)
 * and compressed as independent zstd frames, a batch at a time: the batch's blocks in parallel
 * (each block by one thread with its own context, so the frame bytes do not depend on which
 * thread made them), then written in block order by one thread. Each frame is decompressed again
 * and compared before it is written, so a compressor bug cannot produce a silently wrong table.
 * The header and block table are written last, at the front, and the whole-file checksum is
 * computed by reading the file back from the page cache (the checksum runs over the file in
 * order, and the front is known only at the end). A block's values and don't-care bits are
 * reached through a worker's view of it: pointers into the caller's arrays (dtb_table_write), or
 * the worker's buffers filled by a source (dtb_table_write_source), so the two entry points share
 * every step and write the same bytes. */
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
        ((o->dontcare_kind & DTB_DONTCARE_DERIVED) && !(o->flags & DTB_TABLE_DERIVED)) ||
        ((o->dontcare_kind & DTB_DONTCARE_NOT_LOSSES) && !(o->flags & DTB_TABLE_LOSSES)) ||
        ((o->flags & DTB_TABLE_LOSSES) &&
         (o->metric != DTB_METRIC_DTW || (o->flags & (DTB_TABLE_DERIVED | DTB_TABLE_THREATS)))))
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

/* Where a write's values come from: the caller's arrays (dtb_table_write) or a source read a file
 * block at a time (dtb_table_write_source). Every other function sees the values only through a
 * worker's view of one block (load_block), so both entry points share every step. */
typedef struct input {
    const uint8_t *values;        /* array mode: the caller's values; NULL in source mode */
    const dtb_table_source *src;  /* source mode, or NULL */
    const dtb_table_dontcare *dc; /* array mode: the caller's; source mode: the marker alone (the
                                     bits come with each block) */
    uint64_t count;
    const dtb_table_team *team;   /* or NULL: this process writes every block */
    uint64_t b_lo, b_hi;          /* the blocks this process compresses */
} input;

/* One file block as a worker sees it: pointers into the caller's arrays (array mode: no copy), or
 * the worker's own buffers filled by the source. */
typedef struct view {
    const uint8_t *v;      /* v[i]: the value byte of position start + i */
    const uint64_t *bits;  /* NULL, or position start + i is don't-care when bit (bit0 + i) % 64
                              of bits[(bit0 + i) / 64] is set */
    uint64_t bit0;
    uint64_t start;
    size_t len;
} view;

/* The first failed read of a source (the lowest block among those read), its message copied: a
 * source may keep the text in its state, which its next read overwrites. Once one read failed,
 * no other starts (the write fails anyway). */
typedef struct read_failure {
    int set; /* read and written atomically */
    uint64_t block;
    char msg[128];
} read_failure;

static bool read_failed(read_failure *f)
{
    int set;
#ifdef _OPENMP
#pragma omp atomic read
#endif
    set = f->set;
    return set != 0;
}

static void note_read_failure(read_failure *f, uint64_t b, const char *msg)
{
#ifdef _OPENMP
#pragma omp critical(dtb_tablewrite_read_failure)
#endif
    {
        if (!f->set || b < f->block) {
            f->block = b;
            snprintf(f->msg, sizeof f->msg, "%s", msg);
        }
#ifdef _OPENMP
#pragma omp atomic write
#endif
        f->set = 1;
    }
}

static inline bool is_dontcare(const view *vw, const dtb_table_dontcare *dc, size_t i)
{
    return (vw->bits && (vw->bits[(vw->bit0 + i) / 64] >> ((vw->bit0 + i) % 64) & 1)) ||
           (dc->marker >= 0 && vw->v[i] == dc->marker) ||
           (dc->fn && dc->fn(dc->user, vw->start + i));
}

/* Per-thread compression state. */
typedef struct worker {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    uint8_t *filled, *mask, *tmask, *raw, *packed, *check, *mapped;
    uint8_t *src_values;  /* source mode: the block's values and don't-care bits, and the */
    uint64_t *src_bits;   /* source's state for this thread */
    void *src_state;
} worker;

static size_t block_len(uint64_t count, uint32_t bp, uint64_t b)
{
    const uint64_t left = count - b * bp;
    return (size_t)(left < bp ? left : bp);
}

/* Points *vw at block b (of bp positions): into the caller's arrays, or w's buffers read from the
 * source. False when the read failed (noted in f) or an earlier one did. */
static bool load_block(const input *in, uint32_t bp, uint64_t b, worker *w, read_failure *f,
                       view *vw)
{
    const uint64_t start = b * bp;
    const size_t len = block_len(in->count, bp, b);
    if (!in->src) {
        *vw = (view){.v = in->values + start, .bits = in->dc->bits, .bit0 = start, .start = start,
                     .len = len};
        return true;
    }
    if (read_failed(f))
        return false;
    memset(w->src_bits, 0, (len + 63) / 64 * sizeof *w->src_bits);
    const char *msg =
        in->src->read(in->src->user, &w->src_state, start, len, w->src_values, w->src_bits);
    if (msg) {
        note_read_failure(f, b, msg);
        return false;
    }
    *vw = (view){.v = w->src_values, .bits = w->src_bits, .bit0 = 0, .start = start, .len = len};
    return true;
}

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

/* mask[i] = 1 when position vw->start + i is don't-care, else 0; returns how many are. Without a
 * callback the loops are branch-free (a third to two thirds of the positions are don't-care in no
 * predictable pattern, and branching on them made this the writer's hottest function). */
static uint64_t build_mask(const view *vw, const dtb_table_dontcare *dc, uint8_t *mask)
{
    const size_t len = vw->len;
    const uint64_t *bits = vw->bits, b0 = vw->bit0;
    if (dc->fn) {
        for (size_t i = 0; i < len; i++)
            mask[i] = is_dontcare(vw, dc, i);
    } else {
        if (!bits) {
            memset(mask, 0, len);
        } else {
            size_t i = 0;
            if (b0 % 8 == 0) /* a byte of the bitmap at a time (blocks start at such a multiple) */
                for (; i + 8 <= len; i += 8)
                    memcpy(mask + i, spread8[bits[(b0 + i) / 64] >> ((b0 + i) % 64) & 0xFF], 8);
            for (; i < len; i++)
                mask[i] = (uint8_t)(bits[(b0 + i) / 64] >> ((b0 + i) % 64) & 1);
        }
        if (dc->marker >= 0) {
            const uint8_t *v = vw->v, marker = (uint8_t)dc->marker;
            for (size_t i = 0; i < len; i++)
                mask[i] |= (uint8_t)(v[i] == marker);
        }
    }
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += mask[i];
    return n;
}

/* Copies the block of vw to w->filled in file order (tiled by tile columns when tile >= 2) with
 * don't-care positions filled; returns how many positions were don't-care. The fill loops are
 * branch-free too. Filling happens in file order because runs in file order are what the
 * compressor sees. */
static uint64_t fill_block(const view *vw, const dtb_table_dontcare *dc, dtb_table_fill fill,
                           uint32_t tile, const uint8_t *map, const worker *w)
{
    const uint8_t *v = vw->v;
    const size_t len = vw->len;
    uint8_t *mask = w->mask, *out = w->filled;
    if (map) {
        for (size_t i = 0; i < len; i++)
            w->mapped[i] = map[v[i]];
        v = w->mapped;
    }
    const uint64_t n = build_mask(vw, dc, mask);
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

/* One block of the current batch. */
typedef struct slot {
    uint8_t *frame;
    size_t size;           /* frame size, or 0 on failure */
    uint64_t dontcare;
    const char *failure;   /* set when compression or the round trip failed */
    bool too_wide;         /* a value does not fit value_bits: at position wide_at */
    uint64_t wide_at;
} slot;

/* Fills the block of vw and packs it value_bits per value, from the low bits of each byte up
 * (unused bits zero). Returns the bytes to compress (w->filled or w->packed) and their length in
 * *plen, or NULL when a value does not fit value_bits (its absolute position in *wide_at). */
static const uint8_t *prepare_block(const dtb_table_write_options *o, const view *vw,
                                    const dtb_table_dontcare *dc, const worker *w,
                                    uint64_t *dontcare, size_t *plen, uint64_t *wide_at)
{
    const uint32_t tile = o->tile_columns >= 2 ? o->tile_columns : 0;
    const uint64_t start = vw->start;
    const size_t len = vw->len;
    *dontcare = fill_block(vw, dc, o->fill, tile, o->value_map, w);
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
 * they will be stored; returns its size, 0 when the table is too small, training fails (the file
 * is then written without one) or a source's read fails (noted in f). w provides the scratch
 * buffers (and the source's state). */
static size_t train_dict(const dtb_table_write_options *o, const input *in, uint64_t blocks,
                         worker *w, read_failure *f, void *dict)
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
            view vw;
            const uint8_t *src =
                load_block(in, o->block_positions, b, w, f, &vw)
                    ? prepare_block(o, &vw, in->dc, w, &dontcare, &sizes[k], &wide_at)
                    : NULL;
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

/* Fills and compresses block b into sl, then decompresses the frame and compares (round trip).
 * A failed read of a source leaves sl->size 0 and is noted in f. */
static void compress_block(worker *w, const dtb_table_write_options *o, const ZSTD_DDict *ddict,
                           const input *in, uint64_t b, slot *sl, size_t cap, read_failure *f)
{
    sl->size = 0;
    sl->failure = NULL;
    sl->too_wide = false;
    view vw;
    if (!load_block(in, o->block_positions, b, w, f, &vw))
        return;
    size_t plen;
    const uint8_t *src = prepare_block(o, &vw, in->dc, w, &sl->dontcare, &plen, &sl->wide_at);
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

/* w's contexts and buffers (the source's too with a source); false when out of memory. */
static bool worker_init(worker *w, const dtb_table_write_options *o, const input *in)
{
    const size_t bp = o->block_positions;
    if (in->src) {
        w->src_values = malloc(bp);
        w->src_bits = malloc((bp + 63) / 64 * sizeof *w->src_bits);
        if (!w->src_values || !w->src_bits)
            return false;
    }
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

static void worker_free(worker *w, const input *in)
{
    if (w->src_state && in->src->free_state)
        in->src->free_state(in->src->user, w->src_state);
    free(w->src_values);
    free(w->src_bits);
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

/* v[0..n) summed (or their maxima) over in's team (the team's message on failure); nothing to
 * do without one. */
static dtb_status team_reduce(const input *in, uint64_t *v, int n, bool max, dtb_error *e)
{
    return in->team ? in->team->reduce(in->team->ctx, v, n, max, e) : DTB_OK;
}

static unsigned bits_for(unsigned max) { return max < 2 ? 1 : max < 4 ? 2 : max < 16 ? 4 : 8; }

/* The fewest bits (1, 2, 4 or 8) that hold every stored value: every cared-for value's (don't-care
 * values are filled from cared-for ones, so they do not count), or under DTB_FILL_NONE every
 * value's. Blocks in parallel, each in two steps: the largest of all its values, a loop without a
 * branch, bounds the block's width; only when that bound is above the width found so far are its
 * cared-for values looked at (through the don't-care mask, also without a branch). So a WLD
 * table's blocks are scanned once, and the scan stops altogether once 8 bits is certain (the
 * first blocks of a DTW table). The branchy scan of every position was 9% of a table's write
 * time. The answer does not depend on the threads: a block is skipped only when it cannot widen
 * the answer. With a source, every block is read (until 8 bits); 0 when a read failed (in f). */
static unsigned auto_bits(const dtb_table_write_options *o, const input *in, worker *workers,
                          int nthreads, read_failure *f)
{
    const uint8_t *map = o->value_map;
    unsigned found = 1; /* read and written atomically */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
#endif
    for (uint64_t b = in->b_lo; b < in->b_hi; b++) {
        unsigned now;
#ifdef _OPENMP
#pragma omp atomic read
#endif
        now = found;
        if (now == 8)
            continue;
#ifdef _OPENMP
        worker *w = &workers[omp_get_thread_num()];
#else
        worker *w = &workers[0];
        (void)nthreads;
#endif
        view vw;
        if (!load_block(in, o->block_positions, b, w, f, &vw))
            continue;
        const uint8_t *v = vw.v;
        const size_t len = vw.len;
        unsigned all = 0;
        if (map)
            for (size_t i = 0; i < len; i++)
                all = map[v[i]] > all ? map[v[i]] : all;
        else
            for (size_t i = 0; i < len; i++)
                all = v[i] > all ? v[i] : all;
        unsigned m = bits_for(all);
        if (m > now && o->fill != DTB_FILL_NONE) {
            const uint8_t *mask = w->mask;
            build_mask(&vw, in->dc, w->mask);
            unsigned cared = 0;
            for (size_t i = 0; i < len; i++) {
                const unsigned x = (map ? map[v[i]] : v[i]) & (mask[i] - 1u); /* 0 if don't-care */
                cared = x > cared ? x : cared;
            }
            m = bits_for(cared);
        }
        if (m > now) {
#ifdef _OPENMP
#pragma omp critical(dtb_tablewrite_bits)
#endif
            {
#ifdef _OPENMP
#pragma omp atomic read
#endif
                now = found;
                if (m > now) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                    found = m;
                }
            }
        }
    }
    return read_failed(f) ? 0 : found;
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
 * wins, ties going to the earlier candidate. Depends only on the data, not on threads. Each
 * sample block is loaded once for all candidates. Index order when a sample fails (the full pass
 * then reports why), or a source's read did (in f). */
static dtb_status choose_tiling(dtb_table_write_options *o, const input *in, uint64_t blocks,
                                worker *workers, int nthreads, read_failure *f, dtb_error *e)
{
    uint32_t cand[3];
    const int ncand = tile_candidates(o, cand);
    o->tile_columns = cand[0];
    if (ncand == 1)
        return DTB_OK;
    const uint64_t samples = blocks < 48 ? blocks : 48;
    const size_t cap = ZSTD_compressBound((size_t)dtb_tf_packed_len(o->block_positions, o->value_bits));
    uint64_t total[3] = {0, 0, 0};
    bool ok = true;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads) reduction(+ : total[:3])
#endif
    {
#ifdef _OPENMP
        worker *w = &workers[omp_get_thread_num()];
#else
        worker *w = &workers[0];
        (void)nthreads;
#endif
        uint8_t *frame = malloc(cap);
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (uint64_t k = 0; k < samples; k++) {
            view vw;
            const uint64_t b = k * blocks / samples;
            if (b < in->b_lo || b >= in->b_hi) /* another rank's sample */
                continue;
            bool good = frame && load_block(in, o->block_positions, b, w, f, &vw);
            for (int c = 0; c < ncand && good; c++) {
                dtb_table_write_options t = *o;
                t.tile_columns = cand[c];
                uint64_t dontcare, wide_at;
                size_t plen;
                const uint8_t *src = prepare_block(&t, &vw, in->dc, w, &dontcare, &plen, &wide_at);
                const size_t r = src ? ZSTD_compress2(w->cctx, frame, cap, src, plen) : 0;
                if ((good = src && !ZSTD_isError(r)))
                    total[c] += r;
            }
            if (!good) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                ok = false;
            }
        }
        free(frame);
    }
    uint64_t sums[4] = {total[0], total[1], total[2], !ok}; /* every rank's samples */
    const dtb_status s = team_reduce(in, sums, 4, false, e);
    if (s != DTB_OK || sums[3])
        return s; /* index order; the full pass reports the reason */
    uint64_t best = UINT64_MAX;
    for (int c = 0; c < ncand; c++)
        if (sums[c] < best) {
            best = sums[c];
            o->tile_columns = cand[c];
        }
    return DTB_OK;
}

/* ---- a write shared by a team (dtb_table_write_team) ---------------------------------------- */

/* A team's ranks' starts: each rank's first position, each rank's blocks its own. */
static dtb_status check_team(const char *path, const dtb_table_write_options *o,
                             const dtb_table_team *t, uint64_t count, dtb_error *e)
{
    if (t->ranks < 1 || t->rank < 0 || t->rank >= t->ranks || !t->starts || !t->reduce ||
        (t->ranks > 1 && (!t->send || !t->recv)))
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "a team without its ranks or callbacks");
    if (o->dict_bytes || o->long_count)
        return dtb_tf_file_error(e, DTB_E_INVALID, path,
                                 "a table written by a team takes no dictionary or long list");
    if (t->starts[0] != 0 || t->starts[t->ranks] != count)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "the ranks' ranges do not cover the table");
    for (int r = 1; r < t->ranks; r++)
        if (t->starts[r] < t->starts[r - 1] || t->starts[r] > count ||
            (t->starts[r] < count && t->starts[r] % o->block_positions))
            return dtb_tf_file_error(e, DTB_E_INVALID, path,
                                     "rank %d's range does not start at a file block", r);
    return DTB_OK;
}

/* Rank r's blocks: lo..hi-1 (none when its range is empty). */
static void team_blocks(const dtb_table_team *t, int r, uint64_t bp, uint64_t *lo, uint64_t *hi)
{
    *lo = t->starts[r] / bp;
    *hi = t->starts[r + 1] > t->starts[r] ? (t->starts[r + 1] - 1) / bp + 1 : *lo;
}

/* A rank's frames, in block order, and their block table entries (ENTRY bytes each: the frame's
 * size, its hash, the block's don't-care positions). */
enum { ENTRY = 16 };
/* Frames go to rank 0 in pieces of whole frames, this many bytes at most unless one frame is
 * larger: the receiver cuts them from the entries the same way. */
#define FRAMES_PIECE ((uint64_t)64 << 20)
typedef struct frames {
    uint8_t *bytes, *entries;
    uint64_t len, cap, n, entries_cap;
} frames;

static bool kept_add(frames *f, const uint8_t *frame, size_t size, uint32_t hash,
                     uint64_t dontcare)
{
    if (f->len + size > f->cap) {
        const uint64_t cap = f->cap * 2 > f->len + size ? f->cap * 2 : f->len + size + (1u << 20);
        uint8_t *b = realloc(f->bytes, cap);
        if (!b)
            return false;
        f->bytes = b, f->cap = cap;
    }
    if ((f->n + 1) * ENTRY > f->entries_cap) {
        const uint64_t cap = f->entries_cap ? f->entries_cap * 2 : 64 * ENTRY;
        uint8_t *b = realloc(f->entries, cap);
        if (!b)
            return false;
        f->entries = b, f->entries_cap = cap;
    }
    memcpy(f->bytes + f->len, frame, size);
    f->len += size;
    uint8_t *ent = f->entries + f->n++ * ENTRY;
    dtb_tf_put32(ent, (uint32_t)size);
    dtb_tf_put32(ent + 4, hash);
    dtb_tf_put64(ent + 8, dontcare);
    return true;
}

static void kept_free(frames *f)
{
    free(f->bytes);
    free(f->entries);
}

/* The frames from entry i on that make the next piece: their bytes. */
static uint64_t piece_of(const uint8_t *entries, uint64_t n, uint64_t i, uint64_t *end)
{
    uint64_t bytes = 0;
    for (*end = i; *end < n; ++*end) {
        const uint64_t size = dtb_tf_get32(entries + *end * ENTRY);
        if (*end > i && bytes + size > FRAMES_PIECE)
            break;
        bytes += size;
    }
    return bytes;
}

/* A rank other than 0: its entries, then its frames a piece at a time, to rank 0. */
static dtb_status team_send(const dtb_table_team *t, const frames *f, dtb_error *e)
{
    if (!f->n)
        return DTB_OK;
    dtb_status s = t->send(t->ctx, f->entries, f->n * ENTRY, e);
    uint64_t at = 0;
    for (uint64_t i = 0, end; i < f->n && s == DTB_OK; i = end) {
        const uint64_t bytes = piece_of(f->entries, f->n, i, &end);
        s = t->send(t->ctx, f->bytes + at, bytes, e);
        at += bytes;
    }
    return s;
}

/* Rank 0: rank r's frames after the blocks written so far (at *off), each checked against the
 * hash its rank made, and their entries into the block table in meta. */
static dtb_status team_take(const dtb_table_team *t, int r, const char *path, const char *tmp,
                            int fd, uint64_t bp, uint8_t *meta, uint64_t *off, uint64_t *dontcare,
                            size_t cap, dtb_error *e)
{
    uint64_t lo, hi;
    team_blocks(t, r, bp, &lo, &hi);
    const uint64_t n = hi - lo;
    if (!n)
        return DTB_OK;
    uint8_t *entries = malloc(n * ENTRY), *piece = NULL;
    dtb_status s = entries ? t->recv(t->ctx, r, entries, n * ENTRY, e)
                           : dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
    for (uint64_t i = 0; i < n && s == DTB_OK; i++) {
        const uint64_t size = dtb_tf_get32(entries + i * ENTRY);
        if (size == 0 || size > cap)
            s = dtb_tf_file_error(e, DTB_E_IO, path, "rank %d sent block %llu as %llu bytes", r,
                                  (unsigned long long)(lo + i), (unsigned long long)size);
    }
    if (s == DTB_OK && !(piece = malloc(FRAMES_PIECE > cap ? FRAMES_PIECE : cap)))
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
    for (uint64_t i = 0, end; i < n && s == DTB_OK; i = end) {
        const uint64_t bytes = piece_of(entries, n, i, &end);
        if ((s = t->recv(t->ctx, r, piece, bytes, e)) != DTB_OK)
            break;
        uint64_t at = 0;
        for (uint64_t j = i; j < end; j++) {
            const uint8_t *ent = entries + j * ENTRY;
            const uint32_t size = dtb_tf_get32(ent), hash = dtb_tf_get32(ent + 4);
            if ((uint32_t)dtb_hash64(piece + at, size, lo + j) != hash) {
                s = dtb_tf_file_error(e, DTB_E_IO, path, "block %llu from rank %d is not what "
                                      "it made (hash)", (unsigned long long)(lo + j), r);
                break;
            }
            memcpy(meta + DTB_TF_HEADER_SIZE + (lo + j) * DTB_TF_ENTRY_SIZE, ent, 8);
            *dontcare += dtb_tf_get64(ent + 8);
            at += size;
        }
        const int err = s == DTB_OK ? dtb_write_all(fd, piece, bytes, *off) : 0;
        if (err)
            s = dtb_sys_error(e, err, tmp, "cannot write");
        *off += bytes;
    }
    free(entries);
    free(piece);
    return s;
}

/* The write of both entry points: in says where the values come from. */
static dtb_status write_table(const char *path, const dtb_table_write_options *opt_in,
                              const input *in_arg, dtb_table_write_stats *stats, dtb_error *e)
{
    input inb = *in_arg;
    const input *const in = &inb;
    const dtb_table_team *const team = in->team;
    const uint64_t count = in->count;
    const dtb_table_dontcare *dc = in->dc;
    dtb_status s = check_options(path, opt_in, count, e);
    if (s != DTB_OK)
        return s;
    if (team && (s = check_team(path, opt_in, team, count, e)) != DTB_OK)
        return s;
    if (dc->marker > 255)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "don't-care marker %d is not a byte", dc->marker);
    if (!in->src && !in->values)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "no values");
    if (in->src && !in->src->read)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "a source without a read function");
    if (in->src && opt_in->block_positions % 64)
        return dtb_tf_file_error(e, DTB_E_INVALID, path,
                                 "block size %u is not a multiple of 64 (a source's blocks start "
                                 "at a word of don't-care bits)", opt_in->block_positions);
    dtb_table_write_options o = *opt_in;
    const dtb_table_write_options *opt = &o;
    if (o.long_count) {
        if (o.metric != DTB_METRIC_DTW || !o.long_index || !o.long_dtw)
            return dtb_tf_file_error(e, DTB_E_INVALID, path, "a long list needs a DTW table and its entries");
        for (uint64_t i = 0; i < o.long_count; i++) /* a source's values are not read back */
            if (o.long_index[i] >= count || (i && o.long_index[i] <= o.long_index[i - 1]) ||
                (in->values && !dtb_value_is_escape(in->values[o.long_index[i]])) ||
                o.long_dtw[i] == 0 || o.long_dtw[i] > DTB_MAX_DTW)
                return dtb_tf_file_error(e, DTB_E_INVALID, path, "bad long list entry %llu",
                                         (unsigned long long)i);
        o.value_encoding = DTB_ENCODING_DTW_LONG;
    }
    const uint64_t bp = opt->block_positions;
    const uint64_t blocks = (count - 1) / bp + 1;
    inb.b_lo = 0, inb.b_hi = blocks;
    if (team)
        team_blocks(team, team->rank, bp, &inb.b_lo, &inb.b_hi);
    const bool lead = !team || team->rank == 0; /* writes the file */
#ifdef _OPENMP
    int nthreads = opt->threads > 0 ? opt->threads : omp_get_max_threads();
#else
    int nthreads = 1;
#endif
    if ((uint64_t)nthreads > blocks)
        nthreads = (int)blocks;

    unsigned char *longs = NULL;
    size_t long_size = 0;
    void *dict = NULL;
    slot *slots = NULL;
    uint64_t batch = 0;
    unsigned char *meta = NULL;
    ZSTD_CDict *cdict = NULL;
    ZSTD_DDict *ddict = NULL;
    dtb_atomic_file af = {.fd = -1};
    read_failure rf = {0};
    frames kept = {0}; /* a rank other than 0: its frames until they go to rank 0 */
    worker *workers = calloc((size_t)nthreads, sizeof *workers);
    if (!workers) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
        goto done;
    }
    for (int t = 0; t < nthreads; t++)
        if (!worker_init(&workers[t], opt, in)) {
            s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot set up zstd compression");
            goto done;
        }
    if (o.long_count && !(long_size = compress_long_list(&o, &longs))) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "cannot compress the long list");
        goto done;
    }
    if (!o.value_bits) {
        uint64_t agreed[2] = {auto_bits(&o, in, workers, nthreads, &rf), (uint64_t)rf.set};
        if ((s = team_reduce(in, agreed, 2, true, e)) != DTB_OK)
            goto done;
        if (rf.set)
            goto read_failed;
        if (agreed[1]) {
            s = dtb_tf_file_error(e, DTB_E_IO, path, "another rank could not read its blocks");
            goto done;
        }
        o.value_bits = (unsigned)agreed[0];
    }
    const size_t cap = ZSTD_compressBound((size_t)dtb_tf_packed_len(bp, opt->value_bits));
    /* Blocks per batch: enough to keep every thread busy, at most ~256 MiB of frame buffers. */
    batch = ((uint64_t)256 << 20) / cap;
    if (batch > 1024)
        batch = 1024;
    if (batch < (uint64_t)nthreads)
        batch = (uint64_t)nthreads;
    if (batch > blocks)
        batch = blocks;
    dict = opt->dict_bytes ? malloc(opt->dict_bytes) : NULL;
    slots = calloc((size_t)batch, sizeof *slots);
    if ((opt->dict_bytes && !dict) || !slots) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
        goto done;
    }

    if ((s = choose_tiling(&o, in, blocks, workers, nthreads, &rf, e)) != DTB_OK)
        goto done;
    size_t dict_size = dict ? train_dict(opt, in, blocks, &workers[0], &rf, dict) : 0;
    if (rf.set)
        goto read_failed;
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
    meta = lead ? malloc((size_t)data_offset) : NULL;
    if (lead && !meta) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory for the block table");
        goto done;
    }
    for (uint64_t k = 0; k < batch; k++)
        if (!(slots[k].frame = malloc(cap))) {
            s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory for frame buffers");
            goto done;
        }
    if (lead && (s = dtb_atomic_begin(&af, path, "tmp", e)) != DTB_OK)
        goto done;
    const int fd = af.fd;
    const char *const tmp = af.tmp;

    uint64_t off = data_offset, dontcare = 0;
    for (uint64_t first = in->b_lo; first < in->b_hi; first += batch) {
        const int64_t n = (int64_t)(in->b_hi - first < batch ? in->b_hi - first : batch);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(n < nthreads ? (int)n : nthreads)
#endif
        for (int64_t k = 0; k < n; k++) {
#ifdef _OPENMP
            worker *w = &workers[omp_get_thread_num()];
#else
            worker *w = &workers[0];
#endif
            compress_block(w, opt, ddict, in, first + (uint64_t)k, &slots[k], cap, &rf);
        }
        if (rf.set)
            goto read_failed;
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
            const uint32_t hash = (uint32_t)dtb_hash64(sl->frame, sl->size, b);
            dontcare += sl->dontcare;
            if (!lead) { /* kept for rank 0 */
                if (!kept_add(&kept, sl->frame, sl->size, hash, sl->dontcare)) {
                    s = dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory for frames");
                    goto done;
                }
                continue;
            }
            unsigned char *ent = meta + DTB_TF_HEADER_SIZE + b * DTB_TF_ENTRY_SIZE;
            dtb_tf_put32(ent, (uint32_t)sl->size);
            dtb_tf_put32(ent + 4, hash);
            const int err = dtb_write_all(fd, sl->frame, sl->size, off);
            if (err) {
                s = dtb_sys_error(e, err, tmp, "cannot write");
                goto done;
            }
            off += sl->size;
        }
    }
    if (!lead) { /* the frames to rank 0, which writes them */
        s = team_send(team, &kept, e);
        if (s == DTB_OK && stats)
            *stats = (dtb_table_write_stats){.blocks = in->b_hi - in->b_lo,
                                             .dontcare_count = dontcare};
        goto done;
    }
    for (int r = 1; team && r < team->ranks; r++)
        if ((s = team_take(team, r, path, tmp, fd, bp, meta, &off, &dontcare, cap, e)) != DTB_OK)
            goto done;
    const uint64_t file_size = off + DTB_TF_TRAILER_SIZE;
    build_meta(meta, opt, count, blocks, dontcare, dict, dict_size, longs, long_size, file_size);
    int err = dtb_write_all(fd, meta, (size_t)data_offset, 0);
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
    if ((err = dtb_write_all(fd, trailer, sizeof trailer, off)) != 0) {
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
    goto done;
read_failed:
    s = dtb_tf_file_error(e, DTB_E_IO, path, "cannot read block %llu: %s",
                          (unsigned long long)rf.block, rf.msg);
done:
    dtb_atomic_abort(&af); /* nothing left to do after a commit */
    kept_free(&kept);
    if (workers)
        for (int t = 0; t < nthreads; t++)
            worker_free(&workers[t], in);
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

dtb_status dtb_table_write(const char *path, const dtb_table_write_options *opt,
                           const uint8_t *values, uint64_t count, const dtb_table_dontcare *dc,
                           dtb_table_write_stats *stats, dtb_error *e)
{
    const dtb_table_dontcare none = {.marker = -1};
    const input in = {.values = values, .dc = dc ? dc : &none, .count = count};
    return write_table(path, opt, &in, stats, e);
}

dtb_status dtb_table_write_source(const char *path, const dtb_table_write_options *opt,
                                  const dtb_table_source *src, uint64_t count, int marker,
                                  dtb_table_write_stats *stats, dtb_error *e)
{
    if (!src)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "no source");
    const dtb_table_dontcare dc = {.marker = marker};
    const input in = {.src = src, .dc = &dc, .count = count};
    return write_table(path, opt, &in, stats, e);
}

dtb_status dtb_table_write_team(const char *path, const dtb_table_write_options *opt,
                                const dtb_table_source *src, uint64_t count, int marker,
                                const dtb_table_team *team, dtb_table_write_stats *stats,
                                dtb_error *e)
{
    if (!src || !team)
        return dtb_tf_file_error(e, DTB_E_INVALID, path, "no source or no team");
    const dtb_table_dontcare dc = {.marker = marker};
    const input in = {.src = src, .dc = &dc, .count = count, .team = team};
    return write_table(path, opt, &in, stats, e);
}
