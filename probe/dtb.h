/* libdtb: probing draughts endgame tables (docs/DESIGN.md §1, §9). The only header an engine includes.
 *
 * Quick start:
 *
 *     const char *dirs[] = {"/data/tables"};
 *     dtb_options o = DTB_OPTIONS_INIT;     (defaults: a cache sized for the tables, a loader)
 *     o.paths = dirs, o.npaths = 1;
 *     dtb_db *db;
 *     if (dtb_open(&o, &db) != DTB_OK) ...          (the log callback, if given, says why)
 *     dtb_position p;
 *     char why[DTB_MESSAGE_SIZE];
 *     if (dtb_position_from_fen(db, "W:WK46,28:BK5", &p, why, sizeof why) != DTB_OK) ...
 *     dtb_wdl wdl; int dtw;
 *     dtb_status s = dtb_probe_dtw(db, &p, 0, &wdl, &dtw);
 *     if (s != DTB_OK) { dtb_last_error(db, why, sizeof why); ... }
 *     dtb_close(db);
 *
 * Words. Values are for the side to move, by perfect play without move-count draw rules.
 * DTW ("distance to win") is the number of plies until the game ends (the loser, to move, has no
 * piece or no legal move): the winner takes the shortest way, the loser the longest. A win has an
 * odd DTW, a loss an even one; a draw has none (reported as 0). Squares are PDN numbers 1..N;
 * texts (FENs, moves) are written as the variant's players write them unless dtb_options.texts
 * says otherwise, and FENs are read in either notation.
 *
 * Statuses are returned separately from values: every function that can fail returns a
 * dtb_status, and values come back through out-parameters, which are written only on DTB_OK.
 * The library never prints and never exits; problems with files are also reported, once each,
 * through the log callback given to dtb_open, and each thread's latest failure on a db is kept
 * for dtb_last_error.
 *
 * Tables hold positions without a capture for the side to move; a capture position is answered by
 * searching its captures (compulsory in every variant) down to positions the tables hold, so any
 * legal position can be probed.
 *
 * Thread safety: an open dtb_db may be used by any number of threads at once for every function
 * below except dtb_close (no other call may run on the db during or after it). The block cache is
 * shared by all threads; its locks are sharded, so threads rarely wait for each other.
 *
 * Engines: docs/ENGINES.md is the guide (when to probe, cache-only probes in the search with
 * loader threads, ranking root moves by DTW, sizing the cache, threads). In short: open with the
 * default options (a cache that holds the tables' working set, one loader thread; "Sizing the
 * cache" below), call dtb_warm once at start-up, probe with DTB_CACHE_ONLY (| DTB_QUIET_POSITION
 * where the engine knows the position is quiet) inside the search and without it at the root.
 * The header is C11 and C++11 (and later) alike.
 *
 * Sizing the cache. A probe is fast only when its block is in the cache; a probe that must read
 * a block decompresses a whole block (64 KiB of packed values by default) for one value. The
 * cache holds decompressed blocks, so a set needs far more cache than its files take on disk:
 * the international 2..5 set's WLD files take 27 MB and need 381 MB of cache (dtb_working_set:
 * 2..4 pieces 9.8 MB), its DTW tables 1.55 GB (2..4: 40 MB; a DTW value takes a byte, a WLD one
 * two bits). With a cache smaller than the working set of the
 * positions probed, most probes read a block (docs/MEASUREMENTS.md, "Engine probes", has the
 * cost). dtb_working_set gives the exact figure for the tables found, and the default cache
 * (dtb_options.cache_bytes 0) is sized from it; a cache_bytes of your own should be at least that
 * for the piece counts an engine probes often. Watch the evictions of dtb_get_cache_stats: a
 * count that keeps growing says the cache is too small for the probes made.
 */
#ifndef DTB_H
#define DTB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dtb_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of dtb (semantic versioning: a new minor version adds, a new major version may break).
 * The build reads the project's version from these lines. */
#define DTB_VERSION_MAJOR 0
#define DTB_VERSION_MINOR 2
#define DTB_VERSION_PATCH 0
#define DTB_VERSION_STRING "0.2.0"
/* DTB_VERSION_MAJOR * 10000 + DTB_VERSION_MINOR * 100 + DTB_VERSION_PATCH, for #if tests. */
#define DTB_VERSION_NUMBER (DTB_VERSION_MAJOR * 10000 + DTB_VERSION_MINOR * 100 + DTB_VERSION_PATCH)

/* Version of this interface; changes when a declaration here changes incompatibly (it is the
 * shared library's soname: libdtb.so.2). */
#define DTB_API_VERSION 2

/* ---- statuses and values ------------------------------------------------------------------- */

/* dtb_status (what a call did), dtb_wdl (win, draw, loss) and DTB_MAX_DTW (the largest DTW any
 * table can hold, in plies) are defined in dtb_status.h, installed beside this header. */

/* Size that always holds a message of this library (dtb_last_error, FEN errors). */
#define DTB_MESSAGE_SIZE 256

/* The version of the library linked at run time, as DTB_VERSION_NUMBER (compare it with the
 * header's DTB_VERSION_NUMBER to detect a library older than the header). version, when not
 * NULL, receives the text ("0.2.0"; a static string). Thread-safe. */
int dtb_version(const char **version);

/* A short English description of status s ("table not found", ...), never NULL.
 * Thread-safe (static strings). */
const char *dtb_strerror(dtb_status s);

/* ---- opening ---------------------------------------------------------------------------------- */

typedef struct dtb_db dtb_db;

/* Receives one line of text (no newline) about a problem: a table file that cannot be used (the
 * message names the file), a block that fails its checksum, an unreadable directory. Called
 * from whichever thread met the problem, possibly from several threads at once; it must not call
 * back into the library with the same db. */
