/* Instruction decoding for cue points: memory operand size, read/write, atomicity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kvm/decode.h"

struct want {
    const char *name;
    uint8_t bytes[16];
    size_t n;
    int len, mem_size;
    bool reads, writes, atomic;
    const char *text_prefix;
};

static const struct want cases[] = {
    {"store dword", {0x89, 0x07}, 2, 2, 4, false, true, false, "mov dword ptr [rdi], eax"},
    {"load qword", {0x48, 0x8b, 0x07}, 3, 3, 8, true, false, false, "mov rax, qword ptr [rdi]"},
    {"load byte zx", {0x0f, 0xb6, 0x06}, 3, 3, 1, true, false, false, "movzx eax, byte ptr [rsi]"},
    {"add to memory", {0x83, 0x07, 0x01}, 3, 3, 4, true, true, false, "add dword ptr [rdi], 1"},
    {"lock cmpxchg", {0xf0, 0x0f, 0xb1, 0x0f}, 4, 4, 4, true, true, true, "lock cmpxchg"},
    {"lock xadd", {0xf0, 0x48, 0x0f, 0xc1, 0x07}, 5, 5, 8, true, true, true, "lock xadd"},
    {"xchg is locked", {0x87, 0x07}, 2, 2, 4, true, true, true, "xchg"},
    {"rip-relative load", {0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}, 6, 6, 4, true, false, false, "mov eax"},
    {"rep stosq", {0xf3, 0x48, 0xab}, 3, 3, 8, false, true, false, "rep stosq"},
};

static void test_known_instructions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct want *w = &cases[i];
        struct insn_info info;
        assert_int_equal(decode_insn(w->bytes, w->n, 0x401000, &info), 0);
        if (info.len != w->len || info.mem_size != w->mem_size || info.writes != w->writes ||
            info.atomic != w->atomic || (w->reads && !info.reads) ||
            strncmp(info.text, w->text_prefix, strlen(w->text_prefix)))
            fail_msg("%s: got len %d size %d r%d w%d atomic %d '%s'", w->name, info.len,
                     info.mem_size, info.reads, info.writes, info.atomic, info.text);
        assert_true(info.mem);
    }
}

static void test_no_memory_access(void **state)
{
    (void)state;
    struct insn_info info;
    const uint8_t lea[] = {0x48, 0x8d, 0x07};      /* lea rax, [rdi]: no access */
    assert_int_equal(decode_insn(lea, sizeof lea, 0, &info), 0);
    assert_false(info.mem);
    assert_int_equal(info.mem_size, 0);
    const uint8_t movr[] = {0x48, 0x89, 0xc8};     /* mov rax, rcx */
    assert_int_equal(decode_insn(movr, sizeof movr, 0, &info), 0);
    assert_false(info.mem);
    assert_false(info.atomic);
    const uint8_t xchgr[] = {0x48, 0x87, 0xc8};    /* xchg rax, rcx: not atomic memory */
    assert_int_equal(decode_insn(xchgr, sizeof xchgr, 0, &info), 0);
    assert_false(info.atomic);
}

static void test_bad_and_truncated(void **state)
{
    (void)state;
    struct insn_info info;
    const uint8_t truncated[] = {0xf0, 0x0f, 0xb1};  /* lock cmpxchg without its ModRM */
    if (decode_insn(truncated, sizeof truncated, 0, &info) == 0) /* at most the prefix */
        assert_false(info.mem);
    const uint8_t bad[] = {0x06}; /* push es: invalid in 64-bit mode */
    assert_int_equal(decode_insn(bad, sizeof bad, 0, &info), -1);
    assert_int_equal(decode_insn(NULL, 0, 0, &info), -1);
    /* Lengths beyond 15 bytes are cut, not read past. */
    uint8_t many[64];
    memset(many, 0x66, sizeof many); /* prefixes only */
    assert_int_equal(decode_insn(many, sizeof many, 0, &info), -1);
}

static void test_random_bytes_never_crash(void **state)
{
    (void)state;
    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        uint8_t b[15];
        for (int k = 0; k < 15; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            b[k] = (uint8_t)(x >> 56);
        }
        struct insn_info info;
        struct insn_regs r = {.gpr = {x, ~x, x >> 3, 0, x << 7}, .fs_base = x, .gs_base = ~x};
        if (decode_insn_regs(b, 1 + (size_t)(x % 15), 0x400000, (i & 1) ? &r : NULL, &info) == 0) {
            assert_true(info.len >= 1 && info.len <= 15);
            assert_true(info.mem_size >= 0 && info.mem_size <= 4096);
            assert_true(memchr(info.text, 0, sizeof info.text) != NULL);
            assert_true(info.nmem >= 0 && info.nmem <= INSN_MEM_MAX);
            assert_true(!info.rep || info.string);
        }
    }
}

/* Registers: rax=1 rcx=2 rdx=3 rbx=4 rsp=0x7000 rbp=6 rsi=0x5000 rdi=0x6000 r8..r15 = 8..15. */
static struct insn_regs regs(void)
{
    struct insn_regs r = {.gpr = {1, 2, 3, 4, 0x7000, 6, 0x5000, 0x6000, 8, 9, 10, 11, 12, 13,
                                  14, 15},
                          .fs_base = 0x100000, .gs_base = 0x200000};
    return r;
}

