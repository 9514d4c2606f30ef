/* The compressed finished levels of a pair solved in slices (slicestore.h). A block's record is
 * its K value bytes and then its K capture bits (a byte per 8 positions); a level's blocks are
 * stored in block order, grouped into chunks of about CHUNK_RAW bytes, each one zstd frame in
 * the scratch file. A record larger than a chunk is stored in pieces instead: runs of
 * consecutive positions, each its values and then its capture bits, one chunk a piece (blocks of
 * 3e9 positions in the one-man pairs of 8 pieces: whole, a reader would decode 3.4 GB to read
 * 64 KiB, and hold 32 of them). A directory
 * says, for every block of each table, its chunk and its offset there, or that it is in pieces,
 * which a sorted list of each table's pieces finds; the writer's reads then cost a decoded chunk
 * per thread and cache slot. */
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
#define IN_PIECES (UINT32_MAX - 1) /* a block's positions are in pieces (the table's list) */

typedef struct place {
    uint32_t chunk, offset; /* NO_CHUNK: not stored yet */
} place;

/* A run of positions start..start+len-1 of a table (index positions, not block offsets), in
 * chunk `chunk`: their values, then their capture bits, a byte per 8 positions. */
typedef struct piece {
    uint64_t start;
    uint32_t len, chunk;
} piece;

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
    piece *pieces[2];               /* each table's, sorted by start */
    uint64_t npieces[2], piece_cap[2];
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
    free(st->pieces[0]);
    free(st->pieces[1]);
    free(st->chunks);
    free(st);
}

uint8_t *dtb_slicestore_levels(dtb_slicestore *st, int k) { return st->levels[k]; }

uint64_t dtb_slicestore_bytes(const dtb_slicestore *st) { return st->end; }

/* One chunk being made: blocks list[first..last) of a level (whole records), or a piece of
 * table k (len > 0): positions start..start+len-1; its frame. */
typedef struct pending {
    uint64_t first, last;
    uint64_t start, len;
    void *frame;
    size_t size, raw;
    dtb_status status;   /* DTB_OK, or why compressing it failed (failure) */
    const char *failure;
} pending;

/* Positions start..start+len-1 of t into out: their stored values, then their capture bits (a
 * byte 8 positions): a block's record (start at a block, len K), or a piece. A capture
 * position's value is don't-care in every table written from the store, so it is stored as the
 * value before it (runs compress); wins are a win in 1 unless the store keeps their distances. */
static void run_bytes(const dtb_slicestore *st, const dtb_solved_table *t, uint64_t start,
                      uint64_t len, uint8_t *out)
{
    uint8_t *bits = out + len, prev = 0;
    memset(bits, 0, (len + 7) / 8);
    for (uint64_t i = 0; i < len; i++) {
        const uint64_t x = start + i;
        const unsigned cap = t->captures[x / 64] >> (x % 64) & 1;
        bits[i / 8] |= (uint8_t)(cap << (i % 8));
        dtb_value v = t->values[x];
        if (!st->win_distances && dtb_value_is_win(v))
            v = dtb_value_win(1);
        out[i] = prev = cap ? prev : v;
    }
}

/* Adds piece pc to table k's list, which stays sorted (pieces mostly come in order). */
static dtb_status add_piece(dtb_slicestore *st, int k, piece pc, dtb_error *e)
{
    if (st->npieces[k] == st->piece_cap[k]) {
        const uint64_t cap = st->piece_cap[k] ? 2 * st->piece_cap[k] : 256;
        piece *grown = realloc(st->pieces[k], cap * sizeof *grown);
        if (!grown)
            return dtb_error_set(e, DTB_E_NOMEM, "out of memory for the slices' pieces");
        st->pieces[k] = grown, st->piece_cap[k] = cap;
    }
    piece *ps = st->pieces[k];
    uint64_t at = st->npieces[k]++;
    for (; at > 0 && ps[at - 1].start > pc.start; at--)
        ps[at] = ps[at - 1];
    ps[at] = pc;
    return DTB_OK;
}

