/* The retrograde solver against a deliberately simple reference solver, and against published
 * endgame facts (tests/data/endgames.md).
 *
 * The reference shares only the move generator with dtb: it enumerates positions itself, keys
 * them by their (kind, square) list, flips colours itself, and iterates plain forward passes to
 * a fixed point: in pass n it decides exactly the positions whose DTW is n. */
#define _DEFAULT_SOURCE /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>
#include <pthread.h>

#include <cmocka.h>

#include "fen.h"
#include "movegen.h"
#include "solve.h"

/* ---- the reference solver ---------------------------------------------------------------- */

enum { WM, WK, BM, BK, KINDS };
#define UNKNOWN 0xFFFF
#define NO_PIECES 0xFFFFFFFFu /* successor whose side to move has no piece: a loss in 0 */

typedef struct ref {
    const dtb_board *b;
    uint32_t base;       /* digit base: KINDS * squares + 1 */
    uint32_t *number;    /* by key: the position's number in pos[] */
    uint16_t *value;     /* by number: UNKNOWN, or dtw*2 + (win ? 1 : 0); draws stay UNKNOWN */
    uint32_t *keys;      /* the positions, white to move */
    dtb_pos *pos;
    size_t n;
    uint32_t *succ;      /* successors' keys (positions after the move, flipped to white) */
    size_t *first;       /* successors of position i: succ[first[i] .. first[i+1]) */
} ref;

/* Key of a white-to-move position: its pieces in ascending square order, one base-digit each
 * (the highest square is the most significant digit). */
static uint32_t ref_key(const ref *r, const dtb_pos *p)
{
    const dtb_bb sets[KINDS] = {p->men[DTB_WHITE], p->kings[DTB_WHITE], p->men[DTB_BLACK],
                                p->kings[DTB_BLACK]};
    uint32_t digit[DTB_MAX_SQUARES];
    int sq_of[DTB_MAX_SQUARES], n = 0;
    for (int kind = 0; kind < KINDS; kind++)
        for (dtb_bb s = sets[kind]; s; s &= s - 1) {
            const int sq = dtb_bb_lowest(s);
            int j = n++;
            for (; j > 0 && sq_of[j - 1] > sq; j--) { /* insertion sort by square */
                sq_of[j] = sq_of[j - 1];
                digit[j] = digit[j - 1];
            }
            sq_of[j] = sq;
            digit[j] = (uint32_t)(kind * r->b->squares + sq + 1);
        }
    uint32_t key = 0;
    for (int j = n - 1; j >= 0; j--)
        key = key * r->base + digit[j];
    return key;
}

/* The reference's own colour flip: square i -> squares-1-i, colours swapped. */
static void ref_flip(const dtb_board *b, const dtb_pos *p, dtb_pos *out)
{
    *out = (dtb_pos){.side = p->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE};
    for (int c = 0; c < 2; c++) {
        for (dtb_bb s = p->men[c]; s; s &= s - 1)
            out->men[1 - c] |= DTB_BB_ONE << (b->squares - 1 - dtb_bb_lowest(s));
        for (dtb_bb s = p->kings[c]; s; s &= s - 1)
            out->kings[1 - c] |= DTB_BB_ONE << (b->squares - 1 - dtb_bb_lowest(s));
    }
}

static bool ref_legal(const dtb_board *b, const int *sq, const int *kind, int k)
{
    bool white = false, black = false;
    for (int i = 0; i < k; i++) {
        const int row = sq[i] / b->half;
        if (kind[i] == WM && row == 0) return false;
        if (kind[i] == BM && row == b->size - 1) return false;
        if (kind[i] == WM || kind[i] == WK) white = true; else black = true;
    }
    return white && black;
}

static void ref_add(ref *r, const int *sq, const int *kind, int k, size_t *cap)
{
    if (!ref_legal(r->b, sq, kind, k))
        return;
    dtb_pos p = {.side = DTB_WHITE};
    for (int i = 0; i < k; i++) {
        dtb_bb *set = kind[i] == WM ? &p.men[0] : kind[i] == WK ? &p.kings[0]
                    : kind[i] == BM ? &p.men[1] : &p.kings[1];
        *set |= DTB_BB_ONE << sq[i];
    }
    if (r->n == *cap) {
        *cap *= 2;
        r->pos = realloc(r->pos, *cap * sizeof *r->pos);
        r->keys = realloc(r->keys, *cap * sizeof *r->keys);
    }
    r->pos[r->n] = p;
    r->keys[r->n] = ref_key(r, &p);
    r->n++;
}

/* Every position of 2..pieces (at most 3) pieces (both sides present), white to move. */
static void ref_enumerate(ref *r, int pieces)
{
    const int N = r->b->squares;
    size_t cap = 1 << 16;
    r->pos = malloc(cap * sizeof *r->pos);
    r->keys = malloc(cap * sizeof *r->keys);
    int sq[3], kind[3];
    for (sq[0] = 0; sq[0] < N; sq[0]++)
        for (sq[1] = sq[0] + 1; sq[1] < N; sq[1]++) {
            for (kind[0] = 0; kind[0] < KINDS; kind[0]++)
                for (kind[1] = 0; kind[1] < KINDS; kind[1]++)
                    ref_add(r, sq, kind, 2, &cap);
            for (sq[2] = sq[1] + 1; pieces >= 3 && sq[2] < N; sq[2]++)
                for (kind[0] = 0; kind[0] < KINDS; kind[0]++)
                    for (kind[1] = 0; kind[1] < KINDS; kind[1]++)
                        for (kind[2] = 0; kind[2] < KINDS; kind[2]++)
                            ref_add(r, sq, kind, 3, &cap);
        }
}

