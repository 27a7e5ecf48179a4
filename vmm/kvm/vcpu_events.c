/* Queued vCPU events across snapshots and restores (vcpu_events.h). */
#include "kvm/vcpu_events.h"
#include "kvm/vm.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* Only what a restore can give back on any host (no SIPI vector, no SMM). */
#define EVENT_FLAGS (KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SHADOW)

/* Test hook (tests/integration/fault-in-flight.sh): JINX_TEST_TRAP_QUEUED=1 queues a
 * trap on every vCPU a snapshot takes (a step's #DB) and on every vCPU a restore
 * replaces (a point's #BP from the simulation that ran since), as a kick out of KVM_RUN
 * can leave one. Either reaching the program would be a SIGTRAP jinx made. Off in real
 * runs. */
static void test_trap_queued(struct vcpu *v, int vector)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("JINX_TEST_TRAP_QUEUED");
        on = e && strcmp(e, "1") == 0;
        if (on)
            fprintf(stderr, "jinx-vmm: test hook: traps left queued at snapshots and restores\n");
    }
    struct kvm_vcpu_events ev;
    if (!on || ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
        return;
    ev.flags &= EVENT_FLAGS;
    ev.exception.injected = 1;
    ev.exception.nr = (uint8_t)vector;
    ev.exception.has_error_code = 0;
    if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
        fprintf(stderr, "jinx-vmm: test hook: KVM_SET_VCPU_EVENTS: %s\n", strerror(errno));
}

int vcpu_events_save(struct vcpu *v, struct kvm_vcpu_events *ev)
{
    test_trap_queued(v, 1);
    if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, ev) < 0)
        return -1;
    ev->flags &= EVENT_FLAGS;
    if ((ev->exception.injected || ev->exception.pending) && ev->exception.nr == 1) {
        ev->exception.injected = ev->exception.pending = 0;
        if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, ev) < 0)
            return -1;
    }
    return 0;
}

void vcpu_events_restore(struct vcpu *v, const struct kvm_vcpu_events *ev)
{
    test_trap_queued(v, 3);
    v->run->s.regs.events = *ev;
    v->run->kvm_dirty_regs |= KVM_SYNC_X86_EVENTS;
}

void vcpu_events_clear(struct vcpu *v)
{
    memset(&v->run->s.regs.events, 0, sizeof v->run->s.regs.events);
    v->run->s.regs.events.flags = EVENT_FLAGS;
    v->run->kvm_dirty_regs |= KVM_SYNC_X86_EVENTS;
}
