/* A tiny model-program simulator for the online-strategy tests: threads are
 * lists of events (reads, writes, lock, unlock, create, join), and the driver
 * asks a strategy (or a cursor) at every cue point which enabled thread
 * performs its next event, as the VMM does. Every performed event is appended
 * to an ex_trace, so bugs are predicates over the trace. */
#ifndef TESTS_UNIT_ONLINE_SIM_H
#define TESTS_UNIT_ONLINE_SIM_H
#include "explorer/explorer.h"
#include <stdio.h>
#include <string.h>

#define SIM_MAX_THREADS 8
#define SIM_MAX_LOCKS 8

enum sim_op { OP_READ, OP_WRITE, OP_LOCK, OP_UNLOCK, OP_CREATE, OP_JOIN };

struct sim_ev {
    uint8_t op;
    uint64_t addr;      /* variable or lock word */
    uint64_t rip;
    uint32_t arg;       /* create / join: the other thread */
};

struct sim_prog {
    uint32_t nthreads;                          /* tids 1..nthreads */
    const struct sim_ev *ev[SIM_MAX_THREADS + 1];
    size_t n[SIM_MAX_THREADS + 1];
    bool created[SIM_MAX_THREADS + 1];          /* true: starts only when created */
};

struct sim_run {
    const struct sim_prog *p;
    size_t pc[SIM_MAX_THREADS + 1];
    bool started[SIM_MAX_THREADS + 1];
    uint64_t lock_addr[SIM_MAX_LOCKS];
    uint32_t lock_owner[SIM_MAX_LOCKS];
    struct ex_trace tr;
    bool deadlock;      /* ended with threads left that could not run */
};

static inline void sim_init(struct sim_run *r, const struct sim_prog *p)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    for (uint32_t t = 1; t <= p->nthreads; t++)
        r->started[t] = !p->created[t];
    ex_trace_init(&r->tr);
}

static inline void sim_free(struct sim_run *r)
{
    ex_trace_free(&r->tr);
}

static inline uint32_t *sim_lock(struct sim_run *r, uint64_t addr)
{
    for (int i = 0; i < SIM_MAX_LOCKS; i++)
        if (r->lock_addr[i] == addr || r->lock_addr[i] == 0) {
            r->lock_addr[i] = addr;
            return &r->lock_owner[i];
        }
    return NULL;
}

static inline bool sim_finished(const struct sim_run *r, uint32_t t)
{
    return r->started[t] && r->pc[t] == r->p->n[t];
}

static inline const struct sim_ev *sim_next_ev(const struct sim_run *r, uint32_t t)
{
    return r->started[t] && r->pc[t] < r->p->n[t] ? &r->p->ev[t][r->pc[t]] : NULL;
}

static inline void sim_enabled(struct sim_run *r, struct ex_tidset *en)
{
    ex_tidset_clear(en);
    for (uint32_t t = 1; t <= r->p->nthreads; t++) {
        const struct sim_ev *e = sim_next_ev(r, t);
        if (!e)
            continue;
        if (e->op == OP_LOCK && *sim_lock(r, e->addr) != 0)
            continue;
        if (e->op == OP_JOIN && !sim_finished(r, e->arg))
            continue;
        ex_tidset_add(en, t);
    }
}

/* Pending events of all started, unfinished threads (blocked ones too). */
static inline size_t sim_pending(const struct sim_run *r, struct ex_pending *out)
{
    size_t n = 0;
    for (uint32_t t = 1; t <= r->p->nthreads; t++) {
        const struct sim_ev *e = sim_next_ev(r, t);
        if (!e)
            continue;
        struct ex_pending *pe = &out[n++];
        memset(pe, 0, sizeof *pe);
        pe->tid = t;
        pe->known = true;
        pe->addr = e->addr;
        pe->size = 8;
        switch (e->op) {
        case OP_READ: pe->kind = EX_READ; break;
        case OP_WRITE: pe->kind = EX_WRITE; break;
        case OP_LOCK: case OP_UNLOCK: pe->kind = EX_RMW; pe->size = 4; break;
        case OP_CREATE: pe->kind = EX_THREAD_CREATE; pe->addr = 0; break;
        default: pe->kind = EX_THREAD_JOIN; pe->addr = 0; break;
        }
    }
    return n;
}

static inline void sim_step(struct sim_run *r, uint32_t t)
{
    const struct sim_ev *e = sim_next_ev(r, t);
    r->pc[t]++;
    switch (e->op) {
    case OP_READ:
        ex_trace_access(&r->tr, t, EX_READ, e->addr, 8, 0, e->rip);
        break;
    case OP_WRITE:
        ex_trace_access(&r->tr, t, EX_WRITE, e->addr, 8, 0, e->rip);
        break;
    case OP_LOCK:
        *sim_lock(r, e->addr) = t;
        ex_trace_access(&r->tr, t, EX_RMW, e->addr, 4, EX_F_ATOMIC, e->rip);
        break;
    case OP_UNLOCK:
        *sim_lock(r, e->addr) = 0;
        ex_trace_access(&r->tr, t, EX_RMW, e->addr, 4, EX_F_ATOMIC, e->rip);
        break;
    case OP_CREATE:
        r->started[e->arg] = true;
        ex_trace_sync(&r->tr, t, EX_THREAD_CREATE, 0, e->arg);
        break;
    default:
        ex_trace_sync(&r->tr, t, EX_THREAD_JOIN, 0, e->arg);
        break;
    }
}

