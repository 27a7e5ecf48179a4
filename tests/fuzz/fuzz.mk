# libFuzzer harnesses for the parsers of untrusted input: dump files (dumpfile, corefile,
# roundrec), ELF images (elf), schedule files (schedule), control socket requests
# (control), `jinx campaign`'s results/N.json and tasks.tsv (campaign), the file layer's
# guest path confinement (pathconf), the dynamic-section parser (libdeps), the cache files
# (cpucache, scancache), the host files behind `jinx-vmm check-kvm` (kvmdiag) and the
# sanitizer reports in the guest's stderr and their dump record (sanreport). clang from
# Debian: packages clang and libclang-rt-14-dev, installed by scripts/setup-deps.sh.
#   make fuzz-smoke            each harness for FUZZ_SECONDS (10) on its seed corpus, FUZZ_JOBS (2) at a time
#   make fuzz-smoke FUZZ_SECONDS=3600   a longer run
#   make fuzz-seeds            regenerate the synthetic seeds in tests/fuzz/corpus/
#   scripts/fuzz.sh --seconds 300 [TARGET...]   long runs with a per-target summary
# New inputs found go to a scratch directory, not into the committed corpus; a crash
# leaves its reproducer in build-fuzz/ (run the harness on it to replay).
FUZZ_BUILD   ?= build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 10
# Harnesses run at a time by fuzz-smoke (tests/fuzz/smoke.sh): each gets its FUZZ_SECONDS on a core.
FUZZ_JOBS    ?= 2
FUZZ_CFLAGS  := -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -iquote . -iquote vmm \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# Everything the harnesses reach, compiled once with the sanitizers into $(FUZZ_BUILD)/obj.
FUZZ_SRCS    := $(wildcard lib/*.c) vmm/dump/dumpfile.c vmm/dump/dumpfiles.c vmm/dump/corefile.c vmm/linux/backtrace.c \
                vmm/kvm/decode.c vmm/kvm/snapimage.c vmm/dump/snapfile.c vmm/dump/roundrec.c vmm/dump/cpuidrec.c vmm/kvm/cpumodel.c vmm/linux/elfparse.c \
                vmm/control/control_req.c vmm/rounds/round_config.c $(wildcard explorer/*.c) \
                tests/fuzz/schedule_fuzz.c
FUZZ_SRCS    += vmm/campaign/campaign_result.c vmm/campaign/campaign_tasks.c vmm/dump/race_pair.c
FUZZ_SRCS    += vmm/linux/pathconf.c vmm/linux/libdeps.c vmm/linux/cpuidscan.c vmm/dump/patchrec.c
FUZZ_SRCS    += vmm/kvm/cpucache.c vmm/kvm/libvirtcpu.c vmm/kvm/libvirtdl.c vmm/linux/scancache.c
FUZZ_SRCS    += vmm/rounds/round_progress.c vmm/linux/libsyms.c vmm/kvm/kvmdiag.c vmm/kvm/hostcpu.c
FUZZ_SRCS    += vmm/linux/sanreport.c vmm/dump/sanrec.c
FUZZ_SRCS    += vmm/linux/ovl.c vmm/linux/mm.c vmm/kvm/guestmem.c
FUZZ_SRCS    += vmm/cli/jinx_test_read.c vmm/cli/jinx_test_report.c vmm/dump/timer_names.c vmm/dump/srcline.c
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_SRCS))
FUZZ_TARGETS := dumpfile corefile roundrec elf schedule control campaign pathconf libdeps cpufeat \
                cpuidscan cpucache scancache kvmdiag sanreport jtlog ovl mm explorer inspect

.PHONY: fuzz-smoke fuzz-seeds
$(FUZZ_BUILD)/obj/%.o: %.c $(wildcard lib/*.h vmm/*/*.h explorer/*.h) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJS) -lcapstone -ldl -lm

# jinxctl inspect's objects, for its harness alone: they need file_sha256, which lives with
# the VM's file layer and which fuzz_inspect.c stands in for.
FUZZ_INSPECT_SRCS := vmm/dump/inspect.c vmm/dump/inspect_cpu.c vmm/dump/inspect_files.c \
                     vmm/dump/inspect_html.c vmm/dump/inspect_libs.c vmm/dump/inspect_outcome.c \
                     vmm/dump/html_out.c vmm/dump/html_assets.c
FUZZ_INSPECT_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_INSPECT_SRCS))
$(FUZZ_BUILD)/fuzz_inspect: tests/fuzz/fuzz_inspect.c $(FUZZ_OBJS) $(FUZZ_INSPECT_OBJS) | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJS) $(FUZZ_INSPECT_OBJS) -lcapstone -ldl -lm

fuzz-smoke: $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_TARGETS))
	@tests/fuzz/smoke.sh --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) --build $(FUZZ_BUILD) $(FUZZ_TARGETS)

fuzz-seeds: $(FUZZ_BUILD)/mkseeds
	$(FUZZ_BUILD)/mkseeds tests/fuzz/corpus/dumpfile tests/fuzz/corpus/corefile
	tests/fuzz/mkseeds.sh

$(FUZZ_BUILD)/mkseeds: tests/fuzz/mkseeds.c $(FUZZ_SRCS) | deps
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -iquote . -iquote vmm -o $@ $< $(FUZZ_SRCS) -lcapstone -ldl -lm
