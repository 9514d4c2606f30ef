/* Everything dtbprobe says about one position (value, DTW, every move ranked with the position
 * it leads to, the best line), gathered once and written as the JSON object that both
 * `dtbprobe --json` and the HTTP API (`dtbprobe serve`) answer with, so the two cannot differ.
 *
 * The JSON object: {"fen", "variant", "side", "wdl", "dtw", "moves": [{"move", "wdl", "dtw",
 * "fen"}], "line": [move texts]}; "dtw" is null for a draw, "moves" and "line" are absent when
 * only WDL tables exist. An error is {"fen", "error"}. */
#ifndef DTB_ANSWER_H
#define DTB_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "board.h"
#include "dtb.h"

/* Room for every legal move: core's move list size (answer.c checks the two agree). */
#define DTB_ANSWER_MAX_MOVES 1024

typedef struct dtb_answer {
    dtb_status status;
    char error[DTB_MESSAGE_SIZE]; /* the library's message when status is not DTB_OK */
    bool have_dtw;                /* false: only WDL tables were found */
    dtb_wdl wdl;
    int dtw;
    dtb_ranked_move moves[DTB_ANSWER_MAX_MOVES];
    int nmoves;
    dtb_pdn_move line[DTB_MAX_LINE];
    int nline;
} dtb_answer;

/* Probes everything about p into *a; falls back to WDL alone when there are no DTW tables.
 * Thread-safe (as libdtb). */
void dtb_answer_probe(dtb_db *db, const dtb_position *p, dtb_answer *a);

/* A growing text buffer; the text is always NUL-terminated. */
typedef struct dtb_text {
    char *s;
    size_t len, cap;
    bool failed; /* an allocation failed: the text is incomplete */
} dtb_text;

void dtb_text_free(dtb_text *t);
void dtb_text_printf(dtb_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string, quotes included. */
void dtb_text_json_string(dtb_text *t, const char *s);

/* Appends the JSON object of a successful answer a for p (fen: its canonical FEN), no newline.
 * names: NULL for PDN square numbers; else the board whose algebraic names the FENs and moves
 * are written with (c3, captures c3:e5), as russian and brazilian players write them. */
void dtb_answer_json(dtb_text *t, dtb_db *db, const char *fen, const dtb_position *p,
                     const dtb_answer *a, const dtb_board *names);

/* text (a FEN or a move written with square numbers) with each number replaced by its square's
 * algebraic name on board b and the capture mark 'x' by ':', into out (size bytes). */
void dtb_answer_named(const dtb_board *b, const char *text, char *out, size_t size);

/* Appends {"fen": fen, "error": message}. */
void dtb_answer_error_json(dtb_text *t, const char *fen, const char *message);

/* "win", "draw" or "loss". */
const char *dtb_answer_wdl_name(dtb_wdl w);

#endif
