/* `jinxctl inspect DUMP`: prints a crash dump (threads, registers, backtraces,
 * disassembly, the interleaving that led there). jinxctl dispatches the subcommand
 * here with argv[0] == "inspect" and the subcommand's arguments after it (so getopt
 * with optind = 1 works as for a program). Returns the process exit status. */
#ifndef JINX_INSPECT_H
#define JINX_INSPECT_H

int cmd_inspect(int argc, char **argv);

#endif
