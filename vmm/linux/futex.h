/* Futexes, sleeping and deadlock detection. Blocking happens on the host: a waiting
 * guest thread's vCPU thread sleeps on a condition variable, never spins in the guest,
 * so the VMM always knows which threads can run.
 *
 * When every live thread is blocked, either some wait has a deadline — then virtual time
 * jumps to the earliest one (a sleeping program costs no wall time) — or none has, and
 * that is a deadlock: the VM stops with a report of every thread's wait. */
#ifndef JINX_FUTEX_H
#define JINX_FUTEX_H
#include "kvm/vm.h"

#define VTIME_EPOCH_NS 1767225600000000000ULL /* 2026-01-01T00:00:00Z: CLOCK_REALTIME at boot */
#define NO_DEADLINE UINT64_MAX

/* futex(2) for the guest. Returns Linux's result, or SYSRET_BLOCKED when the thread now
 * waits: its result (0 when woken, -ETIMEDOUT) is delivered when it wakes. */
int64_t futex_syscall(struct vm *vm, struct vcpu *v, uint64_t uaddr, int op, uint32_t val,
                      uint64_t utime, uint64_t uaddr2, uint32_t val3);
/* Sleep until virtual time deadline (nanosleep): SYSRET_BLOCKED, result 0 on waking. */
int64_t futex_sleep(struct vm *vm, struct vcpu *v, uint64_t deadline);
/* For a blocked thread's host thread: waits once (it may return early). In free
 * execution it unblocks the thread with its timeout result when the deadline has
 * passed; under virtual time only futex_expire_locked does. Caller holds vm->lock. */
void futex_wait_locked(struct vm *vm, struct vcpu *v);
/* Caller holds vm->lock. */
int futex_wake_locked(struct vm *vm, uint64_t uaddr, int n, uint32_t bitset);
void futex_check_all_blocked(struct vm *vm);
/* Under virtual (serialized) time: unblocks, in vCPU order, every blocked thread whose
 * deadline has come, with its timeout result, and returns how many. The scheduler calls
 * it wherever virtual time moves (each cue point, a fragment's start, a skip when all
 * threads wait) so that which threads can run at a cue point depends on virtual time
 * alone, never on when a host thread wakes. Caller holds vm->lock. */
int futex_expire_locked(struct vm *vm);
/* For other waits built on the futex machinery (pipes.h): blocks v on key (an address
 * outside the user half) until deadline, and wakes it with result. Caller holds vm->lock. */
void futex_block_locked(struct vm *vm, struct vcpu *v, uint64_t key, uint64_t deadline);
void futex_unblock_locked(struct vm *vm, struct vcpu *v, int64_t result);

#endif
