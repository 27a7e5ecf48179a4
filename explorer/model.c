#include "model.h"
#include <stdlib.h>
#include <string.h>

int ex_model_init(struct ex_model *m, const struct ex_analysis *a)
{
    memset(m, 0, sizeof *m);
    m->a = a;
    size_t n = a->tr->n ? a->tr->n : 1;
    m->done = calloc(n, 1);
    m->order = malloc(n * sizeof *m->order);
    if (!m->done || !m->order) {
        ex_model_free(m);
        return -1;
    }
    return 0;
}

void ex_model_free(struct ex_model *m)
{
    free(m->done);
    free(m->order);
    memset(m, 0, sizeof *m);
}

void ex_model_reset(struct ex_model *m)
{
    memset(m->next, 0, sizeof m->next);
    memset(m->done, 0, m->a->tr->n);
    m->n = 0;
}

int32_t ex_model_next_event(const struct ex_model *m, uint32_t tid)
{
    if (tid == 0 || tid > EX_MAX_TID || m->next[tid] >= ex_thread_nevents(m->a, tid))
        return -1;
    return (int32_t)ex_thread_event(m->a, tid, m->next[tid]);
}

bool ex_model_is_enabled(const struct ex_model *m, uint32_t tid)
{
    int32_t e = ex_model_next_event(m, tid);
    if (e < 0)
        return false;
    int32_t d = m->a->dep[e];
    return d < 0 || m->done[d];
}

void ex_model_enabled(const struct ex_model *m, struct ex_tidset *out)
{
    ex_tidset_clear(out);
    for (uint32_t tid = 1; tid <= m->a->tr->nthreads; tid++)
        if (ex_model_is_enabled(m, tid))
            ex_tidset_add(out, tid);
}

uint32_t ex_model_step(struct ex_model *m, uint32_t tid)
{
    uint32_t e = ex_thread_event(m->a, tid, m->next[tid]++);
    m->done[e] = 1;
    m->order[m->n++] = e;
    return e;
}

void ex_model_undo(struct ex_model *m)
{
    if (m->n == 0)
        return;
    uint32_t e = m->order[--m->n];
    m->done[e] = 0;
    m->next[m->a->tr->ev[e].tid]--;
}

int ex_model_predict(const struct ex_analysis *a, const struct ex_schedule *s, uint32_t *order,
                     size_t *norder, struct ex_cursor *cur)
{
    struct ex_model m;
    struct ex_cursor c;
    if (ex_model_init(&m, a) != 0)
        return -1;
    ex_cursor_init(&c, s);
    for (;;) {
        struct ex_tidset en;
        ex_model_enabled(&m, &en);
        uint32_t t = ex_cursor_next(&c, &en);
        if (!t)
            break;
        ex_model_step(&m, t);
    }
    memcpy(order, m.order, m.n * sizeof *order);
    *norder = m.n;
    if (cur)
        *cur = c;
    ex_model_free(&m);
    return 0;
}

int ex_trace_reorder(const struct ex_trace *t, const uint32_t *order, size_t n,
                     struct ex_trace *out)
{
    ex_trace_init(out);
    int64_t *newpos = malloc((t->n ? t->n : 1) * sizeof *newpos);
    if (!newpos)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        newpos[i] = -1;
    for (size_t i = 0; i < n; i++)
        newpos[order[i]] = (int64_t)i;
    for (size_t i = 0; i < n; i++) {
        struct ex_event e = t->ev[order[i]];
        if (e.waker) {
            int64_t w = newpos[e.waker - 1];
            e.waker = w >= 0 && w < (int64_t)i ? (uint64_t)w + 1 : 0;
        }
        if (!ex_trace_append(out, &e)) {
            free(newpos);
            ex_trace_free(out);
            return -1;
        }
    }
    out->nthreads = t->nthreads;
    free(newpos);
    return 0;
}
