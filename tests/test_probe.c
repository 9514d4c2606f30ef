/* libdtb (probe/dtb.h) against the generator.
 *
 * The fixture builds every international table of up to 3 pieces with dtb_build (the real
 * generator files), solves the same materials again in memory with dtb_solve_pair (the values
 * the generator computed, capture positions included), and adds the 4-piece materials (all of
 * them in optimised builds, the kings-only ones under sanitizers) written from the in-memory
 * values with their capture positions holding garbage (3 in .wld files, which is no WLD value; a wrong value in .dtw
 * files): a probe that ever reads a stored capture position fails.
 *
 * Then: every position of every material, both sides to move, through dtb_probe_wdl and
 * dtb_probe_dtw; ranked moves and best lines; 8 threads against one; cache-only probes; missing,
 * truncated, bit-flipped, wrong-version and wrong-variant files; FEN errors; opening errors;
 * dtb_verify; and the dtbprobe command line. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dtb.h" /* before core's headers: its status and WDL definitions are the ones used */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "capturetest.h"
#include "fen.h"
#include "movegen.h"
#include "splitmix.h"
#include "solve.h"
#include "tableformat.h"
#include "tableset.h"
#include "tablewrite.h"
#include "public_position.h"

/* Optimised builds check every 4-piece material at every position (every international
 * material up to 4 pieces). Sanitizer builds, ten times slower, solve only the
 * kings-only 4-piece materials (a man pulls in every material its promotions reach) and check
 * every FOUR_STRIDE-th of their positions; the 3-piece ones stay exhaustive everywhere. */
#define FLIP_STRIDE 7
#ifdef DTB_SANITIZED_BUILD
#define FOUR_STRIDE 11
#define ALL_FOUR false
#else
#define FOUR_STRIDE 1
#define ALL_FOUR true
#endif

static char root[64];
static char maindir[128];
static dtb_board board;
static dtb_solved *solved;
static dtb_material mats[128];
static int nmats;

static const char *const kings_only_four[] = {"KKKvK", "KvKKK", "KKvKK"};

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *fen_of(const dtb_pos *p)
{
    static char buf[DTB_FEN_MAX];
    dtb_fen_write(&board, p, buf, sizeof buf);
    return buf;
}

static dtb_material material(const char *name)
{
    dtb_material m;
    dtb_error e;
    assert_int_equal(dtb_material_parse(name, &m, &e), DTB_OK);
    return m;
}

static const dtb_solved_table *table_of(const char *name)
{
    const dtb_solved_table *t = dtb_solved_find(solved, material(name));
    assert_non_null(t);
    return t;
}

/* The value the generator computed for p (either side to move). */
static dtb_value expected(const dtb_pos *p) { return dtb_solved_value(solved, p); }

/* Messages from the log callback, kept for inspection. */
typedef struct logbook {
    pthread_mutex_t lock;
    char text[8192];
    int lines;
} logbook;

static void log_to_book(void *user, const char *msg)
{
    logbook *b = user;
    pthread_mutex_lock(&b->lock);
    const size_t len = strlen(b->text);
    snprintf(b->text + len, sizeof b->text - len, "%s\n", msg);
    b->lines++;
    pthread_mutex_unlock(&b->lock);
}

static dtb_db *open_db(const char *dir, const char *variant, uint64_t cache, logbook *book)
{
    const char *dirs[1] = {dir};
    if (book) {
        memset(book, 0, sizeof *book);
        pthread_mutex_init(&book->lock, NULL);
    }
    /* no loader: these tests count what cache-only probes find, which a loader filling the
     * cache meanwhile would make a race (test_engine tests the loaders) */
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = 1, .variant = variant, .cache_bytes = cache,
                           .loader_threads = DTB_NO_LOADERS,
                           .log = book ? log_to_book : NULL, .log_user = book};
    dtb_db *db = NULL;
    const dtb_status s = dtb_open(&o, &db);
    if (s != DTB_OK)
        fail_msg("dtb_open(%s): %s%s", dir, dtb_strerror(s), book ? book->text : "");
    return db;
}

static void path_join(char *buf, size_t size, const char *a, const char *b)
{
    snprintf(buf, size, "%s/%s", a, b);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

static void poke(const char *path, long offset, unsigned char xor_mask)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, offset, SEEK_SET), 0);
    const int c = fgetc(f);
    assert_true(c != EOF);
    assert_int_equal(fseek(f, offset, SEEK_SET), 0);
    fputc(c ^ xor_mask, f);
    assert_int_equal(fclose(f), 0);
}

static void put_u32(const char *path, long offset, uint32_t v)
{
    unsigned char b[4];
    dtb_tf_put32(b, v);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, offset, SEEK_SET), 0);
    assert_int_equal(fwrite(b, 1, 4, f), 4);
    assert_int_equal(fclose(f), 0);
}

/* First quiet position (white to move) of a material, from index from on. */
static dtb_pos quiet_position(const char *name, uint64_t from)
{
    const dtb_solved_table *t = table_of(name);
    for (uint64_t i = from; i < dtb_index_size(t->index); i++) {
        dtb_pos p;
        dtb_index_pos(t->index, i, &p);
        if (!dtb_has_capture(&board, &p))
            return p;
    }
    fail_msg("no quiet position in %s", name);
    return (dtb_pos){0};
}

/* ---- the fixture -------------------------------------------------------------------------- */

/* Writes t's table in metric as build.c does, but with capture positions holding garbage. */
static int write_fixture_table(const dtb_solved_table *t, dtb_metric metric)
{
    const uint64_t n = dtb_index_size(t->index);
    uint8_t *values = malloc(n);
    if (!values)
        return -1;
    for (uint64_t i = 0; i < n; i++) {
        const dtb_value v = t->values[i];
        const bool capture = t->captures[i / 64] >> (i % 64) & 1;
        if (metric == DTB_METRIC_WLD)
            values[i] = capture ? 3 : dtb_value_is_win(v) ? 1 : dtb_value_is_loss(v) ? 2 : 0;
        else
            values[i] = capture ? (uint8_t)(v ^ 0x55) : v;
    }
    char name[DTB_MATERIAL_NAME_MAX], path[512];
    dtb_material_name(&t->material, name, sizeof name);
    dtb_build_table_path(path, sizeof path, maindir, board.variant, &t->material, metric);
    dtb_table_write_options o = dtb_build_write_options(board.variant, name, metric);
    o.dontcare_kind = DTB_DONTCARE_CAPTURES;
    o.zstd_level = 1;
    o.fill = DTB_FILL_NONE;
    const dtb_table_dontcare dc = {.bits = t->captures, .marker = -1};
    dtb_error e;
    const dtb_status s = dtb_table_write(path, &o, values, n, &dc, NULL, &e);
    free(values);
    if (s != DTB_OK)
        fprintf(stderr, "fixture: %s\n", e.msg);
    return s == DTB_OK ? 0 : -1;
}

