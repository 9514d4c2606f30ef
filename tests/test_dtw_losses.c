/* Losses-only DTW tables (docs/FORMAT.md §8.7) answer exactly what full ones answer.
 *
 * The fixture builds international and english 2..4 twice with dtb_build: once with every DTW
 * value stored (dtw_full) and once in the default form, whose DTW tables store their losses only
 * (wins found by a one-ply search, draws and results from the .wld tables). Then, through the
 * public API: every position of every material, both sides to move, by dtb_probe_dtw (the fast
 * path, and the general one behind it), the quiet ones again with DTB_QUIET_POSITION, in batches
 * by dtb_probe_dtw_many (the tickets) and by dtb_probe_wdl; cache-only probes after dtb_warm of
 * the DTW tables (which must warm the .wld tables they read first); the ranked moves and best
 * lines of a sample; a losses-only .dtw without its .wld (refused, naming both), a .wld that
 * contradicts its .dtw (corrupt, not a wrong value), and a derived DTW table whose partner is
 * losses-only (refused: the searches could go round).
 *
 * Sanitizer builds, ten times slower, take 2..3 pieces (every position all the same). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dtb.h" /* before core's headers: its status and WDL definitions are the ones used */

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "fen.h"
#include "index.h"
#include "movegen.h"
#include "public_position.h"
#include "tablefile.h"
#include "tablewrite.h"

#ifdef DTB_SANITIZED_BUILD
#define PIECES 3
#else
#define PIECES 4
#endif
#define BATCH 32
/* Every position up to 3 pieces; at 4 pieces every STRIDE4-th of each material (another residue
 * in each) unless DTB_TEST_ALL is set in the environment: every international 4-piece position
 * through every entry point took 4 minutes of CPU, against a few seconds for this sample. */
#define STRIDE4_INTERNATIONAL 61
#define STRIDE4_ENGLISH 13

static char root[64];

typedef struct set {
    const char *variant;
    dtb_board board;
    char full[128], lo[128]; /* the two builds: every DTW value, losses only */
} set;

static set sets[2] = {{.variant = "international"}, {.variant = "english"}};

/* ---- helpers ------------------------------------------------------------------------------ */

static dtb_db *open_db(const char *dir, const char *variant, uint64_t cache)
{
    const char *dirs[1] = {dir};
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = 1,
                           .variant = variant, .cache_bytes = cache,
                           .loader_threads = DTB_NO_LOADERS};
    dtb_db *db = NULL;
    const dtb_status s = dtb_open(&o, &db);
    if (s != DTB_OK)
        fail_msg("dtb_open(%s): %s", dir, dtb_strerror(s));
    return db;
}

static dtb_material material(const char *name)
{
    dtb_material m;
    assert_int_equal(dtb_material_parse(name, &m, NULL), DTB_OK);
    return m;
}

/* The header flags of a table file of the set in dir. */
static uint32_t file_flags(const set *s, const char *dir, const dtb_material *m, dtb_metric metric)
{
    char path[512];
    dtb_build_table_path(path, sizeof path, dir, s->board.variant, m, metric);
    dtb_tablefile *tf;
    dtb_error e;
    if (dtb_tablefile_open(path, NULL, &tf, &e) != DTB_OK)
        fail_msg("%s", e.msg);
    const uint32_t flags = dtb_tablefile_get_info(tf)->flags;
    dtb_tablefile_close(tf);
    return flags;
}

/* A directory of links to the files of the set in from (its <variant>/ level) for which keep
 * says yes. */
static void link_set(const set *s, const char *from, const char *to, bool (*keep)(const char *))
{
    char src[300], dst[300], cmd[700];
    snprintf(dst, sizeof dst, "%s/%s", to, s->variant);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dst);
    assert_int_equal(system(cmd), 0);
    snprintf(src, sizeof src, "%s/%s", from, s->variant);
    DIR *d = opendir(src);
    assert_non_null(d);
    for (struct dirent *ent; (ent = readdir(d));) {
        if (ent->d_name[0] == '.' || !keep(ent->d_name))
            continue;
        char a[600], b[600];
        snprintf(a, sizeof a, "%s/%.64s", src, ent->d_name);
        snprintf(b, sizeof b, "%s/%.64s", dst, ent->d_name);
        assert_int_equal(symlink(a, b), 0);
    }
    closedir(d);
}

