#include "score.h"
#include <stdlib.h>
#include <string.h>

void ex_weights_default(struct ex_weights *w)
{
    w->race_adjacent = 100;
    w->avio = 40;
    w->new_writer = 10;
    w->novel_pair = 5;
    w->adjacency_window = 2;
    w->cap = 64;
}

bool ex_outcome_is_bug(enum ex_outcome o)
{
    return o == EX_OUTCOME_CRASH || o == EX_OUTCOME_ASSERT || o == EX_OUTCOME_DEADLOCK;
}

const char *ex_outcome_name(enum ex_outcome o)
{
    switch (o) {
    case EX_OUTCOME_NORMAL: return "normal";
    case EX_OUTCOME_TIMEOUT: return "timeout";
    case EX_OUTCOME_DEADLOCK: return "deadlock";
    case EX_OUTCOME_ASSERT: return "assert";
    case EX_OUTCOME_CRASH: return "crash";
    }
    return "?";
}

/* Calls fn for every read: its name (thread, rip, occurrence) and its writer's
 * name (thread and rip of the last write to any byte it reads within its
 * 8-byte word; 0 if none in the trace). */
static int foreach_read(const struct ex_trace *t,
                        int (*fn)(uint64_t read, uint64_t writer, void *ctx), void *ctx)
{
    struct ex_u64map words, occ;    /* word -> slot; (tid, rip) -> count */
    struct byte_writers {
        int32_t w[8];
    } *slots = NULL;
    size_t nslots = 0, cap = 0;
    int rc = 0;
    ex_u64map_init(&words);
    ex_u64map_init(&occ);
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        bool added;
        uint64_t *slot = ex_u64map_put(&words, ex_word_of(e), nslots, &added);
        if (!slot)
            goto nomem;
        if (added) {
            if (nslots == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct byte_writers *nv = realloc(slots, ncap * sizeof *nv);
                if (!nv)
                    goto nomem;
                slots = nv;
                cap = ncap;
            }
            for (int k = 0; k < 8; k++)
                slots[nslots].w[k] = -1;
            nslots++;
        }
        struct byte_writers *bw = &slots[*slot];
        unsigned lo = (unsigned)(e->addr & 7), sz = e->size ? e->size : 1;
        unsigned hi = lo + sz > 8 ? 8 : lo + sz;
        if (ex_is_read(e)) {
            int32_t w = -1;
            for (unsigned k = lo; k < hi; k++)
                if (bw->w[k] > w)
                    w = bw->w[k];
            uint64_t *n = ex_u64map_put(&occ, ex_hash2(e->tid, e->rip), 0, NULL);
            if (!n)
                goto nomem;
            uint64_t name = ex_hash2(ex_hash2(e->tid, e->rip), (*n)++);
            uint64_t wname = w < 0 ? 0 : ex_hash2(t->ev[w].tid, t->ev[w].rip) | 1;
            rc = fn(name, wname, ctx);
        }
        if (ex_is_write(e))
            for (unsigned k = lo; k < hi; k++)
                bw->w[k] = (int32_t)i;
    }
    free(slots);
    ex_u64map_free(&words);
    ex_u64map_free(&occ);
    return rc;
nomem:
    free(slots);
    ex_u64map_free(&words);
    ex_u64map_free(&occ);
    return -1;
}

static int put_key(struct ex_u64map *m, uint64_t k)
{
    return ex_u64map_put(m, k, 0, NULL) ? 0 : -1;
}

static int add_pair(uint64_t key, void *ctx)
{
    return put_key(ctx, key);
}

static int add_read(uint64_t read, uint64_t writer, void *ctx)
{
    uint64_t *v = ex_u64map_put(ctx, read, writer, NULL);
    return v ? 0 : -1;
}

/* Race keys of a's races that are adjacent (b - a <= window). */
static int adjacent_races(const struct ex_analysis *a, uint32_t window, struct ex_u64map *out)
{
    for (size_t i = 0; i < a->nraces; i++)
        if (a->races[i].b - a->races[i].a <= window &&
            put_key(out, ex_race_key(a->tr, &a->races[i])) != 0)
            return -1;
    return 0;
}

void ex_baseline_free(struct ex_baseline *b)
{
    ex_u64map_free(&b->adjacent);
    ex_u64map_free(&b->avio);
    ex_u64map_free(&b->pairs);
    ex_u64map_free(&b->reads);
}

