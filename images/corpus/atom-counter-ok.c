/* atom-counter-ok - bug-free twin of atom-counter: the same source with FIXED set. */
#define FIXED 1
#include "atom-counter.c"
