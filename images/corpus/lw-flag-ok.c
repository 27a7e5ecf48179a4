/* lw-flag-ok - bug-free twin of lw-flag: the same source with FIXED set. */
#define FIXED 1
#include "lw-flag.c"
