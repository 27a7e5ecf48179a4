/*
 * seqlock-plain - a sequence lock whose readers do not check that the sequence number is
 * even, and whose readers retry on a plain load with no system call (the hard case for
 * a serialized executor: labelled `spins: plain`). The writer publishes WRITES versions
 * of a record of SNAP words computed from the version number (sequence odd while it
 * writes, even again after); two readers take READS consistent snapshots and check each
 * one (every word is the function of the record's version). A reader that starts while
 * a write is in progress reads an odd sequence number, reads the half-written record,
 * and sees the same odd number afterwards, so it accepts the torn snapshot: SIGABRT in
 * that reader. 4 threads (main + writer + 2 readers), the bug involves 2, one preemption
 * (the writer, in the middle of a write).
 *
 *   writer: seq = 2k+1; ver = k+1; word[0..3] = f(k+1) [preempted]       word[4..] ...; seq = 2k+2
 *   reader:   s1 = seq (odd); read ver, words (half new); s2 = seq == s1 -> accepted
 *
 * Shared accesses: 3 + 1 + SNAP per write (20000), 2 + 1 + SNAP per read attempt
 * (2 x 20000 snapshots): ~1.2e6 a run plus the retries.
 *
 * Twin (seqlock-plain-ok): a reader waits (plain spin) while the sequence number is odd.
 */
#include "corpus.h"

#define WRITES 20000
#define READS 20000
#define READERS 2
#define SNAP 16

static atomic_uint seq;
static uint32_t ver;
static uint32_t word[SNAP];

static uint32_t f(uint32_t v, int i)
{
    uint32_t x = v * 2654435761u + (uint32_t)i;
    return x ^ (x >> 13);
}

static void *writer(void *arg)
{
    (void)arg;
    for (uint32_t v = 1; v <= WRITES; v++) {
        unsigned s = atomic_load(&seq);
        atomic_store(&seq, s + 1);             /* odd: writing */
        atomic_thread_fence(memory_order_release);
        __atomic_store_n(&ver, v, __ATOMIC_RELAXED);
        for (int i = 0; i < SNAP; i++) {
            if (i == SNAP / 2 && v == WRITES / 2)
                WIDEN(2000000);
            __atomic_store_n(&word[i], f(v, i), __ATOMIC_RELAXED);
        }
        atomic_store(&seq, s + 2);             /* even: done */
    }
    return NULL;
}

static void *reader(void *arg)
{
    int id = ARG_ID(arg);
    uint32_t snap[SNAP], v, last = 0;
    for (int r = 0; r < READS; r++) {
        unsigned s1, s2;
        do {                                   /* plain retry loop: no system call */
            s1 = atomic_load(&seq);
#if FIXED
            while (s1 & 1)
                s1 = atomic_load(&seq);
#endif
            v = __atomic_load_n(&ver, __ATOMIC_RELAXED);
            for (int i = 0; i < SNAP; i++)
                snap[i] = __atomic_load_n(&word[i], __ATOMIC_RELAXED);
            atomic_thread_fence(memory_order_acquire);
            s2 = atomic_load(&seq);
        } while (s1 != s2);
        CHECK(v >= last, "reader %d: version went back from %u to %u", id, last, v);
        last = v;
        for (int i = 0; i < SNAP; i++)
            CHECK(v == 0 ? snap[i] == 0 : snap[i] == f(v, i),
                  "reader %d: torn snapshot of version %u (word %d)", id, v, i);
    }
    return NULL;
}

int main(void)
{
    pthread_t w, r[READERS];
    start_thread(&w, writer, NULL);
    for (int i = 0; i < READERS; i++)
        start_thread(&r[i], reader, ID_ARG(i));
    join_thread(w);
    for (int i = 0; i < READERS; i++)
        join_thread(r[i]);
    PASS("seqlock-plain");
    return 0;
}
