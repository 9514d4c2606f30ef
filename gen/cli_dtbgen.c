/* dtbgen: the command line of the tablebase generator (docs/DESIGN.md §9).
 *
 * Structure: every option is parsed into one dtbgen_options value (the table `options` below
 * drives both parsing and --help), then exactly one command runs. A new command adds an entry
 * to `commands`, its options to `options`, and a run function. Exit codes: 0 done, 1 bad input
 * or data (an unknown variant, a material that does not fit, a failed build), 2 usage (unknown
 * option, missing value or one out of its range such as --pieces 30, no command, two
 * commands). Variant names are read in any case. */
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
#include <dirent.h>

#include "build.h"
#include "check.h"
#include "cli_options.h"
#include "compact.h"
#include "convert.h"
#include "fen.h"
#include "index.h"
#include "manifest.h"
#include "material.h"
#include "diskplan.h"
#include "mpi_build.h"
#include "variant.h"
#include "workfile.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

typedef enum { CMD_NONE = 0, CMD_LIST, CMD_BUILD, CMD_CHECK, CMD_COMPACT, CMD_CONVERT, CMD_MANIFEST } dtbgen_command;

#define MAX_ONLY 64

typedef struct dtbgen_options {
    dtbgen_command command;
    const char *variant;
    int pieces;
    bool json;
    bool quiet;
    const char *dir;                /* --out, --check or --manifest */
    const char *full_dir;           /* --compact, --convert: the input set */
    const char *only[MAX_ONLY];     /* --material, repeatable */
    int nonly;
    int threads;
    double memory_gib;              /* 0: no budget given */
    double disk_gib;                /* --disk; 0: the free disk */
    const char *work_dir;           /* --work; NULL: the tables' directory */
    bool from_files;                /* --from-files */
    const char *node_tables;        /* --node-tables; NULL: --out */
    int slices;                     /* --slices: DTB_SLICES_* */
    bool dtw_full;                  /* --dtw-store full */
    int zstd_level;
    int block_positions;            /* --block-positions (compact sets); 0: the default */
    bool threats;                   /* --threats (compact sets) */
    int dtw_byte_max;               /* --dtw-byte-max; 0: the default (254) */
    int dtw_pieces;                 /* --dtw-pieces; 0: DTW tables for every piece count */
    bool mtc;                       /* --metrics with mtc: the .mtc tables too */
    const char *rules;              /* --metrics with rules (the variant's) or a rule set's name */
    int rule_limits[DTB_RULE_CLASSES + 1]; /* --rule-limits; 0: the rule set's own (a late
                                              limit last, for a rule set with one) */
    int nrule_limits;
    int ranks;                      /* --ranks (--list); 0: one process */
    int side_max;                   /* --side-max; 0: any */
} dtbgen_options;

enum {
    OPT_LIST, OPT_OUT, OPT_CHECK, OPT_COMPACT, OPT_MANIFEST, OPT_MATERIAL, OPT_THREADS, OPT_MEMORY,
    OPT_ZSTD_LEVEL, OPT_BLOCK_POSITIONS, OPT_THREATS, OPT_VARIANT, OPT_PIECES, OPT_JSON,
    OPT_QUIET, OPT_HELP, OPT_VERSION, OPT_WORK, OPT_FROM_FILES, OPT_DTW_BYTE_MAX, OPT_DTW_PIECES,
    OPT_METRICS, OPT_RULE_LIMITS, OPT_SLICES, OPT_DTW_STORE, OPT_CONVERT, OPT_DISK, OPT_NODE_TABLES, OPT_RANKS, OPT_SIDE_MAX, NOPTIONS
};

