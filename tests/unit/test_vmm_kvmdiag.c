/* Unit tests for kvm/kvmdiag.c (why /dev/kvm cannot be used, and what to do) and the
 * `jinx-vmm check-kvm --root` command over fake host trees: each kind of host gets its
 * own diagnosis and advice (mknod, group kvm, modprobe, kvm_pvm.force, nested, firmware);
 * the files are parsed by word and line (no "vmx" inside another flag, no "kvm" at
 * another minor), odd contents only make facts false, and a node that is no character
 * device 10:232 is never opened. No KVM needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/check_kvm.h"
#include "kvm/kvmdiag.h"
#include "lib/json.h"

static enum kvm_diag diag(struct kvm_host_facts f, char *msg, size_t len)
{
    return kvm_diagnose_facts(&f, msg, len);
}

#define HAS(msg, s) assert_non_null(strstr((msg), (s)))

static void test_decisions(void **state)
{
    (void)state;
    char m[512];
    assert_int_equal(diag((struct kvm_host_facts){.node = true, .node_kvm = true,
                                                  .node_rw = true}, m, sizeof m),
                     KVM_DIAG_OK);
    assert_int_equal(diag((struct kvm_host_facts){.node = true, .node_kvm = true,
                                                  .node_errno = EACCES, .misc_kvm = true},
                          m, sizeof m),
                     KVM_DIAG_PERMISSION);
    HAS(m, "group kvm");
    assert_int_equal(diag((struct kvm_host_facts){.node = true, .misc_kvm = true}, m, sizeof m),
                     KVM_DIAG_NOT_KVM);
    HAS(m, "mknod /dev/kvm c 10 232");
    assert_int_equal(diag((struct kvm_host_facts){.misc_kvm = true, .cpu_vmx = true,
                                                  .mod_intel = true}, m, sizeof m),
                     KVM_DIAG_NO_NODE);
    HAS(m, "mknod /dev/kvm c 10 232");
    assert_int_equal(diag((struct kvm_host_facts){.node = true, .node_kvm = true,
                                                  .node_errno = EBUSY, .misc_kvm = true},
                          m, sizeof m),
                     KVM_DIAG_OPEN_FAILED);
    HAS(m, strerror(EBUSY));
    /* This session's host: a PVM guest whose kvm_pvm would not bind. */
    assert_int_equal(diag((struct kvm_host_facts){.mod_pvm = true, .mod_kvm = true,
                                                  .cpu_hypervisor = true}, m, sizeof m),
                     KVM_DIAG_PVM_UNBOUND);
    HAS(m, "kvm_pvm.force=1");
    assert_int_equal(diag((struct kvm_host_facts){.mod_pvm = true, .pvm_force = true}, m,
                          sizeof m),
                     KVM_DIAG_PVM_UNBOUND);
    HAS(m, "dmesg");
    assert_null(strstr(m, "kvm_pvm.force=1"));
    /* A node without a kernel device opens with ENODEV: the kernel side is the reason. */
    assert_int_equal(diag((struct kvm_host_facts){.node = true, .node_kvm = true,
                                                  .node_errno = ENODEV, .cpu_svm = true},
                          m, sizeof m),
                     KVM_DIAG_NOT_LOADED);
    HAS(m, "modprobe kvm_amd");
    assert_int_equal(diag((struct kvm_host_facts){.cpu_vmx = true}, m, sizeof m),
                     KVM_DIAG_NOT_LOADED);
    HAS(m, "modprobe kvm_intel");
    assert_int_equal(diag((struct kvm_host_facts){.cpu_vmx = true, .mod_intel = true,
                                                  .mod_kvm = true}, m, sizeof m),
                     KVM_DIAG_MODULE_NO_DEV);
    HAS(m, "firmware");
    assert_int_equal(diag((struct kvm_host_facts){.cpu_hypervisor = true}, m, sizeof m),
                     KVM_DIAG_NESTED_OFF);
    HAS(m, "nested");
    assert_int_equal(diag((struct kvm_host_facts){0}, m, sizeof m), KVM_DIAG_NO_VIRT);
    HAS(m, "firmware");
    /* No message wanted, or a tiny buffer: the same answer, nothing written past it. */
    assert_int_equal(diag((struct kvm_host_facts){.cpu_hypervisor = true}, NULL, 0),
                     KVM_DIAG_NESTED_OFF);
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    assert_int_equal(diag((struct kvm_host_facts){0}, tiny, 4), KVM_DIAG_NO_VIRT);
    assert_int_equal(tiny[3], 0);
    assert_int_equal(tiny[4], 'x');
}

