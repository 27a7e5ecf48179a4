/* `jinx-vmm run --snapshot-selftest N`: while the program runs, N times: pause, snapshot,
 * keep a full reference copy of memory and vCPU state, run on, pause, restore, and check
 * that memory and every vCPU match the reference exactly; then let the program go on
 * from the restored state. Prints per-round restore costs; any mismatch fails the run. */
#ifndef JINX_SELFTEST_H
#define JINX_SELFTEST_H
#include "kvm/vm.h"

/* Runs the rounds from the VMM's main thread while the guest runs; returns the number
 * of rounds that found a difference, or -1 when snapshot/restore itself failed. */
int selftest_run(struct vm *vm, int rounds, uint64_t interval_ns);

#endif
