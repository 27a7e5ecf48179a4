/* Command lines whose options may come before or after the positional arguments, up
 * to "--" (everything after it is positional):
 *     jinx test IMAGE --budget 10s --json -- ARG...
 *     jinx-vmm run IMAGE 4 60000 --stats        (IMAGE, then the program's 4 60000)
 * A thin layer over getopt_long in its return-in-order mode, so that POSIXLY_CORRECT
 * changes nothing. Unknown options, ambiguous abbreviations, a missing value and a value
 * given to an option that takes none end the parse with a message naming the option;
 * nothing is ever ignored. An argument of the program that starts with '-' goes after
 * "--". No KVM; unit-tested (tests/unit/test_vmm_cli.c). */
#ifndef JINX_CLI_H
#define JINX_CLI_H
#include <getopt.h>

#define CLI_END   (-1)   /* no more options */
#define CLI_ERROR (-2)   /* bad option: message in cli.err */

struct cli {
    const char *cmd;          /* "jinx-vmm run", for messages */
    int argc;
    char **argv;
    char **pos;               /* the positional arguments, in order (caller's array of */
    int npos;                 /* at least argc entries; pointers into argv) */
    char err[256];
};

/* argv[0] is the command's own name and is skipped; pos must hold argc entries. */
void cli_init(struct cli *c, const char *cmd, int argc, char **argv, char **pos);
/* The next option, as getopt_long returns it (optarg set; *longindex when not NULL),
 * CLI_END when every argument has been seen (c->pos/npos complete), or CLI_ERROR.
 * shortopts lists the short options without any leading '+', '-' or ':'. */
int cli_next(struct cli *c, const char *shortopts, const struct option *lo, int *longindex);

#endif
