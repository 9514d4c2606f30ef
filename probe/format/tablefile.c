/* Table file reader. Trust nothing: every header field is checked against the others and against
 * the file's real size before it sizes a buffer or an offset; the header, block table and
 * dictionary are checksummed at open; each frame is checksummed before it is decompressed (zstd
 * rejects malformed input, but a flipped bit in a literal would decode "fine" to a wrong value).
 *
 * The open object is immutable: block offsets are a prefix-sum array built at open, reads use
 * pread, and the zstd dictionary (if any) is a ZSTD_DDict, which zstd documents as read-only and
 * shareable between threads. Mutable decoding state lives in the caller's dtb_tablefile_ctx. */
#define _POSIX_C_SOURCE 200809L

#include "tablefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "checksum.h"
#include "tableformat.h"
#include "variant.h"

struct dtb_tablefile {
    int fd;
    char *path;
    dtb_tablefile_info info;
    uint64_t data_offset;
    uint64_t *offsets; /* blocks + 1 entries: absolute file offset of each frame, then the end */
    uint32_t *checks;  /* per-block frame checksum */
    size_t max_frame;  /* largest frame size in the table (sizes the read buffer) */
    ZSTD_DDict *ddict; /* NULL when the file has no dictionary */
    uint64_t *long_idx; /* the long list (info.long_count entries, sorted), NULL if none */
    uint16_t *long_dtw;
};

struct dtb_tablefile_ctx {
    ZSTD_DCtx *dctx;
    unsigned char *buf; /* one frame as read from the file */
    size_t cap;
    unsigned char *packed; /* a decompressed block of packed values (value_bits < 8) */
    size_t packed_cap;
    unsigned char *ordered; /* a tiled block in index order, one value per byte */
    size_t ordered_cap;
    unsigned char *spread; /* the same, one value per byte */
    size_t spread_cap;
};

const char *dtb_metric_name(dtb_metric m)
{
    switch (m) {
    case DTB_METRIC_WLD: return "wld";
    case DTB_METRIC_DTW: return "dtw";
    case DTB_METRIC_MTC: return "mtc";
    case DTB_METRIC_FMJD: return "fmjd";
    case DTB_METRIC_WCDF: return "wcdf";
    case DTB_METRIC_FMJD64: return "fmjd64";
    }
    return NULL;
}

dtb_metric dtb_metric_named(const char *name)
{
    for (dtb_metric m = DTB_METRIC_WLD; dtb_metric_name(m); m = (dtb_metric)(m + 1))
        if (strcmp(name, dtb_metric_name(m)) == 0)
            return m;
    return (dtb_metric)0;
}

/* "<path>: <problem>". When the whole does not fit the message buffer, the path is shortened from
 * the left ("...tail/KKvK.wld") so that the problem and the file name both survive. */
