/* Perfect index: bijection, sizes and block structure.
 *
 * Independent checks: positions enumerated by brute force (nested placement of every piece on
 * every legal square) for small materials; sizes of large materials from a region formula
 * written here (men split over the top row, the bottom row and the rows between; kings on what
 * is left), itself checked against totals counted independently; a PRNG of its own for random
 * round trips. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index.h"
#include "splitmix.h"

/* Workload. Optimised builds make 2.5*10^5 random round trips (index -> position -> index; for
 * every tenth also a random position -> index -> position) per 10x10 material of 5..7 pieces:
 * 218 materials, 5.5*10^7 trips, the extreme indexes of each among them. Unoptimised or
 * sanitized builds run 10-30x slower; to keep the suite within its time budget they do 2*10^4
 * per material, and the exhaustive checks of 4-piece materials only on english's board (russian
 * and brazilian share it; the Release build checks all three). */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define RANDOM_TRIPS 250000
#define SAME_BOARD_PIECES 4
#else
#define RANDOM_TRIPS 20000
#define SAME_BOARD_PIECES 3
#endif

/* ---- small helpers written for the test */

static uint64_t rng_state = 0x0123456789ABCDEFull;

static uint64_t rng(void) { return dtb_splitmix64(&rng_state); }

/* Uniform in [0, n) without a division (Lemire's multiply-shift; the bias is below 2^-30). */
static uint64_t rng_below(uint64_t n) { return (uint64_t)(((unsigned __int128)rng() * n) >> 64); }

/* C(n, k), exactly, by the multiplicative formula. */
static uint64_t choose(int n, int k)
{
    if (k < 0 || n < 0 || k > n)
        return 0;
    unsigned __int128 r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (unsigned)(n - k + i) / (unsigned)i;
    return (uint64_t)r;
}

/* Positions of material m on board b: a white men on the rows between the top and the bottom
 * row and wm - a on the bottom row; c black men between and bm - c on the top row; then the
 * kings on any of the squares left. */
static uint64_t size_formula(const dtb_board *b, dtb_material m)
{
    const int S = b->squares, H = b->half, mid = S - 2 * H;
    const int wm = m.men[0], bm = m.men[1], wk = m.kings[0], bk = m.kings[1];
    uint64_t men = 0;
    for (int a = 0; a <= wm; a++)
        for (int c = 0; c <= bm; c++)
            men += choose(H, wm - a) * choose(H, bm - c) * choose(mid, a) * choose(mid - a, c);
    return men * choose(S - wm - bm, wk) * choose(S - wm - bm - wk, bk);
}

static const dtb_board *board_of(const char *variant)
{
    static dtb_board boards[8];
    for (int i = 0; i < dtb_variant_count(); i++)
        if (strcmp(dtb_variant_at(i)->name, variant) == 0) {
            dtb_board_init(&boards[i], dtb_variant_at(i));
            return &boards[i];
        }
    fail_msg("no variant %s", variant);
    return NULL;
}

static dtb_index *make(const dtb_board *b, dtb_material m)
{
    dtb_index *ix = NULL;
    assert_int_equal(dtb_index_create(b, m, &ix), DTB_OK);
    assert_non_null(ix);
    const dtb_material got = dtb_index_material(ix);
    assert_true(dtb_material_equal(&got, &m));
    assert_int_equal(dtb_index_blocks(ix) * dtb_index_block_size(ix), dtb_index_size(ix));
    return ix;
}

static void name_of(dtb_material m, char *buf)
{
    assert_int_equal(dtb_material_name(&m, buf, DTB_MATERIAL_NAME_MAX), DTB_OK);
}

/* A position the index may produce: a legal placement of exactly material m, white to move
 * (the rules of dtb_pos_validate, restated here cheaply for the hot loops). */
static bool legal(const dtb_board *b, const dtb_pos *p, dtb_material m)
{
    const dtb_bb sets[4] = {p->men[0], p->men[1], p->kings[0], p->kings[1]};
    const int counts[4] = {m.men[0], m.men[1], m.kings[0], m.kings[1]};
    dtb_bb seen = 0;
    for (int g = 0; g < 4; g++) {
        if ((sets[g] & seen) || (sets[g] & ~b->all) || dtb_bb_count(sets[g]) != counts[g])
            return false;
        seen |= sets[g];
    }
    return p->side == DTB_WHITE && !(p->men[0] & b->promotion[DTB_WHITE]) &&
           !(p->men[1] & b->promotion[DTB_BLACK]);
}

