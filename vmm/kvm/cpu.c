#include "kvm/cpu.h"
#include "kvm/cpuidnorm.h"
#include "kvm/cputable.h"
#include "kvm/answers.h"
#include "kvm/hostcpu.h"
#include "kvm/kvmdiag.h"
#include "kvm/vclock.h"
#include "kvm/cpuidpatch.h"
#include "lib/util.h"
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define MSR_STAR           0xC0000081
#define MSR_LSTAR          0xC0000082
#define MSR_CSTAR          0xC0000083
#define MSR_SFMASK         0xC0000084
#define MSR_FS_BASE        0xC0000100
#define MSR_GS_BASE        0xC0000101
#define MSR_KERNEL_GS_BASE 0xC0000102
#define MSR_MISC_ENABLE    0x1A0

#define CR0_PE 1ULL
#define CR0_MP (1ULL << 1)
#define CR0_ET (1ULL << 4)
#define CR0_NE (1ULL << 5)
#define CR0_WP (1ULL << 16)
#define CR0_PG (1ULL << 31)
#define CR4_TSD (1ULL << 2)
#define CR4_PAE (1ULL << 5)
#define CR4_OSFXSR (1ULL << 9)
#define CR4_OSXMMEXCPT (1ULL << 10)
#define CR4_OSXSAVE (1ULL << 18)
#define EFER_SCE 1ULL
#define EFER_LME (1ULL << 8)
#define EFER_LMA (1ULL << 10)
#define EFER_NXE (1ULL << 11)

static int kvm_error(char *err, size_t errlen, const char *what)
{
    int e = errno;
    if (e == EACCES || e == EPERM)
        snprintf(err, errlen, "%s: permission denied — run as root or add yourself to group kvm",
                 what);
    else if (e == ENOENT || e == ENODEV || e == ENXIO)
        snprintf(err, errlen, "%s: KVM is not available on this machine (no /dev/kvm: enable "
                 "virtualization in the firmware or nested KVM, and load kvm_intel/kvm_amd)", what);
    else
        snprintf(err, errlen, "%s: %s", what, strerror(e));
    return -1;
}

static struct kvm_cpuid_entry2 *cpuid_find(struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
    for (uint32_t i = 0; i < c->nent; i++)
        if (c->entries[i].function == fn && c->entries[i].index == idx)
            return &c->entries[i];
    return NULL;
}

/* PVM serves /dev/kvm without VMX/SVM: guest "supervisor" code runs in hardware ring 3
 * and a user SYSCALL stays in user mode. The syscall entry differs (see agent.S); the
 * first syscall double-checks this guess (vm.c). */
static bool detect_pvm(void)
{
    if (access("/sys/module/kvm_pvm", F_OK) == 0)
        return true;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return false;
    char line[4096];
    bool hw = false;
    while (!hw && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5) && (strstr(line, " vmx") || strstr(line, " svm")))
            hw = true;
    fclose(f);
    return !hw;
}

