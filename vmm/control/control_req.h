/* Requests of the control socket protocol (docs/control.md): parsing and validation of
 * one request line, kept apart from the socket code so it can be unit-tested and fuzzed
 * as the pure function it is. */
#ifndef JINX_CONTROL_REQ_H
#define JINX_CONTROL_REQ_H
#include "rounds/round.h"
#include <stdbool.h>
#include <stddef.h>

#define CONTROL_MAX_LINE 4096   /* longest request or reply line, newline excluded */

enum control_cmd { CTL_PING, CTL_STATUS, CTL_ATTACH, CTL_DETACH, CTL_FOLLOW };

struct control_req {
    enum control_cmd cmd;
    struct round_config cfg;    /* attach: round_config_default() plus the given fields */
    bool follow;                /* attach: also subscribe to events ("follow":true) */
};

/* Parses line[0..len) (no newline). Every field must be known for the command and of
 * the right type and range. Returns 0, or -1 with a message for the error reply. */
int control_parse_request(const char *line, size_t len, struct control_req *req, char *err,
                          size_t errlen);

const char *control_cmd_name(enum control_cmd c);

#endif
