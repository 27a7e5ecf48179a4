/* The CPUID-patches record of a .jinxdump: the addresses where jinx had rewritten the
 * program's cpuid instructions into ud2 (kvm/cpuidpatch.h) when the dump was written, so
 * that `jinx-vmm replay`, whose snapshot memory holds those rewritten bytes, answers them
 * as the recorded run did (the libraries ld.so mapped are not loaded again by replay).
 * docs/dumps.md is the reference:
 *
 *   8 CPUID_PATCHES  u32 count, u32 0, then count u64 user addresses, ascending
 *
 * Untrusted input: the count must fit the bytes left and CPUIDPATCH_MAX_SITES, every
 * address be a user address below USER_TOP, strictly ascending. Pure code, no KVM.
 * Dumps without the record (older ones, or a host that traps CPUID) replay without
 * seeded sites. */
#ifndef JINX_PATCHREC_H
#define JINX_PATCHREC_H
#include "dump/dumpfile.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DREC_CPUID_PATCHES 8

struct patch_rec {
    bool present;
    uint64_t *va;   /* owned */
    size_t n;
};

int patchrec_encode(const uint64_t *va, size_t n, struct dbuf *b);
/* 0 with r filled, or -1 with a message naming what is wrong. */
int patchrec_parse(const uint8_t *p, size_t len, struct patch_rec *r, char *err,
                   size_t errlen);
/* d's record into r (r->present false when there is none: 0). Two are refused. */
int patchrec_find(const struct dumpfile *d, struct patch_rec *r, char *err, size_t errlen);
void patchrec_free(struct patch_rec *r);

#endif
