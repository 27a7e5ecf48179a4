#!/bin/sh
# Generates the x86-64 syscall name table from the kernel headers (linux-libc-dev).
hdr=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
[ -f "$hdr" ] || hdr=/usr/include/asm/unistd_64.h
[ -f "$hdr" ] || { echo "gen-syscall-names: no unistd_64.h (install linux-libc-dev)" >&2; exit 1; }
echo "/* generated from $hdr */"
awk '/^#define __NR_[a-z0-9_]+ [0-9]+$/ { sub("__NR_", "", $2); printf "[%d] = \"%s\",\n", $3, $2 }' "$hdr"
