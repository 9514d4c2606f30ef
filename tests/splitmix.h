/* splitmix64: the random numbers of the tests and benchmarks (fast, seedable, reproducible). */
#ifndef DTB_SPLITMIX_H
#define DTB_SPLITMIX_H

#include <stdint.h>

/* The next number of the sequence in *state. */
static inline uint64_t dtb_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
