/*
 * insns: every family of memory-operand instruction, executed on pages two threads share,
 * with results checked against values computed independently (plain volatile byte
 * loops on private buffers, scalar C arithmetic). Under `jinx-vmm run --serial` every
 * access to a shared page is a cue point, so each instruction here is one that the
 * serialized-execution mechanism must carry out exactly as the CPU would: plain movs of
 * every width, unaligned and page-straddling accesses, string instructions (with and
 * without rep, forwards and backwards) across a page boundary, SSE/AVX/AVX-512 loads,
 * stores, masked stores, gathers and arithmetic with memory operands, locked and
 * implicitly locked read-modify-writes, the stack (push/pop/call/ret/pushf/popf/leave)
 * on a shared page, fxsave/xsave/xrstor areas that straddle a page boundary, and
 * maskmovdqu.
 *
 * The arena is three pages. Thread 1's lane is the 4 KiB around the boundary of pages 0
 * and 1, thread 2's the 4 KiB around the boundary of pages 1 and 2; each iteration both
 * threads also write a cell in every page, so all three pages are shared by both
 * threads, and the threads run at the same time (a barrier makes sure both have touched
 * every page before the first family runs).
 *
 * Output: one line per family, "NAME: ok, N checks" or "NAME: skipped (why)", printed
 * by main after both threads are done: the same text whatever the interleaving, so a
 * free run and a serialized one must print exactly the same. A mismatch prints what
 * differed (family, thread, iteration, source line, values) and aborts.
 *
 * This file holds main, the threads, the checks and the scalar families; insns_vec.c
 * the feature detection and the vector families; insns.h what they share.
 *
 * usage: insns [iterations]   (default 1)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insns.h"

static const char *const fam_name[NFAM] = {
    "mov", "straddle", "alu", "movs", "rep-movs", "rep-stos", "repe-cmps", "repne-scas",
    "sse", "maskmovdqu", "avx", "avx512", "atomic", "stack", "fxsave", "xsave",
};

static unsigned char arena[3 * PAGE] __attribute__((aligned(PAGE)));

static pthread_barrier_t start;
static long iterations;
/* Each thread's check counts, copied out of its lane (on its own stack, so that the
 * bookkeeping does not share a page with the other thread) when it is done. */
static unsigned long results[2][NFAM];

/* ---- checking ------------------------------------------------------------------------ */

static void fail(struct lane *L, int f, const char *file, int line, const char *what, uint64_t got, uint64_t want)
{
    fprintf(stderr, "insns: MISMATCH in %s (thread %d, iteration %ld, %s:%d): %s = %#llx, want %#llx\n",
            fam_name[f], L->id, L->iter, file, line, what, (unsigned long long)got, (unsigned long long)want);
    abort();
}

void expect_eq(struct lane *L, int f, const char *file, int line, const char *what, uint64_t got, uint64_t want)
{
    if (got != want)
        fail(L, f, file, line, what, got, want);
    L->checks[f]++;
}

void expect_bytes(struct lane *L, int f, const char *file, int line, const char *what, volatile const uint8_t *p,
                  const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != want[i]) {
            char buf[160];
            snprintf(buf, sizeof buf, "%s[%zu] (boundary%+ld)", what, i, (long)(p + i - L->b));
            fail(L, f, file, line, buf, p[i], want[i]);
        }
    L->checks[f]++;
}

void expect_mem(struct lane *L, int f, const char *file, int line, const char *what, const void *got,
                const void *want, size_t n)
{
    const uint8_t *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i]) {
            char buf[160];
            snprintf(buf, sizeof buf, "%s byte %zu", what, i);
            fail(L, f, file, line, buf, g[i], w[i]);
        }
    L->checks[f]++;
}

/* ---- mov of every width ----------------------------------------------------------------- */

static void store_w(volatile uint8_t *p, uint64_t v, int w)
{
    switch (w) {
    case 1: __asm__ volatile("movb %b1, (%0)" : : "r"(p), "q"(v) : "memory"); break;
    case 2: __asm__ volatile("movw %w1, (%0)" : : "r"(p), "r"(v) : "memory"); break;
    case 4: __asm__ volatile("movl %k1, (%0)" : : "r"(p), "r"(v) : "memory"); break;
    default: __asm__ volatile("movq %1, (%0)" : : "r"(p), "r"(v) : "memory"); break;
    }
}

/* The plain load (merging into a register of all ones for widths 1 and 2), the
 * zero-extending and the sign-extending load. */
