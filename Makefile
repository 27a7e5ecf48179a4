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
asan: deps
	$(MAKE) $(ASAN_FLAGS) unit-test build-asan/bin/jinx-vmm build-asan/bin/jinxctl
	$(MAKE) guest-tests
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/guest-tests.sh
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/snapshot.sh
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/serial.sh
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/control.sh
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/dumps.sh
	BUILD=$(BUILD) BIN=build-asan/bin tests/integration/guest-fuzz.sh

clean:
	rm -rf build build-asan build-fuzz bin images/bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