typedef void (*dtb_log_fn)(void *user, const char *message);

/* Structs the caller allocates and the library reads or fills (dtb_options, dtb_cache_stats)
 * start with struct_size, which the caller sets to sizeof the struct as its dtb.h declares it.
 * A later version may add fields at the end: the library reads and writes only the first
 * struct_size bytes, so a program built against an older header keeps working with a newer
 * library. The value types (dtb_position, dtb_pdn_move, dtb_ranked_move) are fixed for a
 * DTB_API_VERSION. */
typedef struct dtb_options {
    size_t struct_size; /* sizeof(dtb_options); DTB_OPTIONS_INIT sets it */
    /* Table directories, searched in this order. Each may hold <variant>/ subdirectories (as
     * dtbgen writes them) or the table files directly. */
    const char *const *paths;
    int npaths;
    /* Variant name ("international", "english", "russian", "brazilian", "canadian"); NULL: the
     * variant of the tables found (an error when tables of several variants are found). */
    const char *variant;
    /* Bytes of decompressed table blocks kept in memory. The cache may exceed it by at most one
     * block (64 KiB by default) per lock shard. 0: the default, sized for an engine: the WDL
     * working set (dtb_working_set) of every complete piece count found at dtb_open, with an
     * eighth more for the blocks a search brings in (so that dtb_warm of them fits), at least
     * 64 MiB and at most a quarter of the machine's physical memory; dtb_cache_budget says what
     * was chosen. Sizing it opens the header of every table it counts (no block is read). */
    uint64_t cache_bytes;
    dtb_log_fn log; /* NULL: no messages */
    void *log_user;
    /* Added in 0.2.0. Background threads that read the blocks DTB_CACHE_ONLY probes miss (and
     * open the tables they find not yet opened), so that the cache warms while an engine
     * searches. 0: the default, one thread (enough for most engines: a read takes a fraction of
     * a millisecond); DTB_NO_LOADERS: none (a cache-only miss then only returns
     * DTB_E_NOTCACHED, and nothing but reading probes and dtb_warm fills the cache); at most 8.
     * The threads sleep while nothing is missed and are stopped by dtb_close. */
    int loader_threads;
    /* Added in 0.2.0. The notation of the library's own texts: the FENs of dtb_position_to_fen
     * and the move texts of dtb_pdn_move.text (dtb_probe_moves, dtb_probe_line).
     * DTB_TEXTS_VARIANT (0, the default): as the variant's players write them (dtb_db_notation:
     * "c3-d4", "W:WKc1:BKh8" in russian and brazilian, numbers elsewhere); DTB_TEXTS_NUMERIC:
     * PDN numbers everywhere; DTB_TEXTS_ALGEBRAIC: names everywhere. A program built against a
     * dtb.h without this field (its struct_size ends before it) gets numbers, as before. */
    int texts;
} dtb_options;

/* dtb_options.loader_threads: no loader thread. */
#define DTB_NO_LOADERS (-1)

/* Values of dtb_options.texts. */
enum { DTB_TEXTS_VARIANT = 0, DTB_TEXTS_NUMERIC = 1, DTB_TEXTS_ALGEBRAIC = 2 };

/* An initializer with struct_size set and every option at its default:
 *     dtb_options o = DTB_OPTIONS_INIT;  o.paths = dirs;  o.npaths = 1;
 * The same line compiles as C (a designated initializer, C99 and later, usable for static
 * objects too) and as C++ (a call: designated initializers are C++20 only, and a brace list
 * that names only the first member draws -Wmissing-field-initializers). */
#ifdef __cplusplus
static inline dtb_options dtb_options_init_(void)
{
    dtb_options o = dtb_options();
    o.struct_size = sizeof o;
    return o;
}
#define DTB_OPTIONS_INIT dtb_options_init_()
#else
#define DTB_OPTIONS_INIT {.struct_size = sizeof(dtb_options)}
#endif

/* Opens the tables of one variant (egdb-driver style: directories, cache budget, log callback).
 * Parameters: o: directories, variant, cache budget, log callback (copied: o and the strings
 *   it points to need not outlive the call). out: receives the handle, or NULL on failure.
 * Returns: DTB_OK; DTB_E_INVALID (o->struct_size not set, no directory given, unknown variant,
 *   tables of several variants and no variant chosen, loader_threads outside -1..8, texts not a
 *   DTB_TEXTS_* value); DTB_E_VERSION (o->struct_size larger than
 *   this library's dtb_options: a header newer than the library); DTB_E_NOTFOUND (no directory exists, or no variant given
 *   and no table found); DTB_E_NOMEM. The log callback receives the reason.
 * Notes: directories are scanned once here, to learn the variant and which materials exist
 *   (dtb_max_pieces); files are opened lazily, on first use, and kept open until dtb_close.
 *   A table is looked for when first needed: one added to the directories before that is
 *   found (dtb_max_pieces does not change), one found missing or damaged stays so for this
 *   handle. The first directory holding a file wins; a damaged file there is an error, not a
 *   reason to look further. Thread-safe (no shared state between handles). */
dtb_status dtb_open(const dtb_options *o, dtb_db **out);

/* The cache budget in bytes (dtb_options.cache_bytes, or the default dtb_open chose for 0).
 * Thread-safe. */
uint64_t dtb_cache_budget(const dtb_db *db);

/* Closes the files and frees the cache. db may be NULL.
 * Thread safety: no other call may be running on db, or start after. */
void dtb_close(dtb_db *db);

/* The variant's name ("international"). Thread-safe. */
const char *dtb_db_variant(const dtb_db *db);

