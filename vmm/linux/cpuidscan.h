/* Finding the CPUID instructions of an ELF file's code, to rewrite them where the host
 * cannot trap user-mode CPUID (docs/cpu-models.md, "Patching CPUID").
 *
 * A site is reported only where the bytes 0F A2 are known to be an instruction start: the
 * executable sections (SHF_EXECINSTR, from the section headers) are swept linearly with
 * capstone, re-anchored at every function symbol of .symtab and .dynsym (and at each
 * section's start). An interval between two anchors counts only if its sweep decoded every
 * byte and landed exactly on the next anchor; a cpuid in an interval that did not (data
 * in code, a desynchronised sweep) is left alone and counted as unsure. A wrong patch
 * would corrupt the program; a missed one only leaves that CPUID native.
 *
 * The file is untrusted: every header, offset and size is checked; a file that is not a
 * sane ELF64 x86-64 file yields no sites. Pure host code (capstone, no KVM): unit-tested
 * on crafted files. Deterministic: the same bytes give the same sites. */
#ifndef JINX_CPUIDSCAN_H
#define JINX_CPUIDSCAN_H
#include <stddef.h>
#include <stdint.h>

struct cpuidscan {
    uint64_t *sites;    /* file offsets of the cpuid instructions found (ascending per section) */
    size_t n, cap;
    unsigned unsure;    /* 0F A2 pairs in swept code not known to be an instruction start */
};

/* The cpuid instructions of file data[0..size) whose two bytes lie in the file range
 * [off, off + len) (a mapping's extent). Appends to r (zero it first; free with
 * cpuidscan_free). Returns 0, or -1 when out of memory or capstone is unusable. */
int cpuidscan_file(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                   struct cpuidscan *r);
void cpuidscan_free(struct cpuidscan *r);

#endif
