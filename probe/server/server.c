/* `dtbprobe serve` (server.h) on libmicrohttpd: its thread pool parses the requests and calls
 * handle() from several threads at once; every table handle (one dtb_db per variant found) is
 * shared by all of them, as libdtb allows. Answers are built per request from dtb_answer (the
 * same JSON as dtbprobe --json); the web page's files are held in memory from the start, so no
 * path in a request ever reaches the file system.
 *
 * Limits, so that it can face a public address: a request target or headers beyond 8 KiB are
 * refused here with a JSON 414 or 431 (libmicrohttpd holds up to 32 KiB per connection and
 * answers a longer request itself); every request must be complete within the timeout counted
 * from the connection's start or its previous answer (a deadline, not an idle time: a client
 * sending a byte a second is cut too, by a watchdog thread that shuts the late sockets down);
 * connections are bounded in number and per client address; keep-alive lets a client reuse its
 * connection. A probe itself is bounded (one position, its moves and its line). No answer shows
 * a file system path (a table's message keeps only file names; the whole goes to the log).
 * Nothing here prints: problems go to the caller's log callback or come back as a status and
 * message (the command line, probe/cli/cli_serve.c, prints them). */
#define _POSIX_C_SOURCE 200809L

#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "answer.h"
#include "lidraughts.h"
#include "board.h"
#include "materials.h"
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
    /* libmicrohttpd's bound per connection (beyond it, its own HTML 414 / 431). Above 32 KiB its
     * pools are mapped and unmapped per connection: 4 times fewer new connections a second. */
    CONNECTION_MEMORY = 32 * 1024,
    MAX_URI = 8 * 1024,     /* the request line's target: beyond it, our JSON 414 */
    MAX_HEADERS = 8 * 1024, /* the headers' names and values: beyond, our JSON 431 */
    CONNECTION_LIMIT = 512,
    MAX_FEN = 1024, /* characters of the fen argument */
    MAX_VARIANTS = 8,
    WATCH_MS = 200, /* how often the watchdog looks for requests past their deadline */
    NWEB = 6,       /* the page's files */
};

/* What the raw request target (seen before libmicrohttpd decodes it) says about the request,
 * and whether handle() has been called for it yet: the request's context points into this. */
enum { URI_FINE, URI_CONTROL, URI_LONG };
static const int request_kinds[2][3]; /* [called before][URI_...] */

/* A connection under the deadline (a doubly linked list of the server, under its mutex). */
typedef struct watched {
    struct watched *prev, *next;
    int fd;
    _Atomic int64_t start_ms; /* the connection's start, or the end of its previous answer */
    bool cut;                 /* shut down by the watchdog already */
} watched;

typedef struct served {
    const dtb_variant *v;
    dtb_board board;
    dtb_db *db;
    char *materials_json; /* the answer of /api/<variant>/materials, made once */
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
    web_file files[NWEB];
    atomic_uint_fast64_t requests, failures, cut;
    dtb_log_fn log;
    void *log_user;
    /* the deadline's watchdog */
    int64_t deadline_ms;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool watching, stopping;
    pthread_t watchdog;
    watched *conns;
};
typedef struct dtb_server server;

/* ---- answers -------------------------------------------------------------------------------- */

/* The response headers every answer carries. CORS: any site's page may call the API, with any
 * request headers it declares in the preflight. */
static void common_headers(struct MHD_Response *r)
{
    MHD_add_response_header(r, "Access-Control-Allow-Origin", "*");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
}

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
    common_headers(r);
    /* A table's answer never changes while its files stay; errors are not kept. */
    MHD_add_response_header(r, "Cache-Control", cacheable ? "public, max-age=3600" : "no-store");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD, OPTIONS");
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

/* msg without the server's directories: a word holding '/' keeps only what follows its last '/'
 * when that is a table file's name ("KKvK.dtw"), and is otherwise (a directory) written "the
 * tables". A client learns which table failed, never where the tables are. */
