/* The commands of jinx-vmm (jinx_vmm.c dispatches to them). */
#ifndef JINX_COMMANDS_H
#define JINX_COMMANDS_H
#include <stdio.h>

/* jinx-vmm's usage text. */
void jinx_vmm_usage(FILE *f);
/* `jinx-vmm run [options] IMAGE [ARG...]` (run.c): the program's exit status. */
int cmd_run(int argc, char **argv);

#endif