/* Checks one position against the index: index in range, inverse; with `blocks`, also the
 * block layout (block number, kings rank and their inverses). */
static bool check_position(const dtb_index *ix, const dtb_pos *p, bool blocks)
{
    const uint64_t i = dtb_index_of(ix, p), bs = dtb_index_block_size(ix);
    if (i >= dtb_index_size(ix))
        return false;
    dtb_pos q;
    memset(&q, 0x5A, sizeof q);
    dtb_index_pos(ix, i, &q);
    if (!dtb_pos_equal(&q, p))
        return false;
    if (!blocks)
        return true;
    const dtb_bb men = p->men[0] | p->men[1];
    dtb_bb w = ~(dtb_bb)0, k = ~(dtb_bb)0;
    dtb_index_block_men(ix, i / bs, &w, &k);
    if (w != p->men[0] || k != p->men[1])
        return false;
    dtb_index_kings_at(ix, men, i % bs, &w, &k);
    if (w != p->kings[0] || k != p->kings[1])
        return false;
    return dtb_index_block_of(ix, p->men[0], p->men[1]) == i / bs &&
           dtb_index_kings_of(ix, men, p->kings[0], p->kings[1]) == i % bs;
}

/* ---- exhaustive round trips */

typedef struct enum_ctx {
    const dtb_board *b;
    const dtb_index *ix;
    int count[4]; /* white men, black men, white kings, black kings */
    dtb_pos p;
    uint64_t seen;
    bool blocks; /* check the block layout too */
    bool bad;
    dtb_pos first_bad;
} enum_ctx;

static dtb_bb *group_set(dtb_pos *p, int g)
{
    switch (g) {
    case 0: return &p->men[DTB_WHITE];
    case 1: return &p->men[DTB_BLACK];
    case 2: return &p->kings[DTB_WHITE];
    default: return &p->kings[DTB_BLACK];
    }
}

/* Places the remaining `left` pieces of group g on squares >= from, then the next groups. */
static void place(enum_ctx *c, int g, int left, int from)
{
    if (left == 0) {
        if (g == 3) {
            c->seen++;
            if (!check_position(c->ix, &c->p, c->blocks) && !c->bad) {
                c->bad = true;
                c->first_bad = c->p;
            }
            return;
        }
        place(c, g + 1, c->count[g + 1], 0);
        return;
    }
    dtb_bb *set = group_set(&c->p, g);
    const dtb_bb occupied = dtb_pos_occupied(&c->p);
    for (int sq = from; sq < c->b->squares; sq++) {
        const dtb_bb bit = dtb_bb_bit(sq);
        if (occupied & bit)
            continue;
        if (g == 0 && dtb_board_row(c->b, sq) == 0)
            continue; /* white man on white's promotion row */
        if (g == 1 && dtb_board_row(c->b, sq) == c->b->size - 1)
            continue;
        *set |= bit;
        place(c, g, left - 1, sq + 1);
        *set &= ~bit;
    }
}

static void exhaustive(const dtb_board *b, dtb_material m, bool blocks)
{
    char name[DTB_MATERIAL_NAME_MAX];
    name_of(m, name);
    dtb_index *ix = make(b, m);
    enum_ctx c = {.b = b, .ix = ix, .count = {m.men[0], m.men[1], m.kings[0], m.kings[1]},
                  .blocks = blocks};
    place(&c, 0, c.count[0], 0);
    if (c.bad)
        fail_msg("%s %s: position (wm %llx bm %llx wk %llx bk %llx) does not round-trip",
                 b->variant->name, name, (unsigned long long)c.first_bad.men[0],
                 (unsigned long long)c.first_bad.men[1], (unsigned long long)c.first_bad.kings[0],
                 (unsigned long long)c.first_bad.kings[1]);
    /* Injective on all placements (shown above) and as many indexes as placements: a bijection. */
    if (c.seen != dtb_index_size(ix))
        fail_msg("%s %s: %llu placements, size %llu", b->variant->name, name,
                 (unsigned long long)c.seen, (unsigned long long)dtb_index_size(ix));
    assert_int_equal(size_formula(b, m), c.seen);
    for (uint64_t i = 0; i < dtb_index_size(ix); i++) {
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        if (!legal(b, &p, m) || dtb_index_of(ix, &p) != i)
            fail_msg("%s %s: index %llu does not round-trip", b->variant->name, name,
                     (unsigned long long)i);
    }
    dtb_index_free(ix);
}

