/* atom-counter-ok - the bug-free twin of atom-counter: the same program with the fix (FIXED). */
#define FIXED 1
#include "atom-counter.c"
