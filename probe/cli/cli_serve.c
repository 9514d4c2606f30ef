/* `dtbprobe serve` (cli_serve.h): options, the address to open, the server's messages, and the
 * wait for SIGINT or SIGTERM; the serving itself is probe/server/server.c. */
#define _POSIX_C_SOURCE 200809L

#include "cli_serve.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "server.h"

enum { EXIT_INPUT = 1, MAX_DIRS = 16 };

enum { OPT_TABLES, OPT_BIND, OPT_PORT, OPT_THREADS, OPT_CACHE, OPT_TIMEOUT, OPT_PER_ADDRESS, OPT_WEB, OPT_QUIET, NOPTIONS };
static const dtb_cli_option serve_options[NOPTIONS] = {
    [OPT_TABLES] = {"--tables", DTB_CLI_TEXT, "DIR", "table directories, ':'-separated (default: $DTB_PATH, else tables)"},
    [OPT_BIND] = {"--bind", DTB_CLI_TEXT, "ADDR", "address to listen on (default 127.0.0.1; :: or 0.0.0.0 for all)"},
    [OPT_PORT] = {"--port", DTB_CLI_INT, "P", "port (default 8428; 0: any free port)", 0, 65535},
    [OPT_THREADS] = {"--threads", DTB_CLI_INT, "T", "threads answering requests (default: the cores)", 1, 256},
    [OPT_CACHE] = {"--cache", DTB_CLI_INT, "MIB", "block cache per variant in MiB (default 256)", 1, 1L << 20},
    [OPT_TIMEOUT] = {"--timeout", DTB_CLI_INT, "S", "seconds a request has to arrive whole, however slowly it trickles (default 10)", 1, 3600},
    [OPT_PER_ADDRESS] = {"--per-address", DTB_CLI_INT, "N", "connections at once from one client address (default 64)", 1, 1024},
    [OPT_WEB] = {"--web", DTB_CLI_TEXT, "DIR", "the web page's files (default: those of this build)"},
    [OPT_QUIET] = {"--quiet", DTB_CLI_FLAG, NULL, "print only the address"},
};

static void help(FILE *f)
{
    fprintf(f, "usage: dtbprobe serve " DTBPROBE_SERVE_SYNOPSIS "\n"
               "Serves the tables over HTTP until interrupted (Ctrl-C, SIGTERM):\n"
               "  GET /api/variants             the variants, boards and piece counts of the tables\n"
               "  GET /api/<variant>?fen=<FEN>  the JSON object of 'dtbprobe --json' for that position\n"
               "  GET /                         a web page: a board, its value, every move ranked\n"
               "Errors are JSON {\"error\": ...} with status 400 (bad FEN) or 404 (no such table).\n\n"
               "options:\n");
    dtb_cli_print_options(f, serve_options, NOPTIONS);
    fprintf(f, "\nexit status: 0 stopped by a signal, 1 bad input or data, 2 usage error\n");
}

static void print_log(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "dtbprobe: serve: %s\n", msg);
}

/* Serves until SIGINT or SIGTERM with the configuration of the options. */
static int serve(const dtb_server_config *cf, bool quiet)
{
    /* The signals that stop the server are taken by sigwait below, in this thread only: blocked
     * before the server starts its threads, which inherit the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client that hangs up mid-answer is not a reason to stop */
    dtb_server *sv;
    dtb_error e = {{0}};
    if (dtb_server_start(cf, &sv, &e) != DTB_OK) {
        fprintf(stderr, "dtbprobe: serve: %s\n", e.msg);
        return EXIT_INPUT;
    }
    const bool v6 = strchr(cf->bind, ':') != NULL;
    const bool any = strcmp(cf->bind, "0.0.0.0") == 0 || strcmp(cf->bind, "::") == 0;
    printf("http://%s%s%s:%u/\n", v6 && !any ? "[" : "", any ? "localhost" : cf->bind,
           v6 && !any ? "]" : "", dtb_server_port(sv));
    fflush(stdout);
    if (!quiet) {
        const char *names[8];
        int pieces[8];
        const int n = dtb_server_variants(sv, names, pieces, 8);
        fprintf(stderr, "dtbprobe: serve: open the address above; tables of");
        for (int i = 0; i < n && i < 8; i++)
            fprintf(stderr, "%s %s (2..%d)", i ? "," : "", names[i], pieces[i]);
        fprintf(stderr, "; Ctrl-C stops\n");
    }
    int sig;
    while (sigwait(&stop, &sig) != 0)
        ;
    const unsigned long long requests = dtb_server_requests(sv);
    dtb_server_stop(sv);
    if (!quiet)
        fprintf(stderr, "dtbprobe: serve: stopped after %llu requests\n", requests);
    return 0;
}

int dtbprobe_serve_main(int argc, char **argv)
{
    dtb_cli_args *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "dtbprobe: serve: out of memory\n");
        return EXIT_INPUT;
    }
    int rc;
    switch (dtb_cli_parse(serve_options, NOPTIONS, 0, argc, argv, a)) {
    case DTB_CLI_HELP:
        help(stdout);
        rc = 0;
        break;
    case DTB_CLI_USAGE:
        rc = dtb_cli_usage_error("dtbprobe", "serve", a->error);
        break;
    default: {
        const char *tables = a->given[OPT_TABLES] ? a->text[OPT_TABLES] : getenv("DTB_PATH");
        char *list = strdup(tables && *tables ? tables : "tables");
        const char *dirs[MAX_DIRS];
        int ndirs = 0;
        for (char *s = list ? strtok(list, ":") : NULL; s && ndirs < MAX_DIRS; s = strtok(NULL, ":"))
            dirs[ndirs++] = s;
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        const dtb_server_config cf = {
            .dirs = dirs,
            .ndirs = ndirs,
            .bind = a->given[OPT_BIND] ? a->text[OPT_BIND] : "127.0.0.1",
            .port = a->given[OPT_PORT] ? (int)a->number[OPT_PORT] : 8428,
            .threads = (unsigned)(a->given[OPT_THREADS] ? a->number[OPT_THREADS] : cores > 0 ? cores : 1),
            .cache_bytes = (uint64_t)(a->given[OPT_CACHE] ? a->number[OPT_CACHE] : 256) << 20,
            .timeout = (unsigned)(a->given[OPT_TIMEOUT] ? a->number[OPT_TIMEOUT] : 10),
            .per_address = (unsigned)(a->given[OPT_PER_ADDRESS] ? a->number[OPT_PER_ADDRESS] : 64),
            .web_dir = a->given[OPT_WEB] ? a->text[OPT_WEB] : NULL,
            .log = print_log,
        };
        if (!list) {
            fprintf(stderr, "dtbprobe: serve: out of memory\n");
            rc = EXIT_INPUT;
        } else if (ndirs == 0) {
            rc = dtb_cli_usage_error("dtbprobe", "serve", "no table directory given");
        } else {
            rc = serve(&cf, a->given[OPT_QUIET]);
        }
        free(list);
        break;
    }
    }
    free(a);
    return rc;
}
