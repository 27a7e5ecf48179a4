# Target workloads: static x86-64 musl binaries in images/bin/NAME from images/src/NAME.c,
# each described by images/NAME.manifest (docs/contract.md). The buggy ones also have a
# -DWIDEN_WINDOW variant in images/bin/widen/NAME whose vulnerable window is widened by a
# sleep: evidence that the bug is real (scripts/native-rate.sh --widen measures it).
# Every C workload is also built against glibc (gcc -static -pthread, otherwise the same
# flags) as images/bin/glibc/NAME, and the C++ workloads (images/src/NAME.cpp, g++
# -static -pthread: glibc and libstdc++) are images/bin/NAME with manifests of their own;
# tests/integration/glibc.sh holds both to the manifests' outcomes.

MUSL_CC       ?= musl-gcc
IMAGES_CFLAGS := -std=c11 -D_GNU_SOURCE -static -O2 -g -fno-omit-frame-pointer -pthread \
                 -Wall -Wextra -Werror

IMAGE_BUGGY   := circle flag-open race-o1o2 race-lock-x bounding-2v bounding-3t \
                 deadlock-abba wsq
IMAGE_NAMES   := $(IMAGE_BUGGY) correct throughput
# Not workloads (no manifest): the hostile guest of tests/integration/guest-fuzz.sh, the
# syscall loop of scripts/bench/syscall-cost.sh and tests/integration/guest-answers.sh,
# the long-running pipeline of scripts/bench/rounds-progress.sh and tests/integration/rounds-progress.sh.
IMAGE_TOOLS   := guestfuzz syscall-loop pipeline
IMAGES        := $(addprefix images/bin/,$(IMAGE_NAMES) $(IMAGE_TOOLS))
IMAGES_WIDEN  := $(addprefix images/bin/widen/,$(IMAGE_BUGGY))

GLIBC_CC      ?= gcc
IMAGES_GLIBC  := $(addprefix images/bin/glibc/,$(IMAGE_NAMES))

IMAGES_CXX_CC ?= g++
IMAGES_CXXFLAGS := -std=c++17 -static -pthread -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror
IMAGE_CXX_BUGGY := cxx-race
IMAGE_CXX     := cxx-pool $(IMAGE_CXX_BUGGY)
IMAGES_CXX    := $(addprefix images/bin/,$(IMAGE_CXX))
IMAGES_CXX_WIDEN := $(addprefix images/bin/widen/,$(IMAGE_CXX_BUGGY))

.PHONY: images
images: $(IMAGES) $(IMAGES_WIDEN) $(IMAGES_GLIBC) $(IMAGES_CXX) $(IMAGES_CXX_WIDEN)
all: images

$(IMAGES): images/bin/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -o $@ $<

$(IMAGES_WIDEN): images/bin/widen/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -DWIDEN_WINDOW -o $@ $<

$(IMAGES_GLIBC): images/bin/glibc/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(GLIBC_CC) $(IMAGES_CFLAGS) -o $@ $<

$(IMAGES_CXX): images/bin/%: images/src/%.cpp images/src/cxxpool.h | deps
	@mkdir -p $(dir $@)
	$(IMAGES_CXX_CC) $(IMAGES_CXXFLAGS) -o $@ $<

$(IMAGES_CXX_WIDEN): images/bin/widen/%: images/src/%.cpp images/src/cxxpool.h | deps
	@mkdir -p $(dir $@)
	$(IMAGES_CXX_CC) $(IMAGES_CXXFLAGS) -DWIDEN_WINDOW -o $@ $<

include images/corpus/corpus.mk
include images/corpus-compute/corpus-compute.mk

# Dynamically linked builds (docs/contract.md "Dynamic programs"): every C workload with
# plain `gcc -pthread` and every C++ one with plain `g++ -pthread` (host glibc and
# libstdc++, loaded by ld-linux in the guest), as images/bin/dyn/NAME; plus
# images/bin/dyn/dyn-files (reads the files named on its command line, tries escapes and
# writes) and images/bin/dyn/cxx-tests (a small test binary with --filter, as a user's
# gtest-like binary would be). tests/integration/dynbin.sh runs them.
IMAGES_DYN_CFLAGS   := $(filter-out -static,$(IMAGES_CFLAGS))
IMAGES_DYN_CXXFLAGS := $(filter-out -static,$(IMAGES_CXXFLAGS))
IMAGES_DYN_C   := $(addprefix images/bin/dyn/,$(IMAGE_NAMES) dyn-files dyn-heldfile)
IMAGES_DYN_CXX := $(addprefix images/bin/dyn/,$(IMAGE_CXX) cxx-tests)

images: $(IMAGES_DYN_C) $(IMAGES_DYN_CXX)

$(IMAGES_DYN_C): images/bin/dyn/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(GLIBC_CC) $(IMAGES_DYN_CFLAGS) -o $@ $<

$(IMAGES_DYN_CXX): images/bin/dyn/%: images/src/%.cpp images/src/cxxpool.h | deps
	@mkdir -p $(dir $@)
	$(IMAGES_CXX_CC) $(IMAGES_DYN_CXXFLAGS) -o $@ $<

# images/bin/dyn/cxx-big: a generated dynamic C++ test binary of gtest size (80 tests with
# types of their own: ~625 KB of text, libstdc++) for scripts/bench/boot-dyn.sh.
IMAGES_DYN_BIG := images/bin/dyn/cxx-big
images: $(IMAGES_DYN_BIG)
$(IMAGES_DYN_BIG): images/gen/cxx-big.sh | deps
	@mkdir -p $(dir $@) $(BUILD)/gen
	images/gen/cxx-big.sh 80 >$(BUILD)/gen/cxx-big.cpp
	$(IMAGES_CXX_CC) $(filter-out -g,$(IMAGES_DYN_CXXFLAGS)) -o $@ $(BUILD)/gen/cxx-big.cpp
images/bin/guestfuzz: images/src/guestfuzz-files.h images/src/guestfuzz-steps.h

# The corpus built dynamically too (plain gcc -pthread, host glibc): images/bin/dyn/corpus/NAME.
# tests/integration/dyn-corpus.sh holds them to the musl builds' outcomes.
CORPUS_DYN := $(addprefix images/bin/dyn/corpus/,$(CORPUS_NAMES))
images: $(CORPUS_DYN)
$(CORPUS_DYN): images/bin/dyn/corpus/%: images/corpus/%.c $(CORPUS_DEPS) | deps
	@mkdir -p $(dir $@)
	$(GLIBC_CC) $(IMAGES_DYN_CFLAGS) -o $@ $<
$(foreach t,$(filter %-ok,$(CORPUS_NAMES)),$(eval images/bin/dyn/corpus/$(t): images/corpus/$(t:-ok=).c))
