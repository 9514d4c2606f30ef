/* dtbprobe: the analyst's command line (docs/DESIGN.md §1, §9).
 *
 * Structure: `dtbprobe <command> [options] [args]`. The table `commands` lists every command
 * with its option table and run function; a new command adds one entry, one option table and one
 * run function. Options are parsed by the command lines' shared parser (cli_options.h) from the
 * command's table (which also drives its --help), into a dtb_cli_args value the run function
 * reads; `verify` (cli_verify.c) uses the same parser. Only the CLI files print; the library under them never does.
 * Exit codes: 0 done, 1 bad input or data (unknown variant, malformed FEN), 2 usage (unknown
 * command or option, missing or malformed option value).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtb.h"
#include "fen.h"
#include "pdnmove.h"
#include "perft.h"
#include "answer.h"
#include "cli_options.h"
#include "cli_verify.h"
#ifdef DTB_HAVE_SERVER
#include "cli_serve.h"
#endif

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

/* ---- commands and their options ---------------------------------------------------------- */

typedef struct command {
    const char *name;
    const char *synopsis; /* arguments after the command name */
    const char *summary;
    const dtb_cli_option *options;
    int noptions;
    int max_positional;
    int (*run)(const struct command *cmd, const dtb_cli_args *a);
} command;

static int usage_error(const char *cmd, const char *message)
{
    return dtb_cli_usage_error("dtbprobe", cmd, message);
}

static void command_help(const command *c, FILE *f)
{
    fprintf(f, "usage: dtbprobe %s %s\n%s\n\noptions:\n", c->name, c->synopsis, c->summary);
    dtb_cli_print_options(f, c->options, c->noptions);
    fprintf(f, "\nexit status: 0 done, 1 bad input or data, 2 usage error\n");
}

/* Parses argv (the words after the command name) for command c and runs it. */
static int run_command(const command *c, int argc, char **argv)
{
    dtb_cli_args *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "dtbprobe: out of memory\n");
        return EXIT_INPUT;
    }
    int rc;
    switch (dtb_cli_parse(c->options, c->noptions, c->max_positional, argc, argv, a)) {
    case DTB_CLI_HELP:
        command_help(c, stdout);
        rc = 0;
        break;
    case DTB_CLI_USAGE:
        rc = usage_error(c->name, a->error);
        break;
    default:
        rc = c->run(c, a);
        break;
    }
    free(a);
    return rc;
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

#define PERFT_MAX_DEPTH 40

enum { PERFT_VARIANT, PERFT_DEPTH, PERFT_DIVIDE };
static const dtb_cli_option perft_options[] = {
    [PERFT_VARIANT] = {"--variant", DTB_CLI_NAME, "V",
                       "rules: international, english, russian, brazilian, canadian"},
    [PERFT_DEPTH] = {"--depth", DTB_CLI_INT, "D", "count to depth D, 1..40 (default 6)", 1, PERFT_MAX_DEPTH},
    [PERFT_DIVIDE] = {"--divide", DTB_CLI_FLAG, NULL, "at depth D, the count below each root move"},
};

/* One line "perft <depth> <nodes> <seconds>" per depth 1..D (each depth timed on its own).
 * With --divide the last depth is preceded by one line per root move: its PDN text and the
 * leaves below it, so that a wrong count can be bisected against another program. */
