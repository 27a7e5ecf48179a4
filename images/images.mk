# Target workloads: static x86-64 musl binaries in images/bin/NAME from images/src/NAME.c,
# each described by images/NAME.manifest (docs/contract.md). The buggy ones also have a
# -DWIDEN_WINDOW variant in images/bin/widen/NAME whose vulnerable window is widened by a
# sleep: evidence that the bug is real (scripts/native-rate.sh --widen measures it).

MUSL_CC       ?= musl-gcc
IMAGES_CFLAGS := -std=c11 -D_GNU_SOURCE -static -O2 -g -fno-omit-frame-pointer -pthread \
                 -Wall -Wextra -Werror

IMAGE_BUGGY   := circle flag-open race-o1o2 race-lock-x bounding-2v bounding-3t \
                 deadlock-abba wsq
IMAGE_NAMES   := $(IMAGE_BUGGY) correct throughput
# Not a workload: the hostile guest of tests/integration/guest-fuzz.sh (no manifest).
IMAGE_TOOLS   := guestfuzz
IMAGES        := $(addprefix images/bin/,$(IMAGE_NAMES) $(IMAGE_TOOLS))
IMAGES_WIDEN  := $(addprefix images/bin/widen/,$(IMAGE_BUGGY))

.PHONY: images
images: $(IMAGES) $(IMAGES_WIDEN)
all: $(IMAGES) $(IMAGES_WIDEN)

$(IMAGES): images/bin/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -o $@ $<

$(IMAGES_WIDEN): images/bin/widen/%: images/src/%.c images/src/common.h | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -DWIDEN_WINDOW -o $@ $<
