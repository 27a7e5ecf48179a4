# The compute corpus (images/corpus-compute/README.md): pthread programs whose threads
# compute on shared pages (10^5-10^7 shared accesses a run), each a bug and a bug-free
# twin NAME-ok.c. Built with musl as images/bin/corpus-compute/NAME and with
# -DWIDEN_WINDOW as images/bin/corpus-compute/widen/NAME; they share images/corpus/corpus.h
# through the include path. Included from images/images.mk (MUSL_CC, IMAGES_CFLAGS).
# Not part of `make test` (scripts/bench/compute-corpus.sh runs them).

CCOMP_SRCS   := $(sort $(wildcard images/corpus-compute/*.c))
CCOMP_NAMES  := $(notdir $(CCOMP_SRCS:.c=))
CCOMP_BINS   := $(addprefix images/bin/corpus-compute/,$(CCOMP_NAMES))
CCOMP_WIDEN  := $(addprefix images/bin/corpus-compute/widen/,$(CCOMP_NAMES))
CCOMP_DEPS   := images/corpus/corpus.h images/src/common.h
CCOMP_CFLAGS := $(IMAGES_CFLAGS) -I images/corpus

.PHONY: corpus-compute
corpus-compute: $(CCOMP_BINS) $(CCOMP_WIDEN)
images: corpus-compute

$(CCOMP_BINS): images/bin/corpus-compute/%: images/corpus-compute/%.c $(CCOMP_DEPS) | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(CCOMP_CFLAGS) -o $@ $<

$(CCOMP_WIDEN): images/bin/corpus-compute/widen/%: images/corpus-compute/%.c $(CCOMP_DEPS) | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(CCOMP_CFLAGS) -DWIDEN_WINDOW -o $@ $<

# A twin NAME-ok.c includes NAME.c: rebuild it when NAME.c changes.
$(foreach t,$(filter %-ok,$(CCOMP_NAMES)),$(eval \
  images/bin/corpus-compute/$(t) images/bin/corpus-compute/widen/$(t): images/corpus-compute/$(t:-ok=).c))