static int run_perft(const command *c, const dtb_cli_args *a)
{
    if (!a->given[PERFT_VARIANT])
        return usage_error(c->name, "--variant is required");
    const long depth = a->given[PERFT_DEPTH] ? a->number[PERFT_DEPTH] : 6;
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

/* ---- probe (the default command) ------------------------------------------------------- */

enum { PROBE_TABLES, PROBE_VARIANT, PROBE_JSON, PROBE_CACHE, PROBE_NOTATION, PROBE_CLOCK,
       PROBE_RULES, PROBE_DIAGONAL };
static const dtb_cli_option probe_options[] = {
    [PROBE_TABLES] = {"--tables", DTB_CLI_TEXT, "DIR",
                      "table directories, ':'-separated (default: $DTB_PATH)"},
    [PROBE_VARIANT] = {"--variant", DTB_CLI_NAME, "V", "rules (default: the variant of the tables)"},
    [PROBE_JSON] = {"--json", DTB_CLI_FLAG, NULL, "one JSON object per position"},
    [PROBE_CACHE] = {"--cache", DTB_CLI_INT, "MIB", "block cache size in MiB (default 64)", 1, 1L << 20},
    [PROBE_NOTATION] = {"--notation", DTB_CLI_TEXT, "N",
                        "numeric or algebraic squares (default: the variant's; russian, brazilian: algebraic)"},
    [PROBE_CLOCK] = {"--clock", DTB_CLI_INT, "N",
                     "plies since the move-count rules' counter was reset (default: the FEN's "
                     "H field, else 0)", 0, 1000000},
    [PROBE_RULES] = {"--rules", DTB_CLI_TEXT, "R",
                     "fmjd, wcdf, fmjd64 or none: the move-count draw rules to answer under "
                     "(default: the variant's where the tables have them; none: unlimited play "
                     "only)"},
    [PROBE_DIAGONAL] = {"--diagonal", DTB_CLI_INT, "N",
                        "fmjd64: plies so far that ended with the lone king alone on the main "
                        "road (7.2.7; default 0, as lidraughts from a FEN)", 0, 1000000},
};

#define MAX_TABLE_DIRS 32

/* libdtb's messages about the files. While positions are probed they are held until the probe
 * is done: one that the probe's error repeats (a table of another variant, a damaged file) is
 * then not printed twice. */
static struct {
    bool holding;
    int n;
    char msgs[8][DTB_MESSAGE_SIZE + 128];
} held_log;

static void print_log(void *user, const char *msg)
{
    (void)user;
    if (held_log.holding && held_log.n < 8)
        snprintf(held_log.msgs[held_log.n++], sizeof held_log.msgs[0], "%s", msg);
    else
        fprintf(stderr, "dtbprobe: %s\n", msg);
}

/* Prints the messages held during a probe but those its error (when it failed) says. */
static void flush_log(const dtb_answer *a, bool failed)
{
    for (int i = 0; i < held_log.n; i++)
        if (!(failed && a->status != DTB_OK && strstr(a->error, held_log.msgs[i])))
            fprintf(stderr, "dtbprobe: %s\n", held_log.msgs[i]);
    held_log.n = 0;
}

/* The board as text: one line per row, top row first, two characters per square ('.' an empty
 * dark square, w/W white man/king, b/B black man/king), the row's square numbers at the right. */
static void print_diagram(const dtb_board *b, const dtb_position *p)
{
    for (int row = 0; row < b->size; row++) {
        printf("   ");
        int first = 0, last = 0;
        for (int col = 0; col < b->size; col++) {
            const int sq = dtb_board_square(b, row, col);
            char c = ' ';
            if (sq >= 0) {
                if (!first)
                    first = sq + 1;
                last = sq + 1;
                const int w = sq / 64, bit = sq % 64;
                c = '.';
                if (p->men[DTB_SIDE_WHITE][w] >> bit & 1) c = 'w';
                if (p->kings[DTB_SIDE_WHITE][w] >> bit & 1) c = 'W';
                if (p->men[DTB_SIDE_BLACK][w] >> bit & 1) c = 'b';
                if (p->kings[DTB_SIDE_BLACK][w] >> bit & 1) c = 'B';
            }
            printf(" %c", c);
        }
        printf("    %2d-%2d\n", first, last);
    }
}

/* "cursed win" for DTB_RULE_CURSED_WIN: a category as the text output writes it. */
static const char *category_words(dtb_rule_category c)
{
    switch (c) {
    case DTB_RULE_CURSED_WIN: return "cursed win";
    case DTB_RULE_BLESSED_LOSS: return "blessed loss";
    default: return dtb_rule_category_name(c);
    }
}

/* The value under the rules beside the unlimited one, the moves grouped by their category under
 * the rules (best first, each with the clock after it) and the line that follows the first. */
static void print_rules(const dtb_answer *a)
{
    const dtb_rule_answer *r = &a->rules;
    char where[96];
    if (r->rule[0] && r->limit && a->counters.diagonal)
        snprintf(where, sizeof where, "%s, clock %d of %d, diagonal count %d", r->rules,
                 r->clock, r->limit, a->counters.diagonal);
    else if (r->rule[0] && r->limit)
        snprintf(where, sizeof where, "%s, clock %d of %d", r->rules, r->clock, r->limit);
    else if (r->rule[0])
        snprintf(where, sizeof where, "%s, no count", r->rules);
    else
        snprintf(where, sizeof where, "%s, the game is over", r->rules);
    printf("under the rules: ");
    switch (r->category) {
    case DTB_RULE_WIN:
    case DTB_RULE_LOSS:
        if (r->plies > 0)
            printf("%s, %d %s to the next reset of the %s count (%s)\n",
                   category_words(r->category), r->plies, r->plies == 1 ? "ply" : "plies",
                   r->rule, where);
        else
            printf("%s (%s)\n", category_words(r->category), where);
        break;
    case DTB_RULE_CURSED_WIN:
    case DTB_RULE_BLESSED_LOSS:
        printf("%s: %s in unlimited play, drawn by the %s rule (%s)\n",
               category_words(r->category), r->category == DTB_RULE_CURSED_WIN ? "won" : "lost",
               r->rule, where);
        break;
    case DTB_RULE_DRAW:
        printf("draw (%s, %s rule)\n", where, r->rule[0] ? r->rule : "no");
        break;
    }
    printf("moves under the rules (plies to the next reset, clock after the move):%s\n",
           a->nrule_moves ? "" : " none");
    for (int i = 0; i < a->nrule_moves; i++) {
        const dtb_rule_move *m = &a->rule_moves[i];
        if (i == 0 || m->category != a->rule_moves[i - 1].category)
            printf("  %s\n", category_words(m->category));
        if (m->plies >= 0)
            printf("    %-12s %3d  clock %d\n", m->move.text, m->plies, m->clock);
        else
            printf("    %-12s      clock %d\n", m->move.text, m->clock);
    }
    printf("line under the rules:");
    for (int i = 0; i < a->nrule_line; i++)
        printf(" %s", a->rule_line[i].text);
    const bool at_limit = r->rule[0] && r->clock >= r->limit && r->category != DTB_RULE_LOSS;
    printf("%s\n", a->nrule_line                   ? ""
                   : at_limit                     ? " (the count is at its limit: drawn)"
                   : r->category == DTB_RULE_DRAW ? " (a draw: none)"
                                                  : " (game over)");
}

static void print_text(dtb_db *db, const dtb_board *b, const dtb_position *p, const dtb_answer *a)
{
    char fen[DTB_ANSWER_FEN_SIZE];
    dtb_answer_fen(db, p, a->notation, "", fen, sizeof fen);
    printf("%s\n%s, %s to move\n", fen, dtb_db_variant(db),
           p->side == DTB_SIDE_WHITE ? "white" : "black");
    print_diagram(b, p);
    if (a->wdl == DTB_DRAW)
        printf("value: draw\n");
    else if (a->have_dtw)
        printf("value: %s, DTW %d %s\n", dtb_answer_wdl_name(a->wdl), a->dtw, a->dtw == 1 ? "ply" : "plies");
    else
        printf("value: %s (no DTW tables)\n", dtb_answer_wdl_name(a->wdl));
    if (a->have_mtc && a->wdl != DTB_DRAW)
        printf("conversion: MTC %d %s\n", a->mtc, a->mtc == 1 ? "ply" : "plies");
    printf("moves:%s\n", a->nmoves ? "" : " none");
    for (int i = 0; i < a->nmoves; i++) {
        const dtb_ranked_move *m = &a->moves[i];
        if (m->wdl == DTB_DRAW)
            printf("  %-12s draw\n", m->move.text);
        else if (m->dtw == DTB_DTW_UNKNOWN) /* a WLD-only set */
            printf("  %-12s %s\n", m->move.text, dtb_answer_wdl_name(m->wdl));
        else
            printf("  %-12s %-4s %3d\n", m->move.text, dtb_answer_wdl_name(m->wdl), m->dtw);
    }
    if (a->have_dtw) {
        printf("line:");
        for (int i = 0; i < a->nline; i++)
            printf(" %s", a->line[i].text);
        printf("%s\n", a->nline ? "" : a->wdl == DTB_DRAW ? " (a draw has no end)" : " (game over)");
    }
    if (a->have_rules)
        print_rules(a);
    printf("\n");
}

static void print_problem(bool json, const char *fen, const char *what, const char *msg)
{
    fprintf(stderr, "dtbprobe: %s: %s%s\n", fen, what, msg);
    if (json) {
        char full[2 * DTB_MESSAGE_SIZE];
        snprintf(full, sizeof full, "%s%s", what, msg);
        dtb_text t = {0};
        dtb_answer_error_json(&t, fen, full);
        if (t.s)
            puts(t.s);
        dtb_text_free(&t);
    }
}

/* What is asked of every position: the answer's form, and the rules with their clock. */
typedef struct probe_request {
    bool json;
    dtb_notation notation;
    const char *rules; /* NULL: the variant's where the tables have them */
    int clock;         /* -1: each FEN's H field, else 0 */
    int diagonal;      /* fmjd64's diagonal count */
} probe_request;

/* One FEN: returns 0, or EXIT_INPUT after printing the problem. */
static int probe_one(dtb_db *db, const dtb_board *b, const char *fen, const probe_request *rq,
                     dtb_answer *a)
{
    const bool json = rq->json;
    dtb_position p;
    char err[DTB_MESSAGE_SIZE];
    int clock = 0;
    if (dtb_position_from_fen(db, fen, &p, err, sizeof err) != DTB_OK ||
        dtb_fen_clock(fen, &clock, err, sizeof err) != DTB_OK) {
        print_problem(json, fen, "bad FEN: ", err);
        return EXIT_INPUT;
    }
    if (rq->clock >= 0)
        clock = rq->clock;
    dtb_answer_probe(db, &p, rq->notation, a);
    const dtb_rule_counters c = {.clock = clock, .diagonal = rq->diagonal};
    dtb_answer_rules(db, &p, rq->rules, &c, a);
    if (a->status != DTB_OK) {
        print_problem(json, fen, "", a->error);
        return EXIT_INPUT;
    }
    if (json) {
        dtb_text t = {0};
        dtb_answer_json(&t, db, &p, a);
        if (t.failed) {
            dtb_text_free(&t);
            print_problem(json, fen, "", "out of memory");
            return EXIT_INPUT;
        }
        puts(t.s);
        dtb_text_free(&t);
    } else {
        print_text(db, b, &p, a);
    }
    fflush(stdout);
    return 0;
}

/* Splits a ':'-separated list of directories in place into dirs[]; returns their number. */
static int split_dirs(char *list, const char **dirs, int cap)
{
    int n = 0;
    for (char *s = strtok(list, ":"); s && n < cap; s = strtok(NULL, ":"))
        dirs[n++] = s;
    return n;
}

static int run_probe(const command *c, const dtb_cli_args *a)
{
    const char *tables = a->given[PROBE_TABLES] ? a->text[PROBE_TABLES] : getenv("DTB_PATH");
    if (!tables || !*tables)
        return usage_error(c->name, "no tables: give --tables DIR or set DTB_PATH");
    if (a->given[PROBE_VARIANT] && !find_variant(a->text[PROBE_VARIANT]))
        return EXIT_INPUT;
    const long cache = a->given[PROBE_CACHE] ? a->number[PROBE_CACHE] : 64;
    if (a->given[PROBE_NOTATION] && strcmp(a->text[PROBE_NOTATION], "numeric") != 0 &&
        strcmp(a->text[PROBE_NOTATION], "algebraic") != 0)
        return usage_error(c->name, "--notation is numeric or algebraic");
    if (a->given[PROBE_RULES] && !dtb_answer_rules_known(a->text[PROBE_RULES]))
        return usage_error(c->name, "--rules is fmjd, wcdf, fmjd64 or none");
    char *list = strdup(tables);
    const char *dirs[MAX_TABLE_DIRS];
    const int ndirs = list ? split_dirs(list, dirs, MAX_TABLE_DIRS) : 0;
    if (ndirs == 0) {
        free(list);
        return usage_error(c->name, "no table directory given");
    }
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = ndirs,
                           .variant = a->given[PROBE_VARIANT] ? a->text[PROBE_VARIANT] : NULL,
                           .cache_bytes = (uint64_t)cache << 20, .log = print_log};
    dtb_db *db;
    const dtb_status s = dtb_open(&o, &db);
    free(list);
    if (s != DTB_OK)
        return EXIT_INPUT; /* the log said why */
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(dtb_db_variant(db)));
    dtb_answer *ans = malloc(sizeof *ans);
    if (!ans) {
        dtb_close(db);
        fprintf(stderr, "dtbprobe: out of memory\n");
        return EXIT_INPUT;
    }
    const bool json = a->given[PROBE_JSON];
    /* Squares as the variant's players write them unless told otherwise. */
    const char *notation = a->given[PROBE_NOTATION] ? a->text[PROBE_NOTATION] : NULL;
    const probe_request rq = {
        .json = json,
        .notation = !notation                          ? dtb_db_notation(db)
                    : strcmp(notation, "algebraic") == 0 ? DTB_NOTATION_ALGEBRAIC
                                                         : DTB_NOTATION_NUMERIC,
        .rules = a->given[PROBE_RULES] ? a->text[PROBE_RULES] : NULL,
        .clock = a->given[PROBE_CLOCK] ? (int)a->number[PROBE_CLOCK] : -1,
        .diagonal = a->given[PROBE_DIAGONAL] ? (int)a->number[PROBE_DIAGONAL] : 0,
    };
    int rc = 0;
    held_log.holding = true;
    if (a->npositional > 0) {
        for (int i = 0; i < a->npositional; i++) {
            ans->status = DTB_OK;
            const bool failed = probe_one(db, &b, a->positional[i], &rq, ans) != 0;
            flush_log(ans, failed);
            if (failed)
                rc = EXIT_INPUT;
        }
    } else {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            char *s = line, *end = line + strlen(line);
            while (*s == ' ' || *s == '\t')
                s++;
            while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                *--end = '\0';
            if (*s == '\0' || *s == '#')
                continue;
            ans->status = DTB_OK;
            const bool failed = probe_one(db, &b, s, &rq, ans) != 0;
            flush_log(ans, failed);
            if (failed)
                rc = EXIT_INPUT;
        }
    }
    held_log.holding = false;
    free(ans);
    dtb_close(db);
    return rc;
}