/* Compresses the chunks p[0..np) of table k (whole records of blocks list[...], or pieces) and
 * appends them. */
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
            const size_t len = (size_t)(p[c].len ? p[c].len + (p[c].len + 7) / 8
                                                 : (p[c].last - p[c].first) * st->record);
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
                run_bytes(st, t, p[c].start, p[c].len, raw);
            else
                for (uint64_t i = p[c].first; i < p[c].last; i++)
                    run_bytes(st, t, list[i] * st->K, st->K, raw + (i - p[c].first) * st->record);
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
        if (rc == DTB_OK && st->nchunks >= IN_PIECES)
            rc = dtb_error_set(e, DTB_E_RANGE, "too many slice chunks");
        int err;
        if (rc == DTB_OK && (err = dtb_write_all(st->fd, p[c].frame, p[c].size, st->end)) != 0)
            rc = dtb_sys_error(e, err, "the slices' scratch file", "cannot write");
        if (rc == DTB_OK) {
            const uint32_t id = (uint32_t)st->nchunks++;
            st->chunks[id] = (chunk){st->end, (uint32_t)p[c].size, (uint32_t)p[c].raw};
            st->end += p[c].size;
            if (p[c].len)
                rc = add_piece(st, k, (piece){p[c].start, (uint32_t)p[c].len, id}, e);
            for (uint64_t i = p[c].first; i < p[c].last && !p[c].len; i++)
                st->where[k][list[i]] = (place){id, (uint32_t)((i - p[c].first) * st->record)};
        }
        free(p[c].frame);
    }
    return rc;
}

/* Positions a piece holds: about a chunk's bytes with their capture bits, a multiple of 8. */
static uint64_t piece_positions(const dtb_slicestore *st)
{
    const uint64_t n = st->chunk_raw * 8 / 9 / 8 * 8;
    return n ? n : 8;
}

/* Table k's positions start..start+len-1 as pieces, a batch of chunks at a time. */
static dtb_status put_pieces(dtb_slicestore *st, int k, uint64_t start, uint64_t len,
                             dtb_error *e)
{
    const uint64_t P = piece_positions(st);
    pending p[BATCH];
    dtb_status rc = DTB_OK;
    for (uint64_t at = start, end = start + len; at < end && rc == DTB_OK;) {
        int np = 0;
        for (; np < BATCH && at < end; np++, at += p[np - 1].len)
            p[np] = (pending){.start = at, .len = end - at < P ? end - at : P};
        rc = put_chunks(st, k, NULL, p, np, e);
    }
    return rc;
}

dtb_status dtb_slicestore_put_blocks(dtb_slicestore *st, int k, const uint64_t *list,
                                     uint64_t count, dtb_error *e)
{
    dtb_status rc = DTB_OK;
    if (st->record > st->chunk_raw) { /* each block in pieces */
        for (uint64_t i = 0; i < count && rc == DTB_OK; i++) {
            st->where[k][list[i]].chunk = IN_PIECES;
            rc = put_pieces(st, k, list[i] * st->K, st->K, e);
        }
        return rc;
    }
    /* Chunks of whole records, at least a chunk's bytes each (but the last), a batch at a time. */
    const uint64_t per = st->chunk_raw / st->record;
    pending p[BATCH];
    for (uint64_t i = 0; i < count && rc == DTB_OK;) {
        int np = 0;
        for (; np < BATCH && i < count; np++, i += per)
            p[np] = (pending){.first = i, .last = count - i < per ? count : i + per};
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
    (void)block_size; /* records larger than a chunk are stored in pieces */
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

/* The run of table k that holds position pos: a block's whole record, or a piece; its chunk,
 * its offset there, its first position and its length. false: not stored. */
static bool run_of(const dtb_slicestore *st, int k, uint64_t pos, uint32_t *id, uint64_t *off,
                   uint64_t *start, uint64_t *len)
{
    const uint64_t blk = pos / st->K;
    if (blk >= st->nblocks[k] || st->where[k][blk].chunk == NO_CHUNK)
        return false;
    const place w = st->where[k][blk];
    if (w.chunk != IN_PIECES) {
        *id = w.chunk, *off = w.offset, *start = blk * st->K, *len = st->K;
        return true;
    }
    const piece *ps = st->pieces[k];
    uint64_t lo = 0, hi = st->npieces[k]; /* lo: the pieces starting at or before pos */
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (ps[mid].start <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pos - ps[lo - 1].start >= ps[lo - 1].len)
        return false;
    lo--;
    *id = ps[lo].chunk, *off = 0, *start = ps[lo].start, *len = ps[lo].len;
    return true;
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
    for (uint64_t at = 0; at < len;) {
        const uint64_t pos = start + at;
        uint32_t id;
        uint64_t off, r0, rlen;
        if (!run_of(st, k, pos, &id, &off, &r0, &rlen))
            return "a block was read from the slices before it was stored";
        const char *why = NULL;
        const uint8_t *raw = decoded(st, r, id, &why);
        if (!raw)
            return why;
        /* the run's values from position j on, then its capture bits */
        const uint64_t j = pos - r0, n = rlen - j < len - at ? rlen - j : len - at;
        memcpy(values + at, raw + off + j, n);
        const uint8_t *bits = raw + off + rlen;
        for (uint64_t q = 0; q < n; q++) {
            const uint64_t x = j + q, y = at + q;
            captures[y / 64] |= (uint64_t)(bits[x / 8] >> (x % 8) & 1) << (y % 64);
        }
        at += n;
    }
    return NULL;
}
