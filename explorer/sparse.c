/* Sparse schedules: the learnt model, the plan and PCT over decisions (sparse.h). */
#include "sparse.h"
#include "race.h"
#include "syncdep.h"
#include <stdlib.h>
#include <string.h>

/* Initial priorities sit above every lowered one: lowered ones count down from r->low,
 * which starts at SPARSE_PRIO_BASE, below the smallest initial priority, and never runs
 * out (2^40 drops). It once started at 260 and stopped dropping after that many yields:
 * a spin barrier's waiter then kept the turn, and every sparse run of a phased program
 * spun until its budget. */
#define SPARSE_PRIO_BASE (1ULL << 40)

void ex_sparse_model_init(struct ex_sparse_model *m)
{
    memset(m, 0, sizeof *m);
    ex_u64map_init(&m->site_of);
    ex_u64map_init(&m->var_of);
}

void ex_sparse_model_free(struct ex_sparse_model *m)
{
    free(m->site);
    free(m->next_site);
    free(m->var);
    ex_u64map_free(&m->site_of);
    ex_u64map_free(&m->var_of);
    ex_sparse_model_init(m);
}

static bool is_access(const struct ex_event *e)
{
    return e->kind == EX_READ || e->kind == EX_WRITE || e->kind == EX_RMW;
}

static struct ex_sparse_var *var_of(struct ex_sparse_model *m, uint64_t addr)
{
    bool added;
    uint64_t *slot = ex_u64map_put(&m->var_of, addr, 0, &added);
    if (!slot)
        return NULL;
    if (!added)
        return &m->var[*slot - 1];
    if (m->nvar == m->capvar) {
        size_t ncap = m->capvar ? m->capvar * 2 : 64;
        struct ex_sparse_var *nv = realloc(m->var, ncap * sizeof *nv);
        if (!nv) {
            *slot = 0; /* an entry that names no variable: looked up as absent below */
            return NULL;
        }
        m->var = nv;
        m->capvar = ncap;
    }
    m->var[m->nvar] = (struct ex_sparse_var){.addr = addr};
    ex_tidset_clear(&m->var[m->nvar].threads);
    *slot = ++m->nvar;
    return &m->var[m->nvar - 1];
}

/* The site (tid, rip) of variable vi, made if new. NULL: no memory or too many sites. */
static struct ex_sparse_site *site_of(struct ex_sparse_model *m, uint32_t tid, uint64_t rip,
                                      size_t vi)
{
    uint64_t key = ex_hash2(rip, tid);
    bool added;
    uint64_t *slot = ex_u64map_put(&m->site_of, key, 0, &added);
    if (!slot)
        return NULL;
    if (!added && *slot)
        return &m->site[*slot - 1];
    if (m->nsite >= EX_SPARSE_MAX_SITES)
        return NULL;
    if (m->nsite == m->capsite) {
        size_t ncap = m->capsite ? m->capsite * 2 : 64;
        struct ex_sparse_site *ns = realloc(m->site, ncap * sizeof *ns);
        if (!ns)
            return NULL;
        m->site = ns;
        uint32_t *nn = realloc(m->next_site, ncap * sizeof *nn);
        if (!nn)
            return NULL;
        m->next_site = nn;
        m->capsite = ncap;
    }
    size_t i = m->nsite++;
    m->site[i] = (struct ex_sparse_site){.rip = rip, .var = m->var[vi].addr, .tid = tid};
    /* Chained from its variable: the first variable a site was met with keeps it. */
    m->next_site[i] = m->var[vi].first_site;
    m->var[vi].first_site = (uint32_t)(i + 1);
    *slot = i + 1;
    return &m->site[i];
}

/* Marks the variables of t's races (race.h). 0, or -1 out of memory. A trace that is
 * not well-formed (trace.h) marks none. */
static int mark_races(struct ex_sparse_model *m, const struct ex_trace *t)
{
    char why[96];
    if (!t->n || !ex_trace_validate(t, why, sizeof why))
        return 0; /* happens-before needs a well-formed trace: no race is marked */
    int32_t *dep = malloc(t->n * sizeof *dep);
    struct ex_hb hb;
    memset(&hb, 0, sizeof hb);
    struct ex_race *races = NULL;
    size_t nraces = 0;
    int rc = -1;
    if (dep && ex_syncdeps(t, dep) == 0 && ex_hb_build(&hb, t, dep) == 0 &&
        ex_races_find(t, &hb, 0, &races, &nraces) == 0) {
        for (size_t i = 0; i < nraces; i++) {
            const uint32_t ab[2] = {races[i].a, races[i].b};
            for (int k = 0; k < 2; k++) {
                const uint64_t *vi = ex_u64map_get(&m->var_of, t->ev[ab[k]].addr);
                if (vi && *vi)
                    m->var[*vi - 1].raced = true;
            }
        }
        rc = 0;
    }
    free(races);
    ex_hb_free(&hb);
    free(dep);
    return rc;
}

