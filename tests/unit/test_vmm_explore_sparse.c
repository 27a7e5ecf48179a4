/* Unit tests for vmm/rounds/explore_sparse.c and explore_stress.c: when sparse runs join a
 * whole-run exploration and when stress runs begin (issue 26: a program whose threads
 * compute on shared pages must get sparse and stress runs within about a second of CPU,
 * not after a 2 s cut run, a probe and another 2 s run; a short test must run what it
 * ran before). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rounds/explore_sparse.h"
#include "rounds/explore_stress.h"

#define S 1000000000ULL
#define MS 1000000ULL

static const uint32_t no_hits[EX_MAX_PREEMPTS];

/* A sparse run ended with `cues` cue points in cpu_ns of CPU time. */
static void sparse_ended(struct explore_sparse *es, uint64_t cues, uint64_t cpu_ns)
{
    assert_true(explore_sparse_next_is_sparse(es));
    assert_int_equal(explore_sparse_begin(es, 1), 0);
    explore_sparse_after_counts(es, true, false, 0, cues, 0, 0, no_hits, cpu_ns);
}

static void test_prefix_probe_decider_turn_sparse_on(void **st)
{
    (void)st;
    struct explore_sparse es;
    struct ex_trace t;
    ex_trace_init(&t);
    explore_sparse_init(&es, 2 * S);
    bool decider;
    /* The first traced run is a prefix of EXPLORE_SPARSE_PREFIX cue points. */
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    assert_false(decider);
    assert_false(explore_sparse_next_is_sparse(&es));
    explore_sparse_after_prefix(&es, &t, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    /* Stopped there: the probe is next, with no point (PCT over syscalls alone). */
    assert_true(explore_sparse_next_is_sparse(&es));
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    assert_int_equal(es.plan.npreempt, 0);
    /* Its budget: EXPLORE_SPARSE_PROBE_PREFIXES times the prefix's CPU time (a whole
     * sparse run that fits there beats the traced run the prefix was cut from). */
    assert_int_equal(explore_sparse_budget(&es), EXPLORE_SPARSE_PROBE_PREFIXES * 900 * MS);
    explore_sparse_after_counts(&es, true, false, 0, 15, 0, 0, no_hits, 3 * MS);
    /* A probe 300 times shorter: the next traced run decides, capped too. */
    assert_false(explore_sparse_next_is_sparse(&es));
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    assert_true(decider);
    explore_sparse_after_prefix(&es, &t, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    assert_true(es.on);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), 0);
    /* No traced run has ended: sparse runs take 3 of 4 by cost. */
    assert_true(explore_sparse_next_is_sparse(&es));
    explore_sparse_free(&es);
    ex_trace_free(&t);
}

/* Turns sparse runs on as the first test does (a prefix, a probe 300 times shorter, a
 * deciding prefix): the model has learnt nothing racy (empty prefixes). */
