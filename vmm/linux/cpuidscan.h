/* Finding the CPUID instructions of an ELF file's code, to rewrite them where the host
 * cannot trap user-mode CPUID (docs/cpu-models.md, "Patching CPUID"), and likewise its
 * RDTSC (0F 31) and RDTSCP (0F 01 F9), where the host cannot trap user-mode RDTSC
 * ("Patching RDTSC"). What is said of 0F A2 below holds for their bytes too.
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

/* What a site is: the instruction the file has there. The values are a dump's too
 * (dump/patchrec.h): never renumber. */
enum patch_kind { PATCH_CPUID = 0, PATCH_RDTSC = 1, PATCH_RDTSCP = 2, PATCH_NKINDS = 3 };
#define PATCH_KIND_BIT(k) (1u << (k))
#define PATCH_KINDS_TSC (PATCH_KIND_BIT(PATCH_RDTSC) | PATCH_KIND_BIT(PATCH_RDTSCP))
#define PATCH_KINDS_ALL (PATCH_KIND_BIT(PATCH_CPUID) | PATCH_KINDS_TSC)

/* The instruction's length (2, or 3 for rdtscp) and bytes of kind k (0 for another k). */
unsigned patch_kind_len(unsigned k);
const uint8_t *patch_kind_bytes(unsigned k);

/* What decides a scan's result besides the file's bytes: this scanner's logic version
 * and capstone's (major, minor). */
uint32_t cpuidscan_engine(void);

struct cpuidscan {
    uint64_t *sites;    /* file offsets of the instructions found (ascending per section) */
    uint8_t *kind;      /* kind[i]: site i's enum patch_kind */
    size_t n, cap;
    unsigned unsure;    /* byte patterns in swept code not known to be an instruction start */
    unsigned unsure_kind[PATCH_NKINDS]; /* the same per kind (they sum to unsure) */
    uint64_t *unsure_at;     /* where each of them is (file offsets), nu of them */
    uint8_t *unsure_at_kind; /* and its kind */
    size_t nu, ucap;
};

/* The cpuid instructions of file data[0..size) whose two bytes lie in the file range
 * [off, off + len) (a mapping's extent). Appends to r (zero it first; free with
 * cpuidscan_free). Returns 0, or -1 when out of memory or capstone is unusable. */
int cpuidscan_file(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                   struct cpuidscan *r);
/* The same for the instructions of the kinds in mask kinds (PATCH_KIND_BIT of each): a
 * site's every byte lies in [off, off + len). cpuidscan_file is kinds = CPUID alone. */
int cpuidscan_file_kinds(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                         unsigned kinds, struct cpuidscan *r);
/* The part of a scan of the whole file (off 0, len its size) that a scan of [off, off +
 * len) would give: the same sites and unsure patterns, in the same order. Appends to r.
 * 0, or -1 when out of memory. (A scan's result depends on the range only through this
 * filter, so a whole-file scan can be cached and served for every mapping of the file:
 * linux/scancache.h.) */
int cpuidscan_select(const struct cpuidscan *whole, uint64_t off, uint64_t len,
                     struct cpuidscan *r);
/* Appends a site, or an unsure pattern (counted in unsure and unsure_kind too), of kind
 * k at file offset at (the cache's parser rebuilds a scan with them). 0, or -1 when out
 * of memory or k is no kind. */
int cpuidscan_add_site(struct cpuidscan *r, uint64_t at, unsigned k);
int cpuidscan_add_unsure(struct cpuidscan *r, uint64_t at, unsigned k);
void cpuidscan_free(struct cpuidscan *r);

#endif
