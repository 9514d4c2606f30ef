/* The build loop (gen/build.c) and the verifier (gen/check.c): byte-identical tables for 1 and 2
 * threads, a rerun that changes nothing, completion of a half-written directory, the --memory
 * refusal, damaged files named on load, a full disk, and a verifier that finds a wrong value.
 *
 * Expected bytes come from another build (a different thread count, or an untouched directory),
 * never from a stored copy: the point is that the build is deterministic and resumable. The
 * verifier's reports are judged against predecessors found by plain move generation. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build.h"
#include "check.h"
#include "manifest.h"
#include "movegen.h"

/* The 4-piece material of the builds (and what it needs): the smallest international 4-piece
 * closure with a man (KKKvK, KKKvM and their flips, ~3.5 million positions). */
#define FOUR_PIECE "KKKvM"
#define VARIANT "international"
#define MAX_FILES 128
#define MAX_NAMES 64

/* ---- files ------------------------------------------------------------------------------- */

typedef struct blob {
    char *data;
    size_t len;
} blob;

static bool read_file(const char *path, blob *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t cap = 4096, len = 0;
    char *data = malloc(cap);
    size_t n;
    while (data && (n = fread(data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap)
            data = realloc(data, cap *= 2);
    }
    fclose(f);
    assert_non_null(data);
    out->data = data;
    out->len = len;
    return true;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void path_in(char *buf, size_t size, const char *dir, const char *file)
{
    const int n = snprintf(buf, size, "%s/" VARIANT "/%s", dir, file);
    assert_true(n > 0 && (size_t)n < size);
}

static bool exists_in(const char *dir, const char *file)
{
    char path[4096];
    path_in(path, sizeof path, dir, file);
    struct stat st;
    return lstat(path, &st) == 0;
}

static void remove_in(const char *dir, const char *file)
{
    char path[4096];
    path_in(path, sizeof path, dir, file);
    assert_int_equal(unlink(path), 0);
}

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

/* The names in dir/<variant>/, sorted. Returns how many. */
static int list_files(const char *dir, char names[MAX_FILES][64])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" VARIANT, dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    const struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        assert_true(n < MAX_FILES);
        assert_true(strlen(de->d_name) < 64);
        strcpy(names[n++], de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, 64, compare_names);
    return n;
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Stats records carry wall-clock figures; everything before them must be identical. Drops
 * ',"seconds":...' up to the closing brace of each record. */
static void strip_timing(blob *b)
{
    size_t w = 0;
    for (size_t r = 0; r < b->len;) {
        static const char key[] = ",\"seconds\":";
        if (b->len - r >= sizeof key - 1 && memcmp(b->data + r, key, sizeof key - 1) == 0) {
            while (r < b->len && b->data[r] != '}')
                r++;
            continue;
        }
        b->data[w++] = b->data[r++];
    }
    b->len = w;
}

/* Every file of dir a equals the same file of dir b (tables byte for byte, stats up to their
 * timings), and both hold the same names. */
static void assert_same_files(const char *a, const char *b)
{
    char na[MAX_FILES][64], nb[MAX_FILES][64];
    const int n = list_files(a, na), m = list_files(b, nb);
    assert_true(n > 0);
    for (int i = 0; i < n && i < m; i++)
        if (strcmp(na[i], nb[i]) != 0)
            fail_msg("%s holds %s where %s holds %s", a, na[i], b, nb[i]);
    assert_int_equal(n, m);
    for (int i = 0; i < n; i++) {
        char pa[4096], pb[4096];
        path_in(pa, sizeof pa, a, na[i]);
        path_in(pb, sizeof pb, b, nb[i]);
        blob x, y;
        assert_true(read_file(pa, &x));
        assert_true(read_file(pb, &y));
        const bool table = ends_with(na[i], ".dtw") || ends_with(na[i], ".wld");
        if (!table) {
            strip_timing(&x);
            strip_timing(&y);
        }
        if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)
            fail_msg("%s differs between %s and %s", na[i], a, b);
        free(x.data);
        free(y.data);
    }
}

/* Copies dir a's tables and records into a new dir b. */
static void copy_dir(const char *a, const char *b)
{
    char names[MAX_FILES][64], path[4096];
    const int n = list_files(a, names);
    assert_int_equal(mkdir(b, 0777), 0);
    snprintf(path, sizeof path, "%s/" VARIANT, b);
    assert_int_equal(mkdir(path, 0777), 0);
    for (int i = 0; i < n; i++) {
        blob x;
        path_in(path, sizeof path, a, names[i]);
        assert_true(read_file(path, &x));
        path_in(path, sizeof path, b, names[i]);
        write_file(path, x.data, x.len);
        free(x.data);
    }
}

static void remove_dir(const char *dir)
{
    char names[MAX_FILES][64], path[4096];
    const int n = list_files(dir, names);
    for (int i = 0; i < n; i++)
        remove_in(dir, names[i]);
    snprintf(path, sizeof path, "%s/" VARIANT, dir);
    rmdir(path);
    rmdir(dir);
}

/* ---- builds ------------------------------------------------------------------------------ */

typedef struct build_log {
    int started, skipped, done;
    char started_names[MAX_NAMES][DTB_MATERIAL_NAME_MAX];
} build_log;

static void on_build(void *user, dtb_build_event ev, const char *name, uint64_t done,
                     uint64_t total, const char *text)
{
    build_log *l = user;
    (void)done, (void)total, (void)text;
    switch (ev) {
    case DTB_BUILD_START:
        assert_true(l->started < MAX_NAMES);
        snprintf(l->started_names[l->started++], DTB_MATERIAL_NAME_MAX, "%s", name);
        break;
    case DTB_BUILD_SKIP: l->skipped++; break;
    case DTB_BUILD_DONE: l->done++; break;
    case DTB_BUILD_PROGRESS: break;
    }
}

static bool was_started(const build_log *l, const char *name)
{
    for (int i = 0; i < l->started; i++)
        if (strcmp(l->started_names[i], name) == 0)
            return true;
    return false;
}

static dtb_build_options options(const char *dir, int pieces, const dtb_material *only,
                                 int threads, build_log *log)
{
    return (dtb_build_options){
        .variant = dtb_variant_find(VARIANT),
        .pieces = pieces,
        .only = only,
        .nonly = only ? 1 : 0,
        .out_dir = dir,
        .threads = threads,
        .zstd_level = 3, /* fast; determinism does not depend on the level */
        .log = on_build,
        .user = log,
    };
}

/* The builds every test starts from: all of 2..3 pieces, then FOUR_PIECE and what it needs
 * (the 2..3 part is then resumed, so loading is exercised too). `keep`: keep every solved table
 * to the end (in list order) instead of dropping tables as soon as nothing left reads them. */
static void build_all(const char *dir, int threads, bool keep, build_log *log)
{
    dtb_material four;
    assert_int_equal(dtb_material_parse(FOUR_PIECE, &four, NULL), DTB_OK);
    dtb_error e = {{0}};
    dtb_build_options o = options(dir, 3, NULL, threads, log);
    o.keep_solved = keep;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build of 2..3 pieces in %s: %s", dir, e.msg);
    o = options(dir, 4, &four, threads, log);
    o.keep_solved = keep;
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build of %s in %s: %s", FOUR_PIECE, dir, e.msg);
}

typedef struct fixture {
    char root[256];    /* scratch directory of this run */
    char one[300];     /* built with 1 thread */
    char two[300];     /* built with 2 threads */
    int scratch;       /* counter for further directories */
} fixture;

static void scratch_dir(fixture *fx, char *buf, size_t size)
{
    snprintf(buf, size, "%s/d%d", fx->root, fx->scratch++);
}

static int group_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    const char *tmp = getenv("TMPDIR");
    snprintf(fx->root, sizeof fx->root, "%s/dtb_test_build.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!fx->root[0] || !mkdtemp(fx->root)) {
        fprintf(stderr, "cannot make a scratch directory: %s\n", strerror(errno));
        return -1;
    }
    snprintf(fx->one, sizeof fx->one, "%s/one", fx->root);
    snprintf(fx->two, sizeof fx->two, "%s/two", fx->root);
    *state = fx;
    return 0;
}

