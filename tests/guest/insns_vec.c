/*
 * insns, the vector part (see insns.c for the test as a whole): detect(), which finds
 * the CPU features the families need (AVX2, AVX-512, XSAVE and its variants, CMPXCHG16B),
 * and the vector families: SSE, maskmovdqu, AVX/AVX2, AVX-512 and the fxsave/xsave
 * areas, each on its lane's shared pages.
 */
#include <stdio.h>

#include "insns.h"

struct cpu_features cpu;

/* ---- CPUID / XGETBV ------------------------------------------------------------------- */

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

void detect(void)
{
    uint32_t r[4];
    cpuid(0, 0, r);
    uint32_t max = r[0];
    cpuid(1, 0, r);
    uint32_t ecx1 = r[2];
    cpu.cx16 = (ecx1 >> 13) & 1;
    cpu.osxsave = (ecx1 >> 27) & 1;
    int has_avx = (ecx1 >> 28) & 1;
    uint32_t ebx7 = 0;
    if (max >= 7) {
        cpuid(7, 0, r);
        ebx7 = r[1];
    }
    if (!cpu.osxsave) {
        snprintf(cpu.why_xsave, sizeof cpu.why_xsave, "no OSXSAVE");
        snprintf(cpu.why_avx, sizeof cpu.why_avx, "no OSXSAVE");
        snprintf(cpu.why_avx512, sizeof cpu.why_avx512, "no OSXSAVE");
        return;
    }
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    cpu.xcr0 = (uint64_t)hi << 32 | lo;
    cpuid(0xD, 0, r);
    cpu.xsave_size = r[1];
    cpuid(0xD, 1, r);
    cpu.xsaveopt = r[0] & 1;
    cpu.xsavec = (r[0] >> 1) & 1;
    if (!has_avx)
        snprintf(cpu.why_avx, sizeof cpu.why_avx, "no AVX in CPUID");
    else if ((cpu.xcr0 & 6) != 6)
        snprintf(cpu.why_avx, sizeof cpu.why_avx, "XCR0 %#llx lacks SSE/AVX state", (unsigned long long)cpu.xcr0);
    else if (!((ebx7 >> 5) & 1))
        snprintf(cpu.why_avx, sizeof cpu.why_avx, "no AVX2 in CPUID");
    else
        cpu.avx = cpu.avx2 = 1;
    if (cpu.avx) {
        cpuid(0xD, 2, r);
        cpu.avx_off = r[1];
    }
    if (!cpu.avx)
        snprintf(cpu.why_avx512, sizeof cpu.why_avx512, "no AVX");
    else if (!((ebx7 >> 16) & 1))
        snprintf(cpu.why_avx512, sizeof cpu.why_avx512, "no AVX-512F in CPUID");
    else if ((cpu.xcr0 & 0xE0) != 0xE0)
        snprintf(cpu.why_avx512, sizeof cpu.why_avx512, "XCR0 %#llx lacks AVX-512 state", (unsigned long long)cpu.xcr0);
    else
        cpu.avx512 = 1;
}

/* ---- SSE ---------------------------------------------------------------------------------- */

/* 16 bytes through xmm0: load with `ld` from src, store with `st` to dst; the register is
 * also written to a private buffer. */
#define SSE_COPY(ld, st, src, dst, regout)                                                     \
    __asm__ volatile(ld " (%0), %%xmm0\n\t" st " %%xmm0, (%1)\n\tmovdqu %%xmm0, (%2)"        \
                     : : "r"(src), "r"(dst), "r"(regout) : "xmm0", "memory")

