/* The command lines' option parser (cli_options.h). One pass over argv: each word is a
 * positional argument, "--", help, or an option looked up by name in the table; values are
 * converted and range-checked at once, so a command's run function sees only valid input. */
#include "cli_options.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dtb.h" /* DTB_VERSION_STRING only: the command lines need not link libdtb */

static dtb_cli_result fail(dtb_cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static dtb_cli_result fail(dtb_cli_args *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
    return DTB_CLI_USAGE;
}

static int find_option(const dtb_cli_option *opts, int n, const char *name, size_t len)
{
    for (int k = 0; k < n; k++)
        if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
            return k;
    return -1;
}

/* Converts and checks value for option k. */
static dtb_cli_result take_value(const dtb_cli_option *o, int k, const char *value, dtb_cli_args *a)
{
    a->text[k] = value;
    char *end;
    errno = 0;
    switch (o->kind) {
    case DTB_CLI_INT: {
        const long v = strtol(value, &end, 10);
        if (errno || end == value || *end != '\0' || v < INT_MIN || v > INT_MAX)
            return fail(a, "%s: '%s' is not a number", o->name, value);
        if ((o->min || o->max) && (v < o->min || v > o->max)) {
            if (o->min == 1 && o->max == INT_MAX)
                return fail(a, "%s: '%s' is not a positive number", o->name, value);
            return fail(a, "%s: '%s' is not a number %ld..%ld", o->name, value, o->min, o->max);
        }
        a->number[k] = v;
        break;
    }
    case DTB_CLI_REAL: {
        const double v = strtod(value, &end);
        if (errno || end == value || *end != '\0' || !(v > 0) || !isfinite(v))
            return fail(a, "%s: '%s' is not a positive number%s%s", o->name, value,
                        o->metavar ? " of " : "", o->metavar ? o->metavar : "");
        a->real[k] = v;
        break;
    }
    case DTB_CLI_NAME: {
        /* Like argv's own texts, a value outlives the dtb_cli_args (callers keep a->text[k] and
         * free a): static storage, one per option index (a command line is parsed once). */
        static char lowered[DTB_CLI_MAX_OPTIONS][32];
        const size_t len = strlen(value);
        if (len >= sizeof lowered[k])
            return fail(a, "%s: '%.40s...' is too long for a name", o->name, value);
        for (size_t i = 0; i <= len; i++)
            lowered[k][i] = (char)tolower((unsigned char)value[i]);
        a->text[k] = lowered[k];
        break;
    }
    case DTB_CLI_TEXT:
    case DTB_CLI_FLAG:
        break;
    }
    return DTB_CLI_OK;
}

dtb_cli_result dtb_cli_parse(const dtb_cli_option *opts, int n, int max_positional, int argc,
                             char *const *argv, dtb_cli_args *a)
{
    assert(n >= 0 && n <= DTB_CLI_MAX_OPTIONS);
    assert(max_positional >= 0 && max_positional <= DTB_CLI_MAX_POSITIONAL);
    memset(a, 0, sizeof *a);
    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (options_done || w[0] != '-' || w[1] == '\0') {
            if (a->npositional >= max_positional)
                return fail(a, "unexpected argument '%s'", w);
            a->positional[a->npositional++] = w;
            continue;
        }
        if (strcmp(w, "--") == 0) {
            options_done = true;
            continue;
        }
        const char *eq = strchr(w, '=');
        const size_t len = eq ? (size_t)(eq - w) : strlen(w);
        const int k = find_option(opts, n, w, len);
        if (k < 0) {
            if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0)
                return DTB_CLI_HELP;
            if (len == 6 && strncmp(w, "--help", 6) == 0)
                return fail(a, "--help takes no value");
            return fail(a, "unknown option %.*s", (int)(len < 64 ? len : 64), w);
        }
        const dtb_cli_option *o = &opts[k];
        const char *value = NULL;
        if (o->kind == DTB_CLI_FLAG) {
            if (eq)
                return fail(a, "%s takes no value", o->name);
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return fail(a, "%s needs a value", o->name);
        }
        a->count[k]++;
        a->given[k] = true;
        if (value) {
            const dtb_cli_result r = take_value(o, k, value, a);
            if (r != DTB_CLI_OK)
                return r;
        }
        if (o->repeat) {
            if (a->nrepeated == DTB_CLI_MAX_REPEATED)
                return fail(a, "%s: given more than %d times", o->name, DTB_CLI_MAX_REPEATED);
            a->repeated_option[a->nrepeated] = k;
            a->repeated[a->nrepeated++] = value;
        }
    }
    return DTB_CLI_OK;
}

int dtb_cli_values(const dtb_cli_args *a, int k, const char **out, int cap)
{
    int found = 0;
    for (int i = 0; i < a->nrepeated; i++)
        if (a->repeated_option[i] == k) {
            if (found < cap)
                out[found] = a->repeated[i];
            found++;
        }
    if (found == 0 && a->given[k] && a->text[k]) { /* a non-repeatable option: its last value */
        if (cap > 0)
            out[0] = a->text[k];
        found = 1;
    }
    return found;
}

void dtb_cli_print_options(FILE *f, const dtb_cli_option *opts, int n)
{
    bool help = false;
    for (int k = 0; k < n; k++) {
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", opts[k].name, opts[k].metavar ? " " : "",
                 opts[k].metavar ? opts[k].metavar : "");
        fprintf(f, "  %-16s %s\n", left, opts[k].help);
        help = help || strcmp(opts[k].name, "--help") == 0;
    }
    if (!help)
        fprintf(f, "  %-16s %s\n", "--help", "this text");
}

int dtb_cli_usage_error(const char *prog, const char *cmd, const char *message)
{
    fprintf(stderr, "%s: %s%s%s\ntry '%s %s%s--help'\n", prog, cmd ? cmd : "", cmd ? ": " : "",
            message, prog, cmd ? cmd : "", cmd ? " " : "");
    return 2;
}

const char *dtb_cli_version(void)
{
    return DTB_VERSION_STRING;
}