int ex_baseline_build(struct ex_baseline *b, const struct ex_analysis *rec,
                      const struct ex_weights *w)
{
    memset(b, 0, sizeof *b);
    b->rec = rec;
    if (w)
        b->w = *w;
    else
        ex_weights_default(&b->w);
    ex_u64map_init(&b->adjacent);
    ex_u64map_init(&b->avio);
    ex_u64map_init(&b->pairs);
    ex_u64map_init(&b->reads);
    if (adjacent_races(rec, b->w.adjacency_window, &b->adjacent) != 0)
        goto fail;
    for (size_t i = 0; i < rec->navio; i++)
        if (put_key(&b->avio, ex_avio_key(rec->tr, &rec->avio[i])) != 0)
            goto fail;
    if (ex_pairs_foreach(rec->tr, add_pair, &b->pairs) != 0)
        goto fail;
    if (foreach_read(rec->tr, add_read, &b->reads) != 0)
        goto fail;
    return 0;
fail:
    ex_baseline_free(b);
    return -1;
}

struct novel_ctx {
    const struct ex_baseline *b;
    const struct ex_coverage *cov;
    struct ex_u64map seen;
    uint32_t count;
};

static int count_novel(uint64_t key, void *vctx)
{
    struct novel_ctx *c = vctx;
    if (ex_u64map_get(&c->b->pairs, key) || (c->cov && ex_coverage_has(c->cov, key)))
        return 0;
    bool added;
    if (!ex_u64map_put(&c->seen, key, 0, &added))
        return -1;
    c->count += added;
    return 0;
}

struct writer_ctx {
    const struct ex_baseline *b;
    uint32_t count;
};

static int count_writer(uint64_t read, uint64_t writer, void *vctx)
{
    struct writer_ctx *c = vctx;
    const uint64_t *w = ex_u64map_get(&c->b->reads, read);
    c->count += w && *w != writer;
    return 0;
}

static uint64_t capped(uint32_t n, uint32_t cap, uint32_t weight)
{
    return (uint64_t)(n < cap ? n : cap) * weight;
}

int ex_score_simulation(const struct ex_baseline *b, const struct ex_trace *sim,
                        enum ex_outcome outcome, const struct ex_coverage *cov,
                        struct ex_score *sc)
{
    struct ex_analysis a;
    struct ex_u64map adj, av;
    memset(sc, 0, sizeof *sc);
    sc->outcome = (uint8_t)outcome;
    sc->bug = ex_outcome_is_bug(outcome);
    int rc = ex_analyze(sim, &a, NULL, 0);
    if (rc != EX_OK)
        return rc;
    ex_u64map_init(&adj);
    ex_u64map_init(&av);
    struct novel_ctx nc = { .b = b, .cov = cov };
    ex_u64map_init(&nc.seen);
    struct writer_ctx wc = { .b = b };

    if (adjacent_races(&a, b->w.adjacency_window, &adj) != 0)
        goto nomem;
    for (size_t i = 0; i < adj.cap; i++)
        sc->races_adjacent += adj.used[i] && !ex_u64map_get(&b->adjacent, adj.keys[i]);
    for (size_t i = 0; i < a.navio; i++) {
        uint64_t k = ex_avio_key(sim, &a.avio[i]);
        bool added;
        if (ex_u64map_get(&b->avio, k))
            continue;
        if (!ex_u64map_put(&av, k, 0, &added))
            goto nomem;
        sc->avio_new += added;
    }
    if (ex_pairs_foreach(sim, count_novel, &nc) != 0)
        goto nomem;
    sc->novel_pairs = nc.count;
    if (foreach_read(sim, count_writer, &wc) != 0)
        goto nomem;
    sc->new_writers = wc.count;

    const struct ex_weights *w = &b->w;
    sc->suspicion = capped(sc->races_adjacent, w->cap, w->race_adjacent) +
                    capped(sc->avio_new, w->cap, w->avio) +
                    capped(sc->new_writers, w->cap, w->new_writer) +
                    capped(sc->novel_pairs, w->cap, w->novel_pair);
    sc->rank = (sc->bug ? EX_SCORE_BUG : 0) + sc->suspicion;
    rc = EX_OK;
    goto out;
nomem:
    rc = EX_ERR_NOMEM;
out:
    ex_u64map_free(&adj);
    ex_u64map_free(&av);
    ex_u64map_free(&nc.seen);
    ex_analysis_free(&a);
    return rc;
}

int ex_score_compare(const struct ex_score *x, const struct ex_score *y)
{
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

size_t ex_select_best(const struct ex_score *scores, size_t n, struct ex_rng *rng)
{
    size_t best = 0, ties = 0;
    for (size_t i = 0; i < n; i++) {
        int c = ex_score_compare(&scores[i], &scores[best]);
        if (i == 0 || c > 0) {
            best = i;
            ties = 1;
        } else if (c == 0) {
            /* Reservoir sampling: the k-th tie replaces the pick with
             * probability 1/k, so every tie is equally likely. */
            if (ex_rng_below(rng, ++ties) == 0)
                best = i;
        }
    }
    return best;
}
