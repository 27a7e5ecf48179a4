#include "sched/simdiff.h"
#include "kvm/layout.h"
#include "kvm/vm.h"
#include "sched/serialize.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void simdiff_init(struct simdiff *d)
{
    memset(d, 0, sizeof *d);
    ex_trace_init(&d->trace);
}

void simdiff_free(struct simdiff *d)
{
    ex_trace_free(&d->trace);
    free(d->page_hash);
    memset(d, 0, sizeof *d);
}

/* FNV-1a of a frame, never 0 (0 marks a frame not in use). */
static uint64_t frame_hash(struct vm *vm, uint64_t f)
{
    if (!(vm->gm.bitmap[f / 64] & (1ULL << (f % 64))))
        return 0;
    const uint8_t *b = vm->gm.host + f * PAGE_SIZE;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < PAGE_SIZE; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h ? h : 1;
}

int simdiff_take(struct simdiff *d, struct vm *vm)
{
    ex_trace_free(&d->trace);
    ex_trace_init(&d->trace);
    free(d->page_hash);
    d->have = false;
    d->nframes = vm->gm.nframes;
    d->page_hash = calloc(d->nframes ? d->nframes : 1, sizeof *d->page_hash);
    if (!d->page_hash || ex_trace_copy(&d->trace, &vm->ser->trace) < 0)
        return -1;
    for (uint64_t f = GPA_POOL / PAGE_SIZE; f < d->nframes; f++)
        d->page_hash[f] = frame_hash(vm, f);
    d->have = true;
    return 0;
}

static void event_text(char *buf, size_t len, const struct ex_trace *t, long i)
{
    if (i < 0 || (size_t)i >= t->n) {
        snprintf(buf, len, "(ended after %zu cue points)", t->n);
        return;
    }
    const struct ex_event *e = &t->ev[i];
    snprintf(buf, len, "T%u %s %#" PRIx64 "/%u arg %u%s rip %#" PRIx64 "%s%s", e->tid,
             ex_kind_name((enum ex_kind)e->kind), e->addr, (unsigned)e->size, e->arg,
             (e->flags & EX_F_NOBLOCK) ? " (no block)" : "", e->rip, e->sym[0] ? " " : "",
             e->sym);
}

void simdiff_describe_events(char *buf, size_t len, const struct ex_trace *a,
                             const struct ex_trace *b, long i)
{
    char x[160], y[160];
    event_text(x, sizeof x, a, i);
    event_text(y, sizeof y, b, i);
    snprintf(buf, len, "cue point %ld: first %s; this %s", i, x, y);
}

/* The user address that maps frame f, or 0 (a VMM-private or page-table frame). */
static uint64_t frame_user_va(struct vm *vm, uint64_t f)
{
    uint64_t next;
    for (uint64_t va = USER_MIN; va < USER_TOP; va = next) {
        uint64_t *pte = gm_pte_scan(&vm->gm, va, &next);
        if (pte && gm_pte_usable(*pte) && gm_pte_frame(*pte) == f * PAGE_SIZE)
            return va;
        if (next <= va)
            next = va + PAGE_SIZE;
    }
    return 0;
}

bool simdiff_compare(const struct simdiff *d, struct vm *vm, int n, FILE *f)
{
    if (!d->have)
        return false;
    bool same = true;
    long i = ex_trace_first_difference(&d->trace, &vm->ser->trace);
    if (i >= 0) {
        char line[400];
        simdiff_describe_events(line, sizeof line, &d->trace, &vm->ser->trace, i);
        fprintf(f, "jinx-vmm: simulation %d differs from the first at %s\n", n, line);
        if (i > 0) { /* where both were: the last cue point they share */
            event_text(line, sizeof line, &d->trace, i - 1);
            fprintf(f, "jinx-vmm:   both after cue point %ld: %s\n", i - 1, line);
        }
        same = false;
    }
    uint64_t ndiff = 0, first = 0;
    uint64_t nf = d->nframes < vm->gm.nframes ? d->nframes : vm->gm.nframes;
    for (uint64_t fr = GPA_POOL / PAGE_SIZE; fr < nf; fr++)
        if (frame_hash(vm, fr) != d->page_hash[fr] && ndiff++ == 0)
            first = fr;
    if (ndiff) {
        uint64_t va = frame_user_va(vm, first);
        char where[64] = "";
        if (va)
            snprintf(where, sizeof where, ", user address %#" PRIx64, va);
        fprintf(f, "jinx-vmm: simulation %d differs from the first in %" PRIu64 " guest pages; "
                "the first at frame %#" PRIx64 "%s%s\n", n, ndiff, (uint64_t)(first * PAGE_SIZE), where,
                va ? "" : " (not mapped for the program: VMM or page-table state)");
        same = false;
    }
    return same;
}
