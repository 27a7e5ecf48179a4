/* Unit tests for the HTML page of `jinxctl inspect --html` (vmm/inspect_html.c) and its
 * escapers (vmm/html_out.c), built from in-memory rounds: hostile strings never become
 * markup or script, the first difference is highlighted with the recording beside it,
 * private stretches collapse, sync arrows are inferred, and a huge trace stays within
 * the stated bounds with its first difference still drawn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump/html_out.h"
#include "dump/inspect_html.h"

#define EVIL_SYM "<script>alert(1)</script>"

/* ---- helpers ----------------------------------------------------------------------- */

static char *render(const struct html_page *p, struct html_stats *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    char err[256];
    assert_int_equal(inspect_html_write(f, p, st, err, sizeof err), 0);
    fclose(f);
    assert_int_equal(strlen(buf), st->bytes);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
        n++;
    return n;
}

/* The text between <script type="application/json" ...> and its </script>. */
static char *json_block(const char *html)
{
    const char *a = strstr(html, "id=\"jinx-data\">");
    assert_non_null(a);
    a += strlen("id=\"jinx-data\">");
    const char *b = strstr(a, "</script>");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

static void evil_code(void *ctx, const uint64_t *rips, size_t n, struct html_code *out)
{
    (void)ctx;
    (void)rips;
    for (size_t i = 0; i < n; i++) {
        snprintf(out[i].sym, sizeof out[i].sym, "</script><script>alert(6)</script>");
        snprintf(out[i].insn, sizeof out[i].insn, "\"><svg onload=alert(4)>");
        snprintf(out[i].line, sizeof out[i].line, "/src/a'b\"c/x.c:7</script>");
    }
}

static void plain_code(void *ctx, const uint64_t *rips, size_t n, struct html_code *out)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++) {
        snprintf(out[i].sym, sizeof out[i].sym, "fn+0x%llx", (unsigned long long)rips[i]);
        snprintf(out[i].line, sizeof out[i].line, "/src/prog.c:%llu",
                 (unsigned long long)(rips[i] & 0xff));
    }
}

/* Two threads increment a shared counter under a futex lock; thread 1 creates thread 2
 * and each has a private stretch. recorded == retired except where told. */
static void small_round(struct dump_round *r)
{
    memset(r, 0, sizeof *r);
    r->present = true;
    struct ex_trace *t = &r->retired;
    ex_trace_init(t);
    ex_trace_sync(t, 1, EX_THREAD_CREATE, 0, 2);                          /* 0 */
    ex_trace_access(t, 1, EX_WRITE, 0x5000, 8, 0, 0x401000);              /* 1 private */
    ex_trace_access(t, 1, EX_WRITE, 0x5000, 8, 0, 0x401004);              /* 2 private */
    ex_trace_access(t, 2, EX_WRITE, 0x6000, 8, 0, 0x401010);              /* 3 private */
    ex_trace_access(t, 2, EX_READ, 0x7000, 4, 0, 0x401020);               /* 4 shared */
    ex_trace_sync(t, 2, EX_FUTEX_WAIT, 0x8000, 0);                        /* 5 */
    ex_trace_access(t, 1, EX_WRITE, 0x7000, 4, 0, 0x401030);              /* 6 shared */
    ex_trace_sync(t, 1, EX_FUTEX_WAKE, 0x8000, 1);                        /* 7 */
    ex_trace_access(t, 2, EX_RMW, 0x7000, 4, EX_F_ATOMIC, 0x401040);      /* 8 shared */
    ex_trace_copy(&r->recorded, t);
    r->vars = calloc(1, sizeof *r->vars);
    r->nvars = 1;
    r->vars[0].addr = 0x7000;
    snprintf(r->vars[0].sym, sizeof r->vars[0].sym, "counter");
}

static void free_round(struct dump_round *r)
{
    ex_trace_free(&r->retired);
    ex_trace_free(&r->recorded);
    free(r->vars);
}

static struct html_page page_of(const struct dump_round *r)
{
    static struct html_frame fr[2] = {{0x401040, "crash_here+0x4", "/src/prog.c:42"},
                                      {0x401100, "main+0x10", ""}};
    static struct html_dis dis[2] = {{0x40103c, false, "crash_here", "nop"},
                                     {0x401040, true, "crash_here+0x4", "ud2"}};
    struct html_page p = {.dump_path = "/d/prog-1.jinxdump", .image_path = "/bin/prog",
                          .cmdline = "prog 1 2", .outcome = "killed by SIGABRT in thread 2",
                          .crash_tid = 2, .frames = fr, .nframes = 2, .dis = dis, .ndis = 2,
                          .round = r, .src = {.code = plain_code}};
    return p;
}

