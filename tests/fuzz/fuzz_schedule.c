/* libFuzzer harness for schedule files (explorer/schedule.c text form and
 * explorer/schedule_json.c JSON form, as read by `jinx-vmm replay --schedule` and from
 * dump records). The checks live in explorer_fuzz_schedule() (tests/fuzz/schedule_fuzz.c,
 * also run by the unit tests): no crash or leak, terminated error messages, and anything
 * accepted prints to text and JSON that parse back to the same schedule. */
#include "explorer/explorer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return explorer_fuzz_schedule(data, size);
}
