/* A synthetic table with a distance beyond the byte (docs/FORMAT.md §8.4), for the tests of the
 * long lists: a copy of a generated DTW table in which one quiet won position claims a win in
 * `dtw` plies through the long list. No real 2..4-piece table is that long, so the tests make
 * one: what they check is that every interface carries the distance, not that it is true. */
#ifndef DTB_TEST_LONG_TABLE_H
#define DTB_TEST_LONG_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "fen.h"
#include "index.h"
#include "movegen.h"
#include "tablefile.h"
#include "tablewrite.h"
#include "value.h"

/* Copies DTW table `material` of `variant` from from_dir/<variant>/ (a table that stores every
 * value: dtbgen --dtw-store full) to to_dir/<variant>/ (which
 * must exist), its first quiet won position listed as a win in dtw plies (odd, beyond 253);
 * that position's FEN into fen. DTB_OK, or the failing status with its message in *e. */
static inline dtb_status write_long_table(const char *from_dir, const char *to_dir,
                                          const char *variant, const char *material, int dtw,
                                          char *fen, size_t fen_size, dtb_error *e)
{
    const dtb_variant *v = dtb_variant_find(variant);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_material m;
    dtb_status s = dtb_material_parse(material, &m, e);
    if (s != DTB_OK)
        return s;
    char from[4096], to[4096];
    dtb_build_table_path(from, sizeof from, from_dir, v, &m, DTB_METRIC_DTW);
    dtb_build_table_path(to, sizeof to, to_dir, v, &m, DTB_METRIC_DTW);
    dtb_tablefile *tf;
    if ((s = dtb_tablefile_open(from, NULL, &tf, e)) != DTB_OK)
        return s;
    const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
    if (info->flags & DTB_TABLE_LOSSES) { /* its wins' bytes are filler */
        dtb_tablefile_close(tf);
        return dtb_error_set(e, DTB_E_MISMATCH, "%s stores its losses only: build %s with "
                             "dtbgen --dtw-store full", from, from_dir);
    }
    const uint64_t n = info->positions;
    uint8_t *values = malloc(n);
    uint64_t *captures = calloc(n / 64 + 1, sizeof *captures);
    dtb_index *ix = NULL;
    if (!values || !captures || dtb_index_create(&b, m, &ix) != DTB_OK)
        s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (uint64_t blk = 0; s == DTB_OK && blk < info->blocks; blk++)
        s = dtb_tablefile_read_block(tf, blk, values + blk * info->block_positions,
                                     dtb_tablefile_block_len(tf, blk), NULL, e);
    dtb_tablefile_close(tf);
    uint64_t chosen = n;
    for (uint64_t i = 0; s == DTB_OK && i < n; i++) {
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        if (dtb_has_capture(&b, &p)) {
            captures[i / 64] |= 1ull << (i % 64);
        } else if (chosen == n && dtb_value_is_win(values[i])) {
            chosen = i;
            dtb_fen_write(&b, &p, fen, fen_size);
        }
    }
    if (s == DTB_OK && chosen == n)
        s = dtb_error_set(e, DTB_E_NOTFOUND, "%s has no quiet win", from);
    if (s == DTB_OK) {
        values[chosen] = DTB_VALUE_WIN_ESCAPE;
        const uint16_t d = (uint16_t)dtw;
        dtb_table_write_options o = dtb_build_write_options(v, material, DTB_METRIC_DTW);
        o.dontcare_kind = DTB_DONTCARE_CAPTURES;
        o.zstd_level = 1;
        o.long_index = &chosen;
        o.long_dtw = &d;
        o.long_count = 1;
        const dtb_table_dontcare dc = {.bits = captures, .marker = -1};
        s = dtb_table_write(to, &o, values, n, &dc, NULL, e);
    }
    dtb_index_free(ix);
    free(values);
    free(captures);
    return s;
}

#endif