/* ---- escapers ---------------------------------------------------------------------- */

static char *capture(void (*fn)(struct hout *, const char *, size_t), const char *s, size_t max)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct hout h;
    ho_init(&h, f);
    fn(&h, s, max);
    fclose(f);
    assert_int_equal(h.bytes, len);
    return buf;
}

static void test_escapers(void **state)
{
    (void)state;
    char *s = capture(ho_text, "<a href='x'>&\"\n", 100);
    assert_string_equal(s, "&lt;a href=&#39;x&#39;&gt;&amp;&quot;?");
    free(s);
    s = capture(ho_text, "abcdef", 3);
    assert_string_equal(s, "abc");
    free(s);
    s = capture(ho_json, "</script>\"\\\x01&\xe2\x80\xa8", 100);
    assert_string_equal(s, "\"\\u003c/script\\u003e\\\"\\\\\\u0001\\u0026\\u2028\"");
    free(s);
    s = capture(ho_json, NULL, 5);
    assert_string_equal(s, "\"\"");
    free(s);
    char b64[64];
    ho_base64((const uint8_t *)"foob", 4, b64);
    assert_string_equal(b64, "Zm9vYg==");
    ho_base64((const uint8_t *)"foo", 3, b64);
    assert_string_equal(b64, "Zm9v");
}

/* ---- the page ---------------------------------------------------------------------- */

static void test_layout(void **state)
{
    (void)state;
    struct dump_round r;
    small_round(&r);
    r.recorded.ev[6].tid = 2; /* the recording had thread 2 there */
    struct html_page p = page_of(&r);
    struct html_stats st;
    char *h = render(&p, &st);
    assert_int_equal(st.columns, 2);
    assert_int_equal(count(h, "class=\"th "), 2);
    assert_int_equal(st.first_diff, 6);
    assert_non_null(strstr(h, "<div class=\"r d\" data-i=\"6\" data-c=\""));
    assert_int_equal(count(h, "id=\"first-diff\""), 1);
    assert_non_null(strstr(h, "recorded: T2 <em>W</em> counter"));
    /* 1, 2 (thread 1) and 3 (thread 2) are private: two collapsed rows, 3 events */
    assert_int_equal(st.collapsed, 3);
    assert_int_equal(count(h, "3 private cue points collapsed (T1 &#215;2, T2 &#215;1)"), 1);
    assert_non_null(strstr(h, "<em>RMW lock</em> counter<i>prog.c:64</i>"));
    /* create -> thread 2's next drawn event; wake -> the waiter's next drawn event */
    assert_int_equal(st.arrows, 2);
    assert_int_equal(count(h, "class=\"ac\" x1"), 1);
    assert_int_equal(count(h, "class=\"aw\" x1"), 1);
    assert_non_null(strstr(h, "id=\"crash-row\""));
    assert_non_null(strstr(h, "<li class=\"frame\"><code>0x000000401040</code> crash_here+0x4"));
    assert_non_null(strstr(h, "=&gt; 0x000000401040  crash_here+0x4  ud2"));
    assert_null(strstr(h, "://"));             /* nothing to fetch */
    assert_null(strstr(h, " src="));
    free(h);
    /* the same traces: no difference, no recording column */
    r.recorded.ev[6].tid = 1;
    h = render(&p, &st);
    assert_int_equal(st.first_diff, -1);
    assert_null(strstr(h, "id=\"first-diff\""));
    assert_non_null(strstr(h, "nowhere: the retired interleaving is the recording"));
    free(h);
    free_round(&r);
}

static void test_hostile(void **state)
{
    (void)state;
    struct dump_round r;
    small_round(&r);
    snprintf(r.vars[0].sym, sizeof r.vars[0].sym, EVIL_SYM);
    snprintf(r.score.strategy, sizeof r.score.strategy, "<b onclick=alert(7)>");
    r.recorded.ev[4].tid = 1;
    struct html_page p = page_of(&r);
    p.dump_path = "/tmp/q\"u'o<t>e/x.jinxdump";
    p.image_path = "/tmp/q\"u'o<t>e/<img src=x onerror=alert(8)>";
    p.cmdline = "prog '\"</script><script>alert(2)</script>";
    p.detail = "<img src=x onerror=alert(3)>";
    p.src.code = evil_code;
    struct html_frame fr = {1, "<script>alert(9)</script>", "</pre><script>"};
    p.frames = &fr;
    p.nframes = 1;
    struct html_stats st;
    char *h = render(&p, &st);
    /* exactly the page's own two script elements, and no element from the dump */
    assert_int_equal(count(h, "<script"), 2);
    assert_int_equal(count(h, "</script>"), 2);
    assert_null(strstr(h, "<img"));
    assert_null(strstr(h, "<svg onload"));
    assert_null(strstr(h, "<b onclick"));
    assert_null(strstr(h, "q\"u"));
    assert_non_null(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(h, "q&quot;u&#39;o&lt;t&gt;e"));
    char *js = json_block(h);
    assert_null(strchr(js, '<'));
    assert_null(strchr(js, '>'));
    assert_non_null(strstr(js, "\\u003c/script\\u003e\\u003cscript\\u003ealert(6)"));
    free(js);
    free(h);
    free_round(&r);
}

