/* The status codes and game results of dtb: the one definition, shared by the library's
 * internals (core/, probe/, gen/) and the public header dtb.h, which includes this file and is
 * installed beside it. Plain C, no dependencies; include dtb.h rather than this file.
 *
 * Every function that can fail returns a dtb_status; values come back through out-parameters. */
#ifndef DTB_STATUS_H
#define DTB_STATUS_H

/* What a call did. */
typedef enum dtb_status {
    DTB_OK = 0,
    DTB_E_INVALID,    /* malformed or impossible input; the message says what */
    DTB_E_RANGE,      /* a value outside what the variant or material allows */
    DTB_E_OVERFLOW,   /* a fixed-size buffer (move list, text) is too small */
    DTB_E_NOTFOUND,   /* a file or table does not exist */
    DTB_E_IO,         /* the system failed to open, read, write or sync; the message says why */
    DTB_E_NOSPACE,    /* disk full or quota exceeded while writing */
    DTB_E_CORRUPT,    /* a file fails a check: truncated, bad magic, checksum mismatch, bad field */
    DTB_E_VERSION,    /* a file format or index scheme version this build does not read */
    DTB_E_MISMATCH,   /* a sound file, but not the one asked for (variant, material, metric) */
    DTB_E_NOMEM,      /* out of memory */
    DTB_E_ABORTED,    /* a callback asked to stop */
    DTB_E_NOTCACHED,  /* a cache-only probe needs data that is not in memory */
    DTB_E_GAMEOVER,   /* the side to move has no piece: the game is over, no table value */
    DTB_E_NOROOM,     /* the cache budget cannot hold what was asked; the rest was done */
} dtb_status;

/* Game result for the side to move. */
typedef enum dtb_wdl { DTB_LOSS = -1, DTB_DRAW = 0, DTB_WIN = 1 } dtb_wdl;

/* Largest DTW any table can hold (plies). A table file stores distances beyond 254 plies in its
 * long list (docs/FORMAT.md §8.4); the generator's solver holds up to this many. It was 254
 * before the long lists (CHANGELOG). */
#define DTB_MAX_DTW 1022

/* How squares are written: PDN numbers, or the algebraic names russian and brazilian players
 * use (files a, b, ... from white's left, ranks 1, 2, ... from white's side: on 8x8 square 1 is
 * b8 and 29 is a1; captures written c3:e5). */
typedef enum dtb_notation { DTB_NOTATION_NUMERIC = 0, DTB_NOTATION_ALGEBRAIC = 1 } dtb_notation;

#endif