void fam_sse(struct lane *L)
{
    volatile uint8_t *b = L->b;
    uint8_t x[64], y[64], want[64], reg[16], zero[16] = {0};
    /* source and destination offsets from the boundary for the copies below (aligned
     * where the instruction wants 16-byte alignment) */
    static const struct { long src, dst; } cp[] = {
        {-7, -40}, {64, -9}, {-16, 32}, {-13, 100}, {0, -48}, {-5, -32}, {-11, -300}, {16, -16},
    };
    for (size_t i = 0; i < sizeof cp / sizeof cp[0]; i++) {
        fill_private(L, x, 16);
        put(b + cp[i].src, x, 16);
        put_byte(b + cp[i].dst - 1, 0xEE, 18);
        want[0] = want[17] = 0xEE;
        memcpy(want + 1, x, 16);
        volatile uint8_t *s = b + cp[i].src, *d = b + cp[i].dst;
        switch (i) {
        case 0: case 1: SSE_COPY("movups", "movups", s, d, reg); break;
        case 2: SSE_COPY("movaps", "movaps", s, d, reg); break;
        case 3: SSE_COPY("movdqu", "movdqu", s, d, reg); break;
        case 4: SSE_COPY("movdqa", "movdqa", s, d, reg); break;
        case 5: SSE_COPY("movdqu", "movntdq", s, d, reg); break;
        case 6: SSE_COPY("lddqu", "movdqu", s, d, reg); break;
        default: SSE_COPY("movdqa", "movntdq", s, d, reg); break;
        }
        __asm__ volatile("sfence" ::: "memory");
        EXPECT_MEM(F_SSE, reg, x, 16);
        EXPECT_BYTES(F_SSE, d - 1, want, 18);
    }
    /* movq: load (F3 0F 7E) zero-extends, store (66 0F D6) writes 8 bytes; movd 4. */
    fill_private(L, x, 16);
    put(b - 4, x, 8);
    put_byte(b - 21, 0xEE, 10);
    __asm__ volatile("pcmpeqb %%xmm0, %%xmm0\n\tmovq (%0), %%xmm0\n\tmovq %%xmm0, (%1)\n\tmovdqu %%xmm0, (%2)"
                     : : "r"(b - 4), "r"(b - 20), "r"(reg) : "xmm0", "memory");
    EXPECT_MEM(F_SSE, reg, x, 8);
    EXPECT_MEM(F_SSE, reg + 8, zero, 8);
    want[0] = want[9] = 0xEE;
    memcpy(want + 1, x, 8);
    EXPECT_BYTES(F_SSE, b - 21, want, 10);
    put_byte(b - 3, 0xEE, 6);
    put(b + 200, x, 4);
    __asm__ volatile("pcmpeqb %%xmm1, %%xmm1\n\tmovd (%0), %%xmm1\n\tmovd %%xmm1, (%1)\n\tmovdqu %%xmm1, (%2)"
                     : : "r"(b + 200), "r"(b - 2), "r"(reg) : "xmm1", "memory");
    EXPECT_MEM(F_SSE, reg, x, 4);
    EXPECT_MEM(F_SSE, reg + 4, zero, 12);
    want[0] = want[5] = 0xEE;
    memcpy(want + 1, x, 4);
    EXPECT_BYTES(F_SSE, b - 3, want, 6);
    /* movhps/movlps: 8-byte halves */
    fill_private(L, x, 16);
    put(b - 6, x, 16);
    __asm__ volatile("pxor %%xmm2, %%xmm2\n\tmovlps (%0), %%xmm2\n\tmovhps 8(%0), %%xmm2\n\tmovdqu %%xmm2, (%1)\n\t"
                     "movhps %%xmm2, 40(%0)\n\tmovlps %%xmm2, 32(%0)"
                     : : "r"(b - 6), "r"(reg) : "xmm2", "memory");
    EXPECT_MEM(F_SSE, reg, x, 16);
    EXPECT_BYTES(F_SSE, b + 26, x, 16);
    /* arithmetic with a 16-byte-aligned memory operand: paddd, addps, pxor, pshufd */
    uint32_t ia[4], ib[4], isum[4];
    float fa[4], fb[4], fsum[4];
    for (int i = 0; i < 4; i++) {
        ia[i] = (uint32_t)rnd(L);
        ib[i] = (uint32_t)rnd(L);
        isum[i] = ia[i] + ib[i];
        fa[i] = (float)(int32_t)(rnd(L) % 100000) * 0.5f;
        fb[i] = (float)(int32_t)(rnd(L) % 100000) * 0.25f;
        fsum[i] = fa[i] + fb[i];
    }
    memcpy(x, ia, 16);
    memcpy(y, ib, 16);
    put(b - 16, y, 16); /* the memory operand, lower page */
    __asm__ volatile("movdqu (%0), %%xmm3\n\tpaddd (%1), %%xmm3\n\tmovdqu %%xmm3, (%2)"
                     : : "r"(x), "r"(b - 16), "r"(reg) : "xmm3", "memory");
    EXPECT_MEM(F_SSE, reg, isum, 16);
    memcpy(x, fa, 16);
    memcpy(y, fb, 16);
    put(b, y, 16); /* upper page */
    __asm__ volatile("movups (%0), %%xmm4\n\taddps (%1), %%xmm4\n\tmovups %%xmm4, (%2)"
                     : : "r"(x), "r"(b), "r"(reg) : "xmm4", "memory");
    EXPECT_MEM(F_SSE, reg, fsum, 16);
    fill_private(L, x, 16);
    fill_private(L, y, 16);
    put(b + 48, y, 16);
    __asm__ volatile("movdqu (%0), %%xmm5\n\tpxor (%1), %%xmm5\n\tmovdqu %%xmm5, (%2)"
                     : : "r"(x), "r"(b + 48), "r"(reg) : "xmm5", "memory");
    for (int i = 0; i < 16; i++)
        want[i] = x[i] ^ y[i];
    EXPECT_MEM(F_SSE, reg, want, 16);
    __asm__ volatile("pshufd $0x1b, (%0), %%xmm6\n\tmovdqu %%xmm6, (%1)" : : "r"(b + 48), "r"(reg) : "xmm6", "memory");
    for (int i = 0; i < 4; i++)
        memcpy(want + 4 * i, y + 4 * (3 - i), 4);
    EXPECT_MEM(F_SSE, reg, want, 16);
    /* scalar: movss/movsd loads and stores, straddling */
    double d = (double)(int32_t)rnd(L) * 0.125, dout;
    memcpy(x, &d, 8);
    put(b - 5, x, 8);
    __asm__ volatile("movsd (%1), %%xmm7\n\tmovsd %%xmm7, 8(%1)\n\taddsd (%1), %%xmm7\n\tmovsd %%xmm7, %0"
                     : "=m"(dout) : "r"(b - 5) : "xmm7", "memory");
    EXPECT_BYTES(F_SSE, b + 3, x, 8);
    EXPECT(F_SSE, dout == d + d, 1);
}