static char eng_losses[300], eng_full[300]; /* english_sets' (english: not remove_dir's) */

static int group_teardown(void **state)
{
    fixture *fx = *state;
    char path[400];
    if (eng_losses[0]) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", eng_losses, eng_full);
        if (system(cmd) != 0)
            return -1;
    }
    remove_dir(fx->one);
    remove_dir(fx->two);
    for (int i = 0; i < fx->scratch; i++) {
        snprintf(path, sizeof path, "%s/d%d", fx->root, i);
        remove_dir(path);
    }
    rmdir(fx->root);
    free(fx);
    return 0;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* One thread dropping tables early against two threads keeping every table: the same bytes
 * prove both that the thread count and that the drop order change nothing (one build pair
 * instead of two keeps the sanitizer build's time down). */
static void test_threads_identical(void **state)
{
    fixture *fx = *state;
    build_log l1 = {0}, l2 = {0};
    build_all(fx->one, 1, false, &l1);
    build_all(fx->two, 2, true, &l2);
    /* 16 materials of 2..3 pieces, then the four of the 4-piece pairs. */
    assert_int_equal(l1.done, 20);
    assert_int_equal(l2.done, 20);
    assert_true(exists_in(fx->one, FOUR_PIECE ".dtw"));
    assert_true(exists_in(fx->one, "MvKKK.wld"));
    /* STATS: one line per material in the directory, whichever build wrote it. */
    char path[4096];
    path_in(path, sizeof path, fx->one, "STATS");
    blob st;
    assert_true(read_file(path, &st));
    int lines = 0;
    for (size_t i = 0; i < st.len; i++)
        lines += st.data[i] == '\n';
    free(st.data);
    assert_int_equal(lines, 20);
    assert_same_files(fx->one, fx->two);
}

static void test_rerun_changes_nothing(void **state)
{
    fixture *fx = *state;
    char names[MAX_FILES][64];
    const int n = list_files(fx->one, names);
    assert_true(n > 60);
    struct stat before[MAX_FILES];
    for (int i = 0; i < n; i++) {
        char path[4096];
        path_in(path, sizeof path, fx->one, names[i]);
        assert_int_equal(stat(path, &before[i]), 0);
    }
    char copy[300];
    scratch_dir(fx, copy, sizeof copy);
    copy_dir(fx->one, copy);

    build_log l = {0};
    build_all(fx->one, 2, false, &l);
    assert_int_equal(l.started, 0);
    assert_int_equal(l.done, 0);
    assert_true(l.skipped > 0);
    assert_same_files(fx->one, copy);
    /* The tables and records were not even rewritten (STATS is regenerated, same text). */
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "STATS") == 0)
            continue;
        char path[4096];
        path_in(path, sizeof path, fx->one, names[i]);
        struct stat now;
        assert_int_equal(stat(path, &now), 0);
        if (now.st_ino != before[i].st_ino || now.st_mtim.tv_sec != before[i].st_mtim.tv_sec ||
            now.st_mtim.tv_nsec != before[i].st_mtim.tv_nsec)
            fail_msg("%s was rewritten by a build that had nothing to do", names[i]);
    }
}

/* States a kill can leave (and one a person can): a table's .tmp half written, tables without
 * their stats record, a stats record's .tmp, a table deleted by hand after completion. */
static void test_half_written_completed(void **state)
{
    fixture *fx = *state;
    char dir[300], path[4096];
    scratch_dir(fx, dir, sizeof dir);
    copy_dir(fx->one, dir);

    /* Killed while writing KMvM.dtw: half of it in the .tmp, nothing else of the pair. */
    blob b;
    path_in(path, sizeof path, dir, "KMvM.dtw");
    assert_true(read_file(path, &b));
    path_in(path, sizeof path, dir, "KMvM.dtw.tmp");
    write_file(path, b.data, b.len / 2);
    free(b.data);
    for (int k = 0; k < 6; k++) {
        static const char *const gone[] = {"KMvM.dtw", "KMvM.wld", "KMvM.stats",
                                           "MvKM.dtw", "MvKM.wld", "MvKM.stats"};
        remove_in(dir, gone[k]);
    }
    /* Killed between the tables and the stats records of KKvM / MvKK; one table garbage. */
    remove_in(dir, "KKvM.stats");
    remove_in(dir, "MvKK.stats");
    path_in(path, sizeof path, dir, "MvKK.dtw");
    write_file(path, "garbage", 7);
    /* Killed while writing the flip's stats record (the first one is in place). */
    remove_in(dir, "KvKK.stats");
    path_in(path, sizeof path, dir, "KvKK.stats.tmp");
    write_file(path, "{\"variant\":", 11);
    /* A table deleted by hand from a complete pair. */
    remove_in(dir, "MMvK.wld");
    /* A pair killed between its two members' tables. */
    remove_in(dir, "MvMM.dtw");
    remove_in(dir, "MvMM.wld");
    remove_in(dir, "MMvM.stats");
    remove_in(dir, "MvMM.stats");

    /* Only 2..3 pieces are touched, so the build of 2..3 pieces completes the directory. */
    build_log l = {0};
    dtb_build_options o = options(dir, 3, NULL, 2, &l);
    dtb_error e = {{0}};
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build: %s", e.msg);
    assert_same_files(dir, fx->one); /* also: no .tmp file left */
    static const char *const redone[] = {"KMvM", "KKvM", "KKvK", "MMvK", "MMvM"};
    for (int k = 0; k < 5; k++)
        if (!was_started(&l, redone[k]))
            fail_msg("the incomplete pair of %s was not solved again", redone[k]);
    assert_int_equal(l.started, 5);
}

/* Sum of the positions of the materials of 2..pieces, and the largest pair's. */
static void count_positions(int pieces, uint64_t *all, uint64_t *largest_pair)
{
    const dtb_variant *v = dtb_variant_find(VARIANT);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_material list[256];
    const int n = dtb_material_list(pieces, list, 256);
    *all = *largest_pair = 0;
    for (int i = 0; i < n; i++) {
        const dtb_material f = dtb_material_flip(list[i]);
        dtb_index *ix, *fx;
        assert_int_equal(dtb_index_create(&b, list[i], &ix), DTB_OK);
        assert_int_equal(dtb_index_create(&b, f, &fx), DTB_OK);
        const bool self = dtb_material_equal(&f, &list[i]);
        const uint64_t pair = dtb_index_size(ix) + (self ? 0 : dtb_index_size(fx));
        *all += dtb_index_size(ix);
        if (pair > *largest_pair)
            *largest_pair = pair;
        dtb_index_free(ix);
        dtb_index_free(fx);
    }
}

