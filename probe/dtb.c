/* The public interface of libdtb (dtb.h) over the internal parts: tableset.c (finding and
 * opening files), resolve.c (values, captures resolved by search), blockcache.c (the cache).
 * This file converts between the public plain types and core's, ranks moves, follows best lines,
 * verifies files, and keeps each thread's latest error message. */
#define _POSIX_C_SOURCE 200809L

#include "dtb.h"

#include <stdatomic.h>
#include <stddef.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fen.h"
#include "movegen.h"
#include "pdnmove.h"
#include "resolve.h"
#include "square_name.h"
#include "tableset.h"
#include "db.h"

_Static_assert(DTB_CACHE_ONLY == DTB_RESOLVE_CACHE_ONLY, "probe flags");
_Static_assert(DTB_QUIET_POSITION == DTB_RESOLVE_QUIET, "probe flags");
_Static_assert(DTB_MOVE_TEXT_SIZE >= DTB_MOVE_TEXT_MAX, "move text size");
_Static_assert(DTB_MESSAGE_SIZE >= sizeof(((dtb_error *)0)->msg), "message size");
_Static_assert(DTB_SIDE_WHITE == (int)DTB_WHITE && DTB_SIDE_BLACK == (int)DTB_BLACK, "sides");

/* The default cache (dtb_options.cache_bytes 0): the WDL working set of the complete piece
 * counts with a quarter more, between these bounds. The quarter: dtb_warm fills 7/8 of the
 * budget, and the budget is split into shards by key, so a shard gets a little more or less than
 * its share of a working set (a few percent at 64 shards); a cache exactly the working set's size
 * would still evict. */
#define MIN_CACHE_BYTES (64ull << 20)
#define MAX_CACHE_SHARE 4 /* at most 1/4 of the physical memory */


/* Each thread's latest failure per handle, kept like errno: thread-local, so no thread reads
 * another's message and recording takes no lock. A slot names its handle by serial number, not
 * address, so a handle opened at a freed one's address never inherits its messages. A thread
 * keeps ERROR_SLOTS handles' messages, replacing the least recently failed. */
enum { ERROR_SLOTS = 8 };
typedef struct error_slot {
    uint64_t serial; /* 0: unused */
    uint64_t when;   /* the thread's failure count when it was written */
    dtb_status status;
    char msg[DTB_MESSAGE_SIZE];
} error_slot;
static _Thread_local error_slot thread_errors[ERROR_SLOTS];
static _Thread_local uint64_t thread_failures;
static atomic_uint_fast64_t next_serial = 1;

const char *dtb_strerror(dtb_status s)
{
    switch (s) {
    case DTB_OK: return "success";
    case DTB_E_INVALID: return "invalid input";
    case DTB_E_RANGE: return "value out of range";
    case DTB_E_OVERFLOW: return "buffer too small";
    case DTB_E_NOTFOUND: return "table not found";
    case DTB_E_IO: return "input/output error";
    case DTB_E_NOSPACE: return "no space left";
    case DTB_E_CORRUPT: return "corrupt table file";
    case DTB_E_VERSION: return "unsupported table format version";
    case DTB_E_MISMATCH: return "table file is not the one expected";
    case DTB_E_NOMEM: return "out of memory";
    case DTB_E_ABORTED: return "stopped by a callback";
    case DTB_E_NOTCACHED: return "not in the cache";
    case DTB_E_GAMEOVER: return "the side to move has no piece: the game is over";
    case DTB_E_NOROOM: return "the cache budget is too small";
    }
    return "unknown status";
}

int dtb_version(const char **version)
{
    if (version)
        *version = DTB_VERSION_STRING;
    return DTB_VERSION_NUMBER;
}

/* The calling thread's slot for db, or NULL when it has none. */
static error_slot *error_slot_of(const dtb_db *db)
{
    for (int i = 0; i < ERROR_SLOTS; i++)
        if (thread_errors[i].serial == db->serial)
            return &thread_errors[i];
    return NULL;
}

dtb_status dtb_db_record(dtb_db *db, dtb_status s, const dtb_error *e)
{
    if (s == DTB_OK || s == DTB_E_NOTCACHED || s == DTB_E_GAMEOVER)
        return s;
    error_slot *slot = error_slot_of(db);
    if (!slot) {
        slot = &thread_errors[0];
        for (int i = 1; i < ERROR_SLOTS; i++)
            if (thread_errors[i].when < slot->when)
                slot = &thread_errors[i];
        slot->serial = db->serial;
    }
    slot->when = ++thread_failures;
    slot->status = s;
    snprintf(slot->msg, sizeof slot->msg, "%s", e && e->msg[0] ? e->msg : dtb_strerror(s));
    return s;
}

dtb_status dtb_last_error(dtb_db *db, char *buf, size_t size)
{
    const error_slot *slot = error_slot_of(db);
    if (size > 0)
        snprintf(buf, size, "%s", slot ? slot->msg : "");
    return slot ? slot->status : DTB_OK;
}

static void log_line(const dtb_options *o, const char *msg)
{
    if (o->log)
        o->log(o->log_user, msg);
}

/* The caller's options as this library's dtb_options: fields beyond o->struct_size (an older
 * header's struct) read as zero, their defaults. */
