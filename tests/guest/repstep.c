/* rep string instructions on pages two threads share. Under serialized execution each
 * such instruction is single-stepped; its step ends at an int3 that jinx-vmm writes over
 * the next instruction and undoes at once. This checks that the program never sees that
 * byte (its own code, read while and after the reps, is unchanged), that every rep gives
 * the result of a plain byte loop (forwards and backwards, across page boundaries), and
 * prints a digest that must equal a free run's. Usage: repstep [ROUNDS] */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGES 6
static unsigned char shared[PAGES * 4096] __attribute__((aligned(4096)));
static unsigned char want[PAGES * 4096], seen[PAGES * 4096];

static void *toucher(void *arg)
{
    (void)arg;
    for (int p = 0; p < PAGES; p++)
        shared[p * 4096 + 7] = (unsigned char)p; /* every page: touched by two threads */
    return NULL;
}

static void rep_stosb(void *dst, int v, size_t n)
{
    __asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(v) : "memory");
}

static void rep_movsq(void *dst, const void *src, size_t n8)
{
    __asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(n8) : : "memory");
}

/* Backwards (DF=1): dst and src point at the last byte. */
static void rep_movsb_back(void *dst_end, const void *src_end, size_t n)
{
    __asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(dst_end), "+S"(src_end), "+c"(n) : : "memory");
}

static size_t repe_cmpsb(const void *a, const void *b, size_t n)
{
    __asm__ volatile("repe cmpsb" : "+D"(a), "+S"(b), "+c"(n) : : "memory", "cc");
    return n;
}

/* Copies len bytes of code (this function's own) with rep movsb: the int3 that would end
 * its step would land in the very bytes it reads, so jinx must not put one there. */
__attribute__((noinline)) static void copy_code(unsigned char *dst, const unsigned char *code, size_t len)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(code), "+c"(len) : : "memory");
}

static uint64_t digest(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    const unsigned char *code = (const unsigned char *)(uintptr_t)&copy_code;
    uint64_t code_before = digest(code, 256);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, toucher, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    rep_movsq(want, shared, sizeof want / 8);
    for (int p = 0; p < PAGES; p++)
        CHECK(want[p * 4096 + 7] == p);
    for (int r = 0; r < rounds; r++) {
        size_t off = 100 + (size_t)r * 13, n = 4096 + 300; /* crosses a page boundary */
        rep_stosb(shared + off, 0x40 + r, n);
        for (size_t i = 0; i < n; i++)
            want[off + i] = (unsigned char)(0x40 + r);
        /* 8-byte elements from page 0-1 to pages 3-4 */
        rep_movsq(shared + 3 * 4096 + 8, shared + 64, 600);
        memmove(want + 3 * 4096 + 8, want + 64, 600 * 8);
        /* an overlapping backwards copy from page 4 across into page 5 */
        rep_movsb_back(shared + 5 * 4096 + 500, shared + 4 * 4096 + 3000, 2000);
        memmove(want + 5 * 4096 + 500 - 1999, want + 4 * 4096 + 3000 - 1999, 2000);
        /* Compared through a private copy (a byte loop over shared pages would make a
         * cue point of every byte). */
        rep_movsq(seen, shared, sizeof seen / 8);
        CHECK(memcmp(seen, want, sizeof want) == 0);
        CHECK(repe_cmpsb(shared, want, sizeof want) == 0);
        /* this function's code into page 2: its step must not patch what it reads */
        copy_code(shared + 2 * 4096 + 1024, code, 256);
        memcpy(want + 2 * 4096 + 1024, code, 256);
        CHECK(digest(shared + 2 * 4096 + 1024, 256) == code_before);
    }
    CHECK(digest(code, 256) == code_before);
    rep_movsq(seen, shared, sizeof seen / 8);
    printf("repstep ok %016llx\n", (unsigned long long)digest(seen, sizeof seen));
    return 0;
}