static void sparse_on(struct explore_sparse *es, struct ex_trace *empty)
{
    explore_sparse_init(es, 2 * S);
    explore_sparse_after_prefix(es, empty, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    assert_int_equal(explore_sparse_begin(es, 1), 0);
    assert_false(es->sample); /* the probe measures: never sampled */
    explore_sparse_after_counts(es, true, false, 0, 15, 0, 0, no_hits, 3 * MS);
    explore_sparse_after_prefix(es, empty, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    assert_true(es->on);
}

/* Sampled sparse runs (sched/crew_sample.h): the first two after the probe and one in
 * EXPLORE_SAMPLE_EVERY sample, with EXPLORE_SAMPLE_BUDGET times the budget, and what
 * they sampled (a total two workers read and write after computing, which no prefix
 * reached) becomes the change points of the next sparse runs. */
static void test_sampled_runs_learn_late_sites(void **st)
{
    (void)st;
    struct explore_sparse es;
    struct ex_trace empty, s;
    ex_trace_init(&empty);
    ex_trace_init(&s);
    sparse_on(&es, &empty);
    assert_int_equal(ex_sparse_racy_vars(&es.model), 0);
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    assert_true(es.sample);
    assert_int_equal(es.plan.npreempt, 0); /* nothing racy learnt: no point */
    uint64_t sampled_budget = explore_sparse_budget(&es);
    assert_int_equal(sampled_budget, EXPLORE_SAMPLE_BUDGET * es.wall_ns);
    /* The samples: main creates two workers; each reads the total, then writes it. */
    const uint64_t total = 0x409240, rd = 0x401a10, wr = 0x401a24;
    assert_non_null(ex_trace_sync(&s, 1, EX_THREAD_CREATE, 0, 2));
    assert_non_null(ex_trace_sync(&s, 1, EX_THREAD_CREATE, 0, 3));
    for (uint32_t w = 2; w <= 3; w++) {
        assert_non_null(ex_trace_access(&s, w, EX_READ, total, 8, 0, rd));
        assert_non_null(ex_trace_access(&s, w, EX_WRITE, total, 8, 0, wr));
    }
    explore_sparse_learn_samples(&es, &s);
    explore_sparse_after_counts(&es, true, false, 0, 15, 0, 0, no_hits, 3 * MS);
    assert_int_equal(es.sampled, 1);
    assert_int_equal(es.sampled_accesses, 4);
    assert_int_equal(ex_sparse_racy_vars(&es.model), 1);
    /* The second sampled run: its points are the total's sites. */
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    assert_true(es.sample);
    assert_true(es.plan.npreempt >= 1);
    for (uint32_t i = 0; i < es.plan.npreempt; i++)
        assert_true(es.plan.preempt[i].rip == rd || es.plan.preempt[i].rip == wr);
    explore_sparse_learn_samples(&es, &empty);
    explore_sparse_after_counts(&es, true, false, 0, 15, 0, 0, no_hits, 3 * MS);
    /* Then one in EXPLORE_SAMPLE_EVERY, the others at the plain budget. */
    int sampled = 0;
    for (int i = 0; i < 2 * (int)EXPLORE_SAMPLE_EVERY; i++) {
        assert_int_equal(explore_sparse_begin(&es, 1), 0);
        if (es.sample) {
            sampled++;
            explore_sparse_learn_samples(&es, &empty);
        } else {
            uint64_t hits = 0; /* a count past a sampled site's bound explores later runs */
            for (uint32_t k = 0; k < es.plan.npreempt; k++)
                hits += es.plan.preempt[k].count;
            assert_int_equal(explore_sparse_budget(&es), es.wall_ns + hits * EXPLORE_SPARSE_HIT_NS);
        }
        explore_sparse_after_counts(&es, true, false, 0, 15, 0, 0, no_hits, 3 * MS);
    }
    assert_int_equal(sampled, 2);
    explore_sparse_free(&es);
    ex_trace_free(&empty);
    ex_trace_free(&s);
}

static void test_decider_that_ends_keeps_traced_runs(void **st)
{
    (void)st;
    /* The g++ test binary: its first (PCT) run is long, the others end at 4 400 cue
     * points. The deciding run ends below the cap: sparse runs stay off for good. */
    struct explore_sparse es;
    struct ex_trace t;
    ex_trace_init(&t);
    explore_sparse_init(&es, 2 * S);
    bool decider;
    explore_sparse_after_prefix(&es, &t, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    sparse_ended(&es, 40, 3 * MS);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    assert_true(decider);
    explore_sparse_after_decider_ended(&es, &t, 4400, NULL);
    assert_true(es.off);
    assert_false(es.on);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), 0);
    assert_false(explore_sparse_next_is_sparse(&es));
    /* Later traced runs, long or not, never turn them on, nor does giving up. */
    for (int i = 0; i < 6; i++)
        explore_sparse_after_traced(&es, &t, true, 2 * EXPLORE_SPARSE_CUES, NULL);
    assert_false(explore_sparse_next_is_sparse(&es));
    assert_false(explore_sparse_take_over(&es));
    explore_sparse_free(&es);
    ex_trace_free(&t);
}

/* A prefix of EXPLORE_SPARSE_PREFIX cue points, `sync` of them no memory access. */
static void prefix_of(struct explore_sparse *es, uint32_t sync)
{
    struct ex_trace t;
    ex_trace_init(&t);
    for (uint32_t i = 0; i < EXPLORE_SPARSE_PREFIX; i++) {
        if (i < sync)
            assert_non_null(ex_trace_sync(&t, 2 + i % 4, EX_SYNC_OTHER, 0, 0));
        else
            assert_non_null(ex_trace_access(&t, 2 + i % 4, EX_READ, 0x600000 + 8 * (i % 64), 8, 0,
                                            0x401000));
    }
    explore_sparse_after_prefix(es, &t, EXPLORE_SPARSE_PREFIX, 900 * MS, NULL);
    ex_trace_free(&t);
}

static void test_probe_gain_in_cues_or_syscalls(void **st)
{
    (void)st;
    struct explore_sparse es;
    bool decider;
    uint64_t most = EXPLORE_SPARSE_PREFIX / EXPLORE_SPARSE_PREFIX_GAIN;
    /* 150 threads: the prefix made 128 syscall cue points, the probe 600: no decider,
     * traced run 1 gets the stretched budget as before (a whole traced run at the
     * prefix's pace: ~900 ms / 128 x 600, 4.2 s of CPU, fits in it). */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 128);
    sparse_ended(&es, 600, 200 * MS);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), 0);
    assert_false(explore_sparse_next_is_sparse(&es));
    assert_false(es.on || es.only);
    assert_false(es.off); /* traced runs giving up may still hand over to sparse runs */
    explore_sparse_free(&es);
    /* A pipeline whose prefix made 4000 syscall cue points: its probe (7000, in 3 times
     * the prefix's CPU time) ends, the traced runs go on the same way. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 4000);
    sparse_ended(&es, 7000, 2700 * MS);
    assert_false(es.on || es.only);
    explore_sparse_free(&es);
    /* ... but its prefix made 300 of the probe's 7000 yields: a traced run of the whole
     * program would take ~21 s of CPU, past a stretched run's budget: sparse runs only. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 300);
    sparse_ended(&es, 7000, 2700 * MS);
    assert_true(es.on);
    assert_true(es.only);
    for (int i = 0; i < 50; i++)
        sparse_ended(&es, 7000, 2700 * MS);
    explore_sparse_free(&es);
    /* Just past the cue-point bound: no. At it: a candidate. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 10);
    sparse_ended(&es, most + 1, 3 * MS);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), 0);
    explore_sparse_free(&es);
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 10);
    sparse_ended(&es, most, 3 * MS);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    assert_true(decider);
    explore_sparse_free(&es);
    /* A spin-yield barrier: the prefix spun through 4 980 sched_yields, the probe ended
     * in 463 cue points: a candidate. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 4980);
    sparse_ended(&es, 463, 70 * MS);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    assert_true(decider);
    explore_sparse_free(&es);
    /* A probe cut at its budget: sparse runs are off. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 4980);
    assert_true(explore_sparse_next_is_sparse(&es));
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    explore_sparse_after_counts(&es, false, false, 3, 20, 0, 0, no_hits, 900 * MS);
    assert_true(es.off);
    assert_false(es.long_alone); /* three threads: it may spin; traced runs go on */
    assert_false(explore_sparse_take_over(&es));
    explore_sparse_free(&es);
    /* ... cut while one thread lived (freecrash.c: main computing alone): whole runs
     * cannot end, the driver hands over at once. */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 5);
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    explore_sparse_after_counts(&es, false, true, 1, 9, 0, 0, no_hits, 4 * S);
    assert_true(es.off && es.long_alone);
    explore_sparse_free(&es);
    /* A sparse run after the probe, cut with one thread: no verdict (the probe decides). */
    explore_sparse_init(&es, 2 * S);
    prefix_of(&es, 4980);
    assert_int_equal(explore_sparse_begin(&es, 1), 0);
    explore_sparse_after_counts(&es, true, false, 0, 463, 0, 0, no_hits, 70 * MS);
    explore_sparse_after_counts(&es, false, true, 1, 9, 0, 0, no_hits, 4 * S);
    assert_false(es.long_alone);
    explore_sparse_free(&es);
}

