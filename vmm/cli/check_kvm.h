/* `jinx-vmm check-kvm [--json] [--root DIR]`: can this machine run Jinx's guests, and if
 * not, why and what to do (kvm/kvmdiag.h).
 *
 * On the machine itself (no --root) the answer is a real one: /dev/kvm is opened, its
 * API version read and a VM created and closed; only when that fails does the diagnosis
 * of the host's files say why. With --root DIR only the files below DIR are read (a
 * container's root, or a test's fake tree): nothing is opened as a device.
 *
 * Prints one line ("/dev/kvm: usable (KVM API 12)", or the diagnosis), or with --json
 * {"usable":B,"diagnosis":"NAME","message":"..."} (kvm_diag_name's names). Exit status
 * 0 when usable, 1 when not, 2 for a bad command line. scripts/check-kvm.sh, which the
 * KVM tests run first, uses it. */
#ifndef JINX_CHECK_KVM_H
#define JINX_CHECK_KVM_H

#define CHECK_KVM_EXIT_UNUSABLE 1
#define CHECK_KVM_EXIT_USAGE 2

/* argv[0] is "check-kvm". Returns the process exit status. */
int cmd_check_kvm(int argc, char **argv);

#endif
