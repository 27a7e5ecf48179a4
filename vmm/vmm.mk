# jinx-vmm: the VMM. Every vmm/<folder>/*.c is built by wildcard (vmm/README.md says what
# each folder holds); the library part (everything but the command entry points in
# vmm/cli/) is shared with the unit tests and the other commands.
VMM_DIRS     := kvm linux sched rounds dump control campaign cli
VMM_MAINS    := vmm/cli/jinx_vmm.c vmm/cli/jinxctl.c vmm/cli/jinx_test_cmd.c vmm/cli/jinx_test_run.c
VMM_SRCS     := $(filter-out $(VMM_MAINS),$(foreach d,$(VMM_DIRS),$(wildcard vmm/$(d)/*.c)))
VMM_OBJS     := $(VMM_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/vmm/kvm/agent_blob.o
VMM_LIB      := $(BUILD)/libjinxvmm.a
JINX_VMM     := $(BIN)/jinx-vmm
SYSCALL_NAMES := $(BUILD)/vmm/linux/syscall_names.h

$(SYSCALL_NAMES): vmm/linux/gen-syscall-names.sh | deps
	@mkdir -p $(dir $@)
	vmm/linux/gen-syscall-names.sh > $@.tmp && mv $@.tmp $@

$(BUILD)/vmm/linux/syscall.o: $(SYSCALL_NAMES)
$(BUILD)/vmm/%.o: vmm/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -iquote $(BUILD)/vmm -c -o $@ $<

$(BUILD)/vmm/kvm/agent_blob.o: vmm/kvm/agent_blob.S $(AGENT_BIN)
	@mkdir -p $(dir $@)
	$(CC) -c -DAGENT_BIN_PATH='"$(AGENT_BIN)"' -o $@ $<

$(VMM_LIB): $(VMM_OBJS)
	rm -f $@ && ar rcs $@ $^

$(JINX_VMM): $(BUILD)/vmm/cli/jinx_vmm.o $(VMM_LIB) $(EXPLORER_LIB) $(LIB_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -ldl -lpthread $(LDLIBS)

all: $(JINX_VMM)

# jinxctl: the control client and `jinxctl inspect` (vmm/cli/jinxctl.c, vmm/dump/inspect.c);
# needs no KVM.
JINXCTL := $(BIN)/jinxctl
$(JINXCTL): $(BUILD)/vmm/cli/jinxctl.o $(VMM_LIB) $(EXPLORER_LIB) $(LIB_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -ldl -lpthread -lm $(LDLIBS)

all: $(JINXCTL)

# jinx: `jinx test IMAGE` for CI (vmm/cli/jinx_test_cmd.c); runs bin/jinx-vmm.
JINX := $(BIN)/jinx
$(JINX): $(BUILD)/vmm/cli/jinx_test_cmd.o $(BUILD)/vmm/cli/jinx_test_run.o $(VMM_LIB) $(EXPLORER_LIB) $(LIB_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -ldl -lpthread $(LDLIBS)

all: $(JINX)