int cpu_open_vm(struct vm *vm, char *err, size_t errlen)
{
    vm->pvm = detect_pvm();
    /* User-mode CPUID traps always under VMX/SVM (CPUID exits to KVM), under PVM only if
     * the host CPU has CPUID faulting. */
    vm->cpuid_hidden = !vm->pvm || hostcpu_flag("cpuid_fault");
    const char *dev = kvm_device_path(); /* /dev/kvm, or JINX_KVM_DEVICE in tests */
    vm->kvm_fd = open(dev, O_RDWR | O_CLOEXEC);
    if (vm->kvm_fd < 0) {
        int e = errno;
        /* The why and the what to do depend on the host (kvmdiag.h). */
        if (!kvm_device_overridden() && kvm_diagnose(NULL, err, errlen) != KVM_DIAG_OK)
            return -1;
        errno = e; /* it opens now: say what the first open met */
        return kvm_error(err, errlen, dev);
    }
    if (ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
        snprintf(err, errlen, "%s: not a KVM device, or an unexpected KVM API version", dev);
        return -1;
    }
    static const struct { int cap; const char *name; } need[] = {
        {KVM_CAP_SYNC_REGS, "KVM_CAP_SYNC_REGS"},
        {KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT"},
        {KVM_CAP_XSAVE, "KVM_CAP_XSAVE"},
        {KVM_CAP_XCRS, "KVM_CAP_XCRS"},
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, need[i].cap) <= 0) {
            snprintf(err, errlen, "/dev/kvm: this kernel lacks %s (Linux >= 4.19 needed)",
                     need[i].name);
            return -1;
        }
    vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
    if (vm->vm_fd < 0)
        return kvm_error(err, errlen, "KVM_CREATE_VM");
    fcntl(vm->vm_fd, F_SETFD, FD_CLOEXEC);
    int rs = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (rs <= 0)
        return kvm_error(err, errlen, "KVM_GET_VCPU_MMAP_SIZE");
    vm->run_size = (size_t)rs;
    /* The most vCPUs this host's KVM makes per VM (1024 on the PVM CI host; 0: not
     * reported). vm.c caps the threads at it when it is below MAX_VCPUS. */
    int mv = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
    if (mv <= 0)
        mv = ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
    vm->host_max_vcpus = mv > 0 ? mv : 0;
    if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, 0xfffbd000UL) < 0)
        return kvm_error(err, errlen, "KVM_SET_TSS_ADDR");
    struct kvm_userspace_memory_region region = {
        .slot = 0, .guest_phys_addr = 0, .memory_size = vm->gm.size,
        .userspace_addr = (uint64_t)(uintptr_t)vm->gm.host,
    };
    if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
        return kvm_error(err, errlen, "KVM_SET_USER_MEMORY_REGION");

    /* Guest CPUID: what KVM supports as the model restricts it, minus the
     * nondeterministic instructions. */
    if (!(vm->cpuid = cpu_supported(vm->kvm_fd, err, errlen)))
        return -1;
    cpuid_clear_host_ids(vm->cpuid); /* not where jinx-vmm happens to run (cpuidnorm.h) */
    if (cpu_choose_table(vm, err, errlen) < 0)
        return -1;
    struct kvm_cpuid_entry2 *e;
    if ((e = cpuid_find(vm->cpuid, 1, 0))) {
        e->ecx &= ~(1u << 30); /* RDRAND */
        e->ecx &= ~(1u << 5);  /* VMX: nothing to nest */
        vm->hwcap = e->edx;
    }
    if ((e = cpuid_find(vm->cpuid, 7, 0)))
        e->ebx &= ~(1u << 18); /* RDSEED */
    /* User CPUID runs natively here: the model reaches the program only through the
     * patched cpuid instructions (kvm/cpuidpatch.h). `host` keeps native CPUID. User
     * rdtsc runs natively on PVM (CR4.TSD ignored): patched whatever the model, as
     * CR4.TSD traps it elsewhere in every mode. A given table (a replay's recorded sites,
     * a worker's main VM's) is answered on any host: its memory holds them patched. */
    vm->patch_kinds = (!vm->cpuid_hidden && strcmp(vm->cpu_model, "host")
                           ? PATCH_KIND_BIT(PATCH_CPUID) : 0) |
                      (vm->pvm ? PATCH_KINDS_TSC : 0);
    if (vm->patch_kinds || vm->opt.cpuid_patches) {
        vm->patches = vm->opt.cpuid_patches ? cpuidpatch_ref(vm->opt.cpuid_patches)
                                            : cpuidpatch_new();
        if (!vm->patches) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static void set_seg(uint8_t *gdt, int sel, uint64_t desc) { memcpy(gdt + sel, &desc, 8); }

int cpu_setup_tables(struct vm *vm, const uint8_t *agent, size_t agent_len, char *err,
                     size_t errlen)
{
    if (agent_len < sizeof(struct agent_header) || agent_len > AGENT_MAX_SIZE) {
        snprintf(err, errlen, "internal: guest-agent image has a bad size");
        return -1;
    }
    memcpy(&vm->agent, agent, sizeof vm->agent);
    if (vm->agent.magic != AGENT_MAGIC || vm->agent.exc_stubs + 32 * 16 > agent_len ||
        agent_len > PAGE_SIZE || vm->agent.mmio_user >= agent_len ||
        vm->agent.syscall_mmio >= agent_len) {
        snprintf(err, errlen, "internal: guest-agent image has a bad header");
        return -1;
    }
    memcpy(gm_ptr(&vm->gm, GPA_AGENT), agent, agent_len);
    if (answers_install(gm_ptr(&vm->gm, GPA_AGENT), agent_len, vm->agent.answers,
                        !vm->opt.no_guest_answers) < 0) {
        snprintf(err, errlen, "internal: guest-agent image has no room for its answers table");
        return -1;
    }
    if (vclock_setup_vm(vm, agent_len) < 0) {
        snprintf(err, errlen, "internal: guest-agent image has a bad clock block");
        return -1;
    }
    if (gm_map_agent_pages(&vm->gm) < 0) {
        snprintf(err, errlen, "out of guest memory for the agent's page tables");
        return -1;
    }

    uint8_t *gdt = gm_ptr(&vm->gm, GPA_GDT);
    set_seg(gdt, SEL_KCODE, 0x00AF9A000000FFFFULL);
    set_seg(gdt, SEL_KDATA, 0x00CF92000000FFFFULL);
    set_seg(gdt, SEL_UDATA & ~3, 0x00CFF2000000FFFFULL);
    set_seg(gdt, SEL_UCODE & ~3, 0x00AFFA000000FFFFULL);
    /* The TSS descriptor describes vCPU 0's TSS; each vCPU's TR cache holds its own base. */
    uint64_t tss = KVA(GPA_PERCPU);
    uint64_t lo = 0x67 | ((tss & 0xFFFFFF) << 16) | (0x89ULL << 40) | (((tss >> 24) & 0xFF) << 56);
    set_seg(gdt, SEL_TSS, lo);
    set_seg(gdt, SEL_TSS + 8, tss >> 32);

    uint8_t *idt = gm_ptr(&vm->gm, GPA_IDT);
    for (int vec = 0; vec < 32; vec++) {
        uint64_t h = KVA(GPA_AGENT) + vm->agent.exc_stubs + (uint64_t)vec * 16;
        /* int3 may be used from user mode (debug traps); every other gate is DPL 0. */
        uint8_t attr = vec == 3 ? 0xEE : 0x8E;
        uint64_t g0 = (h & 0xFFFF) | ((uint64_t)SEL_KCODE << 16) | (1ULL << 32) /* IST1 */ |
                      ((uint64_t)attr << 40) | (((h >> 16) & 0xFFFF) << 48);
        uint64_t g1 = h >> 32;
        memcpy(idt + vec * 16, &g0, 8);
        memcpy(idt + vec * 16 + 8, &g1, 8);
    }
    for (int i = 0; i < MAX_VCPUS; i++) {
        uint8_t *t = gm_ptr(&vm->gm, GPA_PERCPU + (uint64_t)i * PERCPU_SIZE);
        uint64_t top = KVA(GPA_PERCPU + (uint64_t)(i + 1) * PERCPU_SIZE) - 16;
        memset(t, 0, 104);
        memcpy(t + 4, &top, 8);    /* RSP0 */
        memcpy(t + 0x24, &top, 8); /* IST1 */
        uint16_t iomap = 104;      /* beyond the limit: every port denied in ring 3 */
        memcpy(t + 102, &iomap, 2);
    }
    return 0;
}

void cpu_sregs(struct vm *vm, struct vcpu *v, struct kvm_sregs *s, bool user)
{
    (void)vm;
    struct kvm_segment code = {.base = 0, .limit = 0xFFFFFFFF, .type = 11, .present = 1,
                               .s = 1, .l = 1, .g = 1};
    struct kvm_segment data = {.base = 0, .limit = 0xFFFFFFFF, .type = 3, .present = 1,
                               .s = 1, .db = 1, .g = 1};
    uint64_t fs = s->fs.base, gs = s->gs.base;
    if (user) {
        code.selector = SEL_UCODE;
        code.dpl = 3;
        data.selector = SEL_UDATA;
        data.dpl = 3;
    } else {
        code.selector = SEL_KCODE;
        data.selector = SEL_KDATA;
    }
    s->cs = code;
    s->ss = data;
    struct kvm_segment udata = data;
    udata.selector = SEL_UDATA;
    udata.dpl = 3;
    s->ds = s->es = s->fs = s->gs = udata;
    s->fs.base = fs;
    s->gs.base = gs;
    s->tr = (struct kvm_segment){.base = KVA(GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE),
                                 .limit = 0x67, .selector = SEL_TSS, .type = 11, .present = 1};
    s->ldt = (struct kvm_segment){.selector = 0, .type = 2, .present = 0, .unusable = 1};
    s->gdt.base = KVA(GPA_GDT);
    s->gdt.limit = SEL_TSS + 15;
    s->idt.base = KVA(GPA_IDT);
    s->idt.limit = 32 * 16 - 1;
    s->cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
    s->cr3 = GPA_PML4;
    s->cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT | CR4_TSD | CR4_OSXSAVE;
    s->efer = EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE;
}

/* struct kvm_msrs ends in a flexible array: build it in an aligned buffer. */
#define MSR_BATCH_MAX 8
bool cpu_cpuid(const struct vm *vm, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    const struct kvm_cpuid2 *c = vm->cpuid;
    for (uint32_t i = 0; c && i < c->nent; i++) {
        const struct kvm_cpuid_entry2 *e = &c->entries[i];
        bool indexed = e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
        if (e->function == leaf && (!indexed || e->index == sub)) {
            out[0] = e->eax;
            out[1] = e->ebx;
            out[2] = e->ecx;
            out[3] = e->edx;
            if (leaf == 1)
                out[2] |= 1u << 27; /* OSXSAVE: CR4.OSXSAVE is set */
            return true;
        }
    }
    out[0] = out[1] = out[2] = out[3] = 0;
    return false;
}

void cpu_cpuid_user(const struct vm *vm, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    cpu_cpuid(vm, leaf, sub, out);
    if (vm->pvm && leaf == 0xD && sub == 0) {
        unsigned a, b, c, d;
        __cpuid_count(0xD, 0, a, b, c, d);
        if (b > out[1])
            out[1] = b;
        if (c > out[2])
            out[2] = c;
    }
}

int cpu_set_msrs(int vcpu_fd, const struct kvm_msr_entry *e, int n)
{
    _Alignas(16) uint8_t buf[sizeof(struct kvm_msrs) + MSR_BATCH_MAX * sizeof(struct kvm_msr_entry)];
    if (n < 1 || n > MSR_BATCH_MAX)
        return -1;
    memset(buf, 0, sizeof buf);
    struct kvm_msrs *m = (struct kvm_msrs *)buf;
    m->nmsrs = (uint32_t)n;
    memcpy(m->entries, e, (size_t)n * sizeof *e);
    return ioctl(vcpu_fd, KVM_SET_MSRS, m) == n ? 0 : -1;
}

int cpu_get_msr(int vcpu_fd, uint32_t index, uint64_t *val)
{
    _Alignas(16) uint8_t buf[sizeof(struct kvm_msrs) + sizeof(struct kvm_msr_entry)];
    memset(buf, 0, sizeof buf);
    struct kvm_msrs *m = (struct kvm_msrs *)buf;
    m->nmsrs = 1;
    m->entries[0].index = index;
    if (ioctl(vcpu_fd, KVM_GET_MSRS, m) != 1)
        return -1;
    *val = m->entries[0].data;
    return 0;
}

int cpu_create_vcpu(struct vm *vm, struct vcpu *v, char *err, size_t errlen)
{
    v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, v->index);
    if (v->fd < 0)
        return kvm_error(err, errlen, "KVM_CREATE_VCPU");
    fcntl(v->fd, F_SETFD, FD_CLOEXEC);
    v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
    if (v->run == MAP_FAILED) {
        v->run = NULL;
        return kvm_error(err, errlen, "mmap vCPU run area");
    }
    /* Each vCPU reports its own APIC id, as a real CPU would. */
    struct kvm_cpuid_entry2 *e = cpuid_find(vm->cpuid, 1, 0);
    uint32_t saved = e ? e->ebx : 0;
    if (e)
        e->ebx = (e->ebx & 0x00FFFFFF) | ((uint32_t)v->index << 24);
    int r = ioctl(v->fd, KVM_SET_CPUID2, vm->cpuid);
    if (e)
        e->ebx = saved;
    if (r < 0)
        return kvm_error(err, errlen, "KVM_SET_CPUID2");

    struct kvm_sregs s;
    if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0)
        return kvm_error(err, errlen, "KVM_GET_SREGS");
    s.fs.base = s.gs.base = 0;
    cpu_sregs(vm, v, &s, false);
    if (ioctl(v->fd, KVM_SET_SREGS, &s) < 0)
        return kvm_error(err, errlen, "KVM_SET_SREGS");

    uint64_t lstar = UVA_AGENT + (vm->pvm ? vm->agent.syscall_user : vm->agent.syscall_ring0);
    struct kvm_msr_entry ents[] = {
        {.index = MSR_STAR, .data = ((uint64_t)(SEL_KDATA) << 48) | ((uint64_t)SEL_KCODE << 32)},
        {.index = MSR_LSTAR, .data = lstar},
        {.index = MSR_CSTAR, .data = lstar},
        /* Clear TF, DF, IF, IOPL, NT, AC on entry. */
        {.index = MSR_SFMASK, .data = 0x47700},
        {.index = MSR_KERNEL_GS_BASE, .data = 0},
        {.index = MSR_MISC_ENABLE, .data = 1},
    };
    if (cpu_set_msrs(v->fd, ents, 6) < 0)
        return kvm_error(err, errlen, "KVM_SET_MSRS");

    /* CPUID faulting: where CPUID does not exit to KVM (PVM runs the guest's user mode
     * natively), it is the only way to hide RDRAND/RDSEED; user-mode CPUID then raises
     * #GP and the VMM answers from the filtered table (vm.c). */
    uint64_t pinfo = 0;
    if (cpu_get_msr(v->fd, 0xCE /* MSR_PLATFORM_INFO */, &pinfo) == 0 && (pinfo & (1ULL << 31))) {
        struct kvm_msr_entry fe = {.index = 0x140 /* MSR_MISC_FEATURES_ENABLES */, .data = 1};
        vm->cpuid_faulting = cpu_set_msrs(v->fd, &fe, 1) == 0;
    }

    struct kvm_xcrs x = {.nr_xcrs = 1, .xcrs = {{.xcr = 0, .value = vm->xcr0}}};
    if (ioctl(v->fd, KVM_SET_XCRS, &x) < 0)
        return kvm_error(err, errlen, "KVM_SET_XCRS");
    /* Segment and control registers come with every exit too: an exception's return to
     * user mode (vm.c) then costs no KVM_GET_SREGS/KVM_SET_SREGS ioctl pair. */
    v->run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
    return 0;
}
