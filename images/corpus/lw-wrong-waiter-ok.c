/* lw-wrong-waiter-ok - the bug-free twin of lw-wrong-waiter: the same program with the fix (FIXED). */
#define FIXED 1
#include "lw-wrong-waiter.c"
