/* bb-if-ok - the bug-free twin of bb-if: the same program with the fix (FIXED). */
#define FIXED 1
#include "bb-if.c"