static void test_names(void **state)
{
    (void)state;
    for (int i = 0; i < KVM_DIAG_NKINDS; i++) {
        assert_string_not_equal(kvm_diag_name((enum kvm_diag)i), "unknown");
        for (int j = 0; j < i; j++)
            assert_string_not_equal(kvm_diag_name((enum kvm_diag)i),
                                    kvm_diag_name((enum kvm_diag)j));
    }
    assert_string_equal(kvm_diag_name(KVM_DIAG_OK), "ok");
    assert_string_equal(kvm_diag_name(KVM_DIAG_PVM_UNBOUND), "pvm-unbound");
    assert_string_equal(kvm_diag_name(KVM_DIAG_NKINDS), "unknown");
    assert_string_equal(kvm_diag_name((enum kvm_diag)-1), "unknown");
}

/* A fake host tree below a fresh temporary directory. */
struct tree {
    char root[64];
};

static void put(const struct tree *t, const char *rel, const char *text, size_t len)
{
    char p[512], dir[600];
    snprintf(p, sizeof p, "%s/%s", t->root, rel);
    snprintf(dir, sizeof dir, "mkdir -p \"$(dirname '%s')\"", p);
    assert_int_equal(system(dir), 0);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
}
#define PUT(t, rel, s) put((t), (rel), (s), strlen(s))

static void mkd(const struct tree *t, const char *rel)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", t->root, rel);
    assert_int_equal(system(cmd), 0);
}

static struct tree tree_new(void)
{
    struct tree t;
    snprintf(t.root, sizeof t.root, "/tmp/jinx-kvmdiag-XXXXXX");
    assert_non_null(mkdtemp(t.root));
    return t;
}

static void tree_free(const struct tree *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
}

