#include "history.h"
#include "condwait.h"
#include "conflict.h"
#include "splitrmw.h"
#include "dcheck.h"
#include <stdlib.h>
#include <string.h>

void ex_history_init(struct ex_history *h)
{
    memset(h, 0, sizeof *h);
    ex_u64map_init(&h->pairs);
    ex_u64map_init(&h->conflict);
    ex_u64map_init(&h->pages);
    ex_flips_init(&h->flips);
}

void ex_history_free(struct ex_history *h)
{
    for (size_t i = 0; i < h->ncorpus; i++)
        free(h->corpus[i].choices);
    free(h->corpus);
    ex_u64map_free(&h->pairs);
    ex_u64map_free(&h->conflict);
    ex_u64map_free(&h->pages);
    ex_flips_free(&h->flips);
    for (int i = 0; i < EX_HISTORY_LANES; i++)
        if (h->lane[i]) {
            ex_history_free(h->lane[i]);
            free(h->lane[i]);
        }
    ex_history_init(h);
}

uint64_t ex_history_pair_key(enum ex_pair_kind kind, uint64_t from_rip, uint64_t to_rip)
{
    return ex_hash2(ex_hash2((uint64_t)kind, from_rip), to_rip);
}

bool ex_history_seen(const struct ex_history *h, enum ex_pair_kind kind, uint64_t from_rip,
                     uint64_t to_rip)
{
    return ex_u64map_get(&h->pairs, ex_history_pair_key(kind, from_rip, to_rip)) != NULL;
}

int ex_trace_pairs(const struct ex_trace *t,
                   int (*visit)(void *ctx, enum ex_pair_kind kind, uint64_t from, uint64_t to),
                   void *ctx)
{
    /* Per word: 1 + index of the last write, 1 + index of the last access. */
    struct ex_u64map last_write, last_access;
    int rc = 0;
    ex_u64map_init(&last_write);
    ex_u64map_init(&last_access);
    for (size_t i = 0; t && i < t->n && rc == 0; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        uint64_t w = ex_word_of(e);
        uint64_t *lw = ex_u64map_put(&last_write, w, 0, NULL);
        if (!lw) {
            rc = -1;
            break;
        }
        if (ex_is_read(e)) {
            const struct ex_event *src = *lw ? &t->ev[*lw - 1] : NULL;
            if (!src)
                rc = visit(ctx, EX_PAIR_RF, 0, e->rip);
            else if (src->tid != e->tid)
                rc = visit(ctx, EX_PAIR_RF, src->rip, e->rip);
        }
        uint64_t *la = ex_u64map_put(&last_access, w, 0, NULL);
        if (!la) {
            rc = -1;
            break;
        }
        if (rc == 0 && ex_is_write(e) && *la) {
            const struct ex_event *prev = &t->ev[*la - 1];
            if (prev->tid != e->tid)
                rc = visit(ctx, EX_PAIR_INTERLEAVING, prev->rip, e->rip);
        }
        *la = i + 1;
        /* la may have moved when last_access grew, lw cannot have: re-get it. */
        if (ex_is_write(e))
            *ex_u64map_get(&last_write, w) = i + 1;
    }
    ex_u64map_free(&last_write);
    ex_u64map_free(&last_access);
    return rc ? -1 : 0;
}

struct add_ctx {
    struct ex_history *h;
    uint32_t fresh;
};

static int add_pair(void *ctx, enum ex_pair_kind kind, uint64_t from, uint64_t to)
{
    struct add_ctx *c = ctx;
    bool added = false;
    if (!ex_u64map_put(&c->h->pairs, ex_history_pair_key(kind, from, to), 0, &added))
        return -1;
    if (added) {
        c->fresh++;
        if (kind == EX_PAIR_RF)
            c->h->rf_pairs++;
        else
            c->h->interleaving_pairs++;
    }
    return 0;
}

/* The slot a new corpus entry takes: a free one, else the lightest (oldest
 * among equals) if the newcomer weighs at least as much; -1 to drop it. */
static long corpus_slot(const struct ex_history *h, uint32_t weight)
{
    if (h->ncorpus < EX_HISTORY_MAX_CORPUS)
        return (long)h->ncorpus;
    size_t worst = 0;
    for (size_t i = 1; i < h->ncorpus; i++) {
        const struct ex_corpus_entry *a = &h->corpus[i], *b = &h->corpus[worst];
        if (a->weight < b->weight || (a->weight == b->weight && a->run < b->run))
            worst = i;
    }
    return h->corpus[worst].weight <= weight ? (long)worst : -1;
}

