/* Files of an output table set (setfiles.h). */
#include "setfiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

dtb_status dtb_setfiles_make_dir(const char *path, dtb_error *e)
{
    if (mkdir(path, 0777) == 0 || (errno == EEXIST && is_dir(path)))
        return DTB_OK;
    return dtb_sys_error(e, errno, path, "cannot create the directory");
}

bool dtb_setfiles_same_bytes(const char *a, const char *b, int *err)
{
    enum { CHUNK = 1 << 16 };
    *err = 0;
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
        *err = errno;
        return false;
    }
    if (sa.st_size != sb.st_size)
        return false;
    if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
        return true;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    unsigned char *x = malloc(CHUNK), *y = malloc(CHUNK);
    bool same = fa && fb && x && y;
    if (!same)
        *err = !x || !y ? ENOMEM : errno;
    while (same) {
        const size_t n = fread(x, 1, CHUNK, fa), m = fread(y, 1, CHUNK, fb);
        same = n == m && memcmp(x, y, n) == 0;
        if (n < CHUNK) {
            if (ferror(fa) || ferror(fb))
                *err = EIO, same = false;
            break;
        }
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    free(x);
    free(y);
    return same && !*err;
}

dtb_status dtb_setfiles_existing_same(const char *path, const char *candidate, dtb_error *e)
{
    int err;
    if (dtb_setfiles_same_bytes(path, candidate, &err))
        return DTB_OK;
    if (err)
        return dtb_sys_error(e, err, path, "cannot compare with the existing file");
    return dtb_error_set(e, DTB_E_INVALID,
                         "%s exists with other bytes: not overwritten (remove it or choose another "
                         "output directory)",
                         path);
}

dtb_status dtb_setfiles_place(const char *cand, const char *to, bool *unchanged, dtb_error *e)
{
    *unchanged = access(to, F_OK) == 0;
    dtb_status s = DTB_OK;
    if (*unchanged) {
        s = dtb_setfiles_existing_same(to, cand, e);
        unlink(cand);
    } else {
        s = dtb_atomic_rename(cand, to, e);
    }
    return s;
}

dtb_status dtb_setfiles_link(const char *from, const char *to, bool *unchanged, dtb_error *e)
{
    *unchanged = access(to, F_OK) == 0;
    return *unchanged ? dtb_setfiles_existing_same(to, from, e) : dtb_atomic_link(from, to, e);
}
