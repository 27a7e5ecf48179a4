/* The control socket of a running VM: a Unix stream socket, mode 0600, one per VM,
 * served by its own thread. Peers must have the VM's uid (or be root). The protocol is
 * one JSON object per line each way (docs/control.md); jinxctl is its client.
 *
 * Requests: attach (with the round configuration), detach, status. Replies: one line
 * {"ok":true,...} or {"ok":false,"error":"..."}. A client that asked to follow also
 * receives event lines {"event":...} as rounds publish them (control_event). */
#ifndef JINX_CONTROL_H
#define JINX_CONTROL_H
#include <stddef.h>

struct vm;
struct control;

/* Creates the socket (dir: $JINX_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jinx, else
 * /tmp/jinx-UID) and starts serving. Returns NULL with a message on failure. */
struct control *control_start(struct vm *vm, char *err, size_t errlen);
const char *control_path(const struct control *c);
/* Stops serving, closes every client, removes the socket. NULL is fine. */
void control_stop(struct control *c);
/* Sends one event line (a JSON object, no newline) to every following client, and
 * never blocks on a slow one. Safe from any thread; c may be NULL. */
void control_event(struct control *c, const char *json);

#endif
