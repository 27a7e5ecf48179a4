# Jinx — one `make` builds everything, `make test` runs every test.
# Each part has its own fragment (lib/lib.mk, vmm/vmm.mk, guest-agent/agent.mk, explorer/explorer.mk,
# images/images.mk, tests/tests.mk); this file holds the shared settings.

CC      ?= gcc
ifeq ($(origin CC),default)
CC      := gcc
endif
BUILD   ?= build
BIN     ?= bin
SAN     ?=
CFLAGS_BASE := -std=c11 -g -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP $(SAN)
CFLAGS  ?=
# Includes are namespaced ("kvm/vm.h", "lib/json.h", "explorer/explorer.h"). -iquote, not -I:
# vmm/linux/ would otherwise shadow system headers such as <linux/futex.h>.
INCLUDES   := -iquote . -iquote vmm
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(INCLUDES)
LDFLAGS ?=
LDLIBS  ?=

.PHONY: all deps test unit-test integration-test demo asan clean check-kvm
all: deps
# The generated dynamic C++ image (images/images.mk) is one compile of a minute or more:
# named first, `make -j2` starts it at once and builds everything else beside it, instead
# of reaching it last and waiting for it alone.
all: images/bin/dyn/cxx-big

# Installs missing Debian packages as root, or names the exact apt-get line.
deps: $(BUILD)/.deps-ok
$(BUILD)/.deps-ok: scripts/setup-deps.sh
	@scripts/setup-deps.sh
	@mkdir -p $(BUILD) && touch $@

include guest-agent/agent.mk
include lib/lib.mk
include explorer/explorer.mk
include vmm/vmm.mk
include images/images.mk
include tests/tests.mk

demo: all
	@scripts/demo.sh

# ASan+UBSan build of the VMM and the unit tests, in its own tree; the sanitized
# jinx-vmm then boots the guest test programs (any sanitizer report fails the run).
ASAN_FLAGS := BUILD=build-asan BIN=build-asan/bin \
  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
  LDFLAGS="-fsanitize=address,undefined"
# asan-unit needs no KVM (CI runs it on any host); asan-guest boots guests.
ASAN_GUEST_SUITES := tests/integration/guest-tests.sh tests/integration/snapshot.sh \
  tests/integration/serial.sh tests/integration/control.sh tests/integration/dumps.sh \
  tests/integration/guest-fuzz.sh
# Timing-free under ASan too (tests/tests.mk's INTEGRATION_PAIRED): two at a time.
ASAN_PAIRED := tests/integration/guest-fuzz.sh tests/integration/serial.sh tests/integration/dumps.sh \
  tests/integration/guest-tests.sh
.PHONY: asan-unit asan-guest
asan: asan-unit
	@$(MAKE) --no-print-directory asan-guest
asan-unit: deps
	$(MAKE) $(ASAN_FLAGS) unit-test build-asan/bin/jinx-vmm build-asan/bin/jinxctl
# Under ASan the repetitions find no more memory errors than one of each kind: make test
# runs 3 serialized runs of a program (not 10) and 3 guest fuzz seeds (not 6); make
# check-long (JINX_LONG=1) every loop in full. A caller's own setting wins.
ASAN_QUICK := $(if $(filter 1,$(JINX_LONG)),,SERIAL_RUNS_MAX=$${SERIAL_RUNS_MAX:-3} \
  GUEST_FUZZ_SEEDS=$${GUEST_FUZZ_SEEDS:-3})
asan-guest: all guest-tests check-kvm
	@$(MAKE) --no-print-directory $(ASAN_FLAGS) build-asan/bin/jinx-vmm build-asan/bin/jinxctl
	@$(ASAN_QUICK) BUILD=$(BUILD) BIN=build-asan/bin tests/run-suites.sh --name "asan guest suites" \
	  --quick tests/quick.conf --pair $(ASAN_PAIRED) -- $(ASAN_GUEST_SUITES)

# The host code (jinx-vmm, jinxctl, jinx and the unit tests) built with clang -Werror in
# its own tree, and its unit tests run (CI's build-clang step). The guest images are not
# built with CC (images/images.mk), so the gcc tree's serve.
CLANG_FLAGS := CC=clang BUILD=build-clang BIN=build-clang/bin
.PHONY: clang
clang: deps
	$(MAKE) $(CLANG_FLAGS) unit-test build-clang/bin/jinx-vmm build-clang/bin/jinxctl build-clang/bin/jinx

clean:
	rm -rf build build-asan build-clang build-fuzz bin images/bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