/* ---- commands -------------------------------------------------------------------------- */

static const command commands[] = {
    {"probe", "[--tables DIR] [--variant V] [--json] [--clock N] [--diagonal N] [--rules R] [FEN ...]",
     "For each position (FEN arguments, or one FEN per line on stdin): the value, the DTW, every\n"
     "legal move ranked with its value and DTW (plies to the end from the position, the move\n"
     "included), the best line in PDN moves, and a diagram; where the tables have rule tables\n"
     "(dtbgen --metrics ...,rules), the same under the move-count draw rules at the clock (the\n"
     "FEN's H field or --clock). The default command: 'dtbprobe [options] [FEN ...]' is\n"
     "'dtbprobe probe [options] [FEN ...]'.",
     probe_options, (int)(sizeof probe_options / sizeof probe_options[0]), DTB_CLI_MAX_POSITIONAL, run_probe},
    {"perft", "--variant V [--depth D] [--divide] [FEN]",
     "Counts the leaves of the legal move tree of FEN (default: the start position), one line\n"
     "'perft <depth> <nodes> <seconds>' per depth.",
     perft_options, (int)(sizeof perft_options / sizeof perft_options[0]), 1, run_perft},
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void main_help(FILE *f)
{
    fprintf(f, "usage: dtbprobe [--tables DIR] [--variant V] [--json] [FEN ...]\n"
               "       dtbprobe <command> [options] [arguments]\n"
               "       dtbprobe --help | --version\n\ncommands (probe is the default):\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].synopsis);
    fprintf(f, "  %-8s %s\n", "verify", DTBPROBE_VERIFY_SYNOPSIS);
#ifdef DTB_HAVE_SERVER
    fprintf(f, "  %-8s %s\n", "serve", DTBPROBE_SERVE_SYNOPSIS);
#endif
    fprintf(f, "\n'dtbprobe <command> --help' describes a command.\n"
               "exit status: 0 done, 1 bad input or data, 2 usage error\n");
}

int main(int argc, char **argv)
{
    const char *name = argc >= 2 ? argv[1] : "";
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        main_help(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("dtbprobe %s\n", dtb_cli_version());
        return 0;
    }
    if (strcmp(name, "verify") == 0) /* textbook claims; parses its own options */
        return dtbprobe_verify_main(argc - 2, argv + 2);
    if (strcmp(name, "serve") == 0) {
#ifdef DTB_HAVE_SERVER
        return dtbprobe_serve_main(argc - 2, argv + 2);
#else
        fprintf(stderr, "dtbprobe: serve: this dtbprobe was built without the HTTP server "
                        "(configure with libmicrohttpd and -DDTB_SERVER=ON)\n");
        return EXIT_INPUT;
#endif
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return run_command(&commands[i], argc - 2, argv + 2);
    /* Not a command name: the probe command's options and FENs. */
    return run_command(&commands[0], argc - 1, argv + 1);
}
