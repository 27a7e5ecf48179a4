/* token-ring-ok - the bug-free twin of token-ring: the same program with the fix (FIXED). */
#define FIXED 1
#include "token-ring.c"