static void ref_successors(ref *r)
{
    size_t cap = r->n * 8;
    r->succ = malloc(cap * sizeof *r->succ);
    r->first = malloc((r->n + 1) * sizeof *r->first);
    dtb_movelist *ml = malloc(sizeof *ml);
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        r->first[i] = k;
        assert_int_equal(dtb_generate(r->b, &r->pos[i], ml), DTB_OK);
        for (int j = 0; j < ml->count; j++) {
            dtb_pos q, f;
            dtb_make_move(&r->pos[i], &ml->moves[j], &q);
            ref_flip(r->b, &q, &f);
            if (k == cap)
                r->succ = realloc(r->succ, (cap *= 2) * sizeof *r->succ);
            r->succ[k++] = (f.men[0] | f.kings[0]) ? ref_key(r, &f) : NO_PIECES;
        }
    }
    r->first[r->n] = k;
    free(ml);
    /* From keys to position numbers, so the passes below touch dense arrays only. */
    for (size_t i = 0; i < r->n; i++)
        r->number[r->keys[i]] = (uint32_t)i;
    for (size_t j = 0; j < k; j++)
        if (r->succ[j] != NO_PIECES)
            r->succ[j] = r->number[r->succ[j]];
}

static uint16_t succ_value(const ref *r, uint32_t number)
{
    return number == NO_PIECES ? 0 /* loss in 0 */ : r->value[number];
}

/* Pass n decides the positions whose DTW is exactly n; values decided in this pass have DTW n
 * and are ignored by the tests for "< n". A pass deciding nothing ends the iteration. A position
 * is decided in pass n >= 1 only through a successor of DTW n - 1 (a loss in n - 1, or the
 * longest of all-won successors): one that pass n - 1 decided, or one without pieces (a loss in
 * 0) when n is 1. Positions without such a successor are passed over after a look at a bitmap
 * of the previous pass's decisions (small, so the pass does not wait for the whole value array
 * of every draw again and again); the rest of the pass is the plain rule. */
static void ref_solve(ref *r)
{
    uint32_t *open = malloc(r->n * sizeof *open); /* the undecided positions */
    const size_t words = r->n / 64 + 1;
    uint64_t *prev = calloc(words, sizeof *prev), *cur = calloc(words, sizeof *cur);
    size_t nopen = r->n;
    for (size_t i = 0; i < r->n; i++)
        open[i] = (uint32_t)i;
    for (int n = 0;; n++) {
        size_t decided = 0, kept = 0;
        for (size_t o = 0; o < nopen; o++) {
            const uint32_t i = open[o];
            bool reachable = n == 0;
            for (size_t s = r->first[i]; s < r->first[i + 1] && !reachable; s++) {
                const uint32_t q = r->succ[s];
                reachable = q == NO_PIECES ? n == 1 : (prev[q / 64] >> (q % 64) & 1);
            }
            if (!reachable) {
                open[kept++] = i;
                continue;
            }
            bool win = false, all_won = true;
            int longest = -1;
            for (size_t s = r->first[i]; s < r->first[i + 1]; s++) {
                const uint16_t v = succ_value(r, r->succ[s]);
                const bool known = v != UNKNOWN && (int)(v >> 1) < n;
                if (known && !(v & 1) && (int)(v >> 1) == n - 1)
                    win = true;
                if (!known || !(v & 1))
                    all_won = false;
                else if ((int)(v >> 1) > longest)
                    longest = v >> 1;
            }
            if (win || (all_won && longest == n - 1)) {
                r->value[i] = (uint16_t)(n * 2 + win);
                cur[i / 64] |= 1ull << (i % 64);
                decided++;
            } else {
                open[kept++] = i;
            }
        }
        nopen = kept;
        if (!decided && n > 0)
            break;
        uint64_t *t = prev;
        prev = cur, cur = t;
        memset(cur, 0, words * sizeof *cur);
    }
    free(open);
    free(prev);
    free(cur);
}

static void ref_free(ref *r)
{
    free(r->value);
    free(r->number);
    free(r->keys);
    free(r->pos);
    free(r->succ);
    free(r->first);
}

/* ---- dtb's solver over the same materials ------------------------------------------------ */

/* Solves every material of 2..pieces pieces with at most max_men men, in dependency order (a
 * material's captures and promotions lead to materials with fewer men, so the subset is
 * closed); lean: the kings-only materials only (max_men 0), solved lean, their stats into st
 * when not NULL (by list order, both members: room for twice the list). */
static dtb_solved *solve_set(const dtb_board *b, int pieces, int max_men, bool lean,
                             dtb_solve_stats *st)
{
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    for (int i = 0; i < n; i++) {
        if (dtb_solved_find(s, list[i]) || list[i].men[0] + list[i].men[1] > max_men)
            continue;
        dtb_solve_stats mine[2];
        dtb_error e;
        if (dtb_solve_pair(s, list[i], lean, st ? &st[2 * i] : mine, NULL, NULL, &e) != DTB_OK)
            fail_msg("solve: %s", e.msg);
    }
    free(list);
    return s;
}

static dtb_solved *solve_upto(const dtb_board *b, int pieces, int max_men)
{
    return solve_set(b, pieces, max_men, false, NULL);
}

static dtb_solved *solve_all(const dtb_board *b, int pieces) { return solve_upto(b, pieces, pieces); }

static dtb_solved *solve_kings_lean(const dtb_board *b, int pieces, dtb_solve_stats *st)
{
    return solve_set(b, pieces, 0, true, st);
}

/* Positions of the reference (those without men only, when kings_only) whose value in s is not
 * the reference's; the first five are printed. */
