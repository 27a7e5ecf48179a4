/* The guest-agent's answers table (guest-agent/agent.S): syscalls the agent answers in
 * the guest, with no exit. The policy is the VMM's: only syscalls whose answer is a
 * constant of the run (linux/syscall.h, syscall_constant_answer) go in, so that a run
 * with the table and one without see the same values, the same virtual time and the same
 * schedule (none of them is a cue point); only the exit and syscall counts of --stats
 * differ, since answered syscalls never reach the VMM. */
#ifndef JINX_ANSWERS_H
#define JINX_ANSWERS_H
#include <stdbool.h>
#include <stdint.h>

#include "kvm/layout.h"

/* Fills *t from the candidates (getpid, getppid, ...); unused slots repeat slot 0.
 * Returns the number of distinct syscalls answered (0: the table must stay off). */
int answers_fill(struct agent_answers *t);

/* Writes the table and its switch into the loaded agent image (agent, agent_len bytes,
 * header already checked by the caller), on when enabled and the table is not empty.
 * -1 when the header's table does not fit the image. */
int answers_install(uint8_t *agent, uint64_t agent_len, uint32_t table_off, bool enabled);

#endif
