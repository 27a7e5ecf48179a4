/* lfstack-aba-ok - bug-free twin of lfstack-aba: the same source with FIXED set. */
#define FIXED 1
#include "lfstack-aba.c"
