/* Sanitizer reports without a race, one thread, so that jinx-vmm's run, --serial run and a
 * native run can be compared byte for byte where they must agree (tests/integration/
 * sanitizers.sh): argv[1] picks the error. Built with ASan (uaf, dfree, clean), with UBSan
 * -fno-sanitize-recover (overflow, clean) and with clang's MSan (uninit, clean). "clean"
 * prints and exits 0: with ASan it also needs jinx-vmm to keep LeakSanitizer from forking
 * at exit (linux/sanenv.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "clean";
    int *p = malloc(16 * sizeof *p);
    if (!p)
        return 2;
    for (int i = 0; i < 16; i++)
        p[i] = i;
    int *volatile q = p; /* the compiler must not see the bugs below (-Wuse-after-free) */
    if (!strcmp(what, "uaf")) {
        free(q);
        sink = q[3]; /* heap-use-after-free */
        return 0;
    }
    if (!strcmp(what, "dfree")) {
        free(q);
        free(q); /* double-free */
        return 0;
    }
    if (!strcmp(what, "overflow")) {
        volatile int big = INT_MAX - argc;
        sink = big + p[5]; /* signed integer overflow */
        free(p);
        return 0;
    }
    if (!strcmp(what, "uninit")) {
        int *u = malloc(4 * sizeof *u);
        int *volatile uq = u;
        if (uq[argc & 3] > 0) /* use-of-uninitialized-value (MSan) */
            sink = 1;
        free(u);
        free(p);
        return 0;
    }
    int sum = 0;
    for (int i = 0; i < 16; i++)
        sum += p[i];
    free(p);
    printf("clean %d\n", sum);
    return 0;
}
