/* libFuzzer harness for the CPU model cache file (vmm/kvm/cpucache.c: read from the user's
 * cache directory, so untrusted). Beyond "no crash, no leak": a refused file leaves no
 * names and a terminated reason; an accepted one has at most CPUFEAT_MAX valid names, an
 * absolute library path and a 64-digit key, and writing it back gives a file that parses
 * to the same names (the format round-trips). */
#include "kvm/cpucache.h"
#include "kvm/cpumodel.h"
#include "kvm/libvirtcpu.h"
#include "lib/sha256.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *data, size_t size);

/* The input as it is, and with a right checksum appended: the checksum would otherwise
 * stop nearly every mutation before the fields are parsed. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one((const char *)data, size);
    if (size > CPUCACHE_MAX_BYTES)
        return 0;
    char *t = malloc(size + 72), hex[65];
    uint8_t d[SHA256_LEN];
    memcpy(t, data, size);
    sha256(data, size, d);
    sha256_hex(d, hex);
    memcpy(t + size, "sha256 ", 7);
    memcpy(t + size + 7, hex, 64);
    t[size + 71] = '\n';
    one(t, size + 72);
    free(t);
    return 0;
}

static void one(const char *data, size_t size)
{
    char lib[512], key[65], why[128], **names, **again;
    size_t n, n2;
    if (cpucache_parse(data, size, "kvm64", lib, sizeof lib, key, &names, &n, why,
                       sizeof why) < 0) {
        if (names || n || !memchr(why, 0, sizeof why) || !why[0])
            abort();
        return;
    }
    if (n > CPUFEAT_MAX || lib[0] != '/' || strlen(key) != 64)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!cpumodel_name_ok(names[i]) || strlen(names[i]) >= CPUFEAT_NAME_MAX)
            abort();
    size_t len;
    char *t = cpucache_format("kvm64", key, lib, names, n, &len);
    if (!t || cpucache_parse(t, len, "kvm64", lib, sizeof lib, key, &again, &n2, why,
                             sizeof why) < 0 || n2 != n)
        abort();
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], again[i]))
            abort();
    free(t);
    libvirtcpu_free_names(names, n);
    libvirtcpu_free_names(again, n2);
}