static dtb_status options_of(const dtb_options *in, dtb_options *o, dtb_error *e)
{
    *o = (dtb_options){0};
    if (in->struct_size < offsetof(dtb_options, paths) + sizeof in->paths)
        return dtb_error_set(e, DTB_E_INVALID,
                             "dtb_options.struct_size is %zu: set it to sizeof(dtb_options) "
                             "(DTB_OPTIONS_INIT does)",
                             in->struct_size);
    if (in->struct_size > sizeof *o)
        return dtb_error_set(e, DTB_E_VERSION,
                             "dtb_options of %zu bytes: a dtb.h newer than this library "
                             "(version %s, %zu bytes)",
                             in->struct_size, DTB_VERSION_STRING, sizeof *o);
    memcpy(o, in, in->struct_size);
    /* A caller built against a dtb.h without texts got numbers: it keeps them. */
    if (in->struct_size < offsetof(dtb_options, texts) + sizeof in->texts)
        o->texts = DTB_TEXTS_NUMERIC;
    if (o->loader_threads < DTB_NO_LOADERS || o->loader_threads > DTB_RESOLVE_MAX_LOADERS)
        return dtb_error_set(e, DTB_E_INVALID,
                             "dtb_options.loader_threads is %d: 1..%d, 0 (the default, one) or "
                             "DTB_NO_LOADERS (-1)",
                             o->loader_threads, DTB_RESOLVE_MAX_LOADERS);
    if (o->texts != DTB_TEXTS_VARIANT && o->texts != DTB_TEXTS_NUMERIC &&
        o->texts != DTB_TEXTS_ALGEBRAIC)
        return dtb_error_set(e, DTB_E_INVALID,
                             "dtb_options.texts is %d: DTB_TEXTS_VARIANT, _NUMERIC or _ALGEBRAIC",
                             o->texts);
    return DTB_OK;
}

/* The default cache budget for the tables of ts: the WDL working set of its complete piece
 * counts, a quarter more, within MIN_CACHE_BYTES and 1/MAX_CACHE_SHARE of the physical memory.
 * The working set is summed piece count by piece count and the sum stops at the cap, so a
 * large set's headers are opened only as far as the cap reaches. A resolver of its own with a
 * small cache does the summing (the tables it opens stay open in ts for the real one). */
static uint64_t default_cache_bytes(dtb_tableset *ts)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    uint64_t cap = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / MAX_CACHE_SHARE
                                         : MIN_CACHE_BYTES;
    if (cap < MIN_CACHE_BYTES)
        cap = MIN_CACHE_BYTES;
    dtb_resolver *sizer = dtb_resolver_create(ts, 1u << 20, 0, NULL, NULL);
    if (!sizer)
        return MIN_CACHE_BYTES;
    uint64_t want = MIN_CACHE_BYTES;
    const int max = dtb_tableset_max_pieces(ts, false);
    for (int n = 2; n <= max && want < cap; n++) {
        uint64_t ws;
        dtb_error e;
        if (dtb_resolver_working_set(sizer, n, false, &ws, &e) != DTB_OK)
            break; /* a damaged table: the probes that need it will say so */
        if (ws + ws / 4 > want)
            want = ws + ws / 4;
    }
    dtb_resolver_free(sizer);
    return want < cap ? want : cap;
}

dtb_status dtb_open(const dtb_options *in, dtb_db **out)
{
    *out = NULL;
    dtb_options opts = {0};
    const dtb_options *o = &opts;
    dtb_error oe = {{0}};
    const dtb_status os = in ? options_of(in, &opts, &oe)
                             : dtb_error_set(&oe, DTB_E_INVALID, "no options given");
    if (os != DTB_OK) {
        if (in && in->struct_size >= offsetof(dtb_options, log_user) + sizeof in->log_user &&
            in->struct_size <= sizeof opts && in->log)
            in->log(in->log_user, oe.msg);
        return os;
    }
    dtb_db *db = calloc(1, sizeof *db);
    if (!db) {
        log_line(o, "out of memory");
        return DTB_E_NOMEM;
    }
    db->log = o->log;
    db->log_user = o->log_user;
    db->serial = atomic_fetch_add(&next_serial, 1);
    dtb_error e = {{0}};
    dtb_status s = dtb_tableset_open(o->paths, o->npaths, o->variant, o->log, o->log_user,
                                     &db->ts, &e);
    if (s == DTB_OK) {
        db->board = dtb_tableset_board(db->ts);
        db->texts = o->texts == DTB_TEXTS_NUMERIC     ? DTB_NOTATION_NUMERIC
                    : o->texts == DTB_TEXTS_ALGEBRAIC ? DTB_NOTATION_ALGEBRAIC
                                                      : dtb_notation_of(db->board);
        db->budget = o->cache_bytes ? o->cache_bytes : default_cache_bytes(db->ts);
        const int loaders = o->loader_threads == 0 ? 1 : o->loader_threads < 0 ? 0 : o->loader_threads;
        db->r = dtb_resolver_create(db->ts, db->budget, loaders, o->log, o->log_user);
        if (!db->r)
            s = dtb_error_set(&e, DTB_E_NOMEM,
                              "out of memory for the block cache (or its loader threads)");
        else
            db->cache = dtb_resolver_cache(db->r);
    }
    if (s != DTB_OK) {
        log_line(o, e.msg);
        dtb_close(db);
        return s;
    }
    *out = db;
    return DTB_OK;
}

void dtb_close(dtb_db *db)
{
    if (!db)
        return;
    dtb_resolver_free(db->r);
    dtb_tableset_close(db->ts);
    free(db);
}

const char *dtb_db_variant(const dtb_db *db) { return db->board->variant->name; }

uint64_t dtb_cache_budget(const dtb_db *db) { return db->budget; }

int dtb_db_squares(const dtb_db *db) { return db->board->squares; }

int dtb_max_pieces(const dtb_db *db, bool dtw) { return dtb_tableset_max_pieces(db->ts, dtw); }

