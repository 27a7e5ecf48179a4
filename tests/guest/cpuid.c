/* Prints what CPUID and XGETBV show the program: RDRAND/RDSEED (jinx hides them where
 * the host lets it), then the feature registers a CPU model governs, so that a test can
 * compare them with the CPUID table jinx recorded (`cpuid abort`: the run then leaves a
 * dump holding that table) or with what the host itself shows (run natively).
 * `cpuid smc` rewrites its own code: where jinx patched a cpuid into ud2 (docs/cpu-models.md)
 * it finds the ud2 in leaf1_ecx's bytes, writes the cpuid back and calls it again: the
 * program then gets what it wrote (the native CPUID), never a VMM error.
 * `cpuid mapexec` maps its own file read-only, then makes it executable with mprotect and
 * calls leaf1_ecx's copy there: jinx patches file mappings as they become executable. */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <elf.h>
#include <fcntl.h>

__attribute__((noinline)) static unsigned leaf1_ecx(void)
{
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    return c & ~(1u << 27);
}

static int smc(void)
{
    unsigned char *f = (unsigned char *)(uintptr_t)leaf1_ecx;
    uintptr_t page = (uintptr_t)f & ~(uintptr_t)4095;
    if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        puts("smc: mprotect failed");
        return 1;
    }
    unsigned before = leaf1_ecx();
    int patched = 0;
    for (int i = 0; i + 1 < 32; i++)
        if (f[i] == 0x0F && (f[i + 1] == 0x0B || f[i + 1] == 0xA2)) {
            patched = f[i + 1] == 0x0B;
            f[i + 1] = 0xA2; /* the program's own choice: a real cpuid */
            break;
        }
    __builtin___clear_cache((char *)f, (char *)f + 32);
    printf("smc patched=%d before=%08x after=%08x\n", patched, before, leaf1_ecx());
    return 0;
}

/* The first cpuid (0F A2) or patched one (0F 0B) in the 32 bytes at p: 'c', 'u' or 0. */
static char first_cpuid(const unsigned char *p)
{
    for (int i = 0; i + 1 < 32; i++)
        if (p[i] == 0x0F && (p[i + 1] == 0xA2 || p[i + 1] == 0x0B))
            return p[i + 1] == 0xA2 ? 'c' : 'u';
    return 0;
}

static int mapexec(void)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        puts("mapexec: cannot open /proc/self/exe");
        return 1;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        puts("mapexec: mmap failed");
        return 1;
    }
    const Elf64_Ehdr *eh = (const void *)m;
    uintptr_t fn = (uintptr_t)leaf1_ecx;
    long fo = -1;
    for (int i = 0; i < eh->e_phnum; i++) {
        const Elf64_Phdr *ph = (const void *)(m + eh->e_phoff + (size_t)i * eh->e_phentsize);
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && fn >= ph->p_vaddr &&
            fn < ph->p_vaddr + ph->p_filesz)
            fo = (long)(fn - ph->p_vaddr + ph->p_offset);
    }
    if (fo < 0) {
        puts("mapexec: leaf1_ecx not in an executable segment");
        return 1;
    }
    char before = first_cpuid(m + fo);
    if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0) {
        puts("mapexec: mprotect failed");
        return 1;
    }
    char after = first_cpuid(m + fo);
    unsigned (*copy)(void) = (unsigned (*)(void))(uintptr_t)(m + fo);
    printf("mapexec before=%c after=%c ecx=%08x\n", before, after, copy());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "mapexec"))
        return mapexec();
    if (argc > 1 && !strcmp(argv[1], "smc"))
        return smc();
    unsigned a, b, c, d, max;
    __cpuid(0, max, b, c, d);
    __cpuid(1, a, b, c, d);
    int rdrand = (c >> 30) & 1;
    /* OSXSAVE (bit 27) mirrors CR4 and the APIC id (leaf 1 EBX) the CPU: not features. */
    unsigned l1c = c & ~(1u << 27), l1d = d;
    unsigned l7b = 0, l7c = 0, l7d = 0, ldx = 0;
    if (max >= 7)
        __cpuid_count(7, 0, a, l7b, l7c, l7d);
    if (max >= 0xD)
        __cpuid_count(0xD, 0, ldx, b, c, d);
    unsigned e1c = 0, e1d = 0, emax;
    __cpuid(0x80000000, emax, b, c, d);
    if (emax >= 0x80000001)
        __cpuid(0x80000001, a, b, e1c, e1d);
    printf("rdrand=%d rdseed=%d\n", rdrand, (l7b >> 18) & 1);
    printf("leaf1 ecx=%08x edx=%08x\n", l1c, l1d);
    printf("leaf7 ebx=%08x ecx=%08x edx=%08x\n", l7b, l7c, l7d);
    printf("leafd eax=%08x\n", ldx);
    printf("ext1 ecx=%08x edx=%08x\n", e1c, e1d);
    unsigned lo = 0, hi = 0;
    if ((l1c >> 26) & 1 || ldx)
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    printf("xcr0=%x\n", lo);
    fflush(stdout);
    if (argc > 1 && !strcmp(argv[1], "abort"))
        abort();
    return 0;
}
