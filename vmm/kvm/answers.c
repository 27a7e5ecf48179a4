/* The guest-agent's answers table: which syscalls it answers without an exit. */
#include "kvm/answers.h"

#include <string.h>
#include <sys/syscall.h>

#include "linux/syscall.h"

/* Candidates, in slot order: the constant syscalls programs and libcs actually call. */
static const uint64_t candidates[] = {SYS_getpid, SYS_getppid, SYS_getuid, SYS_geteuid,
                                      SYS_getgid, SYS_getegid, SYS_getpgrp, SYS_getsid};

int answers_fill(struct agent_answers *t)
{
    int n = 0;
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && n < AGENT_ANSWER_SLOTS; i++) {
        int64_t value;
        if (!syscall_constant_answer(candidates[i], &value))
            continue;
        t->nr[n] = (long long)candidates[i];
        t->value[n] = value;
        n++;
    }
    for (int i = n; i < AGENT_ANSWER_SLOTS && n > 0; i++) {
        t->nr[i] = t->nr[0];
        t->value[i] = t->value[0];
    }
    return n;
}

int answers_install(uint8_t *agent, uint64_t agent_len, uint32_t table_off, bool enabled)
{
    /* The 8-byte switch sits just before the table (agent.S). */
    if (table_off < 8 || (uint64_t)table_off + sizeof(struct agent_answers) > agent_len)
        return -1;
    struct agent_answers t;
    uint64_t on = enabled && answers_fill(&t) > 0;
    if (!on)
        memset(&t, 0, sizeof t);
    memcpy(agent + table_off - 8, &on, 8);
    memcpy(agent + table_off, &t, sizeof t);
    return 0;
}