static struct insn_info decode_with(const uint8_t *b, size_t n)
{
    struct insn_regs r = regs();
    struct insn_info info;
    assert_int_equal(decode_insn_regs(b, n, 0x401000, &r, &info), 0);
    return info;
}

/* Each memory operand's effective address, as the hardware computes it: where a cue
 * point's access lies in its page. */
static void test_effective_addresses(void **state)
{
    (void)state;
    /* mov eax, [rdi + rcx*4 + 0x10] */
    struct insn_info i = decode_with((const uint8_t[]){0x8b, 0x44, 0x8f, 0x10}, 4);
    assert_int_equal(i.nmem, 1);
    assert_true(i.op[0].known);
    assert_int_equal(i.op[0].ea, 0x6000 + 2 * 4 + 0x10);
    assert_int_equal(i.op[0].size, 4);
    assert_true(i.op[0].reads && !i.op[0].writes);
    /* mov [rip + 0x10], eax: relative to the next instruction */
    i = decode_with((const uint8_t[]){0x89, 0x05, 0x10, 0x00, 0x00, 0x00}, 6);
    assert_int_equal(i.op[0].ea, 0x401000 + 6 + 0x10);
    assert_true(i.op[0].writes);
    /* mov rax, fs:[0x28] */
    i = decode_with((const uint8_t[]){0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}, 9);
    assert_int_equal(i.op[0].ea, 0x100000 + 0x28);
    /* mov eax, [edi - 8] (32-bit address size wraps) */
    struct insn_regs r = regs();
    r.gpr[7] = 0x4;
    struct insn_info j;
    assert_int_equal(decode_insn_regs((const uint8_t[]){0x67, 0x8b, 0x47, 0xf8}, 4, 0x401000, &r, &j), 0);
    assert_int_equal(j.op[0].ea, 0xFFFFFFFCu);
    /* movq [rax + 0x10], xmm0 (66 0F D6): the g++ store that KVM could not emulate.
     * (Capstone 4 gives no access flags for it; a cue point takes the direction from the
     * #PF error code.) */
    i = decode_with((const uint8_t[]){0x66, 0x0f, 0xd6, 0x40, 0x10}, 5);
    assert_int_equal(i.op[0].ea, 1 + 0x10);
    assert_int_equal(i.op[0].size, 8);
    /* vmovdqu [rdi], ymm0: 32 bytes */
    i = decode_with((const uint8_t[]){0xc5, 0xfe, 0x7f, 0x07}, 4);
    assert_int_equal(i.op[0].ea, 0x6000);
    assert_int_equal(i.op[0].size, 32);
    /* lock cmpxchg16b [rsi]: one operand, read and written, atomic */
    i = decode_with((const uint8_t[]){0xf0, 0x48, 0x0f, 0xc7, 0x0e}, 5);
    assert_int_equal(i.op[0].ea, 0x5000);
    assert_true(i.op[0].reads && i.op[0].writes && i.atomic);
    /* fxsave64 [rax] and xsave [rax]: the whole area, not capstone's 8 bytes, so that a
     * fault in the area's second page finds its operand. */
    i = decode_with((const uint8_t[]){0x48, 0x0f, 0xae, 0x00}, 4);
    assert_int_equal(i.op[0].ea, 1);
    assert_int_equal(i.op[0].size, 512);
    i = decode_with((const uint8_t[]){0x0f, 0xae, 0x20}, 3);
    assert_int_equal(i.op[0].size, 4096);
    /* Without registers nothing is computed. */
    struct insn_info k;
    assert_int_equal(decode_insn((const uint8_t[]){0x89, 0x07}, 2, 0x401000, &k), 0);
    assert_false(k.op[0].known);
}

/* What single-stepping must know: rep strings (not SSE forms that share the F3 byte),
 * pushf (which stores TF), and implicit stack accesses. */
static void test_step_properties(void **state)
{
    (void)state;
    struct insn_info i = decode_with((const uint8_t[]){0xf3, 0xaa}, 2); /* rep stosb */
    assert_true(i.string && i.rep);
    i = decode_with((const uint8_t[]){0xa4}, 1); /* movsb */
    assert_true(i.string && !i.rep);
    i = decode_with((const uint8_t[]){0xf3, 0xa6}, 2); /* repe cmpsb */
    assert_true(i.rep);
    i = decode_with((const uint8_t[]){0xf2, 0xae}, 2); /* repne scasb */
    assert_true(i.rep);
    i = decode_with((const uint8_t[]){0xf3, 0x0f, 0x6f, 0x07}, 4); /* movdqu xmm0, [rdi] */
    assert_false(i.rep || i.string);
    i = decode_with((const uint8_t[]){0x9c}, 1); /* pushfq */
    assert_true(i.pushf && i.stack);
    i = decode_with((const uint8_t[]){0x50}, 1); /* push rax */
    assert_true(i.stack && !i.pushf);
    i = decode_with((const uint8_t[]){0xc3}, 1); /* ret */
    assert_true(i.stack);
    i = decode_with((const uint8_t[]){0x89, 0x07}, 2);
    assert_false(i.stack || i.pushf || i.rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_instructions),
        cmocka_unit_test(test_effective_addresses),
        cmocka_unit_test(test_step_properties),
        cmocka_unit_test(test_no_memory_access),
        cmocka_unit_test(test_bad_and_truncated),
        cmocka_unit_test(test_random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
