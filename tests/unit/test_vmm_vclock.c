/* Unit tests for kvm/vclock.c (the guest's clock in free execution) and for the agent's
 * half of it: the agent's own clock code, copied from the built image, runs here on the
 * host (it is position-independent user-mode code that reads the TSC, which on PVM is the
 * host's) and must answer what the VMM's formula gives between two host readings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#include "kvm/vclock.h"
#include "linux/futex.h"

extern const uint8_t jinx_agent_start[], jinx_agent_end[];

static const char *flags_ok = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp nonstop_tsc\n";

static void test_mult_and_elapsed(void **state)
{
    (void)state;
    const uint64_t rates[] = {1000, 1000000, 2596138, 3000000, 5000000, 100000000};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        uint64_t khz = rates[i], m = vclock_mult(khz);
        assert_true(m > 0);
        /* One second of ticks is one second, within the rounding of a 32.32 mult. */
        uint64_t ns = vclock_elapsed(khz * 1000, m);
        assert_true(ns <= 1000000000ULL && ns >= 1000000000ULL - 1 - khz * 1000 / (1ULL << 31));
        /* An hour: the product needs more than 64 bits, the result does not. */
        uint64_t hour = vclock_elapsed(khz * 1000 * 3600, m);
        assert_true(hour <= 3600000000000ULL && hour >= 3600000000000ULL - 3600000);
        /* Monotonic, and 0 at 0. */
        assert_int_equal(vclock_elapsed(0, m), 0);
        for (uint64_t t = 1; t < 100000; t += 997)
            assert_true(vclock_elapsed(t, m) >= vclock_elapsed(t - 1, m));
    }
    assert_int_equal(vclock_mult(0), 0);
    assert_int_equal(vclock_mult(999), 0);
    assert_int_equal(vclock_mult(100000001), 0);
    /* mulq + shrdq keep the low 64 bits of the shifted product. */
    assert_int_equal(vclock_elapsed(UINT64_MAX, 1ULL << 32), UINT64_MAX);
    assert_int_equal(vclock_elapsed(1ULL << 40, 3ULL << 31), 3ULL << 39);
}

static void test_setup_when(void **state)
{
    (void)state;
    struct vclock c;
    vclock_setup(&c, true, true, 2596138, flags_ok);
    assert_true(c.on && c.mult == vclock_mult(2596138) && c.tsc0 && c.mono0);
    vclock_setup(&c, false, true, 2596138, flags_ok); /* VMX/SVM: ring-0 entry, not done */
    assert_false(c.on);
    vclock_setup(&c, true, false, 2596138, flags_ok); /* --no-guest-answers */
    assert_false(c.on);
    vclock_setup(&c, true, true, 0, flags_ok); /* no rate from KVM */
    assert_false(c.on);
    vclock_setup(&c, true, true, 2596138, NULL);
    assert_false(c.on);
    vclock_setup(&c, true, true, 2596138, "processor\t: 0\nflags\t\t: fpu tsc constant_tsc\n");
    assert_false(c.on);
    /* The flags of a later line do not count for the first one's. */
    vclock_setup(&c, true, true, 2596138,
                 "processor\t: 0\nflags\t\t: fpu tsc\nbugs\t: constant_tsc nonstop_tsc\n");
    assert_false(c.on);
}

static void test_block(void **state)
{
    (void)state;
    struct vclock c = {.on = true, .tsc0 = 1000, .mono0 = 5000000000ULL, .mult = 1ULL << 32};
    struct agent_clock b;
    vclock_block(&c, false, 4000000000ULL, -300, &b);
    assert_int_equal(b.on, 1);
    assert_int_equal(b.tsc_base, 1000);
    assert_int_equal(b.mult, 1ULL << 32);
    assert_int_equal(b.ns_base, 1000000000ULL - 300);
    assert_int_equal(b.epoch, VTIME_EPOCH_NS);
    assert_int_equal(b.billion, 1000000000ULL);
    assert_int_equal(b.thousand, 1000);
    /* A restore that rewinds time makes skipped_ns very negative: still exact mod 2^64. */
    vclock_block(&c, false, 4000000000ULL, -1500000000LL, &b);
    assert_int_equal(b.ns_base + vclock_elapsed(600000000, c.mult), 100000000ULL);
    vclock_block(&c, true, 4000000000ULL, 0, &b); /* serialized: the VMM answers */
    assert_int_equal(b.on, 0);
    c.on = false;
    vclock_block(&c, false, 4000000000ULL, 0, &b);
    assert_int_equal(b.on, 0);
}

static struct agent_header image_header(void)
{
    struct agent_header h;
    memcpy(&h, jinx_agent_start, sizeof h);
    return h;
}

