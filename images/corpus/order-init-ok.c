/* order-init-ok - bug-free twin of order-init: the same source with FIXED set. */
#define FIXED 1
#include "order-init.c"
