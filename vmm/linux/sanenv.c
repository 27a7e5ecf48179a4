#include "linux/sanenv.h"
#include "linux/libdeps.h"
#include <stdio.h>
#include <string.h>

static void needed(void *ctx, enum dyn_kind kind, const char *s)
{
    if (kind == DYN_NEEDED && !strncmp(s, "libasan.so", 10))
        *(bool *)ctx = true;
}

bool sanenv_uses_asan(struct elf_image *img)
{
    bool asan = false;
    char err[128];
    if (elf_dynamic_strings(img->data, img->size, needed, &asan, err, sizeof err) < 0)
        asan = false;
    if (!asan)
        asan = elf_lookup(img, "__asan_init") != 0; /* elf_parse loaded the symbols */
    return asan;
}

bool sanenv_asan_options(const char *user_entry, char *out, size_t cap)
{
    const char *val = user_entry ? strchr(user_entry, '=') + 1 : "";
    int n;
    if (strstr(val, "detect_leaks"))
        n = snprintf(out, cap, "ASAN_OPTIONS=%s", val);
    else
        n = snprintf(out, cap, "ASAN_OPTIONS=%s%sdetect_leaks=0", val, *val ? ":" : "");
    return n >= 0 && (size_t)n < cap;
}
