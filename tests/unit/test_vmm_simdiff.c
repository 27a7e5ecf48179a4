/* What --simulate prints when two simulations differ (vmm/sched/simdiff.h), and the
 * CPUID host-id clearing that keeps the guest's answers off the host CPU jinx-vmm runs
 * on (vmm/kvm/cpuidnorm.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kvm/cpuidnorm.h"
#include "sched/simdiff.h"

static void add(struct ex_trace *t, uint32_t tid, enum ex_kind k, uint64_t addr, uint64_t rip)
{
    struct ex_event e;
    memset(&e, 0, sizeof e);
    e.tid = tid;
    e.kind = (uint8_t)k;
    e.addr = addr;
    e.size = 8;
    e.rip = rip;
    assert_non_null(ex_trace_append(t, &e));
}

static void test_describe_first_difference(void **state)
{
    (void)state;
    struct ex_trace a, b;
    ex_trace_init(&a);
    ex_trace_init(&b);
    add(&a, 1, EX_WRITE, 0x4000, 0x401000);
    add(&b, 1, EX_WRITE, 0x4000, 0x401000);
    add(&a, 1, EX_READ, 0x4e53d0, 0x481c30);
    add(&b, 3, EX_FUTEX_WAIT, 0x7fffffeffae0, 0x43458b);
    long i = ex_trace_first_difference(&a, &b);
    assert_int_equal(i, 1);
    char line[400];
    simdiff_describe_events(line, sizeof line, &a, &b, i);
    assert_non_null(strstr(line, "cue point 1:"));
    assert_non_null(strstr(line, "first T1 R 0x4e53d0/8"));
    assert_non_null(strstr(line, "rip 0x481c30"));
    assert_non_null(strstr(line, "this T3 futex_wait 0x7fffffeffae0"));
    assert_non_null(strstr(line, "rip 0x43458b"));
    /* One trace shorter: the difference is where it ended. */
    ex_trace_free(&b);
    ex_trace_init(&b);
    add(&b, 1, EX_WRITE, 0x4000, 0x401000);
    i = ex_trace_first_difference(&a, &b);
    assert_int_equal(i, 1);
    simdiff_describe_events(line, sizeof line, &a, &b, i);
    assert_non_null(strstr(line, "this (ended after 1 cue points)"));
    ex_trace_free(&a);
    ex_trace_free(&b);
}

static void test_clear_host_ids(void **state)
{
    (void)state;
    struct kvm_cpuid2 *c = calloc(1, sizeof *c + 5 * sizeof c->entries[0]);
    assert_non_null(c);
    c->nent = 5;
    c->entries[0] = (struct kvm_cpuid_entry2){.function = 1, .eax = 0x800f12, .ebx = 0x01020800,
                                              .ecx = 0x7ed8320b, .edx = 0x178bfbff};
    c->entries[1] = (struct kvm_cpuid_entry2){.function = 0xB, .index = 1, .eax = 1, .ebx = 2,
                                              .ecx = 0x201, .edx = 1};
    c->entries[2] = (struct kvm_cpuid_entry2){.function = 0x8000001E, .eax = 3, .ebx = 0x101,
                                              .ecx = 0x102};
    c->entries[3] = (struct kvm_cpuid_entry2){.function = 7, .ebx = 0xffffffff};
    c->entries[4] = (struct kvm_cpuid_entry2){.function = 0x1F, .edx = 0};
    assert_int_equal(cpuid_clear_host_ids(c), 3);
    assert_int_equal(c->entries[0].ebx, 0x00020800); /* APIC id gone, the rest kept */
    assert_int_equal(c->entries[0].eax, 0x800f12);
    assert_int_equal(c->entries[0].ecx, 0x7ed8320b);
    assert_int_equal(c->entries[1].edx, 0);
    assert_int_equal(c->entries[1].ecx, 0x201); /* level type and number kept */
    assert_int_equal(c->entries[2].eax, 0);
    assert_int_equal(c->entries[2].ebx, 0x100);
    assert_int_equal(c->entries[2].ecx, 0x100);
    assert_int_equal(c->entries[3].ebx, 0xffffffff); /* features untouched */
    assert_int_equal(cpuid_clear_host_ids(c), 0);     /* idempotent */
    assert_int_equal(cpuid_clear_host_ids(NULL), 0);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe_first_difference),
        cmocka_unit_test(test_clear_host_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
