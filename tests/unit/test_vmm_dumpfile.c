/* Unit tests for vmm/dump/dumpfile.c (the .jinxdump record format) and vmm/dump/corefile.c (ELF
 * core files): round trips, forward compatibility (unknown records skipped unless
 * required), and refusal of truncated, bit-flipped and inconsistent files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dump/corefile.h"
#include "dump/dumpfile.h"

static void sample(struct dumpfile *d)
{
    memset(d, 0, sizeof *d);
    d->outcome = (struct dump_outcome){.kind = DOUT_SIGNAL, .signal = 6, .vector = -1,
                                       .exit_status = 134, .thread = 2, .rip = 0x401234,
                                       .errcode = 0, .cr2 = 0};
    snprintf(d->outcome.detail, sizeof d->outcome.detail, "raised by the program");
    for (int i = 0; i < SHA256_LEN; i++)
        d->image.sha256[i] = (uint8_t)i, d->core.sha256[i] = (uint8_t)(255 - i);
    d->image.bias = 0;
    d->image.size = 12345;
    snprintf(d->image.path, sizeof d->image.path, "/images/bin/circle");
    d->has_run = true;
    d->run = (struct dump_run){.created = 1790000000, .seed = 7, .mem = 512 << 20,
                               .max_vcpus = 16, .flags = DRUN_F_SERIAL};
    snprintf(d->run.cmdline, sizeof d->run.cmdline, "circle --fast");
    snprintf(d->run.jinx_version, sizeof d->run.jinx_version, "test");
    d->core.size = 1 << 20;
    snprintf(d->core.name, sizeof d->core.name, "circle-20261122-101500.core");
    d->nthreads = 3;
    d->threads = calloc(3, sizeof *d->threads);
    for (int t = 0; t < 3; t++) {
        struct dump_thread *x = &d->threads[t];
        x->tid = (uint32_t)(t == 0 ? 2 : t == 1 ? 1 : 3);
        x->state = t == 0 ? DT_IN_SYSCALL : DT_BLOCKED;
        x->flags = t == 0 ? DT_F_CRASHED : 0;
        x->vcpu = (uint32_t)t;
        x->wait_addr = t ? 0x40a280 + (uint64_t)t * 4 : 0;
        for (int r = 0; r < DUMP_NREGS; r++)
            x->regs[r] = 0x1000ULL * (uint64_t)(t + 1) + (uint64_t)r;
        x->has_fpregs = t != 2;
        for (int b = 0; b < DUMP_FPREGS_LEN; b++)
            x->fpregs[b] = x->has_fpregs ? (uint8_t)(b ^ t) : 0;
    }
    uint8_t sha[SHA256_LEN];
    memset(sha, 0xab, sizeof sha);
    assert_int_equal(dumpfile_add_file(d, "/data/input.json", 1234, sha), 0);
    sha[0] = 1;
    assert_int_equal(dumpfile_add_file(d, "/usr/lib/libc.so.6", 99, sha), 0);
    assert_int_equal(dumpfile_add_ro_dir(d, "/data"), 0);
    assert_int_equal(dumpfile_add_written(d, "/tmp/out.txt", 42, sha), 0);
}

static void encode(const struct dumpfile *d, struct dbuf *b)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(dumpfile_encode(d, b), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct dumpfile d, e;
    sample(&d);
    uint8_t blob[5] = {1, 2, 3, 4, 5};
    assert_int_equal(dumpfile_add_record(&d, DREC_SCHEDULE, 0, blob, sizeof blob), 0);
    struct dbuf b;
    encode(&d, &b);
    char err[256];
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), 0);
    assert_int_equal(e.major, DUMP_VERSION_MAJOR);
    assert_memory_equal(&e.outcome, &d.outcome, sizeof d.outcome);
    assert_memory_equal(&e.image, &d.image, sizeof d.image);
    assert_memory_equal(&e.core, &d.core, sizeof d.core);
    assert_true(e.has_run);
    assert_memory_equal(&e.run, &d.run, sizeof d.run);
    assert_int_equal(e.nthreads, 3);
    assert_memory_equal(e.threads, d.threads, 3 * sizeof *d.threads);
    assert_int_equal(e.nextra, 1);
    assert_int_equal(e.extra[0].type, DREC_SCHEDULE);
    assert_int_equal(e.extra[0].len, 5);
    assert_memory_equal(e.extra[0].data, blob, 5);
    assert_true(e.has_files);
    assert_int_equal(e.nfiles, 2);
    assert_string_equal(e.files[0].path, "/data/input.json");
    assert_int_equal(e.files[0].size, 1234);
    assert_memory_equal(e.files[1].sha256, d.files[1].sha256, SHA256_LEN);
    assert_int_equal(e.nro_dirs, 1);
    assert_int_equal(e.nwritten, 1); /* format 1.3: what the program wrote */
    assert_string_equal(e.written[0].path, "/tmp/out.txt");
    assert_int_equal(e.written[0].size, 42);
    assert_string_equal(e.ro_dirs[0], "/data");
    /* Encoding what was parsed gives the same bytes. */
    struct dbuf b2;
    encode(&e, &b2);
    assert_int_equal(b2.len, b.len);
    assert_memory_equal(b2.p, b.p, b.len);
    dbuf_free(&b);
    dbuf_free(&b2);
    dumpfile_free(&d);
    dumpfile_free(&e);
}

