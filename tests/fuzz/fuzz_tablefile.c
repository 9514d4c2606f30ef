/* libFuzzer target for the table file reader (probe/format/tablefile.c): any bytes, opened as a
 * table, must give a status and a message, never a crash, a hang or an out-of-bounds access
 * (ASan/UBSan), and the reader's answers must agree with each other.
 *
 * A mutated file almost always fails its first checksum, which would keep the fuzzer out of
 * everything behind it (in 6 million runs it reached 87 edges). So the harness repairs the
 * checksums itself before the reader sees the bytes, and the reader is the production code, with
 * no fuzzing-only branch. The first input byte chooses what is repaired; the rest is the file:
 *   bit 0  the checksums: each block's frame check (over the frame bytes the block table
 *          locates), the meta hash (header, block table, dictionary), the trailer's whole-file
 *          hash; in that order, since each covers the previous ones;
 *   bit 1  the layout, before the checksums: the header's file size and the end marker, and the
 *          last frame's size so that the frames end where the trailer starts. Inserting or
 *          erasing bytes in a frame then reaches the decoder instead of the size checks.
 * With neither bit the bytes go in raw, which fuzzes the checksum checks themselves. Bits 2-4
 * reopen the file with an expectation (check_expect below), bits 5-6 stop verify's progress.
 *
 * Every block is read (at most MAX_BLOCKS, and a bounded number of positions) with both
 * dtb_tablefile_read_block and dtb_tablefile_read_packed into buffers of exactly the block's
 * size, so an overrun is an ASan report; then dtb_tablefile_verify. Oracles (abort on failure):
 * every error message names the file; a buffer one byte short is DTB_E_OVERFLOW; the packed and
 * unpacked reads of a block hold the same values, each below 2^value_bits; with repaired
 * checksums, verify succeeds exactly when every block decodes.
 * Seeds: tests/fuzz/corpus_tablefile/ (README.md there); dictionary: fuzz_tablefile.dict. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "tablefile.h"
#include "tableformat.h"

enum {
    REPAIR_CHECKSUMS = 1,
    REPAIR_LAYOUT = 2,
    MAX_BLOCKS = 64,          /* blocks read per input (verify still reads them all) */
    MAX_POSITIONS = 1u << 22, /* positions decoded per input: a tiny zstd frame can expand to a
                                 16M-position block, and libFuzzer needs thousands of runs/s */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sets the last frame's size in the block table so that the frames end at the trailer, when the
 * header's offsets leave room for that; leaves the bytes alone otherwise (the reader then refuses
 * the file, which is fine). */
static void repair_layout(uint8_t *f, size_t n)
{
    dtb_tf_put64(f + DTB_TF_OFF_FILE_SIZE, n);
    memcpy(f + n - 8, DTB_TF_END_MAGIC, 8);
    const uint64_t blocks = dtb_tf_get64(f + DTB_TF_OFF_BLOCKS);
    const uint64_t data_offset = dtb_tf_get64(f + DTB_TF_OFF_DATA_OFFSET);
    const uint64_t end = n - DTB_TF_TRAILER_SIZE;
    if (blocks == 0 || blocks > (end - DTB_TF_HEADER_SIZE) / DTB_TF_ENTRY_SIZE ||
        data_offset > end || data_offset < DTB_TF_HEADER_SIZE + blocks * DTB_TF_ENTRY_SIZE)
        return;
    uint64_t used = 0;
    for (uint64_t b = 0; b + 1 < blocks; b++)
        used += dtb_tf_get32(f + DTB_TF_HEADER_SIZE + b * DTB_TF_ENTRY_SIZE);
    const uint64_t room = end - data_offset;
    if (used < room && room - used <= UINT32_MAX)
        dtb_tf_put32(f + DTB_TF_HEADER_SIZE + (blocks - 1) * DTB_TF_ENTRY_SIZE,
                     (uint32_t)(room - used));
}

/* The checksums as the writer (gen/tablewrite.c) computes them, over whatever the header and
 * block table say, clamped to the bytes there are. */
