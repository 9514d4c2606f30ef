/* `dtbprobe verify`: reads claims files, evaluates every claim on the tables of its variant
 * (probe/claims.h) and reports each verdict with its counts and counterexamples, as text
 * (default), JSON (--json) and/or a self-contained HTML page with an SVG diagram of every
 * position it lists (--html FILE).
 *
 * Where things are looked for: claims in the FILE arguments (a directory stands for its *.claims
 * files), else $DTB_CLAIMS (a file or directory), else tables/claims under the current directory;
 * tables in --tables DIR (':'-separated), else $DTB_PATH, else tables/ under the current
 * directory. One dtb_db is opened per variant the claims need. */
#define _POSIX_C_SOURCE 200809L

#include "cli_verify.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board.h"
#include "claims.h"
#include "cli_options.h"
#include "dtb.h"
#include "fen.h"
#include "square_name.h"

enum { EXIT_FAIL = 1 };

#define MAX_DIRS 32
#define MAX_FILES 256
#define MAX_IDS 64

typedef struct options {
    const char *tables;
    long examples;
    bool json, quiet, skip_absent;
    const char *html;
    int texts; /* DTB_TEXTS_*: the notation of the report (default each variant's) */
    const char *files[MAX_FILES];
    int nfiles;
    const char *ids[MAX_IDS];
    int nids;
} options;

enum { OPT_TABLES, OPT_EXAMPLES, OPT_CLAIM, OPT_JSON, OPT_HTML, OPT_QUIET, OPT_NOTATION,
       OPT_SKIP_ABSENT, NOPTIONS };
static const dtb_cli_option verify_options[NOPTIONS] = {
    [OPT_TABLES] = {"--tables", DTB_CLI_TEXT, "DIR", "table directories, ':'-separated (default: $DTB_PATH, else tables)"},
    [OPT_EXAMPLES] = {"--examples", DTB_CLI_INT, "K", "counterexamples shown per failing claim (default 5)", 0, 1000},
    [OPT_CLAIM] = {"--claim", DTB_CLI_TEXT, "ID", "only this claim (repeatable)", .repeat = true},
    [OPT_JSON] = {"--json", DTB_CLI_FLAG, NULL, "one JSON object instead of the text report"},
    [OPT_HTML] = {"--html", DTB_CLI_TEXT, "FILE", "also write an HTML report with a diagram of every position listed"},
    [OPT_QUIET] = {"--quiet", DTB_CLI_FLAG, NULL, "text report: only failing claims and the summary"},
    [OPT_NOTATION] = {"--notation", DTB_CLI_TEXT, "N",
                      "numeric or algebraic squares in the report (default: each variant's; russian, brazilian: algebraic)"},
    [OPT_SKIP_ABSENT] = {"--skip-absent", DTB_CLI_FLAG, NULL,
                         "a claim whose tables are absent is reported as not checked and does not fail"},
};

static void help(FILE *f)
{
    fprintf(f,
            "usage: dtbprobe verify " DTBPROBE_VERIFY_SYNOPSIS "\n"
            "Checks textbook claims against the tables: for each claim, whether it holds, the counts\n"
            "behind the verdict (positions matched, wins, draws, losses, the longest win) and, when it\n"
            "fails, counterexamples with their best lines. The claims file format is described in\n"
            "tables/claims/README.md.\n\n"
            "arguments:\n"
            "  FILE             a claims file, or a directory: its *.claims files (default: $DTB_CLAIMS,\n"
            "                   else tables/claims in the current directory)\n\n"
            "options:\n");
    dtb_cli_print_options(f, verify_options, NOPTIONS);
    fprintf(f, "\nexit status: 0 every claim holds, 1 a claim fails or data is missing or unreadable,\n"
               "2 usage error\n");
}

/* -1 to go on, or an exit status. */
static int parse(int argc, char **argv, options *o)
{
    *o = (options){.examples = 5};
    dtb_cli_args *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "dtbprobe: verify: out of memory\n");
        return EXIT_FAIL;
    }
    int rc = -1;
    switch (dtb_cli_parse(verify_options, NOPTIONS, MAX_FILES, argc, argv, a)) {
    case DTB_CLI_HELP:
        help(stdout);
        rc = 0;
        break;
    case DTB_CLI_USAGE:
        rc = dtb_cli_usage_error("dtbprobe", "verify", a->error);
        break;
    case DTB_CLI_OK:
        o->tables = a->text[OPT_TABLES];
        o->html = a->text[OPT_HTML];
        o->json = a->given[OPT_JSON];
        o->quiet = a->given[OPT_QUIET];
        o->skip_absent = a->given[OPT_SKIP_ABSENT];
        if (a->given[OPT_NOTATION]) {
            if (strcmp(a->text[OPT_NOTATION], "numeric") == 0) {
                o->texts = DTB_TEXTS_NUMERIC;
            } else if (strcmp(a->text[OPT_NOTATION], "algebraic") == 0) {
                o->texts = DTB_TEXTS_ALGEBRAIC;
            } else {
                rc = dtb_cli_usage_error("dtbprobe", "verify", "--notation is numeric or algebraic");
                break;
            }
        }
        if (a->given[OPT_EXAMPLES])
            o->examples = a->number[OPT_EXAMPLES];
        o->nids = dtb_cli_values(a, OPT_CLAIM, o->ids, MAX_IDS);
        if (o->nids > MAX_IDS) {
            rc = dtb_cli_usage_error("dtbprobe", "verify", "more than 64 --claim options");
            break;
        }
        for (int i = 0; i < a->npositional; i++)
            o->files[o->nfiles++] = a->positional[i];
        break;
    }
    free(a);
    return rc;
}

