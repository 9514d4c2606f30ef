/* The compressed finished levels of a pair solved in slices (slicestore.h). A block's record is
 * its K value bytes and then its K capture bits (a byte per 8 positions); a level's blocks are
 * stored in block order, grouped into chunks of about CHUNK_RAW bytes, each one zstd frame in
 * the scratch file. A record larger than a chunk is cut into pieces of CHUNK_RAW bytes, one
 * chunk each, with consecutive ids (blocks of 3e9 positions in the one-man pairs of 8 pieces:
 * whole, a reader would decode 3.4 GB to read 64 KiB, and hold 32 of them). A directory says,
 * for every block of each table, its (first) chunk and its offset there; the writer's reads
 * then cost a decoded chunk per thread and cache slot. */
#define _GNU_SOURCE /* pread */
#include "slicestore.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "atomicfile.h"
#include "workfile.h"

enum {
    CHUNK_RAW = 1 << 20, /* raw bytes a chunk collects before it is compressed */
    BATCH = 32,          /* chunks compressed in parallel before they are written */
    ZSTD_LEVEL = 1,      /* scratch: speed over size (the tables are compressed for keeps) */
    CACHE = 32,          /* decoded chunks a reader keeps: the writer reads in index order,
                            where the blocks of every level interleave, so each level's chunk
                            in use must stay decoded (a cache smaller than the levels thrashes) */
};
#define NO_CHUNK UINT32_MAX

typedef struct place {
    uint32_t chunk, offset; /* NO_CHUNK: not stored yet */
} place;

typedef struct chunk {
    uint64_t at;          /* offset in the scratch file */
    uint32_t size, raw;   /* compressed and raw bytes */
} chunk;

struct dtb_slicestore {
    const dtb_solved_table *t[2];
    uint8_t *levels[2];
    int n;
    uint64_t K, nblocks[2], record; /* positions a block, blocks a table, bytes a record */
    uint64_t chunk_raw;             /* CHUNK_RAW (tests: DTB_SLICESTORE_CHUNK, smaller) */
    bool win_distances;             /* false: wins stored as a win in 1 */
    place *where[2];
    chunk *chunks;
    uint64_t nchunks, cap, end;
    int fd;
};

dtb_status dtb_slicestore_create(const char *dir, const dtb_solved_table *const *t, int n,
                                 bool win_distances, dtb_slicestore **out, dtb_error *e)
{
    *out = NULL;
    dtb_slicestore *st = calloc(1, sizeof *st);
    if (!st)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    *st = (dtb_slicestore){.t = {t[0], n > 1 ? t[1] : t[0]}, .n = n, .fd = -1,
                           .win_distances = win_distances,
                           .K = dtb_index_block_size(t[0]->index)};
    st->record = st->K + (st->K + 7) / 8;
    st->chunk_raw = CHUNK_RAW;
    const char *small = getenv("DTB_SLICESTORE_CHUNK"); /* tests: records cut into pieces */
    if (small && atoi(small) >= 16 && atoi(small) < CHUNK_RAW)
        st->chunk_raw = (uint64_t)atoi(small);
    for (int k = 0; k < n; k++) {
        st->nblocks[k] = dtb_index_blocks(t[k]->index);
        st->where[k] = malloc((st->nblocks[k] ? st->nblocks[k] : 1) * sizeof *st->where[k]);
        st->levels[k] = calloc(st->nblocks[k] ? st->nblocks[k] : 1, 1);
        if (!st->where[k] || !st->levels[k]) {
            dtb_slicestore_free(st);
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory for the slices' directory");
        }
        for (uint64_t b = 0; b < st->nblocks[k]; b++)
            st->where[k][b].chunk = NO_CHUNK;
    }
    dtb_status rc;
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&t[0]->material, name, sizeof name);
    if ((st->fd = dtb_work_scratch(dir, name, &rc, e)) < 0) {
        dtb_slicestore_free(st);
        return rc;
    }
    *out = st;
    return DTB_OK;
}

void dtb_slicestore_free(dtb_slicestore *st)
{
    if (!st)
        return;
    if (st->fd >= 0)
        close(st->fd);
    free(st->where[0]);
    free(st->where[1]);
    free(st->levels[0]);
    free(st->levels[1]);
    free(st->chunks);
    free(st);
}

