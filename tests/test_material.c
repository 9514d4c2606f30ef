/* Material signatures: names, parsing, flip, and the dependency-ordered list.
 * Expected values come from docs/DESIGN.md §3 (naming), from counting by hand (list sizes: a side of
 * p pieces splits into p + 1 king/man mixes) and from enumerating every move effect (a capture
 * removes any non-empty set of the opponent's pieces, the moving man may promote). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "material.h"

static dtb_material mat(int wk, int wm, int bk, int bm)
{
    const dtb_material m = {{(unsigned char)wk, (unsigned char)bk},
                            {(unsigned char)wm, (unsigned char)bm}};
    return m;
}

static void test_names(void **state)
{
    (void)state;
    char buf[DTB_MATERIAL_NAME_MAX];
    const dtb_material m = mat(2, 1, 1, 0);
    assert_int_equal(dtb_material_name(&m, buf, sizeof buf), DTB_OK);
    assert_string_equal(buf, "KKMvK");
    const dtb_material m2 = mat(1, 2, 1, 0);
    assert_int_equal(dtb_material_name(&m2, buf, sizeof buf), DTB_OK);
    assert_string_equal(buf, "KMMvK");
    const dtb_material m3 = mat(0, 3, 0, 1);
    assert_int_equal(dtb_material_name(&m3, buf, sizeof buf), DTB_OK);
    assert_string_equal(buf, "MMMvM");
    const dtb_material m4 = mat(1, 0, 2, 2);
    assert_int_equal(dtb_material_name(&m4, buf, sizeof buf), DTB_OK);
    assert_string_equal(buf, "KvKKMM");

    /* "KKMvK" needs 6 bytes with its NUL. */
    assert_int_equal(dtb_material_name(&m, buf, 6), DTB_OK);
    assert_int_equal(dtb_material_name(&m, buf, 5), DTB_E_OVERFLOW);
    assert_int_equal(dtb_material_name(&m, NULL, 0), DTB_E_OVERFLOW);

    /* The longest possible name fits the documented maximum. */
    const dtb_material big = mat(15, 15, 15, 15);
    assert_int_equal(dtb_material_name(&big, buf, sizeof buf), DTB_OK);
    assert_int_equal(strlen(buf), 61);
}

static void test_parse(void **state)
{
    (void)state;
    dtb_material m;
    dtb_error e;
    assert_int_equal(dtb_material_parse("KKMvK", &m, &e), DTB_OK);
    assert_true(dtb_material_equal(&m, &(dtb_material){{2, 1}, {1, 0}}));
    assert_int_equal(dtb_material_parse("MvKKMM", &m, &e), DTB_OK);
    assert_true(dtb_material_equal(&m, &(dtb_material){{0, 2}, {1, 2}}));
    assert_int_equal(dtb_material_parse("KvK", &m, &e), DTB_OK);
    assert_true(dtb_material_equal(&m, &(dtb_material){{1, 1}, {0, 0}}));

    static const char *const bad[] = {
        "", "KvK v", "KMK", "MKvK", "KvMK", "vK", "Kv", "v", "KvvK", "KxvK", "kvk", "KVK",
        " KvK", "KvK ", "KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKvK",
        "KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKvK",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const dtb_material before = {{7, 7}, {7, 7}};
        m = before;
        e.msg[0] = '\0';
        if (dtb_material_parse(bad[i], &m, &e) != DTB_E_INVALID)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_true(strlen(e.msg) > 0);
        assert_true(dtb_material_equal(&m, &before)); /* untouched on failure */
    }
    assert_int_equal(dtb_material_parse(NULL, &m, &e), DTB_E_INVALID);
    assert_int_equal(dtb_material_parse("KvM", &m, NULL), DTB_OK); /* e may be NULL */
    assert_int_equal(dtb_material_parse("KvX", &m, NULL), DTB_E_INVALID);

    /* 30 pieces a side is the most any variant starts with. */
    char name[DTB_MATERIAL_NAME_MAX];
    memset(name, 'K', 30);
    strcpy(name + 30, "vM");
    assert_int_equal(dtb_material_parse(name, &m, &e), DTB_OK);
    assert_int_equal(m.kings[DTB_WHITE], 30);
}

static void test_flip_and_of(void **state)
{
    (void)state;
    const dtb_material m = mat(2, 1, 1, 0);
    const dtb_material f = dtb_material_flip(m);
    assert_true(dtb_material_equal(&f, &(dtb_material){{1, 2}, {0, 1}})); /* KvKKM */
    const dtb_material ff = dtb_material_flip(f);
    assert_true(dtb_material_equal(&ff, &m));
    assert_int_equal(dtb_material_pieces(&m), 4);

    dtb_pos p = {0};
    p.men[DTB_WHITE] = dtb_bb_bit(31) | dtb_bb_bit(32);
    p.kings[DTB_WHITE] = dtb_bb_bit(49);
    p.kings[DTB_BLACK] = dtb_bb_bit(0) | dtb_bb_bit(60) | dtb_bb_bit(70);
    p.men[DTB_BLACK] = dtb_bb_bit(5);
    const dtb_material pm = dtb_material_of(&p);
    assert_true(dtb_material_equal(&pm, &(dtb_material){{1, 3}, {2, 1}}));
}

/* Materials of exactly n pieces, both sides present: sum over a white side of a pieces of
 * (a + 1)(n - a + 1). */
