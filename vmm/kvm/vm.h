/* The VM: KVM handles, guest memory, the loaded image, and the guest threads, one per
 * vCPU. Each vCPU has a host thread that runs it (free execution: all in parallel).
 * vm->lock guards thread states, futex queues, virtual time and the outcome. */
#ifndef JINX_VM_H
#define JINX_VM_H
#include "linux/elfparse.h"
#include "kvm/guestmem.h"
#include "kvm/layout.h"
#include "kvm/vclock.h"
#include "linux/limitlog.h"
#include "linux/mm.h"
#include "linux/outcome.h"
#include "linux/tail.h"
#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A blocked syscall's wake result meaning "make the syscall again" (linux/pipes.h): the
 * thread goes back to its syscall instruction's exit with the registers it blocked with,
 * as a thread restored blocked does (vm_rerun_syscall). */
#define SYSRET_RERUN (INT64_MIN + 1)
enum tstate { T_FREE, T_RUNNING, T_BLOCKED };

struct round_driver;
struct explore_driver;
struct control;
struct serializer;
struct crew;
struct vm_mode_ops;

struct vcpu {
    struct vm *vm;
    int index;
    int fd;
    struct kvm_run *run;
    pthread_t host;
    pthread_cond_t cv;          /* wakes a blocked or parked host thread */

    /* The guest thread on this vCPU (tid 0: parked). */
    int tid;
    /* Its thread id in serialized execution's traces and schedules (explorer/trace.h):
     * the tid while tids are <= EX_MAX_TID, past that an id a thread that has exited no
     * longer uses (linux/threads.h, thread_xid_assign_locked). 0: none (free execution). */
    int xid;
    enum tstate state;
    uint64_t clear_child_tid;
    uint64_t sigmask;
    /* Signals pending for this thread alone (bit sig-1, as Linux's sigset), and which of
     * them tkill/tgkill sent (si_code SI_TKILL, else SI_USER): linux/signals.h. */
    uint64_t sigpending, sigpend_tkill;
    /* What the syscall being handled was for serialized execution when its number does
     * not say (a pipe read is a futex wait on its pipe: linux/pipes.h): 0 none, 1 wait,
     * 2 wake, on sync_addr. Cleared at each syscall's start (syscall_dispatch). */
    uint8_t sync_kind;
    uint64_t sync_addr;
    uint32_t sync_arg;
    bool start_pending;         /* apply start_* before the next run */
    struct kvm_regs start_regs;
    struct kvm_sregs start_sregs;
    struct kvm_xsave *start_xsave; /* owned; NULL: keep the vCPU's FPU state */

    /* Blocking (futex wait or sleep). */
    uint64_t wait_addr;         /* 0 for a plain sleep */
    uint32_t wait_bitset;
    uint64_t wait_deadline;     /* virtual ns, UINT64_MAX when none */
    uint64_t wait_seq;          /* FIFO order among waiters */
    uint64_t wait_ns;           /* the wait it asked for, deadline - time it blocked (0: none
                                 * or unknown); its syscall is blocked_regs.rax (timers.h) */
    bool woken;
    int64_t wait_result;        /* the blocked syscall's result, set when it wakes */
    bool result_pending;        /* deliver wait_result as the syscall MMIO read's value */
    bool result_in_rax;         /* the read was completed early (snapshot): set rax instead */
    bool in_run;                /* the host thread is running this vCPU (vm->lock) */
    bool ran;                   /* entered the guest since the last snapshot or restore */
    const void *clean_snap;     /* the snapshot whose state this vCPU holds, unchanged since
                                 * (set by snapshot take/restore; only valid while !ran) */
    /* FPU/XSAVE state a restore wants, applied by the vCPU's own thread before it next
     * enters the guest, and only if it differs from what KVM holds (snapshot.c). */
    bool fpu_pending;
    /* A half-done emulation (a pending syscall read) from before a
     * restore: KVM would finish it on the next KVM_RUN, on top of the restored registers.
     * The vCPU's own thread finishes it first, discarding its effect (vm_settle_stale_io). */
    bool io_stale;
    struct kvm_xsave *fpu_want, *fpu_cur; /* owned */
    uint64_t fpu_checks, fpu_sets;
    /* A trapped memory access waits for this thread's turn (the mode keeps it: the
     * serialized mode's page ownership, sched/crew.h). */
    bool acc_pending;
    struct kvm_regs blocked_regs; /* user view when it blocked, for deadlock reports */

