# Test aggregation. Each part appends its cmocka test binaries to UNIT_TESTS
# (built into $(BUILD)/tests/) and its integration scripts to INTEGRATION_TESTS.
# `make test` = layering check + unit tests + KVM integration tests; `make unit-test` alone
# needs no KVM.

UNIT_TESTS ?=
INTEGRATION_TESTS ?=
include tests/unit/vmm_tests.mk
include tests/guest/guest.mk
include tests/fuzz/fuzz.mk
INTEGRATION_TESTS += tests/integration/images.sh tests/integration/snapshot.sh tests/integration/serial.sh \
                     tests/integration/determinism.sh tests/integration/dumps.sh \
                     tests/integration/rounds.sh tests/integration/replay.sh \
                     tests/integration/worker.sh tests/integration/insns.sh tests/integration/glibc.sh
INTEGRATION_TESTS += tests/integration/control.sh tests/integration/bench-smoke.sh \
                     tests/integration/verdicts.sh tests/integration/explore.sh tests/integration/cpumodel.sh \
                     tests/integration/guest-fuzz.sh tests/integration/html.sh \
                     tests/integration/guest-answers.sh tests/integration/guest-cues.sh tests/integration/guest-clock.sh
INTEGRATION_TESTS += tests/integration/campaign.sh tests/integration/cpucache.sh tests/integration/jt-jobs.sh
INTEGRATION_TESTS += tests/integration/rounds-progress.sh tests/integration/cpuid-sim.sh tests/integration/sleepers.sh \
                     tests/integration/woken-snapshot.sh tests/integration/ownspin.sh \
                     tests/integration/fault-in-flight.sh
INTEGRATION_TESTS += tests/integration/corpus.sh tests/integration/dynbin.sh tests/integration/dyn-corpus.sh
INTEGRATION_TESTS += tests/integration/dyn-core.sh tests/integration/pin.sh tests/integration/sparse.sh \
                     tests/integration/sparse-rounds.sh
INTEGRATION_TESTS += tests/integration/syscalls-linux.sh tests/integration/files.sh tests/integration/debian-tools.sh
INTEGRATION_TESTS += tests/integration/sanitizers.sh

# Host scripts that need no KVM (stand-ins for jinx-vmm): they run with the unit tests.
HOST_TESTS := tests/host/jinx-test-verdicts.sh

# tests/run-suites.sh runs them, prints each one's time and, at the end, the slowest ten.
unit-test: $(UNIT_TESTS) $(JINX) $(JINXCTL)
	@BIN=$(BIN) tests/run-suites.sh --name "unit tests" --ms $(UNIT_TESTS) $(HOST_TESTS)

check-kvm:
	@BIN=$(BIN) scripts/check-kvm.sh

# Suites that check nothing timing-dependent (exact traces, memory and CPUID, statuses
# within the manifests, dump contents; only generous timeouts) run two at a time beside
# each other, longest first (tests/run-suites.sh --pair); every other suite runs alone,
# after them. Not here: suites with wall-clock bounds or budgets tight under load
# (verdicts, rounds, replay's, glibc's and cpumodel's wall-bounded search for a dump, explore,
# control, bench-smoke, pin, guest-clock, snapshot's selftest rounds set by a wall-clock
# interval, ...)
# and dyn-corpus, which already runs two things at a time. serial, determinism and
# sleepers run two VMs at a time inside but compare traces and outputs, which no load
# changes (that is what they check); guest-fuzz checks that no syscall crashes the VMM.
# campaign and jt-jobs wait more than they compute (a Slurm cluster's tasks, stand-in
# jinx-vmm scripts that sleep; 0.4 of a CPU each) and their real runs stop at bugs found
# in a second or two, well inside their budgets.
# JINX_SUITE_JOBS=1 runs every suite alone.
INTEGRATION_PAIRED := tests/integration/campaign.sh tests/integration/guest-cues.sh \
  tests/integration/cpuid-sim.sh tests/integration/jt-jobs.sh tests/integration/guest-fuzz.sh \
  tests/integration/serial.sh tests/integration/insns.sh tests/integration/dumps.sh \
  tests/integration/sleepers.sh tests/integration/determinism.sh tests/integration/cpucache.sh \
  tests/integration/woken-snapshot.sh tests/integration/guest-answers.sh \
  tests/integration/fault-in-flight.sh
