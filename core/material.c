/* Material signatures: counting, naming, parsing and the dependency-ordered list. */
#include "material.h"

#include <assert.h>

dtb_material dtb_material_flip(dtb_material m)
{
    const dtb_material f = {{m.kings[1], m.kings[0]}, {m.men[1], m.men[0]}};
    return f;
}

dtb_status dtb_material_name(const dtb_material *m, char *buf, size_t size)
{
    const size_t need = (size_t)dtb_material_pieces(m) + 2; /* pieces, 'v', NUL */
    if (buf == NULL || size < need)
        return DTB_E_OVERFLOW;
    size_t n = 0;
    for (int c = 0; c < 2; c++) {
        if (c == 1)
            buf[n++] = 'v';
        for (int k = 0; k < m->kings[c]; k++)
            buf[n++] = 'K';
        for (int k = 0; k < m->men[c]; k++)
            buf[n++] = 'M';
    }
    buf[n] = '\0';
    return DTB_OK;
}

/* One side: K* then M*, at most 30 pieces (the most any variant starts with). */
static dtb_status parse_side(const char *s, size_t len, const char *name, unsigned char *kings,
                             unsigned char *men, dtb_error *e)
{
    size_t i = 0;
    int k = 0, m = 0;
    while (i < len && s[i] == 'K')
        i++, k++;
    while (i < len && s[i] == 'M')
        i++, m++;
    if (i != len)
        return dtb_error_set(e, DTB_E_INVALID,
                             "material \"%s\": '%c' where K (kings, first) or M (men) was expected",
                             name, s[i]);
    if (k + m == 0)
        return dtb_error_set(e, DTB_E_INVALID, "material \"%s\": each side needs a piece", name);
    if (k + m > 30)
        return dtb_error_set(e, DTB_E_INVALID, "material \"%s\": more than 30 pieces a side", name);
    *kings = (unsigned char)k;
    *men = (unsigned char)m;
    return DTB_OK;
}

dtb_status dtb_material_parse(const char *name, dtb_material *m, dtb_error *e)
{
    if (name == NULL)
        return dtb_error_set(e, DTB_E_INVALID, "no material name");
    const char *v = NULL;
    size_t len = 0;
    for (; name[len]; len++) {
        if (name[len] == 'v') {
            if (v)
                return dtb_error_set(e, DTB_E_INVALID, "material \"%.60s\": more than one 'v'", name);
            v = name + len;
        }
        if (len > DTB_MATERIAL_NAME_MAX)
            return dtb_error_set(e, DTB_E_INVALID, "material name too long");
    }
    if (v == NULL)
        return dtb_error_set(e, DTB_E_INVALID,
                             "material \"%.60s\": no 'v' between the sides (e.g. KMMvK)", name);
    dtb_material r;
    dtb_status s = parse_side(name, (size_t)(v - name), name, &r.kings[DTB_WHITE],
                              &r.men[DTB_WHITE], e);
    if (s == DTB_OK)
        s = parse_side(v + 1, len - (size_t)(v - name) - 1, name, &r.kings[DTB_BLACK],
                       &r.men[DTB_BLACK], e);
    if (s == DTB_OK)
        *m = r;
    return s;
}

/* The list is built group by group: a group is all materials with the same number of pieces and
 * of men, in increasing pieces, then increasing men. A capture lowers the piece count and a
 * promotion (even during a capture) the men count, so both always land in an earlier group;
 * man moves and king moves stay in the material, and black-to-move successors live in the flip,
 * which is in the same group. Within a group, the representative of each flip pair (more white
 * pieces, else more white kings) comes in order of white pieces, white kings, black kings, all
 * decreasing, immediately followed by its flip unless the material is its own flip. */
int dtb_material_list(int max_pieces, dtb_material *out, int cap)
{
    assert(cap == 0 || out != NULL);
    int n = 0;
    for (int pieces = 2; pieces <= max_pieces; pieces++)
        for (int men = 0; men <= pieces; men++)
            for (int wp = pieces - 1; wp >= 1; wp--) {
                const int bp = pieces - wp;
                if (wp < bp)
                    break;
                for (int wk = wp; wk >= 0; wk--)
                    for (int bk = bp; bk >= 0; bk--) {
                        const int wm = wp - wk, bm = bp - bk;
                        if (wm + bm != men)
                            continue;
                        if (wp == bp && wk < bk)
                            continue; /* the flip of a representative already listed */
                        const dtb_material m = {{(unsigned char)wk, (unsigned char)bk},
                                                {(unsigned char)wm, (unsigned char)bm}};
                        if (n < cap)
                            out[n] = m;
                        n++;
                        if (wp == bp && wk == bk)
                            continue; /* its own flip */
                        if (n < cap)
                            out[n] = dtb_material_flip(m);
                        n++;
                    }
            }
    return n;
}
