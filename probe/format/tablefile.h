/* Reading one table file (docs/FORMAT.md): header checks at open, one compressed block at a
 * time on request, whole-file verification on demand.
 *
 * Usage:
 *     dtb_tablefile *tf;
 *     dtb_error err;
 *     dtb_tablefile_expect want = {.variant = "international", .material = "KKvK",
 *                                  .metric = DTB_METRIC_WLD};
 *     if (dtb_tablefile_open(path, &want, &tf, &err) != DTB_OK) { report err.msg; }
 *     const dtb_tablefile_info *info = dtb_tablefile_get_info(tf);
 *     dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();          one per thread
 *     uint8_t *buf = malloc(info->block_positions);
 *     dtb_tablefile_read_block(tf, index / info->block_positions, buf, info->block_positions,
 *                              ctx, &err);   then buf[index % info->block_positions]
 *
 * Thread safety: an open dtb_tablefile is read-only (reads go through pread on one descriptor),
 * so any number of threads may call dtb_tablefile_read_block / _verify / _get_info on it at once,
 * each with its own dtb_tablefile_ctx (or NULL). Open and close are not concurrent with other calls
 * on the same object. Nothing here prints or exits; every failure is a status plus a message in
 * *e that names the file and the problem. */
#ifndef DTB_TABLEFILE_H
#define DTB_TABLEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "position.h"

/* A rule table's header (docs/FORMAT.md §3, §8.6): classes, the largest late_after, and the
 * bytes the rule fields take from its rule set's id on (id, limits, late limit, late_after,
 * layers). */
#define DTB_TF_RULE_CLASSES 7
#define DTB_TF_RULE_COUNT_MAX 10
#define DTB_TF_RULE_BYTES (1 + DTB_TF_RULE_CLASSES + 3)

typedef enum dtb_metric {
    DTB_METRIC_WLD = 1, /* win / draw / loss */
    DTB_METRIC_DTW = 2, /* distance to win */
    DTB_METRIC_MTC = 3, /* moves (plies) to conversion (docs/FORMAT.md §8.5) */
    DTB_METRIC_FMJD = 4, /* plies to the next counter reset under the FMJD rules (§8.6) */
    DTB_METRIC_WCDF = 5, /* the same under the WCDF's 40-move rule (english, §8.6) */
    DTB_METRIC_FMJD64 = 6, /* the same under FMJD-64 (russian, brazilian, §8.6) */
} dtb_metric;

/* The rule-distance metric of rule set id (core/rules.h: one metric a rule set), and back. */
static inline dtb_metric dtb_metric_of_rules(int rules_id) { return (dtb_metric)(3 + rules_id); }
static inline bool dtb_metric_is_rules(dtb_metric m)
{
    return m == DTB_METRIC_FMJD || m == DTB_METRIC_WCDF || m == DTB_METRIC_FMJD64;
}
static inline int dtb_metric_rules_id(dtb_metric m) { return (int)m - 3; }

/* Value encodings recorded in table headers: the one-byte DTW value of core/value.h, the WLD
 * byte (0 draw, 1 win, 2 loss for the side to move), and the DTW byte with a long list (the
 * exact DTW of escape bytes, docs/FORMAT.md §8.4). A reader expecting DTW accepts both DTW
 * encodings; an encoding beyond these is DTB_E_VERSION. */
enum { DTB_ENCODING_DTW = 1, DTB_ENCODING_WLD = 2, DTB_ENCODING_DTW_LONG = 3, DTB_ENCODING_MTC = 4,
       DTB_ENCODING_RULES = 5 /* the MTC byte's layout, distances up to the class's limit */ };

/* The encoding a table of this metric is written in. */
static inline uint32_t dtb_encoding_of(dtb_metric metric)
{
    return metric == DTB_METRIC_DTW   ? DTB_ENCODING_DTW
           : metric == DTB_METRIC_MTC ? DTB_ENCODING_MTC
           : dtb_metric_is_rules(metric) ? DTB_ENCODING_RULES
                                         : DTB_ENCODING_WLD;
}

/* Index scheme version recorded in table headers: core/index.h's order of positions
 * (docs/FORMAT.md, "The index"). */
#define DTB_INDEX_VERSION 1u

/* Which positions of a file hold arbitrary (don't-care) values: a bit set. */
enum {
    DTB_DONTCARE_CAPTURES = 1u, /* positions where the side to move must capture */
    DTB_DONTCARE_DERIVED = 2u,  /* quiet positions of a derived table (all of them) */
    DTB_DONTCARE_THREATS = 4u,  /* the threat positions probe/format/threat.h's rule accepts */
    DTB_DONTCARE_NOT_LOSSES = 8u, /* quiet positions that are not lost (wins, draws) in a DTW
                                     table that stores its losses only (DTB_TABLE_LOSSES) */
};