/* ---- reading the claims ------------------------------------------------------------------- */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Adds a file, or every *.claims file of a directory in name order. False after a message. */
static bool add_path(dtb_claims *set, const char *path)
{
    struct stat st;
    char err[2 * DTB_MESSAGE_SIZE];
    if (stat(path, &st) != 0) {
        fprintf(stderr, "dtbprobe: verify: cannot read claims '%s': no such file or directory\n", path);
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (dtb_claims_add_file(set, path, err, sizeof err) != DTB_OK) {
            fprintf(stderr, "dtbprobe: verify: %s\n", err);
            return false;
        }
        return true;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "dtbprobe: verify: cannot open the directory '%s'\n", path);
        return false;
    }
    char *names[1024];
    int n = 0;
    bool ok = true;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (has_suffix(e->d_name, ".claims") && e->d_name[0] != '.' && n < 1024) {
            const size_t len = strlen(path) + strlen(e->d_name) + 2;
            if (!(names[n] = malloc(len))) {
                ok = false;
                break;
            }
            snprintf(names[n++], len, "%s/%s", path, e->d_name);
        }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    if (ok && n == 0) {
        fprintf(stderr, "dtbprobe: verify: no *.claims file in '%s'\n", path);
        ok = false;
    }
    for (int i = 0; i < n; i++) {
        if (ok && dtb_claims_add_file(set, names[i], err, sizeof err) != DTB_OK) {
            fprintf(stderr, "dtbprobe: verify: %s\n", err);
            ok = false;
        }
        free(names[i]);
    }
    return ok;
}

/* ---- tables, one db per variant ---------------------------------------------------------- */

typedef struct variant_db {
    const char *variant;
    dtb_db *db;
    dtb_status status;
    char message[DTB_MESSAGE_SIZE];
} variant_db;

typedef struct log_capture {
    char message[DTB_MESSAGE_SIZE];
} log_capture;

static void keep_log(void *user, const char *msg)
{
    log_capture *l = user;
    if (!l->message[0])
        snprintf(l->message, sizeof l->message, "%s", msg);
}

static variant_db *db_for(variant_db *dbs, int *n, const char *variant, const char *const *dirs,
                          int ndirs, int texts)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(dbs[i].variant, variant) == 0)
            return &dbs[i];
    variant_db *v = &dbs[(*n)++];
    *v = (variant_db){.variant = variant};
    log_capture lc = {{0}};
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = ndirs, .variant = variant,
                           .cache_bytes = 256ull << 20, .log = keep_log, .log_user = &lc,
                           .texts = texts}; /* the results' FENs and lines in the report's notation */
    v->status = dtb_open(&o, &v->db);
    if (v->status != DTB_OK) {
        char dirlist[256] = "";
        size_t k = 0;
        for (int i = 0; i < ndirs && k < sizeof dirlist; i++)
            k += (size_t)snprintf(dirlist + k, sizeof dirlist - k, "%s%s", i ? ":" : "", dirs[i]);
        snprintf(v->message, sizeof v->message, "no %s tables in %.80s%s%.120s", variant, dirlist,
                 lc.message[0] ? ": " : "", lc.message);
    }
    return v;
}

/* ---- progress on a terminal --------------------------------------------------------------- */

typedef struct progress {
    const char *id;
    int last;
} progress;

static bool show_progress(void *user, uint64_t done, uint64_t total)
{
    progress *p = user;
    const int pct = total ? (int)(100.0 * (double)done / (double)total) : 0;
    if (pct != p->last) {
        fprintf(stderr, "\r%s: %3d%%", p->id, pct > 100 ? 100 : pct);
        p->last = pct;
    }
    return true;
}

/* ---- what a claim's report shows ---------------------------------------------------------- */

/* A verdict as reported: the evaluation's, with a table that is not there (rather than damaged)
 * told apart from other missing data. */
typedef enum report_verdict { SHOWN_HOLDS, SHOWN_FAILS, SHOWN_NODATA, SHOWN_ABSENT } report_verdict;

static report_verdict verdict_of(const dtb_claim_result *r)
{
    if (r->verdict == DTB_CLAIM_NODATA)
        return r->status == DTB_E_NOTFOUND ? SHOWN_ABSENT : SHOWN_NODATA;
    return r->verdict == DTB_CLAIM_HOLDS ? SHOWN_HOLDS : SHOWN_FAILS;
}

static const struct {
    const char *text, *json, *html_class;
} verdict_words[] = {
    [SHOWN_HOLDS] = {"holds", "holds", "holds"},
    [SHOWN_FAILS] = {"FAILS", "fails", "fails"},
    [SHOWN_NODATA] = {"MISSING DATA", "missing data", "nodata"},
    [SHOWN_ABSENT] = {"not checked", "not checked", "absent"},
};