static const char CPU_PVM_GUEST[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "flags\t\t: fpu vme de pse tsc msr pae hypervisor lahf_lm vmx_like svm_lock\n"
    "bugs\t\t: spectre_v1\n\nprocessor\t: 1\nflags\t\t: vmx svm\n";

static void test_read_pvm_guest(void **state)
{
    (void)state;
    struct tree t = tree_new();
    PUT(&t, "proc/cpuinfo", CPU_PVM_GUEST);
    /* kvm at another minor, a longer name, a minor that only starts with 232: no kvm. */
    PUT(&t, "proc/misc", "234 btrfs-control\n 233 kvm\n232 kvmx\n2320 kvm\nnot a line\n");
    PUT(&t, "sys/module/kvm_pvm/parameters/force", "N\n");
    mkd(&t, "sys/module/kvm");
    struct kvm_host_facts f;
    kvm_host_facts_read(t.root, &f);
    assert_false(f.node);
    assert_false(f.misc_kvm);
    assert_true(f.mod_pvm);
    assert_true(f.mod_kvm);
    assert_false(f.mod_intel || f.mod_amd);
    assert_false(f.pvm_force);
    assert_true(f.cpu_hypervisor);
    /* Only the first CPU's flags count, by whole word: vmx_like and svm_lock are not. */
    assert_false(f.cpu_vmx);
    assert_false(f.cpu_svm);
    char m[512];
    assert_int_equal(kvm_diagnose(t.root, m, sizeof m), KVM_DIAG_PVM_UNBOUND);
    PUT(&t, "sys/module/kvm_pvm/parameters/force", "Y\n");
    kvm_host_facts_read(t.root, &f);
    assert_true(f.pvm_force);
    tree_free(&t);
}

static void test_read_container(void **state)
{
    (void)state;
    struct tree t = tree_new();
    PUT(&t, "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vmx ept\n");
    PUT(&t, "proc/misc", "229 fuse\n232 kvm\n");
    mkd(&t, "sys/module/kvm_intel");
    struct kvm_host_facts f;
    kvm_host_facts_read(t.root, &f);
    assert_true(f.misc_kvm);
    assert_true(f.cpu_vmx);
    assert_true(f.mod_intel);
    char m[512];
    assert_int_equal(kvm_diagnose(t.root, m, sizeof m), KVM_DIAG_NO_NODE);
    /* A regular file where the node should be: named, never opened. */
    PUT(&t, "dev/kvm", "not a device");
    kvm_host_facts_read(t.root, &f);
    assert_true(f.node);
    assert_false(f.node_kvm);
    assert_false(f.node_rw);
    assert_int_equal(f.node_errno, 0);
    assert_int_equal(kvm_diagnose(t.root, m, sizeof m), KVM_DIAG_NOT_KVM);
    /* A character device with another number (/dev/null, 1:3) through a link: not KVM. */
    char link[256];
    snprintf(link, sizeof link, "%s/dev/kvm", t.root);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(symlink("/dev/null", link), 0);
    kvm_host_facts_read(t.root, &f);
    assert_true(f.node);
    assert_false(f.node_kvm);
    assert_int_equal(kvm_diagnose(t.root, m, sizeof m), KVM_DIAG_NOT_KVM);
    tree_free(&t);
}

static void test_read_odd_files(void **state)
{
    (void)state;
    struct tree t = tree_new();
    struct kvm_host_facts f;
    kvm_host_facts_read(t.root, &f); /* nothing at all */
    assert_false(f.node || f.misc_kvm || f.mod_pvm || f.cpu_vmx || f.cpu_hypervisor);
    char m[512];
    assert_int_equal(kvm_diagnose(t.root, m, sizeof m), KVM_DIAG_NO_VIRT);
    /* Binary junk, no newline, a flags line longer than what is read, NULs. */
    size_t n = 200000;
    char *junk = malloc(n);
    assert_non_null(junk);
    for (size_t i = 0; i < n; i++)
        junk[i] = (char)(i * 131 + 7);
    put(&t, "proc/misc", junk, n);
    memcpy(junk, "flags\t: ", 8);
    memset(junk + 8, 'a', n - 8);
    memcpy(junk + n - 4, " vmx", 4);
    put(&t, "proc/cpuinfo", junk, n);
    put(&t, "sys/module/kvm_pvm/parameters/force", "\0\0\0", 3);
    kvm_host_facts_read(t.root, &f);
    assert_false(f.misc_kvm);
    assert_false(f.cpu_vmx); /* past the 64 KiB read: cut, not found */
    assert_false(f.pvm_force);
    assert_true(f.mod_pvm);
    free(junk);
    /* A flags line at the very end without a newline still counts. */
    PUT(&t, "proc/cpuinfo", "processor: 0\nflags: svm");
    kvm_host_facts_read(t.root, &f);
    assert_true(f.cpu_svm);
    /* A directory where a file should be. */
    mkd(&t, "proc/misc.d");
    char p[256], q[256];
    snprintf(p, sizeof p, "%s/proc/misc", t.root);
    snprintf(q, sizeof q, "%s/proc/misc.d", t.root);
    assert_int_equal(unlink(p), 0);
    assert_int_equal(rename(q, p), 0);
    kvm_host_facts_read(t.root, &f);
    assert_false(f.misc_kvm);
    tree_free(&t);
}

/* Runs `check-kvm ARGS` with stdout in out; returns the exit status. */
static int run_cmd(char *out, size_t cap, int argc, char **argv)
{
    fflush(stdout);
    char path[] = "/tmp/jinx-kvmdiag-out-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, 1), 1);
    int rc = cmd_check_kvm(argc, argv);
    fflush(stdout);
    assert_int_equal(dup2(saved, 1), 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, out, cap - 1);
    out[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    return rc;
}

static void test_command(void **state)
{
    (void)state;
    struct tree t = tree_new();
    PUT(&t, "proc/cpuinfo", CPU_PVM_GUEST);
    mkd(&t, "sys/module/kvm_pvm");
    char out[2048];
    /* Options before or after each other, JSON that parses. */
    char *a1[] = {"check-kvm", "--json", "--root", t.root, NULL};
    assert_int_equal(run_cmd(out, sizeof out, 4, a1), CHECK_KVM_EXIT_UNUSABLE);
    static struct json_obj o;
    char err[256];
    assert_int_equal(json_parse_object(out, strlen(out), 0, &o, err, sizeof err), 0);
    bool usable = true;
    const char *name = NULL, *msg = NULL;
    assert_int_equal(json_get_bool(&o, "usable", &usable), 1);
    assert_false(usable);
    assert_int_equal(json_get_str(&o, "diagnosis", &name), 1);
    assert_string_equal(name, "pvm-unbound");
    assert_int_equal(json_get_str(&o, "message", &msg), 1);
    HAS(msg, "kvm_pvm.force=1");
    char *a2[] = {"check-kvm", "--root", t.root, NULL};
    assert_int_equal(run_cmd(out, sizeof out, 3, a2), CHECK_KVM_EXIT_UNUSABLE);
    HAS(out, "/dev/kvm: kvm_pvm");
    assert_null(strchr(out, '{'));
    /* Refusals: an unknown option, an argument, --root without its value. */
    char *a3[] = {"check-kvm", "--root", t.root, "--jsn", NULL};
    assert_int_equal(run_cmd(out, sizeof out, 4, a3), CHECK_KVM_EXIT_USAGE);
    char *a4[] = {"check-kvm", "now", NULL};
    assert_int_equal(run_cmd(out, sizeof out, 2, a4), CHECK_KVM_EXIT_USAGE);
    char *a5[] = {"check-kvm", "--root", NULL};
    assert_int_equal(run_cmd(out, sizeof out, 2, a5), CHECK_KVM_EXIT_USAGE);
    tree_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decisions),     cmocka_unit_test(test_names),
        cmocka_unit_test(test_read_pvm_guest), cmocka_unit_test(test_read_container),
        cmocka_unit_test(test_read_odd_files), cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
