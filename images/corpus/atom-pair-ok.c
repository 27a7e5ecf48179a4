/* atom-pair-ok - the bug-free twin of atom-pair: the same program with the fix (FIXED). */
#define FIXED 1
#include "atom-pair.c"