/* ---- maskmovdqu ------------------------------------------------------------------------ */

void fam_maskmov(struct lane *L)
{
    volatile uint8_t *b = L->b;
    static const long offs[] = {-7, 40, -64};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        uint8_t src[16], mask[16], old[18], want[18];
        fill_private(L, src, 16);
        fill_private(L, mask, 16);
        fill_private(L, old, 18);
        volatile uint8_t *d = b + offs[k];
        put(d - 1, old, 18);
        memcpy(want, old, 18);
        for (int i = 0; i < 16; i++)
            if (mask[i] & 0x80)
                want[1 + i] = src[i];
        uintptr_t di = (uintptr_t)d;
        __asm__ volatile("movdqu (%1), %%xmm0\n\tmovdqu (%2), %%xmm1\n\tmaskmovdqu %%xmm1, %%xmm0\n\tsfence"
                         : "+D"(di) : "r"(src), "r"(mask) : "xmm0", "xmm1", "memory");
        EXPECT_BYTES(F_MASKMOV, d - 1, want, 18);
    }
}

/* ---- AVX / AVX2 ------------------------------------------------------------------------ */

__attribute__((target("avx2"))) void fam_avx(struct lane *L)
{
    volatile uint8_t *b = L->b;
    uint8_t x[32], y[32], want[40], reg[32];
    /* vmovdqu ymm: a straddling load stored in the upper page, then that copy loaded and
     * stored straddling the boundary */
    fill_private(L, x, 32);
    put(b - 13, x, 32);
    put_byte(b + 99, 0xEE, 34);
    __asm__ volatile("vmovdqu (%0), %%ymm0\n\tvmovdqu %%ymm0, (%1)\n\tvmovdqu %%ymm0, (%2)\n\tvzeroupper"
                     : : "r"(b - 13), "r"(b + 100), "r"(reg) : "xmm0", "memory");
    EXPECT_MEM(F_AVX, reg, x, 32);
    want[0] = want[33] = 0xEE;
    memcpy(want + 1, x, 32);
    EXPECT_BYTES(F_AVX, b + 99, want, 34);
    put_byte(b - 20, 0xEE, 34);
    __asm__ volatile("vmovdqu (%0), %%ymm0\n\tvmovdqu %%ymm0, (%1)\n\tvzeroupper"
                     : : "r"(b + 100), "r"(b - 19) : "xmm0", "memory");
    EXPECT_BYTES(F_AVX, b - 20, want, 34);
    /* vpbroadcastd from a dword that straddles */
    fill_private(L, x, 4);
    put(b - 2, x, 4);
    __asm__ volatile("vpbroadcastd (%0), %%ymm1\n\tvmovdqu %%ymm1, (%1)\n\tvzeroupper"
                     : : "r"(b - 2), "r"(reg) : "xmm1", "memory");
    for (int i = 0; i < 8; i++)
        memcpy(want + 4 * i, x, 4);
    EXPECT_MEM(F_AVX, reg, want, 32);
    /* vpaddd with an unaligned memory operand */
    uint32_t ia[8], ib[8], isum[8];
    for (int i = 0; i < 8; i++) {
        ia[i] = (uint32_t)rnd(L);
        ib[i] = (uint32_t)rnd(L);
        isum[i] = ia[i] + ib[i];
    }
    memcpy(y, ib, 32);
    put(b - 21, y, 32);
    __asm__ volatile("vmovdqu (%0), %%ymm2\n\tvpaddd (%1), %%ymm2, %%ymm3\n\tvmovdqu %%ymm3, (%2)\n\tvzeroupper"
                     : : "r"(ia), "r"(b - 21), "r"(reg) : "xmm2", "xmm3", "memory");
    EXPECT_MEM(F_AVX, reg, isum, 32);
    /* vpgatherdd: eight dwords from both pages, one of them straddling */
    static const int32_t idx[8] = {0, 15, 16, 3, 40, -200, 9, 22};
    volatile uint8_t *base = b - 66; /* idx 16 -> b-2: straddles */
    uint8_t area[256];
    fill_private(L, area, sizeof area);
    put(base - 800, area, 160);       /* covers idx -200 (base-800) */
    put(base, area + 96, 160);        /* covers idx 0..39 and 40 (base+160) */
    put(base + 160, area + 16, 4);
    uint32_t gw[8];
    for (int i = 0; i < 8; i++)
        gw[i] = (uint32_t)load_le(base + 4 * idx[i], 4);
    __asm__ volatile("vmovdqu (%1), %%ymm1\n\tvpcmpeqd %%ymm2, %%ymm2, %%ymm2\n\tvpxor %%ymm0, %%ymm0, %%ymm0\n\t"
                     "vpgatherdd %%ymm2, (%0,%%ymm1,4), %%ymm0\n\tvmovdqu %%ymm0, (%2)\n\tvzeroupper"
                     : : "r"(base), "r"(idx), "r"(reg) : "xmm0", "xmm1", "xmm2", "memory");
    EXPECT_MEM(F_AVX, reg, gw, 32);
    /* vmaskmovps store: odd elements only, across the boundary */
    uint32_t msk[8];
    uint8_t old[34];
    for (int i = 0; i < 8; i++)
        msk[i] = (i & 1) ? 0x80000000u : 0;
    fill_private(L, x, 32);
    fill_private(L, old, 34);
    put(b - 17, old, 34);
    memcpy(want, old, 34);
    for (int i = 0; i < 8; i++)
        if (i & 1)
            memcpy(want + 1 + 4 * i, x + 4 * i, 4);
    __asm__ volatile("vmovdqu (%0), %%ymm0\n\tvmovdqu (%1), %%ymm1\n\tvmaskmovps %%ymm0, %%ymm1, (%2)\n\tvzeroupper"
                     : : "r"(x), "r"(msk), "r"(b - 16) : "xmm0", "xmm1", "memory");
    EXPECT_BYTES(F_AVX, b - 17, want, 34);
}