    atomic_int in_guest;        /* inside KVM_RUN: a kick must interrupt it */
    int pin_cpu;                /* its host thread's affinity as jinx set it (kvm/pin.h) */

    uint64_t exits, syscalls;
};

#define VM_MAX_RO_DIRS 16

struct vm_options {
    int max_vcpus;              /* most threads at once: --vcpus, default MAX_VCPUS */
    bool vcpus_given;           /* --vcpus was given (the limit message names it) */
    uint64_t mem;
    uint64_t timeout_ns;        /* 0: none */
    uint64_t seed;
    uint64_t thread_stack;      /* raises musl's default thread stack (PT_GNU_STACK) */
    bool stats, quiet;
    bool serial;                /* --serial: one thread at a time */
    bool roundrobin;            /* serial default policy: switch at every cue point */
    bool no_crew;               /* serial without memory cue points */
    bool no_guest_answers;      /* --no-guest-answers: every syscall exits (kvm/answers.h) */
    bool no_guest_cues;         /* --no-guest-cues: every cue point's events exit (sched/guest_step.h) */
    bool guest_cue_points;      /* --guest-cue-points: memory cue points taken in the guest (sched/guest_cue.h) */
    uint32_t spin_threshold;    /* --spin-threshold: identical reads that make a spinner */
    uint64_t after_ns, record_ns; /* --after / --record: one recorded fragment */
    int simulate;               /* --simulate N: N fragments from one snapshot */
    const char *schedule_path;  /* --schedule */
    const char *trace_path;     /* --trace */
    int selftest_rounds;        /* --snapshot-selftest */
    uint64_t selftest_interval_ns;
    const char *report_path;
    const char *dump_dir;       /* --dump-dir: crash dumps go there (dump.h); NULL: none */
    uint64_t max_dump_size;     /* --max-dump-size: larger dumps are refused; 0: no cap */
    const char *ro_dirs[VM_MAX_RO_DIRS]; /* --ro-dir: host directories the guest may read */
    int n_ro_dirs;
    uint64_t file_mem;          /* --file-mem: bytes of files the program may write (0: 256M) */
    const char *out_dir;        /* --out-dir: the written files copied there at exit */
    const char *cpu_model;      /* --cpu-model: a libvirt model or "host"; NULL: the default */
    const struct kvm_cpuid2 *cpuid_exact; /* replay, workers: exactly this CPUID table
                                 * (cpu_model then only names it); refused if the host
                                 * cannot present one of its features */
    struct cpuid_patches *cpuid_patches; /* workers, replay: share or seed this table of
                                 * patched CPUID sites (kvm/cpuidpatch.h); NULL: a new one */
    bool no_pin;                /* --no-pin: never touch host threads' affinity (kvm/pin.h) */
    int pin_cpu;                /* --pin-cpu: serialized execution's CPU, if pin_cpu_given */
    bool pin_cpu_given;
};

struct files;
struct cpuid_patches;
struct cpuid_regions;

struct vm {
    struct vm_options opt;
    int kvm_fd, vm_fd;
    size_t run_size;
    struct kvm_cpuid2 *cpuid;
    char cpu_model[64];         /* the model the guest sees ("host": KVM's table) */
    uint64_t xcr0;
    uint64_t hwcap;
    struct guestmem gm;
    struct mm mm;
    struct elf_image img;
    const char *image_path;
    int argc, envc;             /* the program's arguments and environment, as given to */
    char **argv, **envp;        /* vm_load (borrowed): a crash dump records them */
    uint64_t bias;              /* load address - link address (static-pie) */
    struct elf_image interp;    /* the program's interpreter (PT_INTERP), data NULL if none */
    uint64_t interp_bias;       /* where it was loaded */
    struct files *files;        /* the read-only file layer (linux/files.h), from vm_load */
    struct libsyms *libsyms;    /* shared libraries' symbols for backtraces (linux/vmlibs.h) */
    struct agent_header agent;
    bool pvm;                   /* /dev/kvm is PVM: user SYSCALL stays in user mode */
    bool cpuid_faulting;        /* user-mode CPUID traps (#GP) and is answered by the VMM */
    bool cpuid_hidden;          /* the guest cannot see RDRAND/RDSEED */
    struct cpuid_patches *patches; /* non-NULL: user CPUID is not trapped here, so the
                                 * program's cpuid instructions are patched (cpuidpatch.h) */
    unsigned patch_kinds;       /* what loads patch (PATCH_KIND_BIT of linux/cpuidscan.h):
                                 * CPUID where it is not trapped and the model is not host,
                                 * rdtsc/rdtscp where they are not (PVM); 0: none */
    struct cpuid_regions *cpuid_regions; /* file mappings not yet executable (cpuidload.h) */
    atomic_bool mode_checked;   /* the first syscall confirmed the pvm guess */
    struct kvm_regs entry_regs;  /* thread 1's registers at the entry point */