/* Number of playable squares of the variant's board (50 for international). Thread-safe. */
int dtb_db_squares(const dtb_db *db);

/* The largest n such that every material of 2..n pieces has a table found at dtb_open: for WDL
 * probes (a .wld or a .dtw file) when dtw is false, for DTW probes (a .dtw file) when dtw is
 * true. 1 when not even every 2-piece material is there. Thread-safe. */
int dtb_max_pieces(const dtb_db *db, bool dtw);

/* Copies the message of the latest failed call on db made by the calling thread into buf (size
 * bytes, always NUL-terminated when size > 0) and returns its status; DTB_OK and "" when this
 * thread's calls on db have not failed yet. Like errno, the message is the thread's own: another
 * thread's failures never replace it. Cache-only misses (DTB_E_NOTCACHED) and game-over
 * positions (DTB_E_GAMEOVER) are not recorded, so they stay cheap. A thread keeps the messages of its eight most recently failing handles.
 * Thread-safe. */
dtb_status dtb_last_error(dtb_db *db, char *buf, size_t size);

/* ---- positions and moves ----------------------------------------------------------------------- */

enum { DTB_SIDE_WHITE = 0, DTB_SIDE_BLACK = 1 };

/* A position, as plain data (copy it freely). Square s (1..N) is bit (s-1) % 64 of word
 * (s-1) / 64 of a set; men[DTB_SIDE_WHITE] are the white men, and so on. White men move towards
 * square 1. Fill it from a FEN (dtb_position_from_fen) or square by square (dtb_position_put). */
typedef struct dtb_position {
    uint64_t men[2][2];   /* [side][word] */
    uint64_t kings[2][2]; /* [side][word] */
    int side;             /* side to move: DTB_SIDE_WHITE or DTB_SIDE_BLACK */
} dtb_position;

/* An empty board with side to move. Thread-safe. */
static inline void dtb_position_clear(dtb_position *p, int side)
{
    /* memset, not a compound literal (not C++): padding too, so positions compare with memcmp */
    memset(p, 0, sizeof *p);
    p->side = side;
}

/* Puts a piece of the given side (DTB_SIDE_*) on square (1..N): a king when king is true.
 * Returns: DTB_OK; DTB_E_INVALID, with p unchanged, for a square outside 1..128, a side that is
 *   neither, or a square already taken. It knows no board: a square beyond the variant's or a
 *   man on its promotion row is rejected by the probes, or at once by dtb_position_set.
 * Notes: returned void before 0.2.0; callers that ignore the status still compile. Thread-safe
 *   (p is the caller's). */
static inline dtb_status dtb_position_put(dtb_position *p, int side, bool king, int square)
{
    if (square < 1 || square > 128 || (side != DTB_SIDE_WHITE && side != DTB_SIDE_BLACK))
        return DTB_E_INVALID;
    const int w = (square - 1) / 64;
    const uint64_t bit = (uint64_t)1 << ((square - 1) % 64);
    if ((p->men[0][w] | p->men[1][w] | p->kings[0][w] | p->kings[1][w]) & bit)
        return DTB_E_INVALID;
    (king ? p->kings[side] : p->men[side])[w] |= bit;
    return DTB_OK;
}

/* dtb_position_put checked against the db's board as well.
 * Parameters: p: a position being built (dtb_position_clear first). side: DTB_SIDE_*. king: a
 *   king, else a man. square: a PDN square.
 * Returns: DTB_OK; DTB_E_INVALID, with p unchanged, when the square is not one of the board's
 *   (1..dtb_db_squares), is taken, or is on the promotion row of a man of that side (square 1..5
 *   for a white man in international), or side is neither.
 * Notes: a whole position is checked only when probed (or by dtb_position_from_squares): the
 *   side not to move must have a piece. Thread-safe; does not record dtb_last_error. */
dtb_status dtb_position_set(const dtb_db *db, dtb_position *p, int side, bool king, int square);

/* A position from lists of squares: the builder an engine with square lists calls.
 * Parameters: side: the side to move (DTB_SIDE_*). white_men[0..n_white_men) etc.: PDN squares;
 *   a list may be NULL when its count is 0. out: receives the position on DTB_OK. err: a
 *   one-line reason on failure (may be NULL; size bytes, DTB_MESSAGE_SIZE is always enough).
 * Returns: DTB_OK; DTB_E_INVALID (a negative count, a list NULL with a count, a square as
 *   dtb_position_set refuses it, more pieces than a side can have, the side not to move without
 *   a piece): err names the first bad square.
 * Notes: the checks of dtb_position_from_fen; out is written only on DTB_OK. Thread-safe; does
 *   not record dtb_last_error. */
dtb_status dtb_position_from_squares(const dtb_db *db, int side, const int *white_men,
                                     int n_white_men, const int *white_kings, int n_white_kings,
                                     const int *black_men, int n_black_men,
                                     const int *black_kings, int n_black_kings, dtb_position *out,
                                     char *err, size_t size);

/* Reads a PDN FEN ("W:W31,32,K33:B1,2,K3"; ranges, a trailing dot and unknown fields are
 * accepted) for the db's variant.
 * Returns: DTB_OK, or DTB_E_INVALID with a one-line reason in err (err may be NULL; size bytes,
 *   DTB_MESSAGE_SIZE is always enough). The position is checked as by the probes: pieces on
 *   playable squares, one per square, no man on its promotion row, and the side not to move has
 *   a piece. Thread-safe; does not record dtb_last_error. */
dtb_status dtb_position_from_fen(const dtb_db *db, const char *fen, dtb_position *p, char *err,
                                 size_t size);