dtb_status dtb_tf_file_error(dtb_error *e, dtb_status s, const char *path, const char *fmt, ...)
{
    if (!e)
        return s;
    char problem[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    const size_t room = sizeof e->msg - 1;
    size_t plen = strlen(problem), flen = strlen(path), n = 0;
    if (plen > room / 2)
        plen = room / 2;
    if (flen + 2 + plen > room) {
        memcpy(e->msg, "...", 3);
        n = 3;
        path += flen - (room - plen - 5);
        flen = room - plen - 5;
    }
    memcpy(e->msg + n, path, flen);
    n += flen;
    memcpy(e->msg + n, ": ", 2);
    n += 2;
    memcpy(e->msg + n, problem, plen);
    e->msg[n + plen] = 0;
    return s;
}

/* Reads exactly len bytes at off. 0 on success; -1 with errno on an I/O error; 1 when the file
 * ends first. */
static int read_full(int fd, void *buf, size_t len, uint64_t off)
{
    unsigned char *p = buf;
    while (len > 0) {
        const ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            return 1;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

static dtb_status read_error(const dtb_tablefile *tf, int rc, const char *what, dtb_error *e)
{
    if (rc < 0)
        return dtb_tf_file_error(e, DTB_E_IO, tf->path, "cannot read %s: %s", what, strerror(errno));
    return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "file ends inside %s (truncated since open?)", what);
}

/* A NUL-padded text field: at least one NUL, nothing but NULs after the first, non-empty. */
static bool text_field(const unsigned char *p, size_t len, char *out)
{
    size_t n = 0;
    while (n < len && p[n])
        n++;
    if (n == 0 || n == len)
        return false;
    for (size_t i = n; i < len; i++)
        if (p[i])
            return false;
    memcpy(out, p, n);
    out[n] = 0;
    return true;
}

/* Whether material name m ("KKvKK") names the same pieces on both sides (its own colour flip). */
static bool is_own_flip(const char *m)
{
    const char *v = strchr(m, 'v');
    return v && strlen(v + 1) == (size_t)(v - m) && strncmp(m, v + 1, (size_t)(v - m)) == 0;
}

void dtb_tablefile_close(dtb_tablefile *tf)
{
    if (!tf)
        return;
    if (tf->fd >= 0)
        close(tf->fd);
    ZSTD_freeDDict(tf->ddict);
    free(tf->long_idx);
    free(tf->long_dtw);
    free(tf->offsets);
    free(tf->checks);
    free(tf->path);
    free(tf);
}

/* Header fields, checked one by one against fixed rules and the real file size. */
static dtb_status parse_header(dtb_tablefile *tf, const unsigned char *h, uint64_t real_size,
                               dtb_error *e)
{
    const char *path = tf->path;
    dtb_tablefile_info *in = &tf->info;
    if (memcmp(h + DTB_TF_OFF_MAGIC, DTB_TF_MAGIC, DTB_TF_MAGIC_LEN) != 0)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "not a dtb table file (bad magic)");
    const uint32_t version = dtb_tf_get32(h + DTB_TF_OFF_VERSION);
    if (version < DTB_TF_VERSION || version > DTB_TF_VERSION_RULES)
        return dtb_tf_file_error(e, DTB_E_VERSION, path,
                          "table format version %u; this build reads versions %u to %u", version,
                          DTB_TF_VERSION, DTB_TF_VERSION_RULES);
    if (dtb_tf_get32(h + DTB_TF_OFF_HEADER_SIZE) != DTB_TF_HEADER_SIZE)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad header size %u",
                          dtb_tf_get32(h + DTB_TF_OFF_HEADER_SIZE));
    const uint64_t file_size = dtb_tf_get64(h + DTB_TF_OFF_FILE_SIZE);
    if (file_size != real_size)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path,
                          real_size < file_size ? "truncated: %llu bytes, header says %llu"
                                                : "%llu bytes, header says %llu (trailing data)",
                          (unsigned long long)real_size, (unsigned long long)file_size);
    in->file_size = file_size;

    if (!text_field(h + DTB_TF_OFF_VARIANT, DTB_TF_VARIANT_LEN, in->variant))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad variant field");
    const dtb_variant *v = dtb_variant_find(in->variant);
    if (!v)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "unknown variant '%s'", in->variant);
    in->gametype = (int)dtb_tf_get32(h + DTB_TF_OFF_GAMETYPE);
    if (in->gametype != v->gametype)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "GameType %d does not match variant %s (%d)",
                          in->gametype, v->name, v->gametype);
    const uint32_t metric = dtb_tf_get32(h + DTB_TF_OFF_METRIC);
    if (!dtb_metric_name((dtb_metric)metric))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "unknown metric %u", metric);
    in->metric = (dtb_metric)metric;
    /* Version 5 is the rule-distance tables' and theirs alone. */
    if (dtb_metric_is_rules(in->metric) != (version == DTB_TF_VERSION_RULES))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "metric %s in a version %u table",
                                 dtb_metric_name(in->metric), version);
    /* Version 4 is the MTC tables' and theirs alone (docs/FORMAT.md §13). */
    if ((metric == DTB_METRIC_MTC) != (version == DTB_TF_VERSION_MTC))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "metric %s in a version %u table",
                                 dtb_metric_name(in->metric), version);
    if (!text_field(h + DTB_TF_OFF_MATERIAL, DTB_TF_MATERIAL_LEN, in->material) ||
        !dtb_tf_material_name_ok(in->material))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad material field");
    in->index_version = dtb_tf_get32(h + DTB_TF_OFF_INDEX_VERSION);
    in->value_encoding = dtb_tf_get32(h + DTB_TF_OFF_VALUE_ENCODING);
    if (in->value_encoding < DTB_ENCODING_DTW || in->value_encoding > DTB_ENCODING_RULES)
        return dtb_tf_file_error(e, DTB_E_VERSION, path,
                                 "value encoding %u is not one this reader knows (a newer dtb wrote it)",
                                 in->value_encoding);
    if ((in->value_encoding == DTB_ENCODING_MTC) != (in->metric == DTB_METRIC_MTC) ||
        (in->value_encoding == DTB_ENCODING_RULES) != dtb_metric_is_rules(in->metric))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "value encoding %u in a %s table",
                                 in->value_encoding, dtb_metric_name(in->metric));
    if (in->value_encoding == DTB_ENCODING_DTW_LONG && in->metric != DTB_METRIC_DTW)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "a long list in a %s table",
                                 dtb_metric_name(in->metric));
    in->long_size = dtb_tf_get64(h + DTB_TF_OFF_LONG_SIZE);
    in->long_count = dtb_tf_get64(h + DTB_TF_OFF_LONG_COUNT);
    if ((in->value_encoding == DTB_ENCODING_DTW_LONG) != (in->long_count > 0) ||
        (in->value_encoding == DTB_ENCODING_DTW_LONG) != (dtb_tf_get32(h + DTB_TF_OFF_VERSION) == DTB_TF_VERSION_LONG) ||
        (in->long_count > 0) != (in->long_size > 0) || in->long_size > file_size)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad long list fields");
    in->positions = dtb_tf_get64(h + DTB_TF_OFF_POSITIONS);
    in->block_positions = dtb_tf_get32(h + DTB_TF_OFF_BLOCK_POSITIONS);
    in->value_bits = dtb_tf_get32(h + DTB_TF_OFF_VALUE_BITS);
    in->tile_columns = dtb_tf_get32(h + DTB_TF_OFF_TILE_COLUMNS);
    in->zstd_level = (int)(int32_t)dtb_tf_get32(h + DTB_TF_OFF_ZSTD_LEVEL);
    in->blocks = dtb_tf_get64(h + DTB_TF_OFF_BLOCKS);
    in->dontcare_kind = dtb_tf_get32(h + DTB_TF_OFF_DONTCARE_KIND);
    in->dontcare_count = dtb_tf_get64(h + DTB_TF_OFF_DONTCARE_COUNT);
    in->dict_size = dtb_tf_get64(h + DTB_TF_OFF_DICT_SIZE);
    const uint64_t table_offset = dtb_tf_get64(h + DTB_TF_OFF_TABLE_OFFSET);
    const uint64_t dict_offset = dtb_tf_get64(h + DTB_TF_OFF_DICT_OFFSET);
    tf->data_offset = dtb_tf_get64(h + DTB_TF_OFF_DATA_OFFSET);

    in->flags = dtb_tf_get32(h + DTB_TF_OFF_FLAGS);
    if ((in->flags & ~(uint32_t)DTB_TF_KNOWN_FLAGS) == DTB_TF_RETIRED_FLAG_KEEP)
        return dtb_tf_file_error(e, DTB_E_VERSION, path,
                                 "early compact set (flag 0x%x): remake it (dtbgen --compact)",
                                 DTB_TF_RETIRED_FLAG_KEEP);
    if (in->flags & ~(uint32_t)DTB_TF_KNOWN_FLAGS)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "unknown flags 0x%x", in->flags);
    if (in->dontcare_kind & ~(uint32_t)DTB_TF_KNOWN_DONTCARE)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "unknown don't-care kind 0x%x",
                                 in->dontcare_kind);
    /* A derived table is answered from its partner: never one that is its own partner, and its
     * derived positions exist only in a derived table. */
    if ((in->dontcare_kind & DTB_DONTCARE_DERIVED) && !(in->flags & DTB_TABLE_DERIVED))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "derived positions in a table that is not derived");
    /* Threat positions hold no value exactly in the tables flagged so (a reader that ignored
     * the kind would read them), and only in stored ones. */
    if (!(in->dontcare_kind & DTB_DONTCARE_THREATS) != !(in->flags & DTB_TABLE_THREATS))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path,
                                 "threat don't-cares and the threats flag disagree");
    if ((in->flags & DTB_TABLE_THREATS) && (in->flags & DTB_TABLE_DERIVED))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "a derived table with threat don't-cares");
    /* Losses only: a DTW table's form, full-set tables only (a derived search through a
     * partner that searches its wins would go round); its not-lost positions hold no value
     * exactly there. */
    if ((in->flags & DTB_TABLE_LOSSES) &&
        (in->metric != DTB_METRIC_DTW || (in->flags & (DTB_TABLE_DERIVED | DTB_TABLE_THREATS))))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "a losses-only table that is not a full set's DTW table");
    if ((in->dontcare_kind & DTB_DONTCARE_NOT_LOSSES) && !(in->flags & DTB_TABLE_LOSSES))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "not-lost don't-cares in a table that stores every value");
    if ((in->flags & DTB_TABLE_DERIVED) && is_own_flip(in->material))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "%s is its own colour flip: it cannot be derived",
                                 in->material);
    /* A rule-distance table names its rule set and limits there (each 1..127: a byte holds
     * them); every other table has none. */
    int reserved_from = 0;
    if (dtb_metric_is_rules(in->metric)) {
        in->rules_id = h[DTB_TF_OFF_RULES];
        if (in->rules_id != dtb_metric_rules_id(in->metric))
            return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "rule set %d in a %s table",
                                     in->rules_id, dtb_metric_name(in->metric));
        for (int c = 0; c < DTB_TF_RULE_CLASSES; c++) { /* the first's, then 0 after the last */
            in->rule_limits[c] = h[DTB_TF_OFF_RULES + 1 + c];
            const bool unused = c > 0 && in->rule_limits[c] == 0;
            if ((!unused && (in->rule_limits[c] < 1 || in->rule_limits[c] > 127)) ||
                (c > 0 && in->rule_limits[c - 1] == 0 && in->rule_limits[c]))
                return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad rule limit %d",
                                         in->rule_limits[c]);
        }
        const unsigned char *late = h + DTB_TF_OFF_RULES + 1 + DTB_TF_RULE_CLASSES;
        in->rule_late_limit = late[0];
        in->rule_late_after = late[1];
        in->rule_layers = late[2] ? late[2] : 1;
        if (in->rule_late_limit > 127 || in->rule_late_after > DTB_TF_RULE_COUNT_MAX ||
            !in->rule_late_limit != !in->rule_late_after ||
            (in->rule_layers != 1 && in->rule_layers != in->rule_late_after + 1))
            return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad rule count fields %d, %d, %d",
                                     late[0], late[1], late[2]);
        reserved_from = DTB_TF_RULE_BYTES;
    }
    for (int i = reserved_from; i < DTB_TF_RESERVED_LEN; i++)
        if (h[DTB_TF_OFF_RESERVED + i])
            return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "reserved header byte %d is not zero",
                              DTB_TF_OFF_RESERVED + i);
    if (in->value_bits != 1 && in->value_bits != 2 && in->value_bits != 4 && in->value_bits != 8)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad value width %u bits", in->value_bits);
    if (in->positions == 0)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "position count is zero");
    if (in->tile_columns == 1 || in->tile_columns > DTB_TF_MAX_BLOCK_POSITIONS)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad tile width %u", in->tile_columns);
    if (in->block_positions == 0 || in->block_positions > DTB_TF_MAX_BLOCK_POSITIONS)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "bad block size %u", in->block_positions);
    if (in->blocks != (in->positions - 1) / in->block_positions + 1)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path,
                          "%llu blocks do not hold %llu positions in blocks of %u",
                          (unsigned long long)in->blocks, (unsigned long long)in->positions,
                          in->block_positions);
    if (in->dontcare_count > in->positions)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "more don't-care positions than positions");
    if (in->dontcare_count > 0 && in->dontcare_kind == 0)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "don't-care positions of no kind");
    if (in->dict_size > DTB_TF_MAX_DICT_SIZE)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path, "dictionary of %llu bytes is too large",
                          (unsigned long long)in->dict_size);
    /* Layout: header, table, dictionary, frames (at least one byte each), trailer. Every sum is
     * compared against a bound first, so nothing overflows. */
    const uint64_t body = file_size - DTB_TF_HEADER_SIZE - DTB_TF_TRAILER_SIZE; /* >= 0: caller */
    if (table_offset != DTB_TF_HEADER_SIZE || in->blocks > body / (DTB_TF_ENTRY_SIZE + 1) ||
        dict_offset != table_offset + in->blocks * DTB_TF_ENTRY_SIZE ||
        tf->data_offset != dict_offset + in->dict_size + in->long_size ||
        tf->data_offset + in->blocks > file_size - DTB_TF_TRAILER_SIZE)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, path,
                          "section offsets do not fit the file (truncated or corrupt)");
    in->data_size = file_size - DTB_TF_TRAILER_SIZE - tf->data_offset;
    return DTB_OK;
}