static void scrub_paths(const char *msg, char *out, size_t size)
{
    size_t o = 0;
    for (const char *w = msg; *w && o + 1 < size;) {
        const char *end = w + strcspn(w, " \t'\"(),;");
        if (end == w) { /* a separator */
            out[o++] = *w++;
            continue;
        }
        const char *keep = w, *stop = end;
        for (const char *q = w; q < end; q++)
            if (*q == '/')
                keep = q + 1;
        if (keep != w) { /* a path: a file's name, or a directory */
            const char *dot = memchr(keep, '.', (size_t)(end - keep));
            if (!dot || dot == keep) {
                keep = "the tables";
                stop = keep + strlen(keep);
            }
        }
        while (keep < stop && o + 1 < size)
            out[o++] = *keep++;
        w = end;
    }
    out[o] = 0;
}

/* The value of argument key as it came (decoded); NULL when absent. *bad is set when it holds a
 * NUL or another control byte: libmicrohttpd decodes %00 and C strings would end there, so such
 * a value would be read as a shorter one. */
static const char *argument(struct MHD_Connection *c, const char *key, bool *bad)
{
    const char *value = NULL;
    size_t len = 0;
    if (MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, key, strlen(key), &value, &len) !=
            MHD_YES ||
        !value)
        return NULL;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
            *bad = true;
    return value;
}

/* The clock argument: a count of plies 0..1000000; false when it is not one. */
static bool read_clock(const char *text, int *clock)
{
    if (!*text || strlen(text) > 7 || strspn(text, "0123456789") != strlen(text))
        return false;
    *clock = atoi(text);
    return *clock <= 1000000;
}

/* /api/<variant> (lichess false: dtbprobe --json's object) and /lidraughts/<key> (lichess
 * true: lidraughts.h's), with their arguments fen, clock, diagonal, rules and notation. */
static enum MHD_Result probe(server *sv, struct MHD_Connection *c, const served *s, bool lichess)
{
    bool bad = false;
    const char *fen = argument(c, "fen", &bad);
    /* The texts in the variant's notation unless the request asks for the other. */
    const char *notation = argument(c, "notation", &bad);
    const char *clock_text = argument(c, "clock", &bad);
    const char *diagonal_text = argument(c, "diagonal", &bad);
    const char *rules = argument(c, "rules", &bad);
    if (bad)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "a control character (%00..%1F, %7F) in the request");
    if (!fen || !*fen)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "no position: give ?fen=<PDN FEN>");
    if (strlen(fen) > MAX_FEN)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "the fen is longer than 1024 characters");
    dtb_notation n = dtb_db_notation(s->db);
    if (notation && strcmp(notation, "numeric") == 0)
        n = DTB_NOTATION_NUMERIC;
    else if (notation && strcmp(notation, "algebraic") == 0)
        n = DTB_NOTATION_ALGEBRAIC;
    else if (notation)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "notation is numeric or algebraic (default: the variant's)");
    if (rules && !dtb_answer_rules_known(rules))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "rules is fmjd, wcdf, fmjd64 or none (default: the variant's where the "
                          "tables have them)");
    int clock = 0;
    if (clock_text && !read_clock(clock_text, &clock))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "clock is a count of plies, 0..1000000 (default: the FEN's H field, else 0)");
    int diagonal = 0;
    if (diagonal_text && !read_clock(diagonal_text, &diagonal))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "diagonal is a count of plies, 0..1000000 (default 0)");
    dtb_position p;
    char why[DTB_MESSAGE_SIZE], msg[DTB_MESSAGE_SIZE + 16];
    int h;
    if (dtb_position_from_fen(s->db, fen, &p, why, sizeof why) != DTB_OK ||
        dtb_fen_clock(fen, &h, why, sizeof why) != DTB_OK) {
        snprintf(msg, sizeof msg, "bad FEN: %s", why);
        return send_error(c, MHD_HTTP_BAD_REQUEST, fen, msg);
    }
    if (!clock_text)
        clock = h;
    dtb_answer *a = malloc(sizeof *a);
    if (!a)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, fen, "out of memory");
    dtb_answer_probe(s->db, &p, n, a);
    const dtb_rule_counters counters = {.clock = clock, .diagonal = diagonal};
    dtb_answer_rules(s->db, &p, rules, &counters, a);
    dtb_text t = {0};
    if (a->status == DTB_OK) {
        if (lichess)
            a->status = dtb_lidraughts_json(&t, s->db, &p, clock, a);
        else
            dtb_answer_json(&t, s->db, &p, a);
    }
    enum MHD_Result r;
    if (a->status != DTB_OK) {
        dtb_text_free(&t);
        atomic_fetch_add(&sv->failures, 1);
        const unsigned code = http_status_of(a->status);
        if (code >= 500 && sv->log) /* the whole message, paths included, for the operator */
            sv->log(sv->log_user, a->error);
        scrub_paths(a->error, msg, sizeof msg);
        r = send_error(c, code, fen, msg);
    } else {
        r = send_text(c, MHD_HTTP_OK, &t, true);
    }
    free(a);
    return r;
}

