/* dl-cycle3-ok - the bug-free twin of dl-cycle3: the same program with the fix (FIXED). */
#define FIXED 1
#include "dl-cycle3.c"
