/* grid-abba-ok - bug-free twin of grid-abba: the same source with FIXED set. */
#define FIXED 1
#include "grid-abba.c"
