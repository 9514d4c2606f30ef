/* dtbgen: the command line of the tablebase generator (DESIGN.md §9).
 *
 * Structure: every option is parsed into one dtbgen_options value (the table `options` below
 * drives both parsing and --help), then exactly one command runs. A new command adds an entry
 * to `commands`, its options to `options`, and a run function. Exit codes: 0 done, 1 bad input
 * or data (an unknown variant, a material that does not fit, a failed build), 2 usage (unknown
 * option, missing value, no command, two commands). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "check.h"
#include "compact.h"
#include "fen.h"
#include "index.h"
#include "material.h"
#include "variant.h"

#ifndef DTB_VERSION
#define DTB_VERSION "unknown"
#endif

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

typedef enum { CMD_NONE = 0, CMD_LIST, CMD_BUILD, CMD_CHECK, CMD_COMPACT } dtbgen_command;

#define MAX_ONLY 64

typedef struct dtbgen_options {
    dtbgen_command command;
    const char *variant;
    int pieces;
    bool json;
    bool quiet;
    const char *dir;                /* --out or --check */
    const char *full_dir;           /* --compact */
    const char *only[MAX_ONLY];     /* --material, repeatable */
    int nonly;
    int threads;
    double memory_gib;              /* 0: no budget given */
    int zstd_level;
    int block_positions;            /* --block-positions (compact sets); 0: the default */
    bool threats;                   /* --threats (compact sets) */
} dtbgen_options;

typedef enum { ARG_NONE, ARG_STRING, ARG_INT } arg_kind;

typedef struct option_spec {
    const char *name;    /* "--variant" */
    arg_kind arg;
    const char *metavar; /* shown in --help */
    const char *help;
} option_spec;

static const option_spec options[] = {
    {"--list", ARG_NONE, NULL, "list the materials of 2..N pieces, and the memory a build needs"},
    {"--out", ARG_STRING, "DIR", "solve materials of 2..N pieces into DIR/<variant>/ (resumes)"},
    {"--check", ARG_STRING, "DIR", "re-derive every stored value in DIR from its successors"},
    {"--compact", ARG_STRING, "FULL", "a compact set of the full set in FULL, into --out DIR"},
    {"--material", ARG_STRING, "NAME", "only this material and what it needs (repeatable)"},
    {"--threads", ARG_INT, "T", "worker threads (default: all cores)"},
    {"--memory", ARG_STRING, "GIB", "refuse to start a build needing more memory than this"},
    {"--zstd-level", ARG_INT, "L", "compression level of the table files (default 9; --compact: 15)"},
    {"--block-positions", ARG_INT, "N", "--compact: positions per block (default 1048576)"},
    {"--threats", ARG_NONE, NULL, "--compact: leave threat positions to the probe too (smaller)"},
    {"--variant", ARG_STRING, "V", "rules: international, english, russian, brazilian, canadian"},
    {"--pieces", ARG_INT, "N", "largest number of pieces (2..N)"},
    {"--json", ARG_NONE, NULL, "machine-readable output (one JSON object)"},
    {"--quiet", ARG_NONE, NULL, "no progress or notes on stderr"},
    {"--help", ARG_NONE, NULL, "this text"},
    {"--version", ARG_NONE, NULL, "program version"},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: dtbgen --variant V --pieces N --out DIR [--material NAME ...] [--threads T]\n"
               "              [--memory GIB] [--quiet]\n"
               "       dtbgen --check DIR --variant V [--pieces N] [--threads T]\n"
               "       dtbgen --compact FULL --out DIR [--variant V] [--pieces N] [--threads T]\n"
               "              [--block-positions N] [--zstd-level L] [--threats] [--json]\n"
               "       dtbgen --list --variant V --pieces N [--json]\n"
               "       dtbgen --help | --version\n\noptions:\n");
    for (int i = 0; i < NOPTIONS; i++) {
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", options[i].name, options[i].metavar ? " " : "",
                 options[i].metavar ? options[i].metavar : "");
        fprintf(f, "  %-16s %s\n", left, options[i].help);
    }
    fprintf(f, "\ncompact sets: of every material and its colour flip (per metric) one file is stored\n"
               "and the other is derived: its quiet positions whose moves all land in stored tables\n"
               "hold no value, and libdtb answers them by a one-ply search (the same values, probes\n"
               "of those positions make about a dozen lookups instead of one). Of each pair the\n"
               "member with the larger file is derived. Stored tables are copied when\n"
               "--block-positions and --zstd-level are the full set's, re-encoded otherwise.\n"
               "--threats: stored tables also leave most threat positions (the opponent could\n"
               "capture if it were to move) to a search of up to four plies: a smaller set with\n"
               "slower probes of those positions.\n"
               "tables/FORMAT.md, \"Compact sets\", has the rule, the defaults and the sizes.\n");
    fprintf(f, "\nexit status: 0 done, 1 bad input or data, 2 usage error\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "dtbgen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntry 'dtbgen --help'\n");
    return EXIT_USAGE;
}

