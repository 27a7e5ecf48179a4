/* Guest exceptions and the outcomes a thread raises (fatal signal, exit_group): the
 * part of the exit loop (vm.c) that turns an exception stub's exit into either a
 * resumed thread or the VM's outcome. */
#include "kvm/layout.h"
#include "kvm/exception.h"
#include "kvm/cpu.h"
#include "kvm/cpuidpatch.h"
#include "kvm/vm.h"
#include "kvm/vtsc.h"
#include "linux/demand.h"
#include "lib/util.h"
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>


/* ---- outcomes raised by threads ------------------------------------------------- */

static void capture_regs(struct outcome *o, const struct kvm_regs *r)
{
    if (!r)
        return;
    o->has_regs = true;
    o->regs = *r;
}

void vm_fatal_signal(struct vm *vm, struct vcpu *v, int sig, const struct kvm_regs *r,
                     uint64_t rip, const char *why)
{
    struct outcome o = {.kind = OUT_SIGNAL, .signal = sig, .thread = v->tid, .vector = -1,
                        .rip = rip};
    capture_regs(&o, r);
    if (r) {
        o.regs.rip = rip;
        o.nbt = vm_backtrace(vm, rip, r->rsp, r->rbp, o.bt, OUT_MAX_BT);
    }
    snprintf(o.detail, sizeof o.detail, "%s", why ? why : "");
    pthread_mutex_lock(&vm->lock);
    vm_stop_locked(vm, &o);
    pthread_mutex_unlock(&vm->lock);
}

void vm_exit_group(struct vm *vm, int status)
{
    struct outcome o = {.kind = OUT_EXIT, .status = status & 0xFF};
    pthread_mutex_lock(&vm->lock);
    vm_stop_locked(vm, &o);
    pthread_mutex_unlock(&vm->lock);
}

/* ---- exceptions ----------------------------------------------------------------- */

static int vector_signal(int vec)
{
    switch (vec) {
    case 0: case 16: case 19: return SIGFPE;
    case 1: case 3: return SIGTRAP;
    case 6: return SIGILL;
    case 17: return SIGBUS;
    default: return SIGSEGV;
    }
}

static bool has_errcode(int vec)
{
    return vec == 8 || vec == 10 || vec == 11 || vec == 12 || vec == 13 || vec == 14 ||
           vec == 17 || vec == 21 || vec == 29 || vec == 30;
}

static const char *vector_name(int vec)
{
    static const char *n[32] = {
        "#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
        "#BR bound range", "#UD invalid opcode", "#NM device not available",
        "#DF double fault", "coprocessor overrun", "#TS invalid TSS", "#NP segment not present",
        "#SS stack fault", "#GP general protection", "#PF page fault", "reserved",
        "#MF x87 floating point", "#AC alignment check", "#MC machine check",
        "#XM SIMD floating point", "#VE virtualization", "#CP control protection"};
    return vec >= 0 && vec < 32 && n[vec] ? n[vec] : "exception";
}

/* rdtsc/rdtscp trap in ring 3 (CR4.TSD): answer with virtual time, deterministic. Not on
 * PVM, which does not honour CR4.TSD (scripts/bench/tsc-probe.c): there it never traps,
 * and the program's rdtsc/rdtscp are patched instead (kvm/cpuidpatch.h). */
static bool emulate_tsc(struct vm *vm, struct vcpu *v, uint64_t *frame_rip)
{
    uint8_t insn[3];
    if (!copy_from_user(&vm->gm, insn, *frame_rip, 2))
        return false;
    int len = 0;
    if (insn[0] == 0x0F && insn[1] == 0x31)
        len = 2;
    else if (insn[0] == 0x0F && insn[1] == 0x01 && copy_from_user(&vm->gm, insn, *frame_rip, 3) &&
             insn[2] == 0xF9)
        len = 3;
    if (!len)
        return false;
    vtsc_answer(vm, v, len == 3);
    *frame_rip += (uint64_t)len;
    return true;
}

/* CPUID in user mode with CPUID faulting on: answer from the filtered table. */
static bool emulate_cpuid(struct vm *vm, struct vcpu *v, uint64_t *frame_rip)
{
    uint8_t insn[2];
    if (!vm->cpuid_faulting || !copy_from_user(&vm->gm, insn, *frame_rip, 2) ||
        insn[0] != 0x0F || insn[1] != 0xA2)
        return false;
    struct kvm_regs *r = &v->run->s.regs.regs;
    uint32_t out[4];
    cpu_cpuid_user(vm, (uint32_t)r->rax, (uint32_t)r->rcx, out);
    r->rax = out[0];
    r->rbx = out[1];
    r->rcx = out[2];
    r->rdx = out[3];
    *frame_rip += 2;
    return true;
}

/* Resumes the thread in user mode at rip/rsp/rflags by setting the vCPU state directly.
 * Used instead of the agent's iretq, which PVM (KVM on machines without hardware
 * virtualization) cannot emulate. */
