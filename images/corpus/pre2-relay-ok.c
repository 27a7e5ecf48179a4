/* pre2-relay-ok - bug-free twin of pre2-relay: the same source with FIXED set. */
#define FIXED 1
#include "pre2-relay.c"