static bool parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

static int set_command(dtbgen_options *o, dtbgen_command c, const char *name)
{
    if (o->command != CMD_NONE && o->command != c)
        return usage_error("%s: only one command at a time", name);
    o->command = c;
    return 0;
}

/* Fills *o from argv. Returns -1 to go on, or an exit status (0 after --help / --version). */
static int parse_args(int argc, char **argv, dtbgen_options *o)
{
    bool have_pieces = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        const char *eq = strchr(a, '=');
        const size_t len = eq && a[0] == '-' ? (size_t)(eq - a) : strlen(a);
        const option_spec *spec = NULL;
        for (int k = 0; k < NOPTIONS && !spec; k++)
            if (strlen(options[k].name) == len && strncmp(options[k].name, a, len) == 0)
                spec = &options[k];
        if (!spec)
            return usage_error(a[0] == '-' ? "unknown option %s" : "unexpected argument %s", a);
        if (spec->arg != ARG_NONE) {
            if (eq && a[0] == '-')
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error("%s needs a value", spec->name);
        } else if (eq && a[0] == '-') {
            return usage_error("%s takes no value", spec->name);
        }

        if (strcmp(spec->name, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(spec->name, "--version") == 0) {
            printf("dtbgen %s\n", DTB_VERSION);
            return 0;
        } else if (strcmp(spec->name, "--list") == 0) {
            const int r = set_command(o, CMD_LIST, spec->name);
            if (r)
                return r;
        } else if (strcmp(spec->name, "--out") == 0 && o->command == CMD_COMPACT) {
            o->dir = value; /* where --compact writes */
        } else if (strcmp(spec->name, "--compact") == 0) {
            if (o->command == CMD_BUILD && o->full_dir == NULL) /* --out came first */
                o->command = CMD_NONE;
            const int r = set_command(o, CMD_COMPACT, spec->name);
            if (r)
                return r;
            o->full_dir = value;
        } else if (strcmp(spec->name, "--out") == 0 || strcmp(spec->name, "--check") == 0) {
            const bool check = spec->name[2] == 'c';
            const int r = set_command(o, check ? CMD_CHECK : CMD_BUILD, spec->name);
            if (r)
                return r;
            o->dir = value;
        } else if (strcmp(spec->name, "--material") == 0) {
            if (o->nonly == MAX_ONLY)
                return usage_error("%s: too many materials", value);
            o->only[o->nonly++] = value;
        } else if (strcmp(spec->name, "--threads") == 0) {
            if (!parse_int(value, &o->threads) || o->threads < 1)
                return usage_error("--threads: '%s' is not a positive number", value);
        } else if (strcmp(spec->name, "--zstd-level") == 0) {
            if (!parse_int(value, &o->zstd_level) || o->zstd_level < 1 || o->zstd_level > 22)
                return usage_error("--zstd-level: '%s' is not a level 1..22", value);
        } else if (strcmp(spec->name, "--block-positions") == 0) {
            if (!parse_int(value, &o->block_positions) || o->block_positions < 1 ||
                o->block_positions > (1 << 24))
                return usage_error("--block-positions: '%s' is not a number 1..16777216", value);
        } else if (strcmp(spec->name, "--memory") == 0) {
            char *end;
            o->memory_gib = strtod(value, &end);
            if (end == value || *end || !(o->memory_gib > 0))
                return usage_error("--memory: '%s' is not a positive number of GiB", value);
        } else if (strcmp(spec->name, "--variant") == 0) {
            o->variant = value;
        } else if (strcmp(spec->name, "--pieces") == 0) {
            if (!parse_int(value, &o->pieces))
                return usage_error("--pieces: '%s' is not a number", value);
            have_pieces = true;
        } else if (strcmp(spec->name, "--json") == 0) {
            o->json = true;
        } else if (strcmp(spec->name, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(spec->name, "--threats") == 0) {
            o->threats = true;
        }
    }
    if (o->command == CMD_NONE)
        return usage_error("%s", "no command given (--out DIR, --check DIR, --compact DIR or --list)");
    if (o->block_positions && o->command != CMD_COMPACT)
        return usage_error("%s", "--block-positions is for --compact (builds use 65536)");
    if (o->threats && o->command != CMD_COMPACT)
        return usage_error("%s", "--threats is for --compact (full sets store every quiet position)");
    if (o->command == CMD_COMPACT && !o->dir)
        return usage_error("%s", "--compact needs --out DIR (where the compact set goes)");
    if (o->command != CMD_CHECK && o->command != CMD_COMPACT && !o->variant)
        return usage_error("%s", "--variant is needed");
    if (o->command == CMD_BUILD && !have_pieces && o->nonly == 0)
        return usage_error("%s", "--out needs --pieces or --material");
    if (o->command == CMD_CHECK && !o->variant)
        return usage_error("%s", "--check needs --variant");
    if (o->command == CMD_LIST) {
        if (!o->variant)
            return usage_error("%s", "--list needs --variant");
        if (!have_pieces)
            return usage_error("%s", "--list needs --pieces");
    }
    return -1;
}

/* The variant named in o, or NULL after a message (bad input). */
static const dtb_variant *find_variant(const dtbgen_options *o)
{
    const dtb_variant *v = dtb_variant_find(o->variant);
    if (!v) {
        fprintf(stderr, "dtbgen: unknown variant '%s' (one of:", o->variant);
        for (int i = 0; i < dtb_variant_count(); i++)
            fprintf(stderr, " %s", dtb_variant_at(i)->name);
        fprintf(stderr, ")\n");
    }
    return v;
}

/* Decimal text of x (sums of sizes can pass 2^64 for large piece counts). */
__extension__ static void u128_text(unsigned __int128 x, char buf[48])
{
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(x % 10));
        x /= 10;
    } while (x);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
}

