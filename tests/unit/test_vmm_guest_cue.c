/* Unit tests for memory cue points taken in the guest (sched/guest_cue.h): the budget the
 * VMM gives the agent (schedule segments, the default policy, the limit, deadlines, a
 * pick hook), the check of the block read back (every field a guest or a bug could have
 * scribbled on is refused), and guest_cues_left refusing a scribbled block before it
 * replays anything. A fake VM on a real guest memory; no KVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/guestmem.h"
#include "kvm/vm.h"
#include "linux/futex.h"
#include "sched/crew.h"
#include "sched/guest_cue.h"
#include "sched/serialize.h"
#include <stdlib.h>
#include <string.h>

#define VA 0x500000ULL
#define FRAME 0x800000ULL

struct fx {
    struct vm vm;
    struct vcpu v[3];
    struct serializer ser;
};

static uint32_t never_pick(void *ctx, struct vm *vm, const struct ex_tidset *en,
                           const struct ex_tidset *avoid)
{
    (void)ctx, (void)vm, (void)en, (void)avoid;
    return 0;
}

static void schedule(struct fx *f, const char *text)
{
    struct ex_parse_error pe;
    ex_schedule_free(&f->ser.sched);
    ex_schedule_init(&f->ser.sched);
    assert_int_equal(ex_schedule_parse(text, strlen(text), &f->ser.sched, &pe), 0);
    ex_cursor_init(&f->ser.cursor, &f->ser.sched);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    char err[256];
    if (!f || gm_init(&f->vm.gm, 16ULL << 20, err, sizeof err) != 0)
        return -1;
    pthread_mutex_init(&f->vm.lock, NULL);
    f->vm.crew = calloc(1, sizeof *f->vm.crew);
    if (!f->vm.crew)
        return -1;
    f->vm.crew->on = true;
    f->vm.ser = &f->ser;
    ex_schedule_init(&f->ser.sched);
    f->ser.on = true;
    f->ser.current = 1;
    f->vm.nvcpus = 3;
    for (int i = 0; i < 3; i++) {
        f->v[i].vm = &f->vm;
        f->v[i].index = i;
        f->v[i].tid = f->v[i].xid = i + 1;
        f->v[i].state = T_RUNNING;
        f->v[i].wait_deadline = NO_DEADLINE;
        f->vm.vcpus[i] = &f->v[i];
    }
    schedule(f, "T1 x5\nT2 x3\n");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    ex_schedule_free(&f->ser.sched);
    crew_free(&f->vm);
    free(f->vm.crew);
    gm_destroy(&f->vm.gm);
    free(f);
    return 0;
}

static uint32_t budget(struct fx *f)
{
    return guest_cue_budget_locked(&f->vm, &f->v[0]);
}

static void test_budget_is_the_rest_of_the_segment(void **state)
{
    struct fx *f = *state;
    assert_int_equal(budget(f), 5);
    struct ex_tidset en;
    ex_tidset_clear(&en);
    ex_tidset_add(&en, 1);
    ex_tidset_add(&en, 2);
    ex_cursor_next(&f->ser.cursor, &en);
    ex_cursor_next(&f->ser.cursor, &en);
    assert_int_equal(budget(f), 3);
    for (int i = 0; i < 3; i++)
        ex_cursor_next(&f->ser.cursor, &en);
    assert_int_equal(budget(f), 0); /* the segment of T2 is next */
    assert_int_equal(guest_cue_budget_locked(&f->vm, &f->v[1]), 0); /* not its turn */
    f->ser.current = 2;
    assert_int_equal(guest_cue_budget_locked(&f->vm, &f->v[1]), 3);
}