static void repair_checksums(uint8_t *f, size_t n)
{
    const uint64_t end = n - DTB_TF_TRAILER_SIZE;
    const uint64_t blocks = dtb_tf_get64(f + DTB_TF_OFF_BLOCKS);
    const uint64_t data_offset = dtb_tf_get64(f + DTB_TF_OFF_DATA_OFFSET);
    if (data_offset >= DTB_TF_HEADER_SIZE && data_offset <= end) {
        /* Frame b starts where frame b - 1 ends; its check is the low half of XXH64 seeded b. */
        uint64_t off = data_offset;
        for (uint64_t b = 0; b < blocks; b++) {
            const uint64_t at = DTB_TF_HEADER_SIZE + b * DTB_TF_ENTRY_SIZE;
            if (at + DTB_TF_ENTRY_SIZE > data_offset) /* b is at most n / 8 here: no overflow */
                break;
            uint8_t *ent = f + at;
            const uint32_t len = dtb_tf_get32(ent);
            if (len > end - off)
                break;
            dtb_tf_put32(ent + 4, (uint32_t)dtb_hash64(f + off, len, b));
            off += len;
        }
        /* Header up to the hash itself, then block table and dictionary. */
        dtb_hash64_state hs;
        dtb_hash64_init(&hs, 0);
        dtb_hash64_update(&hs, f, DTB_TF_OFF_META_HASH);
        dtb_hash64_update(&hs, f + DTB_TF_HEADER_SIZE, (size_t)(data_offset - DTB_TF_HEADER_SIZE));
        dtb_tf_put64(f + DTB_TF_OFF_META_HASH, dtb_hash64_digest(&hs));
    }
    dtb_tf_put64(f + end, dtb_hash64(f, (size_t)end, 0));
}

static const char *path_for_process(void)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/dtb_fuzz_tablefile_%d", (int)getpid());
    return path;
}

static void check_message(dtb_status s, const dtb_error *e)
{
    if (s != DTB_OK && !strstr(e->msg, "dtb_fuzz_tablefile"))
        abort(); /* every message names the file */
}

/* Reads block b both ways into exactly-sized buffers and compares. Returns the status of the
 * unpacked read. */
static dtb_status read_both(const dtb_tablefile *tf, uint64_t b, dtb_tablefile_ctx *ctx)
{
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    const size_t len = (size_t)dtb_tablefile_block_len(tf, b);
    const size_t plen = (size_t)dtb_tablefile_packed_len(tf, b);
    uint8_t *vals = malloc(len), *packed = malloc(plen);
    dtb_error e;
    dtb_status s = DTB_E_NOMEM;
    if (vals && packed) {
        /* One byte short must be refused before anything is written. */
        if (dtb_tablefile_read_block(tf, b, vals, len - 1, ctx, &e) != DTB_E_OVERFLOW ||
            dtb_tablefile_read_packed(tf, b, packed, plen - 1, ctx, &e) != DTB_E_OVERFLOW)
            abort();
        s = dtb_tablefile_read_block(tf, b, vals, len, ctx, &e);
        check_message(s, &e);
        /* Alternate the two ways of passing a context: a temporary one must work the same. */
        const dtb_status sp = dtb_tablefile_read_packed(tf, b, packed, plen, b % 2 ? NULL : ctx, &e);
        check_message(sp, &e);
        /* The statuses may differ on a corrupt frame whose check was repaired: zstd decodes with
         * a fresh context's first frame using another routine (its prefetching one, chosen while
         * the dictionary is "cold"), which rejects some corrupt sequences the other accepts. Both
         * are bounds-safe; the reader relies on the frame check, not on zstd, to catch damage.
         * Where both succeed they must agree. */
        if (s == DTB_OK && sp == DTB_OK)
            for (size_t i = 0; i < len; i++)
                if (vals[i] >> in->value_bits ||
                    dtb_tablefile_packed_get(packed, in->value_bits, i) != vals[i])
                    abort();
    }
    free(vals);
    free(packed);
    return s;
}

/* Reopens the file expecting exactly what it says of itself, but for one field (which: 1 none,
 * 2..7 variant, material, metric, index version, value encoding, positions): the open must
 * succeed, or fail with DTB_E_MISMATCH, accordingly. A zero expected field is not checked, so a
 * differing one is never zero. */
