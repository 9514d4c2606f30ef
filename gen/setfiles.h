/* Files of an output table set made from another set (gen/compact.c, gen/convert.c): never
 * overwritten, appearing whole or not at all. Never prints, never exits. */
#ifndef DTB_SETFILES_H
#define DTB_SETFILES_H

#include <stdbool.h>

#include "position.h"

/* Makes directory path, or accepts it when it exists. */
dtb_status dtb_setfiles_make_dir(const char *path, dtb_error *e);

/* Whether files a and b hold the same bytes; 0 or an errno in *err. */
bool dtb_setfiles_same_bytes(const char *a, const char *b, int *err);

/* For an output file that exists already: DTB_OK when it holds the bytes of candidate (the file
 * this run made instead), else the refusal to overwrite it. */
dtb_status dtb_setfiles_existing_same(const char *path, const char *candidate, dtb_error *e);

/* Puts complete candidate file cand in place at to, or, when to exists, checks that it holds
 * the same bytes (*unchanged) and removes cand. */
dtb_status dtb_setfiles_place(const char *cand, const char *to, bool *unchanged, dtb_error *e);

/* Hard-links from to to (and syncs to's directory), or, when to exists, checks that it is
 * from or holds its bytes (*unchanged). Tables are never changed in place, so a link shares
 * them safely. */
dtb_status dtb_setfiles_link(const char *from, const char *to, bool *unchanged, dtb_error *e);

#endif