    pthread_mutex_t lock;
    struct vcpu *vcpus[MAX_VCPUS];
    int nvcpus;
    int next_tid;
    int live;                   /* threads that have not exited */
    int blocked;                /* of which blocked in futex wait / sleep */
    uint64_t wait_counter;
    /* wait_counter at the last sign of progress (linux/futex.c: a thread with no deadline
     * woken, a thread made or gone); set to wait_counter by a snapshot and a restore, so
     * a run and its replay count the same. */
    uint64_t progress_wait;
    /* The sanitizer runtimes' code (linux/futex.c: their background thread's sleeps are
     * not the program's), found once when first needed. */
    bool rt_text_set;
    uint32_t rt_text_n;
    uint64_t rt_text[8][2];

    atomic_bool stopping;
    int pin_cpu;                /* serialized execution's CPU (kvm/pin.h), -1 until chosen */
    atomic_bool pin_failed;     /* sched_setaffinity failed: unpinned from then on */
    /* jinx limits met inside sandboxed runs (linux/threads.c): not the live program's, but
     * a whole run that met one cannot be judged (rounds/explore.c replays it live). */
    atomic_uint sandbox_limits;
    /* ... and what they were (texts as for `limits`): noted for the live program when a
     * whole run that met one cannot be replayed to its end (rounds/explore.c). */
    struct limits sandbox_lims;
    atomic_bool paused;         /* vm_pause: every host thread parks at its loop top */
    uint64_t paused_at;         /* host time the pause began (virtual time stops) */
    pthread_cond_t pause_cv;
    struct outcome out;
    pthread_cond_t done_cv;

    /* Virtual time: host monotonic since start, plus the time skipped while every thread
     * was asleep (so sleeps cost no wall time when nothing else can run). */
    uint64_t start_ns;
    int64_t skipped_ns;         /* negative after a restore rewinds time */
    struct vclock vclock;       /* free execution's clock, shared with the agent (kvm/vclock.h) */

    uint64_t rng;
    uint64_t sigact[65];        /* handler per signal: 0 SIG_DFL, 1 SIG_IGN, else a handler */
    uint64_t sig_shared;        /* signals pending for the process (kill): linux/signals.h */
    uint8_t warned[512];        /* unknown syscalls already reported */
    int host_max_vcpus;         /* KVM_CAP_MAX_VCPUS of this host (0: not reported) */
    struct limits limits;       /* jinx's limits met by real execution (limitlog.h) */
    struct tail errtail;        /* the guest's last stderr bytes (tail.h) */
    bool warned_threads, warned_handler;

    /* The execution mode plugged into the exit loop (serialized execution, sched/), NULL
     * in free execution. The core reaches a mode only through these hooks; ser and crew
     * are the serialized mode's state, allocated and freed by sched/ (opaque here). */
    const struct vm_mode_ops *mode;
    struct serializer *ser;
    struct crew *crew;
    /* Simulations (round.c) run in a sandbox: a guest outcome (exit, fatal signal,
     * deadlock) ends the simulation instead of the VM; it lands in sim_out and the
     * fragment stops, so the snapshot can be restored. */
    bool sandbox;
    /* A stress run (rounds/explore_stress.h) is the program's own free execution, except
     * that a clean exit (status 0) ends it like a simulation (sim_ended), so the snapshot
     * can be restored; a crash, deadlock or failure exit ends the VM for real. Its
     * limits count (they are the program's), its stdout is dropped and its stderr only
     * kept for the report's tail. */
    bool stress;
    bool sim_ended;
    struct outcome sim_out;
    struct round_driver *rounds;    /* NULL until the first attach */
    struct explore_driver *explore; /* whole-run exploration (explore.h), or NULL */
    struct control *control;        /* the control socket, NULL with --no-control */
    /* Where notable events go besides stderr (a round's found bug, progress): kind and a
     * one-line message. The control socket installs its sender; NULL: nowhere. */
    void (*event_sink)(void *ctx, const char *kind, const char *msg);
    void *event_ctx;
    /* Called after a thread was created (linux/threads.c), with no VMM lock held: the
     * round driver, waiting for a second thread, takes its first round at once. NULL:
     * nobody. Set once, before the first clone it should see, and never unset. */
    void (*on_clone)(void *ctx);
    void *on_clone_ctx;
    /* t_first_clone: the first thread creation (linux/threads.c), in a test program
     * about when main starts its threads (--stats' boot_to_first_clone_us). */
    uint64_t t_process_start, t_first_run, t_first_exit, t_first_clone;
    atomic_uint_fast64_t n_exits, n_syscalls;
};

