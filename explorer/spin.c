#include "spin.h"
#include <string.h>

void ex_spin_init(struct ex_spin *s, uint32_t threshold, uint32_t patience)
{
    memset(s, 0, sizeof *s);
    s->threshold = threshold;
    s->patience = patience ? patience : EX_SPIN_PATIENCE;
}

static void lift(struct ex_spin *s, uint32_t tid, uint32_t run)
{
    struct ex_spin_thread *t = &s->t[tid];
    t->spinning = false;
    t->others = 0;
    t->run = run;
    ex_tidset_del(&s->avoid, tid);
}

static bool overlaps(uint64_t a, uint16_t as, uint64_t b, uint16_t bs)
{
    return a < b + (bs ? bs : 1) && b < a + (as ? as : 1);
}

void ex_spin_observe(struct ex_spin *s, uint32_t tid, enum ex_kind kind, uint64_t addr,
                     uint16_t size, uint64_t value)
{
    if (!s->threshold || tid == 0 || tid > EX_MAX_TID)
        return;
    bool write = kind == EX_WRITE || kind == EX_RMW;
    /* Everyone else: a write to their spin location frees them; any cue point of ours
     * uses up some of a spinner's patience. Threads with no run have nothing to check. */
    if (tid > s->maxtid)
        s->maxtid = tid;
    for (uint32_t u = 1; u <= s->maxtid; u++) {
        struct ex_spin_thread *o = &s->t[u];
        if (u == tid || o->run == 0)
            continue;
        if (write && overlaps(addr, size, o->addr, o->size)) {
            lift(s, u, 0);
            continue;
        }
        if (o->spinning && ++o->others >= s->patience)
            lift(s, u, s->threshold - 1);
    }
    /* Ourselves: one more identical read, or a fresh start. */
    struct ex_spin_thread *t = &s->t[tid];
    if (size < 8)
        value &= (1ULL << (size * 8)) - 1;
    if (kind == EX_READ && t->run && t->addr == addr && t->size == size && t->value == value) {
        t->run++;
    } else {
        if (t->spinning)
            lift(s, tid, 0);
        t->run = kind == EX_READ ? 1 : 0;
        t->addr = addr;
        t->size = size;
        t->value = value;
    }
    if (!t->spinning && t->run >= s->threshold) {
        t->spinning = true;
        t->others = 0;
        ex_tidset_add(&s->avoid, tid);
        s->detections++;
    }
}
