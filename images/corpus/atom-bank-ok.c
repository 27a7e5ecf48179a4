/* atom-bank-ok - bug-free twin of atom-bank: the same source with FIXED set. */
#define FIXED 1
#include "atom-bank.c"
