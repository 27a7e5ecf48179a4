/* Sampled sparse runs: learning a program's shared accesses at a page fault per page and
 * turn, not one per access (issue 26, "learn cheaply").
 *
 * A sparse run (sparse.h) maps every page and makes no memory cue point; the sites its
 * change points are drawn over come from traced runs, and the first of those is a prefix
 * of 5000 cue points from the snapshot. A program that computes before it shares (a
 * matrix product whose workers add each row's checksum to a total) reaches its racy
 * accesses long after any prefix ends: traced runs never show them.
 *
 * A sampled sparse fragment (serializer.sampling, set by the driver for the next
 * fragment) watches every writable page as a traced one does (crew.h), but a fault is
 * never a cue point and never a scheduling decision: the faulting thread's access is
 * recorded into serializer.samples (thread, rip, address, size, kind, as a traced run's
 * trace records it) and the page is mapped for the rest of the thread's turn: read-only
 * for a read, so that the thread's first write there in the turn is recorded too, then
 * writable. When the turn passes, and every CREW_SAMPLE_PERIOD_NS within a turn, every
 * page is trapped again. The fragment's cue
 * points (syscalls, points, yields) are copied into the samples in order, without their
 * wakers (the explorer infers them), so the samples are a well-formed trace: the first
 * read and the first write of each page in each turn, between the run's synchronization.
 *
 * The schedule does not change: the sampled run makes the same cue points and decisions
 * as the same run unsampled (a fault only delays the instruction), so a bug it meets
 * replays without sampling. What it costs: a fault exit per page and turn (two for a page
 * read then written). */
#ifndef JINX_CREW_SAMPLE_H
#define JINX_CREW_SAMPLE_H
#include "sched/crew.h"

/* Every this much wall time, the running thread's pages are trapped again as if its turn
 * had passed: a variable that shares its page with hot data (a total beside the first
 * rows of the matrix the workers fill) is not the page's first touch in a turn, but it
 * is the first touch after a re-trap when it is touched again. A re-trap costs a fault
 * per page the thread then touches (matmul: ~70 pages, ~7 ms of faults a period). */
#define CREW_SAMPLE_PERIOD_NS 20000000ULL
/* A fragment samples at most this many accesses; then its pages stay mapped and it runs
 * as an unsampled one (a spin barrier's threads hand over at every yield, and each turn
 * faulted on every page again: phase-stencil's sampled runs took 1.8 s, not 70 ms). */
#define CREW_SAMPLE_MAX 4096u

/* crew_start's part: the fragment samples when serializer.sampling says so, from zero. */
void crew_sample_start(struct vm *vm);
/* crew_fault's work in a sampled fragment (crew.sample): CREW_GO after recording and
 * mapping, or CREW_NOT_WATCHED (a real fault). */
enum crew_verdict crew_sample_fault(struct vm *vm, struct vcpu *v, uint64_t cr2,
                                    uint64_t errcode, uint64_t rip, const struct kvm_regs *regs,
                                    const struct kvm_sregs *sregs);
/* The fragment's wait loop (serialize.c) calls it: re-traps the running thread's pages
 * when a period has passed. Returns when to call it again (mono_ns; UINT64_MAX: not
 * sampling). Caller holds vm->lock. */
uint64_t crew_sample_tick_locked(struct vm *vm, uint64_t now);

#endif
