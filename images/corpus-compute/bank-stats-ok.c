/* bank-stats-ok - bug-free twin of bank-stats: the same source with FIXED set. */
#define FIXED 1
#include "bank-stats.c"