/* Every material of 2..max_pieces; the block layout is checked on materials of up to 3. */
static void exhaustive_variant(const char *variant, int max_pieces)
{
    const dtb_board *b = board_of(variant);
    dtb_material list[64];
    const int n = dtb_material_list(max_pieces, list, 64);
    assert_true(n <= 64);
    for (int i = 0; i < n; i++)
        exhaustive(b, list[i], dtb_material_pieces(&list[i]) <= 3);
}

static void test_exhaustive_international(void **state)
{
    (void)state;
    exhaustive_variant("international", 3);
}

static void test_exhaustive_canadian(void **state)
{
    (void)state;
    exhaustive_variant("canadian", 3);
}

static void test_exhaustive_english(void **state)
{
    (void)state;
    exhaustive_variant("english", 4);
}

static void test_exhaustive_russian(void **state)
{
    (void)state;
    exhaustive_variant("russian", SAME_BOARD_PIECES);
}

static void test_exhaustive_brazilian(void **state)
{
    (void)state;
    exhaustive_variant("brazilian", SAME_BOARD_PIECES);
}

/* ---- random round trips on large materials */

static int random_square(const dtb_board *b) { return (int)rng_below((uint64_t)b->squares); }

/* A random legal placement of m (not uniform; any legal placement will do). */
static void random_position(const dtb_board *b, dtb_material m, dtb_pos *p)
{
    *p = (dtb_pos){0};
    const int count[4] = {m.men[0], m.men[1], m.kings[0], m.kings[1]};
    for (int g = 0; g < 4; g++)
        for (int k = 0; k < count[g]; k++) {
            int sq;
            do
                sq = random_square(b);
            while ((dtb_pos_occupied(p) & dtb_bb_bit(sq)) ||
                   (g == 0 && (b->promotion[DTB_WHITE] & dtb_bb_bit(sq))) ||
                   (g == 1 && (b->promotion[DTB_BLACK] & dtb_bb_bit(sq))));
            *group_set(p, g) |= dtb_bb_bit(sq);
        }
}

static void random_trips(const dtb_board *b, dtb_material m, long trips)
{
    char name[DTB_MATERIAL_NAME_MAX];
    name_of(m, name);
    dtb_index *ix = make(b, m);
    const uint64_t size = dtb_index_size(ix);
    for (long t = 0; t < trips; t++) {
        /* index -> position -> index, with the extremes included */
        const uint64_t i = t == 0 ? 0 : t == 1 ? size - 1 : rng_below(size);
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        if (!legal(b, &p, m) || dtb_index_of(ix, &p) != i)
            fail_msg("%s %s: index %llu does not round-trip", b->variant->name, name,
                     (unsigned long long)i);
        /* position -> index -> position, on a tenth as many (random placement is slow) */
        if (t % 10 != 0)
            continue;
        random_position(b, m, &p);
        if (!check_position(ix, &p, true))
            fail_msg("%s %s: a random position does not round-trip (wm %llx bm %llx)",
                     b->variant->name, name, (unsigned long long)p.men[0],
                     (unsigned long long)p.men[1]);
    }
    dtb_index_free(ix);
}

/* Every 10x10 material of exactly n pieces with both sides present. */
static void random_materials(int n)
{
    const dtb_board *b = board_of("international");
    dtb_material list[512];
    const int count = dtb_material_list(n, list, 512);
    int done = 0;
    for (int i = 0; i < count; i++)
        if (dtb_material_pieces(&list[i]) == n) {
            random_trips(b, list[i], RANDOM_TRIPS);
            done++;
        }
    /* sum over a white side of a pieces of (a + 1)(n - a + 1) materials */
    int expect = 0;
    for (int a = 1; a < n; a++)
        expect += (a + 1) * (n - a + 1);
    assert_int_equal(done, expect);
}

static void test_random_5(void **state)
{
    (void)state;
    random_materials(5);
}

static void test_random_6(void **state)
{
    (void)state;
    random_materials(6);
}

