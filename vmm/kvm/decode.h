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

/* The user registers effective addresses are computed from. */
struct insn_regs {
    uint64_t gpr[16];       /* rax rcx rdx rbx rsp rbp rsi rdi r8 .. r15 */
    uint64_t fs_base, gs_base;
};

/* One explicit memory operand. ea is valid only when known (decode_insn_regs with
 * registers, and an address capstone can describe: not a vector-indexed gather). */
struct insn_mem {
    uint64_t ea;
    uint32_t size;
    bool known, reads, writes;
};

#define INSN_MEM_MAX 4

struct insn_info {
    int len;                /* instruction length in bytes */
    bool mem;               /* has an explicit memory operand */
    bool reads, writes;     /* ... that it reads / writes */
    bool atomic;            /* LOCK prefix, or xchg with a memory operand */
    bool string;            /* movs/stos/cmps/scas/lods (possibly rep) */
    bool rep;               /* a string instruction with a rep/repe/repne prefix */
    bool pushf;             /* pushf/pushfq: stores RFLAGS to memory */
    bool stack;             /* push/pop/call/ret and the like: implicit stack access */
    int nmem;
    struct insn_mem op[INSN_MEM_MAX];
    int mem_size;           /* bytes per access of the memory operand, 0 if none */
    char text[DECODE_TEXT]; /* e.g. "lock cmpxchg dword ptr [rdi], ecx" */
};

/* Decodes the instruction at code[0..len) (rip is used for relative operands in text).
 * Returns 0, or -1 (text says why) for bytes that are not a valid instruction. */
int decode_insn(const uint8_t *code, size_t len, uint64_t rip, struct insn_info *out);
/* The same, also computing each memory operand's effective address from regs (NULL:
 * none computed). */
int decode_insn_regs(const uint8_t *code, size_t len, uint64_t rip, const struct insn_regs *regs,
                     struct insn_info *out);

#endif