/* The FILES record: paths must be absolute, and a dump without one (format 1.0) still
 * reads, with no files. */
static void test_files_record(void **state)
{
    (void)state;
    struct dumpfile d, e;
    struct dbuf b;
    char err[256];
    sample(&d);
    d.files[1].path[0] = 'x'; /* a relative path, as a hostile writer would put */
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "FILES record: file 1"));
    dbuf_free(&b);
    d.files[1].path[0] = '/';
    free(d.ro_dirs[0]);
    d.ro_dirs[0] = strdup("");
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "directory 0"));
    dbuf_free(&b);
    assert_int_equal(dumpfile_add_file(&d, "relative", 1, d.files[0].sha256), -1);
    assert_int_equal(dumpfile_add_ro_dir(&d, "rel/dir"), -1);
    dumpfile_free(&d);
    assert_int_equal(d.nfiles, 0);
    sample(&d);
    for (size_t i = 0; i < d.nfiles; i++)
        free(d.files[i].path);
    free(d.files);
    free(d.ro_dirs[0]);
    free(d.ro_dirs);
    d.files = NULL;
    d.ro_dirs = NULL;
    d.nfiles = d.nro_dirs = 0;
    d.has_files = false;
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), 0);
    assert_false(e.has_files);
    assert_int_equal(e.nfiles, 0);
    dbuf_free(&b);
    dumpfile_free(&d);
    dumpfile_free(&e);
}

static void test_every_truncation_refused(void **state)
{
    (void)state;
    struct dumpfile d, e;
    sample(&d);
    struct dbuf b;
    encode(&d, &b);
    char err[256];
    for (size_t n = 0; n < b.len; n++) {
        err[0] = '\0';
        if (dumpfile_parse(b.p, n, 0, &e, err, sizeof err) == 0)
            fail_msg("a dump cut to %zu of %zu bytes was accepted", n, b.len);
        assert_true(err[0] != '\0');
    }
    dbuf_free(&b);
    dumpfile_free(&d);
}

static void test_every_bit_flip_refused(void **state)
{
    (void)state;
    struct dumpfile d, e;
    sample(&d);
    struct dbuf b;
    encode(&d, &b);
    char err[256];
    for (size_t i = 0; i < b.len; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            b.p[i] ^= (uint8_t)(1 << bit);
            if (dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err) == 0)
                fail_msg("bit %d of byte %zu flipped, and the dump was accepted", bit, i);
            /* Without the digest the parser must still never misbehave. */
            if (dumpfile_parse(b.p, b.len, DUMPFILE_NO_CHECKSUM, &e, err, sizeof err) == 0)
                dumpfile_free(&e);
            b.p[i] ^= (uint8_t)(1 << bit);
        }
    dbuf_free(&b);
    dumpfile_free(&d);
}

static void test_appended_refused(void **state)
{
    (void)state;
    struct dumpfile d, e;
    sample(&d);
    struct dbuf b;
    encode(&d, &b);
    uint8_t *p = malloc(b.len + 16);
    memcpy(p, b.p, b.len);
    memset(p + b.len, 0, 16);
    char err[256];
    assert_int_equal(dumpfile_parse(p, b.len + 16, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "after the END"));
    free(p);
    dbuf_free(&b);
    dumpfile_free(&d);
}

