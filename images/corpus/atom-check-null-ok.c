/* atom-check-null-ok - bug-free twin of atom-check-null: the same source with FIXED set. */
#define FIXED 1
#include "atom-check-null.c"
