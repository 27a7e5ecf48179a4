/* Unit tests for the choice of serialized execution's CPU (kvm/pin.h, pin_choose) and the
 * CPU lists it prints: the preferred CPU when allowed and unclaimed, else the least
 * claimed allowed one (so a round's worker VM never shares the live VM's CPU while
 * another is free), never a CPU outside the mask; and the real process: pin_sync pins a
 * thread while serialized and gives the mask back after, and --no-pin leaves it alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/pin.h"
#include "kvm/vm.h"
#include <string.h>

static cpu_set_t set_of(const int *cpus, int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int i = 0; i < n; i++)
        CPU_SET(cpus[i], &s);
    return s;
}

static void test_choose(void **state)
{
    (void)state;
    static int claims[CPU_SETSIZE];
    memset(claims, 0, sizeof claims);
    cpu_set_t s = set_of((int[]){2, 3, 5}, 3);
    assert_int_equal(pin_choose(&s, claims, 3), 3);  /* preferred, allowed, free */
    assert_int_equal(pin_choose(&s, claims, 0), 2);  /* not allowed: the lowest free */
    assert_int_equal(pin_choose(&s, claims, -1), 2); /* no preference (sched_getcpu failed) */
    assert_int_equal(pin_choose(&s, claims, 4000), 2);
    claims[3] = 1;                                   /* the live VM took 3 */
    assert_int_equal(pin_choose(&s, claims, 3), 2);  /* a worker preferring 3 goes elsewhere */
    claims[2] = 1;
    assert_int_equal(pin_choose(&s, claims, 3), 5);
    claims[5] = 1;
    assert_int_equal(pin_choose(&s, claims, 5), 2);  /* all taken once: the lowest of the least */
    claims[2] = 2;
    assert_int_equal(pin_choose(&s, claims, 2), 3);
    cpu_set_t none;
    CPU_ZERO(&none);
    assert_int_equal(pin_choose(&none, claims, 0), -1);
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    cpu_set_t s = set_of((int[]){0, 1, 2, 3, 6, 8, 9}, 7);
    pin_format_set(&s, buf, sizeof buf);
    assert_string_equal(buf, "0-3,6,8-9");
    s = set_of((int[]){1}, 1);
    pin_format_set(&s, buf, sizeof buf);
    assert_string_equal(buf, "1");
}

static cpu_set_t mine(void)
{
    cpu_set_t s;
    assert_int_equal(sched_getaffinity(0, sizeof s, &s), 0);
    return s;
}

/* This thread as a vCPU's host thread of a fake VM (no KVM needed). */
static void test_sync(void **state)
{
    (void)state;
    static struct vm vm;
    static struct vcpu v;
    cpu_set_t before = mine();
    char err[256];
    memset(&vm, 0, sizeof vm);
    memset(&v, 0, sizeof v);
    v.pin_cpu = PIN_UNKNOWN;
    assert_int_equal(pin_init(&vm, err, sizeof err), 0);
    pin_sync(&vm, &v, true);
    int cpu = pin_cpu_of(&vm);
    assert_true(cpu >= 0 && CPU_ISSET(cpu, &before));
    cpu_set_t now = mine();
    assert_int_equal(CPU_COUNT(&now), 1);
    assert_true(CPU_ISSET(cpu, &now));
    pin_sync(&vm, &v, false); /* free execution: the mask back */
    now = mine();
    assert_true(CPU_EQUAL(&now, &before));
    pin_release(&vm);
    /* --no-pin: never touched. */
    memset(&vm, 0, sizeof vm);
    vm.opt.no_pin = true;
    v.pin_cpu = PIN_UNKNOWN;
    assert_int_equal(pin_init(&vm, err, sizeof err), 0);
    pin_sync(&vm, &v, true);
    now = mine();
    assert_true(CPU_EQUAL(&now, &before));
    assert_int_equal(pin_cpu_of(&vm), -1);
    /* --pin-cpu outside the mask: refused, naming it. */
    memset(&vm, 0, sizeof vm);
    vm.opt.pin_cpu_given = true;
    vm.opt.pin_cpu = PIN_MAX_CPU;
    if (!CPU_ISSET(PIN_MAX_CPU, &before)) {
        assert_int_equal(pin_init(&vm, err, sizeof err), -1);
        assert_non_null(strstr(err, "--pin-cpu 1023: this process may not run on CPU 1023"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_sync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
