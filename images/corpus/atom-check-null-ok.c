/* atom-check-null-ok - the bug-free twin of atom-check-null: the same program with the fix (FIXED). */
#define FIXED 1
#include "atom-check-null.c"
