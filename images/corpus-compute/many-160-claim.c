/*
 * many-160-claim - 160 workers sum a shared array in chunks they claim from a shared
 * cursor with a plain read and write (`c = next; next = c + 1`). Two workers that read
 * the cursor before either writes it claim the same chunk: the chunk's claim counter
 * catches the second claim, SIGABRT in that worker. 161 threads (main + 160), the bug
 * involves 2, one preemption (a worker between its read and its write of the cursor).
 *
 *   w7:  c = next (= 41) [preempted]                    next = 42; claim chunk 41 again!
 *   w12:                  c = next (= 41); next = 42; claim chunk 41
 *
 * Shared accesses: CHUNKS x (CHUNK loads + ~4) plus ~2 per worker for the final empty
 * claim: 640 x 260 + 320: ~1.7e5 a run, 161 threads.
 *
 * Twin (many-160-claim-ok): the claim is an atomic fetch-and-add.
 */
#include "corpus.h"

#define WORKERS 160
#define CHUNK 256
#define CHUNKS 640

static uint32_t data[CHUNKS * CHUNK];
static uint64_t partial[CHUNKS];
static atomic_int claims[CHUNKS];
static int next;

static int claim(void)
{
#if FIXED
    return __atomic_fetch_add(&next, 1, __ATOMIC_SEQ_CST);
#else
    int c = LOAD(next);
    if (c == CHUNKS / 2)
        WIDEN(2000000);
    STORE(next, c + 1);
    return c;
#endif
}

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    for (;;) {
        int c = claim();
        if (c >= CHUNKS)
            break;
        int prev = atomic_fetch_add(&claims[c], 1);
        CHECK(prev == 0, "chunk %d claimed twice (second by worker %d)", c, id);
        uint64_t s = 0;
        for (int i = 0; i < CHUNK; i++)
            s += LOAD(data[c * CHUNK + i]) * (uint64_t)(i + 1);
        STORE(partial[c], s);
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < CHUNKS * CHUNK; i++)
        data[i] = (uint32_t)i * 2654435761u;
    run_ids(WORKERS, worker);
    uint64_t got = 0, want = 0;
    for (int c = 0; c < CHUNKS; c++) {
        CHECK(claims[c] == 1, "chunk %d claimed %d times", c, claims[c]);
        got += partial[c];
        for (int i = 0; i < CHUNK; i++)
            want += data[c * CHUNK + i] * (uint64_t)(i + 1);
    }
    CHECK(got == want, "sum %llu, want %llu", (unsigned long long)got, (unsigned long long)want);
    PASS("many-160-claim");
    return 0;
}
