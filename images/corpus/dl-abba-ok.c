/* dl-abba-ok - bug-free twin of dl-abba: the same source with FIXED set. */
#define FIXED 1
#include "dl-abba.c"
