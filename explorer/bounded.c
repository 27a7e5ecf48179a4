#include "bounded.h"
#include "model.h"
#include <stdlib.h>

struct frame {
    struct ex_tidset todo;  /* children not tried yet */
    uint32_t last;          /* thread that ran before this step (0 = none) */
    uint32_t pre;           /* preemptions used before this step */
    bool last_enabled;      /* continuing `last` was possible */
};

static void enter(struct frame *f, const struct ex_model *m, uint32_t last, uint32_t pre)
{
    ex_model_enabled(m, &f->todo);
    f->last = last;
    f->pre = pre;
    f->last_enabled = last && ex_tidset_has(&f->todo, last);
}

long ex_bounded_enumerate(const struct ex_analysis *a, uint32_t preemptions,
                          uint32_t window_start, uint32_t window_len, uint64_t max,
                          int (*visit)(const uint32_t *tids, size_t n, void *ctx), void *ctx)
{
    size_t n = a->tr->n;
    struct ex_model m;
    if (ex_model_init(&m, a) != 0)
        return -1;
    uint32_t *tids = malloc((n ? n : 1) * sizeof *tids);
    size_t start = window_start < n ? window_start : n;
    size_t len = window_len == 0 || window_len > n - start ? n - start : window_len;
    struct frame *fr = malloc((len + 1) * sizeof *fr);
    if (!tids || !fr) {
        free(tids);
        free(fr);
        ex_model_free(&m);
        return -1;
    }
    /* The recorded prefix. */
    for (size_t i = 0; i < start; i++) {
        tids[i] = a->tr->ev[i].tid;
        ex_model_step(&m, tids[i]);
    }
    long visited = 0;
    size_t depth = 0;
    enter(&fr[0], &m, start ? tids[start - 1] : 0, 0);
    for (;;) {
        struct frame *f = &fr[depth];
        bool leaf = depth == len || ex_model_finished(&m);
        if (leaf) {
            visited++;
            if (visit(tids, start + depth, ctx) != 0 || (max && (uint64_t)visited >= max))
                break;
            ex_tidset_clear(&f->todo);
        }
        /* Next child of this frame, continue-first, within the bound. */
        uint32_t c = 0, cost = 0;
        if (f->last_enabled && ex_tidset_has(&f->todo, f->last)) {
            c = f->last;
        } else {
            while (!ex_tidset_empty(&f->todo)) {
                uint32_t t = ex_tidset_next_cyclic(&f->todo, 0);
                cost = f->last_enabled && t != f->last;
                if (f->pre + cost <= preemptions) {
                    c = t;
                    break;
                }
                ex_tidset_del(&f->todo, t);
            }
        }
        if (c) {
            ex_tidset_del(&f->todo, c);
            ex_model_step(&m, c);
            tids[start + depth] = c;
            depth++;
            enter(&fr[depth], &m, c, f->pre + cost);
            continue;
        }
        if (depth == 0)
            break;
        ex_model_undo(&m);
        depth--;
    }
    free(tids);
    free(fr);
    ex_model_free(&m);
    return visited;
}

struct gen_ctx {
    const struct ex_analysis *a;
    struct ex_schedule_set *out;
    uint32_t want, made, c, start;
    int err;
};

static int add_one(const uint32_t *tids, size_t n, void *vctx)
{
    struct gen_ctx *g = vctx;
    struct ex_schedule s;
    ex_schedule_init(&s);
    if (ex_schedule_from_choices(&s, tids, n) != 0) {
        g->err = 1;
        ex_schedule_free(&s);
        return 1;
    }
    ex_schedule_set_note(&s, "bounded c=%u window=%u+%zu #%u", g->c, g->start,
                         n - g->start, g->made);
    int rc = ex_schedule_set_add_unique(g->out, &s);
    ex_schedule_free(&s);
    if (rc < 0) {
        g->err = 1;
        return 1;
    }
    g->made += (uint32_t)rc;
    return g->made >= g->want;
}

int ex_bounded_generate(const struct ex_analysis *a, const struct ex_params *p,
                        struct ex_rng *rng, struct ex_schedule_set *out)
{
    (void)rng; /* exhaustive: nothing to draw */
    struct gen_ctx g = { a, out, p->max_schedules, 0, p->bounded_preemptions,
                         p->bounded_window_start, 0 };
    if (p->max_schedules == 0)
        return 0;
    long rc = ex_bounded_enumerate(a, p->bounded_preemptions, p->bounded_window_start,
                                   p->bounded_window_len, 0, add_one, &g);
    if (rc < 0 || g.err)
        return -1;
    return (int)g.made;
}
