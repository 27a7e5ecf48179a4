#include "trace.h"
#include "u64map.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

unsigned ex_tidset_count(const struct ex_tidset *s)
{
    return (unsigned)(__builtin_popcountll(s->w[0]) + __builtin_popcountll(s->w[1]) +
                      __builtin_popcountll(s->w[2]) + __builtin_popcountll(s->w[3]));
}

uint32_t ex_tidset_next_cyclic(const struct ex_tidset *s, uint32_t after)
{
    for (uint32_t t = after + 1; t <= EX_MAX_TID; t++)
        if (ex_tidset_has(s, t))
            return t;
    for (uint32_t t = 1; t <= after && t <= EX_MAX_TID; t++)
        if (ex_tidset_has(s, t))
            return t;
    return 0;
}

bool ex_overlap(const struct ex_event *a, const struct ex_event *b)
{
    uint64_t asz = a->size ? a->size : 1, bsz = b->size ? b->size : 1;
    /* Written to avoid overflow at the top of the address space. */
    return a->addr <= b->addr ? b->addr - a->addr < asz : a->addr - b->addr < bsz;
}

void ex_trace_init(struct ex_trace *t)
{
    memset(t, 0, sizeof *t);
}

void ex_trace_free(struct ex_trace *t)
{
    free(t->ev);
    ex_trace_init(t);
}

struct ex_event *ex_trace_append(struct ex_trace *t, const struct ex_event *e)
{
    if (t->n >= EX_MAX_EVENTS)
        return NULL;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        struct ex_event *nv = realloc(t->ev, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        t->ev = nv;
        t->cap = ncap;
    }
    struct ex_event *d = &t->ev[t->n];
    *d = *e;
    d->seq = t->n++;
    if (d->page == 0)
        d->page = d->addr & ~(uint64_t)0xfff;
    d->sym[EX_SYM_LEN - 1] = 0;
    d->insn[EX_INSN_LEN - 1] = 0;
    if (d->tid > t->nthreads && d->tid <= EX_MAX_TID)
        t->nthreads = d->tid;
    if (d->kind == EX_THREAD_CREATE && d->arg > t->nthreads && d->arg <= EX_MAX_TID)
        t->nthreads = d->arg;
    return d;
}

struct ex_event *ex_trace_access(struct ex_trace *t, uint32_t tid, enum ex_kind kind,
                                 uint64_t addr, uint16_t size, uint8_t flags, uint64_t rip)
{
    struct ex_event e;
    memset(&e, 0, sizeof e);
    e.tid = tid;
    e.kind = (uint8_t)kind;
    e.addr = addr;
    e.size = size;
    e.flags = flags;
    e.rip = rip;
    return ex_trace_append(t, &e);
}

struct ex_event *ex_trace_sync(struct ex_trace *t, uint32_t tid, enum ex_kind kind,
                               uint64_t addr, uint32_t arg)
{
    struct ex_event e;
    memset(&e, 0, sizeof e);
    e.tid = tid;
    e.kind = (uint8_t)kind;
    e.addr = addr;
    e.arg = arg;
    return ex_trace_append(t, &e);
}

int ex_trace_copy(struct ex_trace *dst, const struct ex_trace *src)
{
    ex_trace_init(dst);
    if (src->n) {
        dst->ev = malloc(src->n * sizeof *dst->ev);
        if (!dst->ev)
            return -1;
        memcpy(dst->ev, src->ev, src->n * sizeof *dst->ev);
    }
    dst->n = dst->cap = src->n;
    dst->nthreads = src->nthreads;
    return 0;
}

static bool bad(char *why, size_t len, const char *msg, size_t i)
{
    if (why && len)
        snprintf(why, len, "event %zu: %s", i, msg);
    return false;
}

bool ex_trace_validate(const struct ex_trace *t, char *why, size_t whylen)
{
    if (t->n && !t->ev)
        return bad(why, whylen, "no event array", 0);
    if (t->nthreads > EX_MAX_TID)
        return bad(why, whylen, "nthreads out of range", 0);
    if (t->n > EX_MAX_EVENTS)
        return bad(why, whylen, "too many events", 0);
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (e->seq != i)
            return bad(why, whylen, "seq is not the event's index", i);
        if (e->tid == 0 || e->tid > t->nthreads)
            return bad(why, whylen, "thread id out of range", i);
        if (e->kind < EX_READ || e->kind > EX_KIND_MAX_)
            return bad(why, whylen, "unknown kind", i);
        if (e->flags & ~EX_F_ALL_)
            return bad(why, whylen, "unknown flags", i);
        if (ex_is_access(e) && e->size > 4096)
            return bad(why, whylen, "access size > 4096", i);
        if (e->waker > i)
            return bad(why, whylen, "waker is not an earlier event", i);
        if (e->waker && t->ev[e->waker - 1].tid == e->tid)
            return bad(why, whylen, "thread woken by itself", i);
        if ((e->kind == EX_THREAD_CREATE || e->kind == EX_THREAD_JOIN) &&
            (e->arg == 0 || e->arg > t->nthreads || e->arg == e->tid))
            return bad(why, whylen, "bad thread argument", i);
        if (e->kind == EX_FUTEX_WAKE && e->arg > EX_MAX_TID)
            return bad(why, whylen, "futex wake count out of range", i);
        if (!memchr(e->sym, 0, EX_SYM_LEN) || !memchr(e->insn, 0, EX_INSN_LEN))
            return bad(why, whylen, "unterminated string", i);
    }
    return true;
}

