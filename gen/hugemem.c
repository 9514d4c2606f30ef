/* Huge pages through madvise: transparent huge pages are commonly enabled for madvised memory
 * only, and a mapping must be aligned to 2 MiB for its pages to be huge. So large arrays are
 * mapped with room to align, trimmed to the aligned range, and marked. */
#define _DEFAULT_SOURCE
#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2u << 20 };

static size_t round_up(size_t n) { return (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE; }

void *dtb_huge_calloc(size_t n)
{
    if (n < HUGE_PAGE)
        return calloc(n ? n : 1, 1);
    const size_t len = round_up(n);
    if (len < n || len + HUGE_PAGE < len)
        return NULL;
    uint8_t *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    const uintptr_t at = ((uintptr_t)raw + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    uint8_t *p = (uint8_t *)at;
    const size_t head = (size_t)(p - raw), tail = HUGE_PAGE - head;
    if (head)
        munmap(raw, head);
    if (tail)
        munmap(p + len, tail);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE); /* a hint: without it the pages are small, not wrong */
#endif
    return p; /* anonymous mappings are zeroed */
}

void dtb_huge_free(void *p, size_t n)
{
    if (!p)
        return;
    if (n < HUGE_PAGE)
        free(p);
    else
        munmap(p, round_up(n));
}