static bool return_to_user(struct vm *vm, struct vcpu *v, uint64_t rip, uint64_t rsp,
                           uint64_t rflags)
{
    /* The exit brought the special registers along (kvm_valid_regs): no KVM_GET_SREGS.
     * They are set by ioctl, from a copy: changing kvm_run's copy in place (with or
     * without KVM_SYNC_X86_SREGS in kvm_dirty_regs) left threads stuck on this PVM host,
     * measured with serial.sh's --simulate runs. */
    struct kvm_sregs s = v->run->s.regs.sregs;
    cpu_sregs(vm, v, &s, true);
    if (ioctl(v->fd, KVM_SET_SREGS, &s) < 0)
        return false;
    struct kvm_regs *r = &v->run->s.regs.regs;
    r->rip = rip;
    r->rsp = rsp;
    r->rflags = (rflags & 0x3C0FD5) | 0x202; /* user-modifiable flags, IF set */
    v->run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
    return true;
}

/* A not-present #PF whose page now lets the access through: the fault was taken on a
 * PTE that has changed since, and the instruction simply runs again (as Linux does with
 * a spurious fault). A pause may catch a vCPU between a fault's delivery to the agent
 * and the agent's exit to the VMM (agent.S, pf_exit before its `out`): when a serialized
 * fragment is stopped wherever its running thread is (the wall guard's or a budget's
 * hard stop, serialize_fragment_run_from), the fault was taken on a trapped page
 * (crew.h), the fragment's end (crew_stop) maps every page again, and the exit, made
 * when the thread next runs, in free execution, found nobody to claim the fault: the
 * bug-free throughput was killed by SIGSEGV at a read of its own .data after
 * --explore/--attach rounds (1 run in ~25 at load 9; 3 of 24 with the wall guard cut to
 * 30 ms; JINX_TEST_FAULT_IN_FLIGHT, below, every time). A page that is still unmapped,
 * PROT_NONE, trapped or read-only for the access (and not claimed by the mode, above) is
 * a real fault. */
static bool fault_went_away(struct vm *vm, uint64_t cr2, uint64_t err)
{
    /* A protection fault too: a write to a page a sampled read mapped read-only
     * (sched/crew_sample.h), whose fragment ended (writable again) before the exit. */
    pthread_mutex_lock(&vm->gm.lock);
    const uint64_t *pte = gm_pte(&vm->gm, cr2 & PAGE_MASK, false);
    bool now = pte && gm_pte_allows(__atomic_load_n(pte, __ATOMIC_ACQUIRE), err);
    pthread_mutex_unlock(&vm->gm.lock);
    return now;
}

/* Test hook (tests/integration/fault-in-flight.sh): JINX_TEST_FAULT_IN_FLIGHT=N ends the
 * serialized fragment at the process's N-th not-present user fault taken serialized,
 * and leaves that fault in flight: the vCPU goes back to the agent's #PF stub (the fault
 * delivered, its exit not yet made), as a hard stop leaves it (fault_went_away); the
 * stub runs again when the thread next runs, after the fragment's end. 0 in real runs. */
static bool test_fault_in_flight(struct vm *vm, struct vcpu *v)
{
    static atomic_long left = -1;
    long n = atomic_load(&left);
    if (n < 0) {
        const char *e = getenv("JINX_TEST_FAULT_IN_FLIGHT");
        n = e ? strtol(e, NULL, 10) : 0;
        atomic_store(&left, n > 0 ? n : 0);
    }
    uint64_t now;
    if (n <= 0 || !vm->mode || !vm->mode->vtime(vm, &now) || atomic_fetch_sub(&left, 1) != 1)
        return false;
    fprintf(stderr, "jinx-vmm: test hook: the fault at 0x%llx is left in flight, the fragment "
            "ends\n", (unsigned long long)v->run->s.regs.sregs.cr2);
    v->run->s.regs.regs.rip = KVA(GPA_AGENT) + vm->agent.exc_stubs + 14 * 16;
    v->run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
    pthread_mutex_lock(&vm->lock);
    vm->mode->fragment_over_locked(vm);
    pthread_cond_broadcast(&vm->done_cv);
    pthread_mutex_unlock(&vm->lock);
    return true;
}