static void test_random_7(void **state)
{
    (void)state;
    random_materials(7);
}

/* ---- sizes */

/* Sum of sizes over the materials of exactly n pieces, from the index and from the formula. */
static uint64_t total(const dtb_board *b, int n, bool formula)
{
    dtb_material list[512];
    const int count = dtb_material_list(n, list, 512);
    uint64_t sum = 0;
    for (int i = 0; i < count; i++) {
        if (dtb_material_pieces(&list[i]) != n)
            continue;
        if (formula) {
            sum += size_formula(b, list[i]);
        } else {
            dtb_index *ix = make(b, list[i]);
            sum += dtb_index_size(ix);
            dtb_index_free(ix);
        }
    }
    return sum;
}

static void test_totals(void **state)
{
    (void)state;
    const dtb_board *b = board_of("international");
    /* positions of all materials of n pieces, white to move, counted independently */
    static const struct {
        int n;
        uint64_t total;
    } intl[] = {{2, 8845}, {3, 806300}, {4, 41971200}, {6, 46198758750ull}};
    for (size_t k = 0; k < sizeof intl / sizeof intl[0]; k++) {
        assert_int_equal(total(b, intl[k].n, true), intl[k].total);
        assert_int_equal(total(b, intl[k].n, false), intl[k].total);
    }
    static const char *const eight[] = {"english", "russian", "brazilian"};
    for (int v = 0; v < 3; v++) {
        assert_int_equal(total(board_of(eight[v]), 2, true), 3488);
        assert_int_equal(total(board_of(eight[v]), 2, false), 3488);
    }
}

/* Each material of up to 8 pieces on each variant: size and block counts against the formula. */
static void test_sizes_formula(void **state)
{
    (void)state;
    dtb_material list[512];
    const int count = dtb_material_list(8, list, 512);
    for (int v = 0; v < dtb_variant_count(); v++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(v));
        for (int i = 0; i < count; i++) {
            const dtb_material m = list[i];
            dtb_index *ix = make(&b, m);
            char name[DTB_MATERIAL_NAME_MAX];
            name_of(m, name);
            if (dtb_index_size(ix) != size_formula(&b, m))
                fail_msg("%s %s: size %llu, formula %llu", b.variant->name, name,
                         (unsigned long long)dtb_index_size(ix),
                         (unsigned long long)size_formula(&b, m));
            /* blocks: the formula without kings; block size: kings on the squares left */
            const dtb_material men_only = {{0, 0}, {m.men[0], m.men[1]}};
            const int left = b.squares - m.men[0] - m.men[1];
            assert_int_equal(dtb_index_blocks(ix), size_formula(&b, men_only));
            assert_int_equal(dtb_index_block_size(ix),
                             choose(left, m.kings[0]) * choose(left - m.kings[0], m.kings[1]));
            dtb_index_free(ix);
        }
    }
}

static void test_create_errors(void **state)
{
    (void)state;
    const dtb_board *b = board_of("english");
    dtb_index *ix = (dtb_index *)&ix; /* must be reset to NULL */
    /* 13 white pieces: more than a side starts with */
    assert_int_equal(dtb_index_create(b, (dtb_material){{13, 1}, {0, 0}}, &ix), DTB_E_RANGE);
    assert_null(ix);
    assert_int_equal(dtb_index_create(b, (dtb_material){{0, 1}, {12, 0}}, &ix), DTB_OK);
    dtb_index_free(ix);
    /* 12 + 12 men and 12 kings do not fit 32 squares */
    assert_int_equal(dtb_index_create(b, (dtb_material){{0, 12}, {12, 12}}, &ix), DTB_E_RANGE);
    assert_null(ix);
    dtb_index_free(NULL);
}

/* ---- blocks: a king move stays in the block, a man move leaves it */