static const dtb_cli_option options[NOPTIONS] = {
    [OPT_LIST] = {"--list", DTB_CLI_FLAG, NULL, "list the materials of 2..N pieces, and the memory a build needs"},
    [OPT_OUT] = {"--out", DTB_CLI_TEXT, "DIR", "solve materials of 2..N pieces into DIR/<variant>/ (resumes)"},
    [OPT_CHECK] = {"--check", DTB_CLI_TEXT, "DIR", "re-derive every stored value in DIR from its successors"},
    [OPT_COMPACT] = {"--compact", DTB_CLI_TEXT, "FULL", "a compact set of the full set in FULL, into --out DIR"},
    [OPT_CONVERT] = {"--convert", DTB_CLI_TEXT, "FROM",
                     "the set in FROM with its DTW tables in the --dtw-store form, into --out DIR"},
    [OPT_MANIFEST] = {"--manifest", DTB_CLI_TEXT, "DIR",
                      "print the digest of every table in DIR/<variant>/ (tables/MANIFEST's lines)"},
    [OPT_MATERIAL] = {"--material", DTB_CLI_TEXT, "NAME", "only this material and what it needs (repeatable)",
                      .repeat = true},
    [OPT_THREADS] = {"--threads", DTB_CLI_INT, "T", "worker threads (default: all cores)", 1, INT_MAX},
    [OPT_MEMORY] = {"--memory", DTB_CLI_REAL, "GiB", "stay within this memory; what does not fit goes to work files (default: 85% of RAM)"},
    [OPT_DISK] = {"--disk", DTB_CLI_REAL, "GiB", "take at most this much disk (table and work files; default: what is free); less than a build needs in work files solves pairs in slices"},
    [OPT_WORK] = {"--work", DTB_CLI_TEXT, "DIR", "solved values in work files there (default: only those over --memory, next to the tables)"},
    [OPT_FROM_FILES] = {"--from-files", DTB_CLI_FLAG, NULL,
                        "finished tables a build still reads are read from their files, not kept uncompressed (default: only when the work files would not fit the disk)"},
    [OPT_SIDE_MAX] = {"--side-max", DTB_CLI_INT, "N",
                      "only materials of at most N pieces a side (--pieces 8 --side-max 5: the international 2..8 of Kingsrow's set)", 1, 12},
    [OPT_RANKS] = {"--ranks", DTB_CLI_INT, "N",
                   "--list: the plan of each rank of an MPI job of N ranks (docs/CLUSTER.md)", 1, 1 << 20},
    [OPT_NODE_TABLES] = {"--node-tables", DTB_CLI_TEXT, "DIR",
                         "under MPI: the ranks other than 0 read the finished tables from their copies in DIR (a node's own disk; rank 0 sends the files a copy lacks), not from --out (default: --out, shared with rank 0 or each node's own)"},
    [OPT_DTW_STORE] = {"--dtw-store", DTB_CLI_TEXT, "FORM",
                       "what DTW tables store: losses (default: the losses only, 2-2.6x smaller; a win's distance is searched from its moves) or full (every value)"},
    [OPT_SLICES] = {"--slices", DTB_CLI_TEXT, "WHEN",
                    "solve pairs in slices of men advancement, two levels live at a time: auto (pairs whose values do not fit --memory, or whose work files do not fit the disk), always (every pair with men and kings) or never (default auto)"},
    [OPT_DTW_BYTE_MAX] = {"--dtw-byte-max", DTB_CLI_INT, "N",
                          "distances beyond N plies go to the tables' long lists (default 254, what a byte holds; lower: the same values, more listed, for tests)", 1, 254},
    [OPT_DTW_PIECES] = {"--dtw-pieces", DTB_CLI_INT, "N",
                        "DTW tables only up to N pieces, WLD only above (a smaller set; --list plans both when the full one does not fit)", 2, 8},
    [OPT_METRICS] = {"--metrics", DTB_CLI_TEXT, "LIST",
                     "the tables a build makes, of wld,dtw,mtc,rules (wld and dtw always; default wld,dtw; mtc: moves to conversion, docs/FORMAT.md 8.5; rules: the distances the variant's move-count draw rules need, 8.6, named by the rule set: fmjd for international)"},
    [OPT_RULE_LIMITS] = {"--rule-limits", DTB_CLI_TEXT, "L,...",
                         "the rules' limits in plies, one a class (fmjd: 50,32,10); lower ones make test tables small"},
    [OPT_ZSTD_LEVEL] = {"--zstd-level", DTB_CLI_INT, "L",
                        "compression level of the table files (default 9; --compact: 15)", 1, 22},
    [OPT_BLOCK_POSITIONS] = {"--block-positions", DTB_CLI_INT, "N",
                             "--compact: positions per block (default 1048576)", 1, 1 << 24},
    [OPT_THREATS] = {"--threats", DTB_CLI_FLAG, NULL, "--compact: leave threat positions to the probe too (smaller)"},
    [OPT_VARIANT] = {"--variant", DTB_CLI_NAME, "V", "rules: international, english, russian, brazilian, canadian"},
    [OPT_PIECES] = {"--pieces", DTB_CLI_INT, "N", "largest number of pieces (2..N)"},
    [OPT_JSON] = {"--json", DTB_CLI_FLAG, NULL, "machine-readable output (one JSON object)"},
    [OPT_QUIET] = {"--quiet", DTB_CLI_FLAG, NULL, "no progress or notes on stderr"},
    [OPT_HELP] = {"--help", DTB_CLI_FLAG, NULL, "this text"},
    [OPT_VERSION] = {"--version", DTB_CLI_FLAG, NULL, "program version"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: dtbgen --variant V --pieces N --out DIR [--material NAME ...] [--side-max N]\n"
               "              [--threads T] [--memory GIB] [--disk GIB] [--quiet]\n"
               "       dtbgen --check DIR --variant V [--pieces N] [--material NAME ...] [--threads T]\n"
               "       dtbgen --compact FULL --out DIR [--variant V] [--pieces N] [--threads T]\n"
               "              [--block-positions N] [--zstd-level L] [--threats] [--json]\n"
               "       dtbgen --convert FROM --out DIR [--dtw-store losses|full] [--variant V] [--pieces N]\n"
               "              [--threads T] [--json]\n"
               "       dtbgen --list --variant V --pieces N [--side-max N] [--memory GIB] [--disk GIB] [--out DIR]\n"
               "              [--dtw-pieces N] [--ranks N] [--json]   (exit status 1 when the plan does not fit)\n"
               "       dtbgen --manifest DIR [--variant V] [--threads T]\n"
               "       dtbgen --help | --version\n"
               "       mpirun -np N dtbgen --variant V --pieces N --out DIR [--node-tables DIR] ...\n"
               "              (a build shared by N processes, as many machines: docs/CLUSTER.md)\n"
               "\noptions:\n");
    dtb_cli_print_options(f, options, NOPTIONS);
    fprintf(f, "\ncompact sets: of every material and its colour flip (per metric) one file is stored\n"
               "and the other is derived: its quiet positions whose moves all land in stored tables\n"
               "hold no value, and libdtb answers them by a one-ply search (the same values, probes\n"
               "of those positions make about a dozen lookups instead of one). Of each pair the\n"
               "member with the larger file is derived. Stored tables are copied when\n"
               "--block-positions and --zstd-level are the full set's, re-encoded otherwise.\n"
               "--threats: stored tables also leave most threat positions (the opponent could\n"
               "capture if it were to move) to a search of up to four plies: a smaller set with\n"
               "slower probes of those positions.\n"
               "docs/FORMAT.md, \"Compact sets\", has the rule, the defaults and the sizes.\n");
    fprintf(f, "\nDTW tables store the losses only (--dtw-store losses, the default since format\n"
               "§8.7): wins and draws are read from the WLD table and a win's distance is searched\n"
               "from its moves, 2-2.6x fewer DTW bytes. --dtw-store full stores every value (one\n"
               "lookup a DTW probe). --convert makes a set's full DTW tables losses-only (the same\n"
               "bytes a build would write), hard-linking every other file.\n");
    fprintf(f, "\nmanifest: one line \"<digest>  <variant>/<file>\" per table file, the digest a hash of\n"
               "its header's meaning and its values with don't-care positions as 0 (gen/manifest.h):\n"
               "the same for any zstd version, level, block size or tiling. Without --variant, every\n"
               "variant directory in DIR.\n");
    fprintf(f, "\nexit status: 0 done, 1 bad input or data (for --list: the plan does not fit the\n"
               "memory or the disk), 2 usage error\n");
}

/* The rule set whose name is the n characters at s ("fmjd" in "mtc,fmjd"), or NULL. */
static const dtb_rules *rule_set_named(const char *s, size_t n)
{
    char name[16];
    if (n >= sizeof name)
        return NULL;
    memcpy(name, s, n);
    name[n] = 0;
    return dtb_rules_find(name);
}

static int usage_error(const char *message)
{
    return dtb_cli_usage_error("dtbgen", NULL, message);
}

/* The command and its settings from parsed options. Returns -1 to go on, or a usage error.
 * Exactly one command: --list, --out (a build), --check or --compact (whose --out is where the
 * compact set goes). */
