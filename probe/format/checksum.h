/* 64-bit checksums of table files: XXH64 (Yann Collet's xxHash, 64-bit variant), written here
 * from the published algorithm description so that probe/ needs no hashing dependency and the
 * values can be checked with any xxHash tool (`xxhsum -H64`). Not cryptographic: it detects
 * accidental corruption (truncation, bit flips, misplaced blocks), not tampering.
 * Thread-safe: pure functions; a dtb_hash64_state belongs to one thread at a time. */
#ifndef DTB_CHECKSUM_H
#define DTB_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 of len bytes at data (data may be NULL when len is 0) with the given seed. */
uint64_t dtb_hash64(const void *data, size_t len, uint64_t seed);

/* Streaming form: init, update with consecutive pieces (any sizes), digest. The digest equals
 * dtb_hash64 of the concatenated pieces; digest does not change the state, so updating may go on. */
typedef struct dtb_hash64_state {
    uint64_t acc[4];
    uint64_t total;       /* bytes seen so far */
    uint64_t seed;
    unsigned char buf[32]; /* the bytes of an incomplete 32-byte stripe */
    unsigned buffered;
} dtb_hash64_state;

void dtb_hash64_init(dtb_hash64_state *s, uint64_t seed);
void dtb_hash64_update(dtb_hash64_state *s, const void *data, size_t len);
uint64_t dtb_hash64_digest(const dtb_hash64_state *s);

#endif
