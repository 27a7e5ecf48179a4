#include "kvm/kvmdiag.h"
#include "kvm/hostcpu.h"
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MISC_MAX (16u << 10)

static void path_of(char *out, size_t len, const char *root, const char *rel)
{
    if (!root || !*root || !strcmp(root, "/"))
        snprintf(out, len, "/%s", rel);
    else
        snprintf(out, len, "%s/%s", root, rel);
}

/* Up to cap-1 bytes of the file, NUL-terminated; 0 bytes when it cannot be read. */
static size_t slurp(const char *root, const char *rel, char *buf, size_t cap)
{
    char p[4096];
    path_of(p, sizeof p, root, rel);
    buf[0] = 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return n;
}

static bool exists(const char *root, const char *rel)
{
    char p[4096];
    path_of(p, sizeof p, root, rel);
    return access(p, F_OK) == 0;
}

void kvm_parse_cpu_flags(const char *buf, size_t n, struct kvm_host_facts *f)
{
    f->cpu_vmx = hostcpu_flag_in(buf, n, "vmx");
    f->cpu_svm = hostcpu_flag_in(buf, n, "svm");
    f->cpu_hypervisor = hostcpu_flag_in(buf, n, "hypervisor");
}

static void read_cpu_flags(const char *root, struct kvm_host_facts *f)
{
    char *buf = malloc(HOSTCPU_READ_MAX);
    if (!buf)
        return;
    kvm_parse_cpu_flags(buf, slurp(root, "proc/cpuinfo", buf, HOSTCPU_READ_MAX), f);
    free(buf);
}

bool kvm_parse_misc(const char *buf, size_t n)
{
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(buf + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (buf + at)) : n - at;
        char line[128];
        unsigned minor;
        char name[32];
        if (len < sizeof line) {
            memcpy(line, buf + at, len);
            line[len] = 0;
            if (sscanf(line, "%u %31s", &minor, name) == 2 && minor == KVM_MISC_MINOR &&
                !strcmp(name, "kvm"))
                return true;
        }
        at += len + 1;
    }
    return false;
}

static bool misc_lists_kvm(const char *root)
{
    char buf[MISC_MAX];
    return kvm_parse_misc(buf, slurp(root, "proc/misc", buf, sizeof buf));
}

void kvm_host_facts_read(const char *root, struct kvm_host_facts *f)
{
    memset(f, 0, sizeof *f);
    char p[4096];
    path_of(p, sizeof p, root, "dev/kvm");
    struct stat st;
    if (stat(p, &st) == 0) {
        f->node = true;
        f->node_kvm = S_ISCHR(st.st_mode) && major(st.st_rdev) == KVM_MISC_MAJOR &&
                      minor(st.st_rdev) == KVM_MISC_MINOR;
        if (f->node_kvm) { /* only KVM's node is opened: nothing else is touched */
            int fd = open(p, O_RDWR | O_CLOEXEC);
            if (fd >= 0) {
                f->node_rw = true;
                close(fd);
            } else {
                f->node_errno = errno;
            }
        }
    }
    f->misc_kvm = misc_lists_kvm(root);
    f->mod_kvm = exists(root, "sys/module/kvm");
    f->mod_intel = exists(root, "sys/module/kvm_intel");
    f->mod_amd = exists(root, "sys/module/kvm_amd");
    f->mod_pvm = exists(root, "sys/module/kvm_pvm");
    char force[8];
    if (slurp(root, "sys/module/kvm_pvm/parameters/force", force, sizeof force))
        f->pvm_force = force[0] == 'Y' || force[0] == 'y' || force[0] == '1';
    read_cpu_flags(root, f);
}

__attribute__((format(printf, 4, 5)))
static enum kvm_diag say(char *msg, size_t len, enum kvm_diag d, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return d;
}

