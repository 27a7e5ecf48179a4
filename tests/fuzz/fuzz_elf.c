/* libFuzzer harness for the ELF loader's parser (vmm/linux/elfparse.c): elf_parse() on any
 * bytes, then what the VMM and `jinxctl inspect` do with an accepted image: symbol
 * lookups and address formatting. An accepted image must also satisfy what loader.c
 * relies on without re-checking: every segment's file range inside the file, segments
 * sorted and disjoint inside [lo, hi), the entry inside an executable segment, and
 * symbol names terminated inside the file. A violation aborts. */
#include "linux/elfparse.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_image(const struct elf_image *img)
{
    if (img->nseg < 1 || img->nseg > ELF_MAX_SEGMENTS || img->lo > img->hi ||
        img->hi - img->lo > ELF_MAX_SPAN)
        abort();
    int entry_ok = 0;
    for (int i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        if (s->filesz > s->memsz || s->offset > img->size || s->filesz > img->size - s->offset)
            abort();
        if (s->vaddr < img->lo || s->vaddr + s->memsz > img->hi)
            abort();
        if (i + 1 < img->nseg && s->vaddr + s->memsz > img->seg[i + 1].vaddr)
            abort();
        if ((s->prot & PROT_X) && img->entry - s->vaddr < s->memsz)
            entry_ok = 1;
    }
    if (!entry_ok)
        abort();
    const uint8_t *end = img->data + img->size;
    for (size_t i = 0; i < img->nsyms; i++) {
        const char *n = img->syms[i].name;
        if ((const uint8_t *)n < img->data || (const uint8_t *)n >= end ||
            !memchr(n, 0, (size_t)(end - (const uint8_t *)n)))
            abort();
        if (i && img->syms[i - 1].addr > img->syms[i].addr)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* elf_parse takes ownership of a malloc'ed buffer, as elf_open passes it. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    struct elf_image img;
    char err[400];
    if (elf_parse(copy, size, &img, err, sizeof err) < 0) {
        if (!memchr(err, 0, sizeof err) || !err[0])
            abort(); /* a rejection always says why */
        elf_free(&img);
        return 0;
    }
    check_image(&img);
    char buf[128];
    uint64_t probes[] = {0, img.entry, img.lo, img.hi, img.hi - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        elf_format_addr(&img, 0, probes[i], false, buf, sizeof buf);
        elf_format_addr(&img, 0x1000, probes[i], true, buf, sizeof buf);
    }
    for (size_t i = 0; i < img.nsyms && i < 64; i++) {
        uint64_t off;
        const struct elf_symbol *s = elf_symbolize(&img, img.syms[i].addr, &off);
        /* A symbol's own address finds it or a symbol at or below it, unless its end
         * wraps past 2^64 (such a symbol is never found: test_symbolize_edge_cases). */
        bool wraps = img.syms[i].addr + img.syms[i].size < img.syms[i].addr;
        if (s ? off != img.syms[i].addr - s->addr : !wraps)
            abort();
        size_t first = 0; /* elf_lookup answers with the first symbol of that name */
        while (strcmp(img.syms[first].name, img.syms[i].name))
            first++;
        if (elf_lookup(&img, img.syms[i].name) != img.syms[first].addr)
            abort();
        elf_format_addr(&img, 0, img.syms[i].addr + img.syms[i].size, true, buf, sizeof buf);
    }
    elf_free(&img);
    return 0;
}
