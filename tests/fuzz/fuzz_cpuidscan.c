/* libFuzzer harness for the CPUID site finder (vmm/linux/cpuidscan.c): any bytes as an
 * ELF file, scanned whole and over a range taken from the input. Every site reported
 * must lie in the range and hold the bytes 0F A2, ascending within the file's sections;
 * a violation aborts. */
#include "linux/cpuidscan.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, uint64_t off, uint64_t len)
{
    struct cpuidscan r = {0};
    if (cpuidscan_file(data, size, off, len, &r) < 0)
        abort(); /* only out of memory or a broken capstone may fail */
    for (size_t i = 0; i < r.n; i++) {
        uint64_t s = r.sites[i];
        if (s < off || s + 2 > off + len || s + 2 > size || data[s] != 0x0F ||
            data[s + 1] != 0xA2)
            abort();
    }
    cpuidscan_free(&r);
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