static void test_memory_budget(void **state)
{
    fixture *fx = *state;
    char dir[300];
    scratch_dir(fx, dir, sizeof dir);
    build_log l = {0};
    dtb_build_options o = options(dir, 3, NULL, 2, &l);
    /* An independent lower bound: a byte per position of the largest pair (tables leave memory
     * once nothing still to run reads them: the sum over all materials is no bound). */
    uint64_t all, pair;
    count_positions(3, &all, &pair);
    const uint64_t need = dtb_build_memory_needed(&o);
    assert_true(need >= pair);
    dtb_build_budget plan;
    dtb_error e = {{0}};
    o.memory_budget = 1;
    /* Pairs whole, so that the work files hold the largest one (a pair solved in slices holds
     * two of its levels and its store: tests/test_solve.c, tests/disk_budget.sh). */
    o.slices = DTB_SLICES_NEVER;
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    /* lean kings-only pairs (the budget's choice) only lower the peak */
    assert_true(plan.use_work_files && plan.in_memory <= need);
    assert_true(plan.minimum > plan.working && plan.working > 0 && plan.work_files >= pair);

    /* Below the working memory of the largest step: refused, saying how much is needed, before
     * touching the disk. */
    assert_int_equal(dtb_build(&o, &e), DTB_E_NOMEM);
    char bytes[64];
    snprintf(bytes, sizeof bytes, "%llu bytes", (unsigned long long)plan.minimum);
    if (!strstr(e.msg, "needs at least") || !strstr(e.msg, bytes) || !strstr(e.msg, "--memory"))
        fail_msg("refusal does not say how much is needed (%s): %s", bytes, e.msg);
    assert_non_null(strstr(e.msg, "1 bytes allowed"));
    assert_int_equal(l.started, 0);
    struct stat st;
    assert_int_not_equal(stat(dir, &st), 0);

    /* Enough for everything in memory: no work files. */
    o.memory_budget = need > plan.minimum ? need : plan.minimum;
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    assert_false(plan.use_work_files);
    o.pieces = 2;
    assert_int_equal(dtb_build(&o, &e), DTB_OK);
    assert_true(exists_in(dir, "KvK.dtw"));
}

/* Loads the materials of 2..pieces from dir into a fresh registry. */
static dtb_solved *load_all(const dtb_board *b, const char *dir, int pieces)
{
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    dtb_material list[64];
    const int n = dtb_material_list(pieces, list, 64);
    for (int i = 0; i < n; i++) {
        dtb_error e;
        if (dtb_build_load(s, dir, list[i], &e) != DTB_OK)
            fail_msg("load: %s", e.msg);
    }
    return s;
}

static void test_load_damaged(void **state)
{
    fixture *fx = *state;
    char dir[300], path[4096];
    scratch_dir(fx, dir, sizeof dir);
    copy_dir(fx->one, dir);
    const dtb_variant *v = dtb_variant_find(VARIANT);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_material kvk, kvm;
    assert_int_equal(dtb_material_parse("KvK", &kvk, NULL), DTB_OK);
    assert_int_equal(dtb_material_parse("KvM", &kvm, NULL), DTB_OK);
    blob good, other;
    path_in(path, sizeof path, dir, "KvM.dtw");
    assert_true(read_file(path, &good));
    path_in(path, sizeof path, dir, "MvK.dtw");
    assert_true(read_file(path, &other));

    enum { FLIP_MIDDLE, FLIP_LAST, TRUNCATED, EMPTY, OTHER_MATERIAL, CASES };
    for (int c = 0; c < CASES; c++) {
        blob x = {malloc(good.len), good.len};
        memcpy(x.data, good.data, good.len);
        switch (c) {
        case FLIP_MIDDLE: x.data[x.len / 2] ^= 0x10; break;
        case FLIP_LAST: x.data[x.len - 1] ^= 0x01; break;
        case TRUNCATED: x.len -= 9; break;
        case EMPTY: x.len = 0; break;
        case OTHER_MATERIAL: /* a sound file of MvK under KvM's name */
            free(x.data);
            x.data = malloc(other.len);
            memcpy(x.data, other.data, other.len);
            x.len = other.len;
            break;
        }
        path_in(path, sizeof path, dir, "KvM.dtw");
        write_file(path, x.data, x.len);
        free(x.data);
        dtb_solved *s = dtb_solved_create(&b);
        dtb_error e = {{0}};
        assert_int_equal(dtb_build_load(s, dir, kvk, &e), DTB_OK);
        const dtb_status st = dtb_build_load(s, dir, kvm, &e);
        if (st == DTB_OK || !strstr(e.msg, "KvM.dtw"))
            fail_msg("case %d: status %d, message '%s' (must fail naming KvM.dtw)", c, st, e.msg);
        assert_null(dtb_solved_find(s, kvm)); /* nothing half-loaded stays behind */
        dtb_solved_free(s);
    }
    remove_in(dir, "KvM.dtw");
    dtb_solved *s = dtb_solved_create(&b);
    dtb_error e = {{0}};
    assert_int_equal(dtb_build_load(s, dir, kvm, &e), DTB_E_NOTFOUND);
    assert_non_null(strstr(e.msg, "KvM.dtw"));
    dtb_solved_free(s);
    free(good.data);
    free(other.data);
}

typedef struct reports {
    uint64_t index[4096];
    int n;
} reports;

static void on_mismatch(void *user, const dtb_solved_table *t, uint64_t index, dtb_wvalue stored,
                        dtb_wvalue derived)
{
    reports *r = user;
    (void)t;
    assert_int_not_equal(stored, derived);
    assert_true(r->n < 4096);
    r->index[r->n++] = index;
}

/* Whether position j of table `from` has a quiet move to position i of table `to`. */
static bool is_predecessor(const dtb_board *b, const dtb_solved_table *from, uint64_t j,
                           const dtb_solved_table *to, uint64_t i)
{
    dtb_pos p;
    dtb_index_pos(from->index, j, &p);
    dtb_movelist ml;
    assert_int_equal(dtb_generate(b, &p, &ml), DTB_OK);
    for (int k = 0; k < ml.count; k++) {
        dtb_pos q, w;
        dtb_make_move(&p, &ml.moves[k], &q);
        dtb_pos_flip(b, &q, &w);
        const dtb_material m = dtb_material_of(&w);
        if (dtb_material_equal(&m, &to->material) && dtb_index_of(to->index, &w) == i)
            return true;
    }
    return false;
}

/* Alters the value of a quiet position of `altered` and checks `altered` and `pred` (the table
 * holding its predecessors, the flip): the altered index must be reported in its own table, and
 * every other report must be a predecessor of it. */