dtb_status dtb_get_cache_stats(dtb_db *db, dtb_cache_stats *st)
{
    const size_t first_version = offsetof(dtb_cache_stats, blocks) + sizeof st->blocks;
    if (st->struct_size < first_version)
        return dtb_db_record(db, DTB_E_INVALID,
                      &(dtb_error){.msg = "dtb_cache_stats.struct_size is smaller than the struct"});
    dtb_blockcache_stats c;
    dtb_resolver_cache_stats(db->r, &c);
    dtb_resolver_load_stats l;
    dtb_resolver_get_load_stats(db->r, &l);
    uint64_t n[DTB_BLOCKCACHE_COUNTERS];
    dtb_blockcache_get_counters(db->cache, n);
    const dtb_cache_stats full = {
        .struct_size = st->struct_size, .hits = c.hits, .misses = c.misses, .bytes = c.bytes,
        .blocks = c.blocks, .evictions = c.evictions, .loads_scheduled = l.scheduled,
        .loads_done = l.done, .loads_dropped = l.dropped,
        .probes = n[PROBE_HIT] + n[PROBE_NOTCACHED] + n[PROBE_NOTFOUND] + n[PROBE_INVALID] +
                  n[PROBE_FAILED],
        .probe_hits = n[PROBE_HIT], .probe_notcached = n[PROBE_NOTCACHED],
        .probe_notfound = n[PROBE_NOTFOUND], .probe_invalid = n[PROBE_INVALID],
        .probe_failed = n[PROBE_FAILED]};
    memcpy(st, &full, st->struct_size < sizeof full ? st->struct_size : sizeof full);
    return DTB_OK;
}

/* ---- positions ---------------------------------------------------------------------------- */

static inline dtb_bb set_of(const uint64_t w[2]) { return (dtb_bb)w[1] << 64 | w[0]; }

static inline void words_of(dtb_bb s, uint64_t w[2])
{
    w[0] = (uint64_t)s;
    w[1] = (uint64_t)(s >> 64);
}

dtb_status dtb_db_to_pos(const dtb_db *db, const dtb_position *in, dtb_pos *p, dtb_error *e)
{
    if (in->side != DTB_SIDE_WHITE && in->side != DTB_SIDE_BLACK)
        return dtb_error_set(e, DTB_E_INVALID, "side to move %d is neither white (0) nor black (1)",
                             in->side);
    for (int c = 0; c < 2; c++) {
        p->men[c] = set_of(in->men[c]);
        p->kings[c] = set_of(in->kings[c]);
    }
    p->side = in->side == DTB_SIDE_WHITE ? DTB_WHITE : DTB_BLACK;
    /* The checks of dtb_pos_validate in a few branch-free set operations (this is on every
     * probe's path); the full function runs only to word the message of a position that fails. */
    const dtb_board *b = db->board;
    const dtb_bb white = p->men[0] | p->kings[0], black = p->men[1] | p->kings[1];
    const int limit = b->variant->start_rows * b->half;
    const bool ok = !(((white | black) & ~b->all) | (p->men[0] & p->kings[0]) |
                      (p->men[1] & p->kings[1]) | (white & black) |
                      (p->men[0] & b->promotion[0]) | (p->men[1] & b->promotion[1])) &&
                    dtb_bb_count(white) <= limit && dtb_bb_count(black) <= limit;
    if (!ok) {
        const dtb_status s = dtb_pos_validate(b, p, e);
        if (s != DTB_OK)
            return s;
    }
    if (!dtb_pos_pieces(p, p->side == DTB_WHITE ? DTB_BLACK : DTB_WHITE))
        return dtb_error_set(e, DTB_E_INVALID, "%s, not to move, has no pieces: the game is over",
                             p->side == DTB_WHITE ? "black" : "white");
    return DTB_OK;
}

static void from_pos(const dtb_pos *p, dtb_position *out)
{
    memset(out, 0, sizeof *out); /* the padding too: callers compare positions with memcmp */
    for (int c = 0; c < 2; c++) {
        words_of(p->men[c], out->men[c]);
        words_of(p->kings[c], out->kings[c]);
    }
    out->side = p->side == DTB_WHITE ? DTB_SIDE_WHITE : DTB_SIDE_BLACK;
}

/* The end of building a position: *out = *p and err emptied on success, else err holds e's
 * message; returns s. */
static dtb_status built(dtb_status s, const dtb_error *e, const dtb_position *p, dtb_position *out,
                        char *err, size_t size)
{
    if (err && size > 0)
        snprintf(err, size, "%s", s == DTB_OK ? "" : e->msg);
    if (s == DTB_OK)
        *out = *p;
    return s;
}

dtb_status dtb_position_from_fen(const dtb_db *db, const char *fen, dtb_position *p, char *err,
                                 size_t size)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = fen ? dtb_fen_read(db->board, fen, &q, &e)
                       : dtb_error_set(&e, DTB_E_INVALID, "no FEN given");
    dtb_position tmp;
    if (s == DTB_OK) {
        from_pos(&q, &tmp);
        s = dtb_db_to_pos(db, &tmp, &q, &e);
    }
    return built(s, &e, &tmp, p, err, size);
}

dtb_status dtb_fen_clock(const char *fen, int *clock, char *err, size_t size)
{
    dtb_error e = {{0}};
    bool present;
    const dtb_status s = dtb_fen_read_clock(fen, clock, &present, &e);
    if (err && size > 0)
        snprintf(err, size, "%s", s == DTB_OK ? "" : e.msg);
    return s;
}