static void test_unknown_records(void **state)
{
    (void)state;
    struct dumpfile d, e;
    char err[256];
    struct dbuf b;
    /* An optional record of a future type is kept as bytes, the rest still parses. */
    sample(&d);
    assert_int_equal(dumpfile_add_record(&d, 0x1234, 0, "xyz", 3), 0);
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), 0);
    assert_int_equal(e.nextra, 1);
    assert_int_equal(e.extra[0].type, 0x1234);
    dumpfile_free(&e);
    dbuf_free(&b);
    dumpfile_free(&d);
    /* A required one is refused, with a message that says why. */
    sample(&d);
    assert_int_equal(dumpfile_add_record(&d, 0x1234, DREC_F_REQUIRED, "xyz", 3), 0);
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "newer"));
    dbuf_free(&b);
    dumpfile_free(&d);
    /* END cannot be smuggled in as an extra record. */
    sample(&d);
    assert_int_equal(dumpfile_add_record(&d, DREC_END, 0, "", 0), -1);
    dumpfile_free(&d);
}

static void test_semantic_checks(void **state)
{
    (void)state;
    struct dumpfile d, e;
    char err[256];
    struct dbuf b;
    sample(&d);
    d.threads[1].tid = d.threads[0].tid; /* two records for one tid */
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "two THREAD"));
    dbuf_free(&b);
    dumpfile_free(&d);

    sample(&d);
    d.outcome.thread = 9; /* the crashed thread is missing */
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    dbuf_free(&b);
    dumpfile_free(&d);

    sample(&d);
    snprintf(d.core.name, sizeof d.core.name, "../etc/passwd"); /* not a plain name */
    encode(&d, &b);
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "plain file name"));
    dbuf_free(&b);
    dumpfile_free(&d);

    sample(&d);
    encode(&d, &b);
    b.p[8] = 2; /* major version 2 */
    assert_int_equal(dumpfile_parse(b.p, b.len, 0, &e, err, sizeof err), -1);
    assert_non_null(strstr(err, "version"));
    dbuf_free(&b);
    dumpfile_free(&d);
}

/* ---- core files ---- */

static uint8_t fake_mem[3 * 4096];

static bool fake_read(void *ctx, uint64_t va, void *dst, size_t len)
{
    (void)ctx;
    if (va < 0x400000 || va + len > 0x400000 + sizeof fake_mem)
        return false;
    memcpy(dst, fake_mem + (va - 0x400000), len);
    return true;
}

static uint8_t *make_core_patched(size_t *len, uint8_t sha[SHA256_LEN],
                                  const struct core_patch *patches, size_t npatches)
{
    for (size_t i = 0; i < sizeof fake_mem; i++)
        fake_mem[i] = i < 4096 ? (uint8_t)(i * 7) : i < 8192 ? 0 : (uint8_t)i;
    static uint8_t fp[DUMP_FPREGS_LEN];
    struct core_thread th[2] = {{.tid = 2, .cursig = 6, .fpregs = fp}, {.tid = 1}};
    for (int r = 0; r < DUMP_NREGS; r++)
        th[0].regs[r] = (uint64_t)r, th[1].regs[r] = 100 + (uint64_t)r;
    struct core_seg segs[2] = {{0x400000, 0x2000, CORE_PF_R | CORE_PF_X},
                               {0x402000, 0x1000, CORE_PF_R | CORE_PF_W}};
    uint64_t auxv[4] = {9 /* AT_ENTRY */, 0x401000, 0, 0};
    struct core_desc cd = {.threads = th, .nthreads = 2, .segs = segs, .nsegs = 2,
                           .auxv = auxv, .nauxv = 4, .fname = "prog", .psargs = "prog a b",
                           .pid = 1, .signo = 6, .si_code = -6, .read = fake_read,
                           .patches = patches, .npatches = npatches};
    int fd = memfd_create("core", 0);
    assert_true(fd >= 0);
    uint64_t size;
    char err[256];
    assert_int_equal(core_write(fd, &cd, sha, &size, err, sizeof err), 0);
    *len = (size_t)size;
    uint8_t *buf = malloc(*len);
    assert_int_equal(pread(fd, buf, *len, 0), (ssize_t)*len);
    close(fd);
    uint8_t check[SHA256_LEN];
    sha256(buf, *len, check);
    assert_memory_equal(check, sha, SHA256_LEN); /* the streamed digest is the file's */
    return buf;
}

