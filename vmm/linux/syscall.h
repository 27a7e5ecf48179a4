/* The Linux syscall layer: what a static musl program asks of the kernel, answered by
 * the VMM. Every argument is guest-controlled and validated; wild pointers get -EFAULT.
 * Unknown syscalls get -ENOSYS and one warning each on stderr (number and name). */
#ifndef JINX_SYSCALL_H
#define JINX_SYSCALL_H
#include "kvm/vm.h"

enum { SYSCALL_CONTINUE = 0, SYSCALL_THREAD_GONE = 1, SYSCALL_BLOCKED = 2 };
/* Internal result of a syscall that put its thread to sleep. */
#define SYSRET_BLOCKED INT64_MIN

/* Handles the syscall the thread on v is making (registers in v->run->s.regs, as the
 * user left them: rax number, rdi rsi rdx r10 r8 r9 arguments, rcx return address).
 * Sets *ret to the result for rax, unless the thread is gone. */
int syscall_dispatch(struct vm *vm, struct vcpu *v, int64_t *ret);
const char *syscall_name(unsigned nr);
/* The syscalls whose answer is the same for every thread, every call and every run
 * (getpid is 1, getppid 0, ...): true and *value for those, false for every other. The
 * guest-agent may answer these in the guest (kvm/answers.h); syscall_dispatch answers
 * them the same way when they do reach the VMM. */
bool syscall_constant_answer(uint64_t nr, int64_t *value);

#endif