static dtb_status check_expect(const dtb_tablefile *tf, const dtb_tablefile_expect *x, dtb_error *e)
{
    const dtb_tablefile_info *in = &tf->info;
    if (x->variant && strcmp(x->variant, in->variant) != 0)
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "variant %s, expected %s", in->variant,
                          x->variant);
    if (x->material && strcmp(x->material, in->material) != 0)
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "material %s, expected %s", in->material,
                          x->material);
    if (x->metric && x->metric != in->metric)
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "metric %s, expected %s",
                          dtb_metric_name(in->metric),
                          dtb_metric_name(x->metric) ? dtb_metric_name(x->metric) : "?");
    if (x->index_version && x->index_version != in->index_version)
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "index scheme version %u, expected %u",
                          in->index_version, x->index_version);
    if (x->value_encoding && x->value_encoding != in->value_encoding &&
        !(x->value_encoding == DTB_ENCODING_DTW && in->value_encoding == DTB_ENCODING_DTW_LONG))
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "value encoding %u, expected %u",
                          in->value_encoding, x->value_encoding);
    if (x->positions && x->positions != in->positions)
        return dtb_tf_file_error(e, DTB_E_MISMATCH, tf->path, "%llu positions, expected %llu",
                          (unsigned long long)in->positions, (unsigned long long)x->positions);
    return DTB_OK;
}

