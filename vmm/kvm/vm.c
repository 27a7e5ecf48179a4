#include "kvm/layout.h"
#include "kvm/vm.h"
#include "linux/demand.h"
#include "linux/files.h"
#include "linux/cpuidload.h"
#include "linux/vmlibs.h"
#include "kvm/cpu.h"
#include "kvm/vcpu_events.h"
#include "kvm/cpuidpatch.h"
#include "kvm/decode.h"
#include "kvm/exception.h"
#include "kvm/pin.h"
#include "linux/futex.h"
#include "linux/syscall.h"
#include "linux/threads.h"
#include "lib/util.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const uint8_t jinx_agent_start[], jinx_agent_end[];

#define SIG_KICK SIGUSR1

static void kick_handler(int sig) { (void)sig; }

/* Test hook (tests/integration/woken-snapshot.sh): JINX_TEST_WAKE_DELAY_US widens the
 * window between a woken thread's syscall result and its KVM_RUN. 0 in real runs. */
static unsigned test_wake_delay_us;

int vm_create(struct vm *vm, const struct vm_options *opt, char *err, size_t errlen)
{
    memset(vm, 0, sizeof *vm);
    vm->opt = *opt;
    vm->kvm_fd = vm->vm_fd = -1;
    vm->t_process_start = mono_ns();
    pthread_mutex_init(&vm->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&vm->done_cv, &ca);
    pthread_cond_init(&vm->pause_cv, &ca);
    pthread_condattr_destroy(&ca);
    vm->rng = opt->seed ^ 0x4A494E58ULL;
    const char *delay = getenv("JINX_TEST_WAKE_DELAY_US");
    test_wake_delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) % 100000u : 0;
    vm->next_tid = 1;
    limits_init(&vm->limits);
    limits_init(&vm->sandbox_lims);
    tail_init(&vm->errtail);
    if (pin_init(vm, err, errlen) < 0 || gm_init(&vm->gm, opt->mem, err, errlen) < 0)
        return -1;
    mm_init(&vm->mm, &vm->gm);
    demand_install(vm);
    if (cpu_open_vm(vm, err, errlen) < 0)
        return -1;
    if (cpu_setup_tables(vm, jinx_agent_start, (size_t)(jinx_agent_end - jinx_agent_start), err,
                         errlen) < 0)
        return -1;
    struct sigaction sa = {.sa_handler = kick_handler};
    sigemptyset(&sa.sa_mask);
    sigaction(SIG_KICK, &sa, NULL);
    return 0;
}

void vm_destroy(struct vm *vm)
{
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->run)
            munmap(v->run, vm->run_size);
        if (v->fd >= 0)
            close(v->fd);
        pthread_cond_destroy(&v->cv);
        free(v->start_xsave);
        free(v->fpu_want);
        free(v->fpu_cur);
        free(v);
    }
    vm->nvcpus = 0;
    pin_release(vm);
    if (vm->vm_fd >= 0)
        close(vm->vm_fd);
    if (vm->kvm_fd >= 0)
        close(vm->kvm_fd);
    free(vm->cpuid);
    cpuidpatch_unref(vm->patches);
    vm->patches = NULL;
    cpuidload_free(vm);
    if (vm->mode)
        vm->mode->destroy(vm);
    mm_destroy(&vm->mm);
    gm_destroy(&vm->gm);
    elf_free(&vm->img);
    elf_free(&vm->interp);
    vmlibs_free(vm);
    if (vm->files) {
        files_destroy(vm->files);
        free(vm->files);
        vm->files = NULL;
    }
    limits_destroy(&vm->limits);
    limits_destroy(&vm->sandbox_lims);
    tail_destroy(&vm->errtail);
}

/* ---- the mode's hooks (vm->mode, kvm/vm.h; NULL: free execution) ---------------- */

static bool mode_vtime(struct vm *vm, uint64_t *now)
{
    return vm->mode && vm->mode->vtime(vm, now);
}

static bool mode_unpatch(struct vm *vm, struct vcpu *v)
{
    return vm->mode && vm->mode->unpatch(vm, v);
}

bool vm_time_is_virtual(struct vm *vm)
{
    uint64_t now;
    return mode_vtime(vm, &now);
}

