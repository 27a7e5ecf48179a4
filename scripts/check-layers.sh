#!/bin/sh
# Layering and size check over the source tree (README "Layout"), run by `make test`.
#   scripts/check-layers.sh [ROOT]       check ROOT (default: the repository)
#   scripts/check-layers.sh --self-test  also plant violations in a temporary tree and
#                                        fail unless each one is caught
# Layers, from #include "..." lines:
#   lib/          includes only lib/ (it is shared by everything, calls nothing)
#   explorer/     includes explorer/ (its own headers) and lib/, never vmm/
#   vmm/kvm/      the core: no sched/, rounds/, dump/, control/, campaign/, cli/
#   vmm/linux/    the personality: no sched/, rounds/, dump/, control/, campaign/, cli/
#   vmm/ outside explorer/: only explorer/explorer.h of the explorer
# Sizes (lib/, explorer/, vmm/, guest-agent/, tests/ with its guest programs): no
# source file over 800 lines, no function over 150 lines (a function opens with `{` at
# column 0 and closes with `}` at column 0, the style of this tree).
set -u
MAX_FILE=800
MAX_FUNC=150

check() {
    local root=$1
    fail=0
    bad() { echo "check-layers: $*"; fail=1; }
    # includes: "file:line:target"
    incs=$(cd "$root" && grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' \
        $(find lib explorer vmm guest-agent -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' \) 2>/dev/null | sort) 2>/dev/null |
        sed 's/^\([^:]*\):\([0-9]*\):.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1:\2:\3/')
    for rec in $incs; do
        file=${rec%%:*}; rest=${rec#*:}; line=${rest%%:*}; target=${rest#*:}
        case $file in
        lib/*)
            case $target in lib/*) ;; *) bad "$file:$line includes \"$target\": lib/ includes only lib/" ;; esac ;;
        explorer/*)
            case $target in
            lib/*|explorer/*) ;;
            */*) bad "$file:$line includes \"$target\": explorer/ includes only explorer/ and lib/" ;;
            *) [ -f "$root/explorer/$target" ] ||
                   bad "$file:$line includes \"$target\": not an explorer/ header" ;;
            esac ;;
        vmm/kvm/*|vmm/linux/*)
            case $target in
            sched/*|rounds/*|dump/*|control/*|campaign/*|cli/*)
                bad "$file:$line includes \"$target\": ${file%/*}/ must not reach ${target%%/*}/" ;;
            esac ;;
        esac
        case $file in
        vmm/*|guest-agent/*)
            case $target in
            explorer/explorer.h) ;;
            explorer/*) bad "$file:$line includes \"$target\": the VMM includes only explorer/explorer.h" ;;
            esac ;;
        esac
    done
    # sizes
    for f in $(cd "$root" && find lib explorer vmm guest-agent tests \
                   -type f \( -name '*.c' -o -name '*.h' \) -print 2>/dev/null | sort); do
        n=$(wc -l <"$root/$f")
        [ "$n" -gt $MAX_FILE ] && bad "$f: $n lines (at most $MAX_FILE: split it)"
        long=$(awk -v max=$MAX_FUNC -v f="$f" '
            /^\{/ { start = NR; name = prev }
            /^\}/ && start { if (NR - start + 1 > max) printf "%s:%d: function %s is %d lines (at most %d)\n", f, start, name, NR - start + 1, max; start = 0 }
            /^[A-Za-z_]/ { prev = $0 }' "$root/$f")
        [ -n "$long" ] && { echo "$long" | sed 's/^/check-layers: /'; fail=1; }
    done
    return $fail
}

self_test() {
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/lib" "$tmp/explorer" "$tmp/vmm/kvm" "$tmp/vmm/sched" "$tmp/tests/guest"
    printf '#include "lib/a.h"\nint a(void)\n{\n    return 0;\n}\n' >"$tmp/lib/a.c"
    printf 'int a(void);\n' >"$tmp/lib/a.h"
    printf '#include "x.h"\n#include "lib/a.h"\n' >"$tmp/explorer/x.c"
    printf '\n' >"$tmp/explorer/x.h"
    printf '#include "kvm/vm.h"\n#include "explorer/explorer.h"\n' >"$tmp/vmm/kvm/vm.c"
    printf '\n' >"$tmp/vmm/kvm/vm.h"
    check "$tmp" >/dev/null || { echo "check-layers self-test: a clean tree fails"; check "$tmp"; exit 1; }
    plant() { # name, file, text (appended)
        cp -r "$tmp" "$tmp.p" && printf '%b' "$3" >>"$tmp.p/$2"
        if check "$tmp.p" >/dev/null; then echo "check-layers self-test: missed $1"; rm -rf "$tmp.p"; exit 1; fi
        rm -rf "$tmp.p"
    }
    plant "explorer including vmm/" explorer/x.c '#include "vmm/kvm/vm.h"\n'
    plant "explorer including a kvm/ header" explorer/x.c '#include "kvm/vm.h"\n'
    plant "lib including vmm/" lib/a.c '#include "kvm/vm.h"\n'
    plant "lib including explorer/" lib/a.c '#include "explorer/explorer.h"\n'
    plant "kvm including sched/" vmm/kvm/vm.c '#include "sched/serialize.h"\n'
    plant "kvm including cli/" vmm/kvm/vm.c '#include "cli/options.h"\n'
    plant "kvm including campaign/" vmm/kvm/vm.c '#include "campaign/campaign.h"\n'
    plant "vmm including a single explorer header" vmm/kvm/vm.c '#include "explorer/trace.h"\n'
    plant "a long function" lib/a.c "int b(void)\n{\n$(awk 'BEGIN{for(i=0;i<150;i++) printf "    (void)0;\\n"}')}\n"
    plant "a long file" lib/a.h "$(awk 'BEGIN{for(i=0;i<800;i++) printf "\\n"}')"
    plant "a long guest test program" tests/guest/g.c "$(awk 'BEGIN{for(i=0;i<801;i++) printf "\\n"}')"
    echo "check-layers self-test: every planted violation caught"
}

root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
--self-test) self_test; check "$root" && echo "check-layers: layers and sizes ok" ;;
"") check "$root" && echo "check-layers: layers and sizes ok" ;;
*) check "$1" && echo "check-layers: layers and sizes ok" ;;
esac
