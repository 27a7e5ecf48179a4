/* order-done-flag-ok - bug-free twin of order-done-flag: the same source with FIXED set. */
#define FIXED 1
#include "order-done-flag.c"
