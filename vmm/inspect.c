/* PLACEHOLDER: the real `jinxctl inspect` (crash dumps) is written separately and
 * replaces this file when merged. */
#include "inspect.h"
#include <stdio.h>

int cmd_inspect(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "jinxctl inspect: not built yet\n");
    return 2;
}