/* Why the kernel serves no kvm device (it registered none in /proc/misc). */
static enum kvm_diag no_device(const struct kvm_host_facts *f, char *msg, size_t len)
{
    if (f->mod_pvm)
        return say(msg, len, KVM_DIAG_PVM_UNBOUND,
                   "/dev/kvm: kvm_pvm is in this kernel but registered no KVM device%s: run "
                   "Jinx on a machine that serves /dev/kvm (a PVM host kernel, or a VM with "
                   "nested VMX/SVM)",
                   f->pvm_force ? " although its force parameter is set (dmesg says why)"
                                : " (it does not bind when the kernel is itself a PVM guest, "
                                  "dmesg: \"not binding\", unless booted with kvm_pvm.force=1)");
    if (f->cpu_vmx || f->cpu_svm) {
        const char *mod = f->cpu_vmx ? "kvm_intel" : "kvm_amd";
        if ((f->cpu_vmx && f->mod_intel) || (f->cpu_svm && f->mod_amd))
            return say(msg, len, KVM_DIAG_MODULE_NO_DEV,
                       "/dev/kvm: %s is loaded but the kernel registered no KVM device: dmesg "
                       "says why (virtualization disabled in the firmware?)", mod);
        return say(msg, len, KVM_DIAG_NOT_LOADED,
                   "/dev/kvm: the CPU has hardware virtualization but no KVM module serves "
                   "it: load it (modprobe %s, as root)", mod);
    }
    if (f->cpu_hypervisor)
        return say(msg, len, KVM_DIAG_NESTED_OFF,
                   "/dev/kvm: this machine is a virtual machine whose CPU shows neither VMX "
                   "nor SVM: enable nested virtualization on its host, or boot a kernel "
                   "with kvm_pvm (PVM needs no VMX/SVM)");
    return say(msg, len, KVM_DIAG_NO_VIRT,
               "/dev/kvm: the CPU shows neither VMX nor SVM: enable virtualization (VT-x / "
               "AMD-V) in the firmware");
}

enum kvm_diag kvm_diagnose_facts(const struct kvm_host_facts *f, char *msg, size_t len)
{
    if (f->node_kvm && f->node_rw)
        return say(msg, len, KVM_DIAG_OK, "/dev/kvm: usable");
    if (f->node && !f->node_kvm)
        return say(msg, len, KVM_DIAG_NOT_KVM,
                   "/dev/kvm is not KVM's device (the character device 10:232): remove it "
                   "and, as root, mknod /dev/kvm c 10 232");
    if (f->node_kvm && (f->node_errno == EACCES || f->node_errno == EPERM))
        return say(msg, len, KVM_DIAG_PERMISSION,
                   "/dev/kvm: permission denied: run as root or add yourself to group kvm");
    if (f->misc_kvm && !f->node)
        return say(msg, len, KVM_DIAG_NO_NODE,
                   "/dev/kvm is missing although the kernel registered KVM (/proc/misc lists "
                   "kvm): as root, mknod /dev/kvm c 10 232 (a container: pass the device "
                   "in)");
    if (f->misc_kvm)
        return say(msg, len, KVM_DIAG_OPEN_FAILED,
                   "/dev/kvm: the kernel registered KVM but the node does not open (%s): "
                   "check that it is the character device 10:232 of this kernel",
                   strerror(f->node_errno));
    return no_device(f, msg, len);
}

enum kvm_diag kvm_diagnose(const char *root, char *msg, size_t len)
{
    struct kvm_host_facts f;
    kvm_host_facts_read(root, &f);
    return kvm_diagnose_facts(&f, msg, len);
}

const char *kvm_diag_name(enum kvm_diag d)
{
    static const char *const names[KVM_DIAG_NKINDS] = {
        [KVM_DIAG_OK] = "ok",
        [KVM_DIAG_PERMISSION] = "permission",
        [KVM_DIAG_NOT_KVM] = "not-kvm",
        [KVM_DIAG_NO_NODE] = "no-node",
        [KVM_DIAG_PVM_UNBOUND] = "pvm-unbound",
        [KVM_DIAG_NOT_LOADED] = "not-loaded",
        [KVM_DIAG_MODULE_NO_DEV] = "module-no-device",
        [KVM_DIAG_NESTED_OFF] = "nested-off",
        [KVM_DIAG_NO_VIRT] = "no-virt",
        [KVM_DIAG_OPEN_FAILED] = "open-failed",
    };
    return (unsigned)d < KVM_DIAG_NKINDS ? names[d] : "unknown";
}

bool kvm_device_overridden(void)
{
    const char *e = getenv(KVM_DEVICE_ENV);
    return e && *e;
}

const char *kvm_device_path(void)
{
    return kvm_device_overridden() ? getenv(KVM_DEVICE_ENV) : "/dev/kvm";
}