static int run_list(const dtbgen_options *o)
{
    const dtb_variant *v = find_variant(o);
    if (!v)
        return EXIT_INPUT;
    dtb_board b;
    dtb_board_init(&b, v);
    const int most = 2 * v->start_rows * b.half; /* every piece of both sides */
    if (o->pieces < 2 || o->pieces > most) {
        fprintf(stderr, "dtbgen: --pieces %d: %s materials have 2..%d pieces\n", o->pieces,
                v->name, most);
        return EXIT_INPUT;
    }
    const int n = dtb_material_list(o->pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    if (!list) {
        fprintf(stderr, "dtbgen: out of memory\n");
        return EXIT_INPUT;
    }
    dtb_material_list(o->pieces, list, n);

    if (o->json)
        printf("{\"variant\":\"%s\",\"pieces\":%d,\"materials\":[", v->name, o->pieces);
    else
        printf("# %s, materials of 2..%d pieces in dependency order\n%-16s %20s %14s %12s\n",
               v->name, o->pieces, "material", "positions", "blocks", "block_size");
    __extension__ unsigned __int128 total = 0, total_blocks = 0;
    int listed = 0, skipped = 0, status = 0;
    for (int i = 0; i < n && status == 0; i++) {
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&list[i], name, sizeof name);
        dtb_index *ix;
        const dtb_status st = dtb_index_create(&b, list[i], &ix);
        const int start = v->start_rows * b.half;
        if (st == DTB_E_RANGE && (list[i].kings[0] + list[i].men[0] > start ||
                                  list[i].kings[1] + list[i].men[1] > start)) {
            skipped++; /* cannot occur in this variant */
            continue;
        } else if (st != DTB_OK) {
            fprintf(stderr, "dtbgen: %s: more positions than a 64-bit index can number\n", name);
            status = EXIT_INPUT;
            break;
        }
        const uint64_t size = dtb_index_size(ix), blocks = dtb_index_blocks(ix);
        total += size;
        total_blocks += blocks;
        if (o->json)
            printf("%s{\"material\":\"%s\",\"positions\":%llu,\"blocks\":%llu,\"block_size\":%llu}",
                   listed ? "," : "", name, (unsigned long long)size, (unsigned long long)blocks,
                   (unsigned long long)dtb_index_block_size(ix));
        else
            printf("%-16s %20llu %14llu %12llu\n", name, (unsigned long long)size,
                   (unsigned long long)blocks, (unsigned long long)dtb_index_block_size(ix));
        listed++;
        dtb_index_free(ix);
    }
    free(list);
    if (status)
        return status;
    char tp[48], tb[48];
    u128_text(total, tp);
    u128_text(total_blocks, tb);
    /* The memory a build of these materials needs at its peak (dtbgen builds up to 8 pieces),
     * and what it would need keeping every table in memory to the end. */
    uint64_t peak = 0, keep = 0;
    if (o->pieces <= 8) {
        dtb_build_options bo = {.variant = v, .pieces = o->pieces, .threads = o->threads};
        peak = dtb_build_memory_needed(&bo);
        bo.keep_solved = true;
        keep = dtb_build_memory_needed(&bo);
    }
    if (o->json) {
        printf("],\"count\":%d,\"positions\":%s,\"blocks\":%s", listed, tp, tb);
        if (peak)
            printf(",\"memory_peak\":%llu,\"memory_keep_all\":%llu", (unsigned long long)peak,
                   (unsigned long long)keep);
        printf("}\n");
    } else {
        printf("%-16s %20s %14s   (%d materials)\n", "total", tp, tb, listed);
        if (peak)
            printf("# memory of a build (--memory): %.2f GiB at its peak, %.2f GiB keeping every "
                   "table to the end\n",
                   (double)peak / 1073741824.0, (double)keep / 1073741824.0);
    }
    if (skipped && !o->quiet)
        fprintf(stderr, "dtbgen: %d materials left out: more pieces a side than %s starts with\n",
                skipped, v->name);
    return 0;
}

