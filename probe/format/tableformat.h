/* Byte layout of table files (docs/FORMAT.md is the reference; keep the two in step).
 * Shared by the reader (probe/tablefile.c) and the writer (gen/tablewrite.c); not public API.
 * All integers are little-endian and read/written byte by byte, never by casting structs. */
#ifndef DTB_TABLEFORMAT_H
#define DTB_TABLEFORMAT_H

#include <stdint.h>
#include <string.h>

#include "position.h"

#define DTB_TF_MAGIC "\x89" "DTB\r\n\x1a\n"      /* 8 bytes, PNG-style: catches text-mode damage */
#define DTB_TF_END_MAGIC "DTB-END\n"            /* last 8 bytes of a complete file */
#define DTB_TF_MAGIC_LEN 8
#define DTB_TF_VERSION 2u      /* every table without a long list */
#define DTB_TF_VERSION_LONG 3u /* a DTW table with a long list (docs/FORMAT.md §8.4): readers
                                  from before it refuse it as a newer version */
#define DTB_TF_VERSION_MTC 4u  /* an MTC table (docs/FORMAT.md §8.5): readers from before it
                                  refuse it as a newer version, not as an unknown metric */
#define DTB_TF_VERSION_RULES 5u /* a rule-distance table (docs/FORMAT.md §8.6): readers from
                                   before it refuse it as a newer version */
#define DTB_TF_HEADER_SIZE 256u
#define DTB_TF_ENTRY_SIZE 8u   /* block table entry: u32 frame size, u32 frame check */
#define DTB_TF_TRAILER_SIZE 16u /* u64 file hash, end magic */

/* Header field offsets. */
enum {
    DTB_TF_OFF_MAGIC = 0,
    DTB_TF_OFF_VERSION = 8,         /* u32 */
    DTB_TF_OFF_HEADER_SIZE = 12,    /* u32 */
    DTB_TF_OFF_VARIANT = 16,        /* char[24], NUL padded */
    DTB_TF_OFF_GAMETYPE = 40,       /* u32 */
    DTB_TF_OFF_METRIC = 44,         /* u32 */
    DTB_TF_OFF_MATERIAL = 48,       /* char[64], NUL padded */
    DTB_TF_OFF_INDEX_VERSION = 112, /* u32 */
    DTB_TF_OFF_VALUE_ENCODING = 116,/* u32 */
    DTB_TF_OFF_POSITIONS = 120,     /* u64 */
    DTB_TF_OFF_BLOCK_POSITIONS = 128, /* u32 */
    DTB_TF_OFF_ZSTD_LEVEL = 132,    /* i32, informational */
    DTB_TF_OFF_BLOCKS = 136,        /* u64 */
    DTB_TF_OFF_DONTCARE_KIND = 144, /* u32 */
    DTB_TF_OFF_FLAGS = 148,         /* u32: DTB_TABLE_* bits (tablefile.h), 0 in a full set */
    DTB_TF_OFF_DONTCARE_COUNT = 152,/* u64 */
    DTB_TF_OFF_TABLE_OFFSET = 160,  /* u64 */
    DTB_TF_OFF_DICT_OFFSET = 168,   /* u64 */
    DTB_TF_OFF_DICT_SIZE = 176,     /* u64 */
    DTB_TF_OFF_DATA_OFFSET = 184,   /* u64 */
    DTB_TF_OFF_FILE_SIZE = 192,     /* u64 */
    DTB_TF_OFF_VALUE_BITS = 200,    /* u32: 1, 2, 4 or 8 bits per stored value */
    DTB_TF_OFF_TILE_COLUMNS = 204,  /* u32: 0 = index order; C >= 2: blocks stored column-major */
    DTB_TF_OFF_LONG_SIZE = 208,     /* u64: bytes of the long list (value encoding 3), else 0 */
    DTB_TF_OFF_LONG_COUNT = 216,    /* u64: its entries, else 0 */
    DTB_TF_OFF_RESERVED = 224,      /* 24 zero bytes, but for a rule-distance table: */
    DTB_TF_OFF_RULES = 224,         /* u8 its rule set's id (core/rules.h), then u8 the limit of
                                       each of its classes (DTB_TF_RULE_CLASSES, 0 after the
                                       last), u8 the late limit, u8 late_after, u8 the count
                                       layers stored (0: one) */
    DTB_TF_OFF_META_HASH = 248,     /* u64 */
};
/* The header flags and don't-care kinds this reader knows (tablefile.h): any other bit is refused. */
#define DTB_TF_KNOWN_FLAGS 13u   /* DTB_TABLE_DERIVED | DTB_TABLE_THREATS | DTB_TABLE_LOSSES */
/* Flag bit 1 of the first compact sets (a derived table kept its promoting positions): refused
 * with its own message, since a remade set is the remedy. */
#define DTB_TF_RETIRED_FLAG_KEEP 2u
#define DTB_TF_KNOWN_DONTCARE 15u /* DTB_DONTCARE_CAPTURES | _DERIVED | _THREATS | _NOT_LOSSES */
#define DTB_TF_VARIANT_LEN 24
#define DTB_TF_MATERIAL_LEN 64
#define DTB_TF_RESERVED_LEN 24

/* Largest block the reader accepts (positions per block): bounds the buffers a corrupt header
 * could make it allocate. */
#define DTB_TF_MAX_BLOCK_POSITIONS (1u << 24)
/* Bytes that len values of the given width pack into (values packed from the low bits up). */
static inline uint64_t dtb_tf_packed_len(uint64_t len, unsigned bits)
{
    return (len * bits + 7) / 8;
}

/* Where the value of position i (index order, 0-based inside a block of len positions) is stored
 * in the block when the file has tile_columns c >= 2: the block's first r = len / c full rows of c
 * positions are stored column by column (position i at (i % c) * r + i / c), the rest (a partial
 * row) after them in order. Periodic tables (a value that depends mostly on i mod c, as with a
 * king rank) then hold long runs. Reader and writer both use this. */
static inline uint64_t dtb_tf_tile_pos(uint64_t i, uint64_t len, uint64_t c)
{
    const uint64_t r = len / c;
    return i < r * c ? (i % c) * r + i / c : i;
}

/* Largest dictionary the reader accepts. */
#define DTB_TF_MAX_DICT_SIZE (1u << 24)

static inline void dtb_tf_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void dtb_tf_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t dtb_tf_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t dtb_tf_get64(const unsigned char *p)
{
    return (uint64_t)dtb_tf_get32(p) | (uint64_t)dtb_tf_get32(p + 4) << 32;
}

/* K*M*vK*M* with at least one piece a side (the material naming of docs/DESIGN.md §3): what the
 * writer accepts and the reader requires. */
static inline int dtb_tf_material_name_ok(const char *s)
{
    for (int side = 0; side < 2; side++) {
        int pieces = 0;
        while (*s == 'K')
            s++, pieces++;
        while (*s == 'M')
            s++, pieces++;
        if (pieces == 0)
            return 0;
        if (side == 0 && *s++ != 'v')
            return 0;
    }
    return *s == 0;
}

/* Fills *e (when not NULL) with "<path>: <problem>", shortening a long path from the left so that
 * the file name and the problem both fit, and returns s. */
dtb_status dtb_tf_file_error(dtb_error *e, dtb_status s, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
