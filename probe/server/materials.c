/* GET /api/<variant>/materials (materials.h): dtbgen's STATS lines, trimmed to what a visitor
 * may see. The lines are dtbgen's own JSON, one flat object a line, so a field is found by its
 * quoted name; a line that does not read as expected is left out rather than guessed at. */
#define _POSIX_C_SOURCE 200809L

#include "materials.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_MATERIALS = 4096, LINE = 4096, NAME = 64, FEN = 256 };

/* The number after "key": in line; false when there is none. */
static bool number_field(const char *line, const char *key, long long *out)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(line, pattern);
    if (!p)
        return false;
    char *end;
    *out = strtoll(p + strlen(pattern), &end, 10);
    return end != p + strlen(pattern) && *out >= 0;
}

/* The string after "key": in line into out (size bytes); false when there is none, or it is
 * longer or holds other characters than letters, digits and :,.- (nothing to escape). */
static bool text_field(const char *line, const char *key, char *out, size_t size)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *p = strstr(line, pattern);
    if (!p)
        return false;
    p += strlen(pattern);
    const size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:,.-");
    if (p[n] != '"' || n == 0 || n >= size)
        return false;
    memcpy(out, p, n);
    out[n] = 0;
    return true;
}

static int pieces_of(const char *material)
{
    int n = 0;
    for (const char *c = material; *c; c++)
        n += *c == 'K' || *c == 'M';
    return n;
}

/* Appends the lines of one STATS file, skipping materials already in seen[0..*nseen). */
static void add_file(dtb_text *t, FILE *f, char (*seen)[NAME], int *nseen, const char *variant)
{
    char line[LINE];
    while (fgets(line, sizeof line, f)) {
        char material[NAME], v[NAME], fen[FEN] = "";
        long long positions, wins, draws, losses, captures, longest;
        if (!text_field(line, "material", material, sizeof material) ||
            !text_field(line, "variant", v, sizeof v) || strcmp(v, variant) != 0 ||
            !number_field(line, "positions", &positions) || !number_field(line, "wins", &wins) ||
            !number_field(line, "draws", &draws) || !number_field(line, "losses", &losses) ||
            !number_field(line, "captures", &captures) ||
            !number_field(line, "longest_win", &longest))
            continue;
        bool dup = false;
        for (int i = 0; i < *nseen && !dup; i++)
            dup = strcmp(seen[i], material) == 0;
        if (dup || *nseen >= MAX_MATERIALS)
            continue;
        strcpy(seen[(*nseen)++], material);
        const bool has_fen = longest > 0 && text_field(line, "longest_win_fen", fen, sizeof fen);
        dtb_text_printf(t,
                        "%s{\"material\":\"%s\",\"pieces\":%d,\"positions\":%lld,\"wins\":%lld,"
                        "\"draws\":%lld,\"losses\":%lld,\"captures\":%lld,\"longest_win\":%lld,"
                        "\"longest_win_fen\":",
                        *nseen > 1 ? "," : "", material, pieces_of(material), positions, wins,
                        draws, losses, captures, longest);
        if (has_fen)
            dtb_text_printf(t, "\"%s\"}", fen);
        else
            dtb_text_printf(t, "null}");
    }
}

void dtb_materials_json(dtb_text *t, const char *const *dirs, int ndirs, const char *variant)
{
    char (*seen)[NAME] = malloc(sizeof(char[NAME]) * MAX_MATERIALS);
    int nseen = 0;
    if (!seen) {
        t->failed = true;
        return;
    }
    dtb_text_printf(t, "{\"variant\":\"%s\",\"materials\":[", variant);
    for (int d = 0; d < ndirs; d++)
        for (int sub = 1; sub >= 0; sub--) { /* <dir>/<variant>/STATS, then <dir>/STATS */
            char path[4200];
            if (sub)
                snprintf(path, sizeof path, "%s/%s/STATS", dirs[d], variant);
            else
                snprintf(path, sizeof path, "%s/STATS", dirs[d]);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            add_file(t, f, seen, &nseen, variant);
            fclose(f);
        }
    dtb_text_printf(t, "]}\n");
    free(seen);
}
