# The bug corpus (images/corpus/README.md): every images/corpus/NAME.c is a short pthread
# test, built with musl as images/bin/corpus/NAME and with -DWIDEN_WINDOW as
# images/bin/corpus/widen/NAME; NAME-ok.c files are the bug-free twins. Included from
# images/images.mk (MUSL_CC, IMAGES_CFLAGS).

CORPUS_SRCS   := $(sort $(wildcard images/corpus/*.c))
CORPUS_NAMES  := $(notdir $(CORPUS_SRCS:.c=))
CORPUS_BINS   := $(addprefix images/bin/corpus/,$(CORPUS_NAMES))
CORPUS_WIDEN  := $(addprefix images/bin/corpus/widen/,$(CORPUS_NAMES))
CORPUS_DEPS   := images/corpus/corpus.h images/src/common.h

.PHONY: corpus
corpus: $(CORPUS_BINS) $(CORPUS_WIDEN)
images: corpus

$(CORPUS_BINS): images/bin/corpus/%: images/corpus/%.c $(CORPUS_DEPS) | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -o $@ $<

$(CORPUS_WIDEN): images/bin/corpus/widen/%: images/corpus/%.c $(CORPUS_DEPS) | deps
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(IMAGES_CFLAGS) -DWIDEN_WINDOW -o $@ $<

# A twin NAME-ok.c includes NAME.c: rebuild it when NAME.c changes.
$(foreach t,$(filter %-ok,$(CORPUS_NAMES)),$(eval \
  images/bin/corpus/$(t) images/bin/corpus/widen/$(t): images/corpus/$(t:-ok=).c))
