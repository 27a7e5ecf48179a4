/* srcline: addr2line's output parsed strictly, the tool run without a shell, failures
 * reported (a stand-in addr2line via JINX_ADDR2LINE; no KVM, no images). */
#include "dump/srcline.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void check(const char *in, const char *want)
{
    char out[SRCLINE_LEN];
    memset(out, 'x', sizeof out);
    srcline_parse(in, out, sizeof out);
    if (strcmp(out, want))
        fail_msg("srcline_parse(\"%s\") = \"%s\", wanted \"%s\"", in, out, want);
}

static void test_parse(void **state)
{
    (void)state;
    check("/src/circle.c:64\n", "/src/circle.c:64");
    check("circle.c:7", "circle.c:7");
    check("/src/a.c:12 (discriminator 3)\n", "/src/a.c:12");
    check("??:0\n", "");
    check("??:?\n", "");
    check("/src/a.c:?\n", "");
    check("/src/a.c:0\n", "");
    check("/src/a.c:\n", "");
    check(":12\n", "");
    check("nocolon\n", "");
    check("/src/a.c:12x\n", "");
    check("/src/a.c:999999999999\n", "");
    check("/src/\x1b[31ma.c:12\n", ""); /* terminal escapes from a hostile image */
    check("", "");
    char longpath[SRCLINE_LEN + 10];
    memset(longpath, 'a', sizeof longpath);
    memcpy(longpath + sizeof longpath - 5, ":12\n", 5);
    check(longpath, "");
}

static char dir[64];

static void tool(const char *name, const char *body)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    setenv("JINX_ADDR2LINE", path, 1);
}

static void test_resolve(void **state)
{
    (void)state;
    char out[3][SRCLINE_LEN], err[200];
    uint64_t a[3] = {0x401000, 0x401abc, 0x10};
    /* The tool gets -e IMAGE and the addresses in hex, one argument each. */
    tool("ok", "[ \"$1\" = -e ] && [ \"$2\" = '/img -x' ] && [ \"$3\" = 0x401000 ] && "
               "[ \"$4\" = 0x401abc ] && [ \"$5\" = 0x10 ] || exit 1\n"
               "printf '/s/a.c:10\\n??:0\\n/s/b.c:3 (discriminator 1)\\n'");
    assert_int_equal(srcline_resolve("/img -x", a, 3, out, err, sizeof err), 2);
    assert_string_equal(out[0], "/s/a.c:10");
    assert_string_equal(out[1], "");
    assert_string_equal(out[2], "/s/b.c:3");
    /* Fewer lines than addresses: the rest stay empty. */
    tool("short", "printf '/s/a.c:10\\n'");
    assert_int_equal(srcline_resolve("/img", a, 3, out, err, sizeof err), 1);
    assert_string_equal(out[2], "");
    /* A failing tool, a missing one, a flood: -1 with a message, nothing filled in. */
    tool("fail", "printf '/s/a.c:10\\n'; exit 3");
    assert_int_equal(srcline_resolve("/img", a, 3, out, err, sizeof err), -1);
    assert_string_equal(out[0], "");
    assert_non_null(strstr(err, "failed"));
    setenv("JINX_ADDR2LINE", "/nonexistent/addr2line", 1);
    assert_int_equal(srcline_resolve("/img", a, 3, out, err, sizeof err), -1);
    assert_non_null(strstr(err, "binutils"));
    tool("flood", "yes /s/a.c:10");
    assert_int_equal(srcline_resolve("/img", a, 3, out, err, sizeof err), -1);
    /* Too many addresses at once. */
    uint64_t many[SRCLINE_MAX + 1] = {0};
    static char mo[SRCLINE_MAX + 1][SRCLINE_LEN];
    assert_int_equal(srcline_resolve("/img", many, SRCLINE_MAX + 1, mo, err, sizeof err), -1);
    assert_int_equal(srcline_resolve("/img", a, 0, out, err, sizeof err), 0);
    unsetenv("JINX_ADDR2LINE");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/jinx-srcline.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *n[] = {"ok", "short", "fail", "flood"};
    for (size_t i = 0; i < 4; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, n[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse),
                                       cmocka_unit_test(test_resolve)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
