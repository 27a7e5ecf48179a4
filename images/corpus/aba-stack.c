/*
 * aba-stack - ABA in a lock-free (Treiber) stack. pop reads head and head->next, then
 * swings head with a compare-and-swap. If, between its read and its CAS, another thread
 * pops that node and the next one and pushes the first back, head holds the same value
 * again, the CAS succeeds and installs a `next` that is no longer on the stack: a node
 * the other thread holds becomes the top. main finds it when it drains the stack.
 * SIGABRT in main. Three threads (main + a + b), one preemption (a, before its CAS).
 *
 *   stack: 1 -> 2 -> 3
 *   a: pop: h = 1, nx = 2 [preempted]                                CAS(head, 1, 2) ok!
 *   b:            pop 1; pop 2 (keeps it); push 1   (stack 1 -> 3)
 *   -> head = 2, which b holds
 *
 * Twin (aba-stack-ok): head carries a version tag that every successful CAS bumps.
 */
#include "corpus.h"

#define NODES 3
#define IDX(w) ((unsigned)((w) & 0xffffffffu))
#define TAG(w) ((w) >> 32)

struct node {
    unsigned next;       /* index, 0 = none */
    int holder;          /* who popped it and holds it, 0 = on the stack */
};

static struct node nodes[NODES + 1];
static uint64_t head;    /* TAG << 32 | top index */

static uint64_t make_head(uint64_t old, unsigned idx)
{
    return (TAG(old) + (FIXED ? 1 : 0)) << 32 | idx;
}

static unsigned pop(int who, int widen)
{
    uint64_t old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
    for (;;) {
        unsigned top = IDX(old);
        if (top == 0)
            return 0;
        unsigned nx = LOAD(nodes[top].next);
        if (widen)
            WIDEN(2000000);
        if (__atomic_compare_exchange_n(&head, &old, make_head(old, nx), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            CHECK(LOAD(nodes[top].holder) == 0, "node %u popped while thread %d holds it",
                  top, nodes[top].holder);
            STORE(nodes[top].holder, who);
            return top;
        }
    }
}

static void push(unsigned idx)
{
    STORE(nodes[idx].holder, 0);
    uint64_t old = __atomic_load_n(&head, __ATOMIC_RELAXED);
    do
        STORE(nodes[idx].next, IDX(old));
    while (!__atomic_compare_exchange_n(&head, &old, make_head(old, idx), 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

static void *thread_a(void *arg)
{
    (void)arg;
    pop(1, 1);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    WIDEN(500000);
    unsigned x = pop(2, 0);
    unsigned y = pop(2, 0);
    if (x)
        push(x);               /* keeps y */
    (void)y;
    return NULL;
}

int main(void)
{
    for (unsigned i = NODES; i >= 1; i--)
        push(i);               /* 1 -> 2 -> 3 */
    pthread_t a, b;
    start_thread(&a, thread_a, NULL);
    start_thread(&b, thread_b, NULL);
    join_thread(a);
    join_thread(b);
    int left = 0;
    while (pop(3, 0))          /* a holder check fails here if ABA struck */
        left++;
    CHECK(left == 1, "%d nodes left on the stack, want 1", left);
    PASS("aba-stack");
    return 0;
}