/* Why square cannot take a piece of side (king or man) in p, or NULL when it can. */
static const char *bad_square(const dtb_db *db, const dtb_position *p, int side, bool king,
                              int square)
{
    const dtb_board *b = db->board;
    if (side != DTB_SIDE_WHITE && side != DTB_SIDE_BLACK)
        return "the side is neither white (0) nor black (1)";
    if (square < 1 || square > b->squares)
        return "not a square of the board";
    const dtb_bb bit = dtb_bb_bit(square - 1);
    if ((set_of(p->men[0]) | set_of(p->men[1]) | set_of(p->kings[0]) | set_of(p->kings[1])) & bit)
        return "taken already";
    if (!king && (b->promotion[side == DTB_SIDE_WHITE ? DTB_WHITE : DTB_BLACK] & bit))
        return "on the man's promotion row";
    return NULL;
}

dtb_status dtb_position_set(const dtb_db *db, dtb_position *p, int side, bool king, int square)
{
    if (bad_square(db, p, side, king, square))
        return DTB_E_INVALID;
    return dtb_position_put(p, side, king, square);
}

dtb_status dtb_position_from_squares(const dtb_db *db, int side, const int *white_men,
                                     int n_white_men, const int *white_kings, int n_white_kings,
                                     const int *black_men, int n_black_men,
                                     const int *black_kings, int n_black_kings, dtb_position *out,
                                     char *err, size_t size)
{
    static const char *const names[4] = {"white man", "white king", "black man", "black king"};
    const int *const lists[4] = {white_men, white_kings, black_men, black_kings};
    const int counts[4] = {n_white_men, n_white_kings, n_black_men, n_black_kings};
    dtb_error e = {{0}};
    dtb_status s = side == DTB_SIDE_WHITE || side == DTB_SIDE_BLACK
                       ? DTB_OK
                       : dtb_error_set(&e, DTB_E_INVALID,
                                       "side to move %d is neither white (0) nor black (1)", side);
    dtb_position p;
    dtb_position_clear(&p, side);
    for (int k = 0; k < 4 && s == DTB_OK; k++) {
        if (counts[k] < 0 || (counts[k] > 0 && !lists[k])) {
            s = dtb_error_set(&e, DTB_E_INVALID, "%d squares of %ss%s", counts[k], names[k],
                              counts[k] < 0 ? "" : " and no list");
            break;
        }
        /* more than the board has squares: the count, not each square, is wrong */
        if (counts[k] > db->board->squares) {
            s = dtb_error_set(&e, DTB_E_INVALID, "%d %ss on a board of %d squares", counts[k],
                              names[k], db->board->squares);
            break;
        }
        for (int i = 0; i < counts[k]; i++) {
            const int sq = lists[k][i];
            const char *why = bad_square(db, &p, k / 2, k % 2, sq);
            if (why) {
                s = dtb_error_set(&e, DTB_E_INVALID, "%s on %d: %s", names[k], sq, why);
                break;
            }
            dtb_position_put(&p, k / 2, k % 2, sq);
        }
    }
    dtb_pos q;
    if (s == DTB_OK)
        s = dtb_db_to_pos(db, &p, &q, &e);
    return built(s, &e, &p, out, err, size);
}

dtb_status dtb_position_to_fen(const dtb_db *db, const dtb_position *p, char *buf, size_t size)
{
    return dtb_position_to_fen_in(db, p, db->texts, buf, size);
}

dtb_status dtb_position_to_fen_in(const dtb_db *db, const dtb_position *p, dtb_notation n,
                                  char *buf, size_t size)
{
    dtb_pos q;
    const dtb_status s = dtb_db_to_pos(db, p, &q, NULL);
    return s != DTB_OK ? s : dtb_fen_write_in(db->board, &q, n, buf, size);
}

void dtb_db_pdn_move(const dtb_db *db, const dtb_pos *p, const dtb_move *m, dtb_pdn_move *out)
{
    memset(out, 0, sizeof *out); /* unused captured[] and text bytes are zero, never left over */
    out->from = m->from + 1;
    out->to = m->to + 1;
    out->ncaptured = 0;
    for (dtb_bb c = m->captured; c && out->ncaptured < DTB_MAX_CAPTURED;)
        out->captured[out->ncaptured++] = (unsigned char)(dtb_bb_pop(&c) + 1);
    out->promotes = m->promotes;
    if (dtb_move_write_in(db->board, p, m, db->texts, out->text, sizeof out->text) != DTB_OK)
        snprintf(out->text, sizeof out->text, "%d%c%d", out->from, m->ncaptured ? 'x' : '-', out->to);
}

dtb_movelist *dtb_db_moves(const dtb_db *db, const dtb_pos *p, dtb_status *s, dtb_error *e)
{
    dtb_movelist *list = malloc(sizeof *list);
    if (!list) {
        *s = dtb_error_set(e, DTB_E_NOMEM, "out of memory for a move list");
        return NULL;
    }
    if ((*s = dtb_generate(db->board, p, list)) != DTB_OK) {
        free(list);
        *s = dtb_error_set(e, *s, "too many moves to list");
        return NULL;
    }
    return list;
}

dtb_status dtb_db_find_move(const dtb_db *db, const dtb_pos *q, const dtb_pdn_move *m,
                            dtb_move *out)
{
    dtb_bb captured = 0;
    for (int i = 0; i < m->ncaptured && i < DTB_MAX_CAPTURED; i++)
        if (m->captured[i] >= 1 && m->captured[i] <= db->board->squares)
            captured |= dtb_bb_bit(m->captured[i] - 1);
    dtb_status s;
    dtb_movelist *list = dtb_db_moves(db, q, &s, NULL);
    if (!list)
        return s;
    s = DTB_E_INVALID;
    for (int i = 0; i < list->count && s != DTB_OK; i++) {
        const dtb_move *mv = &list->moves[i];
        if (mv->from + 1 == m->from && mv->to + 1 == m->to && mv->captured == captured &&
            mv->ncaptured == m->ncaptured) {
            *out = *mv;
            s = DTB_OK;
        }
    }
    free(list);
    return s;
}

