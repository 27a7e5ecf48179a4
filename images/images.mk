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
# syscall loop of scripts/bench/syscall-cost.sh and tests/integration/guest-answers.sh.
IMAGE_TOOLS   := guestfuzz syscall-loop
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