/* ---- building -------------------------------------------------------------------------- */

typedef struct progress_state {
    const dtbgen_options *o;
    bool tty;
    double started; /* of the current material */
    double last;    /* last bar drawn */
} progress_state;

static void draw_bar(progress_state *ps, const char *name, uint64_t done, uint64_t total)
{
    const double now = omp_get_wtime();
    if (done < total && now - ps->last < 0.2)
        return;
    ps->last = now;
    const double frac = total ? (double)done / (double)total : 1.0;
    const double el = now - ps->started, rate = el > 0 ? (double)done / el : 0;
    const double eta = rate > 0 ? (double)(total - done) / rate : 0;
    char bar[31];
    const int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r%-10s [%s] %5.1f%% %llu/%llu %.2f Mpos/s ETA %.0fs   ", name, bar,
            100 * frac, (unsigned long long)done, (unsigned long long)total, rate / 1e6, eta);
}

static void on_build(void *user, dtb_build_event ev, const char *name, uint64_t done,
                     uint64_t total, const char *text)
{
    progress_state *ps = user;
    if (ps->o->quiet)
        return;
    switch (ev) {
    case DTB_BUILD_SKIP:
        if (!ps->tty)
            fprintf(stderr, "dtbgen: %s already complete\n", name);
        break;
    case DTB_BUILD_START:
        ps->started = omp_get_wtime();
        ps->last = 0;
        if (!ps->tty)
            fprintf(stderr, "dtbgen: %s solving\n", name);
        break;
    case DTB_BUILD_PROGRESS:
        if (ps->tty)
            draw_bar(ps, name, done, total);
        break;
    case DTB_BUILD_DONE:
        if (ps->tty)
            fprintf(stderr, "\r%-80s\r", "");
        (void)text; /* the stats record, also in STATS */
        fprintf(stderr, "dtbgen: %s solved: %llu positions, %.2f s\n", name,
                (unsigned long long)done, omp_get_wtime() - ps->started);
        break;
    }
}

