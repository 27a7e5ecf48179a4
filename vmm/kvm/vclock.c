/* The guest's clock in free execution: the VMM's half (kvm/vclock.h). */
#include "kvm/vclock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <x86intrin.h>

#include "kvm/guestmem.h"
#include "kvm/hostcpu.h"
#include "kvm/vm.h"
#include "lib/util.h"
#include "linux/futex.h"

uint64_t vclock_mult(uint64_t khz)
{
    if (khz < 1000 || khz > 100000000)
        return 0;
    return (uint64_t)(((unsigned __int128)1000000 << 32) / khz);
}

uint64_t vclock_elapsed(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

/* The first "flags" line lists constant_tsc and nonstop_tsc: the TSC ticks at one rate
 * in every state, so a tick count is a time. */
static bool tsc_is_clock(const char *cpuinfo)
{
    size_t n = cpuinfo ? strlen(cpuinfo) : 0;
    return hostcpu_flag_in(cpuinfo, n, "constant_tsc") && hostcpu_flag_in(cpuinfo, n, "nonstop_tsc");
}

void vclock_setup(struct vclock *c, bool pvm, bool answers, uint64_t khz, const char *cpuinfo)
{
    memset(c, 0, sizeof *c);
    c->mult = vclock_mult(khz);
    if (!pvm || !answers || !c->mult || !tsc_is_clock(cpuinfo))
        return;
    /* The pair is taken twice and the tighter bracket kept: mono0 then belongs to tsc0
     * within ~0.1 us (it only shifts the clock's origin, the same on both sides). */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = __rdtsc(), m = mono_ns(), t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            c->tsc0 = t0 + (t1 - t0) / 2;
            c->mono0 = m;
        }
    }
    c->on = true;
}

int vclock_setup_vm(struct vm *vm, uint64_t agent_len)
{
    if (!vclock_header_ok(&vm->agent, agent_len))
        return -1;
    int khz = ioctl(vm->vm_fd, KVM_GET_TSC_KHZ, 0);
    char cpuinfo[16384]; /* the first processor's lines are enough */
    size_t n = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        n = fread(cpuinfo, 1, sizeof cpuinfo - 1, f);
        fclose(f);
    }
    cpuinfo[n] = 0;
    vclock_setup(&vm->vclock, vm->pvm, !vm->opt.no_guest_answers, khz > 0 ? (uint64_t)khz : 0,
                 f ? cpuinfo : NULL);
    return 0;
}

uint64_t vm_host_ns(struct vm *vm)
{
    const struct vclock *c = &vm->vclock;
    if (!c->on)
        return mono_ns();
    return c->mono0 + vclock_elapsed(__rdtsc() - c->tsc0, c->mult);
}

void vclock_block(const struct vclock *c, bool time_virtual, uint64_t start_ns,
                  int64_t skipped_ns, struct agent_clock *blk)
{
    memset(blk, 0, sizeof *blk);
    blk->on = c->on && !time_virtual;
    blk->tsc_base = c->tsc0;
    blk->mult = c->mult;
    /* vm_vtime = (host_ns - start_ns) + skipped_ns, host_ns = mono0 + elapsed: the same
     * sum, regrouped (mod 2^64). */
    blk->ns_base = c->mono0 - start_ns + (uint64_t)skipped_ns;
    blk->epoch = VTIME_EPOCH_NS;
    blk->billion = 1000000000ULL;
    blk->thousand = 1000;
}

