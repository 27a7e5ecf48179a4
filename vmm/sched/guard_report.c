/* The wall guard's report (guard_report.h). */
#include "sched/guard_report.h"
#include "sched/serialize.h"
#include "linux/futex.h"
#include "kvm/layout.h"
#include "kvm/vm.h"
#include <inttypes.h>

/* Virtual ns as "12.345 ms". */
static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
    snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 " ms", ns / 1000000, ns / 1000 % 1000);
}

static void thread_line(struct vm *vm, struct vcpu *v, uint64_t now, int turn, FILE *out,
                        const char *prefix)
{
    char what[160], sym[96], t[32];
    uint64_t rip;
    if (v->state == T_BLOCKED) {
        rip = v->blocked_regs.rcx; /* the user's rip after the syscall instruction */
        int n = v->wait_addr ? snprintf(what, sizeof what, "blocked in futex wait on 0x%" PRIx64,
                                        v->wait_addr)
                             : snprintf(what, sizeof what, "blocked in a sleep");
        if (v->wait_deadline == NO_DEADLINE) {
            snprintf(what + n, sizeof what - (size_t)n, ", no deadline");
        } else if (v->wait_deadline <= now) {
            fmt_ns(t, sizeof t, now - v->wait_deadline);
            snprintf(what + n, sizeof what - (size_t)n, ", deadline PASSED %s ago, not expired",
                     t);
        } else {
            fmt_ns(t, sizeof t, v->wait_deadline - now);
            snprintf(what + n, sizeof what - (size_t)n, ", deadline in %s", t);
        }
    } else {
        rip = v->run->s.regs.regs.rip;
        snprintf(what, sizeof what, "%s%s%s",
                 v->tid == turn ? "running (its turn)" : "runnable, waiting for its turn",
                 v->acc_pending ? ", a trapped access waiting" : "",
                 v->start_pending ? ", not started yet" : "");
    }
    if (uva_in_agent(rip))
        snprintf(sym, sizeof sym, "(jinx's syscall entry: in a system call)");
    else
        vm_symbolize(vm, rip, sym, sizeof sym);
    fprintf(out, "%s  thread %d (T%d): %s; at 0x%" PRIx64 " %s\n", prefix, v->tid, v->xid, what,
            rip, sym);
}

void guard_report(struct vm *vm, FILE *out, const char *prefix)
{
    pthread_mutex_lock(&vm->lock);
    struct serializer *s = vm->ser;
    uint64_t now = serialize_vtime(vm);
    char t[32];
    fmt_ns(t, sizeof t, now);
    int turn = s->guard_turn;
    fprintf(out, "%scue point %" PRIu64 " of the fragment, virtual time %s; the turn was %s",
            prefix, s->cues, t, turn > 0 ? "thread " : "nobody's");
    if (turn > 0)
        fprintf(out, "%d's", turn);
    fprintf(out, "; %d live threads, %d blocked:\n", vm->live, vm->blocked);
    for (int i = 0; i < vm->nvcpus; i++)
        if (vm->vcpus[i]->tid)
            thread_line(vm, vm->vcpus[i], now, turn, out, prefix);
    pthread_mutex_unlock(&vm->lock);
}