static int parse_materials(const dtbgen_options *o, dtb_material *out)
{
    for (int i = 0; i < o->nonly; i++) {
        dtb_error e;
        if (dtb_material_parse(o->only[i], &out[i], &e) != DTB_OK) {
            fprintf(stderr, "dtbgen: --material %s: %s\n", o->only[i], e.msg);
            return EXIT_INPUT;
        }
    }
    return 0;
}

static int run_build(const dtbgen_options *o)
{
    const dtb_variant *v = find_variant(o);
    if (!v)
        return EXIT_INPUT;
    dtb_material only[MAX_ONLY];
    if (parse_materials(o, only))
        return EXIT_INPUT;
    int pieces = o->pieces;
    for (int i = 0; i < o->nonly; i++)
        if (dtb_material_pieces(&only[i]) > pieces)
            pieces = dtb_material_pieces(&only[i]);
    dtb_board b;
    dtb_board_init(&b, v);
    if (pieces < 2 || pieces > 8) {
        fprintf(stderr, "dtbgen: --pieces %d: dtbgen builds 2..8 pieces\n", pieces);
        return EXIT_INPUT;
    }
    progress_state ps = {.o = o, .tty = isatty(STDERR_FILENO)};
    uint64_t budget = (uint64_t)(o->memory_gib * 1073741824.0);
    if (!budget) { /* no budget given: what the machine has */
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && page > 0)
            budget = (uint64_t)pages * (uint64_t)page;
    }
    const dtb_build_options bo = {
        .variant = v,
        .pieces = pieces,
        .only = o->nonly ? only : NULL,
        .nonly = o->nonly,
        .out_dir = o->dir,
        .threads = o->threads,
        .memory_budget = budget,
        .zstd_level = o->zstd_level,
        .log = on_build,
        .user = &ps,
    };
    const double t0 = omp_get_wtime();
    dtb_error e;
    const dtb_status st = dtb_build(&bo, &e);
    if (ps.tty && !o->quiet)
        fprintf(stderr, "\r%-80s\r", "");
    if (st != DTB_OK) {
        fprintf(stderr, "dtbgen: %s\n", e.msg);
        return EXIT_INPUT;
    }
    if (!o->quiet)
        fprintf(stderr, "dtbgen: %s 2..%d pieces complete in %s/%s (%.1f s)\n", v->name, pieces,
                o->dir, v->name, omp_get_wtime() - t0);
    return 0;
}

/* ---- checking -------------------------------------------------------------------------- */

