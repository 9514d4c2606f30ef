/* Work files: the solved values a build cannot keep in its memory budget, on disk and mapped
 * (docs/DESIGN.md §4). A work file is scratch: it is unlinked as soon as it is created (only the
 * mapping holds it), so it never outlives the process, a kill -9 included, and a rerun rebuilds
 * what it needs from the finished tables. Its blocks are allocated at once, so a full disk is a
 * status when the file is made, never a SIGBUS on a later write.
 *
 * Pages of a mapping that the process has touched count in its resident memory until released:
 * dtb_work_release drops them from the process (their contents stay in the file and, while the
 * system has room, in its page cache), and a monitor thread does so whenever the resident memory
 * passes a cap, so a build stays within its budget whatever its tables' sizes. Releasing is safe
 * while other threads read and write the mapping: their next access maps the page again, with
 * its latest contents. Nothing here prints. */
#ifndef DTB_WORKFILE_H
#define DTB_WORKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "position.h" /* dtb_status, dtb_error */

/* len zeroed bytes backed by a new work file in dir (name is for messages). NULL with a status
 * in *e: DTB_E_NOSPACE when the disk cannot hold it, DTB_E_IO (dir missing, ...), DTB_E_NOMEM. */
void *dtb_work_map(const char *dir, const char *name, size_t len, dtb_status *status,
                   dtb_error *e);

/* An unlinked scratch file in dir, open for reading and writing (name: for messages); -1 with a
 * status in *e as dtb_work_map's. */
int dtb_work_scratch(const char *dir, const char *name, dtb_status *status, dtb_error *e);

/* A sparse work file of len bytes in dir, mapped: no disk is taken until dtb_work_reserve asks
 * for a range (a write to a range not reserved may fault when the disk is full: reserve first).
 * Its descriptor goes to *fd (for reserve and punch; close it after dtb_work_unmap). NULL as
 * dtb_work_map. For a pair solved in slices, whose values are live a few levels at a time. */
void *dtb_work_map_sparse(const char *dir, const char *name, size_t len, int *fd,
                          dtb_status *status, dtb_error *e);

/* Takes the disk of bytes off..off+len-1 of a sparse work file (name: for messages).
 * DTB_E_NOSPACE when the disk cannot hold them. */
dtb_status dtb_work_reserve(int fd, const char *name, uint64_t off, uint64_t len, dtb_error *e);

/* Gives back the memory of the whole pages inside bytes off..off+len-1 of private anonymous
 * memory at p (they read as zeros afterwards). */
void dtb_work_drop_pages(void *p, uint64_t off, uint64_t len);

/* Gives back the disk and the memory of the whole pages inside bytes off..off+len-1 of a sparse
 * work file mapped at p (they read as zeros afterwards). */
void dtb_work_punch(int fd, void *p, uint64_t off, uint64_t len);

/* Unmaps what dtb_work_map returned (its file goes with it); NULL is allowed. */
void dtb_work_unmap(void *p, size_t len);

/* Drops the mapping's resident pages from the process (see above). */
void dtb_work_release(void *p, size_t len);

/* Bytes the process has resident now, and of them those backed by files (work files among
 * them); 0 when the system does not say (/proc/self/statm). */
void dtb_work_resident(uint64_t *total, uint64_t *file_backed);

/* Bytes read from and written to storage by the process so far (/proc/self/io; 0 when the
 * system does not say). For progress reports. */
void dtb_work_io(uint64_t *read_bytes, uint64_t *write_bytes);

/* A thread that, every few milliseconds, calls release(user) when the process's resident memory
 * exceeds cap and enough of it is file-backed to be worth releasing. */
typedef struct dtb_work_monitor dtb_work_monitor;
dtb_work_monitor *dtb_work_monitor_start(uint64_t cap, void (*release)(void *user), void *user);
/* How many times m released so far (0 for NULL). Thread-safe. */
uint64_t dtb_work_monitor_releases(const dtb_work_monitor *m);
/* Stops and frees the monitor (NULL allowed); returns how many times it released. */
uint64_t dtb_work_monitor_stop(dtb_work_monitor *m);

#endif
