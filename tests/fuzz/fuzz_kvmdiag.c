/* libFuzzer harness for the host-file parsers of kvm/kvmdiag.c (/proc/cpuinfo's flags,
 * /proc/misc). Host files, not the guest's, but a container or a fake root can hold
 * anything: beyond "no crash", the answer never depends on bytes past the input, a
 * "flags" word is found only as a whole word, and the decision over the facts read is
 * always one of the named kinds with a terminated message. */
#include "kvm/kvmdiag.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: ASan catches any read past the end. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    struct kvm_host_facts f;
    memset(&f, 0, sizeof f);
    kvm_parse_cpu_flags(buf, size, &f);
    if (f.cpu_vmx && !memmem(buf, size, "vmx", 3))
        abort();
    if (f.cpu_hypervisor && !memmem(buf, size, "hypervisor", 10))
        abort();
    bool misc = kvm_parse_misc(buf, size);
    if (misc && !memmem(buf, size, "kvm", 3))
        abort();
    f.misc_kvm = misc;
    f.mod_pvm = size && (data[0] & 1);
    f.node = size > 1 && (data[1] & 1);
    char msg[160];
    memset(msg, 'x', sizeof msg);
    enum kvm_diag d = kvm_diagnose_facts(&f, msg, sizeof msg);
    if ((unsigned)d >= KVM_DIAG_NKINDS || !memchr(msg, 0, sizeof msg) ||
        !strcmp(kvm_diag_name(d), "unknown"))
        abort();
    free(buf);
    return 0;
}
