/* The answer shaped like lichess's tablebase API (tablebase.lichess.ovh /standard?fen=), so that
 * lidraughts' analysis board, whose explorer was inherited from lichess (ui/analyse/src/explorer),
 * can read dtb as lichess's reads Syzygy: GET /lidraughts/<lidraughts variant>?fen=<FEN>.
 *
 * The object: {"category", "wdl", "dtz", "precise_dtz", "dtm", "checkmate", "stalemate",
 * "variant_win", "variant_loss", "insufficient_material", "rules", "moves": [{"uci", "san",
 * "category", "wdl", "dtz", "precise_dtz", "dtm", "zeroing", "checkmate", "stalemate",
 * "variant_win", "variant_loss", "insufficient_material"}]}; each move's values are those of
 * the position after it, for the side then to move (lichess's convention: the best move's
 * category is "loss"). docs/SERVER.md maps dtb's values onto the fields. */
#ifndef DTB_LIDRAUGHTS_H
#define DTB_LIDRAUGHTS_H

#include "answer.h"

/* dtb's variant name for lidraughts' variant key ("standard" and "fromPosition" are
 * international; "russian", "brazilian" as they are), NULL for one dtb does not have. */
const char *dtb_lidraughts_variant(const char *key);

/* Appends the lichess-shaped object of answer a for p (dtb_answer_probe, then dtb_answer_rules
 * at clock; under the rules when a->have_rules, else unlimited play). Returns DTB_OK, or a
 * probe's status with its one-line message in a->error. Thread-safe (as libdtb). */
dtb_status dtb_lidraughts_json(dtb_text *t, dtb_db *db, const dtb_position *p, int clock,
                               dtb_answer *a);

#endif
