/* XXH64 as described in the xxHash specification: four 64-bit lanes consume 32-byte stripes
 * (multiply, rotate, multiply), the lanes are merged, the tail is mixed in 8, 4 and 1 byte steps,
 * and a final avalanche spreads every input bit over the result. Input words are read
 * little-endian, so the value is the same on every host. */
#include "checksum.h"

#include <string.h>

static const uint64_t P1 = 0x9E3779B185EBCA87u;
static const uint64_t P2 = 0xC2B2AE3D27D4EB4Fu;
static const uint64_t P3 = 0x165667B19E3779F9u;
static const uint64_t P4 = 0x85EBCA77C2B2AE63u;
static const uint64_t P5 = 0x27D4EB2F165667C5u;

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t load32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t lane_round(uint64_t acc, uint64_t lane)
{
    acc += lane * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

static inline uint64_t merge_round(uint64_t acc, uint64_t lane)
{
    acc ^= lane_round(0, lane);
    return acc * P1 + P4;
}

static void lanes_init(uint64_t acc[4], uint64_t seed)
{
    acc[0] = seed + P1 + P2;
    acc[1] = seed + P2;
    acc[2] = seed;
    acc[3] = seed - P1;
}

/* Consumes whole 32-byte stripes; returns the number of bytes consumed. */
static size_t stripes(uint64_t acc[4], const unsigned char *p, size_t len)
{
    size_t done = 0;
    uint64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    for (; len - done >= 32; done += 32) {
        a0 = lane_round(a0, load64(p + done));
        a1 = lane_round(a1, load64(p + done + 8));
        a2 = lane_round(a2, load64(p + done + 16));
        a3 = lane_round(a3, load64(p + done + 24));
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
    return done;
}

/* The common ending: converge the lanes (or start from seed + P5 when no whole stripe was seen),
 * add the total length, mix the tail (fewer than 32 bytes), avalanche. */
static uint64_t finish(const uint64_t acc[4], uint64_t seed, uint64_t total,
                       const unsigned char *tail, size_t tail_len)
{
    uint64_t h;
    if (total >= 32) {
        h = rotl64(acc[0], 1) + rotl64(acc[1], 7) + rotl64(acc[2], 12) + rotl64(acc[3], 18);
        for (int i = 0; i < 4; i++)
            h = merge_round(h, acc[i]);
    } else {
        h = seed + P5;
    }
    h += total;
    size_t i = 0;
    for (; tail_len - i >= 8; i += 8) {
        h ^= lane_round(0, load64(tail + i));
        h = rotl64(h, 27) * P1 + P4;
    }
    if (tail_len - i >= 4) {
        h ^= (uint64_t)load32(tail + i) * P1;
        h = rotl64(h, 23) * P2 + P3;
        i += 4;
    }
    for (; i < tail_len; i++) {
        h ^= tail[i] * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

uint64_t dtb_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t acc[4];
    lanes_init(acc, seed);
    const size_t done = len ? stripes(acc, p, len) : 0;
    return finish(acc, seed, len, p + done, len - done);
}

void dtb_hash64_init(dtb_hash64_state *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    lanes_init(s->acc, seed);
}

void dtb_hash64_update(dtb_hash64_state *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->total += len;
    if (s->buffered) {
        const size_t take = len < 32 - s->buffered ? len : 32 - s->buffered;
        memcpy(s->buf + s->buffered, p, take);
        s->buffered += (unsigned)take;
        p += take;
        len -= take;
        if (s->buffered < 32)
            return;
        stripes(s->acc, s->buf, 32);
        s->buffered = 0;
    }
    const size_t done = len ? stripes(s->acc, p, len) : 0;
    memcpy(s->buf, p + done, len - done);
    s->buffered = (unsigned)(len - done);
}

uint64_t dtb_hash64_digest(const dtb_hash64_state *s)
{
    return finish(s->acc, s->seed, s->total, s->buf, s->buffered);
}