void ex_sparse_skip_code(struct ex_sparse_model *m, uint64_t lo, uint64_t hi)
{
    if (lo >= hi || m->nskip >= EX_SPARSE_MAX_SKIP)
        return;
    m->skip[m->nskip][0] = lo;
    m->skip[m->nskip][1] = hi;
    m->nskip++;
}

static bool skipped(const struct ex_sparse_model *m, uint64_t rip)
{
    for (uint32_t i = 0; i < m->nskip; i++)
        if (rip >= m->skip[i][0] && rip < m->skip[i][1])
            return true;
    return false;
}

int ex_sparse_learn(struct ex_sparse_model *m, const struct ex_trace *t, bool complete,
                    const struct ex_u64map *shared_pages)
{
    /* Hits per (tid, rip) in this run; a site keeps the most any run had. */
    struct ex_u64map hits;
    ex_u64map_init(&hits);
    int rc = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!is_access(e) || !e->rip || e->rip > EX_MAX_PREEMPT_RIP || skipped(m, e->rip))
            continue;
        struct ex_sparse_var *v = var_of(m, e->addr);
        if (!v) {
            rc = -1;
            continue;
        }
        v->accesses++;
        ex_tidset_add(&v->threads, e->tid);
        if (v->run != m->runs + 1) {
            v->run = m->runs + 1;
            ex_tidset_clear(&v->seen);
        }
        ex_tidset_add(&v->seen, e->tid);
        v->together |= ex_tidset_count(&v->seen) >= 2;
        ex_tidset_add(&m->threads, e->tid);
        if (shared_pages && ex_u64map_get(shared_pages, e->addr & ~(uint64_t)(EX_SCHED_PAGE - 1)))
            v->on_shared = true;
        v->written |= e->kind != EX_READ;
        v->off_stack |= !(e->flags & EX_F_STACK);
        uint64_t *h = ex_u64map_put(&hits, ex_hash2(e->rip, e->tid), 0, NULL);
        if (!h) {
            rc = -1;
            continue;
        }
        ++*h;
        struct ex_sparse_site *s = site_of(m, e->tid, e->rip, (size_t)(v - m->var));
        if (!s) {
            rc = -1;
            continue;
        }
        if (*h > s->hits || (complete && !s->exact)) {
            /* An exact count replaces a bound; a bound never lowers an exact count. */
            if (complete || !s->exact)
                s->hits = *h > UINT32_MAX ? UINT32_MAX : (uint32_t)*h;
        }
    }
    /* A site met in a run that ended has its count: that run's (the largest of them). */
    if (complete)
        for (size_t i = 0; i < m->nsite; i++)
            if (ex_u64map_get(&hits, ex_hash2(m->site[i].rip, m->site[i].tid)))
                m->site[i].exact = true;
    ex_u64map_free(&hits);
    if (mark_races(m, t) != 0)
        rc = -1;
    m->runs++;
    return rc;
}

static bool racy(const struct ex_sparse_var *v)
{
    if (!v->written || !v->first_site)
        return false;
    if (v->raced)
        return true;
    if (!v->off_stack && ex_tidset_count(&v->threads) < 2)
        return false; /* one thread's own frames */
    return !v->together && (v->on_shared || ex_tidset_count(&v->threads) >= 2);
}

/* Written by one thread and accessed by another, but ordered in every run learnt (a
 * seqlock's record, ordered by its sequence number's atomics; data published by a flag):
 * another interleaving may break the order the runs saw. */
static bool ordered_shared(const struct ex_sparse_var *v)
{
    return !racy(v) && v->written && v->first_site && ex_tidset_count(&v->threads) >= 2;
}

/* The pool a point is drawn from: racy variables, or ordered shared ones. */
static bool in_pool(const struct ex_sparse_var *v, bool ordered)
{
    return ordered ? ordered_shared(v) : racy(v);
}

size_t ex_sparse_racy_vars(const struct ex_sparse_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nvar; i++)
        n += racy(&m->var[i]);
    return n;
}

void ex_sparse_run_init(struct ex_sparse_run *r)
{
    memset(r, 0, sizeof *r);
}

void ex_sparse_run_free(struct ex_sparse_run *r)
{
    free(r->choices);
    ex_sparse_run_init(r);
}

