/* What a dynamically linked glibc program learns about the CPU, three ways: the CPUID
 * and XGETBV instructions themselves (inline asm), gcc's __builtin_cpu_supports (libgcc's
 * own CPUID probe, linked into this program), and glibc's view (<sys/platform/x86.h>:
 * what ld.so found usable and dispatches its string functions on), plus which strlen and
 * memcpy ld.so chose, as offsets in libc (a different variant: a different offset).
 * `cpuid_glibc abort` then aborts, for a dump.
 * tests/integration/cpumodel.sh compares every line with the CPU model's table. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/platform/x86.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(sub));
}

static void where(const char *name)
{
    Dl_info di;
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p && dladdr(p, &di) && di.dli_fbase)
        printf("impl %s=libc+0x%lx\n", name, (unsigned long)((uintptr_t)p - (uintptr_t)di.dli_fbase));
    else
        printf("impl %s=?\n", name);
}

int main(int argc, char **argv)
{
    unsigned r[4], max;
    cpuid(0, 0, r);
    max = r[0];
    cpuid(1, 0, r);
    printf("asm leaf1 ecx=%08x edx=%08x\n", r[2] & ~(1u << 27), r[3]); /* 27: OSXSAVE (CR4) */
    unsigned l7[4] = {0}, ld[4] = {0};
    if (max >= 7)
        cpuid(7, 0, l7);
    if (max >= 0xD)
        cpuid(0xD, 0, ld);
    printf("asm leaf7 ebx=%08x ecx=%08x edx=%08x\n", l7[1], l7[2], l7[3]);
    printf("asm leafd eax=%08x\n", ld[0]);
    printf("asm leafd ebx=%u\n", ld[1]);
    /* The XCR0 the hardware really holds (not the model's on PVM): leaf 0xD's EBX must
     * cover it, or an XSAVE sized from it overflows. */
    unsigned xlo = 0, xhi = 0;
    if (r[2] & (1u << 27))
        __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    printf("xgetbv xcr0=%x%08x\n", xhi, xlo);
    /* __builtin_cpu_supports wants a literal name: one line per feature. */
#define GCC(n) printf("gcc %s=%d\n", n, __builtin_cpu_supports(n) ? 1 : 0)
    GCC("sse3"); GCC("ssse3"); GCC("sse4.1"); GCC("sse4.2"); GCC("popcnt"); GCC("avx");
    GCC("avx2"); GCC("fma"); GCC("bmi2"); GCC("avx512f"); GCC("aes");
#define GLIBC(n, id) printf("glibc %s=%d\n", n, CPU_FEATURE_ACTIVE(id) ? 1 : 0)
    GLIBC("sse3", SSE3); GLIBC("ssse3", SSSE3); GLIBC("sse4.1", SSE4_1);
    GLIBC("sse4.2", SSE4_2); GLIBC("popcnt", POPCNT); GLIBC("avx", AVX); GLIBC("avx2", AVX2);
    GLIBC("fma", FMA); GLIBC("bmi2", BMI2); GLIBC("avx512f", AVX512F); GLIBC("aes", AES);
    where("strlen");
    where("memcpy");
    fflush(stdout);
    if (argc > 1 && !strcmp(argv[1], "abort")) /* a dump: it records the patched sites */
        abort();
    return 0;
}