static void on_mismatch(void *user, const dtb_solved_table *t, uint64_t index, dtb_value stored,
                        dtb_value derived)
{
    const dtb_board *b = user;
    dtb_pos p;
    char fen[DTB_FEN_MAX], name[DTB_MATERIAL_NAME_MAX];
    dtb_index_pos(t->index, index, &p);
    dtb_fen_write(b, &p, fen, sizeof fen);
    dtb_material_name(&t->material, name, sizeof name);
    static const char *const wdl[3] = {"loss", "draw", "win"};
    printf("mismatch %s %s: stored %s %d, successors give %s %d\n", name, fen,
           wdl[dtb_value_wdl(stored) + 1], dtb_value_dtw(stored), wdl[dtb_value_wdl(derived) + 1],
           dtb_value_dtw(derived));
}

static void not_checked(const dtbgen_options *o, const char *name, const dtb_material *need)
{
    char needed[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(need, needed, sizeof needed);
    if (!o->quiet)
        fprintf(stderr, "dtbgen: check %s: not checked, it needs %s, which is missing\n", name,
                needed);
}

typedef struct check_state {
    const dtbgen_options *o;
    dtb_board b;
    int checked, unchecked;
    uint64_t bad, positions;
} check_state;

static void on_check(void *user, const dtb_solved *s, dtb_material m, const dtb_material *missing)
{
    check_state *cs = user;
    char name[DTB_MATERIAL_NAME_MAX];
    dtb_material_name(&m, name, sizeof name);
    if (missing) {
        not_checked(cs->o, name, missing);
        cs->unchecked++;
        return;
    }
    const dtb_solved_table *t = dtb_solved_find(s, m);
    const uint64_t k = dtb_check_table(s, t, on_mismatch, &cs->b, 20);
    if (!cs->o->quiet)
        fprintf(stderr, "dtbgen: check %s: %llu positions, %llu mismatches\n", name,
                (unsigned long long)dtb_index_size(t->index), (unsigned long long)k);
    cs->bad += k;
    cs->positions += dtb_index_size(t->index);
    cs->checked++;
}

static int run_check(const dtbgen_options *o)
{
    const dtb_variant *v = find_variant(o);
    if (!v)
        return EXIT_INPUT;
    check_state cs = {.o = o};
    dtb_board_init(&cs.b, v);
    /* Tables are loaded in the order of a build and dropped once checked and no longer read
     * (loading re-derives capture positions from smaller tables, checking reads every
     * successor). A table whose successors lie in a table that is not there (a partial or
     * interrupted build) cannot be checked: it is named and left out, like an absent table. */
    const dtb_build_options bo = {
        .variant = v,
        .pieces = o->pieces ? o->pieces : 8,
        .out_dir = o->dir,
        .threads = o->threads,
    };
    const double t0 = omp_get_wtime();
    dtb_error e;
    if (dtb_build_walk(&bo, on_check, &cs, &e) != DTB_OK) {
        fprintf(stderr, "dtbgen: %s\n", e.msg);
        return EXIT_INPUT;
    }
    if (cs.checked == 0) {
        fprintf(stderr, "dtbgen: no %s tables in %s/%s\n", v->name, o->dir, v->name);
        return EXIT_INPUT;
    }
    printf("checked %d tables, %llu positions, %llu mismatches", cs.checked,
           (unsigned long long)cs.positions, (unsigned long long)cs.bad);
    if (cs.unchecked)
        printf(", %d tables not checked (a table they need is missing)", cs.unchecked);
    printf(" (%.1f s)\n", omp_get_wtime() - t0);
    return cs.bad ? EXIT_INPUT : 0;
}

/* ---- compact sets ------------------------------------------------------------------------ */

static void on_compact(void *user, const char *path, dtb_compact_action action, uint64_t bytes_in,
                       uint64_t bytes_out)
{
    const dtbgen_options *o = user;
    if (o->quiet)
        return;
    static const char *const what[] = {"derived", "copied", "already there", "re-encoded"};
    fprintf(stderr, "dtbgen: %s %s (%llu -> %llu bytes)\n", what[action], path,
            (unsigned long long)bytes_in, (unsigned long long)bytes_out);
}

/* The variant of the full set: --variant, or the one variant directory in it. */
static const dtb_variant *compact_variant(const dtbgen_options *o)
{
    if (o->variant)
        return find_variant(o);
    const dtb_variant *found = NULL;
    int n = 0;
    for (int i = 0; i < dtb_variant_count(); i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", o->full_dir, dtb_variant_at(i)->name);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            found = dtb_variant_at(i), n++;
    }
    if (n != 1)
        fprintf(stderr, "dtbgen: %s holds %s variant directory: choose one with --variant\n",
                o->full_dir, n ? "more than one" : "no");
    return n == 1 ? found : NULL;
}

static int run_compact(const dtbgen_options *o)
{
    const dtb_variant *v = compact_variant(o);
    if (!v)
        return EXIT_INPUT;
    const dtb_compact_options co = {
        .from_dir = o->full_dir,
        .out_dir = o->dir,
        .variant = v,
        .pieces = o->pieces,
        .threads = o->threads,
        .block_positions = (uint32_t)o->block_positions,
        .zstd_level = o->zstd_level,
        .threats = o->threats,
        .log = on_compact,
        .user = (void *)o,
    };
    const double t0 = omp_get_wtime();
    dtb_compact_stats st;
    dtb_error e;
    if (dtb_compact(&co, &st, &e) != DTB_OK) {
        fprintf(stderr, "dtbgen: %s\n", e.msg);
        return EXIT_INPUT;
    }
    const double secs = omp_get_wtime() - t0;
    if (o->json) {
        printf("{\"variant\":\"%s\",\"dir\":\"%s\",\"files\":%d,\"derived\":%d,"
               "\"reencoded\":%d,",
               v->name, o->dir, st.files, st.derived, st.reencoded);
        for (int k = 0; k < 2; k++)
            printf("\"%s\":{\"positions\":%llu,\"bytes_full\":%llu,\"bytes\":%llu},",
                   k ? "dtw" : "wld", (unsigned long long)st.positions[k],
                   (unsigned long long)st.bytes_in[k], (unsigned long long)st.bytes_out[k]);
        printf("\"derived_positions\":%llu,\"threat_positions\":%llu,\"seconds\":%.1f}\n",
               (unsigned long long)st.derived_dontcare, (unsigned long long)st.threat_dontcare,
               secs);
        return 0;
    }
    printf("compact %s set in %s/%s: %d files, %d derived, %d re-encoded (%.1f s)\n", v->name,
           o->dir, v->name, st.files, st.derived, st.reencoded, secs);
    if (o->threats)
        printf("  threat positions left to the probe: %llu\n",
               (unsigned long long)st.threat_dontcare);
    for (int k = 0; k < 2; k++)
        if (st.positions[k])
            printf("  %s: %llu -> %llu bytes, %.1f -> %.1f positions per byte\n", k ? "DTW" : "WLD",
                   (unsigned long long)st.bytes_in[k], (unsigned long long)st.bytes_out[k],
                   (double)st.positions[k] / (double)st.bytes_in[k],
                   (double)st.positions[k] / (double)st.bytes_out[k]);
    return 0;
}

int main(int argc, char **argv)
{
    dtbgen_options o = {0};
    const int r = parse_args(argc, argv, &o);
    if (r >= 0)
        return r;
    switch (o.command) {
    case CMD_LIST:
        return run_list(&o);
    case CMD_BUILD:
        return run_build(&o);
    case CMD_CHECK:
        return run_check(&o);
    case CMD_COMPACT:
        return run_compact(&o);
    case CMD_NONE:
        break;
    }
    return EXIT_USAGE;
}