/* The long list (docs/FORMAT.md §8.4): one zstd frame of the indexes (u64) then the distances
 * (u16), checked: indexes strictly increasing below positions, distances 1..DTB_MAX_DTW. */
static dtb_status load_long_list(dtb_tablefile *tf, const unsigned char *frame, dtb_error *e)
{
    const dtb_tablefile_info *in = &tf->info;
    if (in->long_count > in->positions)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "long list longer than the table");
    const size_t n = (size_t)in->long_count, raw_len = n * 10;
    unsigned char *raw = malloc(raw_len);
    tf->long_idx = malloc(n * sizeof *tf->long_idx);
    tf->long_dtw = malloc(n * sizeof *tf->long_dtw);
    if (!raw || !tf->long_idx || !tf->long_dtw) {
        free(raw);
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for the long list");
    }
    const size_t got = ZSTD_decompress(raw, raw_len, frame, (size_t)in->long_size);
    if (ZSTD_isError(got) || got != raw_len) {
        free(raw);
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "the long list does not decode");
    }
    for (size_t i = 0; i < n; i++) {
        tf->long_idx[i] = dtb_tf_get64(raw + 8 * i);
        tf->long_dtw[i] = (uint16_t)(raw[8 * n + 2 * i] | raw[8 * n + 2 * i + 1] << 8);
        if (tf->long_idx[i] >= in->positions || (i > 0 && tf->long_idx[i] <= tf->long_idx[i - 1]) ||
            tf->long_dtw[i] == 0 || tf->long_dtw[i] > DTB_MAX_DTW) {
            free(raw);
            return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "bad long list entry %zu", i);
        }
    }
    free(raw);
    return DTB_OK;
}

int dtb_tablefile_long_dtw(const dtb_tablefile *tf, uint64_t idx)
{
    size_t lo = 0, hi = (size_t)tf->info.long_count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (tf->long_idx[mid] < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < tf->info.long_count && tf->long_idx[lo] == idx ? tf->long_dtw[lo] : -1;
}

const uint64_t *dtb_tablefile_long_index(const dtb_tablefile *tf) { return tf->long_idx; }
const uint16_t *dtb_tablefile_long_dtws(const dtb_tablefile *tf) { return tf->long_dtw; }

/* Everything after the header fields: the meta checksum over header, block table and dictionary;
 * the block table turned into offsets; the dictionary; the trailer. */
static dtb_status load_sections(dtb_tablefile *tf, const unsigned char *h, dtb_error *e)
{
    dtb_tablefile_info *in = &tf->info;
    const size_t meta_len = (size_t)(tf->data_offset - DTB_TF_HEADER_SIZE);
    unsigned char *meta = malloc(meta_len ? meta_len : 1);
    tf->offsets = malloc((size_t)(in->blocks + 1) * sizeof *tf->offsets);
    tf->checks = malloc((size_t)in->blocks * sizeof *tf->checks);
    if (!meta || !tf->offsets || !tf->checks) {
        free(meta);
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for the block table");
    }
    int rc = read_full(tf->fd, meta, meta_len, DTB_TF_HEADER_SIZE);
    if (rc) {
        free(meta);
        return read_error(tf, rc, "the block table", e);
    }
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    dtb_hash64_update(&hs, h, DTB_TF_OFF_META_HASH);
    dtb_hash64_update(&hs, meta, meta_len);
    if (dtb_hash64_digest(&hs) != dtb_tf_get64(h + DTB_TF_OFF_META_HASH)) {
        free(meta);
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path,
                          "header/block table checksum mismatch (corrupt file)");
    }
    const size_t bound =
        ZSTD_compressBound((size_t)dtb_tf_packed_len(in->block_positions, in->value_bits));
    uint64_t off = tf->data_offset;
    tf->max_frame = 0;
    for (uint64_t b = 0; b < in->blocks; b++) {
        const unsigned char *ent = meta + b * DTB_TF_ENTRY_SIZE;
        const uint32_t size = dtb_tf_get32(ent);
        if (size == 0 || size > bound) {
            free(meta);
            return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "block %llu has a bad frame size %u",
                              (unsigned long long)b, size);
        }
        tf->offsets[b] = off;
        tf->checks[b] = dtb_tf_get32(ent + 4);
        off += size;
        if (size > tf->max_frame)
            tf->max_frame = size;
    }
    tf->offsets[in->blocks] = off;
    if (off != in->file_size - DTB_TF_TRAILER_SIZE) {
        free(meta);
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path,
                          "frames end at byte %llu, the trailer starts at %llu",
                          (unsigned long long)off,
                          (unsigned long long)(in->file_size - DTB_TF_TRAILER_SIZE));
    }
    if (in->dict_size) {
        tf->ddict = ZSTD_createDDict(meta + in->blocks * DTB_TF_ENTRY_SIZE, (size_t)in->dict_size);
        if (!tf->ddict) {
            free(meta);
            return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "unusable zstd dictionary");
        }
    }
    if (in->long_count) {
        const dtb_status ls = load_long_list(tf, meta + in->blocks * DTB_TF_ENTRY_SIZE + in->dict_size, e);
        if (ls != DTB_OK) {
            free(meta);
            return ls;
        }
    }
    free(meta);

    unsigned char trailer[DTB_TF_TRAILER_SIZE];
    rc = read_full(tf->fd, trailer, sizeof trailer, in->file_size - DTB_TF_TRAILER_SIZE);
    if (rc)
        return read_error(tf, rc, "the trailer", e);
    if (memcmp(trailer + 8, DTB_TF_END_MAGIC, 8) != 0)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "bad end marker (incomplete file)");
    in->file_hash = dtb_tf_get64(trailer);
    return DTB_OK;
}

