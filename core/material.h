/* Material signatures (docs/DESIGN.md §3): piece counts per colour and kind, named white side
 * first, kings then men, 'v' between: "KKMvK". Thread-safe (values only). */
#ifndef DTB_MATERIAL_H
#define DTB_MATERIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "position.h"

typedef struct dtb_material {
    unsigned char kings[2]; /* by dtb_color */
    unsigned char men[2];
} dtb_material;

/* Longest material name with its NUL (30 pieces a side, 'v'). */
#define DTB_MATERIAL_NAME_MAX 64

static inline int dtb_material_pieces(const dtb_material *m)
{
    return m->kings[0] + m->kings[1] + m->men[0] + m->men[1];
}

static inline bool dtb_material_equal(const dtb_material *a, const dtb_material *b)
{
    return a->kings[0] == b->kings[0] && a->kings[1] == b->kings[1] && a->men[0] == b->men[0] &&
           a->men[1] == b->men[1];
}

/* The material of a position. Inline: the solver and the probe count it on every step. */
static inline dtb_material dtb_material_of(const dtb_pos *p)
{
    dtb_material m;
    for (int c = 0; c < 2; c++) {
        m.kings[c] = (unsigned char)dtb_bb_count(p->kings[c]);
        m.men[c] = (unsigned char)dtb_bb_count(p->men[c]);
    }
    return m;
}

/* Colours swapped: the material of the flipped position. */
dtb_material dtb_material_flip(dtb_material m);

/* Writes m's name ("KKMvK") into buf; DTB_E_OVERFLOW when it does not fit. */
dtb_status dtb_material_name(const dtb_material *m, char *buf, size_t size);

/* Parses a name; DTB_E_INVALID with a message for anything but K*M*vK*M* with at least one
 * piece a side. */
dtb_status dtb_material_parse(const char *name, dtb_material *m, dtb_error *e);

/* Every material of 2..max_pieces pieces with at least one piece a side, in dependency order:
 * fewer pieces first; for equal pieces fewer men first; a material and its flip adjacent
 * (the one with more white pieces, or else more white kings, first), so every capture or promotion
 * lands in an earlier material. Writes up to cap entries to out (out may be NULL when cap is 0)
 * and returns how many there are in all. Deterministic. */
int dtb_material_list(int max_pieces, dtb_material *out, int cap);

#endif
