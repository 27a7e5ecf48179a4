/* Guest threads as Linux sees them: clone() gives the new thread a vCPU of its own (a
 * parked one, or a new one within --vcpus), a thread's exit frees it again, and every
 * thread gets the id the explorer numbers it by (v->xid). The vCPUs themselves and
 * their host threads are the core's (kvm/vm.h). */
#ifndef JINX_THREADS_H
#define JINX_THREADS_H
#include <stdint.h>

struct vm;
struct vcpu;

/* clone(): a new thread on its own vCPU, starting right after the syscall with the
 * parent's registers (and the new stack and TLS when given). The tid, or -errno
 * (-EAGAIN at the thread limit, which is noted in the run's limits). */
int64_t thread_clone(struct vm *vm, struct vcpu *v, uint64_t flags, uint64_t stack,
                     uint64_t ptid, uint64_t ctid, uint64_t tls);
/* exit(): v's thread leaves (CLONE_CHILD_CLEARTID is honoured); the last one ends the
 * process with status. Takes vm->lock. */
void thread_exit(struct vm *vm, struct vcpu *v, int status);

/* Explorer thread ids (v->xid): traces, schedules, the cursor and spin detection number
 * threads 1..EX_MAX_TID (explorer/trace.h), but guest tids grow for ever (a program that
 * creates and joins threads in a loop passes 255 soon). A thread keeps its tid as its id
 * while tids are <= EX_MAX_TID; past that it takes the lowest id no live thread holds
 * (an exited thread's), so at most EX_MAX_TID threads at once, more than MAX_VCPUS.
 * The ids are given at clone (thread_xid_assign_locked, also for thread 1) and again
 * from scratch when a serialized fragment begins (thread_xids_reset_locked), in tid
 * order, so a snapshot's fragment numbers its threads the same in every VM that runs it.
 * A reused id makes the analysis see one thread where there were two after each other:
 * it may miss a race between them, never invent one. Caller holds vm->lock. */
void thread_xid_assign_locked(struct vm *vm, struct vcpu *v);
void thread_xids_reset_locked(struct vm *vm);

#endif