dtb_status dtb_tablefile_open(const char *path, const dtb_tablefile_expect *expect,
                              dtb_tablefile **out, dtb_error *e)
{
    *out = NULL;
    dtb_tablefile *tf = calloc(1, sizeof *tf);
    if (!tf || !(tf->path = strdup(path))) {
        free(tf);
        return dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
    }
    tf->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (tf->fd < 0) {
        const int err = errno;
        dtb_tablefile_close(tf);
        return dtb_tf_file_error(e, err == ENOENT ? DTB_E_NOTFOUND : DTB_E_IO, path, "cannot open: %s",
                          strerror(err));
    }
    struct stat st;
    if (fstat(tf->fd, &st) != 0) {
        const int err = errno;
        dtb_tablefile_close(tf);
        return dtb_tf_file_error(e, DTB_E_IO, path, "cannot stat: %s", strerror(err));
    }
    dtb_status s = DTB_OK;
    unsigned char h[DTB_TF_HEADER_SIZE];
    if (!S_ISREG(st.st_mode)) {
        s = dtb_tf_file_error(e, DTB_E_IO, path, "not a regular file");
    } else if ((uint64_t)st.st_size < DTB_TF_HEADER_SIZE + DTB_TF_TRAILER_SIZE) {
        s = dtb_tf_file_error(e, DTB_E_CORRUPT, path, "truncated: %llu bytes is less than a header",
                       (unsigned long long)st.st_size);
    } else {
        const int rc = read_full(tf->fd, h, sizeof h, 0);
        if (rc)
            s = read_error(tf, rc, "the header", e);
    }
    if (s == DTB_OK)
        s = parse_header(tf, h, (uint64_t)st.st_size, e);
    if (s == DTB_OK)
        s = load_sections(tf, h, e);
    if (s == DTB_OK && expect)
        s = check_expect(tf, expect, e);
    if (s != DTB_OK) {
        dtb_tablefile_close(tf);
        return s;
    }
    *out = tf;
    return DTB_OK;
}

const dtb_tablefile_info *dtb_tablefile_get_info(const dtb_tablefile *tf) { return &tf->info; }

const char *dtb_tablefile_path(const dtb_tablefile *tf) { return tf->path; }

uint64_t dtb_tablefile_block_len(const dtb_tablefile *tf, uint64_t b)
{
    const uint64_t start = b * tf->info.block_positions;
    const uint64_t left = tf->info.positions - start;
    return left < tf->info.block_positions ? left : tf->info.block_positions;
}

dtb_tablefile_ctx *dtb_tablefile_ctx_create(void)
{
    dtb_tablefile_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx && !(ctx->dctx = ZSTD_createDCtx())) {
        free(ctx);
        ctx = NULL;
    }
    return ctx;
}

void dtb_tablefile_ctx_free(dtb_tablefile_ctx *ctx)
{
    if (!ctx)
        return;
    ZSTD_freeDCtx(ctx->dctx);
    free(ctx->buf);
    free(ctx->packed);
    free(ctx->ordered);
    free(ctx->spread);
    free(ctx);
}

static bool reserve(unsigned char **buf, size_t *cap, size_t n)
{
    if (*cap >= n)
        return true;
    unsigned char *p = realloc(*buf, n);
    if (!p)
        return false;
    *buf = p;
    *cap = n;
    return true;
}

static bool ctx_reserve(dtb_tablefile_ctx *ctx, size_t n)
{
    return reserve(&ctx->buf, &ctx->cap, n);
}

uint64_t dtb_tablefile_packed_len(const dtb_tablefile *tf, uint64_t b)
{
    return dtb_tf_packed_len(dtb_tablefile_block_len(tf, b), tf->info.value_bits);
}