/* Header flags (docs/FORMAT.md): what a reader must know to answer from the file. Readers
 * from before compact sets refuse any flag, so none of them can read a derived table as full. */
enum {
    DTB_TABLE_DERIVED = 1u, /* the derived member of a pair of a compact set: its quiet positions
                               hold no value */
    DTB_TABLE_THREATS = 4u, /* a stored table of a compact set whose threat positions that
                               probe/format/threat.h's rule accepts hold no value */
    DTB_TABLE_LOSSES = 8u,  /* a DTW table that stores its losses only: which quiet positions
                               are wins or draws is read from the material's WLD table, and a
                               win's distance is found by a one-ply search over its moves for
                               the shortest lost successor (docs/FORMAT.md §8.7) */
};

/* What a file says about itself. Strings are NUL-terminated. */
typedef struct dtb_tablefile_info {
    char variant[25];         /* "international", ... */
    char material[65];        /* "KKMvK" */
    int gametype;             /* PDN GameType of the variant */
    dtb_metric metric;
    uint32_t index_version;   /* version of the index scheme that orders the positions */
    uint32_t value_encoding;  /* identifier of the one-byte value encoding */
    uint64_t positions;       /* positions in the table */
    uint32_t block_positions; /* positions per compressed block (the last block may hold fewer) */
    unsigned value_bits;      /* bits per stored value: 1, 2, 4 or 8 (values packed in blocks) */
    uint32_t tile_columns;    /* 0: stored in index order; else the order inside a block (reads
                                 undo it: blocks always come back in index order) */
    uint64_t blocks;          /* number of blocks */
    int zstd_level;           /* compression level the writer used (informational) */
    uint32_t dontcare_kind;   /* DTB_DONTCARE_* bits: which positions hold arbitrary values */
    uint32_t flags;           /* DTB_TABLE_* bits; 0 for the tables of a full set */
    uint64_t dontcare_count;  /* how many positions hold arbitrary values */
    uint64_t dict_size;       /* bytes of the zstd dictionary stored in the file; 0 = none */
    uint64_t data_size;       /* bytes of compressed frames */
    uint64_t file_size;
    uint64_t file_hash;       /* the whole-file checksum stored in the trailer (for manifests) */
    uint64_t long_count;      /* entries of the long list (encoding 3), else 0 */
    uint64_t long_size;       /* its bytes in the file */
    int rules_id;             /* a rule-distance table: its rule set (core/rules.h), else 0 */
    int rule_limits[DTB_TF_RULE_CLASSES]; /* and the limit of each class it was solved with
                                 (plies; 0 after the rule set's last class with a count) */
    int rule_late_limit;      /* the limit of the counting class once the diagonal count
                                 reaches rule_late_after (0: no such class) */
    int rule_late_after;
    int rule_layers;          /* count layers stored: 1, or rule_late_after + 1 (the table then
                                 holds positions / rule_layers positions a layer, count 0 first) */
} dtb_tablefile_info;

/* What the caller expects; a zero / NULL field is not checked. A file that differs is
 * DTB_E_MISMATCH. */
typedef struct dtb_tablefile_expect {
    const char *variant;
    const char *material;
    dtb_metric metric;
    uint32_t index_version;
    uint32_t value_encoding;
    uint64_t positions;
} dtb_tablefile_expect;

typedef struct dtb_tablefile dtb_tablefile;

/* Per-thread decoding state (a zstd decompression context and read buffers). Reusing one saves
 * what a NULL context costs on every read: a 96 KB allocation and 4-30 us (measured; a 64K-position
 * block itself decodes in 13-80 us). */
typedef struct dtb_tablefile_ctx dtb_tablefile_ctx;

/* Opens path and checks everything short of reading the compressed frames: magic, format version,
 * every header field and their consistency with the file's size, the header/block-table/dictionary
 * checksum, the block table's bounds, the end marker, and expect (may be NULL).
 * Returns DTB_OK and *out, or (with *out = NULL):
 *   DTB_E_NOTFOUND  no such file;          DTB_E_IO       open/read failed;
 *   DTB_E_CORRUPT   not a table, truncated, a bad field or checksum;
 *   DTB_E_VERSION   a format version this build does not read;
 *   DTB_E_MISMATCH  a sound file that is not what expect asks for;  DTB_E_NOMEM.
 * e may be NULL. */
