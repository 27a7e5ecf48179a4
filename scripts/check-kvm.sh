#!/usr/bin/env bash
# KVM integration tests really boot guests: without a usable /dev/kvm they must fail, never skip.
# With jinx-vmm built, its check-kvm makes a VM and, when that fails, says why on this kind
# of host and what to do (vmm/kvm/kvmdiag.h); before the build, the plain file checks.
jinx_vmm="${BIN:-bin}/jinx-vmm"
if [ -x "$jinx_vmm" ]; then
  if why=$("$jinx_vmm" check-kvm 2>&1); then
    exit 0
  fi
  echo "KVM TESTS CANNOT RUN: $why. Failing the run." >&2
  exit 1
fi
if [ ! -e /dev/kvm ]; then
  echo "KVM TESTS CANNOT RUN: /dev/kvm does not exist on this machine (enable virtualization / nested KVM; bin/jinx-vmm check-kvm says more once built). Failing the run." >&2
  exit 1
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
  echo "KVM TESTS CANNOT RUN: /dev/kvm: permission denied — run as root or add yourself to group kvm. Failing the run." >&2
  exit 1
fi
exit 0
