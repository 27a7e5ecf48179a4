/* rc-uaf-ok - the bug-free twin of rc-uaf: the same program with the fix (FIXED). */
#define FIXED 1
#include "rc-uaf.c"