dtb_status dtb_tablefile_open(const char *path, const dtb_tablefile_expect *expect,
                              dtb_tablefile **out, dtb_error *e);

/* Closes tf; NULL is allowed. */
void dtb_tablefile_close(dtb_tablefile *tf);

const dtb_tablefile_info *dtb_tablefile_get_info(const dtb_tablefile *tf);

/* The path tf was opened with. */
const char *dtb_tablefile_path(const dtb_tablefile *tf);

/* Number of positions in block b (block_positions, or fewer for the last block). */
uint64_t dtb_tablefile_block_len(const dtb_tablefile *tf, uint64_t b);

/* NULL when out of memory. Free with dtb_tablefile_ctx_free (NULL allowed). One thread at a time. */
dtb_tablefile_ctx *dtb_tablefile_ctx_create(void);
void dtb_tablefile_ctx_free(dtb_tablefile_ctx *ctx);

/* Reads block b (b < blocks) into out[0 .. dtb_tablefile_block_len(tf, b)), after checking the
 * frame's checksum; out_size must be at least that length. ctx may be NULL: a temporary context is
 * then made and freed inside the call (costs an allocation; pass a ctx on hot paths).
 * Returns DTB_OK, DTB_E_RANGE (b out of range), DTB_E_OVERFLOW (out_size too small), DTB_E_IO, DTB_E_CORRUPT (checksum mismatch, a
 * frame that does not decode to exactly the block's length, file shrunk since open), DTB_E_NOMEM.
 * On failure out's contents are unspecified. Thread-safe (see the file comment). */
dtb_status dtb_tablefile_read_block(const dtb_tablefile *tf, uint64_t b, uint8_t *out,
                                    size_t out_size, dtb_tablefile_ctx *ctx, dtb_error *e);

/* Bytes block b takes packed (value_bits per value): the size dtb_tablefile_read_packed needs. */
uint64_t dtb_tablefile_packed_len(const dtb_tablefile *tf, uint64_t b);

/* Like dtb_tablefile_read_block but leaves the values packed, value_bits each, from the low bits
 * of each byte up, in index order (a tiled file's block is untiled and packed again): for caches,
 * which then hold 8 / value_bits times more positions per byte. Read one value with
 * dtb_tablefile_packed_get. Same statuses and thread safety. */
dtb_status dtb_tablefile_read_packed(const dtb_tablefile *tf, uint64_t b, uint8_t *out,
                                     size_t out_size, dtb_tablefile_ctx *ctx, dtb_error *e);

/* Value i of a packed block with bits (1, 2, 4 or 8) bits per value. */
static inline unsigned dtb_tablefile_packed_get(const uint8_t *packed, unsigned bits, uint64_t i)
{
    const unsigned per = 8 / bits;
    return (packed[i / per] >> ((unsigned)(i % per) * bits)) & ((1u << bits) - 1u);
}

/* The DTW listed for index idx in the long list, -1 when idx is not listed (its byte holds its
 * value). The list is read and checked at open. Thread-safe. */
int dtb_tablefile_long_dtw(const dtb_tablefile *tf, uint64_t idx);

/* The long list itself: long_count entries sorted by index (NULL when there is none). */
const uint64_t *dtb_tablefile_long_index(const dtb_tablefile *tf);
const uint16_t *dtb_tablefile_long_dtws(const dtb_tablefile *tf);

/* Called by dtb_tablefile_verify with bytes checked so far and the file size; return false to stop. */
typedef bool (*dtb_tablefile_progress)(void *user, uint64_t done, uint64_t total);

/* Reads the whole file and checks the whole-file checksum and every block's checksum; with
 * decode, also decompresses every block and checks its length. progress may be NULL.
 * Returns DTB_OK, DTB_E_CORRUPT (the message names the block or says which checksum),
 * DTB_E_IO, DTB_E_NOMEM, or DTB_E_ABORTED when progress returned false. Thread-safe. */
dtb_status dtb_tablefile_verify(const dtb_tablefile *tf, bool decode, dtb_tablefile_progress progress,
                                void *user, dtb_error *e);

/* "wld", "dtw", "mtc", "fmjd", "wcdf", "fmjd64"; NULL for anything else. Also the file name
 * extension. */
const char *dtb_metric_name(dtb_metric m);

/* The metric whose name (dtb_metric_name, a table file's extension) is name; 0 when none is. */
dtb_metric dtb_metric_named(const char *name);

#endif