long ex_trace_first_difference(const struct ex_trace *a, const struct ex_trace *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const struct ex_event *x = &a->ev[i], *y = &b->ev[i];
        if (x->tid != y->tid || x->kind != y->kind || x->addr != y->addr || x->size != y->size ||
            x->flags != y->flags || x->rip != y->rip || x->arg != y->arg)
            return (long)i;
    }
    return a->n == b->n ? -1 : (long)n;
}

const char *ex_kind_name(enum ex_kind k)
{
    switch (k) {
    case EX_READ: return "R";
    case EX_WRITE: return "W";
    case EX_RMW: return "RMW";
    case EX_FUTEX_WAIT: return "futex_wait";
    case EX_FUTEX_WAKE: return "futex_wake";
    case EX_THREAD_CREATE: return "create";
    case EX_THREAD_EXIT: return "exit";
    case EX_THREAD_JOIN: return "join";
    case EX_SYNC_OTHER: return "sync";
    }
    return "?";
}

static void describe(char *buf, size_t len, const struct ex_event *e)
{
    if (ex_is_access(e))
        snprintf(buf, len, "%s%s %#" PRIx64 "/%u%s", ex_kind_name(e->kind),
                 ex_is_atomic(e) ? "(lock)" : "", e->addr, (unsigned)e->size,
                 (e->flags & EX_F_STACK) ? " stack" : "");
    else if (e->kind == EX_THREAD_CREATE || e->kind == EX_THREAD_JOIN)
        snprintf(buf, len, "%s T%u", ex_kind_name(e->kind), e->arg);
    else if (e->kind == EX_FUTEX_WAKE || e->kind == EX_THREAD_EXIT)
        snprintf(buf, len, "%s %#" PRIx64 " woke %u", ex_kind_name(e->kind), e->addr, e->arg);
    else if (e->kind == EX_FUTEX_WAIT)
        snprintf(buf, len, "%s %#" PRIx64 "%s", ex_kind_name(e->kind), e->addr,
                 (e->flags & EX_F_NOBLOCK) ? " (no block)" : "");
    else
        snprintf(buf, len, "%s", ex_kind_name(e->kind));
}

void ex_trace_print(FILE *f, const struct ex_trace *t)
{
    char d[96];
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        describe(d, sizeof d, e);
        fprintf(f, "%6" PRIu64 " T%-3u %-34s rip=%#" PRIx64 "%s%s%s%s\n", e->seq, e->tid, d,
                e->rip, e->sym[0] ? " " : "", e->sym, e->insn[0] ? "  ; " : "", e->insn);
    }
}

void ex_trace_print_timeline(FILE *f, const struct ex_trace *t)
{
    ex_trace_print_timeline_marked(f, t, -1);
}

void ex_trace_print_timeline_marked(FILE *f, const struct ex_trace *t, long mark)
{
    /* Value per location: the one thread seen so far, or UINT64_MAX once shared. */
    struct ex_u64map owner;
    ex_u64map_init(&owner);
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        uint64_t *o = ex_u64map_put(&owner, ex_loc_of(e), e->tid, NULL);
        if (!o) {
            fprintf(f, "(out of memory)\n");
            ex_u64map_free(&owner);
            return;
        }
        if (*o != e->tid)
            *o = UINT64_MAX;
    }
    const int col = 26;
    fprintf(f, "%6s ", "seq");
    for (uint32_t tid = 1; tid <= t->nthreads; tid++)
        fprintf(f, "T%-*u", col - 1, tid);
    fprintf(f, "\n");
    char d[96];
    for (size_t i = 0; i < t->n; i++) {
        const struct ex_event *e = &t->ev[i];
        bool marked = mark >= 0 && (size_t)mark == i;
        if (!marked && ex_is_access(e) && *ex_u64map_get(&owner, ex_loc_of(e)) != UINT64_MAX)
            continue;
        describe(d, sizeof d, e);
        fprintf(f, "%s%4zu %*s%-*s %s%s\n", marked ? ">>" : "  ", i, (int)(e->tid - 1) * col, "",
                col - 1, d, e->sym, marked ? "   <== differs from the recording" : "");
    }
    ex_u64map_free(&owner);
}
