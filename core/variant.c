/* The rule table. Brazilian and canadian are the international rules on 8x8 and 12x12. */
#include "variant.h"

#include <stddef.h>
#include <string.h>

static const dtb_variant variants[] = {
    /* name            type size rows  fly    back   major  passing algebraic */
    {"international",   20,  10,  4,  true,  true,  true,  false,  false},
    {"english",         21,   8,  3,  false, false, false, false,  false},
    {"russian",         25,   8,  3,  true,  true,  false, true,   true},
    {"brazilian",       26,   8,  3,  true,  true,  true,  false,  true},
    {"canadian",        27,  12,  5,  true,  true,  true,  false,  false},
};

int dtb_variant_count(void) { return (int)(sizeof variants / sizeof variants[0]); }

const dtb_variant *dtb_variant_at(int i)
{
    return i >= 0 && i < dtb_variant_count() ? &variants[i] : NULL;
}

const dtb_variant *dtb_variant_find(const char *name)
{
    for (int i = 0; name && i < dtb_variant_count(); i++)
        if (strcmp(variants[i].name, name) == 0)
            return &variants[i];
    return NULL;
}

const dtb_variant *dtb_variant_by_gametype(int gametype)
{
    for (int i = 0; i < dtb_variant_count(); i++)
        if (variants[i].gametype == gametype)
            return &variants[i];
    return NULL;
}
