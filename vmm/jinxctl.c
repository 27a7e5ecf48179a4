/* jinxctl: the control and inspection CLI. This branch's minimal version dispatches only
 * `inspect` (inspect.h); the full jinxctl (attach, ...) merges its commands in here. */
#include "inspect.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    jx_set_progname("jinxctl");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout, "usage: jinxctl inspect [options] DUMP  (jinxctl "
                "inspect --help)\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "inspect"))
        return cmd_inspect(argc - 1, argv + 1);
    jx_err("unknown command '%s' (try: jinxctl inspect DUMP)", argv[1]);
    return 2;
}
