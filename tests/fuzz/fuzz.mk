# libFuzzer harnesses for the parsers of untrusted dump files (clang from Debian:
# packages clang and libclang-rt-14-dev, installed by scripts/setup-deps.sh).
#   make fuzz-smoke            each harness for FUZZ_SECONDS (20) on its seed corpus
#   make fuzz-smoke FUZZ_SECONDS=3600   a longer run
#   make fuzz-seeds            regenerate the synthetic seeds in tests/fuzz/corpus/
# New inputs found go to a scratch directory, not into the committed corpus; a crash
# leaves its reproducer in build-fuzz/ (run the harness on it to replay).
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS  := -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -Ivmm -Iexplorer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRCS    := vmm/util.c vmm/dumpfile.c vmm/sha256.c vmm/corefile.c vmm/backtrace.c vmm/decode.c \
                vmm/bytes.c vmm/snapfile.c vmm/roundrec.c explorer/trace.c explorer/u64map.c \
                explorer/schedule.c explorer/schedule_json.c
FUZZ_TARGETS := dumpfile corefile roundrec

.PHONY: fuzz-smoke fuzz-seeds
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRCS) $(wildcard vmm/*.h) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS) -lcapstone

fuzz-smoke: $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  scratch=corpus-$$t; rm -rf $(FUZZ_BUILD)/$$scratch; mkdir -p $(FUZZ_BUILD)/$$scratch; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  if ! ( cd $(FUZZ_BUILD) && ./fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	      -print_final_stats=1 $$scratch ../tests/fuzz/corpus/$$t ) >$(FUZZ_BUILD)/fuzz_$$t.log 2>&1; then \
	    tail -40 $(FUZZ_BUILD)/fuzz_$$t.log; echo "fuzz_$$t: FAILED (log: $(FUZZ_BUILD)/fuzz_$$t.log)"; exit 1; fi; \
	  grep -E "^stat::(number_of_executed_units|new_units_added)" $(FUZZ_BUILD)/fuzz_$$t.log; \
	done; echo "fuzz smoke: no crash"

fuzz-seeds: $(FUZZ_BUILD)/mkseeds
	$(FUZZ_BUILD)/mkseeds tests/fuzz/corpus/dumpfile tests/fuzz/corpus/corefile

$(FUZZ_BUILD)/mkseeds: tests/fuzz/mkseeds.c $(FUZZ_SRCS) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -Ivmm -Iexplorer -o $@ $< $(FUZZ_SRCS) -lcapstone