dtb_status dtb_position_after(const dtb_db *db, const dtb_position *p, const dtb_pdn_move *m,
                              dtb_position *out)
{
    dtb_pos q, r;
    dtb_move mv;
    dtb_status s = dtb_db_to_pos(db, p, &q, NULL);
    if (s == DTB_OK)
        s = dtb_db_find_move(db, &q, m, &mv);
    if (s != DTB_OK)
        return s;
    dtb_make_move(&q, &mv, &r);
    from_pos(&r, out);
    return DTB_OK;
}

dtb_status dtb_move_to_text(const dtb_db *db, const dtb_position *p, const dtb_pdn_move *m,
                            dtb_notation n, char *buf, size_t size)
{
    dtb_pos q;
    dtb_move mv;
    dtb_status s = dtb_db_to_pos(db, p, &q, NULL);
    if (s == DTB_OK)
        s = dtb_db_find_move(db, &q, m, &mv);
    return s != DTB_OK ? s : dtb_move_write_in(db->board, &q, &mv, n, buf, size);
}

dtb_notation dtb_db_notation(const dtb_db *db) { return dtb_notation_of(db->board); }

dtb_status dtb_square_to_text(const dtb_db *db, int square, dtb_notation n, char *buf, size_t size)
{
    if (square < 1 || square > db->board->squares)
        return DTB_E_INVALID;
    char text[16];
    if (n == DTB_NOTATION_ALGEBRAIC)
        dtb_square_name(db->board, square - 1, text);
    else
        snprintf(text, sizeof text, "%d", square);
    if (size <= strlen(text)) {
        if (size > 0)
            buf[0] = 0;
        return DTB_E_OVERFLOW;
    }
    memcpy(buf, text, strlen(text) + 1);
    return DTB_OK;
}

dtb_status dtb_square_from_text(const dtb_db *db, const char *text, int *square)
{
    if (!text)
        return DTB_E_INVALID;
    int sq, len;
    if (dtb_square_parse_name(db->board, text, &sq, &len) == DTB_SQUARE_PLAYABLE &&
        text[len] == 0) {
        *square = sq + 1;
        return DTB_OK;
    }
    int v = 0, n = 0;
    while (text[n] >= '0' && text[n] <= '9' && n < 4)
        v = v * 10 + (text[n++] - '0');
    if (n == 0 || text[n] != 0 || v < 1 || v > db->board->squares)
        return DTB_E_INVALID;
    *square = v;
    return DTB_OK;
}

/* ---- probes ------------------------------------------------------------------------------- */

/* The general path of a probe (the fast one in resolve.c said DTB_RESOLVE_SLOW, or a board of
 * more than 64 squares); not inline, so that its message buffer stays off the fast path. */
static __attribute__((noinline)) dtb_status probe_general(dtb_db *db, const dtb_position *p,
                                                         unsigned flags, bool dtw, dtb_wdl *wdl,
                                                         int *dtw_out)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = dtb_db_to_pos(db, p, &q, &e);
    if (s == DTB_OK && !dtb_pos_pieces(&q, q.side))
        return DTB_E_GAMEOVER; /* dtb.h, "The game is over" */
    if (s == DTB_OK && !dtw)
        s = dtb_resolve_wdl(db->r, &q, flags, wdl, &e);
    if (s == DTB_OK && dtw) {
        dtb_wvalue v;
        if ((s = dtb_resolve_value(db->r, &q, flags, &v, &e)) == DTB_OK) {
            *wdl = dtb_wvalue_wdl(v);
            *dtw_out = dtb_wvalue_dtw(v);
        }
    }
    return s == DTB_OK ? s : dtb_db_record(db, s, &e);
}


dtb_status dtb_probe_wdl(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl)
{
    const int s = dtb_resolve_wdl_fast(db->r, p->men, p->kings, p->side, flags, wdl);
    return dtb_db_counted(db, s != DTB_RESOLVE_SLOW ? (dtb_status)s
                                             : probe_general(db, p, flags, false, wdl, NULL));
}

dtb_status dtb_probe_dtw(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl, int *dtw)
{
    dtb_wvalue v;
    const int s = dtb_resolve_value_fast(db->r, p->men, p->kings, p->side, flags, &v);
    if (s == DTB_RESOLVE_SLOW)
        return dtb_db_counted(db, probe_general(db, p, flags, true, wdl, dtw));
    if (s == DTB_OK) {
        *wdl = dtb_wvalue_wdl(v);
        *dtw = dtb_wvalue_dtw(v);
    }
    return dtb_db_counted(db, (dtb_status)s);
}

dtb_status dtb_probe_mtc(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl, int *mtc)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = dtb_db_to_pos(db, p, &q, &e);
    if (s == DTB_OK && !dtb_pos_pieces(&q, q.side))
        return dtb_db_counted(db, DTB_E_GAMEOVER); /* dtb.h, "The game is over" */
    if (s == DTB_OK)
        s = dtb_resolve_mtc(db->r, &q, flags, wdl, mtc, &e);
    return dtb_db_counted(db, s == DTB_OK ? s : dtb_db_record(db, s, &e));
}

/* dtb_probe_wdl_many and dtb_probe_dtw_many (dtw NULL: WDL probes): chunks of CHUNK positions,
 * each taken through the fast path's three steps (probe/resolve.h) so that their memory is
 * fetched together; a position the fast path leaves goes the general way, as in dtb_probe_wdl. */
enum { CHUNK = 16, AHEAD = 8 };

