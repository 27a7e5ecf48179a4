# Guest test programs for the integration tests: static musl binaries, like user images.
GUEST_TESTS := syscalls futex threads crash dirty cpuid spin accuracy kvmlimit repstep verdict insns \
               freecrash cpuidsim sleepers ownspin fdchurn pinwork clockcheck tscsim sparsebank \
               fileout schedres sleepuaf sleepdouble sleeporder pipes pipefds sparseround files signals
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

# sleepuaf_ok, sleepdouble_ok, sleeporder_ok, sparseround_ok: the timer-ordered bugs' fixed twins (FIXED, docs/timers.md).
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

# files_glibc: the file layer through glibc's routes (dynamically linked).
$(GUEST_BIN)/files_glibc: tests/guest/files.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror -o $@ $<

# Sanitizer builds (tests/integration/sanitizers.sh, docs/sanitizers.md): dynamic glibc
# programs with gcc's ASan and UBSan runtimes, each racy one with its bug-free twin
# (-DFIXED, _ok), and san_direct (no race) with ASan, static ASan and UBSan.
SAN_ASAN := -O2 -g -fno-omit-frame-pointer -pthread -fsanitize=address -Wall -Wextra -Werror
SAN_UBSAN := -O2 -g -fno-omit-frame-pointer -pthread -fsanitize=undefined -fno-sanitize-recover \
             -Wall -Wextra -Werror
SAN_TESTS := san_uaf_asan san_uaf_asan_ok san_dfree_asan san_dfree_asan_ok san_overflow_ubsan \
             san_overflow_ubsan_ok san_direct_asan san_direct_asan_static san_direct_ubsan
$(GUEST_BIN)/san_%_asan: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_ASAN) -o $@ $<
$(GUEST_BIN)/san_%_asan_ok: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_ASAN) -DFIXED -o $@ $<
$(GUEST_BIN)/san_%_asan_static: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_ASAN) -static-libasan -o $@ $<
$(GUEST_BIN)/san_%_ubsan: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_UBSAN) -o $@ $<
$(GUEST_BIN)/san_%_ubsan_ok: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_UBSAN) -DFIXED -o $@ $<

# TSan builds (PIE, as TSan requires): gcc's (libtsan.so.2, dynamic) and clang's (its
# runtime linked into the program), each with its bug-free twin (-DFIXED, _ok).
SAN_TSAN := -O2 -g -fno-omit-frame-pointer -pthread -fsanitize=thread -pie -fPIE -Wall -Wextra -Werror
SAN_TESTS += san_race_tsan san_race_tsan_ok san_race_tsan_clang san_race_tsan_clang_ok \
             san_hang_tsan san_hang_tsan_clang
$(GUEST_BIN)/san_%_tsan: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_TSAN) -o $@ $<
$(GUEST_BIN)/san_%_tsan_ok: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	gcc $(SAN_TSAN) -DFIXED -o $@ $<
$(GUEST_BIN)/san_%_tsan_clang: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	clang $(SAN_TSAN) -o $@ $<
$(GUEST_BIN)/san_%_tsan_clang_ok: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	clang $(SAN_TSAN) -DFIXED -o $@ $<

# MSan (clang only; its runtime linked into the program): san_direct's uninit and clean,
# san_uninit and its twin.
SAN_MSAN := -O2 -g -fno-omit-frame-pointer -pthread -fsanitize=memory -pie -fPIE -Wall -Wextra -Werror
SAN_TESTS += san_direct_msan san_uninit_msan san_uninit_msan_ok
$(GUEST_BIN)/san_%_msan: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	clang $(SAN_MSAN) -o $@ $<
$(GUEST_BIN)/san_%_msan_ok: tests/guest/san_%.c | deps
	@mkdir -p $(dir $@)
	clang $(SAN_MSAN) -DFIXED -o $@ $<

# pipefds_glibc: dup/fcntl, select, epoll, socketpair through glibc's wrappers (its
# select is pselect6, its send/recv sendto/recvfrom), dynamically linked.
$(GUEST_BIN)/pipefds_glibc: tests/guest/pipefds.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror -o $@ $<

# signals_glibc: pthread_kill/sigwait through glibc's wrappers (tgkill), dynamically linked.
$(GUEST_BIN)/signals_glibc: tests/guest/signals.c tests/guest/check.h | deps
	@mkdir -p $(dir $@)
	gcc -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Werror -o $@ $<

guest-tests: $(addprefix $(GUEST_BIN)/,$(GUEST_TESTS)) $(GUEST_BIN)/cpuid_glibc $(GUEST_BIN)/sparsebank_ok \
             $(GUEST_BIN)/schedres_glibc $(GUEST_BIN)/sleepuaf_ok $(GUEST_BIN)/sleepdouble_ok \
             $(GUEST_BIN)/sleepuaf_hot $(GUEST_BIN)/sleeporder_ok $(addprefix $(GUEST_BIN)/,$(SAN_TESTS)) \
             $(GUEST_BIN)/pipefds_glibc $(GUEST_BIN)/sparseround_ok $(GUEST_BIN)/files_glibc \
             $(GUEST_BIN)/signals_glibc
integration-test: guest-tests
INTEGRATION_TESTS += tests/integration/guest-tests.sh tests/integration/timers.sh
