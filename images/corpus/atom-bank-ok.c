/* atom-bank-ok - the bug-free twin of atom-bank: the same program with the fix (FIXED). */
#define FIXED 1
#include "atom-bank.c"