uint8_t *dtb_slicestore_levels(dtb_slicestore *st, int k) { return st->levels[k]; }

uint64_t dtb_slicestore_bytes(const dtb_slicestore *st) { return st->end; }

/* One chunk being made: blocks list[first..last) of a level, or (a record cut into pieces)
 * bytes x0..x0+len-1 of list[first]'s record; its frame. */
typedef struct pending {
    uint64_t first, last;
    uint64_t x0, len; /* len 0: whole records */
    void *frame;
    size_t size, raw;
    dtb_status status;   /* DTB_OK, or why compressing it failed (failure) */
    const char *failure;
} pending;

/* Bytes x0..x0+len-1 of the record of block blk of t into out. A capture position's value is
 * don't-care in every table written from the store, so it is stored as the value before it in
 * its block (runs compress), whichever piece holds it. */
static void record_part(const dtb_slicestore *st, const dtb_solved_table *t, uint64_t blk,
                        uint64_t x0, uint64_t len, uint8_t *out)
{
    const uint64_t K = st->K, base = blk * K, x1 = x0 + len;
#define CAP(i) ((unsigned)(t->captures[(base + (i)) / 64] >> ((base + (i)) % 64) & 1))
    uint8_t prev = 0;
    for (uint64_t i = x0 < K ? x0 : 0; i-- > 0;) /* the value before the piece's first */
        if (!CAP(i)) {
            prev = st->win_distances || !dtb_value_is_win(t->values[base + i])
                       ? t->values[base + i] : dtb_value_win(1);
            break;
        }
    for (uint64_t i = x0; i < x1 && i < K; i++) {
        dtb_value v = t->values[base + i];
        if (!st->win_distances && dtb_value_is_win(v))
            v = dtb_value_win(1);
        out[i - x0] = prev = CAP(i) ? prev : v;
    }
    for (uint64_t x = x0 > K ? x0 : K; x < x1; x++) { /* capture bits, a byte 8 positions */
        uint8_t bits = 0;
        for (uint64_t i = (x - K) * 8; i < (x - K) * 8 + 8 && i < K; i++)
            bits |= (uint8_t)(CAP(i) << (i % 8));
        out[x - x0] = bits;
    }
#undef CAP
}

/* Compresses the chunks p[0..np) of table k's blocks list[...] and appends them. */
static dtb_status put_chunks(dtb_slicestore *st, int k, const uint64_t *list, pending *p, int np,
                             dtb_error *e)
{
    const dtb_solved_table *t = st->t[k];
#pragma omp parallel
    {
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        uint8_t *raw = NULL;
        size_t raw_cap = 0;
#pragma omp for schedule(dynamic, 1)
        for (int c = 0; c < np; c++) {
            const size_t len = (size_t)(p[c].len ? p[c].len : (p[c].last - p[c].first) * st->record);
            if (len > raw_cap) {
                free(raw);
                raw_cap = len;
                raw = malloc(raw_cap);
            }
            const size_t bound = ZSTD_compressBound(len);
            p[c].frame = malloc(bound);
            if (!cctx || !raw || !p[c].frame) {
                p[c].status = DTB_E_NOMEM;
                p[c].failure = "out of memory";
                continue;
            }
            if (p[c].len)
                record_part(st, t, list[p[c].first], p[c].x0, p[c].len, raw);
            else
                for (uint64_t i = p[c].first; i < p[c].last; i++)
                    record_part(st, t, list[i], 0, st->record, raw + (i - p[c].first) * st->record);
            const size_t r = ZSTD_compressCCtx(cctx, p[c].frame, bound, raw, len, ZSTD_LEVEL);
            if (ZSTD_isError(r)) {
                p[c].status = DTB_E_IO;
                p[c].failure = ZSTD_getErrorName(r);
            }
            p[c].size = r;
            p[c].raw = len;
        }
        free(raw);
        ZSTD_freeCCtx(cctx);
    }
    dtb_status rc = DTB_OK;
    for (int c = 0; c < np; c++) {
        if (rc == DTB_OK && p[c].status != DTB_OK)
            rc = dtb_error_set(e, p[c].status, "cannot compress a slice: %s", p[c].failure);
        if (rc == DTB_OK && st->nchunks == st->cap) {
            const uint64_t cap = st->cap ? 2 * st->cap : 1024;
            chunk *grown = realloc(st->chunks, cap * sizeof *grown);
            if (!grown)
                rc = dtb_error_set(e, DTB_E_NOMEM, "out of memory for the slices' chunks");
            else
                st->chunks = grown, st->cap = cap;
        }
        if (rc == DTB_OK && st->nchunks >= NO_CHUNK)
            rc = dtb_error_set(e, DTB_E_RANGE, "too many slice chunks");
        int err;
        if (rc == DTB_OK && (err = dtb_write_all(st->fd, p[c].frame, p[c].size, st->end)) != 0)
            rc = dtb_sys_error(e, err, "the slices' scratch file", "cannot write");
        if (rc == DTB_OK) {
            const uint32_t id = (uint32_t)st->nchunks++;
            st->chunks[id] = (chunk){st->end, (uint32_t)p[c].size, (uint32_t)p[c].raw};
            st->end += p[c].size;
            for (uint64_t i = p[c].first; i < p[c].last && p[c].x0 == 0; i++)
                st->where[k][list[i]] = (place){id, (uint32_t)((i - p[c].first) * st->record)};
        }
        free(p[c].frame);
    }
    return rc;
}

