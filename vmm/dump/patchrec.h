/* The CPUID-patches record of a .jinxdump: the addresses where jinx had rewritten the
 * program's cpuid instructions into ud2 (kvm/cpuidpatch.h) when the dump was written, so
 * that `jinx-vmm replay`, whose snapshot memory holds those rewritten bytes, answers them
 * as the recorded run did (the libraries ld.so mapped are not loaded again by replay).
 * docs/dumps.md is the reference:
 *
 *   8 CPUID_PATCHES  u32 count, u32 version, then count u64 entries, ascending
 *
 * Version 0 (every dump before rdtsc patching): each entry is a cpuid site's user
 * address. Version 1: each entry is an address in bits 0..55 and its kind (enum
 * patch_kind of linux/cpuidscan.h: 0 cpuid, 1 rdtsc, 2 rdtscp) in bits 56..63. A reader
 * that knows only version 0 (it ignored the second field) refuses a version 1 record
 * holding rdtsc sites (an entry above USER_TOP) rather than answering them as CPUID; one
 * with cpuid sites only reads the same either way.
 *
 * Untrusted input: the count must fit the bytes left and CPUIDPATCH_MAX_SITES, the version
 * be 0 or 1, every address be a user address below USER_TOP, strictly ascending, every
 * kind known (and 0 in version 0). Pure code, no KVM. Dumps without the record (older
 * ones, or a host that traps both CPUID and RDTSC) replay without seeded sites. */
#ifndef JINX_PATCHREC_H
#define JINX_PATCHREC_H
#include "dump/dumpfile.h"
#include "linux/cpuidscan.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DREC_CPUID_PATCHES 8
#define PATCHREC_VERSION 1

struct patch_rec {
    bool present;
    uint64_t *va;   /* owned */
    uint8_t *kind;  /* owned: kind[i] of va[i] (enum patch_kind) */
    size_t n;
};

/* Version 1, every site of kind CPUID (kinds NULL) or of kinds[i]. */
int patchrec_encode(const uint64_t *va, size_t n, struct dbuf *b);
int patchrec_encode_kinds(const uint64_t *va, const uint8_t *kinds, size_t n, struct dbuf *b);
/* 0 with r filled, or -1 with a message naming what is wrong. */
int patchrec_parse(const uint8_t *p, size_t len, struct patch_rec *r, char *err,
                   size_t errlen);
/* d's record into r (r->present false when there is none: 0). Two are refused. */
int patchrec_find(const struct dumpfile *d, struct patch_rec *r, char *err, size_t errlen);
void patchrec_free(struct patch_rec *r);

#endif
