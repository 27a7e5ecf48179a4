/* The exit loop's exception handler (exception.c), for vm.c only. */
#ifndef JINX_EXCEPTION_H
#define JINX_EXCEPTION_H
#include <stdbool.h>

struct vm;
struct vcpu;

/* The agent's stub for vector vec reported an exception of v's thread: the serialized
 * mode's cue points (vm_mode_ops), CPUID and RDTSC emulation, else a fatal signal.
 * Returns false when the thread must not resume. */
bool vm_handle_exception(struct vm *vm, struct vcpu *v, int vec);

#endif
