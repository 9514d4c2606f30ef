/* Draughts rule sets as data (docs/DESIGN.md §3, §5). Code asks a dtb_variant what the rules are;
 * it never compares variant names. */
#ifndef DTB_VARIANT_H
#define DTB_VARIANT_H

#include <stdbool.h>

typedef struct dtb_variant {
    const char *name;          /* "international", ... as used on command lines */
    int gametype;              /* PDN GameType number */
    int board_size;            /* rows = columns: 8, 10 or 12 */
    int start_rows;            /* rows of men per side in the start position */
    bool kings_fly;            /* kings move and capture over any distance */
    bool men_capture_backward; /* men may capture towards their own side */
    bool majority_capture;     /* the sequence taking the most pieces is compulsory */
    bool promote_in_passing;   /* a man reaching the far row mid-capture is a king at once */
    bool algebraic;            /* its players write squares algebraically (c3, captures c3:e5):
                                  core/square_name.h; numbers are read too */
} dtb_variant;

/* Number of variants in dtb_variant_at(). */
int dtb_variant_count(void);

/* The i-th variant, 0 <= i < dtb_variant_count(); international is 0. Thread-safe (static data). */
const dtb_variant *dtb_variant_at(int i);

/* Looks a variant up by name (case-sensitive); NULL when unknown. Thread-safe. */
const dtb_variant *dtb_variant_find(const char *name);

/* Looks a variant up by PDN GameType; NULL when unknown. Thread-safe. */
const dtb_variant *dtb_variant_by_gametype(int gametype);

#endif