/* Reads block b's frame into ctx->buf and checks its checksum. */
static dtb_status load_frame(const dtb_tablefile *tf, uint64_t b, dtb_tablefile_ctx *ctx,
                             size_t *size, dtb_error *e)
{
    *size = (size_t)(tf->offsets[b + 1] - tf->offsets[b]);
    if (!ctx_reserve(ctx, *size))
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory reading block %llu",
                          (unsigned long long)b);
    const int rc = read_full(tf->fd, ctx->buf, *size, tf->offsets[b]);
    if (rc) {
        char what[48];
        snprintf(what, sizeof what, "block %llu", (unsigned long long)b);
        return read_error(tf, rc, what, e);
    }
    if ((uint32_t)dtb_hash64(ctx->buf, *size, b) != tf->checks[b])
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "checksum mismatch in block %llu",
                          (unsigned long long)b);
    return DTB_OK;
}

static dtb_status decode_frame(const dtb_tablefile *tf, uint64_t b, dtb_tablefile_ctx *ctx,
                               size_t size, uint8_t *out, size_t len, dtb_error *e)
{
    const size_t got =
        tf->ddict ? ZSTD_decompress_usingDDict(ctx->dctx, out, len, ctx->buf, size, tf->ddict)
                  : ZSTD_decompressDCtx(ctx->dctx, out, len, ctx->buf, size);
    if (ZSTD_isError(got))
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "block %llu does not decompress: %s",
                          (unsigned long long)b, ZSTD_getErrorName(got));
    if (got != len)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path,
                          "block %llu decompresses to %zu bytes instead of %zu",
                          (unsigned long long)b, got, len);
    /* The writer zeroes the bits after the last value of a block. */
    const unsigned bits = tf->info.value_bits;
    const uint64_t used = dtb_tablefile_block_len(tf, b) * bits % 8;
    if (used && out[len - 1] >> used)
        return dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "block %llu has stray padding bits",
                                 (unsigned long long)b);
    return DTB_OK;
}

/* Byte x spread to one value per byte, as the little-endian word that memcpy stores: tables for
 * 1 and 2 bits per value (4 bits is two shifts). Generated by macros: no hand-kept numbers. */
#define DTB_S1(x) ((uint64_t)((x) & 1) | (uint64_t)((x) >> 1 & 1) << 8 | (uint64_t)((x) >> 2 & 1) << 16 | \
                   (uint64_t)((x) >> 3 & 1) << 24 | (uint64_t)((x) >> 4 & 1) << 32 |                    \
                   (uint64_t)((x) >> 5 & 1) << 40 | (uint64_t)((x) >> 6 & 1) << 48 |                    \
                   (uint64_t)((x) >> 7 & 1) << 56)
#define DTB_S2(x) ((uint32_t)((x) & 3) | (uint32_t)((x) >> 2 & 3) << 8 | (uint32_t)((x) >> 4 & 3) << 16 | \
                   (uint32_t)((x) >> 6 & 3) << 24)
#define DTB_R4(F, x) F(x), F(x + 1), F(x + 2), F(x + 3)
#define DTB_R16(F, x) DTB_R4(F, x), DTB_R4(F, x + 4), DTB_R4(F, x + 8), DTB_R4(F, x + 12)
#define DTB_R64(F, x) DTB_R16(F, x), DTB_R16(F, x + 16), DTB_R16(F, x + 32), DTB_R16(F, x + 48)
#define DTB_R256(F) DTB_R64(F, 0), DTB_R64(F, 64), DTB_R64(F, 128), DTB_R64(F, 192)
static const uint64_t spread1[256] = {DTB_R256(DTB_S1)};
static const uint32_t spread2[256] = {DTB_R256(DTB_S2)};

/* Spreads n packed values into one byte each: a table lookup and one store per packed byte. */
static void unpack(const uint8_t *packed, unsigned bits, size_t n, uint8_t *out)
{
    size_t i = 0, j = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (bits) {
    case 1:
        for (; i + 8 <= n; i += 8, j++)
            memcpy(out + i, &spread1[packed[j]], 8);
        break;
    case 2:
        for (; i + 4 <= n; i += 4, j++)
            memcpy(out + i, &spread2[packed[j]], 4);
        break;
    case 4:
        for (; i + 2 <= n; i += 2, j++) {
            out[i] = (uint8_t)(packed[j] & 15u);
            out[i + 1] = (uint8_t)(packed[j] >> 4);
        }
        break;
    }
#endif
    for (; i < n; i++)
        out[i] = (uint8_t)dtb_tablefile_packed_get(packed, bits, i);
}

#ifdef __SSE2__
/* Eight columns x eight rows of a tiled block: the eight 8-byte runs of f (one per column, r
 * apart, each eight rows of that column) transposed into eight 8-byte runs of out (one per row,
 * c apart), in three rounds of byte, word and dword interleaving. */
static inline void untile_8x8(const uint8_t *f, size_t r, uint8_t *out, size_t c)
{
    __m128i a[8];
    for (int j = 0; j < 8; j++)
        a[j] = _mm_loadl_epi64((const __m128i *)(const void *)(f + (size_t)j * r));
    const __m128i t0 = _mm_unpacklo_epi8(a[0], a[1]), t1 = _mm_unpacklo_epi8(a[2], a[3]);
    const __m128i t2 = _mm_unpacklo_epi8(a[4], a[5]), t3 = _mm_unpacklo_epi8(a[6], a[7]);
    const __m128i u0 = _mm_unpacklo_epi16(t0, t1), u1 = _mm_unpackhi_epi16(t0, t1);
    const __m128i u2 = _mm_unpacklo_epi16(t2, t3), u3 = _mm_unpackhi_epi16(t2, t3);
    const __m128i v[4] = {_mm_unpacklo_epi32(u0, u2), _mm_unpackhi_epi32(u0, u2),
                          _mm_unpacklo_epi32(u1, u3), _mm_unpackhi_epi32(u1, u3)};
    for (int k = 0; k < 4; k++) { /* v[k] holds rows 2k and 2k + 1 */
        _mm_storel_epi64((__m128i *)(void *)(out + (size_t)(2 * k) * c), v[k]);
        _mm_storel_epi64((__m128i *)(void *)(out + (size_t)(2 * k + 1) * c), _mm_srli_si128(v[k], 8));
    }
}
#endif

