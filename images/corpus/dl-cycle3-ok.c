/* dl-cycle3-ok - bug-free twin of dl-cycle3: the same source with FIXED set. */
#define FIXED 1
#include "dl-cycle3.c"
