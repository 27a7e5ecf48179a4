# lib/: small helpers shared by the VMM and the explorer (lib/README.md) -> $(BUILD)/libjinxlib.a,
# linked after both (it calls neither).
LIB_SRCS := $(wildcard lib/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_LIB  := $(BUILD)/libjinxlib.a

$(BUILD)/lib/%.o: lib/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(LIB_LIB)
