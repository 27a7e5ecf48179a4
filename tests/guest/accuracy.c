/* Cue-point accuracy: two threads and shared variables whose exact sequence of accesses
 * is fixed by futex handshakes (a turn word on a page of its own), so that the serialized
 * trace must contain exactly (tests/integration/serial.sh checks it, for any policy):
 *
 *   acc_x (4 bytes):  T1 W, T2 R, T2 W, T1 R, T1 W, T2 R
 *   acc_y (8 bytes):  T1 RMW(lock)/8, T2 RMW(lock)/8, T1 R/2
 *
 * Each variable is alone on its page, so no other access can appear there. Before the
 * first hand-over T1 owns both pages and uses acc_x several times (only the first access
 * traps); T2's access then shares the page, which revokes T1's mapping. T1's next access
 * (its R of acc_x, its R/2 of acc_y) must still be a cue point: a vCPU that kept a stale
 * translation would go straight to memory and the event would be missing (the TLB
 * coherence check). The values read are checked here too. */
#define _GNU_SOURCE
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129

struct page_x { volatile int32_t v; char pad[4096 - 4]; };
union page_y { volatile uint64_t v; volatile uint16_t low; char pad[4096]; };
struct page_t { volatile int turn; char pad[4096 - 4]; };
struct page_x acc_x __attribute__((aligned(4096)));
union page_y acc_y __attribute__((aligned(4096)));
static struct page_t hs __attribute__((aligned(4096)));

static void pass_to(int who)
{
    hs.turn = who;
    syscall(SYS_futex, &hs.turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void await_turn(int me)
{
    int t;
    while ((t = hs.turn) != me)
        syscall(SYS_futex, &hs.turn, FUTEX_WAIT_PRIVATE, t, NULL, NULL, 0);
}

static void *second(void *arg)
{
    (void)arg;
    await_turn(2);
    int32_t r = acc_x.v;                               /* T2 R */
    CHECK(r == 11);
    acc_x.v = r + 1;                                   /* T2 W */
    uint64_t old = __atomic_exchange_n(&acc_y.v, 7, __ATOMIC_SEQ_CST); /* T2 RMW(lock)/8 */
    CHECK(old == 5);
    pass_to(1);
    await_turn(2);
    CHECK(acc_x.v == 24);                              /* T2 R */
    return NULL;
}

int main(void)
{
    acc_x.v = 1;                                       /* T1 W (first touch: T1 owns it) */
    for (int i = 0; i < 10; i++)
        acc_x.v = acc_x.v + 1;                         /* owned: no cue points */
    __atomic_fetch_add(&acc_y.v, 5, __ATOMIC_SEQ_CST); /* T1 RMW(lock)/8 */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, second, NULL) == 0);
    pass_to(2);
    await_turn(1);
    int32_t r = acc_x.v;                               /* T1 R: must trap again */
    CHECK(r == 12);
    acc_x.v = r * 2;                                   /* T1 W */
    CHECK(acc_y.low == 7);                         /* T1 R/2: must trap again */
    pass_to(2);
    CHECK(pthread_join(t, NULL) == 0);
    printf("accuracy: ok\n");
    return 0;
}