dtb_status dtb_slicestore_put_blocks(dtb_slicestore *st, int k, const uint64_t *list,
                                     uint64_t count, dtb_error *e)
{
    /* Chunks of whole records, at least a chunk's bytes each (but the last), or the pieces of
     * records larger than a chunk; a batch at a time. */
    const uint64_t C = st->chunk_raw, per = st->record >= C ? 1 : C / st->record;
    const bool cut = st->record > C;
    pending p[BATCH];
    dtb_status rc = DTB_OK;
    for (uint64_t i = 0, x = 0; i < count && rc == DTB_OK;) {
        int np = 0;
        for (; np < BATCH && i < count; np++) {
            if (cut) {
                const uint64_t len = st->record - x < C ? st->record - x : C;
                p[np] = (pending){.first = i, .last = i + 1, .x0 = x, .len = len};
                x += len;
                if (x == st->record)
                    i++, x = 0;
            } else {
                p[np] = (pending){.first = i, .last = count - i < per ? count : i + per};
                i += per;
            }
        }
        rc = put_chunks(st, k, list, p, np, e);
    }
    return rc;
}

dtb_status dtb_slicestore_put(dtb_slicestore *st, int a, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    for (int k = 0; k < st->n && rc == DTB_OK; k++) {
        const uint8_t *lv = st->levels[k];
        uint64_t count = 0;
        for (uint64_t b = 0; b < st->nblocks[k]; b++)
            count += lv[b] == a;
        uint64_t *list = malloc((count ? count : 1) * sizeof *list);
        if (!list)
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory for a slice's blocks");
        count = 0;
        for (uint64_t b = 0; b < st->nblocks[k]; b++)
            if (lv[b] == a)
                list[count++] = b;
        rc = dtb_slicestore_put_blocks(st, k, list, count, e);
        free(list);
    }
    return rc;
}

/* A reader's decoded chunks, direct-mapped by chunk id. */
typedef struct reader {
    ZSTD_DCtx *dctx;
    uint32_t id[CACHE];
    uint8_t *raw[CACHE];
    size_t raw_cap[CACHE];
    uint8_t *frame;
    size_t frame_cap;
} reader;

uint64_t dtb_slicestore_reader_bytes(uint64_t block_size, uint64_t positions)
{
    (void)block_size; /* records larger than a chunk are cut into chunks */
    const uint64_t all = positions + positions / 8, cache = (uint64_t)CACHE * CHUNK_RAW;
    return cache < all + CHUNK_RAW ? cache : all + CHUNK_RAW; /* a small table: all of it */
}

void dtb_slicestore_state_free(void *state)
{
    reader *r = state;
    if (!r)
        return;
    for (int i = 0; i < CACHE; i++)
        free(r->raw[i]);
    free(r->frame);
    ZSTD_freeDCtx(r->dctx);
    free(r);
}

