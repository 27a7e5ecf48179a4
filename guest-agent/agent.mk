# The guest-agent is a flat binary (position-independent, loaded at GPA_AGENT and run at
# KVA(GPA_AGENT)), embedded into jinx-vmm by vmm/kvm/agent_blob.S.
AGENT_BIN := $(BUILD)/guest-agent/agent.bin

# Its constants (ports, addresses, the header's magic) come from vmm/kvm/layout.h.
$(BUILD)/guest-agent/agent.o: guest-agent/agent.S vmm/kvm/layout.h | deps
	@mkdir -p $(dir $@)
	$(CC) -c -nostdlib -ffreestanding -fno-pic -iquote vmm -o $@ $<

$(AGENT_BIN): $(BUILD)/guest-agent/agent.o guest-agent/agent.ld
	ld -nostdlib -T guest-agent/agent.ld -o $@ $<
	@test $$(stat -c %s $@) -le 65536 || { echo "guest-agent larger than 64 KiB"; rm -f $@; exit 1; }

all: $(AGENT_BIN)
