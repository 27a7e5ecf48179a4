/* Unit tests for single steps ended in the guest (sched/guest_step.h): what the VMM arms
 * in the agent's per-vCPU block before KVM_RUN, and what it does with what it reads back
 * after (the agent's work is played by the test, writing guest memory as agent.S does).
 * A real guest memory and page ownership (crew.c) on a fake VM; no KVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kvm/guestmem.h"
#include "kvm/vm.h"
#include "sched/crew.h"
#include "sched/guest_step.h"
#include <stdlib.h>
#include <string.h>

#define VA 0x500000ULL
#define FRAME 0x800000ULL
#define FLAGS (PTE_P | PTE_W | PTE_U)

struct fx {
    struct vm vm;
    struct vcpu v;
    uint64_t *pte;
};

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
    f->v.vm = &f->vm;
    f->v.index = 3;
    /* One user page, watched (trapped) as crew_start would, then given to the running
     * thread for a single step, as perform_locked does for a shared page. */
    f->pte = gm_pte(&f->vm.gm, VA, true);
    if (!f->pte)
        return -1;
    gm_set_pte(&f->vm.gm, f->pte, FRAME | FLAGS);
    f->vm.crew->on = true;
    crew_watch_range(&f->vm, VA, VA + PAGE_SIZE);
    if (*f->pte != ((FRAME | FLAGS | PTE_TRAP) & ~PTE_P) || f->vm.crew->npage != 1)
        return -1;
    gm_set_pte(&f->vm.gm, f->pte, FRAME | FLAGS); /* granted */
    struct crew_step *s = &f->vm.crew->step[f->v.index];
    s->slot = malloc(8 * sizeof *s->slot);
    if (!s->slot)
        return -1;
    s->cap = 8;
    s->on = true;
    s->n = 1;
    s->slot[0] = 0;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    crew_free(&f->vm);
    free(f->vm.crew);
    gm_destroy(&f->vm.gm);
    free(f);
    return 0;
}

static struct agent_step *block(struct fx *f)
{
    return gm_ptr(&f->vm.gm, GPA_PERCPU + (uint64_t)f->v.index * PERCPU_SIZE + AGENT_STEP_OFF);
}

static const char *left(struct fx *f, bool interrupted)
{
    bool busy = false;
    const char *e = guest_step_left(&f->vm, &f->v, interrupted, &busy);
    assert_false(busy); /* no vCPU here: never inside the agent's handler */
    return e;
}

static uint64_t trapped(void) { return (FRAME | FLAGS | PTE_TRAP) & ~PTE_P; }

/* What the agent's #DB handler does with an armed block (agent.S, debug_entry). */
static void agent_ends_step(struct fx *f)
{
    struct agent_step *d = block(f);
    for (unsigned long long i = 0; i < d->n; i++) {
        uint64_t *p = gm_ptr(&f->vm.gm, d->e[i].pte - KBASE);
        *p = d->e[i].value;
    }
    d->state = AGENT_STEP_DONE;
}

static void test_arms_the_steps_pte_writes(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    struct agent_step *d = block(f);
    assert_true(d->state == AGENT_STEP_ARMED);
    assert_int_equal(d->n, 1);
    assert_true(d->e[0].pte == KVA((uint64_t)((uint8_t *)f->pte - f->vm.gm.host)));
    assert_true(d->e[0].value == trapped());
    assert_true(d->e[0].va == VA);
    assert_true(*f->pte == (FRAME | FLAGS)); /* nothing changes before the guest runs */
}

static void test_done_ends_the_step_in_the_vmm_too(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    agent_ends_step(f);
    assert_null(left(f, false));
    assert_false(f->vm.crew->step[f->v.index].on);
    assert_int_equal(f->vm.crew->guest_steps, 1);
    assert_int_equal(f->vm.crew->steps, 1);
    assert_true(*f->pte == trapped());
    assert_true(block(f)->state == 0); /* disarmed: a later #DB exits */
    /* Nothing armed any more: the next run arms nothing. */
    guest_step_enter(&f->vm, &f->v);
    assert_true(block(f)->state == 0);
}

