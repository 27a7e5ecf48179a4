/* lw-flag-ok - the bug-free twin of lw-flag: the same program with the fix (FIXED). */
#define FIXED 1
#include "lw-flag.c"
