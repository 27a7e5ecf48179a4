/* Finding CPUID instructions in ELF code (linux/cpuidscan.h) on crafted files: real
 * sites are found at their offsets; 0F A2 inside another instruction, in an interval the
 * sweep cannot decode, in a non-executable section or outside the asked range is not;
 * broken headers give nothing. */
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

static size_t build(uint8_t *f)
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
    memcpy(f + TEXT_OFF, text, sizeof text);
    f[DATA_OFF] = 0x0f; /* .data holds 0F A2 too: never code */
    f[DATA_OFF + 1] = 0xa2;
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
        Elf64_Sym s = {.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = 1,
                       .st_value = TEXT_ADDR + funcs[i]};
        memcpy(f + SYM_OFF + (i + 1) * sizeof s, &s, sizeof s);
    }
    Elf64_Shdr sh[4] = {
        {0},
        {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = TEXT_ADDR,
         .sh_offset = TEXT_OFF, .sh_size = sizeof text},
        {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_WRITE, .sh_addr = 0x402000,
         .sh_offset = DATA_OFF, .sh_size = 16},
        {.sh_type = SHT_SYMTAB, .sh_offset = SYM_OFF, .sh_entsize = sizeof(Elf64_Sym),
         .sh_size = (1 + sizeof funcs / sizeof funcs[0]) * sizeof(Elf64_Sym)},
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
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_without_symbols),
        cmocka_unit_test(test_broken_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
