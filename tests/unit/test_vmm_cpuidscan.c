/* Finding CPUID instructions in ELF code (linux/cpuidscan.h) on crafted files: real
 * sites are found at their offsets; 0F A2 inside another instruction, in an interval the
 * sweep cannot decode, in a non-executable section or outside the asked range is not;
 * broken headers give nothing. The same for rdtsc (0F 31) and rdtscp (0F 01 F9), each
 * reported with its kind and only when asked for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <elf.h>

#include "linux/cpuidscan.h"

#define TEXT_OFF 0x100
#define TEXT_ADDR 0x401000
#define DATA_OFF 0x200
#define SYM_OFF 0x280
#define SH_OFF 0x400
#define FILE_SIZE (SH_OFF + 4 * sizeof(Elf64_Shdr))

/* .text: four functions. */
static const uint8_t text[] = {
    /* A @0: mov eax,1; cpuid; mov eax,0x00a20f00 (0F A2 in an immediate); ret */
    0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0xa2, 0xb8, 0x00, 0x0f, 0xa2, 0x00, 0xc3,
    /* B @13: 06 (invalid in 64-bit mode) then 0F A2: data, not code */
    0x06, 0x0f, 0xa2, 0xc3,
    /* C @17: cpuid; ret */
    0x0f, 0xa2, 0xc3,
    /* D @20: mov eax,0x44332211; cpuid; ret; with a (bogus) symbol at D+2 */
    0xb8, 0x11, 0x22, 0x33, 0x44, 0x0f, 0xa2, 0xc3,
};
static const uint64_t funcs[] = {0, 13, 17, 20, 22};

/* .text of the TSC file: five functions. */
static const uint8_t tsc_text[] = {
    /* E @0: rdtsc; rdtscp; ret */
    0x0f, 0x31, 0x0f, 0x01, 0xf9, 0xc3,
    /* F @6: mov eax,0x00310f00; mov eax,0xf9010f00 (both in immediates); ret */
    0xb8, 0x00, 0x0f, 0x31, 0x00, 0xb8, 0x00, 0x0f, 0x01, 0xf9, 0xc3,
    /* G @17: swapgs (0F 01 F8: not F9); 66-prefixed rdtsc (not the two bytes alone);
     * rdtscp; ret */
    0x0f, 0x01, 0xf8, 0x66, 0x0f, 0x31, 0x0f, 0x01, 0xf9, 0xc3,
    /* H @27: 06 (invalid) then 0F 31: data, not code */
    0x06, 0x0f, 0x31, 0xc3,
    /* I @31: cpuid; ret */
    0x0f, 0xa2, 0xc3,
};
static const uint64_t tsc_funcs[] = {0, 6, 17, 27, 31};

static size_t build_text(uint8_t *f, const uint8_t *t, size_t tl, const uint64_t *fn,
                         size_t nfn);

static size_t build(uint8_t *f)
{
    return build_text(f, text, sizeof text, funcs, sizeof funcs / sizeof funcs[0]);
}

static size_t build_text(uint8_t *f, const uint8_t *t, size_t tl, const uint64_t *fn,
                         size_t nfn)
{
    memset(f, 0, FILE_SIZE);
    Elf64_Ehdr eh = {.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                     .e_shoff = SH_OFF, .e_ehsize = sizeof eh,
                     .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 4};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    memcpy(f, &eh, sizeof eh);
    memcpy(f + TEXT_OFF, t, tl);
    f[DATA_OFF] = 0x0f; /* .data holds 0F A2 too: never code */
    f[DATA_OFF + 1] = 0xa2;
    for (size_t i = 0; i < nfn; i++) {
        Elf64_Sym s = {.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
                       .st_value = TEXT_ADDR + fn[i]};
        memcpy(f + SYM_OFF + (i + 1) * sizeof s, &s, sizeof s);
    }
    Elf64_Shdr sh[4] = {
        {0},
        {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_ADDR,
         .sh_offset = TEXT_OFF, .sh_size = tl},
        {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_WRITE, .sh_addr = 0x402000,
         .sh_offset = DATA_OFF, .sh_size = 16},
        {.sh_type = SHT_SYMTAB, .sh_offset = SYM_OFF, .sh_entsize = sizeof(Elf64_Sym),
         .sh_size = (1 + nfn) * sizeof(Elf64_Sym)},
    };
    memcpy(f + SH_OFF, sh, sizeof sh);
    return FILE_SIZE;
}

static void test_sites(void **state)
{
    (void)state;
    uint8_t f[FILE_SIZE];
    size_t n = build(f);
    struct cpuidscan r = {0};
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    /* A's and C's; not A's immediate, not B (undecodable: unsure), not D (its bogus
     * anchor at D+2 puts the sweep out of step: conservative), not .data. */
    assert_int_equal(r.n, 2);
    assert_int_equal(r.sites[0], TEXT_OFF + 5);
    assert_int_equal(r.sites[1], TEXT_OFF + 17);
    assert_int_equal(r.unsure, 1);
    cpuidscan_free(&r);
}