void vm_note_mapped(struct vm *vm, uint64_t start, uint64_t end)
{
    if (vm->mode)
        vm->mode->mapped(vm, start, end);
}

uint64_t vm_vtime(struct vm *vm)
{
    uint64_t now;
    if (mode_vtime(vm, &now))
        return now;
    return (uint64_t)((int64_t)(vm_host_ns(vm) - vm->start_ns) + vm->skipped_ns);
}

void vm_symbolize_frame(struct vm *vm, uint64_t addr, bool is_return, char *buf, size_t len)
{
    if (!vmlibs_format(vm, addr, is_return, buf, len))
        elf_format_addr(&vm->img, vm->bias, addr, is_return, buf, len);
}

/* The program's own symbols only: called for every traced event, where the libraries'
 * link_map walk would cost too much. */
void vm_symbolize(struct vm *vm, uint64_t addr, char *buf, size_t len)
{
    elf_format_addr(&vm->img, vm->bias, addr, false, buf, len);
}

/* The walk (backtrace.h) over the live guest's memory, libraries included. */
int vm_backtrace(struct vm *vm, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out, int max)
{
    return vmlibs_backtrace(vm, rip, rsp, rbp, out, max);
}

/* ---- stopping and kicking ------------------------------------------------------- */

static void kick(struct vcpu *v)
{
    if (!v->run)
        return;
    __atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
    pthread_kill(v->host, SIG_KICK);
}

void vm_kick(struct vcpu *v)
{
    if (atomic_load(&v->in_guest))
        kick(v);
}

void vm_stop_locked(struct vm *vm, const struct outcome *o)
{
    if (atomic_load(&vm->stopping))
        return;
    bool sandboxed = vm->sandbox &&
                     (o->kind == OUT_EXIT || o->kind == OUT_SIGNAL || o->kind == OUT_DEADLOCK);
    if (vm->stress) /* a clean exit ends a stress run; what its threads do after (libc's
                     * _exit goes on to SYS_exit, a worker left waiting then looks
                     * deadlocked) belongs to the ended run, never a real outcome */
        sandboxed = (o->kind == OUT_EXIT && o->status == 0) || vm->sim_ended;
    if (sandboxed) {
        if (!vm->sim_ended) {
            vm->sim_out = *o;
            vm->sim_ended = true;
        }
        /* The fragment is over: nobody runs until the snapshot is restored. */
        if (vm->mode)
            vm->mode->fragment_over_locked(vm);
        pthread_cond_broadcast(&vm->done_cv);
        for (int i = 0; i < vm->nvcpus; i++) {
            struct vcpu *v = vm->vcpus[i];
            pthread_cond_broadcast(&v->cv);
            if (atomic_load(&v->in_guest))
                kick(v);
        }
        return;
    }
    vm->out = *o;
    atomic_store(&vm->stopping, true);
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        pthread_cond_broadcast(&v->cv);
        if (atomic_load(&v->in_guest))
            kick(v);
    }
    pthread_cond_broadcast(&vm->done_cv);
}

/* ---- vCPU threads --------------------------------------------------------------- */

static void internal_error(struct vm *vm, struct vcpu *v, const char *what)
{
    struct outcome o = {.kind = OUT_ERROR, .thread = v->tid};
    snprintf(o.detail, sizeof o.detail, "vCPU %d: %s", v->index, what);
    pthread_mutex_lock(&vm->lock);
    vm_stop_locked(vm, &o);
    pthread_mutex_unlock(&vm->lock);
}

size_t vm_read_code(struct vm *vm, uint64_t rip, uint8_t *buf, size_t max)
{
    size_t got = 0;
    if (rip >= KBASE) {
        uint64_t gpa = rip - KBASE;
        for (; got < max && gpa + got < vm->gm.size; got++)
            buf[got] = *(uint8_t *)gm_ptr(&vm->gm, gpa + got);
        return got;
    }
    /* Byte by byte: the instruction may end just before an unmapped page. */
    while (got < max && copy_from_user(&vm->gm, buf + got, rip + got, 1))
        got++;
    return got;
}

/* KVM gave up on the instruction at rip (on PVM, say, one it had to emulate): a limit of
 * jinx's, never the program's fault. Names the instruction so it can be reported. */
