#!/usr/bin/env bash
# KVM integration tests really boot guests: without a usable /dev/kvm they must fail, never skip.
if [ ! -e /dev/kvm ]; then
  echo "KVM TESTS CANNOT RUN: /dev/kvm does not exist on this machine (enable virtualization / nested KVM). Failing the run." >&2
  exit 1
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
  echo "KVM TESTS CANNOT RUN: /dev/kvm: permission denied — run as root or add yourself to group kvm. Failing the run." >&2
  exit 1
fi
exit 0
