/* Unit tests for lib/options.c: options before or after the positional arguments, "--",
 * and refusals (unknown, ambiguous, missing value, value given to a flag). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/options.h"

static const struct option LO[] = {
    {"budget", required_argument, 0, 'b'}, {"json", no_argument, 0, 'j'},
    {"dump-dir", required_argument, 0, 'd'}, {"seed", required_argument, 0, 's'},
    {"sims", required_argument, 0, 'k'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};

struct got {
    char budget[32], dir[32];
    int json, help, seed_given;
    int npos;
    char pos[8][32];
    int rc;                 /* 0, or CLI_ERROR */
    char err[256];
};

/* Parses a space-separated command line ("test IMAGE --json"). */
static struct got parse(const char *line)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", line);
    char *argv[32];
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = strcmp(t, "<empty>") ? t : "";
    argv[argc] = NULL;
    struct got g;
    memset(&g, 0, sizeof g);
    char *pos[32];
    struct cli c;
    cli_init(&c, "test", argc, argv, pos);
    int ch, li;
    while ((ch = cli_next(&c, "h", LO, &li)) != CLI_END) {
        switch (ch) {
        case 'b': snprintf(g.budget, sizeof g.budget, "%s", optarg); break;
        case 'd': snprintf(g.dir, sizeof g.dir, "%s", optarg); break;
        case 'j': g.json = 1; break;
        case 'h': g.help = 1; break;
        case 's': g.seed_given = 1; break;
        case 'k': break;
        case CLI_ERROR:
            g.rc = CLI_ERROR;
            snprintf(g.err, sizeof g.err, "%s", c.err);
            return g;
        default: fail_msg("unexpected option code %d", ch);
        }
    }
    g.npos = c.npos;
    for (int i = 0; i < c.npos && i < 8; i++)
        snprintf(g.pos[i], sizeof g.pos[i], "%s", c.pos[i]);
    return g;
}

static void test_options_after_positional(void **st)
{
    (void)st;
    /* The command line: every option after IMAGE must count. */
    struct got g = parse("test IMAGE --budget 10s --dump-dir D --json");
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.budget, "10s");
    assert_string_equal(g.dir, "D");
    assert_int_equal(g.json, 1);
    assert_int_equal(g.npos, 1);
    assert_string_equal(g.pos[0], "IMAGE");
    /* Before, between and after; --opt=value too. */
    g = parse("test --json IMAGE 4 --budget=5s 60000 --dump-dir=x");
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.budget, "5s");
    assert_string_equal(g.dir, "x");
    assert_int_equal(g.npos, 3);
    assert_string_equal(g.pos[1], "4");
    assert_string_equal(g.pos[2], "60000");
    /* A unique abbreviation, and a single '-' is an argument. */
    g = parse("test IMAGE --bud 1s -");
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.budget, "1s");
    assert_int_equal(g.npos, 2);
    assert_string_equal(g.pos[1], "-");
}

static void test_dashdash(void **st)
{
    (void)st;
    /* After "--" everything is the program's, options and a second "--" too. */
    struct got g = parse("test IMAGE --json -- --budget 3s -- -x");
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.json, 1);
    assert_string_equal(g.budget, "");
    assert_int_equal(g.npos, 5);
    assert_string_equal(g.pos[0], "IMAGE");
    assert_string_equal(g.pos[1], "--budget");
    assert_string_equal(g.pos[3], "--");
    assert_string_equal(g.pos[4], "-x");
    /* "--" first: IMAGE itself after it; empty arguments kept. */
    g = parse("test -- IMAGE <empty> a");
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.npos, 3);
    assert_string_equal(g.pos[1], "");
    /* A value that looks like "--" belongs to its option. */
    g = parse("test --dump-dir -- IMAGE");
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.dir, "--");
    assert_int_equal(g.npos, 1);
    g = parse("test");
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.npos, 0);
}

static void test_refusals(void **st)
{
    (void)st;
    struct got g = parse("test IMAGE --bogus");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "unknown option '--bogus'"));
    g = parse("test IMAGE --bogus=3");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "unknown option '--bogus'"));
    g = parse("test IMAGE -x");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "unknown option '-x'"));
    g = parse("test IMAGE --budget");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "'--budget' needs a value"));
    g = parse("test IMAGE --json=yes");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "'--json' takes no value"));
    g = parse("test IMAGE --s 3");
    assert_int_equal(g.rc, CLI_ERROR);
    assert_non_null(strstr(g.err, "ambiguous option '--s'"));
    assert_non_null(strstr(g.err, "--seed"));
    assert_non_null(strstr(g.err, "--sims"));
    assert_non_null(strstr(g.err, "test: ")); /* names the command */
    /* A refusal does not depend on where the option is. */
    g = parse("test --bogus IMAGE");
    assert_int_equal(g.rc, CLI_ERROR);
}