static void internal_error_at(struct vm *vm, struct vcpu *v, unsigned suberror)
{
    struct kvm_regs r;
    if (ioctl(v->fd, KVM_GET_REGS, &r) < 0)
        r = v->run->s.regs.regs;
    uint8_t code[15];
    size_t got = vm_read_code(vm, r.rip, code, sizeof code);
    struct insn_info info;
    decode_insn(code, got, r.rip, &info);
    size_t shown = info.len > 0 && (size_t)info.len <= got ? (size_t)info.len : got;
    char bytes[3 * sizeof code + 1] = "", sym[96];
    for (size_t i = 0, pos = 0; i < shown; i++)
        pos += (size_t)snprintf(bytes + pos, sizeof bytes - pos, "%s%02x", i ? " " : "", code[i]);
    vm_symbolize(vm, r.rip, sym, sizeof sym);
    char msg[400];
    snprintf(msg, sizeof msg, "KVM could not run the instruction at 0x%llx %s [%s] '%s' (suberror "
             "%u): a jinx limitation, not a bug in the program", (unsigned long long)r.rip, sym,
             got ? bytes : "unreadable", info.text, suberror);
    internal_error(vm, v, msg);
}

static int apply_start_state(struct vm *vm, struct vcpu *v)
{
    v->start_pending = false;
    if (ioctl(v->fd, KVM_SET_SREGS, &v->start_sregs) < 0)
        return -1;
    if (v->start_xsave && ioctl(v->fd, KVM_SET_XSAVE, v->start_xsave) < 0)
        return -1;
    v->run->s.regs.regs = v->start_regs;
    v->run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
    vcpu_events_clear(v); /* a trap queued before this thread must not reach it */
    (void)vm;
    return 0;
}

int vm_apply_fpu(struct vcpu *v)
{
    if (!v->fpu_pending)
        return 0;
    v->fpu_pending = false;
    v->fpu_checks++;
    /* A read costs about a third of a write on PVM (each is a vCPU ioctl), and most
     * threads do not touch the FPU/SSE state between a snapshot and a restore. */
    if (v->fpu_cur && ioctl(v->fd, KVM_GET_XSAVE, v->fpu_cur) == 0 &&
        !memcmp(v->fpu_cur, v->fpu_want, sizeof *v->fpu_cur))
        return 0;
    v->fpu_sets++;
    return ioctl(v->fd, KVM_SET_XSAVE, v->fpu_want) < 0 ? -1 : 0;
}

/* The syscall path: the agent's entry read the syscall MMIO page. Returns false when
 * the thread must not resume. */
static bool handle_mmio(struct vm *vm, struct vcpu *v)
{
    struct kvm_run *run = v->run;
    struct kvm_regs *r = &run->s.regs.regs;
    /* The read in the agent's syscall entry, after its answers-table lookup (agent.S). */
    uint64_t read_at = UVA_AGENT + (vm->pvm ? vm->agent.mmio_user : vm->agent.syscall_mmio);
    if (run->mmio.phys_addr != GPA_MMIO_SYSCALL || run->mmio.is_write || run->mmio.len != 8 ||
        r->rip != read_at) {
        /* The program touched the syscall page itself, or worse. */
        char why[160];
        snprintf(why, sizeof why, "%s jinx's syscall page (guest physical 0x%llx)",
                 run->mmio.is_write ? "write to" : "read of",
                 (unsigned long long)run->mmio.phys_addr);
        vm_fatal_signal(vm, v, SIGSEGV, r, r->rip, why);
        return false;
    }
    if (!atomic_load_explicit(&vm->mode_checked, memory_order_relaxed)) {
        /* Never run user code in ring 0: confirm the PVM guess on the first syscall. */
        struct kvm_sregs s;
        if (ioctl(v->fd, KVM_GET_SREGS, &s) < 0 || ((s.cs.selector & 3) == 3) != vm->pvm) {
            internal_error(vm, v, vm->pvm ? "expected PVM, but SYSCALL entered ring 0"
                                          : "SYSCALL stayed in user mode: is this PVM?");
            return false;
        }
        atomic_store(&vm->mode_checked, true);
    }
    if (!vm->t_first_exit)
        vm->t_first_exit = mono_ns();
    int64_t ret = -ENOSYS;
    int tid = v->tid;
    uint64_t nr = r->rax;
    int disp = syscall_dispatch(vm, v, &ret);
    if (vm->mode && disp != SYSCALL_THREAD_GONE)
        vm->mode->after_syscall(vm, v, tid, nr, ret, disp == SYSCALL_BLOCKED);
    else if (vm->mode && nr == SYS_exit)
        vm->mode->after_syscall(vm, v, tid, nr, 0, false);
    switch (disp) {
    case SYSCALL_THREAD_GONE:
        /* Finish the read now: a pending emulation left on this vCPU would replay into
         * whatever thread runs on it next. */
        vm_complete_mmio(v, 0);
        return false;
    case SYSCALL_BLOCKED:
        /* The read stays pending; the result goes in when the thread wakes. */
        v->result_pending = true;
        return false;
    default:
        memcpy(run->mmio.data, &ret, 8); /* KVM completes the read: rax = ret */
        return true;
    }
}

