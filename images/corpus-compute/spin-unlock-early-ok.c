/* spin-unlock-early-ok - bug-free twin of spin-unlock-early: the same source with FIXED set. */
#define FIXED 1
#include "spin-unlock-early.c"