/* ---- the fixture -------------------------------------------------------------------------- */

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/dtb_dtw_losses_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    for (int k = 0; k < 2; k++) {
        set *s = &sets[k];
        dtb_board_init(&s->board, dtb_variant_find(s->variant));
        snprintf(s->full, sizeof s->full, "%s/%s-full", root, s->variant);
        snprintf(s->lo, sizeof s->lo, "%s/%s-losses", root, s->variant);
        for (int full = 0; full < 2; full++) {
            const dtb_build_options o = {.variant = s->board.variant, .pieces = PIECES,
                                         .out_dir = full ? s->full : s->lo, .zstd_level = 1,
                                         .dtw_full = full};
            dtb_error e;
            if (dtb_build(&o, &e) != DTB_OK) {
                fprintf(stderr, "fixture: dtb_build: %s\n", e.msg);
                return -1;
            }
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* The two builds are what they should be: losses-only DTW tables in one, full ones in the other,
 * the WLD tables alike. */
static void test_forms(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const set *s = &sets[k];
        dtb_material list[128];
        const int n = dtb_material_list(PIECES, list, 128);
        for (int i = 0; i < n; i++) {
            assert_int_equal(file_flags(s, s->lo, &list[i], DTB_METRIC_DTW), DTB_TABLE_LOSSES);
            assert_int_equal(file_flags(s, s->full, &list[i], DTB_METRIC_DTW), 0);
            assert_int_equal(file_flags(s, s->lo, &list[i], DTB_METRIC_WLD), 0);
        }
    }
}

/* ---- every position ------------------------------------------------------------------------ */

typedef struct sweep {
    const set *s;
    int stride4;             /* the stride at 4 pieces */
    dtb_db *full, *lo;
    const dtb_material *mats;
    int nmats;
    pthread_mutex_t lock;
    int next;                /* the next material to take */
    uint64_t probes, wins, mismatches;
    char first[512];
} sweep;

/* One position's answers from the losses-only set, each against the full set's. */
typedef struct answer {
    dtb_status s;
    dtb_wdl wdl;
    int dtw;
} answer;

static bool same(const answer *a, const answer *b)
{
    return a->s == b->s && (a->s != DTB_OK || (a->wdl == b->wdl && a->dtw == b->dtw));
}

static void mismatch(sweep *sw, uint64_t *count, const dtb_pos *p, const char *how,
                     const answer *want, const answer *got)
{
    if ((*count)++ > 0)
        return;
    char fen[DTB_FEN_MAX];
    dtb_fen_write(&sw->s->board, p, fen, sizeof fen);
    pthread_mutex_lock(&sw->lock);
    if (!sw->first[0])
        snprintf(sw->first, sizeof sw->first, "%s %s: full %s %d %d, losses-only %s %d %d",
                 sw->s->variant, fen, dtb_strerror(want->s), want->wdl, want->dtw, how,
                 got->wdl, got->dtw);
    pthread_mutex_unlock(&sw->lock);
}

static void *sweep_thread(void *arg)
{
    sweep *sw = arg;
    const dtb_board *b = &sw->s->board;
    uint64_t probes = 0, wins = 0, bad = 0;
    dtb_position batch[BATCH];
    dtb_pos batch_pos[BATCH];
    answer want[BATCH];
    int nbatch = 0;
    for (;;) {
        pthread_mutex_lock(&sw->lock);
        const int k = sw->next++;
        pthread_mutex_unlock(&sw->lock);
        if (k >= sw->nmats)
            break;
        dtb_index *ix;
        assert_int_equal(dtb_index_create(b, sw->mats[k], &ix), DTB_OK);
        const uint64_t n = dtb_index_size(ix);
        const uint64_t stride = dtb_material_pieces(&sw->mats[k]) < 4 ? 1 : (uint64_t)sw->stride4;
        for (uint64_t i = (uint64_t)k % stride; i < n; i += stride) {
            dtb_pos w, f;
            dtb_index_pos(ix, i, &w);
            dtb_pos_flip(b, &w, &f); /* black to move */
            for (int side = 0; side < 2; side++) {
                const dtb_pos *p = side ? &f : &w;
                const dtb_position x = pub(p);
                answer a = {0}, c = {0};
                a.s = dtb_probe_dtw(sw->full, &x, 0, &a.wdl, &a.dtw);
                c.s = dtb_probe_dtw(sw->lo, &x, 0, &c.wdl, &c.dtw);
                probes++;
                wins += a.s == DTB_OK && a.wdl == DTB_WIN;
                if (!same(&a, &c))
                    mismatch(sw, &bad, p, "dtb_probe_dtw", &a, &c);
                answer wl = {.s = a.s, .wdl = a.wdl}, gl = {0};
                gl.s = dtb_probe_wdl(sw->lo, &x, 0, &gl.wdl);
                if (!same(&wl, &gl))
                    mismatch(sw, &bad, p, "dtb_probe_wdl", &wl, &gl);
                if (!dtb_has_capture(b, p)) { /* the caller's promise of a quiet position */
                    c = (answer){0};
                    c.s = dtb_probe_dtw(sw->lo, &x, DTB_QUIET_POSITION, &c.wdl, &c.dtw);
                    if (!same(&a, &c))
                        mismatch(sw, &bad, p, "DTB_QUIET_POSITION", &a, &c);
                }
                batch[nbatch] = x, batch_pos[nbatch] = *p, want[nbatch++] = a;
                if (nbatch == BATCH || (i + stride >= n && side == 1)) {
                    dtb_wdl wdl[BATCH];
                    int dtw[BATCH];
                    dtb_status st[BATCH];
                    dtb_probe_dtw_many(sw->lo, batch, nbatch, 0, wdl, dtw, st);
                    for (int j = 0; j < nbatch; j++) {
                        const answer g = {st[j], wdl[j], dtw[j]};
                        if (!same(&want[j], &g))
                            mismatch(sw, &bad, &batch_pos[j], "dtb_probe_dtw_many", &want[j], &g);
                    }
                    nbatch = 0;
                }
            }
        }
        dtb_index_free(ix);
    }
    pthread_mutex_lock(&sw->lock);
    sw->probes += probes;
    sw->wins += wins;
    sw->mismatches += bad;
    pthread_mutex_unlock(&sw->lock);
    return NULL;
}

static void every_position(const set *s)
{
    dtb_material mats[128];
    const int n = dtb_material_list(PIECES, mats, 128);
    const char *all = getenv("DTB_TEST_ALL");
    const int stride4 = all && *all ? 1 : s == &sets[0] ? STRIDE4_INTERNATIONAL : STRIDE4_ENGLISH;
    sweep sw = {.s = s, .stride4 = stride4, .full = open_db(s->full, s->variant, 256u << 20),
                .lo = open_db(s->lo, s->variant, 256u << 20), .mats = mats, .nmats = n};
    pthread_mutex_init(&sw.lock, NULL);
    /* the largest materials first, so that the two threads end together */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && dtb_material_pieces(&mats[j - 1]) < dtb_material_pieces(&mats[j]); j--) {
            const dtb_material t = mats[j - 1];
            mats[j - 1] = mats[j];
            mats[j] = t;
        }
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, sweep_thread, &sw), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&sw.lock);
    dtb_close(sw.full);
    dtb_close(sw.lo);
    if (sw.mismatches)
        fail_msg("%llu answers of the losses-only set differ from the full set's; the first: %s",
                 (unsigned long long)sw.mismatches, sw.first);
    assert_true(sw.wins > 0);
    print_message("%s 2..%d: %llu positions (both sides to move; 1 in %d of the 4-piece ones), "
                  "%llu of them wins, the same in both sets\n",
                  s->variant, PIECES, (unsigned long long)sw.probes, PIECES < 4 ? 0 : stride4,
                  (unsigned long long)sw.wins);
}

