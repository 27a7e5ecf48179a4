/* Writes small, valid seed inputs for the fuzz harnesses (a 3-thread .jinxdump with a
 * FILES record, a 3-page core with code, a stack and frame-pointer frames, and the same
 * core with a dynamic program's link map in its data page). Run once by
 * `make fuzz-seeds`; the output is committed under tests/fuzz/corpus/. */
#include "dump/corefile.h"
#include "dump/dumpfile.h"
#include "dump/cpuidrec.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint8_t mem[3 * 4096]; /* 0x400000: code page, 0x401000: data, 0x402000: stack */

static bool rd(void *ctx, uint64_t va, void *dst, size_t len)
{
    (void)ctx;
    if (va < 0x400000 || va + len > 0x400000 + sizeof mem)
        return false;
    memcpy(dst, mem + (va - 0x400000), len);
    return true;
}

static void put64(uint64_t va, uint64_t v)
{
    memcpy(mem + (va - 0x400000), &v, 8);
}

/* The data page as ld.so leaves it (fuzz_corefile takes the second segment for
 * PT_DYNAMIC): DT_DEBUG -> r_debug -> link_map: the program (""), then "/lib" at a bias
 * and "/lib" again, unaligned. */
static int write_libs_core(const char *dir, struct core_desc *cd)
{
    put64(0x401000, 21 /* DT_DEBUG */);
    put64(0x401008, 0x401100);
    put64(0x401100, 1);
    put64(0x401108, 0x401200);
    const uint64_t lm[3][4] = {{0, 0x401300, 0, 0x401240},
                               {0x7f0000000000, 0x401310, 0, 0x401280},
                               {0x7f0000000010, 0x401310, 0, 0}};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++)
            put64(0x401200 + 0x40 * (uint64_t)i + 8 * (uint64_t)k, lm[i][k]);
    memcpy(mem + 0x1310, "/lib", 5);
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/seed-libs.core", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    uint8_t sha[SHA256_LEN];
    uint64_t size;
    if (fd < 0 || core_write(fd, cd, sha, &size, err, sizeof err) < 0) {
        fprintf(stderr, "mkseeds: %s\n", fd < 0 ? path : err);
        return 1;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mkseeds DUMPFILE_DIR COREFILE_DIR\n");
        return 2;
    }
    /* Code: push rbp; mov rbp,rsp; call +0; mov [rax],1; ret ... */
    static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0x00, 0x00, 0x00, 0x00,
                                   0xc7, 0x00, 0x01, 0x00, 0x00, 0x00, 0xc3};
    for (size_t i = 0; i < 4096; i += sizeof code)
        memcpy(mem + i, code, sizeof code);
    uint64_t *stack = (uint64_t *)(mem + 0x2000);
    for (int i = 0; i < 512; i += 2) {
        stack[i] = 0x402000 + 8 * (uint64_t)(i + 2); /* saved rbp: the next frame */
        stack[i + 1] = 0x400009;                   /* return address after the call */
    }
    struct core_thread th[3];
    memset(th, 0, sizeof th);
    static uint8_t fp[DUMP_FPREGS_LEN];
    for (int t = 0; t < 3; t++) {
        th[t].tid = (uint32_t)t + 1;
        th[t].regs[DR_RIP] = 0x400009;
        th[t].regs[DR_RSP] = 0x402000 + 64 * (uint64_t)t;
        th[t].regs[DR_RBP] = 0x402000 + 64 * (uint64_t)t;
        th[t].fpregs = t ? fp : NULL;
    }
    th[0].cursig = 11;
    struct core_seg segs[3] = {{0x400000, 0x1000, CORE_PF_R | CORE_PF_X},
                               {0x401000, 0x1000, CORE_PF_R | CORE_PF_W},
                               {0x402000, 0x1000, CORE_PF_R | CORE_PF_W}};
    uint64_t auxv[4] = {9, 0x400000, 0, 0};
    struct core_desc cd = {.threads = th, .nthreads = 3, .segs = segs, .nsegs = 3, .auxv = auxv,
                           .nauxv = 4, .fname = "seed", .psargs = "seed arg", .pid = 1,
                           .signo = 11, .si_code = 1, .read = rd};
    char path[4096];
    snprintf(path, sizeof path, "%s/seed.core", argv[2]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    uint8_t sha[SHA256_LEN];
    uint64_t size;
    char err[256];
    if (fd < 0 || core_write(fd, &cd, sha, &size, err, sizeof err) < 0) {
        fprintf(stderr, "mkseeds: %s\n", fd < 0 ? path : err);
        return 1;
    }
    close(fd);

    struct dumpfile d;
    memset(&d, 0, sizeof d);
    d.outcome = (struct dump_outcome){.kind = DOUT_SIGNAL, .signal = 11, .vector = 14,
                                      .exit_status = 139, .thread = 1, .rip = 0x400009};
    snprintf(d.outcome.detail, sizeof d.outcome.detail, "#PF page fault");
    snprintf(d.image.path, sizeof d.image.path, "/nonexistent/seed");
    d.has_run = true;
    snprintf(d.run.cmdline, sizeof d.run.cmdline, "seed arg");
    snprintf(d.run.jinx_version, sizeof d.run.jinx_version, "seed");
    memcpy(d.core.sha256, sha, SHA256_LEN);
    d.core.size = size;
    snprintf(d.core.name, sizeof d.core.name, "seed.core");
    struct dump_thread t[3];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 3; i++) {
        t[i].tid = (uint32_t)i + 1;
        t[i].state = i ? DT_BLOCKED : DT_RUNNING;
        t[i].flags = i ? 0 : DT_F_CRASHED;
        t[i].wait_addr = i ? 0x401000 : 0;
        memcpy(t[i].regs, th[i].regs, sizeof t[i].regs);
        t[i].has_fpregs = i != 0;
    }
    d.threads = t;
    d.nthreads = 3;
    static const uint8_t fsha[SHA256_LEN] = {1, 2, 3};
    if (dumpfile_add_file(&d, "/seed/data/input.txt", 18, fsha) < 0 ||
        dumpfile_add_file(&d, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1926232, fsha) < 0 ||
        dumpfile_add_ro_dir(&d, "/seed/data") < 0)
        return 1;
    /* A small CPUID table: leaves 0, 1, 7.0 and 0xD.0 as kvm64 would give them. */
    static const struct kvm_cpuid_entry2 ce[4] = {
        {.function = 0, .eax = 0xD, .ebx = 0x68747541, .ecx = 0x444d4163, .edx = 0x69746e65},
        {.function = 1, .eax = 0xA20F10, .ecx = 0x04002001, .edx = 0x078BFBFD},
        {.function = 7, .flags = 1},
        {.function = 0xD, .flags = 1, .eax = 3, .ebx = 576, .ecx = 576}};
    struct kvm_cpuid2 *cpu = calloc(1, sizeof *cpu + sizeof ce);
    struct dbuf cb = {0};
    if (!cpu)
        return 1;
    cpu->nent = 4;
    memcpy(cpu->entries, ce, sizeof ce);
    if (cpuidrec_encode("kvm64", cpu, &cb) < 0)
        return 1;
    struct dump_record ex[2] = {
        {.type = DREC_SCHEDULE, .data = (uint8_t *)"1 2 1", .len = 5},
        {.type = DREC_CPUID, .data = cb.p, .len = cb.len}};
    d.extra = ex;
    d.nextra = 2;
    struct dbuf b = {0};
    if (dumpfile_encode(&d, &b) < 0)
        return 1;
    snprintf(path, sizeof path, "%s/seed.jinxdump", argv[1]);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b.p, 1, b.len, f) != b.len || fclose(f) != 0) {
        fprintf(stderr, "mkseeds: cannot write %s\n", path);
        return 1;
    }
    dbuf_free(&b);
    return write_libs_core(argv[2], &cd);
}