static bool is_four_piece_fixture(const dtb_material *m)
{
    if (ALL_FOUR)
        return true;
    for (size_t k = 0; k < sizeof kings_only_four / sizeof kings_only_four[0]; k++) {
        dtb_material f;
        dtb_material_parse(kings_only_four[k], &f, NULL);
        if (dtb_material_equal(m, &f))
            return true;
    }
    return false;
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_probe_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(maindir, sizeof maindir, "%s/main", root);
    dtb_board_init(&board, dtb_variant_find("international"));
    const dtb_build_options bo = {.variant = board.variant, .pieces = 3, .out_dir = maindir,
                                  .zstd_level = 1};
    dtb_error e;
    if (dtb_build(&bo, &e) != DTB_OK) {
        fprintf(stderr, "fixture: dtb_build: %s\n", e.msg);
        return -1;
    }
    if (!(solved = dtb_solved_create(&board)))
        return -1;
    dtb_material list[128];
    const int n = dtb_material_list(4, list, 128);
    for (int i = 0; i < n; i++) {
        const dtb_material *m = &list[i];
        if (dtb_material_pieces(m) > 3 && !is_four_piece_fixture(m))
            continue;
        mats[nmats++] = *m;
        if (dtb_solved_find(solved, *m))
            continue; /* solved with its flip */
        dtb_solve_stats st[2];
        if (dtb_solve_pair(solved, *m, false, st, NULL, NULL, &e) != DTB_OK) {
            fprintf(stderr, "fixture: solve: %s\n", e.msg);
            return -1;
        }
    }
    for (int i = 0; i < nmats; i++)
        if (dtb_material_pieces(&mats[i]) == 4) {
            const dtb_solved_table *t = dtb_solved_find(solved, mats[i]);
            if (write_fixture_table(t, DTB_METRIC_WLD) || write_fixture_table(t, DTB_METRIC_DTW))
                return -1;
        }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dtb_solved_free(solved);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- statuses ------------------------------------------------------------------------------ */

static void test_strerror(void **state)
{
    (void)state;
    for (int s = DTB_OK; s <= DTB_E_NOROOM; s++) {
        assert_non_null(dtb_strerror((dtb_status)s));
        assert_string_not_equal(dtb_strerror((dtb_status)s), "unknown status");
    }
    assert_string_equal(dtb_strerror(DTB_E_NOTFOUND), "table not found");
    assert_string_equal(dtb_strerror((dtb_status)99), "unknown status");
}

/* ---- the probe's capture test ------------------------------------------------------------- */

/* The probe's branch-free capture test (probe/capturetest.h) against the full move generator:
 * a position has a capture exactly when its legal moves take pieces. Random placements of up
 * to 3 kings and 4 men a side, on every board the test claims to handle. */
static void test_capture_test(void **state)
{
    (void)state;
    uint64_t seed = 99;
    dtb_movelist *list = malloc(sizeof *list);
    assert_non_null(list);
    int boards = 0;
    for (int vi = 0; vi < dtb_variant_count(); vi++) {
        dtb_board b;
        dtb_board_init(&b, dtb_variant_at(vi));
        dtb_capturetest t;
        dtb_capturetest_init(&t, &b);
        if (b.squares > 64) {
            assert_false(t.usable);
            continue;
        }
        assert_true(t.usable);
        boards++;
        int with = 0;
        for (int trial = 0; trial < 20000; trial++) {
            dtb_pos p = {{0, 0}, {0, 0}, (dtb_splitmix64(&seed) & 1) ? DTB_BLACK : DTB_WHITE};
            dtb_bb used = 0;
            for (int c = 0; c < 2; c++) {
                const int nk = (int)(dtb_splitmix64(&seed) % 4);
                const int nm = (int)(dtb_splitmix64(&seed) % 5);
                for (int k = 0; k < nk + nm; k++) {
                    const bool man = k >= nk;
                    const dtb_bb bad = used | (man ? b.promotion[c] : 0);
                    int sq;
                    do
                        sq = (int)(dtb_splitmix64(&seed) % (uint64_t)b.squares);
                    while (dtb_bb_has(bad, sq));
                    used |= dtb_bb_bit(sq);
                    if (man)
                        p.men[c] |= dtb_bb_bit(sq);
                    else
                        p.kings[c] |= dtb_bb_bit(sq);
                }
            }
            assert_int_equal(dtb_generate(&b, &p, list), DTB_OK);
            const bool takes = list->count > 0 && list->moves[0].ncaptured > 0;
            with += takes;
            if (dtb_capturetest_has(&t, &p) != takes) {
                char fen[256];
                dtb_fen_write(&b, &p, fen, sizeof fen);
                fail_msg("%s %s: capture test says %d, the moves say %d", b.variant->name, fen,
                         !takes, takes);
            }
        }
        assert_true(with > 1000 && with < 19000); /* both answers were exercised */
    }
    assert_int_equal(boards, 4);
    free(list);
}

/* ---- every position ----------------------------------------------------------------------- */

enum { PROBE_WDL = 1, PROBE_DTW = 2 };

/* Whether libdtb's WDL and/or DTW (probes: PROBE_ flags) for p are the generator's v; else why
 * not, in why. */
static bool probe_matches(dtb_db *db, const dtb_pos *p, dtb_value v, int probes, char *why,
                          size_t size)
{
    const dtb_position x = pub(p);
    dtb_wdl w = dtb_value_wdl(v), w2 = w;
    int d = dtb_value_dtw(v);
    const dtb_status s = probes & PROBE_WDL ? dtb_probe_wdl(db, &x, 0, &w) : DTB_OK;
    const dtb_status s2 = probes & PROBE_DTW ? dtb_probe_dtw(db, &x, 0, &w2, &d) : DTB_OK;
    if (s == DTB_OK && s2 == DTB_OK && w == dtb_value_wdl(v) && w2 == w && d == dtb_value_dtw(v))
        return true;
    char fen[DTB_FEN_MAX], msg[DTB_MESSAGE_SIZE];
    dtb_fen_write(&board, p, fen, sizeof fen);
    dtb_last_error(db, msg, sizeof msg);
    snprintf(why, size, "%s: WDL %d (%s), DTW probe %d in %d (%s) %s; expected %d in %d", fen, w,
             dtb_strerror(s), w2, d, dtb_strerror(s2), msg, dtb_value_wdl(v), dtb_value_dtw(v));
    return false;
}

/* Every position of every fixture material through libdtb, shared out by material among
 * threads (the probes are thread-safe; cmocka's checks are not, so threads only count). */
typedef struct sweep {
    dtb_db *db;
    int next; /* next material to take */
    pthread_mutex_t lock;
    uint64_t positions[5], captures[5], mismatches;
    char first[1024]; /* the first mismatch found */
} sweep;

static void *sweep_thread(void *arg)
{
    sweep *sw = arg;
    uint64_t positions[5] = {0}, captures[5] = {0}, mismatches = 0;
    char why[1024];
    for (int i; (i = __atomic_fetch_add(&sw->next, 1, __ATOMIC_RELAXED)) < nmats;) {
        const int pieces = dtb_material_pieces(&mats[i]);
        const dtb_solved_table *t = dtb_solved_find(solved, mats[i]);
        const uint64_t n = dtb_index_size(t->index), stride = pieces == 4 ? FOUR_STRIDE : 1;
        for (uint64_t k = 0; k < n; k += stride) {
            dtb_pos p, f;
            dtb_index_pos(t->index, k, &p);
            dtb_pos_flip(&board, &p, &f); /* black to move, same value */
            const dtb_value v = t->values[k];
            /* Up to 3 pieces both probes on both sides. 4 pieces (42 M positions): the DTW
             * probe (value and distance) of every one with white to move, and the WDL probe
             * through the flip of every FLIP_STRIDE-th. */
            for (int side = 0; side < 2; side++) {
                if (pieces == 4 && side && k / stride % FLIP_STRIDE)
                    continue;
                const int probes = pieces < 4 ? PROBE_WDL | PROBE_DTW : side ? PROBE_WDL : PROBE_DTW;
                positions[pieces]++;
                if (!probe_matches(sw->db, side ? &f : &p, v, probes, why, sizeof why) &&
                    mismatches++ == 0) {
                    pthread_mutex_lock(&sw->lock);
                    if (!sw->first[0])
                        snprintf(sw->first, sizeof sw->first, "%s", why);
                    pthread_mutex_unlock(&sw->lock);
                }
            }
            captures[pieces] += t->captures[k / 64] >> (k % 64) & 1;
        }
    }
    pthread_mutex_lock(&sw->lock);
    for (int k = 0; k < 5; k++) {
        sw->positions[k] += positions[k];
        sw->captures[k] += captures[k];
    }
    sw->mismatches += mismatches;
    pthread_mutex_unlock(&sw->lock);
    return NULL;
}

static void test_every_position(void **state)
{
    (void)state;
    dtb_db *db = open_db(maindir, NULL, 256u << 20, NULL);
    assert_string_equal(dtb_db_variant(db), "international");
    assert_int_equal(dtb_db_squares(db), 50);
    sweep sw = {.db = db};
    pthread_mutex_init(&sw.lock, NULL);
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, sweep_thread, &sw), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&sw.lock);
    if (sw.mismatches)
        fail_msg("%llu probes differ from the generator; the first: %s",
                 (unsigned long long)sw.mismatches, sw.first);
    /* Every 2- and 3-piece position, with captures among them; every 4-piece one (both sides
     * to move) where all 4-piece materials are solved. */
    assert_int_equal(sw.positions[2], 2 * (1985 + 2205 + 2205 + 2450));
    uint64_t four = 0;
    for (int i = 0; i < nmats; i++)
        if (dtb_material_pieces(&mats[i]) == 4) {
            const uint64_t n = dtb_index_size(dtb_solved_find(solved, mats[i])->index);
            four += n + (n + FLIP_STRIDE - 1) / FLIP_STRIDE;
        }
    if (ALL_FOUR)
        assert_int_equal(sw.positions[4], four);
    for (int k = 2; k <= 4; k++) {
        assert_true(sw.captures[k] > 0);
        print_message("%d pieces: %llu probes checked (white and black to move), %llu capture "
                      "positions among the white-to-move ones\n",
                      k, (unsigned long long)sw.positions[k], (unsigned long long)sw.captures[k]);
    }
    dtb_close(db);
}

