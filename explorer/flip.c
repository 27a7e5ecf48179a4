/* Race flips learnt from earlier runs (flip.h). */
#include "flip.h"
#include "conflict.h"
#include "trace.h"
#include <stdlib.h>
#include <string.h>

void ex_flips_init(struct ex_flips *f)
{
    memset(f, 0, sizeof *f);
    ex_u64map_init(&f->keys);
    ex_u64map_init(&f->orders);
    ex_u64map_init(&f->born);
    ex_u64map_init(&f->vars);
}

void ex_flips_free(struct ex_flips *f)
{
    free(f->v);
    for (size_t i = 0; i < f->nparents; i++) {
        free(f->parents[i].choices);
        free(f->parents[i].steps);
    }
    ex_u64map_free(&f->keys);
    ex_u64map_free(&f->orders);
    ex_u64map_free(&f->born);
    ex_u64map_free(&f->vars);
    ex_flips_init(f);
}

uint64_t ex_flips_order_key(uint64_t from_rip, uint64_t to_rip, uint64_t addr)
{
    return ex_hash2(ex_hash2(ex_hash_mix(from_rip) ^ 0x6f72646572ull, to_rip), addr);
}

long ex_flips_next(const struct ex_flips *f)
{
    long best = -1;
    uint64_t best_key = 0;
    for (size_t i = 0; f && i < f->n; i++) {
        const struct ex_flip *x = &f->v[i];
        if (x->tried)
            continue;
        bool covered =
            ex_u64map_get(&f->orders, ex_flips_order_key(x->rip2, x->rip1, x->addr)) != NULL;
        /* Smallest key first: uncovered, DATA, newest variable, then (a race
         * learnt since run 1, at a DATA variable) the block's last end first:
         * inside a window; ties in learnt order. */
        bool inside_first = x->from > 0 && !(x->rank & 1) && !x->last_end;
        uint64_t key = (uint64_t)covered << 41 | (uint64_t)(x->rank & 1) << 33 |
                       (uint64_t)(0xffffffffu - (x->born & 0xffffffffu)) << 1 | inside_first;
        if (best < 0 || key < best_key)
            best = (long)i, best_key = key;
    }
    return best;
}

static bool is_access(uint8_t k)
{
    return k == EX_READ || k == EX_WRITE || k == EX_RMW;
}

static bool writes(uint8_t k)
{
    return k == EX_WRITE || k == EX_RMW;
}

/* Per variable, while walking a run: the thread whose block of accesses is the
 * latest, the steps of its first and last access, and whether it wrote. */
struct block {
    uint32_t tid;
    uint64_t first, last;
};

static int note(struct ex_flips *f, const struct ex_step *steps, uint64_t at,
                const struct ex_step *e2, uint8_t rank, bool last_end, uint32_t parent,
                long *added)
{
    const struct ex_step *e1 = &steps[at];
    if (!writes(e1->kind) && !writes(e2->kind))
        return 0; /* two reads: their order changes nothing */
    uint64_t rip1 = e1->rip ? e1->rip : e1->addr, rip2 = e2->rip ? e2->rip : e2->addr;
    uint64_t *seen = ex_u64map_put(&f->orders, ex_flips_order_key(rip1, rip2, e1->addr), 0, NULL);
    if (!seen)
        return -1;
    (*seen)++;
    uint64_t key = ex_hash2(ex_hash2(ex_hash2(rip1, rip2), e1->addr), last_end);
    bool fresh = false;
    if (f->n >= EX_FLIPS_MAX || f->nparents >= EX_FLIPS_MAX_PARENTS)
        return 0; /* the orders are still learnt */
    uint64_t *from = ex_u64map_put(&f->keys, key, f->runs, &fresh);
    if (!from)
        return -1;
    if (!fresh && (*from > 0 || f->runs == 0))
        return 0;
    *from = f->runs; /* a race run 0 showed, met again: once more, followed faithfully */
    if (f->n == f->cap) {
        size_t ncap = f->cap ? f->cap * 2 : 64;
        struct ex_flip *nv = realloc(f->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        f->v = nv;
        f->cap = ncap;
    }
    const uint64_t *born = ex_u64map_get(&f->born, e1->addr);
    f->v[f->n++] = (struct ex_flip){.born = born ? *born : f->runs, .parent = parent,
                                    .step = at, .t1 = e1->tid, .t2 = e2->tid,
                                    .addr = e1->addr, .kind = e1->kind, .size = e1->size,
                                    .rip1 = rip1, .rip2 = rip2, .rank = rank, .from = f->runs,
                                    .last_end = last_end};
    (*added)++;
    return 0;
}

/* The rank of the flips at e's variable (0 DATA, 1 SYNC), or -1: none. */
static int rank_of(const struct ex_step *e, const struct ex_u64map *opened,
                   const struct ex_u64map *conflict)
{
    const uint64_t *cls = ex_u64map_get(conflict, e->addr);
    if (cls && (*cls & (EX_CONFLICT_DATA | EX_CONFLICT_SYNC)))
        return (*cls & EX_CONFLICT_DATA) ? 0 : 1;
    if (opened && ex_u64map_get(opened, e->addr) && !(cls && (*cls & EX_CONFLICT_ATOMIC)))
        return 0; /* new code reached it in this run, which a reversed race opened */
    return -1;
}

/* Notes the code of the run's accesses in f->vars; with `opened`, the
 * variables that code no earlier run executed accessed go into *out. */
static int note_code(struct ex_flips *f, const struct ex_step *steps, size_t n,
                     const struct ex_flip *opened, struct ex_u64map *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct ex_step *e = &steps[i];
        if (!is_access(e->kind) || e->tid == 0 || !e->rip)
            continue;
        bool fresh = false;
        if (!ex_u64map_put(&f->vars, e->rip, f->runs, &fresh))
            return -1;
        /* Code no run executed, by the reversed race's two threads: the new
         * branch (not old code at new addresses: a thread's stack, musl's
         * structures of a thread that ended sooner). Run 1 is the first with
         * pre-shared pages, where much old code looks new. */
        if (fresh && opened && f->runs >= 2 && (e->tid == opened->t1 || e->tid == opened->t2) &&
            !ex_u64map_put(out, e->addr, 1, NULL))
            return -1;
    }
    return 0;
}