void vclock_publish(struct vm *vm)
{
    if (!vm->vclock.on)
        return;
    struct agent_clock want;
    vclock_block(&vm->vclock, vm_time_is_virtual(vm), vm->start_ns, vm->skipped_ns, &want);
    /* While a pause waits, the block is off: a vCPU let run on out of a half-done answer
     * (vclock_mid_answer) must meet an exit at its next time syscall. On PVM the kick
     * is taken where the guest enters the agent, so a loop of in-guest answers would
     * otherwise be caught mid-answer at every re-kick and never stop. */
    if (atomic_load(&vm->paused))
        want.on = 0;
    unsigned long long *have = gm_ptr(&vm->gm, GPA_AGENT + vm->agent.clock);
    const unsigned long long *w = &want.on;
    /* Only what changed is written: other vCPUs may be reading the same values. `on`
     * goes last when turning on and first when turning off. A write marks the page
     * dirty for snapshots (guestmem.h), so that a restore puts the snapshot's block
     * back and memory compares equal (--snapshot-selftest); the next publish rewrites it. */
    bool wrote = false;
    if (!want.on && __atomic_load_n(&have[0], __ATOMIC_RELAXED)) {
        __atomic_store_n(&have[0], 0, __ATOMIC_SEQ_CST);
        wrote = true;
    }
    for (size_t i = 1; i < sizeof want / 8; i++)
        if (__atomic_load_n(&have[i], __ATOMIC_RELAXED) != w[i]) {
            __atomic_store_n(&have[i], w[i], __ATOMIC_SEQ_CST);
            wrote = true;
        }
    if (want.on && !__atomic_load_n(&have[0], __ATOMIC_RELAXED)) {
        __atomic_store_n(&have[0], 1, __ATOMIC_SEQ_CST);
        wrote = true;
    }
    if (wrote)
        gm_mark_dirty(&vm->gm, GPA_AGENT + vm->agent.clock);
}

bool vclock_mid_answer(struct vm *vm, struct vcpu *v)
{
    /* Only while the agent may answer: when time is virtual the block is off, and a
     * serialized thread's kick (its turn is over) must stop it wherever it is. */
    const unsigned long long *on = gm_ptr(&vm->gm, GPA_AGENT + vm->agent.clock);
    struct kvm_regs r;
    if (!vm->vclock.on || !__atomic_load_n(on, __ATOMIC_ACQUIRE) ||
        ioctl(v->fd, KVM_GET_REGS, &r) < 0)
        return false;
    uint64_t off = r.rip - UVA_AGENT;
    /* The look-ups and the clock's gate, then the clock path; not the MMIO read. */
    return (off >= vm->agent.syscall_user && off < vm->agent.mmio_user) ||
           (off >= vm->agent.clock_probe && off < vm->agent.clock_end);
}

bool vclock_header_ok(const struct agent_header *h, uint64_t len)
{
    return h->syscall_user < h->mmio_user && h->mmio_user < h->clock_probe && h->clock % 8 == 0 && (uint64_t)h->clock + sizeof(struct agent_clock) <= len &&
           h->clock_probe < h->clock_compute && h->clock_compute <= h->clock_store &&
           h->clock_store < h->clock_end && h->clock_end <= len;
}

enum vclock_fix vclock_fix_kind(const struct agent_header *h, int vec, uint64_t rip)
{
    /* #GP: a non-canonical pointer; #PF: an unmapped or read-only one; #AC cannot happen
     * (the agent writes only aligned words) but would be the same. */
    if (vec != 13 && vec != 14 && vec != 17)
        return VCLOCK_FIX_NONE;
    if (rip >= UVA_AGENT + h->clock_probe && rip < UVA_AGENT + h->clock_compute)
        return VCLOCK_FIX_EXIT;
    if (rip >= UVA_AGENT + h->clock_store && rip < UVA_AGENT + h->clock_end)
        return VCLOCK_FIX_EFAULT;
    return VCLOCK_FIX_NONE;
}

bool vclock_fixup(struct vm *vm, struct vcpu *v, int vec, uint64_t rip, uint64_t *resume)
{
    struct kvm_regs *r = &v->run->s.regs.regs;
    switch (vclock_fix_kind(&vm->agent, vec, rip)) {
    case VCLOCK_FIX_EXIT:
        *resume = UVA_AGENT + vm->agent.mmio_user;
        return true;
    case VCLOCK_FIX_EFAULT:
        /* rcx is the return address a SYSCALL left; a program that jumped here itself
         * with a kernel or agent address in rcx gets the fault instead. */
        if (r->rcx >= USER_TOP)
            return false;
        r->rdx = r->r11;
        r->rax = (uint64_t)-EFAULT;
        *resume = r->rcx;
        return true;
    default:
        return false;
    }
}