static void test_every_position_international(void **state)
{
    (void)state;
    every_position(&sets[0]);
}

static void test_every_position_english(void **state)
{
    (void)state;
    every_position(&sets[1]);
}

/* ---- cache-only probes after warming -------------------------------------------------------- */

/* dtb_warm of the DTW tables warms the .wld tables a losses-only set's DTW probes read first, and
 * dtb_working_set counts them: every cache-only DTW probe then answers. */
static void test_cache_only(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const set *s = &sets[k];
        dtb_db *full = open_db(s->full, s->variant, 256u << 20);
        dtb_db *lo = open_db(s->lo, s->variant, 256u << 20);
        uint64_t need_full, need_lo, need_wld, warm;
        assert_int_equal(dtb_working_set(full, PIECES, true, &need_full), DTB_OK);
        assert_int_equal(dtb_working_set(lo, PIECES, true, &need_lo), DTB_OK);
        assert_int_equal(dtb_working_set(lo, PIECES, false, &need_wld), DTB_OK);
        assert_true(need_lo > need_wld); /* the DTW bytes and the WLD tables */
        assert_int_equal(dtb_warm(lo, PIECES, DTB_WARM_DTW, &warm), DTB_OK);
        assert_int_equal(warm, need_lo);
        dtb_material mats[128];
        const int n = dtb_material_list(PIECES, mats, 128);
        uint64_t probes = 0;
        for (int m = 0; m < n; m++) {
            dtb_index *ix;
            assert_int_equal(dtb_index_create(&s->board, mats[m], &ix), DTB_OK);
            const uint64_t size = dtb_index_size(ix);
            const uint64_t stride = dtb_material_pieces(&mats[m]) < 4 ? 5
                                    : k == 0 ? STRIDE4_INTERNATIONAL : STRIDE4_ENGLISH;
            for (uint64_t i = (uint64_t)m % stride; i < size; i += stride) {
                dtb_pos p;
                dtb_index_pos(ix, i, &p);
                const dtb_position x = pub(&p);
                answer a = {0}, c = {0};
                a.s = dtb_probe_dtw(full, &x, 0, &a.wdl, &a.dtw);
                c.s = dtb_probe_dtw(lo, &x, DTB_CACHE_ONLY, &c.wdl, &c.dtw);
                if (!same(&a, &c)) {
                    char fen[DTB_FEN_MAX];
                    dtb_fen_write(&s->board, &p, fen, sizeof fen);
                    fail_msg("%s cache-only: %s, %d %d; full set: %d %d", fen, dtb_strerror(c.s),
                             c.wdl, c.dtw, a.wdl, a.dtw);
                }
                probes++;
            }
            dtb_index_free(ix);
        }
        assert_true(probes > 0);
        dtb_close(full);
        dtb_close(lo);
    }
}

