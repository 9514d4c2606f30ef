/* Textbook claims checked against the tables (docs/DESIGN.md §1; file format in
 * tables/claims/README.md).
 *
 * A claim is a statement from a book or a rule article with the positions it is about and the
 * result it asserts: either one position ("W:WK32:BK26 is a win") or every position of a
 * material that passes a filter ("KKKvK, black to move, lone king on the main diagonal, no
 * capture: all draws"). Claims are read from text (dtb_claims_add_text / _add_file) into a
 * dtb_claims set, then evaluated one at a time on an open dtb_db of the claim's variant
 * (dtb_claim_evaluate), which probes every matching position through the public API of dtb.h and
 * returns the verdict, the counts behind it and counterexamples with their best lines.
 *
 * Library code: never prints, never exits. Thread safety: a dtb_claims set is read-only after
 * loading and may be shared; dtb_claim_evaluate may run in several threads at once (each with its
 * own result).
 */
#ifndef DTB_CLAIMS_H
#define DTB_CLAIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a canonical FEN of any variant, with its NUL. */
#define DTB_CLAIM_FEN_SIZE 400

/* The largest "clock N" a claim may give (plies; every limit is far below it). */
#define DTB_CLAIM_CLOCK_MAX 1000

/* ---- claims as read ----------------------------------------------------------------------- */

typedef enum dtb_claim_kind {
    DTB_CLAIM_POSITION, /* one position, "position FEN" */
    DTB_CLAIM_MATERIAL, /* every position of a material passing the filters, "material NAME" */
} dtb_claim_kind;

/* Which positions' side to move a material claim covers. */
typedef enum dtb_claim_side {
    DTB_CLAIM_SIDE_WHITE = DTB_SIDE_WHITE,
    DTB_CLAIM_SIDE_BLACK = DTB_SIDE_BLACK,
    DTB_CLAIM_SIDE_ANY, /* both: every placement counted once with each side to move */
} dtb_claim_side;

/* A result, for the side to move (WIN, DRAW, LOSS) or by colour (WHITE_WINS, BLACK_WINS). In a
 * claim with a clock these are the results under the move-count rules (a cursed win is a DRAW),
 * and CURSED_WIN / BLESSED_LOSS name the wins and losses of unlimited play that the rules draw
 * (for the side to move; only in a claim with a clock). */
typedef enum dtb_claim_outcome {
    DTB_OUTCOME_WIN,
    DTB_OUTCOME_DRAW,
    DTB_OUTCOME_LOSS,
    DTB_OUTCOME_WHITE_WINS,
    DTB_OUTCOME_BLACK_WINS,
    DTB_OUTCOME_CURSED_WIN,
    DTB_OUTCOME_BLESSED_LOSS,
} dtb_claim_outcome;

/* What the assertion says of the positions. */
typedef enum dtb_claim_quantifier {
    DTB_QUANT_IS,          /* position claims: the position has the outcome (and the bound) */
    DTB_QUANT_ALL,         /* every match has the outcome (and the bound) */
    DTB_QUANT_NONE,        /* no match has the outcome */
    DTB_QUANT_AT_LEAST,    /* at least `fraction` of the matches have the outcome */
    DTB_QUANT_AT_MOST,     /* at most `fraction` of the matches have the outcome */
    DTB_QUANT_LONGEST_WIN, /* the longest win among the matches (largest DTW of a won or lost
                              position; with a clock the largest rule distance of a position won
                              or lost under the rules) is within the bound, or exactly it */
    DTB_QUANT_EXACTLY,     /* exactly `count` matches have the outcome (and they are shown) */
} dtb_claim_quantifier;

typedef struct dtb_claim_assertion {
    dtb_claim_quantifier quant;
    dtb_claim_outcome outcome; /* unused for LONGEST_WIN */
    double fraction;           /* AT_LEAST, AT_MOST: 0..1 */
    uint64_t count;            /* EXACTLY */
    int bound_plies;           /* largest DTW allowed (plies; with a clock: largest rule
                                  distance); -1: no bound */
    bool exact;                /* LONGEST_WIN: the longest win must be exactly bound_plies */
    char text[128];            /* normalised, as written: "all draw", "longest-win within 16 moves" */
} dtb_claim_assertion;

/* Whose pieces a filter is about. MOVER / OTHER: the side to move / not to move. */
typedef enum dtb_claim_who {
    DTB_WHO_WHITE = DTB_SIDE_WHITE,
    DTB_WHO_BLACK = DTB_SIDE_BLACK,
    DTB_WHO_MOVER,
    DTB_WHO_OTHER,
} dtb_claim_who;