/* The clock of a FEN: the value of its "H" field (lidraughts' halfmove clock,
 * "W:W31,K32:B1:H12": the plies since the move-count rules' counter was last reset), the clock
 * dtb_probe_rules takes.
 * Returns: DTB_OK with *clock the H value, or 0 when fen has no H field; DTB_E_INVALID with a
 *   one-line reason in err (may be NULL; size bytes, DTB_MESSAGE_SIZE is always enough) when the
 *   H field is malformed ("Hx", "H-1", "H", two H fields, beyond 1000000). Nothing else of fen
 *   is checked (dtb_position_from_fen does that). Thread-safe; does not record dtb_last_error. */
dtb_status dtb_fen_clock(const char *fen, int *clock, char *err, size_t size);

/* Writes p as a canonical PDN FEN (squares ascending, no ranges) into buf, in the notation of
 * the db's texts (dtb_options.texts; by default the variant's: "W:WKc1:BKh8" in russian).
 * Returns: DTB_OK, DTB_E_INVALID (p is not a valid position), DTB_E_OVERFLOW (buf too small;
 *   400 bytes is always enough). Thread-safe. */
dtb_status dtb_position_to_fen(const dtb_db *db, const dtb_position *p, char *buf, size_t size);

/* The notation the players of the db's variant write (DTB_NOTATION_ALGEBRAIC for russian and
 * brazilian), which the library's texts use unless dtb_options.texts chose another.
 * Thread-safe. */
dtb_notation dtb_db_notation(const dtb_db *db);

/* Square (1..N) as text in notation n ("22" or "c3") into buf.
 * Returns: DTB_OK; DTB_E_INVALID (no such square); DTB_E_OVERFLOW (buf too small; 8 bytes are
 *   always enough). Thread-safe. */
dtb_status dtb_square_to_text(const dtb_db *db, int square, dtb_notation n, char *buf, size_t size);

/* The square (1..N) that text names, as a number or (any variant's board has names) as
 * "c3". Returns: DTB_OK; DTB_E_INVALID (not a square of the board: "i9", a light square, "0",
 * trailing characters). Thread-safe. */
dtb_status dtb_square_from_text(const dtb_db *db, const char *text, int *square);

/* dtb_position_to_fen in notation n ("W:WKc1:BKh8"). Returns as dtb_position_to_fen.
 * Thread-safe. dtb_position_from_fen reads both notations where the variant's players write
 * names. */
dtb_status dtb_position_to_fen_in(const dtb_db *db, const dtb_position *p, dtb_notation n,
                                  char *buf, size_t size);

/* Longest move text with its NUL. */
#define DTB_MOVE_TEXT_SIZE 128
/* Most pieces one move can capture. */
#define DTB_MAX_CAPTURED 32

/* A legal move. */
typedef struct dtb_pdn_move {
    int from, to;                            /* PDN squares */
    int ncaptured;
    unsigned char captured[DTB_MAX_CAPTURED]; /* squares of the captured pieces, ascending */
    bool promotes;                           /* a man that ends the move as a king */
    char text[DTB_MOVE_TEXT_SIZE];           /* in the notation of the db's texts
                                                (dtb_options.texts): "32-28", "28x19", or
                                                "28x19x8" when two moves share start and end;
                                                "c3-d4", "c3:e5", "c3:e5:c7" with names */
} dtb_pdn_move;

/* Legal move m of p as text in notation n ("22-18" / "c3-d4", "22x13" / "c3:a5").
 * Returns: DTB_OK, DTB_E_INVALID (p invalid or m not a legal move of p), DTB_E_OVERFLOW (buf
 *   too small; DTB_MOVE_TEXT_SIZE is always enough). Thread-safe. */
dtb_status dtb_move_to_text(const dtb_db *db, const dtb_position *p, const dtb_pdn_move *m,
                            dtb_notation n, char *buf, size_t size);

/* The position after legal move m of p (as returned by dtb_probe_moves or dtb_probe_line).
 * Returns: DTB_OK, DTB_E_INVALID (p invalid, or m not a legal move of p). Thread-safe. */
dtb_status dtb_position_after(const dtb_db *db, const dtb_position *p, const dtb_pdn_move *m,
                              dtb_position *out);

/* ---- probing ------------------------------------------------------------------------------------ */

/* Probe flags. */
enum {
    /* Answer only from memory: if a block (or a table not yet opened) would have to be read,
     * return DTB_E_NOTCACHED instead of touching the disk. For use deep in an engine's search.
     * With dtb_options.loader_threads, what was missed is scheduled for the loader threads to
     * read (the probing thread never waits for them), so a later probe of it hits: a cache-only
     * probe is also a prefetch. */
    DTB_CACHE_ONLY = 1u,
    /* The caller promises that the side to move has no capture (an engine that generated its
     * moves knows): the probe is one table lookup, without the capture test. If the promise is
     * broken the answer is unspecified but safe: DTB_OK with a value that may be wrong (a WDL of
     * the three, a dtw in 0..DTB_MAX_DTW: whatever the table stores for that capture position),
     * or DTB_E_CORRUPT where the table stores no value there; never a crash or a read outside
     * the tables. Not detected: detecting it is the capture test this flag saves. Ignored by
     * dtb_probe_moves and dtb_probe_line (their positions after a move are the library's). */
    DTB_QUIET_POSITION = 2u,
};

