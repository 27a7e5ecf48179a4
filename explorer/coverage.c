#include "coverage.h"

void ex_coverage_init(struct ex_coverage *c)
{
    ex_u64map_init(&c->set);
}

void ex_coverage_free(struct ex_coverage *c)
{
    ex_u64map_free(&c->set);
}

size_t ex_coverage_count(const struct ex_coverage *c)
{
    return c->set.n;
}

bool ex_coverage_has(const struct ex_coverage *c, uint64_t key)
{
    return ex_u64map_get(&c->set, key) != NULL;
}

uint64_t ex_pair_key(uint64_t rip_first, uint64_t rip_second)
{
    return ex_hash2(rip_first ^ 0x7061697273ULL, rip_second);
}

int ex_pairs_foreach(const struct ex_trace *t, int (*fn)(uint64_t key, void *ctx), void *ctx)
{
    struct ex_u64map last; /* location -> 1 + last access */
    ex_u64map_init(&last);
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        const struct ex_event *e = &t->ev[i];
        if (!ex_is_access(e))
            continue;
        uint64_t *v = ex_u64map_put(&last, ex_loc_of(e), 0, NULL);
        if (!v) {
            rc = -1;
            break;
        }
        if (*v) {
            const struct ex_event *x = &t->ev[*v - 1];
            if (x->tid != e->tid && (ex_is_write(x) || ex_is_write(e)))
                rc = fn(ex_pair_key(x->rip, e->rip), ctx);
        }
        *v = i + 1;
    }
    ex_u64map_free(&last);
    return rc;
}

struct add_ctx {
    struct ex_coverage *c;
    long added;
};

static int add_key(uint64_t key, void *vctx)
{
    struct add_ctx *a = vctx;
    bool added;
    if (!ex_u64map_put(&a->c->set, key, 0, &added))
        return -1;
    a->added += added;
    return 0;
}

long ex_coverage_add_trace(struct ex_coverage *c, const struct ex_trace *t)
{
    struct add_ctx a = { c, 0 };
    if (ex_pairs_foreach(t, add_key, &a) != 0)
        return -1;
    return a.added;
}