/* ---- ranked moves and best lines ---------------------------------------------------------- */

static void same_moves(dtb_db *full, dtb_db *lo, const dtb_pos *p)
{
    const dtb_position x = pub(p);
    dtb_ranked_move a[DTB_MAX_MOVES], c[DTB_MAX_MOVES];
    int na = -1, nc = -2;
    assert_int_equal(dtb_probe_moves(full, &x, 0, a, DTB_MAX_MOVES, &na), DTB_OK);
    assert_int_equal(dtb_probe_moves(lo, &x, 0, c, DTB_MAX_MOVES, &nc), DTB_OK);
    assert_int_equal(na, nc);
    for (int i = 0; i < na; i++) {
        assert_string_equal(a[i].move.text, c[i].move.text);
        assert_int_equal(a[i].wdl, c[i].wdl);
        assert_int_equal(a[i].dtw, c[i].dtw);
    }
    dtb_pdn_move la[DTB_MAX_LINE], lc[DTB_MAX_LINE];
    assert_int_equal(dtb_probe_line(full, &x, 0, la, DTB_MAX_LINE, &na), DTB_OK);
    assert_int_equal(dtb_probe_line(lo, &x, 0, lc, DTB_MAX_LINE, &nc), DTB_OK);
    assert_int_equal(na, nc);
    for (int i = 0; i < na; i++)
        assert_string_equal(la[i].text, lc[i].text);
}

static void test_moves_and_lines(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const set *s = &sets[k];
        dtb_db *full = open_db(s->full, s->variant, 64u << 20);
        dtb_db *lo = open_db(s->lo, s->variant, 64u << 20);
        dtb_material mats[128];
        const int n = dtb_material_list(PIECES, mats, 128);
        int checked = 0;
        for (int m = 0; m < n; m++) {
            dtb_index *ix;
            assert_int_equal(dtb_index_create(&s->board, mats[m], &ix), DTB_OK);
            const uint64_t size = dtb_index_size(ix);
            for (uint64_t i = (uint64_t)m; i < size; i += size / 12 + 1) {
                dtb_pos p, f;
                dtb_index_pos(ix, i, &p);
                dtb_pos_flip(&s->board, &p, &f);
                same_moves(full, lo, &p);
                same_moves(full, lo, &f);
                checked += 2;
            }
            dtb_index_free(ix);
        }
        print_message("%s: the moves and best lines of %d positions alike\n", s->variant, checked);
        dtb_close(full);
        dtb_close(lo);
    }
}