/* Chunk id decoded in r's cache; NULL with *why on failure. */
static const uint8_t *decoded(const dtb_slicestore *st, reader *r, uint32_t id, const char **why)
{
    const int slot = (int)(id % CACHE);
    if (r->id[slot] == id && r->raw[slot])
        return r->raw[slot];
    const chunk *c = &st->chunks[id];
    if (c->size > r->frame_cap) {
        free(r->frame);
        r->frame_cap = c->size;
        if (!(r->frame = malloc(r->frame_cap)))
            return r->frame_cap = 0, *why = "out of memory", NULL;
    }
    if (c->raw > r->raw_cap[slot]) {
        free(r->raw[slot]);
        r->raw_cap[slot] = c->raw;
        if (!(r->raw[slot] = malloc(c->raw)))
            return r->raw_cap[slot] = 0, *why = "out of memory", NULL;
    }
    r->id[slot] = NO_CHUNK;
    for (size_t got = 0; got < c->size;) {
        const ssize_t n = pread(st->fd, r->frame + got, c->size - got, (off_t)(c->at + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return *why = "cannot read the slices' scratch file", NULL;
        got += (size_t)n;
    }
    const size_t d = ZSTD_decompressDCtx(r->dctx, r->raw[slot], c->raw, r->frame, c->size);
    if (ZSTD_isError(d) || d != c->raw)
        return *why = "a slice does not decompress to its size", NULL;
    r->id[slot] = id;
    return r->raw[slot];
}

/* Bytes x..x+n-1 of the record of table k's block blk into out, across the pieces of a record
 * cut into chunks. NULL or what failed. */
static const char *record_bytes(const dtb_slicestore *st, reader *r, int k, uint64_t blk,
                                uint64_t x, uint64_t n, uint8_t *out)
{
    const place w = st->where[k][blk];
    const bool cut = st->record > st->chunk_raw;
    while (n > 0) {
        const uint32_t id = cut ? w.chunk + (uint32_t)(x / st->chunk_raw) : w.chunk;
        const uint64_t off = cut ? x % st->chunk_raw : w.offset + x;
        const char *why = NULL;
        const uint8_t *raw = decoded(st, r, id, &why);
        if (!raw)
            return why;
        const uint64_t take = st->chunks[id].raw - off < n ? st->chunks[id].raw - off : n;
        memcpy(out, raw + off, take);
        out += take, x += take, n -= take;
    }
    return NULL;
}

const char *dtb_slicestore_read(const dtb_slicestore *st, int k, void **state, uint64_t start,
                                size_t len, uint8_t *values, uint64_t *captures)
{
    reader *r = *state;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)) || !(r->dctx = ZSTD_createDCtx())) {
            free(r);
            return "out of memory";
        }
        for (int i = 0; i < CACHE; i++)
            r->id[i] = NO_CHUNK;
        *state = r;
    }
    memset(captures, 0, (len + 63) / 64 * sizeof *captures);
    const uint64_t K = st->K;
    for (uint64_t at = 0; at < len;) {
        const uint64_t pos = start + at, blk = pos / K, j = pos % K;
        const uint64_t n = K - j < len - at ? K - j : len - at;
        if (blk >= st->nblocks[k] || st->where[k][blk].chunk == NO_CHUNK)
            return "a block was read from the slices before it was stored";
        const char *why = record_bytes(st, r, k, blk, j, n, values + at);
        /* the capture bits of positions j..j+n-1, a few thousand bytes at a time */
        for (uint64_t i = 0; i < n && !why;) {
            uint8_t bits[4096];
            const uint64_t x = j + i, b0 = x / 8;
            const uint64_t m = n - i < 8 * (sizeof bits - 1) ? n - i : 8 * (sizeof bits - 1);
            const uint64_t nb = (x + m - 1) / 8 - b0 + 1;
            why = record_bytes(st, r, k, blk, K + b0, nb, bits);
            for (uint64_t q = 0; q < m && !why; q++) {
                const uint64_t xx = x + q, y = at + i + q;
                captures[y / 64] |= (uint64_t)(bits[xx / 8 - b0] >> (xx % 8) & 1) << (y % 64);
            }
            i += m;
        }
        if (why)
            return why;
        at += n;
    }
    return NULL;
}
