/*
 * phase-stencil - a SPLASH-2 style phased kernel whose per-phase reduction is reset after
 * the barrier instead of inside it. Four workers own horizontal bands of a ROWS x COLS
 * grid and run ITERS phases of: compute the next grid from the current one (a 5-point
 * integer stencil, the two grids swap roles every phase), add the band's checksum to a
 * global accumulator (atomic), wait at a spin barrier (a generation barrier whose
 * waiters spin with sched_yield). The barrier tells the last arriver it was last; that
 * worker records the phase's statistics (the accumulator as the phase's checksum, the
 * first row's maximum) and resets the accumulator to 0 -- after the barrier has released
 * the others. A released worker that computes its next band and
 * adds its checksum before that reset has its contribution recorded in the wrong phase
 * or wiped out: main compares the phase checksums with a serial run, SIGABRT in main.
 * 5 threads (main + 4), the bug involves 2, one preemption (the last arriver, between
 * the barrier and the reset).
 *
 *   w3: last at barrier k: release [preempted]                      hist[k] = acc; acc = 0
 *   w0:                            step k+1 of band 0; acc += sum0
 *
 * Shared accesses: 6 per cell per phase (5 loads, 1 store), 128 x 256 cells, 150 phases:
 * ~3e7 a run, plus the barriers' spins. Runs 10-100 ms natively.
 *
 * Twin (phase-stencil-ok): the last arriver records and resets the accumulator inside
 * the barrier, before it releases the others.
 */
#include "corpus.h"

#define ROWS 128
#define COLS 256
#define WORKERS 4
#define ITERS 150
#define BAND (ROWS / WORKERS)

static uint32_t grid[2][ROWS][COLS];
static uint32_t ref[2][ROWS][COLS];
static atomic_uint acc;
static uint32_t hist[ITERS], ref_hist[ITERS], rowmax[ITERS], ref_rowmax[ITERS];
static atomic_int bar_count, bar_gen;

/* The phase's statistics: the checksum and the largest value of the new grid's first row. */
static void record(int it)
{
    uint32_t a = atomic_load(&acc), m = 0;
    for (int c = 0; c < COLS; c++) {
        uint32_t v = LOAD(grid[(it + 1) & 1][0][c]);
        m = v > m ? v : m;
    }
    STORE(hist[it], a);
    STORE(rowmax[it], m);
    atomic_store(&acc, 0);
}

/* Returns 1 in the last thread to arrive. */
static int barrier(int it)
{
    int g = atomic_load(&bar_gen);
    if (atomic_fetch_add(&bar_count, 1) == WORKERS - 1) {
        atomic_store(&bar_count, 0);
#if FIXED
        record(it);                            /* before the others are released */
#else
        (void)it;
#endif
        atomic_store(&bar_gen, g + 1);
        return 1;
    }
    while (atomic_load(&bar_gen) == g)
        sched_yield();
    return 0;
}

static uint32_t cell(uint32_t (*o)[COLS], int r, int c)
{
    uint32_t up = r > 0 ? LOAD(o[r - 1][c]) : 7, dn = r < ROWS - 1 ? LOAD(o[r + 1][c]) : 11;
    uint32_t lf = c > 0 ? LOAD(o[r][c - 1]) : 13, rt = c < COLS - 1 ? LOAD(o[r][c + 1]) : 17;
    uint32_t x = LOAD(o[r][c]) * 3u + up + dn + lf * 5u + rt;
    return (x ^ (x >> 7)) * 0x9e3779b1u;
}

static uint32_t step(uint32_t (*o)[COLS], uint32_t (*n)[COLS], int r0, int r1)
{
    uint32_t sum = 0;
    for (int r = r0; r < r1; r++)
        for (int c = 0; c < COLS; c++) {
            uint32_t v = cell(o, r, c);
            STORE(n[r][c], v);
            sum += v ^ (uint32_t)c;
        }
    return sum;
}

static void *worker(void *arg)
{
    int id = ARG_ID(arg), r0 = id * BAND, r1 = r0 + BAND;
    for (int it = 0; it < ITERS; it++) {
        atomic_fetch_add(&acc, step(grid[it & 1], grid[(it + 1) & 1], r0, r1));
        if (barrier(it)) {
            if (it == ITERS / 2)
                WIDEN(2000000);
#if !FIXED
            record(it);                        /* the others are already running */
#endif
        }
    }
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            grid[0][r][c] = ref[0][r][c] = (uint32_t)(r * COLS + c) * 2654435761u;
    run_ids(WORKERS, worker);
    for (int it = 0; it < ITERS; it++) {
        ref_hist[it] = step(ref[it & 1], ref[(it + 1) & 1], 0, ROWS);
        for (int c = 0; c < COLS; c++)
            ref_rowmax[it] = ref[(it + 1) & 1][0][c] > ref_rowmax[it] ? ref[(it + 1) & 1][0][c]
                                                                      : ref_rowmax[it];
    }
    for (int it = 0; it < ITERS; it++) {
        CHECK(hist[it] == ref_hist[it], "phase %d checksum %08x, the serial run's %08x", it,
              hist[it], ref_hist[it]);
        CHECK(rowmax[it] == ref_rowmax[it], "phase %d row maximum differs", it);
    }
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            CHECK(grid[ITERS & 1][r][c] == ref[ITERS & 1][r][c], "cell %d,%d differs", r, c);
    PASS("phase-stencil");
    return 0;
}
