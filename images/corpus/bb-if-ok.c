/* bb-if-ok - bug-free twin of bb-if: the same source with FIXED set. */
#define FIXED 1
#include "bb-if.c"