typedef enum dtb_claim_filter_kind {
    DTB_FILTER_ON,         /* every piece of the colour and kind stands on `squares` */
    DTB_FILTER_OFF,        /* no piece of the colour and kind stands on `squares` */
    DTB_FILTER_SOME,       /* at least one piece of the colour and kind stands on `squares` */
    DTB_FILTER_CAPTURE,    /* `who` has a capture (were it to move) */
    DTB_FILTER_NO_CAPTURE, /* `who` has no capture (were it to move) */
} dtb_claim_filter_kind;

enum { DTB_PIECE_KINGS = 1, DTB_PIECE_MEN = 2, DTB_PIECE_ALL = 3 };

typedef struct dtb_claim_filter {
    dtb_claim_filter_kind kind;
    dtb_claim_who who;    /* ON / OFF / SOME: WHITE or BLACK only */
    int pieces;           /* ON / OFF / SOME: DTB_PIECE_KINGS, _MEN or _ALL */
    uint64_t squares[2];  /* ON / OFF / SOME: square s is bit (s-1) % 64 of word (s-1) / 64 */
    char text[160];       /* normalised, for reports: "black king on main (46,41,...,5)" */
    char text_in[2][160]; /* the same with the squares in each dtb_notation: [DTB_NOTATION_
                             ALGEBRAIC] "white kings on c3,d6,e3" ("text" is [NUMERIC]) */
} dtb_claim_filter;

/* One claim. Every string is NUL-terminated and lives as long as the set. */
typedef struct dtb_claim {
    const char *id;        /* unique in the set */
    const char *file;      /* where it was read ("<text>" names given to add_text) */
    int line;              /* line of its "claim" keyword */
    const char *variant;   /* "international", ... */
    const char *source;    /* book, author, rule article */
    const char *statement; /* the claim in words */
    dtb_claim_kind kind;
    const char *fen;       /* POSITION: the position as written */
    const char *material;  /* MATERIAL: "KKKvK" */
    dtb_claim_side side;   /* MATERIAL */
    int nfilters;
    const dtb_claim_filter *filters;
    int nexcept;           /* MATERIAL with ALL / NONE: positions left out of the assertion, each */
    const char *const *except_fens; /* of which must match the filters and contradict it */
    dtb_claim_assertion assertion;
    int clock;             /* -1: unlimited play (values are dtb_probe_dtw's). >= 0: the claim is
                              about the answers under the variant's move-count rules with the
                              count at this many plies (dtb_probe_rules), "clock N" */
    const char *rules;     /* clock >= 0: the rule set ("fmjd"); NULL otherwise */
} dtb_claim;

typedef struct dtb_claims dtb_claims;

/* An empty set; NULL when out of memory. */
dtb_claims *dtb_claims_new(void);

/* NULL is allowed. */
void dtb_claims_free(dtb_claims *set);

/* Reads the claims of one file's text (format in tables/claims/README.md) into set; name is
 * used in messages and kept as each claim's file.
 * Returns: DTB_OK; DTB_E_INVALID with "name:line: reason" in err (size bytes;
 *   DTB_MESSAGE_SIZE is enough) for the first problem met: unknown keyword, unknown variant or
 *   set name, malformed FEN, material or assertion, a claim without its assertion, an id already
 *   in the set; DTB_E_NOMEM. On failure none of the text's claims is added. */
dtb_status dtb_claims_add_text(dtb_claims *set, const char *name, const char *text, char *err,
                               size_t size);

/* dtb_claims_add_text on a file's contents; DTB_E_IO (message names the file) when it cannot be
 * read. */
dtb_status dtb_claims_add_file(dtb_claims *set, const char *path, char *err, size_t size);

/* Number of claims in the set, and the i-th (0 <= i < count) in the order read. */
int dtb_claims_count(const dtb_claims *set);
const dtb_claim *dtb_claims_at(const dtb_claims *set, int i);

/* The built-in named square sets of a variant (diagonals such as "main" 46-5 on 10x10): the
 * i-th name and its squares (PDN numbers in board order along the diagonal, ending with 0).
 * Returns NULL past the last. Names given with "set" in a file are added to these. */
const char *dtb_claims_named_set(const char *variant, int i, const int **squares);

/* ---- evaluation --------------------------------------------------------------------------- */

typedef enum dtb_claim_verdict {
    DTB_CLAIM_HOLDS,
    DTB_CLAIM_FAILS,
    DTB_CLAIM_NODATA, /* a table is missing or damaged: status and message say which */
} dtb_claim_verdict;