static void test_short_first_run_is_run_zero(void **st)
{
    (void)st;
    /* A short test: its first run ends below the cap and is learnt as traced run 0;
     * nothing is capped after it, no probe. */
    struct explore_sparse es;
    struct ex_trace t;
    ex_trace_init(&t);
    explore_sparse_init(&es, 2 * S);
    bool decider;
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), EXPLORE_SPARSE_PREFIX);
    explore_sparse_after_traced(&es, &t, true, 800, NULL);
    assert_int_equal(explore_sparse_prefix_cues(&es, &decider), 0);
    assert_false(explore_sparse_next_is_sparse(&es));
    explore_sparse_free(&es);
    ex_trace_free(&t);
}

static void test_stress_starts_when_runs_are_slow(void **st)
{
    (void)st;
    struct explore_stress s;
    explore_stress_init(&s, 2 * S);
    /* By default after EXPLORE_STRESS_AFTER_NS only. */
    assert_false(explore_stress_due(&s, S, 0));
    assert_true(explore_stress_due(&s, EXPLORE_STRESS_AFTER_NS, 0));
    /* A slow traced run at 1.2 s: due now, then a quarter of the time after it. */
    explore_stress_start(&s, 1200 * MS);
    assert_false(explore_stress_due(&s, S, 0));
    assert_true(explore_stress_due(&s, 1200 * MS, 0));
    s.ns = 100 * MS;
    assert_false(explore_stress_due(&s, 1500 * MS, 0));
    assert_true(explore_stress_due(&s, 1600 * MS, 0));
    /* A 16 s traced run ahead at 1.5 s: due until they have taken (1.5 + 16 - 1.2) / 4. */
    assert_true(explore_stress_due(&s, 1500 * MS, 16 * S));
    s.ns = 4000 * MS;
    assert_true(explore_stress_due(&s, 1500 * MS, 16 * S));
    s.ns = 4100 * MS;
    assert_false(explore_stress_due(&s, 1500 * MS, 16 * S));
    s.ns = 100 * MS;
    /* A later start never delays them. */
    explore_stress_start(&s, 3 * S);
    assert_true(explore_stress_due(&s, 1600 * MS, 0));
    s.off = true;
    assert_false(explore_stress_due(&s, 10 * S, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_probe_decider_turn_sparse_on),
        cmocka_unit_test(test_decider_that_ends_keeps_traced_runs),
        cmocka_unit_test(test_sampled_runs_learn_late_sites),
        cmocka_unit_test(test_probe_gain_in_cues_or_syscalls),
        cmocka_unit_test(test_short_first_run_is_run_zero),
        cmocka_unit_test(test_stress_starts_when_runs_are_slow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
