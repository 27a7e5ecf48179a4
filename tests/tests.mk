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
                     tests/integration/woken-snapshot.sh tests/integration/ownspin.sh
INTEGRATION_TESTS += tests/integration/corpus.sh tests/integration/dynbin.sh tests/integration/dyn-corpus.sh
INTEGRATION_TESTS += tests/integration/dyn-core.sh tests/integration/pin.sh tests/integration/sparse.sh
INTEGRATION_TESTS += tests/integration/syscalls-linux.sh

unit-test: $(UNIT_TESTS)
	@set -e; fail=0; for t in $(UNIT_TESTS); do \
	  echo "== $$t"; s=$$(date +%s%N); $$t || fail=1; \
	  echo "-- $$t: $$(( ($$(date +%s%N) - s) / 1000000 )) ms"; done; \
	if [ $$fail -ne 0 ]; then echo "unit tests: FAILED"; exit 1; fi; echo "unit tests: all passed"

check-kvm:
	@BIN=$(BIN) scripts/check-kvm.sh

integration-test: all check-kvm
	@set -e; fail=0; for t in $(INTEGRATION_TESTS); do \
	  echo "== $$t"; s=$$(date +%s); BUILD=$(BUILD) BIN=$(BIN) $$t || fail=1; \
	  echo "-- $$t: $$(( $$(date +%s) - s )) s"; done; \
	if [ $$fail -ne 0 ]; then echo "integration tests: FAILED"; exit 1; fi; echo "integration tests: all passed"

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
