/* `jinx-vmm replay DUMP [--verbose] [--image PATH] [--timeout DUR]`: reproduces the crash
 * of a dump written after a simulation round retired a bug.
 *
 * It refuses (status 2, with the reason) a dump it cannot trust or use: malformed,
 * truncated or altered (dumpfile.h, roundrec.h), a dump without round records (a crash
 * met in free execution has no snapshot to start from), or an image whose SHA-256 is not
 * the one recorded (another build). Otherwise it creates a fresh VM with the recorded
 * options (memory, vCPUs, seed, thread stack, arguments, environment), loads the image,
 * loads the snapshot into it (snapshot_load_into), runs the retired schedule serialized
 * with memory cue points up to the recorded cue count (no sandbox: the bug really
 * happens), then lets the program run free. The replayed trace is checked against the
 * dump's retired trace (a divergence is reported with the first differing cue point) and
 * the outcome against the dump's (kind, signal, thread, RIP). The exit status is the
 * replayed outcome's, as for `jinx-vmm run`; --verbose narrates every cue point. */
#ifndef JINX_REPLAY_H
#define JINX_REPLAY_H

#define REPLAY_EXIT_REFUSED 2

/* argv[0] is "replay". Returns the process exit status. */
int cmd_replay(int argc, char **argv);

#endif
