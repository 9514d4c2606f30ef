/* `dtbprobe serve` (server.h) on libmicrohttpd: its thread pool parses the requests and calls
 * handle() from several threads at once; every table handle (one dtb_db per variant found) is
 * shared by all of them, as libdtb allows. Answers are built per request from dtb_answer (the
 * same JSON as dtbprobe --json); the web page's files are held in memory from the start, so no
 * path in a request ever reaches the file system.
 *
 * Limits, all libmicrohttpd's: a connection's memory (request line and headers; a longer request
 * is refused by libmicrohttpd with 414 or 431), an idle or slow connection closed after the
 * timeout, a bound on simultaneous connections. A probe itself is bounded (one position, its
 * moves and its line). Nothing here prints: problems go to the caller's log callback or come
 * back as a status and message (the command line, probe/cli/cli_serve.c, prints them). */
#define _POSIX_C_SOURCE 200809L

#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "answer.h"
#include "board.h"
#include "dtb.h"
#include "variant.h"

#ifndef DTB_WEB_SOURCE_DIR
#define DTB_WEB_SOURCE_DIR ""
#endif
#ifndef DTB_WEB_INSTALL_DIR
#define DTB_WEB_INSTALL_DIR ""
#endif

/* Requests beyond these are refused before they reach handle(). */
enum {
    CONNECTION_MEMORY = 16 * 1024, /* request line and headers of one connection */
    CONNECTION_LIMIT = 512,
    MAX_FEN = 1024, /* characters of the fen argument */
    MAX_VARIANTS = 8,
};

typedef struct served {
    const dtb_variant *v;
    dtb_board board;
    dtb_db *db;
} served;

typedef struct web_file {
    const char *url, *name, *type;
    char *data;
    size_t len;
} web_file;

struct dtb_server {
    struct MHD_Daemon *daemon;
    unsigned port;
    served vars[MAX_VARIANTS];
    int nvars;
    char *variants_json; /* the answer of /api/variants, made once */
    web_file files[3];
    atomic_uint_fast64_t requests, failures;
};
typedef struct dtb_server server;

/* ---- answers -------------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, char *body,
                            size_t len, bool owned, bool cacheable)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned)
            free(body);
        return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* A table's answer never changes while its files stay; errors are not kept. */
    MHD_add_response_header(r, "Cache-Control", cacheable ? "public, max-age=3600" : "no-store");
    const enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned code, dtb_text *t,
                                 bool cacheable)
{
    if (t->failed || !t->s) {
        dtb_text_free(t);
        static char oom[] = "{\"error\":\"out of memory\"}";
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "application/json", oom, sizeof oom - 1,
                    false, false);
    }
    dtb_text_printf(t, "\n");
    char *body = t->s;
    const size_t len = t->len;
    *t = (dtb_text){0};
    return reply(c, code, "application/json; charset=utf-8", body, len, true, cacheable);
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned code, const char *fen,
                                  const char *message)
{
    dtb_text t = {0};
    if (fen) {
        dtb_answer_error_json(&t, fen, message);
    } else {
        dtb_text_printf(&t, "{\"error\":");
        dtb_text_json_string(&t, message);
        dtb_text_printf(&t, "}");
    }
    return send_text(c, code, &t, false);
}