/* A position shown in a result, with its value for the side to move and its best line. */
typedef struct dtb_claim_position {
    char fen[DTB_CLAIM_FEN_SIZE];
    dtb_wdl wdl;
    int dtw;     /* plies; 0 for a draw */
    char *line;  /* the best line (dtb_probe_line), PDN moves separated by spaces: "" for a draw
                    or a lost position without moves; NULL when lines were not asked for */
    /* A claim with a clock: the position's answer under the rules at the claim's clock
     * (dtb_probe_rules); wdl, dtw and line stay those of unlimited play. */
    bool ruled;
    dtb_rule_answer rule;
} dtb_claim_position;

/* Called now and then during an evaluation with the placements enumerated so far and (an upper
 * bound of) their number in all; return false to stop (the evaluation then returns
 * DTB_E_ABORTED). */
typedef bool (*dtb_claim_progress)(void *user, uint64_t done, uint64_t total);

typedef struct dtb_claim_eval_options {
    int max_examples;            /* counterexamples to keep (0: none, only counted) */
    bool lines;                  /* compute best lines of every position shown */
    dtb_claim_progress progress; /* may be NULL */
    void *user;
} dtb_claim_eval_options;

typedef struct dtb_claim_result {
    dtb_claim_verdict verdict;
    dtb_status status;                 /* NODATA: why (DTB_E_NOTFOUND: a table is missing) */
    char reason[DTB_MESSAGE_SIZE];     /* one line: why it fails, or the missing table */
    uint64_t matched;                  /* positions passing the filters (1 for a position claim) */
    uint64_t counts[2][3];             /* matches by [side to move][wdl + 1] (with a clock: the
                                          result under the rules, cursed wins as draws) */
    uint64_t categories[2][5];         /* a claim with a clock: matches by [side to move]
                                          [dtb_rule_category + 2]; zero otherwise */
    int longest;                       /* largest DTW of a won or lost match (with a clock:
                                          largest rule distance of a match won or lost under
                                          the rules); -1 when none */
    dtb_claim_position longest_pos;    /* valid when longest >= 0 (material claims) */
    dtb_claim_position subject;        /* POSITION: the claim's position */
    uint64_t ncounter;                 /* matches contradicting the assertion (exceptions left
                                          out); for EXACTLY the matches having the outcome */
    int nexamples;                     /* counterexamples kept (for EXACTLY: instances): the */
    dtb_claim_position *examples;      /*   first found, or for a DTW bound the longest first */
    int nexceptions;                   /* the claim's exceptions as probed, in its order */
    dtb_claim_position *exceptions;
} dtb_claim_result;

/* Evaluates claim c (from a set) on db, whose variant must be the claim's.
 * Parameters: o: may be NULL (5 examples, with lines). r: receives the result (free it with
 *   dtb_claim_result_free, whatever the status).
 * Returns: DTB_OK when a verdict was reached, including NODATA for a missing or damaged table
 *   (r->status and r->reason say which); DTB_E_MISMATCH when db is of another variant;
 *   DTB_E_NOMEM; DTB_E_ABORTED when progress said stop.
 * Notes: a material claim enumerates every placement of the material (restricted by the ON and
 *   OFF filters before enumerating), keeps the placements passing the capture filters, and probes
 *   their DTW, so the material's .dtw table is needed; a claim with a clock probes their answers
 *   under the rules instead (the rule tables, .fmjd, and .wld or .dtw; a missing one is NODATA
 *   with DTB_E_NOTFOUND, naming it), and the DTW and line of the positions it shows. A claim
 *   matching no position fails. Thread-safe. */
dtb_status dtb_claim_evaluate(dtb_db *db, const dtb_claim *c, const dtb_claim_eval_options *o,
                              dtb_claim_result *r);

/* Frees the lines and arrays of r; r may be zeroed or partly filled. */
void dtb_claim_result_free(dtb_claim_result *r);

/* Does value (wdl for the side to move `side`) have the outcome? (Never CURSED_WIN or
 * BLESSED_LOSS: those are results under the rules.) */
bool dtb_claim_outcome_has(dtb_claim_outcome o, int side, dtb_wdl wdl);

/* Does a value under the rules (category c for the side to move `side`) have the outcome? */
bool dtb_claim_outcome_has_rule(dtb_claim_outcome o, int side, dtb_rule_category c);

/* "win", "draw", "loss", "white-wins", "black-wins", "cursed-win", "blessed-loss". */
const char *dtb_claim_outcome_name(dtb_claim_outcome o);

#ifdef __cplusplus
}
#endif

#endif