static void alter_and_check(const dtb_board *b, dtb_solved *s, const char *altered_name,
                            const char *pred_name)
{
    dtb_material am, pm;
    assert_int_equal(dtb_material_parse(altered_name, &am, NULL), DTB_OK);
    assert_int_equal(dtb_material_parse(pred_name, &pm, NULL), DTB_OK);
    const dtb_solved_table *t = dtb_solved_find(s, am), *pt = dtb_solved_find(s, pm);
    assert_non_null(t);
    assert_non_null(pt);
    reports r = {.n = 0};
    assert_int_equal(dtb_check_table(s, t, on_mismatch, &r, 4096), 0);
    assert_int_equal(dtb_check_table(s, pt, on_mismatch, &r, 4096), 0);
    assert_int_equal(r.n, 0);

    /* A quiet won position (its value then depends on its successors only). */
    const uint64_t n = dtb_index_size(t->index);
    uint64_t i = 0;
    while (i < n && ((t->captures[i / 64] >> (i % 64) & 1) || !dtb_value_is_win(t->values[i])))
        i++;
    assert_true(i < n);
    const dtb_value was = t->values[i];
    for (int k = 0; k < 2; k++) {
        /* A draw, then a win one move slower: both are wrong. */
        t->values[i] = k == 0 ? DTB_VALUE_DRAW : dtb_value_win(dtb_value_dtw(was) + 2);
        r.n = 0;
        const uint64_t bad = dtb_check_table(s, t, on_mismatch, &r, 4096);
        const bool self = t == pt;
        if (!self) { /* no position of a material is a successor of another of it */
            assert_int_equal(bad, 1);
            assert_int_equal(r.n, 1);
            assert_int_equal(r.index[0], i);
            r.n = 0;
            const uint64_t bad2 = dtb_check_table(s, pt, on_mismatch, &r, 4096);
            assert_int_equal(bad2, (uint64_t)r.n);
        } else {
            assert_int_equal(bad, (uint64_t)r.n);
        }
        bool found = false;
        for (int m = 0; m < r.n; m++) {
            if (r.index[m] == i && self)
                found = true;
            else if (!is_predecessor(b, pt, r.index[m], t, i))
                fail_msg("%s index %llu reported, neither the altered %s index %llu nor a "
                         "predecessor of it", pred_name, (unsigned long long)r.index[m],
                         altered_name, (unsigned long long)i);
        }
        if (self && !found)
            fail_msg("the altered %s index %llu was not reported", altered_name,
                     (unsigned long long)i);
    }
    t->values[i] = was;
}

static void test_check_finds_altered_value(void **state)
{
    fixture *fx = *state;
    const dtb_variant *v = dtb_variant_find(VARIANT);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_solved *s = load_all(&b, fx->one, 3);
    alter_and_check(&b, s, "KvK", "KvK");  /* its own flip: predecessors in the same table */
    alter_and_check(&b, s, "KKvK", "KvKK");
    alter_and_check(&b, s, "KMvM", "MvKM");
    dtb_solved_free(s);
}

/* --dtw-pieces 2: the 3-piece tables WLD only, their results those of the full build's WLD files
 * (byte for byte), read back with stand-in distances; checked by their results they pass, and a
 * quiet win turned into a loss fails (mutation), while an exact check would not pass them. */
static void test_dtw_pieces(void **state)
{
    fixture *fx = *state;
    char dir[300];
    scratch_dir(fx, dir, sizeof dir);
    build_log log = {0};
    dtb_build_options o = options(dir, 3, NULL, 1, &log);
    o.dtw_pieces = 2;
    dtb_error e = {{0}};
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build with dtw_pieces 2: %s", e.msg);
    const dtb_variant *v = dtb_variant_find(VARIANT);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_solved *s = dtb_solved_create(&b);
    assert_non_null(s);
    dtb_material list[64];
    const int n = dtb_material_list(3, list, 64);
    for (int i = 0; i < n; i++) {
        char path[600], full[600], name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&list[i], name, sizeof name);
        const bool three = dtb_material_pieces(&list[i]) == 3;
        snprintf(path, sizeof path, "%s/%s/%s.dtw", dir, VARIANT, name);
        assert_int_equal(access(path, F_OK) == 0, !three);
        snprintf(path, sizeof path, "%s/%s/%s.wld", dir, VARIANT, name);
        snprintf(full, sizeof full, "%s/%s/%s.wld", fx->one, VARIANT, name);
        blob a, c;
        assert_true(read_file(path, &a) && read_file(full, &c));
        assert_true(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
        free(a.data), free(c.data);
        const dtb_status st = three ? dtb_build_load_wld(s, dir, list[i], &e)
                                    : dtb_build_load(s, dir, list[i], &e);
        if (st != DTB_OK)
            fail_msg("load %s: %s", name, e.msg);
    }
    dtb_material m;
    assert_int_equal(dtb_material_parse("KMvM", &m, NULL), DTB_OK);
    dtb_solved_table *t = (dtb_solved_table *)dtb_solved_find(s, m);
    assert_int_equal(dtb_check_table_results(s, t, NULL, NULL, 0), 0);
    assert_true(dtb_check_table(s, t, NULL, NULL, 0) > 0); /* the stand-in distances */
    const uint64_t size = dtb_index_size(t->index);
    uint64_t i = 0;
    while (i < size && ((t->captures[i / 64] >> (i % 64) & 1) || !dtb_value_is_win(t->values[i])))
        i++;
    assert_true(i < size);
    const dtb_value was = t->values[i];
    t->values[i] = DTB_VALUE_LOST;
    assert_true(dtb_check_table_results(s, t, NULL, NULL, 0) >= 1);
    t->values[i] = was;
    assert_int_equal(dtb_check_table_results(s, t, NULL, NULL, 0), 0);
    dtb_solved_free(s);
}

/* Writing into a full disk: the .tmp file of a table, then of a stats record, is a link to
 * /dev/full, whose writes fail with ENOSPC (no privileges or mounts needed). */
static void test_disk_full(void **state)
{
    fixture *fx = *state;
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        fail_msg("/dev/full is needed to simulate a full disk and is not a device here");
    static const char *const victims[] = {"KvK.wld.tmp", "KvK.stats.tmp", "STATS.tmp"};
    static const char *const finals[] = {"KvK.wld", "KvK.stats", "STATS"};
    for (int k = 0; k < 3; k++) {
        char dir[300], path[4096];
        scratch_dir(fx, dir, sizeof dir);
        assert_int_equal(mkdir(dir, 0777), 0);
        snprintf(path, sizeof path, "%s/" VARIANT, dir);
        assert_int_equal(mkdir(path, 0777), 0);
        path_in(path, sizeof path, dir, victims[k]);
        assert_int_equal(symlink("/dev/full", path), 0);
        build_log l = {0};
        dtb_build_options o = options(dir, 2, NULL, 2, &l);
        dtb_error e = {{0}};
        const dtb_status rc = dtb_build(&o, &e);
        if (rc != DTB_E_NOSPACE)
            fail_msg("%s on a full disk: status %d (%s), not DTB_E_NOSPACE", victims[k], rc, e.msg);
        if (!strstr(e.msg, finals[k]))
            fail_msg("the message does not name %s: %s", finals[k], e.msg);
        assert_false(exists_in(dir, finals[k]));  /* nothing that looks complete */
        assert_false(exists_in(dir, victims[k])); /* and the .tmp is cleaned up */
        /* With space again, the same build completes (the rest of 2 pieces as the reference). */
        assert_int_equal(dtb_build(&o, &e), DTB_OK);
        char names[MAX_FILES][64];
        const int n = list_files(dir, names);
        for (int i = 0; i < n; i++) {
            if (ends_with(names[i], ".tmp"))
                fail_msg("%s left behind", names[i]);
            if (strcmp(names[i], "STATS") == 0)
                continue;
            blob x, y;
            char p2[4096];
            path_in(path, sizeof path, dir, names[i]);
            path_in(p2, sizeof p2, fx->one, names[i]);
            assert_true(read_file(path, &x));
            assert_true(read_file(p2, &y));
            if (ends_with(names[i], ".stats")) {
                strip_timing(&x);
                strip_timing(&y);
            }
            if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)
                fail_msg("%s differs from the uninterrupted build's", names[i]);
            free(x.data);
            free(y.data);
        }
        assert_int_equal(n, 4 * 3 + 1); /* KvK, KvM, MvK, MvM: .dtw .wld .stats; STATS */
    }
}