/* ---- AVX-512 ---------------------------------------------------------------------------- */

__attribute__((target("avx512f"))) void fam_avx512(struct lane *L)
{
    volatile uint8_t *b = L->b;
    uint8_t x[64], want[66], old[66], reg[64];
    /* vmovdqu64 zmm: a straddling load and a straddling store */
    fill_private(L, x, 64);
    put(b - 29, x, 64);
    put_byte(b + 199, 0xEE, 66);
    __asm__ volatile("vmovdqu64 (%0), %%zmm0\n\tvmovdqu64 %%zmm0, (%1)\n\tvmovdqu64 %%zmm0, (%2)\n\tvzeroupper"
                     : : "r"(b - 29), "r"(b + 200), "r"(reg) : "xmm0", "memory");
    EXPECT_MEM(F_AVX512, reg, x, 64);
    want[0] = want[65] = 0xEE;
    memcpy(want + 1, x, 64);
    EXPECT_BYTES(F_AVX512, b + 199, want, 66);
    put_byte(b - 38, 0xEE, 66);
    __asm__ volatile("vmovdqu64 (%0), %%zmm0\n\tvmovdqu64 %%zmm0, (%1)\n\tvzeroupper"
                     : : "r"(b + 200), "r"(b - 37) : "xmm0", "memory");
    EXPECT_BYTES(F_AVX512, b - 38, want, 66);
    /* masked store (vmovdqu32 {k1}) and zero-masked load across the boundary */
    uint16_t k = (uint16_t)rnd(L);
    fill_private(L, x, 64);
    fill_private(L, old, 66);
    put(b - 41, old, 66);
    memcpy(want, old, 66);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            memcpy(want + 1 + 4 * i, x + 4 * i, 4);
    __asm__ volatile("kmovw %k2, %%k1\n\tvmovdqu64 (%0), %%zmm1\n\tvmovdqu32 %%zmm1, (%1)%{%%k1%}\n\tvzeroupper"
                     : : "r"(x), "r"(b - 40), "r"((uint32_t)k) : "xmm1", "k1", "memory");
    EXPECT_BYTES(F_AVX512, b - 41, want, 66);
    __asm__ volatile("kmovw %k2, %%k2\n\tvmovdqu32 (%0), %%zmm2%{%%k2%}%{z%}\n\tvmovdqu64 %%zmm2, (%1)\n\tvzeroupper"
                     : : "r"(b - 40), "r"(reg), "r"((uint32_t)k) : "xmm2", "k2", "memory");
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            memcpy(want + 4 * i, x + 4 * i, 4);
        else
            memset(want + 4 * i, 0, 4);
    EXPECT_MEM(F_AVX512, reg, want, 64);
    /* vpbroadcastq from memory and vpaddd with an embedded broadcast {1to16} */
    uint64_t q = rnd(L);
    store_le(b - 4, q, 8);
    uint32_t ia[16], sum[16], d32 = (uint32_t)q;
    for (int i = 0; i < 16; i++) {
        ia[i] = (uint32_t)rnd(L);
        sum[i] = ia[i] + d32;
    }
    __asm__ volatile("vpbroadcastq (%0), %%zmm3\n\tvmovdqu64 %%zmm3, (%1)\n\tvzeroupper"
                     : : "r"(b - 4), "r"(reg) : "xmm3", "memory");
    for (int i = 0; i < 8; i++)
        memcpy(want + 8 * i, &q, 8);
    EXPECT_MEM(F_AVX512, reg, want, 64);
    __asm__ volatile("vmovdqu64 (%0), %%zmm4\n\tvpaddd (%1)%{1to16%}, %%zmm4, %%zmm5\n\tvmovdqu64 %%zmm5, (%2)\n\tvzeroupper"
                     : : "r"(ia), "r"(b - 4), "r"(reg) : "xmm4", "xmm5", "memory");
    EXPECT_MEM(F_AVX512, reg, sum, 64);
}