/* Win, draw or loss for the side to move of p.
 * Parameters: flags: 0, DTB_CACHE_ONLY, DTB_QUIET_POSITION or both. wdl: receives the result on DTB_OK.
 * Returns: DTB_OK; DTB_E_INVALID (p is not a legal position: a piece off the board, two on one
 *   square, a man on its promotion row, the side not to move without pieces); DTB_E_GAMEOVER
 *   (the side to move has no piece: see "The game is over" below); DTB_E_NOTFOUND (a
 *   table p needs is not there; the message names the material); DTB_E_NOTCACHED (cache-only
 *   and not in memory); DTB_E_CORRUPT / DTB_E_VERSION / DTB_E_MISMATCH / DTB_E_IO (a damaged or
 *   wrong file; the message names it); DTB_E_NOMEM.
 * Notes: uses the .wld table of p's material, or its .dtw table when there is no .wld (one that
 *   stores its losses only cannot stand in: DTB_E_NOTFOUND, naming both files). A capture
 *   position is resolved by searching its captures (the tables do not store it). A side to move
 *   with pieces but without a legal move has lost (DTB_OK, DTB_LOSS, DTW 0: the tables hold
 *   it). Thread-safe.
 * The game is over (the one place this is decided): a position whose side to move has no piece
 *   is not a tablebase position. Probes (dtb_probe_wdl, dtb_probe_dtw and their _many forms)
 *   return DTB_E_GAMEOVER for it, no value, so an engine's own game-over score cannot be
 *   replaced by a tablebase score by mistake; dtb_covers and dtb_covers_material say false;
 *   dtb_probe_moves and dtb_probe_line give no move (count 0, DTB_OK). The side to move has
 *   lost (in 0 plies). */
dtb_status dtb_probe_wdl(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl);

/* Win, draw or loss and the DTW (plies; 0 for a draw) for the side to move of p.
 * Returns and notes as dtb_probe_wdl, but the .dtw tables are needed (DTB_E_NOTFOUND
 *   otherwise), and where a .dtw table stores its losses only (dtbgen's default,
 *   docs/FORMAT.md §8.7) the .wld table of its material too (DTB_E_NOTFOUND naming both). The
 *   distance of a win there is searched over its moves: such a probe costs a probe of each of
 *   its moves (a few dozen), those of draws and losses two lookups. Thread-safe. */
dtb_status dtb_probe_dtw(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl,
                         int *dtw);

/* Win, draw or loss and the MTC (moves to conversion, in plies; 0 for a draw) for the side to
 * move of p: the plies to the next capture or man move (promotions included) that keeps the
 * win, the winner taking the shortest way and the loser the longest, with no move-count rule
 * (docs/FORMAT.md §8.5).
 * Parameters: as dtb_probe_dtw; *mtc gets the MTC.
 * Returns and notes as dtb_probe_wdl, but the .mtc tables are needed (DTB_E_NOTFOUND
 *   otherwise), and a capture position's captures are searched in the .wld (or .dtw) tables:
 *   every move there converts, so a capture position is at MTC 1 (or a draw). A side to move
 *   without a legal move has lost at MTC 0. Thread-safe. */
dtb_status dtb_probe_mtc(dtb_db *db, const dtb_position *p, unsigned flags, dtb_wdl *wdl,
                         int *mtc);

/* n probes at once: for each i < n, status[i] and wdl[i] (and dtw[i]) are what dtb_probe_wdl
 * (dtb_probe_dtw) would give for ps[i]; wdl[i] and dtw[i] are written only where status[i] is
 * DTB_OK. The answers are the same; the difference is speed: the memory of every position's
 * block is fetched before any is read, so that positions spread over many cached blocks (the
 * children of a node, a list of leaves) wait for their cache misses together rather than one
 * after another (bench: about twice the probes per second over a large cached working set).
 * Parameters: n >= 0 (0: nothing to do); status may be NULL when only the overall status
 *   matters.
 * Returns: DTB_OK when every probe gave DTB_OK, else the status of the last one that did not
 *   (dtb_last_error words it when it is a failure with a message); DTB_E_INVALID for n < 0.
 *   Thread-safe. */
dtb_status dtb_probe_wdl_many(dtb_db *db, const dtb_position *ps, int n, unsigned flags,
                              dtb_wdl *wdl, dtb_status *status);
dtb_status dtb_probe_dtw_many(dtb_db *db, const dtb_position *ps, int n, unsigned flags,
                              dtb_wdl *wdl, int *dtw, dtb_status *status);

/* A legal move with its value. */
typedef struct dtb_ranked_move {
    dtb_pdn_move move;
    dtb_wdl wdl; /* result for the side to move of the probed position if it plays this move */
    int dtw;     /* plies to the end from the probed position, this move included (so the best
                    move's dtw equals the position's); 0 for a draw; DTB_DTW_UNKNOWN for a win
                    or loss whose DTW no table holds (a set of .wld files only) */
} dtb_ranked_move;

/* dtb_ranked_move.dtw of a win or loss known from .wld tables alone. */
#define DTB_DTW_UNKNOWN (-1)

/* Every legal move of p with its value, best first: wins by shortest DTW (wins of unknown DTW
 * after those of known DTW), then draws, then losses by longest DTW (losses of unknown DTW before
 * those of known DTW); equal moves in move generation order.
 * Parameters: out: room for cap moves (cap 0 and out NULL ask for the count only). count:
 *   receives the number of legal moves (even when larger than cap).
 * Returns: as dtb_probe_dtw, or DTB_E_OVERFLOW when there are more than cap moves (out then
 *   holds the first cap of the ranking). A position without legal moves (or whose side to move
 *   has no piece) has count 0 and DTB_OK.
 * Notes: each move's value comes from the .dtw tables of the position after it where they are
 *   there, else from its WDL tables (.wld) with dtw DTB_DTW_UNKNOWN: a set of .wld files alone
 *   ranks the root moves by result. Without DTW nothing says which of the winning moves makes
 *   progress, so an engine searches among the moves ranked first rather than play the first
 *   one. DTB_E_NOTFOUND only when a move's position has neither table. Thread-safe. */