/* ---- ranked moves and best lines ---------------------------------------------------------- */

static void check_moves_and_line(dtb_db *db, const dtb_pos *p)
{
    const dtb_position x = pub(p);
    dtb_ranked_move moves[DTB_MAX_MOVES];
    int n = -1;
    assert_int_equal(dtb_probe_moves(db, &x, 0, moves, DTB_MAX_MOVES, &n), DTB_OK);
    dtb_movelist list;
    assert_int_equal(dtb_generate(&board, p, &list), DTB_OK);
    assert_int_equal(n, list.count);
    const dtb_value v = expected(p);
    for (int i = 0; i < n; i++) {
        /* Each move's value is the generator's value after it, seen by the mover. */
        dtb_position after;
        assert_int_equal(dtb_position_after(db, &x, &moves[i].move, &after), DTB_OK);
        dtb_pos q = {{(dtb_bb)after.men[0][1] << 64 | after.men[0][0],
                      (dtb_bb)after.men[1][1] << 64 | after.men[1][0]},
                     {(dtb_bb)after.kings[0][1] << 64 | after.kings[0][0],
                      (dtb_bb)after.kings[1][1] << 64 | after.kings[1][0]},
                     after.side == DTB_SIDE_WHITE ? DTB_WHITE : DTB_BLACK};
        const dtb_value mine = dtb_value_parent(expected(&q));
        assert_int_equal(moves[i].wdl, dtb_value_wdl(mine));
        assert_int_equal(moves[i].dtw, dtb_value_dtw(mine));
        assert_true(moves[i].move.text[0] != 0);
        /* Best first. */
        if (i > 0) {
            const int a = moves[i - 1].wdl, b = moves[i].wdl;
            assert_true(a >= b);
            if (a == b && a == DTB_WIN)
                assert_true(moves[i - 1].dtw <= moves[i].dtw);
            if (a == b && a == DTB_LOSS)
                assert_true(moves[i - 1].dtw >= moves[i].dtw);
        }
    }
    if (n > 0) {
        assert_int_equal(moves[0].wdl, dtb_value_wdl(v));
        assert_int_equal(moves[0].dtw, dtb_value_dtw(v));
    }
    /* The line: as long as the DTW, every move a best one, ending where the side to move has
     * no move. */
    dtb_pdn_move line[DTB_MAX_LINE];
    int len = -1;
    assert_int_equal(dtb_probe_line(db, &x, 0, line, DTB_MAX_LINE, &len), DTB_OK);
    if (dtb_value_wdl(v) == DTB_DRAW) {
        assert_int_equal(len, 0);
        return;
    }
    assert_int_equal(len, dtb_value_dtw(v));
    dtb_position cur = x;
    for (int i = 0; i < len; i++) {
        dtb_wdl w;
        int d;
        assert_int_equal(dtb_probe_dtw(db, &cur, 0, &w, &d), DTB_OK);
        assert_int_equal(d, dtb_value_dtw(v) - i);
        dtb_position next;
        assert_int_equal(dtb_position_after(db, &cur, &line[i], &next), DTB_OK);
        cur = next;
    }
    int left = -1;
    dtb_ranked_move none[1];
    if (cur.men[cur.side][0] | cur.kings[cur.side][0]) {
        assert_int_equal(dtb_probe_moves(db, &cur, 0, none, 1, &left), DTB_OK);
        assert_int_equal(left, 0);
    }
}