/* ---- fxsave / fxrstor, xsave / xrstor ---------------------------------------------------- */

#define LOAD_XMM(p)                                                                                \
    "movdqu 0(" p "), %%xmm0\n\tmovdqu 16(" p "), %%xmm1\n\tmovdqu 32(" p "), %%xmm2\n\t"           \
    "movdqu 48(" p "), %%xmm3\n\tmovdqu 64(" p "), %%xmm4\n\tmovdqu 80(" p "), %%xmm5\n\t"          \
    "movdqu 96(" p "), %%xmm6\n\tmovdqu 112(" p "), %%xmm7\n\tmovdqu 128(" p "), %%xmm8\n\t"        \
    "movdqu 144(" p "), %%xmm9\n\tmovdqu 160(" p "), %%xmm10\n\tmovdqu 176(" p "), %%xmm11\n\t"     \
    "movdqu 192(" p "), %%xmm12\n\tmovdqu 208(" p "), %%xmm13\n\tmovdqu 224(" p "), %%xmm14\n\t"    \
    "movdqu 240(" p "), %%xmm15\n\t"
#define STORE_XMM(p)                                                                               \
    "movdqu %%xmm0, 0(" p ")\n\tmovdqu %%xmm1, 16(" p ")\n\tmovdqu %%xmm2, 32(" p ")\n\t"           \
    "movdqu %%xmm3, 48(" p ")\n\tmovdqu %%xmm4, 64(" p ")\n\tmovdqu %%xmm5, 80(" p ")\n\t"          \
    "movdqu %%xmm6, 96(" p ")\n\tmovdqu %%xmm7, 112(" p ")\n\tmovdqu %%xmm8, 128(" p ")\n\t"        \
    "movdqu %%xmm9, 144(" p ")\n\tmovdqu %%xmm10, 160(" p ")\n\tmovdqu %%xmm11, 176(" p ")\n\t"     \
    "movdqu %%xmm12, 192(" p ")\n\tmovdqu %%xmm13, 208(" p ")\n\tmovdqu %%xmm14, 224(" p ")\n\t"    \
    "movdqu %%xmm15, 240(" p ")\n\t"