/* The notation of a claim's report and the claim's own position written in it (a claim file
 * may give it in either notation). */
typedef struct shown {
    dtb_notation notation;
    char fen[DTB_CLAIM_FEN_SIZE]; /* POSITION claims */
} shown;

static shown shown_for(const dtb_claim *c, int texts)
{
    dtb_board b;
    dtb_board_init(&b, dtb_variant_find(c->variant));
    shown w = {.notation = texts == DTB_TEXTS_NUMERIC     ? DTB_NOTATION_NUMERIC
                           : texts == DTB_TEXTS_ALGEBRAIC ? DTB_NOTATION_ALGEBRAIC
                                                          : dtb_notation_of(&b)};
    dtb_pos p;
    dtb_error e;
    if (c->kind == DTB_CLAIM_POSITION &&
        (dtb_fen_read(&b, c->fen, &p, &e) != DTB_OK ||
         dtb_fen_write_in(&b, &p, w.notation, w.fen, sizeof w.fen) != DTB_OK))
        snprintf(w.fen, sizeof w.fen, "%s", c->fen); /* (read once already when loaded) */
    return w;
}

/* ---- text report -------------------------------------------------------------------------- */

static const char *wdl_word(dtb_wdl w) { return w == DTB_WIN ? "win" : w == DTB_LOSS ? "loss" : "draw"; }

/* "white to move: win in 31 plies" */
static void value_text(const char *fen, dtb_wdl wdl, int dtw, char *buf, size_t size)
{
    const char *side = fen[0] == 'B' ? "black" : "white";
    if (wdl == DTB_DRAW)
        snprintf(buf, size, "%s to move: draw", side);
    else
        snprintf(buf, size, "%s to move: %s in %d %s", side, wdl_word(wdl), dtw, dtw == 1 ? "ply" : "plies");
}

/* A position's answer under the rules (a claim with a clock): "under fmjd at clock 16 (16-move
 * rule, limit 32): cursed-win, rule distance 20 plies"; "" for a position of another claim. */
static void rule_text(const dtb_claim_position *p, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!p->ruled)
        return;
    const dtb_rule_answer *a = &p->rule;
    const int n = snprintf(buf, size, "under %s at clock %d (%s rule, limit %d): %s", a->rules, a->clock,
                           a->rule, a->limit, dtb_rule_category_name(a->category));
    if (a->plies >= 0 && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", rule distance %d %s", a->plies, a->plies == 1 ? "ply" : "plies");
}

static void print_position(const char *label, const dtb_claim_position *p)
{
    char v[96], rules[160];
    value_text(p->fen, p->wdl, p->dtw, v, sizeof v);
    rule_text(p, rules, sizeof rules);
    printf("    %s%s  (%s%s%s)\n", label, p->fen, v, rules[0] ? "; " : "", rules);
    if (p->line && p->line[0])
        printf("      line: %s\n", p->line);
}

static const char *side_words(dtb_claim_side s)
{
    return s == DTB_CLAIM_SIDE_WHITE ? "white to move" : s == DTB_CLAIM_SIDE_BLACK ? "black to move" : "either side to move";
}

static void print_counts(const dtb_claim *c, const dtb_claim_result *r)
{
    for (int side = 0; side < 2; side++) {
        const uint64_t *n = r->counts[side];
        if (n[0] + n[1] + n[2] == 0)
            continue;
        printf("  %s to move: %llu wins, %llu draws, %llu losses", side ? "black" : "white",
               (unsigned long long)n[2], (unsigned long long)n[1], (unsigned long long)n[0]);
        if (c->clock >= 0) {
            const uint64_t *k = r->categories[side];
            printf(" under the rules (the draws: %llu cursed wins, %llu blessed losses)",
                   (unsigned long long)k[DTB_RULE_CURSED_WIN + 2], (unsigned long long)k[DTB_RULE_BLESSED_LOSS + 2]);
        }
        printf("\n");
    }
}

/* "rules: fmjd, clock 16 (...)" for a claim with a clock, into buf; "" otherwise. */
static void claim_rules_text(const dtb_claim *c, char *buf, size_t size)
{
    buf[0] = '\0';
    if (c->clock >= 0)
        snprintf(buf, size, "%s, clock %d (values under the move-count rules, the count at %d %s)",
                 c->rules, c->clock, c->clock, c->clock == 1 ? "ply" : "plies");
}