static void test_tsc_sites(void **state)
{
    (void)state;
    uint8_t f[FILE_SIZE];
    size_t n = build_text(f, tsc_text, sizeof tsc_text, tsc_funcs,
                          sizeof tsc_funcs / sizeof tsc_funcs[0]);
    struct cpuidscan r = {0};
    /* Every kind: E's two, G's rdtscp, I's cpuid; not F's immediates, not G's swapgs or
     * prefixed rdtsc, not H (undecodable: unsure). */
    assert_int_equal(cpuidscan_file_kinds(f, n, 0, n, PATCH_KINDS_ALL, &r), 0);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.unsure_kind[PATCH_RDTSC], 1);
    assert_int_equal(r.unsure_kind[PATCH_CPUID], 0);
    const uint64_t want[] = {0, 2, 23, 31};
    const uint8_t kinds[] = {PATCH_RDTSC, PATCH_RDTSCP, PATCH_RDTSCP, PATCH_CPUID};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(r.sites[i], TEXT_OFF + want[i]);
        assert_int_equal(r.kind[i], kinds[i]);
    }
    assert_int_equal(r.unsure, 1);
    cpuidscan_free(&r);
    /* rdtsc and rdtscp only: no cpuid. */
    assert_int_equal(cpuidscan_file_kinds(f, n, 0, n, PATCH_KINDS_TSC, &r), 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.sites[2], TEXT_OFF + 23);
    assert_int_equal(r.unsure, 1);
    cpuidscan_free(&r);
    /* CPUID only (cpuidscan_file): the rdtsc bytes are neither sites nor unsure. */
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sites[0], TEXT_OFF + 31);
    assert_int_equal(r.kind[0], PATCH_CPUID);
    assert_int_equal(r.unsure, 0);
    cpuidscan_free(&r);
    /* A range ending inside E's rdtscp (its third byte left out): only the rdtsc. */
    assert_int_equal(cpuidscan_file_kinds(f, n, TEXT_OFF, 4, PATCH_KINDS_TSC, &r), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.kind[0], PATCH_RDTSC);
    cpuidscan_free(&r);
    /* The kinds' lengths and bytes, as the loader rewrites them. */
    assert_int_equal(patch_kind_len(PATCH_CPUID), 2);
    assert_int_equal(patch_kind_len(PATCH_RDTSC), 2);
    assert_int_equal(patch_kind_len(PATCH_RDTSCP), 3);
    assert_int_equal(patch_kind_len(PATCH_NKINDS), 0);
    assert_null(patch_kind_bytes(7));
    assert_memory_equal(patch_kind_bytes(PATCH_RDTSCP), "\x0f\x01\xf9", 3);
}

static void test_range(void **state)
{
    (void)state;
    uint8_t f[FILE_SIZE];
    size_t n = build(f);
    struct cpuidscan r = {0};
    /* A mapping of the file from offset TEXT_OFF + 10, 10 bytes: only C's site. */
    assert_int_equal(cpuidscan_file(f, n, TEXT_OFF + 10, 10, &r), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.sites[0], TEXT_OFF + 17);
    cpuidscan_free(&r);
    /* A site cut by the range's end is not reported. */
    assert_int_equal(cpuidscan_file(f, n, TEXT_OFF, 6, &r), 0);
    assert_int_equal(r.n, 0);
    cpuidscan_free(&r);
}

static void test_without_symbols(void **state)
{
    (void)state;
    uint8_t f[FILE_SIZE];
    size_t n = build(f);
    Elf64_Shdr sh;
    memcpy(&sh, f + SH_OFF + 3 * sizeof sh, sizeof sh);
    sh.sh_type = SHT_NULL; /* stripped: the section start is the only anchor */
    memcpy(f + SH_OFF + 3 * sizeof sh, &sh, sizeof sh);
    struct cpuidscan r = {0};
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    /* B's invalid byte spoils the whole section: nothing is trusted, its 5 pairs unsure. */
    assert_int_equal(r.n, 0);
    assert_int_equal(r.unsure, 5);
    cpuidscan_free(&r);
}

static void test_broken_files(void **state)
{
    (void)state;
    uint8_t f[FILE_SIZE];
    size_t n = build(f);
    struct cpuidscan r = {0};
    assert_int_equal(cpuidscan_file(f, 40, 0, 40, &r), 0); /* truncated header */
    assert_int_equal(cpuidscan_file(f, SH_OFF + 8, 0, n, &r), 0); /* section table cut */
    Elf64_Ehdr eh;
    memcpy(&eh, f, sizeof eh);
    eh.e_shoff = ~0ULL - 8; /* overflowing offset */
    memcpy(f, &eh, sizeof eh);
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    n = build(f);
    Elf64_Shdr sh;
    memcpy(&sh, f + SH_OFF + sizeof sh, sizeof sh);
    sh.sh_size = ~0ULL; /* .text past the file's end */
    memcpy(f + SH_OFF + sizeof sh, &sh, sizeof sh);
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    n = build(f);
    memcpy(&sh, f + SH_OFF + 3 * sizeof sh, sizeof sh);
    sh.sh_size = 1ULL << 40; /* symbol table past the end: no anchors, no crash */
    memcpy(f + SH_OFF + 3 * sizeof sh, &sh, sizeof sh);
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    assert_int_equal(r.n, 0);
    f[EI_CLASS] = ELFCLASS32;
    assert_int_equal(cpuidscan_file(f, n, 0, n, &r), 0);
    assert_int_equal(r.n, 0);
    cpuidscan_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sites),
        cmocka_unit_test(test_tsc_sites),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_without_symbols),
        cmocka_unit_test(test_broken_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
