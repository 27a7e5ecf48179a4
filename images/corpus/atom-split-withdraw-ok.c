/* atom-split-withdraw-ok - bug-free twin of atom-split-withdraw: the same source with FIXED set. */
#define FIXED 1
#include "atom-split-withdraw.c"
