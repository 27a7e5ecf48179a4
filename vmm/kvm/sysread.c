/* A blocked thread's syscall read (vm.h): KVM owes it a completion once the thread
 * wakes; these complete it, discard it, or turn it back into the same syscall. */
#include "kvm/vm.h"
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

/* A thread woken with SYSRET_RERUN: its pending syscall read is discarded (io_stale) and
 * its registers become those it blocked with (at the read, rax the syscall number), so
 * it exits for the same syscall again. The vCPU's own thread, before it enters. */
void vm_rerun_syscall(struct vcpu *v)
{
    if (v->wait_result != SYSRET_RERUN || !(v->result_pending || v->result_in_rax))
        return;
    if (v->result_pending)
        v->io_stale = true;
    v->result_pending = false;
    v->result_in_rax = false;
    v->wait_result = 0;
    /* Only where it is and what it asks: the mode's own changes (TF) stay. */
    v->run->s.regs.regs.rip = v->blocked_regs.rip;
    v->run->s.regs.regs.rax = v->blocked_regs.rax;
    v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
}

int vm_settle_stale_io(struct vcpu *v)
{
    if (!v->io_stale)
        return 0;
    v->io_stale = false;
    struct kvm_regs r = v->run->s.regs.regs;
    struct kvm_sregs s = v->run->s.regs.sregs;
    uint64_t dirty = v->run->kvm_dirty_regs;
    v->run->kvm_dirty_regs = 0;
    /* Finishing a locked RMW's read half emulates on into its write half, another MMIO
     * exit: go on (discarding it too) until KVM returns without a pending exit. */
    int rc = -1;
    for (int i = 0; i < 4 && rc < 0; i++)
        rc = vm_complete_mmio(v, 0);
    v->run->s.regs.regs = r;
    v->run->s.regs.sregs = s;
    v->run->kvm_dirty_regs = dirty;
    return rc;
}

int vm_complete_mmio(struct vcpu *v, int64_t value)
{
    /* The instruction may exit again before it is done (a read-modify-write has a write
     * half): answer those too, until KVM has nothing left and returns EINTR. */
    int rc = -1, e = 0;
    for (int i = 0; i < 4; i++) {
        memcpy(v->run->mmio.data, &value, 8);
        __atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
        rc = ioctl(v->fd, KVM_RUN, 0);
        e = errno;
        v->run->kvm_dirty_regs = 0;
        if (rc < 0 || v->run->exit_reason != KVM_EXIT_MMIO)
            break;
    }
    __atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
    return rc < 0 && e == EINTR ? 0 : -1;
}
