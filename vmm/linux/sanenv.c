#include "linux/sanenv.h"
#include "linux/libdeps.h"
#include <stdio.h>
#include <string.h>

struct needs {
    const char *prefix;
    bool found;
};

static void needed(void *ctx, enum dyn_kind kind, const char *s)
{
    struct needs *n = ctx;
    if (kind == DYN_NEEDED && !strncmp(s, n->prefix, strlen(n->prefix)))
        n->found = true;
}

static bool needs_lib(struct elf_image *img, const char *prefix)
{
    struct needs n = {prefix, false};
    char err[128];
    if (elf_dynamic_strings(img->data, img->size, needed, &n, err, sizeof err) < 0)
        return false;
    return n.found;
}

bool sanenv_uses_asan(struct elf_image *img)
{
    /* elf_parse loaded the symbols */
    return needs_lib(img, "libasan.so") || elf_lookup(img, "__asan_init") != 0;
}

bool sanenv_uses_lsan(struct elf_image *img)
{
    return needs_lib(img, "liblsan.so") ||
           (elf_lookup(img, "__lsan_init") != 0 && elf_lookup(img, "__asan_init") == 0);
}

bool sanenv_uses_sanitizer(struct elf_image *img)
{
    static const char *const libs[] = {"libasan.so", "libubsan.so", "libtsan.so",
                                       "liblsan.so", "libmsan.so", "libhwasan.so"};
    static const char *const syms[] = {"__asan_init", "__tsan_init", "__msan_init",
                                       "__lsan_init", "__hwasan_init",
                                       "__ubsan_handle_add_overflow",
                                       "__ubsan_handle_add_overflow_abort"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (needs_lib(img, libs[i]))
            return true;
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (elf_lookup(img, syms[i]) != 0)
            return true;
    return false;
}

const char *sanenv_leak_var(struct elf_image *img)
{
    if (sanenv_uses_asan(img))
        return "ASAN_OPTIONS";
    if (sanenv_uses_lsan(img))
        return "LSAN_OPTIONS";
    return NULL;
}

bool sanenv_leak_options(const char *var, const char *user_entry, char *out, size_t cap)
{
    const char *eq = user_entry ? strchr(user_entry, '=') : NULL;
    const char *val = eq ? eq + 1 : "";
    int n;
    if (strstr(val, "detect_leaks"))
        n = snprintf(out, cap, "%s=%s", var, val);
    else
        n = snprintf(out, cap, "%s=%s%sdetect_leaks=0", var, val, *val ? ":" : "");
    return n >= 0 && (size_t)n < cap;
}

bool sanenv_asan_options(const char *user_entry, char *out, size_t cap)
{
    return sanenv_leak_options("ASAN_OPTIONS", user_entry, out, cap);
}
