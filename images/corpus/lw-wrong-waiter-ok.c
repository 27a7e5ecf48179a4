/* lw-wrong-waiter-ok - bug-free twin of lw-wrong-waiter: the same source with FIXED set. */
#define FIXED 1
#include "lw-wrong-waiter.c"
