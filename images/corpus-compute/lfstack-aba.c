/*
 * lfstack-aba - ABA in a lock-free (Treiber) stack used as a free list under load.
 * NODES buffers live on a stack; three workers repeatedly pop two buffers, push the
 * first back, compute into the second (a block of words on a shared page) and push it
 * back. pop reads head and head->next and compare-and-swaps head, retrying when the CAS
 * fails. If, between a worker's read and its CAS, another worker pops that node and the
 * next one and pushes the first back, head holds the same value again, the CAS succeeds
 * and installs a `next` the other worker holds: a later pop hands out a held buffer
 * (its holder check aborts, SIGABRT) or the stack loses nodes (an empty pop aborts: with
 * 3 workers holding at most 2 each, 8 nodes never all leave the stack). 4 threads
 * (main + 3), the bug involves 2, two preemptions (a worker between its read of
 * head->next and its CAS; the other between its push of A and its push of B).
 *
 *   stack: A -> B -> C
 *   w1: pop: h = A, nx = B [preempted]                               CAS(head, A, B) ok!
 *   w2:               pop A; pop B (keeps it); push A   (A -> C)
 *   -> head = B, which w2 holds
 *
 * Shared accesses: ~6 per pop or push, 4 stack operations and WORDS loads and stores per
 * iteration (~50), 3 x 20000 iterations: ~3e6 a run.
 *
 * Twin (lfstack-aba-ok): head carries a version tag that every successful CAS bumps.
 */
#include "corpus.h"

#define NODES 8
#define WORKERS 3
#define ITERS 20000
#define WORDS 16
#define IDX(w) ((unsigned)((w) & 0xffffffffu))
#define TAG(w) ((w) >> 32)

struct node {
    unsigned next;       /* index, 0 = none */
    int holder;          /* the worker that popped it, 0 = on the stack */
    uint32_t words[WORDS];
};

static struct node nodes[NODES + 1];
static uint64_t head;    /* TAG << 32 | top index */

static uint64_t make_head(uint64_t old, unsigned idx)
{
    return (TAG(old) + (FIXED ? 1 : 0)) << 32 | idx;
}

static unsigned pop(int who)
{
    uint64_t old = __atomic_load_n(&head, __ATOMIC_SEQ_CST);
    for (;;) {
        unsigned top = IDX(old);
        CHECK(top != 0, "worker %d found the stack empty: nodes were lost", who);
        unsigned nx = __atomic_load_n(&nodes[top].next, __ATOMIC_RELAXED);
        if (__atomic_compare_exchange_n(&head, &old, make_head(old, nx), 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            int h = __atomic_load_n(&nodes[top].holder, __ATOMIC_RELAXED);
            CHECK(h == 0, "node %u popped by worker %d while worker %d holds it", top, who, h);
            __atomic_store_n(&nodes[top].holder, who, __ATOMIC_RELAXED);
            return top;
        }
    }
}

static void push(unsigned idx)
{
    __atomic_store_n(&nodes[idx].holder, 0, __ATOMIC_RELAXED);
    uint64_t old = __atomic_load_n(&head, __ATOMIC_SEQ_CST);
    do
        __atomic_store_n(&nodes[idx].next, IDX(old), __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&head, &old, make_head(old, idx), 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST));
}

static void *worker(void *arg)
{
    int who = ARG_ID(arg) + 1;
    uint32_t x = (uint32_t)who * 2654435761u;
    for (int i = 0; i < ITERS; i++) {
        unsigned a = pop(who);
        unsigned b = pop(who);
        push(a);
        if (i == ITERS / 2 && who == 2)
            WIDEN(2000000);
        for (int w = 0; w < WORDS; w++) {
            x = (x ^ (x >> 15)) * 0x2c1b3c6du + LOAD(nodes[b].words[w]);
            STORE(nodes[b].words[w], x);
        }
        push(b);
    }
    return NULL;
}

int main(void)
{
    for (unsigned i = NODES; i >= 1; i--)
        push(i);
    run_ids(WORKERS, worker);
    int left = 0;
    while (IDX(head) != 0 && left <= NODES) {
        pop(99);
        left++;
    }
    CHECK(left == NODES, "%d nodes on the stack, want %d", left, NODES);
    PASS("lfstack-aba");
    return 0;
}
