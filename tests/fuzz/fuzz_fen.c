/* libFuzzer target for the PDN FEN reader (core/fen.h). The first input byte picks the variant
 * (counted from the digit 0, modulo the number of variants), the rest is the FEN text. Any text
 * must give DTB_OK or DTB_E_INVALID with a one-line message, never a crash. A text that parses
 * must survive the round trip: its canonical writing reads back to the same position and writes
 * back to the same text; a mismatch aborts so the fuzzer reports the input.
 * Seeds: tests/fuzz/corpus_fen/ (first byte '0' international, '1' english, '2' russian,
 * '3' brazilian, '4' canadian: dtb_variant_at order). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* Counted from '0' so that printable seeds name their variant by a digit. */
    const dtb_variant *v = dtb_variant_at((uint8_t)(data[0] - '0') % dtb_variant_count());
    dtb_board b;
    dtb_board_init(&b, v);

    /* The reader takes a NUL-terminated string: copy the rest of the input (an embedded NUL
     * simply ends the text early, as it would for any C caller). */
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    dtb_pos p;
    dtb_error e = {{0}};
    const dtb_status st = dtb_fen_read(&b, text, &p, &e);
    /* The clock reader on the same text: a clock in range, or a one-line rejection. */
    int clock;
    bool present;
    dtb_error ec = {{0}};
    const dtb_status sc = dtb_fen_read_clock(text, &clock, &present, &ec);
    free(text);
    if (sc == DTB_OK ? clock < 0 || clock > 1000000 || (!present && clock != 0)
                     : sc != DTB_E_INVALID || ec.msg[0] == '\0' || strchr(ec.msg, '\n'))
        abort();
    if (st != DTB_OK) {
        if (st != DTB_E_INVALID || e.msg[0] == '\0' || strchr(e.msg, '\n'))
            abort(); /* a rejection is DTB_E_INVALID with a one-line message */
        return 0;
    }

    char out[DTB_FEN_MAX], again[DTB_FEN_MAX];
    if (dtb_fen_write(&b, &p, out, sizeof out) != DTB_OK)
        abort(); /* DTB_FEN_MAX is documented to be always enough */
    dtb_pos q;
    dtb_error e2 = {{0}};
    if (dtb_fen_read(&b, out, &q, &e2) != DTB_OK || !dtb_pos_equal(&p, &q))
        abort(); /* the canonical text must read back to the same position */
    if (dtb_fen_write(&b, &q, again, sizeof again) != DTB_OK || strcmp(out, again) != 0)
        abort(); /* and write back to the same text */
    return 0;
}