static int count_formula(int max_pieces)
{
    int total = 0;
    for (int n = 2; n <= max_pieces; n++)
        for (int a = 1; a < n; a++)
            total += (a + 1) * (n - a + 1);
    return total;
}

static int position_in(const dtb_material *list, int n, dtb_material m)
{
    for (int i = 0; i < n; i++)
        if (dtb_material_equal(&list[i], &m))
            return i;
    return -1;
}

static void test_list_counts(void **state)
{
    (void)state;
    assert_int_equal(dtb_material_list(2, NULL, 0), 4); /* KvK KvM MvK MvM */
    assert_int_equal(dtb_material_list(3, NULL, 0), 16);
    assert_int_equal(dtb_material_list(1, NULL, 0), 0);
    for (int n = 2; n <= 10; n++)
        assert_int_equal(dtb_material_list(n, NULL, 0), count_formula(n));

    /* cap smaller than the list: only cap entries written, full count returned. */
    dtb_material small[5];
    memset(small, 0xAB, sizeof small);
    assert_int_equal(dtb_material_list(3, small, 3), 16);
    const unsigned char *tail = (const unsigned char *)&small[3];
    for (size_t i = 0; i < 2 * sizeof small[0]; i++)
        assert_int_equal(tail[i], 0xAB);

    /* Deterministic, and a prefix of the longer list. */
    dtb_material a[512], b[512];
    const int na = dtb_material_list(6, a, 512), nb = dtb_material_list(8, b, 512);
    assert_true(nb <= 512);
    assert_memory_equal(a, b, (size_t)na * sizeof a[0]);
}

static void test_list_content_and_order(void **state)
{
    (void)state;
    enum { N = 8 };
    dtb_material list[512];
    const int n = dtb_material_list(N, list, 512);
    assert_int_equal(n, count_formula(N));

    /* Every material of 2..N pieces with a piece a side, exactly once. */
    for (int wk = 0; wk <= N; wk++)
        for (int wm = 0; wk + wm <= N; wm++)
            for (int bk = 0; wk + wm + bk <= N; bk++)
                for (int bm = 0; wk + wm + bk + bm <= N; bm++) {
                    const dtb_material m = mat(wk, wm, bk, bm);
                    const int at = position_in(list, n, m);
                    if (wk + wm == 0 || bk + bm == 0) {
                        assert_int_equal(at, -1);
                        continue;
                    }
                    if (at < 0)
                        fail_msg("material %d%d%d%d missing", wk, wm, bk, bm);
                    for (int i = at + 1; i < n; i++)
                        assert_false(dtb_material_equal(&list[i], &m));
                }

    for (int i = 0; i < n; i++) {
        const dtb_material *m = &list[i];
        /* fewer pieces first, then fewer men */
        if (i > 0) {
            const dtb_material *p = &list[i - 1];
            const int dp = dtb_material_pieces(m) - dtb_material_pieces(p);
            assert_true(dp >= 0);
            if (dp == 0)
                assert_true(m->men[0] + m->men[1] >= p->men[0] + p->men[1]);
        }
        /* a material and its flip adjacent, the one with more white pieces (else more white
         * kings) first; a self-flip material once */
        const dtb_material f = dtb_material_flip(*m);
        const int wp = m->kings[0] + m->men[0], bp = m->kings[1] + m->men[1];
        if (dtb_material_equal(&f, m))
            continue;
        const bool first = wp > bp || (wp == bp && m->kings[0] > m->kings[1]);
        if (first) {
            assert_true(i + 1 < n);
            assert_true(dtb_material_equal(&list[i + 1], &f));
        } else {
            assert_true(i > 0);
            assert_true(dtb_material_equal(&list[i - 1], &f));
        }
    }
}

/* Every way a white move can change the material (white to move; black-to-move results are
 * looked up in their flip): the moving man may promote (p = 1), and a capture takes ck kings and
 * cm men of black's. Each result and its flip must lie before the pair of the material. */
static void test_list_dependencies(void **state)
{
    (void)state;
    dtb_material list[200];
    const int n = dtb_material_list(6, list, 200);
    assert_int_equal(n, count_formula(6));
    int checked = 0;
    for (int i = 0; i < n; i++) {
        const dtb_material m = list[i];
        const dtb_material f = dtb_material_flip(m);
        int pair_start = i;
        if (i > 0 && dtb_material_equal(&list[i - 1], &f))
            pair_start = i - 1;
        for (int p = 0; p <= (m.men[0] > 0 ? 1 : 0); p++)
            for (int ck = 0; ck <= m.kings[1]; ck++)
                for (int cm = 0; cm <= m.men[1]; cm++) {
                    if (p == 0 && ck + cm == 0)
                        continue; /* a quiet move: same material */
                    if (m.kings[1] - ck + m.men[1] - cm == 0)
                        continue; /* black has nothing left: the game is over */
                    const dtb_material t = mat(m.kings[0] + p, m.men[0] - p, m.kings[1] - ck,
                                               m.men[1] - cm);
                    const int at = position_in(list, n, t);
                    const int atf = position_in(list, n, dtb_material_flip(t));
                    if (at < 0 || at >= pair_start || atf < 0 || atf >= pair_start)
                        fail_msg("material #%d: a move leads to #%d / flip #%d, not earlier", i,
                                 at, atf);
                    checked++;
                }
    }
    assert_true(checked > 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_flip_and_of),
        cmocka_unit_test(test_list_counts),
        cmocka_unit_test(test_list_content_and_order),
        cmocka_unit_test(test_list_dependencies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
