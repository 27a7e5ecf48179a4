# explorer/: pure C11 library (no KVM) -> $(BUILD)/libexplorer.a, plus its cmocka tests.
EXPLORER_SRCS := $(wildcard explorer/*.c)
EXPLORER_OBJS := $(patsubst explorer/%.c,$(BUILD)/explorer/%.o,$(EXPLORER_SRCS))
EXPLORER_LIB  := $(BUILD)/libexplorer.a
EXPLORER_TEST_SRCS := $(wildcard tests/unit/test_explorer*.c)
EXPLORER_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(EXPLORER_TEST_SRCS))

$(BUILD)/explorer/%.o: explorer/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(EXPLORER_LIB): $(EXPLORER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# test_explorer_schedule also runs the fuzz checks (tests/fuzz/schedule_fuzz.c) on its seeds.
$(BUILD)/tests/test_explorer%: tests/unit/test_explorer%.c tests/fuzz/schedule_fuzz.c $(EXPLORER_LIB) $(LIB_LIB) | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/schedule_fuzz.c $(EXPLORER_LIB) $(LIB_LIB) $(LDFLAGS) -lcmocka

.PHONY: explorer
explorer: $(EXPLORER_LIB)
all: $(EXPLORER_LIB)
UNIT_TESTS += $(EXPLORER_TESTS)