static size_t ref_mismatches(const ref *r, const dtb_solved *s, const char *name, const char *who,
                             bool kings_only)
{
    size_t mismatches = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (kings_only && (r->pos[i].men[DTB_WHITE] | r->pos[i].men[DTB_BLACK]))
            continue;
        const uint16_t v = r->value[i];
        const dtb_value want = v == UNKNOWN ? DTB_VALUE_DRAW
                               : (v & 1) ? dtb_value_win(v >> 1) : dtb_value_loss(v >> 1);
        const dtb_value got = dtb_solved_value(s, &r->pos[i]);
        if (got != want && mismatches++ < 5) {
            char fen[DTB_FEN_MAX];
            dtb_fen_write(r->b, &r->pos[i], fen, sizeof fen);
            print_message("%s %s: reference %d (dtw %d), %s %d (dtw %d)\n", name, fen,
                          dtb_value_wdl(want), dtb_value_dtw(want), who, dtb_value_wdl(got),
                          dtb_value_dtw(got));
        }
    }
    return mismatches;
}

static void compare_variant(const char *name, int pieces)
{
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(name));
    ref r = {.b = &b, .base = (uint32_t)(KINDS * b.squares + 1)};
    r.number = malloc((size_t)r.base * r.base * r.base * sizeof *r.number);
    ref_enumerate(&r, pieces);
    r.value = malloc(r.n * sizeof *r.value);
    memset(r.value, 0xFF, r.n * sizeof *r.value);
    ref_successors(&r);
    ref_solve(&r);

    dtb_solved *s = solve_all(&b, pieces);
    assert_int_equal(ref_mismatches(&r, s, name, "dtb", false), 0);
    /* The lean solve of the kings-only pairs, against the same reference. */
    dtb_solved *lean = solve_kings_lean(&b, pieces, NULL);
    assert_int_equal(ref_mismatches(&r, lean, name, "dtb lean", true), 0);
    dtb_solved_free(lean);
    /* Both enumerate the same positions: the index sizes add up to the reference's count. */
    uint64_t total = 0;
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    for (int i = 0; i < n; i++)
        total += dtb_index_size(dtb_solved_find(s, list[i])->index);
    free(list);
    assert_int_equal(total, r.n);
    dtb_solved_free(s);
    ref_free(&r);
}

/* 12x12 with 3 pieces is the costliest comparison (4.5 M positions); the sanitizer build checks
 * canadian to 2 pieces and leaves 3 to the Release build. */
#ifdef DTB_SANITIZED_BUILD
#define CANADIAN_PIECES 2
#else
#define CANADIAN_PIECES 3
#endif

static void reference_international(void **state) { (void)state; compare_variant("international", 3); }
static void reference_english(void **state) { (void)state; compare_variant("english", 3); }
static void reference_russian(void **state) { (void)state; compare_variant("russian", 3); }
static void reference_brazilian(void **state) { (void)state; compare_variant("brazilian", 3); }
static void reference_canadian(void **state)
{
    (void)state;
    compare_variant("canadian", CANADIAN_PIECES);
}

/* ---- published facts (tests/data/endgames.md) -------------------------------------------- */

typedef struct fact {
    const char *material;
    uint64_t positions, wins, draws, losses;
    int longest;
    const char *longest_fen;
} fact;

/* Reads the international 2-piece table rows of endgames.md. */
static int read_facts(fact *out, int cap, char names[][16], char fens[][64])
{
    FILE *f = fopen(DTB_TEST_DATA "/endgames.md", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        char mat[16], fen[64];
        unsigned long long pos, w, d, l;
        int longest;
        if (sscanf(line, "| %15s | %llu | %llu | %llu | %llu | %d | %63s |", mat, &pos, &w, &d, &l,
                   &longest, fen) != 7)
            continue;
        strcpy(names[n], mat);
        strcpy(fens[n], fen);
        out[n] = (fact){names[n], pos, w, d, l, longest, fens[n]};
        n++;
    }
    fclose(f);
    return n;
}

static void international_two_pieces(void **state)
{
    (void)state;
    fact facts[8];
    char names[8][16], fens[8][64];
    const int n = read_facts(facts, 8, names, fens);
    assert_int_equal(n, 4);
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("international"));
    /* Solve in dependency order, keeping each member's stats by name. */
    dtb_solved *s = dtb_solved_create(&b);
    dtb_material list[8];
    const int nm = dtb_material_list(2, list, 8);
    assert_int_equal(nm, 4);
    dtb_solve_stats by_name[4];
    char solved_names[4][DTB_MATERIAL_NAME_MAX];
    int ns = 0;
    for (int i = 0; i < nm; i++) {
        if (dtb_solved_find(s, list[i]))
            continue;
        dtb_solve_stats st[2];
        assert_int_equal(dtb_solve_pair(s, list[i], false, st, NULL, NULL, NULL), DTB_OK);
        const dtb_material f = dtb_material_flip(list[i]);
        for (int k = 0; k < (dtb_material_equal(&list[i], &f) ? 1 : 2); k++) {
            dtb_material_name(k ? &f : &list[i], solved_names[ns], DTB_MATERIAL_NAME_MAX);
            by_name[ns++] = st[k];
        }
    }
    assert_int_equal(ns, 4);
    for (int i = 0; i < n; i++) {
        const dtb_solve_stats *mine = NULL;
        for (int k = 0; k < ns; k++)
            if (strcmp(solved_names[k], facts[i].material) == 0)
                mine = &by_name[k];
        assert_non_null(mine);
        assert_int_equal(mine->positions, facts[i].positions);
        assert_int_equal(mine->wins, facts[i].wins);
        assert_int_equal(mine->draws, facts[i].draws);
        assert_int_equal(mine->losses, facts[i].losses);
        assert_int_equal(mine->longest_win, facts[i].longest);
        /* The book's example of a longest win has that DTW too. */
        dtb_pos p;
        assert_int_equal(dtb_fen_read(&b, facts[i].longest_fen, &p, NULL), DTB_OK);
        const dtb_value v = dtb_solved_value(s, &p);
        assert_true(dtb_value_is_win(v));
        assert_int_equal(dtb_value_dtw(v), facts[i].longest);
    }
    dtb_solved_free(s);
}