static dtb_status probe_many(dtb_db *db, const dtb_position *ps, int n, unsigned flags,
                             dtb_wdl *wdl, int *dtw, dtb_status *status)
{
    if (n < 0)
        return dtb_db_record(db, DTB_E_INVALID, &(dtb_error){.msg = "a negative number of positions"});
    const bool want_dtw = dtw != NULL;
    dtb_status result = DTB_OK;
    for (int base = 0; base < n; base += CHUNK) {
        const int m = n - base < CHUNK ? n - base : CHUNK;
        dtb_resolve_ticket tk[CHUNK];
        for (int k = 0; k < m; k++) {
            const dtb_position *p = &ps[base + k];
            dtb_resolve_fast_locate(db->r, p->men, p->kings, p->side, want_dtw, flags, &tk[k]);
        }
        for (int k = 0; k < AHEAD && k < m; k++)
            dtb_resolve_fast_prefetch(db->r, &tk[k]);
        for (int k = 0; k < m; k++) {
            if (k + AHEAD < m)
                dtb_resolve_fast_prefetch(db->r, &tk[k + AHEAD]);
            const int i = base + k;
            dtb_status s;
            if (want_dtw) {
                dtb_wvalue v;
                const int f = dtb_resolve_fast_finish_value(db->r, &tk[k], flags, &v);
                if (f == DTB_RESOLVE_SLOW) {
                    s = probe_general(db, &ps[i], flags, true, &wdl[i], &dtw[i]);
                } else {
                    s = (dtb_status)f;
                    if (s == DTB_OK)
                        wdl[i] = dtb_wvalue_wdl(v), dtw[i] = dtb_wvalue_dtw(v);
                }
            } else {
                const int f = dtb_resolve_fast_finish_wdl(db->r, &tk[k], flags, &wdl[i]);
                s = f == DTB_RESOLVE_SLOW ? probe_general(db, &ps[i], flags, false, &wdl[i], NULL)
                                          : (dtb_status)f;
            }
            dtb_db_counted(db, s);
            if (status)
                status[i] = s;
            if (s != DTB_OK)
                result = s;
        }
    }
    return result;
}

dtb_status dtb_probe_wdl_many(dtb_db *db, const dtb_position *ps, int n, unsigned flags,
                              dtb_wdl *wdl, dtb_status *status)
{
    return probe_many(db, ps, n, flags, wdl, NULL, status);
}

dtb_status dtb_probe_dtw_many(dtb_db *db, const dtb_position *ps, int n, unsigned flags,
                              dtb_wdl *wdl, int *dtw, dtb_status *status)
{
    return probe_many(db, ps, n, flags, wdl, dtw, status);
}

typedef struct ranked {
    dtb_ranked_move m;
    dtb_move mv; /* the same move, for making it */
    int rank;
} ranked;

/* A move's place in the ranking (higher is better; dtb_probe_moves): wins by shortest DTW, wins
 * of unknown DTW, draws, losses of unknown DTW, losses by longest DTW. */
static int move_rank(dtb_wdl wdl, int dtw)
{
    enum { FAR = 1 << 20 }; /* beyond any DTW */
    if (wdl == DTB_DRAW)
        return 0;
    if (dtw == DTB_DTW_UNKNOWN)
        return wdl == DTB_WIN ? 1 : -1;
    return wdl == DTB_WIN ? FAR - dtw : -FAR + dtw;
}

/* Every legal move of q with its value into a fresh array, best first (stable). wdl_fallback: a
 * move whose position after it has no .dtw table (DTB_E_NOTFOUND) takes its WDL from the WDL
 * tables, with DTB_DTW_UNKNOWN. */
static dtb_status rank_moves(dtb_db *db, const dtb_pos *q, unsigned flags, bool wdl_fallback,
                             ranked **out, int *count, dtb_error *e)
{
    *out = NULL;
    *count = 0;
    dtb_status s;
    dtb_movelist *list = dtb_db_moves(db, q, &s, e);
    if (!list)
        return s;
    ranked *rk = malloc((size_t)(list->count ? list->count : 1) * sizeof *rk);
    if (!rk) {
        free(list);
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory ranking moves");
    }
    for (int i = 0; i < list->count; i++) {
        dtb_pos child;
        dtb_make_move(q, &list->moves[i], &child);
        dtb_wvalue v;
        /* the promise of DTB_QUIET_POSITION is the caller's about its own positions only */
        const unsigned f = flags & ~DTB_RESOLVE_QUIET;
        ranked *r = &rk[i];
        dtb_wdl w;
        if ((s = dtb_resolve_value(db->r, &child, f, &v, e)) == DTB_OK) {
            const dtb_wvalue mine = dtb_wvalue_parent(v);
            r->m.wdl = dtb_wvalue_wdl(mine);
            r->m.dtw = dtb_wvalue_dtw(mine);
        } else if (s == DTB_E_NOTFOUND && wdl_fallback &&
                   (s = dtb_resolve_wdl(db->r, &child, f, &w, e)) == DTB_OK) {
            r->m.wdl = (dtb_wdl)-w;
            r->m.dtw = w == DTB_DRAW ? 0 : DTB_DTW_UNKNOWN;
        }
        if (s != DTB_OK) {
            free(list);
            free(rk);
            return s;
        }
        r->mv = list->moves[i];
        dtb_db_pdn_move(db, q, &list->moves[i], &r->m.move);
        r->rank = move_rank(r->m.wdl, r->m.dtw);
        for (int j = i; j > 0 && rk[j - 1].rank < rk[j].rank; j--) { /* insertion: stable */
            const ranked t = rk[j - 1];
            rk[j - 1] = rk[j];
            rk[j] = t;
        }
    }
    *count = list->count;
    free(list);
    *out = rk;
    return DTB_OK;
}