/* ---- what stays in memory ------------------------------------------------------------------ */

/* dtb_build_exits decides when a table may leave memory: it must hold for every successor that
 * move generation finds (the independent source), in every variant (russian promotes during a
 * capture, english ends the move on the far row): up to 20000 positions of each material of
 * 2..3 pieces (all of most), 1500 of each 4-piece one. And it lies within dtb_build_depends, which orders the run. */
static void test_exits_cover_moves(void **state)
{
    (void)state;
    dtb_material list[512];
    const int n6 = dtb_material_list(6, list, 512);
    for (int i = 0; i < n6; i++)
        for (int j = 0; j < n6; j++)
            if (dtb_build_exits(&list[i], &list[j]) && !dtb_build_depends(&list[i], &list[j]))
                fail_msg("material %d exits into %d without depending on it", i, j);
    const int n = dtb_material_list(4, list, 512);
    for (int vi = 0; vi < dtb_variant_count(); vi++) {
        const dtb_variant *v = dtb_variant_at(vi);
        dtb_board b;
        dtb_board_init(&b, v);
        for (int i = 0; i < n; i++) {
            dtb_index *ix;
            assert_int_equal(dtb_index_create(&b, list[i], &ix), DTB_OK);
            const uint64_t size = dtb_index_size(ix);
            const uint64_t stride = size / (dtb_material_pieces(&list[i]) < 4 ? 20000 : 1500) + 1;
            const dtb_material fm = dtb_material_flip(list[i]);
            for (uint64_t k = (uint64_t)i % stride; k < size; k += stride) {
                dtb_pos p;
                dtb_index_pos(ix, k, &p);
                dtb_movelist ml;
                assert_int_equal(dtb_generate(&b, &p, &ml), DTB_OK);
                for (int m = 0; m < ml.count; m++) {
                    dtb_pos q, w;
                    dtb_make_move(&p, &ml.moves[m], &q);
                    dtb_pos_flip(&b, &q, &w);
                    if (!dtb_pos_pieces(&w, DTB_WHITE) || !dtb_pos_pieces(&w, DTB_BLACK))
                        continue; /* the game is over: no table */
                    const dtb_material to = dtb_material_of(&w);
                    if (dtb_material_equal(&to, &list[i]) || dtb_material_equal(&to, &fm))
                        continue; /* the pair itself */
                    if (!dtb_build_exits(&list[i], &to)) {
                        char from[DTB_MATERIAL_NAME_MAX], into[DTB_MATERIAL_NAME_MAX];
                        dtb_material_name(&list[i], from, sizeof from);
                        dtb_material_name(&to, into, sizeof into);
                        fail_msg("%s: a move of %s leads into %s, which it does not exit to",
                                 v->name, from, into);
                    }
                }
            }
            dtb_index_free(ix);
        }
    }
}

/* The estimate of a 2..5 build (no files: everything to solve): dropping needs less than
 * keeping everything, keeping everything at least a byte per position, dropping at least the
 * largest pair and its capture bits. */
static void test_memory_estimate(void **state)
{
    (void)state;
    dtb_build_options o = options(NULL, 5, NULL, 2, NULL);
    const uint64_t drop = dtb_build_memory_needed(&o);
    o.keep_solved = true;
    const uint64_t keep = dtb_build_memory_needed(&o);
    uint64_t all, pair;
    count_positions(5, &all, &pair);
    if (!(keep >= all && drop >= pair + pair / 8 && drop < keep))
        fail_msg("estimates: dropping %llu, keeping %llu bytes; %llu positions, largest pair %llu",
                 (unsigned long long)drop, (unsigned long long)keep, (unsigned long long)all,
                 (unsigned long long)pair);
    /* A build of 2..5 pieces keeps about half of them at once (0.89 of 1.74 GiB planned). */
    assert_true(drop < keep / 3 * 2);
}

typedef struct walk_log {
    int checked, unchecked;
    uint64_t bad;
    char names[MAX_NAMES][DTB_MATERIAL_NAME_MAX];  /* of every visit */
    char needs[MAX_NAMES][DTB_MATERIAL_NAME_MAX];  /* "" when checked */
} walk_log;

static void on_walk(void *user, const dtb_solved *s, dtb_material m, const dtb_material *missing)
{
    walk_log *w = user;
    const int k = w->checked + w->unchecked;
    assert_true(k < MAX_NAMES);
    dtb_material_name(&m, w->names[k], DTB_MATERIAL_NAME_MAX);
    w->needs[k][0] = '\0';
    if (missing) {
        assert_null(s);
        dtb_material_name(missing, w->needs[k], DTB_MATERIAL_NAME_MAX);
        w->unchecked++;
        return;
    }
    w->checked++;
    w->bad += dtb_check_table(s, dtb_solved_find(s, m), NULL, NULL, 0);
}

/* The needs of the visit of `name` ("" when checked); fails when not visited once. */
static const char *walk_needs(const walk_log *w, const char *name)
{
    const char *found = NULL;
    for (int k = 0; k < w->checked + w->unchecked; k++)
        if (strcmp(w->names[k], name) == 0) {
            if (found)
                fail_msg("%s visited twice", name);
            found = w->needs[k];
        }
    if (!found)
        fail_msg("%s not visited", name);
    return found;
}

/* dtbgen --check's walk (tables dropped once checked and no longer read; resume_test checks
 * complete and killed directories through dtbgen --check): with one table gone, exactly the
 * tables whose moves or loading reach it are left out, naming it, and the others are checked
 * once each against their successors, all in memory. */