static void load_w(volatile uint8_t *p, int w, uint64_t out[3])
{
    uint64_t a = ~0ULL, z, s;
    switch (w) {
    case 1:
        __asm__ volatile("movb (%1), %b0" : "+q"(a) : "r"(p) : "memory");
        __asm__ volatile("movzbl (%1), %k0" : "=r"(z) : "r"(p) : "memory");
        __asm__ volatile("movsbq (%1), %0" : "=r"(s) : "r"(p) : "memory");
        break;
    case 2:
        __asm__ volatile("movw (%1), %w0" : "+r"(a) : "r"(p) : "memory");
        __asm__ volatile("movzwl (%1), %k0" : "=r"(z) : "r"(p) : "memory");
        __asm__ volatile("movswq (%1), %0" : "=r"(s) : "r"(p) : "memory");
        break;
    case 4:
        __asm__ volatile("movl (%1), %k0" : "=r"(a) : "r"(p) : "memory");
        z = a;
        __asm__ volatile("movslq (%1), %0" : "=r"(s) : "r"(p) : "memory");
        break;
    default:
        __asm__ volatile("movq (%1), %0" : "=r"(a) : "r"(p) : "memory");
        z = s = a;
        break;
    }
    out[0] = a;
    out[1] = z;
    out[2] = s;
}

/* One store and the loads of width w at p, with guard bytes on both sides. */
static void mov_at(struct lane *L, int f, volatile uint8_t *p, int w)
{
    uint64_t v = rnd(L);
    p[-1] = 0xA5;
    p[w] = 0x5A;
    store_w(p, v, w);
    EXPECT(f, load_le(p, w), v & mask_of(w));
    EXPECT(f, p[-1], 0xA5);
    EXPECT(f, p[w], 0x5A);
    uint64_t m = rnd(L);
    store_le(p, m, w);
    uint64_t got[3];
    load_w(p, w, got);
    uint64_t want = m & mask_of(w);
    EXPECT(f, got[0], w >= 4 ? want : (~0ULL & ~mask_of(w)) | want);
    EXPECT(f, got[1], want);
    EXPECT(f, got[2], w == 8 ? want : sext(want, w));
}

static void fam_mov(struct lane *L)
{
    static const long offs[] = {-64, -61, -1023, 8, 101, 1003};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (int w = 1; w <= 8; w *= 2)
            mov_at(L, F_MOV, L->b + offs[i], w);
    /* immediates */
    volatile uint8_t *p = L->b + 40;
    store_le(p, 0x1111111111111111ULL, 8);
    __asm__ volatile("movb $0x5a, (%0)" : : "r"(p) : "memory");
    EXPECT(F_MOV, load_le(p, 8), 0x111111111111115aULL);
    __asm__ volatile("movw $0x1234, 2(%0)" : : "r"(p) : "memory");
    EXPECT(F_MOV, load_le(p, 8), 0x111111111234115aULL);
    __asm__ volatile("movl $0x89abcdef, 4(%0)" : : "r"(p) : "memory");
    EXPECT(F_MOV, load_le(p, 8), 0x89abcdef1234115aULL);
    __asm__ volatile("movq $-2, (%0)" : : "r"(p) : "memory");
    EXPECT(F_MOV, load_le(p, 8), 0xfffffffffffffffeULL);
    /* a register-indirect store with displacement and index */
    uint64_t v = rnd(L);
    __asm__ volatile("movq %2, -24(%0,%1,8)" : : "r"(p), "r"(4L), "r"(v) : "memory");
    EXPECT(F_MOV, load_le(p + 8, 8), v);
}

/* ---- unaligned accesses straddling the two shared pages ------------------------------- */

static void fam_straddle(struct lane *L)
{
    for (int w = 2; w <= 8; w *= 2)
        for (int s = 1; s < w; s++)
            mov_at(L, F_STRADDLE, L->b - s, w);
    /* an unaligned 8-byte store across the boundary, the bytes read back one by one */
    uint8_t want[8];
    uint64_t v = rnd(L);
    for (int i = 0; i < 8; i++)
        want[i] = (uint8_t)(v >> (8 * i));
    volatile uint8_t *p = L->b - 3;
    __asm__ volatile("movq %1, (%0)" : : "r"(p), "r"(v) : "memory");
    EXPECT_BYTES(F_STRADDLE, p, want, 8);
}

/* ---- plain (unlocked) read-modify-write and read-only ALU instructions ---------------- */