static int options_from_args(const dtb_cli_args *a, dtbgen_options *o)
{
    static const struct {
        int option;
        dtbgen_command command;
    } commands[] = {{OPT_LIST, CMD_LIST},         {OPT_CHECK, CMD_CHECK}, {OPT_COMPACT, CMD_COMPACT},
                    {OPT_CONVERT, CMD_CONVERT},   {OPT_MANIFEST, CMD_MANIFEST}, {OPT_OUT, CMD_BUILD}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const int k = commands[i].option;
        /* --out is where --compact writes, and the build --list plans. */
        if (!a->given[k] ||
            (k == OPT_OUT && (a->given[OPT_COMPACT] || a->given[OPT_CONVERT] || a->given[OPT_LIST])))
            continue;
        if (o->command != CMD_NONE) {
            char msg[80];
            snprintf(msg, sizeof msg, "%s: only one command at a time", options[k].name);
            return usage_error(msg);
        }
        o->command = commands[i].command;
    }
    o->variant = a->text[OPT_VARIANT];
    o->pieces = (int)a->number[OPT_PIECES];
    o->json = a->given[OPT_JSON];
    o->quiet = a->given[OPT_QUIET];
    o->threats = a->given[OPT_THREATS];
    o->threads = (int)a->number[OPT_THREADS];
    o->zstd_level = (int)a->number[OPT_ZSTD_LEVEL];
    o->block_positions = (int)a->number[OPT_BLOCK_POSITIONS];
    o->memory_gib = a->real[OPT_MEMORY];
    o->disk_gib = a->real[OPT_DISK];
    o->work_dir = a->text[OPT_WORK];
    o->from_files = a->given[OPT_FROM_FILES];
    o->node_tables = a->text[OPT_NODE_TABLES];
    o->ranks = (int)a->number[OPT_RANKS];
    o->side_max = (int)a->number[OPT_SIDE_MAX];
    o->dtw_byte_max = (int)a->number[OPT_DTW_BYTE_MAX];
    o->dtw_pieces = (int)a->number[OPT_DTW_PIECES];
    static const char *const slices[] = {[DTB_SLICES_AUTO] = "auto", [DTB_SLICES_ALWAYS] = "always",
                                         [DTB_SLICES_NEVER] = "never"};
    o->slices = -1;
    for (int k = 0; k < 3; k++)
        if (!a->text[OPT_SLICES] || strcmp(a->text[OPT_SLICES], slices[k]) == 0) {
            o->slices = a->text[OPT_SLICES] ? k : DTB_SLICES_AUTO;
            break;
        }
    if (o->slices < 0)
        return usage_error("--slices: auto, always or never");
    const char *store = a->text[OPT_DTW_STORE];
    if (store && strcmp(store, "losses") != 0 && strcmp(store, "full") != 0)
        return usage_error("--dtw-store: losses or full");
    o->dtw_full = store && strcmp(store, "full") == 0;
    for (const char *m = a->text[OPT_METRICS]; m && *m;) {
        const size_t n = strcspn(m, ",");
        if (n == 3 && strncmp(m, "mtc", 3) == 0)
            o->mtc = true;
        else if (n == 5 && strncmp(m, "rules", 5) == 0)
            o->rules = "";
        else if (n < 16 && rule_set_named(m, n))
            o->rules = rule_set_named(m, n)->name;
        else if (!(n == 3 && (strncmp(m, "wld", 3) == 0 || strncmp(m, "dtw", 3) == 0)))
            return usage_error("--metrics: a comma-separated list of wld, dtw, mtc and rules");
        m += n + (m[n] == ',');
    }
    int nlimits = 0;
    for (const char *l = a->text[OPT_RULE_LIMITS]; l && *l; nlimits++) {
        char *end;
        const long x = strtol(l, &end, 10);
        if (nlimits == DTB_RULE_CLASSES + 1 || end == l || (*end && *end != ',') || x < 1 ||
            x > DTB_RULE_LIMIT_MAX)
            return usage_error("--rule-limits: one limit a class (fmjd: three, wcdf: one, "
                               "fmjd64: seven and its late limit), each 1..127 plies");
        o->rule_limits[nlimits] = (int)x;
        l = end + (*end == ',');
    }
    o->nrule_limits = nlimits;
    if (a->text[OPT_RULE_LIMITS] && !o->rules)
        return usage_error("--rule-limits: with --metrics ...,rules");
    o->dir = o->command == CMD_CHECK      ? a->text[OPT_CHECK]
             : o->command == CMD_MANIFEST ? a->text[OPT_MANIFEST]
                                          : a->text[OPT_OUT];
    o->full_dir = o->command == CMD_CONVERT ? a->text[OPT_CONVERT] : a->text[OPT_COMPACT];
    o->nonly = dtb_cli_values(a, OPT_MATERIAL, o->only, MAX_ONLY);
    if (o->nonly > MAX_ONLY)
        return usage_error("--material: more than 64 materials");
    const bool have_pieces = a->given[OPT_PIECES];

    if (o->command == CMD_NONE)
        return usage_error("no command given (--out DIR, --check DIR, --compact DIR, --manifest DIR "
                           "or --list)");
    if (o->block_positions && o->command != CMD_COMPACT)
        return usage_error("--block-positions is for --compact (builds use 65536)");
    if (o->dtw_pieces && o->command != CMD_BUILD && o->command != CMD_LIST)
        return usage_error("--dtw-pieces is for a build (--out) and its plan (--list)");
    if (a->given[OPT_DTW_STORE] && o->command != CMD_BUILD && o->command != CMD_LIST &&
        o->command != CMD_CONVERT)
        return usage_error("--dtw-store is for a build (--out), its plan (--list) and --convert");
    if (a->given[OPT_SLICES] && o->command != CMD_BUILD && o->command != CMD_LIST)
        return usage_error("--slices is for a build (--out) and its plan (--list)");
    if (a->given[OPT_METRICS] && o->command != CMD_BUILD)
        return usage_error("--metrics is for builds (--out)");
    if (o->threats && o->command != CMD_COMPACT)
        return usage_error("--threats is for --compact (full sets store every quiet position)");
    if (o->command == CMD_COMPACT && !o->dir)
        return usage_error("--compact needs --out DIR (where the compact set goes)");
    if (o->command == CMD_CONVERT && !o->dir)
        return usage_error("--convert needs --out DIR (where the converted set goes)");
    /* A manifest covers whole directories: a subset of them would pass for the whole list. */
    if (o->command == CMD_MANIFEST && (have_pieces || o->nonly))
        return usage_error(have_pieces ? "--pieces is not for --manifest (it lists every table)"
                                       : "--material is not for --manifest (it lists every table)");
    if (o->command != CMD_CHECK && o->command != CMD_COMPACT && o->command != CMD_CONVERT &&
        o->command != CMD_MANIFEST && !o->variant)
        return usage_error("--variant is needed");
    if (o->command == CMD_BUILD && !have_pieces && o->nonly == 0)
        return usage_error("--out needs --pieces or --material");
    if (o->command == CMD_CHECK && !o->variant)
        return usage_error("--check needs --variant");
    if (o->command == CMD_LIST && !have_pieces)
        return usage_error("--list needs --pieces");
    return -1;
}

/* Fills *o from argv. Returns -1 to go on, or an exit status (0 after --help / --version). */
static int parse_args(int argc, char **argv, dtbgen_options *o)
{
    dtb_cli_args *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "dtbgen: out of memory\n");
        return EXIT_INPUT;
    }
    int rc = -1;
    const dtb_cli_result r = dtb_cli_parse(options, NOPTIONS, 0, argc - 1, argv + 1, a);
    if (r == DTB_CLI_USAGE) {
        rc = usage_error(a->error);
    } else if (r == DTB_CLI_HELP || a->given[OPT_HELP]) {
        usage(stdout);
        rc = 0;
    } else if (a->given[OPT_VERSION]) {
        printf("dtbgen %s\n", dtb_cli_version());
        rc = 0;
    } else {
        rc = options_from_args(a, o);
    }
    free(a);
    return rc;
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

/* Positions of the materials a build of bo would solve (not complete in bo->out_dir). */
static uint64_t positions_to_solve(const dtb_build_options *bo)
{
    dtb_material *list;
    const int n = dtb_build_to_solve(bo, &list);
    if (n < 0)
        return 0;
    dtb_board b;
    dtb_board_init(&b, bo->variant);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++) {
        dtb_index *ix;
        if (dtb_index_create(&b, list[i], &ix) == DTB_OK) {
            sum += dtb_index_size(ix);
            dtb_index_free(ix);
        }
    }
    free(list);
    return sum;
}

/* Adds the positions and seconds of the stats records in file path (JSON lines) to *positions
 * and *seconds. Materials solved in under a second are left out: their rate is mostly
 * start-up. */
static void add_rates(const char *path, double *positions, double *seconds)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "\"positions\":"), *t = strstr(line, "\"seconds\":");
        if (!p || !t)
            continue;
        const double n = strtod(p + 12, NULL), secs = strtod(t + 10, NULL);
        if (secs >= 1) {
            *positions += n;
            *seconds += secs;
        }
    }
    fclose(f);
}

/* Positions per second of the materials solved into dir for v (their positions and seconds in
 * *positions and *seconds), from its STATS log, or from the materials' own .stats records while
 * a build is still under way; 0 when there are none. */
