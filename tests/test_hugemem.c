/* Large arrays (gen/hugemem.h): zeroed, aligned, writable to their last byte, on either side of
 * the huge-page size where the allocator changes its path; the expectations are the header's
 * contract. Whether the system backs them with huge pages is not checked: it is a hint the
 * system may decline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hugemem.h"

enum { MIB = 1 << 20 };

static void check_size(size_t n)
{
    uint8_t *p = dtb_huge_calloc(n);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % _Alignof(max_align_t), 0);
    if (n >= 2 * MIB) /* mapped on its own: whole huge pages from its start */
        assert_int_equal((uintptr_t)p % (2 * MIB), 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i += 4093) /* a stride that visits every page */
        nonzero += p[i] != 0;
    if (n)
        nonzero += p[n - 1] != 0;
    assert_int_equal(nonzero, 0);
    if (n) {
        memset(p, 0xA5, n); /* every byte is ours */
        assert_int_equal(p[0], 0xA5);
        assert_int_equal(p[n - 1], 0xA5);
    }
    dtb_huge_free(p, n);
}

static void test_sizes(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 4096, 2 * MIB - 1, 2 * MIB, 2 * MIB + 1, 5 * MIB + 12345, 16 * MIB};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check_size(sizes[i]);
}

/* Freed arrays come back zeroed when asked for again (a reused mapping must not keep old bytes). */
static void test_reuse_is_zeroed(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++)
        check_size(8 * MIB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_reuse_is_zeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