/* A variable's weight among the racy ones: 1 + floor(log2(accesses)). */
static uint64_t weight(const struct ex_sparse_var *v)
{
    uint64_t w = 1;
    for (uint64_t a = v->accesses; a > 1; a >>= 1)
        w++;
    return w;
}

/* The instruction a variable's draw is grouped by: its first site's. */
static uint64_t group_of(const struct ex_sparse_model *m, const struct ex_sparse_var *v)
{
    return m->site[v->first_site - 1].rip;
}

/* Counts the variables of the pool of each instruction into *groups (rip -> count). Out
 * of memory: fewer counted, every weight still valid. */
static void count_groups(const struct ex_sparse_model *m, struct ex_u64map *groups, bool ordered)
{
    for (size_t i = 0; i < m->nvar; i++)
        if (in_pool(&m->var[i], ordered)) {
            uint64_t *n = ex_u64map_put(groups, group_of(m, &m->var[i]), 0, NULL);
            if (n)
                ++*n;
        }
}

/* A racy variable's share of the draw: its weight (EX_SPARSE_WEIGHT_SCALE units each)
 * over the number of racy variables its instruction (its first site's) accessed. A point
 * is an instruction: the variables one instruction accesses, a slot each (per-thread or
 * per-chunk data: the C library's thread descriptors at thread exit, ~900 of them in a
 * 160-thread program, partial sums, an array of accounts), give the same points and
 * weigh as one variable together, not as hundreds that drown the one that raced. */
static uint64_t draw_weight(const struct ex_sparse_model *m, const struct ex_sparse_var *v,
                            const struct ex_u64map *groups)
{
    uint64_t w = weight(v) * EX_SPARSE_WEIGHT_SCALE;
    const uint64_t *n = ex_u64map_get(groups, group_of(m, v));
    if (n && *n > 1)
        w /= *n;
    return w ? w : 1;
}

/* Log-uniform in [2^from, cap]: an octave 2^o..2^(o+1)-1 with from <= o and 2^o <= cap,
 * then uniform within it, at most cap. */
static uint32_t log_uniform(struct ex_rng *rng, uint32_t from, uint32_t cap)
{
    uint32_t octaves = 0; /* the highest o with 2^o <= cap */
    while ((2u << octaves) <= cap)
        octaves++;
    uint32_t o = from + (uint32_t)ex_rng_below(rng, octaves + 1 - from);
    uint32_t count = (1u << o) + (uint32_t)ex_rng_below(rng, 1u << o);
    return count > cap ? cap : count;
}

/* A count when only a lower bound is known: log-uniform in [1, EX_SPARSE_MAX_COUNT]. */
static uint32_t log_count(struct ex_sparse_run *r)
{
    return log_uniform(&r->rng, 0, EX_SPARSE_MAX_COUNT);
}

/* A change point: a variable of the pool by weight, then one of its sites, a thread and a
 * count. 1 when drawn, 0 when the site is known never to run (drawn again), -1 no
 * variable. */
static int draw_point(struct ex_sparse_run *r, const struct ex_sparse_model *m,
                      const struct ex_u64map *groups, uint64_t total, bool ordered,
                      struct ex_schedule *plan)
{
    uint64_t k = ex_rng_below(&r->rng, total);
    const struct ex_sparse_var *v = NULL;
    for (size_t i = 0; i < m->nvar && !v; i++) {
        if (!in_pool(&m->var[i], ordered))
            continue;
        uint64_t w = draw_weight(m, &m->var[i], groups);
        if (k < w)
            v = &m->var[i];
        else
            k -= w;
    }
    if (!v)
        return -1;
    uint32_t nsites = 0;
    for (uint32_t s = v->first_site; s; s = m->next_site[s - 1])
        nsites++;
    uint64_t pick = ex_rng_below(&r->rng, nsites);
    uint32_t s = v->first_site;
    while (pick--)
        s = m->next_site[s - 1];
    const struct ex_sparse_site *site = &m->site[s - 1];
    uint32_t tid = site->tid, nthreads = ex_tidset_count(&m->threads);
    /* Whose executions count: the site's thread (half of the time), any one thread the
     * runs showed, or every thread (thread 0: whichever makes the count-th). */
    uint64_t whose = m->own_threads ? 0 : ex_rng_below(&r->rng, 4);
    if (whose == 3) {
        if (ex_schedule_add_preempt(plan, 0, site->rip, log_count(r)) == 0)
            r->point_var[plan->npreempt - 1] = v->addr;
        return 1;
    }
    if (nthreads && whose == 2) {
        uint64_t j = ex_rng_below(&r->rng, nthreads);
        tid = ex_tidset_next_cyclic(&m->threads, 0);
        while (j--)
            tid = ex_tidset_next_cyclic(&m->threads, tid);
        const uint64_t *known = ex_u64map_get(&m->site_of, ex_hash2(site->rip, tid));
        if (known && *known)
            site = &m->site[*known - 1]; /* that thread's own count of the site */
    }
    uint32_t count;
    if (site->exact && site->tid == tid) {
        if (!site->hits)
            return 0; /* that thread never runs it */
        /* A count is one schedule's: another may run the site more often (a withdrawal
         * that succeeds only while money is left), so half as much again. */
        uint64_t top = (uint64_t)site->hits + site->hits / 2 + 1;
        if (top > EX_SPARSE_MAX_COUNT)
            top = EX_SPARSE_MAX_COUNT;
        count = 1 + (uint32_t)ex_rng_below(&r->rng, top);
    } else {
        count = log_count(r);
    }
    /* A repeat of a (thread, rip) already planned is dropped: the plan has fewer points. */
    if (ex_schedule_add_preempt(plan, tid, site->rip, count) == 0)
        r->point_var[plan->npreempt - 1] = v->addr;
    return 1;
}