static void test_moves_and_lines(void **state)
{
    (void)state;
    dtb_db *db = open_db(maindir, "international", 64u << 20, NULL);
    int checked = 0, wins = 0;
    for (int k = 0; k < nmats; k++) {
        const dtb_solved_table *t = dtb_solved_find(solved, mats[k]);
        const uint64_t n = dtb_index_size(t->index);
        for (uint64_t i = k; i < n; i += n / 40 + 1) {
            dtb_pos p, f;
            dtb_index_pos(t->index, i, &p);
            check_moves_and_line(db, &p);
            dtb_pos_flip(&board, &p, &f);
            check_moves_and_line(db, &f);
            checked += 2;
            wins += dtb_value_is_win(t->values[i]);
        }
    }
    assert_true(wins > 100);
    /* A known line: W:W28,K46:BK5, the man runs and the king captures (W 28-22 or 28-23 wins in
     * 3 plies per tests/data: every first move ranked with its DTW). */
    dtb_position x;
    char err[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_position_from_fen(db, "B:W28:B23", &x, err, sizeof err), DTB_OK);
    dtb_pdn_move line[4];
    int len;
    assert_int_equal(dtb_probe_line(db, &x, 0, line, 4, &len), DTB_OK);
    assert_int_equal(len, 1);
    assert_string_equal(line[0].text, "23x32");
    assert_int_equal(line[0].ncaptured, 1);
    assert_int_equal(line[0].captured[0], 28);
    /* Too small an output: the count is still given. */
    dtb_ranked_move one[1];
    int n;
    assert_int_equal(dtb_position_from_fen(db, "W:WK46:BK5", &x, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_moves(db, &x, 0, one, 1, &n), DTB_E_OVERFLOW);
    assert_int_equal(n, 8); /* along the long diagonal up to 10 */
    assert_int_equal(one[0].wdl, DTB_LOSS);  /* wherever it goes, 5 takes it */
    assert_int_equal(dtb_probe_moves(db, &x, 0, NULL, 0, &n), DTB_E_OVERFLOW);
    assert_int_equal(n, 8);
    print_message("%d positions ranked and followed to the end\n", checked);
    dtb_close(db);
}

/* ---- threads -------------------------------------------------------------------------------- */

/* A random position of a random material of the fixture, either side to move (captures
 * included); *seed is a xorshift state, advanced. */
static void random_position(uint64_t *seed, dtb_pos *p)
{
    uint64_t x = *seed;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *seed = x;
    const dtb_solved_table *t = dtb_solved_find(solved, mats[x % (uint64_t)nmats]);
    dtb_index_pos(t->index, (x >> 20) % dtb_index_size(t->index), p);
    if (x >> 63)
        dtb_pos_flip(&board, p, p);
}

#define THREAD_POSITIONS 6000
#define THREADS 8

typedef struct thread_job {
    dtb_db *db;
    const dtb_position *pos;
    int start;
    bool batches; /* through dtb_probe_wdl_many / dtb_probe_dtw_many */
    int answers[THREAD_POSITIONS][3]; /* status, wdl, dtw (dtw probes on odd positions) */
} thread_job;

static void probe_all(dtb_db *db, const dtb_position *pos, int start, int answers[][3])
{
    for (int k = 0; k < THREAD_POSITIONS; k++) {
        const int i = (start + k) % THREAD_POSITIONS;
        dtb_wdl w = 0;
        int d = 0;
        const dtb_status s =
            i % 2 ? dtb_probe_dtw(db, &pos[i], 0, &w, &d) : dtb_probe_wdl(db, &pos[i], 0, &w);
        answers[i][0] = s;
        answers[i][1] = w;
        answers[i][2] = d;
    }
}

/* probe_all's answers from batches of RUN positions (both metrics on each batch; 23 does not
 * divide the chunks of the library's batch code). */
enum { RUN = 23 };

static void probe_all_batched(dtb_db *db, const dtb_position *pos, int start, int answers[][3])
{
    for (int k = 0; k < THREAD_POSITIONS;) {
        const int i = (start + k) % THREAD_POSITIONS;
        int m = THREAD_POSITIONS - i < RUN ? THREAD_POSITIONS - i : RUN;
        if (m > THREAD_POSITIONS - k)
            m = THREAD_POSITIONS - k;
        dtb_wdl w[RUN] = {0}, wd[RUN] = {0};
        int d[RUN] = {0};
        dtb_status sw[RUN], sd[RUN];
        dtb_probe_wdl_many(db, &pos[i], m, 0, w, sw);
        dtb_probe_dtw_many(db, &pos[i], m, 0, wd, d, sd);
        for (int x = 0; x < m; x++) {
            const bool dtw = (i + x) % 2;
            answers[i + x][0] = dtw ? sd[x] : sw[x];
            answers[i + x][1] = dtw ? wd[x] : w[x];
            answers[i + x][2] = dtw ? d[x] : 0;
        }
        k += m;
    }
}

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    if (j->batches)
        probe_all_batched(j->db, j->pos, j->start, j->answers);
    else
        probe_all(j->db, j->pos, j->start, j->answers);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    /* Random positions of every material, either side to move, captures included. */
    dtb_position *pos = malloc(THREAD_POSITIONS * sizeof *pos);
    assert_non_null(pos);
    uint64_t seed = 88172645463325252ull;
    for (int k = 0; k < THREAD_POSITIONS; k++) {
        dtb_pos p;
        random_position(&seed, &p);
        pos[k] = pub(&p);
    }
    static int single[THREAD_POSITIONS][3];
    dtb_db *one = open_db(maindir, NULL, 64u << 20, NULL);
    probe_all(one, pos, 0, single);
    dtb_close(one);
    /* Eight threads on one handle with a small cache: constant eviction and concurrent misses
     * of the same blocks. */
    static thread_job jobs[THREADS];
    pthread_t tid[THREADS];
    dtb_db *db = open_db(maindir, NULL, 256u << 10, NULL);
    for (int t = 0; t < THREADS; t++) {
        jobs[t].db = db;
        jobs[t].pos = pos;
        jobs[t].start = t * THREAD_POSITIONS / THREADS;
        jobs[t].batches = t % 2; /* half the threads probe in batches */
        assert_int_equal(pthread_create(&tid[t], NULL, thread_main, &jobs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(tid[t], NULL), 0);
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < THREAD_POSITIONS; k++) {
            assert_int_equal(single[k][0], DTB_OK);
            assert_memory_equal(jobs[t].answers[k], single[k], sizeof single[k]);
        }
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_true(cs.misses > 0 && cs.hits > 0);
    assert_true(cs.bytes <= (256u << 10) + 65536 + 64); /* one block over at most */
    dtb_close(db);
    free(pos);
}

/* ---- cache-only probes ---------------------------------------------------------------------- */

static void test_cache_only(void **state)
{
    (void)state;
    dtb_db *db = open_db(maindir, NULL, 64u << 20, NULL);
    /* KKKvK has several blocks: a position in its first block, and one far away. */
    const dtb_solved_table *t = table_of("KKKvK");
    const dtb_pos near = quiet_position("KKKvK", 0);
    const dtb_pos far = quiet_position("KKKvK", dtb_index_size(t->index) - 70000);
    const dtb_position a = pub(&near), b = pub(&far);
    dtb_wdl w;
    int d;
    /* Nothing opened yet: cache-only does not touch the disk. */
    assert_int_equal(dtb_probe_wdl(db, &a, DTB_CACHE_ONLY, &w), DTB_E_NOTCACHED);
    assert_int_equal(dtb_probe_dtw(db, &a, DTB_CACHE_ONLY, &w, &d), DTB_E_NOTCACHED);
    dtb_cache_stats cs = {.struct_size = sizeof cs};
    assert_int_equal(dtb_get_cache_stats(db, &cs), DTB_OK);
    assert_int_equal(cs.blocks, 0);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_OK); /* not recorded */
    /* After a real probe the same position is answered from memory ... */
    assert_int_equal(dtb_probe_wdl(db, &a, 0, &w), DTB_OK);
    dtb_wdl again;
    assert_int_equal(dtb_probe_wdl(db, &a, DTB_CACHE_ONLY, &again), DTB_OK);
    assert_int_equal(again, w);
    assert_int_equal(again, dtb_value_wdl(expected(&near)));
    /* ... but another block of the same (now open) table is not, nor the DTW table. */
    assert_int_equal(dtb_probe_wdl(db, &b, DTB_CACHE_ONLY, &w), DTB_E_NOTCACHED);
    assert_int_equal(dtb_probe_dtw(db, &a, DTB_CACHE_ONLY, &w, &d), DTB_E_NOTCACHED);
    assert_int_equal(dtb_probe_dtw(db, &a, 0, &w, &d), DTB_OK);
    assert_int_equal(dtb_probe_dtw(db, &a, DTB_CACHE_ONLY, &w, &d), DTB_OK);
    assert_int_equal(d, dtb_value_dtw(expected(&near)));
    /* A capture position (5x23 lands on 32, 37, 41 or 46: quiet KvK positions, white to
     * move): the table after the capture is read only without the flag. */
    dtb_position c;
    char err[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_position_from_fen(db, "B:WK6,K23:BK5", &c, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_dtw(db, &c, DTB_CACHE_ONLY, &w, &d), DTB_E_NOTCACHED);
    assert_int_equal(dtb_probe_dtw(db, &c, 0, &w, &d), DTB_OK);
    assert_int_equal(dtb_probe_dtw(db, &c, DTB_CACHE_ONLY, &w, &d), DTB_OK);
    dtb_pos cp;
    dtb_error e;
    assert_int_equal(dtb_fen_read(&board, "B:WK6,K23:BK5", &cp, &e), DTB_OK);
    assert_int_equal(d, dtb_value_dtw(expected(&cp)));
    dtb_close(db);
}

/* ---- batches of probes ------------------------------------------------------------------ */

#define MANY_POSITIONS 20000

/* dtb_probe_wdl_many / dtb_probe_dtw_many against one probe at a time on the same handle and
 * against the generator: random positions of every material, either side to move, captures and
 * invalid positions among them, in batches of many sizes (within and across the library's
 * chunks); then cache-only batches, whose answers depend on what is cached. */
static void test_many(void **state)
{
    (void)state;
    dtb_position *pos = malloc(MANY_POSITIONS * sizeof *pos);
    dtb_value *want = malloc(MANY_POSITIONS * sizeof *want);
    dtb_wdl *w = malloc(MANY_POSITIONS * sizeof *w);
    int *d = malloc(MANY_POSITIONS * sizeof *d);
    dtb_status *st = malloc(MANY_POSITIONS * sizeof *st);
    bool *bad = calloc(MANY_POSITIONS, sizeof *bad); /* made invalid */
    assert_true(pos && want && w && d && st && bad);
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    int invalid = 0;
    for (int k = 0; k < MANY_POSITIONS; k++) {
        dtb_pos p;
        random_position(&seed, &p);
        want[k] = expected(&p);
        pos[k] = pub(&p);
        if (seed % 97 == 0) { /* a white man on white's promotion row (square 1): invalid */
            pos[k].men[0][0] |= 1;
            pos[k].kings[0][0] &= ~1ull, pos[k].men[1][0] &= ~1ull, pos[k].kings[1][0] &= ~1ull;
            bad[k] = true;
            invalid++;
        }
    }
    assert_true(invalid > 100);
    dtb_db *db = open_db(maindir, NULL, 64u << 20, NULL);
    static const int sizes[] = {1, 7, 16, 17, 33, 100, 1000};
    for (int metric = 0; metric < 2; metric++) {
        dtb_status last = DTB_OK;
        for (int at = 0, c = 0; at < MANY_POSITIONS; c++) {
            int n = sizes[c % 7];
            if (n > MANY_POSITIONS - at)
                n = MANY_POSITIONS - at;
            const dtb_status got = metric ? dtb_probe_dtw_many(db, &pos[at], n, 0, &w[at], &d[at], &st[at])
                                          : dtb_probe_wdl_many(db, &pos[at], n, 0, &w[at], &st[at]);
            dtb_status batch_last = DTB_OK;
            for (int k = at; k < at + n; k++)
                if (st[k] != DTB_OK)
                    batch_last = st[k];
            assert_int_equal(got, batch_last);
            last = got != DTB_OK ? got : last;
            at += n;
        }
        assert_int_equal(last, DTB_E_INVALID);
        for (int k = 0; k < MANY_POSITIONS; k++) {
            dtb_wdl w1 = DTB_DRAW;
            int d1 = 0;
            const dtb_status s1 = metric ? dtb_probe_dtw(db, &pos[k], 0, &w1, &d1)
                                         : dtb_probe_wdl(db, &pos[k], 0, &w1);
            if (st[k] != s1)
                fail_msg("position %d: batch status %d, single %d", k, st[k], s1);
            if (bad[k]) {
                assert_int_equal(s1, DTB_E_INVALID);
                continue;
            }
            assert_int_equal(s1, DTB_OK);
            if (w[k] != w1 || w[k] != dtb_value_wdl(want[k]))
                fail_msg("position %d: batch wdl %d, single %d, generator %d", k, w[k], w1,
                         dtb_value_wdl(want[k]));
            if (metric && (d[k] != d1 || d[k] != dtb_value_dtw(want[k])))
                fail_msg("position %d: batch dtw %d, single %d, generator %d", k, d[k], d1,
                         dtb_value_dtw(want[k]));
        }
    }
    /* No status array, no positions, a negative count. */
    bool bad16 = false;
    for (int k = 0; k < 16; k++)
        bad16 |= bad[k];
    assert_int_equal(dtb_probe_wdl_many(db, pos, 16, 0, w, NULL), bad16 ? DTB_E_INVALID : DTB_OK);
    assert_int_equal(dtb_probe_wdl_many(db, pos, 0, 0, w, st), DTB_OK);
    assert_int_equal(dtb_probe_dtw_many(db, pos, -1, 0, w, d, st), DTB_E_INVALID);
    dtb_close(db);
    /* Cache-only on a fresh handle: nothing is cached, then what single probes brought in. */
    db = open_db(maindir, NULL, 64u << 20, NULL);
    const int n = 500;
    const dtb_status none_cached = dtb_probe_wdl_many(db, pos, n, DTB_CACHE_ONLY, w, st);
    int notcached = 0;
    dtb_status last_failure = DTB_OK;
    for (int k = 0; k < n; k++) {
        dtb_wdl w1 = DTB_DRAW;
        const dtb_status s1 = dtb_probe_wdl(db, &pos[k], DTB_CACHE_ONLY, &w1);
        assert_int_equal(st[k], s1);
        assert_true(!bad[k] || s1 == DTB_E_INVALID);
        if (s1 == DTB_OK) /* decided without a table: a capture of the last piece */
            assert_int_equal(w[k], w1);
        notcached += s1 == DTB_E_NOTCACHED;
        last_failure = s1 != DTB_OK ? s1 : last_failure;
    }
    assert_true(notcached > n / 2);
    assert_int_equal(none_cached, last_failure);
    for (int k = 0; k < n; k += 3) {
        dtb_wdl w1;
        (void)dtb_probe_wdl(db, &pos[k], 0, &w1);
    }
    dtb_probe_wdl_many(db, pos, n, DTB_CACHE_ONLY, w, st);
    int cached = 0;
    for (int k = 0; k < n; k++) {
        dtb_wdl w1 = DTB_DRAW;
        const dtb_status s1 = dtb_probe_wdl(db, &pos[k], DTB_CACHE_ONLY, &w1);
        assert_int_equal(st[k], s1);
        if (s1 == DTB_OK) {
            assert_int_equal(w[k], w1);
            cached++;
        }
    }
    assert_true(cached >= n / 3 - 10 && cached < n);
    dtb_close(db);
    free(pos), free(want), free(w), free(d), free(st), free(bad);
}

/* ---- missing tables, and where tables may live ------------------------------------------------ */

/* dir gets links to the files of maindir/international whose names pass keep(). */
static void link_tables(const char *dir, bool (*keep)(const char *name))
{
    assert_int_equal(mkdir(dir, 0777), 0);
    char src[256];
    path_join(src, sizeof src, maindir, "international");
    FILE *ls;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls '%s'", src);
    ls = popen(cmd, "r");
    assert_non_null(ls);
    char name[256];
    while (fgets(name, sizeof name, ls)) {
        name[strcspn(name, "\n")] = 0;
        if (!keep(name))
            continue;
        char from[512], to[512];
        path_join(from, sizeof from, src, name);
        path_join(to, sizeof to, dir, name);
        assert_int_equal(symlink(from, to), 0);
    }
    pclose(ls);
}

static bool all_but_kvk(const char *name)
{
    return strncmp(name, "KvK.", 4) != 0 && (strstr(name, ".wld") || strstr(name, ".dtw"));
}

static bool dtw_only(const char *name) { return strstr(name, ".dtw") != NULL; }

static void test_missing_tables(void **state)
{
    (void)state;
    /* Files directly in the directory (no variant subdirectory), KvK missing. */
    char dir[256];
    path_join(dir, sizeof dir, root, "no_kvk");
    link_tables(dir, all_but_kvk);
    dtb_db *db = open_db(dir, NULL, 1u << 20, NULL);
    assert_string_equal(dtb_db_variant(db), "international");
    assert_int_equal(dtb_max_pieces(db, false), 1);
    assert_int_equal(dtb_max_pieces(db, true), 1);
    dtb_position x;
    char err[DTB_MESSAGE_SIZE], msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_position_from_fen(db, "W:WK10:BK5", &x, err, sizeof err), DTB_OK);
    dtb_wdl w;
    int d;
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "KvK"));
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "KvK.dtw"));
    /* Other materials still answer ... */
    assert_int_equal(dtb_position_from_fen(db, "W:WK46,K1:BK5", &x, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    /* ... but not a capture that can only lead into the missing one: 5x23 lands on 28 (where
     * 6 takes back: no table needed), 32, 37, 41 or 46 (quiet KvK positions). */
    assert_int_equal(dtb_position_from_fen(db, "B:WK6,K23:BK5", &x, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_NOTFOUND);
    dtb_close(db);

    /* Only .dtw files: WDL probes use those that store every value (the 4-piece fixture's). A
     * losses-only one (dtb_build's, up to 3 pieces) says nothing of wins and draws without its
     * .wld: WDL and DTW probes alike are refused, naming both files. */
    path_join(dir, sizeof dir, root, "dtw_only");
    link_tables(dir, dtw_only);
    db = open_db(dir, NULL, 1u << 20, NULL);
    assert_int_equal(dtb_max_pieces(db, false), ALL_FOUR ? 4 : 3);
    assert_int_equal(dtb_max_pieces(db, true), ALL_FOUR ? 4 : 3);
    const dtb_pos p = quiet_position("KKKvK", 500);
    x = pub(&p);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    assert_int_equal(w, dtb_value_wdl(expected(&p)));
    const dtb_pos lo = quiet_position("KMvK", 500);
    x = pub(&lo);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "KMvK.wld"));
    assert_non_null(strstr(msg, "KMvK.dtw"));
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "KMvK.wld"));
    assert_non_null(strstr(msg, "KMvK.dtw"));
    dtb_close(db);

    /* The full fixture: everything up to 3 pieces, and all or some 4-piece materials. */
    db = open_db(maindir, NULL, 1u << 20, NULL);
    assert_int_equal(dtb_max_pieces(db, false), ALL_FOUR ? 4 : 3);
    assert_int_equal(dtb_max_pieces(db, true), ALL_FOUR ? 4 : 3);
    assert_int_equal(dtb_position_from_fen(db, "W:W31,32,33:B1,2", &x, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_NOTFOUND);
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
    assert_non_null(strstr(msg, "MMMvMM"));
    dtb_close(db);
}

