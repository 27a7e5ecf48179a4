/* order-done-flag-ok - the bug-free twin of order-done-flag: the same program with the fix (FIXED). */
#define FIXED 1
#include "order-done-flag.c"