int ex_sparse_observe(struct ex_sparse_model *m, const struct ex_sparse_run *r,
                      const struct ex_schedule *plan, const uint32_t *hits)
{
    int rc = 0;
    for (uint32_t i = 0; i < plan->npreempt && i < EX_MAX_PREEMPTS; i++) {
        const struct ex_preempt *p = &plan->preempt[i];
        if (hits[i] >= p->count || !p->thread || p->chain)
            continue; /* it fired: only a lower bound (any thread's: no one site's count; a
                       * chained one's: counted after its point only) */
        const uint64_t *vi = ex_u64map_get(&m->var_of, r->point_var[i]);
        struct ex_sparse_site *s =
            vi && *vi ? site_of(m, p->thread, p->rip, (size_t)(*vi - 1)) : NULL;
        if (!s) {
            rc = -1;
            continue;
        }
        if (!s->exact || hits[i] > s->hits)
            s->hits = hits[i];
        s->exact = true;
    }
    return rc;
}

/* A chained point (explorer/schedule.h) after one of plan's points, drawn with rng: the
 * same variable, another of its sites (another instruction), any thread, a small count.
 * True if one was added. */
static bool chain_point(struct ex_sparse_run *r, struct ex_rng *rng,
                        const struct ex_sparse_model *m, struct ex_schedule *plan)
{
    uint32_t k = (uint32_t)ex_rng_below(rng, plan->npreempt);
    const struct ex_preempt *first = &plan->preempt[k];
    const uint64_t *vi = ex_u64map_get(&m->var_of, r->point_var[k]);
    if (first->chain || first->match || !vi || !*vi)
        return false;
    const struct ex_sparse_var *v = &m->var[*vi - 1];
    uint32_t nsites = 0;
    for (uint32_t s = v->first_site; s; s = m->next_site[s - 1])
        nsites += m->site[s - 1].rip != first->rip;
    if (!nsites)
        return false;
    uint64_t pick = ex_rng_below(rng, nsites);
    uint32_t s = v->first_site;
    for (;; s = m->next_site[s - 1])
        if (m->site[s - 1].rip != first->rip && pick-- == 0)
            break;
    /* The next execution half of the time (the racing access itself), else log-uniform
     * in [2, EX_SPARSE_CHAIN_COUNT]: one of the next few. */
    uint32_t count = ex_rng_below(rng, 2) ? log_uniform(rng, 1, EX_SPARSE_CHAIN_COUNT) : 1;
    /* Whoever runs it next (rounds: own_threads, the thread that showed the site). */
    uint32_t tid = m->own_threads ? m->site[s - 1].tid : 0;
    if (ex_schedule_add_preempt(plan, tid, m->site[s - 1].rip, count) != 0)
        return false;
    if (ex_schedule_chain_preempt(plan, plan->npreempt - 1, k + 1) != 0) {
        plan->npreempt--;
        return false;
    }
    r->point_var[plan->npreempt - 1] = v->addr;
    return true;
}

