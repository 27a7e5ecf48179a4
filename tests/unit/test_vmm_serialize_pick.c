/* Unit tests for the serialized scheduler's pick when nobody can run (sched/serialize.c,
 * serialize_pick_locked): under virtual time a blocked thread's host thread never expires
 * its own deadline, so a pick that found no thread runnable while a sleeper waited would
 * hand the turn to nobody, and the fragment would wait for a time that never comes (5 s,
 * the wall guard, per simulation). The pick must skip virtual time to the earliest
 * deadline and give that thread the turn, deterministically; with a runnable thread it
 * must not touch time. A fake VM in serialized mode: no KVM, no page watching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "linux/futex.h"
#include "sched/serialize.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct vm vm;
static struct vcpu vc[2];

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    memset(vc, 0, sizeof vc);
    pthread_mutex_init(&vm.lock, NULL);
    pthread_cond_init(&vm.done_cv, NULL);
    char err[128];
    if (serialize_init(&vm, NULL, true, 0, err, sizeof err) < 0)
        return -1;
    vm.ser->base_ns = 1000000;
    for (int i = 0; i < 2; i++) {
        pthread_cond_init(&vc[i].cv, NULL);
        vc[i].vm = &vm;
        vc[i].tid = vc[i].xid = i + 1;
        vc[i].state = T_RUNNING;
        vc[i].wait_deadline = NO_DEADLINE;
        vm.vcpus[i] = &vc[i];
    }
    vm.nvcpus = 2;
    vm.live = 2;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    serialize_free(&vm);
    free(vm.ser);
    free(vm.crew);
    return 0;
}

/* Blocks vCPU i as block_begin_locked does, but without its all-blocked check: the state
 * a pick must cope with whatever led to it. */
static void block(int i, uint64_t addr, uint64_t deadline)
{
    vc[i].state = T_BLOCKED;
    vc[i].wait_addr = addr;
    vc[i].wait_bitset = ~0u;
    vc[i].wait_deadline = deadline;
    vm.blocked++;
}

static void test_nobody_runnable_skips_to_the_earliest_deadline(void **state)
{
    (void)state;
    uint64_t now = serialize_vtime(&vm);
    block(0, 0x1000, NO_DEADLINE); /* waits for a wake that nobody will make */
    block(1, 0, now + 50000);      /* a sleep 50 us from now */
    pthread_mutex_lock(&vm.lock);
    int next = serialize_pick_locked(&vm, 1);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(next, 2);
    assert_int_equal(vm.ser->current, 2);
    assert_int_equal(vc[1].state, T_RUNNING);
    assert_int_equal(vc[1].wait_result, 0); /* a sleep that ends succeeds */
    assert_int_equal(vc[0].state, T_BLOCKED);
    assert_int_equal(vm.blocked, 1);
    assert_int_equal(serialize_vtime(&vm), now + 50000); /* exactly to the deadline */
}

static void test_a_timed_futex_wait_times_out_the_same_way(void **state)
{
    (void)state;
    uint64_t now = serialize_vtime(&vm);
    block(0, 0x1000, now + 7000);
    block(1, 0x2000, now + 9000);
    pthread_mutex_lock(&vm.lock);
    int next = serialize_pick_locked(&vm, 2);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(next, 1);
    assert_int_equal(vc[0].wait_result, -ETIMEDOUT);
    assert_int_equal(vc[1].state, T_BLOCKED); /* not due yet */
    assert_int_equal(serialize_vtime(&vm), now + 7000);
}

static void test_a_runnable_thread_keeps_time_as_it_is(void **state)
{
    (void)state;
    uint64_t now = serialize_vtime(&vm);
    block(1, 0, now + 50000);
    pthread_mutex_lock(&vm.lock);
    int next = serialize_pick_locked(&vm, 1);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(next, 1);
    assert_int_equal(vc[1].state, T_BLOCKED);
    assert_int_equal(serialize_vtime(&vm), now);
}

/* A deadlock ends a simulated fragment (current -1). The thread whose futex wait made it
 * then reports that wait as a cue point, in a later lock hold: the cue must neither
 * count nor hand the turn to nobody (current 0), or the fragment's waiter, if it had not
 * woken in between, waited for the 5 s wall guard (dl-cycle3's runs: 0.7 s or 10.6 s). */
static void test_a_cue_after_the_fragment_ended_changes_nothing(void **state)
{
    (void)state;
    static struct kvm_run run;
    vc[0].run = &run;
    vm.ser->current = -1;
    uint64_t cues = vm.ser->cues;
    pthread_mutex_lock(&vm.lock);
    serialize_cue_locked(&vm, &vc[0], 1, EX_FUTEX_WAIT, 0x1000, 0, 0);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(vm.ser->current, -1);
    assert_int_equal(vm.ser->cues, cues);
    vc[0].run = NULL;
}

/* A pick that finds a deadlock (nobody runnable, no deadline) ends the fragment and
 * leaves it ended. */
static void test_a_deadlock_found_by_the_pick_ends_the_fragment(void **state)
{
    (void)state;
    char err[128];
    assert_int_equal(gm_init(&vm.gm, 16ULL << 20, err, sizeof err), 0); /* deadlock's backtraces */
    vm.sandbox = true;
    block(0, 0x1000, NO_DEADLINE);
    block(1, 0x2000, NO_DEADLINE);
    pthread_mutex_lock(&vm.lock);
    int next = serialize_pick_locked(&vm, 2);
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(next, -1);
    assert_int_equal(vm.ser->current, -1);
    assert_true(vm.sim_ended);
    assert_int_equal(vm.sim_out.kind, OUT_DEADLOCK);
    gm_destroy(&vm.gm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nobody_runnable_skips_to_the_earliest_deadline,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_timed_futex_wait_times_out_the_same_way, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_runnable_thread_keeps_time_as_it_is, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_cue_after_the_fragment_ended_changes_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_deadlock_found_by_the_pick_ends_the_fragment,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