/* A sandboxed simulation ended on this thread's exit (a fatal signal, exit_group): KVM
 * still owes the exit's completion, which must not replay into the registers that the
 * snapshot restore is about to set. Complete it now (no guest code runs). Waiting
 * accesses and blocked syscalls are settled by the restore itself. */
static void settle_ended_simulation(struct vm *vm, struct vcpu *v)
{
    if ((vm->sandbox || vm->stress) && vm->sim_ended && !v->acc_pending && !v->result_pending)
        vm_complete_mmio(v, 0);
}

/* Runs the thread on this vCPU until it blocks, exits, or the VM stops or pauses. A
 * pause is honoured only at a clean point: after an exit we handled, KVM still has to
 * complete the instruction on the next KVM_RUN (the kick's immediate_exit lets it do
 * that without running guest code), so that a snapshot never sees half an instruction.
 * completion_pending: KVM already owes such a completion (a woken thread's syscall
 * result), which a pause before the first KVM_RUN must finish the same way. */
static void run_thread(struct vm *vm, struct vcpu *v, bool completion_pending)
{
    bool busy = false;
    for (;;) {
        if (atomic_load(&vm->stopping)) {
            mode_unpatch(vm, v); /* a dump must show the program's own code */
            return;
        }
        if (!busy && (atomic_load(&vm->paused) ||
                      (vm->mode && vm->mode->turn_elsewhere(vm, v)))) {
            if (mode_unpatch(vm, v)) {
                /* Kicked in the middle of a rep string instruction: its step goes on by
                 * TF, so that nobody else meets its int3. */
                v->run->s.regs.regs.rflags |= RFLAGS_TF;
                v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
            }
            /* Paused, or not this thread's turn (its host thread then waits in
             * vcpu_main). First finish the instruction of the last exit: a completion
             * left in KVM would replay later into a restored or reused vCPU. KVM_RUN with
             * immediate_exit does that without running guest code; it may still exit
             * once more for the same instruction (the write half of a locked RMW on a
             * trapped page), which is handled below like any exit. */
            if (!completion_pending)
                return;
            __atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
        } else if (v->acc_pending) {
            /* Its trapped access waited, and the turn came back before this thread
             * reached vcpu_main: perform it here, or the instruction would fault again. */
            pthread_mutex_lock(&vm->lock);
            if (vm->mode && vm->mode->has_turn_locked(vm, v))
                vm->mode->perform_pending_locked(vm, v);
            pthread_mutex_unlock(&vm->lock);
        }
        atomic_store(&v->in_guest, 1);
        v->ran = true;
        v->clean_snap = NULL;
        if (!vm->t_first_run)
            vm->t_first_run = mono_ns();
        if (vm->mode && vm->mode->guest_enter)
            vm->mode->guest_enter(vm, v);
        vclock_publish(vm);
        int rc = ioctl(v->fd, KVM_RUN, 0);
        int run_errno = errno;
        atomic_store(&v->in_guest, 0);
        busy = false;
        if (vm->mode && vm->mode->guest_left) {
            bool intr = rc < 0 ? run_errno == EINTR || run_errno == EAGAIN
                               : v->run->exit_reason == KVM_EXIT_INTR;
            const char *gerr = vm->mode->guest_left(vm, v, intr, &busy);
            if (gerr) {
                internal_error(vm, v, gerr);
                return;
            }
        }
        if (!busy && (rc < 0 ? run_errno == EINTR || run_errno == EAGAIN
                             : v->run->exit_reason == KVM_EXIT_INTR))
            busy = vclock_mid_answer(vm, v); /* mid-way through a time answer: run on */
        errno = run_errno;
        v->run->kvm_dirty_regs = 0;
        completion_pending = false;
        if (rc < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                __atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
                continue;
            }
            char msg[128];
            snprintf(msg, sizeof msg, "KVM_RUN: %s", strerror(errno));
            internal_error(vm, v, msg);
            return;
        }
        v->exits++;
        atomic_fetch_add_explicit(&vm->n_exits, 1, memory_order_relaxed);
        struct kvm_run *run = v->run;
        switch (run->exit_reason) {
        case KVM_EXIT_IO: {
            int port = run->io.port;
            struct kvm_regs *r = &run->s.regs.regs;
            uint64_t expect = KVA(GPA_AGENT);
            if (run->io.direction != KVM_EXIT_IO_OUT || r->rip < expect ||
                r->rip >= expect + AGENT_MAX_SIZE) {
                internal_error(vm, v, "I/O exit outside the guest-agent");
                return;
            }
            /* Resume after the 2-byte `out`: stated explicitly so that any later state
             * change (flush, snapshot) sees a consistent rip. */
            r->rip += HC_INSN_LEN;
            run->kvm_dirty_regs = KVM_SYNC_X86_REGS;
            if (port >= PORT_EXC_BASE && port < PORT_EXC_BASE + 32) {
                if (!vm_handle_exception(vm, v, port - PORT_EXC_BASE)) {
                    settle_ended_simulation(vm, v);
                    return;
                }
                completion_pending = true;
            } else {
                internal_error(vm, v, "unexpected hypercall port");
                return;
            }
            break;
        }
        case KVM_EXIT_INTR:
            __atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
            break;
        case KVM_EXIT_SHUTDOWN:
            internal_error(vm, v, "guest triple fault (KVM_EXIT_SHUTDOWN)");
            return;
        case KVM_EXIT_FAIL_ENTRY: {
            char msg[128];
            snprintf(msg, sizeof msg, "VM entry failed (hardware reason 0x%llx)",
                     (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
            internal_error(vm, v, msg);
            return;
        }
        case KVM_EXIT_INTERNAL_ERROR:
            internal_error_at(vm, v, run->internal.suberror);
            return;
        case KVM_EXIT_MMIO:
            if (!handle_mmio(vm, v)) {
                settle_ended_simulation(vm, v);
                return;
            }
            completion_pending = true;
            break;
        default: {
            char msg[64];
            snprintf(msg, sizeof msg, "unexpected KVM exit reason %u", run->exit_reason);
            internal_error(vm, v, msg);
            return;
        }
        }
    }
}

/* The host thread of one vCPU. Everything it does next follows from the thread state,
 * so a pause (and later a snapshot restore) can change that state between two steps. */
static void *vcpu_main(void *arg)
{
    struct vcpu *v = arg;
    struct vm *vm = v->vm;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* The kick must get through whoever created this thread: a worker VM's vCPUs are
     * created by the round driver's thread, which blocks every signal. */
    sigemptyset(&set);
    sigaddset(&set, SIG_KICK);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    char name[16];
    snprintf(name, sizeof name, "jinx-vcpu%d", v->index); /* ps, top, tests (pin.sh) */
    pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&vm->lock);
    for (;;) {
        if (atomic_load(&vm->stopping))
            break;
        if (v->tid == 0 || atomic_load(&vm->paused)) {
            pthread_cond_wait(&v->cv, &vm->lock);
            continue;
        }
        if (v->state == T_BLOCKED) {
            futex_wait_locked(vm, v);
            continue;
        }
        if (vm->mode && !vm->mode->may_run_locked(vm, v)) {
            pthread_cond_wait(&v->cv, &vm->lock);
            continue;
        }
        if (v->acc_pending && vm->mode)
            vm->mode->perform_pending_locked(vm, v); /* its trapped access, now its turn */
        v->in_run = true;
        bool serial = vm_time_is_virtual(vm);
        pthread_mutex_unlock(&vm->lock);
        pin_sync(vm, v, serial); /* one CPU while serialized (kvm/pin.h) */
        vm_rerun_syscall(v);
        bool ok = vm_settle_stale_io(v) == 0 &&
                  (!v->start_pending || apply_start_state(vm, v) == 0) && vm_apply_fpu(v) == 0;
        /* From here KVM owes the woken thread's syscall read its completion: left owed
         * at a pause, a snapshot would see the vCPU at the read, and restores rerun it. */
        bool owed = v->result_pending;
        if (v->result_pending) {
            memcpy(v->run->mmio.data, &v->wait_result, 8);
            v->result_pending = false;
            if (test_wake_delay_us)
                usleep(test_wake_delay_us);
        } else if (v->result_in_rax) {
            v->run->s.regs.regs.rax = (uint64_t)v->wait_result;
            v->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
            v->result_in_rax = false;
        }
        if (ok)
            run_thread(vm, v, owed);
        else
            internal_error(vm, v, "cannot set the thread's start state");
        pthread_mutex_lock(&vm->lock);
        v->in_run = false;
        if (atomic_load(&vm->paused))
            pthread_cond_broadcast(&vm->pause_cv);
    }
    v->in_run = false;
    pthread_mutex_unlock(&vm->lock);
    return NULL;
}

