/* Probe: what switching the running vCPU costs per exit, independent of Jinx.
 *
 * Serialized execution runs one guest thread at a time, one host thread per vCPU, and
 * hands the turn from host thread to host thread (a futex) whenever the schedule
 * switches guest threads. Is that hand-over a large part of a cue point's cost, and
 * would one host thread running every vCPU be cheaper? Each mode times N exits of a
 * real-mode guest doing `out` in a loop (as ../shared/tools/kvm-exit-probe.c):
 *
 *   single    one host thread, one vCPU: the raw exit round trip
 *   onethread one host thread runs vCPU 0 and vCPU 1 alternately
 *   handover  one host thread per vCPU; after each exit the turn goes to the other
 *             thread by futex (today's design when every cue point switches)
 *   migrate   one vCPU run by two host threads in turn (KVM's vcpu->pid changes on
 *             every KVM_RUN)
 *   pinned    handover with both host threads pinned to the CPU the probe started on
 *             (a wake-up on the same CPU needs no cross-CPU IPI)
 *
 * usage: handover-probe MODE [N]      prints "MODE us-per-exit" */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { SINGLE, ONETHREAD, HANDOVER, MIGRATE, PINNED };
static int vcpu_fd[2];
static struct kvm_run *vcpu_run[2];
static long exits = 20000;
static enum mode mode;
static _Atomic int turn;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void run_once(int c)
{
    if (ioctl(vcpu_fd[c], KVM_RUN, 0) < 0)
        die("KVM_RUN");
    if (vcpu_run[c]->exit_reason != KVM_EXIT_IO) {
        fprintf(stderr, "handover-probe: unexpected exit reason %u\n", vcpu_run[c]->exit_reason);
        exit(1);
    }
}

static void *taker(void *arg)
{
    int me = (int)(long)arg;
    for (long i = 0; i < exits / 2; i++) {
        int t;
        while ((t = atomic_load(&turn)) != me)
            syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, t, NULL, NULL, 0);
        run_once(mode == MIGRATE ? 0 : me);
        atomic_store(&turn, !me);
        syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"single", "onethread", "handover", "migrate", "pinned"};
    int m = -1;
    for (int i = 0; argc > 1 && i < 5; i++)
        if (!strcmp(argv[1], names[i]))
            m = i;
    if (m < 0 || argc > 3 || (argc == 3 && (exits = atol(argv[2])) < 2)) {
        fprintf(stderr, "usage: handover-probe single|onethread|handover|migrate|pinned [EXITS>=2]\n");
        return 2;
    }
    mode = (enum mode)m;
    int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (kvm < 0)
        die("/dev/kvm");
    int vm = ioctl(kvm, KVM_CREATE_VM, 0);
    if (vm < 0)
        die("KVM_CREATE_VM");
    unsigned char *mem = mmap(NULL, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        die("mmap");
    static const unsigned char code[] = {0xe6, 0x10, 0xeb, 0xfc}; /* out 0x10, al; jmp -4 */
    memcpy(mem, code, sizeof code);
    struct kvm_userspace_memory_region r = {
        .slot = 0, .guest_phys_addr = 0x1000, .memory_size = 0x1000, .userspace_addr = (unsigned long)mem};
    if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r) < 0)
        die("KVM_SET_USER_MEMORY_REGION");
    int size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
    for (int c = 0; c < 2; c++) {
        if ((vcpu_fd[c] = ioctl(vm, KVM_CREATE_VCPU, c)) < 0)
            die("KVM_CREATE_VCPU");
        vcpu_run[c] = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu_fd[c], 0);
        if (vcpu_run[c] == MAP_FAILED)
            die("mmap vcpu");
        struct kvm_sregs s;
        if (ioctl(vcpu_fd[c], KVM_GET_SREGS, &s) < 0)
            die("KVM_GET_SREGS");
        s.cs.base = 0;
        s.cs.selector = 0;
        struct kvm_regs g = {.rip = 0x1000, .rflags = 2};
        if (ioctl(vcpu_fd[c], KVM_SET_SREGS, &s) < 0 || ioctl(vcpu_fd[c], KVM_SET_REGS, &g) < 0)
            die("KVM_SET_[S]REGS");
    }
    for (int i = 0; i < 200; i++) { /* warm both vCPUs */
        run_once(0);
        run_once(1);
    }
    double start = now_us();
    if (mode == SINGLE || mode == ONETHREAD) {
        for (long i = 0; i < exits; i++)
            run_once(mode == ONETHREAD ? (int)(i & 1) : 0);
    } else {
        pthread_t t[2];
        pthread_attr_t attr;
        cpu_set_t one;
        CPU_ZERO(&one);
        int cpu = sched_getcpu();
        if (cpu < 0)
            die("sched_getcpu");
        CPU_SET(cpu, &one);
        int e = pthread_attr_init(&attr);
        if (!e && mode == PINNED) /* pinned from their first instruction */
            e = pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        for (long i = 0; !e && i < 2; i++)
            e = pthread_create(&t[i], &attr, taker, (void *)i);
        if (e) {
            errno = e;
            die(mode == PINNED ? "pthread_create (pinned)" : "pthread_create");
        }
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
    printf("%s %.2f\n", names[mode], (now_us() - start) / (double)(exits - exits % 2));
    return 0;
}