static inline void sim_check_end(struct sim_run *r)
{
    for (uint32_t t = 1; t <= r->p->nthreads; t++)
        if (!sim_finished(r, t))
            r->deadlock = true;
}

/* Optional observer, called at each cue point before the strategy chooses. */
typedef void (*sim_observer)(void *ctx, const struct ex_online *o, const struct ex_tidset *en,
                             uint32_t chosen, uint32_t prev);

/* Runs the program to its end under the online strategy o (begun by the
 * caller); fails the test if a choice is not enabled. */
static inline void sim_run_online(struct sim_run *r, struct ex_online *o, sim_observer obs,
                                  void *ctx)
{
    struct ex_pending pend[SIM_MAX_THREADS];
    uint32_t prev = 0;
    for (uint64_t step = 0;; step++) {
        struct ex_tidset en;
        sim_enabled(r, &en);
        struct ex_view v = { &en, pend, sim_pending(r, pend), step };
        uint32_t t = ex_online_next(o, &v);
        if (ex_tidset_empty(&en)) {
            assert_int_equal(t, 0);
            break;
        }
        assert_true(ex_tidset_has(&en, t));
        if (obs)
            obs(ctx, o, &en, t, prev);
        sim_step(r, t);
        prev = t;
    }
    sim_check_end(r);
}

/* sim_run_online with each pending event's instruction shown, as the VMM shows
 * it (the flip and chain rules compare them; the plain simulator leaves it 0). */
static inline void sim_run_coded(struct sim_run *r, struct ex_online *o)
{
    struct ex_pending pend[SIM_MAX_THREADS];
    for (uint64_t step = 0;; step++) {
        struct ex_tidset en;
        sim_enabled(r, &en);
        size_t n = sim_pending(r, pend);
        for (size_t i = 0; i < n; i++)
            pend[i].rip = sim_next_ev(r, pend[i].tid)->rip;
        struct ex_view v = { &en, pend, n, step };
        uint32_t t = ex_online_next(o, &v);
        if (ex_tidset_empty(&en))
            break;
        assert_true(ex_tidset_has(&en, t));
        sim_step(r, t);
    }
    sim_check_end(r);
}

/* Runs the program under a schedule with the cursor, as a replay does. */
static inline void sim_run_cursor(struct sim_run *r, const struct ex_schedule *s)
{
    struct ex_cursor c;
    ex_cursor_init(&c, s);
    for (;;) {
        struct ex_tidset en;
        sim_enabled(r, &en);
        uint32_t t = ex_cursor_next(&c, &en);
        if (!t)
            break;
        sim_step(r, t);
    }
    sim_check_end(r);
}

/* The run o just made (r) replays event by event with the cursor from its
 * schedule; returns the schedule's note in note (len bytes). */
static inline void sim_assert_replays(const struct sim_prog *p, const struct ex_online *o,
                                      const struct sim_run *r, char *note, size_t len)
{
    struct ex_schedule s;
    ex_schedule_init(&s);
    assert_int_equal(ex_online_schedule(o, &s), 0);
    snprintf(note, len, "%s", s.note);
    struct sim_run rr;
    sim_init(&rr, p);
    sim_run_cursor(&rr, &s);
    assert_int_equal(rr.tr.n, r->tr.n);
    for (size_t i = 0; i < r->tr.n; i++)
        assert_int_equal(rr.tr.ev[i].rip, r->tr.ev[i].rip);
    sim_free(&rr);
    ex_schedule_free(&s);
}

/* Index of the first event at rip, or -1. */
static inline long sim_index_of(const struct ex_trace *t, uint64_t rip)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].rip == rip)
            return (long)i;
    return -1;
}

/* The rip of the write the first event at reader_rip read from (0: none). */
static inline uint64_t sim_reads_from(const struct ex_trace *t, uint64_t reader_rip)
{
    long r = sim_index_of(t, reader_rip);
    for (long i = r - 1; i >= 0; i--)
        if (ex_is_write(&t->ev[i]) && t->ev[i].addr == t->ev[r].addr)
            return t->ev[i].rip;
    return 0;
}

#define X 0x1000
#define Y 0x1008
#define Z 0x1010
#define L1 0x2000
#define L2 0x2004

/* A random program: 2..4 threads (thread 4, if any, created by thread 1 and
 * joined by it at its end), each with reads and writes of three shared words
 * and critical sections under two locks taken in one order (no deadlock). */
struct rand_prog {
    struct sim_prog p;
    struct sim_ev ev[SIM_MAX_THREADS + 1][40];
};