/* ---- damaged files -------------------------------------------------------------------------- */

/* Every white-to-move position of name through db: quiet ones must fail with want and a message
 * naming file; capture positions (which need no stored value) must be right. */
static void expect_damage(dtb_db *db, const char *name, dtb_metric metric, dtb_status want,
                          const char *file)
{
    const dtb_solved_table *t = table_of(name);
    int failures = 0;
    for (uint64_t i = 0; i < dtb_index_size(t->index); i += 7) {
        dtb_pos p;
        dtb_index_pos(t->index, i, &p);
        const dtb_position x = pub(&p);
        dtb_wdl w;
        int d;
        const dtb_status s = metric == DTB_METRIC_WLD ? dtb_probe_wdl(db, &x, 0, &w)
                                                      : dtb_probe_dtw(db, &x, 0, &w, &d);
        if (t->captures[i / 64] >> (i % 64) & 1) {
            if (s == DTB_OK)
                assert_int_equal(w, dtb_value_wdl(t->values[i]));
            continue;
        }
        if (s != want)
            fail_msg("%s in damaged %s: %s, expected %s", fen_of(&p), file, dtb_strerror(s),
                     dtb_strerror(want));
        char msg[DTB_MESSAGE_SIZE];
        assert_int_equal(dtb_last_error(db, msg, sizeof msg), want);
        if (!strstr(msg, file))
            fail_msg("message '%s' does not name %s", msg, file);
        failures++;
    }
    assert_true(failures > 0);
}