/* Undoes the tiling of one block (dtb_tf_tile_pos): f holds its len values in file order, one
 * per byte (column after column, r rows each); out receives them in index order (row after row,
 * c columns each). A byte matrix transpose, eight rows at a time: 8x8 tiles in vector registers
 * where there is SSE2, then the leftover columns one 8-byte load each; then leftover rows. Was
 * 40% of a tiled block's read time with byte stores alone. */
static void untile_bytes(const uint8_t *f, size_t len, size_t c, uint8_t *out)
{
    const size_t r = len / c, full = r * c;
    size_t row = 0;
    for (; row + 8 <= r; row += 8) {
        uint8_t *dst = out + row * c;
        size_t col = 0;
#ifdef __SSE2__
        for (; col + 8 <= c; col += 8)
            untile_8x8(f + col * r + row, r, dst + col, c);
#endif
        for (; col < c; col++) {
            uint8_t x[8];
            memcpy(x, f + col * r + row, 8);
            for (int k = 0; k < 8; k++)
                dst[k * c + col] = x[k];
        }
    }
    for (; row < r; row++)
        for (size_t col = 0; col < c; col++)
            out[row * c + col] = f[col * r + row];
    memcpy(out + full, f + full, len - full);
}

/* Packs len values (one per byte, each below 2^bits) bits each from the low bits up: whole bytes
 * with constant shifts (vectorisable), then the partial last byte. */
static void pack_values(const uint8_t *v, size_t len, unsigned bits, uint8_t *out)
{
    const unsigned per = 8 / bits;
    const size_t whole = len / per;
    switch (bits) {
    case 1:
        for (size_t j = 0; j < whole; j++) {
            const uint8_t *q = v + 8 * j;
            out[j] = (uint8_t)(q[0] | q[1] << 1 | q[2] << 2 | q[3] << 3 | q[4] << 4 | q[5] << 5 |
                               q[6] << 6 | q[7] << 7);
        }
        break;
    case 2:
        for (size_t j = 0; j < whole; j++) {
            const uint8_t *q = v + 4 * j;
            out[j] = (uint8_t)(q[0] | q[1] << 2 | q[2] << 4 | q[3] << 6);
        }
        break;
    case 4:
        for (size_t j = 0; j < whole; j++)
            out[j] = (uint8_t)(v[2 * j] | v[2 * j + 1] << 4);
        break;
    }
    if (whole * per < len) {
        unsigned x = 0;
        for (size_t i = whole * per; i < len; i++)
            x |= (unsigned)v[i] << ((i - whole * per) * bits);
        out[whole] = (uint8_t)x;
    }
}

/* DTB_OK when block b exists and out_size bytes hold it (packed: dtb_tablefile_packed_len, else
 * a byte per value); else the refusal, DTB_E_RANGE or DTB_E_OVERFLOW. */
static dtb_status check_request(const dtb_tablefile *tf, uint64_t b, size_t out_size, bool packed,
                                dtb_error *e)
{
    if (b >= tf->info.blocks)
        return dtb_tf_file_error(e, DTB_E_RANGE, tf->path, "block %llu of %llu requested",
                                 (unsigned long long)b, (unsigned long long)tf->info.blocks);
    const size_t len = (size_t)(packed ? dtb_tablefile_packed_len(tf, b) : dtb_tablefile_block_len(tf, b));
    if (out_size < len)
        return dtb_tf_file_error(e, DTB_E_OVERFLOW, tf->path, "buffer of %zu bytes for a block of %zu",
                                 out_size, len);
    return DTB_OK;
}

/* Block b's stored bytes (packed, in file order) into out (out_size at least the packed length). */
static dtb_status read_stored(const dtb_tablefile *tf, uint64_t b, uint8_t *out, size_t out_size,
                              dtb_tablefile_ctx *ctx, dtb_error *e)
{
    const dtb_status rc = check_request(tf, b, out_size, true, e);
    if (rc != DTB_OK)
        return rc;
    const size_t len = (size_t)dtb_tablefile_packed_len(tf, b);
    size_t size;
    const dtb_status s = load_frame(tf, b, ctx, &size, e);
    return s == DTB_OK ? decode_frame(tf, b, ctx, size, out, len, e) : s;
}

/* Block b in index order, one value per byte, into out (at least the block's length). A tiled
 * block is decoded into ctx->packed, spread to bytes, then gathered back into index order. */
