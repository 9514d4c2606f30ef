/* Large zeroed arrays on huge pages where the system offers them. The solver reads its tables
 * (gigabytes) and a large unit's nodes at random: with 4 KiB pages nearly every such read also
 * missed the TLB and walked the page tables. */
#ifndef DTB_HUGEMEM_H
#define DTB_HUGEMEM_H

#include <stddef.h>

/* n zeroed bytes, aligned for any type; NULL when out of memory. Arrays of at least a huge page
 * are mapped on their own and asked to be backed by huge pages (a hint: the system may decline).
 * Release with dtb_huge_free and the same n. */
void *dtb_huge_calloc(size_t n);

/* Releases what dtb_huge_calloc(n) returned; NULL is allowed. */
void dtb_huge_free(void *p, size_t n);

#endif