static dtb_value value_of(const dtb_solved *s, const char *fen)
{
    dtb_pos p;
    assert_int_equal(dtb_fen_read(dtb_solved_board(s), fen, &p, NULL), DTB_OK);
    return dtb_solved_value(s, &p);
}

/* English 5-piece king materials (2 M positions a member) are left to the Release build. */
#ifdef DTB_SANITIZED_BUILD
#define LEAN_ENGLISH_PIECES 4
#else
#define LEAN_ENGLISH_PIECES 5
#endif

/* The 3 v 2 kings fact solves a 5-piece material (2 M positions): left to the Release build. */
#ifdef DTB_SANITIZED_BUILD
#define THREE_V_TWO 0
#else
#define THREE_V_TWO 1
#endif

static void english_facts(void **state)
{
    (void)state;
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("english"));
    /* The facts below have at most one man: solving the rest of 2..4 would only cost time. */
    dtb_solved *s = solve_upto(&b, 4, 1);
    dtb_material kk;
#if !THREE_V_TWO
    (void)kk;
#else
    /* The 3 v 2 kings needs only king materials, all solved by now but this one. */
    assert_int_equal(dtb_material_parse("KKKvKK", &kk, NULL), DTB_OK);
    assert_int_equal(dtb_solve_pair(s, kk, false, (dtb_solve_stats[2]){0}, NULL, NULL, NULL), DTB_OK);
#endif
    assert_int_equal(dtb_material_parse("KvK", &kk, NULL), DTB_OK);
    const dtb_solved_table *t = dtb_solved_find(s, kk);
    uint64_t w = 0, d = 0, l = 0;
    int longest = -1;
    for (uint64_t i = 0; i < dtb_index_size(t->index); i++) {
        const dtb_value v = t->values[i];
        w += dtb_value_is_win(v), l += dtb_value_is_loss(v), d += v == DTB_VALUE_DRAW;
        if (dtb_value_is_win(v) && dtb_value_dtw(v) > longest)
            longest = dtb_value_dtw(v);
    }
    /* endgames.md: 992 placements, 230 wins, 654 draws, 108 losses, longest win 11 plies. */
    assert_int_equal(w + d + l, 992);
    assert_int_equal(w, 230);
    assert_int_equal(d, 654);
    assert_int_equal(l, 108);
    assert_int_equal(longest, 11);
    /* Lasker diagram 88, First Position, and the 3 v 2 kings. */
    assert_true(dtb_value_is_win(value_of(s, "W:WK32:BK26")));
    assert_int_equal(value_of(s, "B:WK32:BK26"), DTB_VALUE_DRAW);
    assert_true(dtb_value_is_win(value_of(s, "W:WK19,K23:BK28,12")));
    assert_int_equal(value_of(s, "B:WK19,K23:BK28,12"), DTB_VALUE_DRAW);
#if THREE_V_TWO
    assert_true(dtb_value_is_win(value_of(s, "W:WK22,K23,K24:BK31,K32")));
    assert_true(dtb_value_is_loss(value_of(s, "B:WK22,K23,K24:BK31,K32")));
#endif
    dtb_solved_free(s);
}

static bool same_stats(const dtb_solve_stats *a, const dtb_solve_stats *b)
{
    return a->positions == b->positions && a->wins == b->wins && a->draws == b->draws &&
           a->losses == b->losses && a->captures == b->captures &&
           a->longest_win == b->longest_win && a->longest_win_at == b->longest_win_at;
}

/* The sets the lean solves are checked on: flying kings (international, 4 pieces) and short
 * ones (english). */
static const struct {
    const char *variant;
    int pieces;
} lean_sets[] = {{"international", 4}, {"english", LEAN_ENGLISH_PIECES}};

/* Set k's board into *b and its materials (*n of them, list order; the caller frees them). */
static dtb_material *lean_set(size_t k, dtb_board *b, int *n)
{
    dtb_board_init(b, dtb_variant_find(lean_sets[k].variant));
    *n = dtb_material_list(lean_sets[k].pieces, NULL, 0);
    dtb_material *list = malloc((size_t)*n * sizeof *list);
    assert_non_null(list);
    dtb_material_list(lean_sets[k].pieces, list, *n);
    return list;
}

/* The lean solve of kings-only pairs gives the node solve's values, capture bits and stats, on
 * boards with flying kings (international, 4 pieces) and without (english, 5 pieces). */
