/* aba-stack-ok - the bug-free twin of aba-stack: the same program with the fix (FIXED). */
#define FIXED 1
#include "aba-stack.c"
