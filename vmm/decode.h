/* Decoding one guest instruction with capstone: what memory it touches, how many bytes,
 * whether it reads, writes or both, and whether it is atomic (LOCK prefix, or xchg with
 * memory, which is implicitly locked). Cue points record this; the dump inspector prints
 * the text. The bytes come from guest memory: any input is accepted, bad input is
 * reported as undecodable. */
#ifndef JINX_DECODE_H
#define JINX_DECODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DECODE_TEXT 64

struct insn_info {
    int len;                /* instruction length in bytes */
    bool mem;               /* has an explicit memory operand */
    bool reads, writes;     /* ... that it reads / writes */
    bool atomic;            /* LOCK prefix, or xchg with a memory operand */
    bool string;            /* movs/stos/cmps/scas/lods (possibly rep) */
    int mem_size;           /* bytes per access of the memory operand, 0 if none */
    char text[DECODE_TEXT]; /* e.g. "lock cmpxchg dword ptr [rdi], ecx" */
};

/* Decodes the instruction at code[0..len) (rip is used for relative operands in text).
 * Returns 0, or -1 (text says why) for bytes that are not a valid instruction. */
int decode_insn(const uint8_t *code, size_t len, uint64_t rip, struct insn_info *out);

#endif
