/* atom-pair-ok - bug-free twin of atom-pair: the same source with FIXED set. */
#define FIXED 1
#include "atom-pair.c"