static void test_walk_partial(void **state)
{
    fixture *fx = *state;
    char dir[300];
    scratch_dir(fx, dir, sizeof dir);
    copy_dir(fx->one, dir);
    remove_in(dir, "KvKK.dtw"); /* KKvK's partner */
    build_log bl = {0};
    dtb_build_options o = options(dir, 4, NULL, 2, &bl);
    walk_log w = {0};
    dtb_error e = {{0}};
    if (dtb_build_walk(&o, on_walk, &w, &e) != DTB_OK)
        fail_msg("walk: %s", e.msg);
    /* KKvK (partner gone), KMvK / KvKM and KKvM / MvKK (a man promotes into KKvK), KKKvK,
     * KvKKK, KKKvM, MvKKK (captures reach KKvK: not even loadable), and, the DTW tables storing
     * their losses only (whose wins are searched through their promotions when loaded), the
     * pairs whose promotions reach those: MMvK / KvMM and KMvM / MvKM (into KMvK's pair), then
     * MMvM / MvMM (into KMvM's). */
    static const char *const left_out[] = {"KKvK", "KMvK", "KvKM", "KKvM", "MvKK", "KKKvK",
                                           "KvKKK", FOUR_PIECE, "MvKKK", "MMvK", "KvMM",
                                           "KMvM", "MvKM", "MMvM", "MvMM"};
    for (int k = 0; k < 15; k++)
        if (strcmp(walk_needs(&w, left_out[k]), "KvKK") != 0)
            fail_msg("%s: not left out for KvKK", left_out[k]);
    static const char *const checked[] = {"KvK", "KvM", "MvK", "MvM"};
    for (int k = 0; k < 4; k++)
        if (walk_needs(&w, checked[k])[0])
            fail_msg("%s left out", checked[k]);
    assert_int_equal(w.unchecked, 15);
    assert_int_equal(w.checked, 19 - 15);
    assert_int_equal(w.bad, 0);
}

/* Builds 2..3 with o, then resumes with FOUR_PIECE (four) and what it needs, as build_all does
 * (the second run loads or reads the first one's tables); fails saying how (what o does). */
static void build_then_four(dtb_build_options *o, const dtb_material *four, const char *how)
{
    dtb_error e = {{0}};
    o->pieces = 3;
    o->only = NULL;
    o->nonly = 0;
    if (dtb_build(o, &e) != DTB_OK)
        fail_msg("build of 2..3 %s: %s", how, e.msg);
    o->pieces = 4;
    o->only = four;
    o->nonly = 1;
    if (dtb_build(o, &e) != DTB_OK)
        fail_msg("build of %s %s: %s", FOUR_PIECE, how, e.msg);
}

/* Under the smallest budget the build accepts, with a work directory: the kings-only pairs are
 * solved lean (their node state does not fit), the pairs with men in the node state, and every
 * table's values live in work files (the resumed run of the 4-piece pair loads into them too).
 * The same bytes as the in-memory build, nothing left in the work directory, and --check within
 * the budget, through work files, checks every table. */
static void test_lean_under_budget(void **state)
{
    fixture *fx = *state;
    char dir[300], work[300];
    scratch_dir(fx, dir, sizeof dir);
    scratch_dir(fx, work, sizeof work);
    dtb_material four;
    assert_int_equal(dtb_material_parse(FOUR_PIECE, &four, NULL), DTB_OK);
    build_log l = {0};
    dtb_build_options o = options(dir, 4, &four, 2, &l);
    dtb_build_budget plan;
    dtb_error e = {{0}};
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    assert_int_equal(plan.lean_pairs, 0); /* no budget: the node state everywhere */
    const uint64_t node_minimum = plan.minimum;
    o.memory_budget = 1; /* the smallest budget the plan accepts, lean pairs included */
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    assert_true(plan.minimum < node_minimum);
    o.memory_budget = plan.minimum;
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    /* the larger kings-only pairs (KKvK, KKKvK; KvK's node state may fit) */
    assert_true(plan.lean_pairs >= 2);
    o.work_dir = work; /* and the values in work files (the budget alone keeps them in memory) */
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    assert_true(plan.use_work_files && plan.lean_pairs >= 2);
    build_then_four(&o, &four, "with lean pairs and work files");
    /* fx->one is the in-memory build of the same materials (test_threads_identical). */
    assert_same_files(dir, fx->one);
    char names[MAX_FILES][64];
    assert_int_equal(list_files(work, names), 0);
    walk_log w = {0};
    o.pieces = 4;
    o.only = NULL;
    o.nonly = 0;
    if (dtb_build_walk(&o, on_walk, &w, &e) != DTB_OK)
        fail_msg("walk with work files: %s", e.msg);
    assert_int_equal(w.checked, 20);
    assert_int_equal(w.bad, 0);
    assert_int_equal(list_files(work, names), 0);
}

/* Finished tables read from their files (decoded on demand, capture positions searched) give
 * the same bytes as kept in memory, in one run and resumed; a damaged block of a finished table
 * stops the build with its path, and nothing is written from values read through it. */
static void test_read_finished_identical(void **state)
{
    fixture *fx = *state;
    char dir[300], work[300];
    scratch_dir(fx, dir, sizeof dir);
    scratch_dir(fx, work, sizeof work);
    dtb_material four;
    assert_int_equal(dtb_material_parse(FOUR_PIECE, &four, NULL), DTB_OK);
    build_log l = {0};
    dtb_build_options o = options(dir, 3, NULL, 2, &l);
    o.work_dir = work;
    o.read_finished = true;
    dtb_build_budget plan;
    dtb_error e = {{0}};
    assert_int_equal(dtb_build_plan_budget(&o, &plan, &e), DTB_OK);
    assert_true(plan.read_finished && plan.use_work_files);
    /* resumed: the 2..3 tables are then read from their files, never loaded */
    build_then_four(&o, &four, "reading finished tables from files");
    assert_same_files(dir, fx->one);
    char names[MAX_FILES][64];
    assert_int_equal(list_files(work, names), 0);

    /* Damage KKvK.dtw's compressed data (after its header), remove KKKvM's pair: rebuilding it
     * reads KKvK through its file and must fail naming it, writing no KKKvM table. */
    char path[4096];
    path_in(path, sizeof path, dir, "KKvK.dtw");
    blob f;
    assert_true(read_file(path, &f));
    for (size_t i = f.len / 2; i < f.len / 2 + 64 && i < f.len; i++)
        f.data[i] ^= 0x5a;
    write_file(path, f.data, f.len);
    free(f.data);
    remove_in(dir, FOUR_PIECE ".dtw");
    remove_in(dir, FOUR_PIECE ".wld");
    remove_in(dir, FOUR_PIECE ".stats");
    remove_in(dir, "MvKKK.dtw");
    remove_in(dir, "MvKKK.wld");
    remove_in(dir, "MvKKK.stats");
    const dtb_status st = dtb_build(&o, &e);
    assert_int_not_equal(st, DTB_OK);
    if (!strstr(e.msg, "KKvK.dtw"))
        fail_msg("the failure does not name the damaged file: %s", e.msg);
    assert_false(exists_in(dir, FOUR_PIECE ".dtw"));
    assert_false(exists_in(dir, "MvKKK.dtw"));
}

/* A registry of work files in a new scratch directory (its path in work), the monitor's cap as
 * given (0: no monitor). The board must outlive it. */
static dtb_solved *work_registry(fixture *fx, const dtb_board *b, uint64_t cap, char *work,
                                 size_t size)
{
    scratch_dir(fx, work, size);
    assert_int_equal(mkdir(work, 0755), 0);
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    dtb_error e = {{0}};
    assert_int_equal(dtb_solved_use_work_files(s, work, cap, &e), DTB_OK);
    return s;
}