static void test_no_round(void **state)
{
    (void)state;
    struct dump_round r = {0};
    struct html_page p = page_of(&r);
    struct html_stats st;
    char *h = render(&p, &st);
    assert_non_null(strstr(h, "id=\"no-round\""));
    assert_null(strstr(h, "id=\"tl\""));
    assert_non_null(strstr(h, "crash_here+0x4"));
    free(h);
    p.round = NULL;
    h = render(&p, &st);
    assert_non_null(strstr(h, "id=\"no-round\""));
    free(h);
}

/* 300000 shared accesses by 7 threads, every symbol and line the longest and most
 * escape-heavy a dump can hold, differing from the recording at 200000: the page keeps
 * its bounds and still draws the difference. */
static void evil_long_code(void *ctx, const uint64_t *rips, size_t n, struct html_code *out)
{
    (void)ctx;
    (void)rips;
    for (size_t i = 0; i < n; i++) {
        memset(out[i].sym, '<', sizeof out[i].sym - 1);
        memset(out[i].insn, '"', sizeof out[i].insn - 1);
        memset(out[i].line, '&', sizeof out[i].line - 1);
    }
}

static void test_bounds(void **state)
{
    (void)state;
    struct dump_round r;
    memset(&r, 0, sizeof r);
    r.present = true;
    ex_trace_init(&r.retired);
    const size_t n = 300000, diff = 200000;
    for (size_t i = 0; i < n; i++)
        assert_non_null(ex_trace_access(&r.retired, 1 + (uint32_t)(i % 7), EX_WRITE,
                                        0x10000 + 8 * (i % 64), 8, 0, 0x400000 + i));
    ex_trace_copy(&r.recorded, &r.retired);
    r.recorded.ev[diff].addr++;
    r.nvars = 64;
    r.vars = calloc(r.nvars, sizeof *r.vars);
    for (size_t i = 0; i < r.nvars; i++) {
        r.vars[i].addr = 0x10000 + 8 * i;
        memset(r.vars[i].sym, '<', sizeof r.vars[i].sym - 1);
    }
    struct html_page p = page_of(&r);
    p.src.code = evil_long_code;
    struct html_stats st;
    char *h = render(&p, &st);
    assert_true(st.bytes <= HTML_MAX_BYTES);
    assert_true(st.rows <= HTML_MAX_ROWS);
    assert_int_equal(st.first_diff, (long)diff);
    assert_int_equal(count(h, "id=\"first-diff\""), 1);
    assert_int_equal(count(h, "events collapsed to keep the page small; the first difference"), 1);
    assert_int_equal(count(h, "more events collapsed to keep the page small"), 1);
    assert_true(st.cut > 0 && st.cut < n);
    free(h);
    /* plain names: the row cap, not the byte cap, ends it */
    for (size_t i = 0; i < r.nvars; i++)
        snprintf(r.vars[i].sym, sizeof r.vars[i].sym, "v%zu", i);
    p.src.code = plain_code;
    h = render(&p, &st);
    assert_true(st.bytes <= HTML_MAX_BYTES);
    assert_true(st.rows >= HTML_MAX_ROWS - 4 && st.rows <= HTML_MAX_ROWS);
    assert_int_equal(count(h, "id=\"first-diff\""), 1);
    free(h);
    free_round(&r);
}

static void test_save_errors(void **state)
{
    (void)state;
    struct dump_round r;
    small_round(&r);
    struct html_page p = page_of(&r);
    char err[512];
    assert_int_equal(inspect_html_save("/nonexistent-dir/x.html", &p, NULL, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.html"));
    char dir[] = "/tmp/jinx-html-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/out.html", dir);
    struct html_stats st;
    assert_int_equal(inspect_html_save(path, &p, &st, err, sizeof err), 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal((size_t)sb.st_size, st.bytes);
    unlink(path);
    rmdir(dir);
    free_round(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapers),   cmocka_unit_test(test_layout),
        cmocka_unit_test(test_hostile),    cmocka_unit_test(test_no_round),
        cmocka_unit_test(test_bounds),     cmocka_unit_test(test_save_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
