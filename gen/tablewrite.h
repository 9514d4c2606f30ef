/* Writing one table file (docs/FORMAT.md) from a full array of one byte per position
 * (dtb_table_write), from a source that hands the values over a file block at a time
 * (dtb_table_write_source: no full array need ever exist), or by a team of processes each
 * compressing its own range's blocks (dtb_table_write_team). All give the same bytes.
 *
 * Usage:
 *     dtb_table_write_options o = dtb_table_write_defaults();
 *     o.variant = "international"; o.gametype = 20; o.material = "KKvK"; o.metric = DTB_METRIC_WLD;
 *     o.index_version = 1; o.value_encoding = 1; o.dontcare_kind = DTB_DONTCARE_CAPTURES;
 *     dtb_table_dontcare dc = {.bits = capture_bits, .marker = -1};
 *     dtb_status s = dtb_table_write("out/international/KKvK.wld", &o, values, n, &dc, NULL, &err);
 *
 * The file appears complete or not at all: bytes go to "<path>.tmp", which is fsync'd and renamed
 * over path, and the directory is fsync'd. On any failure the .tmp file is removed and path is left
 * as it was. The bytes depend only on the inputs and options (not on the thread count, the time or
 * the machine; the same zstd version is assumed), so regenerating a table reproduces its checksum.
 * Not thread-safe with respect to the same path; different paths may be written concurrently
 * (each call runs its own OpenMP team). Never prints, never exits. */
#ifndef DTB_TABLEWRITE_H
#define DTB_TABLEWRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "position.h"
#include "tablefile.h"

/* How don't-care positions are given their stored value (the reader never looks at them). */
typedef enum dtb_table_fill {
    DTB_FILL_PREVIOUS = 0, /* the previous cared-for value in the block (extends runs) */
    DTB_FILL_MAJORITY,     /* the block's most frequent cared-for value */
    DTB_FILL_ZERO,         /* byte 0 */
    DTB_FILL_NONE,         /* keep the caller's bytes (for measurements) */
    DTB_FILL_GAP,          /* default: a gap of don't-cares between two equal cared-for values
                              takes that value, any other gap the block's most frequent one
                              (in file order, after tiling) */
} dtb_table_fill;

/* tile_columns values (docs/FORMAT.md, "Tiling"). */
enum {
    DTB_TILE_AUTO = 0, /* try index order and the material's king strides, keep the smallest */
    DTB_TILE_NONE = 1, /* index order */
};

/* Defaults chosen from measurements (docs/FORMAT.md, "Choosing the parameters"). */
#define DTB_TABLE_DEFAULT_BLOCK_POSITIONS 65536u
#define DTB_TABLE_DEFAULT_ZSTD_LEVEL 9

