/* pre2-relay-ok - the bug-free twin of pre2-relay: the same program with the fix (FIXED). */
#define FIXED 1
#include "pre2-relay.c"