static void lean_equals_nodes(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof lean_sets / sizeof lean_sets[0]; k++) {
        dtb_board b;
        int n;
        dtb_material *list = lean_set(k, &b, &n);
        dtb_solve_stats *st_lean = calloc(2 * (size_t)n, sizeof *st_lean);
        dtb_solve_stats *st_nodes = calloc(2 * (size_t)n, sizeof *st_nodes);
        dtb_solved *lean = solve_kings_lean(&b, lean_sets[k].pieces, st_lean);
        dtb_solved *nodes = dtb_solved_create(&b);
        int pairs = 0;
        for (int i = 0; i < n; i++) {
            if (dtb_solved_find(nodes, list[i]) || !dtb_solve_lean_applies(&list[i]))
                continue;
            assert_int_equal(dtb_solve_pair(nodes, list[i], false, &st_nodes[2 * i], NULL, NULL, NULL),
                             DTB_OK);
            const dtb_material f = dtb_material_flip(list[i]);
            const bool self = dtb_material_equal(&f, &list[i]);
            for (int m = 0; m < (self ? 1 : 2); m++) {
                const dtb_solved_table *a = dtb_solved_find(lean, m ? f : list[i]);
                const dtb_solved_table *c = dtb_solved_find(nodes, m ? f : list[i]);
                const uint64_t size = dtb_index_size(a->index);
                assert_memory_equal(a->values, c->values, size);
                assert_memory_equal(a->captures, c->captures, (size + 63) / 64 * 8);
                assert_true(same_stats(&st_lean[2 * i + m], &st_nodes[2 * i + m]));
            }
            pairs++;
        }
        assert_true(pairs >= 3);
        dtb_solved_free(lean);
        dtb_solved_free(nodes);
        free(st_lean);
        free(st_nodes);
        free(list);
    }
}

/* ---- a kings-only pair shared by several processes (dtb_solve_pair_lean_shared) ------------ */

/* Processes simulated by threads: each has its own registry (its copies of the smaller tables,
 * solved alone), and the share's collectives meet at a barrier. */
typedef struct sim {
    pthread_barrier_t bar;
    int ranks;
    const uint8_t **buf;
    uint64_t *len;
    int64_t *v; /* ranks x 2 */
    bool garble; /* allgather hands rank 0 garbage in place of rank 1's bytes */
} sim;

typedef struct sim_proc {
    sim *sm;
    dtb_lean_share sh;
    dtb_solved *s;
    dtb_material m;
    dtb_solve_stats st[2];
    dtb_status rc;
    dtb_error e;
} sim_proc;

static dtb_status sim_allgather(void *ctx, const uint8_t *mine, uint64_t len, uint8_t **theirs,
                                uint64_t *lens, dtb_error *e)
{
    (void)e;
    sim_proc *p = ctx;
    sim *sm = p->sm;
    sm->buf[p->sh.rank] = mine;
    sm->len[p->sh.rank] = len;
    pthread_barrier_wait(&sm->bar);
    for (int q = 0; q < sm->ranks; q++) {
        if (q == p->sh.rank)
            continue;
        lens[q] = sm->len[q];
        theirs[q] = malloc(lens[q] ? lens[q] : 1);
        assert_non_null(theirs[q]);
        if (lens[q]) /* an empty buffer may be NULL */
            memcpy(theirs[q], sm->buf[q], lens[q]);
        if (sm->garble && p->sh.rank == 0 && q == 1) {
            lens[q] = 40;
            theirs[q] = realloc(theirs[q], lens[q]);
            memset(theirs[q], 0xff, lens[q]); /* a run that claims more bytes than it has */
        }
    }
    pthread_barrier_wait(&sm->bar);
    return DTB_OK;
}

static dtb_status sim_max(void *ctx, int64_t *v, int n, dtb_error *e)
{
    (void)e;
    sim_proc *p = ctx;
    sim *sm = p->sm;
    assert_true(n == 2);
    memcpy(&sm->v[2 * p->sh.rank], v, 2 * sizeof *v);
    pthread_barrier_wait(&sm->bar);
    for (int q = 0; q < sm->ranks; q++)
        for (int k = 0; k < n; k++)
            v[k] = sm->v[2 * q + k] > v[k] ? sm->v[2 * q + k] : v[k];
    pthread_barrier_wait(&sm->bar);
    return DTB_OK;
}

static void *sim_run(void *arg)
{
    sim_proc *p = arg;
    omp_set_num_threads(1 + p->sh.rank % 2); /* thread counts differ between the processes */
    p->rc = dtb_solve_pair_lean_shared(p->s, p->m, &p->sh, p->st, NULL, NULL, &p->e);
    return NULL;
}

/* Solves, into each registry, the kings-only materials of 2..pieces before m in list order. */
static void solve_kings_before(const dtb_board *b, int pieces, dtb_material m, dtb_solved *s)
{
    (void)b;
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    for (int i = 0; i < n && !dtb_material_equal(&list[i], &m); i++) {
        dtb_solve_stats st[2];
        if (!dtb_solved_find(s, list[i]) && dtb_solve_lean_applies(&list[i]))
            assert_int_equal(dtb_solve_pair(s, list[i], true, st, NULL, NULL, NULL), DTB_OK);
    }
    free(list);
}

/* Pair m shared by `ranks` simulated processes (ranges in multiples of align positions): each
 * sets the values, capture bits and stats of its own range as the solve alone (in whole,
 * st_alone) does, and leaves the rest alone. */
