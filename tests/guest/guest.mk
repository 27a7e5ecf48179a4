# Guest test programs for the integration tests: static musl binaries, like user images.
GUEST_TESTS := syscalls futex threads crash dirty cpuid spin accuracy kvmlimit repstep verdict insns \
               freecrash
GUEST_BIN := $(BUILD)/guest-tests
GUEST_CFLAGS := -static -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror

$(GUEST_BIN)/%: tests/guest/%.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -o $@ $<

guest-tests: $(addprefix $(GUEST_BIN)/,$(GUEST_TESTS))
integration-test: guest-tests
INTEGRATION_TESTS += tests/integration/guest-tests.sh
