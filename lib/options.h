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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Declarative options: one row per option that takes a plain value (a flag, a string, a
 * number, a size such as 512M, a duration such as 10s), saying where the value goes and
 * what it may be. A command lists its rows, builds getopt's table from them (plus its
 * own special options), and hands each row's option to cli_value_set. */
enum cli_kind { CLI_FLAG, CLI_STRING, CLI_U64, CLI_SIZE, CLI_DURATION };
struct cli_value {
    const char *name;       /* long name, without "--" */
    enum cli_kind kind;
    void *dest;             /* FLAG: bool; STRING: const char *; numbers: see size */
    unsigned size;          /* numbers: sizeof *dest, 4 (int or uint32_t) or 8 (uint64_t) */
    uint64_t min, max;      /* numbers: the accepted range, inclusive */
    uint64_t multiple;      /* numbers: must be a multiple of this (0: any) */
    const char *expected;   /* refused: "--name VALUE: expected <expected>" */
    bool *given;            /* set true when the option is given (NULL: not wanted) */
};
#define CLI_VALUE_ID 0x7000 /* getopt's id of every row built by cli_value_longopts */

/* getopt's table: the n rows (id CLI_VALUE_ID) then extra (up to its {0} row), into
 * out[cap]. Returns out, or NULL when cap is too small. */
struct option *cli_value_longopts(const struct cli_value *v, size_t n,
                                  const struct option *extra, struct option *out, size_t cap);
/* The row named name, or NULL. */
const struct cli_value *cli_value_find(const struct cli_value *v, size_t n, const char *name);
/* Stores arg (NULL for a flag) through the row. 0, or -1 with the message in err. */
int cli_value_set(const struct cli_value *v, const char *arg, char *err, size_t errlen);

#endif