static void test_budget_caps(void **state)
{
    struct fx *f = *state;
    schedule(f, "T1 x1000\n");
    assert_int_equal(budget(f), AGENT_CUE_RING); /* the ring's size */
    f->ser.cues = 10;
    f->ser.limit = 13;
    assert_int_equal(budget(f), 3); /* picks at cues 10, 11, 12 go on; 13 is the limit */
    f->ser.limit = 10;
    assert_int_equal(budget(f), 0);
    f->ser.limit = 0;
    /* A sleeper's deadline 2.5 cue points ahead: the picks at +0, +1, +2 come before it. */
    f->v[2].state = T_BLOCKED;
    f->v[2].wait_deadline = serialize_vtime(&f->vm) + 2 * SERIALIZE_CUE_NS + SERIALIZE_CUE_NS / 2;
    assert_int_equal(budget(f), 3);
    f->v[2].wait_deadline = serialize_vtime(&f->vm) + 2 * SERIALIZE_CUE_NS;
    assert_int_equal(budget(f), 2); /* the pick at +2 would expire it */
    f->v[2].wait_deadline = serialize_vtime(&f->vm);
    assert_int_equal(budget(f), 0);
    f->v[2].woken = true; /* already woken: no deadline to keep */
    assert_int_equal(budget(f), AGENT_CUE_RING);
}

static void test_budget_zero_when_the_vmm_must_decide(void **state)
{
    struct fx *f = *state;
    f->ser.pick = never_pick; /* a strategy decides at every cue point */
    assert_int_equal(budget(f), 0);
    f->ser.pick = NULL;
    f->ser.cut = true;
    assert_int_equal(budget(f), 0);
    f->ser.cut = false;
    f->v[0].acc_pending = true;
    assert_int_equal(budget(f), 0);
    f->v[0].acc_pending = false;
    f->vm.crew->step[0].on = true; /* a step the VMM must end (rep, pushf) */
    assert_int_equal(budget(f), 0);
    f->vm.crew->step[0].armed = true; /* ... one the agent ends: it declines until then */
    assert_int_equal(budget(f), 5);
    f->vm.crew->step[0].on = f->vm.crew->step[0].armed = false;
    /* The default policy: only while the thread is alone. */
    schedule(f, "");
    assert_int_equal(budget(f), 0);
    f->v[1].state = T_BLOCKED;
    f->v[2].tid = 0;
    assert_int_equal(budget(f), AGENT_CUE_RING);
}

/* A block as the agent leaves it after taking two cue points on page 0, the second's
 * step still pending; g is what the VMM gave. */
static void good_block(struct agent_cue *d, struct crew_cue *g)
{
    memset(d, 0, sizeof *d);
    memset(g, 0, sizeof *g);
    g->armed = true;
    g->budget = 5;
    g->npages = 2;
    for (int j = 0; j < 2; j++) {
        g->va[j] = d->page[j].va = VA + (uint64_t)j * PAGE_SIZE;
        g->pte[j] = d->page[j].pte = KVA(0x300000 + 8 * (uint64_t)j);
        d->page[j].present = (FRAME + (uint64_t)j * PAGE_SIZE) | PTE_P | PTE_W | PTE_U;
        d->page[j].trapped = (d->page[j].present & ~PTE_P) | PTE_TRAP;
    }
    d->state = AGENT_CUE_ON;
    d->budget = 3;
    d->n = 2;
    d->cap = AGENT_CUE_RING;
    d->npages = 2;
    for (int i = 0; i < 2; i++) {
        struct agent_cue_entry *e = &d->ring[i];
        e->rip = 0x401000 + (uint64_t)i;
        e->cr2 = VA + 0x10 + (uint64_t)i;
        e->err = 0x6; /* user write, not present */
        e->rsp = e->gpr[4] = 0x7ffffff000;
        e->rflags = 0x202;
    }
    d->step_pte = g->pte[0];
    d->step_value = d->page[0].trapped;
    d->step_va = VA;
    d->step_rip = d->ring[1].rip;
}