static void test_still_armed_keeps_the_step(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    assert_null(left(f, false)); /* exited for another reason */
    assert_true(f->vm.crew->step[f->v.index].on);
    assert_int_equal(f->vm.crew->guest_steps, 0);
    assert_true(block(f)->state == 0);
    assert_true(*f->pte == (FRAME | FLAGS));
    guest_step_enter(&f->vm, &f->v); /* armed again for the next run */
    assert_true(block(f)->state == AGENT_STEP_ARMED);
}

static void test_kicked_outside_the_handler_is_disarmed(void **state)
{
    struct fx *f = *state;
    f->v.fd = -1; /* no vCPU to ask for its rip: not in the handler */
    guest_step_enter(&f->vm, &f->v);
    assert_null(left(f, true));
    assert_true(block(f)->state == 0);
    assert_true(f->vm.crew->step[f->v.index].on);
    assert_false(f->vm.crew->step[f->v.index].armed);
}

static void test_done_without_the_write_is_trapped_by_the_vmm(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    block(f)->state = AGENT_STEP_DONE; /* DONE, but the PTE was left present */
    assert_null(left(f, false));
    assert_false(f->vm.crew->step[f->v.index].on);
    assert_true(*f->pte == trapped());
}

/* A memory cue point the agent took after ending the step mapped the page again for its
 * own step, still going when the vCPU left (guest_cue.h): the end of the first step must
 * not trap it under that step (guest_cues_left names it in keep_pte). */
static void test_page_mapped_again_by_an_in_guest_cue_point_stays(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    agent_ends_step(f);
    *f->pte = FRAME | FLAGS; /* the agent's #PF handler mapped it again */
    f->vm.crew->cue[f->v.index].keep_pte = KVA((uint64_t)((uint8_t *)f->pte - f->vm.gm.host));
    assert_null(left(f, false));
    assert_false(f->vm.crew->step[f->v.index].on);
    assert_int_equal(f->vm.crew->guest_steps, 1);
    assert_true(*f->pte == (FRAME | FLAGS));
}

static void test_overwritten_block_is_an_error(void **state)
{
    struct fx *f = *state;
    guest_step_enter(&f->vm, &f->v);
    block(f)->state = 0x4141414141414141ULL;
    const char *e = left(f, false);
    assert_non_null(e);
    assert_non_null(strstr(e, "single-step block"));
    assert_true(f->vm.crew->step[f->v.index].on); /* nothing taken from it */
}

static void test_not_armed_when_off_or_not_plain(void **state)
{
    struct fx *f = *state;
    struct crew_step *s = &f->vm.crew->step[f->v.index];
    f->vm.opt.no_guest_cues = true;
    guest_step_enter(&f->vm, &f->v);
    assert_true(block(f)->state == 0);
    f->vm.opt.no_guest_cues = false;
    s->rep = true; /* a rep string instruction may need many traps: the VMM's */
    guest_step_enter(&f->vm, &f->v);
    assert_true(block(f)->state == 0);
    s->rep = false;
    s->pushf = true; /* the pushed flags must lose TF: the VMM's */
    guest_step_enter(&f->vm, &f->v);
    assert_true(block(f)->state == 0);
    s->pushf = false;
    s->on = false;
    guest_step_enter(&f->vm, &f->v);
    assert_true(block(f)->state == 0);
    /* A left with nothing armed reads nothing, even a block that says DONE. */
    s->on = true;
    block(f)->state = AGENT_STEP_DONE;
    assert_null(left(f, false));
    assert_true(s->on);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_arms_the_steps_pte_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_done_ends_the_step_in_the_vmm_too, setup, teardown),
        cmocka_unit_test_setup_teardown(test_still_armed_keeps_the_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kicked_outside_the_handler_is_disarmed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_done_without_the_write_is_trapped_by_the_vmm, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_page_mapped_again_by_an_in_guest_cue_point_stays,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_overwritten_block_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_armed_when_off_or_not_plain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