/* The HTTP status of a probe that failed with s. */
static unsigned http_status_of(dtb_status s)
{
    switch (s) {
    case DTB_E_INVALID:
    case DTB_E_RANGE:
        return MHD_HTTP_BAD_REQUEST;
    case DTB_E_NOTFOUND:
        return MHD_HTTP_NOT_FOUND;
    case DTB_E_NOMEM:
        return MHD_HTTP_SERVICE_UNAVAILABLE;
    default: /* a damaged or unreadable file */
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

static enum MHD_Result probe(server *sv, struct MHD_Connection *c, const served *s)
{
    const char *fen = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fen");
    if (!fen || !*fen)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "no position: give ?fen=<PDN FEN>");
    if (strlen(fen) > MAX_FEN)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "the fen is longer than 1024 characters");
    /* The texts in the variant's notation unless the request asks for the other. */
    const char *notation = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "notation");
    dtb_notation n = dtb_db_notation(s->db);
    if (notation && strcmp(notation, "numeric") == 0)
        n = DTB_NOTATION_NUMERIC;
    else if (notation && strcmp(notation, "algebraic") == 0)
        n = DTB_NOTATION_ALGEBRAIC;
    else if (notation)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "notation is numeric or algebraic (default: the variant's)");
    dtb_position p;
    char why[DTB_MESSAGE_SIZE], msg[DTB_MESSAGE_SIZE + 16];
    if (dtb_position_from_fen(s->db, fen, &p, why, sizeof why) != DTB_OK) {
        snprintf(msg, sizeof msg, "bad FEN: %s", why);
        return send_error(c, MHD_HTTP_BAD_REQUEST, fen, msg);
    }
    dtb_answer *a = malloc(sizeof *a);
    if (!a)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, fen, "out of memory");
    dtb_answer_probe(s->db, &p, n, a);
    enum MHD_Result r;
    if (a->status != DTB_OK) {
        atomic_fetch_add(&sv->failures, 1);
        r = send_error(c, http_status_of(a->status), fen, a->error);
    } else {
        dtb_text t = {0};
        dtb_answer_json(&t, s->db, &p, a);
        r = send_text(c, MHD_HTTP_OK, &t, true);
    }
    free(a);
    return r;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)req_cls;
    server *sv = cls;
    atomic_fetch_add(&sv->requests, 1);
    if (strcmp(method, "OPTIONS") == 0) { /* a cross-origin caller asking first */
        static char empty[] = "";
        struct MHD_Response *r = MHD_create_response_from_buffer(0, empty, MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
        MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
        MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
        const enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
        MHD_destroy_response(r);
        return ok;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "only GET, HEAD and OPTIONS");
    if (*upload_data_size != 0)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "a GET request has no body");

    for (int i = 0; i < 3; i++)
        if (strcmp(url, sv->files[i].url) == 0)
            return reply(c, MHD_HTTP_OK, sv->files[i].type, sv->files[i].data, sv->files[i].len,
                        false, false);
    if (strcmp(url, "/favicon.ico") == 0) { /* browsers ask; the page has none */
        static char none[] = "";
        return reply(c, MHD_HTTP_NO_CONTENT, "image/x-icon", none, 0, false, true);
    }
    if (strcmp(url, "/api/variants") == 0)
        return reply(c, MHD_HTTP_OK, "application/json; charset=utf-8", sv->variants_json,
                    strlen(sv->variants_json), false, false);
    if (strncmp(url, "/api/", 5) == 0) {
        const char *name = url + 5;
        for (int i = 0; i < sv->nvars; i++)
            if (strcmp(name, sv->vars[i].v->name) == 0)
                return probe(sv, c, &sv->vars[i]);
        char msg[200];
        snprintf(msg, sizeof msg, "no tables of variant '%.60s' here (see /api/variants)", name);
        return send_error(c, MHD_HTTP_NOT_FOUND, NULL, msg);
    }
    return send_error(c, MHD_HTTP_NOT_FOUND, NULL, "no such page (the API is under /api/)");
}

/* ---- start ---------------------------------------------------------------------------------- */

static bool is_dir(const char *p)
{
    struct stat st;
    return *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Opens the tables of every variant found under the directories (problems go to the log). */
static bool open_variants(server *sv, const dtb_server_config *cf)
{
    for (int i = 0; i < dtb_variant_count() && sv->nvars < MAX_VARIANTS; i++) {
        const dtb_variant *v = dtb_variant_at(i);
        bool present = false;
        for (int d = 0; d < cf->ndirs && !present; d++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", cf->dirs[d], v->name);
            present = is_dir(path);
        }
        if (!present)
            continue;
        dtb_options o = DTB_OPTIONS_INIT;
        o.paths = cf->dirs;
        o.npaths = cf->ndirs;
        o.variant = v->name;
        o.cache_bytes = cf->cache_bytes;
        o.log = cf->log;
        o.log_user = cf->log_user;
        served *s = &sv->vars[sv->nvars];
        if (dtb_open(&o, &s->db) != DTB_OK)
            continue; /* the log said why; the other variants are still served */
        s->v = v;
        dtb_board_init(&s->board, v);
        sv->nvars++;
    }
    return sv->nvars > 0;
}

/* /api/variants: per variant its board (every square's row and column, so a page can draw any
 * of them), the piece counts its tables cover, the notation its answers use by default and
 * every square's text in it (so a page writes and reads squares as the answers do). */
static bool variants_json(server *sv)
{
    dtb_text t = {0};
    dtb_text_printf(&t, "{\"variants\":[");
    for (int i = 0; i < sv->nvars; i++) {
        const served *s = &sv->vars[i];
        dtb_text_printf(&t,
                        "%s{\"name\":\"%s\",\"gametype\":%d,\"size\":%d,\"squares\":%d,"
                        "\"wdl_pieces\":%d,\"dtw_pieces\":%d,\"layout\":[",
                        i ? "," : "", s->v->name, s->v->gametype, s->board.size,
                        s->board.squares, dtb_max_pieces(s->db, false),
                        dtb_max_pieces(s->db, true));
        int n = 0;
        for (int sq = 0; sq < s->board.squares; sq++)
            for (int row = 0; row < s->board.size; row++)
                for (int col = 0; col < s->board.size; col++)
                    if (dtb_board_square(&s->board, row, col) == sq)
                        dtb_text_printf(&t, "%s[%d,%d]", n++ ? "," : "", row, col);
        const dtb_notation notation = dtb_db_notation(s->db);
        dtb_text_printf(&t, "],\"notation\":\"%s\",\"names\":[",
                        notation == DTB_NOTATION_ALGEBRAIC ? "algebraic" : "numeric");
        for (int sq = 1; sq <= s->board.squares; sq++) {
            char name[8];
            if (dtb_square_to_text(s->db, sq, notation, name, sizeof name) != DTB_OK)
                t.failed = true; /* (cannot happen: every square has a text of 8 bytes) */
            dtb_text_printf(&t, "%s\"%s\"", sq > 1 ? "," : "", name);
        }
        dtb_text_printf(&t, "]}");
    }
    dtb_text_printf(&t, "]}\n");
    sv->variants_json = t.s;
    return !t.failed;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            char *d = realloc(data, cap + 1);
            if (!d || cap > (16u << 20)) {
                free(d ? d : data);
                fclose(f);
                return NULL;
            }
            data = d;
        }
        const size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    const bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        return NULL;
    }
    data[n] = 0;
    *len = n;
    return data;
}