static dtb_status read_values(const dtb_tablefile *tf, uint64_t b, uint8_t *out, size_t out_size,
                              dtb_tablefile_ctx *ctx, dtb_error *e)
{
    const unsigned bits = tf->info.value_bits;
    const uint32_t c = tf->info.tile_columns;
    if (bits == 8 && !c)
        return read_stored(tf, b, out, out_size, ctx, e);
    const dtb_status rc = check_request(tf, b, out_size, false, e);
    if (rc != DTB_OK)
        return rc;
    const size_t len = (size_t)dtb_tablefile_block_len(tf, b);
    const size_t plen = (size_t)dtb_tablefile_packed_len(tf, b);
    if (!reserve(&ctx->packed, &ctx->packed_cap, plen) ||
        (c && !reserve(&ctx->spread, &ctx->spread_cap, len)))
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory reading block %llu",
                                 (unsigned long long)b);
    const dtb_status s = read_stored(tf, b, ctx->packed, plen, ctx, e);
    if (s != DTB_OK)
        return s;
    if (!c) {
        unpack(ctx->packed, bits, len, out);
    } else if (bits == 8) {
        untile_bytes(ctx->packed, len, c, out);
    } else {
        unpack(ctx->packed, bits, len, ctx->spread);
        untile_bytes(ctx->spread, len, c, out);
    }
    return DTB_OK;
}

dtb_status dtb_tablefile_read_packed(const dtb_tablefile *tf, uint64_t b, uint8_t *out,
                                     size_t out_size, dtb_tablefile_ctx *ctx, dtb_error *e)
{
    dtb_tablefile_ctx *own = NULL;
    if (!ctx && !(ctx = own = dtb_tablefile_ctx_create()))
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for a decoding context");
    dtb_status s;
    if (!tf->info.tile_columns) {
        s = read_stored(tf, b, out, out_size, ctx, e);
    } else if ((s = check_request(tf, b, out_size, true, e)) == DTB_OK) {
        /* Index order one value per byte (ctx->ordered), then packed into out. */
        const size_t len = (size_t)dtb_tablefile_block_len(tf, b);
        if (!reserve(&ctx->ordered, &ctx->ordered_cap, len))
            s = dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory reading block %llu",
                                  (unsigned long long)b);
        else if ((s = read_values(tf, b, ctx->ordered, len, ctx, e)) == DTB_OK) {
            if (tf->info.value_bits == 8)
                memcpy(out, ctx->ordered, len);
            else
                pack_values(ctx->ordered, len, tf->info.value_bits, out);
        }
    }
    dtb_tablefile_ctx_free(own);
    return s;
}

dtb_status dtb_tablefile_read_block(const dtb_tablefile *tf, uint64_t b, uint8_t *out,
                                    size_t out_size, dtb_tablefile_ctx *ctx, dtb_error *e)
{
    dtb_tablefile_ctx *own = NULL;
    if (!ctx && !(ctx = own = dtb_tablefile_ctx_create()))
        return dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for a decoding context");
    const dtb_status s = read_values(tf, b, out, out_size, ctx, e);
    dtb_tablefile_ctx_free(own);
    return s;
}

dtb_status dtb_tablefile_verify(const dtb_tablefile *tf, bool decode, dtb_tablefile_progress progress,
                                void *user, dtb_error *e)
{
    const dtb_tablefile_info *in = &tf->info;
    dtb_tablefile_ctx *ctx = dtb_tablefile_ctx_create();
    uint8_t *out = decode ? malloc((size_t)dtb_tf_packed_len(in->block_positions, in->value_bits)) : NULL;
    dtb_status s = DTB_OK;
    if (!ctx || (decode && !out)) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for verification");
        goto done;
    }
    /* One sequential pass: header, table and dictionary, then each frame in file order (frames
     * are contiguous), feeding the whole-file hash and checking each block on the way. */
    dtb_hash64_state hs;
    dtb_hash64_init(&hs, 0);
    const size_t meta_len = (size_t)tf->data_offset;
    if (!ctx_reserve(ctx, meta_len)) {
        s = dtb_tf_file_error(e, DTB_E_NOMEM, tf->path, "out of memory for verification");
        goto done;
    }
    int rc = read_full(tf->fd, ctx->buf, meta_len, 0);
    if (rc) {
        s = read_error(tf, rc, "the header", e);
        goto done;
    }
    dtb_hash64_update(&hs, ctx->buf, meta_len);
    uint64_t next_report = 0;
    for (uint64_t b = 0; b < in->blocks; b++) {
        size_t size;
        if ((s = load_frame(tf, b, ctx, &size, e)) != DTB_OK)
            goto done;
        dtb_hash64_update(&hs, ctx->buf, size);
        if (decode &&
            (s = decode_frame(tf, b, ctx, size, out, (size_t)dtb_tablefile_packed_len(tf, b), e)) !=
                DTB_OK)
            goto done;
        if (progress && tf->offsets[b + 1] >= next_report) {
            if (!progress(user, tf->offsets[b + 1], in->file_size)) {
                s = dtb_tf_file_error(e, DTB_E_ABORTED, tf->path, "verification stopped");
                goto done;
            }
            next_report = tf->offsets[b + 1] + (1u << 20);
        }
    }
    unsigned char trailer[DTB_TF_TRAILER_SIZE];
    rc = read_full(tf->fd, trailer, sizeof trailer, in->file_size - DTB_TF_TRAILER_SIZE);
    if (rc) {
        s = read_error(tf, rc, "the trailer", e);
        goto done;
    }
    if (dtb_tf_get64(trailer) != in->file_hash || memcmp(trailer + 8, DTB_TF_END_MAGIC, 8) != 0) {
        s = dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "trailer changed since open");
        goto done;
    }
    if (dtb_hash64_digest(&hs) != in->file_hash) {
        s = dtb_tf_file_error(e, DTB_E_CORRUPT, tf->path, "whole-file checksum mismatch");
        goto done;
    }
    if (progress && !progress(user, in->file_size, in->file_size))
        s = dtb_tf_file_error(e, DTB_E_ABORTED, tf->path, "verification stopped");
done:
    free(out);
    dtb_tablefile_ctx_free(ctx);
    return s;
}