static void test_damaged_files(void **state)
{
    (void)state;
    char dir[256], sub[300], from[512], to[512];
    path_join(dir, sizeof dir, root, "damaged");
    path_join(sub, sizeof sub, dir, "international");
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(mkdir(sub, 0777), 0);
    static const char *const names[] = {"KKvK.wld", "KvKK.wld", "KMvK.dtw", "MvK.wld", "KKKvK.wld"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(from, sizeof from, "%s/international/%s", maindir, names[i]);
        path_join(to, sizeof to, sub, names[i]);
        copy_file(from, to);
    }
    /* Truncated. */
    path_join(to, sizeof to, sub, "KKvK.wld");
    assert_int_equal(truncate(to, file_size(to) / 2), 0);
    /* One bit flipped inside the compressed data (the frames sit before the 16-byte trailer). */
    path_join(to, sizeof to, sub, "KvKK.wld");
    poke(to, file_size(to) - DTB_TF_TRAILER_SIZE - 20, 0x10);
    /* A format version this build does not read. */
    path_join(to, sizeof to, sub, "KMvK.dtw");
    put_u32(to, DTB_TF_OFF_VERSION, DTB_TF_VERSION_RULES + 1);
    /* A sound table of another variant under an international name. */
    char rdir[256];
    path_join(rdir, sizeof rdir, root, "russian");
    const dtb_build_options ro = {.variant = dtb_variant_find("russian"), .pieces = 2,
                                  .out_dir = rdir, .zstd_level = 1};
    dtb_error e;
    assert_int_equal(dtb_build(&ro, &e), DTB_OK);
    snprintf(from, sizeof from, "%s/russian/MvK.wld", rdir);
    path_join(to, sizeof to, sub, "MvK.wld");
    copy_file(from, to);
    /* A later block of a many-block table flipped: the damage shows only where it is read. */
    path_join(to, sizeof to, sub, "KKKvK.wld");
    poke(to, file_size(to) - DTB_TF_TRAILER_SIZE - 5, 0x01);

    logbook book;
    const char *dirs[2] = {dir, maindir}; /* the damaged files come first */
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = 2, .cache_bytes = 1u << 20,
                           .log = log_to_book, .log_user = &book};
    memset(&book, 0, sizeof book);
    pthread_mutex_init(&book.lock, NULL);
    dtb_db *db;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    assert_string_equal(dtb_db_variant(db), "international");
    expect_damage(db, "KKvK", DTB_METRIC_WLD, DTB_E_CORRUPT, "KKvK.wld");
    expect_damage(db, "KvKK", DTB_METRIC_WLD, DTB_E_CORRUPT, "KvKK.wld");
    expect_damage(db, "KMvK", DTB_METRIC_DTW, DTB_E_VERSION, "KMvK.dtw");
    expect_damage(db, "MvK", DTB_METRIC_WLD, DTB_E_MISMATCH, "MvK.wld");
    /* The damaged files were each logged once, by name. */
    for (int i = 0; i < 4; i++)
        if (!strstr(book.text, names[i]))
            fail_msg("log does not name %s:\n%s", names[i], book.text);
    assert_int_equal(book.lines, 4);
    /* The many-block table: its first block is sound, its last is not. */
    const dtb_solved_table *t = table_of("KKKvK");
    const dtb_pos first = quiet_position("KKKvK", 0);
    const dtb_pos last = quiet_position("KKKvK", dtb_index_size(t->index) - 300);
    dtb_position x = pub(&first);
    dtb_wdl w;
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    assert_int_equal(w, dtb_value_wdl(expected(&first)));
    x = pub(&last);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_CORRUPT);
    char msg[DTB_MESSAGE_SIZE];
    dtb_last_error(db, msg, sizeof msg);
    assert_non_null(strstr(msg, "KKKvK.wld"));
    assert_non_null(strstr(msg, "checksum"));
    /* Undamaged materials still answer (from the second directory). */
    const dtb_pos ok = quiet_position("KKvKK", 1000);
    x = pub(&ok);
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    assert_int_equal(w, dtb_value_wdl(expected(&ok)));
    /* dtb_verify finds all five, names them in the log, and says which failed first. */
    book.text[0] = 0;
    book.lines = 0;
    int bad = -1;
    const dtb_status s = dtb_verify(db, 0, NULL, NULL, &bad);
    assert_true(s != DTB_OK);
    assert_int_equal(bad, 5);
    for (int i = 0; i < 5; i++)
        if (!strstr(book.text, names[i]))
            fail_msg("verify log does not name %s:\n%s", names[i], book.text);
    dtb_close(db);
}

