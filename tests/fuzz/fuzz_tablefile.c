/* libFuzzer target for the table file reader: any bytes, opened as a table, must give a status and
 * a message, never a crash, a hang or an out-of-bounds access. Built with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, under which the reader ignores checksum mismatches so
 * the fuzzer reaches the parsing and decoding behind them. Seeds: tests/fuzz/corpus_tablefile/. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tablefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/dtb_fuzz_tablefile_%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    const size_t wrote = fwrite(data, 1, size, f);
    fclose(f);
    if (wrote != size)
        return 0;
    dtb_tablefile *tf;
    dtb_error e;
    const dtb_status s = dtb_tablefile_open(path, NULL, &tf, &e);
    unlink(path); /* the open descriptor keeps the bytes readable */
    if (s != DTB_OK) {
        if (!strstr(e.msg, "dtb_fuzz_tablefile"))
            abort(); /* every message names the file */
        return 0;
    }
    const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
    uint8_t *buf = malloc(in->block_positions);
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    if (buf && ctx)
        for (uint64_t b = 0; b < in->blocks && b < 64; b++)
            dtb_tablefile_read_block(tf, b, buf, in->block_positions, ctx, &e);
    dtb_tablefile_verify(tf, true, NULL, NULL, &e);
    dtb_tablefile_ctx_free(ctx);
    free(buf);
    dtb_tablefile_close(tf);
    return 0;
}