static inline void build_random_prog(struct rand_prog *rp, uint64_t seed)
{
    struct ex_rng r;
    ex_rng_seed(&r, seed);
    memset(rp, 0, sizeof *rp);
    rp->p.nthreads = 2 + (uint32_t)ex_rng_below(&r, 3);
    for (uint32_t t = 1; t <= rp->p.nthreads; t++) {
        struct sim_ev *ev = rp->ev[t];
        size_t n = 0, len = 3 + ex_rng_below(&r, 10);
        if (t == 1 && rp->p.nthreads == 4)
            ev[n++] = (struct sim_ev){ OP_CREATE, 0, 0x100, 4 };
        while (n < len) {
            uint64_t rip = 0x400000 + 0x1000 * t + 8 * n;
            uint64_t var = X + 8 * ex_rng_below(&r, 3);
            switch (ex_rng_below(&r, 4)) {
            case 0:
                ev[n++] = (struct sim_ev){ OP_READ, var, rip, 0 };
                break;
            case 1:
                ev[n++] = (struct sim_ev){ OP_WRITE, var, rip, 0 };
                break;
            default: {
                uint64_t lock = ex_rng_below(&r, 2) ? L1 : L2;
                ev[n++] = (struct sim_ev){ OP_LOCK, lock, rip, 0 };
                ev[n++] = (struct sim_ev){ OP_WRITE, var, rip + 1, 0 };
                ev[n++] = (struct sim_ev){ OP_UNLOCK, lock, rip + 2, 0 };
            }
            }
        }
        if (t == 1 && rp->p.nthreads == 4)
            ev[n++] = (struct sim_ev){ OP_JOIN, 0, 0x200, 4 };
        rp->p.ev[t] = ev;
        rp->p.n[t] = n;
        rp->p.created[t] = t == 4;
    }
}

static inline void run_index(const struct sim_prog *p, struct ex_online *o, enum ex_online_kind k,
                      const struct ex_online_params *params, const struct ex_history *h,
                      uint64_t seed, uint64_t index, struct sim_run *r)
{
    assert_int_equal(ex_online_begin(o, k, params, h, seed, index), 0);
    sim_init(r, p);
    sim_run_online(r, o, NULL, NULL);
}

static inline void learn(struct ex_history *h, const struct ex_online *o, const struct sim_run *r,
                  uint32_t *fresh)
{
    size_t n;
    const uint32_t *c = ex_online_choices(o, &n);
    assert_non_null(c);
    assert_int_equal(ex_history_add_run(h, c, n, &r->tr, r->deadlock ? EX_OUTCOME_DEADLOCK
                                                                      : EX_OUTCOME_NORMAL,
                                        fresh),
                     0);
}

static inline struct ex_pending pend(uint32_t tid, uint8_t kind, uint64_t addr, uint16_t size)
{
    return (struct ex_pending){ tid, kind, addr, size, true, 0 };
}


/* A portfolio layout: the strategy kind and a hash of the choices of each of the first
 * SIM_LAYOUT_INDEXES indexes the portfolio runs over a program, each run learnt before
 * the next (as jinx test does). Tests of a gate that opens a slot for programs with some
 * feature compare two layouts: with the gate as learnt, and with it forced shut. */
#define SIM_LAYOUT_INDEXES 40

struct sim_layout {
    const struct sim_prog *p;
    uint64_t seed;
    /* Appends to each run's trace before it is learnt (a condition wait, say); or NULL. */
    void (*amend)(struct ex_trace *tr);
    /* The gate's flag in h; cleared too when shut (the layout without the slot). */
    bool (*gate)(struct ex_history *h, bool shut);
    /* Checks each index's strategy (o just ran index idx); or NULL. */
    void (*check)(uint64_t idx, const struct ex_online *o);
};

/* Fills kinds[] and hash[] (SIM_LAYOUT_INDEXES each); *opened: whether the gate was
 * ever set by what was learnt. */
static inline void sim_run_layout(const struct sim_layout *L, bool shut, uint8_t *kinds,
                                  uint64_t *hash, bool *opened)
{
    struct ex_history h;
    ex_history_init(&h);
    struct ex_online o;
    ex_online_init(&o);
    *opened = false;
    for (uint64_t idx = 0; idx < SIM_LAYOUT_INDEXES; idx++) {
        struct sim_run r;
        run_index(L->p, &o, EX_ONLINE_PORTFOLIO, NULL, &h, L->seed, idx, &r);
        kinds[idx] = o.kind;
        if (L->check)
            L->check(idx, &o);
        size_t n;
        const uint32_t *c = ex_online_choices(&o, &n);
        hash[idx] = n;
        for (size_t i = 0; i < n; i++)
            hash[idx] = ex_hash2(hash[idx], c[i]);
        if (L->amend)
            L->amend(&r.tr);
        assert_int_equal(ex_online_learn(&h, &o, &r.tr, EX_OUTCOME_NORMAL, NULL), 0);
        *opened |= L->gate(&h, shut);
        sim_free(&r);
    }
    ex_online_free(&o);
    ex_history_free(&h);
}

#endif
