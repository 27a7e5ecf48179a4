/*
 * many-200-list - 200 workers each push one node onto a shared singly linked list
 * without a lock: `n->next = head; head = n`. A worker preempted between reading head
 * and storing it loses the nodes pushed meanwhile. SIGABRT in main (the list is short).
 * 201 threads (main + 200), one preemption.
 *
 * Twin (many-200-list-ok): the push is a compare-and-swap loop.
 */
#include "corpus.h"

#define WORKERS 200

struct node {
    struct node *next;
    int id;
};

static struct node nodes[WORKERS];
static struct node *head;

static void *worker(void *arg)
{
    struct node *n = &nodes[ARG_ID(arg)];
    n->id = ARG_ID(arg);
#if FIXED
    struct node *h = __atomic_load_n(&head, __ATOMIC_RELAXED);
    do
        n->next = h;
    while (!__atomic_compare_exchange_n(&head, &h, n, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
#else
    n->next = LOAD(head);
    WIDEN(300000);
    STORE(head, n);
#endif
    return NULL;
}

int main(void)
{
    run_ids(WORKERS, worker);
    int count = 0;
    for (struct node *n = head; n && count <= WORKERS; n = n->next)
        count++;
    CHECK(count == WORKERS, "list holds %d of %d pushed nodes", count, WORKERS);
    PASS("many-200-list");
    return 0;
}
