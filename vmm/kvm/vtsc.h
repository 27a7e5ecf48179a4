/* The virtual TSC: what the program's rdtsc/rdtscp reads, wherever the VMM answers it
 * (a trapped one on VMX/SVM, CR4.TSD, kvm/exception.c; a patched one on PVM,
 * kvm/cpuidpatch.h). Virtual time (vm_vtime) at 3 GHz, so serialized modes, whose time
 * is virtual, answer the same in a run, its replay and a simulation. README "Time is
 * virtual". */
#ifndef JINX_VTSC_H
#define JINX_VTSC_H
#include <stdbool.h>

struct vm;
struct vcpu;

/* Sets v's EDX:EAX to the virtual TSC and, for rdtscp, ECX to the vCPU's index (its
 * IA32_TSC_AUX). The caller moves rip past the instruction. */
void vtsc_answer(struct vm *vm, struct vcpu *v, bool rdtscp);

#endif
