/* Unit tests for timers that end early in serialized execution (sched/timers.c): which
 * waits may end early, what ending one does to virtual time and to the other waits (the
 * clock reaches the deadline, never less; every wait due by then wakes with Linux's expiry
 * result: 0 for a sleep, -ETIMEDOUT for a timed futex wait), the record a schedule carries,
 * and a schedule's ending followed at its choice by the pick (a replay). A fake VM in
 * serialized mode, as test_vmm_serialize_pick.c: no KVM, no page watching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "linux/futex.h"
#include "sched/serialize.h"
#include "sched/timers.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define N 4
static struct vm vm;
static struct vcpu vc[N];

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    memset(vc, 0, sizeof vc);
    pthread_mutex_init(&vm.lock, NULL);
    pthread_cond_init(&vm.done_cv, NULL);
    char err[128];
    if (serialize_init(&vm, NULL, false, 0, err, sizeof err) < 0)
        return -1;
    vm.ser->base_ns = 1000000;
    for (int i = 0; i < N; i++) {
        pthread_cond_init(&vc[i].cv, NULL);
        vc[i].vm = &vm;
        vc[i].tid = vc[i].xid = i + 1;
        vc[i].state = T_RUNNING;
        vc[i].wait_deadline = NO_DEADLINE;
        vm.vcpus[i] = &vc[i];
    }
    vm.nvcpus = N;
    vm.live = N;
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

/* Blocks vCPU i in syscall nr, asking for ns from now (as block_begin_locked records). */
static void block(int i, uint64_t nr, uint64_t addr, uint64_t ns)
{
    uint64_t now = serialize_vtime(&vm);
    vc[i].state = T_BLOCKED;
    vc[i].wait_addr = addr;
    vc[i].wait_bitset = ~0u;
    vc[i].wait_deadline = ns == NO_DEADLINE ? NO_DEADLINE : now + ns;
    vc[i].wait_ns = ns == NO_DEADLINE ? 0 : ns;
    vc[i].blocked_regs.rax = nr;
    vm.blocked++;
}

static void test_which_timers_may_end_early(void **state)
{
    (void)state;
    block(1, SYS_nanosleep, 0, 50000000);               /* a 50 ms sleep */
    block(2, SYS_futex, 0x2000, 5000000000ULL);         /* a 5 s watchdog: never early */
    block(3, SYS_futex, 0x3000, NO_DEADLINE);           /* no timer at all */
    struct ex_tidset t;
    pthread_mutex_lock(&vm.lock);
    timers_timed_locked(&vm, &t);
    pthread_mutex_unlock(&vm.lock);
    assert_true(ex_tidset_has(&t, 2));
    assert_int_equal(ex_tidset_count(&t), 1);
}

static void test_ending_moves_time_to_the_deadline_and_wakes_what_is_due(void **state)
{
    (void)state;
    uint64_t now = serialize_vtime(&vm);
    block(1, SYS_nanosleep, 0, 50000000);       /* ends early: result 0 */
    block(2, SYS_futex, 0x2000, 20000000);      /* due by then: -ETIMEDOUT */
    block(3, SYS_futex, 0x3000, 60000000);      /* not due: stays */
    pthread_mutex_lock(&vm.lock);
    vm.ser->picks = 17;
    assert_true(timers_end_locked(&vm, 2, 1));
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(serialize_vtime(&vm), now + 50000000); /* the sleep's whole length */
    assert_int_equal(vc[1].state, T_RUNNING);
    assert_int_equal(vc[1].wait_result, 0);
    assert_int_equal(vc[2].state, T_RUNNING);
    assert_int_equal(vc[2].wait_result, -ETIMEDOUT);
    assert_int_equal(vc[3].state, T_BLOCKED);
    assert_int_equal(vm.ser->nended, 1);
    const struct ex_timer_end *e = &vm.ser->ended[0];
    assert_int_equal(e->step, 17);
    assert_int_equal(e->thread, 2);
    assert_int_equal(e->ns, 50000000);
    assert_string_equal(e->call, "nanosleep");
    assert_int_equal(e->by, 1);
    char buf[200];
    assert_string_equal(ex_timer_end_describe(e, "uaf.c:41", buf, sizeof buf),
                        "thread 2's nanosleep(50 ms) ended early while thread 1 was at uaf.c:41");
}

static void test_only_a_timer_to_come_ends(void **state)
{
    (void)state;
    block(1, SYS_futex, 0x2000, NO_DEADLINE);
    uint64_t now = serialize_vtime(&vm);
    pthread_mutex_lock(&vm.lock);
    assert_false(timers_end_locked(&vm, 2, 1)); /* no timer */
    assert_false(timers_end_locked(&vm, 1, 1)); /* running */
    assert_false(timers_end_locked(&vm, 9, 1)); /* no such thread */
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(serialize_vtime(&vm), now);
    assert_int_equal(vm.ser->nended, 0);
}

/* A replay: the schedule ends thread 3's timer at choice 1; the pick follows it there and
 * gives thread 3 the turn its segment names; a schedule ending a thread that is not on a
 * timer is a divergence and changes nothing. */
static void test_a_schedule_ending_is_followed_at_its_choice(void **state)
{
    (void)state;
    struct ex_schedule s;
    ex_schedule_init(&s);
    uint32_t choices[] = {1, 3, 3};
    assert_int_equal(ex_schedule_from_choices(&s, choices, 3), 0);
    struct ex_timer_end e = {.step = 1, .thread = 3};
    assert_int_equal(ex_schedule_add_timer(&s, &e), 0);
    e.step = 2, e.thread = 2;
    assert_int_equal(ex_schedule_add_timer(&s, &e), 0);
    assert_int_equal(serialize_set_schedule(&vm, &s), 0);
    vm.ser->picks = 0;
    vm.ser->timer_next = 0;
    block(1, SYS_futex, 0x2000, NO_DEADLINE);
    block(2, SYS_clock_nanosleep, 0, 3000000);
    block(3, SYS_futex, 0x4000, NO_DEADLINE);
    uint64_t now = serialize_vtime(&vm);
    pthread_mutex_lock(&vm.lock);
    assert_int_equal(serialize_pick_locked(&vm, 1), 1); /* choice 0: no ending */
    assert_int_equal(vc[2].state, T_BLOCKED);
    assert_int_equal(serialize_pick_locked(&vm, 1), 3); /* choice 1: thread 3's timer */
    assert_int_equal(vc[2].state, T_RUNNING);
    assert_int_equal(serialize_vtime(&vm), now + 3000000);
    assert_int_equal(serialize_pick_locked(&vm, 3), 3); /* choice 2: thread 2 has no timer */
    pthread_mutex_unlock(&vm.lock);
    assert_int_equal(vm.ser->picks, 3);
    assert_int_equal(vm.ser->timer_diverged, 1);
    assert_int_equal(vm.ser->nended, 1);
    assert_string_equal(vm.ser->ended[0].call, "clock_nanosleep");
    ex_schedule_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_which_timers_may_end_early, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ending_moves_time_to_the_deadline_and_wakes_what_is_due,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_a_timer_to_come_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_schedule_ending_is_followed_at_its_choice, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