static void check_shared(const dtb_board *b, int pieces, const dtb_solved *whole,
                         const dtb_solve_stats st_alone[2], dtb_material m, int ranks,
                         uint64_t align)
{
    sim sm = {.ranks = ranks, .buf = calloc((size_t)ranks, sizeof *sm.buf),
              .len = calloc((size_t)ranks, sizeof *sm.len), .v = calloc(2 * (size_t)ranks, sizeof *sm.v)};
    pthread_barrier_init(&sm.bar, NULL, (unsigned)ranks);
    sim_proc *p = calloc((size_t)ranks, sizeof *p);
    pthread_t *th = calloc((size_t)ranks, sizeof *th);
    for (int r = 0; r < ranks; r++) {
        p[r] = (sim_proc){.sm = &sm, .m = m, .s = dtb_solved_create(b),
                          .sh = {.ctx = &p[r], .rank = r, .ranks = ranks, .align = align,
                                 .allgather = sim_allgather, .max = sim_max}};
        solve_kings_before(b, pieces, m, p[r].s);
    }
    for (int r = 0; r < ranks; r++)
        assert_int_equal(pthread_create(&th[r], NULL, sim_run, &p[r]), 0);
    for (int r = 0; r < ranks; r++)
        pthread_join(th[r], NULL);
    const dtb_material f = dtb_material_flip(m);
    const bool self = dtb_material_equal(&f, &m);
    dtb_solve_stats merged[2];
    for (int k = 0; k < 2; k++) {
        merged[k] = p[0].st[k];
        for (int r = 1; r < ranks; r++)
            dtb_solve_stats_merge(&merged[k], &p[r].st[k]);
    }
    for (int r = 0; r < ranks; r++) {
        if (p[r].rc != DTB_OK)
            fail_msg("rank %d of %d: %s", r, ranks, p[r].e.msg);
        for (int k = 0; k < (self ? 1 : 2); k++) {
            const dtb_solved_table *a = dtb_solved_find(whole, k ? f : m);
            const dtb_solved_table *c = dtb_solved_find(p[r].s, k ? f : m);
            const uint64_t size = dtb_index_size(a->index);
            uint64_t lo, hi;
            dtb_lean_share_range(size, r, ranks, align, &lo, &hi);
            const uint64_t piece = align ? align : 64;
            assert_true(lo % piece == 0 && (hi % piece == 0 || hi == size));
            assert_memory_equal(a->values + lo, c->values + lo, hi - lo);
            assert_memory_equal(a->captures + lo / 64, c->captures + lo / 64, (hi - lo + 63) / 64 * 8);
            for (uint64_t i = 0; i < size; i++) /* nothing outside the range: all draws */
                if ((i < lo || i >= hi) && c->values[i] != DTB_VALUE_DRAW)
                    fail_msg("rank %d of %d set position %llu outside its range", r, ranks,
                             (unsigned long long)i);
        }
    }
    for (int k = 0; k < (self ? 1 : 2); k++)
        assert_true(same_stats(&merged[k], &st_alone[k]));
    for (int r = 0; r < ranks; r++)
        dtb_solved_free(p[r].s);
    pthread_barrier_destroy(&sm.bar);
    free(p), free(th), free(sm.buf), free(sm.len), free(sm.v);
}

/* The lean solve shared by 1, 2, 3 and 64 processes (some with nothing to own; 3 also with
 * ranges of 1024-position pieces) gives the values,
 * capture bits and stats of the solve alone, for every kings-only pair of international 2..4 and
 * english 2..5; and a process handed bytes that are not whole runs fails, naming them, while
 * the others stop. */
static void lean_shared_equals_alone(void **state)
{
    (void)state;
    static const int ranks[] = {1, 2, 3, 64};
    for (size_t k = 0; k < sizeof lean_sets / sizeof lean_sets[0]; k++) {
        dtb_board b;
        int n;
        dtb_material *list = lean_set(k, &b, &n);
        dtb_solve_stats *st = calloc(2 * (size_t)n, sizeof *st);
        dtb_solved *whole = solve_kings_lean(&b, lean_sets[k].pieces, st);
        int pairs = 0;
        for (int i = 0; i < n; i++) {
            const dtb_material f = dtb_material_flip(list[i]);
            bool seen = false;
            for (int j = 0; j < i; j++)
                seen |= dtb_material_equal(&list[j], &f) || dtb_material_equal(&list[j], &list[i]);
            if (seen || !dtb_solve_lean_applies(&list[i]))
                continue;
            for (size_t r = 0; r < sizeof ranks / sizeof ranks[0]; r++)
                if (ranks[r] < 64 || i == 0) /* 64 processes: the smallest pair alone */
                    check_shared(&b, lean_sets[k].pieces, whole, &st[2 * i], list[i], ranks[r], 0);
            /* ranges of whole 1024-position pieces (the MPI build's are file blocks) */
            check_shared(&b, lean_sets[k].pieces, whole, &st[2 * i], list[i], 3, 1024);
            pairs++;
        }
        assert_true(pairs >= 3);
        dtb_solved_free(whole);
        free(st);
        free(list);
    }
    /* A corrupt message: rank 0 names it, rank 1 stops with it. */
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("international"));
    dtb_material m;
    assert_int_equal(dtb_material_parse("KKvK", &m, NULL), DTB_OK);
    sim sm = {.ranks = 2, .garble = true, .buf = calloc(2, sizeof *sm.buf),
              .len = calloc(2, sizeof *sm.len), .v = calloc(4, sizeof *sm.v)};
    pthread_barrier_init(&sm.bar, NULL, 2);
    sim_proc p[2];
    pthread_t th[2];
    for (int r = 0; r < 2; r++) {
        p[r] = (sim_proc){.sm = &sm, .m = m, .s = dtb_solved_create(&b),
                          .sh = {.ctx = &p[r], .rank = r, .ranks = 2,
                                 .allgather = sim_allgather, .max = sim_max}};
        solve_kings_before(&b, 3, m, p[r].s);
        assert_int_equal(pthread_create(&th[r], NULL, sim_run, &p[r]), 0);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    assert_int_equal(p[0].rc, DTB_E_CORRUPT);
    assert_non_null(strstr(p[0].e.msg, "process 1"));
    assert_int_equal(p[1].rc, DTB_E_IO);
    assert_non_null(strstr(p[1].e.msg, "another process"));
    for (int r = 0; r < 2; r++)
        dtb_solved_free(p[r].s);
    pthread_barrier_destroy(&sm.bar);
    free(sm.buf), free(sm.len), free(sm.v);
}

/* ---- pairs solved in slices (gen/solve_sliced.c) ------------------------------------------- */

/* Solves, into a fresh registry, every material before pair m in list order, then m in slices
 * (work files in work_dir when it is not NULL; wins stored with their distances or not). */