typedef struct dtb_table_write_options {
    /* What the file says about itself (all required). */
    const char *variant;     /* name known to core/variant.h, < 24 characters */
    int gametype;            /* must equal the variant's PDN GameType */
    const char *material;    /* "KKMvK", < 64 characters */
    dtb_metric metric;
    uint32_t index_version;  /* version of the index scheme that ordered the values */
    uint32_t value_encoding; /* identifier of the byte encoding (core/value.h's is 1) */
    uint32_t dontcare_kind;  /* DTB_DONTCARE_* bits saying which positions are don't-care */
    uint32_t flags;          /* DTB_TABLE_* header flags; 0 (the default) for a full set's tables */
    /* How to compress. */
    uint32_t block_positions; /* positions per block, 1 .. 2^24 */
    int zstd_level;           /* 1 .. ZSTD_maxCLevel() */
    unsigned value_bits;      /* 1, 2, 4 or 8 bits per stored value; 0 = the fewest that hold
                                 every stored value (WLD: 2). Packing 4 values a byte makes WLD
                                 files ~15% smaller and 4x denser in a probe's cache */
    uint32_t dict_bytes;      /* > 0: train and store a zstd dictionary of at most this size
                                 (skipped when the packed table is under 100 times that size, or
                                 training fails). Default 0: on 2..4-piece tables a dictionary
                                 never paid for itself (docs/FORMAT.md) */
    dtb_table_fill fill;
    uint32_t tile_columns;    /* DTB_TILE_AUTO (default), DTB_TILE_NONE, or a row width >= 2 to
                                 store each block column-major in rows of that many positions */
    int threads;              /* OpenMP threads for compression; 0 = OpenMP's default */
    const uint8_t *value_map; /* NULL, or 256 bytes: a value byte x is stored as value_map[x]
                                 (a WLD table written from DTW values without a converted copy);
                                 a don't-care marker is compared with x itself */
    /* The long list of a DTW table (docs/FORMAT.md §8.4): long_count entries, indexes strictly
     * increasing, none of them a don't-care position, each value byte an escape. With entries the
     * file is written in value encoding 3 (DTB_ENCODING_DTW_LONG); none: as before. */
    const uint64_t *long_index;
    const uint16_t *long_dtw;
    uint64_t long_count;
    /* A rule-distance table (metric dtb_metric_of_rules): the limits of its rule set's classes
     * it was solved with, each 1..127 (0 after the last with a count), its late limit and
     * late_after (both 0 without a counting class) and the count layers the values hold (1, or
     * late_after + 1: count 0's positions first), recorded in its header (docs/FORMAT.md §8.6). */
    int rule_limits[DTB_TF_RULE_CLASSES];
    int rule_late_limit, rule_late_after, rule_layers;
} dtb_table_write_options;

/* Options with the default compression settings and empty descriptive fields. */
dtb_table_write_options dtb_table_write_defaults(void);

/* Which positions are don't-care: a position is don't-care when any given source says so.
 * All sources may be absent (no don't-care positions). */
typedef struct dtb_table_dontcare {
    const uint64_t *bits;  /* bit (i % 64) of bits[i / 64] set: position i is don't-care; or NULL */
    int marker;            /* 0..255: a position whose value byte equals marker is don't-care;
                              -1: no marker */
    bool (*fn)(void *user, uint64_t index); /* or NULL; called from several threads at once */
    void *user;
} dtb_table_dontcare;

/* What a write produced. */
typedef struct dtb_table_write_stats {
    uint64_t file_size;
    uint64_t data_size;      /* bytes of compressed frames */
    uint64_t dict_size;      /* bytes of dictionary stored (0 = none) */
    uint64_t blocks;
    uint64_t dontcare_count;
    uint32_t tile_columns;   /* as stored in the header: 0 = index order */
    uint64_t file_hash;      /* the whole-file checksum (as in the trailer) */
} dtb_table_write_stats;

/* Writes values[0 .. count) (count >= 1) to path as described above. dc and stats may be NULL.
 * Returns DTB_OK, DTB_E_INVALID (bad options or a value wider than value_bits, with a message), DTB_E_NOSPACE (disk full / quota),
 * DTB_E_IO (any other system failure; the message names the file and the system's reason),
 * DTB_E_NOMEM. */
dtb_status dtb_table_write(const char *path, const dtb_table_write_options *opt,
                           const uint8_t *values, uint64_t count, const dtb_table_dontcare *dc,
                           dtb_table_write_stats *stats, dtb_error *e);


/* Values handed to the writer a range at a time, for tables that are never held whole (a pair
 * solved in slices whose finished values wait compressed in a temporary store).
 *
 * Usage (one file block per call; a source over arrays: tests/test_tablefile.c):
 *     static const char *my_read(void *user, void **state, uint64_t start, size_t len,
 *                                uint8_t *values, uint64_t *dontcare)
 *     {
 *         if (!*state && !(*state = my_cursor_new(user)))  // per-thread, made on first use
 *             return "out of memory";
 *         return my_cursor_read(*state, start, len, values, dontcare);  // NULL: all went well
 *     }
 *     dtb_table_source src = {.read = my_read, .free_state = my_free_state, .user = store};
 *     o.value_bits = 2;  // known widths spare a pass over the source (value_bits 0 reads it all)
 *     dtb_status s = dtb_table_write_source(path, &o, &src, n, -1, NULL, &err); */
