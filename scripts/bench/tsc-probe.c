/* tsc-probe: what a guest's `rdtsc` returns on this host, and whether the VMM can move it.
 *
 * Issue 14 item 3 wants clock_gettime answered in the guest in free execution. The agent
 * runs in user mode under PVM, so it needs a clock that user mode can read and that the
 * VMM can map exactly onto its own virtual time. This bare guest (paging, 2 MiB user
 * pages, no IDT: an exception shuts the vCPU down) runs `rdtsc` in user mode and ends
 * each reading with an MMIO exit; the host brackets every KVM_RUN with its own `rdtsc`.
 *
 *   default       guest TSC - host TSC (median), and whether it lies within the bracket
 *   ia32-tsc      after KVM_SET_MSRS IA32_TSC = 0 (should move the guest TSC to ~0)
 *   tsc-offset    after KVM_SET_DEVICE_ATTR KVM_VCPU_TSC_OFFSET = -2^40
 *   tsc-khz       KVM_GET_TSC_KHZ against the host TSC rate measured over CLOCK_MONOTONIC_RAW;
 *                 after KVM_SET_TSC_KHZ to half of it, the guest's rate over a 100 ms sleep
 *   cr4-tsd       user rdtsc with CR4.TSD set: must fault (shutdown or internal error)
 *   ring0         the same reading from ring 0
 *
 * usage: tsc-probe [--json]. Exit status 2 when /dev/kvm fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define MEM_SIZE (4u << 20)
#define G_GDT 0x1000
#define G_PML4 0x3000
#define G_PDPT 0x4000
#define G_PD 0x5000
#define G_CODE 0x20000
#define G_MMIO 0xF0000000ULL /* mapped at user VA 0x600000, unbacked: a read exits */

/* rdtsc into r8, then the MMIO read that exits; assembled into the host binary. */
__asm__(".pushsection .rodata.guest,\"a\"\n.code64\n.globl g_tsc\ng_tsc:\n"
        "1: rdtsc\n shl $32, %rdx\n or %rdx, %rax\n mov %rax, %r8\n"
        " mov $0x600000, %edx\n mov (%rdx), %rax\n jmp 1b\n"
        ".globl g_tsc_end\ng_tsc_end:\n.popsection\n");
extern const uint8_t g_tsc[], g_tsc_end[];

static int kvm_fd;

static void put64(uint8_t *mem, uint64_t gpa, uint64_t v) { memcpy(mem + gpa, &v, 8); }

struct guest {
    int vm, fd;
    uint8_t *mem;
    struct kvm_run *run;
    int run_size;
};

