/* Crash dump writer: gathers the stopped VM's threads and memory into an ELF core
 * (corefile.c) and a .jinxdump (dumpfile.c), and publishes both atomically. */
#include "dump/dump.h"
#include "dump/corefile.h"
#include "dump/dump_files.h"
#include "dump/cpuidrec.h"
#include "dump/patchrec.h"
#include "dump/sanrec.h"
#include "kvm/cpuidpatch.h"
#include "linux/loader.h"
#include "lib/util.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef JINX_VERSION
#define JINX_VERSION "dev"
#endif

#define SI_TKILL_CODE (-6)
#define SI_KERNEL_CODE 0x80


bool dump_wanted(const struct outcome *o)
{
    return o->kind == OUT_SIGNAL || o->kind == OUT_DEADLOCK;
}

int dump_check_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) < 0) {
        if (errno != ENOENT || mkdir(dir, 0755) < 0 || stat(dir, &st) < 0)
            return jx_fail(err, errlen, "--dump-dir %s: cannot create it: %s (create the directory "
                        "or choose another)", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return jx_fail(err, errlen, "--dump-dir %s: not a directory", dir);
    if (access(dir, W_OK | X_OK) < 0)
        return jx_fail(err, errlen, "--dump-dir %s: not writable: %s", dir, strerror(errno));
    return 0;
}

/* ---- threads --------------------------------------------------------------------- */

static void regs_from_kvm(uint64_t R[DUMP_NREGS], const struct kvm_regs *r)
{
    memset(R, 0, DUMP_NREGS * sizeof R[0]);
    R[DR_R15] = r->r15; R[DR_R14] = r->r14; R[DR_R13] = r->r13; R[DR_R12] = r->r12;
    R[DR_RBP] = r->rbp; R[DR_RBX] = r->rbx; R[DR_R11] = r->r11; R[DR_R10] = r->r10;
    R[DR_R9] = r->r9; R[DR_R8] = r->r8; R[DR_RAX] = r->rax; R[DR_RCX] = r->rcx;
    R[DR_RDX] = r->rdx; R[DR_RSI] = r->rsi; R[DR_RDI] = r->rdi; R[DR_RIP] = r->rip;
    R[DR_EFLAGS] = r->rflags; R[DR_RSP] = r->rsp;
    R[DR_ORIG_RAX] = (uint64_t)-1; /* Linux's "not in a syscall" */
    R[DR_CS] = SEL_UCODE;
    R[DR_SS] = SEL_UDATA;
}

/* Inside a syscall the vCPU sits in the agent's entry; the program's view is the
 * instruction after its `syscall` (rcx) with the flags it had (r11). */
static void syscall_view(uint64_t R[DUMP_NREGS])
{
    R[DR_ORIG_RAX] = R[DR_RAX];
    R[DR_RIP] = R[DR_RCX];
    R[DR_EFLAGS] = R[DR_R11];
}

static bool in_agent_entry(uint64_t rip)
{
    return rip >= UVA_AGENT && rip < UVA_AGENT + PAGE_SIZE;
}

static bool has_errcode(int vec)
{
    return vec == 8 || vec == 10 || vec == 11 || vec == 12 || vec == 13 || vec == 14 ||
           vec == 17 || vec == 21 || vec == 29 || vec == 30;
}

/* A vCPU stopped in an exception stub (say, between a trapped rdtsc and its answer):
 * the program's registers are in the exception frame on the agent's stack. */
static bool exception_view(struct vm *vm, struct vcpu *v, uint64_t R[DUMP_NREGS])
{
    uint64_t stubs = KVA(GPA_AGENT) + vm->agent.exc_stubs;
    uint64_t rip = R[DR_RIP], rsp = R[DR_RSP];
    if (rip < stubs || rip >= stubs + 32 * 16)
        return false;
    int vec = (int)((rip - stubs) / 16);
    uint64_t lo = KVA(GPA_PERCPU + (uint64_t)v->index * PERCPU_SIZE), hi = lo + PERCPU_SIZE;
    uint64_t fsz = has_errcode(vec) ? 48 : 40;
    if (rsp < lo || rsp + fsz > hi)
        return false;
    uint64_t frame[6];
    memcpy(frame, gm_ptr(&vm->gm, rsp - KBASE), fsz);
    const uint64_t *f = has_errcode(vec) ? frame + 1 : frame;
    R[DR_RIP] = f[0];
    R[DR_EFLAGS] = f[2];
    R[DR_RSP] = f[3];
    return true;
}

static int collect_thread(struct vm *vm, struct vcpu *v, const struct outcome *o,
                          struct dump_thread *t)
{
    memset(t, 0, sizeof *t);
    t->tid = (uint32_t)v->tid;
    t->vcpu = (uint32_t)v->index;
    t->state = DT_RUNNING;
    struct kvm_sregs s;
    bool have_sregs = false;
    const uint8_t *fp = NULL;
    static __thread struct kvm_xsave xs;
    if (v->start_pending) {
        t->state = DT_NEW;
        regs_from_kvm(t->regs, &v->start_regs);
        s = v->start_sregs;
        have_sregs = true;
        if (v->start_xsave)
            fp = (const uint8_t *)v->start_xsave->region;
    } else {
        if (ioctl(v->fd, KVM_GET_SREGS, &s) == 0)
            have_sregs = true;
        if (ioctl(v->fd, KVM_GET_XSAVE, &xs) == 0)
            fp = (const uint8_t *)xs.region;
        if (o->kind == OUT_SIGNAL && o->has_regs && (uint32_t)o->thread == t->tid) {
            /* Captured at the crash, already in the program's view (rip/rsp/rflags). */
            regs_from_kvm(t->regs, &o->regs);
            if (o->vector < 0 && o->regs.rip == o->regs.rcx) {
                t->state = DT_IN_SYSCALL; /* abort: raise -> tkill */
                t->regs[DR_ORIG_RAX] = o->regs.rax;
                t->regs[DR_EFLAGS] = o->regs.r11;
            }
        } else if (v->state == T_BLOCKED) {
            t->state = v->wait_addr ? DT_BLOCKED : DT_SLEEPING;
            t->wait_addr = v->wait_addr;
            regs_from_kvm(t->regs, &v->blocked_regs);
            syscall_view(t->regs);
        } else {
            struct kvm_regs r;
            if (v->run->kvm_dirty_regs & KVM_SYNC_X86_REGS)
                r = v->run->s.regs.regs; /* written by jinx, not applied yet */
            else if (ioctl(v->fd, KVM_GET_REGS, &r) < 0)
                return -1;
            regs_from_kvm(t->regs, &r);
            if (in_agent_entry(r.rip)) {
                t->state = DT_IN_SYSCALL;
                syscall_view(t->regs);
            } else {
                exception_view(vm, v, t->regs);
            }
        }
    }
    if (have_sregs) {
        t->regs[DR_FS_BASE] = s.fs.base;
        t->regs[DR_GS_BASE] = s.gs.base;
    }
    if (fp) {
        t->has_fpregs = true;
        memcpy(t->fpregs, fp, DUMP_FPREGS_LEN);
    }
    if (o->kind == OUT_SIGNAL && (uint32_t)o->thread == t->tid)
        t->flags |= DT_F_CRASHED;
    return 0;
}

/* Every live thread, the crashed one first (gdb selects the first), then by tid. */
static int collect_threads(struct vm *vm, const struct outcome *o, struct dump_thread **out,
                           size_t *n)
{
    struct dump_thread *t = calloc((size_t)vm->nvcpus + 1, sizeof *t);
    if (!t)
        return -1;
    size_t k = 0;
    for (int i = 0; i < vm->nvcpus; i++) {
        struct vcpu *v = vm->vcpus[i];
        if (v->tid == 0)
            continue;
        if (collect_thread(vm, v, o, &t[k]) < 0) {
            free(t);
            return -1;
        }
        k++;
    }
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0; j--) {
            bool jc = t[j].flags & DT_F_CRASHED, pc = t[j - 1].flags & DT_F_CRASHED;
            if (!(jc && !pc) && (pc || t[j - 1].tid < t[j].tid))
                break;
            struct dump_thread x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    *out = t;
    *n = k;
    return 0;
}

/* ---- memory ---------------------------------------------------------------------- */

#define FLAGS_NONE UINT32_MAX

/* The PT_LOAD flags of the page at va, or FLAGS_NONE when it has no frame; *next is the
 * next address worth looking at (past a whole missing page table). */
static uint32_t page_flags(struct guestmem *gm, uint64_t va, uint64_t *next)
{
    uint64_t *pte = gm_pte_scan(gm, va, next);
    uint64_t e = pte ? __atomic_load_n(pte, __ATOMIC_ACQUIRE) : 0;
    if (!e || !gm_pte_frame(e))
        return FLAGS_NONE;
    if (!gm_pte_usable(e))
        return 0; /* PROT_NONE, frame kept */
    return CORE_PF_R | ((e & PTE_W) ? CORE_PF_W : 0) | ((e & PTE_NX) ? 0 : CORE_PF_X);
}

static bool read_guest_page(void *ctx, uint64_t va, void *dst, size_t len)
{
    struct guestmem *gm = ctx;
    uint64_t *pte = gm_pte(gm, va, false);
    uint64_t e = pte ? __atomic_load_n(pte, __ATOMIC_ACQUIRE) : 0;
    uint64_t frame = e ? gm_pte_frame(e) : 0;
    if (!frame || frame + PAGE_SIZE > gm->size || len > PAGE_SIZE)
        return false;
    memcpy(dst, gm_ptr(gm, frame), len);
    return true;
}

/* Runs of pages with frames and equal flags, within each VMA. Pages without a frame
 * (PROT_NONE reservations never touched) are left out: they hold nothing. The walk skips
 * missing page tables whole: a guest's 64 TiB reservation costs nothing (page by page, 2^34
 * lookups, it had not finished after 135 s, with jinx-vmm's exit waiting for it). */
static int collect_segments(struct vm *vm, struct core_seg **out, size_t *n)
{
    size_t cap = 64, k = 0;
    struct core_seg *s = malloc(cap * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < vm->mm.n; i++) {
        uint64_t start = 0;
        uint32_t cur = FLAGS_NONE;
        for (uint64_t va = vm->mm.v[i].start, next; va <= vm->mm.v[i].end; va = next) {
            next = va + PAGE_SIZE;
            uint32_t f = va < vm->mm.v[i].end ? page_flags(&vm->gm, va, &next) : FLAGS_NONE;
            if (next > vm->mm.v[i].end && va < vm->mm.v[i].end)
                next = vm->mm.v[i].end; /* the VMA's end closes the last run */
            if (f == cur)
                continue;
            if (cur != FLAGS_NONE) {
                if (k == cap) {
                    struct core_seg *x = realloc(s, 2 * cap * sizeof *s);
                    if (!x) {
                        free(s);
                        return -1;
                    }
                    s = x;
                    cap *= 2;
                }
                s[k++] = (struct core_seg){.vaddr = start, .size = va - start, .flags = cur};
            }
            cur = f;
            start = va;
        }
    }
    *out = s;
    *n = k;
    return 0;
}

/* The program's file as the core shows it: vm_load's raised PT_GNU_STACK p_memsz put back
 * to the file's value (gdb relocates a PIE, and so finds its libraries, only when the
 * program headers at AT_PHDR equal the file's). Left alone if the program changed those
 * bytes itself. 1 with *p filled, or 0. */
static size_t file_patches(struct vm *vm, struct core_patch *p)
{
    uint64_t va, was, now, cur;
    if (!loader_stack_patch(vm, &va, &was, &now) || !copy_from_user(&vm->gm, &cur, va, 8) ||
        cur != now)
        return 0;
    p->va = va;
    p->len = 8;
    memcpy(p->bytes, &was, 8);
    return 1;
}

/* ---- the initial stack: argv and auxv ---------------------------------------------- */

struct proc_info {
    uint64_t auxv[128];
    size_t nauxv;
    char cmdline[DUMP_MAX_STR];
};

static void read_proc_info(struct vm *vm, struct proc_info *pi)
{
    memset(pi, 0, sizeof *pi);
    uint64_t sp = vm->entry_regs.rsp, argc;
    if (!copy_from_user(&vm->gm, &argc, sp, 8) || argc > 4096)
        return;
    size_t pos = 0;
    for (uint64_t i = 0; i < argc; i++) {
        uint64_t p;
        char arg[512];
        if (!copy_from_user(&vm->gm, &p, sp + 8 + 8 * i, 8) ||
            strncpy_from_user(&vm->gm, arg, p, sizeof arg) < 0)
            break;
        int w = snprintf(pi->cmdline + pos, sizeof pi->cmdline - pos, "%s%s", i ? " " : "", arg);
        if (w < 0 || (size_t)w >= sizeof pi->cmdline - pos)
            break;
        pos += (size_t)w;
    }
    uint64_t a = sp + 8 + 8 * (argc + 1), w;
    for (int i = 0; i < 4096 && copy_from_user(&vm->gm, &w, a, 8) && w; i++)
        a += 8; /* envp */
    a += 8;
    for (size_t i = 0; i + 2 <= sizeof pi->auxv / sizeof pi->auxv[0]; i += 2) {
        uint64_t kv[2];
        if (!copy_from_user(&vm->gm, kv, a + 8 * i, 16))
            break;
        pi->auxv[i] = kv[0];
        pi->auxv[i + 1] = kv[1];
        pi->nauxv = i + 2;
        if (kv[0] == 0)
            break;
    }
}

/* ---- atomic files ---------------------------------------------------------------- */

/* A file that has no name until it is complete: O_TMPFILE where the file system has it,
 * else a hidden temporary that is unlinked on every failure path. */
struct tmpf {
    int fd;
    bool named;
    char name[PATH_MAX];
};

static int tmp_open(const char *dir, struct tmpf *t, char *err, size_t errlen)
{
    t->named = false;
    t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (t->fd >= 0)
        return 0;
    if (snprintf(t->name, sizeof t->name, "%s/.jinx-dump-XXXXXX", dir) >= (int)sizeof t->name)
        return jx_fail(err, errlen, "dump directory path too long");
    t->fd = mkostemp(t->name, O_CLOEXEC);
    if (t->fd < 0)
        return jx_fail(err, errlen, "cannot create a file in %s: %s", dir, strerror(errno));
    t->named = true;
    return 0;
}

/* Gives the finished file its name: fsync, then link (never replacing an existing
 * file). Returns 0, or -errno (-EEXIST: the name is taken, try another). */
static int tmp_publish(struct tmpf *t, const char *path)
{
    if (fsync(t->fd) < 0)
        return -errno;
    if (t->named)
        return link(t->name, path) == 0 ? 0 : -errno;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", t->fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    int e = errno;
    if (e != EEXIST && linkat(t->fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
        return 0;
    return -e;
}

static void tmp_close(struct tmpf *t)
{
    if (t->fd >= 0)
        close(t->fd);
    if (t->named)
        unlink(t->name);
    t->fd = -1;
    t->named = false;
}

static int write_all(int fd, const void *p, size_t len)
{
    const uint8_t *s = p;
    while (len) {
        ssize_t n = write(fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

static void safe_base(const char *path, char *out, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t k = 0;
    for (; *b && k + 1 < len && k < 64; b++)
        out[k++] = (isalnum((unsigned char)*b) || *b == '-' || *b == '_' || *b == '.') ? *b : '_';
    out[k] = '\0';
    if (!k || out[0] == '.')
        snprintf(out, len, "image");
}

/* ---- the dump -------------------------------------------------------------------- */

static void fill_outcome(struct dump_outcome *d, const struct outcome *o)
{
    memset(d, 0, sizeof *d);
    switch (o->kind) {
    case OUT_EXIT: d->kind = DOUT_EXIT; break;
    case OUT_SIGNAL: d->kind = DOUT_SIGNAL; break;
    case OUT_DEADLOCK: d->kind = DOUT_DEADLOCK; break;
    case OUT_TIMEOUT: d->kind = DOUT_TIMEOUT; break;
    default: d->kind = DOUT_ERROR; break;
    }
    d->signal = o->kind == OUT_SIGNAL ? o->signal : 0;
    d->thread = o->kind == OUT_SIGNAL ? (uint32_t)o->thread : 0;
    d->vector = o->kind == OUT_SIGNAL ? o->vector : -1;
    d->exit_status = outcome_exit_status(o);
    d->rip = o->rip;
    d->errcode = o->errcode;
    d->cr2 = o->cr2;
    snprintf(d->detail, sizeof d->detail, "%s", o->detail);
}

#define KIB(n) ((unsigned long long)(((n) + 1023) >> 10)) /* rounded up */

/* The core's signal information (siginfo) for a fatal signal, as Linux fills it. */
static void signal_info(struct core_desc *cd, const struct outcome *o)
{
    if (o->kind != OUT_SIGNAL)
        return;
    cd->signo = o->signal;
    if (o->vector < 0) {
        cd->si_code = SI_TKILL_CODE;
    } else if (o->vector == 14) {
        cd->si_code = (o->errcode & 1) ? 2 /* SEGV_ACCERR */ : 1 /* SEGV_MAPERR */;
        cd->fault_addr = o->cr2;
    } else {
        cd->si_code = SI_KERNEL_CODE;
        cd->fault_addr = o->rip;
    }
}

/* Jinx's own records of the dump: OUTCOME, IMAGE and RUN. */
static void fill_records(struct dumpfile *d, struct vm *vm, const struct outcome *o,
                         const struct proc_info *pi)
{
    fill_outcome(&d->outcome, o);
    sha256(vm->img.data, vm->img.size, d->image.sha256);
    d->image.bias = vm->bias;
    d->image.size = vm->img.size;
    char *abs = realpath(vm->image_path, NULL);
    snprintf(d->image.path, sizeof d->image.path, "%s", abs ? abs : vm->image_path);
    free(abs);
    d->has_run = true;
    d->run.created = (uint64_t)time(NULL);
    d->run.seed = vm->opt.seed;
    d->run.mem = vm->opt.mem;
    d->run.max_vcpus = (uint32_t)vm->opt.max_vcpus;
    d->run.flags = vm->opt.serial ? DRUN_F_SERIAL : 0;
    snprintf(d->run.cmdline, sizeof d->run.cmdline, "%s", pi->cmdline);
    snprintf(d->run.jinx_version, sizeof d->run.jinx_version, "%s", JINX_VERSION);
}

/* The CPU the guest saw: replay presents the same one (cpuidrec.h). */
static int add_cpuid_record(struct dumpfile *d, const struct vm *vm, char *err, size_t errlen)
{
    struct dbuf cb = {0};
    int bad = cpuidrec_encode(vm->cpu_model, vm->cpuid, &cb) < 0 ||
              dumpfile_add_record(d, DREC_CPUID, 0, cb.p, cb.len) < 0;
    dbuf_free(&cb);
    return bad ? jx_fail(err, errlen, "cannot record the CPUID table (model '%s')",
                         vm->cpu_model) : 0;
}

/* The patched CPUID and rdtsc/rdtscp sites (patchrec.h), where there are any: replay
 * answers them. */
static int add_patch_record(struct dumpfile *d, struct vm *vm, char *err, size_t errlen)
{
    if (!vm->patches)
        return 0;
    size_t n = cpuidpatch_sites(vm->patches, NULL, 0);
    uint64_t *va = malloc((n ? n : 1) * sizeof *va);
    uint8_t *kinds = malloc(n ? n : 1);
    if (!va || !kinds) {
        free(va);
        free(kinds);
        return jx_fail(err, errlen, "out of memory");
    }
    /* The table only grows: n is enough. */
    n = cpuidpatch_sites_kinds(vm->patches, va, kinds, n);
    struct dbuf b = {0};
    int bad = patchrec_encode_kinds(va, kinds, n, &b) < 0 ||
              dumpfile_add_record(d, DREC_CPUID_PATCHES, 0, b.p, b.len) < 0;
    dbuf_free(&b);
    free(va);
    free(kinds);
    return bad ? jx_fail(err, errlen, "cannot record the %zu patched CPUID/RDTSC sites", n) : 0;
}

/* Jinx's own records: the run, the outcome, the threads, the files, the round's extra
 * records, then the CPU. 0, or -1 with a message. */
static int add_jinx_records(struct dumpfile *d, struct vm *vm, const struct outcome *o,
                            const struct proc_info *pi, const struct dump_record *extra,
                            size_t nextra, char *err, size_t errlen)
{
    fill_records(d, vm, o, pi);
    dump_fill_files(d, vm);
    for (size_t i = 0; i < nextra; i++)
        if (dumpfile_add_record(d, extra[i].type, extra[i].flags, extra[i].data,
                                extra[i].len) < 0) {
            jx_fail(err, errlen, "bad extra dump record (type %u)", extra[i].type);
            return -1;
        }
    /* The sanitizer's report in the program's stderr (sanrec.h): inspect shows it, replay
     * checks it. */
    struct san_report rep;
    if (outcome_sanreport(vm, &rep) && sanrec_add(d, &rep) < 0)
        return jx_fail(err, errlen, "out of memory");
    if (add_cpuid_record(d, vm, err, errlen) < 0)
        return -1;
    return add_patch_record(d, vm, err, errlen);
}

int dump_write(struct vm *vm, const struct outcome *o, const char *dir,
               const struct dump_record *extra, size_t nextra, struct dump_result *res,
               char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    uint64_t t0 = mono_ns();
    int rc = -1;
    struct dumpfile d;
    memset(&d, 0, sizeof d);
    struct core_seg *segs = NULL;
    size_t nsegs = 0;
    struct core_thread *ct = NULL;
    struct proc_info *pi = calloc(1, sizeof *pi);
    struct dbuf b = {0};
    struct tmpf core = {.fd = -1}, jd = {.fd = -1};
    bool core_linked = false;

    if (!pi || collect_threads(vm, o, &d.threads, &d.nthreads) < 0 || d.nthreads == 0) {
        jx_fail(err, errlen, "cannot read the threads' registers from KVM");
        goto out;
    }
    if (collect_segments(vm, &segs, &nsegs) < 0 || !(ct = calloc(d.nthreads, sizeof *ct))) {
        jx_fail(err, errlen, "out of memory");
        goto out;
    }
    read_proc_info(vm, pi);
    for (size_t i = 0; i < d.nthreads; i++) {
        ct[i].tid = d.threads[i].tid;
        /* Every thread's pr_cursig carries the signal, as Linux writes it: gdb (bfd)
         * takes "Program terminated with signal" from the last NT_PRSTATUS. */
        ct[i].cursig = o->kind == OUT_SIGNAL ? o->signal : 0;
        memcpy(ct[i].regs, d.threads[i].regs, sizeof ct[i].regs);
        ct[i].fpregs = d.threads[i].has_fpregs ? d.threads[i].fpregs : NULL;
    }
    char base[80];
    safe_base(vm->image_path, base, sizeof base);
    struct core_desc cd = {.threads = ct, .nthreads = d.nthreads, .segs = segs, .nsegs = nsegs,
                           .auxv = pi->auxv, .nauxv = pi->nauxv, .fname = base,
                           .psargs = pi->cmdline, .pid = 1, .read = read_guest_page,
                           .ctx = &vm->gm};
    struct core_patch patch;
    cd.npatches = file_patches(vm, &patch);
    cd.patches = &patch;
    signal_info(&cd, o);
    if (tmp_open(dir, &core, err, errlen) < 0 ||
        core_write(core.fd, &cd, d.core.sha256, &d.core.size, err, errlen) < 0)
        goto out;
    /* The cap counts disk bytes, as du does: the core's zero pages are holes. The core is
     * still unnamed here, so a refused dump never shows. */
    uint64_t cap = vm->opt.max_dump_size, core_disk = d.core.size;
    struct stat cst;
    if (fstat(core.fd, &cst) == 0)
        core_disk = (uint64_t)cst.st_blocks * 512;
    /* Jinx's records, then the CPU the guest saw. */
    if (add_jinx_records(&d, vm, o, pi, extra, nextra, err, errlen) < 0)
        goto out;

    /* Names: <image>-<time>[-k].{core,jinxdump}, neither of which may exist yet. */
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int k = 1; k <= 100; k++) {
        char stem[160];
        if (k == 1)
            snprintf(stem, sizeof stem, "%s-%s", base, stamp);
        else
            snprintf(stem, sizeof stem, "%s-%s-%d", base, stamp, k);
        if ((size_t)snprintf(res->core, sizeof res->core, "%s/%s.core", dir, stem) >=
                sizeof res->core ||
            (size_t)snprintf(res->jinxdump, sizeof res->jinxdump, "%s/%s.jinxdump", dir, stem) >=
                sizeof res->jinxdump) {
            jx_fail(err, errlen, "dump directory path too long");
            goto out;
        }
        if (access(res->jinxdump, F_OK) == 0)
            continue;
        /* Encoded before the core gets its name, so that a dump over the cap leaves
         * nothing behind, not even for a moment. */
        snprintf(d.core.name, sizeof d.core.name, "%s.core", stem);
        dbuf_free(&b);
        if (dumpfile_encode(&d, &b) < 0) {
            jx_fail(err, errlen, "out of memory encoding the dump");
            goto out;
        }
        if (cap && core_disk + b.len > cap) {
            jx_fail(err, errlen, "it would take %llu KiB on disk (core %llu KiB + jinxdump "
                    "%llu KiB), over --max-dump-size %llu KiB; the outcome stands (raise the "
                    "cap to keep such dumps)", KIB(core_disk + b.len), KIB(core_disk), KIB(b.len),
                    (unsigned long long)(cap >> 10));
            goto out;
        }
        int e = tmp_publish(&core, res->core);
        if (e == -EEXIST)
            continue;
        if (e < 0) {
            jx_fail(err, errlen, "cannot write %s: %s", res->core, strerror(-e));
            goto out;
        }
        core_linked = true;
        if (jd.fd < 0 && tmp_open(dir, &jd, err, errlen) < 0)
            goto out;
        if (ftruncate(jd.fd, 0) < 0 || lseek(jd.fd, 0, SEEK_SET) < 0 ||
            write_all(jd.fd, b.p, b.len) < 0) {
            jx_fail(err, errlen, "cannot write %s: %s", res->jinxdump, strerror(errno));
            goto out;
        }
        e = tmp_publish(&jd, res->jinxdump);
        if (e == -EEXIST) {
            unlink(res->core);
            core_linked = false;
            continue;
        }
        if (e < 0) {
            jx_fail(err, errlen, "cannot write %s: %s", res->jinxdump, strerror(-e));
            goto out;
        }
        rc = 0;
        break;
    }
    if (rc < 0) {
        jx_fail(err, errlen, "no free dump file name in %s (100 taken)", dir);
        goto out;
    }
    /* The names themselves must survive a crash of the host too. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    struct stat st;
    if (stat(res->core, &st) == 0)
        res->core_disk = (uint64_t)st.st_blocks * 512;
    res->core_size = d.core.size;
    res->jinxdump_size = b.len;
out:
    if (rc < 0 && core_linked)
        unlink(res->core);
    tmp_close(&core);
    tmp_close(&jd);
    dbuf_free(&b);
    dumpfile_free(&d);
    free(segs);
    free(ct);
    free(pi);
    res->ns = mono_ns() - t0;
    return rc;
}
