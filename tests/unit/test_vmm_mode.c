/* Unit tests for the core's mode hooks (kvm/vm.h, struct vm_mode_ops): what the core
 * routes to a mode, and that without one (free execution) it calls nothing. A fake VM
 * and a recording mode; no KVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "lib/util.h"
#include <string.h>

static struct {
    int vtime_calls, mapped_calls, over_calls;
    bool keeps_time;
    uint64_t start, end;
} rec;

static bool fake_vtime(struct vm *vm, uint64_t *now)
{
    (void)vm;
    rec.vtime_calls++;
    if (!rec.keeps_time)
        return false;
    *now = 4242;
    return true;
}

static void fake_mapped(struct vm *vm, uint64_t start, uint64_t end)
{
    (void)vm;
    rec.mapped_calls++;
    rec.start = start;
    rec.end = end;
}

static void fake_over(struct vm *vm)
{
    (void)vm;
    rec.over_calls++;
}

static const struct vm_mode_ops fake_mode = {
    .vtime = fake_vtime, .mapped = fake_mapped, .fragment_over_locked = fake_over};

static struct vm vm;

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    memset(&rec, 0, sizeof rec);
    pthread_mutex_init(&vm.lock, NULL);
    pthread_cond_init(&vm.done_cv, NULL);
    return 0;
}

static void test_time_from_the_mode(void **state)
{
    (void)state;
    vm.mode = &fake_mode;
    rec.keeps_time = true;
    assert_int_equal(vm_vtime(&vm), 4242);
    assert_true(vm_time_is_virtual(&vm));
    /* The mode's time off (serialized execution paused between fragments): host time. */
    rec.keeps_time = false;
    vm.start_ns = mono_ns();
    assert_true(vm_vtime(&vm) < 60000000000ULL);
    assert_false(vm_time_is_virtual(&vm));
    assert_int_equal(rec.vtime_calls, 4);
}

static void test_free_execution_calls_nothing(void **state)
{
    (void)state;
    vm.mode = NULL;
    vm.start_ns = mono_ns();
    assert_false(vm_time_is_virtual(&vm));
    vm_note_mapped(&vm, 0x1000, 0x3000);
    assert_int_equal(rec.vtime_calls + rec.mapped_calls, 0);
}

static void test_mapped_reaches_the_mode(void **state)
{
    (void)state;
    vm.mode = &fake_mode;
    vm_note_mapped(&vm, 0x10000, 0x14000);
    assert_int_equal(rec.mapped_calls, 1);
    assert_int_equal(rec.start, 0x10000);
    assert_int_equal(rec.end, 0x14000);
}

/* A sandboxed simulation's guest outcome ends the fragment, through the mode, and
 * leaves the VM running; outside the sandbox the VM stops and the mode hears nothing. */
static void test_sandbox_outcome_ends_the_fragment(void **state)
{
    (void)state;
    vm.mode = &fake_mode;
    vm.sandbox = true;
    struct outcome o = {.kind = OUT_EXIT, .status = 3};
    pthread_mutex_lock(&vm.lock);
    vm_stop_locked(&vm, &o);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(rec.over_calls, 1);
    assert_true(vm.sim_ended);
    assert_int_equal(vm.sim_out.status, 3);
    assert_false(atomic_load(&vm.stopping));
    vm.sandbox = false;
    pthread_mutex_lock(&vm.lock);
    vm_stop_locked(&vm, &o);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(rec.over_calls, 1);
    assert_true(atomic_load(&vm.stopping));
    assert_int_equal(vm.out.status, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_time_from_the_mode, setup),
        cmocka_unit_test_setup(test_free_execution_calls_nothing, setup),
        cmocka_unit_test_setup(test_mapped_reaches_the_mode, setup),
        cmocka_unit_test_setup(test_sandbox_outcome_ends_the_fragment, setup),
    };
    return cmocka_run_group_tests_name("vmm/mode", tests, NULL, NULL);
}