dtb_status dtb_probe_moves(dtb_db *db, const dtb_position *p, unsigned flags, dtb_ranked_move *out,
                           int cap, int *count)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = dtb_db_to_pos(db, p, &q, &e);
    ranked *rk = NULL;
    int n = 0;
    if (s == DTB_OK)
        s = rank_moves(db, &q, flags, true, &rk, &n, &e);
    if (s != DTB_OK)
        return dtb_db_record(db, s, &e);
    for (int i = 0; i < n && i < cap; i++)
        out[i] = rk[i].m;
    free(rk);
    *count = n;
    if (n > cap)
        return dtb_db_record(db, dtb_error_set(&e, DTB_E_OVERFLOW, "%d legal moves, room for %d", n, cap), &e);
    return DTB_OK;
}

bool dtb_move_matches(const dtb_pdn_move *m, int from, int to, const int *captured,
                      int ncaptured)
{
    if (m->from != from || m->to != to)
        return false;
    if (ncaptured < 0)
        return true;
    if (ncaptured != m->ncaptured || (ncaptured > 0 && !captured))
        return false;
    /* m's list is ascending and without repeats: each of the engine's squares must be in it,
     * and no square twice (then, with equal counts, the sets are equal) */
    uint64_t seen[2] = {0, 0};
    for (int i = 0; i < ncaptured; i++) {
        const int sq = captured[i];
        if (sq < 1 || sq > 128 || seen[(sq - 1) / 64] >> ((sq - 1) % 64) & 1)
            return false;
        seen[(sq - 1) / 64] |= (uint64_t)1 << ((sq - 1) % 64);
        int lo = 0, hi = m->ncaptured;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (m->captured[mid] < sq)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == m->ncaptured || m->captured[lo] != sq)
            return false;
    }
    return true;
}

dtb_status dtb_find_move(dtb_db *db, const dtb_position *p, int from, int to, const int *captured,
                         int ncaptured, dtb_pdn_move *out)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = dtb_db_to_pos(db, p, &q, &e);
    dtb_movelist *list = s == DTB_OK ? dtb_db_moves(db, &q, &s, &e) : NULL;
    if (!list)
        return dtb_db_record(db, s, &e);
    int found = -1, nfound = 0;
    for (int i = 0; i < list->count; i++) {
        dtb_pdn_move m;
        const dtb_move *mv = &list->moves[i];
        /* from and to first: the text is written only for a candidate */
        if (mv->from + 1 != from || mv->to + 1 != to)
            continue;
        m.from = from, m.to = to, m.ncaptured = 0;
        for (dtb_bb c = mv->captured; c && m.ncaptured < DTB_MAX_CAPTURED;)
            m.captured[m.ncaptured++] = (unsigned char)(dtb_bb_pop(&c) + 1);
        if (dtb_move_matches(&m, from, to, captured, ncaptured)) {
            if (nfound++ == 0)
                found = i;
        }
    }
    if (nfound == 1)
        dtb_db_pdn_move(db, &q, &list->moves[found], out);
    free(list);
    if (nfound == 1)
        return DTB_OK;
    return dtb_db_record(db, nfound == 0 ? dtb_error_set(&e, DTB_E_INVALID,
                                                  "no legal move from %d to %d with those captures",
                                                  from, to)
                                  : dtb_error_set(&e, DTB_E_INVALID,
                                                  "%d legal moves from %d to %d: give the captured "
                                                  "squares", nfound, from, to),
                  &e);
}

dtb_status dtb_probe_line(dtb_db *db, const dtb_position *p, unsigned flags, dtb_pdn_move *out,
                          int cap, int *count)
{
    dtb_error e = {{0}};
    dtb_pos q;
    dtb_status s = dtb_db_to_pos(db, p, &q, &e);
    int n = 0;
    /* Each ply follows the best move; a win or loss has a DTW that drops by one per ply, so the
     * line ends (the bound only guards against inconsistent tables). */
    for (int ply = 0; s == DTB_OK && ply <= DTB_MAX_LINE; ply++) {
        ranked *rk;
        int nmoves;
        if ((s = rank_moves(db, &q, flags, false, &rk, &nmoves, &e)) != DTB_OK)
            break;
        if (nmoves == 0 || rk[0].m.wdl == DTB_DRAW) {
            free(rk);
            break;
        }
        if (n < cap)
            out[n] = rk[0].m.move;
        n++;
        dtb_make_move(&q, &rk[0].mv, &q);
        free(rk);
    }
    if (s != DTB_OK)
        return dtb_db_record(db, s, &e);
    *count = n;
    if (n > cap)
        return dtb_db_record(db, dtb_error_set(&e, DTB_E_OVERFLOW, "a line of %d plies, room for %d", n, cap),
                      &e);
    return DTB_OK;
}

/* ---- engines: warming, sizing, coverage --------------------------------------------------- */

dtb_status dtb_warm(dtb_db *db, int max_pieces, unsigned flags, uint64_t *bytes)
{
    uint64_t used = 0;
    dtb_error e = {{0}};
    const dtb_status s =
        max_pieces < 2 ? DTB_OK
                       : dtb_resolver_warm(db->r, max_pieces > 32 ? 32 : max_pieces,
                                           flags & DTB_WARM_DTW, &used, &e);
    if (bytes)
        *bytes = used;
    return s == DTB_OK ? s : dtb_db_record(db, s, &e);
}

dtb_status dtb_working_set(dtb_db *db, int pieces, bool dtw, uint64_t *bytes)
{
    dtb_error e = {{0}};
    const dtb_status s =
        pieces < 2 ? dtb_error_set(&e, DTB_E_INVALID, "a working set of %d pieces: 2 or more", pieces)
                   : dtb_resolver_working_set(db->r, pieces > 32 ? 32 : pieces, dtw, bytes, &e);
    return s == DTB_OK ? s : dtb_db_record(db, s, &e);
}