static dtb_solved *solve_before_then_sliced(const dtb_board *b, int pieces, dtb_material m,
                                            const char *work_dir, bool win_distances,
                                            dtb_solve_stats st[2], dtb_sliced_pair **sp)
{
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    if (work_dir)
        assert_int_equal(dtb_solved_use_work_files(s, work_dir, 0, NULL), DTB_OK);
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    const dtb_material f = dtb_material_flip(m);
    dtb_error e;
    for (int i = 0; i < n; i++) {
        if (dtb_material_equal(&list[i], &m) || dtb_material_equal(&list[i], &f))
            break;
        dtb_solve_stats mine[2];
        if (!dtb_solved_find(s, list[i]) &&
            dtb_solve_pair(s, list[i], false, mine, NULL, NULL, &e) != DTB_OK)
            fail_msg("solve: %s", e.msg);
    }
    free(list);
    if (dtb_solve_pair_sliced(s, m, false, work_dir ? work_dir : ".", win_distances, NULL, st, sp, NULL,
                              NULL, &e) != DTB_OK)
        fail_msg("sliced solve: %s", e.msg);
    return s;
}

/* Every value and capture bit of pair m solved in slices equals the whole solve's (in whole),
 * read back from the slice store a range at a time; the stats too. Without win_distances every
 * win reads back as a win in 1. */
static void compare_sliced(const dtb_board *b, const dtb_solved *whole, int pieces, dtb_material m,
                           const char *work_dir, bool win_distances)
{
    dtb_solve_stats st[2];
    dtb_sliced_pair *sp;
    dtb_solved *s = solve_before_then_sliced(b, pieces, m, work_dir, win_distances, st, &sp);
    const dtb_material ms[2] = {m, dtb_material_flip(m)};
    const int members = dtb_material_equal(&ms[0], &ms[1]) ? 1 : 2;
    void *state = NULL;
    uint64_t differ = 0;
    for (int k = 0; k < members; k++) {
        const dtb_solved_table *t = dtb_solved_find(whole, ms[k]);
        assert_non_null(t);
        const uint64_t n = dtb_index_size(t->index);
        enum { RANGE = 4096 };
        uint8_t v[RANGE];
        uint64_t bits[RANGE / 64];
        uint64_t wins = 0;
        for (uint64_t at = 0; at < n; at += RANGE) {
            const size_t len = (size_t)(n - at < RANGE ? n - at : RANGE);
            const char *why = dtb_sliced_pair_read(sp, k, &state, at, len, v, bits);
            if (why)
                fail_msg("read: %s", why);
            for (size_t i = 0; i < len; i++) {
                const uint64_t x = at + i;
                const bool cap = t->captures[x / 64] >> (x % 64) & 1, got = bits[i / 64] >> (i % 64) & 1;
                /* a capture position's value is not kept: the tables leave it don't-care */
                const dtb_value want = !win_distances && dtb_value_is_win(t->values[x])
                                           ? dtb_value_win(1)
                                           : t->values[x];
                differ += (!cap && v[i] != want) || cap != got;
                wins += dtb_value_is_win(t->values[x]);
            }
        }
        assert_int_equal(st[k].positions, n);
        assert_int_equal(st[k].wins, wins);
    }
    dtb_sliced_pair_state_free(state);
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&m, name, sizeof name);
    if (differ)
        fail_msg("%s solved in slices%s: %llu values or capture bits differ", name,
                 work_dir ? " (work files)" : "", (unsigned long long)differ);
    dtb_sliced_pair_free(sp);
    dtb_solved_free(s);
}

/* The plan's live blocks of a pair solved in slices against its blocks' levels counted. */
static void check_live(const dtb_board *b, dtb_solved *whole, dtb_material m)
{
    dtb_pair_solver *ps;
    assert_int_equal(dtb_pair_solver_create(whole, m, &ps, NULL), DTB_OK);
    const dtb_solved_table *t = dtb_solved_find(whole, m);
    const uint64_t nb = dtb_index_blocks(t->index);
    uint8_t *lv = malloc(nb), *flv = malloc(nb);
    dtb_pair_solver_levels(ps, lv, flv);
    uint64_t count[256] = {0}, most = 0;
    for (uint64_t i = 0; i < nb; i++)
        count[lv[i]]++;
    for (int a = 0; a < 255; a++)
        most = count[a] + count[a + 1] > most ? count[a] + count[a + 1] : most;
    assert_int_equal(dtb_solve_sliced_live_blocks(b, m), most);
    free(lv);
    free(flv);
    dtb_pair_solver_free(ps);
}

static void sliced_equals_whole(void **state)
{
    (void)state;
    static const struct {
        const char *variant;
        int pieces;
        const char *pairs[4];
    } cases[] = {
#ifdef DTB_SANITIZED_BUILD /* the suite's time budget: one pair a variant under the sanitizers */
        {"english", 4, {"KMvKM", NULL}},
        {"international", 3, {"KMvM", NULL}},
#else
        {"english", 4, {"KMvKM", "KKMvM", "KMMvK", NULL}},
        {"international", 3, {"KMvK", "KMvM", NULL}},
#endif
    };
    char dir[] = "/tmp/dtb_sliced_XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_find(cases[c].variant));
        dtb_solved *whole = solve_all(&b, cases[c].pieces);
        for (int i = 0; cases[c].pairs[i]; i++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(cases[c].pairs[i], &m, NULL), DTB_OK);
            check_live(&b, whole, m);
            compare_sliced(&b, whole, cases[c].pieces, m, NULL, true);
            if (i == 0) { /* sparse work files, their ranges reserved and punched; wins as 1 */
                compare_sliced(&b, whole, cases[c].pieces, m, dir, true);
                compare_sliced(&b, whole, cases[c].pieces, m, NULL, false);
                /* records larger than the store's chunks, cut into pieces (a block of
                 * 3e9 positions against 1 MiB chunks): here 100-byte chunks */
                setenv("DTB_SLICESTORE_CHUNK", "100", 1);
                compare_sliced(&b, whole, cases[c].pieces, m, NULL, true);
                unsetenv("DTB_SLICESTORE_CHUNK");
            }
        }
        dtb_solved_free(whole);
    }
    assert_int_equal(rmdir(dir), 0); /* the scratch and work files were unlinked */
}

