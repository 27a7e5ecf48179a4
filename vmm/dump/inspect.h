/* `jinxctl inspect DUMP [--thread N] [--disasm N] [--json] [--image PATH]`: reads a
 * .jinxdump and its .core (from the .jinxdump's own directory) and prints the outcome,
 * and per thread its state, registers, a frame-pointer backtrace symbolized from the
 * image, and disassembly around its RIP; --json prints the same as one JSON object.
 *
 * Both files are untrusted: a malformed, truncated or altered dump, a core whose size or
 * SHA-256 differs from the one the dump recorded, or an image file whose SHA-256 differs
 * from the dump's (another build) is refused with a message on stderr and status 2. */
#ifndef JINX_INSPECT_H
#define JINX_INSPECT_H

#define INSPECT_EXIT_REFUSED 2

/* argv[0] is "inspect". Returns the process exit status. */
int cmd_inspect(int argc, char **argv);

#endif
