/* token-ring-ok - bug-free twin of token-ring: the same source with FIXED set. */
#define FIXED 1
#include "token-ring.c"
