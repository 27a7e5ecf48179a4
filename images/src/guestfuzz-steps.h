/* guestfuzz steps SEED ITERS THREADS: hostile single steps for serialized execution,
 * where the guest-agent ends the single step of a shared-page access itself
 * (vmm/sched/guest_step.h: a per-vCPU block the VMM arms, which the agent turns DONE).
 * Included by guestfuzz.c (uses its next, raw6, say, report, seed, iters, nthreads).
 *
 * THREADS threads (at least 2) make every page of a small arena shared and then, ITERS
 * times each, pick one access by the seed: a load, a store, a locked add, an access that
 * straddles two shared pages (a step given two pages), a rep movsb (stepped by the VMM),
 * a pushf right after a shared load (must not see the step's TF), code fetched from a
 * shared executable page (a fetch's step), a popf that
 * sets TF itself before a shared access (the step's end clears it, in the guest as in the
 * VMM), a jump into the agent's #DB handler in user mode with a forged ARMED block on its
 * stack (must fault: it is user code then). Each thread counts its locked adds; main
 * checks the total (exit 1 if wrong) and then, by SEED % 4: exits 0, writes the real
 * block (supervisor-only: SIGSEGV), jumps into the agent's #DB handler (SIGSEGV), or sets
 * TF and runs on with no step armed (SIGTRAP). Prints "guestfuzz: mode=steps seed=S
 * syscalls=N adds=A end=E" first. The outcome must be the same with and without
 * --no-guest-cues. */
#ifndef GUESTFUZZ_STEPS_H
#define GUESTFUZZ_STEPS_H

#define STEPS_PAGES 4
#define STEPS_PERCPU 0x20000ULL /* GPA_PERCPU, vmm/kvm/layout.h */
#define STEPS_BLOCK 0x100ULL    /* AGENT_STEP_OFF */

static uint8_t *steps_arena;    /* STEPS_PAGES shared data pages */
/* A shared executable page: nop; ret. (Not int1: on this PVM host its #DB reports the
 * int1 itself, so a step of it starts over forever, with or without --no-guest-cues.) */
static uint8_t *steps_code;
static atomic_ulong steps_adds;
static pthread_barrier_t steps_start;
static atomic_int steps_tf_seen; /* a pushf that saw the VMM's TF: a bug */

/* The agent's vector-1 stub in its user-readable page (header: exc_stubs at +20). */
static uint64_t steps_db_stub(void)
{
    uint32_t stubs;
    memcpy(&stubs, (const void *)(UVA_AGENT + 20), 4);
    return UVA_AGENT + (stubs % 4096) + 16;
}

/* Runs the agent's #DB handler in user mode with an ARMED block forged where it looks:
 * its rsp rounded down to 8 KiB, + 0x100. It must fault (invlpg, iretq or the frame). */
static _Noreturn void steps_forged_handler(void)
{
    static uint8_t stack[4 * 8192] __attribute__((aligned(8192)));
    uint64_t *blk = (uint64_t *)(stack + 8192 + STEPS_BLOCK);
    blk[0] = 0x444D524150455453ULL; /* AGENT_STEP_ARMED */
    blk[1] = 1;
    blk[2] = (uint64_t)(steps_arena); /* "PTE" address: user memory */
    blk[3] = 0;
    blk[4] = (uint64_t)steps_arena;
    uint64_t top = (uint64_t)(stack + 2 * 8192 - 128);
    uint64_t *frame = (uint64_t *)top;
    frame[0] = 0; frame[1] = 0x23; frame[2] = 0x302; /* rip, user cs, TF set (after 5 pushes) */
    uint64_t target = steps_db_stub();
    __asm__ volatile("mov %0, %%rsp; jmp *%1" :: "r"(top), "r"(target) : "memory");
    __builtin_unreachable();
}

static void steps_one(uint64_t r)
{
    volatile uint8_t *a = steps_arena;
    size_t off = (size_t)(r >> 8) % (STEPS_PAGES * 4096 - 64);
    switch (r % 9) {
    case 0: (void)*(volatile uint64_t *)(a + (off & ~7UL)); break;
    case 1: *(volatile uint32_t *)(a + (off & ~3UL)) = (uint32_t)r; break;
    case 2:
        __atomic_fetch_add((uint64_t *)(steps_arena + 4096 - 64), 1, __ATOMIC_SEQ_CST);
        atomic_fetch_add(&steps_adds, 1);
        break;
    case 3: { /* straddles pages 1 and 2 */
        uint64_t v;
        memcpy(&v, (const void *)(steps_arena + 2 * 4096 - 3), 8);
        v ^= r;
        memcpy((void *)(steps_arena + 2 * 4096 - 3), &v, 8);
        break;
    }
    case 4: {
        uint8_t buf[64];
        void *d = buf;
        const volatile uint8_t *src = a + off;
        size_t n = sizeof buf;
        __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
        break;
    }
    case 5: {
        uint64_t fl, v;
        __asm__ volatile("mov (%2), %1; pushf; pop %0" : "=r"(fl), "=r"(v) : "r"(a + 128)
                         : "memory");
        if (fl & 0x100)
            atomic_fetch_add(&steps_tf_seen, 1);
        break;
    }
    case 6: ((void (*)(void))steps_code)(); break; /* nop; ret: fetched from a shared page */
    case 7: {
        /* TF set by the program itself, then a shared load. */
        __asm__ volatile("pushf; orq $0x100, (%%rsp); popf; mov (%0), %%rax; nop; pushf;"
                         "andq $~0x100, (%%rsp); popf" :: "r"(a + 256) : "rax", "memory", "cc");
        break;
    }
    case 8: raw6(SYS_sched_yield, 0, 0, 0, 0, 0, 0); break;
    }
}

