/* atom-split-withdraw-ok - the bug-free twin of atom-split-withdraw: the same program with the fix (FIXED). */
#define FIXED 1
#include "atom-split-withdraw.c"
