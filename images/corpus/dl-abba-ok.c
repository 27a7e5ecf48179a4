/* dl-abba-ok - the bug-free twin of dl-abba: the same program with the fix (FIXED). */
#define FIXED 1
#include "dl-abba.c"
