/* Scheduling and resource syscalls, answered as Linux answers an unprivileged process
 * whose threads are all SCHED_OTHER, deterministically (nothing depends on the host's
 * scheduler): sched_getaffinity/setaffinity (schedres_ncpus CPUs), sched_getparam,
 * sched_setparam, sched_getscheduler, sched_setscheduler (SCHED_OTHER, BATCH and IDLE
 * accepted, FIFO and RR -EPERM), sched_get_priority_max/min, getrlimit, setrlimit,
 * prlimit64 (jinx's limits; a lower one is accepted but not kept), sysinfo (guest RAM,
 * virtual uptime) and madvise (MADV_DONTNEED zeroes anonymous pages). Every argument is
 * guest input: bad pointers get -EFAULT, bad values -EINVAL, unknown threads -ESRCH. */
#ifndef JINX_SCHEDRES_H
#define JINX_SCHEDRES_H
#include "kvm/vm.h"
#include <stdbool.h>
#include <stdint.h>

/* Handles syscall nr if it is one of the above (*handled set): the result or -errno. */
int64_t schedres_syscall(struct vm *vm, uint64_t nr, const uint64_t a[6], bool *handled);
/* The CPUs the guest has (sched_getaffinity's mask, so sysconf(_SC_NPROCESSORS_ONLN)):
 * as many as it may have threads at once (--vcpus), at most the host's online CPUs. */
int schedres_ncpus(struct vm *vm);

#endif