dtb_status dtb_probe_moves(dtb_db *db, const dtb_position *p, unsigned flags, dtb_ranked_move *out,
                           int cap, int *count);

/* Whether legal move m is the engine's move from square from to square to taking the pieces on
 * captured[0..ncaptured) (PDN squares, in any order, each once; NULL when ncaptured is 0): the
 * same start, end and set of captured squares, which is what tells two moves apart (two moves
 * with the same start and end differ by what they capture). ncaptured < 0: any captured set
 * (start and end only). Thread-safe, no db needed. */
bool dtb_move_matches(const dtb_pdn_move *m, int from, int to, const int *captured,
                      int ncaptured);

/* The legal move of p that matches the engine's move (dtb_move_matches), with its text.
 * Parameters: as dtb_move_matches; out: receives the move on DTB_OK.
 * Returns: DTB_OK; DTB_E_INVALID when p is not valid, no legal move matches, or (ncaptured < 0:
 *   "any captured set", for an engine that keeps only start and end) several legal moves share
 *   from and to (the message says how many). Thread-safe. To find a move in a ranking, loop
 *   over dtb_probe_moves' out with dtb_move_matches. */
dtb_status dtb_find_move(dtb_db *db, const dtb_position *p, int from, int to, const int *captured,
                         int ncaptured, dtb_pdn_move *out);

/* ---- Answers under the move-count draw rules (docs/RULES.md) ------------------------------
 *
 * Games are drawn when too many moves pass without a capture or a man move (FMJD 6.2: 25 moves
 * of kings only), or too many after a few pieces remain (6.3: 16 moves, 6.4: 5 moves with a
 * lone king). These answers take a position and its game's counter, the clock (the plies since
 * the counter was last reset, as lidraughts' FEN field H), and say what perfect play makes of
 * it under the rules of the database's variant (international: "fmjd", lidraughts' reading of
 * them; english: "wcdf", the 40-move rule, 80 plies; russian and brazilian: "fmjd64",
 * lidraughts' reading of FMJD-64 7.2.4-7.2.8, which also counts the plies a lone king holds
 * the main road: dtb_rule_counters). They need the rule tables (dtbgen --metrics
 * wld,dtw,rules: .fmjd, .wcdf, .fmjd64 files). A variant without rules in dtb is answered
 * under "none": unlimited play, as dtb_probe_wdl. */

/* What the rules make of a win or loss. */
typedef enum dtb_rule_category {
    DTB_RULE_LOSS = -2,         /* lost under the rules */
    DTB_RULE_BLESSED_LOSS = -1, /* lost in unlimited play, drawn by the rules */
    DTB_RULE_DRAW = 0,          /* drawn either way */
    DTB_RULE_CURSED_WIN = 1,    /* won in unlimited play, drawn by the rules */
    DTB_RULE_WIN = 2,           /* won under the rules */
} dtb_rule_category;

/* The answer for a position and clock. New fields are only ever added at the end. */
typedef struct dtb_rule_answer {
    char rules[16];         /* the rule set answered under: "fmjd", "wcdf", or "none" */
    char rule[16];          /* the rule whose count runs here: "25-move", "16-move", "5-move",
                               "40-move"; under fmjd64 "15-move", "30-move", "60-move",
                               "three-kings", "main-road", "5-move", "none" (no count);
                               "" under "none" */
    dtb_rule_category category;
    dtb_wdl wdl;            /* under the rules at this clock (a cursed win is DTB_DRAW) */
    dtb_wdl unlimited;      /* in unlimited play (dtb_probe_wdl's) */
    int plies;              /* the rule distance: plies from here to the next reset of the count
                               that keeps the result, the winner taking the shortest way and the
                               loser the longest (0: no legal move now); a win or loss holds
                               under the rules exactly when plies <= limit - clock. -1 when no
                               count would let the result happen (a draw, or a cursed win or
                               blessed loss at any clock) */
    int limit;              /* plies the count may reach here (50, 32, 10 under FMJD; under
                               fmjd64 by class and, on the main road, the diagonal count);
                               0 under "none" and where no count runs */
    int clock;              /* the clock asked about */
} dtb_rule_answer;

/* The counters a game keeps for its move-count rules. Zero-initialise: new fields are only
 * ever added at the end, and 0 is their value at a fresh count. */
typedef struct dtb_rule_counters {
    int clock;    /* plies since the count was last reset (lidraughts' FEN field H) */
    int diagonal; /* fmjd64 (7.2.7): plies so far that ended with a lone king alone on the main
                     road against three pieces with a king, as lidraughts counts them (from
                     the capture that made the material; not in a FEN, so 0 from one); at 10
                     its limit falls from 30 plies to 10. Other rule sets ignore it */
} dtb_rule_counters;

/* The value of p under its variant's move-count rules with the count at clock plies.
 * Parameters: clock >= 0; at or beyond the limit a side that can move is drawn (the game is
 *   over), one that cannot has lost.
 * Returns: as dtb_probe_wdl (DTB_E_GAMEOVER for a side without pieces), DTB_E_INVALID for a
 *   negative clock, DTB_E_NOTFOUND when the set has no rule tables for p's material (or its
 *   WDL tables). Thread-safe. */
dtb_status dtb_probe_rules(dtb_db *db, const dtb_position *p, int clock, unsigned flags,
                           dtb_rule_answer *out);

/* dtb_probe_rules with every counter of the game (c: not NULL). DTB_E_INVALID also for a
 * negative diagonal count. Thread-safe. */
dtb_status dtb_probe_rules_at(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                              unsigned flags, dtb_rule_answer *out);

