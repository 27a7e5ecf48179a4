/* Signals inside the guest (issue 28): actions, masks, pending sets and waits.
 *
 * What jinx keeps, all VM state under vm->lock, in snapshots and dumps: the action per
 * signal (vm->sigact: default, ignore, or "a handler"), each thread's blocked mask, each
 * thread's pending set (tkill/tgkill/pthread_kill, SIGPIPE) and the process's (kill to
 * itself). A signal sent to a thread that blocks it stays pending, as on Linux, until the
 * thread unblocks it (rt_sigprocmask) or takes it with sigwait/sigwaitinfo/
 * sigtimedwait (rt_sigtimedwait); rt_sigpending reports them. A signal the target does
 * not block acts at once: ignored (SIG_IGN, or a default of ignore or stop) it is dropped;
 * a default of terminate ends the program with that signal, reported on that thread (a
 * program outcome, as on Linux); a handler jinx does not run (no signal frames): the
 * signal then ends the program too and is noted as a jinx limit (LIMIT_SIGNAL), so a run
 * it fails is "could not test", never a bug.
 *
 * rt_sigtimedwait with nothing pending blocks the thread like a futex wait on SIG_KEY
 * (futex.h, pipes.h: a key outside the user half), so the scheduler, the deadlock
 * detector, virtual time and snapshots know it; a timeout is a virtual-time deadline
 * (-EAGAIN when it comes). A signal sent to a waiter wakes it to make its call again
 * (SYSRET_RERUN), which then takes the signal: who gets which signal depends only on the
 * order of the calls, so serialized runs are deterministic. Serialized execution hears of
 * a wait as a futex wait on SIG_KEY and of a send as a wake of it (vcpu.sync_*).
 *
 * Standard signals are not queued (one of each pending), real-time ones neither (a jinx
 * simplification: a second send while one is pending is merged). Every argument is
 * guest-controlled: numbers, masks and pointers are checked and answered with Linux's
 * errno. */
#ifndef JINX_SIGNALS_H
#define JINX_SIGNALS_H
#include "kvm/vm.h"
#include "linux/pipes.h"
#include <stdbool.h>
#include <stdint.h>

#define SIG_KEY (PIPE_KEY_BASE - 16) /* every blocked rt_sigtimedwait (a pipe_key) */

/* Handles nr when it is a signal syscall: rt_sigaction, rt_sigprocmask, rt_sigpending,
 * rt_sigtimedwait, kill, tkill, tgkill (*handled set). Result, -errno or SYSRET_BLOCKED;
 * *gone when the calling thread is gone (the program ends with a signal). */
int64_t signals_syscall(struct vm *vm, struct vcpu *v, uint64_t nr, const uint64_t a[6],
                        bool *handled, bool *gone);
/* A signal the VMM raises on thread v for its own syscall (SIGPIPE for a write with no
 * reader): pending if v blocks it, else its action. True when v is gone. */
bool signals_raise_self(struct vm *vm, struct vcpu *v, int sig, const char *why);
/* Would blocked sigwaiter w (wait_addr SIG_KEY) now take a signal? Caller holds vm->lock. */
bool signals_waiter_ready_locked(struct vm *vm, const struct vcpu *w);

#endif