typedef struct dtb_table_source {
    /* Fills values[0..len) with the values of positions start..start+len-1 and dontcare (len/64
     * rounded up words, zeroed by the writer beforehand) with their don't-care bits (bit i % 64
     * of word i / 64 set: position start+i is don't-care). start is a multiple of 64. Called
     * from several threads at once, each with its own *state (NULL at its first call; the source
     * may allocate it, and free_state frees it when the write ends). NULL on success, else a
     * message saying what failed (the write then fails with DTB_E_IO naming the file and it; the
     * message is copied at once, so it may live in *state). The same range may be asked for more
     * than once (the width, tiling and dictionary choices read sample blocks before the full
     * pass), in any order. */
    const char *(*read)(void *user, void **state, uint64_t start, size_t len, uint8_t *values,
                        uint64_t *dontcare);
    void (*free_state)(void *user, void *state); /* may be NULL; called once per non-NULL state */
    void *user;
} dtb_table_source;

/* dtb_table_write with the values and don't-care bits read from src (marker: as
 * dtb_table_dontcare's, -1 for none): the same bytes as dtb_table_write given the same values
 * and don't-care positions. Each call of src->read asks for one file block (block_positions
 * positions, fewer for the last). block_positions must be a multiple of 64 (DTB_E_INVALID). The
 * long list's entries are trusted to be escapes (they are not read back). With value_bits 0 every
 * block is read once more to find the width (stopping early once 8 bits is certain). Returns
 * what dtb_table_write returns; a failed read is DTB_E_IO, the file left as it was. */
dtb_status dtb_table_write_source(const char *path, const dtb_table_write_options *opt,
                                  const dtb_table_source *src, uint64_t count, int marker,
                                  dtb_table_write_stats *stats, dtb_error *e);

/* A table written by the processes of a team together (the ranks of an MPI build, each holding
 * the values of a range of the table): each compresses the file blocks of its own range, and the
 * process of rank 0 assembles the file from every rank's frames, which come in rank order. The
 * choices made over the whole table (the width of values_bits 0, the tiling of DTB_TILE_AUTO)
 * are made from every rank's blocks through reduce, so the file has the same bytes as
 * dtb_table_write_source's of the same values, whatever the ranks and their ranges.
 *
 * Every rank calls dtb_table_write_team with the same options, count and starts; the callbacks
 * are called from the calling thread only, in the same order on every rank. A team write takes
 * no dictionary and no long list (DTB_E_INVALID). */
typedef struct dtb_table_team {
    int rank, ranks;
    /* Rank r holds positions starts[r] .. starts[r + 1] - 1 (ranks + 1 entries: 0 first, count
     * last, each in between a multiple of block_positions, non-decreasing): it writes the blocks
     * that start there, and its source is asked for nothing else. */
    const uint64_t *starts;
    /* Replaces v[0..n) on every rank by their sums (max false) or maxima over the team. */
    dtb_status (*reduce)(void *ctx, uint64_t *v, int n, bool max, dtb_error *e);
    /* A rank other than 0 sends buf[0..len) to rank 0; rank 0 receives len bytes from rank
     * `from` into buf (the same lengths in the same order as that rank sent them). */
    dtb_status (*send)(void *ctx, const uint8_t *buf, uint64_t len, dtb_error *e);
    dtb_status (*recv)(void *ctx, int from, uint8_t *buf, uint64_t len, dtb_error *e);
    void *ctx;
} dtb_table_team;

/* dtb_table_write_source by every rank of team: rank 0 writes path (as dtb_table_write_source,
 * stats its), the others only compress their blocks and send the frames (path is named in
 * their messages only; stats, if not NULL, gets their blocks and don't-care count). A frame that
 * reaches rank 0 different from what its rank made (by the block table's hash) is DTB_E_IO.
 * Other statuses as dtb_table_write_source's. */
dtb_status dtb_table_write_team(const char *path, const dtb_table_write_options *opt,
                                const dtb_table_source *src, uint64_t count, int marker,
                                const dtb_table_team *team, dtb_table_write_stats *stats,
                                dtb_error *e);

#endif
