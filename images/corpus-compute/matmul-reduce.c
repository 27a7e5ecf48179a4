/*
 * matmul-reduce - a parallel matrix product whose workers add each row's checksum to a
 * shared total with a plain read and write. Four workers compute interleaved rows of
 * C = A x B (N x N, 32-bit integer arithmetic, every matrix on shared pages); after each
 * row a worker adds the row's checksum to `total` unlocked. Two workers whose additions
 * overlap lose one: main recomputes the total from C, SIGABRT in main. 5 threads
 * (main + 4), the bug involves 2, one preemption (a worker between its read and its
 * write of the total). Runs 10-100 ms natively.
 *
 *   w1: t = total [preempted]                          total = t + row 5's sum
 *   w2:            t = total; total = t + row 6's sum
 *
 * Shared accesses: 2 N^3 loads + N^2 stores + 2 N for the total: ~3.4e7 a run (N = 256).
 *
 * Twin (matmul-reduce-ok): the addition is an atomic fetch-and-add.
 */
#include "corpus.h"

#define N 256
#define WORKERS 4

static uint32_t A[N][N], B[N][N], C[N][N];
static uint64_t total;

static void *worker(void *arg)
{
    int id = ARG_ID(arg);
    for (int i = id; i < N; i += WORKERS) {
        uint64_t rowsum = 0;
        for (int j = 0; j < N; j++) {
            uint32_t s = 0;
            for (int k = 0; k < N; k++)
                s += LOAD(A[i][k]) * LOAD(B[k][j]);
            STORE(C[i][j], s);
            rowsum += s;
        }
#if FIXED
        __atomic_fetch_add(&total, rowsum, __ATOMIC_SEQ_CST);
#else
        uint64_t t = LOAD(total);
        if (i == N / 2)
            WIDEN(2000000);
        STORE(total, t + rowsum);
#endif
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (uint32_t)(i * N + j) * 2654435761u >> 16;
            B[i][j] = (uint32_t)(j * N + i + 7) * 2246822519u >> 16;
        }
    run_ids(WORKERS, worker);
    uint64_t want = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            want += C[i][j];
    CHECK(total == want, "total %llu, C sums to %llu", (unsigned long long)total,
          (unsigned long long)want);
    uint32_t s = 0;                            /* spot check one entry */
    for (int k = 0; k < N; k++)
        s += A[N - 1][k] * B[k][N - 1];
    CHECK(C[N - 1][N - 1] == s, "C[N-1][N-1] = %u, want %u", C[N - 1][N - 1], s);
    PASS("matmul-reduce");
    return 0;
}