static void block_moves(const dtb_board *b, dtb_material m, int positions)
{
    dtb_index *ix = make(b, m);
    const uint64_t bs = dtb_index_block_size(ix);
    for (int t = 0; t < positions; t++) {
        dtb_pos p;
        random_position(b, m, &p);
        const uint64_t i = dtb_index_of(ix, &p);
        const dtb_bb empty = b->all & ~dtb_pos_occupied(&p);
        for (int g = 0; g < 4; g++) {
            const bool man = g < 2;
            dtb_bb pieces = *group_set(&p, g);
            while (pieces) {
                const int from = dtb_bb_pop(&pieces);
                dtb_bb to_set = empty;
                if (man)
                    to_set &= ~b->promotion[g == 0 ? DTB_WHITE : DTB_BLACK];
                while (to_set) {
                    const int to = dtb_bb_pop(&to_set);
                    dtb_pos q = p;
                    *group_set(&q, g) ^= dtb_bb_bit(from) | dtb_bb_bit(to);
                    const uint64_t j = dtb_index_of(ix, &q);
                    assert_true(j < dtb_index_size(ix));
                    if (man)
                        assert_true(j / bs != i / bs); /* a man moved: another block */
                    else
                        assert_true(j / bs == i / bs && j != i); /* a king moved: same block */
                }
            }
        }
        /* A capture or a promotion changes the material itself: the position leaves the
         * index. (Checked here on the material, the only thing the index sees.) */
        if (p.men[0]) {
            dtb_pos q = p;
            const dtb_bb man = q.men[0] & (~q.men[0] + 1);
            q.men[0] ^= man;
            q.kings[0] |= man;
            const dtb_material after = dtb_material_of(&q);
            assert_false(dtb_material_equal(&after, &m));
        }
    }
    dtb_index_free(ix);
}

static void test_block_moves(void **state)
{
    (void)state;
    static const char *const names[] = {"KMMvKM", "MMMvMM", "KKvKM", "KMvM", "KKMvKKM"};
    for (int v = 0; v < dtb_variant_count(); v++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(v));
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(names[k], &m, NULL), DTB_OK);
            block_moves(&b, m, 50);
        }
    }
}

/* Blocks of a material are numbered densely by men placement: walk every block of a small
 * material and check the placements are all different, legal and map back. */
static void test_block_men(void **state)
{
    (void)state;
    const dtb_board *b = board_of("international");
    dtb_material m;
    assert_int_equal(dtb_material_parse("KMMvMM", &m, NULL), DTB_OK);
    dtb_index *ix = make(b, m);
    for (uint64_t blk = 0; blk < dtb_index_blocks(ix); blk++) {
        dtb_bb w, k;
        dtb_index_block_men(ix, blk, &w, &k);
        assert_int_equal(dtb_bb_count(w), 2);
        assert_int_equal(dtb_bb_count(k), 2);
        assert_true((w & k) == 0);
        assert_true((w & b->promotion[DTB_WHITE]) == 0 && (k & b->promotion[DTB_BLACK]) == 0);
        if (dtb_index_block_of(ix, w, k) != blk)
            fail_msg("block %llu does not round-trip", (unsigned long long)blk);
    }
    dtb_index_free(ix);
}

/* The index has a baseline and a popcnt/BMI2 build of its code, picked by the CPU (and forced
 * to the baseline by DTB_INDEX_PORTABLE=1). Both must give the same numbers. */
static void test_portable_code(void **state)
{
    (void)state;
    static const char *const names[] = {"KvK", "MvM", "KMvK", "KMMvKM", "MMMvMM",
                                         "KKKvKK", "KKMvKMM", "MMMMvMMM"};
    for (int v = 0; v < dtb_variant_count(); v++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(v));
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(names[k], &m, NULL), DTB_OK);
            assert_int_equal(setenv("DTB_INDEX_PORTABLE", "1", 1), 0);
            dtb_index *base = make(&b, m);
            assert_int_equal(unsetenv("DTB_INDEX_PORTABLE"), 0);
            dtb_index *cpu = make(&b, m);
            const uint64_t size = dtb_index_size(base);
            assert_int_equal(dtb_index_size(cpu), size);
            for (int t = 0; t < 20000; t++) {
                const uint64_t i = rng_below(size);
                dtb_pos p, q;
                dtb_index_pos(base, i, &p);
                dtb_index_pos(cpu, i, &q);
                assert_true(dtb_pos_equal(&p, &q));
                assert_int_equal(dtb_index_of(base, &p), i);
                random_position(&b, m, &p);
                assert_int_equal(dtb_index_of(base, &p), dtb_index_of(cpu, &p));
                assert_true(check_position(base, &p, true));
            }
            dtb_index_free(base);
            dtb_index_free(cpu);
        }
    }
}