static double measured_rate(const char *dir, const dtb_variant *v, double *positions,
                            double *seconds)
{
    char path[4200];
    *positions = *seconds = 0;
    snprintf(path, sizeof path, "%s/%s/STATS", dir, v->name);
    if (access(path, F_OK) == 0) {
        add_rates(path, positions, seconds);
    } else {
        snprintf(path, sizeof path, "%s/%s", dir, v->name);
        DIR *d = opendir(path);
        for (const struct dirent *en; d && (en = readdir(d));) {
            const size_t n = strlen(en->d_name);
            if (n > 6 && strcmp(en->d_name + n - 6, ".stats") == 0) {
                char file[4500];
                snprintf(file, sizeof file, "%s/%s", path, en->d_name);
                add_rates(file, positions, seconds);
            }
        }
        if (d)
            closedir(d);
    }
    return *seconds > 0 ? *positions / *seconds : 0;
}

/* The disk a build may take in bytes: --disk (0: what is free, the build's own look). */
static uint64_t disk_budget(const dtbgen_options *o)
{
    return o->disk_gib > 0 ? (uint64_t)(o->disk_gib * 1073741824.0) : 0;
}

/* The budget in bytes: --memory, else 85% of the machine's memory (the rest for the system and
 * the page cache through which work files are read). */
static uint64_t memory_budget(const dtbgen_options *o)
{
    if (o->memory_gib > 0)
        return (uint64_t)(o->memory_gib * 1073741824.0);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 100 * 85 : 0;
}

static int parse_materials(const dtbgen_options *o, dtb_material *out);