/* ---- missing and contradicting tables ----------------------------------------------------- */

static bool all_but_kmvk_wld(const char *name)
{
    return strcmp(name, "KMvK.wld") != 0 && strcmp(name, "KvKM.wld") != 0;
}
static bool everything(const char *name) { (void)name; return true; }

/* A quiet international position of material name with the value wanted (white to move). */
static dtb_pos find_position(const set *s, dtb_db *full, const char *name, dtb_wdl want)
{
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&s->board, material(name), &ix), DTB_OK);
    for (uint64_t i = 0; i < dtb_index_size(ix); i++) {
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        const dtb_position x = pub(&p);
        dtb_wdl w;
        int d;
        if (!dtb_has_capture(&s->board, &p) && dtb_probe_dtw(full, &x, 0, &w, &d) == DTB_OK &&
            w == want) {
            dtb_index_free(ix);
            return p;
        }
    }
    fail_msg("no quiet %s position of that value", name);
    return (dtb_pos){0};
}

/* A losses-only .dtw without its .wld answers nothing, WDL probes included (it cannot stand in
 * for the .wld as a full .dtw does), and the message names both files. */
static void test_missing_wld(void **state)
{
    (void)state;
    const set *s = &sets[0];
    char dir[256];
    snprintf(dir, sizeof dir, "%s/no_kmvk_wld", root);
    link_set(s, s->lo, dir, all_but_kmvk_wld);
    dtb_db *full = open_db(s->full, s->variant, 16u << 20);
    dtb_db *db = open_db(dir, s->variant, 16u << 20);
    static const char *const mat[3] = {"KMvK", "KMvK", "KvKM"};
    static const dtb_wdl value[3] = {DTB_WIN, DTB_DRAW, DTB_LOSS};
    for (int v = 0; v < 3; v++) {
        const dtb_position x = pub((dtb_pos[]){find_position(s, full, mat[v], value[v])});
        char wld[16], dtw[16];
        snprintf(wld, sizeof wld, "%s.wld", mat[v]);
        snprintf(dtw, sizeof dtw, "%s.dtw", mat[v]);
        dtb_wdl w;
        int d;
        char msg[DTB_MESSAGE_SIZE];
        for (int many = 0; many < 2; many++) {
            dtb_status st = DTB_OK;
            if (many)
                dtb_probe_dtw_many(db, &x, 1, 0, &w, &d, &st);
            else
                st = dtb_probe_dtw(db, &x, 0, &w, &d);
            assert_int_equal(st, DTB_E_NOTFOUND);
            assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
            assert_non_null(strstr(msg, wld));
            assert_non_null(strstr(msg, dtw));
        }
        assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_E_NOTFOUND);
        assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_NOTFOUND);
        assert_non_null(strstr(msg, wld));
        assert_non_null(strstr(msg, dtw));
    }
    /* other materials answer */
    const dtb_position y = pub((dtb_pos[]){find_position(s, full, "KKvK", DTB_DRAW)});
    dtb_wdl w;
    int d;
    assert_int_equal(dtb_probe_dtw(db, &y, 0, &w, &d), DTB_OK);
    assert_int_equal(w, DTB_DRAW);
    dtb_close(db);
    dtb_close(full);
}

/* Writes dir's KvK.wld (international) saying "win" for every quiet position (capture positions
 * don't-care, as the generator writes them). */
static void write_lying_wld(const set *s, const char *dir)
{
    const dtb_material m = material("KvK");
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&s->board, m, &ix), DTB_OK);
    const uint64_t n = dtb_index_size(ix);
    uint8_t *values = malloc(n);
    uint64_t *captures = calloc(n / 64 + 1, sizeof *captures);
    assert_non_null(values);
    assert_non_null(captures);
    for (uint64_t i = 0; i < n; i++) {
        dtb_pos p;
        dtb_index_pos(ix, i, &p);
        values[i] = 1;
        if (dtb_has_capture(&s->board, &p))
            captures[i / 64] |= 1ull << (i % 64);
    }
    char path[512];
    dtb_build_table_path(path, sizeof path, dir, s->board.variant, &m, DTB_METRIC_WLD);
    unlink(path); /* a link into the real set: replaced, not written through */
    dtb_table_write_options o = dtb_build_write_options(s->board.variant, "KvK", DTB_METRIC_WLD);
    o.dontcare_kind = DTB_DONTCARE_CAPTURES;
    o.zstd_level = 1;
    const dtb_table_dontcare dc = {.bits = captures, .marker = -1};
    dtb_error e;
    if (dtb_table_write(path, &o, values, n, &dc, NULL, &e) != DTB_OK)
        fail_msg("%s", e.msg);
    free(values);
    free(captures);
    dtb_index_free(ix);
}