#define XMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
                     "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

void fam_fxsave(struct lane *L)
{
    volatile uint8_t *area = L->b - 256; /* 512 bytes, 16-byte aligned, straddling */
    uint8_t pat[256], pat2[256], out[256];
    uint32_t mxcsr;
    fill_private(L, pat, sizeof pat);
    fill_private(L, pat2, sizeof pat2);
    __asm__ volatile(LOAD_XMM("%0") "fxsave64 (%1)\n\tstmxcsr (%2)"
                     : : "r"(pat), "r"(area), "r"(&mxcsr) : XMM_CLOBBERS, "memory");
    EXPECT_BYTES(F_FXSAVE, area + 160, pat, 256);
    EXPECT(F_FXSAVE, load_le(area + 24, 4), mxcsr);
    put(area + 160, pat2, 256);
    __asm__ volatile("fxrstor64 (%1)\n\t" STORE_XMM("%0")
                     : : "r"(out), "r"(area) : XMM_CLOBBERS, "memory");
    EXPECT_MEM(F_FXSAVE, out, pat2, 256);
}

#define LOAD_YMM(p)                                                                                \
    "vmovdqu 0(" p "), %%ymm0\n\tvmovdqu 32(" p "), %%ymm1\n\tvmovdqu 64(" p "), %%ymm2\n\t"        \
    "vmovdqu 96(" p "), %%ymm3\n\tvmovdqu 128(" p "), %%ymm4\n\tvmovdqu 160(" p "), %%ymm5\n\t"     \
    "vmovdqu 192(" p "), %%ymm6\n\tvmovdqu 224(" p "), %%ymm7\n\tvmovdqu 256(" p "), %%ymm8\n\t"    \
    "vmovdqu 288(" p "), %%ymm9\n\tvmovdqu 320(" p "), %%ymm10\n\tvmovdqu 352(" p "), %%ymm11\n\t"  \
    "vmovdqu 384(" p "), %%ymm12\n\tvmovdqu 416(" p "), %%ymm13\n\tvmovdqu 448(" p "), %%ymm14\n\t" \
    "vmovdqu 480(" p "), %%ymm15\n\t"
#define STORE_YMM(p)                                                                               \
    "vmovdqu %%ymm0, 0(" p ")\n\tvmovdqu %%ymm1, 32(" p ")\n\tvmovdqu %%ymm2, 64(" p ")\n\t"        \
    "vmovdqu %%ymm3, 96(" p ")\n\tvmovdqu %%ymm4, 128(" p ")\n\tvmovdqu %%ymm5, 160(" p ")\n\t"     \
    "vmovdqu %%ymm6, 192(" p ")\n\tvmovdqu %%ymm7, 224(" p ")\n\tvmovdqu %%ymm8, 256(" p ")\n\t"    \
    "vmovdqu %%ymm9, 288(" p ")\n\tvmovdqu %%ymm10, 320(" p ")\n\tvmovdqu %%ymm11, 352(" p ")\n\t"  \
    "vmovdqu %%ymm12, 384(" p ")\n\tvmovdqu %%ymm13, 416(" p ")\n\tvmovdqu %%ymm14, 448(" p ")\n\t" \
    "vmovdqu %%ymm15, 480(" p ")\n\t"

/* Registers loaded from `regs` (xmm: 16 x 16 bytes; ymm: 16 x 32 bytes) and saved to
 * the area by xsave (kind 0), xsaveopt (1) or xsavec (2), in one asm statement: the
 * compiler may use the registers between statements. */
