/* libFuzzer harness for the dynamic-section parser (vmm/linux/libdeps.c):
 * elf_dynamic_strings() on any bytes. Every string it reports must be a NUL-terminated
 * string inside the input (ASan sees a read outside it), of a known kind; a refusal must
 * come with a message. A violation aborts. */
#include "linux/libdeps.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct span {
    const uint8_t *lo, *hi;
    unsigned count;
};

static void cb(void *ctx, enum dyn_kind kind, const char *s)
{
    struct span *sp = ctx;
    if (kind != DYN_NEEDED && kind != DYN_RPATH && kind != DYN_RUNPATH)
        abort();
    const uint8_t *p = (const uint8_t *)s;
    if (p < sp->lo || p >= sp->hi || !memchr(p, 0, (size_t)(sp->hi - p)))
        abort();
    sp->count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy: the parser must not depend on bytes past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct span sp = {copy, copy + size, 0};
    char err[256] = "";
    int r = elf_dynamic_strings(copy, size, cb, &sp, err, sizeof err);
    if (r != 0 && (r != -1 || !err[0]))
        abort();
    free(copy);
    return 0;
}
