/* `dtbprobe serve`: the tables over HTTP, for programs (a JSON API) and for people (a web page).
 *
 *   GET /api/variants              what the tables hold: each variant, its board, piece counts
 *   GET /api/<variant>?fen=<FEN>   the object of `dtbprobe --json` for that position
 *   GET /  /dtb.js  /dtb.css       the web explorer (files of probe/web, read once at start)
 *
 * Errors are JSON {"error": "..."} with 400 (bad FEN, bad request), 404 (unknown variant, missing
 * table, unknown path), 405 (a method other than GET, HEAD or OPTIONS), and libmicrohttpd's own
 * answers for requests beyond its limits (a request line or headers over the connection's
 * memory, a client slower than the timeout). Every answer carries
 * Access-Control-Allow-Origin: *, so another site's page may call the API. Nothing is read from
 * disk after start but the tables: no request names a file. */
#ifndef DTB_SERVER_H
#define DTB_SERVER_H

#define DTBPROBE_SERVE_SYNOPSIS \
    "[--tables DIR] [--bind ADDR] [--port P] [--threads T] [--cache MIB] [--timeout S] [--web DIR]"

/* Runs `dtbprobe serve` with the words after "serve"; returns the exit status (0 after SIGINT or
 * SIGTERM, 1 bad input or data, 2 usage). Prints the address to open on stdout. */
int dtbprobe_serve_main(int argc, char **argv);

#endif
