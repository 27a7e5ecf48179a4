/* Instruction decoding for cue points: memory operand size, read/write, atomicity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "decode.h"

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
        if (decode_insn(b, 1 + (size_t)(x % 15), 0x400000, &info) == 0) {
            assert_true(info.len >= 1 && info.len <= 15);
            assert_true(info.mem_size >= 0 && info.mem_size <= 64);
            assert_true(memchr(info.text, 0, sizeof info.text) != NULL);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_instructions),
        cmocka_unit_test(test_no_memory_access),
        cmocka_unit_test(test_bad_and_truncated),
        cmocka_unit_test(test_random_bytes_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
