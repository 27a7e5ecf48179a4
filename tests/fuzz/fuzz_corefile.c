/* libFuzzer harness for the core file reader (vmm/dump/corefile.c) and what `jinxctl inspect`
 * does with a parsed core: reads of guest memory, frame-pointer backtraces over it,
 * capstone decoding at each thread's RIP, and the shared-library walk (linux/libsyms.h:
 * DT_DEBUG, r_debug, link_map, names) from a PT_DYNAMIC at the second segment's start
 * (the first's when there is one: seed-libs.core has a link map there).
 * Any input: no crash, leak or bad access. */
#include "linux/backtrace.h"
#include "linux/libsyms.h"
#include <limits.h>
#include "dump/corefile.h"
#include "kvm/decode.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool rd(void *ctx, uint64_t va, void *dst, size_t len)
{
    return core_read(ctx, va, dst, len);
}

static bool text(void *ctx, uint64_t va)
{
    const struct corefile *c = ctx;
    for (size_t i = 0; i < c->nloads; i++)
        if ((c->loads[i].flags & CORE_PF_X) && va - c->loads[i].vaddr < c->loads[i].memsz)
            return true;
    return false;
}

/* Every name "/lib" stands for one real ELF file (this harness), so that the lookups run
 * over a parsed library at whatever bias the input gives it. */
static bool resolve(void *ctx, const char *path, char *out)
{
    (void)ctx;
    return !strcmp(path, "/lib") && realpath("/proc/self/exe", out);
}

static void walk_libs(const struct corefile *c)
{
    static struct libsyms *cache; /* kept across inputs: the file is parsed once */
    if (!cache)
        cache = libsyms_new();
    struct libsyms_mem m = {.read = rd, .resolve = resolve, .ctx = (void *)c,
                            .dynamic = c->loads[c->nloads > 1].vaddr};
    struct libmap map;
    libsyms_map(cache, &m, &map);
    char buf[256];
    for (size_t i = 0; i < c->nthreads && i < 8; i++)
        libmap_format(&map, c->threads[i].regs[DR_RIP], i > 0, buf, sizeof buf);
    for (size_t i = 0; i < map.n; i++)
        libmap_format(&map, map.e[i].bias + 0x1000, true, buf, sizeof buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct corefile c;
    char err[512];
    if (core_parse(data, size, &c, err, sizeof err) < 0)
        return 0;
    struct bt_mem m = {.read = rd, .is_text = text, .ctx = &c};
    for (size_t i = 0; i < c.nthreads && i < 8; i++) {
        const uint64_t *R = c.threads[i].regs;
        uint64_t bt[32];
        bt_walk(&m, R[DR_RIP], R[DR_RSP], R[DR_RBP], bt, 32);
        uint8_t code[15];
        struct insn_info ii;
        if (core_read(&c, R[DR_RIP], code, sizeof code))
            decode_insn(code, sizeof code, R[DR_RIP], &ii);
    }
    for (size_t i = 0; i < c.nloads && i < 16; i++) {
        uint8_t buf[256];
        core_read(&c, c.loads[i].vaddr + c.loads[i].memsz - 100, buf, sizeof buf);
        core_read(&c, c.loads[i].vaddr, buf, sizeof buf);
    }
    if (c.nloads)
        walk_libs(&c);
    core_free(&c);
    return 0;
}