static void xsave_sse(int kind, const uint8_t *regs, volatile uint8_t *area, uint32_t lo, uint32_t hi)
{
    if (kind == 0)
        __asm__ volatile(LOAD_XMM("%0") "xsave64 (%1)" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
    else if (kind == 1)
        __asm__ volatile(LOAD_XMM("%0") "xsaveopt64 (%1)" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
    else
        __asm__ volatile(LOAD_XMM("%0") "xsavec64 (%1)" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
}

__attribute__((target("avx"))) static void xsave_avx(int kind, const uint8_t *regs, volatile uint8_t *area, uint32_t lo, uint32_t hi)
{
    if (kind == 0)
        __asm__ volatile(LOAD_YMM("%0") "xsave64 (%1)\n\tvzeroupper" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
    else if (kind == 1)
        __asm__ volatile(LOAD_YMM("%0") "xsaveopt64 (%1)\n\tvzeroupper" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
    else
        __asm__ volatile(LOAD_YMM("%0") "xsavec64 (%1)\n\tvzeroupper" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
}

static void xrstor_sse(uint8_t *regs, volatile uint8_t *area, uint32_t lo, uint32_t hi)
{
    __asm__ volatile("xrstor64 (%1)\n\t" STORE_XMM("%0") : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
}

__attribute__((target("avx"))) static void xrstor_avx(uint8_t *regs, volatile uint8_t *area, uint32_t lo, uint32_t hi)
{
    __asm__ volatile("xrstor64 (%1)\n\t" STORE_YMM("%0") "vzeroupper" : : "r"(regs), "r"(area), "a"(lo), "d"(hi) : XMM_CLOBBERS, "memory");
}

void fam_xsave(struct lane *L)
{
    /* 64-byte aligned; with RFBM = x87|SSE(|AVX) the instructions touch bytes 0..575 (and
     * the AVX state at 576..831): the XMM slots (160..415) straddle the boundary, the
     * header and the AVX state are on the upper page. */
    volatile uint8_t *area = L->b - 256;
    uint8_t lo[256], hi[256], lo2[256], hi2[256], regs[512], out[512], olo[256], ohi[256];
    uint32_t mask = cpu.avx ? 0x7 : 0x3;
    for (int kind = 0; kind < 3; kind++) { /* xsave, xsaveopt, xsavec */
        if ((kind == 1 && !cpu.xsaveopt) || (kind == 2 && !cpu.xsavec))
            continue;
        fill_private(L, lo, 256);
        fill_private(L, hi, 256);
        fill_private(L, lo2, 256);
        fill_private(L, hi2, 256);
        put_byte(area + 512, 0, 64); /* the header: xrstor wants its reserved bytes zero */
        if (cpu.avx) {
            for (int i = 0; i < 16; i++) {
                memcpy(regs + 32 * i, lo + 16 * i, 16);
                memcpy(regs + 32 * i + 16, hi + 16 * i, 16);
            }
            xsave_avx(kind, regs, area, mask, 0);
        } else {
            xsave_sse(kind, lo, area, mask, 0);
        }
        uint64_t bv = load_le(area + 512, 8);
        EXPECT(F_XSAVE, bv & 2, 2);
        EXPECT_BYTES(F_XSAVE, area + 160, lo, 256);
        uint32_t avx_off = kind == 2 ? 576 : cpu.avx_off; /* compacted: AVX comes first */
        if (cpu.avx) {
            EXPECT(F_XSAVE, bv & 4, 4);
            EXPECT_BYTES(F_XSAVE, area + avx_off, hi, 256);
        }
        if (kind == 2)
            EXPECT(F_XSAVE, load_le(area + 520, 8), (1ULL << 63) | mask);
        /* new values in memory; xrstor loads them */
        put(area + 160, lo2, 256);
        if (cpu.avx) {
            put(area + avx_off, hi2, 256);
            xrstor_avx(out, area, mask, 0);
            for (int i = 0; i < 16; i++) {
                memcpy(olo + 16 * i, out + 32 * i, 16);
                memcpy(ohi + 16 * i, out + 32 * i + 16, 16);
            }
            EXPECT_MEM(F_XSAVE, olo, lo2, 256);
            EXPECT_MEM(F_XSAVE, ohi, hi2, 256);
        } else {
            xrstor_sse(out, area, mask, 0);
            EXPECT_MEM(F_XSAVE, out, lo2, 256);
        }
    }
}
