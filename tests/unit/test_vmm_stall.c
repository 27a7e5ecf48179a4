/* Unit tests for a stalled fragment's remedy and report (sched/stall.h,
 * sched/guard_report.h): the pages learnt are exactly the stalled thread's own (never a
 * shared page or another thread's), its stack only when nothing else is left, in page
 * order, the same every time, and they become the VM's pre-shared pages; the report names
 * whose turn it was and each thread's wait and deadline. A fake VM: no KVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/vm.h"
#include "linux/futex.h"
#include "sched/crew.h"
#include "sched/guard_report.h"
#include "sched/serialize.h"
#include "sched/stall.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RSP2 0x7ff800ULL /* thread 2's stack pointer */

static struct vm vm;
static struct vcpu vc[3];
static struct kvm_run runs[3];
static struct serializer ser;
static struct crew crew;
static struct crew_page pages[6];

static void page(int slot, uint64_t va, int owner, bool shared)
{
    pages[slot] = (struct crew_page){.va = va, .owner = owner, .shared = shared};
}

static int setup(void **state)
{
    (void)state;
    memset(&vm, 0, sizeof vm);
    memset(vc, 0, sizeof vc);
    memset(runs, 0, sizeof runs);
    memset(&ser, 0, sizeof ser);
    memset(&crew, 0, sizeof crew);
    pthread_mutex_init(&vm.lock, NULL);
    vm.ser = &ser;
    vm.crew = &crew;
    ex_u64map_init(&crew.preshared);
    crew.on = true;
    crew.page = pages;
    crew.npage = 6;
    page(0, 0x403000, 2, false);       /* thread 2's own: learnt */
    page(1, 0x401000, 3, false);       /* thread 3's */
    page(2, 0x402000, 2, true);        /* shared already */
    page(3, RSP2 & PAGE_MASK, 2, false); /* thread 2's stack: only when nothing else is left */
    page(4, 0x400000, 2, false);       /* thread 2's own: learnt */
    page(5, 0x404000, 0, false);       /* nobody's */
    for (int i = 0; i < 3; i++) {
        vc[i].vm = &vm;
        vc[i].run = &runs[i];
        vc[i].tid = i + 1;
        vc[i].xid = i + 1;
        vc[i].state = T_RUNNING;
        vc[i].wait_deadline = NO_DEADLINE;
        vm.vcpus[i] = &vc[i];
    }
    runs[1].s.regs.regs.rsp = RSP2;
    vm.nvcpus = 3;
    vm.live = 3;
    ser.guard_turn = 2;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ex_u64map_free(&crew.preshared);
    return 0;
}

static bool preshared(uint64_t va)
{
    return ex_u64map_get(&crew.preshared, va) != NULL;
}

static void test_learns_the_stalled_threads_own_pages_stack_last(void **state)
{
    (void)state;
    struct stall_set s;
    stall_set_init(&s);
    assert_int_equal(stall_learn(&vm, &s), 2);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.page[0], 0x403000); /* slot order: the same in every simulation */
    assert_int_equal(s.page[1], 0x400000);
    assert_true(preshared(0x403000) && preshared(0x400000));
    assert_false(preshared(0x401000) || preshared(0x402000) || preshared(RSP2 & PAGE_MASK));
    /* Stalled again with those shared: its stack is all that is left. */
    assert_int_equal(stall_learn(&vm, &s), 1);
    assert_int_equal(s.page[2], RSP2 & PAGE_MASK);
    assert_true(preshared(RSP2 & PAGE_MASK) && preshared(0x403000));
    /* Nothing new: a computation, not a spin on its pages; nothing changes. */
    assert_int_equal(stall_learn(&vm, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(crew.preshared.n, 3);
    stall_set_free(&s);
}

static void test_nothing_to_learn_when_nobody_had_the_turn(void **state)
{
    (void)state;
    struct stall_set s;
    stall_set_init(&s);
    ser.guard_turn = 0; /* the turn was nobody's: no spinner to blame */
    assert_int_equal(stall_learn(&vm, &s), 0);
    ser.guard_turn = 7; /* a thread that is gone */
    assert_int_equal(stall_learn(&vm, &s), 0);
    ser.guard_turn = 1; /* owns nothing */
    assert_int_equal(stall_learn(&vm, &s), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(crew.preshared.n, 0);
    stall_set_free(&s);
}

static char *report(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    guard_report(&vm, f, "> ");
    fclose(f);
    return buf;
}

static void test_report_names_the_turn_and_every_wait(void **state)
{
    (void)state;
    ser.base_ns = 2000000;
    ser.cues = 500; /* virtual time 2.5 ms */
    vc[0].state = T_BLOCKED;
    vc[0].wait_addr = 0x1000;
    vc[2].state = T_BLOCKED;
    vc[2].wait_deadline = 3000000; /* a sleep until 3 ms */
    vm.blocked = 2;
    char *r = report();
    assert_non_null(strstr(r, "> cue point 500 of the fragment, virtual time 2.500 ms; the turn "
                              "was thread 2's; 3 live threads, 2 blocked:\n"));
    assert_non_null(strstr(r, ">   thread 1 (T1): blocked in futex wait on 0x1000, no deadline;"));
    assert_non_null(strstr(r, ">   thread 2 (T2): running (its turn);"));
    assert_non_null(strstr(r, ">   thread 3 (T3): blocked in a sleep, deadline in 0.500 ms;"));
    free(r);
    /* Nobody's turn with a deadline already due and not expired: what a wait that nobody
     * expires under virtual time would look like. */
    ser.guard_turn = 0;
    vc[2].wait_deadline = 2400000;
    runs[1].s.regs.regs.rip = UVA_AGENT + 0x13c; /* in jinx's syscall entry */
    r = report();
    assert_non_null(strstr(r, "the turn was nobody's;"));
    assert_non_null(strstr(r, ">   thread 2 (T2): runnable, waiting for its turn; at 0x7fffffffd13c "
                              "(jinx's syscall entry: in a system call)\n"));
    assert_non_null(strstr(r, "deadline PASSED 0.100 ms ago, not expired;"));
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_learns_the_stalled_threads_own_pages_stack_last,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_learn_when_nobody_had_the_turn, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_names_the_turn_and_every_wait, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