static uint8_t *make_core(size_t *len, uint8_t sha[SHA256_LEN])
{
    return make_core_patched(len, sha, NULL, 0);
}

/* A patch shows in the core, not in guest memory; one straddling into a zero page turns
 * that page's bytes from a hole into data; one outside every segment or of a bad length
 * changes nothing. */
static void test_core_patches(void **state)
{
    (void)state;
    struct core_patch p[3] = {{.va = 0x400ffc, .bytes = {1, 2, 3, 4, 5, 6, 7, 8}, .len = 8},
                              {.va = 0x500000, .bytes = {9}, .len = 1},
                              {.va = 0x400010, .bytes = {0xee}, .len = 9}};
    size_t len;
    uint8_t sha[SHA256_LEN];
    uint8_t *buf = make_core_patched(&len, sha, p, 3);
    struct corefile c;
    char err[256];
    assert_int_equal(core_parse(buf, len, &c, err, sizeof err), 0);
    uint8_t out[3 * 4096], want[3 * 4096];
    memcpy(want, fake_mem, sizeof want);
    memcpy(want + 0xffc, p[0].bytes, 8);
    assert_true(core_read(&c, 0x400000, out, sizeof out));
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(fake_mem[0x1000], 0); /* guest memory itself is untouched */
    core_free(&c);
    free(buf);
}

static void test_core_round_trip(void **state)
{
    (void)state;
    size_t len;
    uint8_t sha[SHA256_LEN];
    uint8_t *buf = make_core(&len, sha);
    struct corefile c;
    char err[256];
    assert_int_equal(core_parse(buf, len, &c, err, sizeof err), 0);
    assert_int_equal(c.nthreads, 2);
    assert_int_equal(c.threads[0].tid, 2);
    assert_int_equal(c.threads[0].cursig, 6);
    assert_true(c.threads[0].has_fpregs);
    assert_false(c.threads[1].has_fpregs);
    assert_int_equal(c.threads[1].regs[DR_RIP], 100 + DR_RIP);
    assert_string_equal(c.fname, "prog");
    assert_string_equal(c.psargs, "prog a b");
    assert_int_equal(c.signo, 6);
    assert_int_equal(c.nauxv, 4);
    assert_int_equal(c.auxv[1], 0x401000);
    assert_int_equal(c.nloads, 2);
    uint8_t out[3 * 4096];
    assert_true(core_read(&c, 0x400000, out, sizeof out)); /* across both segments */
    assert_memory_equal(out, fake_mem, sizeof fake_mem);
    assert_false(core_read(&c, 0x3fffff, out, 2));
    assert_false(core_read(&c, 0x402fff, out, 2));
    core_free(&c);
    free(buf);
}

static void test_core_truncations_refused_or_safe(void **state)
{
    (void)state;
    size_t len;
    uint8_t sha[SHA256_LEN];
    uint8_t *buf = make_core(&len, sha);
    char err[256];
    /* Cutting into the headers or notes is refused; any cut that parses must read only
     * inside the buffer (ASan checks that in `make asan`). */
    for (size_t n = 0; n < len; n += (n < 4096 ? 1 : 512)) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        struct corefile c;
        if (core_parse(copy, n, &c, err, sizeof err) == 0) {
            uint8_t out[64];
            core_read(&c, 0x400000, out, sizeof out);
            core_read(&c, 0x402fc0, out, sizeof out);
            core_free(&c);
            assert_true(n > 4096); /* headers and notes all fit in the first page */
        }
        free(copy);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_files_record),
        cmocka_unit_test(test_every_truncation_refused),
        cmocka_unit_test(test_every_bit_flip_refused),
        cmocka_unit_test(test_appended_refused),
        cmocka_unit_test(test_unknown_records),
        cmocka_unit_test(test_semantic_checks),
        cmocka_unit_test(test_core_round_trip),
        cmocka_unit_test(test_core_patches),
        cmocka_unit_test(test_core_truncations_refused_or_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
