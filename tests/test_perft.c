/* perft against published counts: every "drop" row of tests/data/perft.txt (all five variants),
 * to a fixed depth per row chosen so that the whole test stays well under a minute in a Debug
 * build with sanitizers. Deeper counts are scripts/bench.sh's business. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

#include "fen.h"
#include "perft.h"

/* Depth checked for each drop row, by variant and FEN as written in the file. Chosen so that each
 * row takes at most a few seconds in the sanitizer build (about 16 s of CPU in all there, 4 s in
 * Release). */
static const struct {
    const char *variant, *fen;
    int depth;
} depths[] = {
    {"international", "W:W31-50:B1-20", 9},
    {"international", "W:B12,13,14,16,18,19,21,23,24,26:W25,27,28,30,32,33,34,35,37,38", 12},
    {"international", "B:BK17,K24:W6,9,10,11,20,21,22,23,30,K31,33,37,41,42,43,44,46", 7},
    {"international", "W:WK31-50:BK1-20", 8},
    {"brazilian", "W:W21-32:B1-12", 10},
    {"russian", "W:W21-32:B1-12", 10},
    {"english", "B:W21-32:B1-12", 10},
    {"canadian", "W:W43-72:B1-30", 8},
};
#define NDEPTHS ((int)(sizeof depths / sizeof depths[0]))

/* The sanitizer build stops a ply earlier (every row still checked, ~6x fewer nodes). */
#ifdef DTB_SANITIZED_BUILD
#define DEPTH_CUT 1
#else
#define DEPTH_CUT 0
#endif

static void drop_rows(void **state)
{
    (void)state;
    FILE *f = fopen(DTB_TEST_DATA "/perft.txt", "r");
    assert_non_null(f);
    bool seen[NDEPTHS] = {false};
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || trim(line)[0] == '\0')
            continue;
        char *field[4];
        field[0] = line;
        for (int i = 1; i < 4; i++) {
            char *bar = strchr(field[i - 1], '|');
            assert_non_null(bar);
            *bar = '\0';
            field[i] = bar + 1;
        }
        const char *variant = trim(field[0]), *fen = trim(field[1]), *convention = trim(field[2]);
        if (strcmp(convention, "drop") != 0)
            continue;
        int k = 0;
        while (k < NDEPTHS && !(strcmp(depths[k].variant, variant) == 0 &&
                                strcmp(depths[k].fen, fen) == 0))
            k++;
        if (k == NDEPTHS)
            fail_msg("no depth chosen for %s %s", variant, fen);
        seen[k] = true;

        const dtb_variant *v = dtb_variant_find(variant);
        assert_non_null(v);
        dtb_board b;
        dtb_board_init(&b, v);
        dtb_pos p;
        dtb_error e = {{0}};
        if (dtb_fen_read(&b, fen, &p, &e) != DTB_OK)
            fail_msg("%s: %s", fen, e.msg);

        char *s = field[3];
        for (int depth = 1; depth <= depths[k].depth - DEPTH_CUT; depth++) {
            char *end;
            const unsigned long long want = strtoull(s, &end, 10);
            if (end == s)
                fail_msg("%s %s: the file has no count for depth %d", variant, fen, depth);
            s = end;
            const uint64_t got = dtb_perft(&b, &p, depth);
            if (got != want)
                fail_msg("%s %s depth %d: %llu, expected %llu", variant, fen, depth,
                         (unsigned long long)got, want);
        }
    }
    fclose(f);
    for (int k = 0; k < NDEPTHS; k++)
        if (!seen[k])
            fail_msg("%s %s: no drop row in perft.txt", depths[k].variant, depths[k].fen);
}

/* Depth 0 is the position itself; a side without moves has no leaves below. */
static void edges(void **state)
{
    (void)state;
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("international"));
    dtb_pos p;
    dtb_pos_start(&b, &p);
    assert_int_equal(dtb_perft(&b, &p, 0), 1);
    dtb_error e;
    assert_int_equal(dtb_fen_read(&b, "W:W46:B37,41", &p, &e), DTB_OK); /* blocked white man */
    assert_int_equal(dtb_perft(&b, &p, 1), 0);
    assert_int_equal(dtb_perft(&b, &p, 3), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drop_rows),
        cmocka_unit_test(edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
