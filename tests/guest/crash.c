/* Each fatal outcome on demand: the runner checks status, signal name and symbol. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
volatile int zero = 0;

/* Through a volatile pointer: a literal null store is UB the compiler would delete. */
int *volatile nullp = 0;
__attribute__((noinline)) void null_deref(void) { *nullp = 1; }
__attribute__((noinline)) void failing_assert(int x) { assert(x == 42); }
__attribute__((noinline)) void divide(void) { printf("%d\n", 10 / zero); }
void (*volatile wildp)(void) = (void (*)(void))0xffff800000010000ull;
__attribute__((noinline)) void wild_jump(void) { wildp(); }
__attribute__((noinline)) void write_text(void) { *(volatile char *)(void *)write_text = 0; }

static void *t_ab(void *x) { (void)x; pthread_mutex_lock(&a); pthread_barrier_wait(&bar); pthread_mutex_lock(&b); return 0; }
static void *t_ba(void *x) { (void)x; pthread_mutex_lock(&b); pthread_barrier_wait(&bar); pthread_mutex_lock(&a); return 0; }
static void *crasher(void *x) { (void)x; null_deref(); return 0; }
static void *exiter(void *x) { (void)x; exit(7); }

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "segv")) null_deref();
    if (!strcmp(what, "assert")) failing_assert(41);
    if (!strcmp(what, "abort")) abort();
    if (!strcmp(what, "ud")) __builtin_trap();
    if (!strcmp(what, "div0")) divide();
    if (!strcmp(what, "hlt")) __asm__ volatile("hlt");
    if (!strcmp(what, "cr3")) { unsigned long v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); }
    if (!strcmp(what, "out")) __asm__ volatile("outb %%al, $0x10" ::"a"(0));
    if (!strcmp(what, "wild")) wild_jump();
    if (!strcmp(what, "text")) write_text();
    if (!strcmp(what, "pagetable")) *(volatile unsigned long *)0xffff800000003000ull = 0x7; /* PML4 */
    if (!strcmp(what, "int80")) __asm__ volatile("int $0x80");
    if (!strcmp(what, "thread-segv")) { pthread_t t; pthread_create(&t, 0, crasher, 0); pthread_join(t, 0); }
    if (!strcmp(what, "thread-exit")) { pthread_t t; pthread_create(&t, 0, exiter, 0); pthread_join(t, 0); }
    if (!strcmp(what, "deadlock")) {
        pthread_t t1, t2;
        pthread_barrier_init(&bar, 0, 2);
        pthread_create(&t1, 0, t_ab, 0);
        pthread_create(&t2, 0, t_ba, 0);
        pthread_join(t1, 0);
    }
    if (!strcmp(what, "spin")) for (;;) __asm__ volatile("" ::: "memory");
    if (!strcmp(what, "sleep")) { sleep(3600); return 5; } /* virtual time: instant */
    if (!strcmp(what, "exit")) return atoi(argv[2]);
    puts("nothing to do");
    return 0;
}
