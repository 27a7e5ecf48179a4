/* A program with one known error of each kind scripts/valgrind-run.sh must catch, run
 * first so a change in valgrind's log format cannot silently turn the checks off:
 * "leak" loses a block, "read" reads past an allocation, "fd" exits with an open
 * descriptor, "clean" has no error. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "clean";
    char *p = malloc(16);
    if (!p)
        return 1;
    memset(p, 'x', 16);
    if (!strcmp(what, "leak")) {
        p = NULL; /* the only pointer to the block is gone: definitely lost */
        return 0;
    }
    if (!strcmp(what, "read")) {
        volatile char c = p[16];
        (void)c;
    }
    if (!strcmp(what, "fd") && open("/dev/null", O_RDONLY) < 0)
        return 1;
    free(p);
    return 0;
}
