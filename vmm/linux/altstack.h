/* sigaltstack(2): the thread's alternate signal stack, as Linux keeps it, though jinx never
 * runs a signal handler (docs/guest.md). Runtimes read back what they set: the sanitizers
 * set one per thread and unmap it at the thread's end through the old value sigaltstack
 * returns, so a wrong answer makes them unmap garbage and abort. The state lives in the
 * thread's per-vCPU area (kvm/layout.h: struct agent_altstack), in guest memory, so
 * snapshots, restores, dumps and replays carry it. Arguments are the guest's: untrusted. */
#ifndef JINX_ALTSTACK_H
#define JINX_ALTSTACK_H
#include <stdint.h>

struct vm;
struct vcpu;

/* sigaltstack(ss, old_ss) for thread v: 0 or -errno (EFAULT, EINVAL, ENOMEM). */
int64_t altstack_syscall(struct vm *vm, struct vcpu *v, uint64_t ss, uint64_t old_ss);
/* A new thread has none (clone of a thread, as Linux does for CLONE_VM). */
void altstack_reset(struct vm *vm, struct vcpu *v);

#endif
