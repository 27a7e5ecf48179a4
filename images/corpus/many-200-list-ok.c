/* many-200-list-ok - bug-free twin of many-200-list: the same source with FIXED set. */
#define FIXED 1
#include "many-200-list.c"
