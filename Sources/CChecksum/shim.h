// CRC-32C with the processor's own instruction, where it has one: SSE 4.2's crc32
// on x86-64 computes exactly the checksum ShareQueue's frames carry, about five
// times as fast as tables, and it reads no table, so a small record's checksum
// costs no cache misses in a process that has just been switched in. Header only:
// nothing to link. Elsewhere `sharequeue_crc32c_instruction` reports 0, and
// ShareQueueCore uses its tables.
#ifndef SHAREQUEUE_CCHECKSUM_H
#define SHAREQUEUE_CCHECKSUM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>

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
#else
static inline int sharequeue_crc32c_instruction(void) { return 0; }
static inline uint32_t sharequeue_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}
#endif
#endif
