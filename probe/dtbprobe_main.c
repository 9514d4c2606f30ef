/* dtbprobe: the analyst's command line (DESIGN.md §1, §9).
 *
 * Structure: `dtbprobe <command> [options] [args]`. The table `commands` lists every command
 * with its option table and run function; a new command adds one entry, one option table and one
 * run function. Options are parsed generically from the command's table (which also drives its
 * --help), into a cli_args value the run function reads. Only this file prints.
 * Exit codes: 0 done, 1 bad input or data (unknown variant, malformed FEN), 2 usage (unknown
 * command or option, missing or malformed option value).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fen.h"
#include "pdnmove.h"
#include "perft.h"

#ifndef DTB_VERSION
#define DTB_VERSION "unknown"
#endif

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

/* ---- generic option parsing ------------------------------------------------------------ */

typedef enum { ARG_NONE, ARG_STRING, ARG_INT } arg_kind;

typedef struct option_spec {
    const char *name;    /* "--variant" */
    arg_kind arg;
    const char *metavar; /* shown in --help */
    const char *help;
} option_spec;

#define MAX_OPTIONS 16
#define MAX_POSITIONAL 4

/* What the command line said, by option index in the command's table. */
typedef struct cli_args {
    bool given[MAX_OPTIONS];
    const char *text[MAX_OPTIONS]; /* ARG_STRING */
    long number[MAX_OPTIONS];      /* ARG_INT */
    const char *positional[MAX_POSITIONAL];
    int npositional;
} cli_args;

typedef struct command {
    const char *name;
    const char *synopsis; /* arguments after the command name */
    const char *summary;
    const option_spec *options;
    int noptions;
    int max_positional;
    int (*run)(const struct command *cmd, const cli_args *a);
} command;

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "dtbprobe: %s%s", cmd ? cmd : "", cmd ? ": " : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntry 'dtbprobe %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
    return EXIT_USAGE;
}

static void command_help(const command *c, FILE *f)
{
    fprintf(f, "usage: dtbprobe %s %s\n%s\n\noptions:\n", c->name, c->synopsis, c->summary);
    for (int i = 0; i < c->noptions; i++) {
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", c->options[i].name, c->options[i].metavar ? " " : "",
                 c->options[i].metavar ? c->options[i].metavar : "");
        fprintf(f, "  %-16s %s\n", left, c->options[i].help);
    }
    fprintf(f, "  %-16s %s\n", "--help", "this text");
    fprintf(f, "\nexit status: 0 done, 1 bad input or data, 2 usage error\n");
}

static int option_index(const command *c, const char *name)
{
    for (int i = 0; i < c->noptions; i++)
        if (strcmp(c->options[i].name, name) == 0)
            return i;
    return -1;
}

/* Fills *a from argv (the words after the command name). Returns -1 to go on, or an exit status
 * (0 after --help). "--opt=value" and "--opt value" are both accepted; "--" ends the options. */
static int parse_args(const command *c, int argc, char **argv, cli_args *a)
{
    memset(a, 0, sizeof *a);
    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (options_done || w[0] != '-' || w[1] == '\0') {
            if (a->npositional >= c->max_positional)
                return usage_error(c->name, "unexpected argument '%s'", w);
            a->positional[a->npositional++] = w;
            continue;
        }
        if (strcmp(w, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(w, "--help") == 0) {
            command_help(c, stdout);
            return 0;
        }
        const char *eq = strchr(w, '=');
        char name[64];
        const size_t len = eq ? (size_t)(eq - w) : strlen(w);
        if (len >= sizeof name)
            return usage_error(c->name, "unknown option %s", w);
        memcpy(name, w, len);
        name[len] = '\0';
        const int k = option_index(c, name);
        if (k < 0)
            return usage_error(c->name, "unknown option %s", name);
        const option_spec *s = &c->options[k];
        const char *value = NULL;
        if (s->arg == ARG_NONE) {
            if (eq)
                return usage_error(c->name, "%s takes no value", s->name);
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return usage_error(c->name, "%s needs a value", s->name);
        }
        a->given[k] = true;
        if (s->arg == ARG_STRING) {
            a->text[k] = value;
        } else if (s->arg == ARG_INT) {
            char *end;
            const long v = strtol(value, &end, 10);
            if (end == value || *end != '\0') {
                fprintf(stderr, "dtbprobe: %s: %s: '%s' is not a number\ntry 'dtbprobe %s --help'\n",
                        c->name, s->name, value, c->name);
                return EXIT_USAGE;
            }
            a->number[k] = v;
        }
    }
    return -1;
}

/* The variant named on the command line, or NULL after a message. */
static const dtb_variant *find_variant(const char *name)
{
    const dtb_variant *v = dtb_variant_find(name);
    if (!v) {
        fprintf(stderr, "dtbprobe: unknown variant '%s' (one of:", name);
        for (int i = 0; i < dtb_variant_count(); i++)
            fprintf(stderr, " %s", dtb_variant_at(i)->name);
        fprintf(stderr, ")\n");
    }
    return v;
}

