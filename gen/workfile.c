/* Work files and the residency monitor (workfile.h). */
#define _GNU_SOURCE /* O_TMPFILE */

#include "workfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* An unlinked file in dir: O_TMPFILE where the file system has it, else a named file removed at
 * once. */
static int anonymous_file(const char *dir)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
#endif
    char path[4200];
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(path, sizeof path, "%s/.dtb-work-%ld-%d", dir, (long)getpid(), attempt);
        const int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            unlink(path);
            return fd;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* The status of a failed call on a work file: a full disk, a quota or a file size limit (EFBIG:
 * ulimit -f, a disk that is full for this process) is DTB_E_NOSPACE. */
static dtb_status status_of(int err)
{
    return err == ENOSPC || err == EDQUOT || err == EFBIG ? DTB_E_NOSPACE
           : err == ENOMEM                                ? DTB_E_NOMEM
                                                          : DTB_E_IO;
}

void *dtb_work_map(const char *dir, const char *name, size_t len, dtb_status *status,
                   dtb_error *e)
{
    const size_t n = len ? len : 1;
    const int fd = anonymous_file(dir);
    if (fd < 0) {
        const int err = errno;
        *status = dtb_error_set(e, status_of(err), "%s: cannot make a work file in %s: %s", name,
                                dir, strerror(err));
        return NULL;
    }
    /* Every block now: a full disk shows here, not as a fault on a later write. */
    const int err = posix_fallocate(fd, 0, (off_t)n);
    if (err) {
        close(fd);
        *status = dtb_error_set(e, status_of(err),
                                "%s: cannot reserve %zu bytes of work file in %s: %s", name, n,
                                dir, strerror(err));
        return NULL;
    }
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int merr = errno;
    close(fd); /* the mapping keeps the file */
    if (p == MAP_FAILED) {
        *status = dtb_error_set(e, merr == ENOMEM ? DTB_E_NOMEM : DTB_E_IO,
                                "%s: cannot map its work file: %s", name, strerror(merr));
        return NULL;
    }
    *status = DTB_OK;
    return p;
}

int dtb_work_scratch(const char *dir, const char *name, dtb_status *status, dtb_error *e)
{
    const int fd = anonymous_file(dir);
    const int err = errno;
    *status = fd >= 0 ? DTB_OK
                      : dtb_error_set(e, status_of(err), "%s: cannot make a scratch file in %s: %s",
                                      name, dir, strerror(err));
    return fd;
}

void *dtb_work_map_sparse(const char *dir, const char *name, size_t len, int *fd,
                          dtb_status *status, dtb_error *e)
{
    const size_t n = len ? len : 1;
    *fd = anonymous_file(dir);
    int err = *fd < 0 ? errno : ftruncate(*fd, (off_t)n) ? errno : 0;
    void *p = err ? MAP_FAILED : mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (!err && p == MAP_FAILED)
        err = errno;
    if (err) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        *status = dtb_error_set(e, status_of(err), "%s: cannot make a work file in %s: %s", name,
                                dir, strerror(err));
        return NULL;
    }
    *status = DTB_OK;
    return p;
}

dtb_status dtb_work_reserve(int fd, const char *name, uint64_t off, uint64_t len, dtb_error *e)
{
    const int err = len ? posix_fallocate(fd, (off_t)off, (off_t)len) : 0;
    if (!err)
        return DTB_OK;
    return dtb_error_set(e, status_of(err), "%s: cannot reserve %llu bytes of work file: %s", name,
                         (unsigned long long)len, strerror(err));
}

/* The whole pages inside bytes off..off+len-1: [*first, *end); false when there is none. */
static bool whole_pages(uint64_t off, uint64_t len, uint64_t *first, uint64_t *end)
{
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    *first = (off + page - 1) / page * page;
    *end = (off + len) / page * page;
    return *end > *first;
}

void dtb_work_drop_pages(void *p, uint64_t off, uint64_t len)
{
    uint64_t first, end;
    if (whole_pages(off, len, &first, &end))
        (void)madvise((uint8_t *)p + first, end - first, MADV_DONTNEED);
}

void dtb_work_punch(int fd, void *p, uint64_t off, uint64_t len)
{
    uint64_t first, end;
    if (!whole_pages(off, len, &first, &end))
        return;
    /* Dropping the pages first keeps the mapping from writing them back; the hole frees the
     * disk (a file system without holes keeps it: a cost, never a wrong value). */
    (void)madvise((uint8_t *)p + first, end - first, MADV_DONTNEED);
    (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)first, (off_t)(end - first));
}

void dtb_work_unmap(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}

void dtb_work_release(void *p, size_t len)
{
    if (p)
        (void)madvise(p, len ? len : 1, MADV_DONTNEED); /* shared file mapping: nothing is lost */
}

void dtb_work_resident(uint64_t *total, uint64_t *file_backed)
{
    *total = *file_backed = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return;
    unsigned long long size, resident, shared;
    if (fscanf(f, "%llu %llu %llu", &size, &resident, &shared) == 3) {
        const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        *total = resident * page;
        *file_backed = shared * page;
    }
    fclose(f);
}

void dtb_work_io(uint64_t *read_bytes, uint64_t *write_bytes)
{
    *read_bytes = *write_bytes = 0;
    FILE *f = fopen("/proc/self/io", "r");
    if (!f)
        return;
    char key[64];
    unsigned long long v;
    while (fscanf(f, "%63s %llu", key, &v) == 2) {
        if (strcmp(key, "read_bytes:") == 0)
            *read_bytes = v;
        else if (strcmp(key, "write_bytes:") == 0)
            *write_bytes = v;
    }
    fclose(f);
}

struct dtb_work_monitor {
    pthread_t thread;
    uint64_t cap;
    void (*release)(void *user);
    void *user;
    atomic_bool stop;
    atomic_uint_fast64_t releases;
};

/* Releasing costs the next accesses a minor fault per page; below this much file-backed memory
 * it would gain too little to be worth it (and anonymous memory cannot be released). */
#define WORTH_RELEASING ((uint64_t)8 << 20)

static void *watch(void *arg)
{
    dtb_work_monitor *m = arg;
    const struct timespec tick = {0, 5 * 1000 * 1000}; /* 5 ms */
    while (!atomic_load_explicit(&m->stop, memory_order_relaxed)) {
        uint64_t total, file;
        dtb_work_resident(&total, &file);
        if (total > m->cap && file > WORTH_RELEASING) {
            m->release(m->user);
            atomic_fetch_add_explicit(&m->releases, 1, memory_order_relaxed);
        }
        nanosleep(&tick, NULL);
    }
    return NULL;
}

dtb_work_monitor *dtb_work_monitor_start(uint64_t cap, void (*release)(void *user), void *user)
{
    dtb_work_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cap = cap;
    m->release = release;
    m->user = user;
    atomic_init(&m->stop, false);
    atomic_init(&m->releases, 0);
    if (pthread_create(&m->thread, NULL, watch, m) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

uint64_t dtb_work_monitor_releases(const dtb_work_monitor *m)
{
    return m ? atomic_load_explicit(&m->releases, memory_order_relaxed) : 0;
}

uint64_t dtb_work_monitor_stop(dtb_work_monitor *m)
{
    if (!m)
        return 0;
    atomic_store(&m->stop, true);
    pthread_join(m->thread, NULL);
    const uint64_t n = atomic_load(&m->releases);
    free(m);
    return n;
}