static void fam_alu(struct lane *L)
{
    static const long offs[] = {-16, 24, -4 /* straddles */};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        volatile uint8_t *p = L->b + offs[k];
        uint64_t a = rnd(L), r = rnd(L), x;
        uint8_t c;
#define INIT(v) store_le(p, (v), 8)
#define NOW load_le(p, 8)
        INIT(a);
        __asm__ volatile("addq %1, (%0)" : : "r"(p), "r"(r) : "memory", "cc");
        EXPECT(F_ALU, NOW, a + r);
        INIT(a);
        __asm__ volatile("subl $0x12345, (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, (a & ~0xffffffffULL) | (uint32_t)((uint32_t)a - 0x12345));
        INIT(a);
        __asm__ volatile("andw %w1, (%0)" : : "r"(p), "r"(r) : "memory", "cc");
        EXPECT(F_ALU, NOW, a & (r | ~0xffffULL));
        INIT(a);
        __asm__ volatile("orb $0x81, 3(%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, a | 0x81000000ULL);
        INIT(a);
        __asm__ volatile("xorq %1, (%0)" : : "r"(p), "r"(r) : "memory", "cc");
        EXPECT(F_ALU, NOW, a ^ r);
        INIT(a);
        __asm__ volatile("incl (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, (a & ~0xffffffffULL) | (uint32_t)((uint32_t)a + 1));
        INIT(a);
        __asm__ volatile("decq (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, a - 1);
        INIT(a);
        __asm__ volatile("negq (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, -a);
        INIT(a);
        __asm__ volatile("notl (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, a ^ 0xffffffffULL);
        INIT(a);
        __asm__ volatile("shlq $3, (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, a << 3);
        INIT(a);
        __asm__ volatile("sarq $5, (%0)" : : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, NOW, (uint64_t)((int64_t)a >> 5));
        INIT(a);
        __asm__ volatile("stc; adcq %1, (%0)" : : "r"(p), "r"(r) : "memory", "cc");
        EXPECT(F_ALU, NOW, a + r + 1);
        INIT(a);
        __asm__ volatile("movq %1, %%rcx; rolq %%cl, (%0)" : : "r"(p), "r"(r & 63) : "rcx", "memory", "cc");
        EXPECT(F_ALU, NOW, (r & 63) ? (a << (r & 63)) | (a >> (64 - (r & 63))) : a);
        /* reads only */
        INIT(a);
        __asm__ volatile("cmpq %2, (%1); setb %0" : "=q"(c) : "r"(p), "r"(r) : "memory", "cc");
        EXPECT(F_ALU, c, a < r);
        __asm__ volatile("testl $0x80000000, (%1); setnz %0" : "=q"(c) : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, c, (a >> 31) & 1);
        __asm__ volatile("imulq (%1), %0" : "=r"(x) : "r"(p), "0"(r) : "memory", "cc");
        EXPECT(F_ALU, x, a * r);
        x = r;
        __asm__ volatile("addq (%1), %0" : "+r"(x) : "r"(p) : "memory", "cc");
        EXPECT(F_ALU, x, a + r);
        EXPECT(F_ALU, NOW, a);
#undef INIT
#undef NOW
    }
}

/* ---- string instructions without rep ------------------------------------------------- */

static void fam_movs(struct lane *L)
{
    volatile uint8_t *b = L->b;
    uint8_t src[8];
    fill_private(L, src, sizeof src);
    /* movsb from the last byte of the lower page to the first of the upper one */
    put(b - 1, src, 1);
    b[0] = 0;
    uintptr_t si = (uintptr_t)(b - 1), di = (uintptr_t)b;
    __asm__ volatile("cld; movsb" : "+S"(si), "+D"(di) : : "memory");
    EXPECT(F_MOVS, b[0], src[0]);
    EXPECT(F_MOVS, si, (uintptr_t)b);
    EXPECT(F_MOVS, di, (uintptr_t)(b + 1));
    /* movsq: source straddling, destination straddling (another split) */
    put(b - 3, src, 8);
    put_byte(b - 300, 0, 8);
    si = (uintptr_t)(b - 3);
    di = (uintptr_t)(b - 300);
    __asm__ volatile("cld; movsq" : "+S"(si), "+D"(di) : : "memory");
    EXPECT_BYTES(F_MOVS, b - 300, src, 8);
    put_byte(b - 6, 0, 8);
    si = (uintptr_t)(b - 300);
    di = (uintptr_t)(b - 6);
    __asm__ volatile("cld; movsq" : "+S"(si), "+D"(di) : : "memory");
    EXPECT_BYTES(F_MOVS, b - 6, src, 8);
    EXPECT(F_MOVS, di, (uintptr_t)(b + 2));
    /* movsw, movsl backwards (std) across the boundary */
    put(b, src, 4);
    put_byte(b - 8, 0, 4);
    si = (uintptr_t)(b + 2);
    di = (uintptr_t)(b - 6);
    __asm__ volatile("std; movsw; movsw; cld" : "+S"(si), "+D"(di) : : "memory", "cc");
    EXPECT_BYTES(F_MOVS, b - 8, src, 4);
    EXPECT(F_MOVS, si, (uintptr_t)(b - 2));
    put(b - 2, src, 4);
    si = (uintptr_t)(b - 2);
    di = (uintptr_t)(b + 100);
    __asm__ volatile("std; movsl; cld" : "+S"(si), "+D"(di) : : "memory", "cc");
    EXPECT_BYTES(F_MOVS, b + 100, src, 4);
    EXPECT(F_MOVS, si, (uintptr_t)(b - 6));
    /* lodsq, stosq straddling */
    uint64_t a;
    put(b - 5, src, 8);
    si = (uintptr_t)(b - 5);
    __asm__ volatile("cld; lodsq" : "=a"(a), "+S"(si) : : "memory");
    EXPECT(F_MOVS, a, load_le(src + 0, 8) /* private */);
    EXPECT(F_MOVS, si, (uintptr_t)(b + 3));
    a = rnd(L);
    di = (uintptr_t)(b - 7);
    __asm__ volatile("cld; stosq" : "+D"(di) : "a"(a) : "memory");
    EXPECT(F_MOVS, load_le(b - 7, 8), a);
    /* single cmpsb and scasb */
    uint8_t zf;
    b[-1] = 7;
    b[0] = 7;
    si = (uintptr_t)(b - 1);
    di = (uintptr_t)b;
    __asm__ volatile("cld; cmpsb; sete %0" : "=q"(zf), "+S"(si), "+D"(di) : : "memory", "cc");
    EXPECT(F_MOVS, zf, 1);
    b[0] = 9;
    di = (uintptr_t)b;
    __asm__ volatile("cld; scasb; sete %0" : "=q"(zf), "+D"(di) : "a"(9) : "memory", "cc");
    EXPECT(F_MOVS, zf, 1);
    EXPECT(F_MOVS, di, (uintptr_t)(b + 1));
}

/* ---- rep movs / rep stos ---------------------------------------------------------------- */

#define STR_N 160

static void rep_movs_case(struct lane *L, volatile uint8_t *src, volatile uint8_t *dst, int q, int back)
{
    uint8_t data[STR_N], want[STR_N + 2];
    fill_private(L, data, STR_N);
    put(src, data, STR_N);
    put_byte(dst - 1, 0xEE, STR_N + 2);
    want[0] = 0xEE;
    for (int i = 0; i < STR_N; i++) /* the copy, by hand */
        want[1 + i] = data[i];
    want[STR_N + 1] = 0xEE;
    uintptr_t si, di, cx;
    if (back) {
        si = (uintptr_t)(src + STR_N - 1);
        di = (uintptr_t)(dst + STR_N - 1);
        cx = STR_N;
        __asm__ volatile("std; rep movsb; cld" : "+S"(si), "+D"(di), "+c"(cx) : : "memory", "cc");
        EXPECT(F_REPMOVS, si, (uintptr_t)(src - 1));
        EXPECT(F_REPMOVS, di, (uintptr_t)(dst - 1));
    } else {
        si = (uintptr_t)src;
        di = (uintptr_t)dst;
        cx = q ? STR_N / 8 : STR_N;
        if (q)
            __asm__ volatile("cld; rep movsq" : "+S"(si), "+D"(di), "+c"(cx) : : "memory");
        else
            __asm__ volatile("cld; rep movsb" : "+S"(si), "+D"(di), "+c"(cx) : : "memory");
        EXPECT(F_REPMOVS, si, (uintptr_t)(src + STR_N));
        EXPECT(F_REPMOVS, di, (uintptr_t)(dst + STR_N));
    }
    EXPECT(F_REPMOVS, cx, 0);
    EXPECT_BYTES(F_REPMOVS, dst - 1, want, STR_N + 2);
}

static void fam_rep_movs(struct lane *L)
{
    volatile uint8_t *b = L->b;
    rep_movs_case(L, b - 77, b - 900, 0, 0);       /* source straddles */
    rep_movs_case(L, b + 600, b - 61, 0, 0);       /* destination straddles */
    rep_movs_case(L, b - 43, b + 251, 1, 0);       /* rep movsq, unaligned, source straddles */
    rep_movs_case(L, b - 700, b - 99, 0, 1);       /* backwards (std), destination straddles */
}

static void fam_rep_stos(struct lane *L)
{
    volatile uint8_t *b = L->b;
    uint8_t want[STR_N + 2];
    for (int q = 0; q < 2; q++) {
        volatile uint8_t *dst = b - (q ? 83 : 50);
        uint64_t v = rnd(L);
        put_byte(dst - 1, 0xEE, STR_N + 2);
        want[0] = want[STR_N + 1] = 0xEE;
        for (int i = 0; i < STR_N; i++)
            want[1 + i] = q ? (uint8_t)(v >> (8 * (i % 8))) : (uint8_t)v;
        uintptr_t di = (uintptr_t)dst, cx = q ? STR_N / 8 : STR_N;
        if (q)
            __asm__ volatile("cld; rep stosq" : "+D"(di), "+c"(cx) : "a"(v) : "memory");
        else
            __asm__ volatile("cld; rep stosb" : "+D"(di), "+c"(cx) : "a"(v) : "memory");
        EXPECT(F_REPSTOS, cx, 0);
        EXPECT(F_REPSTOS, di, (uintptr_t)(dst + STR_N));
        EXPECT_BYTES(F_REPSTOS, dst - 1, want, STR_N + 2);
    }
}

/* ---- repe cmps / repne scas -------------------------------------------------------------- */

static void fam_rep_cmps(struct lane *L)
{
    volatile uint8_t *b = L->b;
    static const int diff_at[] = {130, 20, -1 /* equal */};
    for (size_t k = 0; k < sizeof diff_at / sizeof diff_at[0]; k++) {
        uint8_t x[STR_N], y[STR_N];
        fill_private(L, x, STR_N);
        memcpy(y, x, STR_N);
        if (diff_at[k] >= 0)
            y[diff_at[k]] ^= 0x10;
        volatile uint8_t *s = b - 100, *d = b - 1200; /* s straddles */
        if (k == 1) {
            s = b + 700;
            d = b - 33; /* d straddles */
        }
        put(s, x, STR_N);
        put(d, y, STR_N);
        int n = 0; /* the expected count, by hand on the private copies */
        while (n < STR_N && x[n] == y[n])
            n++;
        int stop = n < STR_N ? n + 1 : STR_N;
        uintptr_t si = (uintptr_t)s, di = (uintptr_t)d, cx = STR_N;
        uint8_t zf;
        __asm__ volatile("cld; repe cmpsb; sete %0" : "=q"(zf), "+S"(si), "+D"(di), "+c"(cx) : : "memory", "cc");
        EXPECT(F_REPCMPS, cx, (uintptr_t)(STR_N - stop));
        EXPECT(F_REPCMPS, si, (uintptr_t)(s + stop));
        EXPECT(F_REPCMPS, di, (uintptr_t)(d + stop));
        EXPECT(F_REPCMPS, zf, n == STR_N);
        /* repe cmpsq over the same buffers */
        int nq = 0;
        while (nq < STR_N / 8 && !memcmp(x + 8 * nq, y + 8 * nq, 8))
            nq++;
        int stopq = nq < STR_N / 8 ? nq + 1 : STR_N / 8;
        si = (uintptr_t)s;
        di = (uintptr_t)d;
        cx = STR_N / 8;
        __asm__ volatile("cld; repe cmpsq; sete %0" : "=q"(zf), "+S"(si), "+D"(di), "+c"(cx) : : "memory", "cc");
        EXPECT(F_REPCMPS, cx, (uintptr_t)(STR_N / 8 - stopq));
        EXPECT(F_REPCMPS, si, (uintptr_t)(s + 8 * stopq));
        EXPECT(F_REPCMPS, zf, nq == STR_N / 8);
    }
}

static void fam_rep_scas(struct lane *L)
{
    volatile uint8_t *b = L->b;
    static const int at[] = {117, 9, -1 /* absent */};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        uint8_t x[STR_N];
        fill_private(L, x, STR_N);
        for (int i = 0; i < STR_N; i++)
            if (x[i] == 0xC3)
                x[i] = 0x3C;
        if (at[k] >= 0)
            x[at[k]] = 0xC3;
        volatile uint8_t *s = b - 90;
        put(s, x, STR_N);
        int n = 0;
        while (n < STR_N && x[n] != 0xC3)
            n++;
        int stop = n < STR_N ? n + 1 : STR_N;
        uintptr_t di = (uintptr_t)s, cx = STR_N;
        uint8_t zf;
        __asm__ volatile("cld; repne scasb; sete %0" : "=q"(zf), "+D"(di), "+c"(cx) : "a"(0xC3) : "memory", "cc");
        EXPECT(F_REPSCAS, cx, (uintptr_t)(STR_N - stop));
        EXPECT(F_REPSCAS, di, (uintptr_t)(s + stop));
        EXPECT(F_REPSCAS, zf, n < STR_N);
    }
}

/* ---- locked and implicitly locked read-modify-writes ------------------------------------- */

static void fam_atomic(struct lane *L)
{
    volatile uint8_t *b = L->b;
    volatile uint8_t *p8 = b - 8, *p16 = b + 16, *pq = b + 8;
    uint64_t a = rnd(L), r = rnd(L), x;
    uint8_t c;
    /* cmpxchg8b: success, then failure (edx:eax gets the current value) */
    store_le(p8, a, 8);
    uint32_t lo = (uint32_t)a, hi = (uint32_t)(a >> 32);
    __asm__ volatile("lock cmpxchg8b (%4); sete %0"
                     : "=q"(c), "+a"(lo), "+d"(hi) : "b"((uint32_t)r), "r"(p8), "c"((uint32_t)(r >> 32)) : "memory", "cc");
    EXPECT(F_ATOMIC, c, 1);
    EXPECT(F_ATOMIC, load_le(p8, 8), r);
    lo = (uint32_t)a;
    hi = (uint32_t)(a >> 32);
    __asm__ volatile("lock cmpxchg8b (%4); sete %0"
                     : "=q"(c), "+a"(lo), "+d"(hi) : "b"(0u), "r"(p8), "c"(0u) : "memory", "cc");
    EXPECT(F_ATOMIC, c, 0);
    EXPECT(F_ATOMIC, (uint64_t)hi << 32 | lo, r);
    EXPECT(F_ATOMIC, load_le(p8, 8), r);
    /* cmpxchg16b (16-byte aligned) */
    if (cpu.cx16) {
        uint64_t a2 = rnd(L), r2 = rnd(L), vlo = a, vhi = a2;
        store_le(p16, a, 8);
        store_le(p16 + 8, a2, 8);
        __asm__ volatile("lock cmpxchg16b (%4); sete %0"
                         : "=q"(c), "+a"(vlo), "+d"(vhi) : "b"(r), "r"(p16), "c"(r2) : "memory", "cc");
        EXPECT(F_ATOMIC, c, 1);
        EXPECT(F_ATOMIC, load_le(p16, 8), r);
        EXPECT(F_ATOMIC, load_le(p16 + 8, 8), r2);
        vlo = 1;
        vhi = 2;
        __asm__ volatile("lock cmpxchg16b (%4); sete %0"
                         : "=q"(c), "+a"(vlo), "+d"(vhi) : "b"(0UL), "r"(p16), "c"(0UL) : "memory", "cc");
        EXPECT(F_ATOMIC, c, 0);
        EXPECT(F_ATOMIC, vlo, r);
        EXPECT(F_ATOMIC, vhi, r2);
    }
    /* xadd, xchg (implicitly locked), cmpxchg */
    store_le(pq, a, 8);
    x = r;
    __asm__ volatile("lock xaddq %0, (%1)" : "+r"(x) : "r"(pq) : "memory", "cc");
    EXPECT(F_ATOMIC, x, a);
    EXPECT(F_ATOMIC, load_le(pq, 8), a + r);
    x = 5;
    __asm__ volatile("xaddl %k0, (%1)" : "+r"(x) : "r"(pq) : "memory", "cc");
    EXPECT(F_ATOMIC, x, (uint32_t)(a + r));
    EXPECT(F_ATOMIC, load_le(pq, 4), (uint32_t)(a + r + 5));
    store_le(pq, a, 8);
    x = r;
    __asm__ volatile("xchgq %0, (%1)" : "+r"(x) : "r"(pq) : "memory");
    EXPECT(F_ATOMIC, x, a);
    EXPECT(F_ATOMIC, load_le(pq, 8), r);
    x = 0x77;
    __asm__ volatile("xchgb %b0, 1(%1)" : "+q"(x) : "r"(pq) : "memory");
    EXPECT(F_ATOMIC, x & 0xff, (r >> 8) & 0xff);
    EXPECT(F_ATOMIC, load_le(pq, 8), (r & ~0xff00ULL) | 0x7700);
    store_le(pq, a, 8);
    uint64_t exp = a;
    __asm__ volatile("lock cmpxchgq %3, (%2); sete %0" : "=q"(c), "+a"(exp) : "r"(pq), "r"(r) : "memory", "cc");
    EXPECT(F_ATOMIC, c, 1);
    EXPECT(F_ATOMIC, load_le(pq, 8), r);
    exp = a;
    __asm__ volatile("cmpxchgq %3, (%2); sete %0" : "=q"(c), "+a"(exp) : "r"(pq), "r"(a) : "memory", "cc");
    EXPECT(F_ATOMIC, c, 0);
    EXPECT(F_ATOMIC, exp, r);
    /* lock add/sub/or/and/xor/inc/dec/not/neg */
    store_le(pq, a, 8);
    __asm__ volatile("lock addq %1, (%0)" : : "r"(pq), "r"(r) : "memory", "cc");
    EXPECT(F_ATOMIC, load_le(pq, 8), a + r);
    __asm__ volatile("lock subl $7, (%0)" : : "r"(pq) : "memory", "cc");
    uint64_t v = a + r;
    v = (v & ~0xffffffffULL) | (uint32_t)((uint32_t)v - 7);
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    __asm__ volatile("lock orq %1, (%0)" : : "r"(pq), "r"(r) : "memory", "cc");
    v |= r;
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    __asm__ volatile("lock andq %1, (%0)" : : "r"(pq), "r"(a) : "memory", "cc");
    v &= a;
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    __asm__ volatile("lock xorw %w1, (%0)" : : "r"(pq), "r"(r) : "memory", "cc");
    v ^= r & 0xffff;
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    __asm__ volatile("lock incq (%0); lock incq (%0); lock decb (%0)" : : "r"(pq) : "memory", "cc");
    v = (v + 2) ;
    v = (v & ~0xffULL) | (uint8_t)((uint8_t)v - 1);
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    __asm__ volatile("lock notq (%0); lock negq (%0)" : : "r"(pq) : "memory", "cc");
    v = -(~v);
    EXPECT(F_ATOMIC, load_le(pq, 8), v);
    /* lock bts/btr/btc: immediate and register bit offsets (a register offset past 63
     * addresses the following quadwords) */
    store_le(pq, a, 8);
    store_le(pq + 8, r, 8);
    __asm__ volatile("lock btsq $5, (%1); setc %0" : "=q"(c) : "r"(pq) : "memory", "cc");
    EXPECT(F_ATOMIC, c, (a >> 5) & 1);
    a |= 1ULL << 5;
    EXPECT(F_ATOMIC, load_le(pq, 8), a);
    __asm__ volatile("lock btsq %2, (%1); setc %0" : "=q"(c) : "r"(pq), "r"(70L) : "memory", "cc");
    EXPECT(F_ATOMIC, c, (r >> 6) & 1);
    r |= 1ULL << 6;
    EXPECT(F_ATOMIC, load_le(pq + 8, 8), r);
    __asm__ volatile("lock btrq %2, (%1); setc %0" : "=q"(c) : "r"(pq), "r"(63L) : "memory", "cc");
    EXPECT(F_ATOMIC, c, a >> 63);
    a &= ~(1ULL << 63);
    EXPECT(F_ATOMIC, load_le(pq, 8), a);
    __asm__ volatile("lock btcl $9, (%1); setc %0" : "=q"(c) : "r"(pq) : "memory", "cc");
    EXPECT(F_ATOMIC, c, (a >> 9) & 1);
    a ^= 1ULL << 9;
    EXPECT(F_ATOMIC, load_le(pq, 8), a);
    __asm__ volatile("btq $3, 8(%1); setc %0" : "=q"(c) : "r"(pq) : "memory", "cc");
    EXPECT(F_ATOMIC, c, (r >> 3) & 1);
}

/* ---- the stack on a shared page ------------------------------------------------------------ */

static void fam_stack(struct lane *L)
{
    volatile uint8_t *b = L->b;
    volatile uint8_t *top = b + 64;     /* 16 pushes go down across the boundary */
    volatile uint8_t *msrc = b + 512, *mdst = b - 1024, *mfn = b - 520;
    uint64_t v1 = rnd(L), v2 = rnd(L), v3 = rnd(L);
    store_le(msrc, v3, 8);
    store_le(mdst, 0, 8);
    uint64_t res[10] = {0};
    __asm__ volatile(
        "mov %%rsp, %%r12\n\t"
        "mov %%rbp, %%r13\n\t"
        "mov %[top], %%rsp\n\t"
        /* push register, immediate, memory; pop to memory and registers */
        "push %[v1]\n\t"
        "pushq $0x5a5a5a5a\n\t"
        "pushq (%[msrc])\n\t"
        "popq (%[mdst])\n\t"
        "pop %%rax\n\t"
        "mov %%rax, 0(%[res])\n\t"
        "pop %%rax\n\t"
        "mov %%rax, 8(%[res])\n\t"
        /* call/ret: the return address goes through the shared stack */
        "call 1f\n"
        "2:\n\t"
        "jmp 3f\n"
        "1:\n\t"
        "mov (%%rsp), %%rax\n\t"
        "mov %%rax, 16(%[res])\n\t"
        "ret\n"
        "3:\n\t"
        "lea 2b(%%rip), %%rax\n\t"
        "mov %%rax, 24(%[res])\n\t"
        /* an indirect call through a pointer on a shared page */
        "lea 4f(%%rip), %%rax\n\t"
        "mov %%rax, (%[mfn])\n\t"
        "call *(%[mfn])\n\t"
        "jmp 5f\n"
        "4:\n\t"
        "movq $0x77, 32(%[res])\n\t"
        "ret\n"
        "5:\n\t"
        /* 16 pushes across the boundary, then 16 pops */
        "mov $16, %%ecx\n"
        "6:\n\t"
        "push %%rcx\n\t"
        "dec %%ecx\n\t"
        "jnz 6b\n\t"
        "xor %%edx, %%edx\n\t"
        "mov $16, %%ecx\n"
        "7:\n\t"
        "pop %%rax\n\t"
        "imul %%rcx, %%rax\n\t"
        "add %%rax, %%rdx\n\t"
        "dec %%ecx\n\t"
        "jnz 7b\n\t"
        "mov %%rdx, 40(%[res])\n\t"
        /* pushf with CF set (TF must not show), popf of a value changed in memory */
        "stc\n\t"
        "pushfq\n\t"
        "mov (%%rsp), %%rax\n\t"
        "mov %%rax, 48(%[res])\n\t"
        "andq $-2, (%%rsp)\n\t"
        "popfq\n\t"
        "setc %%al\n\t"
        "movzbl %%al, %%eax\n\t"
        "mov %%rax, 56(%[res])\n\t"
        "pushfq\n\t"
        "pop %%rax\n\t"
        "mov %%rax, 64(%[res])\n\t"
        /* leave: rsp = rbp, then pop rbp */
        "push %[v2]\n\t"
        "mov %%rsp, %%rbp\n\t"
        "sub $40, %%rsp\n\t"
        "leave\n\t"
        "mov %%rbp, 72(%[res])\n\t"
        "mov %%r13, %%rbp\n\t"
        "mov %%r12, %%rsp\n\t"
        :
        : [top] "r"(top), [v1] "r"(v1), [v2] "r"(v2), [msrc] "r"(msrc), [mdst] "r"(mdst),
          [mfn] "r"(mfn), [res] "r"(res)
        : "rax", "rcx", "rdx", "r12", "r13", "memory", "cc");
    EXPECT(F_STACK, res[0], 0x5a5a5a5a);
    EXPECT(F_STACK, res[1], v1);
    EXPECT(F_STACK, load_le(mdst, 8), v3);
    EXPECT(F_STACK, res[2], res[3]);
    EXPECT(F_STACK, res[4], 0x77);
    uint64_t s = 0; /* the k-th pop gets k and multiplies it by 17 - k */
    for (uint64_t k = 1; k <= 16; k++)
        s += k * (17 - k);
    EXPECT(F_STACK, res[5], s);
    /* what the pushes left in memory below rsp (top - 8 was reused by pushf and push) */
    for (int i = 2; i <= 16; i++)
        EXPECT(F_STACK, load_le(top - 8 * i, 8), 17 - i);
    EXPECT(F_STACK, res[6] & 1, 1);            /* CF as pushed */
    EXPECT(F_STACK, (res[6] >> 8) & 1, 0);     /* TF never visible to the program */
    EXPECT(F_STACK, (res[6] >> 1) & 1, 1);     /* reserved bit 1 */
    EXPECT(F_STACK, res[7], 0);                /* CF cleared through memory and popf */
    EXPECT(F_STACK, (res[8] >> 8) & 1, 0);
    EXPECT(F_STACK, res[8] & 1, 0);
    EXPECT(F_STACK, res[9], v2);
}

/* ---- the threads -------------------------------------------------------------------------- */

static void touch_all(struct lane *L)
{
    /* a cell of each page, so that every page of the arena is shared by both threads */
    for (int pg = 0; pg < 3; pg++) {
        volatile uint8_t *cell = arena + pg * PAGE + (pg == 1 ? HALF : 0) + (pg == 2 ? HALF : 0) + 8 * L->id;
        cell[0] = (uint8_t)(L->iter + L->id);
    }
}

static void *lane_main(void *arg)
{
    struct lane lane = {0}, *L = &lane;
    L->id = (int)(intptr_t)arg;
    L->b = arena + (size_t)L->id * PAGE;
    L->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)L->id | 1;
    touch_all(L);
    pthread_barrier_wait(&start);
    for (L->iter = 0; L->iter < iterations; L->iter++) {
        touch_all(L);
        fam_mov(L);
        fam_straddle(L);
        fam_alu(L);
        fam_movs(L);
        fam_rep_movs(L);
        fam_rep_stos(L);
        fam_rep_cmps(L);
        fam_rep_scas(L);
        fam_sse(L);
        fam_maskmov(L);
        if (cpu.avx2)
            fam_avx(L);
        if (cpu.avx512)
            fam_avx512(L);
        fam_atomic(L);
        fam_stack(L);
        fam_fxsave(L);
        if (cpu.xsave_size)
            fam_xsave(L);
    }
    memcpy(results[L->id - 1], L->checks, sizeof L->checks);
    return NULL;
}

int main(int argc, char **argv)
{
    iterations = argc > 1 ? atol(argv[1]) : 1;
    if (iterations < 1) {
        fprintf(stderr, "usage: insns [iterations >= 1]\n");
        return 2;
    }
    detect();
    if (pthread_barrier_init(&start, NULL, 2) != 0)
        return 3;
    pthread_t t;
    if (pthread_create(&t, NULL, lane_main, (void *)2) != 0) {
        fprintf(stderr, "insns: pthread_create failed\n");
        return 3;
    }
    lane_main((void *)1);
    if (pthread_join(t, NULL) != 0)
        return 3;
    printf("features: avx2=%d avx512=%d xsave=%d xsaveopt=%d xsavec=%d cx16=%d\n", cpu.avx2, cpu.avx512,
           cpu.xsave_size != 0, cpu.xsaveopt, cpu.xsavec, cpu.cx16);
    for (int f = 0; f < NFAM; f++) {
        unsigned long n = results[0][f] + results[1][f];
        if (f == F_AVX && !cpu.avx2)
            printf("%s: skipped (%s)\n", fam_name[f], cpu.why_avx);
        else if (f == F_AVX512 && !cpu.avx512)
            printf("%s: skipped (%s)\n", fam_name[f], cpu.why_avx512);
        else if (f == F_XSAVE && !cpu.xsave_size)
            printf("%s: skipped (%s)\n", fam_name[f], cpu.why_xsave);
        else if (n == 0) {
            fprintf(stderr, "insns: %s ran no check\n", fam_name[f]);
            return 1;
        } else
            printf("%s: ok, %lu checks\n", fam_name[f], n);
    }
    printf("insns ok: %ld iterations on 2 threads\n", iterations);
    return 0;
}
