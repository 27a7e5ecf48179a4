/* Why /dev/kvm cannot be used on this machine, and what to do about it.
 *
 * A failed open of /dev/kvm says ENOENT or EACCES; the fix depends on why, and the
 * reasons differ by kind of host:
 *
 *   the node is missing though the kernel registered KVM (/proc/misc lists "kvm": a
 *   container or a minimal /dev)           -> mknod /dev/kvm c 10 232
 *   the node is there but not ours          -> run as root or join group kvm
 *   the CPU has VMX/SVM, no KVM module      -> modprobe kvm_intel / kvm_amd
 *   kvm_pvm is built in but registered no device (it does not bind when the kernel is
 *   itself a PVM guest, unless booted with kvm_pvm.force=1)
 *                                           -> run on a host that serves /dev/kvm
 *   a VM (CPUID "hypervisor") without VMX/SVM and without kvm_pvm
 *                                           -> enable nested virtualization on its host,
 *                                              or boot a kernel with kvm_pvm
 *   bare metal without VMX/SVM              -> enable virtualization in the firmware
 *
 * The facts come from a few files below a root directory ("/" on the real machine; the
 * unit tests give a fake tree): ROOT/dev/kvm, ROOT/proc/misc, ROOT/proc/cpuinfo's first
 * "flags" line, ROOT/sys/module/{kvm,kvm_intel,kvm_amd,kvm_pvm} and
 * ROOT/sys/module/kvm_pvm/parameters/force. A file that is missing or unreadable is a
 * fact (absent); files are read with bounded buffers, so odd contents only make a fact
 * false. The decision (kvm_diagnose_facts) is pure and table-tested. No KVM ioctl here:
 * a node that opens is KVM_DIAG_OK (cpu.c's setup says what the kernel then lacks). */
#ifndef JINX_KVM_KVMDIAG_H
#define JINX_KVM_KVMDIAG_H
#include <stdbool.h>
#include <stddef.h>

#define KVM_MISC_MAJOR 10
#define KVM_MISC_MINOR 232 /* fixed for kvm among the misc devices (Linux's miscdevice.h) */

enum kvm_diag {
    KVM_DIAG_OK = 0,        /* /dev/kvm is KVM's character device and opens read-write */
    KVM_DIAG_PERMISSION,    /* it is there, this user may not open it */
    KVM_DIAG_NOT_KVM,       /* /dev/kvm is no character device 10:232 */
    KVM_DIAG_NO_NODE,       /* the kernel registered kvm, /dev/kvm is missing */
    KVM_DIAG_PVM_UNBOUND,   /* kvm_pvm is in the kernel but registered no device */
    KVM_DIAG_NOT_LOADED,    /* the CPU has VMX or SVM, no module serves them */
    KVM_DIAG_MODULE_NO_DEV, /* kvm_intel/kvm_amd loaded, still no kvm device */
    KVM_DIAG_NESTED_OFF,    /* a VM whose CPU shows neither VMX nor SVM, no kvm_pvm */
    KVM_DIAG_NO_VIRT,       /* no hypervisor, no VMX/SVM: off in the firmware or absent */
    KVM_DIAG_OPEN_FAILED,   /* registered and present, the open fails otherwise (errno) */
    KVM_DIAG_NKINDS
};

struct kvm_host_facts {
    bool node;          /* ROOT/dev/kvm exists (stat follows links) */
    bool node_kvm;      /* ... and is the character device 10:232 */
    bool node_rw;       /* ... and this process may open it read-write */
    int node_errno;     /* the errno of that failed open (0 when it opened) */
    bool misc_kvm;      /* ROOT/proc/misc lists "232 kvm" */
    bool mod_kvm, mod_intel, mod_amd, mod_pvm; /* ROOT/sys/module/<name> exists */
    bool pvm_force;     /* kvm_pvm's force parameter reads Y or 1 */
    bool cpu_vmx, cpu_svm, cpu_hypervisor; /* flags of ROOT/proc/cpuinfo */
};

/* Fills f from the files below root (NULL or "" means "/"). Never fails: what cannot be
 * read is absent. */
void kvm_host_facts_read(const char *root, struct kvm_host_facts *f);
/* The diagnosis of f, and in msg (if not NULL) one sentence: what is wrong, then what
 * to do, e.g. "kvm_pvm is in this kernel but registered no /dev/kvm ...". */
enum kvm_diag kvm_diagnose_facts(const struct kvm_host_facts *f, char *msg, size_t len);
/* The parsers behind kvm_host_facts_read, on a buffer (any bytes; tests/fuzz/fuzz_kvmdiag.c):
 * f's cpu_* facts from the first "flags" line (hostcpu.h's rule); /proc/misc
 * text lists kvm when a line reads "232 kvm" (leading blanks allowed). */
void kvm_parse_cpu_flags(const char *buf, size_t n, struct kvm_host_facts *f);
bool kvm_parse_misc(const char *buf, size_t n);
/* Both in one: the machine below root. */
enum kvm_diag kvm_diagnose(const char *root, char *msg, size_t len);
/* A short stable name for scripts ("ok", "permission", "no-node", "pvm-unbound", ...). */
const char *kvm_diag_name(enum kvm_diag d);
/* The KVM device every open of jinx-vmm uses: $JINX_KVM_DEVICE when set and not empty,
 * else "/dev/kvm". A test switch: JINX_KVM_DEVICE=/dev/null makes KVM unusable for this
 * process (check-kvm then says "/dev/null is not a KVM device", tests/ci/ci-nokvm.sh). */
#define KVM_DEVICE_ENV "JINX_KVM_DEVICE"
const char *kvm_device_path(void);
/* Whether kvm_device_path() comes from JINX_KVM_DEVICE (the host diagnosis is then moot). */
bool kvm_device_overridden(void);

#endif