/* What a vCPU's exception asks of the mode (vm_mode_ops.fault). */
enum vm_fault_verdict {
    VM_FAULT_NOT_WATCHED,   /* not the mode's page: a real fault */
    VM_FAULT_GO,            /* the thread goes on now: return to it */
    VM_FAULT_GO_STEP,       /* the same, single-stepping the instruction (set RFLAGS.TF) */
    VM_FAULT_WAIT,          /* another thread was chosen: return to it, it waits its turn */
};

/* An execution mode's hooks into the exit loop and the vCPU threads (as a device
 * registers its handlers and the vCPU loop only dispatches). Set vm->mode before the
 * threads run. Every hook is called with the mode's state set up; a NULL vm->mode is
 * free execution. Lock notes as named: *_locked with vm->lock held, others without. */
struct vm_mode_ops {
    /* The virtual time the program sees, when the mode keeps its own clock (serialized
     * time moves with cue points only): true and *now; false: the host clock's. */
    bool (*vtime)(struct vm *vm, uint64_t *now);
    /* May v's thread enter the guest now (its turn)? */
    bool (*may_run_locked)(struct vm *vm, struct vcpu *v);
    /* In the exit loop, without the lock: is it some other thread's turn (v must leave)? */
    bool (*turn_elsewhere)(struct vm *vm, struct vcpu *v);
    /* Is it v's turn (the exit loop performs a waiting access only then)? */
    bool (*has_turn_locked)(struct vm *vm, struct vcpu *v);
    /* v->acc_pending: perform the trapped access, now that its turn came. */
    void (*perform_pending_locked)(struct vm *vm, struct vcpu *v);
    /* A sandboxed simulation ended: nobody runs until the snapshot is restored. */
    void (*fragment_over_locked)(struct vm *vm);
    /* User exceptions the mode may own: an int3 it planted (true: resume at rip-1,
     * with TF if *step is set, else without), a #PF on a page it watches, the #DB ending a single step (true:
     * resume, *keep_tf says whether TF stays). */
    bool (*breakpoint)(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                       bool *step);
    enum vm_fault_verdict (*fault)(struct vm *vm, struct vcpu *v, uint64_t cr2, uint64_t err,
                                   uint64_t rip, const struct kvm_regs *u,
                                   const struct kvm_sregs *s);
    bool (*step_done)(struct vm *vm, struct vcpu *v, uint64_t rip, const struct kvm_regs *u,
                      bool *keep_tf);
    /* Takes back an int3 the mode planted for v, whenever v is back in the VMM; true
     * when there was one (the step then goes on by TF). */
    bool (*unpatch)(struct vm *vm, struct vcpu *v);
    /* Thread tid made syscall nr on v (ret its result, or blocked); also after exit(). */
    void (*after_syscall)(struct vm *vm, struct vcpu *v, int tid, uint64_t nr, int64_t ret,
                          bool blocked);
    /* The program mapped or opened up [start, end) (mmap, mprotect, brk). */
    void (*mapped)(struct vm *vm, uint64_t start, uint64_t end);
    /* vm_destroy: frees the mode's state. */
    void (*destroy)(struct vm *vm);
    /* Around each KVM_RUN of v, on v's thread, without the lock (either may be NULL):
     * guest_enter places what the guest-agent may do alone during the run,
     * guest_left takes back what it did (NULL) or says what is wrong with it (the VM then
     * stops with an internal error). interrupted: the run ended by a kick or signal, not
     * an exit; *busy (false on entry) set: the guest is half-way through something it must
     * finish first, so v runs again at once, whatever a pause or the turn say. */
    void (*guest_enter)(struct vm *vm, struct vcpu *v);
    const char *(*guest_left)(struct vm *vm, struct vcpu *v, bool interrupted, bool *busy);
};

/* For the Linux layer: true when the mode keeps virtual time (a timed wait then waits to
 * be told rather than on the host clock). */
bool vm_time_is_virtual(struct vm *vm);
/* Tells the mode the program mapped [start, end). */
void vm_note_mapped(struct vm *vm, uint64_t start, uint64_t end);

