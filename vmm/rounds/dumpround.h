/* The round records of a crash dump (roundrec.h, snapfile.h), built from what the round
 * driver kept about the retired bug (round_retired) and the stopped VM: the snapshot, the
 * retired schedule, the recorded and retired traces, the score, the shared variables
 * (symbolized from the image) and the VM options replay needs.
 *
 * Contract: the VM is stopped (after vm_run) and the round driver not yet shut down
 * (the snapshot's pages are borrowed while encoding; the records own their bytes). */
#ifndef JINX_DUMPROUND_H
#define JINX_DUMPROUND_H
#include "dump/dumpfile.h"
#include "rounds/round.h"
#include "kvm/vm.h"

/* *out: an array of owned records for dump_write. 0, or -1 with a message. */
int dumpround_build(struct vm *vm, const struct round_retired *rr, struct dump_record **out,
                    size_t *n, char *err, size_t errlen);
void dumpround_free(struct dump_record *r, size_t n);

#endif
