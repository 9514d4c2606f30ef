/* Files that appear whole or not at all (docs/DESIGN.md §7): the one implementation every writer
 * of dtb uses (table files, stats, compact sets). A file is written under a temporary name next
 * to its final one, synced to disk, renamed over the final name, and the directory synced so that
 * the rename itself survives a crash. A crash at any moment leaves either the old state or the
 * complete new file, plus at most a stray temporary, which readers never take for a table.
 *
 * Usage:
 *     dtb_atomic_file af;
 *     if (dtb_atomic_begin(&af, path, "tmp", e) != DTB_OK) return ...;
 *     s = dtb_atomic_write(&af, bytes, n, e);      or pwrite / pread on af.fd at any offset
 *     s = s == DTB_OK ? dtb_atomic_commit(&af, e) : (dtb_atomic_abort(&af), s);
 * or for a small file in one call: dtb_atomic_write_file(path, bytes, n, e).
 *
 * Every failure is a status (DTB_E_NOSPACE for a full disk or quota, DTB_E_IO otherwise,
 * DTB_E_NOMEM) with "<file>: <what failed>: <system's reason>" in *e, and removes the temporary;
 * the final name is never touched unless the whole file is there. Nothing prints. Thread-safe for
 * distinct files. */
#ifndef DTB_ATOMICFILE_H
#define DTB_ATOMICFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "position.h" /* dtb_status, dtb_error */

typedef struct dtb_atomic_file {
    int fd;     /* the temporary, open for reading and writing; -1 after commit or abort */
    char *path; /* the final name */
    char *tmp;  /* the temporary name: path + "." + suffix */
} dtb_atomic_file;

/* Creates (or truncates) the temporary path.suffix, mode 0644. */
dtb_status dtb_atomic_begin(dtb_atomic_file *af, const char *path, const char *suffix, dtb_error *e);

/* Appends len bytes at the file's current offset, retrying short writes and interruptions. */
dtb_status dtb_atomic_write(dtb_atomic_file *af, const void *data, size_t len, dtb_error *e);

/* Syncs and closes the temporary, renames it to the final name and syncs the directory. On
 * failure the temporary is removed. af holds nothing afterwards either way. */
dtb_status dtb_atomic_commit(dtb_atomic_file *af, dtb_error *e);

/* Syncs and closes the temporary and leaves it in place under its temporary name (for a caller
 * that compares it with an existing file before choosing to rename it with dtb_atomic_rename or
 * remove it). On failure the temporary is removed. */
dtb_status dtb_atomic_finish(dtb_atomic_file *af, dtb_error *e);

/* Closes and removes the temporary; the final name is untouched. NULL-safe, idempotent. */
void dtb_atomic_abort(dtb_atomic_file *af);

/* Gives complete file from the second name to (a hard link: one file, whole from the start)
 * and syncs to's directory. */
dtb_status dtb_atomic_link(const char *from, const char *to, dtb_error *e);

/* Renames a complete, synced file from into to and syncs to's directory. */
dtb_status dtb_atomic_rename(const char *from, const char *to, dtb_error *e);

/* The whole file path holds data[0..len) (through path.tmp). */
dtb_status dtb_atomic_write_file(const char *path, const void *data, size_t len, dtb_error *e);

/* pwrite of all len bytes of buf at offset off of fd (retrying short writes and EINTR); 0 or an
 * errno. */
int dtb_write_all(int fd, const void *buf, size_t len, uint64_t off);

/* The status of a failed system call: DTB_E_NOSPACE for a full disk or quota, else DTB_E_IO,
 * with "<path>: <what>: <strerror(err)>" in *e (e may be NULL). */
dtb_status dtb_sys_error(dtb_error *e, int err, const char *path, const char *what);

#endif
