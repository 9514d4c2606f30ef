/* Digests of what table files mean, for tables/MANIFEST: a 64-bit hash that is the same for two
 * files holding the same table however they were encoded.
 *
 * The digest is XXH64 (probe/format/checksum.h), seed 0, of this byte stream:
 *     "dtb-manifest-1" and a NUL                  (the version of this definition)
 *     the variant name, NUL; the material name, NUL
 *     metric, index_version, value_encoding, dontcare_kind, flags   (u32 little-endian each)
 *     positions, dontcare_count                                      (u64 little-endian each)
 *   for a rule table (docs/FORMAT.md §8.6) its rule set's id and its three class limits (u32
 *     each, 0 for an unused class);
 *     one byte per position in index order: its value, or 0 at a don't-care position.
 *   and for DTW tables with distances beyond a byte (a long list, docs/FORMAT.md §8.4):
 *     "long" and a NUL, the number of such entries (u64), then each one's index (u64) and DTW
 *     (u32), by index.
 * A long list's encoding (3) is hashed as 1, and its entries that a byte could hold (a table
 * built with a lowered --dtw-byte-max) as that byte, so tables that fit a byte have the digest
 * they always had, however they were written.
 *
 * A full set's DTW table (neither derived nor with threat don't-cares) is hashed as its losses
 * view, whether it stores every value or its losses only (docs/FORMAT.md §8.7): its header
 * fields as a losses-only file of the table has them (flags DTB_TABLE_LOSSES; dontcare_kind
 * captures | not-losses, or 0 when dontcare_count is 0; dontcare_count its capture positions
 * and its quiet positions that are not lost), and 0 at every capture position and every quiet
 * position that is not lost, whose long-list entries drop out with them. A file that stores
 * every value tells its not-lost positions by its own bytes (and is read twice: their number
 * comes before the values); a losses-only file by the WLD table beside it (<material>.wld, an
 * error when missing), where a quiet loss must hold a loss byte. So the two forms of one table
 * have one digest. The view loses no meaning of a set: a win's DTW follows from the losses of
 * the tables its moves reach (one ply more than the shortest), the draws from the WLD table,
 * which has its own digest.
 * Those are the header fields that say which positions the file numbers and what its bytes
 * mean; the rest of the header (block size, tiling, value_bits, zstd level, dictionary, sizes,
 * checksums) says how they were encoded and is left out, as the compressed bytes are.
 *
 * Why don't-care positions are hashed as 0 and not as the value the reader returns: the writer
 * fills them (gen/tablewrite.h, DTB_FILL_GAP) from their neighbours in *file order within a
 * block*, so a different block size or tiling stores other filler values for the same table.
 * Which positions are don't-care is not stored in the file: it is recomputed here from the
 * header's dontcare_kind with the writer's rules (the side to move can capture; every quiet
 * position of a derived table; the threat rule of probe/format/threat.h), and the number found
 * must equal the header's dontcare_count, so the mask is the one the writer used. Given the
 * header fields the mask is fixed, so writing 0 there loses nothing.
 *
 * Thread-safe: no shared state (each call runs its own OpenMP team). Never prints, never exits. */
#ifndef DTB_MANIFEST_H
#define DTB_MANIFEST_H

#include <stdbool.h>
#include <stdint.h>

#include "position.h" /* dtb_status, dtb_error */

/* Hex digits of a digest as manifest lines show it, and the buffer it takes. */
enum { DTB_MANIFEST_DIGEST_HEX = 16 };

/* The digest of the table file at path into *digest, reading every block (each block's checksum
 * is checked as it is read; a losses-only DTW table's WLD table's too). threads: OpenMP threads,
 * 0 for OpenMP's default.
 * Returns DTB_OK, or the reader's statuses (DTB_E_NOTFOUND, DTB_E_IO, DTB_E_CORRUPT,
 * DTB_E_VERSION), DTB_E_CORRUPT also when the don't-care positions the header announces are not
 * the ones its kind gives (or a losses-only table's WLD table calls a position lost that it does
 * not), DTB_E_NOTFOUND also for a losses-only table without its WLD table, DTB_E_INVALID for a variant or material this build does not know,
 * DTB_E_NOMEM; the message names the file. */
dtb_status dtb_manifest_digest(const char *path, int threads, uint64_t *digest, dtb_error *e);

/* Called by dtb_manifest_dir once per table, in manifest order: the digest and the file's name
 * relative to the directory ("international/KKvK.wld"). Return false to stop (DTB_E_ABORTED). */
typedef bool (*dtb_manifest_line)(void *user, uint64_t digest, const char *relpath);

/* The digests of every table file (*.wld, *.dtw, *.mtc and rule tables: *.fmjd, *.wcdf) in
 * dir/variant/, by file name in byte order
 * (the order of `LC_ALL=C sort`), each given to line. Returns DTB_OK, DTB_E_NOTFOUND when
 * dir/variant/ does not exist or holds no table, DTB_E_ABORTED, or dtb_manifest_digest's
 * statuses for the first file that fails. */
dtb_status dtb_manifest_dir(const char *dir, const char *variant, int threads,
                            dtb_manifest_line line, void *user, dtb_error *e);

#endif