static int find_flips(struct ex_flips *f, const struct ex_step *steps, size_t n,
                      const struct ex_u64map *opened, const struct ex_u64map *conflict,
                      uint32_t parent, long *added)
{
    struct ex_u64map where; /* variable -> 1 + index into blocks */
    struct block *blocks = NULL;
    size_t nblocks = 0, cap = 0;
    int rc = 0;
    ex_u64map_init(&where);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct ex_step *e = &steps[i];
        if (!is_access(e->kind) || e->tid == 0)
            continue;
        int r = rank_of(e, opened, conflict);
        if (r < 0)
            continue;
        uint8_t rank = (uint8_t)r;
        if (!ex_u64map_put(&f->born, e->addr, f->runs, NULL)) {
            rc = -1;
            break;
        }
        bool fresh = false;
        uint64_t *w = ex_u64map_put(&where, e->addr, 0, &fresh);
        if (!w) {
            rc = -1;
            break;
        }
        if (fresh) {
            if (nblocks == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                struct block *nb = realloc(blocks, ncap * sizeof *nb);
                if (!nb) {
                    rc = -1;
                    break;
                }
                blocks = nb;
                cap = ncap;
            }
            blocks[nblocks] = (struct block){.tid = e->tid, .first = i, .last = i};
            *w = ++nblocks;
            continue;
        }
        struct block *b = &blocks[*w - 1];
        if (b->tid == e->tid) {
            b->last = i;
            continue;
        }
        /* The variable passes from b->tid's block to e's thread: the race (block, e). */
        if (note(f, steps, b->first, e, rank, false, parent, added) != 0 ||
            (b->last != b->first && note(f, steps, b->last, e, rank, true, parent, added) != 0))
            rc = -1;
        *b = (struct block){.tid = e->tid, .first = i, .last = i};
    }
    free(blocks);
    ex_u64map_free(&where);
    return rc;
}

long ex_flips_learn(struct ex_flips *f, long used, const uint32_t *choices,
                    const struct ex_step *steps, size_t n, const struct ex_u64map *conflict)
{
    return ex_flips_learn_opened(f, used, false, choices, steps, n, conflict);
}

long ex_flips_learn_opened(struct ex_flips *f, long used, bool opened, const uint32_t *choices,
                           const struct ex_step *steps, size_t n,
                           const struct ex_u64map *conflict)
{
    f->flipruns += used >= 0;
    if (used >= 0 && (size_t)used < f->n && !f->v[used].tried) {
        f->v[used].tried = true;
        f->tried++;
    }
    if (!choices || !steps || n == 0 || !conflict) {
        f->runs++;
        return 0;
    }
    long added = 0;
    uint32_t parent = (uint32_t)f->nparents;
    struct ex_u64map fresh; /* variables new code accessed (opened runs) */
    ex_u64map_init(&fresh);
    /* A reversed lock (SYNC) sends threads down musl's wait paths, not the program's. */
    const struct ex_flip *made =
        opened && used >= 0 && (size_t)used < f->n && f->v[used].rank == 0 ? &f->v[used] : NULL;
    int rc = note_code(f, steps, n, made, &fresh);
    if (rc == 0)
        rc = find_flips(f, steps, n, made ? &fresh : NULL, conflict, parent, &added);
    ex_u64map_free(&fresh);
    if (added > 0) {
        /* The flips replay this run's choices up to their step: keep a copy. */
        uint32_t *copy = n <= SIZE_MAX / sizeof *steps ? malloc(n * sizeof *copy) : NULL;
        struct ex_step *scopy = copy ? malloc(n * sizeof *scopy) : NULL;
        if (!scopy) {
            free(copy);
            f->n -= (size_t)added; /* their keys stay noted: they are lost, not retried */
            return -1;
        }
        memcpy(copy, choices, n * sizeof *copy);
        memcpy(scopy, steps, n * sizeof *scopy);
        f->parents[parent].choices = copy;
        f->parents[parent].steps = scopy;
        f->parents[parent].n = n;
        f->nparents++;
    }
    f->runs++;
    return rc == 0 ? added : -1;
}
