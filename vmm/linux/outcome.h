/* How a guest run ended, and the one-screen report / JSON for it. */
#ifndef JINX_OUTCOME_H
#define JINX_OUTCOME_H
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum outcome_kind { OUT_NONE, OUT_EXIT, OUT_SIGNAL, OUT_DEADLOCK, OUT_TIMEOUT, OUT_ERROR };

#define EXIT_DEADLOCK 123
#define EXIT_TIMEOUT  124
#define EXIT_VMM_ERROR 125
#define OUT_MAX_BT 16
#define OUT_MAX_WAITERS 64

struct out_waiter {
    int tid;
    uint64_t addr, rip, rbp;
    uint64_t bt[OUT_MAX_BT];
    int nbt;
};

struct outcome {
    enum outcome_kind kind;
    int status;                 /* OUT_EXIT */
    int signal, thread;         /* OUT_SIGNAL */
    int vector;                 /* CPU exception vector, -1 when raised by a syscall */
    uint64_t rip, errcode, cr2;
    bool has_regs;
    struct kvm_regs regs;
    uint64_t bt[OUT_MAX_BT];
    int nbt;
    int nwaiters;               /* OUT_DEADLOCK */
    int nthreads_total;
    struct out_waiter waiters[OUT_MAX_WAITERS];
    char detail[256];
};

struct vm;
struct san_report;
const char *signal_name(int sig);
/* The sanitizer report (linux/sanreport.h) in the program's stderr tail, if any. */
bool outcome_sanreport(struct vm *vm, struct san_report *r);
/* *r as a JSON object ({"tool":..,"kind":..,"first_lines":[..]}), or null when has is false. */
void outcome_sanreport_json(FILE *f, bool has, const struct san_report *r);
int outcome_exit_status(const struct outcome *o);
void outcome_print(struct vm *vm, const struct outcome *o, FILE *f);
int outcome_write_json(struct vm *vm, const struct outcome *o, const char *path);

#endif