/* The inline index of boards of up to 64 squares (dtb_index_fast_of, the probe's): for random
 * numbers i, the position dtb_index_pos gives for i has number i, also through the flipped form
 * given that position's mirror image; for random positions, the same number as dtb_index_of.
 * Boards of more squares have no inline form. */
static void test_fast_of(void **state)
{
    (void)state;
    static const char *const names[] = {"KvK", "MvM", "KMvK", "MMvK", "KMMvKM", "MMMvMM",
                                         "KKKvKK", "KKMvKMM", "MMMMvMMM", "MMMMMvK", "KKKKvM"};
    for (int v = 0; v < dtb_variant_count(); v++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(v));
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(names[k], &m, NULL), DTB_OK);
            dtb_index *ix = make(&b, m);
            dtb_index_fast f;
            const bool fast = dtb_index_fast_get(ix, &f);
            assert_int_equal(fast, b.squares <= 64);
            if (!fast) {
                dtb_index_free(ix);
                continue;
            }
            const uint64_t size = dtb_index_size(ix);
            for (int t = 0; t < 20000; t++) {
                const uint64_t i = t < 100 ? (uint64_t)t % size : t < 200 ? size - 1 - (uint64_t)(t - 100) % size
                                                                           : rng_below(size);
                dtb_pos p;
                dtb_index_pos(ix, i, &p);
                assert_int_equal(dtb_index_fast_of(&f, (uint64_t)p.men[DTB_WHITE], (uint64_t)p.men[DTB_BLACK],
                                                   (uint64_t)p.kings[DTB_WHITE], (uint64_t)p.kings[DTB_BLACK]),
                                 i);
                /* the flipped form, given the mirror image's sets (dtb_bb_reverse), finds i */
                assert_int_equal(dtb_index_fast_of_flipped(
                                     &f, (uint64_t)dtb_bb_reverse(&b, p.men[DTB_WHITE]),
                                     (uint64_t)dtb_bb_reverse(&b, p.men[DTB_BLACK]),
                                     (uint64_t)dtb_bb_reverse(&b, p.kings[DTB_WHITE]),
                                     (uint64_t)dtb_bb_reverse(&b, p.kings[DTB_BLACK])),
                                 i);
                random_position(&b, m, &p);
                assert_int_equal(dtb_index_fast_of(&f, (uint64_t)p.men[DTB_WHITE], (uint64_t)p.men[DTB_BLACK],
                                                   (uint64_t)p.kings[DTB_WHITE], (uint64_t)p.kings[DTB_BLACK]),
                                 dtb_index_of(ix, &p));
            }
            dtb_index_free(ix);
        }
    }
}

/* Calls check for every board (variant) and every material of names. */
typedef void board_material_check(const dtb_board *b, dtb_material m, const char *name);

static void each_board_material(const char *const *names, size_t n, board_material_check *check)
{
    for (int v = 0; v < dtb_variant_count(); v++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(v));
        for (size_t k = 0; k < n; k++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(names[k], &m, NULL), DTB_OK);
            check(&b, m, names[k]);
        }
    }
}

/* For random positions of m: every white king moved to every square free of men and of the other
 * kings (its own included), ranked by dtb_index_kings_of_moved and by dtb_index_kings_of, in the
 * baseline and in the CPU's code. */
static void check_kings_of_moved(const dtb_board *b, dtb_material m, const char *name)
{
    for (int portable = 0; portable < 2; portable++) {
        if (portable)
            assert_int_equal(setenv("DTB_INDEX_PORTABLE", "1", 1), 0);
        dtb_index *ix = make(b, m);
        assert_int_equal(unsetenv("DTB_INDEX_PORTABLE"), 0);
        for (int t = 0; t < 300; t++) {
            dtb_pos p;
            random_position(b, m, &p);
            const dtb_bb men = p.men[DTB_WHITE] | p.men[DTB_BLACK];
            for (int y = 0; y < b->squares; y++) {
                if (!dtb_bb_has(p.kings[DTB_WHITE], y))
                    continue;
                const dtb_bb rest = p.kings[DTB_WHITE] & ~dtb_bb_bit(y);
                int to[DTB_MAX_SQUARES], n = 0;
                for (int x = 0; x < b->squares; x++)
                    if (!dtb_bb_has(men | rest | p.kings[DTB_BLACK], x))
                        to[n++] = x;
                uint64_t rank[DTB_MAX_SQUARES];
                dtb_index_kings_of_moved(ix, men, rest, p.kings[DTB_BLACK], n, to, rank);
                for (int i = 0; i < n; i++)
                    if (rank[i] != dtb_index_kings_of(ix, men, rest | dtb_bb_bit(to[i]),
                                                      p.kings[DTB_BLACK]))
                        fail_msg("%s %s: king %d moved to %d ranks %llu", b->variant->name, name,
                                 y, to[i], (unsigned long long)rank[i]);
            }
        }
        dtb_index_free(ix);
    }
}