static void *steps_thread(void *arg)
{
    uint64_t rng = seed * 7919 + (uint64_t)(uintptr_t)arg;
    for (int p = 0; p < STEPS_PAGES; p++)
        steps_arena[p * 4096 + 8 * (int)(uintptr_t)arg] = 1; /* every page shared */
    steps_code[3000 + (uintptr_t)arg] = 0;
    pthread_barrier_wait(&steps_start); /* a futex: no spin the default policy could keep */
    for (long i = 0; i < iters; i++)
        steps_one(next(&rng));
    return NULL;
}

/* The threads' accesses and the check of the adds; reports MODE and END. 0 or the
 * exit status. */
static int mode_steps_run(const char *mode, const char *end)
{
    if (nthreads < 2)
        nthreads = 2;
    steps_arena = mmap(NULL, STEPS_PAGES * 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    steps_code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (steps_arena == MAP_FAILED || steps_code == MAP_FAILED)
        return 3;
    steps_code[0] = 0x90; /* nop */
    steps_code[1] = 0xC3; /* ret */
    pthread_t t[64];
    pthread_barrier_init(&steps_start, NULL, (unsigned)nthreads);
    for (long i = 1; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, steps_thread, (void *)(uintptr_t)i) != 0)
            return 3;
    steps_thread((void *)0);
    for (long i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
    uint64_t want = atomic_load(&steps_adds);
    uint64_t got = *(volatile uint64_t *)(steps_arena + 4096 - 64);
    char extra[96];
    snprintf(extra, sizeof extra, " adds=%llu tf_seen=%d end=%s", (unsigned long long)got,
             atomic_load(&steps_tf_seen), end);
    report(mode, extra);
    return got != want || atomic_load(&steps_tf_seen) ? 1 : 0;
}

static int mode_steps(void)
{
    static const char *ends[] = {"exit", "write-block", "forged-handler", "tf-unarmed"};
    int rc = mode_steps_run("steps", ends[seed % 4]);
    if (rc)
        return rc;
    switch (seed % 4) {
    case 1: *(volatile uint64_t *)(KBASE + STEPS_PERCPU + STEPS_BLOCK) = 0x454E4F4450455453ULL; break;
    case 2: steps_forged_handler();
    case 3:
        __asm__ volatile("pushf; orq $0x100, (%%rsp); popf; nop; nop" ::: "memory", "cc");
        break;
    }
    return seed % 4 ? 4 : 0;
}

/* guestfuzz cues SEED ITERS THREADS: the same hostile accesses for memory cue points
 * taken in the guest (vmm/sched/guest_cue.h: a per-vCPU block the VMM turns ON with a
 * budget and a ring the agent fills), run with --guest-cue-points and a schedule of long
 * segments. Main checks the locked adds as above, then, by SEED % 3: exits 0, writes the
 * real cue block (supervisor-only: SIGSEGV), or runs the agent's #PF handler in user mode
 * on a forged ON block with a budget, a page list naming the arena and a forged fault
 * frame (it must fault: reading CR2 is privileged). Prints "guestfuzz: mode=cues seed=S
 * syscalls=N adds=A end=E" first. The outcome must be the same with --no-guest-cues. */
#define CUES_BLOCK 0x200ULL /* AGENT_CUE_OFF */

static _Noreturn void cues_forged_handler(void)
{
    static uint8_t stack[4 * 8192] __attribute__((aligned(8192)));
    uint64_t *blk = (uint64_t *)(stack + 8192 + CUES_BLOCK);
    blk[0] = 0x4E4F455543584E4AULL; /* AGENT_CUE_ON */
    blk[1] = 16;                     /* budget */
    blk[2] = 0;                      /* n */
    blk[3] = 16;                     /* cap */
    blk[4] = 1;                      /* npages */
    blk[16] = (uint64_t)steps_arena;  /* page[0]: va, "PTE" (user memory), values */
    blk[17] = (uint64_t)steps_arena;
    blk[18] = 0x7;
    blk[19] = *(volatile uint64_t *)steps_arena;
    uint64_t top = (uint64_t)(stack + 2 * 8192 - 128);
    uint64_t *frame = (uint64_t *)top;
    frame[0] = 0x6;                  /* error code: a user write to a page not present */
    frame[1] = (uint64_t)steps_code; /* rip */
    frame[2] = 0x23;                 /* user cs */
    frame[3] = 0x202;
    frame[4] = top;
    frame[5] = 0x1b;
    uint32_t stubs;
    memcpy(&stubs, (const void *)(UVA_AGENT + 20), 4);
    uint64_t target = UVA_AGENT + (stubs % 4096) + 14 * 16;
    __asm__ volatile("mov %0, %%rsp; jmp *%1" :: "r"(top), "r"(target) : "memory");
    __builtin_unreachable();
}

static int mode_cues(void)
{
    int end = (int)(seed % 3);
    static const char *ends[] = {"exit", "write-block", "forged-handler"};
    int rc = mode_steps_run("cues", ends[end]);
    if (rc)
        return rc;
    switch (end) {
    case 1: *(volatile uint64_t *)(KBASE + STEPS_PERCPU + CUES_BLOCK) = 0; break;
    case 2: cues_forged_handler();
    }
    return end ? 4 : 0;
}

#endif