static void test_check_accepts_the_agents_block(void **state)
{
    (void)state;
    struct agent_cue d;
    struct crew_cue g;
    int page_of[AGENT_CUE_RING];
    const char *why;
    good_block(&d, &g);
    assert_int_equal(guest_cue_check(&d, &g, page_of, &why), 2);
    assert_null(why);
    assert_int_equal(page_of[0], 0);
    assert_int_equal(page_of[1], 0);
    d.step_pte = 0; /* no step pending */
    assert_int_equal(guest_cue_check(&d, &g, page_of, &why), 2);
}

/* Every way of scribbling on the block is refused, with a reason. */
static void test_check_refuses_scribbles(void **state)
{
    (void)state;
    struct agent_cue d;
    struct crew_cue g;
    int page_of[AGENT_CUE_RING];
    const char *why;
    for (int k = 0; k < 18; k++) {
        good_block(&d, &g);
        switch (k) {
        case 0: d.state = 0x1234; break;
        case 1: d.n = 3; break;                      /* more entries than the budget spent */
        case 2: d.budget = 5; break;                 /* budget not spent for the entries */
        case 3: d.n = d.budget = 0xFFFFFFFFFFFFFFFFULL; break;
        case 4: d.n = AGENT_CUE_RING + 1; g.budget = 100; d.budget = 100 - d.n; break;
        case 5: d.cap = 1000; break;
        case 6: d.npages = 3; break;
        case 7: d.page[1].pte = KVA(0x10000); break; /* a PTE elsewhere (the agent's code) */
        case 8: d.page[0].va = 0x600000; break;
        case 9: d.ring[1].cr2 = 0x900000; break;     /* a page it was not given */
        case 10: d.ring[0].err = 0x7; break;         /* a protection fault */
        case 11: d.ring[0].err = 0x2; break;         /* from the kernel */
        case 12: d.ring[1].rip = KVA(GPA_AGENT); break;
        case 13: d.ring[0].gpr[4] = 0; break;
        case 14: d.ring[0].rflags |= 0x100; break;   /* TF: a step was going on */
        case 15: d.step_pte = g.pte[1]; break;       /* not the last cue point's page */
        case 16: d.step_value = d.page[0].present; break;
        case 17: d.n = d.budget = 0; g.budget = 0; break; /* a pending step and no entry */
        }
        int n = guest_cue_check(&d, &g, page_of, &why);
        if (n != -1 || !why)
            fail_msg("scribble %d accepted", k);
    }
}

/* guest_cues_left reads the live block: a scribbled one stops the VM with a reason (the
 * caller's internal error), a clean one with nothing logged is nothing to do. */
static void test_left_refuses_a_scribbled_block(void **state)
{
    struct fx *f = *state;
    struct agent_cue *live =
        gm_ptr(&f->vm.gm, GPA_PERCPU + (uint64_t)f->v[0].index * PERCPU_SIZE + AGENT_CUE_OFF);
    struct crew_cue *g = &f->vm.crew->cue[0];
    bool busy = false;
    good_block(live, g);
    live->n = 7; /* more than the budget */
    const char *err = guest_cues_left(&f->vm, &f->v[0], false, &busy);
    assert_non_null(err);
    assert_false(g->armed);
    assert_true(live->state == 0 && live->step_pte == 0); /* off: the agent exits again */
    good_block(live, g);
    live->n = 0;
    live->budget = g->budget;
    live->step_pte = 0;
    assert_null(guest_cues_left(&f->vm, &f->v[0], false, &busy));
    assert_false(busy);
    assert_true(live->state == 0);
    /* Not armed: nothing is read, whatever the block holds. */
    live->state = 0x5A5A;
    assert_null(guest_cues_left(&f->vm, &f->v[0], false, &busy));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_budget_is_the_rest_of_the_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budget_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budget_zero_when_the_vmm_must_decide, setup, teardown),
        cmocka_unit_test(test_check_accepts_the_agents_block),
        cmocka_unit_test(test_check_refuses_scribbles),
        cmocka_unit_test_setup_teardown(test_left_refuses_a_scribbled_block, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
