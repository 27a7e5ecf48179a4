/* The CPUID record of a .jinxdump: the CPU model the guest saw and the exact CPUID table
 * jinx gave KVM, so that `jinx-vmm replay` presents the same CPU (and refuses on a host
 * that cannot) and `jinxctl inspect` shows it. docs/dumps.md is the reference:
 *
 *   6 CPUID  str model, u32 entries, u32 0, then per entry u32 function, u32 index,
 *            u32 flags (KVM_CPUID_FLAG_*), u32 eax, u32 ebx, u32 ecx, u32 edx
 *
 * Untrusted input: the model must be a valid name, the count fit the bytes left and
 * CPUIDREC_MAX_ENTRIES, flags be KVM's, and no (function, index) appear twice. Pure code,
 * no KVM: unit-tested and fuzzed (fuzz_dumpfile). Dumps written before this record have
 * none: replay then uses the host's KVM table, as those runs did. */
#ifndef JINX_CPUIDREC_H
#define JINX_CPUIDREC_H
#include "dump/dumpfile.h"
#include <linux/kvm.h>
#include <stdbool.h>

#define DREC_CPUID 7
#define CPUIDREC_MAX_ENTRIES 1024
#define CPUIDREC_ENTRY_LEN 28

struct cpuid_rec {
    bool present;
    char model[64];
    struct kvm_cpuid2 *table;  /* owned */
};

int cpuidrec_encode(const char *model, const struct kvm_cpuid2 *c, struct dbuf *b);
/* 0 with r filled, or -1 with a message naming what is wrong. */
int cpuidrec_parse(const uint8_t *p, size_t len, struct cpuid_rec *r, char *err,
                   size_t errlen);
/* d's CPUID record into r (r->present false when there is none: 0). Two are refused. */
int cpuidrec_find(const struct dumpfile *d, struct cpuid_rec *r, char *err, size_t errlen);
void cpuidrec_free(struct cpuid_rec *r);

#endif
