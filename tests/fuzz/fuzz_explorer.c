/* libFuzzer harness for the explorer's reading of traces (explorer/): a trace is what a
 * guest did, so every analysis and strategy must answer on any trace that passes
 * ex_trace_validate, never crash. The input is a trace (8 bytes an event: thread, kind,
 * address among 16 variables on two pages or anywhere, instruction among 16, size,
 * flags, waker, argument), then parameters. Run over it:
 *  - the offline strategies of rounds (portfolio, jinx, pct, pctvb, race, random,
 *    bounded: ex_analyze, ex_generate), every schedule they propose printed to text and
 *    JSON and parsed back equal;
 *  - sparse exploration (explorer/sparse.h): the trace learnt (complete or cut), a plan
 *    begun for a few run indexes, ex_sparse_next over the trace's events as cue points,
 *    ex_sparse_observe with hit counts from the input, the run as a schedule (round trip
 *    again). A plan's points name threads in range (0: whichever thread), counts of at
 *    least 1, and a chained point an earlier point. */
#include "explorer/explorer.h"
#include "explorer/strategy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x601000ULL

static void round_trip(const struct ex_schedule *s)
{
    char *text = ex_schedule_to_text(s), *json = ex_schedule_to_json(s);
    struct ex_schedule a, b;
    struct ex_parse_error err;
    if (text && (ex_schedule_parse_text(text, strlen(text), &a, &err) != 0 ||
                 !ex_schedule_equal(s, &a)))
        abort();
    if (json && (ex_schedule_parse_json(json, strlen(json), &b, &err) != 0 ||
                 !ex_schedule_equal(s, &b)))
        abort();
    if (text)
        ex_schedule_free(&a);
    if (json)
        ex_schedule_free(&b);
    free(text);
    free(json);
}

static void check_plan(const struct ex_schedule *p)
{
    if (p->npreempt > EX_MAX_PREEMPTS || p->nyield > EX_MAX_YIELDS)
        abort();
    for (uint32_t i = 0; i < p->npreempt; i++) {
        const struct ex_preempt *q = &p->preempt[i];
        if (q->thread > EX_MAX_TID || q->count < 1 || /* thread 0: whichever thread */
            (q->chain && q->chain > i)) {
            fprintf(stderr, "point %u of %u: thread %u count %u rip %llx chain %u\n", i,
                    p->npreempt, q->thread, q->count, (unsigned long long)q->rip, q->chain);
            abort();
        }
    }
    round_trip(p);
}

static void offline(const struct ex_trace *t, const uint8_t *d, size_t n)
{
    struct ex_analysis a;
    char why[256];
    if (ex_analyze(t, &a, why, sizeof why) != 0)
        return;
    struct ex_params p;
    ex_params_default(&p);
    if (n >= 3) {
        p.max_schedules = 1 + d[0] % 8;
        p.pct_depth = 1 + d[1] % 5;
        p.bounded_preemptions = d[2] % 3;
        p.bounded_window_len = d[2] % 7;
    }
    ex_params_sanitize(&p);
    for (int s = 0; s < EX_NSTRATEGIES; s++) {
        struct ex_rng rng;
        ex_rng_seed(&rng, (uint64_t)s * 7919 + t->n);
        struct ex_schedule_set ss;
        ex_schedule_set_init(&ss);
        if (ex_generate((enum ex_strategy)s, &a, &p, &rng, &ss) == 0) {
            if (ss.n > p.max_schedules && s != EX_STRAT_BOUNDED)
                abort();
            for (size_t i = 0; i < ss.n; i++)
                round_trip(&ss.v[i]);
        }
        ex_schedule_set_free(&ss);
    }
    ex_analysis_free(&a);
}

static void sparse(const struct ex_trace *t, const uint8_t *d, size_t n)
{
    struct ex_sparse_model m;
    ex_sparse_model_init(&m);
    if (ex_sparse_learn(&m, t, n && (d[0] & 1), NULL) != 0)
        goto out;
    if (n > 1 && (d[1] & 1)) /* a second run learnt: counts and orders compared */
        ex_sparse_learn(&m, t, true, NULL);
    ex_sparse_racy_vars(&m);
    struct ex_tidset enabled;
    memset(&enabled, 0, sizeof enabled);
    for (size_t i = 0; i < t->n; i++)
        ex_tidset_add(&enabled, t->ev[i].tid);
    for (uint64_t index = 0; index < 4; index++) {
        struct ex_sparse_run r;
        struct ex_schedule plan;
        ex_sparse_run_init(&r);
        ex_schedule_init(&plan);
        if (ex_sparse_begin(&r, &m, n > 2 ? d[2] : 1, index, &plan) == 0) {
            check_plan(&plan);
            ex_sparse_next(&r, &enabled, NULL, NULL);
            for (size_t i = 0; i < t->n; i++)
                ex_sparse_next(&r, &enabled, NULL, &t->ev[i]);
            uint32_t hits[EX_MAX_PREEMPTS];
            for (uint32_t k = 0; k < EX_MAX_PREEMPTS; k++)
                hits[k] = n > 3 + k ? d[3 + k] : 0;
            ex_sparse_observe(&m, &r, &plan, hits);
            struct ex_schedule out;
            ex_schedule_init(&out);
            if (ex_sparse_schedule(&r, &plan, &out) == 0)
                round_trip(&out);
            ex_schedule_free(&out);
        }
        ex_schedule_free(&plan);
        ex_sparse_run_free(&r);
    }
out:
    ex_sparse_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t nev = data[0] % 64;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    struct ex_trace t;
    ex_trace_init(&t);
    for (size_t i = 0; i < nev && n >= 8; i++, d += 8, n -= 8) {
        struct ex_event e;
        memset(&e, 0, sizeof e);
        e.tid = d[0] < 250 ? 1u + d[0] % 6 : d[0];
        e.kind = (uint8_t)(1 + d[1] % EX_KIND_MAX_);
        e.addr = d[2] < 240 ? BASE + (d[2] % 16) * 8 + (d[2] & 16 ? 4096 : 0)
                            : (uint64_t)d[2] << 40 | (uint64_t)d[3] << 8;
        e.rip = 0x401000 + d[3] % 16;
        e.size = (uint16_t)(1u << (d[4] % 4));
        e.flags = (uint8_t)(d[4] >> 4 & EX_F_ALL_);
        e.waker = d[5] % 4 == 0 && t.n ? 1 + d[5] % t.n : 0;
        e.arg = d[6] % 8;
        if (e.kind == EX_THREAD_CREATE || e.kind == EX_THREAD_JOIN)
            e.arg = 1 + d[6] % 6;
        if (!ex_trace_append(&t, &e))
            break;
    }
    char why[256];
    if (ex_trace_validate(&t, why, sizeof why)) {
        offline(&t, d, n);
        sparse(&t, d, n);
    }
    ex_trace_free(&t);
    return 0;
}