static int guest_open(struct guest *g, bool user, bool tsd)
{
    memset(g, 0, sizeof *g);
    g->vm = ioctl(kvm_fd, KVM_CREATE_VM, 0);
    g->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (g->vm < 0 || g->mem == MAP_FAILED)
        return -1;
    put64(g->mem, G_PML4, G_PDPT | 7);
    put64(g->mem, G_PDPT, G_PD | 7);
    put64(g->mem, G_PD, 0x000000 | 0x87);
    put64(g->mem, G_PD + 8, 0x200000 | 0x87);
    put64(g->mem, G_PD + 3 * 8, G_MMIO | 0x87);
    put64(g->mem, G_GDT + 0x08, 0x00AF9A000000FFFFULL);
    put64(g->mem, G_GDT + 0x10, 0x00CF92000000FFFFULL);
    put64(g->mem, G_GDT + 0x18, 0x00CFF2000000FFFFULL);
    put64(g->mem, G_GDT + 0x20, 0x00AFFA000000FFFFULL);
    memcpy(g->mem + G_CODE, g_tsc, (size_t)(g_tsc_end - g_tsc));
    struct kvm_userspace_memory_region r = {.memory_size = MEM_SIZE,
                                            .userspace_addr = (uint64_t)g->mem};
    if (ioctl(g->vm, KVM_SET_USER_MEMORY_REGION, &r) < 0)
        return -1;
    g->fd = ioctl(g->vm, KVM_CREATE_VCPU, 0);
    g->run_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (g->fd < 0 || g->run_size <= 0)
        return -1;
    g->run = mmap(NULL, (size_t)g->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
    struct kvm_sregs s;
    if (g->run == MAP_FAILED || ioctl(g->fd, KVM_GET_SREGS, &s) < 0)
        return -1;
    struct kvm_segment code = {.limit = 0xFFFFFFFF, .type = 11, .present = 1, .s = 1, .l = 1,
                               .g = 1, .selector = user ? 0x23 : 0x08, .dpl = user ? 3 : 0};
    struct kvm_segment data = {.limit = 0xFFFFFFFF, .type = 3, .present = 1, .s = 1, .db = 1,
                               .g = 1, .selector = user ? 0x1b : 0x10, .dpl = user ? 3 : 0};
    s.cs = code;
    s.ss = s.ds = s.es = s.fs = s.gs = data;
    s.gdt.base = G_GDT;
    s.gdt.limit = 0x27;
    s.cr0 = 0x80050033;
    s.cr3 = G_PML4;
    s.cr4 = 0x620 | (tsd ? 0x4 : 0);
    s.efer = 0xD01;
    struct kvm_regs regs = {.rip = G_CODE, .rsp = 0x100000, .rflags = 0x2};
    if (ioctl(g->fd, KVM_SET_SREGS, &s) < 0 || ioctl(g->fd, KVM_SET_REGS, &regs) < 0)
        return -1;
    return 0;
}

static void guest_close(struct guest *g)
{
    if (g->run && g->run != MAP_FAILED)
        munmap(g->run, (size_t)g->run_size);
    if (g->fd > 0)
        close(g->fd);
    if (g->mem && g->mem != MAP_FAILED)
        munmap(g->mem, MEM_SIZE);
    if (g->vm > 0)
        close(g->vm);
}

/* One reading: guest TSC, and the host TSC just before and after KVM_RUN. 0 on success,
 * else the exit reason (or -1 for an ioctl failure). */
static int reading(struct guest *g, uint64_t *gt, uint64_t *h0, uint64_t *h1)
{
    *h0 = __rdtsc();
    int rc = ioctl(g->fd, KVM_RUN, 0);
    *h1 = __rdtsc();
    if (rc < 0)
        return -1;
    if (g->run->exit_reason != KVM_EXIT_MMIO)
        return (int)g->run->exit_reason;
    struct kvm_regs r;
    if (ioctl(g->fd, KVM_GET_REGS, &r) < 0)
        return -1;
    *gt = r.r8;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Median of guest - host(before) over n readings, and how many lay within the bracket. */
static int offset(struct guest *g, int n, int64_t *med, int *within)
{
    int64_t d[64];
    if (n > 64)
        n = 64;
    *within = 0;
    for (int i = 0; i < n; i++) {
        uint64_t gt, h0, h1;
        int rc = reading(g, &gt, &h0, &h1);
        if (rc)
            return rc;
        d[i] = (int64_t)(gt - h0);
        *within += gt >= h0 && gt <= h1;
    }
    qsort(d, (size_t)n, sizeof d[0], cmp_i64);
    *med = d[n / 2];
    return 0;
}

static double host_khz(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC_RAW, &a);
    uint64_t t0 = __rdtsc();
    usleep(200000);
    uint64_t t1 = __rdtsc();
    clock_gettime(CLOCK_MONOTONIC_RAW, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    return (double)(t1 - t0) / ns * 1e6;
}

static const char *why(int rc)
{
    static char buf[64];
    if (rc == -1)
        snprintf(buf, sizeof buf, "ioctl failed: %s", strerror(errno));
    else
        snprintf(buf, sizeof buf, "exit reason %d (%s)", rc,
                 rc == KVM_EXIT_SHUTDOWN ? "shutdown: the read faulted"
                 : rc == KVM_EXIT_INTERNAL_ERROR ? "internal error: the read faulted"
                                                 : "unexpected");
    return buf;
}

int main(int argc, char **argv)
{
    bool json = argc > 1 && !strcmp(argv[1], "--json");
    if (argc > 2 || (argc == 2 && !json)) {
        fprintf(stderr, "usage: tsc-probe [--json]\n");
        return 2;
    }
    kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (kvm_fd < 0) {
        fprintf(stderr, "tsc-probe: /dev/kvm: %s (run as root on a KVM host)\n", strerror(errno));
        return 2;
    }
    bool pvm = access("/sys/module/kvm_pvm", F_OK) == 0;
    struct guest g;
    int64_t med;
    int within, rc;
    const int n = 41;
    char out[4096];
    size_t o = 0;
#define EMIT(...) (o += (size_t)snprintf(out + o, sizeof out - o, __VA_ARGS__))
    EMIT("{\"hypervisor\":\"%s\"", pvm ? "pvm" : "hardware");

    /* User mode, nothing touched. */
    if (guest_open(&g, true, false) < 0) {
        fprintf(stderr, "tsc-probe: guest setup: %s\n", strerror(errno));
        return 2;
    }
    rc = offset(&g, n, &med, &within);
    if (rc)
        EMIT(",\"user\":{\"ok\":false,\"why\":\"%s\"}", why(rc));
    else
        EMIT(",\"user\":{\"ok\":true,\"guest_minus_host\":%lld,\"within_bracket\":%d,\"of\":%d}",
             (long long)med, within, n);
    /* KVM_SET_MSRS IA32_TSC = 0. */
    _Alignas(16) uint8_t msrbuf[sizeof(struct kvm_msrs) + sizeof(struct kvm_msr_entry)] = {0};
    struct kvm_msrs *msr = (struct kvm_msrs *)msrbuf;
    msr->nmsrs = 1;
    msr->entries[0] = (struct kvm_msr_entry){.index = 0x10, .data = 0}; /* IA32_TSC */
    int set = ioctl(g.fd, KVM_SET_MSRS, msr);
    rc = offset(&g, n, &med, &within);
    EMIT(",\"ia32_tsc_0\":{\"set\":%d,\"ok\":%s,\"guest_minus_host\":%lld,\"within_bracket\":%d}",
         set, rc ? "false" : "true", (long long)med, within);
    /* KVM_VCPU_TSC_OFFSET = -2^40. */
    int64_t off = -(1LL << 40), got = 0;
    struct kvm_device_attr a = {.group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET,
                                .addr = (uint64_t)&off};
    int has = ioctl(g.fd, KVM_HAS_DEVICE_ATTR, &a);
    set = has == 0 ? ioctl(g.fd, KVM_SET_DEVICE_ATTR, &a) : -1;
    a.addr = (uint64_t)&got;
    int gotrc = has == 0 ? ioctl(g.fd, KVM_GET_DEVICE_ATTR, &a) : -1;
    rc = offset(&g, n, &med, &within);
    EMIT(",\"tsc_offset\":{\"has_attr\":%s,\"set\":%d,\"read_back\":%lld,\"ok\":%s,"
         "\"guest_minus_host\":%lld,\"within_bracket\":%d}",
         has == 0 ? "true" : "false", set, gotrc == 0 ? (long long)got : 0LL,
         rc ? "false" : "true", (long long)med, within);
    guest_close(&g);

    /* Rate: KVM's view, the host's, and whether KVM_SET_TSC_KHZ changes what the guest sees. */
    double hk = host_khz();
    guest_open(&g, true, false);
    int kvm_khz = ioctl(g.fd, KVM_GET_TSC_KHZ, 0);
    int setk = ioctl(g.fd, KVM_SET_TSC_KHZ, (unsigned long)(hk / 2));
    uint64_t g0, g1, h0, h1, x;
    int rc0 = reading(&g, &g0, &h0, &x);
    usleep(100000);
    int rc1 = reading(&g, &g1, &h1, &x);
    EMIT(",\"rate\":{\"host_khz_measured\":%.0f,\"kvm_get_tsc_khz\":%d,\"set_tsc_khz_half\":%d,"
         "\"guest_over_host_rate_after\":%.4f}",
         hk, kvm_khz, setk, rc0 || rc1 ? 0.0 : (double)(g1 - g0) / (double)(h1 - h0));
    guest_close(&g);

    /* CR4.TSD: a user rdtsc must fault. */
    guest_open(&g, true, true);
    rc = offset(&g, 1, &med, &within);
    EMIT(",\"cr4_tsd_user\":{\"faulted\":%s,\"what\":\"%s\"}", rc ? "true" : "false",
         rc ? why(rc) : "rdtsc ran in user mode despite CR4.TSD");
    guest_close(&g);

    /* Ring 0. */
    guest_open(&g, false, false);
    rc = offset(&g, n, &med, &within);
    EMIT(",\"ring0\":{\"ok\":%s,\"guest_minus_host\":%lld,\"within_bracket\":%d}",
         rc ? "false" : "true", (long long)med, within);
    guest_close(&g);
    EMIT("}\n");
    if (json)
        fputs(out, stdout);
    else
        for (const char *p = out; *p; p++) /* one field group a line */
            putchar(*p), *p == '}' && p[1] == ',' ? putchar('\n') : 0;
    return 0;
}
