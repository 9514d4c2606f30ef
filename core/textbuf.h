/* Appending text to a fixed-size buffer that stays NUL-terminated and remembers overflow: how
 * the FEN and move writers build their output without allocating. Thread-safe (caller's data). */
#ifndef DTB_TEXTBUF_H
#define DTB_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct dtb_textbuf {
    char *buf;
    size_t size, len;
    bool overflow; /* something did not fit (the text is cut there) */
} dtb_textbuf;

/* A writer into buf[0..size); a size of 0 is an overflow from the start. */
static inline dtb_textbuf dtb_textbuf_make(char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    return (dtb_textbuf){buf, size, 0, size == 0};
}

/* Appends s, as much of it as fits. */
static inline void dtb_textbuf_put(dtb_textbuf *w, const char *s)
{
    for (; *s; s++) {
        if (w->len + 1 >= w->size) {
            w->overflow = true;
            return;
        }
        w->buf[w->len++] = *s;
        w->buf[w->len] = '\0';
    }
}

#endif