/* The CORS preflight: the methods, and the request headers the caller declared (when they are
 * plain header names) or the simple ones. */
static enum MHD_Result preflight(struct MHD_Connection *c)
{
    static char empty[] = "";
    struct MHD_Response *r = MHD_create_response_from_buffer(0, empty, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    common_headers(r);
    MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
    const char *asked =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    const bool plain = asked && *asked && strlen(asked) <= 512 &&
                       strspn(asked, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789-_, ") == strlen(asked);
    MHD_add_response_header(r, "Access-Control-Allow-Headers",
                            plain ? asked : "Accept, Content-Type");
    MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
    MHD_add_response_header(r, "Allow", "GET, HEAD, OPTIONS");
    const enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_NO_CONTENT, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result add_length(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    *(size_t *)cls += strlen(key) + (value ? strlen(value) : 0) + 4; /* ": " and CRLF */
    return MHD_YES;
}

/* Called by libmicrohttpd with the raw request target (before decoding) as soon as the request
 * line is in; what it returns is the request's context, given to handle(). */
static void *look_at_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    const size_t len = strlen(uri);
    if (len > MAX_URI)
        return (void *)&request_kinds[0][URI_LONG];
    for (const char *q = uri; *q; q++) {
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return (void *)&request_kinds[0][URI_CONTROL];
        /* %00..%1F and %7F: a control byte once decoded (a NUL would cut the text short) */
        if (q[0] == '%' && q[1] && q[2] &&
            (q[1] == '0' || q[1] == '1' ||
             (q[1] == '7' && (q[2] == 'f' || q[2] == 'F'))) &&
            strchr("0123456789abcdefABCDEF", q[2]))
            return (void *)&request_kinds[0][URI_CONTROL];
    }
    return (void *)&request_kinds[0][URI_FINE];
}

static enum MHD_Result route(server *sv, struct MHD_Connection *c, const char *url);

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)url;
    server *sv = cls;
    const int *kind = *req_cls;
    if (kind == &request_kinds[1][URI_FINE]) { /* the second call: the answer */
        if (*upload_data_size != 0) { /* (a body the headers did not announce) */
            *upload_data_size = 0;
            return MHD_YES;
        }
        return route(sv, c, url);
    }
    /* The first call, with the headers. A bad request is answered at once (libmicrohttpd then
     * closes the connection); a good one on the second call, which keeps it open for the next
     * request (keep-alive). */
    atomic_fetch_add(&sv->requests, 1);
    *req_cls = (void *)&request_kinds[1][URI_FINE];
    if (kind == &request_kinds[0][URI_LONG])
        return send_error(c, MHD_HTTP_URI_TOO_LONG, NULL,
                          "the request target is longer than 8 KiB");
    size_t headers = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_length, &headers);
    if (headers > MAX_HEADERS)
        return send_error(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, NULL,
                          "the request's headers are larger than 8 KiB");
    if (kind == &request_kinds[0][URI_CONTROL])
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "a control character (%00..%1F, %7F) in the request");
    if (strcmp(method, "OPTIONS") == 0) /* a cross-origin caller asking first */
        return preflight(c);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "only GET, HEAD and OPTIONS");
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if ((length && strspn(length, "0") != strlen(length)) ||
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding"))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "a GET request has no body");
    return MHD_YES;
}