int vm_create(struct vm *vm, const struct vm_options *opt, char *err, size_t errlen);
void vm_destroy(struct vm *vm);
/* Loads the ELF and builds the initial stack; after this vm_run starts thread 1. */
int vm_load(struct vm *vm, const char *path, int argc, char **argv, int envc, char **envp,
            char *err, size_t errlen);
/* Starts thread 1 (its vCPU and host thread); 0, or -1 with the outcome set (no vCPU).
 * A mode's driver may then run the VM (it runs free until paused), and vm_wait waits. */
int vm_start(struct vm *vm);
/* vm_start then vm_wait: runs until an outcome; fills vm->out. */
void vm_run(struct vm *vm);
/* For a VM whose threads come from elsewhere (a snapshot loaded by snapshot_load_into,
 * replay.c) instead of vm_run's thread 1: creates vCPUs, parked, each with its host
 * thread, until there are n (at most --vcpus). 0, or -1 with a message. */
int vm_add_vcpus(struct vm *vm, int n, char *err, size_t errlen);
/* The second half of vm_run: waits for an outcome (or --timeout, counted from
 * vm->start_ns) and joins every vCPU host thread. */
void vm_wait(struct vm *vm);

/* For the syscall layer. All called from a vCPU's host thread. */
uint64_t vm_vtime(struct vm *vm);            /* caller holds vm->lock or accepts a race */
/* A parked vCPU, or a new one within --vcpus (default MAX_VCPUS) and what the host's
 * KVM allows, for a new thread (linux/threads.c). On failure err says what refused it,
 * and *option what raises it (NULL: nothing does). Caller holds vm->lock. */
struct vcpu *vm_get_vcpu_locked(struct vm *vm, char *err, size_t errlen, const char **option);
void vm_exit_group(struct vm *vm, int status);
void vm_fatal_signal(struct vm *vm, struct vcpu *v, int sig, const struct kvm_regs *r,
                     uint64_t rip, const char *why);
/* Completes a pending syscall MMIO read with value without running guest code (KVM_RUN
 * with immediate_exit). The vCPU must not be running. */
int vm_complete_mmio(struct vcpu *v, int64_t value);
/* Applies a restore's deferred FPU state (v->fpu_pending), from v's own host thread
 * before it enters the guest: KVM_SET_XSAVE only if KVM's state differs. */
int vm_apply_fpu(struct vcpu *v);
/* Finishes v->io_stale's emulation without running guest code, keeping the registers a
 * restore wrote to kvm_run. From v's own thread, or on a paused VM. */
int vm_settle_stale_io(struct vcpu *v);
/* A thread woken with SYSRET_RERUN goes back to its syscall's exit with the registers it
 * blocked with (its owed read discarded), to make the call again. Its own thread, before
 * it enters the guest (kvm/sysread.c, as the two above). */
void vm_rerun_syscall(struct vcpu *v);
/* Stops the world: returns when no vCPU runs guest code and every vCPU without a
 * pending syscall completion is at a clean point. vm_resume lets them go on. */
void vm_pause(struct vm *vm);
void vm_resume(struct vm *vm);
/* Interrupts v's KVM_RUN if it is in the guest: it leaves with an interrupted exit (the
 * mode's guest_left sees it) and runs on unless something else changed. */
void vm_kick(struct vcpu *v);
/* Sets the outcome (first one wins) and stops every vCPU. In a sandboxed simulation a
 * guest outcome only ends the simulation (vm->sim_out). Caller holds vm->lock. */
void vm_stop_locked(struct vm *vm, const struct outcome *o);
int vm_set_fs_base(struct vcpu *v, uint64_t base);
uint64_t vm_get_fs_base(struct vcpu *v);
/* Up to max bytes of the code at rip (a user address, or the agent's in the kernel half),
 * as many as are readable from the start; returns how many. */
size_t vm_read_code(struct vm *vm, uint64_t rip, uint8_t *buf, size_t max);
/* Link-time symbol for a guest address, "name+0x12" or "0x..." */
void vm_symbolize(struct vm *vm, uint64_t addr, char *buf, size_t len);
/* The same for backtrace frames, the shared libraries' too ("libc.so.6!abort+0x2f"):
 * return addresses are looked up at addr-1. */
void vm_symbolize_frame(struct vm *vm, uint64_t addr, bool is_return, char *buf, size_t len);
int vm_backtrace(struct vm *vm, uint64_t rip, uint64_t rsp, uint64_t rbp, uint64_t *out, int max);

#endif
