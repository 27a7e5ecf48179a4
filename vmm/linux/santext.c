/* Sanitizer runtime code inside the program, by its symbols (santext.h). */
#include "linux/santext.h"
#include <stdlib.h>
#include <string.h>

bool santext_is_runtime_name(const char *name)
{
    static const char *const parts[] = {"__sanitizer", "__interceptor", "__interception",
                                        "__asan",      "__tsan",        "__msan",
                                        "__lsan",      "__ubsan",       "__hwasan",
                                        "__sancov"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(name, parts[i]))
            return true;
    return !strncmp(name, "Annotate", 8) || !strncmp(name, "WTFAnnotate", 11);
}

static int text_of(const uint64_t (*text)[2], size_t ntext, uint64_t a)
{
    for (size_t i = 0; i < ntext; i++)
        if (a >= text[i][0] && a < text[i][1])
            return (int)i;
    return -1;
}

static int by_size_desc(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    uint64_t sx = x[1] - x[0], sy = y[1] - y[0];
    return sx < sy ? 1 : sx > sy ? -1 : (x[0] > y[0]) - (x[0] < y[0]);
}

static int by_addr(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* One address's verdict: runtime, a hard border (main, _start), and its end. */
struct addr_info {
    bool runtime, hard;
    uint64_t end;
};

static size_t one_addr(const struct elf_symbol *syms, size_t n, size_t i, struct addr_info *ai)
{
    uint64_t a = syms[i].addr;
    *ai = (struct addr_info){.end = a + 1};
    size_t j = i;
    for (; j < n && syms[j].addr == a; j++) {
        const char *nm = syms[j].name;
        if (santext_is_runtime_name(nm))
            ai->runtime = true;
        if (!strcmp(nm, "main") || !strcmp(nm, "_start"))
            ai->hard = true;
        if (a + syms[j].size > ai->end)
            ai->end = a + syms[j].size;
    }
    if (ai->hard)
        ai->runtime = false; /* a program's main is never skipped, whatever its name */
    return j;
}

size_t santext_ranges(const struct elf_symbol *syms, size_t n, const uint64_t (*text)[2],
                      size_t ntext, uint64_t (*out)[2], size_t max)
{
    if (!syms || !n || !max)
        return 0;
    uint64_t(*all)[2] = malloc(n * sizeof *all);
    if (!all)
        return 0;
    size_t k = 0, gap = 0;
    bool open = false;
    int seg = -1;
    uint64_t gap_from = 0;
    for (size_t i = 0; i < n;) {
        struct addr_info ai;
        uint64_t a = syms[i].addr;
        i = one_addr(syms, n, i, &ai);
        int s = text_of(text, ntext, a);
        if (s < 0)
            continue; /* data, or outside the loaded text */
        /* A border, too many other functions, or too long a gap before this runtime
         * function closes the range. */
        if (open && (s != seg || ai.hard || (!ai.runtime && ++gap > SANTEXT_GAP_SYMS) ||
                     (ai.runtime && a > gap_from && a - gap_from > SANTEXT_GAP_BYTES))) {
            open = false;
            k++;
        }
        if (!ai.runtime)
            continue;
        uint64_t end = ai.end < text[s][1] ? ai.end : text[s][1];
        if (!open) {
            all[k][0] = a;
            all[k][1] = end;
            open = true;
            seg = s;
        } else if (end > all[k][1])
            all[k][1] = end;
        gap = 0;
        gap_from = all[k][1];
    }
    if (open)
        k++;
    if (k > max) {
        qsort(all, k, sizeof *all, by_size_desc);
        k = max;
    }
    qsort(all, k, sizeof *all, by_addr);
    memcpy(out, all, k * sizeof *all);
    free(all);
    return k;
}
