# Guest test programs for the integration tests: static musl binaries, like user images.
GUEST_TESTS := syscalls futex threads crash dirty cpuid spin accuracy kvmlimit repstep verdict insns \
               freecrash cpuidsim sleepers ownspin fdchurn pinwork clockcheck tscsim sparsebank \
               fileout schedres sleepuaf sleepdouble sleeporder
GUEST_BIN := $(BUILD)/guest-tests
GUEST_CFLAGS := -static -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror

$(GUEST_BIN)/%: tests/guest/%.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -o $@ $<

# insns is two sources (no file over 800 lines) sharing insns.h.
INSNS_SRCS := tests/guest/insns.c tests/guest/insns_vec.c
$(GUEST_BIN)/insns: $(INSNS_SRCS) tests/guest/insns.h | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -o $@ $(INSNS_SRCS)

# cpuid_glibc: dynamically linked against glibc (ld.so, libc.so.6 from the host), to see
# what glibc's own CPU dispatch makes of the CPU model (tests/integration/cpumodel.sh).
$(GUEST_BIN)/cpuid_glibc: tests/guest/cpuid_glibc.c | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -o $@ $<

# sparsebank_ok: the same source with the fix (FIXED), the bug-free twin.
$(GUEST_BIN)/sparsebank_ok: tests/guest/sparsebank.c | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -DFIXED -o $@ $<

# sleepuaf_ok, sleepdouble_ok, sleeporder_ok: the timer-ordered bugs' fixed twins (FIXED, docs/timers.md).
$(GUEST_BIN)/%_ok: tests/guest/%.c | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -DFIXED -o $@ $<

# sleepuaf_hot: with a hot shared counter, found by sparse runs (docs/timers.md).
$(GUEST_BIN)/sleepuaf_hot: tests/guest/sleepuaf.c | deps
	@mkdir -p $(dir $@)
	musl-gcc $(GUEST_CFLAGS) -DHOT -o $@ $<

# schedres_glibc: the same program through glibc's routes (sysconf by /sys, then
# sched_getaffinity; its default thread stack by RLIMIT_STACK), dynamically linked.
$(GUEST_BIN)/schedres_glibc: tests/guest/schedres.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror -o $@ $<

guest-tests: $(addprefix $(GUEST_BIN)/,$(GUEST_TESTS)) $(GUEST_BIN)/cpuid_glibc $(GUEST_BIN)/sparsebank_ok \
             $(GUEST_BIN)/schedres_glibc $(GUEST_BIN)/sleepuaf_ok $(GUEST_BIN)/sleepdouble_ok \
             $(GUEST_BIN)/sleepuaf_hot $(GUEST_BIN)/sleeporder_ok
integration-test: guest-tests
INTEGRATION_TESTS += tests/integration/guest-tests.sh tests/integration/timers.sh