static int corpus_add(struct ex_history *h, const uint32_t *choices, size_t n, uint32_t weight,
                      uint64_t racy)
{
    long slot = corpus_slot(h, weight);
    if (slot < 0)
        return 0;
    if (!h->corpus) {
        h->corpus = calloc(EX_HISTORY_MAX_CORPUS, sizeof *h->corpus);
        if (!h->corpus)
            return -1;
    }
    if (n > SIZE_MAX / sizeof *choices)
        return -1;
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, choices, n * sizeof *copy);
    struct ex_corpus_entry *e = &h->corpus[slot];
    if ((size_t)slot == h->ncorpus)
        h->ncorpus++;
    else
        free(e->choices);
    e->choices = copy;
    e->n = n;
    e->weight = weight;
    e->run = h->runs;
    e->racy = racy;
    return 0;
}

int ex_history_add_run(struct ex_history *h, const uint32_t *choices, size_t n,
                       const struct ex_trace *trace, enum ex_outcome outcome,
                       uint32_t *new_pairs)
{
    struct add_ctx c = { h, 0 };
    int rc = 0;
    uint64_t racy = 0, racy_data = 0, windows = 0;
    if (new_pairs)
        *new_pairs = 0;
    if (trace && ex_trace_pairs(trace, add_pair, &c) != 0)
        rc = -1;
    if (rc == 0 && ex_conflicts_learn(&h->conflict, trace, &racy, &racy_data, &windows) != 0)
        rc = -1;
    if (rc == 0 && c.fresh > 0 && choices && n > 0 &&
        corpus_add(h, choices, n, c.fresh, racy) != 0)
        rc = -1;
    if (racy > h->max_racy)
        h->max_racy = racy;
    if (racy_data > h->max_racy_data)
        h->max_racy_data = racy_data;
    if (trace) {
        h->total_racy += racy;
        h->total_racy_data += racy_data;
        h->total_windows += windows;
        h->traced++;
        h->last_racy = racy, h->last_racy_data = racy_data, h->last_windows = windows;
        uint64_t older = 0;
        if (ex_trace_cond_waits_older(trace, &older) > 0 && !h->cond_waits) {
            h->cond_waits = true; /* the wake slots' gate (condwait.h, online_wake.c) */
            h->cond_from = h->runs + 1; /* the next schedule's index */
        }
        uint64_t var = 0;
        uint64_t dvar = 0;
        if (!h->dchecks && ex_trace_double_checks(trace, &h->conflict, &dvar) > 0) {
            h->dchecks = true; /* the early slot's other gate (dcheck.h, online_portfolio.c) */
            h->dcheck_from = h->runs + 1;
            h->dcheck_var = dvar;
        }
        if (!h->split_updates && ex_trace_split_updates(trace, &h->conflict, &var) > 0) {
            h->split_updates = true; /* the early slot's gate (splitrmw.h, online_portfolio.c) */
            h->split_from = h->runs + 1;
            h->split_var = var;
        }
        if (older > 0 && !h->cond_older) {
            h->cond_older = true; /* the wake slots' order (online_wake.c) */
            h->cond_older_from = h->runs + 1;
        }
    }
    if (n > h->max_steps)
        h->max_steps = n;
    h->total_steps += n;
    h->bugs += ex_outcome_is_bug(outcome);
    h->runs++;
    if (new_pairs)
        *new_pairs = c.fresh;
    return rc;
}

uint64_t ex_history_step_estimate(const struct ex_history *h, uint64_t dflt)
{
    return h && h->max_steps > 0 ? h->max_steps : dflt;
}

uint64_t ex_history_racy_estimate(const struct ex_history *h, uint64_t dflt)
{
    return h && h->total_racy > 0 ? (h->total_racy + h->traced - 1) / h->traced : dflt;
}

uint64_t ex_history_data_racy_estimate(const struct ex_history *h, uint64_t dflt)
{
    return h && h->total_racy_data > 0 ? (h->total_racy_data + h->traced - 1) / h->traced
                                       : dflt;
}

uint64_t ex_history_window_estimate(const struct ex_history *h, uint64_t dflt)
{
    return h && h->total_windows > 0 ? (h->total_windows + h->traced - 1) / h->traced : dflt;
}

uint64_t ex_history_conflict_class(const struct ex_history *h, uint64_t addr)
{
    const uint64_t *c = h ? ex_u64map_get(&h->conflict, addr) : NULL;
    return c ? *c : 0;
}

int ex_history_add_page(struct ex_history *h, uint64_t page, size_t max)
{
    if (ex_u64map_get(&h->pages, page) || h->pages.n >= max)
        return 0;
    return ex_u64map_put(&h->pages, page, 1, NULL) ? 0 : -1;
}

size_t ex_history_pages(const struct ex_history *h, uint64_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; h && i < h->pages.cap && n < max; i++)
        if (h->pages.used[i])
            out[n++] = h->pages.keys[i];
    if (n > 1) /* out may be NULL when max is 0 (UBSan: qsort's argument is nonnull) */
        qsort(out, n, sizeof *out, ex_u64_cmp);
    return n;
}