static void print_claim_text(const dtb_claim *c, const dtb_claim_result *r, const shown *w)
{
    const report_verdict v = verdict_of(r);
    printf("%-5s %s  (%s:%d)\n", verdict_words[v].text, c->id, c->file, c->line);
    printf("  statement: %s\n  source: %s\n", c->statement, c->source);
    if (c->kind == DTB_CLAIM_POSITION) {
        printf("  position: %s %s\n", c->variant, w->fen);
    } else {
        printf("  positions: %s %s, %s", c->variant, c->material, side_words(c->side));
        for (int i = 0; i < c->nfilters; i++)
            printf("; %s", c->filters[i].text_in[w->notation]);
        printf("\n");
    }
    printf("  assert: %s\n", c->assertion.text);
    char rules[160];
    claim_rules_text(c, rules, sizeof rules);
    if (rules[0])
        printf("  rules: %s\n", rules);
    if (v == SHOWN_ABSENT || v == SHOWN_NODATA) {
        printf("  %s: %s\n\n", v == SHOWN_ABSENT ? "not checked: tables absent" : "missing data",
               r->reason);
        return;
    }
    if (c->kind == DTB_CLAIM_POSITION) {
        print_position("", &r->subject);
    } else {
        printf("  matched: %llu positions\n", (unsigned long long)r->matched);
        print_counts(c, r);
        if (r->longest >= 0)
            print_position(c->clock >= 0 ? "longest win under the rules: " : "longest win: ", &r->longest_pos);
        if (r->nexceptions) {
            printf("  exceptions (%d, listed in the claim):\n", r->nexceptions);
            for (int i = 0; i < r->nexceptions; i++)
                print_position("", &r->exceptions[i]);
        }
    }
    if (c->assertion.quant == DTB_QUANT_EXACTLY && r->nexamples) {
        static const char *phrase[] = {"a win",       "a draw",       "a loss",        "a white win",
                                       "a black win", "a cursed win", "a blessed loss"};
        printf("  the %llu positions that are %s (first %d):\n", (unsigned long long)r->ncounter,
               phrase[c->assertion.outcome], r->nexamples);
        for (int i = 0; i < r->nexamples; i++)
            print_position("", &r->examples[i]);
    }
    if (r->verdict == DTB_CLAIM_FAILS) {
        printf("  why: %s\n", r->reason);
        if (r->nexamples && c->assertion.quant != DTB_QUANT_EXACTLY) {
            const bool worst = c->assertion.quant == DTB_QUANT_LONGEST_WIN || c->assertion.bound_plies >= 0;
            printf("  counterexamples (%d of %llu, %s):\n", r->nexamples, (unsigned long long)r->ncounter,
                   worst ? "longest first" : "first found");
            for (int i = 0; i < r->nexamples; i++)
                print_position("", &r->examples[i]);
        }
    }
    printf("\n");
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_position(FILE *f, const dtb_claim_position *p)
{
    fprintf(f, "{\"fen\":");
    json_string(f, p->fen);
    fprintf(f, ",\"wdl\":\"%s\",\"dtw\":", wdl_word(p->wdl));
    if (p->wdl == DTB_DRAW)
        fprintf(f, "null");
    else
        fprintf(f, "%d", p->dtw);
    fprintf(f, ",\"line\":");
    json_string(f, p->line ? p->line : "");
    if (p->ruled) {
        const dtb_rule_answer *a = &p->rule;
        fprintf(f, ",\"rules\":{\"rules\":");
        json_string(f, a->rules);
        fprintf(f, ",\"rule\":");
        json_string(f, a->rule);
        fprintf(f, ",\"clock\":%d,\"limit\":%d,\"category\":\"%s\",\"plies\":", a->clock, a->limit,
                dtb_rule_category_name(a->category));
        if (a->plies >= 0)
            fprintf(f, "%d}", a->plies);
        else
            fprintf(f, "null}");
    }
    fprintf(f, "}");
}

static void json_claim(FILE *f, const dtb_claim *c, const dtb_claim_result *r, const shown *w,
                       bool first)
{
    fprintf(f, "%s{\"id\":", first ? "" : ",\n");
    json_string(f, c->id);
    fprintf(f, ",\"file\":");
    json_string(f, c->file);
    fprintf(f, ",\"line\":%d,\"variant\":", c->line);
    json_string(f, c->variant);
    fprintf(f, ",\"source\":");
    json_string(f, c->source);
    fprintf(f, ",\"statement\":");
    json_string(f, c->statement);
    if (c->kind == DTB_CLAIM_POSITION) {
        fprintf(f, ",\"position\":");
        json_string(f, w->fen);
    } else {
        fprintf(f, ",\"material\":");
        json_string(f, c->material);
        fprintf(f, ",\"side\":\"%s\",\"filters\":[",
                c->side == DTB_CLAIM_SIDE_WHITE ? "white" : c->side == DTB_CLAIM_SIDE_BLACK ? "black" : "any");
        for (int i = 0; i < c->nfilters; i++) {
            fprintf(f, "%s", i ? "," : "");
            json_string(f, c->filters[i].text_in[w->notation]);
        }
        fprintf(f, "]");
    }
    fprintf(f, ",\"assert\":");
    json_string(f, c->assertion.text);
    if (c->clock >= 0) { /* only for claims with a clock: the others' output stays as it was */
        fprintf(f, ",\"rules\":");
        json_string(f, c->rules);
        fprintf(f, ",\"clock\":%d", c->clock);
    }
    fprintf(f, ",\"notation\":\"%s\",\"verdict\":\"%s\",\"reason\":",
            w->notation == DTB_NOTATION_ALGEBRAIC ? "algebraic" : "numeric",
            verdict_words[verdict_of(r)].json);
    json_string(f, r->reason);
    fprintf(f, ",\"matched\":%llu,\"counts\":{", (unsigned long long)r->matched);
    for (int side = 0; side < 2; side++)
        fprintf(f, "%s\"%s\":{\"win\":%llu,\"draw\":%llu,\"loss\":%llu}", side ? "," : "",
                side ? "black" : "white", (unsigned long long)r->counts[side][2],
                (unsigned long long)r->counts[side][1], (unsigned long long)r->counts[side][0]);
    fprintf(f, "}");
    if (c->clock >= 0) {
        fprintf(f, ",\"categories\":{");
        for (int side = 0; side < 2; side++) {
            fprintf(f, "%s\"%s\":{", side ? "," : "", side ? "black" : "white");
            for (int k = DTB_RULE_LOSS; k <= DTB_RULE_WIN; k++)
                fprintf(f, "%s\"%s\":%llu", k > DTB_RULE_LOSS ? "," : "",
                        dtb_rule_category_name((dtb_rule_category)k),
                        (unsigned long long)r->categories[side][k + 2]);
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, ",\"longest_win\":");
    if (c->kind == DTB_CLAIM_MATERIAL && r->longest >= 0 && r->verdict != DTB_CLAIM_NODATA)
        json_position(f, &r->longest_pos);
    else
        fprintf(f, "null");
    fprintf(f, ",\"subject\":");
    if (c->kind == DTB_CLAIM_POSITION && r->verdict != DTB_CLAIM_NODATA)
        json_position(f, &r->subject);
    else
        fprintf(f, "null");
    fprintf(f, ",\"exceptions\":[");
    for (int i = 0; i < r->nexceptions; i++) {
        fprintf(f, "%s", i ? "," : "");
        json_position(f, &r->exceptions[i]);
    }
    fprintf(f, "],\"examples_are\":\"%s\",\"examples_total\":%llu,\"examples\":[",
            c->assertion.quant == DTB_QUANT_EXACTLY ? "instances" : "counterexamples",
            (unsigned long long)r->ncounter);
    for (int i = 0; i < r->nexamples; i++) {
        fprintf(f, "%s", i ? "," : "");
        json_position(f, &r->examples[i]);
    }
    fprintf(f, "]}");
}

/* ---- HTML ---------------------------------------------------------------------------------- */

static void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

#define CELL 32

/* The board of fen as an inline SVG: dark squares with their numbers, men as discs, kings as
 * discs with a ring and a crown letter K. White at the bottom (white men move up). */
static void svg_board(FILE *f, const char *variant, const char *fen, dtb_notation n)
{
    const dtb_variant *v = dtb_variant_find(variant);
    dtb_board b;
    dtb_board_init(&b, v);
    dtb_pos p = {{0}, {0}, DTB_WHITE};
    dtb_error e;
    const bool ok = dtb_fen_read(&b, fen, &p, &e) == DTB_OK;
    const int side = b.size * CELL;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"board\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
            side, side, side, side);
    html_text(f, fen);
    fprintf(f, "\">\n<rect width=\"%d\" height=\"%d\" fill=\"#f3e3c3\"/>\n", side, side);
    for (int row = 0; row < b.size; row++)
        for (int col = 0; col < b.size; col++) {
            const int sq = dtb_board_square(&b, row, col);
            if (sq < 0)
                continue;
            const int x = col * CELL, y = row * CELL;
            char label[16];
            if (n == DTB_NOTATION_ALGEBRAIC)
                dtb_square_name(&b, sq, label);
            else
                snprintf(label, sizeof label, "%d", sq + 1);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#a0714f\"/>"
                       "<text x=\"%d\" y=\"%d\" font-size=\"8\" fill=\"#f3e3c3\">%s</text>\n",
                    x, y, CELL, CELL, x + 2, y + 9, label);
            if (!ok)
                continue;
            const dtb_bb bit = dtb_bb_bit(sq);
            const bool white = (p.men[DTB_WHITE] | p.kings[DTB_WHITE]) & bit;
            const bool black = (p.men[DTB_BLACK] | p.kings[DTB_BLACK]) & bit;
            if (!white && !black)
                continue;
            const bool king = (p.kings[DTB_WHITE] | p.kings[DTB_BLACK]) & bit;
            const char *fill = white ? "#fbfbf4" : "#1d1d1d";
            const char *ink = white ? "#1d1d1d" : "#fbfbf4";
            const int cx = x + CELL / 2, cy = y + CELL / 2 + 1;
            fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\"/>",
                    cx, cy, CELL / 2 - 4, fill, white ? "#1d1d1d" : "#777");
            if (king)
                fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>"
                           "<text x=\"%d\" y=\"%d\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"%s\">K</text>",
                        cx, cy, CELL / 2 - 8, ink, cx, cy + 4, ink);
            fprintf(f, "\n");
        }
    if (!ok) {
        fprintf(f, "<text x=\"4\" y=\"%d\" font-size=\"12\" fill=\"red\">unreadable FEN: ", side / 2);
        html_text(f, e.msg);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
}