/* A legal move with its value under the rules. */
typedef struct dtb_rule_move {
    dtb_pdn_move move;
    dtb_rule_category category; /* for the side to move of the probed position, playing it */
    int plies;                  /* a win or loss under the rules: plies to the next reset of the
                                   count that keeps it, this move included; -1 otherwise */
    int clock;                  /* the clock after this move: 0 when it resets the count */
} dtb_rule_move;

/* Every legal move of p with its value under the rules at clock, best first: wins by fewest
 * plies, cursed wins, draws, blessed losses, losses by most plies; equal moves in move
 * generation order. Playing the first move every ply never lets a rule draw a win.
 * Parameters and returns: as dtb_probe_moves, with clock as dtb_probe_rules. Thread-safe. */
dtb_status dtb_probe_rule_moves(dtb_db *db, const dtb_position *p, int clock, unsigned flags,
                                dtb_rule_move *out, int cap, int *count);

/* dtb_probe_rule_moves with every counter of the game (c: not NULL). Thread-safe. */
dtb_status dtb_probe_rule_moves_at(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                                   unsigned flags, dtb_rule_move *out, int cap, int *count);

/* The counters after legal move m of p (as dtb_probe_moves or dtb_find_move give it; from, to
 * and the captured squares identify it) when they are c before it: what a game keeps from move
 * to move to ask dtb_probe_rules_at. Returns DTB_OK, DTB_E_INVALID (p invalid, m not legal in
 * p, a negative counter). Thread-safe. */
dtb_status dtb_rule_counters_after(dtb_db *db, const dtb_position *p, const dtb_rule_counters *c,
                                   const dtb_pdn_move *m, dtb_rule_counters *out);

/* The name of a category: "win", "cursed-win", "draw", "blessed-loss", "loss" (as lichess's
 * tablebase API names them). Thread-safe. */
const char *dtb_rule_category_name(dtb_rule_category c);

/* Most plies a best line can have. */
#define DTB_MAX_LINE DTB_MAX_DTW

/* The best line from p to the end of the game: each move the first of dtb_probe_moves' ranking
 * (the winner's quickest win, the loser's longest resistance).
 * Parameters: out: room for cap moves (DTB_MAX_LINE is always enough). count: receives the
 *   number of plies of the line (the position's DTW); 0 for a draw (a draw has no end) and for
 *   a position where the game is over (the side to move has no piece or no move).
 * Returns: as dtb_probe_moves, but every move needs its .dtw table (DTB_E_NOTFOUND otherwise);
 *   DTB_E_OVERFLOW when the line is longer than cap (out then holds
 *   its first cap moves). Thread-safe. */
dtb_status dtb_probe_line(dtb_db *db, const dtb_position *p, unsigned flags, dtb_pdn_move *out,
                          int cap, int *count);

/* ---- checking the files -------------------------------------------------------------------------- */

/* Called during dtb_verify with the file being checked and the bytes checked so far and in all
 * (over every file); return false to stop. */
typedef bool (*dtb_verify_progress)(void *user, const char *file, uint64_t done, uint64_t total);

/* Verify flags. */
enum {
    DTB_VERIFY_DECODE = 1u, /* also decompress every block (slower; catches writer bugs too) */
};

/* Checks every table file of the db's variant in its directories: header, block table, every
 * block's checksum and the whole-file checksum.
 * Parameters: flags: 0 or DTB_VERIFY_DECODE. progress: may be NULL. bad: receives the number of
 *   files that failed (may be NULL).
 * Returns: DTB_OK when every file is sound; otherwise the status of the first failure (each
 *   failing file is also reported through the log callback, by name, and the last one is
 *   dtb_last_error); DTB_E_ABORTED when progress returned false.
 * Notes: reads every byte of every file (does not use or disturb the cache). Thread-safe. */
dtb_status dtb_verify(dtb_db *db, unsigned flags, dtb_verify_progress progress, void *user,
                      int *bad);

/* Counters since dtb_open: of the block cache (per block lookup: one probe may look up several
 * blocks, a capture position one per position its search reaches, or none), of the loader
 * threads (per request) and of the probes (per position probed). Start it with
 * DTB_CACHE_STATS_INIT. */
typedef struct dtb_cache_stats {
    size_t struct_size; /* sizeof(dtb_cache_stats), set by the caller */
    uint64_t hits;      /* block lookups that found their block in memory (blocks, not probes:
                           probe_hits counts probes) */
    uint64_t misses;    /* block lookups that did not (then the block was read, or the lookup
                           was cache-only and answered DTB_E_NOTCACHED) */
    uint64_t bytes;     /* bytes of blocks held now */
    uint64_t blocks;    /* blocks held now */
    /* Added in 0.2.0. */
    uint64_t evictions;       /* blocks put out of the cache to make room: a count that keeps
                                 growing says the cache is smaller than the probes' working set */
    uint64_t loads_scheduled; /* requests (a block, or a table to open) queued for the loader
                                 threads by cache-only misses; a block missed again while its
                                 request waits is not queued again */
    uint64_t loads_done;      /* requests the loader threads finished: the block read (or found
                                 read already), the table opened (or found missing) */
    uint64_t loads_dropped;   /* requests lost: not queued because another thread held the queue
                                 at that moment, or queued and then pushed out of the full queue
                                 (1024 requests) by a newer one; the next miss of the block asks
                                 again */
    /* Probes, per position probed by dtb_probe_wdl, dtb_probe_dtw and their _many forms (not
     * the probes of dtb_probe_moves, dtb_probe_line, dtb_warm). probes is the sum of the five
     * after it. */
    uint64_t probes;
    uint64_t probe_hits;      /* answered (DTB_OK): from memory, or after reading a block when
                                 the probe was not cache-only; the cache-only hit rate of a search
                                 is probe_hits / probes when all its probes are cache-only */
    uint64_t probe_notcached; /* DTB_E_NOTCACHED: cache-only, and a block or a table to open was
                                 not in memory (the loaders, if any, were asked for it) */
    uint64_t probe_notfound;  /* DTB_E_NOTFOUND: a table the position needs is missing */
    uint64_t probe_invalid;   /* DTB_E_INVALID or DTB_E_GAMEOVER: not a position to probe */
    uint64_t probe_failed;    /* any other status: a damaged or unreadable file, out of memory */
} dtb_cache_stats;