/* Reads the FEN argument (or the start position when absent). Returns false after a message. */
static bool read_position(const dtb_board *b, const char *fen, dtb_pos *p)
{
    if (!fen) {
        dtb_pos_start(b, p);
        return true;
    }
    dtb_error e = {{0}};
    if (dtb_fen_read(b, fen, p, &e) != DTB_OK) {
        fprintf(stderr, "dtbprobe: bad FEN '%s': %s\n", fen, e.msg);
        return false;
    }
    return true;
}

static double now_seconds(void)
{
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- perft ----------------------------------------------------------------------------- */

enum { PERFT_VARIANT, PERFT_DEPTH, PERFT_DIVIDE };
static const option_spec perft_options[] = {
    [PERFT_VARIANT] = {"--variant", ARG_STRING, "V",
                       "rules: international, english, russian, brazilian, canadian"},
    [PERFT_DEPTH] = {"--depth", ARG_INT, "D", "count to depth D, 1..40 (default 6)"},
    [PERFT_DIVIDE] = {"--divide", ARG_NONE, NULL, "at depth D, the count below each root move"},
};

_Static_assert(sizeof perft_options / sizeof perft_options[0] <= MAX_OPTIONS, "MAX_OPTIONS");

#define PERFT_MAX_DEPTH 40

/* One line "perft <depth> <nodes> <seconds>" per depth 1..D (each depth timed on its own).
 * With --divide the last depth is preceded by one line per root move: its PDN text and the
 * leaves below it, so that a wrong count can be bisected against another program. */
static int run_perft(const command *c, const cli_args *a)
{
    if (!a->given[PERFT_VARIANT])
        return usage_error(c->name, "%s", "--variant is required");
    const long depth = a->given[PERFT_DEPTH] ? a->number[PERFT_DEPTH] : 6;
    if (depth < 1 || depth > PERFT_MAX_DEPTH) {
        fprintf(stderr, "dtbprobe: perft: --depth %ld is outside 1..%d\n", depth, PERFT_MAX_DEPTH);
        return EXIT_USAGE;
    }
    const dtb_variant *v = find_variant(a->text[PERFT_VARIANT]);
    if (!v)
        return EXIT_INPUT;
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_pos p;
    if (!read_position(&b, a->npositional ? a->positional[0] : NULL, &p))
        return EXIT_INPUT;

    for (int d = 1; d <= (int)depth; d++) {
        const double t0 = now_seconds();
        uint64_t nodes = 0;
        if (d == depth && a->given[PERFT_DIVIDE]) {
            dtb_movelist *list = malloc(sizeof *list);
            if (!list || dtb_generate(&b, &p, list) != DTB_OK) {
                free(list);
                fprintf(stderr, "dtbprobe: perft: cannot list the root moves\n");
                return EXIT_INPUT;
            }
            for (int i = 0; i < list->count; i++) {
                const dtb_move *m = &list->moves[i];
                char text[DTB_MOVE_TEXT_MAX];
                if (dtb_move_write(&b, &p, m, text, sizeof text) != DTB_OK)
                    snprintf(text, sizeof text, "%d%c%d", m->from + 1, m->ncaptured ? 'x' : '-',
                             m->to + 1);
                dtb_pos q;
                dtb_make_move(&p, m, &q);
                const uint64_t n = dtb_perft(&b, &q, d - 1);
                printf("%s %" PRIu64 "\n", text, n);
                nodes += n;
            }
            free(list);
        } else {
            nodes = dtb_perft(&b, &p, d);
        }
        printf("perft %d %" PRIu64 " %.3f\n", d, nodes, now_seconds() - t0);
        fflush(stdout);
    }
    return 0;
}

/* ---- commands -------------------------------------------------------------------------- */

static const command commands[] = {
    {"perft", "--variant V [--depth D] [--divide] [FEN]",
     "Counts the leaves of the legal move tree of FEN (default: the start position), one line\n"
     "'perft <depth> <nodes> <seconds>' per depth.",
     perft_options, (int)(sizeof perft_options / sizeof perft_options[0]), 1, run_perft},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void main_help(FILE *f)
{
    fprintf(f, "usage: dtbprobe <command> [options] [arguments]\n"
               "       dtbprobe --help | --version\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].synopsis);
    fprintf(f, "\n'dtbprobe <command> --help' describes a command.\n"
               "exit status: 0 done, 1 bad input or data, 2 usage error\n");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error(NULL, "%s", "no command given");
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        main_help(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("dtbprobe %s\n", DTB_VERSION);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) {
            cli_args a;
            const int r = parse_args(&commands[i], argc - 2, argv + 2, &a);
            return r >= 0 ? r : commands[i].run(&commands[i], &a);
        }
    return usage_error(NULL, name[0] == '-' ? "unknown option %s" : "unknown command '%s'", name);
}
