// CRC-32C with the processor's own instruction, where it has one: SSE 4.2's crc32
// on x86-64 computes exactly the checksum ShareQueue's frames carry, about five
// times as fast as tables, and it reads no table, so a small record's checksum
// costs no cache misses in a process that has just been switched in. Header only:
// nothing to link. Elsewhere `sharequeue_crc32c_instruction` reports 0, and
// ShareQueueCore uses its tables.
//
// SHA-256 likewise, with x86-64's SHA extensions where the processor has them:
// an attachment's digest is checked on every copy and every drain that reads it,
// and the instructions compute it about ten times as fast as portable code.
// Elsewhere `sharequeue_sha256_instruction` reports 0, and ShareQueueCore
// compresses each block in Swift.
#ifndef SHAREQUEUE_CCHECKSUM_H
#define SHAREQUEUE_CCHECKSUM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// SHA-256's round constants (FIPS 180-4 §4.2.2), for the instructions and the Swift rounds alike.
static const uint32_t sharequeue_sha256_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>

// 1 if this processor has the instruction (CPUID leaf 1, ECX bit 20: SSE 4.2), else 0.
static inline int sharequeue_crc32c_instruction(void) {
    unsigned int a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

// Carries the register `crc` over `count` bytes: the caller inverts it before and
// after, as the tables' loop does. Call only where `sharequeue_crc32c_instruction` is 1.
__attribute__((target("sse4.2")))
static inline uint32_t sharequeue_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = (const unsigned char *)bytes;
    uint64_t wide = crc;
    for (; count >= 8; count -= 8, next += 8) {
        uint64_t word;
        memcpy(&word, next, 8);  // unaligned loads, which x86-64 allows
        wide = __builtin_ia32_crc32di(wide, word);
    }
    uint32_t narrow = (uint32_t)wide;
    for (; count > 0; count -= 1, next += 1) narrow = __builtin_ia32_crc32qi(narrow, *next);
    return narrow;
}

// 1 if this processor has the SHA extensions (CPUID leaf 7, EBX bit 29) and the
// SSSE3 and SSE 4.1 shuffles and blends used around them, else 0.
static inline int sharequeue_sha256_instruction(void) {
    unsigned int a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || (c & bit_SSSE3) == 0 || (c & bit_SSE4_1) == 0) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_SHA) != 0;
}

// Compresses `count` whole 64-byte blocks into `state` (a to h, as FIPS 180-4 names
// them). Call only where `sharequeue_sha256_instruction` is 1.
__attribute__((target("sha,sse4.1,ssse3")))
static inline void sharequeue_sha256_blocks(uint32_t state[8], const void *blocks, size_t count) {
    // The round instruction keeps the state as two halves, a b e f and c d g h,
    // each with its first letter in the highest lane.
    __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);  // b a d c
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);  // h g f e
    __m128i abef = _mm_alignr_epi8(abcd, efgh, 8);                                        // f e b a
    __m128i cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);                                     // h g d c
    // The message's words are big-endian.
    const __m128i byteOrder = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    const unsigned char *block = (const unsigned char *)blocks;
    for (; count > 0; count -= 1, block += 64) {
        const __m128i startABEF = abef, startCDGH = cdgh;
        // The last 16 words of the schedule, four to a register: words[group % 4] holds the oldest four.
        __m128i words[4];
        for (int group = 0; group < 16; group += 1) {
            __m128i next;
            if (group < 4) {
                next = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * group)), byteOrder);
            } else {
                // w[t] = w[t-16] + s0(w[t-15]) + w[t-7] + s1(w[t-2]), four words at a time.
                const __m128i w16 = words[group % 4], w12 = words[(group + 1) % 4];
                const __m128i w8 = words[(group + 2) % 4], w4 = words[(group + 3) % 4];
                next = _mm_sha256msg1_epu32(w16, w12);
                next = _mm_add_epi32(next, _mm_alignr_epi8(w4, w8, 4));
                next = _mm_sha256msg2_epu32(next, w4);
            }
            words[group % 4] = next;
            __m128i scheduled = _mm_add_epi32(next, _mm_loadu_si128((const __m128i *)&sharequeue_sha256_constants[4 * group]));
            // Two rounds a call, each returning the new a b e f; the old a b e f are then
            // the new c d g h, so two calls leave each half where it was.
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, scheduled);
            scheduled = _mm_shuffle_epi32(scheduled, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, scheduled);
        }
        abef = _mm_add_epi32(abef, startABEF);
        cdgh = _mm_add_epi32(cdgh, startCDGH);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // a b e f
    __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xB1);  // g h c d
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, ghcd, 0xF0));  // a b c d
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(ghcd, feba, 8));    // e f g h
}
#else
static inline int sharequeue_crc32c_instruction(void) { return 0; }
static inline uint32_t sharequeue_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
static inline int sharequeue_sha256_instruction(void) { return 0; }
static inline void sharequeue_sha256_blocks(uint32_t state[8], const void *blocks, size_t count) {
    (void)state;
    (void)blocks;
    (void)count;
}
#endif
#endif
