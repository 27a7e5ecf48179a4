/* many-200-list-ok - the bug-free twin of many-200-list: the same program with the fix (FIXED). */
#define FIXED 1
#include "many-200-list.c"