/* A registry of work files keeps its values through the monitor's releases of their pages. */
static void test_work_files_released(void **state)
{
    char work[300];
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(VARIANT));
    dtb_solved *s = work_registry(*state, &b, 1, work, sizeof work); /* releases at once */
    dtb_error e = {{0}};
    dtb_material m;
    assert_int_equal(dtb_material_parse("KKKvKK", &m, NULL), DTB_OK);
    dtb_solved_table *t = dtb_solved_add(s, m, &e);
    assert_non_null(t);
    const uint64_t n = dtb_index_size(t->index);
    assert_true(n > (8u << 20)); /* more than the monitor's threshold of file-backed bytes */
    for (uint64_t i = 0; i < n; i++)
        t->values[i] = (dtb_value)(i * 2654435761u >> 24);
    for (uint64_t i = 0; i < n / 64; i++)
        t->captures[i] = i * 0x9E3779B97F4A7C15ull;
    uint64_t now, peak, releases = 0;
    for (int wait = 0; wait < 400 && releases < 2; wait++) {
        nanosleep(&(struct timespec){0, 5000000}, NULL);
        dtb_solved_work_stats(s, &now, &peak, &releases);
    }
    assert_true(releases >= 2);
    assert_true(now >= n && peak >= now);
    for (uint64_t i = 0; i < n; i++)
        if (t->values[i] != (dtb_value)(i * 2654435761u >> 24))
            fail_msg("value %llu lost after a release", (unsigned long long)i);
    for (uint64_t i = 0; i < n / 64; i++)
        assert_true(t->captures[i] == i * 0x9E3779B97F4A7C15ull);
    dtb_solved_drop(s, m);
    dtb_solved_work_stats(s, &now, &peak, &releases);
    assert_int_equal(now, 0);
    dtb_solved_free(s);
    char names[MAX_FILES][64];
    assert_int_equal(list_files(work, names), 0);
}

/* A full disk for work files: a clean status when the table is added, never a fault later
 * (the file's size limit stands in for the disk). */
static void test_work_files_full(void **state)
{
    char work[300];
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(VARIANT));
    dtb_solved *s = work_registry(*state, &b, 0, work, sizeof work);
    dtb_error e = {{0}};
    struct rlimit old, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 1 << 16;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    dtb_material m;
    assert_int_equal(dtb_material_parse("KKvK", &m, NULL), DTB_OK);
    const dtb_solved_table *t = dtb_solved_add(s, m, &e);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    assert_null(t);
    assert_non_null(strstr(e.msg, "KKvK: cannot reserve"));
    assert_null(dtb_solved_find(s, m));
    assert_non_null(dtb_solved_add(s, m, &e)); /* room again */
    dtb_solved_free(s);
}

/* ---- DTW tables that store their losses only (docs/FORMAT.md §8.7) -------------------------- */

/* The don't-care test of a losses-only DTW table written from t (as gen/build.c writes it). */
static bool not_lost_or_capture(void *user, uint64_t i)
{
    const dtb_solved_table *t = user;
    return (t->captures[i / 64] >> (i % 64) & 1) || !dtb_value_is_loss(t->values[i]);
}

/* english 2..4 (2..3 in the sanitizer build), once in each DTW form: losses only (the default)
 * and every value stored (--dtw-store full), in fx's scratch directories. */
#ifdef DTB_SANITIZED_BUILD
enum { LOSSES_PIECES = 3 };
#else
enum { LOSSES_PIECES = 4 };
#endif

static void english_sets(fixture *fx)
{
    if (eng_losses[0])
        return;
    scratch_dir(fx, eng_losses, sizeof eng_losses);
    scratch_dir(fx, eng_full, sizeof eng_full);
    for (int full = 0; full < 2; full++) {
        dtb_build_options o = {.variant = dtb_variant_find("english"), .pieces = LOSSES_PIECES,
                               .out_dir = full ? eng_full : eng_losses, .threads = 2,
                               .zstd_level = 3, .dtw_full = full};
        dtb_error e = {{0}};
        if (dtb_build(&o, &e) != DTB_OK)
            fail_msg("english build (%s): %s", full ? "full" : "losses only", e.msg);
    }
}

/* The english materials of the sets, in list order; their number. */
static int english_list(dtb_material list[MAX_NAMES])
{
    const int n = dtb_material_list(LOSSES_PIECES, list, MAX_NAMES);
    assert_true(n > 0 && n <= MAX_NAMES);
    return n;
}

/* Every material of dir loaded (dtb_build_load: a pair at a time) into a new registry. */
static dtb_solved *load_english(const dtb_board *b, const char *dir)
{
    dtb_solved *s = dtb_solved_create(b);
    assert_non_null(s);
    dtb_material list[MAX_NAMES];
    const int n = english_list(list);
    for (int i = 0; i < n; i++) {
        dtb_error e = {{0}};
        if (dtb_build_load(s, dir, list[i], &e) != DTB_OK)
            fail_msg("load from %s: %s", dir, e.msg);
    }
    return s;
}

/* (a) Loading a losses-only set gives, at every position, the exact value and capture bit that
 * loading the full form gives (the solve's: stored, or captures re-derived): the wins searched
 * from the losses, the draws from the WLD tables, in every kind of pair (own flips among them,
 * men only, kings only). */
static void test_losses_load_exact(void **state)
{
    fixture *fx = *state;
    english_sets(fx);
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find("english"));
    dtb_solved *sl = load_english(&b, eng_losses), *sf = load_english(&b, eng_full);
    dtb_material list[MAX_NAMES];
    const int n = english_list(list);
    uint64_t positions = 0, wins = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        dtb_build_table_path(path, sizeof path, eng_losses, b.variant, &list[i], DTB_METRIC_DTW);
        dtb_tablefile *tf;
        dtb_error e;
        assert_int_equal(dtb_tablefile_open(path, NULL, &tf, &e), DTB_OK);
        assert_int_equal(dtb_tablefile_get_info(tf)->flags, DTB_TABLE_LOSSES);
        dtb_tablefile_close(tf);
        const dtb_solved_table *a = dtb_solved_find(sl, list[i]), *c = dtb_solved_find(sf, list[i]);
        assert_non_null(a);
        assert_non_null(c);
        const uint64_t size = dtb_index_size(a->index);
        assert_memory_equal(a->captures, c->captures, (size / 64 + 1) * sizeof *a->captures);
        for (uint64_t x = 0; x < size; x++) {
            const dtb_wvalue va = dtb_solved_exact_at(sl, a, x), vc = dtb_solved_exact_at(sf, c, x);
            if (va != vc)
                fail_msg("%s index %llu: loaded %u from losses only, %u from the full form", path,
                         (unsigned long long)x, va, vc);
            wins += dtb_wvalue_is_win(va) && !(a->captures[x / 64] >> (x % 64) & 1);
        }
        positions += size;
    }
    print_message("english 2..%d: %llu positions alike, %llu quiet wins searched\n",
                  LOSSES_PIECES, (unsigned long long)positions, (unsigned long long)wins);
    assert_true(wins > positions / 10);
    dtb_solved_free(sl);
    dtb_solved_free(sf);
}

/* (b) A build that reads its finished losses-only tables from their files (each win searched
 * from its moves, the opponent's wins looked up shallow) writes the bytes of the build that
 * keeps them in memory. (test_read_finished_identical does the same in international.) */