/* The answer to a good request for url. */
static enum MHD_Result route(server *sv, struct MHD_Connection *c, const char *url)
{
    for (int i = 0; i < NWEB; i++)
        if (strcmp(url, sv->files[i].url) == 0)
            return reply(c, MHD_HTTP_OK, sv->files[i].type, sv->files[i].data, sv->files[i].len,
                        false, false);
    if (strcmp(url, "/favicon.ico") == 0) { /* browsers ask; the page has none */
        static char none[] = "";
        return reply(c, MHD_HTTP_NO_CONTENT, "image/x-icon", none, 0, false, true);
    }
    if (strcmp(url, "/api/variants") == 0 || strcmp(url, "/api/variants/") == 0)
        return reply(c, MHD_HTTP_OK, "application/json; charset=utf-8", sv->variants_json,
                    strlen(sv->variants_json), false, false);
    if (strncmp(url, "/lidraughts/", 12) == 0) { /* lidraughts' tablebaseEndpoint: .../lidraughts */
        const char *name = dtb_lidraughts_variant(url + 12);
        for (int i = 0; name && i < sv->nvars; i++)
            if (strcmp(sv->vars[i].v->name, name) == 0)
                return probe(sv, c, &sv->vars[i], true);
        char msg[200];
        snprintf(msg, sizeof msg, "no tables for lidraughts' variant '%.60s' here (standard, "
                 "russian and brazilian are dtb's; see /api/variants)", url + 12);
        return send_error(c, MHD_HTTP_NOT_FOUND, NULL, msg);
    }
    if (strncmp(url, "/api/", 5) == 0) {
        const char *name = url + 5;
        size_t len = strlen(name);
        if (len && name[len - 1] == '/') /* /api/russian/ is /api/russian */
            len--;
        for (int i = 0; i < sv->nvars; i++) {
            const served *s = &sv->vars[i];
            const size_t n = strlen(s->v->name);
            if (len == n && strncmp(name, s->v->name, n) == 0)
                return probe(sv, c, s, false);
            if (len == n + 10 && strncmp(name, s->v->name, n) == 0 &&
                strncmp(name + n, "/materials", 10) == 0)
                return reply(c, MHD_HTTP_OK, "application/json; charset=utf-8", s->materials_json,
                            strlen(s->materials_json), false, false);
        }
        char msg[200];
        snprintf(msg, sizeof msg, "no tables of variant '%.60s' here (see /api/variants)", name);
        return send_error(c, MHD_HTTP_NOT_FOUND, NULL, msg);
    }
    return send_error(c, MHD_HTTP_NOT_FOUND, NULL, "no such page (the API is under /api/)");
}

/* ---- the deadline ---------------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A connection starts or ends: it joins or leaves the watched list. libmicrohttpd calls "closed"
 * before it closes the socket, so under the lock the watchdog never shuts down a reused fd. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    server *sv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        watched *w = calloc(1, sizeof *w);
        if (!w || !info) { /* unwatched: libmicrohttpd's idle timeout still applies */
            free(w);
            *socket_context = NULL;
            return;
        }
        w->fd = info->connect_fd;
        atomic_store(&w->start_ms, now_ms());
        pthread_mutex_lock(&sv->lock);
        w->next = sv->conns;
        if (sv->conns)
            sv->conns->prev = w;
        sv->conns = w;
        pthread_mutex_unlock(&sv->lock);
        *socket_context = w;
    } else {
        watched *w = *socket_context;
        if (!w)
            return;
        pthread_mutex_lock(&sv->lock);
        if (w->prev)
            w->prev->next = w->next;
        else
            sv->conns = w->next;
        if (w->next)
            w->next->prev = w->prev;
        pthread_mutex_unlock(&sv->lock);
        free(w);
        *socket_context = NULL;
    }
}

/* An answer is sent: the connection's next request (keep-alive) has a deadline of its own. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)req_cls;
    (void)toe;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    watched *w = info ? info->socket_context : NULL;
    if (w)
        atomic_store(&w->start_ms, now_ms());
}

/* Shuts down the sockets of the connections past their deadline; libmicrohttpd sees the end of
 * the stream and closes them (a client that trickles bytes resets no idle timer here). */
