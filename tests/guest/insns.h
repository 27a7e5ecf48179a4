/*
 * The shared part of the insns guest test (tests/guest/insns.c, insns_vec.c): the
 * families, a thread's lane, the CPU features detect() found, the checks (EXPECT*: a
 * mismatch prints what differed and aborts; each check counts for its family) and the
 * independent way of computing what the instructions must give (volatile byte accesses,
 * private buffers, scalar arithmetic). Each fam_* function runs one family on its lane.
 */
#ifndef GUEST_INSNS_H
#define GUEST_INSNS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PAGE 4096
#define HALF 2048

enum fam {
    F_MOV, F_STRADDLE, F_ALU, F_MOVS, F_REPMOVS, F_REPSTOS, F_REPCMPS, F_REPSCAS,
    F_SSE, F_MASKMOV, F_AVX, F_AVX512, F_ATOMIC, F_STACK, F_FXSAVE, F_XSAVE, NFAM
};

/* CPU features, found once by main (detect()) before the threads start. */
struct cpu_features {
    int osxsave, avx, avx2, avx512, cx16, xsaveopt, xsavec;
    uint64_t xcr0;
    uint32_t xsave_size, avx_off; /* standard-format size for XCR0 (0: no XSAVE); offset of YMM_Hi128 */
    char why_avx[64], why_avx512[64], why_xsave[64];
};
extern struct cpu_features cpu;
void detect(void); /* fills cpu (insns_vec.c) */

struct lane {
    int id;                 /* thread number, 1 or 2 */
    volatile uint8_t *b;    /* the page boundary in the middle of the lane */
    uint64_t rng;
    long iter;
    unsigned long checks[NFAM];
};

/* ---- checking (insns.c) -------------------------------------------------------------- */

#define EXPECT(f, got, want) expect_eq(L, f, __FILE__, __LINE__, #got, (uint64_t)(got), (uint64_t)(want))
void expect_eq(struct lane *L, int f, const char *file, int line, const char *what, uint64_t got, uint64_t want);

/* Shared bytes p[0..n) against want[0..n), byte by byte. */
#define EXPECT_BYTES(f, p, want, n) expect_bytes(L, f, __FILE__, __LINE__, #p, p, want, n)
void expect_bytes(struct lane *L, int f, const char *file, int line, const char *what, volatile const uint8_t *p,
                  const uint8_t *want, size_t n);

/* Private bytes (a copy of registers) against want. */
#define EXPECT_MEM(f, got, want, n) expect_mem(L, f, __FILE__, __LINE__, #got, got, want, n)
void expect_mem(struct lane *L, int f, const char *file, int line, const char *what, const void *got,
                const void *want, size_t n);


/* ---- the independent way: volatile byte accesses, private buffers ---------------------- */

static inline uint64_t rnd(struct lane *L)
{
    uint64_t x = L->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    L->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline void fill_private(struct lane *L, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rnd(L) >> 24);
}

static inline void put(volatile uint8_t *dst, const uint8_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

static inline void put_byte(volatile uint8_t *dst, uint8_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = v;
}

static inline uint64_t load_le(volatile const uint8_t *p, int w)
{
    uint64_t v = 0;
    for (int i = w - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void store_le(volatile uint8_t *p, uint64_t v, int w)
{
    for (int i = 0; i < w; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t sext(uint64_t v, int w)
{
    int s = 64 - 8 * w;
    return (uint64_t)((int64_t)(v << s) >> s);
}

static inline uint64_t mask_of(int w)
{
    return w == 8 ? ~0ULL : (1ULL << (8 * w)) - 1;
}

/* ---- the families of insns_vec.c ------------------------------------------------------ */

void fam_sse(struct lane *L);
void fam_maskmov(struct lane *L);
__attribute__((target("avx2"))) void fam_avx(struct lane *L);       /* only if cpu.avx2 */
__attribute__((target("avx512f"))) void fam_avx512(struct lane *L); /* only if cpu.avx512 */
void fam_fxsave(struct lane *L);
void fam_xsave(struct lane *L);                                     /* only if cpu.xsave_size */

#endif