bool dtb_covers_material(const dtb_db *db, int men, int kings, int other_men, int other_kings,
                         bool dtw)
{
    if (men < 0 || kings < 0 || other_men < 0 || other_kings < 0 || men > 8 || kings > 8 ||
        other_men > 8 || other_kings > 8 || other_men + other_kings == 0)
        return false;
    if (men + kings == 0)
        return false; /* the game is over (dtb.h): no table covers it */
    /* the material as the tables name it: the side to move as white */
    const dtb_material m = {.kings = {(unsigned char)kings, (unsigned char)other_kings},
                            .men = {(unsigned char)men, (unsigned char)other_men}};
    return dtb_tableset_present(db->ts, m, dtw) &&
           dtb_tableset_max_pieces(db->ts, dtw) >= men + kings + other_men + other_kings - 1;
}

bool dtb_covers(const dtb_db *db, const dtb_position *p, bool dtw)
{
    if (p->side != DTB_SIDE_WHITE && p->side != DTB_SIDE_BLACK)
        return false;
    const int me = p->side, other = 1 - me;
    const int count[2][2] = {
        {__builtin_popcountll(p->men[0][0]) + __builtin_popcountll(p->men[0][1]),
         __builtin_popcountll(p->kings[0][0]) + __builtin_popcountll(p->kings[0][1])},
        {__builtin_popcountll(p->men[1][0]) + __builtin_popcountll(p->men[1][1]),
         __builtin_popcountll(p->kings[1][0]) + __builtin_popcountll(p->kings[1][1])}};
    return dtb_covers_material(db, count[me][0], count[me][1], count[other][0], count[other][1],
                               dtw);
}

/* ---- verification ------------------------------------------------------------------------- */

typedef struct vfile {
    char *path;
    dtb_material m;
    dtb_metric metric;
    uint64_t size;
} vfile;

typedef struct vlist {
    vfile *f;
    int n, cap;
    bool nomem;
} vlist;

static bool collect_file(void *user, const char *path, dtb_material m, dtb_metric metric)
{
    vlist *l = user;
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 64;
        vfile *bigger = realloc(l->f, (size_t)cap * sizeof *bigger);
        if (!bigger) {
            l->nomem = true;
            return false;
        }
        l->f = bigger;
        l->cap = cap;
    }
    struct stat st;
    vfile *f = &l->f[l->n];
    f->size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    f->m = m;
    f->metric = metric;
    if (!(f->path = strdup(path))) {
        l->nomem = true;
        return false;
    }
    l->n++;
    return true;
}

typedef struct vprogress {
    dtb_verify_progress fn;
    void *user;
    const char *file;
    uint64_t before, total;
} vprogress;

static bool file_progress(void *user, uint64_t done, uint64_t total)
{
    (void)total;
    const vprogress *v = user;
    return v->fn(v->user, v->file, v->before + done, v->total);
}

/* Opens and checks one file; DTB_OK or a status with the message in *e. */
static dtb_status verify_file(dtb_db *db, const vfile *f, unsigned flags, vprogress *vp,
                              dtb_error *e)
{
    dtb_index *ix;
    dtb_status s = dtb_index_create(db->board, f->m, &ix);
    if (s == DTB_E_NOMEM)
        return dtb_error_set(e, DTB_E_NOMEM, "%s: out of memory for the index", f->path);
    if (s != DTB_OK)
        return dtb_error_set(e, DTB_E_MISMATCH, "%s: material does not fit the %s board", f->path,
                             db->board->variant->name);
    char name[DTB_MATERIAL_NAME_MAX];
    const dtb_tablefile_expect want =
        dtb_tableset_expect(db->ts, f->m, f->metric, name, dtb_index_size(ix));
    dtb_index_free(ix);
    dtb_tablefile *tf;
    if ((s = dtb_tablefile_open(f->path, &want, &tf, e)) != DTB_OK)
        return s;
    s = dtb_tablefile_verify(tf, flags & DTB_VERIFY_DECODE, vp->fn ? file_progress : NULL, vp, e);
    dtb_tablefile_close(tf);
    return s;
}

dtb_status dtb_verify(dtb_db *db, unsigned flags, dtb_verify_progress progress, void *user, int *bad)
{
    dtb_error e = {{0}};
    vlist l = {0};
    dtb_status first = dtb_tableset_list(db->ts, collect_file, &l, &e);
    if (first == DTB_OK && l.nomem)
        first = dtb_error_set(&e, DTB_E_NOMEM, "out of memory listing the table files");
    int nbad = 0;
    if (first == DTB_OK) {
        vprogress vp = {progress, user, NULL, 0, 0};
        for (int i = 0; i < l.n; i++)
            vp.total += l.f[i].size;
        for (int i = 0; i < l.n; i++) {
            vp.file = l.f[i].path;
            dtb_error fe = {{0}};
            const dtb_status s = verify_file(db, &l.f[i], flags, &vp, &fe);
            vp.before += l.f[i].size;
            if (s == DTB_E_ABORTED) {
                first = s;
                e = fe;
                break;
            }
            if (s != DTB_OK) {
                nbad++;
                if (db->log)
                    db->log(db->log_user, fe.msg);
                dtb_db_record(db, s, &fe);
                if (first == DTB_OK) {
                    first = s;
                    e = fe;
                }
            }
        }
    }
    for (int i = 0; i < l.n; i++)
        free(l.f[i].path);
    free(l.f);
    if (bad)
        *bad = nbad;
    /* Each bad file was recorded as it was found; a stop or a failure to list is recorded here. */
    return nbad > 0 && first != DTB_E_ABORTED ? first : dtb_db_record(db, first, &e);
}
