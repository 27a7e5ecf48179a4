/* Timers that end early (timers.h). */
#include "timers.h"
#include "schedule.h"
#include "u64map.h"
#include <stdio.h>
#include <string.h>

void ex_timers_hist_init(struct ex_timers_hist *h)
{
    memset(h, 0, sizeof *h);
}

void ex_timers_begin(struct ex_timers_run *r, const struct ex_timers_hist *h, uint64_t seed,
                     uint64_t index, bool strict)
{
    memset(r, 0, sizeof *r);
    r->strict = strict;
    /* Its own stream: the strategy's generator, and so its choices, stay as they were. */
    ex_rng_seed(&r->rng, ex_hash2(seed ^ 0x74696d657273ULL, index));
    uint64_t k = h ? h->max_timed : 0;
    if (strict || k == 0 || ex_rng_below(&r->rng, 2) == 0)
        return; /* half the runs keep every timer to its deadline */
    uint32_t want = ex_rng_below(&r->rng, 4) == 0 ? 2 : 1;
    if (want > k)
        want = (uint32_t)k;
    while (r->nplan < want) {
        uint64_t c = 1 + ex_rng_below(&r->rng, k);
        bool dup = false;
        for (uint32_t i = 0; i < r->nplan; i++)
            dup |= r->at[i] == c;
        if (dup)
            continue;
        /* Kept ascending. */
        uint32_t j = r->nplan++;
        while (j > 0 && r->at[j - 1] > c) {
            r->at[j] = r->at[j - 1];
            j--;
        }
        r->at[j] = c;
    }
}

uint32_t ex_timers_fire(struct ex_timers_run *r, const struct ex_tidset *enabled,
                        const struct ex_tidset *timed)
{
    if (r->strict || ex_tidset_empty(enabled) || ex_tidset_empty(timed))
        return 0;
    r->timed++;
    if (r->ended >= r->nplan || r->at[r->ended] != r->timed)
        return 0;
    unsigned n = ex_tidset_count(timed);
    uint64_t k = ex_rng_below(&r->rng, n);
    uint32_t t = ex_tidset_next_cyclic(timed, 0);
    while (k--)
        t = ex_tidset_next_cyclic(timed, t);
    r->ended++;
    r->boost = t;
    r->boost_left = EX_TIMER_BOOST;
    return t;
}

uint32_t ex_timers_forced(struct ex_timers_run *r, const struct ex_tidset *enabled,
                          const struct ex_tidset *avoid)
{
    uint32_t t = r->boost;
    if (!t)
        return 0;
    if (!r->boost_left || !ex_tidset_has(enabled, t) || (avoid && ex_tidset_has(avoid, t))) {
        r->boost = 0; /* it blocked, slept again, spins or had its share: the strategy again */
        return 0;
    }
    r->boost_left--;
    return t;
}

void ex_timers_learn(struct ex_timers_hist *h, const struct ex_timers_run *r)
{
    h->runs++;
    if (r->timed > h->max_timed)
        h->max_timed = r->timed;
}

/* "50 ms", "1.5 s", "250 us", "800 ns". */
static void fmt_ns(char *b, size_t len, uint64_t ns)
{
    if (ns >= 1000000000ULL)
        snprintf(b, len, "%.3g s", (double)ns / 1e9);
    else if (ns >= 1000000ULL)
        snprintf(b, len, "%.3g ms", (double)ns / 1e6);
    else if (ns >= 1000ULL)
        snprintf(b, len, "%.3g us", (double)ns / 1e3);
    else
        snprintf(b, len, "%llu ns", (unsigned long long)ns);
}

char *ex_timer_end_describe(const struct ex_timer_end *t, const char *where, char *buf,
                            size_t len)
{
    char dur[32] = "", what[EX_TIMER_CALL_LEN + 64], call[EX_TIMER_CALL_LEN];
    snprintf(call, sizeof call, "%.*s", (int)strnlen(t->call, EX_TIMER_CALL_LEN - 1), t->call);
    if (t->ns)
        fmt_ns(dur, sizeof dur, t->ns);
    if (!strcmp(call, "futex"))
        snprintf(what, sizeof what, "futex wait%s%s%s", dur[0] ? " (timeout " : "", dur,
                 dur[0] ? ")" : "");
    else
        snprintf(what, sizeof what, "%s%s%s%s", call[0] ? call : "timer", dur[0] ? "(" : "",
                 dur, dur[0] ? ")" : "");
    if (t->by && t->by == t->thread) /* at its own cue point: before anyone else ran */
        snprintf(buf, len, "thread %u's %s ended early, right as it began%s%s%s", t->thread,
                 what, where && where[0] ? " (at " : "", where && where[0] ? where : "",
                 where && where[0] ? ")" : "");
    else if (t->by && where && where[0])
        snprintf(buf, len, "thread %u's %s ended early while thread %u was at %s", t->thread,
                 what, t->by, where);
    else if (t->by && t->by != t->thread)
        snprintf(buf, len, "thread %u's %s ended early while thread %u ran", t->thread, what,
                 t->by);
    else
        snprintf(buf, len, "thread %u's %s ended early", t->thread, what);
    return buf;
}
