/* Unit tests for timed waits under virtual time (linux/futex.c): a deadline expires where
 * virtual time moves (futex_expire_locked, the skip when every thread waits), never when
 * a blocked thread's host thread happens to wake. If it did, which threads may run at a
 * cue point would depend on host timing, and a simulation and its replay would disagree.
 * A fake VM whose mode keeps a settable virtual clock; no KVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "linux/futex.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static uint64_t clock_now;
static bool clock_virtual;

static bool fake_vtime(struct vm *vm, uint64_t *now)
{
    if (!clock_virtual)
        return false;
    *now = clock_now + (uint64_t)vm->skipped_ns; /* as serialize_vtime: skips count */
    return true;
}

static const struct vm_mode_ops fake_mode = {.vtime = fake_vtime};

static struct vm vm;
static struct vcpu vc[4];

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    memset(vc, 0, sizeof vc);
    pthread_mutex_init(&vm.lock, NULL);
    pthread_cond_init(&vm.done_cv, NULL);
    vm.mode = &fake_mode;
    clock_virtual = true;
    clock_now = 1000;
    for (int i = 0; i < 4; i++) {
        pthread_cond_init(&vc[i].cv, NULL);
        vc[i].vm = &vm;
        vc[i].tid = i + 1;
        vc[i].state = T_RUNNING;
        vc[i].wait_deadline = NO_DEADLINE;
        vm.vcpus[i] = &vc[i];
    }
    vm.nvcpus = 4;
    vm.live = 4;
    return 0;
}

/* Blocks vCPU i as block_begin_locked would (without the all-blocked check). */
static void block(int i, uint64_t addr, uint64_t deadline)
{
    vc[i].state = T_BLOCKED;
    vc[i].wait_addr = addr;
    vc[i].wait_bitset = ~0u;
    vc[i].wait_deadline = deadline;
    vc[i].woken = false;
    vm.blocked++;
}

static void test_expire_takes_exactly_the_due_ones(void **state)
{
    (void)state;
    block(0, 0x1000, 900);         /* a timed futex wait, due */
    block(1, 0, 1000);             /* a sleep due right now */
    block(2, 0x2000, 1001);        /* not yet */
    block(3, 0x3000, NO_DEADLINE); /* waits for a wake */
    pthread_mutex_lock(&vm.lock);
    assert_int_equal(futex_expire_locked(&vm), 2);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(vc[0].state, T_RUNNING);
    assert_int_equal(vc[0].wait_result, -ETIMEDOUT);
    assert_int_equal(vc[1].state, T_RUNNING);
    assert_int_equal(vc[1].wait_result, 0); /* a sleep that ends is a success */
    assert_int_equal(vc[2].state, T_BLOCKED);
    assert_int_equal(vc[3].state, T_BLOCKED);
    assert_int_equal(vm.blocked, 2);
    clock_now = 5000;
    pthread_mutex_lock(&vm.lock);
    assert_int_equal(futex_expire_locked(&vm), 1);
    assert_int_equal(futex_expire_locked(&vm), 0); /* nothing twice */
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(vc[2].state, T_RUNNING);
    assert_int_equal(vc[3].state, T_BLOCKED);
    assert_int_equal(vm.blocked, 1);
}

static void test_free_execution_expires_nothing(void **state)
{
    (void)state;
    clock_virtual = false; /* host time: the host threads' own timed waits apply */
    block(0, 0x1000, 0);
    pthread_mutex_lock(&vm.lock);
    assert_int_equal(futex_expire_locked(&vm), 0);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(vc[0].state, T_BLOCKED);
}

static void *poke(void *arg)
{
    struct vcpu *v = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&vm.lock);
    pthread_cond_broadcast(&v->cv); /* a stray wake: a resume, a pause, a pick */
    pthread_mutex_unlock(&vm.lock);
    return NULL;
}

static void test_a_stray_wake_does_not_expire(void **state)
{
    (void)state;
    block(0, 0x1000, 500); /* due long ago, but virtual time has not moved since */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, poke, &vc[0]), 0);
    pthread_mutex_lock(&vm.lock);
    futex_wait_locked(&vm, &vc[0]); /* returns on the poke */
    pthread_mutex_unlock(&vm.lock);
    pthread_join(th, NULL);
    assert_int_equal(vc[0].state, T_BLOCKED);
}

static void test_all_blocked_skips_and_wakes_every_tie(void **state)
{
    (void)state;
    block(0, 0, 3000);
    block(1, 0x1000, 3000);
    block(2, 0x2000, 7000);
    block(3, 0x3000, NO_DEADLINE);
    pthread_mutex_lock(&vm.lock);
    futex_check_all_blocked(&vm);
    pthread_mutex_unlock(&vm.lock);
    /* Time jumped to the earliest deadline; both threads due then run, at once, not
     * when their host threads get to it. */
    assert_int_equal((int64_t)vm.skipped_ns, 2000);
    assert_int_equal(vc[0].state, T_RUNNING);
    assert_int_equal(vc[1].state, T_RUNNING);
    assert_int_equal(vc[1].wait_result, -ETIMEDOUT);
    assert_int_equal(vc[2].state, T_BLOCKED);
    assert_int_equal(vc[3].state, T_BLOCKED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_expire_takes_exactly_the_due_ones, setup),
        cmocka_unit_test_setup(test_free_execution_expires_nothing, setup),
        cmocka_unit_test_setup(test_a_stray_wake_does_not_expire, setup),
        cmocka_unit_test_setup(test_all_blocked_skips_and_wakes_every_tie, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