void vm_pause(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    atomic_store(&vm->paused, true);
    for (;;) {
        bool running = false;
        for (int i = 0; i < vm->nvcpus; i++) {
            struct vcpu *v = vm->vcpus[i];
            if (v->in_run) {
                running = true;
                if (atomic_load(&v->in_guest))
                    kick(v);
            }
        }
        if (!running || atomic_load(&vm->stopping))
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 1000000; /* re-kick in case a kick raced with KVM_RUN entry */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&vm->pause_cv, &vm->lock, &ts);
    }
    vm->paused_at = vm_host_ns(vm);
    pthread_mutex_unlock(&vm->lock);
}

void vm_resume(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    /* Time stands still while the world is stopped: the program must not see pauses.
     * (Serialized time does not follow the host clock at all.) */
    uint64_t now;
    if (!mode_vtime(vm, &now))
        vm->skipped_ns -= (int64_t)(vm_host_ns(vm) - vm->paused_at);
    atomic_store(&vm->paused, false);
    for (int i = 0; i < vm->nvcpus; i++)
        pthread_cond_broadcast(&vm->vcpus[i]->cv);
    pthread_mutex_unlock(&vm->lock);
}

/* Creates vCPU number vm->nvcpus with its host thread. Caller holds vm->lock. */
static struct vcpu *new_vcpu(struct vm *vm, char *err, size_t errlen)
{
    struct vcpu *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    v->vm = vm;
    v->index = vm->nvcpus;
    v->fd = -1;
    v->pin_cpu = PIN_UNKNOWN;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (cpu_create_vcpu(vm, v, err, errlen) < 0) {
        if (v->run)
            munmap(v->run, vm->run_size);
        if (v->fd >= 0)
            close(v->fd);
        free(v);
        return NULL;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    int rc = pthread_create(&v->host, &attr, vcpu_main, v);
    pthread_attr_destroy(&attr);
    if (rc) {
        snprintf(err, errlen, "cannot start a host thread for vCPU %d: %s", v->index, strerror(rc));
        munmap(v->run, vm->run_size);
        close(v->fd);
        free(v);
        return NULL;
    }
    vm->vcpus[vm->nvcpus++] = v;
    return v;
}

struct vcpu *vm_get_vcpu_locked(struct vm *vm, char *err, size_t errlen, const char **option)
{
    *option = NULL;
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid == 0 && vm->vcpus[i]->state == T_FREE)
            return vm->vcpus[i];
    if (vm->nvcpus >= vm->opt.max_vcpus) {
        if (vm->opt.max_vcpus < MAX_VCPUS) {
            snprintf(err, errlen, "thread limit reached (--vcpus %d): more than %d threads "
                     "at once", vm->opt.max_vcpus, vm->opt.max_vcpus);
            *option = "raise it with --vcpus N (at most " JX_STR(MAX_VCPUS) ")";
        } else {
            snprintf(err, errlen, "thread limit reached: more than %d threads at once, "
                     "jinx's maximum", MAX_VCPUS);
        }
        return NULL;
    }
    if (vm->host_max_vcpus && vm->nvcpus >= vm->host_max_vcpus) {
        snprintf(err, errlen, "thread limit reached: this host's KVM makes at most %d vCPUs "
                 "per VM (KVM_CAP_MAX_VCPUS)", vm->host_max_vcpus);
        return NULL;
    }
    struct vcpu *v = new_vcpu(vm, err, errlen);
    if (!v) {
        /* new_vcpu said what failed: a host resource (memory, fds, threads). */
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (a new thread's vCPU)");
    }
    return v;
}

int vm_set_fs_base(struct vcpu *v, uint64_t base)
{
    struct kvm_msr_entry e = {.index = 0xC0000100, .data = base};
    return cpu_set_msrs(v->fd, &e, 1);
}

uint64_t vm_get_fs_base(struct vcpu *v)
{
    uint64_t val = 0;
    cpu_get_msr(v->fd, 0xC0000100, &val);
    return val;
}

int vm_start(struct vm *vm)
{
    char err[256];
    pthread_mutex_lock(&vm->lock);
    vm->start_ns = vm_host_ns(vm);
    const char *option;
    struct vcpu *v = vm_get_vcpu_locked(vm, err, sizeof err, &option);
    if (!v) {
        struct outcome o = {.kind = OUT_ERROR};
        snprintf(o.detail, sizeof o.detail, "%s", err);
        vm_stop_locked(vm, &o);
        pthread_mutex_unlock(&vm->lock);
        return -1;
    }
    /* Thread 1 starts in ring 3 at the entry point with the registers vm_load chose. */
    v->start_regs = vm->entry_regs;
    memset(&v->start_sregs, 0, sizeof v->start_sregs);
    cpu_sregs(vm, v, &v->start_sregs, true);
    free(v->start_xsave);
    v->start_xsave = NULL;
    v->start_pending = true;
    v->tid = vm->next_tid++;
    thread_xid_assign_locked(vm, v);
    v->state = T_RUNNING;
    vm->live = 1;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&vm->lock);
    return 0;
}