static int run_list(const dtbgen_options *o)
{
    const dtb_variant *v = find_variant(o);
    if (!v)
        return EXIT_INPUT;
    dtb_board b;
    dtb_board_init(&b, v);
    const int most = 2 * v->start_rows * b.half; /* every piece of both sides */
    if (o->pieces < 2 || o->pieces > most) {
        char msg[120];
        snprintf(msg, sizeof msg, "--pieces %d: %s materials have 2..%d pieces", o->pieces,
                 v->name, most);
        return usage_error(msg);
    }
    const int n = dtb_material_list(o->pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    if (!list) {
        fprintf(stderr, "dtbgen: out of memory\n");
        return EXIT_INPUT;
    }
    dtb_material_list(o->pieces, list, n);
    dtb_material want[MAX_ONLY]; /* --material: list what those need, as the build makes it */
    if (parse_materials(o, want)) {
        free(list);
        return EXIT_INPUT;
    }

    if (o->json)
        printf("{\"variant\":\"%s\",\"pieces\":%d,\"materials\":[", v->name, o->pieces);
    else
        printf("# %s, materials of 2..%d pieces%s%.0d%s in dependency order\n%-16s %20s %14s %12s\n",
               v->name, o->pieces, o->side_max ? ", at most " : "", o->side_max,
               o->side_max ? " a side," : "", "material", "positions", "blocks", "block_size");
    __extension__ unsigned __int128 total = 0, total_blocks = 0;
    int listed = 0, skipped = 0, status = 0;
    for (int i = 0; i < n && status == 0; i++) {
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&list[i], name, sizeof name);
        bool needed = o->nonly == 0;
        for (int j = 0; j < o->nonly && !needed; j++) {
            const dtb_material f = dtb_material_flip(list[i]);
            needed = dtb_build_depends(&want[j], &list[i]) || dtb_build_depends(&want[j], &f);
        }
        const dtb_build_options sides = {.side_max = o->side_max};
        if (!needed || !dtb_build_side_fits(&sides, &list[i]))
            continue;
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
    dtb_build_budget budget = {0};
    const uint64_t allowed = memory_budget(o);
    uint64_t todo = 0; /* positions a build into o->dir (all, without one) would solve */
    dtb_material only[MAX_ONLY];
    if (parse_materials(o, only))
        return EXIT_INPUT;
    /* The table files a build writes, projected from measured compression (gen/diskplan.c):
     * as asked (--dtw-pieces or DTW for all), and when that does not fit, DTW only up to the
     * most pieces that does (Kingsrow's choice), or up to one piece fewer when none does. */
    uint64_t wld_bytes = 0, dtw_bytes = 0, alt_wld = 0, alt_dtw = 0;
    bool projected = false;
    int alt_pieces = 0; /* the other plan's --dtw-pieces; 0: none shown */
    bool alt_fits = false;
    if (o->pieces <= 8) {
        dtb_build_options bo = {.variant = v, .pieces = o->pieces, .threads = o->threads,
                                .out_dir = o->dir, .memory_budget = allowed,
                                .disk_budget = disk_budget(o),
                                .work_dir = o->work_dir, .only = o->nonly ? only : NULL,
                                .read_finished = o->from_files, .dtw_pieces = o->dtw_pieces,
                                .dtw_full = o->dtw_full, .slices = o->slices,
                                .nonly = o->nonly, .ranks = o->ranks, .side_max = o->side_max};
        dtb_error e;
        if (dtb_build_plan_budget(&bo, &budget, &e) != DTB_OK) {
            fprintf(stderr, "dtbgen: %s\n", e.msg);
            return EXIT_INPUT;
        }
        peak = budget.in_memory;
        todo = positions_to_solve(&bo);
        projected = dtb_diskplan_tables(&bo, &wld_bytes, &dtw_bytes);
        const uint64_t work = budget.use_work_files ? budget.work_files : 0;
        if (projected && budget.disk_free < work + wld_bytes + dtw_bytes && o->dtw_pieces == 0 &&
            o->pieces > 2) {
            for (int n = o->pieces - 1; n >= 2 && !alt_fits; n--) {
                dtb_build_options alt = bo;
                alt.dtw_pieces = n;
                uint64_t w, d;
                if (!dtb_diskplan_tables(&alt, &w, &d))
                    break;
                if (n == o->pieces - 1 || budget.disk_free >= work + w + d) {
                    alt_pieces = n, alt_wld = w, alt_dtw = d;
                    alt_fits = budget.disk_free >= work + w + d;
                }
            }
        }
        bo.keep_solved = true;
        keep = dtb_build_memory_needed(&bo);
    }
    double rate_positions = 0, rate_seconds = 0;
    const double rate = o->dir ? measured_rate(o->dir, v, &rate_positions, &rate_seconds) : 0;
    char work_text[4200] = "";
    if (o->work_dir || o->dir)
        snprintf(work_text, sizeof work_text, "%s%s%s", o->work_dir ? o->work_dir : o->dir,
                 o->work_dir ? "" : "/", o->work_dir ? "" : v->name);
    const uint64_t files = wld_bytes + dtw_bytes;
    const uint64_t work = budget.use_work_files ? budget.work_files : 0;
    const uint64_t disk = work + files;
    const bool memory_ok = peak && allowed >= budget.minimum;
    const bool disk_ok = budget.disk_free >= disk; /* UINT64_MAX when unknown */
    const bool fits = memory_ok && disk_ok;
    const double gib = 1073741824.0;
    /* Why the plan does not fit, in one line (stderr, and "reason" in JSON). */
    char why[400] = "";
    if (peak && !memory_ok)
        snprintf(why, sizeof why,
                 "its largest step alone works with %.2f GiB (solver state or writer buffers): "
                 "--memory must be at least %.2f GiB, not %.2f",
                 (double)budget.working / gib, (double)budget.minimum / gib, (double)allowed / gib);
    else if (peak && !disk_ok) {
        char hint[64] = "";
        if (alt_fits)
            snprintf(hint, sizeof hint, "; it fits with --dtw-pieces %d", alt_pieces);
        snprintf(why, sizeof why,
                 "it needs %.2f GiB of disk (table files %.2f GiB, work files %.2f GiB) and %.2f "
                 "GiB are %s%s",
                 (double)disk / gib, (double)files / gib, (double)work / gib,
                 (double)budget.disk_free / gib, o->disk_gib > 0 ? "allowed" : "free", hint);
    }
    if (o->json) {
        printf("],\"count\":%d,\"positions\":%s,\"blocks\":%s", listed, tp, tb);
        if (peak) {
            printf(",\"memory_peak\":%llu,\"memory_keep_all\":%llu,\"budget\":%llu,"
                   "\"budget_minimum\":%llu,\"working_memory\":%llu,\"work_files\":%s,"
                   "\"work_file_bytes\":%llu,\"fits\":%s,\"positions_to_solve\":%llu,"
                   "\"lean_pairs\":%d,\"lean_positions\":%llu,\"table_file_bytes\":%llu,"
                   "\"wld_bytes\":%llu,\"dtw_bytes\":%llu,\"dtw_pieces\":%d,"
                   "\"disk_needed\":%llu,\"disk_free\":%llu,\"read_finished\":%s,"
                   "\"sliced_pairs\":%d,\"sliced_positions\":%llu,\"slice_store_bytes\":%llu,"
                   "\"dtw_store\":\"%s\",\"ranks\":%d",
                   (unsigned long long)peak, (unsigned long long)keep,
                   (unsigned long long)allowed, (unsigned long long)budget.minimum,
                   (unsigned long long)budget.working, budget.use_work_files ? "true" : "false",
                   (unsigned long long)budget.work_files, fits ? "true" : "false",
                   (unsigned long long)todo, budget.lean_pairs,
                   (unsigned long long)budget.lean_positions, (unsigned long long)files,
                   (unsigned long long)wld_bytes, (unsigned long long)dtw_bytes,
                   o->dtw_pieces ? o->dtw_pieces : o->pieces,
                   (unsigned long long)disk, (unsigned long long)budget.disk_free,
                   budget.read_finished ? "true" : "false", budget.sliced_pairs,
                   (unsigned long long)budget.sliced_positions,
                   (unsigned long long)budget.slice_bytes, o->dtw_full ? "full" : "losses",
                   o->ranks > 1 ? o->ranks : 1);
            if (alt_pieces)
                printf(",\"alternative\":{\"dtw_pieces\":%d,\"table_file_bytes\":%llu,"
                       "\"wld_bytes\":%llu,\"dtw_bytes\":%llu,\"disk_needed\":%llu,\"fits\":%s}",
                       alt_pieces, (unsigned long long)(alt_wld + alt_dtw),
                       (unsigned long long)alt_wld, (unsigned long long)alt_dtw,
                       (unsigned long long)(work + alt_wld + alt_dtw),
                       alt_fits && memory_ok ? "true" : "false");
            if (why[0])
                printf(",\"reason\":\"%s\"", why);
        }
        if (rate > 0)
            printf(",\"measured_positions_per_second\":%.0f,\"estimated_seconds\":%.0f", rate,
                   (double)todo / rate);
        printf("}\n");
    } else {
        printf("%-16s %20s %14s   (%d materials)\n", "total", tp, tb, listed);
        if (peak) {
            if (o->ranks > 1)
                printf("# memory of each of %d MPI ranks (--ranks): %.2f GiB at its peak in "
                       "memory (rank 0's: finished tables read from their files, every pair with "
                       "men and kings in slices)\n",
                       o->ranks, (double)peak / gib);
            else
                printf("# memory of a build: %.2f GiB at its peak in memory, %.2f GiB keeping "
                       "every table to the end\n",
                       (double)peak / gib, (double)keep / gib);
            if (budget.lean_pairs)
                printf("# %d kings-only pair%s (%.3g positions) solved with the lean state: "
                       "1 byte a position instead of 6, within the budget\n",
                       budget.lean_pairs, budget.lean_pairs > 1 ? "s" : "",
                       (double)budget.lean_positions);
            if (budget.sliced_pairs)
                printf("# %d pair%s (%.3g positions) solved in slices of men advancement: two "
                       "levels live at a time, finished levels compressed to a scratch store "
                       "(%.2f GiB at most, in the work files' disk)\n",
                       budget.sliced_pairs, budget.sliced_pairs > 1 ? "s" : "",
                       (double)budget.sliced_positions, (double)budget.slice_bytes / gib);
            const char *form = o->dtw_full ? "every value" : "losses only";
            char dtw_text[80];
            if (o->dtw_pieces && o->dtw_pieces < o->pieces)
                snprintf(dtw_text, sizeof dtw_text, "%s, up to %d pieces (--dtw-pieces)", form,
                         o->dtw_pieces);
            else
                snprintf(dtw_text, sizeof dtw_text, "%s, every table", form);
            char work_part[64] = ", no work files";
            if (budget.use_work_files)
                snprintf(work_part, sizeof work_part, ", work files %.2f GiB at their peak",
                         (double)work / gib);
            if (projected)
                printf("# disk: %.2f GiB of table files (WLD %.2f GiB, DTW %.2f GiB for %s; "
                       "projected from the compression measured per piece count, "
                       "docs/MEASUREMENTS.md)%s, %.2f GiB in all; %.2f GiB %s\n",
                       (double)files / gib, (double)wld_bytes / gib, (double)dtw_bytes / gib,
                       dtw_text, work_part, (double)disk / gib, (double)budget.disk_free / gib,
                       o->disk_gib > 0 ? "allowed (--disk, or what is free when less)" : "free");
            if (alt_pieces)
                printf("# with --dtw-pieces %d (DTW up to %d pieces, WLD only above): %.2f GiB of "
                       "table files (WLD %.2f GiB, DTW %.2f GiB), %.2f GiB in all: %s\n",
                       alt_pieces, alt_pieces, (double)(alt_wld + alt_dtw) / gib,
                       (double)alt_wld / gib, (double)alt_dtw / gib,
                       (double)(work + alt_wld + alt_dtw) / gib,
                       !alt_fits ? "does not fit either"
                       : memory_ok ? "fits" : "fits the disk, not the memory");
            if (budget.read_finished)
                printf("# finished tables that later steps read are read from their files "
                       "(decoded on demand): the work files hold only the pair being solved\n");
            printf("# within %.2f GiB (--memory): ", (double)allowed / gib);
            if (!fits)
                printf("does not fit: %s\n", why);
            else if (!budget.use_work_files)
                printf("every solved value stays in memory\n");
            else if (!work_text[0])
                printf("solved values in work files, %.2f GiB of disk at the peak\n",
                       (double)budget.work_files / gib);
            else
                printf("solved values in work files in %s (%.2f GiB of disk at the peak), read "
                       "through the page cache; %.2f GiB of working memory in RAM at the largest "
                       "step\n",
                       work_text,
                       (double)budget.work_files / gib, (double)budget.working / gib);
            if (rate > 0)
                printf("# time: %.3g positions to solve at the %.2f M positions/s measured in %s "
                       "(%.3g positions in %.0f s): about %.1f hours on this machine\n",
                       (double)todo, rate / 1e6, o->dir, rate_positions, rate_seconds,
                       (double)todo / rate / 3600);
            else
                printf("# time: %.3g positions to solve (--out DIR with a STATS file gives an "
                       "estimate from its measured rate)\n",
                       (double)todo);
        }
    }
    if (skipped && !o->quiet)
        fprintf(stderr, "dtbgen: %d materials left out: more pieces a side than %s starts with\n",
                skipped, v->name);
    if (peak && !fits) {
        fprintf(stderr, "dtbgen: the plan does not fit: %s\n", why);
        return EXIT_INPUT;
    }
    return 0;
}

/* ---- building -------------------------------------------------------------------------- */

typedef struct progress_state {
    const dtbgen_options *o;
    const dtb_mpi *mpi;     /* the MPI job this process leads, NULL when alone */
    bool tty;
    double started; /* of the current material */
    double last;    /* last bar drawn */
    uint64_t read0, write0; /* the process's storage traffic when the material started */
    int built;              /* materials solved by this run (0: the set was complete already) */
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
    /* Storage traffic next to the rate: when the disk, not the CPU, sets the pace (work files
     * read back through a page cache too small for them), it shows here. */
    uint64_t rd, wr;
    dtb_work_io(&rd, &wr);
    const double mb = 1e6 * (el > 0 ? el : 1);
    fprintf(stderr, "\r%-10s [%s] %5.1f%% %llu/%llu %.2f Mpos/s disk r %.0f w %.0f MB/s ETA %.0fs   ",
            name, bar, 100 * frac, (unsigned long long)done, (unsigned long long)total,
            rate / 1e6, (double)(rd - ps->read0) / mb, (double)(wr - ps->write0) / mb, eta);
    if (ps->mpi) {
        dtb_mpi_traffic t;
        dtb_mpi_traffic_get(ps->mpi, &t);
        fprintf(stderr, "%d ranks %llu units %.0f MB exchanged   ", t.ranks,
                (unsigned long long)t.units, (double)(t.bytes_sent + t.bytes_received + t.bytes_between) / 1e6);
    }
}

/* The MPI job so far, on one line: units, the rate summed over the ranks (positions solved by
 * all of them in the run's wall time), rank 0's share and the bytes exchanged. */
static void print_traffic(const dtb_mpi *mpi, const char *when)
{
    dtb_mpi_traffic t;
    dtb_mpi_traffic_get(mpi, &t);
    const double bytes = (double)(t.bytes_sent + t.bytes_received + t.bytes_between);
    fprintf(stderr, "dtbgen: %s: %d ranks, %llu units, %llu positions, %.2f M positions/s summed "
                    "over the ranks (rank 0 solved %.0f%%), %.1f MB exchanged (%.2f bytes a "
                    "position), %llu levels shared, %llu kings-only units split, %llu pairs "
                    "written by every rank (%.2f MB of their tables compressed by other ranks), "
                    "%.1f s in exchanges\n",
            when, t.ranks, (unsigned long long)t.units, (unsigned long long)t.positions,
            t.seconds > 0 ? (double)t.positions / t.seconds / 1e6 : 0.0,
            t.positions ? 100.0 * (double)t.positions_rank0 / (double)t.positions : 0.0,
            bytes / 1e6, t.positions ? bytes / (double)t.positions : 0.0,
            (unsigned long long)t.levels, (unsigned long long)t.split_units,
            (unsigned long long)t.team_pairs, (double)t.frame_bytes / 1e6, t.exchange_seconds);
}

static void on_build(void *user, dtb_build_event ev, const char *name, uint64_t done,
                     uint64_t total, const char *text)
{
    progress_state *ps = user;
    if (ev == DTB_BUILD_START)
        ps->built++;
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
        dtb_work_io(&ps->read0, &ps->write0);
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
        {
            uint64_t rd, wr;
            dtb_work_io(&rd, &wr);
            fprintf(stderr, "dtbgen: %s solved: %llu positions, %.2f s, disk read %.0f MB, "
                            "written %.0f MB\n",
                    name, (unsigned long long)done, omp_get_wtime() - ps->started,
                    (double)(rd - ps->read0) / 1e6, (double)(wr - ps->write0) / 1e6);
        }
        if (ps->mpi)
            print_traffic(ps->mpi, "MPI job so far");
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

/* Under an MPI job, rank 0 runs the build (leading the others) and every other rank serves it. */
static int run_build(const dtbgen_options *o, dtb_mpi *mpi)
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
    if (pieces < 2 || pieces > 8)
        return dtb_cli_usage_error("dtbgen", NULL, "--pieces: dtbgen builds 2..8 pieces");
    const dtb_rules *rules = NULL;
    dtb_rules lowered;
    if (o->rules) {
        rules = dtb_rules_of_variant(v);
        if (!rules || (*o->rules && strcmp(o->rules, rules->name) != 0)) {
            char msg[200];
            snprintf(msg, sizeof msg, "--metrics: %s has no move-count rule set %s in dtb yet "
                     "(fmjd: international, wcdf: english, fmjd64: russian and brazilian)",
                     v->name, *o->rules ? o->rules : "");
            return usage_error(msg);
        }
        const int nlimits = rules->nclasses + (dtb_rules_late_limit(rules) > 0);
        if (o->nrule_limits && o->nrule_limits != nlimits) {
            char msg[200];
            snprintf(msg, sizeof msg, "--rule-limits: %s takes %d limits, one a class%s",
                     rules->name, nlimits, nlimits > rules->nclasses ? " and its late limit" : "");
            return usage_error(msg);
        }
        if (o->rule_limits[0]) {
            /* the late limit follows the classes' (0, keeping the rule set's, without one) */
            lowered = dtb_rules_with_limits(rules, o->rule_limits, o->rule_limits[rules->nclasses]);
            rules = &lowered;
        }
    }
    progress_state ps = {.o = o, .mpi = mpi, .tty = isatty(STDERR_FILENO)};
    const uint64_t budget = memory_budget(o);
    dtb_build_options bo = {
        .variant = v,
        .pieces = pieces,
        .only = o->nonly ? only : NULL,
        .nonly = o->nonly,
        .side_max = o->side_max,
        .out_dir = o->dir,
        .threads = o->threads,
        .memory_budget = budget,
        .disk_budget = disk_budget(o),
        .work_dir = o->work_dir,
        .read_finished = o->from_files,
        .slices = o->slices,
        .zstd_level = o->zstd_level,
        .dtw_byte_max = o->dtw_byte_max,
        .dtw_pieces = o->dtw_pieces,
        .dtw_full = o->dtw_full,
        .mtc = o->mtc,
        .rules = rules,
        .log = on_build,
        .user = &ps,
        .ranks = dtb_mpi_size(mpi),
    };
    const double t0 = omp_get_wtime();
    dtb_error e;
    dtb_status st = DTB_OK;
    if (dtb_mpi_rank(mpi) != 0) {
        if (o->node_tables) /* this rank's copies of the tables, and its work files */
            bo.out_dir = o->node_tables;
        st = dtb_mpi_serve(mpi, &bo, &e);
        if (st != DTB_OK) { /* named, then the whole job ends */
            fprintf(stderr, "dtbgen: rank %d: %s\n", dtb_mpi_rank(mpi), e.msg);
            dtb_mpi_close(mpi, false);
        }
        return st == DTB_OK ? 0 : EXIT_INPUT;
    }
    if (mpi) { /* the workers keep their values in work files when rank 0's plan does */
        dtb_build_budget plan;
        st = dtb_build_plan_budget(&bo, &plan, &e);
        if (st == DTB_OK)
            st = dtb_mpi_lead(mpi, plan.use_work_files, &bo.peers, &e);
    }
    if (st == DTB_OK)
        st = dtb_build(&bo, &e);
    if (ps.tty && !o->quiet)
        fprintf(stderr, "\r%-80s\r", "");
    if (st != DTB_OK) {
        fprintf(stderr, "dtbgen: %s%s\n", mpi ? "rank 0: " : "", e.msg);
        dtb_mpi_close(mpi, false); /* ends the other ranks too */
        return EXIT_INPUT;
    }
    if (!o->quiet && mpi)
        print_traffic(mpi, "MPI job");
    /* Said even with --quiet when nothing was built: a build that does nothing in silence looks
     * like one that did not run. */
    if (ps.built == 0)
        fprintf(stderr, "dtbgen: %s 2..%d pieces already complete in %s/%s: nothing to build\n",
                v->name, pieces, o->dir, v->name);
    else if (!o->quiet)
        fprintf(stderr, "dtbgen: %s 2..%d pieces complete in %s/%s (%.1f s)\n", v->name, pieces,
                o->dir, v->name, omp_get_wtime() - t0);
    return 0;
}

/* ---- checking -------------------------------------------------------------------------- */

/* One line a mismatch: the table (ext: "" or ".mtc"), the position, stored against derived. */
static void print_mismatch(const dtb_board *b, const dtb_solved_table *t, uint64_t index,
                           const char *ext, dtb_wdl sw, int sd, dtb_wdl dw, int dd)
{
    dtb_pos p;
    char fen[DTB_FEN_MAX], name[DTB_MATERIAL_NAME_MAX];
    dtb_index_pos(t->index, index, &p);
    dtb_fen_write(b, &p, fen, sizeof fen);
    dtb_material_name(&t->material, name, sizeof name);
    static const char *const wdl[3] = {"loss", "draw", "win"};
    printf("mismatch %s%s %s: stored %s %d, successors give %s %d\n", name, ext, fen, wdl[sw + 1],
           sd, wdl[dw + 1], dd);
}

static void on_mismatch(void *user, const dtb_solved_table *t, uint64_t index, dtb_wvalue stored,
                        dtb_wvalue derived)
{
    print_mismatch(user, t, index, "", dtb_wvalue_wdl(stored), dtb_wvalue_dtw(stored),
                   dtb_wvalue_wdl(derived), dtb_wvalue_dtw(derived));
}

static void on_mtc_mismatch(void *user, const dtb_solved_table *t, uint64_t index, dtb_value stored,
                            dtb_value derived)
{
    print_mismatch(user, t, index, ".mtc", dtb_value_wdl(stored),
                   dtb_value_wdl(stored) ? dtb_mtc_plies(stored) : 0, dtb_value_wdl(derived),
                   dtb_value_wdl(derived) ? dtb_mtc_plies(derived) : 0);
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
    dtb_rule_layers rl; /* the rule bytes read so far (a set with rule tables), kept to the end */
    bool have_rl;
    dtb_rules rules;  /* with the limits of the set's first rule table */
} check_state;

static void on_rules_mismatch(void *user, const dtb_solved_table *t, uint64_t index,
                              dtb_value stored, dtb_value derived)
{
    const check_state *cs = user;
    char ext[24];
    snprintf(ext, sizeof ext, ".%s", cs->rules.name);
    print_mismatch(&cs->b, t, index, ext, dtb_value_wdl(stored),
                   dtb_value_wdl(stored) ? dtb_mtc_plies(stored) : 0, dtb_value_wdl(derived),
                   dtb_value_wdl(derived) ? dtb_mtc_plies(derived) : 0);
}

/* Rule bytes of m (and its flip) in cs->rl, read when first needed; DTB_E_NOTFOUND when m has
 * no rule table. */
static dtb_status need_rules(check_state *cs, dtb_material m, dtb_error *e)
{
    const dtb_material ms[2] = {m, dtb_material_flip(m)};
    for (int k = 0; k < 2; k++)
        if (!dtb_rule_layers_find(&cs->rl, ms[k], 0)) {
            const dtb_status st = dtb_build_load_rules(&cs->rl, cs->o->dir, ms[k], e);
            if (st != DTB_OK)
                return st;
        }
    return DTB_OK;
}

/* The rule table of t, when there is one, against its successors' rule tables: the one-ply
 * derivation of every position (gen/check.c). */
static void check_rules(check_state *cs, const dtb_solved_table *t, const char *name)
{
    const dtb_rules *std = dtb_rules_of_variant(cs->b.variant);
    if (!std)
        return;
    const dtb_metric metric = dtb_metric_of_rules(std->id);
    char path[4096];
    dtb_build_table_path(path, sizeof path, cs->o->dir, cs->b.variant, &t->material, metric);
    if (access(path, F_OK) != 0) /* a set made without rule tables */
        return;
    dtb_error e;
    dtb_status st = DTB_OK;
    if (!cs->have_rl) { /* the limits: the first table's (a test set may lower them) */
        dtb_tablefile *tf;
        st = dtb_tablefile_open(path, NULL, &tf, &e);
        if (st == DTB_OK) {
            _Static_assert(DTB_RULE_CLASSES == DTB_TF_RULE_CLASSES, "a limit a class");
            const dtb_tablefile_info *in = dtb_tablefile_get_info(tf);
            cs->rules = dtb_rules_with_limits(std, in->rule_limits, in->rule_late_limit);
            dtb_tablefile_close(tf);
            st = dtb_rule_layers_init(&cs->rl, &cs->b, &cs->rules, &e);
            cs->have_rl = st == DTB_OK;
        }
    }
    if (st == DTB_OK)
        st = need_rules(cs, t->material, &e);
    /* every table its moves reach: captures, promotions (man moves stay in the pair) */
    const int n = dtb_material_list(dtb_material_pieces(&t->material), NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    if (!list && st == DTB_OK)
        st = dtb_error_set(&e, DTB_E_NOMEM, "out of memory");
    if (list)
        dtb_material_list(dtb_material_pieces(&t->material), list, n);
    for (int i = 0; i < n && st == DTB_OK; i++)
        if (dtb_build_exits(&t->material, &list[i]))
            st = need_rules(cs, list[i], &e);
    free(list);
    if (st != DTB_OK) {
        fprintf(stderr, "dtbgen: check %s.%s: %s\n", name, dtb_metric_name(metric), e.msg);
        cs->bad++;
        return;
    }
    uint64_t k = 0, positions = 0; /* every count layer's bytes */
    for (int c = 0; c < dtb_rule_layers_of(&cs->rl, &t->material); c++) {
        const dtb_solved_table *rt = dtb_rule_layers_find(&cs->rl, t->material, c);
        k += dtb_check_rules_table(&cs->rl, rt, c, on_rules_mismatch, cs, 20);
        positions += dtb_index_size(rt->index);
    }
    if (!cs->o->quiet)
        fprintf(stderr, "dtbgen: check %s.%s: %llu positions, %llu mismatches\n", name,
                dtb_metric_name(metric), (unsigned long long)positions, (unsigned long long)k);
    cs->bad += k;
    cs->positions += positions;
    cs->checked++;
}

/* The .mtc table of t, when there is one, against its successors: the results in s and the
 * MTC of its flip's table, which must be there too. */
static void check_mtc(check_state *cs, const dtb_solved *s, const dtb_solved_table *t,
                      const char *name)
{
    const dtb_material fm = dtb_material_flip(t->material);
    const dtb_solved_table *ft = dtb_solved_find(s, fm);
    const bool self = ft == t;
    const uint64_t n = dtb_index_size(t->index), fn = dtb_index_size(ft->index);
    dtb_value *mtc = malloc(n), *fmtc = self ? mtc : malloc(fn);
    dtb_error e;
    dtb_status st = mtc && fmtc ? DTB_OK : dtb_error_set(&e, DTB_E_NOMEM, "out of memory");
    if (st == DTB_OK)
        st = dtb_build_read_mtc(cs->o->dir, cs->b.variant, t->material, n, mtc, &e);
    if (st == DTB_E_NOTFOUND) { /* a set made without MTC */
        st = DTB_OK;
        goto done;
    }
    if (st == DTB_OK && !self)
        st = dtb_build_read_mtc(cs->o->dir, cs->b.variant, fm, fn, fmtc, &e);
    if (st != DTB_OK) {
        fprintf(stderr, "dtbgen: check %s.mtc: %s\n", name, e.msg);
        cs->bad++;
        goto done;
    }
    const uint64_t k = dtb_check_mtc_table(s, t, mtc, fmtc, on_mtc_mismatch, &cs->b, 20);
    if (!cs->o->quiet)
        fprintf(stderr, "dtbgen: check %s.mtc: %llu positions, %llu mismatches\n", name,
                (unsigned long long)n, (unsigned long long)k);
    cs->bad += k;
    cs->positions += n;
    cs->checked++;
done:
    free(mtc);
    if (!self)
        free(fmtc);
}

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
    /* A WLD-only table (--dtw-pieces) was loaded with stand-in distances: results only. */
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/%s.dtw", cs->o->dir, cs->b.variant->name, name);
    const bool results = access(path, F_OK) != 0;
    const uint64_t k = results ? dtb_check_table_results(s, t, on_mismatch, &cs->b, 20)
                               : dtb_check_table(s, t, on_mismatch, &cs->b, 20);
    if (!cs->o->quiet)
        fprintf(stderr, "dtbgen: check %s%s: %llu positions, %llu mismatches\n", name,
                results ? " (WLD only: results)" : "",
                (unsigned long long)dtb_index_size(t->index), (unsigned long long)k);
    cs->bad += k;
    cs->positions += dtb_index_size(t->index);
    cs->checked++;
    check_mtc(cs, s, t, name);
    check_rules(cs, t, name);
}

static int run_check(const dtbgen_options *o)
{
    const dtb_variant *v = find_variant(o);
    if (!v)
        return EXIT_INPUT;
    dtb_material only[MAX_ONLY];
    if (parse_materials(o, only))
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
        .memory_budget = memory_budget(o),
        .work_dir = o->work_dir,
        .only = o->nonly ? only : NULL, /* these and the tables they read */
        .nonly = o->nonly,
    };
    const double t0 = omp_get_wtime();
    dtb_error e;
    const dtb_status walked = dtb_build_walk(&bo, on_check, &cs, &e);
    if (cs.have_rl)
        dtb_rule_layers_free(&cs.rl);
    if (walked != DTB_OK) {
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

/* ---- converting DTW tables ---------------------------------------------------------------- */

static void on_convert(void *user, const char *path, dtb_convert_action action, uint64_t bytes_in,
                       uint64_t bytes_out)
{
    const dtbgen_options *o = user;
    if (o->quiet)
        return;
    static const char *const what[] = {"rewritten", "linked", "already there"};
    fprintf(stderr, "dtbgen: %s %s (%llu -> %llu bytes)\n", what[action], path,
            (unsigned long long)bytes_in, (unsigned long long)bytes_out);
}

static int run_convert(const dtbgen_options *o)
{
    const dtb_variant *v = compact_variant(o);
    if (!v)
        return EXIT_INPUT;
    const dtb_convert_options co = {
        .from_dir = o->full_dir,
        .out_dir = o->dir,
        .variant = v,
        .pieces = o->pieces,
        .dtw_full = o->dtw_full,
        .threads = o->threads,
        .log = on_convert,
        .user = (void *)o,
    };
    const double t0 = omp_get_wtime();
    dtb_convert_stats st;
    dtb_error e;
    if (dtb_convert(&co, &st, &e) != DTB_OK) {
        fprintf(stderr, "dtbgen: %s\n", e.msg);
        return EXIT_INPUT;
    }
    const double secs = omp_get_wtime() - t0;
    if (o->json) {
        printf("{\"variant\":\"%s\",\"dir\":\"%s\",\"dtw_store\":\"%s\",\"files\":%d,"
               "\"rewritten\":%d,\"dtw\":{\"positions\":%llu,\"bytes_in\":%llu,\"bytes\":%llu},"
               "\"seconds\":%.1f}\n",
               v->name, o->dir, o->dtw_full ? "full" : "losses", st.files, st.rewritten,
               (unsigned long long)st.dtw_positions, (unsigned long long)st.dtw_bytes_in,
               (unsigned long long)st.dtw_bytes_out, secs);
        return 0;
    }
    printf("%s set in %s/%s, DTW %s: %d files, %d rewritten (%.1f s)\n", v->name, o->dir, v->name,
           o->dtw_full ? "full" : "losses only", st.files, st.rewritten, secs);
    if (st.dtw_bytes_out)
        printf("  DTW: %llu -> %llu bytes, %.1f -> %.1f positions per byte\n",
               (unsigned long long)st.dtw_bytes_in, (unsigned long long)st.dtw_bytes_out,
               (double)st.dtw_positions / (double)st.dtw_bytes_in,
               (double)st.dtw_positions / (double)st.dtw_bytes_out);
    return 0;
}

/* ---- manifests --------------------------------------------------------------------------- */

static bool print_line(void *user, uint64_t digest, const char *relpath)
{
    (void)user;
    printf("%016llx  %s\n", (unsigned long long)digest, relpath);
    return true;
}

/* The lines of --variant's directory, or of every variant directory in DIR (in the variants'
 * order), so that a MANIFEST of several variants comes out in one run. */
static int run_manifest(const dtbgen_options *o)
{
    const dtb_variant *only = NULL;
    if (o->variant && !(only = find_variant(o)))
        return EXIT_INPUT;
    int listed = 0;
    for (int i = 0; i < dtb_variant_count(); i++) {
        const dtb_variant *v = dtb_variant_at(i);
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", o->dir, v->name);
        if (only ? v != only : stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        dtb_error e;
        if (dtb_manifest_dir(o->dir, v->name, o->threads, print_line, NULL, &e) != DTB_OK) {
            fprintf(stderr, "dtbgen: %s\n", e.msg);
            return EXIT_INPUT;
        }
        listed++;
    }
    if (listed == 0) {
        fprintf(stderr, "dtbgen: %s holds no variant directory (international/, ...)\n", o->dir);
        return EXIT_INPUT;
    }
    return fflush(stdout) == 0 ? 0 : EXIT_INPUT;
}

static int run_command(const dtbgen_options *o, dtb_mpi *mpi)
{
    switch (o->command) {
    case CMD_BUILD:
        return run_build(o, mpi);
    case CMD_LIST:
        return run_list(o);
    case CMD_CHECK:
        return run_check(o);
    case CMD_COMPACT:
        return run_compact(o);
    case CMD_CONVERT:
        return run_convert(o);
    case CMD_MANIFEST:
        return run_manifest(o);
    case CMD_NONE:
        break;
    }
    return EXIT_USAGE;
}

/* Under mpirun every rank parses the same command line; a build is shared by all of them, the
 * other commands run on rank 0 alone. */
int main(int argc, char **argv)
{
    dtb_mpi *mpi;
    dtb_error e;
    if (dtb_mpi_open(&argc, &argv, &mpi, &e) != DTB_OK) {
        fprintf(stderr, "dtbgen: %s\n", e.msg);
        return EXIT_INPUT;
    }
    dtbgen_options o = {0};
    int r = parse_args(argc, argv, &o);
    if (r < 0)
        r = o.command == CMD_BUILD || dtb_mpi_rank(mpi) == 0 ? run_command(&o, mpi) : 0;
    dtb_mpi_close(mpi, true);
    return r;
}