static void check_expect(const char *path, const dtb_tablefile_info *in, unsigned which)
{
    dtb_tablefile_expect x = {in->variant, in->material, in->metric,
                              in->index_version, in->value_encoding, in->positions};
    switch (which) {
    case 2: x.variant = strcmp(in->variant, "english") ? "english" : "russian"; break;
    case 3: x.material = strcmp(in->material, "KvK") ? "KvK" : "MvM"; break;
    case 4: x.metric = in->metric == DTB_METRIC_WLD ? DTB_METRIC_DTW : DTB_METRIC_WLD; break;
    case 5: x.index_version = in->index_version == 1 ? 2 : 1; break;
    case 6: x.value_encoding = in->value_encoding == 1 ? 2 : 1; break;
    case 7: x.positions = in->positions == 1 ? 2 : 1; break;
    }
    dtb_tablefile *tf;
    dtb_error e;
    const dtb_status s = dtb_tablefile_open(path, &x, &tf, &e);
    check_message(s, &e);
    if (s != (which == 1 ? DTB_OK : DTB_E_MISMATCH))
        abort();
    dtb_tablefile_close(tf);
}

/* A verify progress callback that stops at call stop_at (0: never) and checks its arguments. */
typedef struct progress_state {
    unsigned calls, stop_at;
    uint64_t last, total;
} progress_state;

static bool progress(void *user, uint64_t done, uint64_t total)
{
    progress_state *p = user;
    if (done < p->last || done > total || total != p->total)
        abort();
    p->last = done;
    return ++p->calls != p->stop_at;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const unsigned mode = data[0];
    const size_t n = size - 1;
    uint8_t *f = malloc(n ? n : 1);
    if (!f)
        return 0;
    memcpy(f, data + 1, n);
    /* Shorter files are refused before any checksum is read: nothing to repair. */
    const int repairable = n >= DTB_TF_HEADER_SIZE + DTB_TF_TRAILER_SIZE;
    if (repairable && (mode & REPAIR_LAYOUT))
        repair_layout(f, n);
    if (repairable && (mode & REPAIR_CHECKSUMS))
        repair_checksums(f, n);

    const char *path = path_for_process();
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        free(f);
        return 0;
    }
    const ssize_t wrote = write(fd, f, n);
    close(fd);
    free(f);
    if (wrote != (ssize_t)n)
        return 0;

    dtb_tablefile *tf;
    dtb_error e;
    const dtb_status s = dtb_tablefile_open(path, NULL, &tf, &e);
    check_message(s, &e);
    if (s != DTB_OK) {
        unlink(path);
        return 0;
    }
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    if (strcmp(dtb_tablefile_path(tf), path) != 0)
        abort();
    if (mode >> 2 & 7)
        check_expect(path, in, mode >> 2 & 7);
    unlink(path); /* the open descriptor keeps the bytes readable */
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    if (!ctx)
        abort();
    /* Out of range is refused. */
    uint8_t one;
    if (dtb_tablefile_read_block(tf, in->blocks, &one, 1, ctx, &e) != DTB_E_RANGE ||
        dtb_tablefile_read_packed(tf, in->blocks, &one, 1, ctx, &e) != DTB_E_RANGE)
        abort();
    uint64_t budget = MAX_POSITIONS, read_ok = 0;
    bool all_read = true;
    for (uint64_t b = 0; b < in->blocks; b++) {
        const uint64_t len = dtb_tablefile_block_len(tf, b);
        if (b >= MAX_BLOCKS || len > budget) {
            all_read = false;
            break;
        }
        budget -= len;
        read_ok += read_both(tf, b, ctx) == DTB_OK;
    }
    /* verify decodes every block: only when that is bounded work too. */
    if (in->blocks <= MAX_POSITIONS / in->block_positions) {
        const dtb_status v = dtb_tablefile_verify(tf, true, NULL, NULL, &e);
        check_message(v, &e);
        /* With every checksum right, verify fails exactly when some block does not decode. */
        if ((mode & REPAIR_CHECKSUMS) && all_read && (v == DTB_OK) != (read_ok == in->blocks))
            abort();
        /* Without decoding it checks the checksums only; a progress callback that says stop
         * (at its first or second call, from mode bits 5-6) stops it. */
        progress_state p = {.stop_at = mode >> 5 & 3, .total = in->file_size};
        const dtb_status c = dtb_tablefile_verify(tf, false, p.stop_at ? progress : NULL, &p, &e);
        check_message(c, &e);
        const bool stopped = p.stop_at && p.calls == p.stop_at;
        if (stopped ? c != DTB_E_ABORTED : (mode & REPAIR_CHECKSUMS) && c != DTB_OK)
            abort();
    }
    dtb_tablefile_ctx_free(ctx);
    dtb_tablefile_close(tf);
    return 0;
}