static void test_kings_of_moved(void **state)
{
    (void)state;
    static const char *const names[] = {"KvK", "KvM", "KKvK", "KMvKM", "KKKvKK", "KKMvKMM",
                                         "KKKKvM", "KKKKKvK", "KKKvKKK"};
    each_board_material(names, sizeof names / sizeof names[0], check_kings_of_moved);
}

/* dtb_index_kings_next (and its word form on boards of up to 64 squares) walks a block in rank
 * order: from rank 0, step r gives dtb_index_kings_at of rank r, and the step after the last
 * rank returns false (whole blocks of a few random men placements of m; the largest blocks up to
 * 200000 ranks). */
static void check_kings_next(const dtb_board *b, dtb_material m, const char *name)
{
    dtb_index *ix = make(b, m);
    const uint64_t K = dtb_index_block_size(ix);
    dtb_index_fast f;
    const bool fast = dtb_index_fast_get(ix, &f);
    for (int t = 0; t < 3; t++) {
        dtb_bb wm, bm;
        dtb_index_block_men(ix, rng_below(dtb_index_blocks(ix)), &wm, &bm);
        const dtb_bb men = wm | bm;
        dtb_bb wk, bk;
        dtb_index_kings_at(ix, men, 0, &wk, &bk);
        uint64_t fwk = (uint64_t)wk, fbk = (uint64_t)bk;
        const uint64_t last = K < 200000 ? K - 1 : 200000;
        for (uint64_t r = 1; r <= last; r++) {
            dtb_bb ewk, ebk;
            dtb_index_kings_at(ix, men, r, &ewk, &ebk);
            if (!dtb_index_kings_next(ix, men, &wk, &bk) || wk != ewk || bk != ebk)
                fail_msg("%s %s: step to rank %llu", b->variant->name, name, (unsigned long long)r);
            if (fast && (!dtb_index_fast_kings_next(&f, (uint64_t)men, &fwk, &fbk) ||
                         fwk != (uint64_t)ewk || fbk != (uint64_t)ebk))
                fail_msg("%s %s: word step to rank %llu", b->variant->name, name,
                         (unsigned long long)r);
        }
        if (last == K - 1) {
            const dtb_bb owk = wk, obk = bk;
            assert_false(dtb_index_kings_next(ix, men, &wk, &bk));
            assert_true(wk == owk && bk == obk);
            assert_false(fast && dtb_index_fast_kings_next(&f, (uint64_t)men, &fwk, &fbk));
        }
    }
    dtb_index_free(ix);
}

static void test_kings_next(void **state)
{
    (void)state;
    static const char *const names[] = {"KvK", "KvM", "KKvK", "KMvKM", "KKKvKK", "KKMvKMM",
                                         "KKKKvM", "MMvMM", "KvKKK"};
    each_board_material(names, sizeof names / sizeof names[0], check_kings_next);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* e.g. "test_random_*" */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_totals),
        cmocka_unit_test(test_sizes_formula),
        cmocka_unit_test(test_exhaustive_international),
        cmocka_unit_test(test_exhaustive_canadian),
        cmocka_unit_test(test_exhaustive_english),
        cmocka_unit_test(test_exhaustive_russian),
        cmocka_unit_test(test_exhaustive_brazilian),
        cmocka_unit_test(test_block_men),
        cmocka_unit_test(test_block_moves),
        cmocka_unit_test(test_portable_code),
        cmocka_unit_test(test_fast_of),
        cmocka_unit_test(test_kings_of_moved),
        cmocka_unit_test(test_kings_next),
        cmocka_unit_test(test_random_5),
        cmocka_unit_test(test_random_6),
        cmocka_unit_test(test_random_7),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