/* The same whatever POSIXLY_CORRECT says (it would stop GNU getopt at IMAGE). */
static void test_posixly_correct(void **st)
{
    (void)st;
    setenv("POSIXLY_CORRECT", "1", 1);
    struct got g = parse("test IMAGE --budget 7s");
    unsetenv("POSIXLY_CORRECT");
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.budget, "7s");
    assert_int_equal(g.npos, 1);
}

/* Parsing twice in one process (optind reset). */
static void test_reuse(void **st)
{
    (void)st;
    for (int i = 0; i < 3; i++) {
        struct got g = parse("test A --json B");
        assert_int_equal(g.rc, 0);
        assert_int_equal(g.npos, 2);
        assert_int_equal(g.json, 1);
    }
}

/* Declarative options: each kind stores what it parsed, refuses out-of-range values
 * with "--name VALUE: expected ...", and marks the option given. */
static void test_values(void **state)
{
    (void)state;
    int vcpus = 0;
    uint64_t mem = 0, timeout = 0;
    bool quiet = false, vcpus_given = false;
    const char *path = NULL;
    const struct cli_value v[] = {
        {"vcpus", CLI_U64, &vcpus, sizeof vcpus, 1, 254, 0, "a number from 1 to 254",
         &vcpus_given},
        {"mem", CLI_SIZE, &mem, sizeof mem, 16 << 20, 3ULL << 30, 2 << 20, "a size", NULL},
        {"timeout", CLI_DURATION, &timeout, sizeof timeout, 1, UINT64_MAX, 0, "a duration",
         NULL},
        {"quiet", CLI_FLAG, &quiet, 0, 0, 0, 0, NULL, NULL},
        {"report", CLI_STRING, &path, 0, 0, 0, 0, NULL, NULL},
    };
    char err[128];
    assert_int_equal(cli_value_set(&v[0], "254", err, sizeof err), 0);
    assert_int_equal(vcpus, 254);
    assert_true(vcpus_given);
    assert_int_equal(cli_value_set(&v[0], "255", err, sizeof err), -1);
    assert_string_equal(err, "--vcpus 255: expected a number from 1 to 254");
    assert_int_equal(cli_value_set(&v[0], "0", err, sizeof err), -1);
    assert_int_equal(cli_value_set(&v[0], "x", err, sizeof err), -1);
    assert_int_equal(vcpus, 254);
    assert_int_equal(cli_value_set(&v[1], "64M", err, sizeof err), 0);
    assert_int_equal(mem, 64ULL << 20);
    assert_int_equal(cli_value_set(&v[1], "17M", err, sizeof err), -1); /* not a multiple */
    assert_int_equal(cli_value_set(&v[2], "500ms", err, sizeof err), 0);
    assert_int_equal(timeout, 500000000ULL);
    assert_int_equal(cli_value_set(&v[2], "0", err, sizeof err), -1);
    assert_int_equal(cli_value_set(&v[3], NULL, err, sizeof err), 0);
    assert_true(quiet);
    assert_int_equal(cli_value_set(&v[4], "r.json", err, sizeof err), 0);
    assert_string_equal(path, "r.json");
    assert_ptr_equal(cli_value_find(v, 5, "mem"), &v[1]);
    assert_null(cli_value_find(v, 5, "me"));

    /* getopt's table: the rows first (a flag takes no value), then the extra ones. */
    const struct option extra[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct option lo[8];
    assert_non_null(cli_value_longopts(v, 5, extra, lo, 8));
    assert_string_equal(lo[0].name, "vcpus");
    assert_int_equal(lo[0].has_arg, required_argument);
    assert_int_equal(lo[0].val, CLI_VALUE_ID);
    assert_int_equal(lo[3].has_arg, no_argument);
    assert_string_equal(lo[5].name, "help");
    assert_null(lo[6].name);
    assert_null(cli_value_longopts(v, 5, extra, lo, 6)); /* no room for the end row */

    /* Parsed from a command line, before and after the positional argument. */
    char *argv[] = {"run", "--vcpus", "3", "IMAGE", "--quiet", "--mem=32M", NULL};
    char *pos[7];
    struct cli c;
    vcpus = 0;
    quiet = false;
    cli_init(&c, "run", 6, argv, pos);
    int ch, li;
    while ((ch = cli_next(&c, "h", lo, &li)) != CLI_END) {
        assert_int_equal(ch, CLI_VALUE_ID);
        assert_int_equal(cli_value_set(&v[li], optarg, err, sizeof err), 0);
    }
    assert_int_equal(vcpus, 3);
    assert_true(quiet);
    assert_int_equal(mem, 32ULL << 20);
    assert_int_equal(c.npos, 1);
    assert_string_equal(c.pos[0], "IMAGE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_after_positional),
        cmocka_unit_test(test_dashdash),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_posixly_correct),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_values),
    };
    return cmocka_run_group_tests_name("vmm/cli", tests, NULL, NULL);
}