static void html_figure(FILE *f, const char *variant, dtb_notation n, const char *label,
                        const char *fen, const dtb_claim_position *p)
{
    fprintf(f, "<figure class=\"position\" data-fen=\"");
    html_text(f, fen);
    fprintf(f, "\">\n");
    svg_board(f, variant, fen, n);
    fprintf(f, "<figcaption><b>");
    html_text(f, label);
    fprintf(f, "</b> <code>");
    html_text(f, fen);
    fprintf(f, "</code>");
    if (p) {
        char v[96], rules[160];
        value_text(p->fen, p->wdl, p->dtw, v, sizeof v);
        rule_text(p, rules, sizeof rules);
        fprintf(f, "<br/>");
        html_text(f, v);
        if (rules[0]) {
            fprintf(f, "<br/>");
            html_text(f, rules);
        }
        if (p->line && p->line[0]) {
            fprintf(f, "<br/>line: <code>");
            html_text(f, p->line);
            fprintf(f, "</code>");
        }
    }
    fprintf(f, "</figcaption>\n</figure>\n");
}

/* Memory streams of the HTML report: per verdict, the claims' sections and their entries in
 * the table of contents. */
typedef struct report_buffers {
    FILE *sections[4], *toc[4];
    char *text[8];
    size_t len[8];
} report_buffers;