void vm_run(struct vm *vm)
{
    if (vm_start(vm) == 0)
        vm_wait(vm);
}

int vm_add_vcpus(struct vm *vm, int n, char *err, size_t errlen)
{
    if (n > vm->opt.max_vcpus || n > MAX_VCPUS) {
        snprintf(err, errlen, "%d vCPUs needed, but --vcpus is %d", n, vm->opt.max_vcpus);
        return -1;
    }
    pthread_mutex_lock(&vm->lock);
    int rc = 0;
    while (rc == 0 && vm->nvcpus < n)
        rc = new_vcpu(vm, err, errlen) ? 0 : -1;
    pthread_mutex_unlock(&vm->lock);
    return rc;
}

void vm_wait(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    uint64_t deadline = vm->opt.timeout_ns ? vm->start_ns + vm->opt.timeout_ns : 0;
    while (!atomic_load(&vm->stopping)) {
        if (deadline) {
            struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ULL),
                                  .tv_nsec = (long)(deadline % 1000000000ULL)};
            if (pthread_cond_timedwait(&vm->done_cv, &vm->lock, &ts) == ETIMEDOUT &&
                !atomic_load(&vm->stopping)) {
                struct outcome o = {.kind = OUT_TIMEOUT};
                snprintf(o.detail, sizeof o.detail, "no outcome within %llu ms",
                         (unsigned long long)(vm->opt.timeout_ns / 1000000));
                vm_stop_locked(vm, &o);
            }
        } else {
            pthread_cond_wait(&vm->done_cv, &vm->lock);
        }
    }
    pthread_mutex_unlock(&vm->lock);
    for (int i = 0; i < vm->nvcpus; i++)
        pthread_join(vm->vcpus[i]->host, NULL);
}
