/* aba-stack-ok - bug-free twin of aba-stack: the same source with FIXED set. */
#define FIXED 1
#include "aba-stack.c"