bool vm_handle_exception(struct vm *vm, struct vcpu *v, int vec)
{
    struct kvm_regs *r = &v->run->s.regs.regs;
    uint64_t stack_lo = KVA(GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE);
    uint64_t stack_hi = stack_lo + PERCPU_SIZE;
    uint64_t fsz = has_errcode(vec) ? 48 : 40;
    if (r->rsp < stack_lo + 104 || r->rsp + fsz > stack_hi) {
        struct outcome o = {.kind = OUT_ERROR};
        snprintf(o.detail, sizeof o.detail, "internal: exception %d with a bad agent stack", vec);
        pthread_mutex_lock(&vm->lock);
        vm_stop_locked(vm, &o);
        pthread_mutex_unlock(&vm->lock);
        return false;
    }
    uint64_t *frame = gm_ptr(&vm->gm, r->rsp - KBASE);
    uint64_t err = 0;
    if (has_errcode(vec))
        err = *frame++;
    uint64_t rip = frame[0], cs = frame[1], rsp = frame[3];
    bool user = (cs & 3) == 3;
    /* Serialized execution: a watched page's fault is a cue point, and the #DB after a
     * single-stepped access (or the #BP ending a rep string instruction's step) ends its
     * step (crew.h). Either way the instruction runs for real, in user mode; nothing is
     * emulated. */
    struct kvm_regs u = *r;
    u.rip = rip;
    u.rsp = rsp;
    u.rflags = frame[2];
    bool bp_step = false;
    if (user && vec == 3 && vm->mode && vm->mode->breakpoint(vm, v, rip, &u, &bp_step))
        return return_to_user(vm, v, rip - 1, rsp,
                              bp_step ? frame[2] | RFLAGS_TF : frame[2] & ~RFLAGS_TF);
    /* Back for anything else, a step's int3 goes and the step goes on by TF. */
    uint64_t tf_back = user && (vm->mode && vm->mode->unpatch(vm, v)) ? RFLAGS_TF : 0;
    if (user && vec == 13 && (emulate_tsc(vm, v, &frame[0]) || emulate_cpuid(vm, v, &frame[0])))
        return return_to_user(vm, v, frame[0], rsp, frame[2] | tf_back);
    if (user && vec == 6 && cpuidpatch_emulate(vm, v, &frame[0]))
        return return_to_user(vm, v, frame[0], rsp, frame[2] | tf_back);
    const struct kvm_sregs *s = &v->run->s.regs.sregs;
    if (user && vec == 14 && !(err & 1) && test_fault_in_flight(vm, v))
        return true;
    /* A first touch of a lazy page (linux/demand.h): its frame comes now, in every mode,
     * before the mode sees the fault (a serialized mode watches the new page and the
     * access, run again, is its cue point). */
    if (user && vec == 14) {
        int df = demand_fault(vm, s->cr2, err);
        if (df > 0)
            return return_to_user(vm, v, rip, rsp, frame[2] | tf_back);
        if (df < 0) {
            /* Linux's OOM killer would end the program; jinx's limit is noted. */
            char why[128];
            snprintf(why, sizeof why, "guest memory exhausted at the first touch of 0x%llx "
                     "(a lazy mapping): killed as by the OOM killer", (unsigned long long)s->cr2);
            vm_fatal_signal(vm, v, SIGKILL, &u, rip, why);
            return false;
        }
    }
    if (user && vec == 14) {
        enum vm_fault_verdict cv =
            vm->mode ? vm->mode->fault(vm, v, s->cr2, err, rip, &u, s) : VM_FAULT_NOT_WATCHED;
        if (cv != VM_FAULT_NOT_WATCHED)
            return return_to_user(vm, v, rip, rsp,
                                  frame[2] | tf_back | (cv == VM_FAULT_GO_STEP ? RFLAGS_TF : 0));
        if (fault_went_away(vm, s->cr2, err))
            return return_to_user(vm, v, rip, rsp, frame[2] | tf_back);
    }
    bool keep_tf;
    if (user && vec == 1 && vm->mode && vm->mode->step_done(vm, v, rip, &u, &keep_tf))
        return return_to_user(vm, v, rip, rsp, keep_tf ? frame[2] : frame[2] & ~RFLAGS_TF);
    uint64_t resume; /* a fault on the user's pointer in the agent's clock path (vclock.h) */
    if (user && vclock_fixup(vm, v, vec, rip, &resume))
        return return_to_user(vm, v, resume, rsp, frame[2] | tf_back);
    struct outcome o = {.kind = OUT_SIGNAL, .signal = vector_signal(vec), .thread = v->tid,
                        .vector = vec, .rip = rip, .errcode = err};
    if (vec == 14)
        o.cr2 = s->cr2;
    capture_regs(&o, r);
    o.regs.rip = rip;
    o.regs.rsp = rsp;
    o.regs.rflags = frame[2];
    if (user) {
        o.nbt = vm_backtrace(vm, rip, rsp, r->rbp, o.bt, OUT_MAX_BT);
        if (vec == 14)
            snprintf(o.detail, sizeof o.detail, "%s: %s %s at address 0x%llx", vector_name(vec),
                     (err & 1) ? "protection violation" : "unmapped address",
                     (err & 16) ? "(instruction fetch)" : (err & 2) ? "(write)" : "(read)",
                     (unsigned long long)o.cr2);
        else
            snprintf(o.detail, sizeof o.detail, "%s", vector_name(vec));
    } else {
        /* Only a hostile sysret return address can fault in the agent. */
        snprintf(o.detail, sizeof o.detail, "%s inside the guest-agent (user rip 0x%llx)",
                 vector_name(vec), (unsigned long long)r->rcx);
        o.signal = SIGSEGV;
    }
    pthread_mutex_lock(&vm->lock);
    vm_stop_locked(vm, &o);
    pthread_mutex_unlock(&vm->lock);
    return false;
}
