/* Unit tests for kvm/answers.c (the guest-agent's in-guest syscall answers) and for the
 * agent image's layout those answers rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/syscall.h>

#include "kvm/answers.h"
#include "linux/syscall.h"

extern const uint8_t jinx_agent_start[], jinx_agent_end[];

/* Every slot answers a constant syscall with the VMM's own answer; getpid and getppid
 * are in; gettid (one answer per thread) and clock_gettime (time) never are. */
static void test_fill_matches_vmm(void **state)
{
    (void)state;
    struct agent_answers t;
    int n = answers_fill(&t);
    assert_true(n >= 2 && n <= AGENT_ANSWER_SLOTS);
    bool pid = false, ppid = false;
    for (int i = 0; i < AGENT_ANSWER_SLOTS; i++) {
        int64_t want;
        assert_true(syscall_constant_answer((uint64_t)t.nr[i], &want));
        assert_int_equal(t.value[i], want);
        assert_int_not_equal(t.nr[i], SYS_gettid);
        assert_int_not_equal(t.nr[i], SYS_clock_gettime);
        pid |= t.nr[i] == SYS_getpid && t.value[i] == 1;
        ppid |= t.nr[i] == SYS_getppid && t.value[i] == 0;
    }
    assert_true(pid && ppid);
    /* The used slots are distinct; the rest repeat slot 0. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            assert_int_not_equal(t.nr[i], t.nr[j]);
    for (int i = n; i < AGENT_ANSWER_SLOTS; i++)
        assert_int_equal(t.nr[i], t.nr[0]);
}

static void test_constant_answers(void **state)
{
    (void)state;
    int64_t v = 42;
    assert_true(syscall_constant_answer(SYS_getpid, &v) && v == 1);
    assert_true(syscall_constant_answer(SYS_getppid, &v) && v == 0);
    v = 42;
    assert_false(syscall_constant_answer(SYS_gettid, &v));
    assert_false(syscall_constant_answer(SYS_write, &v));
    assert_false(syscall_constant_answer(UINT64_MAX, &v));
    assert_int_equal(v, 42);
}

static void test_install(void **state)
{
    (void)state;
    uint8_t img[512];
    memset(img, 0xAA, sizeof img);
    assert_int_equal(answers_install(img, sizeof img, 64, true), 0);
    uint64_t on;
    memcpy(&on, img + 56, 8);
    assert_int_equal(on, 1);
    struct agent_answers want, got;
    answers_fill(&want);
    memcpy(&got, img + 64, sizeof got);
    assert_memory_equal(&got, &want, sizeof got);
    assert_int_equal(img[55], 0xAA); /* nothing written before the switch */
    assert_int_equal(img[64 + sizeof got], 0xAA);

    assert_int_equal(answers_install(img, sizeof img, 64, false), 0);
    memcpy(&on, img + 56, 8);
    assert_int_equal(on, 0);

    /* A header whose table does not fit is refused, nothing written. */
    memset(img, 0xAA, sizeof img);
    assert_int_equal(answers_install(img, sizeof img, 4, true), -1);
    assert_int_equal(answers_install(img, sizeof img, (uint32_t)(sizeof img - 8), true), -1);
    assert_int_equal(answers_install(img, sizeof img, UINT32_MAX, true), -1);
    for (size_t i = 0; i < sizeof img; i++)
        assert_int_equal(img[i], 0xAA);
}

/* The built agent: its header places the table and the two MMIO reads where the VMM
 * expects them (the reads are `movabs UVA_MMIO, %rax`: 48 a1 + the address). */
static void test_agent_image(void **state)
{
    (void)state;
    size_t len = (size_t)(jinx_agent_end - jinx_agent_start);
    struct agent_header h;
    assert_true(len >= sizeof h);
    memcpy(&h, jinx_agent_start, sizeof h);
    assert_true(h.magic == AGENT_MAGIC);
    assert_true(h.answers >= 8 && h.answers + sizeof(struct agent_answers) <= len);
    uint32_t reads[] = {h.syscall_mmio, h.mmio_user};
    for (int i = 0; i < 2; i++) {
        assert_true(reads[i] + 10 <= len);
        assert_int_equal(jinx_agent_start[reads[i]], 0x48);
        assert_int_equal(jinx_agent_start[reads[i] + 1], 0xA1);
        uint64_t addr;
        memcpy(&addr, jinx_agent_start + reads[i] + 2, 8);
        assert_true(addr == UVA_MMIO);
    }
    /* As built, the table is off: only the VMM turns it on. */
    uint64_t on;
    memcpy(&on, jinx_agent_start + h.answers - 8, 8);
    assert_int_equal(on, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_matches_vmm),
        cmocka_unit_test(test_constant_answers),
        cmocka_unit_test(test_install),
        cmocka_unit_test(test_agent_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