static void *watchdog(void *arg)
{
    server *sv = arg;
    pthread_mutex_lock(&sv->lock);
    while (!sv->stopping) {
        const int64_t now = now_ms();
        for (watched *w = sv->conns; w; w = w->next)
            if (!w->cut && now - atomic_load(&w->start_ms) > sv->deadline_ms) {
                shutdown(w->fd, SHUT_RDWR);
                w->cut = true;
                atomic_fetch_add(&sv->cut, 1);
            }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += WATCH_MS * 1000000L;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&sv->wake, &sv->lock, &t);
    }
    pthread_mutex_unlock(&sv->lock);
    return NULL;
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
        dtb_text t = {0};
        dtb_materials_json(&t, cf->dirs, cf->ndirs, v->name);
        if (t.failed) {
            dtb_text_free(&t);
            dtb_close(s->db);
            return false;
        }
        s->materials_json = t.s;
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
    static const web_file names[NWEB] = {
        {"/", "index.html", "text/html; charset=utf-8", NULL, 0},
        {"/index.html", "index.html", "text/html; charset=utf-8", NULL, 0},
        {"/material.html", "material.html", "text/html; charset=utf-8", NULL, 0},
        {"/material.js", "material.js", "text/javascript; charset=utf-8", NULL, 0},
        {"/dtb.js", "dtb.js", "text/javascript; charset=utf-8", NULL, 0},
        {"/dtb.css", "dtb.css", "text/css; charset=utf-8", NULL, 0},
    };
    if (!dir) {
        const char *env = getenv("DTB_WEB_DIR");
        dir = env && *env                      ? env
              : is_dir(DTB_WEB_SOURCE_DIR)     ? DTB_WEB_SOURCE_DIR
                                               : DTB_WEB_INSTALL_DIR;
    }
    for (int i = 0; i < NWEB; i++) {
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
    for (int i = 0; i < sv->nvars; i++) {
        dtb_close(sv->vars[i].db);
        free(sv->vars[i].materials_json);
    }
    for (int i = 0; i < NWEB; i++)
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
    sv->log = cf->log;
    sv->log_user = cf->log_user;
    sv->deadline_ms = (int64_t)(cf->timeout ? cf->timeout : 10) * 1000;
    pthread_mutex_init(&sv->lock, NULL);
    pthread_cond_init(&sv->wake, NULL);
    dtb_status s = load_web(sv, cf->web_dir, e);
    int missing = 0;
    for (int d = 0; d < cf->ndirs; d++)
        if (!is_dir(cf->dirs[d])) {
            missing++;
            if (cf->log && cf->ndirs > 1) {
                char msg[4200];
                snprintf(msg, sizeof msg, "table directory %s does not exist", cf->dirs[d]);
                cf->log(cf->log_user, msg);
            }
        }
    if (s == DTB_OK && missing == cf->ndirs)
        s = dtb_error_set(e, DTB_E_NOTFOUND, cf->ndirs == 1
                                                 ? "the table directory %.3000s does not exist"
                                                 : "none of the table directories exists",
                          cf->dirs[0]);
    if (s == DTB_OK && !open_variants(sv, cf))
        s = dtb_error_set(e, DTB_E_NOTFOUND, "no tables of any variant in the table directories");
    if (s == DTB_OK) {
        if (pthread_create(&sv->watchdog, NULL, watchdog, sv) != 0)
            s = dtb_error_set(e, DTB_E_NOMEM, "cannot start a thread");
        else
            sv->watching = true;
    }
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
            (unsigned)CONNECTION_LIMIT, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            cf->per_address ? cf->per_address : 64u, MHD_OPTION_URI_LOG_CALLBACK, look_at_uri,
            sv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, sv, MHD_OPTION_NOTIFY_COMPLETED,
            on_completed, sv, MHD_OPTION_END);
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
    if (sv->watching) {
        pthread_mutex_lock(&sv->lock);
        sv->stopping = true;
        pthread_cond_signal(&sv->wake);
        pthread_mutex_unlock(&sv->lock);
        pthread_join(sv->watchdog, NULL);
    }
    pthread_mutex_destroy(&sv->lock);
    pthread_cond_destroy(&sv->wake);
    server_free(sv);
    free(sv);
}