static void test_fix_kind(void **state)
{
    (void)state;
    struct agent_header h = image_header();
    size_t len = (size_t)(jinx_agent_end - jinx_agent_start);
    assert_true(vclock_header_ok(&h, len));
    uint64_t probe = UVA_AGENT + h.clock_probe, store = UVA_AGENT + h.clock_store;
    assert_int_equal(vclock_fix_kind(&h, 14, probe), VCLOCK_FIX_EXIT);
    assert_int_equal(vclock_fix_kind(&h, 13, UVA_AGENT + h.clock_compute - 1), VCLOCK_FIX_EXIT);
    assert_int_equal(vclock_fix_kind(&h, 14, UVA_AGENT + h.clock_compute), VCLOCK_FIX_NONE);
    assert_int_equal(vclock_fix_kind(&h, 14, store), VCLOCK_FIX_EFAULT);
    assert_int_equal(vclock_fix_kind(&h, 17, UVA_AGENT + h.clock_end - 1), VCLOCK_FIX_EFAULT);
    assert_int_equal(vclock_fix_kind(&h, 14, UVA_AGENT + h.clock_end), VCLOCK_FIX_NONE);
    /* Not a memory fault (a #DB of a program stepping with TF), or not the clock path. */
    assert_int_equal(vclock_fix_kind(&h, 1, probe), VCLOCK_FIX_NONE);
    assert_int_equal(vclock_fix_kind(&h, 6, store), VCLOCK_FIX_NONE);
    assert_int_equal(vclock_fix_kind(&h, 14, UVA_AGENT + h.mmio_user), VCLOCK_FIX_NONE);
    assert_int_equal(vclock_fix_kind(&h, 14, 0x401000), VCLOCK_FIX_NONE);
    /* Bad offsets are refused. */
    struct agent_header bad = h;
    bad.clock = (unsigned)len;
    assert_false(vclock_header_ok(&bad, len));
    bad = h;
    bad.clock += 4;
    assert_false(vclock_header_ok(&bad, len));
    bad = h;
    bad.clock_store = bad.clock_end;
    assert_false(vclock_header_ok(&bad, len));
    bad = h;
    bad.clock_end = (unsigned)len + 1;
    assert_false(vclock_header_ok(&bad, len));
    bad = h; /* the look-ups (syscall_user .. mmio_user) come before the clock path */
    bad.clock_probe = bad.mmio_user;
    assert_false(vclock_header_ok(&bad, len));
    /* As built, the clock is off: only the VMM turns it on. */
    uint64_t on;
    memcpy(&on, jinx_agent_start + h.clock, 8);
    assert_int_equal(on, 0);
}

/* Enters the agent's user-mode syscall entry as a PVM SYSCALL would (rcx = return
 * address) and comes back by its `jmp *%rcx`. */
static long agent_call(const uint8_t *entry, long nr, long a0, long a1, long *rdx)
{
    long rax = nr, d = *rdx;
    __asm__ volatile("lea 1f(%%rip), %%rcx\n jmp *%[e]\n1:"
                     : "+a"(rax), "+d"(d)
                     : [e] "r"(entry), "D"(a0), "S"(a1)
                     : "rcx", "r11", "memory", "cc");
    *rdx = d;
    return rax;
}

static void test_agent_matches_vmm(void **state)
{
    (void)state;
    size_t len = (size_t)(jinx_agent_end - jinx_agent_start);
    uint8_t *img = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(img != MAP_FAILED);
    memcpy(img, jinx_agent_start, len);
    struct agent_header h = image_header();
    struct vclock c;
    vclock_setup(&c, true, true, 2596138, flags_ok);
    assert_true(c.on);
    const uint64_t start = c.mono0 - 123456789, skipped = 987654321;
    vclock_block(&c, false, start, (int64_t)skipped, (struct agent_clock *)(img + h.clock));
    assert_int_equal(mprotect(img, 4096, PROT_READ | PROT_EXEC), 0);
    const uint8_t *entry = img + h.syscall_user;
    /* The VMM's vm_vtime for a TSC reading, as kvm/vm.c computes it with the clock on. */
#define VMM_NOW() ((c.mono0 + vclock_elapsed(__rdtsc() - c.tsc0, c.mult)) - start + skipped)
    for (int i = 0; i < 1000; i++) {
        int clk = (int[]){0, 1, 4, 5, 6, 7}[i % 6];
        struct timespec_like { int64_t s, ns; } ts = {-1, -1};
        long rdx = 0x0123456789ABCDEFL;
        uint64_t before = VMM_NOW();
        long r = agent_call(entry, SYS_clock_gettime, clk, (long)&ts, &rdx);
        uint64_t after = VMM_NOW();
        assert_int_equal(r, 0);
        assert_int_equal(rdx, 0x0123456789ABCDEFL); /* kept (r11 holds it on the way) */
        assert_true(ts.ns >= 0 && ts.ns < 1000000000);
        uint64_t got = (uint64_t)ts.s * 1000000000ULL + (uint64_t)ts.ns;
        if (clk == 0 || clk == 5)
            got -= VTIME_EPOCH_NS;
        assert_true(before <= got && got <= after);
    }
    struct { int64_t s, us; } tv;
    long rdx = 7;
    uint64_t before = VMM_NOW();
    assert_int_equal(agent_call(entry, SYS_gettimeofday, (long)&tv, 0, &rdx), 0);
    uint64_t after = VMM_NOW();
    uint64_t got = (uint64_t)tv.s * 1000000000ULL + (uint64_t)tv.us * 1000 - VTIME_EPOCH_NS;
    assert_true(rdx == 7 && tv.us >= 0 && tv.us < 1000000);
    assert_true(before / 1000 * 1000 <= got && got <= after);
    int64_t tloc = 0;
    long s = agent_call(entry, SYS_time, (long)&tloc, 0, &rdx);
    assert_true(rdx == 7 && s == tloc);
    assert_true((uint64_t)s == (VMM_NOW() + VTIME_EPOCH_NS) / 1000000000ULL ||
                (uint64_t)s + 1 == (VMM_NOW() + VTIME_EPOCH_NS) / 1000000000ULL);
    assert_int_equal(agent_call(entry, SYS_time, 0, 0, &rdx), s); /* NULL tloc: no write */
    munmap(img, 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mult_and_elapsed),
        cmocka_unit_test(test_setup_when),
        cmocka_unit_test(test_block),
        cmocka_unit_test(test_fix_kind),
        cmocka_unit_test(test_agent_matches_vmm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