static bool report_buffers_open(report_buffers *rb)
{
    for (int i = 0; i < 4; i++) {
        rb->sections[i] = open_memstream(&rb->text[i], &rb->len[i]);
        rb->toc[i] = open_memstream(&rb->text[4 + i], &rb->len[4 + i]);
        if (!rb->sections[i] || !rb->toc[i])
            return false;
    }
    return true;
}

static void html_toc_entry(FILE *f, const dtb_claim *c)
{
    fprintf(f, "<li><a href=\"#");
    html_text(f, c->id);
    fprintf(f, "\">");
    html_text(f, c->id);
    fprintf(f, "</a>: ");
    html_text(f, c->statement);
    fprintf(f, "</li>\n");
}

/* The summary, the table of contents and the sections into f, in the order a reader needs them:
 * failing claims, claims without data, holding claims, then those not checked; frees rb. */
static bool report_buffers_write(report_buffers *rb, FILE *f, const char *summary)
{
    static const report_verdict order[4] = {SHOWN_FAILS, SHOWN_NODATA, SHOWN_HOLDS, SHOWN_ABSENT};
    static const char *const titles[4] = {
        [SHOWN_FAILS] = "Failing", [SHOWN_NODATA] = "Missing data", [SHOWN_HOLDS] = "Holding",
        [SHOWN_ABSENT] = "Not checked (tables absent)"};
    bool ok = true;
    for (int i = 0; i < 4; i++) {
        ok &= rb->sections[i] && fclose(rb->sections[i]) == 0;
        ok &= rb->toc[i] && fclose(rb->toc[i]) == 0;
    }
    if (ok) {
        fprintf(f, "<p class=\"summary\">%s.</p>\n<nav>\n<h2>Contents</h2>\n", summary);
        for (int k = 0; k < 4; k++) {
            const int v = order[k];
            if (rb->len[4 + v])
                fprintf(f, "<h3><span class=\"verdict %s\">%s</span></h3>\n<ul>\n%s</ul>\n",
                        verdict_words[v].html_class, titles[v], rb->text[4 + v]);
        }
        fprintf(f, "</nav>\n");
        for (int k = 0; k < 4; k++)
            if (rb->len[order[k]])
                fwrite(rb->text[order[k]], 1, rb->len[order[k]], f);
    }
    for (int i = 0; i < 8; i++)
        free(rb->text[i]);
    return ok;
}

static void html_head(FILE *f, const char *tables)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
               "<title>dtb: textbook claims</title>\n<style>\n"
               "body{font-family:sans-serif;max-width:75em;margin:1em auto;padding:0 1em;color:#222;"
               "overflow-wrap:anywhere}\n"
               "svg.board{max-width:100%%;height:auto}\n"
               ".summary{font-size:1.2em;font-weight:bold}nav li{margin:.15em 0}\n"
               "@media (max-width:600px){dt{float:none;width:auto}dd{margin-left:1em}"
               "figure.position{margin-right:0}}\n"
               "section{border-top:1px solid #ccc;padding:.5em 0}\n"
               ".verdict{font-weight:bold;padding:0 .4em;border-radius:3px;color:#fff}\n"
               ".holds{background:#2e7d32}.fails{background:#c62828}.nodata{background:#ef6c00}.absent{background:#757575}\n"
               "figure.position{display:inline-block;vertical-align:top;margin:.5em 1em .5em 0;max-width:min(24em,100%%)}\n"
               "figcaption{font-size:.85em;word-wrap:break-word}\n"
               "table.counts td,table.counts th{padding:0 .6em;text-align:right}\n"
               "dt{font-weight:bold;float:left;clear:left;width:7em}dd{margin-left:8em}\n"
               "</style>\n</head>\n<body>\n<h1>Textbook claims checked against the tables</h1>\n<p>Tables: <code>");
    html_text(f, tables);
    fprintf(f, "</code>. Values are for the side to move; distances (DTW) are plies to the end of the "
               "game with the winner's quickest and the loser's longest play; a \"move\" in an "
               "assertion is one move of each side (N moves = 2N plies).</p>\n");
}