static void test_losses_from_files(void **state)
{
    fixture *fx = *state;
    english_sets(fx);
    char dir[300];
    scratch_dir(fx, dir, sizeof dir);
    const dtb_variant *v = dtb_variant_find("english");
    dtb_build_options o = {.variant = v, .pieces = LOSSES_PIECES, .out_dir = dir, .threads = 2,
                           .zstd_level = 3, .read_finished = true};
    dtb_error e = {{0}};
    if (dtb_build(&o, &e) != DTB_OK)
        fail_msg("build reading finished tables from files: %s", e.msg);
    dtb_material list[MAX_NAMES];
    const int n = english_list(list);
    for (int i = 0; i < n; i++)
        for (int metric = DTB_METRIC_WLD; metric <= DTB_METRIC_DTW; metric++) {
            char a[4096], c[4096];
            dtb_build_table_path(a, sizeof a, dir, v, &list[i], (dtb_metric)metric);
            dtb_build_table_path(c, sizeof c, eng_losses, v, &list[i], (dtb_metric)metric);
            blob x, y;
            assert_true(read_file(a, &x) && read_file(c, &y));
            if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)
                fail_msg("%s differs from %s", a, c);
            free(x.data);
            free(y.data);
        }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* english: not remove_dir's variant */
    assert_int_equal(system(cmd), 0);
}

/* The walk of a check over dir (english): its log. */
static walk_log check_english(const char *dir)
{
    walk_log w = {0};
    const dtb_build_options o = {.variant = dtb_variant_find("english"), .pieces = LOSSES_PIECES,
                                 .out_dir = dir, .threads = 2};
    dtb_error e = {{0}};
    if (dtb_build_walk(&o, on_walk, &w, &e) != DTB_OK)
        fail_msg("walk of %s: %s", dir, e.msg);
    return w;
}

/* (c) --check's walk passes every table of a losses-only set, and finds a loss one move longer
 * written into one of them (the file otherwise as the build writes it). */
static void test_losses_check(void **state)
{
    fixture *fx = *state;
    english_sets(fx);
    dtb_material list[MAX_NAMES];
    const int n = english_list(list);
    walk_log w = check_english(eng_losses);
    assert_int_equal(w.checked, n);
    assert_int_equal(w.unchecked, 0);
    assert_int_equal(w.bad, 0);

    char dir[300], cmd[1400];
    scratch_dir(fx, dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp -r '%s/english' '%s/'", dir, eng_losses, dir);
    assert_int_equal(system(cmd), 0);
    const dtb_variant *v = dtb_variant_find("english");
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_solved *s = load_english(&b, eng_losses);
    /* the first quiet loss of a 3-piece table without a long list that a byte still holds
     * two plies longer */
    dtb_solved_table *t = NULL;
    uint64_t at = 0;
    for (int i = 0; i < n && !t; i++) {
        dtb_solved_table *c = (dtb_solved_table *)dtb_solved_find(s, list[i]);
        if (dtb_material_pieces(&list[i]) != 3 || dtb_solved_long_count(s, c))
            continue;
        for (uint64_t x = 0; x < dtb_index_size(c->index) && !t; x++)
            if (!(c->captures[x / 64] >> (x % 64) & 1) && dtb_value_is_loss(c->values[x]) &&
                c->values[x] < DTB_VALUE_LOSS_ESCAPE - 1) {
                t = c;
                at = x;
            }
    }
    assert_non_null(t);
    t->values[at]++; /* a loss two plies longer */
    char name[DTB_MATERIAL_NAME_MAX], path[4096];
    dtb_material_name(&t->material, name, sizeof name);
    dtb_build_table_path(path, sizeof path, dir, v, &t->material, DTB_METRIC_DTW);
    dtb_table_write_options wo = dtb_build_write_options(v, name, DTB_METRIC_DTW);
    wo.dontcare_kind = DTB_DONTCARE_CAPTURES | DTB_DONTCARE_NOT_LOSSES;
    wo.flags = DTB_TABLE_LOSSES;
    const dtb_table_dontcare dc = {.marker = -1, .fn = not_lost_or_capture, .user = t};
    dtb_error e = {{0}};
    if (dtb_table_write(path, &wo, t->values, dtb_index_size(t->index), &dc, NULL, &e) != DTB_OK)
        fail_msg("rewrite %s: %s", path, e.msg);
    dtb_solved_free(s);
    w = check_english(dir);
    assert_int_equal(w.checked, n);
    if (w.bad == 0)
        fail_msg("the loss of %s index %llu two plies longer was not found", name,
                 (unsigned long long)at);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* (d) The manifest digests of the two forms are equal, table by table (the DTW tables' losses
 * view; the WLD files are the same bytes), though their DTW files differ. */
static void test_losses_digests(void **state)
{
    fixture *fx = *state;
    english_sets(fx);
    const dtb_variant *v = dtb_variant_find("english");
    dtb_material list[MAX_NAMES];
    const int n = english_list(list);
    int smaller = 0;
    for (int i = 0; i < n; i++)
        for (int metric = DTB_METRIC_WLD; metric <= DTB_METRIC_DTW; metric++) {
            char a[4096], c[4096];
            dtb_build_table_path(a, sizeof a, eng_losses, v, &list[i], (dtb_metric)metric);
            dtb_build_table_path(c, sizeof c, eng_full, v, &list[i], (dtb_metric)metric);
            uint64_t da, dc;
            dtb_error e = {{0}};
            if (dtb_manifest_digest(a, 2, &da, &e) != DTB_OK ||
                dtb_manifest_digest(c, 2, &dc, &e) != DTB_OK)
                fail_msg("digest: %s", e.msg);
            if (da != dc)
                fail_msg("%s and %s: digests %016llx and %016llx", a, c, (unsigned long long)da,
                         (unsigned long long)dc);
            struct stat sa, sc;
            assert_int_equal(stat(a, &sa), 0);
            assert_int_equal(stat(c, &sc), 0);
            smaller += metric == DTB_METRIC_DTW && sa.st_size < sc.st_size;
        }
    assert_true(smaller > n / 2);
    /* the losses-only digest needs the WLD table beside it */
    char dir[300], cmd[1400], path[4096];
    scratch_dir(fx, dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/english' && cp '%s/english/KvKK.dtw' '%s/english/'",
             dir, eng_losses, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/english/KvKK.dtw", dir);
    uint64_t d;
    dtb_error e = {{0}};
    assert_int_equal(dtb_manifest_digest(path, 1, &d, &e), DTB_E_NOTFOUND);
    assert_non_null(strstr(e.msg, "KvKK.wld"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_identical),
        cmocka_unit_test(test_rerun_changes_nothing),
        cmocka_unit_test(test_half_written_completed),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_lean_under_budget),
        cmocka_unit_test(test_read_finished_identical),
        cmocka_unit_test(test_work_files_released),
        cmocka_unit_test(test_work_files_full),
        cmocka_unit_test(test_load_damaged),
        cmocka_unit_test(test_check_finds_altered_value),
        cmocka_unit_test(test_dtw_pieces),
        cmocka_unit_test(test_disk_full),
        cmocka_unit_test(test_exits_cover_moves),
        cmocka_unit_test(test_memory_estimate),
        cmocka_unit_test(test_walk_partial),
        cmocka_unit_test(test_losses_load_exact),
        cmocka_unit_test(test_losses_from_files),
        cmocka_unit_test(test_losses_check),
        cmocka_unit_test(test_losses_digests),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
