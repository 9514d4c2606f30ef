/* The option parser of the command lines (dtbprobe, its verify command, dtbgen): one syntax and
 * one set of messages for all of them. A command describes its options in a table of
 * dtb_cli_option; dtb_cli_parse fills a dtb_cli_args from argv, and dtb_cli_print_options shows
 * the same table in --help, so the two cannot disagree.
 *
 * Syntax: "--name value" or "--name=value"; "--" ends the options; a word not starting with '-'
 * (or a lone "-") is a positional argument; "--help" and "-h" ask for help anywhere.
 *
 * Usage:
 *     enum { OPT_TABLES, OPT_JSON };
 *     static const dtb_cli_option opts[] = {
 *         [OPT_TABLES] = {"--tables", DTB_CLI_TEXT, "DIR", "table directories"},
 *         [OPT_JSON] = {"--json", DTB_CLI_FLAG, NULL, "machine-readable output"},
 *     };
 *     dtb_cli_args a;
 *     switch (dtb_cli_parse(opts, 2, 16, argc - 1, argv + 1, &a)) {
 *     case DTB_CLI_HELP: print the synopsis, then dtb_cli_print_options(stdout, opts, 2); exit 0
 *     case DTB_CLI_USAGE: return dtb_cli_usage_error("prog", NULL, a.error);          exit 2
 *     case DTB_CLI_OK: a.given[OPT_JSON], a.text[OPT_TABLES], a.positional[0..npositional)
 *     }
 *
 * Part of the command lines, not of libdtb: dtb_cli_usage_error prints. */
#ifndef DTB_CLI_OPTIONS_H
#define DTB_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* What an option takes. */
typedef enum dtb_cli_kind {
    DTB_CLI_FLAG, /* no value */
    DTB_CLI_TEXT, /* any text */
    DTB_CLI_INT,  /* a whole number within [min, max] */
    DTB_CLI_REAL, /* a number > 0 (a size, a budget) */
    DTB_CLI_NAME, /* a name read without regard to case ("Russian"): text holds it in lower case,
                     in storage of the parser's that lasts as long as the program */
} dtb_cli_kind;

typedef struct dtb_cli_option {
    const char *name;    /* "--variant" */
    dtb_cli_kind kind;
    const char *metavar; /* the value's name in --help ("DIR"); NULL for flags */
    const char *help;    /* one line */
    long min, max;       /* DTB_CLI_INT: accepted range; both 0: any int */
    bool repeat;         /* may be given several times; every value is kept (dtb_cli_values) */
} dtb_cli_option;

enum {
    DTB_CLI_MAX_OPTIONS = 32,
    DTB_CLI_MAX_POSITIONAL = 1024,
    DTB_CLI_MAX_REPEATED = 256, /* values of repeatable options, over all of them */
};

/* What a command line said, by index in the option table. */
typedef struct dtb_cli_args {
    int count[DTB_CLI_MAX_OPTIONS];          /* times given (0: absent) */
    const char *text[DTB_CLI_MAX_OPTIONS];   /* the last value given (TEXT, INT, REAL, NAME) */
    long number[DTB_CLI_MAX_OPTIONS];        /* DTB_CLI_INT: the last value */
    double real[DTB_CLI_MAX_OPTIONS];        /* DTB_CLI_REAL: the last value */
    bool given[DTB_CLI_MAX_OPTIONS];         /* count > 0 */
    int repeated_option[DTB_CLI_MAX_REPEATED];
    const char *repeated[DTB_CLI_MAX_REPEATED]; /* values of repeatable options, in argv order */
    int nrepeated;
    const char *positional[DTB_CLI_MAX_POSITIONAL];
    int npositional;
    char error[256]; /* DTB_CLI_USAGE: what is wrong, one line without the program's name */
} dtb_cli_args;

typedef enum dtb_cli_result {
    DTB_CLI_OK,    /* parsed; run the command */
    DTB_CLI_HELP,  /* --help or -h was given */
    DTB_CLI_USAGE, /* a usage error, described in args->error */
} dtb_cli_result;

/* Parses argv[0..argc) (the words after the program or command name) against opts[0..n)
 * (n <= DTB_CLI_MAX_OPTIONS) into *a, accepting up to max_positional positional arguments.
 * Errors: an unknown option, a missing value, a value given to a flag, a number that does not
 * parse or lies outside its range, too many positional arguments or repeated values. */
dtb_cli_result dtb_cli_parse(const dtb_cli_option *opts, int n, int max_positional, int argc,
                             char *const *argv, dtb_cli_args *a);

/* The values given for option k (repeatable or not), in argv order, into out[0..cap); returns
 * how many there are (may exceed cap). */
int dtb_cli_values(const dtb_cli_args *a, int k, const char **out, int cap);

/* Writes the option table as --help shows it: one line per option, and "--help" when the table
 * has none. */
void dtb_cli_print_options(FILE *f, const dtb_cli_option *opts, int n);

/* Prints "prog: [cmd: ]message" and "try 'prog [cmd ]--help'" on stderr; returns 2, the exit
 * status of a usage error. */
int dtb_cli_usage_error(const char *prog, const char *cmd, const char *message);

/* The version every command line prints for --version ("0.2.0"): DTB_VERSION_STRING of dtb.h,
 * the one place the project's version is written. */
const char *dtb_cli_version(void);

#endif