static void html_claim(FILE *f, const dtb_claim *c, const dtb_claim_result *r, const shown *w)
{
    const report_verdict v = verdict_of(r);
    fprintf(f, "<section class=\"claim\" id=\"");
    html_text(f, c->id);
    fprintf(f, "\">\n<h2><span class=\"verdict %s\">%s</span> ", verdict_words[v].html_class,
            verdict_words[v].json);
    html_text(f, c->id);
    fprintf(f, "</h2>\n<dl>\n<dt>statement</dt><dd>");
    html_text(f, c->statement);
    fprintf(f, "</dd>\n<dt>source</dt><dd>");
    html_text(f, c->source);
    fprintf(f, "</dd>\n<dt>positions</dt><dd>");
    html_text(f, c->variant);
    fprintf(f, " ");
    if (c->kind == DTB_CLAIM_POSITION) {
        html_text(f, w->fen);
    } else {
        html_text(f, c->material);
        fprintf(f, ", %s", side_words(c->side));
        for (int i = 0; i < c->nfilters; i++) {
            fprintf(f, "; ");
            html_text(f, c->filters[i].text_in[w->notation]);
        }
    }
    fprintf(f, "</dd>\n<dt>assert</dt><dd>");
    html_text(f, c->assertion.text);
    char rules[160];
    claim_rules_text(c, rules, sizeof rules);
    if (rules[0]) {
        fprintf(f, "</dd>\n<dt>rules</dt><dd>");
        html_text(f, rules);
    }
    fprintf(f, "</dd>\n<dt>file</dt><dd>");
    html_text(f, c->file);
    fprintf(f, ":%d</dd>\n", c->line);
    if (r->verdict != DTB_CLAIM_HOLDS) {
        fprintf(f, "<dt>%s</dt><dd>", v == SHOWN_FAILS ? "why" : v == SHOWN_ABSENT ? "tables absent" : "missing");
        html_text(f, r->reason);
        fprintf(f, "</dd>\n");
    }
    fprintf(f, "</dl>\n");
    if (r->verdict == DTB_CLAIM_NODATA) {
        if (c->kind == DTB_CLAIM_POSITION)
            html_figure(f, c->variant, w->notation, "position", w->fen, NULL);
        fprintf(f, "</section>\n");
        return;
    }
    if (c->kind == DTB_CLAIM_MATERIAL) {
        const bool ruled = c->clock >= 0;
        fprintf(f, "<table class=\"counts\"><tr><th>to move</th><th>wins</th><th>draws</th><th>losses</th>%s</tr>\n",
                ruled ? "<th>of the draws: cursed wins</th><th>blessed losses</th>" : "");
        for (int side = 0; side < 2; side++) {
            const uint64_t *n = r->counts[side];
            if (!(n[0] + n[1] + n[2]))
                continue;
            fprintf(f, "<tr><td>%s</td><td>%llu</td><td>%llu</td><td>%llu</td>", side ? "black" : "white",
                    (unsigned long long)n[2], (unsigned long long)n[1], (unsigned long long)n[0]);
            if (ruled)
                fprintf(f, "<td>%llu</td><td>%llu</td>",
                        (unsigned long long)r->categories[side][DTB_RULE_CURSED_WIN + 2],
                        (unsigned long long)r->categories[side][DTB_RULE_BLESSED_LOSS + 2]);
            fprintf(f, "</tr>\n");
        }
        fprintf(f, "</table>\n<p>%llu positions matched.</p>\n", (unsigned long long)r->matched);
    }
    fprintf(f, "<div class=\"diagrams\">\n");
    if (c->kind == DTB_CLAIM_POSITION)
        html_figure(f, c->variant, w->notation, "position", r->subject.fen, &r->subject);
    if (c->kind == DTB_CLAIM_MATERIAL && r->longest >= 0)
        html_figure(f, c->variant, w->notation, c->clock >= 0 ? "longest win under the rules" : "longest win",
                    r->longest_pos.fen, &r->longest_pos);
    for (int i = 0; i < r->nexceptions; i++) {
        char label[48];
        snprintf(label, sizeof label, "exception %d", i + 1);
        html_figure(f, c->variant, w->notation, label, r->exceptions[i].fen, &r->exceptions[i]);
    }
    for (int i = 0; i < r->nexamples; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s %d of %llu",
                 c->assertion.quant == DTB_QUANT_EXACTLY ? dtb_claim_outcome_name(c->assertion.outcome)
                                                         : "counterexample",
                 i + 1, (unsigned long long)r->ncounter);
        html_figure(f, c->variant, w->notation, label, r->examples[i].fen, &r->examples[i]);
    }
    fprintf(f, "</div>\n</section>\n");
}

/* ---- the command --------------------------------------------------------------------------- */