/* A .wld that calls a drawn position won gives DTB_E_CORRUPT (its search finds no lost
 * successor), never a made-up distance. */
static void test_contradicting_wld(void **state)
{
    (void)state;
    const set *s = &sets[0];
    char dir[256];
    snprintf(dir, sizeof dir, "%s/lying_kvk_wld", root);
    link_set(s, s->lo, dir, everything);
    write_lying_wld(s, dir);
    dtb_db *full = open_db(s->full, s->variant, 16u << 20);
    dtb_db *db = open_db(dir, s->variant, 16u << 20);
    const dtb_position x = pub((dtb_pos[]){find_position(s, full, "KvK", DTB_DRAW)});
    dtb_wdl w;
    int d;
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_E_CORRUPT);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_CORRUPT);
    assert_non_null(strstr(msg, "KvK.dtw"));
    dtb_close(db);
    dtb_close(full);
}

/* A compact set's derived DTW table whose partner stores its losses only is refused: the derived
 * table's search would meet the partner's wins, whose search lands in the derived table again. */
static void test_derived_partner(void **state)
{
    (void)state;
    const set *s = &sets[0];
    char dir[256];
    snprintf(dir, sizeof dir, "%s/derived_kkvk", root);
    link_set(s, s->lo, dir, everything);
    const dtb_material m = material("KKvK");
    dtb_index *ix;
    assert_int_equal(dtb_index_create(&s->board, m, &ix), DTB_OK);
    const uint64_t n = dtb_index_size(ix);
    uint8_t *values = calloc(n, 1);
    assert_non_null(values);
    char path[512];
    dtb_build_table_path(path, sizeof path, dir, s->board.variant, &m, DTB_METRIC_DTW);
    unlink(path);
    dtb_table_write_options o = dtb_build_write_options(s->board.variant, "KKvK", DTB_METRIC_DTW);
    o.flags = DTB_TABLE_DERIVED;
    o.dontcare_kind = DTB_DONTCARE_CAPTURES | DTB_DONTCARE_DERIVED;
    o.zstd_level = 1;
    const dtb_table_dontcare dc = {.marker = 0}; /* every position */
    dtb_error e;
    if (dtb_table_write(path, &o, values, n, &dc, NULL, &e) != DTB_OK)
        fail_msg("%s", e.msg);
    free(values);
    dtb_index_free(ix);
    dtb_db *full = open_db(s->full, s->variant, 16u << 20);
    dtb_db *db = open_db(dir, s->variant, 16u << 20);
    const dtb_position x = pub((dtb_pos[]){find_position(s, full, "KKvK", DTB_WIN)});
    dtb_wdl w;
    int d;
    assert_int_equal(dtb_probe_dtw(db, &x, 0, &w, &d), DTB_E_CORRUPT);
    char msg[DTB_MESSAGE_SIZE];
    assert_int_equal(dtb_last_error(db, msg, sizeof msg), DTB_E_CORRUPT);
    assert_non_null(strstr(msg, "KKvK.dtw"));
    assert_non_null(strstr(msg, "KvKK.dtw"));
    assert_non_null(strstr(msg, "losses only"));
    /* its WDL comes from the .wld, untouched */
    assert_int_equal(dtb_probe_wdl(db, &x, 0, &w), DTB_OK);
    assert_int_equal(w, DTB_WIN);
    dtb_close(db);
    dtb_close(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_every_position_international),
        cmocka_unit_test(test_every_position_english),
        cmocka_unit_test(test_cache_only),
        cmocka_unit_test(test_moves_and_lines),
        cmocka_unit_test(test_missing_wld),
        cmocka_unit_test(test_contradicting_wld),
        cmocka_unit_test(test_derived_partner),
    };
    /* DTB_TEST_FILTER=pattern: the tests whose names match (cmocka_set_test_filter) */
    const char *filter = getenv("DTB_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, setup, teardown);
}