# tests/quick.conf: the representative subsets make test runs of the long loops.
integration-test: all check-kvm
	@BUILD=$(BUILD) BIN=$(BIN) tests/run-suites.sh --name "integration tests" --quick tests/quick.conf \
	  --pair $(INTEGRATION_PAIRED) -- $(INTEGRATION_TESTS)

# The long runs (docs/testing.md): every integration suite and the ASan guest suites with
# JINX_LONG=1, i.e. each repetition loop and benchmark at its full size (every image,
# seed, replay and benchmark script), of which `make test` runs the representative
# subsets of tests/quick.conf; then memcheck's full set (CI runs valgrind-quick) and the
# fuzz smoke run at 10 s a harness (CI: 5 s). Run it before resolving an issue (~30 min).
.PHONY: check-long
check-long: all guest-tests check-kvm
	@JINX_LONG=1 $(MAKE) --no-print-directory integration-test
	@JINX_LONG=1 $(MAKE) --no-print-directory asan-guest
	@$(MAKE) --no-print-directory valgrind
	@$(MAKE) --no-print-directory fuzz-smoke

# "STEP SUITE" for every suite that boots a guest, by the .ci/run step that runs it
# (.ci/run counts them when KVM is unusable and they are skipped).
.PHONY: list-guest-suites
list-guest-suites:
	@printf 'integration %s\n' $(INTEGRATION_TESTS)
	@echo "valgrind scripts/valgrind-run.sh"
	@printf 'asan-guest %s\n' $(ASAN_GUEST_SUITES)

# The CI driver's own test (tests/ci/ci-nokvm.sh): with KVM unusable (JINX_KVM_DEVICE=
# /dev/null) .ci/run ends green with "GUEST SUITES NOT RUN", and a failing unit test
# still makes it red. Needs no KVM; runs .ci/run on a planted one-test step list.
.PHONY: check-ci
check-ci: $(JINX_VMM)
	@tests/ci/ci-nokvm.sh

# Options: every one a parser accepts is in some --help, every one in a --help is in
# README.md or docs/ (scripts/check-docs-options.sh; needs the built binaries). And the
# README stays an entry of at most 200 lines: detail goes to docs/.
.PHONY: check-docs
check-docs: all
	@scripts/check-docs-options.sh
	@n=$$(wc -l <README.md); [ "$$n" -le 200 ] || \
	  { echo "check-docs: README.md has $$n lines, at most 200: move detail into docs/" >&2; exit 1; }
	@echo "check-docs: README.md has $$(wc -l <README.md) lines (at most 200)"

# Layering (who may include whom) and sizes (files <= 800 lines, functions <= 150), with
# a self-test that plants violations in a temporary tree (scripts/check-layers.sh).
.PHONY: check-layers
check-layers:
	@scripts/check-layers.sh --self-test

test: all
	@$(MAKE) --no-print-directory check-layers
	@$(MAKE) --no-print-directory unit-test
	@$(MAKE) --no-print-directory integration-test

# Memcheck over jinx-vmm and jinxctl runs (scripts/valgrind-run.sh; suppressions in
# tests/valgrind/jinx.supp). valgrind-quick is one run of each kind.
.PHONY: valgrind valgrind-quick
valgrind: all guest-tests check-kvm
	@BUILD=$(BUILD) BIN=$(BIN) scripts/valgrind-run.sh
valgrind-quick: all guest-tests check-kvm
	@BUILD=$(BUILD) BIN=$(BIN) scripts/valgrind-run.sh --quick