/* ---- FEN and opening errors ------------------------------------------------------------------ */

static void test_fen(void **state)
{
    (void)state;
    dtb_db *db = open_db(maindir, NULL, 1u << 20, NULL);
    static const char *const bad[] = {
        "", "X:W1:B2", "W:W1:B51", "W:W1,1:B2", "W:W3:B2,3", "W:W1:B46x", "W:W31:B", "B:W:B2",
        "W:W1:B46", /* white man on its promotion row */
    };
    dtb_position p;
    char err[DTB_MESSAGE_SIZE];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        if (dtb_position_from_fen(db, bad[i], &p, err, sizeof err) != DTB_E_INVALID)
            fail_msg("'%s' accepted", bad[i]);
        if (!err[0])
            fail_msg("'%s': no message", bad[i]);
    }
    assert_int_equal(dtb_position_from_fen(db, NULL, &p, err, sizeof err), DTB_E_INVALID);
    assert_int_equal(dtb_position_from_fen(db, "W:W31:B", &p, err, sizeof err), DTB_E_INVALID);
    assert_non_null(strstr(err, "no pieces"));
    /* The side to move may have nothing left: the game is over, a status and no value (dtb.h,
     * "The game is over"), not covered, and no move. */
    assert_int_equal(dtb_position_from_fen(db, "B:W31:B", &p, err, sizeof err), DTB_OK);
    dtb_wdl w = DTB_DRAW;
    int d = 7;
    assert_int_equal(dtb_probe_dtw(db, &p, 0, &w, &d), DTB_E_GAMEOVER);
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &w), DTB_E_GAMEOVER);
    assert_int_equal(dtb_probe_wdl(db, &p, DTB_CACHE_ONLY | DTB_QUIET_POSITION, &w),
                     DTB_E_GAMEOVER);
    assert_int_equal(w, DTB_DRAW); /* untouched */
    assert_int_equal(d, 7);
    dtb_status st = DTB_OK;
    assert_int_equal(dtb_probe_wdl_many(db, &p, 1, 0, &w, &st), DTB_E_GAMEOVER);
    assert_int_equal(st, DTB_E_GAMEOVER);
    assert_false(dtb_covers(db, &p, false) || dtb_covers(db, &p, true));
    int nmoves = -1;
    assert_int_equal(dtb_probe_moves(db, &p, 0, NULL, 0, &nmoves), DTB_OK);
    assert_int_equal(nmoves, 0);
    /* Square lists and FEN agree; the FEN written is canonical. */
    dtb_position q;
    dtb_position_clear(&q, DTB_SIDE_BLACK);
    dtb_position_put(&q, DTB_SIDE_WHITE, true, 33);
    dtb_position_put(&q, DTB_SIDE_WHITE, false, 31);
    dtb_position_put(&q, DTB_SIDE_BLACK, false, 2);
    assert_int_equal(dtb_position_from_fen(db, "B:B2:W31,K33.", &p, err, sizeof err), DTB_OK);
    assert_memory_equal(p.men, q.men, sizeof p.men);
    assert_memory_equal(p.kings, q.kings, sizeof p.kings);
    assert_int_equal(p.side, q.side);
    char fen[400];
    assert_int_equal(dtb_position_to_fen(db, &q, fen, sizeof fen), DTB_OK);
    assert_string_equal(fen, "B:W31,K33:B2");
    assert_int_equal(dtb_position_to_fen(db, &q, fen, 5), DTB_E_OVERFLOW);
    /* Probes check what they are given. */
    /* put refuses a taken square; the probe refuses the same position made by hand */
    assert_int_equal(dtb_position_put(&q, DTB_SIDE_BLACK, true, 33), DTB_E_INVALID);
    q.kings[DTB_SIDE_BLACK][0] |= 1ull << 32; /* two pieces on 33 */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_INVALID);
    assert_non_null(strstr(msg, "33"));
    dtb_position_clear(&q, DTB_SIDE_WHITE);
    assert_int_equal(dtb_position_put(&q, DTB_SIDE_WHITE, true, 51), DTB_OK); /* off the board */
    dtb_position_put(&q, DTB_SIDE_BLACK, true, 1);
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    q.side = 5;
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    /* Each rule of the probes' one-word check (boards up to 64 squares), and the same position
     * made legal again. */
    dtb_position_clear(&q, DTB_SIDE_WHITE);
    dtb_position_put(&q, DTB_SIDE_WHITE, false, 3); /* a white man on its promotion row */
    dtb_position_put(&q, DTB_SIDE_BLACK, true, 50);
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    dtb_position_clear(&q, DTB_SIDE_WHITE);
    dtb_position_put(&q, DTB_SIDE_WHITE, false, 33);
    dtb_position_put(&q, DTB_SIDE_BLACK, false, 48); /* a black man on its promotion row */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    dtb_position_clear(&q, DTB_SIDE_BLACK);
    dtb_position_put(&q, DTB_SIDE_WHITE, true, 33);
    q.kings[DTB_SIDE_BLACK][0] |= 1ull << 32; /* both colours on 33 (put would refuse it) */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    dtb_position_clear(&q, DTB_SIDE_BLACK);
    dtb_position_put(&q, DTB_SIDE_BLACK, true, 10); /* white, not to move, has no piece */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    q.side = DTB_SIDE_WHITE; /* black, not to move, has the piece: the game went on */
    dtb_position_put(&q, DTB_SIDE_WHITE, true, 40);
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_OK);
    q.kings[DTB_SIDE_WHITE][1] = 1; /* a square past the 64th bit */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    q.kings[DTB_SIDE_WHITE][1] = 0;
    q.kings[DTB_SIDE_WHITE][0] |= 1ull << 55; /* past square 50 */
    assert_int_equal(dtb_probe_wdl(db, &q, 0, &w), DTB_E_INVALID);
    dtb_close(db);
}

static void test_open(void **state)
{
    (void)state;
    logbook book = {0};
    pthread_mutex_init(&book.lock, NULL);
    dtb_db *db = (dtb_db *)1;
    dtb_options o = {.struct_size = sizeof(dtb_options), .paths = NULL, .npaths = 0, .log = log_to_book, .log_user = &book};
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    assert_null(db);
    const char *nowhere[1] = {"/nonexistent/dtb/tables"};
    o.paths = nowhere;
    o.npaths = 1;
    assert_int_equal(dtb_open(&o, &db), DTB_E_NOTFOUND);
    assert_non_null(strstr(book.text, "/nonexistent/dtb/tables"));
    const char *dirs[2] = {nowhere[0], maindir}; /* one missing directory is only logged */
    o.paths = dirs;
    o.npaths = 2;
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    dtb_close(db);
    o.variant = "chess";
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    o.variant = "russian"; /* no russian tables there: opens, but every probe is "not found" */
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    assert_int_equal(dtb_max_pieces(db, false), 1);
    dtb_position p;
    char err[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_position_from_fen(db, "W:WK29:BK4", &p, err, sizeof err), DTB_OK);
    dtb_wdl w;
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &w), DTB_E_NOTFOUND);
    dtb_close(db);
    dtb_close(NULL);
    /* Tables of two variants: the variant must be chosen. */
    char mixed[256], link_i[300], link_r[300], target[300];
    path_join(mixed, sizeof mixed, root, "mixed");
    assert_int_equal(mkdir(mixed, 0777), 0);
    path_join(link_i, sizeof link_i, mixed, "international");
    path_join(target, sizeof target, maindir, "international");
    assert_int_equal(symlink(target, link_i), 0);
    path_join(link_r, sizeof link_r, mixed, "russian");
    char rdir[256];
    path_join(rdir, sizeof rdir, root, "russian2");
    const dtb_build_options ro = {.variant = dtb_variant_find("russian"), .pieces = 2,
                                  .out_dir = rdir, .zstd_level = 1};
    dtb_error e;
    assert_int_equal(dtb_build(&ro, &e), DTB_OK);
    path_join(target, sizeof target, rdir, "russian");
    assert_int_equal(symlink(target, link_r), 0);
    const char *m[1] = {mixed};
    o.paths = m;
    o.npaths = 1;
    o.variant = NULL;
    assert_int_equal(dtb_open(&o, &db), DTB_E_INVALID);
    assert_non_null(strstr(book.text, "several variants"));
    o.variant = "russian";
    assert_int_equal(dtb_open(&o, &db), DTB_OK);
    assert_string_equal(dtb_db_variant(db), "russian");
    assert_int_equal(dtb_db_squares(db), 32);
    assert_int_equal(dtb_max_pieces(db, true), 2);
    assert_int_equal(dtb_position_from_fen(db, "W:WK29:BK4", &p, err, sizeof err), DTB_OK);
    assert_int_equal(dtb_probe_wdl(db, &p, 0, &w), DTB_OK);
    dtb_close(db);
}

