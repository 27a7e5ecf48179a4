/* Probe: can KVM's guest debugging replace the agent's exception round trip for a step
 * or a breakpoint on this host, and what does one such exit cost? Independent of Jinx.
 *
 * A counted hit of a sparse point (vmm/sched/sparse.h) and a traced cue point's step
 * each take user-mode exceptions (#BP, #DB) through the guest-agent, which exits to the
 * VMM, which returns to user mode with KVM_SET_SREGS (PVM cannot emulate the agent's
 * iretq: vmm/kvm/exception.c). KVM_SET_GUEST_DEBUG could end a step or catch an int3 in
 * KVM itself (KVM_EXIT_DEBUG), with no agent and no KVM_SET_SREGS. A real-mode guest
 * loops on one instruction per mode:
 *
 *   out    `out` (the raw exit round trip, as ../shared/tools/kvm-exit-probe.c)
 *   swbp   `int3` with KVM_GUESTDBG_USE_SW_BP: a KVM_EXIT_DEBUG per int3 if KVM
 *          intercepts #BP, else the guest's own #BP (real mode: its vector table)
 *   step   `nop` with KVM_GUESTDBG_SINGLESTEP: a KVM_EXIT_DEBUG per instruction
 *
 * usage: guest-debug-probe MODE [N]   prints "MODE us-per-exit debug-exits other-exits" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "out";
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    static const unsigned char out[] = {0xe6, 0x10, 0xeb, 0xfc};  /* out 0x10,al; jmp -4 */
    static const unsigned char bp[] = {0xcc, 0xeb, 0xfd};         /* int3; jmp -3 */
    static const unsigned char nop[] = {0x90, 0x90, 0xeb, 0xfc};  /* nop; nop; jmp -4 */
    const unsigned char *code = out;
    size_t len = sizeof out;
    unsigned control = 0;
    if (strcmp(mode, "swbp") == 0) {
        code = bp, len = sizeof bp, control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_SW_BP;
    } else if (strcmp(mode, "step") == 0) {
        code = nop, len = sizeof nop, control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
    } else if (strcmp(mode, "out") != 0 || n <= 0) {
        fprintf(stderr, "usage: guest-debug-probe out|swbp|step [N]\n");
        return 2;
    }
    int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    int vm = kvm < 0 ? -1 : ioctl(kvm, KVM_CREATE_VM, 0);
    if (vm < 0) {
        perror("/dev/kvm");
        return 1;
    }
    unsigned char *mem = mmap(0, 0x1000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memcpy(mem, code, len);
    struct kvm_userspace_memory_region r = {.slot = 0, .guest_phys_addr = 0x1000,
                                            .memory_size = 0x1000,
                                            .userspace_addr = (unsigned long)mem};
    int cpu = ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -1 : ioctl(vm, KVM_CREATE_VCPU, 0);
    int sz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (cpu < 0 || sz <= 0) {
        perror("vcpu");
        return 1;
    }
    struct kvm_run *run = mmap(0, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, cpu, 0);
    struct kvm_sregs s;
    ioctl(cpu, KVM_GET_SREGS, &s);
    s.cs.base = 0;
    s.cs.selector = 0;
    ioctl(cpu, KVM_SET_SREGS, &s);
    struct kvm_regs g = {.rip = 0x1000, .rflags = 2};
    ioctl(cpu, KVM_SET_REGS, &g);
    if (control) {
        struct kvm_guest_debug d;
        memset(&d, 0, sizeof d);
        d.control = control;
        if (ioctl(cpu, KVM_SET_GUEST_DEBUG, &d) < 0) {
            perror("KVM_SET_GUEST_DEBUG");
            return 1;
        }
    }
    int dbg = 0, other = 0;
    unsigned last = 0;
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        if (ioctl(cpu, KVM_RUN, 0) < 0) {
            perror("KVM_RUN");
            return 1;
        }
        if (run->exit_reason == KVM_EXIT_DEBUG) {
            dbg++;
            if (control & KVM_GUESTDBG_USE_SW_BP) { /* past the int3 */
                struct kvm_regs q;
                ioctl(cpu, KVM_GET_REGS, &q);
                q.rip += 1;
                ioctl(cpu, KVM_SET_REGS, &q);
            }
        } else if (run->exit_reason != KVM_EXIT_IO) {
            other++;
            last = run->exit_reason;
        }
    }
    printf("%s %.3f %d %d (last other exit reason %u)\n", mode, (now_us() - t0) / n, dbg, other,
           last);
    return 0;
}
