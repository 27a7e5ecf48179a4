# cmocka unit tests of the VMM's pure host modules (elfparse, util, guestmem, mm): no KVM.
# One binary per tests/unit/test_vmm_*.c, linked with the VMM library.
VMM_TEST_SRCS := $(wildcard tests/unit/test_vmm_*.c)
VMM_TESTS     := $(VMM_TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/test_vmm_%.o: tests/unit/test_vmm_%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

.PRECIOUS: $(BUILD)/tests/test_vmm_%.o
$(BUILD)/tests/test_vmm_%: $(BUILD)/tests/test_vmm_%.o $(VMM_LIB) $(EXPLORER_LIB) $(LIB_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(TEST_LDFLAGS) -o $@ $^ -lcmocka -lcapstone -ldl -lpthread $(LDLIBS)

.PHONY: vmm-unit-test
vmm-unit-test: $(VMM_TESTS)
	@set -e; fail=0; for t in $(VMM_TESTS); do echo "== $$t"; $$t || fail=1; done; exit $$fail

# test_vmm_ovl makes a realloc fail (its __wrap_realloc). Not LDFLAGS: the clang and
# ASan builds set that on make's command line, which would drop this.
$(BUILD)/tests/test_vmm_ovl: TEST_LDFLAGS := -Wl,--wrap=realloc

UNIT_TESTS += $(VMM_TESTS)