int dtbprobe_verify_main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;

    dtb_claims *set = dtb_claims_new();
    if (!set) {
        fprintf(stderr, "dtbprobe: verify: out of memory\n");
        return EXIT_FAIL;
    }
    bool ok = true;
    if (o.nfiles == 0) {
        const char *env = getenv("DTB_CLAIMS");
        ok = add_path(set, env && *env ? env : "tables/claims");
    }
    for (int i = 0; i < o.nfiles; i++)
        ok = add_path(set, o.files[i]) && ok;
    for (int i = 0; ok && i < o.nids; i++) {
        bool found = false;
        for (int k = 0; k < dtb_claims_count(set) && !found; k++)
            found = strcmp(dtb_claims_at(set, k)->id, o.ids[i]) == 0;
        if (!found) {
            fprintf(stderr, "dtbprobe: verify: no claim '%s' in the files read\n", o.ids[i]);
            ok = false;
        }
    }
    if (!ok) {
        dtb_claims_free(set);
        return EXIT_FAIL;
    }

    const char *tables = o.tables ? o.tables : getenv("DTB_PATH");
    if (!tables || !*tables)
        tables = "tables";
    char *dirlist = strdup(tables);
    const char *dirs[MAX_DIRS];
    int ndirs = 0;
    for (char *s = dirlist ? strtok(dirlist, ":") : NULL; s && ndirs < MAX_DIRS; s = strtok(NULL, ":"))
        dirs[ndirs++] = s;
    if (ndirs == 0) {
        free(dirlist);
        dtb_claims_free(set);
        return dtb_cli_usage_error("dtbprobe", "verify", "no table directory given");
    }

    FILE *html = NULL;
    if (o.html) {
        html = fopen(o.html, "w");
        if (!html) {
            fprintf(stderr, "dtbprobe: verify: cannot write '%s'\n", o.html);
            free(dirlist);
            dtb_claims_free(set);
            return EXIT_FAIL;
        }
        html_head(html, tables);
    }
    /* The report's claims are grouped by verdict, those that need a look first, under a summary
     * and a table of contents; so each claim's section and contents entry is kept in its
     * verdict's buffer until all are known. */
    report_buffers rb = {0};
    if (html && !report_buffers_open(&rb)) {
        fprintf(stderr, "dtbprobe: verify: out of memory\n");
        fclose(html);
        free(dirlist);
        dtb_claims_free(set);
        return EXIT_FAIL;
    }

    const int n = dtb_claims_count(set);
    variant_db dbs[16];
    int ndbs = 0;
    int counted[4] = {0}, run = 0; /* by report_verdict */
    const bool tty = isatty(2) && !o.json;
    if (o.json)
        printf("{\"claims\":[\n");
    for (int i = 0; i < n; i++) {
        const dtb_claim *c = dtb_claims_at(set, i);
        bool wanted = o.nids == 0;
        for (int k = 0; k < o.nids && !wanted; k++)
            wanted = strcmp(o.ids[k], c->id) == 0;
        if (!wanted)
            continue;
        dtb_claim_result r;
        memset(&r, 0, sizeof r);
        variant_db *v = ndbs < 16 ? db_for(dbs, &ndbs, c->variant, dirs, ndirs, o.texts) : NULL;
        if (!v || v->status != DTB_OK) {
            r.verdict = DTB_CLAIM_NODATA;
            r.status = v ? v->status : DTB_E_NOMEM;
            r.longest = -1;
            snprintf(r.reason, sizeof r.reason, "%s", v ? v->message : "too many variants");
        } else {
            progress pr = {c->id, -1};
            const dtb_claim_eval_options eo = {.max_examples = (int)o.examples, .lines = true,
                                               .progress = tty ? show_progress : NULL, .user = &pr};
            const dtb_status s = dtb_claim_evaluate(v->db, c, &eo, &r);
            if (tty && pr.last >= 0)
                fprintf(stderr, "\r%*s\r", (int)strlen(c->id) + 6, "");
            if (s != DTB_OK && r.verdict != DTB_CLAIM_NODATA) {
                r.verdict = DTB_CLAIM_NODATA;
                r.status = s;
                snprintf(r.reason, sizeof r.reason, "%s", dtb_strerror(s));
            }
        }
        counted[verdict_of(&r)]++;
        const shown w = shown_for(c, o.texts);
        if (o.json)
            json_claim(stdout, c, &r, &w, run == 0);
        else if (!o.quiet || r.verdict != DTB_CLAIM_HOLDS)
            print_claim_text(c, &r, &w);
        if (html) {
            const report_verdict rv = verdict_of(&r);
            html_claim(rb.sections[rv], c, &r, &w);
            html_toc_entry(rb.toc[rv], c);
        }
        run++;
        fflush(stdout);
        dtb_claim_result_free(&r);
    }
    char summary[200];
    snprintf(summary, sizeof summary, "%d claims: %d hold, %d fail, %d missing data, %d not checked (tables absent)",
             run, counted[SHOWN_HOLDS], counted[SHOWN_FAILS], counted[SHOWN_NODATA], counted[SHOWN_ABSENT]);
    if (o.json)
        printf("\n],\"holds\":%d,\"fails\":%d,\"missing_data\":%d,\"not_checked\":%d}\n",
               counted[SHOWN_HOLDS], counted[SHOWN_FAILS], counted[SHOWN_NODATA], counted[SHOWN_ABSENT]);
    else
        printf("%s\n", summary);
    bool failed = counted[SHOWN_FAILS] || counted[SHOWN_NODATA] || (counted[SHOWN_ABSENT] && !o.skip_absent);
    if (html) {
        if (!report_buffers_write(&rb, html, summary))
            failed = true;
        fprintf(html, "</body>\n</html>\n");
        if (fclose(html) != 0) {
            fprintf(stderr, "dtbprobe: verify: cannot write '%s'\n", o.html);
            failed = true;
        }
    }
    for (int i = 0; i < ndbs; i++)
        dtb_close(dbs[i].db);
    free(dirlist);
    dtb_claims_free(set);
    return failed ? EXIT_FAIL : 0;
}
