/* Everything dtbprobe says about one position (value, DTW, every move ranked with the position
 * it leads to, the best line), gathered once and written as the JSON object that both
 * `dtbprobe --json` and the HTTP API (`dtbprobe serve`) answer with, so the two cannot differ.
 *
 * The JSON object: {"fen", "variant", "side", "wdl", "dtw", "mtc", "moves": [{"move", "wdl",
 * "dtw", "fen"}], "line": [move texts]}; "dtw" is null for a draw, "mtc" (moves to conversion,
 * docs/FORMAT.md §8.5) null for a draw or without .mtc tables, "moves" and "line" are empty
 * when only WDL tables exist. An error is {"fen", "error"}.
 *
 * Under the move-count rules (dtb_answer_rules: a set with rule tables, the variant's rules by
 * default) the object also has "rules": {"name", "rule", "category", "wdl", "unlimited",
 * "plies", "limit", "clock", "diagonal", "moves": [{"move", "category", "plies", "clock",
 * "diagonal", "fen"}], "line": [move texts]}: the dtb_rule_answer of the position at the
 * counters (dtb_rule_counters), the moves ranked under the rules with the counters after each,
 * and the line that follows the first ranked move;
 * "plies" is null where dtb.h says -1. Without it (rules "none", or a set without rule tables
 * when none was asked for) the object is as before, key for key. */
#ifndef DTB_ANSWER_H
#define DTB_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "dtb.h"

/* Room for every legal move: core's move list size (answer.c checks the two agree). */
#define DTB_ANSWER_MAX_MOVES 1024

typedef struct dtb_answer {
    dtb_status status;
    char error[DTB_MESSAGE_SIZE]; /* the library's message when status is not DTB_OK */
    dtb_notation notation;        /* of the move texts below and of the FENs dtb_answer_json writes */
    bool have_dtw;                /* false: only WDL tables were found */
    dtb_wdl wdl;
    int dtw;
    bool have_mtc;                /* false: no .mtc table for the position */
    int mtc;
    dtb_ranked_move moves[DTB_ANSWER_MAX_MOVES];
    int nmoves;
    dtb_pdn_move line[DTB_MAX_LINE];
    int nline;
    /* under the move-count rules (dtb_answer_rules) */
    bool have_rules;              /* false: unlimited play only (the fields below unset) */
    dtb_rule_answer rules;
    dtb_rule_counters counters;   /* asked about */
    dtb_rule_move rule_moves[DTB_ANSWER_MAX_MOVES];
    int rule_move_diagonal[DTB_ANSWER_MAX_MOVES]; /* the diagonal count after each move */
    int nrule_moves;
    dtb_pdn_move rule_line[DTB_MAX_LINE];
    int nrule_line;
} dtb_answer;

/* Probes everything about p into *a, with the move texts (moves and line) in notation n; falls
 * back to WDL alone when there are no DTW tables. Thread-safe (as libdtb). */
void dtb_answer_probe(dtb_db *db, const dtb_position *p, dtb_notation n, dtb_answer *a);

/* Whether name is a rule set an answer may be asked under: "fmjd", "wcdf", "fmjd64" or
 * "none". */
bool dtb_answer_rules_known(const char *name);

/* Adds what the move-count rules make of p at counters c to a (after dtb_answer_probe succeeded):
 * under rules "none" nothing; under NULL (the default) the variant's rules where the set has
 * their tables, else nothing; under "fmjd" those rules or an error. On failure sets a->status
 * and a->error (one line): DTB_E_INVALID (a rule set dtb does not know, or not the variant's),
 * DTB_E_NOTFOUND (rules asked for by name, and no rule tables for p's material), or a
 * probe's. A side to move without pieces (the game is over) has no rules section by default.
 * Thread-safe (as libdtb). */
void dtb_answer_rules(dtb_db *db, const dtb_position *p, const char *rules,
                      const dtb_rule_counters *c, dtb_answer *a);

/* p's canonical FEN in notation n into buf (size bytes; DTB_ANSWER_FEN_SIZE is enough), or
 * fallback when p cannot be written. */
#define DTB_ANSWER_FEN_SIZE 512
void dtb_answer_fen(dtb_db *db, const dtb_position *p, dtb_notation n, const char *fallback,
                    char *buf, size_t size);

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

/* Appends the JSON object of a successful answer a for p, no newline: the FENs (p's and those
 * after each move) in a->notation, as its move texts are. */
void dtb_answer_json(dtb_text *t, dtb_db *db, const dtb_position *p, const dtb_answer *a);

/* Appends {"fen": fen, "error": message}. */
void dtb_answer_error_json(dtb_text *t, const char *fen, const char *message);

/* "win", "draw" or "loss". */
const char *dtb_answer_wdl_name(dtb_wdl w);

#endif
