# jinx-vmm: the VMM. Library part (everything but main.c) is shared with unit tests.
VMM_SRCS := vmm/util.c vmm/elfparse.c vmm/guestmem.c vmm/mm.c vmm/cpu.c vmm/vm.c vmm/futex.c \
            vmm/syscall.c vmm/loader.c vmm/outcome.c vmm/snapshot.c vmm/selftest.c vmm/decode.c vmm/serial.c vmm/crew.c \
            vmm/round.c vmm/sim.c vmm/worker.c vmm/sha256.c vmm/dumpfile.c vmm/corefile.c \
            vmm/backtrace.c vmm/dump.c vmm/inspect.c vmm/bytes.c vmm/snapfile.c vmm/roundrec.c \
            vmm/dumpround.c vmm/replay.c vmm/srcline.c vmm/limitlog.c vmm/tail.c vmm/cli.c \
            vmm/explore.c
VMM_SRCS += vmm/html_out.c vmm/html_assets.c vmm/inspect_html.c
VMM_SRCS += vmm/race_pair.c vmm/campaign_file.c vmm/campaign_tasks.c vmm/campaign_result.c vmm/campaign_plan.c vmm/campaign_task.c vmm/campaign_merge.c vmm/campaign_report.c
# The control socket (control.c, docs/control.md) and what it needs.
VMM_SRCS += vmm/json.c vmm/round_config.c vmm/control_req.c vmm/rundir.c vmm/control.c vmm/sigstop.c
VMM_OBJS := $(VMM_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/vmm/agent_blob.o
VMM_LIB  := $(BUILD)/libjinxvmm.a
JINX_VMM := $(BIN)/jinx-vmm

$(BUILD)/vmm/syscall_names.h: vmm/gen-syscall-names.sh | deps
	@mkdir -p $(dir $@)
	vmm/gen-syscall-names.sh > $@.tmp && mv $@.tmp $@

$(BUILD)/vmm/syscall.o: $(BUILD)/vmm/syscall_names.h
$(BUILD)/vmm/%.o: vmm/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(BUILD)/vmm -c -o $@ $<

$(BUILD)/vmm/agent_blob.o: vmm/agent_blob.S $(AGENT_BIN)
	@mkdir -p $(dir $@)
	$(CC) -c -DAGENT_BIN_PATH='"$(AGENT_BIN)"' -o $@ $<

$(VMM_LIB): $(VMM_OBJS)
	rm -f $@ && ar rcs $@ $^

$(JINX_VMM): $(BUILD)/vmm/main.o $(VMM_LIB) $(EXPLORER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -lpthread $(LDLIBS)

all: $(JINX_VMM)

# jinxctl: the control client (vmm/jinxctl.c) and `jinxctl inspect` (vmm/inspect.c);
# needs no KVM.
JINXCTL := $(BIN)/jinxctl
$(JINXCTL): $(BUILD)/vmm/jinxctl.o $(VMM_LIB) $(EXPLORER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -lpthread -lm $(LDLIBS)

all: $(JINXCTL)

# jinx: `jinx test IMAGE` for CI (vmm/jinx_test.c); runs bin/jinx-vmm.
JINX := $(BIN)/jinx
$(JINX): $(BUILD)/vmm/jinx_test.o $(VMM_LIB) $(EXPLORER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcapstone -lpthread $(LDLIBS)

all: $(JINX)