/* The page's files from dir, or the first of the usual places that has them. */
static dtb_status load_web(server *sv, const char *dir, dtb_error *e)
{
    static const web_file names[3] = {
        {"/", "index.html", "text/html; charset=utf-8", NULL, 0},
        {"/dtb.js", "dtb.js", "text/javascript; charset=utf-8", NULL, 0},
        {"/dtb.css", "dtb.css", "text/css; charset=utf-8", NULL, 0},
    };
    if (!dir) {
        const char *env = getenv("DTB_WEB_DIR");
        dir = env && *env                      ? env
              : is_dir(DTB_WEB_SOURCE_DIR)     ? DTB_WEB_SOURCE_DIR
                                               : DTB_WEB_INSTALL_DIR;
    }
    for (int i = 0; i < 3; i++) {
        sv->files[i] = names[i];
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i].name);
        if (!(sv->files[i].data = read_file(path, &sv->files[i].len)))
            return dtb_error_set(e, DTB_E_IO, "cannot read the web page's %s: %s", path,
                                 strerror(errno ? errno : EIO));
    }
    return DTB_OK;
}

static void server_free(server *sv)
{
    for (int i = 0; i < sv->nvars; i++)
        dtb_close(sv->vars[i].db);
    for (int i = 0; i < 3; i++)
        free(sv->files[i].data);
    free(sv->variants_json);
}

/* The socket address to listen on, from text and port; false when text is not an address. */
static bool socket_address(const char *text, int port, struct sockaddr_storage *sa, bool *v6)
{
    memset(sa, 0, sizeof *sa);
    struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *v6 = false;
        return true;
    }
    if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = true;
        return true;
    }
    return false;
}

dtb_status dtb_server_start(const dtb_server_config *cf, dtb_server **out, dtb_error *e)
{
    *out = NULL;
    struct sockaddr_storage sa;
    bool v6;
    if (!socket_address(cf->bind, cf->port, &sa, &v6))
        return dtb_error_set(e, DTB_E_INVALID, "'%.80s' is not an IPv4 or IPv6 address", cf->bind);
    server *sv = calloc(1, sizeof *sv);
    if (!sv)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    dtb_status s = load_web(sv, cf->web_dir, e);
    if (s == DTB_OK && !open_variants(sv, cf))
        s = dtb_error_set(e, DTB_E_NOTFOUND, "no tables of any variant in the table directories");
    if (s == DTB_OK && !variants_json(sv))
        s = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    if (s == DTB_OK) {
        /* No MHD_USE_ERROR_LOG: libmicrohttpd would print; a failure to start is reported below. */
        sv->daemon = MHD_start_daemon(
            MHD_USE_AUTO_INTERNAL_THREAD | (v6 ? MHD_USE_IPv6 : 0), (uint16_t)cf->port, NULL,
            NULL, handle, sv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
            MHD_OPTION_THREAD_POOL_SIZE, cf->threads ? cf->threads : 1u,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
            MHD_OPTION_CONNECTION_TIMEOUT, cf->timeout, MHD_OPTION_CONNECTION_LIMIT,
            (unsigned)CONNECTION_LIMIT, MHD_OPTION_END);
        if (!sv->daemon)
            s = dtb_error_set(e, DTB_E_IO, "cannot listen on %s port %d: %s", cf->bind, cf->port,
                              strerror(errno ? errno : EADDRINUSE));
    }
    if (s != DTB_OK) {
        dtb_server_stop(sv);
        return s;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(sv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    sv->port = info ? info->port : (unsigned)cf->port;
    *out = sv;
    return DTB_OK;
}

unsigned dtb_server_port(const dtb_server *sv) { return sv->port; }

int dtb_server_variants(const dtb_server *sv, const char **names, int *pieces, int cap)
{
    for (int i = 0; i < sv->nvars && i < cap; i++) {
        names[i] = sv->vars[i].v->name;
        pieces[i] = dtb_max_pieces(sv->vars[i].db, false);
    }
    return sv->nvars;
}

uint64_t dtb_server_requests(const dtb_server *sv) { return atomic_load(&sv->requests); }

void dtb_server_stop(dtb_server *sv)
{
    if (!sv)
        return;
    if (sv->daemon)
        MHD_stop_daemon(sv->daemon);
    server_free(sv);
    free(sv);
}
