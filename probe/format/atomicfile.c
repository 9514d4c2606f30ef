/* Whole-or-nothing files (atomicfile.h). The order is what makes it safe: data synced before the
 * rename (so the new name never points at a file whose blocks are not on disk), the rename (atomic
 * in POSIX), then the directory synced (so the new name survives a power cut). */
#define _POSIX_C_SOURCE 200809L

#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tableformat.h" /* dtb_tf_file_error */

dtb_status dtb_sys_error(dtb_error *e, int err, const char *path, const char *what)
{
    const dtb_status s = err == ENOSPC || err == EDQUOT ? DTB_E_NOSPACE
                         : err == ENOMEM              ? DTB_E_NOMEM
                                                      : DTB_E_IO;
    return dtb_tf_file_error(e, s, path, "%s: %s", what, strerror(err));
}

int dtb_write_all(int fd, const void *buf, size_t len, uint64_t off)
{
    const unsigned char *p = buf;
    while (len > 0) {
        const ssize_t n = pwrite(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* fsync of the directory holding path; 0 or an errno. */
static int sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return ENOMEM;
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return errno;
    int err = fsync(fd) != 0 ? errno : 0;
    if (err == EINVAL) /* file systems that cannot sync a directory: nothing more to do there */
        err = 0;
    close(fd);
    return err;
}

static void release(dtb_atomic_file *af)
{
    free(af->path);
    free(af->tmp);
    af->path = af->tmp = NULL;
    af->fd = -1;
}

dtb_status dtb_atomic_begin(dtb_atomic_file *af, const char *path, const char *suffix, dtb_error *e)
{
    *af = (dtb_atomic_file){.fd = -1};
    af->path = strdup(path);
    af->tmp = malloc(strlen(path) + strlen(suffix) + 2);
    if (!af->path || !af->tmp) {
        release(af);
        return dtb_tf_file_error(e, DTB_E_NOMEM, path, "out of memory");
    }
    strcpy(af->tmp, path);
    strcat(af->tmp, ".");
    strcat(af->tmp, suffix);
    af->fd = open(af->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (af->fd < 0) {
        const dtb_status s = dtb_sys_error(e, errno, af->tmp, "cannot create");
        release(af);
        return s;
    }
    return DTB_OK;
}

dtb_status dtb_atomic_write(dtb_atomic_file *af, const void *data, size_t len, dtb_error *e)
{
    const unsigned char *p = data;
    while (len > 0) {
        const ssize_t n = write(af->fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return dtb_sys_error(e, errno, af->tmp, "cannot write");
        if (n == 0)
            return dtb_sys_error(e, EIO, af->tmp, "cannot write");
        p += n;
        len -= (size_t)n;
    }
    return DTB_OK;
}

dtb_status dtb_atomic_finish(dtb_atomic_file *af, dtb_error *e)
{
    dtb_status s = DTB_OK;
    if (fsync(af->fd) != 0)
        s = dtb_sys_error(e, errno, af->tmp, "cannot sync");
    if (close(af->fd) != 0 && s == DTB_OK)
        s = dtb_sys_error(e, errno, af->tmp, "cannot close");
    af->fd = -1;
    if (s != DTB_OK) {
        unlink(af->tmp);
        release(af);
    }
    return s;
}

dtb_status dtb_atomic_commit(dtb_atomic_file *af, dtb_error *e)
{
    dtb_status s = dtb_atomic_finish(af, e);
    if (s != DTB_OK)
        return s;
    s = dtb_atomic_rename(af->tmp, af->path, e);
    if (s != DTB_OK)
        unlink(af->tmp); /* a failed rename leaves the temporary; a failed sync does not matter */
    release(af);
    return s;
}

void dtb_atomic_abort(dtb_atomic_file *af)
{
    if (!af || !af->tmp)
        return;
    if (af->fd >= 0)
        close(af->fd);
    unlink(af->tmp);
    release(af);
}

dtb_status dtb_atomic_rename(const char *from, const char *to, dtb_error *e)
{
    if (rename(from, to) != 0)
        return dtb_sys_error(e, errno, to, "cannot rename the temporary file into place");
    const int err = sync_dir_of(to);
    return err ? dtb_sys_error(e, err, to, "cannot sync the directory") : DTB_OK;
}

dtb_status dtb_atomic_link(const char *from, const char *to, dtb_error *e)
{
    if (link(from, to) != 0)
        return dtb_sys_error(e, errno, to, errno == EXDEV ? "cannot link across file systems"
                                                          : "cannot link");
    const int err = sync_dir_of(to);
    return err ? dtb_sys_error(e, err, to, "cannot sync the directory") : DTB_OK;
}

dtb_status dtb_atomic_write_file(const char *path, const void *data, size_t len, dtb_error *e)
{
    dtb_atomic_file af;
    dtb_status s = dtb_atomic_begin(&af, path, "tmp", e);
    if (s != DTB_OK)
        return s;
    s = dtb_atomic_write(&af, data, len, e);
    if (s != DTB_OK) {
        dtb_atomic_abort(&af);
        return s;
    }
    return dtb_atomic_commit(&af, e);
}
