/* libFuzzer harness for the CPUID/RDTSC site finder (vmm/linux/cpuidscan.c): any bytes as
 * an ELF file, scanned whole and over a range taken from the input, for CPUID alone and
 * for every kind. Every site reported must lie whole in the range and hold its kind's
 * bytes (0F A2, 0F 31, 0F 01 F9) of a kind asked for; a violation aborts. */
#include "linux/cpuidscan.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_kinds(const uint8_t *data, size_t size, uint64_t off, uint64_t len,
                        unsigned kinds)
{
    struct cpuidscan r = {0};
    if (cpuidscan_file_kinds(data, size, off, len, kinds, &r) < 0)
        abort(); /* only out of memory or a broken capstone may fail */
    for (size_t i = 0; i < r.n; i++) {
        uint64_t s = r.sites[i];
        unsigned k = r.kind[i], l = patch_kind_len(k);
        if (!(kinds & PATCH_KIND_BIT(k)) || !l || s < off || s + l > off + len ||
            s + l > size || memcmp(data + s, patch_kind_bytes(k), l))
            abort();
    }
    cpuidscan_free(&r);
}

static void check(const uint8_t *data, size_t size, uint64_t off, uint64_t len)
{
    check_kinds(data, size, off, len, PATCH_KIND_BIT(PATCH_CPUID));
    check_kinds(data, size, off, len, PATCH_KINDS_ALL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check(data, size, 0, size);
    if (size >= 8) { /* a mapping's range from the last bytes */
        uint32_t a, b;
        memcpy(&a, data + size - 8, 4);
        memcpy(&b, data + size - 4, 4);
        check(data, size, a % (size + 1), b % (size + 1));
    }
    return 0;
}
