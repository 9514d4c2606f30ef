/* Tests of probe/format/atomicfile.h, the one way dtb writes files: whole or not at all, the final
 * name untouched on any failure, no temporary left behind, a full disk reported as such. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "atomicfile.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/dtb_atomic_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* The whole content of path, or "(absent)". */
static const char *content(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    if (!f)
        return "(absent)";
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void test_write_and_replace(void **state)
{
    (void)state;
    char path[128], tmp[140];
    path_of(path, sizeof path, "a.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    dtb_error e = {{0}};
    assert_int_equal(dtb_atomic_write_file(path, "first", 5, &e), DTB_OK);
    assert_string_equal(content(path), "first");
    assert_false(exists(tmp));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    const mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0644 & ~mask); /* an ordinary file, not the tmp's mode */
    assert_int_equal(dtb_atomic_write_file(path, "second!", 7, &e), DTB_OK);
    assert_string_equal(content(path), "second!");
    assert_false(exists(tmp));
    /* Empty files too. */
    assert_int_equal(dtb_atomic_write_file(path, "", 0, &e), DTB_OK);
    assert_string_equal(content(path), "");
}

static void test_abort_keeps_the_old_file(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "b.txt");
    dtb_error e = {{0}};
    assert_int_equal(dtb_atomic_write_file(path, "old", 3, &e), DTB_OK);
    dtb_atomic_file af;
    assert_int_equal(dtb_atomic_begin(&af, path, "tmp", &e), DTB_OK);
    assert_true(af.fd >= 0);
    assert_int_equal(dtb_atomic_write(&af, "new, half written", 17, &e), DTB_OK);
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s", af.tmp);
    assert_true(exists(tmp));
    assert_string_equal(content(path), "old"); /* nothing visible before the commit */
    dtb_atomic_abort(&af);
    dtb_atomic_abort(&af); /* idempotent */
    dtb_atomic_abort(NULL);
    assert_false(exists(tmp));
    assert_string_equal(content(path), "old");
}

/* A full disk: the temporary is a link to /dev/full, where every write fails with ENOSPC. */
static void test_full_disk(void **state)
{
    (void)state;
    char path[128], tmp[140];
    path_of(path, sizeof path, "c.txt");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    dtb_error e = {{0}};
    assert_int_equal(dtb_atomic_write_file(path, "kept", 4, &e), DTB_OK);
    assert_int_equal(symlink("/dev/full", tmp), 0);
    assert_int_equal(dtb_atomic_write_file(path, "lost", 4, &e), DTB_E_NOSPACE);
    assert_non_null(strstr(e.msg, "c.txt.tmp: cannot write: No space left on device"));
    assert_null(strchr(e.msg, '\n'));
    assert_false(exists(tmp));
    assert_string_equal(content(path), "kept");
}

static void test_missing_directory(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "no/such/dir/d.txt");
    dtb_error e = {{0}};
    assert_int_equal(dtb_atomic_write_file(path, "x", 1, &e), DTB_E_IO);
    assert_non_null(strstr(e.msg, "d.txt.tmp: cannot create: No such file or directory"));
}

/* A rename that fails (the final name is a non-empty directory): the temporary is removed and
 * the directory is untouched. */
static void test_rename_fails(void **state)
{
    (void)state;
    char path[128], inner[160], tmp[140];
    path_of(path, sizeof path, "e.txt");
    snprintf(inner, sizeof inner, "%s/inside", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(mkdir(path, 0755), 0);
    dtb_error e = {{0}};
    assert_int_equal(dtb_atomic_write_file(inner, "in", 2, &e), DTB_OK);
    const dtb_status s = dtb_atomic_write_file(path, "file", 4, &e);
    assert_int_equal(s, DTB_E_IO);
    assert_non_null(strstr(e.msg, "cannot rename"));
    assert_false(exists(tmp));
    assert_string_equal(content(inner), "in");
}

/* finish leaves the synced temporary for the caller to compare and rename. */
static void test_finish_then_rename(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "f.txt");
    dtb_error e = {{0}};
    dtb_atomic_file af;
    assert_int_equal(dtb_atomic_begin(&af, path, "new", &e), DTB_OK);
    assert_non_null(strstr(af.tmp, "f.txt.new"));
    assert_int_equal(dtb_atomic_write(&af, "candidate", 9, &e), DTB_OK);
    assert_int_equal(dtb_atomic_finish(&af, &e), DTB_OK);
    assert_int_equal(af.fd, -1);
    assert_string_equal(content(af.tmp), "candidate");
    assert_false(exists(path));
    assert_int_equal(dtb_atomic_rename(af.tmp, path, &e), DTB_OK);
    assert_string_equal(content(path), "candidate");
    assert_false(exists(af.tmp));
    dtb_atomic_abort(&af); /* frees the names; the temporary is gone already */
    assert_string_equal(content(path), "candidate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_replace),
        cmocka_unit_test(test_abort_keeps_the_old_file),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_missing_directory),
        cmocka_unit_test(test_rename_fails),
        cmocka_unit_test(test_finish_then_rename),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
