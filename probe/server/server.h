/* The tables over HTTP, for programs (a JSON API) and for people (a web page); started by
 * `dtbprobe serve` (probe/cli/cli_serve.c), which prints what this part reports.
 *
 *   GET /api/variants              what the tables hold: each variant, its board, piece counts
 *   GET /api/<variant>?fen=<FEN>   the object of `dtbprobe --json` for that position (numbers);
 *                                  clock=<plies> and rules=fmjd|wcdf|none as dtbprobe's --clock, --rules
 *   GET /lidraughts/<key>?fen=<FEN> the same shaped like lichess's tablebase API, for lidraughts'
 *                                  analysis board (lidraughts.h; key: standard, russian, brazilian)
 *   GET /  /dtb.js  /dtb.css       the web explorer (files of probe/web, read once at start)
 *
 * Errors are JSON {"error": "..."} with 400 (bad FEN, bad request, a control byte), 404 (unknown
 * variant, missing table, unknown path), 405 (a method other than GET, HEAD or OPTIONS, with
 * Allow), 414 / 431 (a request target or headers beyond 8 KiB), and libmicrohttpd's own answers
 * only for requests beyond its 32 KiB per connection. A request not whole within the timeout
 * is cut. Every answer carries Access-Control-Allow-Origin: *, so another site's page may call
 * the API. Nothing is read from disk after start but the tables: no request names a file.
 * Nothing here prints. */
#ifndef DTB_SERVER_H
#define DTB_SERVER_H

#include <stdint.h>

#include "dtb.h"
#include "position.h" /* dtb_error */

typedef struct dtb_server_config {
    const char *const *dirs; /* table directories (each may hold <variant>/ subdirectories) */
    int ndirs;
    const char *bind;        /* an IPv4 or IPv6 address ("127.0.0.1", "::") */
    int port;                /* 0: any free port (dtb_server_port says which) */
    unsigned threads;        /* request threads */
    uint64_t cache_bytes;    /* block cache of each variant's tables */
    unsigned timeout;        /* seconds a request has to arrive whole, counted from the
                                connection's start or its previous answer (0: 10) */
    unsigned per_address;    /* connections at once from one client address (0: 64) */
    const char *web_dir;     /* the page's files; NULL: $DTB_WEB_DIR, this build's, or installed */
    dtb_log_fn log;          /* a table that cannot be opened, per file; NULL: none */
    void *log_user;
} dtb_server_config;

typedef struct dtb_server dtb_server;

/* Opens the tables of every variant found, reads the page and starts answering in threads of
 * its own. Returns DTB_OK and *out, or a status with a one-line message in *e: DTB_E_INVALID
 * (bind is no address), DTB_E_NOTFOUND (no tables), DTB_E_IO (the page's files, the port),
 * DTB_E_NOMEM. */
dtb_status dtb_server_start(const dtb_server_config *c, dtb_server **out, dtb_error *e);

/* The port it listens on. */
unsigned dtb_server_port(const dtb_server *s);

/* The variants served, up to cap of them, with the pieces their WDL tables cover (names live as
 * long as s); returns how many there are. */
int dtb_server_variants(const dtb_server *s, const char **names, int *pieces, int cap);

/* Requests answered so far. Thread-safe. */
uint64_t dtb_server_requests(const dtb_server *s);

/* Stops answering, then closes the tables. NULL is allowed. */
void dtb_server_stop(dtb_server *s);

#endif