/* An initializer of a dtb_cache_stats with struct_size set (C and C++, as DTB_OPTIONS_INIT):
 *     dtb_cache_stats st = DTB_CACHE_STATS_INIT;  dtb_get_cache_stats(db, &st); */
#ifdef __cplusplus
static inline dtb_cache_stats dtb_cache_stats_init_(void)
{
    dtb_cache_stats st = dtb_cache_stats();
    st.struct_size = sizeof st;
    return st;
}
#define DTB_CACHE_STATS_INIT dtb_cache_stats_init_()
#else
#define DTB_CACHE_STATS_INIT {.struct_size = sizeof(dtb_cache_stats)}
#endif

/* Fills the first st->struct_size bytes of *st (struct_size itself is left as it is).
 * Returns: DTB_OK; DTB_E_INVALID when st->struct_size is smaller than its first version
 *   (struct_size and the four counters). Thread-safe; the counters are approximate while other
 *   threads probe. */
dtb_status dtb_get_cache_stats(dtb_db *db, dtb_cache_stats *st);

/* ---- engines: warming, sizing, coverage ------------------------------------------------------ */

/* dtb_warm flags. */
enum {
    DTB_WARM_DTW = 1u, /* the tables DTW probes use, instead of those WDL probes use (with the
                          .wld table of a .dtw table that stores its losses only: they read it
                          first) */
};

/* Reads into the cache, at start-up, the tables an engine's probes meet most: every block of the
 * tables of the materials of 2..max_pieces pieces, fewest pieces first, each material whole,
 * while they fit in 7/8 of the cache budget (a material that does not fit is skipped; a smaller
 * one after it may still fit). The rest of the budget is left to the blocks the search brings in.
 * Parameters: max_pieces: the largest piece count to warm (below 2: nothing). flags: 0 (the
 *   tables of WDL probes: .wld, or .dtw where there is no .wld) or DTB_WARM_DTW. bytes: receives
 *   the cache budget the warm tables take (may be NULL).
 * Returns: DTB_OK: every table of 2..max_pieces found is warm; DTB_E_NOROOM: some did not fit in
 *   7/8 of the budget and were skipped (the others are warm; *bytes says how much; a larger
 *   cache_bytes, or the default, holds them: dtb_working_set gives the need); the status of the
 *   first block that could not be read (DTB_E_CORRUPT, ...; the other tables are still warmed;
 *   dtb_last_error words it), which takes precedence over DTB_E_NOROOM; DTB_E_NOMEM.
 * Notes: reads and decompresses on the calling thread (dtb_working_set gives how much).
 *   Materials without a table are skipped. Thread-safe: probes may run meanwhile. */
dtb_status dtb_warm(dtb_db *db, int max_pieces, unsigned flags, uint64_t *bytes);

/* The cache budget (bytes) the tables of every material of 2..pieces pieces take once
 * decompressed: with cache_bytes at least this, every probe of positions of up to that many
 * pieces is a hit once its block has been read. "Sizing the cache" at the top of this file says
 * why it matters.
 * Parameters: pieces: 2 or more. dtw: the tables DTW probes use, else those WDL probes use.
 *   bytes: receives the size on DTB_OK.
 * Returns: DTB_OK; DTB_E_INVALID (pieces below 2); DTB_E_NOTFOUND (a material of 2..pieces
 *   pieces has no table; the message names it); DTB_E_CORRUPT etc. for a file that cannot be
 *   opened.
 * Notes: opens the tables' files (their headers say the sizes), reads no block. Thread-safe. */
dtb_status dtb_working_set(dtb_db *db, int pieces, bool dtw, uint64_t *bytes);

/* Whether the tables cover p: a table for p's material was found at dtb_open (for DTW probes
 * when dtw, else for WDL probes), and so was one for every material with fewer pieces (where its
 * captures lead). Then a probe of p gives DTB_OK unless a file is damaged, removed since
 * dtb_open, or cache-only and not in memory. A position whose side to move has no piece is
 * not covered: the game is over (dtb_probe_wdl, "The game is over").
 * Returns: true or false; false for a position whose side is neither white nor black. The
 *   position is not otherwise checked (a probe does that).
 * Notes: reads the counts of p's pieces and an array fixed at dtb_open: no lock, no file, no
 *   allocation; costs a few nanoseconds, for use before every probe. A compact set's derived
 *   table also needs its colour-flipped partner, which a compact set always has. Thread-safe. */
bool dtb_covers(const dtb_db *db, const dtb_position *p, bool dtw);

/* dtb_covers for a material given as counts: men and kings of the side to move, then of the
 * other side (a material seen from the side to move, as an engine counts it).
 * Returns: as dtb_covers; false for a negative count, more than 8 pieces of one kind, or no piece
 *   of the side to move or of the other side. Lock-free
 *   and thread-safe. */
bool dtb_covers_material(const dtb_db *db, int men, int kings, int other_men, int other_kings,
                         bool dtw);

#ifdef __cplusplus
}
#endif

#endif
