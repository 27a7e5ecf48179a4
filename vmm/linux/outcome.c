#include "linux/outcome.h"
#include "linux/pipes.h"
#include "lib/json.h"
#include "kvm/vm.h"
#include "kvm/cpuidpatch.h"
#include "linux/sanreport.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *signal_name(int sig)
{
    static const char *n[] = {
        [SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT", [SIGILL] = "SIGILL",
        [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE",
        [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV",
        [SIGUSR2] = "SIGUSR2", [SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM",
        [SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",
        [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP", [SIGTSTP] = "SIGTSTP",
        [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU", [SIGURG] = "SIGURG", [SIGXCPU] = "SIGXCPU",
        [SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
        [SIGWINCH] = "SIGWINCH", [SIGIO] = "SIGIO", [SIGPWR] = "SIGPWR", [SIGSYS] = "SIGSYS"};
    if (sig > 0 && sig < (int)(sizeof n / sizeof n[0]) && n[sig])
        return n[sig];
    return "SIGRT";
}

int outcome_exit_status(const struct outcome *o)
{
    switch (o->kind) {
    case OUT_EXIT: return o->status & 0xFF;
    case OUT_SIGNAL: return 128 + o->signal;
    case OUT_DEADLOCK: return EXIT_DEADLOCK;
    case OUT_TIMEOUT: return EXIT_TIMEOUT;
    default: return EXIT_VMM_ERROR;
    }
}

bool outcome_sanreport(struct vm *vm, struct san_report *r)
{
    char *text = malloc(TAIL_BYTES + 8); /* not TLS: a vCPU thread's comes out of its stack */
    if (!text) {
        memset(r, 0, sizeof *r);
        return false;
    }
    size_t n = tail_lines(&vm->errtail, TAIL_BYTES, text, TAIL_BYTES + 8);
    bool has = sanreport_parse(text, n, r);
    free(text);
    return has;
}

void outcome_sanreport_json(FILE *f, bool has, const struct san_report *r)
{
    if (!has) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"tool\":");
    json_fput_str(f, r->tool, false);
    fprintf(f, ",\"kind\":");
    json_fput_str(f, r->kind, false);
    fprintf(f, ",\"first_lines\":[");
    for (int i = 0; i < r->nlines; i++) {
        fprintf(f, "%s", i ? "," : "");
        json_fput_str(f, r->lines[i], false);
    }
    fprintf(f, "]}");
}

static void print_bt(struct vm *vm, const uint64_t *bt, int n, FILE *f, const char *indent)
{
    char sym[160];
    for (int i = 0; i < n; i++) {
        vm_symbolize_frame(vm, bt[i], i > 0, sym, sizeof sym);
        fprintf(f, "%s#%d 0x%012llx %s\n", indent, i, (unsigned long long)bt[i], sym);
    }
}

void outcome_print(struct vm *vm, const struct outcome *o, FILE *f)
{
    char sym[160];
    const char *P = "jinx-vmm:";
    switch (o->kind) {
    case OUT_EXIT:
        fprintf(f, "%s program exited with status %d\n", P, o->status);
        break;
    case OUT_SIGNAL: {
        vm_symbolize_frame(vm, o->rip, false, sym, sizeof sym); /* a library's too */
        fprintf(f, "%s program killed by %s (signal %d) in thread %d at 0x%llx %s\n", P,
                signal_name(o->signal), o->signal, o->thread, (unsigned long long)o->rip, sym);
        if (o->detail[0])
            fprintf(f, "%s   %s\n", P, o->detail);
        if (o->nbt > 1) {
            fprintf(f, "%s   backtrace:\n", P);
            print_bt(vm, o->bt, o->nbt, f, "jinx-vmm:     ");
        }
        if (o->has_regs) {
            const struct kvm_regs *r = &o->regs;
            fprintf(f, "%s   rax %016llx rbx %016llx rcx %016llx rdx %016llx\n", P, r->rax,
                    r->rbx, r->rcx, r->rdx);
            fprintf(f, "%s   rsi %016llx rdi %016llx rbp %016llx rsp %016llx\n", P, r->rsi,
                    r->rdi, r->rbp, r->rsp);
            fprintf(f, "%s   r8  %016llx r9  %016llx r10 %016llx r11 %016llx\n", P, r->r8, r->r9,
                    r->r10, r->r11);
            fprintf(f, "%s   r12 %016llx r13 %016llx r14 %016llx r15 %016llx\n", P, r->r12,
                    r->r13, r->r14, r->r15);
            fprintf(f, "%s   rip %016llx rflags %08llx", P, r->rip, r->rflags);
            if (o->vector == 14)
                fprintf(f, " cr2 %016llx", (unsigned long long)o->cr2);
            if (o->vector >= 0)
                fprintf(f, " error %llx", (unsigned long long)o->errcode);
            fprintf(f, "\n");
        }
        break;
    }
    case OUT_DEADLOCK:
        fprintf(f, "%s deadlock: %s\n", P, o->detail);
        for (int i = 0; i < o->nwaiters; i++) {
            const struct out_waiter *w = &o->waiters[i];
            char wsym[160];
            vm_symbolize(vm, w->rip, sym, sizeof sym);
            if (w->addr)
                vm_symbolize(vm, w->addr, wsym, sizeof wsym);
            else
                snprintf(wsym, sizeof wsym, "(sleeping)");
            if (pipe_key(w->addr)) /* a pipe's wait (pipes.h), not a futex in memory */
                fprintf(f, "%s   thread %d waits in %s, at %s\n", P, w->tid,
                        pipe_key_what(w->addr, wsym, sizeof wsym), sym);
            else
                fprintf(f, "%s   thread %d waits on futex 0x%llx %s, at %s\n", P, w->tid,
                        (unsigned long long)w->addr, wsym, sym);
            print_bt(vm, w->bt, w->nbt, f, "jinx-vmm:       ");
        }
        if (o->nthreads_total > o->nwaiters)
            fprintf(f, "%s   ... and %d more threads\n", P, o->nthreads_total - o->nwaiters);
        break;
    case OUT_TIMEOUT:
        fprintf(f, "%s timeout: %s (livelock or hang?)\n", P, o->detail);
        break;
    case OUT_ERROR:
        fprintf(f, "%s error: %s\n", P, o->detail);
        break;
    default:
        fprintf(f, "%s no outcome\n", P);
    }
    struct san_report rep;
    if (outcome_sanreport(vm, &rep))
        fprintf(f, "%s the program's sanitizer reported: %s %s (%s)\n", P, rep.tool, rep.kind,
                rep.lines[0]);
    /* Jinx's own limits met on the way (limitlog.h): a failure after one is suspect. */
    if (limits_count(&vm->limits)) {
        limits_print(&vm->limits, f, "jinx-vmm: ");
        if (outcome_exit_status(o) != 0)
            fprintf(f, "%s this failure followed the jinx limits above: it may come from jinx, "
                    "not from the program (jinx test says \"could not test\")\n", P);
    }
    fprintf(f, "%s exit status %d\n", P, outcome_exit_status(o));
}

static void json_bt(struct vm *vm, FILE *f, const uint64_t *bt, int n)
{
    char sym[160];
    fprintf(f, "[");
    for (int i = 0; i < n; i++) {
        vm_symbolize_frame(vm, bt[i], i > 0, sym, sizeof sym);
        fprintf(f, "%s{\"pc\":\"0x%llx\",\"symbol\":", i ? "," : "", (unsigned long long)bt[i]);
        json_fput_str(f, sym, false);
        fprintf(f, "}");
    }
    fprintf(f, "]");
}

int outcome_write_json(struct vm *vm, const struct outcome *o, const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    char sym[160];
    static const char *kinds[] = {"none", "exit", "signal", "deadlock", "timeout", "error"};
    fprintf(f, "{\"outcome\":\"%s\",\"exit_status\":%d", kinds[o->kind], outcome_exit_status(o));
    fprintf(f, ",\"cpu_model\":");
    json_fput_str(f, vm->cpu_model, false);
    cpuidpatch_write_json(vm->patches, f);
    switch (o->kind) {
    case OUT_EXIT:
        fprintf(f, ",\"status\":%d", o->status);
        break;
    case OUT_SIGNAL:
        vm_symbolize_frame(vm, o->rip, false, sym, sizeof sym); /* a library's too */
        fprintf(f, ",\"signal\":%d,\"signame\":\"%s\",\"thread\":%d,\"rip\":\"0x%llx\",\"symbol\":",
                o->signal, signal_name(o->signal), o->thread, (unsigned long long)o->rip);
        json_fput_str(f, sym, false);
        fprintf(f, ",\"vector\":%d", o->vector);
        if (o->vector == 14)
            fprintf(f, ",\"cr2\":\"0x%llx\"", (unsigned long long)o->cr2);
        fprintf(f, ",\"backtrace\":");
        json_bt(vm, f, o->bt, o->nbt);
        break;
    case OUT_DEADLOCK:
        fprintf(f, ",\"threads\":[");
        for (int i = 0; i < o->nwaiters; i++) {
            const struct out_waiter *w = &o->waiters[i];
            fprintf(f, "%s{\"thread\":%d,\"wait_addr\":\"0x%llx\",\"wait_symbol\":", i ? "," : "",
                    w->tid, (unsigned long long)w->addr);
            vm_symbolize(vm, w->addr, sym, sizeof sym);
            json_fput_str(f, w->addr ? sym : "", false);
            vm_symbolize(vm, w->rip, sym, sizeof sym);
            fprintf(f, ",\"rip\":\"0x%llx\",\"symbol\":", (unsigned long long)w->rip);
            json_fput_str(f, sym, false);
            fprintf(f, ",\"backtrace\":");
            json_bt(vm, f, w->bt, w->nbt);
            fprintf(f, "}");
        }
        fprintf(f, "]");
        break;
    default:
        break;
    }
    fprintf(f, ",\"detail\":");
    json_fput_str(f, o->detail, false);
    fprintf(f, ",\"limits\":");
    limits_json(&vm->limits, f);
    char tail[2048];
    tail_lines(&vm->errtail, TAIL_LINES, tail, sizeof tail);
    fprintf(f, ",\"stderr_tail\":");
    json_fput_str(f, tail, true);
    struct san_report rep;
    bool has = outcome_sanreport(vm, &rep);
    fprintf(f, ",\"report\":");
    outcome_sanreport_json(f, has, &rep);
    fprintf(f, ",\"stats\":{\"exits\":%llu,\"syscalls\":%llu,\"vcpus\":%d,"
            "\"demand_pages\":%llu}}\n",
            (unsigned long long)atomic_load(&vm->n_exits),
            (unsigned long long)atomic_load(&vm->n_syscalls), vm->nvcpus,
            (unsigned long long)vm->mm.faulted);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