/* ---- verification ------------------------------------------------------------------------------ */

typedef struct progress_log {
    int calls;
    uint64_t last, total;
    int stop_after; /* 0: never stop */
} progress_log;

static bool on_progress(void *user, const char *file, uint64_t done, uint64_t total)
{
    progress_log *p = user;
    assert_non_null(file);
    assert_true(done >= p->last && done <= total);
    p->calls++;
    p->last = done;
    p->total = total;
    return p->stop_after == 0 || p->calls < p->stop_after;
}

static void test_verify(void **state)
{
    (void)state;
    dtb_db *db = open_db(maindir, NULL, 1u << 20, NULL);
    progress_log pl = {0};
    int bad = -1;
    assert_int_equal(dtb_verify(db, DTB_VERIFY_DECODE, on_progress, &pl, &bad), DTB_OK);
    assert_int_equal(bad, 0);
    assert_true(pl.calls > 0);
    assert_true(pl.last == pl.total && pl.total > 0);
    pl = (progress_log){.stop_after = 3};
    assert_int_equal(dtb_verify(db, 0, on_progress, &pl, &bad), DTB_E_ABORTED);
    assert_int_equal(pl.calls, 3);
    assert_int_equal(dtb_verify(db, 0, NULL, NULL, NULL), DTB_OK);
    dtb_close(db);
}

/* ---- the dtbprobe command line ----------------------------------------------------------------- */

/* Runs the dtbprobe binary with arguments (a shell-quoted string) and the given stdin text;
 * returns its exit status with stdout in out. */
static int run_cli(const char *args, const char *input, char *out, size_t size)
{
    char in_path[300], cmd[2048];
    path_join(in_path, sizeof in_path, root, "cli_input");
    FILE *f = fopen(in_path, "w");
    assert_non_null(f);
    fputs(input ? input : "", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' %s < '%s' 2>&1", DTB_PROBE_BIN, args, in_path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    const size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    const int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void **state)
{
    (void)state;
    static char out[1 << 16];
    char args[1024];
    /* Text: value, DTW, moves, line, diagram. B:W28:B23 takes at once; W:W28,K46:BK5 wins in 3
     * (the generator's values, checked first). */
    dtb_pos p;
    dtb_error e;
    assert_int_equal(dtb_fen_read(&board, "W:W28,K46:BK5", &p, &e), DTB_OK);
    assert_int_equal(expected(&p), dtb_value_win(3));
    snprintf(args, sizeof args, "--tables '%s' 'W:W28,K46:BK5'", maindir);
    assert_int_equal(run_cli(args, NULL, out, sizeof out), 0);
    assert_non_null(strstr(out, "value: win, DTW 3 plies"));
    assert_non_null(strstr(out, "international, white to move"));
    assert_non_null(strstr(out, "line: 28-2"));
    assert_non_null(strstr(out, "46-41        loss   2"));
    assert_non_null(strstr(out, "W   .   .   .   .      46-50")); /* the king on 46 */
    /* JSON from stdin, one object per line, through DTB_PATH; a bad FEN is an error line and
     * exit status 1. */
    char env_args[1200];
    snprintf(env_args, sizeof env_args, "--json");
    setenv("DTB_PATH", maindir, 1);
    const int rc = run_cli(env_args, "W:W28,K46:BK5\n\n# comment\nB:W28:B23\nW:W28:B51\n", out, sizeof out);
    unsetenv("DTB_PATH");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "{\"fen\":\"W:W28,K46:BK5\",\"variant\":\"international\","
                                "\"side\":\"white\",\"wdl\":\"win\",\"dtw\":3,\"mtc\":null,\"moves\":["));
    assert_non_null(strstr(out, "{\"move\":\"46-41\",\"wdl\":\"loss\",\"dtw\":2,"
                                "\"fen\":\"B:W28,K41:BK5\"}"));
    assert_non_null(strstr(out, "\"line\":[\"28-2"));
    assert_non_null(strstr(out, "{\"fen\":\"B:W28:B23\",\"variant\":\"international\",\"side\":"
                                "\"black\",\"wdl\":\"win\",\"dtw\":1,\"mtc\":null,\"moves\":[{\"move\":"
                                "\"23x32\",\"wdl\":\"win\",\"dtw\":1,\"fen\":\"W:W:B32\"}],"
                                "\"line\":[\"23x32\"]}"));
    assert_non_null(strstr(out, "{\"fen\":\"W:W28:B51\",\"error\":\"bad FEN: "));
    /* A draw has dtw null. */
    assert_int_equal(dtb_fen_read(&board, "W:WK1,K2,K3:BK46", &p, &e), DTB_OK);
    assert_int_equal(expected(&p), DTB_VALUE_DRAW);
    snprintf(args, sizeof args, "--tables '%s' --json 'W:WK1,K2,K3:BK46'", maindir);
    assert_int_equal(run_cli(args, NULL, out, sizeof out), 0);
    assert_non_null(strstr(out, "\"wdl\":\"draw\",\"dtw\":null"));
    /* A missing table names the material; exit status 1. */
    snprintf(args, sizeof args, "--tables '%s' 'W:W31,32,33:B1,2'", maindir);
    assert_int_equal(run_cli(args, NULL, out, sizeof out), 1);
    assert_non_null(strstr(out, "MMMvMM"));
    /* Usage errors: exit status 2. */
    snprintf(args, sizeof args, "--tables '%s' --bogus", maindir);
    assert_int_equal(run_cli(args, NULL, out, sizeof out), 2);
    unsetenv("DTB_PATH");
    assert_int_equal(run_cli("'W:WK46:BK5'", NULL, out, sizeof out), 2);
    assert_non_null(strstr(out, "DTB_PATH"));
    assert_int_equal(run_cli("--help", NULL, out, sizeof out), 0);
    assert_non_null(strstr(out, "probe"));
    assert_non_null(strstr(out, "perft"));
    /* A wrong --variant for these tables: nothing found. */
    snprintf(args, sizeof args, "--tables '%s' --variant english 'W:WK1:BK32'", maindir);
    assert_int_equal(run_cli(args, NULL, out, sizeof out), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_capture_test),
        cmocka_unit_test(test_every_position),
        cmocka_unit_test(test_moves_and_lines),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_cache_only),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_missing_tables),
        cmocka_unit_test(test_damaged_files),
        cmocka_unit_test(test_fen),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_cli),
    };
    /* DTB_TEST_FILTER=test_cli runs one test (the fixture is still built). */
    if (getenv("DTB_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DTB_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}
