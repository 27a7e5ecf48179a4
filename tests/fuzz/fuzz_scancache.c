/* libFuzzer harness for the code-scan cache file (vmm/linux/scancache.c: read from the
 * user's cache directory, so untrusted). The input's first byte says how many of the next
 * bytes are the scanned file's contents; the rest is the cache text, tried as it is and
 * with a right checksum line appended (else nearly every mutation stops there). Beyond
 * "no crash, no leak": a refused text leaves an empty scan and a terminated reason; an
 * accepted one names only instructions of the scanned kinds that really are in the file's
 * bytes, and formatting it back parses to the same scan. */
#include "linux/scancache.h"
#include "lib/sha256.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char KEY[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static void one(const char *text, size_t len, const uint8_t *file, size_t fsize, unsigned kinds)
{
    struct cpuidscan r, again;
    char why[128];
    memset(why, 0x55, sizeof why);
    if (scancache_parse(text, len, KEY, file, fsize, kinds, &r, why, sizeof why) < 0) {
        if (r.n || r.nu || r.unsure || !memchr(why, 0, sizeof why) || !why[0])
            abort();
        return;
    }
    for (size_t i = 0; i < r.n + r.nu; i++) {
        uint64_t at = i < r.n ? r.sites[i] : r.unsure_at[i - r.n];
        unsigned k = i < r.n ? r.kind[i] : r.unsure_at_kind[i - r.n];
        if (k >= PATCH_NKINDS || !(kinds & PATCH_KIND_BIT(k)) || at > fsize ||
            patch_kind_len(k) > fsize - at || memcmp(file + at, patch_kind_bytes(k), patch_kind_len(k)))
            abort();
    }
    size_t l2;
    char *t = scancache_format(KEY, &r, &l2);
    if (!t || scancache_parse(t, l2, KEY, file, fsize, kinds, &again, why, sizeof why) < 0 ||
        again.n != r.n || again.nu != r.nu || again.unsure != r.unsure)
        abort();
    for (size_t i = 0; i < r.n; i++)
        if (again.sites[i] != r.sites[i] || again.kind[i] != r.kind[i])
            abort();
    free(t);
    cpuidscan_free(&again);
    cpuidscan_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t fsize = data[0] < size - 1 ? data[0] : size - 1;
    const uint8_t *file = data + 1;
    const char *text = (const char *)data + 1 + fsize;
    size_t len = size - 1 - fsize;
    unsigned kinds = (data[0] & 1) ? PATCH_KINDS_ALL : PATCH_KINDS_TSC;
    one(text, len, file, fsize, kinds);
    if (len > SCANCACHE_MAX_BYTES)
        return 0;
    char *t = malloc(len + 72), hex[65];
    uint8_t d[SHA256_LEN];
    memcpy(t, text, len);
    sha256(text, len, d);
    sha256_hex(d, hex);
    memcpy(t + len, "sha256 ", 7);
    memcpy(t + len + 7, hex, 64);
    t[len + 71] = '\n';
    one(t, len + 72, file, fsize, kinds);
    free(t);
    return 0;
}
