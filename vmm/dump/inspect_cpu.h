/* `jinxctl inspect`'s CPU section: the model and CPUID table a dump recorded
 * (cpuidrec.h), the features named by libvirt's feature file when it is installed. */
#ifndef JINX_INSPECT_CPU_H
#define JINX_INSPECT_CPU_H
#include "dump/cpuidrec.h"
#include <stdio.h>

/* "cpu:     model kvm64 (N CPUID entries, XCR0 0x3): fpu de ..." or the line for a dump
 * without the record. */
void inspect_cpu_text(const struct cpuid_rec *r, FILE *f);
/* ,"cpu":{"model":..,"xcr0":..,"features":[..],"cpuid":[{leaf,subleaf,flags,eax..}]}
 * (null for a dump without the record). */
void inspect_cpu_json(const struct cpuid_rec *r, FILE *f);

#endif