/* dtb_pair_solver_reach against the moves themselves: for every unit of every level, every
 * quiet man move that does not crown, from every position of the unit's two blocks (either side
 * to move, generated by core/movegen.c), must land in a unit the reach marks; and every marked
 * unit is of the level above. */
static void check_reach(const dtb_board *b, dtb_solved *s, dtb_material m)
{
    dtb_pair_solver *ps;
    assert_int_equal(dtb_pair_solver_create(s, m, &ps, NULL), DTB_OK);
    const dtb_material fm = dtb_material_flip(m);
    const dtb_solved_table *t = dtb_solved_find(s, m), *ft = dtb_solved_find(s, fm);
    const uint64_t nb = dtb_index_blocks(t->index), K = dtb_index_block_size(t->index);
    uint8_t *lv = malloc(nb), *flv = malloc(nb), *need = malloc(nb);
    assert_non_null(lv);
    assert_non_null(flv);
    assert_non_null(need);
    dtb_pair_solver_levels(ps, lv, flv);
    uint64_t moves = 0, units = 0;
    for (int a = dtb_pair_solver_next_level(ps, DTB_SOLVE_LEVEL_TOP); a >= 0;
         a = dtb_pair_solver_next_level(ps, a))
        for (uint64_t u = 0; u < nb; u++) {
            if (!dtb_pair_solver_units(ps, a, u, u + 1))
                continue;
            units++;
            memset(need, 0, nb);
            dtb_pair_solver_reach(ps, a, u, u + 1, need);
            for (uint64_t y = 0; y < nb; y++)
                if (need[y] && lv[y] != a + 1)
                    fail_msg("a unit of level %d reaches block %llu of level %d", a,
                             (unsigned long long)y, lv[y]);
            dtb_pos up, uf; /* a position of block u, and its flip: the unit's other block */
            dtb_index_pos(t->index, u * K, &up);
            dtb_pos_flip(b, &up, &uf);
            const uint64_t fu = dtb_index_of(ft->index, &uf) / K;
            for (int k = 0; k < 2; k++) { /* the unit's block in m, then in its flip */
                const dtb_solved_table *x = k ? ft : t;
                for (uint64_t i = (k ? fu : u) * K; i < ((k ? fu : u) + 1) * K; i++) {
                    dtb_pos p, q, r;
                    dtb_index_pos(x->index, i, &p);
                    dtb_movelist ml;
                    assert_int_equal(dtb_generate(b, &p, &ml), DTB_OK);
                    for (int j = 0; j < ml.count; j++) {
                        const dtb_move *mv = &ml.moves[j];
                        if (mv->ncaptured || mv->promotes || !dtb_bb_has(p.men[p.side], mv->from))
                            continue;
                        dtb_make_move(&p, mv, &q);
                        if (k) /* back in m's terms (the flip of a black-to-move position) */
                            dtb_pos_flip(b, &q, &r);
                        else
                            r = q;
                        const uint64_t y = dtb_index_block_of(t->index, r.men[DTB_WHITE],
                                                              r.men[DTB_BLACK]);
                        /* a self-flip material's unit may be listed from its other block */
                        dtb_pos rf;
                        dtb_pos_flip(b, &r, &rf);
                        const uint64_t fy = dtb_material_equal(&m, &fm)
                                                ? dtb_index_block_of(t->index, rf.men[DTB_WHITE],
                                                                     rf.men[DTB_BLACK])
                                                : y;
                        if (!need[y] && !need[fy])
                            fail_msg("a man move from position %llu of a unit of level %d lands "
                                     "in block %llu, which the reach does not mark",
                                     (unsigned long long)i, a, (unsigned long long)y);
                        moves++;
                    }
                }
            }
        }
    assert_true(units > 0 && moves > 0);
    free(lv);
    free(flv);
    free(need);
    dtb_pair_solver_free(ps);
}

static void reach_covers_man_moves(void **state)
{
    (void)state;
    static const struct {
        const char *variant;
        int pieces;
        const char *pairs[3];
    } cases[] = {
        {"english", 4, {"KMvKM", "KMMvK", NULL}}, /* a self-flip material, and one that is not */
        {"international", 3, {"KMvM", "MMvK", NULL}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_find(cases[c].variant));
        dtb_solved *s = solve_all(&b, cases[c].pieces);
        for (int i = 0; cases[c].pairs[i]; i++) {
            dtb_material m;
            assert_int_equal(dtb_material_parse(cases[c].pairs[i], &m, NULL), DTB_OK);
            check_reach(&b, s, m);
        }
        dtb_solved_free(s);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* run one test by name */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(international_two_pieces),
        cmocka_unit_test(lean_equals_nodes),
        cmocka_unit_test(lean_shared_equals_alone),
        cmocka_unit_test(sliced_equals_whole),
        cmocka_unit_test(reach_covers_man_moves),
        cmocka_unit_test(english_facts),
        cmocka_unit_test(reference_english),
        cmocka_unit_test(reference_russian),
        cmocka_unit_test(reference_brazilian),
        cmocka_unit_test(reference_international),
        cmocka_unit_test(reference_canadian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
