/* CPUID inside a simulated fragment: two threads each run CPUID (leaf 1's initial APIC
 * id, leaf 0xB's x2APIC id: on a host whose user-mode CPUID is not trapped, the number
 * of the host CPU the vCPU's thread happens to be on) and let the answer choose which
 * shared slot they write, between locked increments of a shared counter (cue points).
 * Every execution of one schedule from one snapshot must then still be identical
 * (`--simulate N`: jinx answers CPUID itself, never the host's CPU of the moment);
 * tests/integration/cpuid-sim.sh checks it. Prints the sum of the ids it saw. */
#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 3000
#define SLOTS 64

static volatile unsigned long slot[SLOTS];
static unsigned long counter;

static unsigned cpu_ids(void)
{
    unsigned a, b, c, d, apic;
    __cpuid(1, a, b, c, d);
    apic = b >> 24;
    __cpuid_count(0xb, 0, a, b, c, d);
    return apic + d;
}

static void *worker(void *arg)
{
    unsigned long me = (unsigned long)arg, seen = 0;
    for (unsigned i = 0; i < ROUNDS; i++) {
        unsigned id = cpu_ids();
        seen += id;
        slot[(i + id * 7 + me) % SLOTS] += id + 1; /* where it writes depends on the answer */
        __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
    }
    return (void *)seen;
}

int main(void)
{
    pthread_t t[2];
    for (unsigned long i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0) {
            perror("cpuidsim: pthread_create");
            return 1;
        }
    unsigned long total = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (unsigned long)r;
    }
    printf("cpuidsim: %lu increments, CPU ids summed %lu\n", counter, total);
    return counter == 2 * ROUNDS ? 0 : 1;
}