int ex_sparse_begin(struct ex_sparse_run *r, const struct ex_sparse_model *m, uint64_t seed,
                    uint64_t index, struct ex_schedule *plan)
{
    uint32_t *choices = r->choices;
    size_t cap = r->cap;
    memset(r, 0, sizeof *r);
    r->choices = choices; /* the buffer stays for the next run */
    r->cap = cap;
    ex_rng_seed(&r->rng, ex_hash2(seed ^ 0x5ea75e5ea75eULL, index));
    r->low = SPARSE_PRIO_BASE;
    ex_schedule_reset(plan);
    plan->sparse = true;
    /* Two pools: the racy variables, and the ordered shared ones (ordered_shared), each
     * weighed among its own. */
    struct ex_u64map groups[2];
    size_t n[2] = {0, 0};
    uint64_t total[2] = {0, 0};
    for (int o = 0; o < 2; o++) {
        ex_u64map_init(&groups[o]);
        count_groups(m, &groups[o], o);
        for (size_t i = 0; i < m->nvar; i++)
            if (in_pool(&m->var[i], o)) {
                n[o]++;
                total[o] += draw_weight(m, &m->var[i], &groups[o]);
            }
    }
    uint32_t npoints = n[0] || n[1] ? 1 + (uint32_t)ex_rng_below(&r->rng, EX_SPARSE_MAX_POINTS) : 0;
    int rc = 0;
    for (uint32_t i = 0; i < npoints && rc == 0; i++) {
        /* One point in EX_SPARSE_ORDERED_DIV is an ordered shared variable's (all of
         * them when nothing is racy): the order a run saw is not the only one. */
        bool o = n[1] && (!n[0] || ex_rng_below(&r->rng, EX_SPARSE_ORDERED_DIV) == 0);
        for (uint32_t tries = 0; tries < EX_SPARSE_DRAWS; tries++) {
            int got = draw_point(r, m, &groups[o], total[o], o, plan);
            if (got < 0)
                rc = -1;
            if (got != 0)
                break;
        }
    }
    ex_u64map_free(&groups[0]);
    ex_u64map_free(&groups[1]);
    if (rc < 0)
        return -1;
    /* One plan in EX_SPARSE_CHAIN_DIV also gets a chained point, drawn from a stream of
     * its own: the other points and the priorities are those of the plan without it. */
    struct ex_rng crng;
    ex_rng_seed(&crng, ex_hash2(seed ^ 0xc4a14ed0c4a1ULL, index));
    bool chained = plan->npreempt && ex_rng_below(&crng, EX_SPARSE_CHAIN_DIV) == 0 &&
                   chain_point(r, &crng, m, plan);
    ex_schedule_set_note(plan, "sparse pct points=%u%s racy_vars=%zu ordered_vars=%zu",
                         plan->npreempt, chained ? " (1 chained)" : "", n[0], n[1]);
    return 0;
}

static void record(struct ex_sparse_run *r, uint32_t t)
{
    if (!r->lost && ex_u32_append(&r->choices, &r->nchoices, &r->cap, t) != 0)
        r->lost = true;
}


uint32_t ex_sparse_next(struct ex_sparse_run *r, const struct ex_tidset *enabled,
                        const struct ex_tidset *avoid, const struct ex_event *last)
{
    bool fresh = last && last->seq + 1 > r->seen; /* a pick without a new cue point: no */
    if (fresh)
        r->seen = last->seq + 1;
    if (fresh && last->tid <= EX_MAX_TID && last->kind == EX_SYNC_OTHER && r->low > 1) {
        /* (r->low > 1 holds for 2^40 drops: no run gets that far) */
        /* A change point fired, or the thread yielded or slept: it goes below everyone. */
        r->prio[last->tid] = --r->low;
        r->lowered++;
    }
    uint32_t best = 0, best_avoided = 0;
    for (uint32_t t = ex_tidset_next_cyclic(enabled, 0), first = t; t;) {
        if (!r->prio[t])
            r->prio[t] = SPARSE_PRIO_BASE + 1 + ex_rng_below(&r->rng, 1u << 20);
        bool av = avoid && ex_tidset_has(avoid, t);
        uint32_t *b = av ? &best_avoided : &best;
        if (!*b || r->prio[t] > r->prio[*b])
            *b = t;
        t = ex_tidset_next_cyclic(enabled, t);
        if (t == first)
            break;
    }
    uint32_t pick = best ? best : best_avoided;
    if (pick)
        record(r, pick);
    return pick;
}

int ex_sparse_schedule(const struct ex_sparse_run *r, const struct ex_schedule *plan,
                       struct ex_schedule *out)
{
    if (r->lost || ex_schedule_from_choices(out, r->choices, r->nchoices) != 0)
        return -1;
    out->policy = EX_DEFAULT_CONTINUE;
    out->sparse = true;
    out->npreempt = plan->npreempt;
    memcpy(out->preempt, plan->preempt, sizeof out->preempt);
    out->nyield = plan->nyield;
    memcpy(out->yield, plan->yield, sizeof out->yield);
    memcpy(out->note, plan->note, sizeof out->note);
    return 0;
}
